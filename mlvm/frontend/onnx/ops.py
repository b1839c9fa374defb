"""ONNX ops onto mlvm ops: one converter per ONNX op, found in `CONVERTERS`.

A converter takes the importer, the node, its inputs (`Const`, `Tensor`, or
None for an omitted optional input) and its attributes, and returns one
value per node output. It raises `Unsupported` (with a reason) for what the
dialect cannot express yet, and `NodeError` for a node that is wrong.
Nodes whose inputs are all known never get here: the importer folds them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
from xdsl.ir import SSAValue

from mlvm.dialect.base import MlvmOp
from mlvm.dialect.nn import (
    ConcatOp,
    Conv2dOp,
    GeluOp,
    LayerNormOp,
    LogSoftmaxOp,
    SliceOp,
    SoftmaxOp,
    TransposeOp,
)
from mlvm.dialect.ops import (
    AbsOp,
    ArgmaxOp,
    ArgminOp,
    AddOp,
    BroadcastToOp,
    CastOp,
    CeilOp,
    CosOp,
    DivOp,
    EqOp,
    ErfOp,
    ExpOp,
    FillOp,
    FloorOp,
    LogOp,
    MatmulOp,
    MaxOp,
    MinOp,
    MulOp,
    NegOp,
    PowOp,
    ReduceOp,
    ReluOp,
    ReshapeOp,
    RsqrtOp,
    SigmoidOp,
    SinOp,
    SqrtOp,
    SubOp,
    TanhOp,
)
from mlvm.dialect.elements import ELEMS, FLOATS
from mlvm.dialect.index import (
    CumsumOp,
    GatherElementsOp,
    GatherOp,
    OneHotOp,
    PadOp,
    ScatterElementsOp,
    TopkOp,
)
from mlvm.dialect.quant import DequantizeOp, QConv2dOp, QMatmulOp, QuantizeOp, RequantizeOp
from mlvm.dialect.logic import (
    AndOp,
    GeOp,
    GtOp,
    LeOp,
    LtOp,
    ModOp,
    NeOp,
    NotOp,
    OrOp,
    SelectOp,
    ShlOp,
    ShrOp,
    XorOp,
)
from mlvm.dialect.shapes import broadcast_shapes
from mlvm.frontend.onnx.importer import (
    ELEM_OF_ONNX,
    MAX_FOLD_ELEMENTS,
    Const,
    Importer,
    QPARAM_INLINE,
    NodeError,
    RunTimeInput,
    Tensor,
    Unsupported,
    Value,
)
from mlvm.frontend.onnx.model import onnx_type_name

Converter = Callable[[Importer, onnx.NodeProto, list[Value | None], dict[str, Any]], list[Value]]
CONVERTERS: dict[str, Converter] = {}


def converter(*names: str) -> Callable[[Converter], Converter]:
    def register(fn: Converter) -> Converter:
        for n in names:
            CONVERTERS[n] = fn
        return fn

    return register


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise NodeError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def _ints_input(v: Value | None, what: str) -> list[int] | None:
    """An input that must be known at import (shapes, axes, pads)."""
    if v is None:
        return None
    if not isinstance(v, Const):
        raise RunTimeInput(what, v)
    return [int(x) for x in v.array.reshape(-1)]


def _scalar_input(v: Value | None, what: str) -> float | None:
    if v is None:
        return None
    if not isinstance(v, Const):
        raise RunTimeInput(what, v)
    if v.array.size != 1:
        raise NodeError(f"{what} must be a scalar")
    return float(v.array.reshape(-1)[0])


def _only_first_output(node: onnx.NodeProto, what: str) -> None:
    if any(o for o in node.output[1:]):
        raise Unsupported(f"the {what} output")


def reshape(imp: Importer, v: Value, shape: Sequence[int]) -> Value:
    shape = tuple(int(d) for d in shape)
    if isinstance(v, Const):
        return Const(v.array.reshape(shape))
    if imp.shape(v) == shape:
        return v
    return Tensor(imp.emit(ReshapeOp, [imp.t(v)], shape, imp.elem(v)))


def binary(imp: Importer, cls: type[MlvmOp], a: Value, b: Value) -> Tensor:
    out = broadcast_shapes(imp.shape(a), imp.shape(b))
    if out is None:
        raise NodeError(f"shapes {list(imp.shape(a))} and {list(imp.shape(b))} do not broadcast")
    elem = imp.elem(a) if isinstance(a, Tensor) else imp.elem(b)
    return Tensor(imp.emit(cls, [imp.t(a), imp.t(b)], out, elem))


def scalar(imp: Importer, x: float, like: Value) -> Const:
    return Const(np.asarray(x, dtype=ELEMS[imp.elem(like)].dtype))


def kept_dims(shape: Sequence[int], axes: Sequence[int]) -> list[int]:
    """shape with the axes reduced to unit dims (a reduction's keepdims)."""
    return [1 if k in axes else d for k, d in enumerate(shape)]


def in_f32(fn: Converter) -> Converter:
    """A converter whose f16 / bf16 inputs (of x's type) are computed in f32
    and rounded once at the end, as the operators' definitions compute
    them (rounding every step of a composition would differ by an ulp)."""
    def convert(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
                attrs: dict[str, Any]) -> list[Value]:
        x = ins[0] if ins else None
        elem = imp.elem(x) if x is not None else "f32"
        if elem not in ("f16", "bf16"):
            return fn(imp, node, ins, attrs)
        wide = [v if v is None or imp.elem(v) != elem
                else Const(v.array.astype(np.float32)) if isinstance(v, Const)
                else cast(imp, v, "f32") for v in ins]
        return [cast(imp, y, elem) if imp.elem(y) == "f32" else y
                for y in fn(imp, node, wide, attrs)]
    return convert


def unary(imp: Importer, cls: type[MlvmOp], x: Value, **props: object) -> Tensor:
    return Tensor(imp.emit(cls, [imp.t(x)], imp.shape(x), imp.elem(x), **props))


# -- elementwise -----------------------------------------------------------------
BINARY: dict[str, type[MlvmOp]] = {
    "Add": AddOp, "Sub": SubOp, "Mul": MulOp, "Div": DivOp,
    "Max": MaxOp, "Min": MinOp, "Sum": AddOp,
}
UNARY: dict[str, type[MlvmOp]] = {
    "Neg": NegOp, "Exp": ExpOp, "Log": LogOp, "Sqrt": SqrtOp, "Tanh": TanhOp,
    "Sigmoid": SigmoidOp, "Relu": ReluOp, "Erf": ErfOp, "Abs": AbsOp, "Floor": FloorOp,
    "Ceil": CeilOp, "Sin": SinOp, "Cos": CosOp,
}


@converter(*BINARY)
def _binary(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    vals = [v for v in ins if v is not None]
    if not vals:
        raise NodeError("needs at least one input")
    out = vals[0]
    for v in vals[1:]:
        out = binary(imp, BINARY[node.op_type], out, v)
    if not isinstance(out, Tensor):
        out = Tensor(imp.t(out))
    return [out]


@converter("Mean")
def _mean(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    vals = [v for v in ins if v is not None]
    if not vals:
        raise NodeError("needs at least one input")
    total = vals[0]
    for v in vals[1:]:
        total = binary(imp, AddOp, total, v)
    if len(vals) == 1:
        return [total]
    return [binary(imp, DivOp, total, scalar(imp, len(vals), total))]


@converter(*UNARY)
def _unary(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    return [unary(imp, UNARY[node.op_type], _one(ins))]


def _one(ins: list[Value | None]) -> Value:
    if not ins or ins[0] is None:
        raise NodeError("input 0 is missing")
    return ins[0]


@converter("Identity", "Dropout")
def _identity(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    if node.op_type == "Dropout":
        if len(ins) > 2 and ins[2] is not None:
            mode = _scalar_input(ins[2], "training_mode")
            if mode:
                raise Unsupported("training_mode")
        if len(node.output) > 1 and node.output[1]:  # inference keeps every element
            return [_one(ins), Const(np.ones(imp.shape(_one(ins)), bool))]
    return [_one(ins)]


@converter("Reciprocal")
def _reciprocal(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    return [binary(imp, DivOp, scalar(imp, 1.0, x), x)]


@converter("Pow")
def _pow(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x, y = ins[0], ins[1]
    if x is None or y is None:
        raise NodeError("needs two inputs")
    elem = imp.elem(x)
    if elem not in FLOATS:
        raise Unsupported("integer Pow")
    same_shape = broadcast_shapes(imp.shape(x), imp.shape(y)) == imp.shape(x)
    if isinstance(y, Const) and y.array.size == 1 and same_shape:
        # exact forms of the common exponents
        e = float(y.array.reshape(-1)[0])
        if e == 1.0:
            return [x]
        if e == 2.0:
            return [binary(imp, MulOp, x, x)]
        if e == 0.5:
            return [unary(imp, SqrtOp, x)]
        if e == -1.0:
            return [binary(imp, DivOp, scalar(imp, 1.0, x), x)]
    if isinstance(y, Const):
        y = Const(y.array.astype(ELEMS[elem].dtype))
    elif imp.elem(y) != elem:  # an integer or other float exponent: in the base's type
        y = cast(imp, y, elem)
    return [binary(imp, PowOp, x, y)]


@converter("LeakyRelu")
def _leaky(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    alpha = float(attrs.get("alpha", 0.01))
    if not 0.0 <= alpha <= 1.0:
        raise Unsupported(f"alpha {alpha} outside [0, 1]")
    return [binary(imp, MaxOp, x, binary(imp, MulOp, x, scalar(imp, alpha, x)))]


@converter("PRelu")
def _prelu(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x, slope = _two(ins)
    s, k = imp.shape(x), imp.shape(slope)
    if broadcast_shapes(s, k) != s and len(k) == 1 and len(s) > 2 and k[0] == s[1]:
        slope = reshape(imp, slope, (k[0],) + (1,) * (len(s) - 2))  # per channel (PyTorch's)
    if broadcast_shapes(s, imp.shape(slope)) != s:
        raise NodeError(f"slope {list(k)} does not broadcast to x {list(s)}")
    return [select(imp, compare(imp, LtOp, x, scalar(imp, 0, x)), binary(imp, MulOp, x, slope), x)]


@converter("Clip")
def _clip(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    if imp.opset < 11:
        lo: float | None = float(attrs.get("min", -math.inf))
        hi: float | None = float(attrs.get("max", math.inf))
    else:
        lo = _scalar_input(ins[1] if len(ins) > 1 else None, "Clip min")
        hi = _scalar_input(ins[2] if len(ins) > 2 else None, "Clip max")
    out: Value = x
    if lo is not None and lo != -math.inf:
        out = binary(imp, MaxOp, out, scalar(imp, lo, x))
    if hi is not None and hi != math.inf:
        out = binary(imp, MinOp, out, scalar(imp, hi, x))
    return [out if isinstance(out, Tensor) else Tensor(imp.t(out))]


@converter("HardSigmoid")
def _hard_sigmoid(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    a, b = float(attrs.get("alpha", 0.2)), float(attrs.get("beta", 0.5))
    y = binary(imp, AddOp, binary(imp, MulOp, x, scalar(imp, a, x)), scalar(imp, b, x))
    return [binary(imp, MaxOp, binary(imp, MinOp, y, scalar(imp, 1.0, x)), scalar(imp, 0.0, x))]


@converter("Gelu")
def _gelu(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    approx = attrs.get("approximate", "none")
    if approx not in ("none", "tanh"):
        raise NodeError(f"approximate '{approx}' is not 'none' or 'tanh'")
    return [unary(imp, GeluOp, _one(ins), approximate=approx)]


def cast(imp: Importer, x: Value, to: str) -> Value:
    if imp.elem(x) == to:
        return x
    return Tensor(imp.emit(CastOp, [imp.t(x)], imp.shape(x), to))


@converter("Cast")
def _cast(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    code = int(attrs.get("to", 0))
    to = ELEM_OF_ONNX.get(code)
    if to is None:
        raise Unsupported(f"to {onnx_type_name(code)}")
    return [cast(imp, _one(ins), to)]


@converter("CastLike")
def _cast_like(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    if len(ins) < 2 or ins[1] is None:
        raise NodeError("needs two inputs")
    return [cast(imp, _one(ins), imp.elem(ins[1]))]


# -- comparisons, logic, bits -----------------------------------------------------
COMPARE: dict[str, type[MlvmOp]] = {
    "Equal": EqOp, "Less": LtOp, "LessOrEqual": LeOp, "Greater": GtOp, "GreaterOrEqual": GeOp,
}
LOGIC: dict[str, type[MlvmOp]] = {
    "And": AndOp, "Or": OrOp, "Xor": XorOp,
    "BitwiseAnd": AndOp, "BitwiseOr": OrOp, "BitwiseXor": XorOp,
}


def _two(ins: list[Value | None]) -> tuple[Value, Value]:
    if len(ins) < 2 or ins[0] is None or ins[1] is None:
        raise NodeError("needs two inputs")
    return ins[0], ins[1]


def compare(imp: Importer, cls: type[MlvmOp], a: Value, b: Value) -> Tensor:
    out = broadcast_shapes(imp.shape(a), imp.shape(b))
    if out is None:
        raise NodeError(f"shapes {list(imp.shape(a))} and {list(imp.shape(b))} do not broadcast")
    return Tensor(imp.emit(cls, [imp.t(a), imp.t(b)], out, "i1"))


def select(imp: Importer, c: Value, a: Value, b: Value) -> Tensor:
    """a where c, else b (broadcast together)."""
    out = broadcast_shapes(imp.shape(c), imp.shape(a))
    out = None if out is None else broadcast_shapes(out, imp.shape(b))
    if out is None:
        raise NodeError("condition and values do not broadcast")
    elem = imp.elem(a) if isinstance(a, Tensor) else imp.elem(b)
    return Tensor(imp.emit(SelectOp, [imp.t(c), imp.t(a), imp.t(b)], out, elem))


@converter(*COMPARE)
def _compare(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    return [compare(imp, COMPARE[node.op_type], *_two(ins))]


@converter(*LOGIC)
def _logic(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    return [binary(imp, LOGIC[node.op_type], *_two(ins))]


@converter("Not", "BitwiseNot")
def _not(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    return [unary(imp, NotOp, _one(ins))]


@converter("BitShift")
def _bit_shift(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    direction = attrs.get("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise NodeError(f"direction '{direction}' is not LEFT or RIGHT")
    return [binary(imp, ShlOp if direction == "LEFT" else ShrOp, *_two(ins))]


@converter("Mod")
def _mod(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    a, b = _two(ins)
    fmod = bool(attrs.get("fmod", 0))
    out = broadcast_shapes(imp.shape(a), imp.shape(b))
    if out is None:
        raise NodeError(f"shapes {list(imp.shape(a))} and {list(imp.shape(b))} do not broadcast")
    return [Tensor(imp.emit(ModOp, [imp.t(a), imp.t(b)], out, imp.elem(a), fmod=fmod))]


@converter("Where")
def _where(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    if len(ins) < 3 or any(v is None for v in ins[:3]):
        raise NodeError("needs three inputs")
    c, a, b = ins[0], ins[1], ins[2]
    assert c is not None and a is not None and b is not None
    return [select(imp, c, a, b)]


@converter("IsNaN")
def _is_nan(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    return [compare(imp, NeOp, x, x)]


# -- shapes ------------------------------------------------------------------------
@converter("Shape")
def _shape(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    shape = imp.shape(_one(ins))
    start, end = int(attrs.get("start", 0)), attrs.get("end")
    return [Const(np.asarray(shape[start:end if end is None else int(end)], dtype=np.int64))]


@converter("Size")
def _size(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    return [Const(np.asarray(math.prod(imp.shape(_one(ins))), dtype=np.int64))]


@converter("Reshape")
def _reshape(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    shape = _ints_input(ins[1] if len(ins) > 1 else None, "the target shape")
    if shape is None:
        shape = list(attrs.get("shape", []))
    src = imp.shape(x)
    allowzero = int(attrs.get("allowzero", 0))
    out = [src[k] if d == 0 and not allowzero and k < len(src) else d for k, d in enumerate(shape)]
    if out.count(-1) > 1 or any(d < -1 for d in out):
        raise NodeError(f"shape {shape} has more than one -1 or a negative dim")
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        total = math.prod(src)
        if known == 0 or total % known:
            raise NodeError(f"cannot reshape {list(src)} to {shape}")
        out[out.index(-1)] = total // known
    if math.prod(out) != math.prod(src):
        raise NodeError(f"cannot reshape {list(src)} to {shape}")
    return [reshape(imp, x, out)]


@converter("Flatten")
def _flatten(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    axis = int(attrs.get("axis", 1))
    axis = axis + len(s) if axis < 0 else axis
    if not 0 <= axis <= len(s):
        raise NodeError(f"axis {attrs.get('axis')} is out of range for rank {len(s)}")
    return [reshape(imp, x, (math.prod(s[:axis]), math.prod(s[axis:])))]


def _axes(imp: Importer, ins: list[Value | None], attrs: dict[str, Any], since: int) -> list[int] | None:
    """Axes from the attribute (before opset `since`) or the second input."""
    if imp.opset < since:
        a = attrs.get("axes")
        return None if a is None else [int(x) for x in a]
    return _ints_input(ins[1] if len(ins) > 1 else None, "axes")


@converter("Squeeze")
def _squeeze(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    axes = _axes(imp, ins, attrs, 13)
    drop = {k for k, d in enumerate(s) if d == 1} if axes is None else {_axis(a, len(s)) for a in axes}
    if any(s[k] != 1 for k in drop):
        raise NodeError(f"cannot squeeze axes {sorted(drop)} of shape {list(s)}")
    return [reshape(imp, x, [d for k, d in enumerate(s) if k not in drop])]


@converter("Unsqueeze")
def _unsqueeze(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = list(imp.shape(x))
    axes = _axes(imp, ins, attrs, 13)
    if axes is None:
        raise NodeError("axes are missing")
    rank = len(s) + len(axes)
    norm = sorted(_axis(a, rank) for a in axes)
    for a in norm:
        s.insert(a, 1)
    return [reshape(imp, x, s)]


@converter("Transpose")
def _transpose(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    perm = [int(p) for p in attrs.get("perm", range(len(s) - 1, -1, -1))]
    if sorted(perm) != list(range(len(s))):
        raise NodeError(f"perm {perm} is not a permutation of {len(s)} axes")
    if perm == list(range(len(s))):
        return [x]
    return [Tensor(imp.emit(TransposeOp, [imp.t(x)], [s[p] for p in perm], imp.elem(x), perm=perm))]


@converter("Expand")
def _expand(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    shape = _ints_input(ins[1] if len(ins) > 1 else None, "the Expand shape") or []
    out = broadcast_shapes(imp.shape(x), shape)
    if out is None:
        raise NodeError(f"shape {list(imp.shape(x))} does not broadcast to {shape}")
    if out == imp.shape(x):
        return [x]
    return [Tensor(imp.emit(BroadcastToOp, [imp.t(x)], out, imp.elem(x)))]


@converter("Concat")
def _concat(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    vals = [v for v in ins if v is not None and math.prod(imp.shape(v)) > 0] or [_one(ins)]
    s = list(imp.shape(vals[0]))
    axis = _axis(int(attrs.get("axis", 0)), len(s))
    if len(vals) == 1:
        return [vals[0]]
    s[axis] = sum(imp.shape(v)[axis] for v in vals)
    elem = next((imp.elem(v) for v in vals if isinstance(v, Tensor)), "f32")
    return [Tensor(imp.emit(ConcatOp, [imp.t(v) for v in vals], s, elem, axis=axis))]


def slice_value(imp: Importer, x: Value, starts: Sequence[int], ends: Sequence[int],
                axes: Sequence[int], steps: Sequence[int]) -> Value:
    s = imp.shape(x)
    start, stride, sizes = [0] * len(s), [1] * len(s), list(s)
    for st, en, ax, sp in zip(starts, ends, axes, steps, strict=True):
        a = _axis(ax, len(s))
        if sp == 0:
            raise NodeError("a step of 0")
        r = range(*slice(st, en, sp).indices(s[a]))
        start[a], stride[a], sizes[a] = (r.start if len(r) else 0), sp, len(r)
    if sizes == list(s) and all(v == 1 for v in stride):
        return x
    return Tensor(imp.emit(SliceOp, [imp.t(x)], sizes, imp.elem(x), start=start, stride=stride))


@converter("Slice")
def _slice(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    rank = len(imp.shape(x))
    if imp.opset < 10:
        starts, ends = list(attrs.get("starts", [])), list(attrs.get("ends", []))
        axes = list(attrs.get("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts = _ints_input(ins[1], "starts") or []
        ends = _ints_input(ins[2], "ends") or []
        axes = _ints_input(ins[3] if len(ins) > 3 else None, "axes") or list(range(len(starts)))
        steps = _ints_input(ins[4] if len(ins) > 4 else None, "steps") or [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps) or len(axes) > rank:
        raise NodeError("starts, ends, axes and steps differ in length")
    return [slice_value(imp, x, starts, ends, axes, steps)]


@converter("Split")
def _split(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    axis = _axis(int(attrs.get("axis", 0)), len(s))
    n = len(node.output)
    if imp.opset < 13:
        split = list(attrs.get("split", []))
    else:
        split = _ints_input(ins[1] if len(ins) > 1 else None, "split") or []
    if not split:
        parts = int(attrs.get("num_outputs", n))
        size = -(-s[axis] // parts)
        split = [min(size, s[axis] - k * size) for k in range(parts)]
    if sum(split) != s[axis] or len(split) != n:
        raise NodeError(f"split {split} does not cut axis {axis} of size {s[axis]} into {n}")
    outs: list[Value] = []
    at = 0
    for size in split:
        outs.append(slice_value(imp, x, [at], [at + size], [axis], [1]))
        at += size
    return outs


# -- reductions and normalisation ----------------------------------------------------------
REDUCE = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min",
          "ReduceProd": "prod"}


@converter(*REDUCE, "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp")
def _reduce(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    axes = _axes(imp, ins, attrs, 13 if node.op_type == "ReduceSum" else 18)
    keep = bool(int(attrs.get("keepdims", 1)))
    if not axes:
        if int(attrs.get("noop_with_empty_axes", 0)):
            return [x]
        axes = list(range(len(s)))
    norm = sorted({_axis(a, len(s)) for a in axes})
    out = kept_dims(s, norm) if keep else [d for k, d in enumerate(s) if k not in norm]
    kind = REDUCE.get(node.op_type, "sum")
    if node.op_type in REDUCE_OF:  # sum of a function of x, then maybe one of the sum
        if imp.elem(x) not in FLOATS:
            raise Unsupported(f"{node.op_type} of {imp.elem(x)}")
        return [REDUCE_OF[node.op_type](imp, x, norm, out, keep)]
    if kind in ("max", "min") and any(s[a] == 0 for a in norm):
        # the maximum of no values is ONNX's identity: the type's lowest
        # value (-inf for floats); the minimum's its highest
        dtype = np.dtype(ELEMS[imp.elem(x)].dtype)
        if dtype == np.bool_:
            ident: object = kind == "min"
        elif np.issubdtype(dtype, np.floating):
            ident = -np.inf if kind == "max" else np.inf
        else:
            ident = np.iinfo(dtype).min if kind == "max" else np.iinfo(dtype).max
        return [Const(np.full(out, ident, dtype=dtype))]
    return [reduce(imp, x, kind, norm, out, keep)]


def reduce(imp: Importer, x: Value, kind: str, axes: list[int], out: Sequence[int], keep: bool) -> Value:
    return Tensor(imp.emit(ReduceOp, [imp.t(x)], out, imp.elem(x), kind=kind, axes=axes, keepdims=keep))


def _log_sum_exp(imp: Importer, x: Value, axes: list[int], out: Sequence[int], keep: bool) -> Value:
    """log(sum(exp(x - m))) + m with m the maximum (finite sums for large x);
    over an empty axis log(0) = -inf, as the definition gives."""
    s = imp.shape(x)
    if any(s[a] == 0 for a in axes):
        return unary(imp, LogOp, reduce(imp, x, "sum", axes, out, keep))
    m = reduce(imp, x, "max", axes, kept_dims(s, axes), True)
    # -inf (all of a row) stays -inf rather than NaN from -inf - -inf
    m = select(imp, compare(imp, EqOp, m, scalar(imp, -math.inf, x)), scalar(imp, 0.0, x), m)
    total = reduce(imp, unary(imp, ExpOp, binary(imp, SubOp, x, m)), "sum", axes, out, keep)
    return binary(imp, AddOp, unary(imp, LogOp, total), reshape(imp, m, out))


# ONNX reductions of a function of x: sum of squares, L1 / L2 norms, log-sums.
REDUCE_OF: dict[str, Callable[[Importer, Value, list[int], Sequence[int], bool], Value]] = {
    "ReduceSumSquare": lambda imp, x, a, o, k: reduce(imp, binary(imp, MulOp, x, x), "sum", a, o, k),
    "ReduceL1": lambda imp, x, a, o, k: reduce(imp, unary(imp, AbsOp, x), "sum", a, o, k),
    "ReduceL2": lambda imp, x, a, o, k: unary(
        imp, SqrtOp, reduce(imp, binary(imp, MulOp, x, x), "sum", a, o, k)),
    "ReduceLogSum": lambda imp, x, a, o, k: unary(imp, LogOp, reduce(imp, x, "sum", a, o, k)),
    "ReduceLogSumExp": _log_sum_exp,
}


@converter("ArgMax", "ArgMin")
def _arg_extremum(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    ax = _axis(int(attrs.get("axis", 0)), len(s))
    keep = bool(int(attrs.get("keepdims", 1)))
    out = [1 if k == ax else d for k, d in enumerate(s)] if keep else [d for k, d in enumerate(s) if k != ax]
    cls = ArgmaxOp if node.op_type == "ArgMax" else ArgminOp
    if not int(attrs.get("select_last_index", 0)) or s[ax] <= 1:
        return [Tensor(imp.emit(cls, [imp.t(x)], out, "i64", axis=ax))]
    # the last of equal extremes: the first in the axis reversed, counted back
    rev = Const(np.arange(s[ax] - 1, -1, -1, dtype=np.int64))
    flipped = Tensor(imp.emit(GatherOp, [imp.t(x), imp.t(rev)], s, imp.elem(x), axis=ax))
    first = Tensor(imp.emit(cls, [imp.t(flipped)], out, "i64", axis=ax))
    return [binary(imp, SubOp, Const(np.asarray(s[ax] - 1, np.int64)), first)]


@converter("Softmax", "LogSoftmax")
@in_f32
def _softmax(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    elem = imp.elem(x)
    if elem == "f64":
        return [_softmax_f64(imp, node, x, attrs)]
    s = imp.shape(x)
    if imp.opset < 13:  # the input is coerced to 2-D at `axis` (default 1)
        axis = _axis(int(attrs.get("axis", 1)), len(s))
        flat = reshape(imp, x, (math.prod(s[:axis]), math.prod(s[axis:])))
    else:
        axis = _axis(int(attrs.get("axis", -1)), len(s))
        flat = x
    # LogSoftmax: z - log(sum(exp(z))), z max-shifted (the log of the
    # softmax would be -inf wherever it underflows: a logit 104 below its
    # row's max)
    op = LogSoftmaxOp if node.op_type == "LogSoftmax" else SoftmaxOp
    y = Tensor(imp.emit(op, [imp.t(flat)], imp.shape(flat), "f32", axis=1 if imp.opset < 13 else axis))
    return [reshape(imp, y, s)]


def _shifted(imp: Importer, x: Value, axes: list[int]) -> tuple[Value, Value]:
    """(z, sum of exp(z) over axes, kept) with z = x less its maximum."""
    kept = kept_dims(imp.shape(x), axes)
    z = binary(imp, SubOp, x, reduce(imp, x, "max", axes, kept, True))
    return z, reduce(imp, unary(imp, ExpOp, z), "sum", axes, kept, True)


def log_softmax(imp: Importer, x: Value, axes: list[int]) -> Value:
    """z - log(sum(exp(z))), z max-shifted: no overflow, composed in x's type."""
    z, total = _shifted(imp, x, axes)
    return binary(imp, SubOp, z, unary(imp, LogOp, total))


def _softmax_f64(imp: Importer, node: onnx.NodeProto, x: Value, attrs: dict[str, Any]) -> Value:
    """Softmax / LogSoftmax of f64 composed in f64 (the kernel is f32's)."""
    s = imp.shape(x)
    if imp.opset < 13:
        axis = _axis(int(attrs.get("axis", 1)), len(s))
        axes = list(range(axis, len(s)))
    else:
        axes = [_axis(int(attrs.get("axis", -1)), len(s))]
    if node.op_type == "LogSoftmax":
        return log_softmax(imp, x, axes)
    z, total = _shifted(imp, x, axes)
    return binary(imp, DivOp, unary(imp, ExpOp, z), total)


@converter("BatchNormalization")
def _batch_norm(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    _only_first_output(node, "running mean/var")
    if int(attrs.get("training_mode", 0)):
        raise Unsupported("training_mode")
    x = _one(ins)
    vals = [ins[k] if len(ins) > k else None for k in range(1, 5)]
    for v, what in zip(vals, ("scale", "B", "mean", "var"), strict=True):
        if v is None:
            raise NodeError(f"needs {what}")
    s = imp.shape(x)
    if len(s) < 2:
        raise NodeError("needs an input of rank 2 or more (N, C, ...)")
    bshape = (s[1],) + (1,) * (len(s) - 2)
    for v, what in zip(vals, ("scale", "B", "mean", "var"), strict=True):
        if v is not None and imp.shape(v) != (s[1],):
            raise NodeError(f"{what} has shape {list(imp.shape(v))}, not [{s[1]}] (one value per channel)")
    eps = float(attrs.get("epsilon", 1e-5))
    if all(isinstance(v, Const) for v in vals):
        scale, bias, mean, var = (v.array for v in vals if isinstance(v, Const))
        mul, add = batch_norm_affine(scale, bias, mean, var, eps)
        y = binary(imp, MulOp, x, Const(mul.astype(np.float32).reshape(bshape)))
        return [binary(imp, AddOp, y, Const(add.astype(np.float32).reshape(bshape)))]
    # parameters computed at run time (a quantized model's dequantized scale):
    # mul = scale / sqrt(var + eps) and add = B - mean * mul per channel, in f32
    scale_v, bias_v, mean_v, var_v = (reshape(imp, v, bshape) for v in vals if v is not None)
    if any(imp.elem(v) != "f32" for v in (scale_v, bias_v, mean_v, var_v)):
        raise Unsupported("BatchNormalization parameters other than f32")
    root = unary(imp, SqrtOp, binary(imp, AddOp, var_v, Const(np.full(bshape, eps, np.float32))))
    mul_v = binary(imp, DivOp, scale_v, root)
    add_v = binary(imp, SubOp, bias_v, binary(imp, MulOp, mean_v, mul_v))
    return [binary(imp, AddOp, binary(imp, MulOp, x, mul_v), add_v)]


def batch_norm_affine(scale: np.ndarray, bias: np.ndarray, mean: np.ndarray, var: np.ndarray,
                      eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(mul, add) with batch_norm(x) = x * mul + add per channel, in float64."""
    mul = scale.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
    return mul, bias.astype(np.float64) - mean.astype(np.float64) * mul


# -- matmul, gemm --------------------------------------------------------------------------
MAX_PRODUCTS = 1 << 22


def _products_summed(imp: Importer, a: Value, b: Value) -> Value:
    """numpy matmul of other types than f32 (integers wrap, as numpy's):
    the products a[..., m, k, 1] * b[..., 1, k, n] summed over k. For the
    small products of shape arithmetic and masks, not for heavy layers."""
    sa, sb = imp.shape(a), imp.shape(b)
    if not sa or not sb:
        raise NodeError("matmul operands must have a rank of 1 or more")
    a2 = reshape(imp, a, (1, sa[0])) if len(sa) == 1 else a
    b2 = reshape(imp, b, (sb[0], 1)) if len(sb) == 1 else b
    ra, rb = imp.shape(a2), imp.shape(b2)
    if ra[-1] != rb[-2]:
        raise NodeError(f"inner dims differ: {list(sa)} @ {list(sb)}")
    batch = broadcast_shapes(ra[:-2], rb[:-2])
    if batch is None:
        raise NodeError(f"batch dims of {list(sa)} and {list(sb)} do not broadcast")
    m, k, n = ra[-2], ra[-1], rb[-1]
    if math.prod(batch) * m * k * n > MAX_PRODUCTS:
        raise Unsupported(f"a {imp.elem(a)} MatMul of {math.prod(batch) * m * k * n} products")
    prods = binary(imp, MulOp, reshape(imp, a2, ra + (1,)), reshape(imp, b2, rb[:-2] + (1,) + rb[-2:]))
    out = tuple(batch) + (m, n)
    y = Tensor(imp.emit(ReduceOp, [imp.t(prods)], out, imp.elem(a), kind="sum",
                        axes=[len(out) - 1], keepdims=False))
    final = tuple(batch) + ((m,) if len(sa) > 1 else ()) + ((n,) if len(sb) > 1 else ())
    return reshape(imp, y, final)


def matmul(imp: Importer, a: Value, b: Value, ta: bool = False, tb: bool = False) -> Value:
    """numpy `matmul` (rank-1 operands, rank-N x rank-2, broadcast batch dims)."""
    sa, sb = imp.shape(a), imp.shape(b)
    if imp.elem(a) != "f32" or imp.elem(b) != "f32":
        if imp.elem(a) != imp.elem(b):
            raise Unsupported(f"MatMul of {imp.elem(a)} and {imp.elem(b)}")
        if imp.elem(a) in ("f16", "bf16"):  # in f32, rounded once
            return cast(imp, matmul(imp, cast(imp, a, "f32"), cast(imp, b, "f32"), ta, tb), imp.elem(a))
        if ta or tb:
            raise Unsupported(f"a transposed {imp.elem(a)} MatMul")
        return _products_summed(imp, a, b)
    squeeze_m, squeeze_n = len(sa) == 1, len(sb) == 1
    if squeeze_m:
        a, sa = reshape(imp, a, (1, sa[0])), (1, sa[0])
    if squeeze_n:
        b, sb = reshape(imp, b, (sb[0], 1)), (sb[0], 1)
    m, ka = (sa[-1], sa[-2]) if ta else (sa[-2], sa[-1])
    kb, n = (sb[-1], sb[-2]) if tb else (sb[-2], sb[-1])
    if ka != kb:
        raise NodeError(f"inner dims differ: {list(sa)} @ {list(sb)}")
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    if batch is None:
        raise NodeError(f"batch dims of {list(sa)} and {list(sb)} do not broadcast")
    props: dict[str, object] = dict(transpose_lhs=ta or None, transpose_rhs=tb or None)
    if len(sb) == 2 and not ta:  # rows of a against one weight: a 2-D product
        flat = reshape(imp, a, (math.prod(sa[:-1]), ka))
        y: Value = Tensor(imp.emit(MatmulOp, [imp.t(flat), imp.t(b)], (math.prod(sa[:-1]), n), "f32", **props))
    elif len(sa) == 2 and len(sb) == 2:
        y = Tensor(imp.emit(MatmulOp, [imp.t(a), imp.t(b)], (m, n), "f32", **props))
    else:
        r = max(len(sa), len(sb), 3)
        a = reshape(imp, a, (1,) * (r - len(sa)) + tuple(sa))
        b = reshape(imp, b, (1,) * (r - len(sb)) + tuple(sb))
        full = (1,) * (r - 2 - len(batch)) + tuple(batch) + (m, n)
        y = Tensor(imp.emit(MatmulOp, [imp.t(a), imp.t(b)], full, "f32", **props))
    out = list(batch) + ([] if squeeze_m else [m]) + ([] if squeeze_n else [n])
    return reshape(imp, y, out)


@converter("MatMul")
def _matmul(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    a, b = ins[0], ins[1] if len(ins) > 1 else None
    if a is None or b is None:
        raise NodeError("needs two inputs")
    return [matmul(imp, a, b)]


@converter("Gemm")
def _gemm(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    a, b = ins[0], ins[1] if len(ins) > 1 else None
    c = ins[2] if len(ins) > 2 else None
    if a is None or b is None:
        raise NodeError("needs A and B")
    if len(imp.shape(a)) != 2 or len(imp.shape(b)) != 2:
        raise NodeError("A and B must be rank 2")
    alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))
    y = matmul(imp, a, b, bool(attrs.get("transA", 0)), bool(attrs.get("transB", 0)))
    if alpha != 1.0:
        y = binary(imp, MulOp, y, scalar(imp, alpha, y))
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = (Const((np.float32(beta) * c.array.astype(np.float32)).astype(np.float32))
                 if isinstance(c, Const) else binary(imp, MulOp, c, scalar(imp, beta, c)))
        y = binary(imp, AddOp, y, c)
    return [y]


# -- convolution and pooling -----------------------------------------------------------
def _pads(attrs: dict[str, Any], spatial: Sequence[int], kernel: Sequence[int],
          strides: Sequence[int], dilations: Sequence[int]) -> list[int]:
    """ONNX pads [begin..., end...] after `auto_pad`."""
    auto = attrs.get("auto_pad", "NOTSET")
    n = len(spatial)
    if auto in ("NOTSET", ""):
        pads = [int(p) for p in attrs.get("pads", [0] * 2 * n)]
        if len(pads) != 2 * n or any(p < 0 for p in pads):
            raise NodeError(f"pads {pads} must be {2 * n} non-negative numbers")
        return pads
    if auto == "VALID":
        return [0] * 2 * n
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise NodeError(f"auto_pad '{auto}' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER")
    begin, end = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations, strict=True):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small = total // 2
        begin.append(small if auto == "SAME_UPPER" else total - small)
        end.append(total - begin[-1])
    return begin + end


def _spatial_attrs(attrs: dict[str, Any], spatial: Sequence[int], kernel: Sequence[int],
                   ) -> tuple[list[int], list[int], list[int]]:
    n = len(spatial)
    strides = [int(s) for s in attrs.get("strides", [1] * n)]
    dilations = [int(d) for d in attrs.get("dilations", [1] * n)]
    if (len(strides) != n or len(dilations) != n or min(strides + dilations, default=1) < 1
            or max(strides + dilations, default=1) > 1 << 20):
        raise NodeError(f"strides {strides} / dilations {dilations} must be {n} numbers in [1, 2^20]")
    return strides, dilations, _pads(attrs, spatial, kernel, strides, dilations)


def _to_2d(imp: Importer, x: Value) -> tuple[Value, bool]:
    """A rank-3 (1-D spatial) input as rank 4 with height 1."""
    s = imp.shape(x)
    if len(s) == 4:
        return x, False
    if len(s) == 3:
        return reshape(imp, x, (s[0], s[1], 1, s[2])), True
    raise Unsupported(f"{len(s) - 2}-D spatial input")


def _emit_conv(imp: Importer, x: Value, w: Value, b: Value | None, props: dict[str, Any],
               shape: Sequence[int], squeeze: bool) -> Value:
    operands = [imp.t(x), imp.t(w)] + ([imp.t(b)] if b is not None else [])
    out: Value = Tensor(imp.emit(Conv2dOp, operands, shape, "f32", **props))
    if squeeze:
        out = reshape(imp, out, (shape[0], shape[1], shape[3]))
    return out


def _conv_geometry(imp: Importer, x: Value, w: Value, attrs: dict[str, Any],
                   ) -> tuple[Value, Value, bool, dict[str, Any], tuple[int, int, int, int]]:
    """x and w as rank 4 (a 1-D convolution gains a unit height), the
    conv2d properties and the output shape."""
    x4, squeeze = _to_2d(imp, x)
    w4 = w
    if squeeze:
        ws = imp.shape(w)
        w4 = reshape(imp, w, (ws[0], ws[1], 1, ws[2]))
    n, c, h, wd = imp.shape(x4)
    o, _, kh, kw = imp.shape(w4)
    a = dict(attrs)
    if squeeze:  # 1-D attributes gain a unit height
        for key, unit in (("strides", 1), ("dilations", 1)):
            if key in a:
                a[key] = [unit] + list(a[key])
        if "pads" in a:
            p = list(a["pads"])
            a["pads"] = [0, p[0], 0, p[1]]
    strides, dilations, pads = _spatial_attrs(a, (h, wd), (kh, kw))
    groups = int(attrs.get("group", 1))
    oh = (h + pads[0] + pads[2] - ((kh - 1) * dilations[0] + 1)) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - ((kw - 1) * dilations[1] + 1)) // strides[1] + 1
    props = dict(strides=strides, padding=[pads[0], pads[1], pads[2], pads[3]],
                 dilations=dilations, groups=groups)
    return x4, w4, squeeze, props, (n, o, oh, ow)


def _unsqueezed(imp: Importer, out: Value, squeeze: bool) -> Value:
    if not squeeze:
        return out
    s = imp.shape(out)
    return reshape(imp, out, (s[0], s[1], s[3]))


@converter("Conv")
@in_f32
def _conv(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x, w = _one(ins), ins[1] if len(ins) > 1 else None
    b = ins[2] if len(ins) > 2 else None
    if w is None:
        raise NodeError("W is missing")
    if len(imp.shape(x)) == 5:
        from mlvm.frontend.onnx.conv3d import conv_3d

        return [conv_3d(imp, x, w, b, attrs)]
    x4, w4, squeeze, props, shape = _conv_geometry(imp, x, w, attrs)
    return [_emit_conv(imp, x4, w4, b, props, shape, squeeze)]


def _moments(imp: Importer, x: Value, axes: list[int], eps: float) -> tuple[Value, Value]:
    """mean and 1 / sqrt(variance + eps) over axes, kept as unit dims."""
    kept = kept_dims(imp.shape(x), axes)
    mean = reduce(imp, x, "mean", axes, kept, True)
    d = binary(imp, SubOp, x, mean)
    var = reduce(imp, binary(imp, MulOp, d, d), "mean", axes, kept, True)
    return mean, unary(imp, RsqrtOp, binary(imp, AddOp, var, scalar(imp, eps, x)))


@converter("LayerNormalization")
def _layer_norm(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    if imp.elem(x) != "f32":
        raise Unsupported(f"LayerNormalization of {imp.elem(x)}")
    axis = _axis(int(attrs.get("axis", -1)), len(s))
    axes = list(range(axis, len(s)))
    norm_shape = s[axis:]
    affine = []
    for k in (1, 2):
        v = ins[k] if len(ins) > k else None
        if v is None:
            v = Const(np.full(norm_shape, 0.0 if k == 2 else 1.0, np.float32))
        if imp.shape(v) != norm_shape:
            if not isinstance(v, Const):
                raise Unsupported("Scale / B broadcast at run time")
            v = Const(np.ascontiguousarray(np.broadcast_to(v.array, norm_shape)))
        affine.append(imp.t(v))
    eps = float(attrs.get("epsilon", 1e-5))
    y: Value = Tensor(imp.emit(LayerNormOp, [imp.t(x), *affine], s, "f32", axes=axes, eps=eps))
    if not any(node.output[1:]):
        return [y]
    return [y, *_moments(imp, x, axes, eps)]  # the Mean and InvStdDev outputs


@converter("RMSNormalization")
def _rms_norm(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x, scale = _two(ins)
    s = imp.shape(x)
    if imp.elem(x) != "f32":
        raise Unsupported(f"RMSNormalization of {imp.elem(x)}")
    axis = _axis(int(attrs.get("axis", -1)), len(s))
    axes = list(range(axis, len(s)))
    ms = reduce(imp, binary(imp, MulOp, x, x), "mean", axes, kept_dims(s, axes), True)
    eps = scalar(imp, float(attrs.get("epsilon", 1e-5)), x)
    inv = unary(imp, RsqrtOp, binary(imp, AddOp, ms, eps))
    return [binary(imp, MulOp, binary(imp, MulOp, x, inv), scale)]


@converter("ConstantOfShape")
def _constant_of_shape(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    # Reached only when the result is too large to fold: filled at run time.
    shape = _ints_input(ins[0] if ins else None, "the shape") or []
    value = attrs.get("value")
    arr = onnx.numpy_helper.to_array(value) if value is not None else np.zeros(1, np.float32)
    elem = {np.dtype(np.float32): "f32", np.dtype(np.int32): "i32"}.get(arr.dtype)
    if elem is None or arr.size != 1:
        raise Unsupported(f"a {arr.dtype} fill")
    return [Tensor(imp.emit(FillOp, [], shape, elem, value=float(arr.reshape(-1)[0])))]


@converter("LRN")
def _lrn(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    """x / (bias + alpha / size * sum of x^2 over `size` channels) ^ beta, the
    channel sum as a convolution with ones (zero padding), the power as exp/log."""
    x = _one(ins)
    s = imp.shape(x)
    if len(s) < 3:
        raise NodeError(f"input of rank {len(s)}: LRN needs N, C and spatial dims")
    size = int(attrs.get("size", 0))
    if size < 1:
        raise NodeError(f"size {size} must be positive")
    alpha, beta = float(attrs.get("alpha", 1e-4)), float(attrs.get("beta", 0.75))
    bias = float(attrs.get("bias", 1.0))
    n, c, rest = s[0], s[1], math.prod(s[2:])
    sq = reshape(imp, binary(imp, MulOp, x, x), (n, 1, c, rest))
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    ones = Const(np.ones((1, 1, size, 1), np.float32))
    total = Tensor(imp.emit(Conv2dOp, [imp.t(sq), imp.t(ones)], (n, 1, c, rest), "f32",
                            padding=[lo, 0, hi, 0]))
    z = binary(imp, AddOp, binary(imp, MulOp, total, scalar(imp, alpha / size, total)),
               scalar(imp, bias, total))
    scale = unary(imp, ExpOp, binary(imp, MulOp, unary(imp, LogOp, z), scalar(imp, -beta, z)))
    return [binary(imp, MulOp, x, reshape(imp, scale, s))]


# -- indexing ------------------------------------------------------------------------
@converter("Gather")
def _gather(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x, idx = _two(ins)
    s = imp.shape(x)
    ax = _axis(int(attrs.get("axis", 0)), len(s))
    if imp.elem(idx) not in ("i32", "i64"):
        raise NodeError(f"indices must be int32 or int64, not {imp.elem(idx)}")
    out = s[:ax] + imp.shape(idx) + s[ax + 1:]
    return [Tensor(imp.emit(GatherOp, [imp.t(x), imp.t(idx)], out, imp.elem(x), axis=ax))]


@converter("Pad")
def _pad(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    rank = len(imp.shape(x))
    mode = str(attrs.get("mode", "constant"))
    if mode not in ("constant", "edge", "reflect"):
        raise Unsupported(f"mode '{mode}'")
    if imp.opset < 11:
        pads = [int(p) for p in attrs.get("pads", [])]
        value: float = float(attrs.get("value", 0.0))
    else:
        pads = _ints_input(ins[1] if len(ins) > 1 else None, "Pad pads") or []
        v = _scalar_input(ins[2] if len(ins) > 2 else None, "Pad constant_value")
        value = 0.0 if v is None else v
        axes = _ints_input(ins[3] if len(ins) > 3 else None, "Pad axes")
        if axes is not None:  # pads given for these axes only
            full = [0] * (2 * rank)
            for k, a in enumerate(axes):
                a = _axis(a, rank)
                full[a], full[rank + a] = pads[k], pads[len(axes) + k]
            pads = full
    if len(pads) != 2 * rank:
        raise NodeError(f"pads has {len(pads)} entries for rank {rank}")
    if np.float32(value) != value:  # NaN too (never equal), and values f32 rounds
        raise Unsupported(f"constant_value {value} (not exact in f32)")
    out = [d + b + e for d, b, e in zip(imp.shape(x), pads[:rank], pads[rank:])]
    return [Tensor(imp.emit(PadOp, [imp.t(x)], out, imp.elem(x), pads=pads, mode=mode, value=value))]


@converter("CumSum")
def _cumsum(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x, axis = _two(ins)
    a = _ints_input(axis, "CumSum axis")
    assert a is not None
    ax = _axis(a[0], len(imp.shape(x)))
    return [Tensor(imp.emit(CumsumOp, [imp.t(x)], imp.shape(x), imp.elem(x), axis=ax,
                            exclusive=bool(attrs.get("exclusive", 0)), reverse=bool(attrs.get("reverse", 0))))]


@converter("If")
def _if(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    """The branch the condition picks, when it is known at import (an
    ahead-of-time module has one program): its nodes imported in place."""
    cond = ins[0] if ins else None
    if not isinstance(cond, Const):
        raise RunTimeInput("the If condition", cond)
    if cond.array.size != 1:
        raise NodeError("the condition must be one value")
    branch = attrs.get("then_branch" if bool(cond.array.reshape(-1)[0]) else "else_branch")
    if not isinstance(branch, onnx.GraphProto):
        raise NodeError("a branch is missing")
    outs = imp.run_graph(branch, 0)
    if len(outs) != len(node.output) or any(v is None for v in outs):
        raise NodeError(f"the branch gives {len(outs)} outputs for {len(node.output)}")
    return [v for v in outs if v is not None]


@converter("Trilu")
def _trilu(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    if len(s) < 2:
        raise NodeError(f"needs a rank of 2 or more, not {len(s)}")
    k = (_ints_input(ins[1] if len(ins) > 1 else None, "Trilu k") or [0])[0]
    rows, cols = np.arange(s[-2])[:, None], np.arange(s[-1])[None, :]
    keep = cols - rows >= k if int(attrs.get("upper", 1)) else cols - rows <= k
    return [select(imp, Const(keep), x, Const(np.zeros((), ELEMS[imp.elem(x)].dtype)))]


@converter("Range")
def _range(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    # constant bounds are folded before any converter; bounds of shape [1]
    # (which onnx's shape inference refuses, and exporters write) come here
    bounds = []
    for v in ins:
        if v is None or not isinstance(v, Const):
            raise RunTimeInput("Range bounds", v)
        if v.array.size != 1:
            raise NodeError(f"start, limit and delta must be scalars, not of shape {list(v.array.shape)}")
        bounds.append(v.array.reshape(()))
    if len(bounds) != 3:
        raise NodeError(f"takes start, limit and delta, not {len(bounds)} inputs")
    start, limit, delta = bounds
    if delta == 0:
        raise NodeError("delta is 0")
    if start.dtype.kind in "iu":  # exact: int64 bounds past 2**53 too
        count = float(max(0, -(-(int(limit) - int(start)) // int(delta))))
    else:
        with np.errstate(all="ignore"):
            count = float(np.ceil((np.float64(limit) - np.float64(start)) / np.float64(delta)))
        if math.isnan(count) or count == math.inf:
            raise NodeError(f"a range from {start} to {limit} by {delta} has no size")
    if count > MAX_FOLD_ELEMENTS:
        raise NodeError(f"a range of {count:g} elements (at most {MAX_FOLD_ELEMENTS} at import)")
    n = int(count) if count > 0 else 0
    return [Const(np.asarray(start + np.arange(n).astype(start.dtype) * delta, start.dtype))]


# -- quantization ----------------------------------------------------------------------
def _qparam(imp: Importer, v: Value, axis: int, rank: int, what: str) -> Value:
    """A scale or zero point: one value, or one per channel along `axis`,
    shaped to broadcast against the data."""
    s = imp.shape(v)
    if math.prod(s) == 1:
        return reshape(imp, v, ())
    if len(s) != 1:
        raise Unsupported(f"blocked {what}")
    axis = _axis(axis, rank)
    shape = [1] * rank
    shape[axis] = s[0]
    return reshape(imp, v, shape)


def _qparams(imp: Importer, scale: Value, zero_point: Value) -> list[SSAValue]:
    """A scale and zero point as operands: constants when known and small."""
    return [imp.t(scale, inline=QPARAM_INLINE), imp.t(zero_point, inline=QPARAM_INLINE)]


def _zero_point(imp: Importer, v: Value | None, like: str, what: str) -> Value:
    if v is not None:
        return v
    return Const(np.zeros((), dtype=ELEMS[like].dtype))


def _q_inputs(imp: Importer, ins: list[Value | None], attrs: dict[str, Any]) -> tuple[Value, Value, int, int]:
    """(x, scale, rank of x, raw axis) of QuantizeLinear / DequantizeLinear."""
    x = _one(ins)
    if len(ins) < 2 or ins[1] is None:
        raise NodeError("needs a scale")
    if int(attrs.get("block_size", 0)):
        raise Unsupported("block_size")
    return x, ins[1], len(imp.shape(x)), int(attrs.get("axis", 1))


@converter("QuantizeLinear")
def _quantize(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x, scale, rank, ax = _q_inputs(imp, ins, attrs)
    zp_in = ins[2] if len(ins) > 2 else None
    out_t = ELEM_OF_ONNX.get(int(attrs.get("output_dtype", 0))) if attrs.get("output_dtype") else None
    zp = _zero_point(imp, zp_in, out_t or "ui8", "zero point")
    if imp.elem(zp) not in ("i8", "ui8", "i16", "ui16"):
        raise Unsupported(f"quantizing to {imp.elem(zp)}")
    s = _qparam(imp, scale, ax, rank, "scale")
    z = _qparam(imp, zp, ax, rank, "zero point")
    return [Tensor(imp.emit(QuantizeOp, [imp.t(x), *_qparams(imp, s, z)], imp.shape(x), imp.elem(zp)))]


@converter("DynamicQuantizeLinear")
def _dynamic_quantize(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
                      attrs: dict[str, Any]) -> list[Value]:
    """y (u8), y_scale, y_zero_point of x, as onnxruntime computes them (its
    dynamic quantization's MatMulInteger inputs): the range [min(x, 0),
    max(x, 0)] in 255 steps (a scale of 1 where it is empty), the zero point
    -min / scale clamped to [0, 255] and rounded half to even, then
    QuantizeLinear. f32 ops in onnxruntime's order: the same bits."""
    x = _one(ins)
    if imp.elem(x) != "f32":
        raise Unsupported(f"DynamicQuantizeLinear of {imp.elem(x)}")
    shape = imp.shape(x)
    if math.prod(shape) == 0:
        raise Unsupported("an empty input (its range has no minimum)")
    axes = list(range(len(shape)))
    zero = scalar(imp, 0.0, x)
    lo = binary(imp, MinOp, reduce(imp, x, "min", axes, (), False), zero)
    hi = binary(imp, MaxOp, reduce(imp, x, "max", axes, (), False), zero)
    steps = binary(imp, DivOp, binary(imp, SubOp, hi, lo), scalar(imp, 255.0, x))
    scale = select(imp, compare(imp, EqOp, hi, lo), scalar(imp, 1.0, x), steps)
    # nearbyint(clamp(v, 0, 255)) is saturate(nearbyint(v)): QuantizeLinear by 1
    zp_f = binary(imp, SubOp, zero, binary(imp, DivOp, lo, scale))
    one, z8 = imp.t(scalar(imp, 1.0, x)), imp.t(Const(np.zeros((), np.uint8)))
    zp = Tensor(imp.emit(QuantizeOp, [imp.t(zp_f), one, z8], (), "ui8"))
    y = Tensor(imp.emit(QuantizeOp, [imp.t(x), imp.t(scale), imp.t(zp)], shape, "ui8"))
    return [y, scale, zp]


@converter("DequantizeLinear")
def _dequantize(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x, scale, rank, ax = _q_inputs(imp, ins, attrs)
    if imp.elem(x) not in ("i8", "ui8", "i16", "ui16", "i32"):
        raise Unsupported(f"dequantizing {imp.elem(x)}")
    zp = _zero_point(imp, ins[2] if len(ins) > 2 else None, imp.elem(x), "zero point")
    s = _qparam(imp, scale, ax, rank, "scale")
    z = _qparam(imp, zp, ax, rank, "zero point")
    return [Tensor(imp.emit(DequantizeOp, [imp.t(x), *_qparams(imp, s, z)], imp.shape(x), "f32"))]


def qmatmul(imp: Importer, a: Value, b: Value, za: Value | None, zb: Value | None) -> Tensor:
    if len(imp.shape(b)) != 2:
        raise Unsupported("a batched right-hand side")
    za_v = _zero_point(imp, za, imp.elem(a), "a zero point")
    zb_v = _zero_point(imp, zb, imp.elem(b), "b zero point")
    if math.prod(imp.shape(za_v)) != 1:
        raise Unsupported("a per-row a_zero_point")
    za_v = reshape(imp, za_v, ())
    zb_v = reshape(imp, zb_v, () if math.prod(imp.shape(zb_v)) == 1 else (imp.shape(b)[1],))
    sa = imp.shape(a)
    out = (*sa[:-1], imp.shape(b)[1]) if len(sa) >= 2 else (imp.shape(b)[1],)
    return Tensor(imp.emit(QMatmulOp, [imp.t(a), imp.t(b), imp.t(za_v), imp.t(zb_v)], out, "i32"))


@converter("MatMulInteger")
def _matmul_integer(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    a, b = _two(ins)
    return [qmatmul(imp, a, b, ins[2] if len(ins) > 2 else None, ins[3] if len(ins) > 3 else None)]


@converter("QLinearMatMul")
def _qlinear_matmul(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    if len(ins) < 8 or any(v is None for v in ins[:8]):
        raise NodeError("needs eight inputs")
    a, a_s, a_zp, b, b_s, b_zp, y_s, y_zp = ins[:8]
    assert a is not None and b is not None and y_zp is not None
    acc = qmatmul(imp, a, b, a_zp, b_zp)
    scales = []
    for v, what in ((a_s, "a_scale"), (b_s, "b_scale"), (y_s, "y_scale")):
        if not isinstance(v, Const):
            raise RunTimeInput(what, v)
        scales.append(v.array.astype(np.float32).reshape(-1))
    # As onnxruntime: (a_scale * b_scale) / y_scale in f32, per column of b.
    mult = (scales[0] * scales[1]) / scales[2]
    m: Value = Const(mult.reshape(()) if mult.size == 1 else mult)
    zp = reshape(imp, y_zp, ())
    return [Tensor(imp.emit(RequantizeOp, [imp.t(acc), imp.t(m), imp.t(zp)], imp.shape(acc), imp.elem(y_zp)))]


def qconv(imp: Importer, x: Value, w: Value, zx: Value | None, zw: Value | None,
          attrs: dict[str, Any]) -> tuple[Value, bool]:
    """The i32 accumulator of an integer convolution (rank 4) and whether the
    caller must drop the unit height of a 1-D convolution."""
    x4, w4, squeeze, props, shape = _conv_geometry(imp, x, w, attrs)
    zx_v = reshape(imp, _zero_point(imp, zx, imp.elem(x), "x zero point"), ())
    zw_v = _zero_point(imp, zw, imp.elem(w), "w zero point")
    if math.prod(imp.shape(zx_v)) != 1:
        raise Unsupported("a per-channel x_zero_point")
    zw_v = reshape(imp, zw_v, () if math.prod(imp.shape(zw_v)) == 1 else (shape[1],))
    acc = Tensor(imp.emit(QConv2dOp, [imp.t(x4), imp.t(w4), imp.t(zx_v), imp.t(zw_v)], shape, "i32",
                          **props))
    return acc, squeeze


@converter("ConvInteger")
def _conv_integer(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x, w = _two(ins)
    acc, squeeze = qconv(imp, x, w, ins[2] if len(ins) > 2 else None, ins[3] if len(ins) > 3 else None, attrs)
    return [_unsqueezed(imp, acc, squeeze)]


@converter("QLinearConv")
def _qlinear_conv(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    if len(ins) < 8 or any(v is None for v in ins[:8]):
        raise NodeError("needs eight inputs")
    x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp = ins[:8]
    b = ins[8] if len(ins) > 8 else None
    assert x is not None and w is not None and y_zp is not None
    acc, squeeze = qconv(imp, x, w, x_zp, w_zp, attrs)
    o = imp.shape(acc)[1]
    if b is not None:
        if imp.elem(b) != "i32":
            raise NodeError("B must be int32")
        acc = binary(imp, AddOp, acc, reshape(imp, b, (o, 1, 1)))
    scales = []
    for v, what in ((x_s, "x_scale"), (w_s, "w_scale"), (y_s, "y_scale")):
        if not isinstance(v, Const):
            raise RunTimeInput(what, v)
        scales.append(v.array.astype(np.float32).reshape(-1))
    # As onnxruntime: (x_scale * w_scale[o]) / y_scale in f32.
    mult = (scales[0] * scales[1]) / scales[2]
    m: Value = Const(mult.reshape(()) if mult.size == 1 else mult.reshape(o, 1, 1))
    zp = reshape(imp, y_zp, ())
    y = Tensor(imp.emit(RequantizeOp, [imp.t(acc), imp.t(m), imp.t(zp)], imp.shape(acc), imp.elem(y_zp)))
    return [_unsqueezed(imp, y, squeeze)]


@converter("GatherElements")
def _gather_elements(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x, idx = _two(ins)
    ax = _axis(int(attrs.get("axis", 0)), len(imp.shape(x)))
    if imp.elem(idx) not in ("i32", "i64"):
        raise NodeError(f"indices must be int32 or int64, not {imp.elem(idx)}")
    return [Tensor(imp.emit(GatherElementsOp, [imp.t(x), imp.t(idx)], imp.shape(idx), imp.elem(x), axis=ax))]


@converter("OneHot")
def _one_hot(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    if len(ins) < 3 or any(v is None for v in ins[:3]):
        raise NodeError("needs indices, depth and values")
    idx, depth_v, values = ins[0], ins[1], ins[2]
    assert idx is not None and values is not None
    depth = _scalar_input(depth_v, "OneHot depth")
    if not isinstance(values, Const) or values.array.size != 2:
        raise RunTimeInput("values", values)
    assert depth is not None
    off, on = (float(v) for v in values.array.reshape(-1).astype(np.float64))
    elem = imp.elem(values)
    if np.float32(off) != off or np.float32(on) != on:
        raise Unsupported("values not exact in f32")
    s = imp.shape(idx)
    ax = _axis(int(attrs.get("axis", -1)), len(s) + 1)
    out = (*s[:ax], int(depth), *s[ax:])
    return [Tensor(imp.emit(OneHotOp, [imp.t(idx)], out, elem, axis=ax, on=on, off=off))]


@converter("TopK")
def _topk(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    x = _one(ins)
    s = imp.shape(x)
    ax = _axis(int(attrs.get("axis", -1)), len(s))
    if imp.opset < 10:
        k = int(attrs.get("k", 0))
    else:
        kk = _ints_input(ins[1] if len(ins) > 1 else None, "TopK k")
        if kk is None or len(kk) != 1:
            raise NodeError("k must be one value")
        k = kk[0]
    if not 0 <= k <= s[ax]:
        raise NodeError(f"k {k} is outside 0..{s[ax]}")
    out = s[:ax] + (k,) + s[ax + 1:]
    vals, idx = imp.emit_results(TopkOp, [imp.t(x)], [(out, imp.elem(x)), (out, "i64")], axis=ax,
                                 largest=bool(attrs.get("largest", 1)))
    return [Tensor(vals), Tensor(idx)]


@converter("ScatterElements", "Scatter")
def _scatter_elements(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    if len(ins) < 3 or any(v is None for v in ins[:3]):
        raise NodeError("needs data, indices and updates")
    x, idx, upd = ins[0], ins[1], ins[2]
    assert x is not None and idx is not None and upd is not None
    ax = _axis(int(attrs.get("axis", 0)), len(imp.shape(x)))
    if imp.elem(idx) not in ("i32", "i64"):
        raise NodeError(f"indices must be int32 or int64, not {imp.elem(idx)}")
    reduction = str(attrs.get("reduction", "none"))
    return [Tensor(imp.emit(ScatterElementsOp, [imp.t(x), imp.t(idx), imp.t(upd)], imp.shape(x), imp.elem(x),
                            axis=ax, reduction=reduction))]


# Converters kept in their own modules register themselves on import.
from mlvm.frontend.onnx import composites as _composite_ops  # noqa: E402,F401
from mlvm.frontend.onnx import conv_transpose as _conv_transpose_ops  # noqa: E402,F401
from mlvm.frontend.onnx import einsum as _einsum_ops  # noqa: E402,F401
from mlvm.frontend.onnx import grid_sample as _grid_sample_ops  # noqa: E402,F401
from mlvm.frontend.onnx import losses as _loss_ops  # noqa: E402,F401
from mlvm.frontend.onnx import pooling as _pooling_ops  # noqa: E402,F401
from mlvm.frontend.onnx import resize as _resize_ops  # noqa: E402,F401
from mlvm.frontend.onnx import loops as _loop_ops  # noqa: E402,F401
