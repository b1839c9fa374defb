"""Neural-network ops: transpose, slice, concat, softmax, layer_norm, gelu,
conv2d and pool2d.

Each class is the single entry for its op, as in `ops.py`: IRDL definition,
shape rule (`verify_`), numpy reference and C lowering. Property types
follow the dialect contract: integers are i64, floats f32, lists
`array<i64>`, kinds strings. Data movement ops (transpose, slice, concat)
take f32 or i32; the others compute in f32.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from math import prod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlvm.dialect.base import MlvmOp, result_shape, type_str
from mlvm.dialect.elements import ALL
from mlvm.dialect.ops import (
    A_PANEL,
    PANEL_MULTIPLE,
    MatmulOp,
    ParamOp,
    UnaryOp,
    _f32_prop,
    a_panel_count,
    from_apanels,
    from_panels,
    from_wino,
    single_row_n,
)
from mlvm.dialect.shapes import LAYER_NORM_EPS, Shape, contiguous_strides, normalize_axis

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering

DATA_ELEMS = ALL  # data movement moves bits: every element type


def _ints(op: MlvmOp, name: str, default: Sequence[int] | None = None) -> tuple[int, ...]:
    """An `array<i64>` property, or `default` when it is left out."""
    attr = op.properties.get(name)
    if attr is None:
        if default is None:
            raise VerifyException(f"{op.name}: missing property '{name}'")
        return tuple(default)
    assert isinstance(attr, DenseArrayBase)
    return tuple(int(v) for v in attr.get_values())


def _int(op: MlvmOp, name: str, default: int | None = None) -> int:
    attr = op.properties.get(name)
    if attr is None:
        if default is None:
            raise VerifyException(f"{op.name}: missing property '{name}'")
        return default
    assert isinstance(attr, IntegerAttr)
    return int(attr.value.data)


def _str(op: MlvmOp, name: str, default: str) -> str:
    attr = op.properties.get(name)
    if attr is None:
        return default
    assert isinstance(attr, StringAttr)
    return attr.data


def _lst(vals: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in vals) + "]"


def _norm_axis(op: MlvmOp, axis: int, rank: int, what: str) -> int:
    a = normalize_axis(axis, rank)
    if a is None:
        raise VerifyException(f"{op.name}: axis {axis} is out of range for {what}")
    return a


def _expect_len(op: MlvmOp, name: str, vals: Sequence[int], n: int, what: str) -> None:
    if len(vals) != n:
        raise VerifyException(
            f"{op.name}: {name} {_lst(vals)} must have {n} entries ({what})"
        )


def _expect_positive(op: MlvmOp, name: str, vals: Sequence[int]) -> None:
    if any(v < 1 for v in vals):
        raise VerifyException(f"{op.name}: {name} {_lst(vals)} must be >= 1")


# --------------------------------------------------------------------------
# Data movement: transpose, slice, concat
# --------------------------------------------------------------------------


def _gather(cg: Lowering, op: MlvmOp, strides: Sequence[int], src: str) -> None:
    """op's result (contiguous over its shape) = src read at `strides`."""
    shape = result_shape(op)
    if prod(shape) == 0:
        return
    it = cg.iter(shape, [strides, contiguous_strides(shape)])
    bits = 8 * op.elem_entry(op.results[0], "result").size
    cg.stmt(f"mlvm_gather_b{bits}({it}, {src}, {cg.ptr(op.results[0])});")


@irdl_op_definition
class TransposeOp(MlvmOp):
    """result[i_0, ..., i_r] = operand[j] with j[perm[d]] = i_d (numpy's transpose)."""

    name = "mlvm.transpose"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    perm = prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def norm_perm(self) -> tuple[int, ...]:
        shape = self.shape_of(self.operand, "operand")
        perm = _ints(self, "perm")
        if sorted(perm) != list(range(len(shape))):
            raise VerifyException(
                f"{self.name}: perm {_lst(perm)} is not a permutation of "
                f"0..{len(shape) - 1} for operand {type_str(self.operand.type)}"
            )
        return perm

    def verify_(self) -> None:
        elem = self.expect_elem(self.operand, "operand", DATA_ELEMS)
        shape = self.shape_of(self.operand, "operand")
        perm = self.norm_perm()
        self.expect_result(0, tuple(shape[p] for p in perm), elem)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [np.transpose(inputs[0], self.norm_perm()).copy(order="C")]

    def lower(self, cg: Lowering) -> None:
        perm = self.norm_perm()
        own = contiguous_strides(self.shape_of(self.operand, "operand"))
        _gather(cg, self, [own[p] for p in perm], cg.ptr(self.operand))


@irdl_op_definition
class SliceOp(MlvmOp):
    """result[i] = operand[start + i * stride] per dim; the result type gives
    the sizes. `stride` may be negative (walks backwards); it defaults to 1."""

    name = "mlvm.slice"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    start = prop_def(DenseArrayBase.constr(i64))
    stride = opt_prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def params(self) -> tuple[Shape, tuple[int, ...], tuple[int, ...]]:
        """(result sizes, start, stride), verified against the operand."""
        shape = self.shape_of(self.operand, "operand")
        rank = len(shape)
        what = f"one per dim of operand {type_str(self.operand.type)}"
        start = _ints(self, "start")
        stride = _ints(self, "stride", (1,) * rank)
        _expect_len(self, "start", start, rank, what)
        _expect_len(self, "stride", stride, rank, what)
        if any(s == 0 for s in stride):
            raise VerifyException(f"{self.name}: stride {_lst(stride)} has a zero entry")
        sizes = self.shape_of(self.result, "result")
        if len(sizes) != rank:
            raise VerifyException(
                f"{self.name}: result {type_str(self.result.type)} must have the rank "
                f"of operand {type_str(self.operand.type)}"
            )
        for d in range(rank):
            if sizes[d] == 0:
                continue
            first, last = start[d], start[d] + (sizes[d] - 1) * stride[d]
            for idx in (first, last):
                if not 0 <= idx < shape[d]:
                    raise VerifyException(
                        f"{self.name}: dim {d}: start {start[d]}, stride {stride[d]}, "
                        f"size {sizes[d]} reads index {idx}, outside 0..{shape[d] - 1} "
                        f"of operand {type_str(self.operand.type)}"
                    )
        return sizes, start, stride

    def verify_(self) -> None:
        elem = self.expect_elem(self.operand, "operand", DATA_ELEMS)
        sizes, _, _ = self.params()
        self.expect_result(0, sizes, elem)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        sizes, start, stride = self.params()
        x = inputs[0]
        if x.ndim == 0:
            return [x.copy()]
        idx = [s + st * np.arange(n) for s, st, n in zip(start, stride, sizes)]
        return [x[np.ix_(*idx)].copy(order="C")]

    def lower(self, cg: Lowering) -> None:
        sizes, start, stride = self.params()
        if prod(sizes) == 0:
            return
        own = contiguous_strides(self.shape_of(self.operand, "operand"))
        off = sum(s * o for s, o in zip(start, own))
        src = cg.ptr(self.operand) + (f" + {off}" if off else "")
        _gather(cg, self, [st * o for st, o in zip(stride, own)], src)


