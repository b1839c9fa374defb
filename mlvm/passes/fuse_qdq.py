"""Quantized convolutions and matmuls from their QDQ form.

A QDQ model (what onnxruntime's static quantizer writes) spells an int8
convolution as float ops between DequantizeLinear and QuantizeLinear:

    quantize(conv2d(dequantize(xq, sx, zx), dequantize(wq, sw, zw),
                    dequantize(bq, sb, 0)?) [relu], sy, zy)

This pass computes it in integers, as onnxruntime runs such a model:

    requantize(qconv2d(xq, wq, zx, zw) + bq, (sx * sw) / sy, zy) [max zy]

in one kernel that never stores the sums (mlvm.qconv2d_requant) for 8-bit
outputs, as those four ops for 16-bit ones.

(the bias's own scale is taken to be sx * sw, as the quantizer writes it;
`quantize(relu(v))` is `max(quantize(v), zy)` exactly). A Linear layer,
a rank-2 matmul with a weight known at compile time (a bias and a relu
optional), becomes a 1x1 qconv2d_requant over its rows (FuseQdqLinear);
other rank-2 matmuls without a bias become qmatmul + requantize. The sum of two
dequantized 8-bit tensors, quantized to 8 bits (a residual add, a
quantized bias), becomes one mlvm.qadd, which computes it as
onnxruntime's QLinearAdd does, in one pass over bytes; a max pool, a
reshape, transpose or slice between a dequantize and a quantize pools or
moves the bytes. The multiplier is
computed by f32 ops on the scale tensors, which constant folding turns into
a constant when the scales are known.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, Float32Type, FloatAttr, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlvm.codegen.lowering import elem, value_shape
from mlvm.dialect.base import MlvmOp
from mlvm.dialect.elements import xdsl_type
from mlvm.dialect.index import PadOp
from mlvm.dialect.logic import XorOp
from mlvm.dialect.nn import ConcatOp, Conv2dOp, Pool2dOp, SliceOp, SoftmaxOp, TransposeOp
from mlvm.dialect.ops import (
    AddOp,
    CastOp,
    DivOp,
    FillOp,
    MatmulOp,
    MaxOp,
    MulOp,
    ParamOp,
    ReluOp,
    ReshapeOp,
    SubOp,
)
from mlvm.dialect.quant import (
    DequantizeOp,
    QAddOp,
    QAvgPool2dOp,
    QConv2dOp,
    QConv2dRequantOp,
    QMatmulOp,
    QSoftmaxOp,
    QuantizeOp,
    RequantizeOp,
    qadd_layout,
    qsoftmax_table,
)
from mlvm.passes.canonicalize import constant_of, make_constant, only_use


def _elem(v: SSAValue) -> str:
    return elem(v).name


def _dq(v: SSAValue | None, elems: tuple[str, ...]) -> DequantizeOp | None:
    """The dequantize producing v, if its integers are of one of `elems`."""
    op = None if v is None else v.owner
    if isinstance(op, DequantizeOp) and _elem(op.q) in elems:
        return op
    return None


class QBuilder:
    """Ops inserted before `at`, in order."""

    def __init__(self, rewriter: PatternRewriter, at: Operation) -> None:
        self.rewriter, self.at = rewriter, at

    def op(self, cls: type[MlvmOp], operands: list[SSAValue], shape: tuple[int, ...], elem: str,
           **props: Attribute) -> SSAValue:
        op = cls.create(operands=operands, result_types=[TensorType(xdsl_type(elem), list(shape))],
                        properties=dict(props))
        self.rewriter.insert(op, InsertPoint.before(self.at))
        op.verify()
        return op.results[0]

    def reshape(self, v: SSAValue, shape: tuple[int, ...]) -> SSAValue:
        if value_shape(v) == shape:
            return v
        return self.op(ReshapeOp, [v], shape, _elem(v))


def _per_channel(s: tuple[int, ...], channels: int) -> bool | None:
    """True for one value per channel (a [C, 1, ...] tensor), False for one
    value, None for anything else."""
    if prod(s) == 1:
        return False
    if s and s[0] == channels and prod(s[1:]) == 1:
        return True
    return None


def weight_zero_point(b: QBuilder, v: SSAValue, per: bool, n: int) -> SSAValue:
    """A weight zero point shaped (n,), or () when it is one value: also
    when all n are equal (the kernels then take the one-value path and
    nothing fills an array at run time)."""
    if per:
        arr = constant_of(v)
        if isinstance(v.owner, FillOp):
            arr = np.full(1, v.owner.value.value.data)
        if arr is not None and arr.size and bool(np.all(arr == arr.reshape(-1)[0])):
            e = elem(v)
            one = make_constant(TensorType(xdsl_type(e.name), []), np.asarray(arr.reshape(-1)[0], e.dtype))
            b.rewriter.insert(one, InsertPoint.before(b.at))
            return one.result
    return b.reshape(v, (n,) if per else ())


def _multiplier(b: QBuilder, sx: SSAValue, sw: SSAValue, per_o: bool, o: int, q: QuantizeOp) -> SSAValue:
    """(sx * sw) / sy, shaped (o,) or ()."""
    sw_v = b.reshape(sw, (o,) if per_o else ())
    prod_s = b.op(MulOp, [b.reshape(sx, ()), sw_v], value_shape(sw_v), "f32")
    return b.op(DivOp, [prod_s, b.reshape(q.scale, ())], value_shape(sw_v), "f32")


def _requantized(b: QBuilder, acc: SSAValue, sx: SSAValue, sw: SSAValue, per_o: bool, o: int,
                 q: QuantizeOp, bshape: tuple[int, ...]) -> SSAValue:
    """requantize(acc, (sx * sw) / sy, zy); the multiplier shaped `bshape`."""
    mult = b.reshape(_multiplier(b, sx, sw, per_o, o, q), bshape if per_o else ())
    zy = b.reshape(q.zero_point, ())
    return b.op(RequantizeOp, [acc, mult, zy], value_shape(acc), _elem(q.result))


@dataclass
class FuseQdqConv(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: QuantizeOp, rewriter: PatternRewriter) -> None:
        relu: ReluOp | None = None
        src = q.x.owner
        if isinstance(src, ReluOp) and only_use(src.result, q):
            relu, src = src, src.operand.owner
        if not isinstance(src, Conv2dOp) or not only_use(src.result, relu or q):
            return
        if prod(value_shape(q.scale)) != 1 or prod(value_shape(q.zero_point)) != 1:
            return
        dx, dw = _dq(src.x, ("i8", "ui8")), _dq(src.w, ("i8", "ui8"))
        if dx is None or dw is None or prod(value_shape(dx.scale)) != 1 or prod(value_shape(dx.zero_point)) != 1:
            return
        o = value_shape(src.w)[0]
        per_s, per_z = _per_channel(value_shape(dw.scale), o), _per_channel(value_shape(dw.zero_point), o)
        if per_s is None or per_z is None:
            return
        bias_q: SSAValue | None = None
        if src.bias is not None:
            db = _dq(src.bias, ("i32",))
            if db is None:
                return
            bias_q = db.q
        b = QBuilder(rewriter, q)
        props: dict[str, Attribute] = {k: src.properties[k] for k in ("strides", "padding", "dilations", "groups")
                                       if k in src.properties}
        zw = weight_zero_point(b, dw.zero_point, per_z, o)
        x_zw = [dx.q, dw.q, b.reshape(dx.zero_point, ()), zw]
        if _elem(q.result) not in ("i8", "ui8"):  # 16-bit outputs: the sums, then requantize
            acc = b.op(QConv2dOp, x_zw, value_shape(src.result), "i32", **props)
            if bias_q is not None:
                acc = b.op(AddOp, [acc, b.reshape(bias_q, (o, 1, 1))], value_shape(acc), "i32")
            y = _requantized(b, acc, dx.scale, dw.scale, per_s, o, q, (o, 1, 1))
            if relu is not None:
                y = b.op(MaxOp, [y, b.reshape(q.zero_point, ())], value_shape(y), _elem(y))
            rewriter.replace(q, [], [y])
            return
        props["relu"] = IntegerAttr(int(relu is not None), i64)
        mult = _multiplier(b, dx.scale, dw.scale, per_s, o, q)
        operands = [*x_zw, mult, b.reshape(q.zero_point, ())]
        if bias_q is not None:
            operands.append(b.reshape(bias_q, (o,)))
        y = b.op(QConv2dRequantOp, operands, value_shape(src.result), _elem(q.result), **props)
        rewriter.replace(q, [], [y])


@dataclass
class FuseQdqMatmul(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: QuantizeOp, rewriter: PatternRewriter) -> None:
        src = q.x.owner
        if not isinstance(src, MatmulOp) or not only_use(src.result, q):
            return
        for k in ("transpose_lhs", "transpose_rhs"):
            flag = src.properties.get(k)
            if isinstance(flag, IntegerAttr) and flag.value.data:
                return
        da, db = _dq(src.lhs, ("i8", "ui8")), _dq(src.rhs, ("i8", "ui8"))
        if da is None or db is None or len(value_shape(src.rhs)) != 2 or len(value_shape(src.lhs)) != 2:
            return
        if prod(value_shape(q.scale)) != 1 or prod(value_shape(q.zero_point)) != 1:
            return
        if any(prod(value_shape(v)) != 1 for v in (da.scale, da.zero_point)):
            return
        n = value_shape(src.rhs)[1]
        per_s, per_z = _per_column(value_shape(db.scale), n), _per_column(value_shape(db.zero_point), n)
        if per_s is None or per_z is None:
            return
        b = QBuilder(rewriter, q)
        zb = weight_zero_point(b, db.zero_point, per_z, n)
        acc = b.op(QMatmulOp, [da.q, db.q, b.reshape(da.zero_point, ()), zb], value_shape(src.result), "i32")
        y = _requantized(b, acc, da.scale, db.scale, per_s, n, q, (n,))
        rewriter.replace(q, [], [y])


def linear_weight(b: QBuilder, wq: SSAValue, transposed: bool) -> SSAValue | None:
    """A compile-time [N, K] (`transposed`) or [K, N] weight as the [N, K,
    1, 1] weight of a 1x1 convolution: a parameter read through a view of
    its archive array (and a perm for [K, N]), or a constant made so; None
    for weights computed at run time and for parameters already stored in
    another layout (lanes, panels, Winograd planes, a view or perm)."""
    k_n = value_shape(wq)
    n, k = k_n if transposed else k_n[::-1]
    t = TensorType(xdsl_type(_elem(wq)), [n, k, 1, 1])
    owner = wq.owner
    if isinstance(owner, ParamOp):
        if any(p is not None for p in (owner.perm, owner.view, owner.lanes, owner.panel, owner.wino)):
            return None
        props: dict[str, Attribute] = {"name": owner.param_name, "view": DenseArrayBase.from_list(i64, list(k_n))}
        if not transposed:
            props["perm"] = DenseArrayBase.from_list(i64, [1, 0, 2, 3])
        op: Operation = ParamOp.create(result_types=[t], properties=props)
        op.location = owner.location  # errors about the archive's array name the param's line
    elif (arr := constant_of(wq)) is not None:
        op = make_constant(t, np.ascontiguousarray(arr if transposed else arr.T).reshape(n, k, 1, 1))
    else:
        return None
    b.rewriter.insert(op, InsertPoint.before(b.at))
    return op.results[0]


SWAP = DenseArrayBase.from_list(i64, [1, 0])


def rows_as_image(b: QBuilder, x: SSAValue, m: int, k: int) -> SSAValue:
    """x [..., K] of m rows as one image of K channels and m positions, [1,
    K, m, 1], for a 1x1 convolution over its rows: the rows transposed (one
    row needs no transpose)."""
    if m > 1:
        x = b.op(TransposeOp, [b.reshape(x, (m, k))], (k, m), _elem(x), perm=SWAP)
    return b.reshape(x, (1, k, m, 1))


def image_as_rows(b: QBuilder, y: SSAValue, n: int, m: int, shape: tuple[int, ...]) -> SSAValue:
    """That convolution's [1, n, m, 1] result as its rows, shaped `shape`
    ([..., n])."""
    if m > 1:
        y = b.op(TransposeOp, [b.reshape(y, (n, m))], (m, n), _elem(y), perm=SWAP)
    return b.reshape(y, shape)


def _per_output(s: tuple[int, ...], n: int, transposed: bool) -> bool | None:
    """True for one value per output column of a rank-2 weight ([N, 1]
    against an [N, K] one read transposed; [N] or [1, N] against [K, N]),
    False for one value, None for anything else (such as [N] against [N,
    K], which broadcasts along K)."""
    if prod(s) == 1 and len(s) <= 2:
        return False
    if transposed:
        return True if s == (n, 1) else None
    return True if s in ((n,), (1, n)) else None


@dataclass
class FuseQdqLinear(RewritePattern):
    """quantize([relu](matmul(dequantize(x), dequantize(w)) [+ dequantize(b)]))
    with a weight known at compile time ([K, N], or [N, K] read with
    `transpose_rhs`: ONNX Gemm, PyTorch's Linear) and 8-bit outputs: one
    1x1 mlvm.qconv2d_requant over the rows of x, so that the weights are
    stored in the int8 kernels' lanes once and the rows are requantized in
    the kernel (ONNX QGemm, onnxruntime's QDQ Gemm / MatMul). x [..., K] is
    read as one image of K channels and M = prod(...) positions: with M > 1
    its rows transposed first (and the result back), so that each weight is
    read once per call."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: QuantizeOp, rewriter: PatternRewriter) -> None:
        if _elem(q.result) not in ("i8", "ui8") or prod(value_shape(q.scale)) != 1 or prod(value_shape(q.zero_point)) != 1:
            return
        relu: ReluOp | None = None
        src = q.x.owner
        if isinstance(src, ReluOp) and only_use(src.result, q):
            relu, src = src, src.operand.owner
        user: Operation = relu or q
        bias: SSAValue | None = None
        if isinstance(src, AddOp) and only_use(src.result, user):
            for mm, bv in ((src.lhs, src.rhs), (src.rhs, src.lhs)):
                db = _dq(bv, ("i32",))
                # a bias per output column, which does not widen the result
                if (isinstance(mm.owner, MatmulOp) and db is not None and only_use(mm, src)
                        and value_shape(src.result) == value_shape(mm)):
                    user, src, bias = src, mm.owner, db.q
                    break
        if not isinstance(src, MatmulOp) or not only_use(src.result, user):
            return
        flag = src.properties.get("transpose_lhs")
        if isinstance(flag, IntegerAttr) and flag.value.data:
            return
        flag = src.properties.get("transpose_rhs")
        transposed = isinstance(flag, IntegerAttr) and bool(flag.value.data)
        dx, dw = _dq(src.lhs, ("i8", "ui8")), _dq(src.rhs, ("i8", "ui8"))
        if dx is None or dw is None or len(value_shape(dx.q)) < 2 or len(value_shape(dw.q)) != 2:
            return
        if value_shape(src.rhs) != value_shape(dw.q) or prod(value_shape(dx.q)) == 0:
            return  # (a scale that widens the weight, no rows)
        if any(prod(value_shape(v)) != 1 for v in (dx.scale, dx.zero_point)):
            return
        n, k = value_shape(dw.q) if transposed else value_shape(dw.q)[::-1]
        per_s, per_z = _per_output(value_shape(dw.scale), n, transposed), _per_output(
            value_shape(dw.zero_point), n, transposed)
        if per_s is None or per_z is None:
            return
        if bias is not None and value_shape(bias) not in ((n,), (1, n)):
            return
        b = QBuilder(rewriter, q)
        w = linear_weight(b, dw.q, transposed)
        if w is None:
            return
        rows = value_shape(dx.q)[:-1]
        m = prod(rows)
        x = rows_as_image(b, dx.q, m, k)
        operands = [x, w, b.reshape(dx.zero_point, ()), weight_zero_point(b, dw.zero_point, per_z, n),
                    _multiplier(b, dx.scale, dw.scale, per_s, n, q), b.reshape(q.zero_point, ())]
        if bias is not None:
            operands.append(b.reshape(bias, (n,)))
        y = b.op(QConv2dRequantOp, operands, (1, n, m, 1), _elem(q.result),
                 relu=IntegerAttr(int(relu is not None), i64))
        rewriter.replace(q, [], [image_as_rows(b, y, n, m, value_shape(q.result))])


@dataclass
class S8PairToU8(RewritePattern):
    """An i8 quantize whose result one dequantize alone reads, that
    dequantize's result read once, both with the same single constant zero
    point z: the pair in ui8 with zero point z + 128, the same values
    (onnxruntime's QDQS8ToU8Transformer on x86, which runs before its QDQ
    fusions: so that the u8 rules below meet the ops it turns into u8 ones,
    and the i8 ones it leaves alone stay in f32 where it computes them so).
    Runs before the fusions."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: QuantizeOp, rewriter: PatternRewriter) -> None:
        uses = list(q.result.uses)
        if _elem(q.result) != "i8" or len(uses) != 1:
            return
        d = uses[0].operation
        if not isinstance(d, DequantizeOp) or d.q != q.result or len(list(d.result.uses)) != 1:
            return
        zq, zd = constant_of(q.zero_point), constant_of(d.zero_point)
        if zq is None or zd is None or zq.size != 1 or zd.size != 1 or int(zq.reshape(())) != int(zd.reshape(())):
            return
        # one value, shaped as each zero point was (its shape can be the
        # result's: the ops broadcast it)
        z = make_constant(TensorType(xdsl_type("ui8"), []), np.asarray(int(zq.reshape(())) + 128, np.uint8))
        rewriter.insert(z, InsertPoint.before(q))
        b = QBuilder(rewriter, q)
        q2 = b.op(QuantizeOp, [q.x, q.scale, b.reshape(z.result, value_shape(q.zero_point))],
                  value_shape(q.result), "ui8")
        b2 = QBuilder(rewriter, d)
        d2 = b2.op(DequantizeOp, [q2, d.scale, b2.reshape(z.result, value_shape(d.zero_point))],
                   value_shape(d.result), _elem(d.result))
        rewriter.replace(d, [], [d2])
        rewriter.erase(q)


def _binary_u8(q: QuantizeOp, cls: type[MlvmOp]) -> tuple[DequantizeOp, DequantizeOp] | None:
    """The two dequantizes of quantize(cls(dequantize(a), dequantize(b))),
    all u8 with one scale and zero point each, the op read by q alone
    (onnxruntime on x86 fuses no i8 add or mul: it computes those in f32;
    i8 pairs it turns into u8 ones S8PairToU8 has turned first)."""
    src = q.x.owner
    if not isinstance(src, cls) or not only_use(q.x, q) or _elem(q.result) != "ui8":
        return None
    da, db = _dq(src.operands[0], ("ui8",)), _dq(src.operands[1], ("ui8",))
    if da is None or db is None:
        return None
    singles = (da.scale, da.zero_point, db.scale, db.zero_point, q.scale, q.zero_point)
    return None if any(prod(value_shape(v)) != 1 for v in singles) else (da, db)


@dataclass
class FuseQdqAdd(RewritePattern):
    """quantize(add(dequantize(a), dequantize(b))), u8 with one scale and
    zero point each, one operand of the sum's shape and the other of it or
    broadcast over dims of one run: one mlvm.qadd (onnxruntime's
    QLinearAdd, which on x86 it makes of u8 tensors alone: of i8 ones
    after S8PairToU8, and a constant i8 operand keeps the f32 form)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: QuantizeOp, rewriter: PatternRewriter) -> None:
        found = _binary_u8(q, AddOp)
        if found is None:
            return
        da, db = found
        shape = value_shape(q.result)
        if value_shape(q.x) != shape or qadd_layout(value_shape(da.q), value_shape(db.q), shape) is None:
            return  # (both operands broadcast, or the small one's dims not one run: left in f32)
        b = QBuilder(rewriter, q)
        operands = [da.q, b.reshape(da.scale, ()), b.reshape(da.zero_point, ()),
                    db.q, b.reshape(db.scale, ()), b.reshape(db.zero_point, ()),
                    b.reshape(q.scale, ()), b.reshape(q.zero_point, ())]
        rewriter.replace(q, [], [b.op(QAddOp, operands, shape, _elem(q.result))])


@dataclass
class FuseQdqMul(RewritePattern):
    """quantize(mul(dequantize(a), dequantize(b))), all u8 with one scale and
    zero point each (a quantized model's channel scaling, x * sigmoid(x)):
    as onnxruntime's QLinearMul computes it, the integers' product exact in
    int32, then in f32 times (sa * sb) / sy, plus zy, rounded half to even
    and saturated: elementwise integer and float ops (broadcasting as the
    mul did) that mlvm-fuse makes one loop, the quantize's scale 1 and zero
    point 0 making it the rounding and the saturation alone."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: QuantizeOp, rewriter: PatternRewriter) -> None:
        found = _binary_u8(q, MulOp)
        if found is None:
            return
        da, db = found
        b = QBuilder(rewriter, q)

        def centered(d: DequantizeOp) -> SSAValue:
            x = b.op(CastOp, [d.q], value_shape(d.q), "i32")
            z = b.op(CastOp, [b.reshape(d.zero_point, ())], (), "i32")
            return b.op(SubOp, [x, z], value_shape(x), "i32")

        shape = value_shape(q.x)
        prod_i = b.op(MulOp, [centered(da), centered(db)], shape, "i32")
        sab = b.op(MulOp, [b.reshape(da.scale, ()), b.reshape(db.scale, ())], (), "f32")
        mult = b.op(DivOp, [sab, b.reshape(q.scale, ())], (), "f32")
        f = b.op(MulOp, [b.op(CastOp, [prod_i], shape, "f32"), mult], shape, "f32")
        f = b.op(AddOp, [f, b.op(CastOp, [b.reshape(q.zero_point, ())], (), "f32")], shape, "f32")
        e = elem(q.result)
        one = make_constant(TensorType(xdsl_type("f32"), []), np.asarray(1.0, np.float32))
        zero = make_constant(TensorType(xdsl_type(e.name), []), np.zeros((), e.dtype))
        for c in (one, zero):
            rewriter.insert(c, InsertPoint.before(q))
        rewriter.replace(q, [], [b.op(QuantizeOp, [f, one.result, zero.result], shape, e.name)])


def _one_value_params(dx: DequantizeOp, q: QuantizeOp) -> bool:
    """Whether dx's and q's scales and zero points are one value each."""
    return all(prod(value_shape(v)) == 1 for v in (dx.scale, dx.zero_point, q.scale, q.zero_point))


def _unary_u8(q: QuantizeOp, src: Operation) -> DequantizeOp | None:
    """The dequantize of quantize(src(dequantize(x))), x and the result u8
    with one scale and zero point each, src read by q alone (onnxruntime
    computes an i8 softmax in f32 on x86)."""
    dx = _dq(src.operands[0], ("ui8",))
    if dx is None or _elem(q.result) != "ui8" or not only_use(src.results[0], q):
        return None
    return dx if _one_value_params(dx, q) else None


@dataclass(frozen=True)
class _QdqPool:
    """An average pool between a dequantize and a quantize as the importer
    writes it: `pad`, the zeros a count_include_pad pool pads with first
    (else None); `to_2d`, the shape the pool's input is reshaped to (else
    None); `x`, the value before both (the dequantize's result)."""

    pool: Pool2dOp
    pad: PadOp | None
    to_2d: tuple[int, ...] | None
    x: SSAValue
    u8_only: bool = False  # (through a reshape of the model's own)


def _zero_pad(v: SSAValue, user: Operation) -> PadOp | None:
    """The op making v if it pads the spatial dims (not N and C) with zeros,
    constant mode, and `user` alone reads v."""
    pad = v.owner
    if not isinstance(pad, PadOp) or not only_use(v, user) or float(pad.value.value.data) != 0.0:
        return None
    mode, begin, end = pad.params()
    return pad if mode == "constant" and min(begin + end) >= 0 and not any(begin[:2] + end[:2]) else None


def _model_reshape(v: SSAValue) -> tuple[SSAValue, bool] | None:
    """For v made by a reshape of the model's own: the value it reshapes,
    and whether a pool of v is fused for u8 alone (onnxruntime moves the
    dequantize across a Reshape; on x86, where i8 QDQ pairs are made u8
    where they can be, one read once only becomes u8 and the i8 pool stays
    f32). None without such a reshape, or where the function returns it
    (onnxruntime moves nothing across a graph output)."""
    r = v.owner
    if not isinstance(r, ReshapeOp) or any(isinstance(u.operation, ReturnOp) for u in r.result.uses):
        return None
    return r.operand, sum(1 for _ in r.result.uses) == 1


def _pool_of(q: QuantizeOp) -> _QdqPool | None:
    """The average pool q quantizes, as the importer writes it: the pool
    alone, after its zero padding (count_include_pad), for a 1-D pool
    between the reshapes [N, C, L] -> [N, C, 1, L] and [N, C, 1, L'] -> [N,
    C, L'] (each read once), and after a reshape of the model's own
    (_model_reshape). No other reshape after it: onnxruntime moves no
    quantize back across a Flatten (and those pools it computes in f32)."""
    src = q.x.owner
    outer = src if isinstance(src, ReshapeOp) else None
    if outer is not None:
        if not only_use(outer.result, q):
            return None
        src = outer.operand.owner
    if not isinstance(src, Pool2dOp) or src.kind.data != "avg":
        return None
    if not only_use(src.result, outer if outer is not None else q):
        return None
    pad = _zero_pad(src.x, src)
    x = pad.operand if pad is not None else src.x
    to_2d: tuple[int, ...] | None = None
    if outer is not None:  # the importer's 1-D form
        inner = x.owner
        if not isinstance(inner, ReshapeOp) or not only_use(inner.result, pad if pad is not None else src):
            return None
        n, c, h, w = value_shape(inner.result)
        _, _, oh, ow = value_shape(src.result)
        if (h, oh) != (1, 1) or value_shape(inner.operand) != (n, c, w) or value_shape(outer.result) != (n, c, ow):
            return None
        to_2d, x = (n, c, h, w), inner.operand
    model = _model_reshape(x)
    if model is not None:
        return _QdqPool(src, pad, value_shape(src.x if pad is None else pad.operand), model[0], u8_only=model[1])
    return _QdqPool(src, pad, to_2d, x)


@dataclass
class FuseQdqAvgPool(RewritePattern):
    """quantize(average pool(dequantize(x))), 8-bit of one type with one
    scale and zero point each (_pool_of: also a 1-D pool between its
    reshapes, a u8 pool after a reshape, and a pool counting its pads
    after their zeros, the bytes then padded with x's zero point, a
    constant): one mlvm.qavgpool2d,
    which computes it as onnxruntime's QLinearAveragePool does (the windows
    summed row by row, the zero point added before the rounding:
    QuantizeLinear's nearbyint(v) + zy breaks ties by another parity), a
    window over the whole map as its QLinearGlobalAveragePool (what it
    makes of a QDQ GlobalAveragePool)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: QuantizeOp, rewriter: PatternRewriter) -> None:
        found = _pool_of(q)
        if found is None:
            return
        dx = _dq(found.x, ("ui8",) if found.u8_only else ("ui8", "i8"))
        if dx is None or _elem(q.result) != _elem(dx.q):
            return
        src = q.x.owner
        assert isinstance(src, Operation)  # (the op _pool_of found)
        if not _one_value_params(dx, q) or not _unbroadcast(src, q, dx):
            return
        zx = constant_of(dx.zero_point)
        if found.pad is not None and zx is None:
            return
        b = QBuilder(rewriter, q)
        e, pool = _elem(q.result), found.pool
        x = b.reshape(dx.q, found.to_2d) if found.to_2d is not None else dx.q
        if found.pad is not None and zx is not None:  # the zeros dequantized: x's zero point
            x = b.op(PadOp, [x], value_shape(pool.x), e, pads=found.pad.properties["pads"],
                     value=FloatAttr(float(zx.reshape(())), Float32Type()))
        props = {k: pool.properties[k] for k in ("window", "strides", "padding") if k in pool.properties}
        operands = [x, b.reshape(dx.scale, ()), b.reshape(dx.zero_point, ()), b.reshape(q.scale, ()),
                    b.reshape(q.zero_point, ())]
        y = b.op(QAvgPool2dOp, operands, value_shape(pool.result), e, **props)
        rewriter.replace(q, [], [b.reshape(y, value_shape(q.result))])


def _unbroadcast(src: Operation, q: QuantizeOp, *dqs: DequantizeOp) -> bool:
    """Whether no one-value parameter broadcasts to a higher rank: the
    dequantizes' results have their bytes' shapes and q's result src's."""
    return value_shape(q.result) == value_shape(src.results[0]) and all(
        value_shape(d.result) == value_shape(d.q) for d in dqs)


def _as_quantized(b: QBuilder, y: SSAValue, dx: DequantizeOp, q: QuantizeOp) -> SSAValue:
    """y, x's bytes pooled or moved, as q's result: y itself where q's scale,
    zero point and type are provably x's (_same_qparams), its sign bits
    flipped where they are but for an i8 / u8 swap (_flipped_qparams), else
    requantized by the float form's steps (dequantized as dx, quantized as
    q; their single-value parameters as scalars)."""
    if _same_qparams(dx, q):
        return y
    if _flipped_qparams(dx, q):  # the bytes as the other type (wrapping), sign bit flipped
        e = elem(q.result)
        flip = make_constant(TensorType(xdsl_type(e.name), []), np.asarray(0x80, np.uint8).astype(e.dtype))
        b.rewriter.insert(flip, InsertPoint.before(b.at))
        return b.op(XorOp, [b.op(CastOp, [y], value_shape(y), e.name), flip.result], value_shape(y), e.name)
    scalar = [b.reshape(v, ()) for v in (dx.scale, dx.zero_point, q.scale, q.zero_point)]
    f = b.op(DequantizeOp, [y, scalar[0], scalar[1]], value_shape(y), "f32")
    return b.op(QuantizeOp, [f, scalar[2], scalar[3]], value_shape(y), _elem(q.result))


def _positive_scale(v: SSAValue) -> bool:
    """Whether v is one constant scale, finite and above 0 (dequantizing and
    quantizing by it then keep the order of values)."""
    c = constant_of(v)
    return c is not None and c.size == 1 and 0.0 < float(c.reshape(())) < float("inf")


@dataclass
class FuseQdqMaxPool(RewritePattern):
    """quantize(max pool(dequantize(x))), x and the result 8-bit, one
    positive constant scale each: the max pool of x's bytes, then (where
    the output's scale, zero point or type are not x's) those bytes
    requantized by the same f32 steps. Dequantizing and quantizing by a
    positive scale never reorder values, so the maximum commutes with both
    and the bytes are the float form's (onnxruntime drops such a pair around
    a MaxPool and pools the bytes too)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: QuantizeOp, rewriter: PatternRewriter) -> None:
        src = q.x.owner
        if not isinstance(src, Pool2dOp) or src.kind.data != "max" or not only_use(src.result, q):
            return
        dx = _dq(src.x, ("i8", "ui8"))
        if dx is None or _elem(q.result) not in ("i8", "ui8"):
            return
        if any(prod(value_shape(v)) != 1 for v in (dx.zero_point, q.zero_point)):
            return
        if not (_positive_scale(dx.scale) and _positive_scale(q.scale)):
            return
        if not _unbroadcast(src, q, dx):
            return
        b = QBuilder(rewriter, q)
        shape = value_shape(q.result)
        props = {k: src.properties[k] for k in ("kind", "window", "strides", "padding") if k in src.properties}
        y = b.op(Pool2dOp, [dx.q], shape, _elem(dx.q), **props)
        rewriter.replace(q, [], [_as_quantized(b, y, dx, q)])


