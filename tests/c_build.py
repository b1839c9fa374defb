"""Building C programs around the runtime: harnesses, C tests, kernel tests.

The runtime itself is compiled once per flag set as a static library
(`runtime_archive`: mlvm's own cached builder, its files compiled in
parallel, keyed by sources, compiler and flags), and every test building
with the same flags links that one archive instead of compiling the
runtime's sources again beside its own."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from mlvm.codegen.cc import INCLUDE_DIR, RUNTIME_DIR, runtime_library

TESTS = Path(__file__).parent  # expect.h
# gcc by name (not cc): test_runtime_c.py's strict gcc builds are then the
# same cached libraries as these
CC = "gcc"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
# "address": ASan and UBSan, with float-cast-overflow (a NaN or out-of-range
# float converted to an integer), which gcc's "undefined" leaves out;
# "thread": TSan (for harnesses that start threads).
# -g1: line tables are all a sanitizer's report needs (file:line per frame);
# full debug info made the AVX-512 kernels' builds a third slower.
SANITIZERS = {
    "address": ["-g1", "-O1", "-fsanitize=address,undefined,float-cast-overflow",
                "-fno-omit-frame-pointer", "-fno-sanitize-recover=all", "-pthread"],
    "thread": ["-g1", "-O1", "-fsanitize=thread", "-pthread"],
}
SANITIZE = SANITIZERS["address"]


KERNELS = sorted((RUNTIME_DIR / "src" / "kernels").glob("*.c"))


def runtime_archive(flags: Sequence[str], files: Sequence[Path] | None = None) -> Path:
    """The runtime (or these of its `files`) compiled strictly (`STRICT`)
    with `flags`, as a static library."""
    return runtime_library(CC, [*STRICT, *flags], sources=None if files is None else list(files))


def build(sources: Sequence[Path], flags: Sequence[str], exe: Path,
          includes: Sequence[Path] = (), own: Sequence[str] = (),
          files: Sequence[Path] | None = None) -> Path:
    """`sources` compiled strictly with `flags` (and `own`, which only they
    get, e.g. another -std) and linked with the runtime built with `flags`
    (`files`: only these of its files, e.g. `KERNELS`)."""
    lib = runtime_archive(flags, files)
    cmd = [CC, *STRICT, *flags, *own, "-I", str(INCLUDE_DIR), f"-I{TESTS}",
           *(f"-I{d}" for d in includes), *map(str, sources), str(lib), "-lm", "-o", str(exe)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, " ".join(cmd) + "\n" + res.stderr
    return exe


def aot_compile(mlir: Path, c_path: Path, params: Path | None = None) -> Path:
    """`mlvm-aot compile MLIR -o C_PATH [--params P]`: the .c (its .h beside it)."""
    aot = Path(sys.executable).parent / "mlvm-aot"
    args = [str(aot), "compile", str(mlir), "-o", str(c_path)]
    if params is not None:
        args += ["--params", str(params)]
    res = subprocess.run(args, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return c_path


def sanitized_build(harness: Path, modules: list[Path], exe: Path, sanitizer: str = "address") -> Path:
    """The harness and generated modules (their headers found beside them),
    linked with the runtime, all built with the sanitizer (`SANITIZERS`)."""
    return build([harness, *modules], SANITIZERS[sanitizer], exe,
                 sorted({m.parent for m in modules}))


def sanitized_harness(harness: Path, mlir: Path, out: Path, params: Path | None = None) -> Path:
    """`mlvm-aot compile MLIR -o OUT/model.c`, then the harness around it."""
    return sanitized_build(harness, [aot_compile(mlir, out / "model.c", params)], out / "harness")
