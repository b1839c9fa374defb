"""Where each SSA value of a function lives, and for how long.

A value's bytes are one of: a caller-owned input, a caller-owned output, a
compile-time constant, or a buffer in the arena. Views (`reshape`) and ops
marked in place by `mlvm-inplace` alias an operand's storage.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from mlvm.dialect.base import MlvmOp


def nbytes(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, TensorType)
    return 4 * prod(t.get_shape())


def root(v: SSAValue) -> SSAValue:
    """The value that owns the bytes `v` names (through views and in-place ops)."""
    while True:
        owner = v.owner
        if isinstance(owner, MlvmOp) and v is owner.results[0]:
            k = owner.alias_operand()
            if k is not None:
                v = owner.operands[k]
                continue
        return v


@dataclass(frozen=True)
class Storage:
    kind: str  # "input" | "output" | "data" | "arena"
    index: int = -1  # input/output position


@dataclass(eq=False)
class Interval:
    value: SSAValue
    start: int  # index of the defining op
    end: int  # index of the last op that reads it (or an alias of it)
    size: int


@dataclass
class FunctionStorage:
    func: func.FuncOp
    storage: dict[SSAValue, Storage]
    intervals: list[Interval]

    def of(self, v: SSAValue) -> Storage:
        return self.storage[root(v)]


def _return_op(f: func.FuncOp) -> func.ReturnOp:
    last = f.body.block.last_op
    assert isinstance(last, func.ReturnOp)
    return last


def analyze(f: func.FuncOp) -> FunctionStorage:
    block = f.body.block
    ret = _return_op(f)
    storage: dict[SSAValue, Storage] = {}
    for i, arg in enumerate(block.args):
        storage[arg] = Storage("input", i)
    # A returned value is computed straight into the caller's output buffer;
    # through a reshape too, since an alias has the same bytes.
    for j, v in enumerate(ret.operands):
        r = root(v)
        if r not in storage and not isinstance(r, BlockArgument):
            owner = r.owner
            if isinstance(owner, MlvmOp) and not owner.IS_DATA:
                storage[r] = Storage("output", j)

    index: dict[Operation, int] = {op: i for i, op in enumerate(block.ops)}
    intervals: dict[SSAValue, Interval] = {}
    for op in block.ops:
        if not isinstance(op, MlvmOp):
            continue
        for r in op.results:
            if root(r) is not r or r in storage:
                continue
            if op.IS_DATA:
                storage[r] = Storage("data")
                continue
            storage[r] = Storage("arena")
            intervals[r] = Interval(r, index[op], index[op], nbytes(r))
    for op in block.ops:
        for operand in op.operands:
            iv = intervals.get(root(operand))
            if iv is not None:
                iv.end = max(iv.end, index[op])
    return FunctionStorage(f, storage, list(intervals.values()))
