"""Compute what depends on no input right before its first use.

The importers put a model's constants first: a filled tensor (ONNX
`ConstantOfShape`, a quantized layer's per-channel zero points of one
value), the float weight a `DequantizeLinear` of a parameter gives, a
layer's multipliers computed from parameter scales. Where such an op stays
first, its buffer in the arena lives from the call's start to its last use
and sits under every peak before it (an int8 MobileNet's 23 zero-point
fills and one dequantized weight: 4.7 KB of its 119 KB arena).

This pass moves such ops right before their first user in the same block.
An op moves when it is pure and each operand is data (a constant's or a
parameter's, never in the arena) or the result of an op that moves whose
every user moves too: then no buffer is read later than before (an operand another op still reads
where it was keeps its place and its readers theirs). Ops reading an
argument, a global's value or anything with an effect stay. It runs after
`mlvm-pack-weights` and before `mlvm-fuse` and `mlvm-inplace`, which then
decide on the final order; it changes no value.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, Pure

from mlvm.dialect.base import MlvmOp
from mlvm.passes import defined_functions


def _data(v: SSAValue) -> bool:
    """Whether v is a constant's or a parameter's (bytes outside the arena)."""
    owner = v.owner
    return isinstance(owner, MlvmOp) and owner.IS_DATA


def _candidate(op: Operation, block: Block) -> bool:
    return (
        isinstance(op, MlvmOp)
        and op.has_trait(Pure)
        and not op.has_trait(IsTerminator)
        and all(isinstance(v.owner, Operation) and v.owner.parent_block() is block for v in op.operands)
    )


def _movable(block: Block) -> set[Operation]:
    """The ops that move: candidates whose non-data operands come from ops
    that move and whose every user moves (the greatest such set, by a
    worklist: an op dropped sends its operands' and results' users to be
    checked again)."""
    moving = {op for op in block.ops if _candidate(op, block)}

    def keeps(op: Operation) -> bool:
        return all(
            _data(v) or (v.owner in moving and all(u.operation in moving for u in v.uses))
            for v in op.operands
        )

    work = list(moving)
    while work:
        op = work.pop()
        if op not in moving or keeps(op):
            continue
        moving.discard(op)
        for v in (*op.operands, *op.results):
            work.extend(u.operation for u in v.uses if u.operation in moving)
    return moving


def _first_user(op: Operation, at: dict[Operation, Fraction]) -> Operation | None:
    """The first op (by at) that uses a result of op. Users are ops of op's
    block: a fused op's body reads only its own operands (its verifier)."""
    users = [u.operation for r in op.results for u in r.uses]
    return min(users, key=at.__getitem__, default=None)


def sink_block(block: Block) -> None:
    moving = _movable(block)
    # exact positions kept as the ops move (a moved op takes the midpoint
    # between its user and the op before it)
    at = {o: Fraction(i) for i, o in enumerate(block.ops)}
    placed: set[Operation] = set()
    # last first: an op's operands then follow it to its new place; ops
    # moved before one user keep their order (each goes before those
    # already placed there)
    for op in reversed(list(block.ops)):
        if op not in moving:
            continue
        user = _first_user(op, at)
        if user is None:
            continue
        while user.prev_op is not None and user.prev_op in placed and user.prev_op is not op:
            user = user.prev_op
        placed.add(op)
        if op.next_op is user:
            continue
        op.detach()
        prev = user.prev_op
        at[op] = (at[prev] + at[user]) / 2 if prev is not None else at[user] - 1
        block.insert_op_before(op, user)


@dataclass(frozen=True)
class SinkConstantsPass(ModulePass):
    name = "mlvm-sink-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in defined_functions(op):
            block = f.body.blocks.first
            if block is not None:
                sink_block(block)
