"""The loader at the Python boundary: hostile descriptors, careless callers.

Regression tests for hardening findings 2 (queue objects freed while the
instance points at them), 3 (views into a freed arena kept by a native),
4 (descriptor sizes re-checked), 8 (a native's exception raised in another
thread's call) and 9 (silent casts and reshapes, unaligned inputs).
"""

from __future__ import annotations

import gc
import os
import re
import threading
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

NATIVE = """\
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = "mlvm.call_c"(%x) <{callee = "cb"}> : (tensor<3xf32>) -> tensor<3xf32>
  %z = "mlvm.neg"(%y) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %z : tensor<3xf32>
}
func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  %z = "mlvm.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %z : tensor<3xf32>
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


def test_queues_stay_alive_with_the_module(tmp_path: Path) -> None:
    src = tmp_path / "q.mlir"
    src.write_text(QUEUES)
    m = mlvm.compile(src)
    queues = list(m.queues.values())
    m.queues.clear()  # the module, not the dict, keeps them alive
    del queues
    gc.collect()
    call = m.main.begin()
    m._natives[-2].push(np.ones(2, np.float32))  # type: ignore[attr-defined]
    m._natives[-1].push(np.full(2, 2.0, np.float32))  # type: ignore[attr-defined]
    call.resume()
    np.testing.assert_array_equal(call.result(), [3.0, 3.0])


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


def test_native_may_keep_its_arguments(tmp_path: Path) -> None:
    kept: list[np.ndarray] = []

    def cb(x: np.ndarray) -> np.ndarray:
        kept.append(x)
        return x * 2

    src = tmp_path / "n.mlir"
    src.write_text(NATIVE)
    m = mlvm.compile(src, imports={"cb": cb})
    for k in range(3):
        np.testing.assert_array_equal(m.f(np.full(3, k, np.float32)), np.full(3, -2.0 * k))
    del m
    gc.collect()
    junk = [np.random.default_rng(0).standard_normal(1 << 16) for _ in range(8)]  # reuse memory
    for k, x in enumerate(kept):
        np.testing.assert_array_equal(x, np.full(3, k, np.float32))
    assert not x.flags.writeable
    del junk


def test_a_natives_error_stays_in_its_own_thread(tmp_path: Path) -> None:
    def cb(x: np.ndarray) -> np.ndarray:
        raise RuntimeError("boom")

    src = tmp_path / "n.mlir"
    src.write_text(NATIVE)
    m = mlvm.compile(src, imports={"cb": cb})
    x = np.zeros(3, np.float32)
    wrong: list[BaseException] = []
    right = [0]

    def failing() -> None:
        for _ in range(300):
            with pytest.raises(mlvm.MlvmCallError, match="boom"):
                m.f(x)
            right[0] += 1

    def clean() -> None:
        for _ in range(3000):
            try:
                m.g(x)
            except BaseException as e:  # noqa: BLE001 - any error here is the bug
                wrong.append(e)

    threads = [threading.Thread(target=failing), threading.Thread(target=clean)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong and right[0] == 300


def test_queue_push_refuses_silent_casts(tmp_path: Path) -> None:
    src = tmp_path / "q.mlir"
    src.write_text(QUEUES)
    q = mlvm.compile(src).queues["qa"]
    with pytest.raises(ValueError, match="values do not fit in float32"):
        q.push([1e40, 0.0])
    with pytest.raises(ValueError, match="must have dtype float32, got float64"):
        q.push(np.zeros(2))
    with pytest.raises(ValueError, match=r"must have shape \(2,\), got \(1, 2\)"):
        q.push(np.zeros((1, 2), np.float32))
    assert q.push([0.5, 1.0]) and q.push(np.zeros(2, np.float16))  # exact conversions are fine
    assert len(q) == 2


@pytest.mark.parametrize("result,message", [
    (np.zeros((3, 1), np.float32), r"result 0 must have shape \(3,\), got \(3, 1\)"),
    (np.zeros(3, np.float64), "must have dtype float32, got float64"),
    (([1e39, 0, 0],), "values do not fit in float32"),
], ids=["reshaped", "unsafe-dtype", "overflow"])
def test_native_results_are_not_silently_reshaped_or_cast(tmp_path: Path, result: object,
                                                          message: str) -> None:
    src = tmp_path / "n.mlir"
    src.write_text(NATIVE)
    m = mlvm.compile(src, imports={"cb": lambda x: result})
    with pytest.raises(mlvm.MlvmCallError) as info:
        m.f(np.zeros(3, np.float32))
    assert re.search(message, str(info.value.__cause__)), info.value.__cause__


def test_unaligned_input_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "p.mlir"
    src.write_text(PLAIN)
    m = mlvm.compile(src)
    raw = np.zeros(17, np.uint8)
    x = np.frombuffer(raw.data, dtype=np.float32, count=4, offset=1)
    assert not x.flags.aligned and x.flags.c_contiguous
    with pytest.raises(ValueError, match="is not aligned"):
        m.main(x)
    with pytest.raises(ValueError, match="is not aligned"):
        m.main.begin(x)
    np.testing.assert_array_equal(m.main(np.array(x)), -np.array(x))


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
