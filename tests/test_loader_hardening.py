"""The loader against descriptors the emitter really writes, then damaged.

Regression tests for hardening findings 2 (duplicate names) and 4 (sizes
re-checked) on patched generated C, plus the queue capacity and relative
paths; tests/loader/test_hardening.py covers the rest on hand-written
descriptors.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import mlvm
from mlvm.codegen.cc import build_shared
from mlvm.pipeline import write_c

QUEUES = """\
func.func @main() -> tensor<2xf32> {
  %a = "mlvm.queue_pop"() <{queue = "qa"}> : () -> tensor<2xf32>
  %b = "mlvm.queue_pop"() <{queue = "qb"}> : () -> tensor<2xf32>
  %c = "mlvm.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %c : tensor<2xf32>
}
"""

PLAIN = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = "mlvm.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
"""


def patched_so(tmp_path: Path, text: str, old: str, new: str, count: int = 1) -> Path:
    """A module built from C in which `old` was replaced by `new` (a damaged .so)."""
    src = tmp_path / "m.mlir"
    src.write_text(text)
    c, _ = write_c(src, tmp_path / "m.c")
    code = c.read_text()
    assert old in code, old
    c.write_text(code.replace(old, new, count))
    return build_shared(c, tmp_path / "m.so")


def test_duplicate_queue_names_in_a_descriptor_are_refused(tmp_path: Path) -> None:
    so = patched_so(tmp_path, QUEUES, '{ "qb", { "qb"', '{ "qa", { "qa"')
    with pytest.raises(ValueError, match=r"damaged module descriptor: two queues are named 'qa'"):
        mlvm.load(so)


@pytest.mark.parametrize("old,new,what", [
    ("MLVM_F32, 1, m_main__out0_dims", "(mlvm_dtype_t)99, 1, m_main__out0_dims", "unknown dtype code 99"),
    ("MLVM_F32, 1, m_main__out0_dims", "MLVM_F32, 40, m_main__out0_dims", "rank 40"),
    ("m_main__out0_dims[] = { 4 }", "m_main__out0_dims[] = { -4 }", "shape (-4,)"),
    ("m_main__out0_dims[] = { 4 }", "m_main__out0_dims[] = { 1099511627776 }", "shape"),
], ids=["dtype", "rank", "negative", "huge"])
def test_damaged_descriptor_sizes_are_refused(tmp_path: Path, old: str, new: str, what: str) -> None:
    so = patched_so(tmp_path, PLAIN, old, new)
    with pytest.raises(ValueError, match="damaged module descriptor") as info:
        mlvm.load(so)
    assert what in str(info.value) and "\n" not in str(info.value)


def test_bad_queue_capacity(tmp_path: Path) -> None:
    src = tmp_path / "q.mlir"
    src.write_text(QUEUES)
    for cap in (-1, 0, 1 << 31, 2.5):
        with pytest.raises(ValueError, match="queue_capacity must be an integer"):
            mlvm.compile(src, queue_capacity=cap)  # type: ignore[arg-type]


def test_relative_paths_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "p.mlir"
    src.write_text(PLAIN)
    so = mlvm.compile(src).path
    (tmp_path / "m.so").write_bytes(so.read_bytes())
    monkeypatch.chdir(tmp_path)
    for name in ("m.so", "./m.so", os.path.join("..", tmp_path.name, "m.so")):
        np.testing.assert_array_equal(mlvm.load(name).main(np.ones(4, np.float32)), -np.ones(4))
