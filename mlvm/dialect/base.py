"""What every mlvm op offers beyond its IRDL definition.

An op class is the one place that holds the op's definition (IRDL fields),
its shape rule (`verify_`), its numpy reference (`reference`) and its C
lowering (`lower`). Nothing else in the compiler switches on op names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

from mlvm.dialect.elements import ELEMS, Elem, elem_of_type
from mlvm.dialect.shapes import MAX_RANK, Shape

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering

DTYPES: dict[str, np.dtype[np.generic]] = {n: e.dtype for n, e in ELEMS.items()}


def elem_name(t: Attribute) -> str | None:
    """'f32', 'ui8', ... for the element types mlvm has (elements.py), else None."""
    e = elem_of_type(t)
    return None if e is None else e.name


def type_str(t: Attribute) -> str:
    if isinstance(t, TensorType):
        dims = "x".join(str(d) if d >= 0 else "?" for d in t.get_shape())
        return f"tensor<{dims}{'x' if dims else ''}{t.element_type}>"
    return str(t)


class MlvmOp(IRDLOperation):
    """Base of every mlvm op: typed access to operands and results."""

    # Names given to operands in diagnostics, in order.
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ()
    # Ops whose result is data known at compile time (emitted as C constants).
    IS_DATA: ClassVar[bool] = False
    # Ops that need a call state (the function becomes begin / resume) ...
    SUSPENDS: ClassVar[bool] = False
    # ... and ops that also need a module instance (imports, queues, state).
    NEEDS_INSTANCE: ClassVar[bool] = False
    # Ops that read or write the instance's module state (mlvm.global_*).
    USES_STATE: ClassVar[bool] = False
    # Ops that use the instance's communicator (collectives, rank).
    USES_COMM: ClassVar[bool] = False

    # -- typing helpers ----------------------------------------------------
    def tensor(self, v: SSAValue, what: str) -> TensorType[Attribute]:
        t = v.type
        if not isinstance(t, TensorType):
            raise VerifyException(f"{self.name}: {what} must be a ranked tensor, got {t}")
        shape = t.get_shape()
        if any(d < 0 for d in shape):
            raise VerifyException(
                f"{self.name}: {what} {type_str(t)} must have a static shape"
            )
        if len(shape) > MAX_RANK:
            raise VerifyException(
                f"{self.name}: {what} {type_str(t)} has rank {len(shape)} > {MAX_RANK}"
            )
        if elem_name(t.element_type) is None:
            raise VerifyException(
                f"{self.name}: {what} {type_str(t)} has an element type mlvm does not "
                f"support (one of {', '.join(ELEMS)})"
            )
        return t

    def shape_of(self, v: SSAValue, what: str) -> Shape:
        return tuple(self.tensor(v, what).get_shape())

    def elem_of(self, v: SSAValue, what: str) -> str:
        name = elem_name(self.tensor(v, what).element_type)
        assert name is not None
        return name

    def elem_entry(self, v: SSAValue, what: str) -> Elem:
        return ELEMS[self.elem_of(v, what)]

    def expect_elem(self, v: SSAValue, what: str, allowed: Sequence[str]) -> str:
        e = self.elem_of(v, what)
        if e not in allowed:
            raise VerifyException(
                f"{self.name}: {what} {type_str(v.type)} must have element type "
                + _one_of(allowed)
            )
        return e

    def expect_result(self, idx: int, shape: Shape, elem: str, what: str = "result") -> None:
        got = self.shape_of(self.results[idx], what)
        got_elem = self.elem_of(self.results[idx], what)
        if got != tuple(shape) or got_elem != elem:
            want = "x".join(str(d) for d in shape)
            want = f"tensor<{want}{'x' if want else ''}{elem}>"
            raise VerifyException(
                f"{self.name}: {what} type {type_str(self.results[idx].type)} "
                f"does not match the expected {want}"
            )

    # -- the op's semantics ------------------------------------------------
    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        """numpy reference: the op's results for the given operand arrays."""
        raise NotImplementedError(self.name)

    def lower(self, cg: Lowering) -> None:
        """Emit the C statements that compute the op's results."""
        raise NotImplementedError(self.name)

    # Operands whose buffer result 0 may take over when the operand dies at
    # this op (the kernel reads each element before writing the same one).
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = ()

    def workspace_bytes(self) -> int:
        """Scratch bytes the op's kernel needs while it runs (in the arena,
        planned like a buffer that lives for this op only; 0: none)."""
        return 0

    # Whether the kernel cannot run without its workspace (planned even when
    # the optional ones are left out: --no-workspaces).
    WORKSPACE_REQUIRED: ClassVar[bool] = False

    def workspace_required(self) -> bool:
        """WORKSPACE_REQUIRED, for ops whose kernel depends on properties."""
        return self.WORKSPACE_REQUIRED

    def alias_operand(self) -> int | None:
        """Index of the operand whose bytes result 0 reuses, if any.

        Views (`reshape`) always alias; other ops do when the in-place pass
        marked them with `mlvm.inplace`.
        """
        attr = self.attributes.get("mlvm.inplace")
        if isinstance(attr, IntegerAttr):
            return int(attr.value.data)
        return None

    def can_run_inplace(self, k: int) -> bool:
        """Whether result 0 may be computed into operand k's buffer."""
        return (
            k in self.INPLACE_OPERANDS
            and len(self.results) == 1
            and self.operands[k].type == self.results[0].type
        )


def _one_of(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def result_dtype(op: MlvmOp, idx: int = 0) -> np.dtype[np.generic]:
    t = op.results[idx].type
    assert isinstance(t, TensorType)
    name = elem_name(t.element_type)
    assert name is not None
    return DTYPES[name]


def result_shape(op: MlvmOp, idx: int = 0) -> Shape:
    t = op.results[idx].type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())
