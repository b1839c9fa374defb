"""The mlvm ops: definition, shape rule, numpy reference and C lowering.

Each class is the single entry for its op. Property names and types follow
the dialect contract: integers are i64, floats f32, flags bool, lists
`array<i64>`, names and kinds strings.
"""

from __future__ import annotations

import math

from collections.abc import Callable, Mapping, Sequence
from math import prod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlvm.dialect import rng
from mlvm.dialect.base import (
    DTYPES,
    MlvmOp,
    elem_name,
    result_dtype,
    result_shape,
    type_str,
)
from mlvm.dialect.shapes import (
    Shape,
    broadcast_shapes,
    broadcast_strides,
    can_broadcast_to,
    contiguous_strides,
    normalize_axis,
)

from mlvm.codegen.lowering import c_float

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering

F32Attr = FloatAttr  # property values are checked to be f32 in the verifiers
TensorT = TensorType[Attribute]


def _f32_prop(op: MlvmOp, name: str) -> float:
    attr = op.properties.get(name)
    if attr is None:  # an optional property left out: its declared default
        attr = op.get_irdl_definition().properties[name].default_value
    if attr is None:
        raise VerifyException(f"{op.name}: missing property '{name}'")
    if not isinstance(attr, FloatAttr) or not isinstance(attr.type, Float32Type):
        raise VerifyException(f"{op.name}: property '{name}' must be an f32 float")
    return float(np.float32(attr.value.data))


def _bool_prop(op: MlvmOp, name: str) -> bool:
    attr = op.properties.get(name)
    if attr is None:
        return False
    return bool(attr.value.data) if isinstance(attr, IntegerAttr) else False


def _int_prop(op: MlvmOp, name: str) -> int:
    attr = op.properties.get(name)
    assert isinstance(attr, IntegerAttr)
    return int(attr.value.data)


def _array_prop(op: MlvmOp, name: str) -> tuple[int, ...]:
    attr = op.properties.get(name)
    assert isinstance(attr, DenseArrayBase)
    return tuple(int(v) for v in attr.get_values())


# --------------------------------------------------------------------------
# Data: constant, param, rng_normal, fill
# --------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(MlvmOp):
    name = "mlvm.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    IS_DATA: ClassVar[bool] = True

    def verify_(self) -> None:
        t = self.tensor(self.result, "result")
        vt = self.value.type
        if not isinstance(vt, TensorType) or vt != t:
            raise VerifyException(
                f"{self.name}: value type {type_str(vt)} does not match result type "
                f"{type_str(t)}"
            )

    def data(self) -> np.ndarray:
        dtype = result_dtype(self)
        flat = np.frombuffer(self.value.data.data, dtype=dtype.newbyteorder("<"))
        shape = result_shape(self)
        if flat.size == 1 and prod(shape) != 1:
            return np.full(shape, flat[0], dtype=dtype)
        return flat.astype(dtype).reshape(shape)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [self.data()]


@irdl_op_definition
class ParamOp(MlvmOp):
    """A weight read from the parameter archive given at compile time.

    With `perm`, the value is the archive's array transposed by perm (result
    dim i is the archive's dim perm[i]): the compiler stores weights in the
    layout their kernel reads (see the mlvm-pack-weights pass), while the
    archive keeps the layout the model was written with.
    """

    name = "mlvm.param"
    param_name = prop_def(StringAttr, prop_name="name")
    perm = opt_prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    IS_DATA: ClassVar[bool] = True

    def permutation(self) -> tuple[int, ...] | None:
        """The verified perm, or None for the archive's own layout."""
        if self.perm is None:
            return None
        perm = _array_prop(self, "perm")
        rank = len(self.shape_of(self.result, "result"))
        if sorted(perm) != list(range(rank)):
            raise VerifyException(
                f"{self.name}: perm [{', '.join(map(str, perm))}] is not a permutation of the {rank} dims "
                f"of {type_str(self.result.type)}"
            )
        return perm

    def archive_shape(self) -> tuple[int, ...]:
        """The shape the parameter has in the archive."""
        shape = self.shape_of(self.result, "result")
        perm = self.permutation()
        if perm is None:
            return tuple(shape)
        out = [0] * len(shape)
        for i, p in enumerate(perm):
            out[p] = shape[i]
        return tuple(out)

    def verify_(self) -> None:
        self.tensor(self.result, "result")
        self.permutation()

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        arr = params[self.param_name.data]
        perm = self.permutation()
        return [arr if perm is None else np.ascontiguousarray(np.transpose(arr, perm))]


