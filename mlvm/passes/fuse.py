"""Fuse trees of elementwise ops into one loop nest (`mlvm.fused`).

Walking from the last op up, each elementwise op not yet fused starts a
group; a producer joins the group when it is elementwise, produces the
group's output shape (so nothing is recomputed), and all its users are in
the group (so its value is never needed in memory). Groups of two or more
ops become one `mlvm.fused` op at the position of their last op; its
operands are the values the group reads from outside, broadcast included.
A group may end in an op whose own kernel is faster than its scalar form
in the loop (exp, sigmoid, erf, GELU: `UnaryOp.kernel_faster`):
`mlvm.fused` then runs it by that kernel after the loop or epilogue where
the C has the vector forms (its kernel root).

A group whose value only an f32 reduction over its last axes reads (a
dequantized feature map into a global average pool) takes that reduction
as its end (`mlvm.fused`'s tail), when what it reads from outside is one
value or of its own shape: the value is then never stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlvm.codegen.lowering import elem
from mlvm.dialect.base import MlvmOp
from mlvm.dialect.fused import FusedOp, FusedYieldOp, Head, conv_epilogue_strides, tail_fits
from mlvm.dialect.nn import Conv2dOp
from mlvm.dialect.ops import MatmulOp, ReduceOp
from mlvm.passes import defined_functions


def is_elementwise(op: Operation) -> bool:
    return isinstance(op, MlvmOp) and hasattr(op, "scalar_expr") and len(op.results) == 1


def _group(root: MlvmOp, taken: set[Operation], order: dict[Operation, int]) -> list[Operation]:
    shape = root.results[0].type
    assert isinstance(shape, TensorType)
    members: set[Operation] = {root}
    # A worklist: each member's producers are examined when it joins. One
    # turned away while a reader of it was outside is examined again when
    # that reader joins (the last to join decides), so this reaches the same
    # set as rescanning every member until nothing joins, in linear time.
    work: list[Operation] = [root]
    while work:
        for v in work.pop().operands:
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
                work.append(p)
    return sorted(members, key=order.__getitem__)  # program order (order: the block's, before any rewrite)


def _outside_operands(group: list[Operation], head: Operation) -> list[SSAValue]:
    inside = set(group)
    return [v for op in group for v in op.operands if v.owner not in inside and v.owner is not head]


def _head(group: list[Operation]) -> Head | None:
    """A rank-2 matmul or a conv2d whose only reader is the group and whose
    result has the group's shape: it can run block by block ahead of the
    elementwise tree. A conv2d's epilogue sees its output as a matrix [n *
    o, oh * ow], so every other operand must be addressable that way."""
    out = group[-1].results[0].type
    for op in group:
        for v in op.operands:
            m = v.owner
            if not (
                isinstance(m, MatmulOp | Conv2dOp)
                and m.parent is op.parent
                and v.type == out
                and isinstance(out, TensorType)
                and all(u.operation in group for u in v.uses)
            ):
                continue
            if isinstance(m, MatmulOp) and len(out.get_shape()) == 2:
                return m
            if isinstance(m, Conv2dOp) and all(
                conv_epilogue_strides(a, m) is not None for a in _outside_operands(group, m)
            ):
                return m
    return None


def _tail(group: list[Operation]) -> ReduceOp | None:
    """The reduction that alone reads the group's value and can end it
    (tail_fits), when the group reads nothing from outside but single
    values and values of its own shape, and none of those dies in the group
    as wide as the value (the value could then take its buffer: a chunk's
    workspace would only add to the arena)."""
    root = group[-1]
    uses = list(root.results[0].uses)
    if len(uses) != 1 or not isinstance(uses[0].operation, ReduceOp):
        return None
    red = uses[0].operation
    shape = root.results[0].type
    assert isinstance(shape, TensorType)
    if red.parent is not root.parent or not tail_fits(red):
        return None
    inside = set(group)
    for v in _outside_operands(group, root):
        t = v.type
        if not isinstance(t, TensorType) or (prod(t.get_shape()) > 1 and t.get_shape() != shape.get_shape()):
            return None
        owner = v.owner
        if (prod(t.get_shape()) > 1 and elem(v).size >= elem(root.results[0]).size
                and isinstance(owner, MlvmOp) and not owner.IS_DATA
                and all(u.operation in inside for u in v.uses)):
            return None
    return red


def _fuse(group: list[Operation], head: Head | None, tail: ReduceOp | None = None) -> FusedOp:
    inside = set(group)
    inputs: list[SSAValue] = list(head.operands) if head is not None else []
    seen = set(inputs)
    for op in group:
        for v in op.operands:
            if v.owner not in inside and v not in seen and v.owner is not head:
                inputs.append(v)
                seen.add(v)
    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for v, a in zip(inputs, body.args, strict=True):
        mapping.setdefault(v, a)
    ops = ([head] if head is not None else []) + group
    for k, op in enumerate(ops):
        clone = op.clone(value_mapper=mapping)
        clone.attributes.clear()
        if k == 0 and head is not None:
            # the head always reads the first arguments
            clone.operands = body.args[: len(head.operands)]
        body.add_op(clone)
        mapping[op.results[0]] = clone.results[0]
    root: Operation = group[-1]
    if tail is not None:
        clone = tail.clone(value_mapper=mapping)
        clone.attributes.clear()
        body.add_op(clone)
        mapping[tail.results[0]] = clone.results[0]
        root = tail
    body.add_op(FusedYieldOp.create(operands=[mapping[root.results[0]]]))
    rt = root.results[0].type
    assert isinstance(rt, TensorType)
    fused = FusedOp.make(inputs, rt, body)
    fused.location = root.location
    return fused


@dataclass(frozen=True)
class FusePass(ModulePass):
    name = "mlvm-fuse"

    epilogues: bool = True  # absorb a rank-2 matmul or a conv2d feeding the tree

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in defined_functions(op):
            self._run(f.body.block)

    def _run(self, block: Block) -> None:
        taken: set[Operation] = set()
        groups: list[tuple[list[Operation], Head | None, ReduceOp | None]] = []
        ops = list(block.ops)
        order = {o: i for i, o in enumerate(ops)}
        for op in reversed(ops):
            if op in taken or not is_elementwise(op):
                continue
            assert isinstance(op, MlvmOp)
            group = _group(op, taken, order)
            taken.update(group)
            # a head first: its epilogue stores nothing, where a tail
            # would read the head's whole output
            head = _head(group) if self.epilogues else None
            tail = _tail(group) if head is None else None
            if head is not None:
                taken.add(head)
            if len(group) + (head is not None) + (tail is not None) >= 2:
                groups.append((group, head, tail))
        for group, head, tail in groups:
            end: Operation = tail if tail is not None else group[-1]
            fused = _fuse(group, head, tail)
            Rewriter.insert_op(fused, InsertPoint.before(end))
            end.results[0].replace_all_uses_with(fused.result)
            if tail is not None:
                Rewriter.erase_op(tail)
            for member in reversed(group):
                Rewriter.erase_op(member)
            if head is not None:
                Rewriter.erase_op(head)