@irdl_op_definition
class ConcatOp(MlvmOp):
    """Operands joined along `axis`; every other dim must agree."""

    name = "mlvm.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr.constr(type=i64))
    traits = traits_def(Pure())

    def norm_axis(self) -> int:
        if not self.inputs:
            raise VerifyException(f"{self.name}: needs at least one operand")
        s0 = self.shape_of(self.inputs[0], "operand 0")
        if not s0:
            raise VerifyException(
                f"{self.name}: operand 0 {type_str(self.inputs[0].type)} must have rank >= 1"
            )
        return _norm_axis(self, _int(self, "axis"), len(s0),
                          f"operand 0 {type_str(self.inputs[0].type)}")

    def verify_(self) -> None:
        ax = self.norm_axis()
        e0 = self.expect_elem(self.inputs[0], "operand 0", DATA_ELEMS)
        s0 = self.shape_of(self.inputs[0], "operand 0")
        total = 0
        for k, v in enumerate(self.inputs):
            what = f"operand {k}"
            e = self.expect_elem(v, what, DATA_ELEMS)
            s = self.shape_of(v, what)
            if e != e0 or len(s) != len(s0) or any(
                a != b for d, (a, b) in enumerate(zip(s, s0)) if d != ax
            ):
                raise VerifyException(
                    f"{self.name}: {what} {type_str(v.type)} does not match operand 0 "
                    f"{type_str(self.inputs[0].type)} outside axis {ax}"
                )
            total += s[ax]
        self.expect_result(0, s0[:ax] + (total,) + s0[ax + 1 :], e0)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [np.concatenate(list(inputs), axis=self.norm_axis())]

    def lower(self, cg: Lowering) -> None:
        ax = self.norm_axis()
        out = result_shape(self)
        rows, inner = prod(out[:ax]), prod(out[ax + 1 :])
        out_cols = out[ax] * inner
        if rows == 0 or out_cols == 0:
            return
        col = 0
        dst = cg.ptr(self.result)
        bits = 8 * self.elem_entry(self.result, "result").size
        for k, v in enumerate(self.inputs):
            cols = self.shape_of(v, f"operand {k}")[ax] * inner
            if cols:
                at = f"{dst} + {col}" if col else dst
                cg.stmt(
                    f"mlvm_copy2d_b{bits}({rows}, {cols}, {cg.ptr(v)}, {cols}, {at}, {out_cols});"
                )
            col += cols


# --------------------------------------------------------------------------
# softmax, layer_norm
# --------------------------------------------------------------------------


def softmax_reference(x: np.ndarray, axis: int) -> np.ndarray:
    """exp(x - max) / sum(exp(x - max)) along `axis`, in f32."""
    with np.errstate(all="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return (e / np.sum(e, axis=axis, keepdims=True)).astype(np.float32)


def log_softmax_reference(x: np.ndarray, axis: int) -> np.ndarray:
    """z - log(sum(exp(z))) with z = x - max along `axis`, in f32."""
    with np.errstate(all="ignore"):
        z = x - np.max(x, axis=axis, keepdims=True)
        return (z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))).astype(np.float32)


class _SoftmaxBase(MlvmOp):
    """An op over the rows along `axis` of one f32 operand, result alike."""

    operand = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), IntegerAttr(-1, i64))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)
    KERNEL: ClassVar[str] = ""  # mlvm_<KERNEL>_f32(outer, n, inner, in, out)

    def rows_reference(self, x: np.ndarray, axis: int) -> np.ndarray:
        raise NotImplementedError

    def norm_axis(self) -> int:
        shape = self.shape_of(self.operand, "operand")
        if not shape:
            raise VerifyException(
                f"{self.name}: operand {type_str(self.operand.type)} must have rank >= 1"
            )
        return _norm_axis(self, _int(self, "axis", -1), len(shape),
                          f"operand {type_str(self.operand.type)}")

    def verify_(self) -> None:
        self.expect_elem(self.operand, "operand", ("f32",))
        self.norm_axis()
        self.expect_result(0, self.shape_of(self.operand, "operand"), "f32")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        if inputs[0].size == 0:
            return [inputs[0].copy()]
        return [self.rows_reference(inputs[0], self.norm_axis())]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.operand, "operand")
        ax = self.norm_axis()
        outer, n, inner = prod(shape[:ax]), shape[ax], prod(shape[ax + 1 :])
        if outer * n * inner == 0:
            return
        cg.stmt(
            f"mlvm_{self.KERNEL}_f32({outer}, {n}, {inner}, {cg.ptr(self.operand)}, "
            f"{cg.ptr(self.result)});"
        )


@irdl_op_definition
class SoftmaxOp(_SoftmaxBase):
    """exp(a - max(a)) / sum(exp(a - max(a))) along `axis` (default -1)."""

    name = "mlvm.softmax"
    KERNEL: ClassVar[str] = "softmax"

    def rows_reference(self, x: np.ndarray, axis: int) -> np.ndarray:
        return softmax_reference(x, axis)


@irdl_op_definition
class LogSoftmaxOp(_SoftmaxBase):
    """z - log(sum(exp(z))), z = a - max(a), along `axis` (default -1): the
    log of the softmax without its underflow."""

    name = "mlvm.log_softmax"
    KERNEL: ClassVar[str] = "log_softmax"

    def rows_reference(self, x: np.ndarray, axis: int) -> np.ndarray:
        return log_softmax_reference(x, axis)


def layer_norm_reference(
    x: np.ndarray, axes: Sequence[int], eps: float,
    gamma: np.ndarray | None, beta: np.ndarray | None,
) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * gamma + beta over `axes` (sorted), in f32.

    gamma and beta have the shape of x's dims at `axes`; they broadcast over
    the other dims.
    """
    ax = tuple(axes)
    with np.errstate(all="ignore"):
        mean = x.mean(axis=ax, keepdims=True, dtype=np.float32)
        d = x - mean
        var = (d * d).mean(axis=ax, keepdims=True, dtype=np.float32)
        y = d / np.sqrt(var + np.float32(eps))
        if gamma is not None and beta is not None:
            full = tuple(n if i in ax else 1 for i, n in enumerate(x.shape))
            y = y * gamma.reshape(full) + beta.reshape(full)
    return y.astype(np.float32)


@irdl_op_definition
class LayerNormOp(MlvmOp):
    """Normalise over `axes` (default [-1]): `(x - mean) / sqrt(var + eps)`,
    then `* gamma + beta` when both are given (shape: x's dims at `axes`)."""

    name = "mlvm.layer_norm"
    x = operand_def(TensorType)
    affine = var_operand_def(TensorType)
    result = result_def(TensorType)
    axes = opt_prop_def(DenseArrayBase.constr(i64), DenseArrayBase.from_list(i64, [-1]))
    eps = opt_prop_def(FloatAttr, FloatAttr(LAYER_NORM_EPS, Float32Type()))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x", "gamma", "beta")

    def norm_axes(self) -> tuple[int, ...]:
        shape = self.shape_of(self.x, "x")
        axes = _ints(self, "axes", (-1,))
        if not axes:
            raise VerifyException(f"{self.name}: axes must not be empty")
        seen: list[int] = []
        for a in axes:
            na = _norm_axis(self, a, len(shape), f"x {type_str(self.x.type)}")
            if na in seen:
                raise VerifyException(f"{self.name}: axis {a} is repeated in axes {_lst(axes)}")
            seen.append(na)
        return tuple(sorted(seen))

    def verify_(self) -> None:
        self.expect_elem(self.x, "x", ("f32",))
        shape = self.shape_of(self.x, "x")
        axes = self.norm_axes()
        _f32_prop(self, "eps")
        if len(self.affine) not in (0, 2):
            raise VerifyException(
                f"{self.name}: takes gamma and beta together or neither, got "
                f"{len(self.affine)} of them"
            )
        want = tuple(shape[a] for a in axes)
        for v, what in zip(self.affine, ("gamma", "beta")):
            self.expect_elem(v, what, ("f32",))
            if self.shape_of(v, what) != want:
                raise VerifyException(
                    f"{self.name}: {what} {type_str(v.type)} must have the shape "
                    f"{want} of x {type_str(self.x.type)} at axes {_lst(axes)}"
                )
        self.expect_result(0, shape, "f32")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        g, b = (inputs[1], inputs[2]) if len(inputs) == 3 else (None, None)
        return [layer_norm_reference(inputs[0], self.norm_axes(), _f32_prop(self, "eps"), g, b)]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.x, "x")
        axes = self.norm_axes()
        if prod(shape) == 0:
            return
        eps = cg.flt(_f32_prop(self, "eps"))
        g, b = (cg.ptr(self.affine[0]), cg.ptr(self.affine[1])) if self.affine else ("NULL", "NULL")
        x, out = cg.ptr(self.x), cg.ptr(self.result)
        rank = len(shape)
        if axes == tuple(range(rank - len(axes), rank)):  # trailing: rows of a matrix
            cols = prod(shape[a] for a in axes)
            cg.stmt(
                f"mlvm_layer_norm_f32({prod(shape) // cols}, {cols}, {eps}, {x}, {g}, {b}, {out});"
            )
            return
        own = contiguous_strides(shape)
        keep = [d for d in range(rank) if d not in axes]
        norm_shape = tuple(shape[a] for a in axes)
        outer = cg.iter(tuple(shape[d] for d in keep) or (1,), [tuple(own[d] for d in keep) or (0,)])
        inner = cg.iter(norm_shape, [tuple(own[a] for a in axes), contiguous_strides(norm_shape)])
        cg.stmt(
            f"mlvm_layer_norm_strided_f32({outer}, {inner}, {eps}, {x}, {g}, {b}, {out});"
        )


