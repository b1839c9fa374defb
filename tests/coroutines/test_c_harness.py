"""The coroutine interface from plain C, built with ASan and UBSan."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mlvm.codegen.cc import INCLUDE_DIR, RUNTIME_DIR

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from c_build import sanitized_harness  # noqa: E402


def test_c_harness(tmp_path: Path) -> None:
    exe = sanitized_harness(HERE / "harness.c", HERE / "model.mlir", tmp_path)
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    last = run.stdout.strip().splitlines()[-1]
    assert last.endswith("passed, 0 failed") and int(last.split()[0]) >= 25, run.stdout


def test_spsc_queue_across_threads(tmp_path: Path) -> None:
    exe = tmp_path / "spsc"
    src = RUNTIME_DIR / "src" / "queue.c"
    subprocess.run(
        ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-g", "-O1", "-fsanitize=thread",
         "-pthread", "-I", str(INCLUDE_DIR), str(HERE / "spsc.c"), str(src), "-o", str(exe)],
        check=True,
    )
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "WARNING: ThreadSanitizer" not in run.stderr, run.stderr
    assert "popped 50000, out of order 0" in run.stdout
