"""mlvm-fuse-qdq's QLinearMul form against onnxruntime's rule written out
with Python numbers: the integers' product exact, times (sa * sb) / sy in
f32, plus zy in f32, rounded half to even (so ties go by the parity of the
sum with zy), saturated. Scales are chosen so that ties happen."""

from __future__ import annotations

import numpy as np
import pytest

from pathlib import Path

from xdsl.rewriter import Rewriter

import mlvm
from mlvm.codegen.lowering import elem
from mlvm.dialect.nn import Pool2dOp, SliceOp, TransposeOp
from mlvm.dialect.ops import ConstantOp, ReshapeOp
from mlvm.dialect.quant import DequantizeOp
from mlvm.passes.canonicalize import make_constant
from mlvm.passes.fuse_qdq import FuseQdqPass
from mlvm.pipeline import CompileOptions, make_context, parse_file

SRC = """func.func @main(%aq: tensor<2x4x3x5x{t}>, %bq: tensor<4x1x1x{t}>) -> tensor<2x4x3x5x{t}> {{
  %sa = "mlvm.constant"() <{{value = dense<{sa}> : tensor<f32>}}> : () -> tensor<f32>
  %za = "mlvm.constant"() <{{value = dense<{za}> : tensor<{t}>}}> : () -> tensor<{t}>
  %sb = "mlvm.constant"() <{{value = dense<{sb}> : tensor<f32>}}> : () -> tensor<f32>
  %zb = "mlvm.constant"() <{{value = dense<{zb}> : tensor<{t}>}}> : () -> tensor<{t}>
  %sy = "mlvm.constant"() <{{value = dense<{sy}> : tensor<f32>}}> : () -> tensor<f32>
  %zy = "mlvm.constant"() <{{value = dense<{zy}> : tensor<{t}>}}> : () -> tensor<{t}>
  %a = "mlvm.dequantize"(%aq, %sa, %za) : (tensor<2x4x3x5x{t}>, tensor<f32>, tensor<{t}>) -> tensor<2x4x3x5xf32>
  %b = "mlvm.dequantize"(%bq, %sb, %zb) : (tensor<4x1x1x{t}>, tensor<f32>, tensor<{t}>) -> tensor<4x1x1xf32>
  %m = "mlvm.mul"(%a, %b) : (tensor<2x4x3x5xf32>, tensor<4x1x1xf32>) -> tensor<2x4x3x5xf32>
  %y = "mlvm.quantize"(%m, %sy, %zy) : (tensor<2x4x3x5xf32>, tensor<f32>, tensor<{t}>) -> tensor<2x4x3x5x{t}>
  func.return %y : tensor<2x4x3x5x{t}>
}}
"""


def qlinear_mul(a: np.ndarray, b: np.ndarray, sa: float, za: int, sb: float, zb: int, sy: float,
                zy: int) -> np.ndarray:
    info = np.iinfo(a.dtype)
    mult = np.float32(np.float32(np.float32(sa) * np.float32(sb)) / np.float32(sy))
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), a.dtype)
    for idx in np.ndindex(out.shape):
        p = (int(a[idx]) - za) * (int(b[(idx[1], 0, 0)]) - zb)
        v = float(np.float32(np.float32(np.float32(p) * mult) + np.float32(zy)))
        r = int(np.floor(v))
        if v - r > 0.5 or (v - r == 0.5 and r % 2 == 1):
            r += 1
        out[idx] = min(max(r, info.min), info.max)
    return out


