"""Building a C harness around generated modules, with ASan and UBSan."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mlvm.codegen.cc import INCLUDE_DIR, runtime_sources

TESTS = Path(__file__).parent  # expect.h
SANITIZE = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]


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
    """The harness, generated modules and the runtime, built strictly with the
    sanitizers (the modules' headers are found beside them): "address"
    (ASan and UBSan) or "thread" (TSan, for harnesses that start threads)."""
    includes = sorted({str(m.parent) for m in modules})
    flags = [*(SANITIZE if sanitizer == "address" else ["-fsanitize=thread"]), "-pthread"]
    subprocess.run(
        ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-O1", *flags,
         "-I", str(INCLUDE_DIR), f"-I{TESTS}", *(f"-I{d}" for d in includes), str(harness),
         *map(str, modules), *map(str, runtime_sources()), "-lm", "-o", str(exe)],
        check=True,
    )
    return exe


def sanitized_harness(harness: Path, mlir: Path, out: Path, params: Path | None = None) -> Path:
    """`mlvm-aot compile MLIR -o OUT/model.c`, then the harness around it."""
    return sanitized_build(harness, [aot_compile(mlir, out / "model.c", params)], out / "harness")