@irdl_op_definition
class RngNormalOp(MlvmOp):
    """Standard normal samples, a pure function of `seed` and the shape.

    The compiler computes them (see `rng.py`) and embeds the bits, so every
    target gets the same values.
    """

    name = "mlvm.rng_normal"
    seed = prop_def(IntegerAttr.constr(type=i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    IS_DATA: ClassVar[bool] = True

    def verify_(self) -> None:
        self.expect_elem(self.result, "result", ("f32",))

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [rng.normal(_int_prop(self, "seed"), result_shape(self))]


@irdl_op_definition
class FillOp(MlvmOp):
    name = "mlvm.fill"
    value = prop_def(FloatAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        v = _f32_prop(self, "value")
        if self.elem_of(self.result, "result") == "i32":
            if not np.isfinite(v) or v != int(v):
                raise VerifyException(
                    f"{self.name}: value {v} is not an integer but the result is i32"
                )
            if not -(2**31) <= v < 2**31:
                raise VerifyException(f"{self.name}: value {v} does not fit in i32")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        dtype = result_dtype(self)
        return [np.full(result_shape(self), _f32_prop(self, "value"), dtype=dtype)]

    def lower(self, cg: Lowering) -> None:
        elem = self.elem_of(self.result, "result")
        v = _f32_prop(self, "value")
        lit = cg.flt(v) if elem == "f32" else str(int(v))
        n = prod(result_shape(self))
        cg.stmt(f"mlvm_fill_{elem}({n}, {lit}, {cg.ptr(self.result)});")


# --------------------------------------------------------------------------
# Elementwise binary ops with numpy broadcasting
# --------------------------------------------------------------------------


class BinaryOp(MlvmOp):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("lhs", "rhs")

    ELEMS: ClassVar[tuple[str, ...]] = ("f32", "i32")
    COMPARE: ClassVar[bool] = False  # result is f32 1.0/0.0
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = (0, 1)

    def verify_(self) -> None:
        ea = self.expect_elem(self.lhs, "lhs", self.ELEMS)
        eb = self.expect_elem(self.rhs, "rhs", self.ELEMS)
        if ea != eb:
            raise VerifyException(
                f"{self.name}: operand element types differ: lhs "
                f"{type_str(self.lhs.type)}, rhs {type_str(self.rhs.type)}"
            )
        sa, sb = self.shape_of(self.lhs, "lhs"), self.shape_of(self.rhs, "rhs")
        out = broadcast_shapes(sa, sb)
        if out is None:
            raise VerifyException(
                f"{self.name}: operands lhs {type_str(self.lhs.type)} and rhs "
                f"{type_str(self.rhs.type)} do not broadcast"
            )
        self.expect_result(0, out, "f32" if self.COMPARE else ea)

    # The numpy function the C kernel mirrors, operation for operation, and
    # the same operation on C scalars by operand type (for fused loops).
    NP_FN: ClassVar[Callable[..., Any]]
    C_EXPR: ClassVar[dict[str, str]]

    def scalar_expr(self, args: Sequence[str]) -> str:
        return self.C_EXPR[self.elem_of(self.lhs, "lhs")].format(*args)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            out = self.NP_FN(inputs[0], inputs[1])
        return [np.asarray(out).astype(result_dtype(self))]

    def lower(self, cg: Lowering) -> None:
        out = result_shape(self)
        it = cg.iter(
            out,
            [
                broadcast_strides(self.shape_of(self.lhs, "lhs"), out),
                broadcast_strides(self.shape_of(self.rhs, "rhs"), out),
            ],
        )
        kernel = self.name.split(".")[1]
        elem = self.elem_of(self.lhs, "lhs")
        cg.stmt(
            f"mlvm_{kernel}_{elem}({it}, {cg.ptr(self.lhs)}, {cg.ptr(self.rhs)}, "
            f"{cg.ptr(self.result)});"
        )


@irdl_op_definition
class AddOp(BinaryOp):
    name = "mlvm.add"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.add)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "({0} + {1})", "i32": "((int32_t)((uint32_t){0} + (uint32_t){1}))"}


@irdl_op_definition
class SubOp(BinaryOp):
    name = "mlvm.sub"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.subtract)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "({0} - {1})", "i32": "((int32_t)((uint32_t){0} - (uint32_t){1}))"}