# --------------------------------------------------------------------------
# gelu
# --------------------------------------------------------------------------

GELU_MODES = ("tanh", "none")
_F = np.float32
# gelu(x) = 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3):
# the second form needs one exp and loses no accuracy where tanh(u) is near -1.
GELU_C3 = _F(0.044715)
GELU_M2K = _F(-2.0 * math.sqrt(2.0 / math.pi))
INV_SQRT2 = _F(1.0 / math.sqrt(2.0))
_erf64 = np.vectorize(math.erf, otypes=[np.float64])


def gelu_tanh_np(x: np.ndarray) -> np.ndarray:
    """x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3))), in f32, as the C computes it."""
    t = x * x
    t = t * x
    t = t * GELU_C3
    t = x + t
    t = t * GELU_M2K
    return x / (_F(1) + np.exp(t))


def gelu_erf_np(x: np.ndarray) -> np.ndarray:
    """0.5 x (1 + erf(x / sqrt(2))), in f32 (erf correctly rounded to f32), as
    h + h erf with h = x / 2, the C's order (x (1 + erf) would overflow near
    the largest floats)."""
    e = _erf64((x * INV_SQRT2).astype(np.float64)).astype(np.float32)
    h = _F(0.5) * x
    return h + h * e


@irdl_op_definition
class GeluOp(UnaryOp):
    """GELU. approximate = "none" (default): 0.5 x (1 + erf(x / sqrt 2));
    "tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed as
    x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3)))."""

    name = "mlvm.gelu"
    approximate = opt_prop_def(StringAttr, StringAttr("none"))

    NP_FNS: ClassVar[dict[str, Callable[..., Any]]] = {
        "tanh": gelu_tanh_np,
        "none": gelu_erf_np,
    }
    C_EXPRS: ClassVar[dict[str, str]] = {
        "tanh": "mlvm_gelu_tanh({0})",
        "none": "mlvm_gelu_erf({0})",
    }
    GELU_KERNELS: ClassVar[dict[str, str]] = {"tanh": "mlvm_gelu_tanh_f32", "none": "mlvm_gelu_erf_f32"}

    ELEMS: ClassVar[tuple[str, ...]] = ("f32",)
    KERNEL_FASTER: ClassVar[bool] = True  # either form's vector kernel

    def mode(self) -> str:
        m = _str(self, "approximate", "none")
        if m not in GELU_MODES:
            raise VerifyException(
                f"{self.name}: approximate '{m}' is not one of " + ", ".join(GELU_MODES)
            )
        return m

    def verify_(self) -> None:
        super().verify_()
        self.mode()

    def kernel_name(self) -> str:
        return self.GELU_KERNELS[self.mode()]

    def scalar_expr(self, args: Sequence[str]) -> str:
        return self.C_EXPRS[self.mode()].format(*args)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            return [np.asarray(self.NP_FNS[self.mode()](inputs[0])).astype(np.float32)]

    def lower(self, cg: Lowering) -> None:
        n = prod(result_shape(self))
        cg.stmt(f"{self.kernel_name()}({n}, {cg.ptr(self.operand)}, {cg.ptr(self.result)});")


# --------------------------------------------------------------------------
# conv2d, pool2d
# --------------------------------------------------------------------------


def _out_size(n: int, pad: int, k_eff: int, stride: int) -> int:
    return (n + pad - k_eff) // stride + 1


def _windows(op: MlvmOp, x_type: Any, h: int, w: int, kh: int, kw: int,
             strides: Sequence[int], padding: Sequence[int], dil: Sequence[int],
             what: str) -> tuple[int, int]:
    """Output height and width of a sliding window, verified."""
    _expect_len(op, "strides", strides, 2, "height, width")
    _expect_len(op, "padding", padding, 4, "top, left, bottom, right")
    _expect_positive(op, "strides", strides)
    if any(p < 0 for p in padding):
        raise VerifyException(f"{op.name}: padding {_lst(padding)} must be >= 0")
    ekh, ekw = dil[0] * (kh - 1) + 1, dil[1] * (kw - 1) + 1
    ph, pw = h + padding[0] + padding[2], w + padding[1] + padding[3]
    if ekh > ph or ekw > pw:
        raise VerifyException(
            f"{op.name}: the {what} {ekh}x{ekw} is larger than the padded input "
            f"{ph}x{pw} of x {type_str(x_type)}"
        )
    return _out_size(h, padding[0] + padding[2], ekh, strides[0]), _out_size(
        w, padding[1] + padding[3], ekw, strides[1]
    )


