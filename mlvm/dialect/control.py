"""Ops that touch the world outside the dataflow: suspension, native calls,
queues, and the check module.

They need a call state (the function becomes a coroutine: `begin` /
`resume`) and, for native calls and queues, a module instance that binds
names to functions and queues. None of them is pure: passes never erase,
fold or reorder them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import Float32Type, FloatAttr, StringAttr, TensorType
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from mlvm.dialect.base import MlvmOp, result_dtype, result_shape, type_str
from mlvm.dialect.shapes import broadcast_strides, can_broadcast_to

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering


class CheckFailed(AssertionError):
    """Raised by the numpy reference of a failing check op."""


def import_key(name: str) -> str:
    """Key under which `reference.run` finds a native function in `params`."""
    return f"@import:{name}"


def queue_key(name: str) -> str:
    """Key under which `reference.run` finds a queue (a list) in `params`."""
    return f"@queue:{name}"


@irdl_op_definition
class YieldOp(MlvmOp):
    """A suspension point: the call returns MLVM_SUSPENDED and resumes here."""

    name = "mlvm.yield"
    SUSPENDS: ClassVar[bool] = True

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]
    ) -> list[np.ndarray]:
        return []

    def lower(self, cg: Lowering) -> None:
        k = cg.resume_point()
        cg.stmt(cg.suspend(k))
        cg.stmt(cg.label(k))


@irdl_op_definition
class CallCOp(MlvmOp):
    """A call of a native function imported by name (bound at instantiation)."""

    name = "mlvm.call_c"
    args = var_operand_def(TensorType)
    res = var_result_def(TensorType)
    callee = prop_def(StringAttr)
    SUSPENDS: ClassVar[bool] = True
    NEEDS_INSTANCE: ClassVar[bool] = True

    def verify_(self) -> None:
        if not self.callee.data:
            raise VerifyException(f"{self.name}: callee must be a non-empty name")
        for i, v in enumerate(self.args):
            self.tensor(v, f"argument {i}")
        for i, v in enumerate(self.res):
            self.tensor(v, f"result {i}")

    def signature(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return tuple(v.type for v in self.args), tuple(v.type for v in self.res)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]
    ) -> list[np.ndarray]:
        fn: Callable[..., Any] | None = params.get(import_key(self.callee.data))
        if fn is None:
            raise KeyError(f"no native function '{self.callee.data}' given to the reference")
        out = fn(*inputs)
        outs = [] if out is None else list(out) if isinstance(out, tuple | list) else [out]
        return [
            np.asarray(o, dtype=result_dtype(self, i)).reshape(result_shape(self, i))
            for i, o in enumerate(outs)
        ]

    def lower(self, cg: Lowering) -> None:
        idx = cg.import_index(self)
        k = cg.resume_point()
        args = ", ".join(f"(void *){cg.ptr(v)}" for v in self.args) or "NULL"
        res = ", ".join(f"(void *){cg.ptr(v)}" for v in self.res) or "NULL"
        cg.stmt(cg.label(k))
        cg.stmt(
            "{\n"
            f"        void *const args_[] = {{{args}}};\n"
            f"        void *const res_[] = {{{res}}};\n"
            f"        const mlvm_native_t *fn_ = {cg.instance()}->imports[{idx}];\n"
            "        const mlvm_status_t st_ = fn_->fn(fn_->user, args_, res_);\n"
            f"        if (st_ == MLVM_SUSPENDED) {cg.suspend(k)}\n"
            f"        if (st_ != MLVM_OK) {cg.fail('st_')}\n"
            "    }"
        )


class QueueOp(MlvmOp):
    queue = prop_def(StringAttr)
    SUSPENDS: ClassVar[bool] = True
    NEEDS_INSTANCE: ClassVar[bool] = True

    def element(self) -> TensorType[Any]:
        raise NotImplementedError

    def verify_(self) -> None:
        if not self.queue.data:
            raise VerifyException(f"{self.name}: queue must be a non-empty name")
        self.element()


@irdl_op_definition
class QueuePopOp(QueueOp):
    """Takes the next element of a queue; suspends while it is empty."""

    name = "mlvm.queue_pop"
    result = result_def(TensorType)

    def element(self) -> TensorType[Any]:
        return self.tensor(self.result, "result")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]
    ) -> list[np.ndarray]:
        q = params[queue_key(self.queue.data)]
        return [np.asarray(q.pop(0), dtype=result_dtype(self)).reshape(result_shape(self))]

    def lower(self, cg: Lowering) -> None:
        q = cg.queue_index(self)
        k = cg.resume_point()
        cg.stmt(cg.label(k))
        cg.stmt(
            f"if (mlvm_queue_pop({cg.instance()}->queues[{q}], {cg.ptr(self.result)}) "
            f"!= MLVM_OK) {cg.suspend(k)}"
        )


@irdl_op_definition
class QueuePushOp(QueueOp):
    """Appends an element to a queue; suspends while it is full."""

    name = "mlvm.queue_push"
    value = operand_def(TensorType)

    def element(self) -> TensorType[Any]:
        return self.tensor(self.value, "value")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]
    ) -> list[np.ndarray]:
        params[queue_key(self.queue.data)].append(np.array(inputs[0]))
        return []

    def lower(self, cg: Lowering) -> None:
        q = cg.queue_index(self)
        k = cg.resume_point()
        cg.stmt(cg.label(k))
        cg.stmt(
            f"if (mlvm_queue_push({cg.instance()}->queues[{q}], {cg.ptr(self.value)}) "
            f"!= MLVM_OK) {cg.suspend(k)}"
        )


class CheckOp(MlvmOp):
    """`got` against `want` (which broadcasts to got's shape)."""

    got = operand_def(TensorType)
    want = operand_def(TensorType)
    SUSPENDS: ClassVar[bool] = True
    KERNEL: ClassVar[str]

    def tolerances(self) -> tuple[float, float]:
        return 0.0, 0.0

    def verify_(self) -> None:
        eg, ew = self.elem_of(self.got, "got"), self.elem_of(self.want, "want")
        sg, sw = self.shape_of(self.got, "got"), self.shape_of(self.want, "want")
        if eg != ew or not can_broadcast_to(sw, sg):
            raise VerifyException(
                f"{self.name}: want {type_str(self.want.type)} must have the element "
                f"type of got {type_str(self.got.type)} and broadcast to its shape"
            )

    def failure(self, got: np.ndarray, want: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]
    ) -> list[np.ndarray]:
        got, want = inputs[0], np.broadcast_to(inputs[1], inputs[0].shape)
        bad = self.failure(got, want)
        if bad.any():
            i = int(np.flatnonzero(bad.reshape(-1))[0])
            raise CheckFailed(
                f"{self.name} failed at flat index {i}: got {got.reshape(-1)[i]}, "
                f"want {want.reshape(-1)[i]}"
            )
        return []

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.got, "got")
        it = cg.iter(
            shape,
            [broadcast_strides(shape, shape), broadcast_strides(self.shape_of(self.want, "want"), shape)],
        )
        atol, rtol = self.tolerances()
        elem = self.elem_of(self.got, "got")
        rep = f"{cg.call_header()}.check"
        cg.stmt(
            f"if ({self.KERNEL}_{elem}({it}, {cg.ptr(self.got)}, {cg.ptr(self.want)}, "
            f"{cg.flt(atol)}, {cg.flt(rtol)}, &{rep}.index, &{rep}.got, &{rep}.want)) "
            f"{{ {rep}.where = {cg.where(self)}; {cg.fail('MLVM_ERR_CHECK')} }}"
        )