@irdl_op_definition
class MulOp(BinaryOp):
    name = "mlvm.mul"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.multiply)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "({0} * {1})", "i32": "((int32_t)((uint32_t){0} * (uint32_t){1}))"}


@irdl_op_definition
class DivOp(BinaryOp):
    name = "mlvm.div"
    ELEMS: ClassVar[tuple[str, ...]] = ("f32",)
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.divide)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "({0} / {1})"}


@irdl_op_definition
class MaxOp(BinaryOp):
    name = "mlvm.max"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.maximum)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "(({0} > {1} || {0} != {0}) ? {0} : {1})", "i32": "({0} > {1} ? {0} : {1})"}


@irdl_op_definition
class MinOp(BinaryOp):
    name = "mlvm.min"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.minimum)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "(({0} < {1} || {0} != {0}) ? {0} : {1})", "i32": "({0} < {1} ? {0} : {1})"}


@irdl_op_definition
class EqOp(BinaryOp):
    name = "mlvm.eq"
    COMPARE: ClassVar[bool] = True
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.equal)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "({0} == {1} ? 1.0f : 0.0f)", "i32": "({0} == {1} ? 1.0f : 0.0f)"}


@irdl_op_definition
class CmplOp(BinaryOp):
    """`lhs > rhs` as f32 1.0 / 0.0."""

    name = "mlvm.cmpl"
    COMPARE: ClassVar[bool] = True
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.greater)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "({0} > {1} ? 1.0f : 0.0f)", "i32": "({0} > {1} ? 1.0f : 0.0f)"}


# --------------------------------------------------------------------------
# Elementwise unary ops (f32)
# --------------------------------------------------------------------------


class UnaryOp(MlvmOp):
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = (0,)

    def verify_(self) -> None:
        self.expect_elem(self.operand, "operand", ("f32",))
        self.expect_result(0, self.shape_of(self.operand, "operand"), "f32")

    NP_FN: ClassVar[Callable[..., Any]]
    C_EXPR: ClassVar[dict[str, str]]

    def scalar_expr(self, args: Sequence[str]) -> str:
        return self.C_EXPR["f32"].format(*args)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            return [np.asarray(self.NP_FN(inputs[0])).astype(np.float32)]

    def lower(self, cg: Lowering) -> None:
        kernel = self.name.split(".")[1]
        n = prod(result_shape(self))
        cg.stmt(f"mlvm_{kernel}_f32({n}, {cg.ptr(self.operand)}, {cg.ptr(self.result)});")


@irdl_op_definition
class NegOp(UnaryOp):
    name = "mlvm.neg"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.negative)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "(-{0})"}


@irdl_op_definition
class ExpOp(UnaryOp):
    name = "mlvm.exp"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.exp)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "mlvm_expf({0})"}


@irdl_op_definition
class LogOp(UnaryOp):
    name = "mlvm.log"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.log)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "logf({0})"}


@irdl_op_definition
class SqrtOp(UnaryOp):
    name = "mlvm.sqrt"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.sqrt)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "sqrtf({0})"}


@irdl_op_definition
class TanhOp(UnaryOp):
    name = "mlvm.tanh"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.tanh)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "mlvm_tanhf({0})"}


_erf64 = np.vectorize(math.erf, otypes=[np.float64])


def _erf_f32(a: np.ndarray) -> np.ndarray:
    """erf in float64, rounded once to f32 (the kernel, mlvm_erff, is within 2.5 ulp)."""
    return _erf64(np.asarray(a, np.float64)).astype(np.float32)


