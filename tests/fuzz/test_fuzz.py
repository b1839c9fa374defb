"""A bounded run of the fuzzer (`make fuzz` runs it for 30 minutes).

Any finding fails the test and is printed: the input, what happened, and
the command that reproduces it. The seed changes daily, so successive runs
explore different inputs while a failing day can be replayed with FUZZ_SEED.
"""

from __future__ import annotations

import datetime
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fuzzer import fuzz  # noqa: E402

SECONDS = float(os.environ.get("MLVM_TEST_FUZZ_SECONDS", "30"))


@pytest.mark.timeout(SECONDS * 3 + 120)
def test_fuzz_finds_nothing(tmp_path: Path) -> None:
    seed = int(os.environ.get("FUZZ_SEED", datetime.date.today().toordinal()))
    tried, findings = fuzz(SECONDS, seed, tmp_path / "findings")
    assert tried > 50, f"only {tried} inputs in {SECONDS} s"
    report = "\n\n".join(f"{sig}\n  reproduce: {repro}\n  input: {path}\n{detail[:1500]}"
                         for sig, (detail, repro, path) in findings.items())
    assert not findings, f"{len(findings)} findings (seed {seed}):\n{report}"
