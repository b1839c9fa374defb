"""Let an op's result take over an operand's buffer when the operand dies there.

The raw machine's in-place operations, decided by the compiler: an
elementwise op whose operand k has the result's exact type (no broadcast,
same dtype) and whose bytes nobody reads afterwards writes its result over
that operand. The decision is visible in the IR as `mlvm.inplace = k`; the
storage analysis then treats the result as an alias of the operand, so the
memory planner gives both one buffer.

Operands that are function inputs, constants, parameters or globals read
in place (see `mlvm.analysis.storage.state_views`) are never overwritten; neither is a value that is (or aliases) a returned result,
since it is read by the return.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from mlvm.analysis.storage import Roots, last_reads, state_views
from mlvm.dialect.base import MlvmOp
from mlvm.dialect.state import GlobalLoadOp, GlobalStoreOp
from mlvm.passes import defined_functions


def _writable(v: SSAValue, views: set[SSAValue], root: Roots) -> bool:
    """Whether v's bytes belong to the function (not an input, constant data
    or a global's bytes read in place)."""
    r = root(v)
    if isinstance(r, BlockArgument) or r in views:
        return False
    owner = r.owner
    return isinstance(owner, MlvmOp) and not owner.IS_DATA


def _updates_global(op: MlvmOp, views: set[SSAValue], root: Roots) -> bool:
    """Whether op computes a global's next value from the global read in
    place (`w - lr * g` stored to @w): it is best computed straight into the
    global's bytes, not over another operand."""
    if len(op.results) != 1:
        return False
    targets = {u.operation.global_.string_value() for u in op.results[0].uses
               if isinstance(u.operation, GlobalStoreOp)}
    return any(
        isinstance(v.owner, GlobalLoadOp) and v.owner.global_.string_value() in targets
        for v in (root(x) for x in op.operands) if v in views
    )


@dataclass(frozen=True)
class InplacePass(ModulePass):
    name = "mlvm-inplace"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in defined_functions(op):
            self._run(f)

    def _run(self, f: func.FuncOp) -> None:
        ops = list(f.body.block.ops)
        root = Roots()
        views = state_views(f, root)
        # Bytes already stored to a global stay as stored: then the value can
        # be computed straight into the global (see analysis.storage).
        stored: set[SSAValue] = set()
        # Last reads per storage root, kept current as decisions are made
        # (one pass: no rescan per candidate).
        last = last_reads(ops, root)
        for i, op in enumerate(ops):
            if isinstance(op, GlobalStoreOp):
                stored.add(root(op.value))
            if not isinstance(op, MlvmOp) or op.alias_operand() is not None:
                continue
            if _updates_global(op, views, root):
                continue  # its own buffer: the global's bytes (see analysis.storage)
            for k, operand in enumerate(op.operands):
                if not op.can_run_inplace(k) or not _writable(operand, views, root):
                    continue
                r = root(operand)
                if r in stored or last.get(r) != i:
                    continue
                # The result's bytes are now r's: r lives as long as the
                # result (and its views) is read.
                last[r] = last.pop(op.results[0], i)
                root.alias(op.results[0], operand)
                op.attributes["mlvm.inplace"] = IntegerAttr(k, i64)
                break