@irdl_op_definition
class ErfOp(UnaryOp):
    name = "mlvm.erf"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(_erf_f32)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "mlvm_erff({0})"}


@irdl_op_definition
class AbsOp(UnaryOp):
    name = "mlvm.abs"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.abs)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "fabsf({0})"}


@irdl_op_definition
class FloorOp(UnaryOp):
    name = "mlvm.floor"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.floor)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "floorf({0})"}


@irdl_op_definition
class CeilOp(UnaryOp):
    name = "mlvm.ceil"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.ceil)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "ceilf({0})"}


@irdl_op_definition
class SinOp(UnaryOp):
    name = "mlvm.sin"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.sin)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "sinf({0})"}


@irdl_op_definition
class CosOp(UnaryOp):
    name = "mlvm.cos"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.cos)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "cosf({0})"}


def _sigmoid(a: np.ndarray) -> np.ndarray:
    one = np.float32(1)
    return one / (one + np.exp(-a))


@irdl_op_definition
class SigmoidOp(UnaryOp):
    name = "mlvm.sigmoid"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(_sigmoid)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "mlvm_sigmoidf({0})"}


def _relu(a: np.ndarray) -> np.ndarray:
    # NaN passes through, as in numpy.maximum(a, 0).
    return np.maximum(a, np.float32(0))


@irdl_op_definition
class ReluOp(UnaryOp):
    name = "mlvm.relu"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(_relu)
    C_EXPR: ClassVar[dict[str, str]] = {"f32": "({0} < 0.0f ? 0.0f : {0})"}


@irdl_op_definition
class RsqrtOp(UnaryOp):
    """`1 / sqrt(a + eps)`."""

    name = "mlvm.rsqrt"
    eps = opt_prop_def(FloatAttr, FloatAttr(0.0, Float32Type()))

    def verify_(self) -> None:
        super().verify_()
        _f32_prop(self, "eps")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        eps = np.float32(_f32_prop(self, "eps"))
        with np.errstate(all="ignore"):
            return [(np.float32(1) / np.sqrt(inputs[0] + eps)).astype(np.float32)]

    def scalar_expr(self, args: Sequence[str]) -> str:
        eps = c_float(_f32_prop(self, "eps"))
        return f"(1.0f / sqrtf({args[0]} + {eps}))"

    def lower(self, cg: Lowering) -> None:
        n = prod(result_shape(self))
        eps = cg.flt(_f32_prop(self, "eps"))
        cg.stmt(
            f"mlvm_rsqrt_f32({n}, {eps}, {cg.ptr(self.operand)}, {cg.ptr(self.result)});"
        )


# --------------------------------------------------------------------------
# matmul
# --------------------------------------------------------------------------