@pytest.mark.parametrize("t", ["ui8", "i8"])
def test_qdq_mul_rounds_as_qlinear_mul(tmp_path, t: str) -> None:  # noqa: ANN001
    """u8: onnxruntime's QLinearMul rule; i8, which onnxruntime leaves in
    f32 on x86, the float form (the pass leaves it: the same result as
    without mlvm-fuse-qdq)."""
    dtype = np.uint8 if t == "ui8" else np.int8
    info = np.iinfo(dtype)
    g = np.random.default_rng(7)
    # (sa * sb) / sy = 0.5: odd products land on ties; zero points odd and even
    for sa, sb, sy, za, zb, zy in ((0.25, 0.5, 0.25, 3, 0, 7), (0.5, 0.5, 0.5, 0, 1, 2), (0.1, 0.3, 0.07, 9, 4, 1)):
        src = tmp_path / f"mul_{t}_{za}.mlir"
        src.write_text(SRC.format(t=t, sa=sa, sb=sb, sy=sy, za=za, zb=zb, zy=zy))
        m = mlvm.compile(src)
        plain = mlvm.compile(src, options=CompileOptions(fuse_qdq=False))
        for _ in range(3):
            a = g.integers(info.min, info.max + 1, (2, 4, 3, 5)).astype(dtype)
            b = g.integers(info.min, info.max + 1, (4, 1, 1)).astype(dtype)
            want = qlinear_mul(a, b, sa, za, sb, zb, sy, zy) if t == "ui8" else plain.main(a, b)
            np.testing.assert_array_equal(m.main(a, b), want)


def test_qdq_mul_ties_go_by_the_sum_with_the_zero_point(tmp_path) -> None:  # noqa: ANN001
    """Products of 0.5, 1.5, 2.5, 3.5 plus a zero point of 1: onnxruntime's
    QLinearMul rounds 1.5, 2.5, 3.5, 4.5 (2, 2, 4, 4), the float form
    rounds first (0, 2, 2, 4, plus 1)."""
    src = tmp_path / "ties.mlir"
    src.write_text(SRC.format(t="ui8", sa=0.25, sb=0.5, sy=0.25, za=0, zb=0, zy=1))
    a = np.zeros((2, 4, 3, 5), np.uint8)
    a[0, 0, 0, :4] = [1, 3, 5, 7]
    b = np.ones((4, 1, 1), np.uint8)
    assert mlvm.compile(src).main(a, b)[0, 0, 0, :4].tolist() == [2, 2, 4, 4]
    plain = mlvm.compile(src, options=CompileOptions(fuse_qdq=False))
    assert plain.main(a, b)[0, 0, 0, :4].tolist() == [1, 3, 3, 5]


POOL_SRC = """func.func @main(%xq: tensor<2x3x9x11x{t}>) -> tensor<2x3x{oh}x{ow}x{u}> {{
  %sx = "mlvm.constant"() <{{value = dense<{sx}> : tensor<f32>}}> : () -> tensor<f32>
  %zx = "mlvm.constant"() <{{value = dense<{zx}> : tensor<{t}>}}> : () -> tensor<{t}>
  %sy = "mlvm.constant"() <{{value = dense<{sy}> : tensor<f32>}}> : () -> tensor<f32>
  %zy = "mlvm.constant"() <{{value = dense<{zy}> : tensor<{u}>}}> : () -> tensor<{u}>
  %x = "mlvm.dequantize"(%xq, %sx, %zx) : (tensor<2x3x9x11x{t}>, tensor<f32>, tensor<{t}>) -> tensor<2x3x9x11xf32>
  %p = "mlvm.pool2d"(%x) <{{kind = "max", window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 1>}}> : (tensor<2x3x9x11xf32>) -> tensor<2x3x{oh}x{ow}xf32>
  %y = "mlvm.quantize"(%p, %sy, %zy) : (tensor<2x3x{oh}x{ow}xf32>, tensor<f32>, tensor<{u}>) -> tensor<2x3x{oh}x{ow}x{u}>
  func.return %y : tensor<2x3x{oh}x{ow}x{u}>
}}
"""


