"""Collectives between ranks (one module instance per core), MPI-style.

They run through the communicator bound to the instance (`mlvm/comm.h`).
A collective that waits for its peers suspends the call, so each makes its
function a coroutine (begin / resume); `rank` and `world_size` only read
the communicator. The world size is a run-time fact while shapes are
static: `all_gather` and `reduce_scatter` fix it through their shapes
(result axis = operand axis x world size, or the reverse), and the
generated code refuses a communicator of another size (MLVM_ERR_SHAPE).

The numpy reference runs one rank: it takes the rank's view of the world
from `params[COMM_KEY]` (see `mlvm.parallel.reference_run`), or a world of
one rank when there is none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import prod
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType, i64
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from mlvm.dialect.base import MlvmOp, result_dtype, result_shape, type_str

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering

COMM_KEY = "@comm"
KINDS = {"sum": 0, "max": 1, "min": 2, "mean": 3}
DTYPE_CODES = {"f32": "MLVM_F32", "i32": "MLVM_I32"}


class RankView(Protocol):
    """What the reference of one rank needs from its world."""

    rank: int
    size: int

    def exchange(self, value: np.ndarray) -> list[np.ndarray]:
        """Every rank's `value`, in rank order (all ranks call it together)."""
        ...

    def send(self, peer: int, tag: int, value: np.ndarray) -> None: ...

    def recv(self, peer: int, tag: int) -> np.ndarray: ...


class SingleRank:
    """The world of one rank: what the reference uses without a world."""

    rank = 0
    size = 1

    def exchange(self, value: np.ndarray) -> list[np.ndarray]:
        return [value]

    def send(self, peer: int, tag: int, value: np.ndarray) -> None:
        raise ValueError("mlvm.send in a world of one rank")

    def recv(self, peer: int, tag: int) -> np.ndarray:
        raise ValueError("mlvm.recv in a world of one rank")


def _view(params: Mapping[str, Any]) -> RankView:
    view: RankView = params.get(COMM_KEY) or SingleRank()
    return view


def _reduce(kind: str, arrays: list[np.ndarray]) -> np.ndarray:
    """In rank order, as the C does, so the bits agree."""
    acc = arrays[0].copy()
    for a in arrays[1:]:
        if kind in ("sum", "mean"):
            with np.errstate(over="ignore"):
                acc = (acc + a).astype(acc.dtype)
        elif kind == "max":
            acc = np.maximum(acc, a)
        else:
            acc = np.minimum(acc, a)
    if kind == "mean":
        acc = (acc / np.float32(len(arrays))).astype(np.float32)
    return acc


class CollectiveOp(MlvmOp):
    SUSPENDS: ClassVar[bool] = True
    NEEDS_INSTANCE: ClassVar[bool] = True
    USES_COMM: ClassVar[bool] = True

    def call(self, cg: Lowering, k: int, method: str, args: str) -> None:
        """A resume point, then the communicator call, suspending while it waits."""
        cg.stmt(cg.label(k))
        cg.stmt(
            "{\n"
            f"        const mlvm_status_t st_ = comm->ops->{method}(comm, &call->coll_, {args});\n"
            f"        if (st_ == MLVM_SUSPENDED) {cg.suspend(k)}\n"
            f"        if (st_ != MLVM_OK) {cg.fail('st_')}\n"
            "    }"
        )

    def world_check(self, cg: Lowering, size: int) -> None:
        cg.stmt(f"if (comm->size != {size}) {cg.fail('MLVM_ERR_SHAPE')}")


def _kind(op: MlvmOp, attr: StringAttr, elem: str) -> str:
    kind = attr.data
    if kind not in KINDS:
        raise VerifyException(f"{op.name}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "mean" and elem != "f32":
        raise VerifyException(f"{op.name}: kind \"mean\" needs f32, not {elem}")
    return kind


def _axis(op: MlvmOp, attr: IntegerAttr[Any], rank: int) -> int:
    axis = int(attr.value.data)
    if not 0 <= axis < rank:
        raise VerifyException(f"{op.name}: axis {axis} is out of range for rank {rank}")
    return axis


@irdl_op_definition
class AllReduceOp(CollectiveOp):
    """Every rank gets the elementwise reduction of every rank's operand."""

    name = "mlvm.all_reduce"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    kind = prop_def(StringAttr)

    def verify_(self) -> None:
        elem = self.elem_of(self.operand, "operand")
        _kind(self, self.kind, elem)
        self.expect_result(0, self.shape_of(self.operand, "operand"), elem)

    def reference(self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]) -> list[np.ndarray]:
        return [_reduce(self.kind.data, _view(params).exchange(inputs[0]))]

    def lower(self, cg: Lowering) -> None:
        k = cg.resume_point()
        n = prod(self.shape_of(self.operand, "operand"))
        dt = DTYPE_CODES[self.elem_of(self.operand, "operand")]
        self.call(cg, k, "all_reduce", f"{KINDS[self.kind.data]}, {dt}, {cg.ptr(self.operand)}, "
                  f"{cg.ptr(self.result)}, {n}")