@irdl_op_definition
class MatmulOp(MlvmOp):
    """`lhs @ rhs` with optional transposes of the last two dims.

    Rank 2, or rank >= 3 on both sides with numpy-broadcast batch dims.
    """

    name = "mlvm.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    transpose_lhs = opt_prop_def(BoolAttr, IntegerAttr.from_bool(False))
    transpose_rhs = opt_prop_def(BoolAttr, IntegerAttr.from_bool(False))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("lhs", "rhs")

    def dims(self) -> tuple[Shape, int, int, int]:
        """(batch shape, m, n, k), verifying the operand shapes."""
        self.expect_elem(self.lhs, "lhs", ("f32",))
        self.expect_elem(self.rhs, "rhs", ("f32",))
        sa, sb = self.shape_of(self.lhs, "lhs"), self.shape_of(self.rhs, "rhs")
        ta, tb = _bool_prop(self, "transpose_lhs"), _bool_prop(self, "transpose_rhs")
        desc = f"lhs {type_str(self.lhs.type)} and rhs {type_str(self.rhs.type)}"
        if len(sa) < 2 or len(sb) < 2 or (len(sa) == 2) != (len(sb) == 2):
            raise VerifyException(
                f"{self.name}: {desc} must both be rank 2, or both rank >= 3 "
                "with batch dims"
            )
        m, ka = (sa[-1], sa[-2]) if ta else (sa[-2], sa[-1])
        kb, n = (sb[-1], sb[-2]) if tb else (sb[-2], sb[-1])
        if ka != kb:
            raise VerifyException(
                f"{self.name}: contraction dims differ ({ka} vs {kb}) for {desc}"
                f" (transpose_lhs={str(ta).lower()}, transpose_rhs={str(tb).lower()})"
            )
        batch = broadcast_shapes(sa[:-2], sb[:-2])
        if batch is None:
            raise VerifyException(f"{self.name}: batch dims of {desc} do not broadcast")
        return batch, m, n, ka

    def verify_(self) -> None:
        batch, m, n, _ = self.dims()
        self.expect_result(0, (*batch, m, n), "f32")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        a, b = inputs
        if _bool_prop(self, "transpose_lhs"):
            a = np.swapaxes(a, -1, -2)
        if _bool_prop(self, "transpose_rhs"):
            b = np.swapaxes(b, -1, -2)
        return [np.matmul(a, b).astype(np.float32)]

    def strides(self) -> tuple[int, int, int, int]:
        """Element strides (a_rs, a_cs, b_rs, b_cs) of a(i, k) and b(k, j)."""
        _, m, n, k = self.dims()
        ta, tb = _bool_prop(self, "transpose_lhs"), _bool_prop(self, "transpose_rhs")
        a_rs, a_cs = (1, m) if ta else (k, 1)
        b_rs, b_cs = (1, k) if tb else (n, 1)
        return a_rs, a_cs, b_rs, b_cs

    def lower(self, cg: Lowering) -> None:
        batch, m, n, k = self.dims()
        sa, sb = self.shape_of(self.lhs, "lhs"), self.shape_of(self.rhs, "rhs")
        a_rs, a_cs, b_rs, b_cs = self.strides()
        mat_a, mat_b = sa[-1] * sa[-2], sb[-1] * sb[-2]
        bs_a = tuple(s * mat_a for s in broadcast_strides(sa[:-2], batch))
        bs_b = tuple(s * mat_b for s in broadcast_strides(sb[:-2], batch))
        it = cg.iter(batch if batch else (1,), [bs_a or (0,), bs_b or (0,)])
        p = cg.const_struct(
            "mlvm_matmul_t", f"{m}, {n}, {k}, {a_rs}, {a_cs}, {b_rs}, {b_cs}"
        )
        cg.stmt(
            f"mlvm_matmul_f32({p}, {it}, {cg.ptr(self.lhs)}, {cg.ptr(self.rhs)}, "
            f"{cg.ptr(self.result)});"
        )


# --------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------

REDUCE_KINDS = ("sum", "max", "mean")
REDUCE_NP_FNS: dict[str, Callable[..., Any]] = {"sum": np.sum, "max": np.max, "mean": np.mean}


@irdl_op_definition
class ReduceOp(MlvmOp):
    name = "mlvm.reduce"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    kind = prop_def(StringAttr)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(BoolAttr, IntegerAttr.from_bool(False))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def norm_axes(self) -> tuple[int, ...]:
        rank = len(self.shape_of(self.operand, "operand"))
        seen: list[int] = []
        for a in _array_prop(self, "axes"):
            na = normalize_axis(a, rank)
            if na is None:
                raise VerifyException(
                    f"{self.name}: axis {a} is out of range for operand "
                    f"{type_str(self.operand.type)}"
                )
            if na in seen:
                raise VerifyException(f"{self.name}: axis {a} is repeated in axes")
            seen.append(na)
        return tuple(sorted(seen))

    def kept_shape(self) -> Shape:
        """The result shape with reduced axes kept as 1."""
        axes = self.norm_axes()
        shape = self.shape_of(self.operand, "operand")
        return tuple(1 if i in axes else d for i, d in enumerate(shape))

    def verify_(self) -> None:
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(
                f"{self.name}: kind '{self.kind.data}' is not one of "
                + ", ".join(REDUCE_KINDS)
            )
        self.expect_elem(self.operand, "operand", ("f32",))
        axes = self.norm_axes()
        kept = self.kept_shape()
        shape = self.shape_of(self.operand, "operand")
        empty = [a for a in axes if shape[a] == 0]
        if empty and self.kind.data in ("max", "min"):
            raise VerifyException(
                f"{self.name}: kind '{self.kind.data}' over axis {empty[0]} of size 0 "
                f"of operand {type_str(self.operand.type)} has no value"
            )
        if _bool_prop(self, "keepdims"):
            want = kept
        else:
            want = tuple(d for i, d in enumerate(kept) if i not in axes)
        self.expect_result(0, want, "f32")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        out = REDUCE_NP_FNS[self.kind.data](inputs[0], axis=self.norm_axes(), keepdims=True)
        return [np.asarray(out, dtype=np.float32).reshape(result_shape(self))]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.operand, "operand")
        axes = self.norm_axes()
        kept = self.kept_shape()
        out_strides = tuple(
            0 if i in axes else s for i, s in enumerate(contiguous_strides(kept))
        )
        it = cg.iter(shape, [contiguous_strides(shape), out_strides])
        out_n = prod(kept)
        count = prod(shape[i] for i in axes)
        cg.stmt(
            f"mlvm_reduce_{self.kind.data}_f32({it}, {cg.ptr(self.operand)}, "
            f"{cg.ptr(self.result)}, {out_n}, {count});"
        )


