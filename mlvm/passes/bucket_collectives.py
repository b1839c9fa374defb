"""Gather small all-reduces of one function into one (gradient buckets).

A data-parallel step reduces several gradients one after the other; each
`mlvm.all_reduce` is a meeting of all ranks, whose cost at small sizes is
the meeting, not the data. Consecutive all-reduces of one kind and element
type, with no other suspension point between them and none of their
results read before the last of them, become one: their operands flattened
and concatenated, one all_reduce, and slices reshaped back (as PyTorch's
DistributedDataParallel buckets gradients). The bits do not change: each
element is reduced over the same ranks in the same order. Buckets stay
under `max_bytes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from mlvm.dialect.base import MlvmOp
from mlvm.dialect.collective import AllReduceOp
from mlvm.dialect.nn import ConcatOp, SliceOp
from mlvm.dialect.ops import ReshapeOp
from mlvm.passes import defined_functions


def _shape(op: AllReduceOp) -> tuple[int, ...]:
    t = op.result.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def _first_use(op: AllReduceOp, index: dict[Operation, int]) -> int:
    return min((index[u.operation] for u in op.result.uses), default=len(index))


@dataclass(frozen=True)
class BucketCollectivesPass(ModulePass):
    name = "mlvm-bucket-collectives"
    max_bytes: int = 1 << 20

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_bytes < 0:
            raise PassFailedException(
                f"mlvm-bucket-collectives: max_bytes {self.max_bytes} must not be negative"
            )
        for f in defined_functions(op):
            for group in self._groups(f):
                self._merge(group)

    def _groups(self, f: func.FuncOp) -> list[list[AllReduceOp]]:
        ops = list(f.body.block.ops)
        index = {o: i for i, o in enumerate(ops)}
        groups: list[list[AllReduceOp]] = []
        current: list[AllReduceOp] = []
        for o in ops:
            if isinstance(o, AllReduceOp):
                t = o.result.type
                assert isinstance(t, TensorType)
                key = (o.kind.data, t.element_type)
                head = current[0] if current else None
                fits = (
                    head is not None
                    and (head.kind.data, head.result.type.element_type) == key  # type: ignore[union-attr]
                    and all(_first_use(m, index) > index[o] for m in current)
                    and 4 * sum(prod(_shape(m)) for m in [*current, o]) <= self.max_bytes
                )
                if not fits:
                    if len(current) > 1:
                        groups.append(current)
                    current = []
                current.append(o)
            elif isinstance(o, MlvmOp) and o.SUSPENDS:
                if len(current) > 1:
                    groups.append(current)
                current = []
        if len(current) > 1:
            groups.append(current)
        return groups

    def _merge(self, group: list[AllReduceOp]) -> None:
        last = group[-1]
        block = last.parent_block()
        assert block is not None
        elem = last.result.type.element_type  # type: ignore[union-attr]
        sizes = [prod(_shape(m)) for m in group]
        total = sum(sizes)
        new: list[Operation] = []
        flats = []
        for m, n in zip(group, sizes, strict=True):
            r = ReshapeOp.create(operands=[m.operand], result_types=[TensorType(elem, [n])])
            new.append(r)
            flats.append(r.results[0])
        cat = ConcatOp.create(operands=flats, result_types=[TensorType(elem, [total])],
                              properties={"axis": IntegerAttr(0, i64)})
        ar = AllReduceOp.create(operands=[cat.results[0]], result_types=[TensorType(elem, [total])],
                                properties={"kind": last.kind})
        new += [cat, ar]
        replacements = []
        offset = 0
        for m, n in zip(group, sizes, strict=True):
            s = SliceOp.create(operands=[ar.results[0]], result_types=[TensorType(elem, [n])],
                               properties={"start": DenseArrayBase.from_list(i64, [offset])})
            r = ReshapeOp.create(operands=[s.results[0]], result_types=[m.result.type])
            new += [s, r]
            replacements.append(r.results[0])
            offset += n
        block.insert_ops_before(new, last)
        for m, v in zip(group, replacements, strict=True):
            m.result.replace_all_uses_with(v)
            m.detach()
            m.erase()
