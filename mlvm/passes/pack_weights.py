"""Store weights in the layout their kernel reads.

A parameter that is only ever read as a transposed matmul operand
(`transpose_rhs` on the rhs, as PyTorch's `nn.Linear` and ONNX `Gemm
transB=1` weights are, or `transpose_lhs` on the lhs) is emitted transposed
once, at compile time: the `mlvm.param` gets a `perm` swapping its last two
dims and the matmuls read it untransposed, so no call repacks a constant.
Every use must agree, or the weight would be stored twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from mlvm.dialect.ops import MatmulOp, ParamOp

_FLAG = ("transpose_lhs", "transpose_rhs")


def _is_transposed_read(use_op: Operation, index: int) -> bool:
    if not isinstance(use_op, MatmulOp):
        return False
    attr = use_op.properties.get(_FLAG[index])
    return isinstance(attr, IntegerAttr) and bool(attr.value.data)


def _swap_last_two(seq: list[int]) -> list[int]:
    out = list(seq)
    out[-2], out[-1] = out[-1], out[-2]
    return out


@dataclass(frozen=True)
class PackWeightsPass(ModulePass):
    name = "mlvm-pack-weights"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                for p in [o for o in f.body.block.ops if isinstance(o, ParamOp)]:
                    self._pack(p)

    def _pack(self, p: ParamOp) -> None:
        t = p.result.type
        assert isinstance(t, TensorType)
        shape = list(t.get_shape())
        uses = list(p.result.uses)
        if len(shape) < 2 or not uses:
            return
        if not all(_is_transposed_read(u.operation, u.index) for u in uses):
            return
        perm = _swap_last_two(list(p.permutation() or range(len(shape))))
        props: dict[str, object] = {"name": p.param_name,
                                    "perm": DenseArrayBase.from_list(i64, perm)}
        packed = ParamOp.create(result_types=[TensorType(t.element_type, _swap_last_two(shape))],
                                properties=props)  # type: ignore[arg-type]
        packed.result.name_hint = p.result.name_hint
        p.parent_block().insert_op_before(packed, p)  # type: ignore[union-attr]
        for u in uses:
            mm = u.operation
            mm.operands[u.index] = packed.result
            mm.properties[_FLAG[u.index]] = IntegerAttr.from_bool(False)
        p.detach()
        p.erase()
