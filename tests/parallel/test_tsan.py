"""The shared-memory communicator from C: four ranks on threads, built with
ThreadSanitizer (any report fails), and with ASan/UBSan."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from c_build import aot_compile, sanitized_build  # noqa: E402


@pytest.mark.parametrize("sanitizer", ["thread", "address"])
def test_four_ranks_on_threads(tmp_path: Path, sanitizer: str) -> None:
    model = aot_compile(HERE / "model.mlir", tmp_path / "model.c")
    exe = sanitized_build(HERE / "harness.c", [model], tmp_path / "harness", sanitizer)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "WARNING: ThreadSanitizer" not in run.stderr, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "17 passed, 0 failed", run.stdout
