"""Compute what depends on no input right before its first use.

The importers put a model's constants first: a filled tensor (ONNX
`ConstantOfShape`, a quantized layer's per-channel zero points of one
value), the float weight a `DequantizeLinear` of a parameter gives, a
layer's multipliers computed from parameter scales. Where such an op stays
first, its buffer in the arena lives from the call's start to its last use
and sits under every peak before it (an int8 MobileNet's 23 zero-point
fills and one dequantized weight: 4.7 KB of its 119 KB arena).

This pass moves each such op right before its first user in the same
block: an op is moved when it is pure and all its operands come from ops
that are (constants, parameters and fills are such ops with no operands);
ops reading a function argument, a global's value or anything with an
effect stay where they are. Run after the passes that choose fusions and
in-place writes and before `mlvm-plan-memory`: it changes no value and no
other op's operands, only where its ops' buffers begin to live (never
later than before: an op moves towards its user, and its own operands are
data or ops moved with it).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, Pure

from mlvm.dialect.base import MlvmOp


def _static(op: Operation, block: Block, static: set[Operation]) -> bool:
    """Whether op depends on no input: pure, and each operand made by a
    static op of this block."""
    if not isinstance(op, MlvmOp) or not op.has_trait(Pure) or op.has_trait(IsTerminator):
        return False
    for v in op.operands:
        owner = v.owner
        if not isinstance(owner, Operation) or owner.parent_block() is not block or owner not in static:
            return False
    return True


def _first_user(op: Operation, block: Block, at: dict[Operation, float]) -> Operation | None:
    """The first op of block (by at) that uses a result of op (itself, or
    holding the use in a region)."""
    best: Operation | None = None
    for r in op.results:
        for use in r.uses:
            user: Operation | None = use.operation
            while user is not None and user.parent_block() is not block:
                user = user.parent_op()
            if user is not None and (best is None or at[user] < at[best]):
                best = user
    return best


def sink_block(block: Block) -> None:
    static: set[Operation] = set()
    for op in block.ops:
        if _static(op, block, static):
            static.add(op)
    # positions kept as the ops move (a moved op takes the midpoint between
    # its user and the op before it): linear in the block's ops
    at = {o: float(i) for i, o in enumerate(block.ops)}
    # last first: an op's operands then follow it to its new place
    for op in reversed(list(block.ops)):
        if op not in static:
            continue
        user = _first_user(op, block, at)
        if user is None or op.next_op is user:
            continue
        op.detach()
        prev = user.prev_op
        at[op] = (at[prev] + at[user]) / 2 if prev is not None else at[user] - 1.0
        block.insert_op_before(op, user)


@dataclass(frozen=True)
class SinkConstantsPass(ModulePass):
    name = "mlvm-sink-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                block = f.body.blocks.first
                if block is not None:
                    sink_block(block)
