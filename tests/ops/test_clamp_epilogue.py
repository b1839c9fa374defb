"""An activation alone after a matmul or conv2d (relu; Clip as max with a
constant then min with one) runs as mlvm_epilogue_clamp_f32 (in the
depthwise kernels' registers), a matmul's bias with a ReLU or nothing as
mlvm_epilogue_bias_f32: bit for bit the reference's rules (relu keeps NaN
and -0; max / min give the bound on ties, NaN stays; +-inf clamp).
Integer-valued data, so every sum is exact whatever the order, with NaN
and inf planted in the input (the lit tests
tests/filecheck/codegen/clamp_epilogue.mlir and bias_epilogue.mlir show
the calls)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mlvm
from mlvm import reference
from mlvm.pipeline import CompileOptions, parse_file


def _activation(kind: str, t: str) -> tuple[str, str]:
    """Constants and the ops after %0, the last result %2."""
    if kind == "relu":
        return "", f'  %2 = "mlvm.relu"(%0) : ({t}) -> {t}\n'
    lo, hi = {"clip": ("0.0", "6.0"), "max": ("-2.0", None), "min": (None, "3.0")}[kind]
    consts, ops, v = "", "", "%0"
    if lo is not None:
        consts += f'  %lo = "mlvm.constant"() <{{value = dense<{lo}> : tensor<f32>}}> : () -> tensor<f32>\n'
        ops += f'  %1 = "mlvm.max"({v}, %lo) : ({t}, tensor<f32>) -> {t}\n'
        v = "%1"
    if hi is not None:
        consts += f'  %hi = "mlvm.constant"() <{{value = dense<{hi}> : tensor<f32>}}> : () -> tensor<f32>\n'
        ops += f'  %2 = "mlvm.min"({v}, %hi) : ({t}, tensor<f32>) -> {t}\n'
        v = "%2"
    if v == "%1":
        ops = ops.replace("%1 =", "%2 =")
    return consts, ops


def _ints(g: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return g.integers(-4, 5, size=shape).astype(np.float32)


def _check(tmp_path: Path, text: str, inputs: list[np.ndarray]) -> None:
    path = tmp_path / "m.mlir"
    path.write_text(text)
    with np.errstate(invalid="ignore"):  # inf * 0 in the reference's product
        want = reference.run(parse_file(path)[0], "main", inputs)[0]
    for opts in (CompileOptions(), CompileOptions(workspaces=False)):
        got = mlvm.compile(path, options=opts).main(*inputs)
        assert got.tobytes() == want.tobytes(), np.argwhere(got.view(np.uint32) != want.view(np.uint32))


def _plant(x: np.ndarray) -> np.ndarray:
    """NaN, +inf and -inf in three rows (whole rows of results), and sums
    that land exactly on 0, 6, -2 and 3 elsewhere in the integer data."""
    x = x.copy()
    flat = x.reshape(x.shape[0], -1)
    if flat.shape[0] >= 4:
        flat[1, 0], flat[2, -1], flat[3, 1] = np.nan, np.inf, -np.inf
    return x


@pytest.mark.parametrize("kind", ["relu", "clip", "max", "min"])
@pytest.mark.parametrize("m,k,n", [(9, 7, 40), (1, 5, 130), (4, 3, 17)])
def test_matmul_activation(tmp_path: Path, kind: str, m: int, k: int, n: int) -> None:
    g = np.random.default_rng(m * 100 + n)
    ta, tb, tr = f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{m}x{n}xf32>"
    consts, ops = _activation(kind, tr)
    text = (f"func.func @main(%x: {ta}, %w: {tb}) -> {tr} {{\n{consts}"
            f'  %0 = "mlvm.matmul"(%x, %w) : ({ta}, {tb}) -> {tr}\n{ops}'
            f"  func.return %2 : {tr}\n}}\n")
    w = _ints(g, (k, n))
    w[:, 0] = 0  # inf * 0: NaN in the inf rows' first column
    _check(tmp_path, text, [_plant(_ints(g, (m, k))), w])


@pytest.mark.parametrize("relu", [True, False])
@pytest.mark.parametrize("bias_first", [False, True])
@pytest.mark.parametrize("m,k,n,bshape", [(9, 7, 40, "n"), (1, 5, 130, "1n"), (1, 784, 10, "n"),
                                          (4, 3, 17, "1n"), (1, 1, 1, "n"), (13, 16, 33, "n")])
def test_matmul_bias(tmp_path: Path, relu: bool, bias_first: bool, m: int, k: int, n: int,
                     bshape: str) -> None:
    """Linear layers (x @ w + b, then ReLU or not), the bias one value per
    column ([n] or [1, n]): -0, NaN and +-inf among the biases, sums that
    are -0 or land on 0."""
    g = np.random.default_rng(m * 1000 + n + 7 * relu + bias_first)
    ta, tb, tr = f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{m}x{n}xf32>"
    tbias = f"tensor<{n}xf32>" if bshape == "n" else f"tensor<1x{n}xf32>"
    add = "%b, %0" if bias_first else "%0, %b"
    last = "%2" if relu else "%1"
    text = (f"func.func @main(%x: {ta}, %w: {tb}, %b: {tbias}) -> {tr} {{\n"
            f'  %0 = "mlvm.matmul"(%x, %w) : ({ta}, {tb}) -> {tr}\n'
            f'  %1 = "mlvm.add"({add}) : ({tbias if bias_first else tr}, {tr if bias_first else tbias}) -> {tr}\n'
            + (f'  %2 = "mlvm.relu"(%1) : ({tr}) -> {tr}\n' if relu else "")
            + f"  func.return {last} : {tr}\n}}\n")
    b = _ints(g, (n,))
    b[:: 5] = -0.0
    if n >= 4:
        b[1], b[2], b[3] = np.nan, np.inf, -np.inf
    x = _ints(g, (m, k))
    if m >= 2:
        x[1] = 0.0  # a row of zero sums: 0 + -0, 0 + b
    _check(tmp_path, text, [x, _ints(g, (k, n)), b.reshape(n if bshape == "n" else (1, n))])


@pytest.mark.parametrize("kind", ["relu", "clip"])
@pytest.mark.parametrize("o,stride", [(8, 1), (12, 2), (3, 1)])
def test_conv_activation(tmp_path: Path, kind: str, o: int, stride: int) -> None:
    g = np.random.default_rng(o + stride)
    oh = (7 + 2 - 3) // stride + 1
    tx, tw, tr = "tensor<2x5x7x7xf32>", f"tensor<{o}x5x3x3xf32>", f"tensor<2x{o}x{oh}x{oh}xf32>"
    consts, ops = _activation(kind, tr)
    text = (f"func.func @main(%x: {tx}, %w: {tw}) -> {tr} {{\n{consts}"
            f'  %0 = "mlvm.conv2d"(%x, %w) <{{strides = array<i64: {stride}, {stride}>, '
            f"padding = array<i64: 1, 1, 1, 1>}}> : ({tx}, {tw}) -> {tr}\n{ops}"
            f"  func.return %2 : {tr}\n}}\n")
    x = _ints(g, (2, 5, 7, 7))
    x[0, 1, 3, 3], x[1, 2, 0, 6] = np.nan, np.inf
    _check(tmp_path, text, [x, _ints(g, (o, 5, 3, 3))])



def test_nan_bound_keeps_the_generated_function(tmp_path: Path) -> None:
    """A NaN bound keeps the generated epilogue: max(h, NaN) is NaN by the
    ops' rules, and so is the min after it, where the vector clamp would give
    the upper bound. (MLIR text cannot spell a NaN constant: the bound is
    set on the parsed op.)"""
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f32

    from mlvm.dialect.fused import FusedOp
    from mlvm.dialect.ops import ConstantOp
    from mlvm.passes.fuse import FusePass
    from mlvm.pipeline import make_context

    consts, ops = _activation("clip", "tensor<4x16xf32>")
    path = tmp_path / "m.mlir"
    path.write_text('func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {\n'
                    f"{consts}"
                    '  %0 = "mlvm.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>\n'
                    f"{ops}  func.return %2 : tensor<4x16xf32>\n}}\n")
    module = parse_file(path)[0]
    FusePass().apply(make_context(), module)
    fused = next(op for op in module.walk() if isinstance(op, FusedOp))
    assert fused.clamp() == (0.0, 6.0, False)
    lo = next(op for op in module.walk() if isinstance(op, ConstantOp))
    lo.properties["value"] = DenseIntOrFPElementsAttr.from_list(TensorType(f32, []), [float("nan")])
    assert fused.clamp() is None
