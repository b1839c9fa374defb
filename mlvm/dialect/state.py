"""Module state: tensors an instance keeps from one call to the next.

`mlvm.global` declares a tensor at module level (initial value: a parameter
of the archive, or zeros); `mlvm.global_load` reads it and
`mlvm.global_store` replaces it. The bytes live in storage the caller gives
the instance (`<M>_STATE_BYTES`), apart from the arena, which stays scratch.

Loads and stores are not pure: passes never fold, erase or reorder them.
Where it is safe, the storage analysis lets a load name the state bytes
directly and lets a stored value be computed straight into them (see
`mlvm.analysis.storage`), so a step `w = w - lr * g` updates `w` in place.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
from xdsl.dialects.builtin import StringAttr, SymbolRefAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from mlvm.dialect.base import DTYPES, MlvmOp, elem_name, type_str
from mlvm.dialect.shapes import MAX_RANK

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering


def state_key(name: str) -> str:
    """Key under which `reference.run` keeps a global's current value in `params`."""
    return f"@state:{name}"


@irdl_op_definition
class GlobalOp(IRDLOperation):
    """A tensor kept by the instance across calls (module level)."""

    name = "mlvm.global"
    sym_name = prop_def(StringAttr)
    type = prop_def(TensorType)
    init = opt_prop_def(StringAttr)
    traits = traits_def(SymbolOpInterface())

    def tensor_type(self) -> TensorType[Attribute]:
        t = self.type
        assert isinstance(t, TensorType)
        return t

    def verify_(self) -> None:
        if not self.sym_name.data or "\0" in self.sym_name.data:
            raise VerifyException(f"{self.name}: sym_name must be non-empty and have no NUL")
        t = self.tensor_type()
        shape = t.get_shape()
        if any(d < 0 for d in shape) or len(shape) > MAX_RANK:
            raise VerifyException(
                f"{self.name}: @{self.sym_name.data} has type {type_str(t)}; "
                f"a global needs a static shape of rank <= {MAX_RANK}"
            )
        if elem_name(t.element_type) is None:
            raise VerifyException(
                f"{self.name}: @{self.sym_name.data} has type {type_str(t)}; "
                "a global must have an element type mlvm supports"
            )
        if self.init is not None and not self.init.data:
            raise VerifyException(f"{self.name}: init must name a parameter")
        parent = self.parent_op()
        if parent is not None and parent.parent_op() is not None:
            raise VerifyException(f"{self.name}: @{self.sym_name.data} must be at module level")

    def initial(self, params: Mapping[str, Any]) -> np.ndarray:
        """The value a fresh instance starts with."""
        t = self.tensor_type()
        name = elem_name(t.element_type)
        assert name is not None
        dtype, shape = DTYPES[name], tuple(t.get_shape())
        if self.init is None:
            return np.zeros(shape, dtype=dtype)
        arr = np.asarray(params[self.init.data])
        if arr.shape != shape or arr.dtype != dtype:
            raise ValueError(
                f"global @{self.sym_name.data}: parameter '{self.init.data}' is "
                f"{arr.dtype} {arr.shape}, the global is {type_str(t)}"
            )
        return arr.copy()


def lookup_global(op: Operation, ref: SymbolRefAttr, what: str) -> GlobalOp:
    """The `mlvm.global` a load or store names (a VerifyException if none)."""
    found = None
    if not ref.nested_references.data:
        try:
            found = SymbolTable.lookup_symbol(op, ref)
        except ValueError:
            found = None
    if not isinstance(found, GlobalOp):
        raise VerifyException(f"{what}: @{ref.string_value()} is not an mlvm.global of this module")
    return found


class GlobalAccessOp(MlvmOp):
    global_ = prop_def(SymbolRefAttr, prop_name="global")
    NEEDS_INSTANCE: ClassVar[bool] = True
    USES_STATE: ClassVar[bool] = True

    def target(self) -> GlobalOp:
        return lookup_global(self, self.global_, self.name)

    # A load's value is its result, a store's its operand; bytes move from
    # the state to the value for a load, the other way for a store.
    LOADS: ClassVar[bool]
    VALUE_NAME: ClassVar[str]

    def data(self) -> SSAValue:
        raise NotImplementedError

    def verify_(self) -> None:
        g = self.target()
        t = self.tensor(self.data(), self.VALUE_NAME)
        if t != g.type:
            raise VerifyException(
                f"{self.name}: @{g.sym_name.data} is {type_str(g.type)}, "
                f"but the op's value is {type_str(t)}"
            )

    def lower(self, cg: Lowering) -> None:
        state, value = cg.state_ptr(self), cg.ptr(self.data())
        if state == value:  # the value names (or was computed into) the state bytes
            return
        src, dst = (state, value) if self.LOADS else (value, state)
        cg.stmt(f"mlvm_copy({cg.nbytes(self.data())}, {src}, {dst});")

    def current(self, params: Mapping[str, Any]) -> np.ndarray:
        g = self.target()
        state = cast(MutableMapping[str, Any], params)
        key = state_key(g.sym_name.data)
        if key not in state:
            state[key] = g.initial(params)
        arr: np.ndarray = state[key]
        return arr


@irdl_op_definition
class GlobalLoadOp(GlobalAccessOp):
    """The global's current value."""

    name = "mlvm.global_load"
    result = result_def(TensorType)
    LOADS: ClassVar[bool] = True
    VALUE_NAME: ClassVar[str] = "result"

    def data(self) -> SSAValue:
        return self.result

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]
    ) -> list[np.ndarray]:
        return [self.current(params).copy()]


@irdl_op_definition
class GlobalStoreOp(GlobalAccessOp):
    """Replaces the global's value (seen by later loads and later calls)."""

    name = "mlvm.global_store"
    value = operand_def(TensorType)
    LOADS: ClassVar[bool] = False
    VALUE_NAME: ClassVar[str] = "value"

    def data(self) -> SSAValue:
        return self.value

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]
    ) -> list[np.ndarray]:
        self.current(params)  # a store with no load before it still names a known global
        cast(MutableMapping[str, Any], params)[state_key(self.target().sym_name.data)] = (
            np.array(inputs[0], copy=True)
        )
        return []


STATE_OPS: list[type[IRDLOperation]] = [GlobalOp, GlobalLoadOp, GlobalStoreOp]