def conv2d_dims(self: MlvmOp, xv: SSAValue, wv: SSAValue, bias: SSAValue | None,
                w_shape: tuple[int, ...] | None = None, outputs: int | None = None) -> dict[str, int]:
    """Every size of a 2-D convolution of x (NCHW) by w (OIHW; w_shape where
    w is stored otherwise) with the op's strides / padding / dilations /
    groups properties, verified. `outputs`: the output channels, which
    Winograd weights in panels do not give exactly (the panels are padded)."""
    sx = self.shape_of(xv, "x")
    sw = self.shape_of(wv, "w") if w_shape is None else w_shape
    tx, tw = type_str(xv.type), type_str(wv.type)
    if len(sx) != 4:
        raise VerifyException(f"{self.name}: x {tx} must be rank 4 (NCHW)")
    n, c, h, w = sx
    groups = _int(self, "groups", 1)
    layout = _str(self, "w_layout", "oihw")
    if layout not in CONV_LAYOUTS:
        raise VerifyException(f"{self.name}: w_layout {layout!r} is not one of "
                              f"{', '.join(repr(k) for k in CONV_LAYOUTS)}")
    if layout == "ihwo" and groups != 1:
        # constant weights the compiler stores otherwise (PackWeightsPass)
        raise VerifyException(f"{self.name}: w_layout {layout} needs groups 1, not {groups}")
    if layout in WINO_LAYOUTS:
        planes = (WINO_LAYOUTS[layout] + 2) ** 2
        if len(sw) == 4 and sw[3] == A_PANEL:  # each plane in the GEMM's panels (ParamOp `wino`)
            o = outputs if outputs is not None else 0
            if sw[0] != planes or o < 1 or sw[1] != a_panel_count(o) or groups != 1:
                raise VerifyException(
                    f"{self.name}: w {tw} in panels must be [{planes}, ceil(O / {A_PANEL}), C, {A_PANEL}] "
                    f"for w_layout {layout}, O the result's {o} channels, groups 1")
            cg = sw[2]
        elif len(sw) != 3 or sw[0] != planes:
            raise VerifyException(f"{self.name}: w {tw} must be [{planes}, O, C] for w_layout {layout} "
                                  f"(or [{planes}, ceil(O / {A_PANEL}), C, {A_PANEL}] in panels)")
        else:
            o, cg = sw[1], sw[2]
        if (_ints(self, "strides", (1, 1)), _ints(self, "dilations", (1, 1))) != ((1, 1), (1, 1)):
            raise VerifyException(f"{self.name}: w_layout {layout} needs strides and dilations 1")
        kh, kw = 3, 3
    elif layout == "ihwo" and len(sw) == 5:  # in panels (ParamOp `panel`)
        if sw[4] < PANEL_MULTIPLE or sw[4] % PANEL_MULTIPLE:
            raise VerifyException(f"{self.name}: w {tw} in panels must be [P, C, KH, KW, width], "
                                  f"width a multiple of {PANEL_MULTIPLE}")
        cg, kh, kw, o = sw[1], sw[2], sw[3], sw[0] * sw[4]
    elif len(sw) != 4:
        raise VerifyException(f"{self.name}: w {tw} must be rank 4 (OIHW)")
    elif layout == "ihwo":
        cg, kh, kw, o = sw
    else:
        o, cg, kh, kw = sw
    strides = _ints(self, "strides", (1, 1))
    padding = _ints(self, "padding", (0, 0, 0, 0))
    dil = _ints(self, "dilations", (1, 1))
    if groups < 1:
        raise VerifyException(f"{self.name}: groups {groups} must be >= 1")
    if c % groups:
        raise VerifyException(
            f"{self.name}: groups {groups} does not divide the {c} input channels "
            f"of x {tx}"
        )
    if o % groups:
        raise VerifyException(
            f"{self.name}: groups {groups} does not divide the {o} output channels "
            f"of w {tw}"
        )
    if cg != c // groups:
        raise VerifyException(
            f"{self.name}: w {tw} has {cg} input channels per group, expected "
            f"{c // groups} (x {tx} has {c} channels, groups {groups})"
        )
    _expect_len(self, "dilations", dil, 2, "height, width")
    _expect_positive(self, "dilations", dil)
    if kh < 1 or kw < 1:
        raise VerifyException(f"{self.name}: w {tw} has an empty kernel")
    oh, ow = _windows(self, xv.type, h, w, kh, kw, strides, padding, dil,
                      "dilated kernel")
    if bias is not None:
        if self.shape_of(bias, "bias") != (o,):
            raise VerifyException(
                f"{self.name}: bias {type_str(bias.type)} must have shape ({o},), "
                f"one per output channel of w {tw}"
            )
    return dict(n=n, c=c, h=h, w=w, o=o, kh=kh, kw=kw, oh=oh, ow=ow,
                sh=strides[0], sw=strides[1], pt=padding[0], pl=padding[1],
                dh=dil[0], dw=dil[1], groups=groups)


# Winograd's layouts of a conv2d's w, and their m of F(m x m, 3x3).
WINO_LAYOUTS = {"wino23": 2, "wino43": 4}
# How a conv2d's w is stored (w_layout): the model's OIHW, or a layout
# mlvm-pack-weights gives constant weights.
CONV_LAYOUTS = ("oihw", "ihwo", *WINO_LAYOUTS)


def align64(n: int) -> int:
    return (n + 63) // 64 * 64


def conv2d_pointwise(d: Mapping[str, int]) -> bool:
    """A 1x1 convolution with stride 1 and no padding, which reads x in place."""
    return (d["kh"], d["kw"], d["sh"], d["sw"], d["pt"], d["pl"]) == (1, 1, 1, 1, 0, 0) \
        and (d["oh"], d["ow"]) == (d["h"], d["w"])


def conv2d_sums_in_place(d: Mapping[str, int]) -> bool:
    """mlvm_conv2d_scalar_applies (conv_scalar.c): where cores without
    vectors sum a conv2d's taps in place when it has no workspace (any but
    a pointwise one); the compiler then calls conv2d_direct_entry(d), so a
    firmware links that kernel alone."""
    return not conv2d_pointwise(d)


DIRECT4 = "mlvm_conv2d_direct4_f32"  # the entry without a one-channel pass


def conv2d_direct_entry(d: Mapping[str, int]) -> str:
    """The no-workspace entry of a conv2d that sums in place: the one
    without a one-channel pass where every group has a multiple of 4
    output channels, the one-channel pass alone where every group has one
    (depthwise), both passes otherwise: a firmware links only the passes
    its convolutions take."""
    og = d["o"] // d["groups"]
    return (DIRECT4 if og % 4 == 0 else
            "mlvm_conv2d_direct1_f32" if og == 1 else "mlvm_conv2d_direct_f32")


def conv2d_call(d: Mapping[str, int], layout: str, args: str, ws: str | None, fn: str,
                ctx: str, own_loops: bool = False) -> str:
    """The runtime call of a conv2d of dims `d` with weights in `layout`
    (args: its descriptor, x, w, bias and output), with its workspace (or
    None) and epilogue: each path has an entry of its own, so that on cores
    without vectors a firmware links the paths its convolutions take and no
    other."""
    ihwo = layout == "ihwo"
    if layout in WINO_LAYOUTS:  # its workspace is planned in any case (workspace_required)
        entry = "mlvm_conv2d_wino_f32" if WINO_LAYOUTS[layout] == 2 else "mlvm_conv2d_wino4_f32"
        return f"{entry}({args}, {ws or 'NULL'}, {fn}, {ctx});"
    if ihwo and conv2d_pointwise(d):
        return f"mlvm_conv2d_ihwo_pointwise_f32({args}, {fn}, {ctx});"
    if ihwo and ws is not None:
        return f"mlvm_conv2d_ihwo_ws_f32({args}, {ws}, {fn}, {ctx});"
    if ihwo:  # not planned by the compiler (weights packed without a workspace)
        return f"mlvm_conv2d_ihwo_f32({args}, NULL, {fn}, {ctx});"
    if ws is not None:
        return f"mlvm_conv2d_direct_ws_f32({args}, {ws}, {fn}, {ctx});"
    if not conv2d_sums_in_place(d):
        return f"mlvm_conv2d_pointwise_f32({args}, {fn}, {ctx});"
    entry = conv2d_direct_entry(d)
    if own_loops and fn == "mlvm_epilogue_clamp_f32":  # the clamp in the entry's own loop
        return f"{entry.removesuffix('_f32')}_clamp_f32({args}, {ctx});"
    return f"{entry}({args}, {fn}, {ctx});"


def conv2d_in_place(op: Conv2dOp) -> bool:
    """Whether conv2d_call calls the conv2d through a direct entry (weights
    OIHW, no workspace planned on it or on the fused op it heads, not a
    pointwise one)."""
    fused = op.parent_op()
    planned = "mlvm.workspace" in op.attributes or (
        fused is not None and fused.name == "mlvm.fused" and "mlvm.workspace" in fused.attributes)
    return op.layout() == "oihw" and not planned and conv2d_sums_in_place(op.dims())