@pytest.mark.parametrize("t,u,sx,zx,sy,zy", [
    ("ui8", "ui8", 0.05, 3, 0.05, 3),  # the bytes alone
    ("i8", "i8", 0.02, -7, 0.02, -7),
    ("ui8", "ui8", 0.05, 3, 0.031, 0),  # requantized after the pool
    ("ui8", "i8", 0.05, 128, 0.05, 0),
    ("i8", "ui8", 1e-3, 0, 4e-3, 100),
    ("ui8", "ui8", 3e38, 0, 3e38, 0),  # products past FLT_MAX: inf, saturated
])
def test_qdq_max_pool_is_the_float_form(tmp_path, t: str, u: str, sx: float, zx: int, sy: float,  # noqa: ANN001
                                        zy: int) -> None:
    """A QDQ max pool on bytes (and requantized after it) gives the float
    form's bytes: every byte value, both signs, padding on three sides."""
    src = tmp_path / "pool.mlir"
    src.write_text(POOL_SRC.format(t=t, u=u, sx=f"{sx:.8e}", zx=zx, sy=f"{sy:.8e}", zy=zy, oh=5, ow=5))
    assert _pools(src) == [t]  # the rewrite fired: the pool is of the bytes
    m = mlvm.compile(src)
    plain = mlvm.compile(src, options=CompileOptions(fuse_qdq=False))
    dtype = np.uint8 if t == "ui8" else np.int8
    info = np.iinfo(dtype)
    g = np.random.default_rng(11)
    xs = [g.integers(info.min, info.max + 1, (2, 3, 9, 11)).astype(dtype),
          np.full((2, 3, 9, 11), info.min, dtype), np.full((2, 3, 9, 11), info.max, dtype),
          np.arange(2 * 3 * 9 * 11).reshape(2, 3, 9, 11).astype(dtype)]
    for x in xs:
        np.testing.assert_array_equal(m.main(x), plain.main(x))


def _pools(src: Path, scale: float | None = None) -> list[str]:
    """The element types of the max pools mlvm-fuse-qdq leaves in src (with
    every f32 scale constant made `scale`, where given)."""
    module, _ = parse_file(src)
    if scale is not None:
        for c in [o for o in module.walk() if isinstance(o, ConstantOp)]:
            if elem(c.result).name == "f32":
                new = make_constant(c.result.type, np.asarray(scale, np.float32))
                Rewriter.replace_op(c, new)
    FuseQdqPass().apply(make_context(), module)
    return [elem(o.x).name for o in module.walk() if isinstance(o, Pool2dOp)]


@pytest.mark.parametrize("scale", [float("inf"), float("nan"), -0.0, 1e-45])
def test_qdq_max_pool_needs_a_finite_positive_scale(tmp_path, scale: float) -> None:  # noqa: ANN001
    """An infinite scale dequantizes the zero point to NaN and the rest to
    +-inf, a NaN one everything to NaN, a zero or negative one does not keep
    the order: the pool stays in f32. A subnormal scale keeps the order (the
    bytes pooled, then requantized as the float form would)."""
    src = tmp_path / "pool.mlir"
    src.write_text(POOL_SRC.format(t="ui8", u="ui8", sx="1.0", zx=3, sy="1.0", zy=3, oh=5, ow=5))
    assert _pools(src, scale) == (["ui8"] if scale == 1e-45 else ["f32"])


MOVE_SRC = """func.func @main(%xq: tensor<2x6x5x{t}>) -> (tensor<2x5x3x2x{u}>, tensor<2x2x5x{u}>) {{
  %sx = "mlvm.constant"() <{{value = dense<{sx}> : tensor<f32>}}> : () -> tensor<f32>
  %zx = "mlvm.constant"() <{{value = dense<{zx}> : tensor<{t}>}}> : () -> tensor<{t}>
  %sy = "mlvm.constant"() <{{value = dense<{sy}> : tensor<f32>}}> : () -> tensor<f32>
  %zy = "mlvm.constant"() <{{value = dense<{zy}> : tensor<{u}>}}> : () -> tensor<{u}>
  %x = "mlvm.dequantize"(%xq, %sx, %zx) : (tensor<2x6x5x{t}>, tensor<f32>, tensor<{t}>) -> tensor<2x6x5xf32>
  %r = "mlvm.reshape"(%x) : (tensor<2x6x5xf32>) -> tensor<2x3x2x5xf32>
  %rq = "mlvm.quantize"(%r, %sx, %zx) : (tensor<2x3x2x5xf32>, tensor<f32>, tensor<{t}>) -> tensor<2x3x2x5x{t}>
  %rd = "mlvm.dequantize"(%rq, %sx, %zx) : (tensor<2x3x2x5x{t}>, tensor<f32>, tensor<{t}>) -> tensor<2x3x2x5xf32>
  %tr = "mlvm.transpose"(%rd) <{{perm = array<i64: 0, 3, 1, 2>}}> : (tensor<2x3x2x5xf32>) -> tensor<2x5x3x2xf32>
  %y0 = "mlvm.quantize"(%tr, %sy, %zy) : (tensor<2x5x3x2xf32>, tensor<f32>, tensor<{u}>) -> tensor<2x5x3x2x{u}>
  %sl = "mlvm.slice"(%x) <{{start = array<i64: 0, 5, 4>, stride = array<i64: 1, -2, -1>}}> : (tensor<2x6x5xf32>) -> tensor<2x2x5xf32>
  %y1 = "mlvm.quantize"(%sl, %sy, %zy) : (tensor<2x2x5xf32>, tensor<f32>, tensor<{u}>) -> tensor<2x2x5x{u}>
  func.return %y0, %y1 : tensor<2x5x3x2x{u}>, tensor<2x2x5x{u}>
}}
"""