def _tol(op: MlvmOp, name: str, default: float) -> float:
    attr = op.properties.get(name)
    if attr is None:
        return float(np.float32(default))
    if not isinstance(attr, FloatAttr) or not isinstance(attr.type, Float32Type):
        raise VerifyException(f"{op.name}: property '{name}' must be an f32 float")
    return float(np.float32(attr.value.data))


@irdl_op_definition
class CheckCloseOp(CheckOp):
    """Fails unless |got - want| <= atol + rtol * |want| everywhere (numpy.isclose)."""

    name = "mlvm.check_close"
    atol = opt_prop_def(FloatAttr)
    rtol = opt_prop_def(FloatAttr)
    KERNEL: ClassVar[str] = "mlvm_check_close"

    def verify_(self) -> None:
        super().verify_()
        if self.elem_of(self.got, "got") != "f32":
            raise VerifyException(f"{self.name}: got {type_str(self.got.type)} must be f32")
        self.tolerances()

    def tolerances(self) -> tuple[float, float]:
        return _tol(self, "atol", 1e-8), _tol(self, "rtol", 1e-5)

    def failure(self, got: np.ndarray, want: np.ndarray) -> np.ndarray:
        atol, rtol = (np.float32(t) for t in self.tolerances())
        with np.errstate(invalid="ignore"):
            return ~(np.abs(got - want) <= atol + rtol * np.abs(want))


@irdl_op_definition
class CheckEqOp(CheckOp):
    """Fails unless got == want everywhere."""

    name = "mlvm.check_eq"
    KERNEL: ClassVar[str] = "mlvm_check_eq"

    def failure(self, got: np.ndarray, want: np.ndarray) -> np.ndarray:
        return ~(got == want)


CONTROL_OPS: list[type[MlvmOp]] = [
    YieldOp, CallCOp, QueuePopOp, QueuePushOp, CheckCloseOp, CheckEqOp,
]

__all__ = ["CONTROL_OPS", "CheckFailed", "import_key", "queue_key"]