def own_loop_epilogues(module: Operation) -> bool:
    """Whether the module's convolutions and products all take entries
    that link no GEMM on cores without vectors (conv2d_in_place, and
    matmuls of a single row): its activations and Linear biases then go
    through the entries that apply them in their own loop (the _clamp_f32
    and row bias forms), and its single rows, where all are narrower than
    16, through the narrow entries (ops.rows_narrow), so that such a
    firmware links no epilogue function and no sixteen-wide row code.
    Elsewhere the GEMM links both epilogue functions and the wide rows
    anyway, and those forms would only add code."""
    for op in module.walk():
        if isinstance(op, Conv2dOp) and not conv2d_in_place(op):
            return False
        if isinstance(op, MatmulOp) and single_row_n(op) is None:
            return False
    return True


#: The most in-place convolutions of blocks of four output channels a module
#: may have for each to be a loop nest of its own on cores without vectors
#: (taps_convs): one such function is about 400 bytes of Cortex-M4 code,
#: the runtime's shared four-channel pass with its entries about 1.3 KB.
TAPS_CONVS_MAX = 3


def taps_convs(module: Operation) -> bool:
    """Whether, on cores without vectors, each of the module's in-place
    convolutions with blocks of four output channels (conv2d_direct_entry's
    direct4) is summed by a generated loop nest of its own
    (conv2d_taps_function) instead of the runtime's shared pass: where the
    module takes own_loop_epilogues, there are at most TAPS_CONVS_MAX of
    them, each ending in nothing or a clamp, and no convolution links the
    shared pass anyway (the mixed entry). The loop nests' constants are the
    layer's: smaller code than the shared pass for a few layers, and fewer
    instructions (28x28 CNN: docs/embedded.md)."""
    from mlvm.dialect.fused import FusedOp

    if not own_loop_epilogues(module):
        return False
    count = 0
    for op in module.walk():
        if not isinstance(op, Conv2dOp) or not conv2d_in_place(op):
            continue
        entry = conv2d_direct_entry(op.dims())
        if entry == "mlvm_conv2d_direct_f32":
            return False
        if entry != DIRECT4:
            continue
        fused = op.parent_op()
        if isinstance(fused, FusedOp) and fused.clamp() is None:
            return False
        count += 1
    return 1 <= count <= TAPS_CONVS_MAX


def conv2d_taps_function(d: Mapping[str, int], name: str, bias: bool,
                         clamp: tuple[float, float, bool] | None, flt: Callable[[float], str]) -> str:
    """A static function `name(p, x, w, bias, out)` summing the conv2d of
    dims `d` (OIHW weights, a multiple of 4 output channels per group) on
    cores without vectors, with its sizes as constants: per image and block
    of four output channels, the bias, then tap by tap (input channel,
    kernel row, kernel column) the tap's four weights times the input over
    the outputs whose windows hold the tap inside the input (a rectangle,
    its bounds divided by constants), then the clamp. Each output's terms
    in the runtime's order (bias, then c, i, j; MLVM_MADD), so the same
    bits as mlvm_conv2d_direct4_clamp_f32. Under MLVM_SCALAR_CORE, as its
    call (conv2d_taps_call); p and act (the clamp's struct) are the call's,
    not read: the bounds are constants here."""
    g = d["groups"]
    cg, og = d["c"] // g, d["o"] // g
    taps = d["kh"] * d["kw"]
    ws, plane, inp = cg * taps, d["oh"] * d["ow"], d["h"] * d["w"]
    sh, sw = d["sh"], d["sw"]
    init = [f"bias[o + {k}]" if bias else "0.0f" for k in range(4)]
    lines = [
        "#ifdef MLVM_SCALAR_CORE",
        f"static void {name}(const mlvm_conv2d_t *p, const float *x, const float *w, const float *bias,",
        "    float *out, const void *act)",
        "{",
        "    mlvm_index_t n, o, c, i, j, oy, ox, y0, y1, x0, x1;",
        "    (void)p, (void)act;" + ("" if bias else " (void)bias;"),
        f"    for (n = 0; n < {d['n']}; ++n)",
        f"        for (o = 0; o < {d['o']}; o += 4) {{",
        f"            const float *xg = x + (n * {d['c']} + o / {og} * {cg}) * {inp};",
        f"            float *po = out + (n * {d['o']} + o) * {plane};",
        f"            for (j = 0; j < {plane}; ++j) {{",
        *(f"                po[{k * plane} + j] = {init[k]};" for k in range(4)),
        "            }",
        f"            for (c = 0; c < {cg}; ++c)",
        f"                for (i = 0; i < {d['kh']}; ++i) {{",
        f"                    const mlvm_index_t di = i * {d['dh']} - {d['pt']};",
        f"                    y0 = di < 0 ? ({sh - 1} - di) / {sh} : 0;",
        f"                    y1 = {d['h'] - 1} - di < 0 ? 0 : ({d['h'] - 1} - di) / {sh} + 1;",
        f"                    y1 = y1 < {d['oh']} ? y1 : {d['oh']};",
        f"                    for (j = 0; j < {d['kw']}; ++j) {{",
        f"                        const mlvm_index_t dj = j * {d['dw']} - {d['pl']};",
        f"                        const float *q = w + o * {ws} + c * {taps} + i * {d['kw']} + j;",
        f"                        const float q0 = q[0], q1 = q[{ws}], q2 = q[{2 * ws}], q3 = q[{3 * ws}];",
        f"                        x0 = dj < 0 ? ({sw - 1} - dj) / {sw} : 0;",
        f"                        x1 = {d['w'] - 1} - dj < 0 ? 0 : ({d['w'] - 1} - dj) / {sw} + 1;",
        f"                        x1 = x1 < {d['ow']} ? x1 : {d['ow']};",
        "                        for (oy = y0; oy < y1 && x0 < x1; ++oy) { /* (no pointer past the input) */",
        f"                            const float *xr = xg + c * {inp} + (oy * {sh} + di) * {d['w']} + x0 * {sw} + dj;",
        f"                            float *r = po + oy * {d['ow']};",
        f"                            for (ox = x0; ox < x1; ++ox, xr += {sw}) {{",
        "                                const float v = *xr;",
        f"                                MLVM_MADD(r[ox], v, q0), MLVM_MADD(r[{plane} + ox], v, q1);",
        f"                                MLVM_MADD(r[{2 * plane} + ox], v, q2), MLVM_MADD(r[{3 * plane} + ox], v, q3);",
        "                            }",
        "                        }",
        "                    }",
        "                }",
    ]
    if clamp is not None:
        lo, hi, relu = clamp
        lines += [f"            for (j = 0; j < {4 * plane}; ++j) {{", "                const float h = po[j];"]
        if relu:  # mlvm_clamp_run's rules (kernels/clamp.h)
            lines.append("                po[j] = h < 0.0f ? 0.0f : h;")
        else:
            lines += [f"                const float m = !(h <= {flt(lo)}) ? h : {flt(lo)};",
                      f"                po[j] = !(m >= {flt(hi)}) ? m : {flt(hi)};"]
        lines.append("            }")
    lines += ["        }", "}", "#endif"]
    return "\n".join(lines)


def conv2d_taps_call(cg: Lowering, conv: Conv2dOp, args: str, call: str,
                     clamp: tuple[float, float, bool] | None, fn: str, ctx: str) -> str:
    """`call`, or, where the module takes taps_convs and `conv` is an
    in-place (conv2d_in_place) direct4 one ending in nothing or a clamp,
    its own loop nest (conv2d_taps_function) on cores without vectors and
    `call` elsewhere; args: the call's descriptor, x, w, bias and output."""
    d = conv.dims()
    if not (cg.taps_convs() and conv2d_in_place(conv) and conv2d_direct_entry(d) == DIRECT4
            and (clamp is not None or fn == "NULL")):
        return call
    bias = conv.bias is not None
    name = cg.function(lambda nm: conv2d_taps_function(d, nm, bias, clamp, cg.flt))
    return f"\n#ifdef MLVM_SCALAR_CORE\n{name}({args}, {ctx});\n#else\n{call}\n#endif\n"