@dataclass
class FuseQdqMove(RewritePattern):
    """quantize(move(dequantize(x))), a reshape, transpose or slice between a
    dequantize and a quantize, 8-bit with one scale and zero point each: the
    move of x's bytes, then (where the output's scale, zero point or type are
    not x's) those bytes requantized by the same f32 steps. A move only
    rearranges values, so the per-value steps commute with it: the float
    form's bytes with a quarter of its traffic (a quantized ShuffleNet's
    channel shuffles, a reshape and a transpose, had gone through floats;
    onnxruntime drops such pairs where the parameters are equal and moves
    the bytes too)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: QuantizeOp, rewriter: PatternRewriter) -> None:
        src = q.x.owner
        if not isinstance(src, ReshapeOp | TransposeOp | SliceOp) or not only_use(src.results[0], q):
            return
        dx = _dq(src.operands[0], ("i8", "ui8"))
        if dx is None or _elem(q.result) not in ("i8", "ui8"):
            return
        if not _one_value_params(dx, q):
            return
        if not _unbroadcast(src, q, dx):
            return
        b = QBuilder(rewriter, q)
        shape = value_shape(src.results[0])
        y = b.op(type(src), [dx.q], shape, _elem(dx.q), **dict(src.properties))
        rewriter.replace(q, [], [_as_quantized(b, y, dx, q)])


@dataclass
class FuseQdqSoftmax(RewritePattern):
    """quantize(softmax(dequantize(x))), u8 with one scale and zero point
    each, x's scale a constant: (its axis transposed to the last and back,
    as onnxruntime does) one
    mlvm.qsoftmax, which computes it as onnxruntime's QLinearSoftmax does
    (a table of exponentials made here from x's scale and the row length,
    sums in f32, floor(1 / y_scale) as the output's multiplier)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: QuantizeOp, rewriter: PatternRewriter) -> None:
        src = q.x.owner
        if not isinstance(src, SoftmaxOp):
            return
        dx = _unary_u8(q, src)
        if dx is None:
            return
        sx = constant_of(dx.scale)
        n = value_shape(q.x)[src.norm_axis()]
        if sx is None or n == 0:
            return
        table = make_constant(TensorType(xdsl_type("f32"), [256]),
                              qsoftmax_table(float(sx.reshape(())), n, _elem(q.result) == "i8"))
        rewriter.insert(table, InsertPoint.before(q))
        b = QBuilder(rewriter, q)
        shape, rank, ax = value_shape(q.result), len(value_shape(q.result)), src.norm_axis()
        x = dx.q
        perm = list(range(rank))
        perm[ax], perm[-1] = perm[-1], perm[ax]  # the axis last, as onnxruntime transposes it
        moved = tuple(shape[i] for i in perm)
        if ax != rank - 1:
            x = b.op(TransposeOp, [x], moved, _elem(x), perm=DenseArrayBase.from_list(i64, perm))
        operands = [x, table.result, b.reshape(q.scale, ()), b.reshape(q.zero_point, ())]
        y = b.op(QSoftmaxOp, operands, moved, _elem(q.result))
        if ax != rank - 1:
            y = b.op(TransposeOp, [y], shape, _elem(y), perm=DenseArrayBase.from_list(i64, perm))
        rewriter.replace(q, [], [y])


def _zero_point_shift(d: DequantizeOp, q: QuantizeOp) -> int | None:
    """zq - zd where quantize(dequantize(x), ...) gives x - zd + zq back for
    every byte: equal constant scales, normal and below FLT_MAX / 512 (x - zd
    times s, then over s, is within an ulp or two of x - zd, which rounds
    back to it; a zero, subnormal or infinite scale, or one whose products
    overflow, would not), constant zero points; None otherwise."""
    sd, sq, zd, zq = (constant_of(v) for v in (d.scale, q.scale, d.zero_point, q.zero_point))
    if sd is None or sq is None or zd is None or zq is None:
        return None
    s = float(sd.reshape(()))
    f32 = np.finfo(np.float32)
    if float(sq.reshape(())) != s or not float(f32.tiny) <= abs(s) < float(f32.max) / 512:
        return None
    return int(zq.reshape(())) - int(zd.reshape(()))


def _same_qparams(d: DequantizeOp, q: QuantizeOp) -> bool:
    """Whether quantize(dequantize(x), ...) gives x back for every byte: one
    type, equal constant zero points, one normal scale (_zero_point_shift)."""
    return _elem(d.q) == _elem(q.result) and _zero_point_shift(d, q) == 0


def _flipped_qparams(d: DequantizeOp, q: QuantizeOp) -> bool:
    """Whether quantize(dequantize(x), ...) is x's bytes with the sign bit
    flipped: i8 to u8 with the zero point 128 up, or u8 to i8 with it 128
    down, one normal scale (x - zd + zq = x ^ 0x80 as the other type; what
    mlvm-fuse-qdq's S8PairToU8 leaves between i8 and u8 pairs)."""
    pair = (_elem(d.q), _elem(q.result))
    want = {("i8", "ui8"): 128, ("ui8", "i8"): -128}.get(pair)
    return want is not None and _zero_point_shift(d, q) == want


@dataclass
class FuseQdqConcat(RewritePattern):
    """quantize(concat(dequantize(a), dequantize(b), ...)), 8-bit with one
    scale and zero point each: the concatenation of the bytes, each operand
    requantized to the output's scale and zero point first by the same f32
    steps (quantize(dequantize(a))), or taken as it is where those are its
    own; the same bytes as the float form, with a quarter of its traffic (a
    DenseNet concatenates its growing maps at every layer)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, q: QuantizeOp, rewriter: PatternRewriter) -> None:
        src = q.x.owner
        if not isinstance(src, ConcatOp) or not only_use(src.result, q) or _elem(q.result) not in ("i8", "ui8"):
            return
        if prod(value_shape(q.scale)) != 1 or prod(value_shape(q.zero_point)) != 1:
            return
        dqs = [_dq(v, ("i8", "ui8")) for v in src.inputs]
        if any(d is None or prod(value_shape(d.scale)) != 1 or prod(value_shape(d.zero_point)) != 1 for d in dqs):
            return
        if not _unbroadcast(src, q, *(d for d in dqs if d is not None)):
            return
        b = QBuilder(rewriter, q)
        parts: list[SSAValue] = []
        for d in dqs:
            assert d is not None
            if _same_qparams(d, q):
                parts.append(d.q)
                continue
            f = b.op(DequantizeOp, [d.q, d.scale, d.zero_point], value_shape(d.q), "f32")
            parts.append(b.op(QuantizeOp, [f, q.scale, q.zero_point], value_shape(d.q), _elem(q.result)))
        rewriter.replace(q, [], [b.op(ConcatOp, parts, value_shape(q.result), _elem(q.result),
                                      axis=src.properties["axis"])])


def _per_column(s: tuple[int, ...], columns: int) -> bool | None:
    """True for one value per column ([N] or [1, N]), False for one value."""
    if prod(s) == 1:
        return False
    if s and s[-1] == columns and prod(s[:-1]) == 1:
        return True
    return None


@dataclass(frozen=True)
class FuseQdqPass(ModulePass):
    name = "mlvm-fuse-qdq"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from xdsl.pattern_rewriter import GreedyRewritePatternApplier

        PatternRewriteWalker(S8PairToU8(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([FuseQdqConv(), FuseQdqLinear(), FuseQdqMatmul(), FuseQdqAdd(),
                                         FuseQdqMul(), FuseQdqAvgPool(), FuseQdqMaxPool(), FuseQdqMove(),
                                         FuseQdqSoftmax(), FuseQdqConcat()]),
            apply_recursively=False,
        ).rewrite_module(op)
        # The float ops the rewrite left without users.
        changed = True
        while changed:
            changed = False
            for o in reversed(list(op.walk())):
                if isinstance(o, DequantizeOp | Conv2dOp | MatmulOp | AddOp | MulOp | ReluOp | ReshapeOp | ParamOp
                              | Pool2dOp | SoftmaxOp | ConcatOp | TransposeOp | SliceOp) and all(
                    not r.uses for r in o.results
                ):
                    o.detach()
                    o.erase()
                    changed = True