@irdl_op_definition
class ArgmaxOp(MlvmOp):
    """Index (i32) of the first maximum along `axis`; NaN counts as maximal."""

    name = "mlvm.argmax"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr.constr(type=i64))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def norm_axis(self) -> int:
        shape = self.shape_of(self.operand, "operand")
        a = normalize_axis(_int_prop(self, "axis"), len(shape))
        if a is None:
            raise VerifyException(
                f"{self.name}: axis {_int_prop(self, 'axis')} is out of range for "
                f"operand {type_str(self.operand.type)}"
            )
        return a

    def verify_(self) -> None:
        self.expect_elem(self.operand, "operand", ("f32",))
        shape = self.shape_of(self.operand, "operand")
        ax = self.norm_axis()
        if shape[ax] == 0:
            raise VerifyException(
                f"{self.name}: axis {ax} of operand {type_str(self.operand.type)} has "
                "size 0: there is no maximum"
            )
        dropped = shape[:ax] + shape[ax + 1 :]
        kept = shape[:ax] + (1,) + shape[ax + 1 :]
        if self.shape_of(self.result, "result") == kept:
            self.expect_result(0, kept, "i32")
        else:
            self.expect_result(0, dropped, "i32")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        out = np.argmax(inputs[0], axis=self.norm_axis())
        return [out.astype(np.int32).reshape(result_shape(self))]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.operand, "operand")
        ax = self.norm_axis()
        outer, inner = prod(shape[:ax]), prod(shape[ax + 1 :])
        cg.stmt(
            f"mlvm_argmax_f32({outer}, {shape[ax]}, {inner}, {cg.ptr(self.operand)}, "
            f"{cg.ptr(self.result)});"
        )


# --------------------------------------------------------------------------
# Loss
# --------------------------------------------------------------------------


def softmax_xent_reference(
    labels: np.ndarray, logits: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-row cross-entropy of softmax(logits) against labels, and its grad."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=-1, keepdims=True)
    log_sm = shifted - np.log(s)
    loss = -(labels * log_sm).sum(axis=-1)
    grad = e / s - labels
    return loss.astype(np.float32), grad.astype(np.float32)


@irdl_op_definition
class SoftmaxXentOp(MlvmOp):
    """Softmax cross-entropy over the last axis: loss per row, grad = softmax - labels."""

    name = "mlvm.softmax_xent"
    labels = operand_def(TensorType)
    logits = operand_def(TensorType)
    loss = result_def(TensorType)
    grad = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("labels", "logits")

    def verify_(self) -> None:
        self.expect_elem(self.labels, "labels", ("f32",))
        self.expect_elem(self.logits, "logits", ("f32",))
        sl, sg = self.shape_of(self.labels, "labels"), self.shape_of(self.logits, "logits")
        if sl != sg or len(sl) < 1:
            raise VerifyException(
                f"{self.name}: labels {type_str(self.labels.type)} and logits "
                f"{type_str(self.logits.type)} must have the same shape, rank >= 1"
            )
        self.expect_result(0, sl[:-1], "f32", "loss")
        self.expect_result(1, sl, "f32", "grad")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        loss, grad = softmax_xent_reference(inputs[0], inputs[1])
        return [loss, grad]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.logits, "logits")
        rows, cols = prod(shape[:-1]), shape[-1]
        cg.stmt(
            f"mlvm_softmax_xent_f32({rows}, {cols}, {cg.ptr(self.labels)}, "
            f"{cg.ptr(self.logits)}, {cg.ptr(self.loss)}, {cg.ptr(self.grad)});"
        )


