"""Comparisons, logic, bitwise ops, shifts, modulo and select.

Built on the elementwise bases in ops.py: each op is its definition, its
numpy reference and its C expression per element type (scalar.h holds the
integer cases C leaves undefined).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import BoolAttr, IntegerAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlvm.dialect.base import MlvmOp, result_dtype, type_str
from mlvm.dialect.elements import ALL, INTS, NUMERIC
from mlvm.dialect.ops import (
    BinaryOp,
    CompareOp,
    ElementwiseOp,
    UnaryOp,
    _bool_prop,
    c_format,
    c_template,
    int_binary,
    np_compute,
)

INTS_AND_BOOL = (*INTS, "i1")


@irdl_op_definition
class NeOp(CompareOp):
    name = "mlvm.ne"
    C_OP: ClassVar[str] = "!="
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.not_equal)


@irdl_op_definition
class LtOp(CompareOp):
    name = "mlvm.lt"
    C_OP: ClassVar[str] = "<"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.less)


@irdl_op_definition
class LeOp(CompareOp):
    name = "mlvm.le"
    C_OP: ClassVar[str] = "<="
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.less_equal)


@irdl_op_definition
class GtOp(CompareOp):
    name = "mlvm.gt"
    C_OP: ClassVar[str] = ">"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.greater)


@irdl_op_definition
class GeOp(CompareOp):
    name = "mlvm.ge"
    C_OP: ClassVar[str] = ">="
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.greater_equal)


class BitwiseOp(BinaryOp):
    """Bitwise on integers; on i1 the same op is the logical one."""

    ELEMS: ClassVar[tuple[str, ...]] = INTS_AND_BOOL
    KERNELS: ClassVar[tuple[str, ...]] = ()


@irdl_op_definition
class AndOp(BitwiseOp):
    name = "mlvm.and"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.bitwise_and)
    C_EXPR: ClassVar[dict[str, str]] = {"i": "(({T})({0} & {1}))", "b": "(({T})({0} & {1}))"}


@irdl_op_definition
class OrOp(BitwiseOp):
    name = "mlvm.or"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.bitwise_or)
    C_EXPR: ClassVar[dict[str, str]] = {"i": "(({T})({0} | {1}))", "b": "(({T})({0} | {1}))"}


@irdl_op_definition
class XorOp(BitwiseOp):
    name = "mlvm.xor"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.bitwise_xor)
    C_EXPR: ClassVar[dict[str, str]] = {"i": "(({T})({0} ^ {1}))", "b": "(({T})({0} ^ {1}))"}


@irdl_op_definition
class NotOp(UnaryOp):
    """Bitwise not of integers, logical not of i1."""

    name = "mlvm.not"
    ELEMS: ClassVar[tuple[str, ...]] = INTS_AND_BOOL
    KERNELS: ClassVar[tuple[str, ...]] = ()
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.invert)
    C_EXPR: ClassVar[dict[str, str]] = {"i": "(({T})~{0})", "b": "(({T})!{0})"}


def _shl(bits: int) -> Callable[[int, int], int]:
    return lambda a, s: a << s if 0 <= s < bits else 0


def _shr(bits: int) -> Callable[[int, int], int]:
    return lambda a, s: a >> s if 0 <= s < bits else (-1 if a < 0 else 0)


class ShiftOp(BinaryOp):
    """Shifts of integers by the rhs: a shift by a negative amount or by the
    width or more gives 0 (-1 for an arithmetic right shift of a negative
    value). Signed right shifts are arithmetic."""

    ELEMS: ClassVar[tuple[str, ...]] = INTS
    KERNELS: ClassVar[tuple[str, ...]] = ()
    RULE: ClassVar[Callable[[int], Callable[[int, int], int]]]

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        bits = 8 * inputs[0].dtype.itemsize
        return [int_binary(type(self).RULE(bits))(inputs[0], inputs[1])]


@irdl_op_definition
class ShlOp(ShiftOp):
    name = "mlvm.shl"
    RULE: ClassVar[Callable[[int], Callable[[int, int], int]]] = staticmethod(_shl)
    C_EXPR: ClassVar[dict[str, str]] = {"i": "mlvm_scalar_shl_{N}({0}, {1})"}


@irdl_op_definition
class ShrOp(ShiftOp):
    name = "mlvm.shr"
    RULE: ClassVar[Callable[[int], Callable[[int, int], int]]] = staticmethod(_shr)
    C_EXPR: ClassVar[dict[str, str]] = {"i": "mlvm_scalar_shr_{N}({0}, {1})"}


def _floor_mod(a: int, b: int) -> int:
    return 0 if b == 0 else a % b


def _c_fmod(a: int, b: int) -> int:
    if b == 0:
        return 0
    r = abs(a) % abs(b)
    return -r if a < 0 else r


@irdl_op_definition
class ModOp(BinaryOp):
    """Remainder. `fmod = false` (default): the sign of the divisor, as
    Python and numpy.mod; `fmod = true`: the sign of the dividend, as C's
    fmod and %. Integer x mod 0 is 0; float x mod 0 is NaN."""

    name = "mlvm.mod"
    fmod = opt_prop_def(BoolAttr, IntegerAttr.from_bool(False))
    KERNELS: ClassVar[tuple[str, ...]] = ()
    C_EXPR: ClassVar[dict[str, str]] = {"f": "mlvm_scalar_mod_{N}({0}, {1})", "i": "mlvm_scalar_mod_{N}({0}, {1})"}
    C_EXPR_FMOD: ClassVar[dict[str, str]] = {"f": "fmod{F}({0}, {1})", "i": "mlvm_scalar_fmod_{N}({0}, {1})"}

    def is_fmod(self) -> bool:
        return _bool_prop(self, "fmod")

    def scalar_expr(self, args: Sequence[str]) -> str:
        e = self.compute_elem()
        tpl = c_template(self.C_EXPR_FMOD if self.is_fmod() else self.C_EXPR, e)
        assert tpl is not None
        return c_format(tpl, e, args)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        if inputs[0].dtype.kind in "iu":
            return [int_binary(_c_fmod if self.is_fmod() else _floor_mod)(*inputs)]
        fn = np.fmod if self.is_fmod() else np.mod
        return [np_compute(fn, inputs, result_dtype(self))]


@irdl_op_definition
class SelectOp(ElementwiseOp):
    """`cond ? lhs : rhs` per element (ONNX Where); the three broadcast."""

    name = "mlvm.select"
    cond = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("cond", "lhs", "rhs")
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = (1, 2)

    def verify_(self) -> None:
        self.expect_elem(self.cond, "cond", ("i1",))
        ea = self.expect_elem(self.lhs, "lhs", ALL)
        eb = self.expect_elem(self.rhs, "rhs", ALL)
        if ea != eb:
            raise VerifyException(
                f"{self.name}: lhs {type_str(self.lhs.type)} and rhs "
                f"{type_str(self.rhs.type)} must have the same element type"
            )
        self.expect_result(0, self.broadcast_operands(), ea)

    def scalar_expr(self, args: Sequence[str]) -> str:
        return f"({args[0]} ? {args[1]} : {args[2]})"

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [np.where(inputs[0], inputs[1], inputs[2]).astype(result_dtype(self))]


LOGIC_OPS: list[type[MlvmOp]] = [
    NeOp, LtOp, LeOp, GtOp, GeOp, AndOp, OrOp, XorOp, NotOp, ShlOp, ShrOp, ModOp, SelectOp,
]

__all__ = ["LOGIC_OPS", "NUMERIC"]