def conv2d_phase_plane(d: Mapping[str, int]) -> tuple[int, int]:
    """Rows and row pitch of one stride phase of the padded input copies of
    conv.c and qconv_ws.c (the padded window the outputs read, split by the
    strides: window.h's mlvm_phases_of)."""
    hp = (d["oh"] - 1) * d["sh"] + (d["kh"] - 1) * d["dh"] + 1
    wp = (d["ow"] - 1) * d["sw"] + (d["kw"] - 1) * d["dw"] + 1
    return -(-hp // d["sh"]), -(-wp // d["sw"])


def conv2d_workspace_bytes(d: Mapping[str, int]) -> int:
    """mlvm_conv2d_workspace (conv.c) for conv2d_dims `d`: the padded,
    stride-phased copy of one group's input (of the whole image's, for
    groups of fewer than 4 output channels), its tap offsets and, for
    kernels wider than one column, the outputs at the copy's row pitch;
    0 where the kernel takes a path without workspace."""
    g = d["groups"]
    cg, og = d["c"] // g, d["o"] // g
    pointwise = conv2d_pointwise(d)
    # conv.c's flat_ok: depthwise, stride 1, "same" width, kernels <= 5 wide
    flat = og < 4 and d["c"] == g and (d["sh"], d["sw"]) == (1, 1) and d["ow"] == d["w"] \
        and d["kw"] <= 5 and d["ow"] <= 256
    if pointwise or flat or d["oh"] == 0 or d["ow"] == 0:
        return 0
    hq, wq = conv2d_phase_plane(d)
    n = (d["oh"] - 1) * wq + d["ow"]
    taps = align64(cg * d["kh"] * d["kw"] * 8)
    # depthwise-like groups copy all channels of an image at once
    chans = d["c"] if og < 4 else cg
    phases = align64((chans * d["sh"] * d["sw"] * hq * wq + 64) * 4)  # + MLVM_WS_SLACK
    rows = 0 if wq == d["ow"] else align64(og * n * 4)
    return taps + phases + rows


# conv_wino.c's MLVM_WINO_BLOCK_BYTES and MLVM_WINO_MIN_TILES
WINO_BLOCK_BYTES = 512 * 1024
WINO_MIN_TILES = 128


def conv2d_wino_workspace_bytes(d: Mapping[str, int], m: int = 2) -> int:
    """mlvm_conv2d_wino_workspace (m = 2) or mlvm_conv2d_wino4_workspace (m
    = 4; conv_wino.c) for conv2d_dims `d`: the row passes of a block of tile
    rows (Z), one channel's outputs (y), the transformed inputs V [np][C][ld]
    and the products M [np][O][ld], np = (m + 2)^2."""
    if d["n"] * d["o"] == 0 or d["oh"] * d["ow"] == 0:
        return 0
    planes = (m + 2) * (m + 2)
    tx, ty = -(-d["ow"] // m), -(-d["oh"] // m)
    rows = WINO_BLOCK_BYTES // (planes * (d["c"] + d["o"]) * 4 * tx)
    if rows * tx < WINO_MIN_TILES:
        rows = -(-WINO_MIN_TILES // tx)
    rows = min(rows, d["n"] * ty)
    ld = _round_up(rows * tx, 16) + 16
    zs = (rows + 1) * tx + 16
    return (align64(m * (m + 2) * zs * 4) + align64(m * m * ld * 4)
            + align64(planes * d["c"] * ld * 4) + align64(planes * d["o"] * ld * 4))


def conv2d_wino_applies(d: Mapping[str, int]) -> bool:
    """The convolutions mlvm_conv2d_wino_f32 computes: 3x3, stride 1,
    dilation 1 (any padding and groups)."""
    return (d["kh"], d["kw"], d["sh"], d["sw"], d["dh"], d["dw"]) == (3, 3, 1, 1, 1, 1)


def conv2d_wino_panels(d: Mapping[str, int]) -> bool:
    """Whether a Winograd conv2d's transformed weights go into its GEMM's
    panels, each plane [ceil(O / 24)][C][24] (the descriptor's w_panel):
    one group and at least two panels of outputs. The planes' GEMMs have
    few columns (49 tiles on a 14x14 map), so their weights are most of
    what they read (256 channels on 14x14, weights from memory: 0.85x the
    time; 64 channels: the same time)."""
    return d["groups"] == 1 and d["o"] >= 2 * A_PANEL


def conv2d_prefers_wino(d: Mapping[str, int]) -> bool:
    """Whether Winograd's F(2x2, 3x3) (conv_wino.c) beats the direct
    kernels for conv2d_dims `d`, given a workspace (channels counted per
    group). Fitted to both kernels
    side by side in one process (AMD Zen 4, AVX-512 and AVX2 builds, one
    thread): 1.2x-2x faster for 16 to 512 channels on maps from 56x56 down
    to 16x16 (8x8 from 32 channels, 7x7 from 128); slower where the
    transforms outweigh the products (16 channels on 12x12 or smaller, 64
    on 6x6 or smaller) or where a third of the tiles' outputs would fall
    outside an odd-sized small map (5x5, 3x3). Past 1 MiB of transformed
    weights, each of them must serve at least 32 tiles per call: ResNet-50's
    512 channels on 7x7 at batch 1 (16 tiles, 16 MiB streamed per image)
    ran 1.27x onnxruntime's time in the model, the direct kernel about
    1.1x."""
    if not conv2d_wino_applies(d):
        return False
    cg, og = d["c"] // d["groups"], d["o"] // d["groups"]
    few = min(cg, og)  # per group: depthwise convolutions have 1
    if few < 16:
        return False
    plane = d["oh"] * d["ow"]
    tiles = ((d["oh"] + 1) // 2) * ((d["ow"] + 1) // 2)
    if 4 * plane < 3 * 4 * tiles:  # under 3/4 of the computed outputs kept
        return False
    if 16 * cg * d["o"] * 4 > 1024 * 1024 and d["n"] * tiles < 32:
        return False
    return plane >= (256 if few < 32 else 64 if few < 128 else 49)


def conv2d_wino_tile(d: Mapping[str, int]) -> int:
    """m of the Winograd's F(m x m, 3x3) conv2d_prefers_wino's convolutions
    take: 4 on maps of 24x24 and more (36 multiply-adds per 16 outputs
    where F(2x2, 3x3) takes 64; its transforms cost more per tile, and it
    loses on smaller maps), side by side in one C program (AMD Zen 4,
    AVX-512): F(4x4) 0.70x F(2x2)'s time on 56x56 and 224x224 with 64
    channels and on 28x28 with 512, 0.83x with 128, 0.86x-0.88x on 32x32
    with 16; 1.08x-2.15x on 16x16, 14x14 and 8x8."""
    # (a 24x24 map has 36 tiles of 4x4: conv2d_prefers_wino's 32 tiles per
    # call for large weights hold for F(4x4) too)
    return 4 if d["oh"] >= 24 and d["ow"] >= 24 else 2


def _round_up(v: int, m: int) -> int:
    return -(-v // m) * m


def conv2d_prefers_ihwo(d: Mapping[str, int]) -> bool:
    """Whether the channels-in-lanes kernel (mlvm_conv2d_ihwo_f32) beats the
    NCHW one for conv2d_dims `d`, given a workspace (or a 1x1 stride-1
    convolution, which needs none). Fitted to side-by-side timings of both
    kernels (AMD Zen 4, one layer + ReLU, both kernels in one process).

    Long contractions: 512 to 4608 taps (2304 when strided) over an input
    of at most 2 MiB, with the output channels a multiple of 32 (their
    weights in panels, pack_weights.py). Measured on ResNet-50's layers
    (AVX-512 and AVX2 builds, after the AVX2 tiles began to sum such
    contractions in slices): 0.72x-0.95x the NCHW kernel's time with
    AVX-512 (1x1 layers of 512 to 2048 channels on 28x28 to 7x7, 3x3 ones
    of 128 to 512, strided or not), 0.77x-1.04x with AVX2. Kept out:
    strided 3x3 layers of 512 channels (4608 taps: 1.14x with AVX2), and
    output channels not a multiple of 32 (SqueezeNet's 1000 of 512 on
    13x13, its weights in rows of all channels: 1.2x with AVX-512, where
    1024 took 0.95x; 40 of 512: 1.17x with AVX2). An earlier fit, made
    before the weights went into panels (each tap's row of a sliver then
    inside a row of all channels), had these layers at 1.06x-1.24x.

    Elsewhere a lane-use model: NCHW vectorises the output positions at
    the input copy's row pitch (and copies the rows out when the pitch is
    wider: 10 % off), this kernel slivers of 32 output channels. It needs
    at least one sliver, at most 2304 taps, and 5 % fuller lanes (its
    transposed stores cost a little); its slivers each read all of the
    input again, so past 64 output channels the input must stay in cache
    (512 KiB; strided, 64 KiB). Fitted on maps of 3x3 to 56x56 with up to
    64 channels (0.5x-0.9x) and on Inception's and VGG's layers
    (0.80x-0.90x for 3x3 layers of 96 to 256 channels on 7x7 to 28x28).
    With fewer than 512 taps NCHW wins on maps it fills (1.03x-1.4x from
    64 to 256 input channels, ResNet-50's 56x56 and 28x28 layers and
    Inception's 27x27 ones)."""
    if d["groups"] != 1 or d["o"] < 32 or d["oh"] * d["ow"] == 0:
        return False
    taps, in_bytes = d["c"] * d["kh"] * d["kw"], d["c"] * d["h"] * d["w"] * 4
    strided = (d["sh"], d["sw"]) != (1, 1)
    if 512 <= taps <= (2304 if strided else 4608) and in_bytes <= 2 * 1024 * 1024 and d["o"] % 32 == 0:
        return True
    if taps > 2304:
        return False
    if d["o"] > 64 and in_bytes > (64 if strided else 512) * 1024:
        return False
    plane = d["oh"] * d["ow"]
    if conv2d_pointwise(d):
        nchw = plane / _round_up(plane, 16)
    else:
        _, wq = conv2d_phase_plane(d)
        nchw = plane / _round_up((d["oh"] - 1) * wq + d["ow"], 16) \
            * (0.9 if wq != d["ow"] else 1.0)
    return d["o"] / _round_up(d["o"], 32) >= 1.05 * nchw


class ConvWindowOp(MlvmOp):
    """The window properties conv2d and qconv2d share (see conv2d_dims)."""

    strides = opt_prop_def(DenseArrayBase.constr(i64), DenseArrayBase.from_list(i64, [1, 1]))
    padding = opt_prop_def(DenseArrayBase.constr(i64), DenseArrayBase.from_list(i64, [0, 0, 0, 0]))
    dilations = opt_prop_def(DenseArrayBase.constr(i64), DenseArrayBase.from_list(i64, [1, 1]))
    groups = opt_prop_def(IntegerAttr.constr(type=i64), IntegerAttr(1, i64))


@irdl_op_definition
class Conv2dOp(ConvWindowOp):
    """2-D convolution (cross-correlation), x NCHW, w OIHW with I = C / groups,
    optional bias (O). padding is [top, left, bottom, right] of zeros."""

    name = "mlvm.conv2d"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    # "ihwo": w is stored [C][KH][KW][O], or [O / P][C][KH][KW][P] in panels of
    # P channels (a multiple of 32); "wino23" / "wino43": [16 or 36][O][C]
    # for Winograd, or [16 or 36][ceil(O / 24)][C][24] with each plane in
    # its GEMM's panels (set by mlvm-pack-weights on constant weights; see
    # conv2d_prefers_ihwo, conv2d_prefers_wino, conv2d_wino_tile and
    # conv2d_wino_panels)
    w_layout = opt_prop_def(StringAttr)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x", "w", "bias")

    def dims(self) -> dict[str, int]:
        """Every size of the convolution, verified."""
        self.expect_elem(self.x, "x", ("f32",))
        self.expect_elem(self.w, "w", ("f32",))
        if self.bias is not None:
            self.expect_elem(self.bias, "bias", ("f32",))
        outputs = None
        if self.layout() in WINO_LAYOUTS:  # panels: O from the result
            sr = self.shape_of(self.result, "result")
            outputs = sr[1] if len(sr) == 4 else None
        return conv2d_dims(self, self.x, self.w, self.bias, outputs=outputs)

    def verify_(self) -> None:
        d = self.dims()
        self.expect_result(0, (d["n"], d["o"], d["oh"], d["ow"]), "f32")
        owner = self.w.owner
        wino = owner.wino_dims() if isinstance(owner, ParamOp) else None
        if wino is not None and (self.layout() not in WINO_LAYOUTS or wino[1] != d["o"]):
            raise VerifyException(
                f"{self.name}: w is a {wino[1]}-output weight stored for Winograd; this convolution has "
                f"{d['o']} outputs and w_layout {self.layout()}")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        d = self.dims()
        x, w = inputs[0], inputs[1]
        if self.ihwo():
            if w.ndim == 5:
                w = from_panels(w, d["o"])
            w = np.transpose(w, (3, 0, 1, 2))
        elif self.layout() in WINO_LAYOUTS:
            if w.ndim == 4:
                w = np.stack([from_apanels(plane, d["o"]) for plane in w])
            w = from_wino(w)
        padding = _ints(self, "padding", (0, 0, 0, 0))
        xp = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[2]), (padding[1], padding[3])))
        g = d["groups"]
        cg, og = d["c"] // g, d["o"] // g
        out = np.zeros((d["n"], g, og, d["oh"], d["ow"]), np.float32)
        wg = w.reshape(g, og, cg, d["kh"], d["kw"])
        for i in range(d["kh"]):
            for j in range(d["kw"]):
                r0, c0 = i * d["dh"], j * d["dw"]
                patch = xp[:, :, r0 : r0 + d["sh"] * (d["oh"] - 1) + 1 : d["sh"],
                           c0 : c0 + d["sw"] * (d["ow"] - 1) + 1 : d["sw"]]
                pg = patch.reshape(d["n"], g, cg, d["oh"], d["ow"])
                out += np.einsum("ngchw,goc->ngohw", pg, wg[:, :, :, i, j])
        res: np.ndarray = out.reshape(d["n"], d["o"], d["oh"], d["ow"])
        if len(inputs) == 3:
            res = res + inputs[2].reshape(1, -1, 1, 1)
        return [res.astype(np.float32)]

    def workspace_bytes(self) -> int:
        if self.layout() in WINO_LAYOUTS:
            return conv2d_wino_workspace_bytes(self.dims(), WINO_LAYOUTS[self.layout()])
        return conv2d_workspace_bytes(self.dims())

    def workspace_required(self) -> bool:
        # Winograd's kernels have no path without one (a module written
        # with w_layout wino23 gets it under --no-workspaces too)
        return self.layout() in WINO_LAYOUTS

    def layout(self) -> str:
        """How w is stored: "oihw", "ihwo" ([C][KH][KW][O],
        mlvm_conv2d_ihwo_f32), "wino23" ([16][O][C / groups] for
        mlvm_conv2d_wino_f32) or "wino43" ([36][O][C / groups] for
        mlvm_conv2d_wino4_f32)."""
        return _str(self, "w_layout", "oihw")

    def ihwo(self) -> bool:
        """Whether w is stored [C][KH][KW][O] (mlvm_conv2d_ihwo_f32), or so in
        panels (`w_panel`)."""
        return self.layout() == "ihwo"

    def w_panel(self) -> int:
        """The descriptor's w_panel: the width of the panels IHWO weights
        are stored in ([O / width][C][KH][KW][width]), MLVM_CONV_A_PANEL
        for Winograd weights whose planes are in their GEMM's panels, or 0."""
        sw = self.shape_of(self.w, "w")
        if self.layout() in WINO_LAYOUTS:
            return A_PANEL if len(sw) == 4 else 0
        return sw[-1] if self.ihwo() and len(sw) == 5 else 0

    def descriptor(self, cg: Lowering) -> str:
        """A static mlvm_conv2d_t of the op's sizes and w_panel."""
        d = self.dims()
        init = ", ".join(str(d[k]) for k in (
            "n", "c", "h", "w", "o", "kh", "kw", "oh", "ow", "sh", "sw", "pt", "pl", "dh", "dw", "groups"))
        return cg.const_struct("mlvm_conv2d_t", f"{init}, {self.w_panel()}")

    def lower(self, cg: Lowering) -> None:
        if prod(result_shape(self)) == 0:
            return
        p = self.descriptor(cg)
        bias = cg.ptr(self.bias) if self.bias is not None else "NULL"
        args = f"{p}, {cg.ptr(self.x)}, {cg.ptr(self.w)}, {bias}, {cg.ptr(self.result)}"
        call = conv2d_call(self.dims(), self.layout(), args, cg.workspace(self), "NULL", "NULL")
        cg.stmt(conv2d_taps_call(cg, self, args, call, None, "NULL", "NULL"))


POOL_KINDS = ("max", "avg")


def pool2d_dims(op: MlvmOp, x: SSAValue) -> dict[str, int]:
    """The verified sizes of a pool over windows of x (NCHW) given by op's
    `window`, `strides` and `padding` (mlvm.pool2d's, mlvm.qavgpool2d's)."""
    sx = op.shape_of(x, "x")
    if len(sx) != 4:
        raise VerifyException(f"{op.name}: x {type_str(x.type)} must be rank 4 (NCHW)")
    n, c, h, w = sx
    window = _ints(op, "window")
    strides = _ints(op, "strides", (1, 1))
    padding = _ints(op, "padding", (0, 0, 0, 0))
    _expect_len(op, "window", window, 2, "height, width")
    _expect_positive(op, "window", window)
    oh, ow = _windows(op, x.type, h, w, window[0], window[1], strides, padding, (1, 1), "window")
    if max(padding[0], padding[2]) >= window[0] or max(padding[1], padding[3]) >= window[1]:
        raise VerifyException(
            f"{op.name}: padding {_lst(padding)} must be smaller than the window "
            f"{window[0]}x{window[1]}"
        )
    return dict(planes=n * c, n=n, c=c, h=h, w=w, kh=window[0], kw=window[1], oh=oh,
                ow=ow, sh=strides[0], sw=strides[1], pt=padding[0], pl=padding[1],
                pb=padding[2], pr=padding[3])


def pool2d_is_global(d: dict[str, int]) -> bool:
    """Whether pool2d_dims `d` are one window the size of the map, no
    padding (ONNX GlobalAveragePool's form)."""
    return (d["kh"], d["kw"]) == (d["h"], d["w"]) and not any(d[k] for k in ("pt", "pl", "pb", "pr"))


def pool2d_elems(kind: str) -> tuple[str, ...]:
    """The element types mlvm.pool2d of `kind` takes: f32, and 8-bit
    integers for a max."""
    return ("f32", "i8", "ui8") if kind == "max" else ("f32",)


@irdl_op_definition
class Pool2dOp(MlvmOp):
    """Max or average over windows of x (NCHW). Padded positions are left out:
    of the max, and of the average's count. Each pad must be smaller than the
    window, so every window holds at least one element. x is f32, or for the
    max also i8 or ui8 (the result is x's type)."""

    name = "mlvm.pool2d"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    kind = prop_def(StringAttr)
    window = prop_def(DenseArrayBase.constr(i64))
    strides = opt_prop_def(DenseArrayBase.constr(i64), DenseArrayBase.from_list(i64, [1, 1]))
    padding = opt_prop_def(DenseArrayBase.constr(i64), DenseArrayBase.from_list(i64, [0, 0, 0, 0]))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x",)

    def dims(self) -> dict[str, int]:
        if self.kind.data not in POOL_KINDS:
            raise VerifyException(
                f"{self.name}: kind '{self.kind.data}' is not one of " + ", ".join(POOL_KINDS)
            )
        self.expect_elem(self.x, "x", pool2d_elems(self.kind.data))
        return pool2d_dims(self, self.x)

    def verify_(self) -> None:
        d = self.dims()
        self.expect_result(0, (d["n"], d["c"], d["oh"], d["ow"]), self.elem_of(self.x, "x"))

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        d = self.dims()
        x = inputs[0]
        pads = ((0, 0), (0, 0), (d["pt"], d["pb"]), (d["pl"], d["pr"]))
        is_max = self.kind.data == "max"
        # padded with the type's least for a max (8-bit: its integer least)
        least = -np.inf if x.dtype == np.float32 else np.iinfo(x.dtype).min
        xp = np.pad(x, pads, constant_values=np.asarray(least if is_max else 0, x.dtype))
        ones = np.pad(np.ones((d["h"], d["w"]), np.float32), pads[2:])
        shape = (d["n"], d["c"], d["oh"], d["ow"])
        acc = np.full(shape, -np.inf if is_max else 0.0, np.float32)
        cnt = np.zeros((d["oh"], d["ow"]), np.float32)
        patches = []
        for i in range(d["kh"]):
            for j in range(d["kw"]):
                rs = slice(i, i + d["sh"] * (d["oh"] - 1) + 1, d["sh"])
                cs = slice(j, j + d["sw"] * (d["ow"] - 1) + 1, d["sw"])
                if is_max:
                    patches.append(xp[:, :, rs, cs])
                else:
                    acc = acc + xp[:, :, rs, cs]
                    cnt = cnt + ones[rs, cs]
        if is_max:
            return [np.max(np.stack(patches), axis=0).astype(x.dtype)]
        return [(acc / cnt).astype(np.float32)]

    def lower(self, cg: Lowering) -> None:
        d = self.dims()
        if prod(result_shape(self)) == 0:
            return
        init = ", ".join(str(d[k]) for k in (
            "planes", "h", "w", "kh", "kw", "oh", "ow", "sh", "sw", "pt", "pl"))
        p = cg.const_struct("mlvm_pool2d_t", init)
        e = self.elem_of(self.x, "x")
        if e != "f32":
            signed = 1 if e == "i8" else 0
            cg.stmt(f"mlvm_maxpool2d_8({p}, {signed}, {cg.ptr(self.x)}, {cg.ptr(self.result)});")
            return
        cg.stmt(f"mlvm_{self.kind.data}pool2d_f32({p}, {cg.ptr(self.x)}, {cg.ptr(self.result)});")


NN_OPS: list[type[MlvmOp]] = [
    TransposeOp,
    SliceOp,
    ConcatOp,
    SoftmaxOp,
    LogSoftmaxOp,
    LayerNormOp,
    GeluOp,
    Conv2dOp,
    Pool2dOp,
]

__all__ = ["NN_OPS"]
