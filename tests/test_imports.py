"""Every module of mlvm imports on its own, as the first mlvm module of a
fresh interpreter: a tool or a test may start anywhere (a circular import
that works only in one order fails here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mlvm

PACKAGE = Path(mlvm.__file__).parent
# Each module in a child forked from a parent that holds only the
# third-party packages (imported once: the children import mlvm alone).
SCRIPT = """
import os, signal, sys, importlib
import numpy, onnx, jinja2, cffi, xdsl.dialects.builtin, xdsl.xdsl_opt_main
failed = []
for name in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        signal.alarm(60)  # a hang is a failure of this module, not of the run
        try:
            importlib.import_module(name)
        except BaseException as e:
            print(f"{name}: {type(e).__name__}: {e}", flush=True)
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        failed.append(f"{name} (wait status {status})")
print("failed:", ", ".join(failed) if failed else "none", flush=True)
sys.exit(1 if failed else 0)
"""


def modules() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__main__":  # runs the command line
            continue
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def test_every_module_imports_first() -> None:
    names = modules()
    assert len(names) > 40 and "mlvm.codegen.lowering" in names
    res = subprocess.run([sys.executable, "-c", SCRIPT, *names], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr[-3000:]
