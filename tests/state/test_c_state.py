"""Module state from plain C, built with ASan and UBSan."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from c_build import sanitized_harness  # noqa: E402


def test_c_state_harness(tmp_path: Path) -> None:
    params = tmp_path / "p.npz"
    np.savez(params, w0=np.full((3, 5), 0.25, np.float32), a0=np.zeros(7, np.float32))
    exe = sanitized_harness(HERE / "harness.c", HERE / "model.mlir", tmp_path, params)
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1] == "25 passed, 0 failed", run.stdout
