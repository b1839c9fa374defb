"""Fuse trees of elementwise ops into one loop nest (`mlvm.fused`).

Walking from the last op up, each elementwise op not yet fused starts a
group; a producer joins the group when it is elementwise, produces the
group's output shape (so nothing is recomputed), and all its users are in
the group (so its value is never needed in memory). Groups of two or more
ops become one `mlvm.fused` op at the position of their last op; its
operands are the values the group reads from outside, broadcast included.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlvm.dialect.base import MlvmOp
from mlvm.dialect.fused import FusedOp, FusedYieldOp


def is_elementwise(op: Operation) -> bool:
    return isinstance(op, MlvmOp) and hasattr(op, "scalar_expr") and len(op.results) == 1


def _group(root: MlvmOp, taken: set[Operation]) -> list[Operation]:
    shape = root.results[0].type
    assert isinstance(shape, TensorType)
    members: set[Operation] = {root}
    grew = True
    while grew:
        grew = False
        for op in list(members):
            for v in op.operands:
                p = v.owner
                if (
                    isinstance(p, Operation)
                    and p not in members
                    and p not in taken
                    and p.parent is root.parent
                    and is_elementwise(p)
                    and isinstance(p.results[0].type, TensorType)
                    and p.results[0].type.get_shape() == shape.get_shape()
                    and all(u.operation in members for u in p.results[0].uses)
                ):
                    members.add(p)
                    grew = True
    block = root.parent
    assert block is not None
    return [op for op in block.ops if op in members]  # program order


def _fuse(group: list[Operation]) -> FusedOp:
    inside = set(group)
    inputs: list[SSAValue] = []
    for op in group:
        for v in op.operands:
            if v.owner not in inside and v not in inputs:
                inputs.append(v)
    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args, strict=True))
    for op in group:
        clone = op.clone(value_mapper=mapping)
        clone.attributes.clear()
        body.add_op(clone)
        mapping[op.results[0]] = clone.results[0]
    root = group[-1]
    body.add_op(FusedYieldOp.create(operands=[mapping[root.results[0]]]))
    rt = root.results[0].type
    assert isinstance(rt, TensorType)
    fused = FusedOp.make(inputs, rt, body)
    fused.location = root.location
    return fused


@dataclass(frozen=True)
class FusePass(ModulePass):
    name = "mlvm-fuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                self._run(f.body.block)

    def _run(self, block: Block) -> None:
        taken: set[Operation] = set()
        groups: list[list[Operation]] = []
        for op in reversed(list(block.ops)):
            if op in taken or not is_elementwise(op):
                continue
            assert isinstance(op, MlvmOp)
            group = _group(op, taken)
            taken.update(group)
            if len(group) >= 2:
                groups.append(group)
        for group in groups:
            root = group[-1]
            fused = _fuse(group)
            Rewriter.insert_op(fused, InsertPoint.before(root))
            root.results[0].replace_all_uses_with(fused.result)
            for member in reversed(group):
                Rewriter.erase_op(member)
