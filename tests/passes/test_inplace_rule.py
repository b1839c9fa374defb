"""The in-place rule and the memory-plan validator are load-bearing.

Regression tests for hardening finding 6: with the `operand.type ==
result.type` condition of `can_run_inplace` removed, or the plan validator
disabled, some test must fail.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.utils.exceptions import PassFailedException

import mlvm
from mlvm.analysis.storage import Interval
from mlvm.passes import plan_memory
from mlvm.passes.plan_memory import PlanMemoryPass, validate
from mlvm.pipeline import parse_file

# %0 (4x1) dies at the mul, whose result is 4x8: taking %0's buffer would
# write 32 floats into a 4-float slot of the arena.
BROADCAST_DIES = """\
func.func @main(%x: tensor<4x8xf32>, %b: tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "mlvm.exp"(%b) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %1 = "mlvm.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "mlvm.add"(%0, %1) : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "mlvm.tanh"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "mlvm.mul"(%0, %3) : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = "mlvm.neg"(%4) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %2, %5 : tensor<4x8xf32>, tensor<4x8xf32>
}
"""


@pytest.mark.parametrize("fuse", [False, True], ids=["no-fuse", "fuse"])
def test_broadcast_operand_is_never_overwritten_by_a_larger_result(tmp_path: Path, fuse: bool) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(BROADCAST_DIES)
    m = mlvm.compile(src, options=mlvm.CompileOptions(fuse=fuse))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal((4, 1)).astype(np.float32)
    y2, y5 = m.main(x, b)
    e0 = np.exp(b)
    want2 = e0 + np.exp(x)
    np.testing.assert_allclose(y2, want2, rtol=1e-6)
    np.testing.assert_allclose(y5, -(e0 * np.tanh(want2)), rtol=1e-5)


def test_validator_rejects_overlapping_live_buffers() -> None:
    a = Interval(value=None, start=0, end=3, size=64)  # type: ignore[arg-type]
    b = Interval(value=None, start=2, end=5, size=64)  # type: ignore[arg-type]
    c = Interval(value=None, start=4, end=6, size=64)  # type: ignore[arg-type]
    validate({a: 0, b: 64, c: 0})  # a and c share bytes but never live together
    with pytest.raises(PassFailedException, match="memory plan overlaps"):
        validate({a: 0, b: 32, c: 128})


def test_an_empty_buffer_overlaps_nothing() -> None:
    """A tensor with a zero dim (ONNX's empty-set reductions) has no bytes:
    placed at the offset of a live buffer it shares none with it."""
    a = Interval(value=None, start=0, end=3, size=64)  # type: ignore[arg-type]
    empty = Interval(value=None, start=1, end=2, size=0)  # type: ignore[arg-type]
    validate({a: 0, empty: 0})
    validate({empty: 0, a: 0})


def test_planner_runs_the_validator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(BROADCAST_DIES)
    module, _ = parse_file(src)

    def everything_at_zero(intervals: list[Interval], alignment: int) -> dict[Interval, int]:
        return {iv: 0 for iv in intervals}

    monkeypatch.setattr(plan_memory, "place", everything_at_zero)
    with pytest.raises(PassFailedException, match="memory plan overlaps"):
        PlanMemoryPass().apply(Context(), module)
