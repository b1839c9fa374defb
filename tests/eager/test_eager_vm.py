"""mlvm.eager.VM: handles, zero-copy views, in place, batches, errors, bytes."""

from __future__ import annotations

import numpy as np
import pytest

from mlvm import eager


def test_tensor_roundtrip_and_info() -> None:
    with eager.VM() as vm:
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        t = vm.tensor(a)
        assert vm.info(t) == ((3, 4), np.dtype(np.float32))
        np.testing.assert_array_equal(vm.read(t), a)
        a[0, 0] = 100  # the tensor holds a copy
        assert vm.read(t)[0, 0] == 0
        s = vm.tensor(np.int32(7))
        assert vm.info(s) == ((), np.dtype(np.int32))
        assert vm.read(s) == 7
        assert vm.tensor_count == 2


def test_view_is_zero_copy() -> None:
    with eager.VM() as vm:
        t = vm.tensor(shape=(2, 3))
        v = vm.view(t)
        v[...] = 2.0
        vm.exec("mul", t, t, t)  # in place
        np.testing.assert_array_equal(v, np.full((2, 3), 4.0, np.float32))


def test_consumed_counts_tensor_bytes() -> None:
    with eager.VM() as vm:
        vm.tensor(shape=(1,))  # the table exists from now on
        base = vm.consumed
        t = vm.tensor(shape=(100, 10))
        assert vm.consumed == base + 4000
        u = vm.tensor(shape=(7,), dtype=np.int32)
        assert vm.consumed == base + 4000 + 28
        vm.free(t)
        vm.free(u)
        assert vm.consumed == base


def test_batch_and_inplace() -> None:
    x = np.array([[1, -2], [3, -4]], np.float32)
    with eager.VM() as vm:
        tx, tb, ty = vm.tensor(x), vm.tensor(np.array([10, 20], np.float32)), vm.tensor(shape=(2, 2))
        vm.batch([
            ("matmul", ty, tx, tx, {"transpose_rhs": True}),
            ("add", ty, ty, tb),
            ("relu", ty, ty, eager.NONE),
        ])
        np.testing.assert_array_equal(vm.read(ty), np.maximum(x @ x.T + [10, 20], 0))
        with pytest.raises(eager.EagerError) as e:
            vm.batch([("neg", tx, tx, eager.NONE), ("add", tx, tx, ty + 5)])
        assert e.value.status_name == "ERR_INVALID"
        assert "op 1 (add)" in str(e.value)


def test_errors_carry_status() -> None:
    with eager.VM() as vm:
        a = vm.tensor(np.zeros((2, 3), np.float32))
        b = vm.tensor(np.zeros((4,), np.float32))
        with pytest.raises(eager.EagerError) as e:
            vm.exec("add", a, a, 99)
        assert e.value.status == -1
        with pytest.raises(eager.EagerError) as e:
            vm.exec("add", a, a, b)
        assert e.value.status == -2
        with pytest.raises(eager.EagerError) as e:
            vm.write(b, np.zeros(5, np.float32))
        assert e.value.status == -3
        vm.free(b)
        with pytest.raises(eager.EagerError):
            vm.free(b)
        with pytest.raises(ValueError, match="no op 'conv3d'"):
            vm.exec("conv3d", a, a)
    with pytest.raises(eager.EagerError, match="ERR_SHAPE"):
        eager.matmul(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="complex64"):
        eager.add(np.zeros(2, np.complex64), np.zeros(2, np.complex64))
    # Tensors of every element type exist; arithmetic is f32 / i32 only.
    with pytest.raises(eager.EagerError, match="ERR_SHAPE"):
        eager.add(np.zeros(2), np.zeros(2))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float16, np.float64, np.uint64])
def test_every_element_type_moves(dtype: type) -> None:
    """Tensors of 1-, 2- and 8-byte elements: written, read, transposed,
    sliced, concatenated and broadcast by kernels of their width."""
    g = np.random.default_rng(3)
    a = g.integers(0, 2, size=(3, 5)).astype(dtype) if dtype is np.bool_ else \
        g.integers(0, 100, size=(3, 5)).astype(dtype)
    with eager.VM() as vm:
        t = vm.tensor(a)
        np.testing.assert_array_equal(vm.read(t), a)
        assert vm.info(t) == ((3, 5), np.dtype(dtype))
    np.testing.assert_array_equal(eager.transpose(a, perm=[1, 0]), a.T)
    np.testing.assert_array_equal(eager.concat([a, a[:1]], axis=0), np.concatenate([a, a[:1]]))
    np.testing.assert_array_equal(eager.slice(a, [1, 4], [2, 3], [1, -2]), a[1:3, 4::-2])
    np.testing.assert_array_equal(eager.broadcast_to(a[:1], shape=(4, 5)), np.broadcast_to(a[:1], (4, 5)))


def test_python_numbers_convert() -> None:
    np.testing.assert_array_equal(eager.add([1.5, 2.5], 1.0), np.array([2.5, 3.5], np.float32))
    np.testing.assert_array_equal(eager.mul([1, 2], 3), np.array([3, 6], np.int32))


def test_default_vm_releases_everything() -> None:
    vm = eager.default_vm()
    eager.add(np.ones(3, np.float32), np.ones(3, np.float32))
    count, consumed = vm.tensor_count, vm.consumed
    for _ in range(50):
        eager.softmax_xent(np.eye(4, dtype=np.float32), np.ones((4, 4), np.float32))
    assert vm.tensor_count == count == 0
    assert vm.consumed == consumed


def test_layer_norm_default_eps_is_the_same_at_every_layer() -> None:
    """Hardening finding 9: the C eager API's zeroed options meant eps = 0
    while the dialect's default is 1e-5. One value, everywhere."""
    import re
    from pathlib import Path

    import mlvm
    from mlvm.dialect.shapes import LAYER_NORM_EPS
    from mlvm.codegen.cc import INCLUDE_DIR

    header = (Path(INCLUDE_DIR) / "mlvm" / "exec.h").read_text()
    m = re.search(r"#define MLVM_LAYER_NORM_EPS ([0-9.e+-]+)f", header)
    assert m is not None and float(m.group(1)) == LAYER_NORM_EPS
    x = np.array([[1.0, 1.0 + 1e-3, 1.0 - 1e-3, 1.0]], np.float32)  # tiny variance: eps matters
    default = mlvm.eager.layer_norm(x)
    explicit = mlvm.eager.layer_norm(x, eps=LAYER_NORM_EPS)
    zero = mlvm.eager.layer_norm(x, eps=0.0)
    np.testing.assert_array_equal(default, explicit)
    assert not np.allclose(default, zero)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(zero, (x - mean) / np.sqrt(var), rtol=1e-3)
    np.testing.assert_allclose(default, (x - mean) / np.sqrt(var + LAYER_NORM_EPS), rtol=1e-3)


@pytest.mark.parametrize("call", [
    lambda: eager.argmax(np.zeros((3, 0), np.float32), axis=1),
    lambda: eager.reduce(np.zeros((0, 3), np.float32), "max", axes=(0,)),
], ids=["argmax", "reduce_max"])
def test_max_over_an_empty_axis_is_refused(call) -> None:  # type: ignore[no-untyped-def]
    """Hardening finding 9: the reference raises; the checked runtime must not
    answer 0 or -inf (the compiler's verifier refuses these programs too)."""
    with pytest.raises(eager.EagerError, match="MLVM_ERR_SHAPE"):
        call()
    np.testing.assert_array_equal(eager.reduce(np.zeros((0, 3), np.float32), "sum", axes=(0,)),
                                  np.zeros(3, np.float32))
