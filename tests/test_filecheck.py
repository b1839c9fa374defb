"""Runs each lit/FileCheck test under tests/filecheck as its own pytest case."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent / "filecheck"
CASES = sorted(p.relative_to(ROOT) for p in ROOT.rglob("*.mlir") if "Output" not in p.parts)


def test_cases_exist() -> None:
    assert len(CASES) >= 5


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_lit(case: Path) -> None:
    lit = Path(sys.executable).parent / "lit"
    res = subprocess.run(
        [str(lit), "-v", str(ROOT / case)], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Passed: 1" in res.stdout or "1 Passed" in res.stdout or "PASS:" in res.stdout, res.stdout
