"""Building a C harness around a generated module, with ASan and UBSan."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mlvm.codegen.cc import INCLUDE_DIR, runtime_sources

SANITIZE = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]


def sanitized_harness(harness: Path, mlir: Path, out: Path, params: Path | None = None) -> Path:
    """`mlvm-aot compile MLIR -o OUT/model.c`, then the harness, the module and
    the runtime built strictly with the sanitizers: the executable."""
    aot = Path(sys.executable).parent / "mlvm-aot"
    args = [str(aot), "compile", str(mlir), "-o", str(out / "model.c")]
    if params is not None:
        args += ["--params", str(params)]
    res = subprocess.run(args, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    exe = out / "harness"
    subprocess.run(
        ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-O1", *SANITIZE,
         "-I", str(INCLUDE_DIR), "-I", str(out), str(harness),
         str(out / "model.c"), *map(str, runtime_sources()), "-lm", "-o", str(exe)],
        check=True,
    )
    return exe