@pytest.mark.parametrize("t,u,sx,zx,sy,zy", [
    ("ui8", "ui8", 0.05, 3, 0.05, 3),  # the bytes alone
    ("i8", "i8", 0.02, -7, 0.02, -7),
    ("ui8", "ui8", 0.05, 3, 0.031, 0),  # requantized after the move
    ("ui8", "i8", 0.05, 128, 0.05, 0),
    ("i8", "ui8", -0.01, 0, 0.004, 100),  # a negative scale: a move keeps any order
    ("ui8", "i8", 0.05, 130, 0.05, 2),  # the sign bits flipped (zero points 128 apart)
    ("ui8", "i8", 0.05, 0, 0.05, 0),  # the same zero point but another type: requantized
    ("i8", "ui8", 0.05, -3, 0.05, 125),
])
def test_qdq_moves_are_the_float_form(tmp_path, t: str, u: str, sx: float, zx: int, sy: float,  # noqa: ANN001
                                      zy: int) -> None:
    """QDQ reshape, transpose and slice on bytes (requantized after them
    where the parameters differ) give the float form's bytes."""
    src = tmp_path / "moves.mlir"
    src.write_text(MOVE_SRC.format(t=t, u=u, sx=f"{sx:.8e}", zx=zx, sy=f"{sy:.8e}", zy=zy))
    module, _ = parse_file(src)
    FuseQdqPass().apply(make_context(), module)
    moved = [elem(o.results[0]).name for o in module.walk() if isinstance(o, ReshapeOp | TransposeOp | SliceOp)]
    # every move on bytes (an i8 pair read once may have become u8: S8PairToU8)
    assert len(moved) == 3 and set(moved) <= {"i8", "ui8"}
    if t != u and sx == sy and abs(zx - zy) == 128:  # flipped bytes: no float step left
        assert not any(isinstance(o, DequantizeOp) for o in module.walk())
    m = mlvm.compile(src)
    plain = mlvm.compile(src, options=CompileOptions(fuse_qdq=False))
    dtype = np.uint8 if t == "ui8" else np.int8
    info = np.iinfo(dtype)
    g = np.random.default_rng(5)
    for x in (g.integers(info.min, info.max + 1, (2, 6, 5)).astype(dtype), np.full((2, 6, 5), info.max, dtype)):
        for a, b in zip(m.main(x), plain.main(x), strict=True):
            np.testing.assert_array_equal(a, b)


