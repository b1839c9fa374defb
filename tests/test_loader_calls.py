"""Calling conventions a new user expects: inputs by name, out=, errors that
name the model file, and an import's signature when it is missing."""

from __future__ import annotations

import weakref
from pathlib import Path

import numpy as np
import pytest

import mlvm

TWO = """\
func.func @main(%x: tensor<2x3xf32>, %bias: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %y = "mlvm.add"(%x, %bias) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %z = "mlvm.exp"(%y) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y, %z : tensor<2x3xf32>, tensor<2x3xf32>
}
"""

NATIVE = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = "mlvm.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
  %y = "mlvm.call_c"(%x, %s) <{callee = "scale"}> : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> mlvm.Module:
    src = tmp_path_factory.mktemp("calls") / "two.mlir"
    src.write_text(TWO)
    return mlvm.compile(src)


X = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
B = np.array([1.0, -1.0, 0.5], np.float32)


def test_inputs_by_name(m: mlvm.Module) -> None:
    want = m.main(X, B)
    for got in (m.main(x=X, bias=B), m.main(X, bias=B), m.main(bias=B, x=X)):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
    call = m.main.begin(bias=B, x=X)
    assert call.done
    np.testing.assert_array_equal(call.result()[0], want[0])


@pytest.mark.parametrize("kwargs,message", [
    ({"x": X, "b": B}, "main has no input 'b' \\(inputs: x, bias\\)"),
    ({"x": X}, "main: missing input 'bias'"),
], ids=["unknown", "missing"])
def test_inputs_by_name_errors(m: mlvm.Module, kwargs: dict[str, np.ndarray], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        m.main(**kwargs)
    with pytest.raises(TypeError, match="input 'x' is given twice"):
        m.main(X, x=X, bias=B)


# Inputs named as the call's own positional parameters, in the other order:
# by name they must still land where their names say.
SWAPPED = """\
func.func @main(%x1: tensor<3xf32>, %x0: tensor<3xf32>, %more: tensor<3xf32>) -> tensor<3xf32> {
  %d = "mlvm.sub"(%x1, %x0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = "mlvm.mul"(%d, %more) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
"""


def test_inputs_by_name_that_the_call_uses_itself(tmp_path: Path) -> None:
    src = tmp_path / "swapped.mlir"
    src.write_text(SWAPPED)
    f = mlvm.compile(src).main
    a, b, c = (np.array(v, np.float32) for v in ([5, 7, 9], [1, 2, 3], [1, 10, 100]))
    want = (a - b) * c
    for got in (f(a, b, c), f(x1=a, x0=b, more=c), f(a, x0=b, more=c), f(more=c, x0=b, x1=a),
                f(a, b, more=c)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="input 'x1' is given twice"):
        f(a, b, c, x1=a)
    with pytest.raises(ValueError, match="main takes 3 inputs, got 4"):
        f(a, b, c, c)
    with pytest.raises(ValueError, match="main takes 3 inputs, got 2"):
        f(a, b)
    with pytest.raises(TypeError, match="main: missing input 'x1'"):
        f(x0=b, more=c)


def test_an_equal_dtype_of_another_object_is_taken(m: mlvm.Module) -> None:
    """The fast path tests a dtype by identity first; an equal one that is
    another object (a byte order spelt out) still passes."""
    spelt = X.view(np.dtype("=f4", metadata={"unit": "m"}))
    assert spelt.dtype == X.dtype and spelt.dtype is not X.dtype
    for g, w in zip(m.main(spelt, B), m.main(X, B), strict=True):
        np.testing.assert_array_equal(g, w)


def test_out_writes_into_the_callers_arrays(m: mlvm.Module) -> None:
    y, z = np.empty((2, 3), np.float32), np.empty((2, 3), np.float32)
    got = m.main(X, B, out=(y, z))
    assert got[0] is y and got[1] is z
    want = m.main(X, B)
    np.testing.assert_array_equal(y, want[0])
    np.testing.assert_array_equal(z, want[1])


def _read_only() -> np.ndarray:
    a = np.empty((2, 3), np.float32)
    a.flags.writeable = False
    return a


_SAME = np.empty((2, 3), np.float32)


@pytest.mark.parametrize("out,message", [
    ((np.empty((3, 2), np.float32), np.empty((2, 3), np.float32)), r"out\[0\] \('out0'\) must be float32 \(2, 3\)"),
    ((np.empty((2, 3), np.float32), np.empty((2, 3), np.float64)), r"out\[1\] \('out1'\) must be float32 \(2, 3\)"),
    ((np.empty((2, 3), np.float32),), "out= needs 2 arrays, got 1"),
    (np.empty((2, 3), np.float32), "out= needs 2 arrays, got 1"),
    ((np.empty((2, 3), np.float32)[:, ::-1], np.empty((2, 3), np.float32)), "must be C-contiguous"),
    ((np.empty((2, 3), np.float32), _read_only()), "must be C-contiguous, aligned and writeable"),
    ((X, np.empty((2, 3), np.float32)), "must not overlap an input"),
    ((_SAME, _SAME), "must not overlap an input or another output"),
    ((np.empty((2, 3), np.float32), [1.0]), r"out\[1\] \('out1'\) must be a numpy array"),
], ids=["shape", "dtype", "count", "one-array", "layout", "read-only", "overlap", "twice", "not-array"])
def test_out_is_checked(m: mlvm.Module, out: tuple[np.ndarray, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        m.main(X, B, out=out)
    with pytest.raises(ValueError, match=message):  # the keyword path checks the same
        m.main(x=X, bias=B, out=out)


def test_out_with_one_result(tmp_path: Path) -> None:
    """A function of one result takes out= as an array (returned) or a
    sequence of one, with inputs by position or by name."""
    src = tmp_path / "one.mlir"
    src.write_text(TWO.replace("-> (tensor<2x3xf32>, tensor<2x3xf32>)", "-> tensor<2x3xf32>")
                   .replace("func.return %y, %z : tensor<2x3xf32>, tensor<2x3xf32>",
                            "func.return %z : tensor<2x3xf32>"))
    one = mlvm.compile(src)
    want = one.main(X, B)
    for out in (np.empty((2, 3), np.float32), [np.empty((2, 3), np.float32)]):
        for got in (one.main(X, B, out=out), one.main(x=X, bias=B, out=out)):
            target = out[0] if isinstance(out, list) else out
            assert got is target
            np.testing.assert_array_equal(target, want)
    with pytest.raises(ValueError, match="out= needs 1 arrays, got 2"):
        one.main(X, B, out=(np.empty((2, 3), np.float32),) * 2)
    with pytest.raises(ValueError, match="must not overlap an input"):
        one.main(X, B, out=X)


def test_errors_name_the_model_file_and_the_import_signature(tmp_path: Path) -> None:
    src = tmp_path / "scaler.mlir"
    src.write_text(NATIVE)
    with pytest.raises(ValueError) as info:
        mlvm.compile(src)
    msg = str(info.value)
    assert msg.startswith(f"{src}: missing import 'scale'"), msg
    assert "imports={'scale': f} with f(arg0: float32 (4,), arg1: float32 ()) -> float32 (4,)" in msg
    assert ".cache" not in msg
    m = mlvm.compile(src, imports={"scale": lambda x, s: x * s})
    np.testing.assert_array_equal(m.main(np.ones(4, np.float32)), np.full(4, 2.0))


# Large outputs come from a per-thread pool of recycled buffers: a buffer is
# handed out again only once the caller holds neither it nor a view of it.
BIG = """\
func.func @main(%x: tensor<128x256xf32>) -> (tensor<128x256xf32>, tensor<4xf32>) {
  %y = "mlvm.exp"(%x) : (tensor<128x256xf32>) -> tensor<128x256xf32>
  %s = "mlvm.slice"(%x) <{start = array<i64: 0, 0>}> : (tensor<128x256xf32>) -> tensor<1x4xf32>
  %r = "mlvm.reshape"(%s) : (tensor<1x4xf32>) -> tensor<4xf32>
  func.return %y, %r : tensor<128x256xf32>, tensor<4xf32>
}
"""


def test_large_outputs_are_recycled_only_when_released(tmp_path: Path) -> None:
    src = tmp_path / "big.mlir"
    src.write_text(BIG)
    m = mlvm.compile(src)
    g = np.random.default_rng(5)
    xs = [g.standard_normal((128, 256)).astype(np.float32) for _ in range(4)]
    want = [np.exp(x.astype(np.float64)) for x in xs]
    a, _ = m.main(xs[0])
    view = m.main(xs[1])[0][3]           # a view keeps its buffer alive
    b, _ = m.main(xs[2])
    assert len({a.ctypes.data, view.base.ctypes.data, b.ctypes.data}) == 3
    # on a 64-byte line (numpy's own arrays start 16 bytes into one)
    assert a.ctypes.data % 64 == 0 and b.ctypes.data % 64 == 0
    np.testing.assert_allclose(a, want[0], rtol=2e-7)
    np.testing.assert_allclose(view, want[1][3], rtol=2e-7)
    np.testing.assert_allclose(b, want[2], rtol=2e-7)
    ref = weakref.ref(view.base)
    del view                             # its buffer is free again: the pool's
    c, small = m.main(xs[3])
    assert c.base is ref()               # a new view of the same buffer
    np.testing.assert_allclose(c, want[3], rtol=2e-7)
    np.testing.assert_array_equal(small, xs[3][0, :4])
    np.testing.assert_allclose(a, want[0], rtol=2e-7)


def test_small_outputs_are_recycled_only_when_released(m: mlvm.Module) -> None:
    """Small results come from the pool too (with their pointers made once):
    one is handed out again only once nothing holds it, and results kept
    past the pool's buffers are new arrays."""
    xs = [X + k for k in range(5)]
    want = [np.exp(x + B) for x in xs]
    kept = [m.main(x, B)[1] for x in xs]           # every result held
    assert len({k.ctypes.data for k in kept}) == len(kept)
    for k, w in zip(kept, want, strict=True):
        np.testing.assert_allclose(k, w, rtol=2e-7)
    first = kept[0]
    view = first[1]                                # a view keeps its buffer
    ref = weakref.ref(first.base)
    del kept, first
    _, again = m.main(xs[2], B)
    assert again.ctypes.data != view.base.ctypes.data
    np.testing.assert_allclose(view, want[0][1], rtol=2e-7)
    del view                                       # free now: handed out again
    _, z = m.main(xs[3], B)
    assert z.base is ref()
    np.testing.assert_allclose(z, want[3], rtol=2e-7)
    np.testing.assert_allclose(again, want[2], rtol=2e-7)


def test_a_recycled_result_is_a_new_array(m: mlvm.Module) -> None:
    """What a caller sets on a result it then drops (read-only, a shape, a
    dtype, a weakref with its finalizer) is not the next result's: each
    call hands out a new view of the recycled buffer."""
    r = m.main(X, B)[1]
    r.flags.writeable = False
    r.shape = (3, 2)
    gone: list[int] = []
    weakref.finalize(r, gone.append, 1)
    cache = weakref.WeakValueDictionary({"first": r})
    del r
    assert gone == [1] and "first" not in cache
    y = m.main(X + 1, B)[1]
    assert y.flags.writeable and y.shape == (2, 3) and y.dtype == np.float32
    np.testing.assert_allclose(y, np.exp(X + 1 + B), rtol=2e-7)
    y.dtype = np.int32                             # a view of its own: harmless
    del y
    np.testing.assert_allclose(m.main(X, B)[1], np.exp(X + B), rtol=2e-7)


def test_recycled_outputs_across_threads(tmp_path: Path) -> None:
    import threading

    src = tmp_path / "big.mlir"
    src.write_text(BIG)
    m = mlvm.compile(src)
    errors: list[str] = []

    def work(seed: int) -> None:
        g = np.random.default_rng(seed)
        for _ in range(50):
            x = g.standard_normal((128, 256)).astype(np.float32)
            y, _ = m.main(x)
            if not np.allclose(y, np.exp(x.astype(np.float64)), rtol=2e-7, atol=0):
                errors.append(f"thread {seed}: wrong result")

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