# --------------------------------------------------------------------------
# Data movement and types
# --------------------------------------------------------------------------


@irdl_op_definition
class CastOp(MlvmOp):
    """Element type conversion; f32 -> i32 truncates toward zero."""

    name = "mlvm.cast"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def verify_(self) -> None:
        self.elem_of(self.operand, "operand")
        shape = self.shape_of(self.operand, "operand")
        self.expect_result(0, shape, self.elem_of(self.result, "result"))

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            return [inputs[0].astype(result_dtype(self))]

    def lower(self, cg: Lowering) -> None:
        src = self.elem_of(self.operand, "operand")
        dst = self.elem_of(self.result, "result")
        n = prod(result_shape(self))
        src_p, dst_p = cg.ptr(self.operand), cg.ptr(self.result)
        if src == dst:
            cg.stmt(f"mlvm_copy({n * 4}, {src_p}, {dst_p});")
        else:
            cg.stmt(f"mlvm_cast_{src}_{dst}({n}, {src_p}, {dst_p});")


@irdl_op_definition
class ReshapeOp(MlvmOp):
    """Same elements, new shape (the result type): no data moves."""

    name = "mlvm.reshape"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def verify_(self) -> None:
        elem = self.elem_of(self.operand, "operand")
        n_in = prod(self.shape_of(self.operand, "operand"))
        n_out = prod(self.shape_of(self.result, "result"))
        if n_in != n_out or self.elem_of(self.result, "result") != elem:
            raise VerifyException(
                f"{self.name}: cannot reshape operand {type_str(self.operand.type)} "
                f"({n_in} elements) to {type_str(self.result.type)} ({n_out} elements)"
            )

    def alias_operand(self) -> int | None:
        return 0

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [inputs[0].reshape(result_shape(self))]

    def lower(self, cg: Lowering) -> None:
        pass  # the result shares the operand's storage


@irdl_op_definition
class BroadcastToOp(MlvmOp):
    name = "mlvm.broadcast_to"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def verify_(self) -> None:
        elem = self.elem_of(self.operand, "operand")
        src = self.shape_of(self.operand, "operand")
        dst = self.shape_of(self.result, "result")
        if not can_broadcast_to(src, dst) or self.elem_of(self.result, "result") != elem:
            raise VerifyException(
                f"{self.name}: operand {type_str(self.operand.type)} does not "
                f"broadcast to {type_str(self.result.type)}"
            )

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [np.broadcast_to(inputs[0], result_shape(self)).copy()]

    def lower(self, cg: Lowering) -> None:
        dst = result_shape(self)
        it = cg.iter(dst, [broadcast_strides(self.shape_of(self.operand, "operand"), dst)])
        cg.stmt(f"mlvm_broadcast_b32({it}, {cg.ptr(self.operand)}, {cg.ptr(self.result)});")


MLVM_OPS: list[type[MlvmOp]] = [
    ConstantOp,
    ParamOp,
    RngNormalOp,
    FillOp,
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    MaxOp,
    MinOp,
    EqOp,
    CmplOp,
    NegOp,
    ExpOp,
    LogOp,
    SqrtOp,
    RsqrtOp,
    TanhOp,
    SigmoidOp,
    ReluOp,
    ErfOp,
    AbsOp,
    FloorOp,
    CeilOp,
    SinOp,
    CosOp,
    MatmulOp,
    ReduceOp,
    ArgmaxOp,
    SoftmaxXentOp,
    CastOp,
    ReshapeOp,
    BroadcastToOp,
]

__all__ = ["MLVM_OPS", "DTYPES", "IntegerType", "elem_name"]
