"""samples/int8: a CNN trained in f32, quantized by onnxruntime's static
quantizer, run by mlvm in integers from Python and on the Cortex-M4."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from embedded.cortex_m import harness  # noqa: E402


def test_int8_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                     sample: Callable[[str], ModuleType]) -> None:
    train = sample("int8/train.py")
    missing = harness.available()
    args = ["--epochs", "6", "--out", str(tmp_path)] + ([] if missing else ["--m4"])
    r = train.main(args)
    out = capsys.readouterr().out
    assert "test accuracy: f32" in out
    assert r["acc_f32"] > 0.9 and r["acc_f32"] - r["acc_int8"] < 0.03, r
    assert r["same_as_onnxruntime"] == 1.0
    if missing is None:
        assert r["m4_same"] == 1.0, out
