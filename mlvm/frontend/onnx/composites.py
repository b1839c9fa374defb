"""ONNX ops that are short compositions of dialect ops: activations
(Elu, Selu, Celu, Softplus, Softsign, Swish, HardSwish, ThresholdedRelu,
Shrink), elementwise functions (Round, Sign, IsInf, Tan, Sinh, Cosh),
normalisations (InstanceNormalization, LpNormalization), Hardmax, LpPool,
and data movement (Tile, EyeLike, SpaceToDepth, DepthToSpace, Compress). Each follows
the operator's definition; the elementwise chains fuse into one loop."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from mlvm.dialect.elements import ELEMS, FLOATS
from mlvm.dialect.logic import GtOp, LtOp, NeOp, OrOp
from mlvm.dialect.nn import TransposeOp
from mlvm.dialect.ops import (
    AbsOp,
    AddOp,
    ArgmaxOp,
    BroadcastToOp,
    CosOp,
    DivOp,
    EqOp,
    ExpOp,
    LogOp,
    MaxOp,
    MinOp,
    MulOp,
    PowOp,
    SigmoidOp,
    SinOp,
    SqrtOp,
    SubOp,
)
from mlvm.dialect.index import GatherOp
from mlvm.frontend.onnx.importer import (
    Const,
    Importer,
    NodeError,
    RunTimeInput,
    Tensor,
    Unsupported,
    Value,
)
from mlvm.frontend.onnx.pooling import pool_by_taps
from mlvm.frontend.onnx.ops import (
    _axis,
    _conv_geometry,
    _emit_conv,
    _ints_input,
    _moments,
    _one,
    _spatial_attrs,
    binary,
    cast,
    compare,
    converter,
    in_f32,
    kept_dims,
    reduce,
    reshape,
    scalar,
    select,
    unary,
)



def _float(imp: Importer, ins: list[Value | None], op: str) -> Value:
    x = _one(ins)
    if imp.elem(x) not in FLOATS:
        raise Unsupported(f"{op} of {imp.elem(x)}")
    return x


def _attr(attrs: dict[str, Any], key: str, default: float) -> float:
    return float(attrs.get(key, default))


@converter("Elu", "Selu", "Celu", "Softplus", "Softsign", "Swish", "HardSwish",
           "ThresholdedRelu", "Shrink")
@in_f32
def _activation(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
                attrs: dict[str, Any]) -> list[Value]:
    x = _float(imp, ins, node.op_type)
    op = node.op_type

    def c(v: float) -> Const:
        return scalar(imp, v, x)

    def mul(a: Value, b: Value) -> Value:
        return binary(imp, MulOp, a, b)

    if op == "Elu":  # alpha (e^x - 1) below 0
        a = _attr(attrs, "alpha", 1.0)
        neg = compare(imp, LtOp, x, c(0.0))
        return [select(imp, neg, mul(c(a), binary(imp, SubOp, unary(imp, ExpOp, x), c(1.0))), x)]
    if op == "Selu":  # gamma (alpha e^x - alpha) at or below 0, gamma x above
        a, g = _attr(attrs, "alpha", 1.67326319217681884765625), _attr(attrs, "gamma", 1.05070102214813232421875)
        low = binary(imp, SubOp, mul(c(a), unary(imp, ExpOp, x)), c(a))
        return [mul(c(g), select(imp, compare(imp, GtOp, x, c(0.0)), x, low))]
    if op == "Celu":  # max(0, x) + min(0, alpha (e^(x / alpha) - 1))
        a = _attr(attrs, "alpha", 1.0)
        e = mul(c(a), binary(imp, SubOp, unary(imp, ExpOp, binary(imp, DivOp, x, c(a))), c(1.0)))
        return [binary(imp, AddOp, binary(imp, MaxOp, x, c(0.0)), binary(imp, MinOp, e, c(0.0)))]
    if op == "Softplus":  # log(1 + e^x) as max(x, 0) + log(1 + e^-|x|): no overflow
        t = unary(imp, LogOp, binary(imp, AddOp, c(1.0),
                                     unary(imp, ExpOp, binary(imp, SubOp, c(0.0),
                                                              unary(imp, AbsOp, x)))))
        return [binary(imp, AddOp, binary(imp, MaxOp, x, c(0.0)), t)]
    if op == "Softsign":
        return [binary(imp, DivOp, x, binary(imp, AddOp, c(1.0), unary(imp, AbsOp, x)))]
    if op == "Swish":
        return [mul(x, unary(imp, SigmoidOp, mul(c(_attr(attrs, "alpha", 1.0)), x)))]
    if op == "HardSwish":  # x max(0, min(1, x / 6 + 1 / 2))
        h = binary(imp, AddOp, mul(x, c(1.0 / 6.0)), c(0.5))
        return [mul(x, binary(imp, MaxOp, binary(imp, MinOp, h, c(1.0)), c(0.0)))]
    if op == "ThresholdedRelu":
        return [select(imp, compare(imp, GtOp, x, c(_attr(attrs, "alpha", 1.0))), x, c(0.0))]
    # Shrink: x + bias below -lambd, x - bias above lambd, 0 between
    b, lam = _attr(attrs, "bias", 0.0), _attr(attrs, "lambd", 0.5)
    hi = select(imp, compare(imp, GtOp, x, c(lam)), binary(imp, SubOp, x, c(b)), c(0.0))
    return [select(imp, compare(imp, LtOp, x, c(-lam)), binary(imp, AddOp, x, c(b)), hi)]


@converter("Round", "Sign", "IsInf", "Tan", "Sinh", "Cosh")
@in_f32
def _elementwise(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
                 attrs: dict[str, Any]) -> list[Value]:
    op = node.op_type
    x = _one(ins)
    if op == "Sign" and imp.elem(x) not in FLOATS:
        one, zero = scalar(imp, 1, x), scalar(imp, 0, x)
        pos = select(imp, compare(imp, GtOp, x, zero), one, zero)
        if imp.elem(x).startswith("ui"):
            return [pos]
        return [select(imp, compare(imp, LtOp, x, zero), scalar(imp, -1, x), pos)]
    x = _float(imp, ins, op)

    def c(v: float) -> Const:
        return scalar(imp, v, x)

    if op == "Round":
        # half to even: adding and taking away 1.5 * 2^23 rounds an f32
        # below 2^22 in magnitude to an integer (IEEE addition); larger
        # values, inf and NaN are integers or kept as they are
        if imp.elem(x) != "f32":
            raise Unsupported(f"Round of {imp.elem(x)}")
        big = c(float(np.float32(1.5 * 2**23)))
        r = binary(imp, SubOp, binary(imp, AddOp, x, big), big)
        small = compare(imp, LtOp, unary(imp, AbsOp, x), c(2.0**22))
        return [select(imp, small, r, x)]
    if op == "Sign":  # NaN stays NaN
        s = select(imp, compare(imp, GtOp, x, c(0.0)), c(1.0),
                   select(imp, compare(imp, LtOp, x, c(0.0)), c(-1.0), c(0.0)))
        return [select(imp, compare(imp, NeOp, x, x), x, s)]
    if op == "IsInf":
        parts: list[Value] = []
        if int(attrs.get("detect_positive", 1)):
            parts.append(compare(imp, EqOp, x, c(np.inf)))
        if int(attrs.get("detect_negative", 1)):
            parts.append(compare(imp, EqOp, x, c(-np.inf)))
        if not parts:
            return [Const(np.zeros(imp.shape(x), bool))]
        hit = parts[0]
        for q in parts[1:]:
            hit = binary(imp, OrOp, hit, q)
        return [hit]
    if op == "Tan":
        return [binary(imp, DivOp, unary(imp, SinOp, x), unary(imp, CosOp, x))]
    ex = unary(imp, ExpOp, x)
    em = unary(imp, ExpOp, binary(imp, SubOp, c(0.0), x))
    sub_or_add = SubOp if op == "Sinh" else AddOp
    return [binary(imp, MulOp, binary(imp, sub_or_add, ex, em), c(0.5))]


@converter("InstanceNormalization")
def _instance_norm(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
                   attrs: dict[str, Any]) -> list[Value]:
    x = _float(imp, ins, node.op_type)
    s = imp.shape(x)
    if len(ins) < 3 or ins[1] is None or ins[2] is None or len(s) < 3:
        raise NodeError("needs input (rank >= 3), scale and B")
    axes = list(range(2, len(s)))
    mean, inv = _moments(imp, x, axes, _attr(attrs, "epsilon", 1e-5))
    per_c = (s[1],) + (1,) * (len(s) - 2)
    y = binary(imp, MulOp, binary(imp, SubOp, x, mean), inv)
    y = binary(imp, MulOp, y, reshape(imp, ins[1], per_c))
    return [binary(imp, AddOp, y, reshape(imp, ins[2], per_c))]


@converter("LpNormalization")
@in_f32
def _lp_norm(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
             attrs: dict[str, Any]) -> list[Value]:
    x = _float(imp, ins, node.op_type)
    s = imp.shape(x)
    ax = _axis(int(attrs.get("axis", -1)), len(s))
    p = int(attrs.get("p", 2))
    kept = kept_dims(s, [ax])
    if p == 1:
        norm = reduce(imp, unary(imp, AbsOp, x), "sum", [ax], kept, True)
    elif p == 2:
        norm = unary(imp, SqrtOp, reduce(imp, binary(imp, MulOp, x, x), "sum", [ax], kept, True))
    else:
        raise NodeError(f"p {p} is not 1 or 2")
    zero = compare(imp, EqOp, norm, scalar(imp, 0.0, x))  # a zero vector stays zero
    return [select(imp, zero, scalar(imp, 0.0, x), binary(imp, DivOp, x, norm))]


@converter("Hardmax")
def _hardmax(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
             attrs: dict[str, Any]) -> list[Value]:
    x = _float(imp, ins, node.op_type)
    s = imp.shape(x)
    ax = _axis(int(attrs.get("axis", -1 if imp.opset >= 13 else 1)), len(s))
    if imp.opset < 13:  # coerced to 2-D at axis
        flat = (int(np.prod(s[:ax])), int(np.prod(s[ax:])))
        return [reshape(imp, _hardmax_axis(imp, reshape(imp, x, flat), 1), s)]
    return [_hardmax_axis(imp, x, ax)]


def _hardmax_axis(imp: Importer, x: Value, ax: int) -> Value:
    """1 at the first maximum along ax, 0 elsewhere."""
    s = imp.shape(x)
    first = Tensor(imp.emit(ArgmaxOp, [imp.t(x)], kept_dims(s, [ax]), "i64", axis=ax))
    where = [1] * len(s)
    where[ax] = s[ax]
    iota = Const(np.arange(s[ax], dtype=np.int64).reshape(where))
    return cast(imp, compare(imp, EqOp, iota, first), imp.elem(x))


@converter("Tile")
def _tile(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
          attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    reps = _ints_input(ins[1] if len(ins) > 1 else None, "Tile repeats")
    if reps is None or len(reps) != len(s) or min(reps, default=1) < 0:
        raise NodeError(f"repeats {reps} need one count >= 0 per dim of {list(s)}")
    if all(r == 1 for r in reps):
        return [x]
    # [d0, d1] -> [1, d0, 1, d1] broadcast to [r0, d0, r1, d1] -> [r0 d0, r1 d1]
    spread = reshape(imp, x, [v for d in s for v in (1, d)])
    wide = [v for r, d in zip(reps, s, strict=True) for v in (r, d)]
    b = Tensor(imp.emit(BroadcastToOp, [imp.t(spread)], wide, imp.elem(x)))
    return [reshape(imp, b, [r * d for r, d in zip(reps, s, strict=True)])]


@converter("EyeLike")
def _eye_like(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
              attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    if len(s) != 2:
        raise NodeError(f"needs a 2-D input, not {list(s)}")
    dtype_attr = attrs.get("dtype")
    dtype = (onnx.helper.tensor_dtype_to_np_dtype(int(dtype_attr)) if dtype_attr is not None
             else np.dtype(ELEMS[imp.elem(x)].dtype))
    return [Const(np.eye(s[0], s[1], int(attrs.get("k", 0)), dtype=dtype))]


@converter("SpaceToDepth", "DepthToSpace")
def _space_depth(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
                 attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    b = int(attrs.get("blocksize", 0))
    if len(s) != 4 or b < 1:
        raise NodeError(f"needs a 4-D input and a blocksize >= 1, not {list(s)} and {b}")
    n, c, h, w = s
    if node.op_type == "SpaceToDepth":
        if h % b or w % b:
            raise NodeError(f"{h} x {w} is not a multiple of the blocksize {b}")
        six, out = (n, c, h // b, b, w // b, b), (n, c * b * b, h // b, w // b)
        # output channels ordered (block row, block column, channel), or
        # (channel, block row, block column) in CRD mode
        perm = (0, 1, 3, 5, 2, 4) if str(attrs.get("mode", "DCR")) == "CRD" else (0, 3, 5, 1, 2, 4)
    else:
        if c % (b * b):
            raise NodeError(f"{c} channels are not a multiple of blocksize^2 {b * b}")
        if str(attrs.get("mode", "DCR")) == "CRD":
            six, perm = (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3)
        else:
            six, perm = (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2)
        out = (n, c // (b * b), h * b, w * b)
    t = reshape(imp, x, six)
    shape = [six[p] for p in perm]
    t = Tensor(imp.emit(TransposeOp, [imp.t(t)], shape, imp.elem(x), perm=list(perm)))
    return [reshape(imp, t, out)]


@converter("LpPool")
@in_f32
def _lp_pool(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
             attrs: dict[str, Any]) -> list[Value]:
    """(sum over the window of |x|^p)^(1/p): the sums a depthwise conv2d
    with a kernel of ones (padding adds zeros, as the operator's does)."""
    x = _float(imp, ins, node.op_type)
    s = imp.shape(x)
    p = _attr(attrs, "p", 2.0)
    kernel = [int(k) for k in attrs.get("kernel_shape", [])]
    if len(s) < 3 or len(kernel) != len(s) - 2 or min(kernel, default=1) < 1 or p <= 0:
        raise NodeError(f"kernel_shape {kernel} / p {p} do not fit {list(s)}")
    powered = (binary(imp, MulOp, x, x) if p == 2.0 else
               binary(imp, PowOp, unary(imp, AbsOp, x), scalar(imp, p, x)))
    ceil = bool(int(attrs.get("ceil_mode", 0)))
    if len(s) > 4 or ceil:  # (3-D: the sums by slices, as a 3-D average pool's)
        strides, dilations, pads = _spatial_attrs(attrs, s[2:], kernel)
        sums = pool_by_taps(imp, powered, "sum", kernel, strides, dilations, pads, ceil, False)
    else:
        c = s[1]
        w = Const(np.ones((c, 1, *kernel), ELEMS[imp.elem(x)].dtype))
        a = dict(attrs, group=c)
        a.pop("p", None)
        a.pop("ceil_mode", None)
        x4, w4, squeeze, props, shape = _conv_geometry(imp, powered, w, a)
        sums = _emit_conv(imp, x4, w4, None, props, shape, squeeze)
    if p == 2.0:
        return [unary(imp, SqrtOp, sums)]
    return [binary(imp, PowOp, sums, scalar(imp, 1.0 / p, x))]


@converter("Compress")
def _compress(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
              attrs: dict[str, Any]) -> list[Value]:
    """The elements (or slices along axis) whose condition is true: a gather
    of their indices, the condition known at import."""
    x = _one(ins)
    cond = ins[1] if len(ins) > 1 else None
    if not isinstance(cond, Const):
        raise RunTimeInput("the Compress condition", cond)
    keep = np.flatnonzero(cond.array.reshape(-1).astype(bool)).astype(np.int64)
    s = imp.shape(x)
    if "axis" not in attrs:
        x, s, ax = reshape(imp, x, (int(np.prod(s)),)), (int(np.prod(s)),), 0
    else:
        ax = _axis(int(attrs["axis"]), len(s))
    if keep.size and keep[-1] >= s[ax]:
        raise NodeError(f"the condition selects index {keep[-1]} of a dim of {s[ax]}")
    out = tuple(s[:ax]) + (keep.size,) + tuple(s[ax + 1:])
    return [Tensor(imp.emit(GatherOp, [imp.t(x), imp.t(Const(keep))], out, imp.elem(x), axis=ax))]