@irdl_op_definition
class AllGatherOp(CollectiveOp):
    """The ranks' operands concatenated along `axis`, in rank order."""

    name = "mlvm.all_gather"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr.constr(type=i64))

    def world(self) -> int:
        a, r = self.shape_of(self.operand, "operand"), self.shape_of(self.result, "result")
        ax = _axis(self, self.axis, len(a))
        if a[ax] == 0 or r[ax] % a[ax] != 0 or r[ax] == 0:
            raise VerifyException(
                f"{self.name}: result {type_str(self.result.type)} is not operand "
                f"{type_str(self.operand.type)} times a world size along axis {ax}"
            )
        return r[ax] // a[ax]

    def verify_(self) -> None:
        a = self.shape_of(self.operand, "operand")
        ax = _axis(self, self.axis, len(a))
        n = self.world()
        self.expect_result(0, (*a[:ax], a[ax] * n, *a[ax + 1 :]), self.elem_of(self.operand, "operand"))

    def reference(self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]) -> list[np.ndarray]:
        parts = _view(params).exchange(inputs[0])
        if len(parts) != self.world():
            raise ValueError(f"{self.name}: shaped for {self.world()} ranks, run on {len(parts)}")
        return [np.concatenate(parts, axis=int(self.axis.value.data))]

    def lower(self, cg: Lowering) -> None:
        a = self.shape_of(self.operand, "operand")
        ax = int(self.axis.value.data)
        self.world_check(cg, self.world())
        k = cg.resume_point()
        self.call(cg, k, "all_gather", f"{cg.ptr(self.operand)}, {cg.ptr(self.result)}, "
                  f"{prod(a[:ax])}, {prod(a[ax:]) * 4}")


@irdl_op_definition
class ReduceScatterOp(CollectiveOp):
    """The reduction of the ranks' operands, split along `axis`: rank r keeps part r."""

    name = "mlvm.reduce_scatter"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    kind = prop_def(StringAttr)
    axis = prop_def(IntegerAttr.constr(type=i64))

    def world(self) -> int:
        a, r = self.shape_of(self.operand, "operand"), self.shape_of(self.result, "result")
        ax = _axis(self, self.axis, len(a))
        if r[ax] == 0 or a[ax] % r[ax] != 0 or a[ax] == 0:
            raise VerifyException(
                f"{self.name}: operand {type_str(self.operand.type)} is not result "
                f"{type_str(self.result.type)} times a world size along axis {ax}"
            )
        return a[ax] // r[ax]

    def verify_(self) -> None:
        elem = self.elem_of(self.operand, "operand")
        _kind(self, self.kind, elem)
        a = self.shape_of(self.operand, "operand")
        ax = _axis(self, self.axis, len(a))
        n = self.world()
        self.expect_result(0, (*a[:ax], a[ax] // n, *a[ax + 1 :]), elem)

    def reference(self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]) -> list[np.ndarray]:
        view = _view(params)
        parts = view.exchange(inputs[0])
        if len(parts) != self.world():
            raise ValueError(f"{self.name}: shaped for {self.world()} ranks, run on {len(parts)}")
        total = _reduce(self.kind.data, parts)
        return [np.split(total, len(parts), axis=int(self.axis.value.data))[view.rank].copy()]

    def lower(self, cg: Lowering) -> None:
        r = self.shape_of(self.result, "result")
        ax = int(self.axis.value.data)
        self.world_check(cg, self.world())
        k = cg.resume_point()
        dt = DTYPE_CODES[self.elem_of(self.operand, "operand")]
        self.call(cg, k, "reduce_scatter", f"{KINDS[self.kind.data]}, {dt}, {cg.ptr(self.operand)}, "
                  f"{cg.ptr(self.result)}, {prod(r[:ax])}, {prod(r[ax:])}")


def _rank_in(op: MlvmOp, attr: IntegerAttr[Any], what: str) -> int:
    v = int(attr.value.data)
    if v < 0:
        raise VerifyException(f"{op.name}: {what} must be >= 0, got {v}")
    return v


@irdl_op_definition
class BroadcastOp(CollectiveOp):
    """Every rank gets rank `root`'s operand."""

    name = "mlvm.broadcast"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    root = prop_def(IntegerAttr.constr(type=i64))

    def verify_(self) -> None:
        _rank_in(self, self.root, "root")
        self.expect_result(0, self.shape_of(self.operand, "operand"), self.elem_of(self.operand, "operand"))

    def reference(self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]) -> list[np.ndarray]:
        parts = _view(params).exchange(inputs[0])
        root = int(self.root.value.data)
        if root >= len(parts):
            raise ValueError(f"{self.name}: root {root} in a world of {len(parts)}")
        return [parts[root].copy()]

    def lower(self, cg: Lowering) -> None:
        root = int(self.root.value.data)
        cg.stmt(f"if (comm->size <= {root}) {cg.fail('MLVM_ERR_SHAPE')}")
        k = cg.resume_point()
        self.call(cg, k, "broadcast", f"{root}, {cg.ptr(self.operand)}, {cg.ptr(self.result)}, "
                  f"{cg.nbytes(self.result)}")