RANKED = {
    # a one-value scale of rank 3 broadcasts a 2x3 tensor to 1x2x3 (the float form stays)
    "transpose-scale-rank-3": """func.func @main(%xq: tensor<2x3xui8>) -> tensor<1x3x2xui8> {
  %s = "mlvm.constant"() <{value = dense<0.05> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %z = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<2x3xui8>, tensor<1x1x1xf32>, tensor<ui8>) -> tensor<1x2x3xf32>
  %t = "mlvm.transpose"(%x) <{perm = array<i64: 0, 2, 1>}> : (tensor<1x2x3xf32>) -> tensor<1x3x2xf32>
  %tq = "mlvm.quantize"(%t, %s, %z) : (tensor<1x3x2xf32>, tensor<1x1x1xf32>, tensor<ui8>) -> tensor<1x3x2xui8>
  func.return %tq : tensor<1x3x2xui8>
}
""",
    # the quantize's scale of rank 3 only (its result 1x3x2)
    "transpose-out-scale-rank-3": """func.func @main(%xq: tensor<2x3xui8>) -> tensor<1x3x2xui8> {
  %s = "mlvm.constant"() <{value = dense<0.05> : tensor<f32>}> : () -> tensor<f32>
  %s3 = "mlvm.constant"() <{value = dense<0.05> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %z = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  %t = "mlvm.transpose"(%x) <{perm = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %tq = "mlvm.quantize"(%t, %s3, %z) : (tensor<3x2xf32>, tensor<1x1x1xf32>, tensor<ui8>) -> tensor<1x3x2xui8>
  func.return %tq : tensor<1x3x2xui8>
}
""",
    # a rank-1 zero point on a reshape to rank 0, requantized (zero points 3 and 5)
    "reshape-to-rank-0": """func.func @main(%xq: tensor<1xui8>) -> tensor<ui8> {
  %s = "mlvm.constant"() <{value = dense<0.05> : tensor<f32>}> : () -> tensor<f32>
  %z = "mlvm.constant"() <{value = dense<3> : tensor<1xui8>}> : () -> tensor<1xui8>
  %z2 = "mlvm.constant"() <{value = dense<5> : tensor<ui8>}> : () -> tensor<ui8>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<1xui8>, tensor<f32>, tensor<1xui8>) -> tensor<1xf32>
  %r = "mlvm.reshape"(%x) : (tensor<1xf32>) -> tensor<f32>
  %rq = "mlvm.quantize"(%r, %s, %z2) : (tensor<f32>, tensor<f32>, tensor<ui8>) -> tensor<ui8>
  func.return %rq : tensor<ui8>
}
""",
    # a max pool's and a concat's output scale of a higher rank (the float form stays)
    "max-pool-out-scale-rank-5": """func.func @main(%xq: tensor<1x2x4x4xui8>) -> tensor<1x1x2x2x2xui8> {
  %s = "mlvm.constant"() <{value = dense<0.05> : tensor<f32>}> : () -> tensor<f32>
  %s5 = "mlvm.constant"() <{value = dense<0.05> : tensor<1x1x1x1x1xf32>}> : () -> tensor<1x1x1x1x1xf32>
  %z = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %p = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %y = "mlvm.quantize"(%p, %s5, %z) : (tensor<1x2x2x2xf32>, tensor<1x1x1x1x1xf32>, tensor<ui8>) -> tensor<1x1x2x2x2xui8>
  func.return %y : tensor<1x1x2x2x2xui8>
}
""",
    "concat-out-scale-rank-3": """func.func @main(%aq: tensor<2x3xui8>, %bq: tensor<2x3xui8>) -> tensor<1x2x6xui8> {
  %s = "mlvm.constant"() <{value = dense<0.05> : tensor<f32>}> : () -> tensor<f32>
  %s3 = "mlvm.constant"() <{value = dense<0.07> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %z = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %a = "mlvm.dequantize"(%aq, %s, %z) : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  %b = "mlvm.dequantize"(%bq, %s, %z) : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  %c = "mlvm.concat"(%a, %b) <{axis = 1 : i64}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %y = "mlvm.quantize"(%c, %s3, %z) : (tensor<2x6xf32>, tensor<1x1x1xf32>, tensor<ui8>) -> tensor<1x2x6xui8>
  func.return %y : tensor<1x2x6xui8>
}
""",
}


@pytest.mark.parametrize("name", list(RANKED))
def test_qdq_moves_with_ranked_parameters(tmp_path, name: str) -> None:  # noqa: ANN001
    """One-value parameters of any rank compile and give the float form's
    bytes (those of a higher rank than the values keep the float form)."""
    src = tmp_path / f"{name}.mlir"
    src.write_text(RANKED[name])
    m = mlvm.compile(src)
    plain = mlvm.compile(src, options=CompileOptions(fuse_qdq=False))
    for k in (37, 0):
        xs = [np.arange(int(np.prod(i.shape)), dtype=np.uint8).reshape(i.shape) * k + 255 * (k == 0)
              for i in m.main.info.inputs]
        np.testing.assert_array_equal(m.main(*xs), plain.main(*xs))
