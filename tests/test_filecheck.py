"""Runs the lit/FileCheck tests under tests/filecheck: one lit run for all of
them (lit starts once, its tests in parallel), each reported as its own
pytest case."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).parent / "filecheck"
CASES = sorted(p.relative_to(ROOT) for p in ROOT.rglob("*.mlir") if "Output" not in p.parts)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | None]:
    """Each case's path (relative to tests/filecheck) -> None when it passed,
    else lit's output for it."""
    xml = tmp_path_factory.mktemp("lit") / "lit.xml"
    lit = Path(sys.executable).parent / "lit"
    res = subprocess.run([str(lit), "-q", f"--xunit-xml-output={xml}", str(ROOT)],
                         capture_output=True, text=True)
    assert xml.exists(), res.stdout + res.stderr
    got: dict[str, str | None] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        # classname "mlvm.passes", name "fuse.mlir" for passes/fuse.mlir
        rel = "/".join([*case.get("classname", "").split(".")[1:], case.get("name", "")])
        bad = [e for e in case if e.tag in ("failure", "error", "skipped")]
        got[rel] = None if not bad else (bad[0].text or bad[0].get("message") or "failed")
    return got


def test_cases_exist() -> None:
    assert len(CASES) >= 5


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_lit(outcomes: dict[str, str | None], case: Path) -> None:
    assert str(case) in outcomes, f"lit did not run {case}"
    assert outcomes[str(case)] is None, outcomes[str(case)]