@irdl_op_definition
class BarrierOp(CollectiveOp):
    """Waits until every rank has reached it."""

    name = "mlvm.barrier"

    def reference(self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]) -> list[np.ndarray]:
        _view(params).exchange(np.zeros(0, np.float32))
        return []

    def lower(self, cg: Lowering) -> None:
        k = cg.resume_point()
        cg.stmt(cg.label(k))
        cg.stmt(
            "{\n"
            "        const mlvm_status_t st_ = comm->ops->barrier(comm, &call->coll_);\n"
            f"        if (st_ == MLVM_SUSPENDED) {cg.suspend(k)}\n"
            f"        if (st_ != MLVM_OK) {cg.fail('st_')}\n"
            "    }"
        )


class PointToPointOp(CollectiveOp):
    peer = prop_def(IntegerAttr.constr(type=i64))
    tag = prop_def(IntegerAttr.constr(type=i64))

    def check_peer(self, cg: Lowering) -> None:
        peer = int(self.peer.value.data)
        cg.stmt(f"if (comm->size <= {peer} || comm->rank == {peer}) {cg.fail('MLVM_ERR_SHAPE')}")

    def verify_(self) -> None:
        _rank_in(self, self.peer, "peer")
        tag = int(self.tag.value.data)
        if not 0 <= tag < 1 << 31:
            raise VerifyException(f"{self.name}: tag must be in [0, 2^31), got {tag}")


@irdl_op_definition
class SendOp(PointToPointOp):
    """Sends the operand to rank `peer` (returns once it is received)."""

    name = "mlvm.send"
    operand = operand_def(TensorType)

    def verify_(self) -> None:
        super().verify_()
        self.tensor(self.operand, "operand")

    def reference(self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]) -> list[np.ndarray]:
        _view(params).send(int(self.peer.value.data), int(self.tag.value.data), np.array(inputs[0]))
        return []

    def lower(self, cg: Lowering) -> None:
        self.check_peer(cg)
        k = cg.resume_point()
        self.call(cg, k, "send", f"{int(self.peer.value.data)}, {int(self.tag.value.data)}, "
                  f"{cg.ptr(self.operand)}, {cg.nbytes(self.operand)}")


@irdl_op_definition
class RecvOp(PointToPointOp):
    """Receives a tensor rank `peer` sent with the same tag."""

    name = "mlvm.recv"
    result = result_def(TensorType)

    def verify_(self) -> None:
        super().verify_()
        self.tensor(self.result, "result")

    def reference(self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]) -> list[np.ndarray]:
        got = _view(params).recv(int(self.peer.value.data), int(self.tag.value.data))
        return [np.asarray(got, dtype=result_dtype(self)).reshape(result_shape(self))]

    def lower(self, cg: Lowering) -> None:
        self.check_peer(cg)
        k = cg.resume_point()
        self.call(cg, k, "recv", f"{int(self.peer.value.data)}, {int(self.tag.value.data)}, "
                  f"{cg.ptr(self.result)}, {cg.nbytes(self.result)}")


class CommInfoOp(MlvmOp):
    """A scalar i32 read from the communicator: no waiting."""

    result = result_def(TensorType)
    NEEDS_INSTANCE: ClassVar[bool] = True
    USES_COMM: ClassVar[bool] = True
    FIELD: ClassVar[str]

    def verify_(self) -> None:
        self.expect_result(0, (), "i32")

    def lower(self, cg: Lowering) -> None:
        cg.stmt(f"{cg.ptr(self.result)}[0] = comm->{self.FIELD};")


@irdl_op_definition
class RankOp(CommInfoOp):
    name = "mlvm.rank"
    FIELD: ClassVar[str] = "rank"

    def reference(self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]) -> list[np.ndarray]:
        return [np.array(_view(params).rank, np.int32)]


@irdl_op_definition
class WorldSizeOp(CommInfoOp):
    name = "mlvm.world_size"
    FIELD: ClassVar[str] = "size"

    def reference(self, inputs: Sequence[np.ndarray], params: Mapping[str, Any]) -> list[np.ndarray]:
        return [np.array(_view(params).size, np.int32)]


COLLECTIVE_OPS: list[type[MlvmOp]] = [
    AllReduceOp, AllGatherOp, ReduceScatterOp, BroadcastOp, BarrierOp, SendOp, RecvOp,
    RankOp, WorldSizeOp,
]
