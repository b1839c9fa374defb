"""Let an op's result take over an operand's buffer when the operand dies there.

The raw machine's in-place operations, decided by the compiler: an
elementwise op whose operand k has the result's exact type (no broadcast,
same dtype) and whose bytes nobody reads afterwards writes its result over
that operand. The decision is visible in the IR as `mlvm.inplace = k`; the
storage analysis then treats the result as an alias of the operand, so the
memory planner gives both one buffer.

Operands that are function inputs, constants or parameters are never
overwritten; neither is a value that is (or aliases) a returned result,
since it is read by the return.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from mlvm.analysis.storage import root
from mlvm.dialect.base import MlvmOp


def _last_reads(block_ops: list[Operation]) -> dict[SSAValue, int]:
    """For each storage root, the index of the last op reading it or an alias."""
    last: dict[SSAValue, int] = {}
    for i, op in enumerate(block_ops):
        for operand in op.operands:
            last[root(operand)] = i
    return last


def _writable(v: SSAValue) -> bool:
    """Whether v's bytes belong to the function (not an input or constant data)."""
    r = root(v)
    if isinstance(r, BlockArgument):
        return False
    owner = r.owner
    return isinstance(owner, MlvmOp) and not owner.IS_DATA


@dataclass(frozen=True)
class InplacePass(ModulePass):
    name = "mlvm-inplace"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                self._run(f)

    def _run(self, f: func.FuncOp) -> None:
        ops = list(f.body.block.ops)
        for i, op in enumerate(ops):
            if not isinstance(op, MlvmOp) or op.alias_operand() is not None:
                continue
            for k, operand in enumerate(op.operands):
                if not op.can_run_inplace(k) or not _writable(operand):
                    continue
                # Recomputed per candidate: earlier decisions extend lifetimes.
                if _last_reads(ops).get(root(operand)) != i:
                    continue
                op.attributes["mlvm.inplace"] = IntegerAttr(k, i64)
                break
