"""`mlvm.fused`: a tree of elementwise ops computed in one loop nest.

Made by the `mlvm-fuse` pass. The region holds the original ops on tensors;
block arguments stand for the operands (which may broadcast). Every op in
the body produces the fused result's shape, so the loop computes each
output element once, from scalars, with no intermediate buffer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from mlvm.dialect.base import MlvmOp, elem_name, result_shape
from mlvm.dialect.shapes import broadcast_strides, collapse, contiguous_strides

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering

_C_TYPES = {"f32": "float", "i32": "int32_t"}


@irdl_op_definition
class FusedOp(MlvmOp):
    name = "mlvm.fused"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure())

    @staticmethod
    def make(inputs: Sequence[SSAValue], result_type: TensorType, body: Block) -> FusedOp:
        return FusedOp.create(operands=list(inputs), result_types=[result_type],
                              regions=[Region(body)])

    def body_ops(self) -> list[MlvmOp]:
        ops = list(self.body.block.ops)[:-1]
        assert all(isinstance(op, MlvmOp) for op in ops)
        return ops  # type: ignore[return-value]

    def verify_(self) -> None:
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException(f"{self.name}: block arguments do not match the operands")
        last = block.last_op
        if not isinstance(last, FusedYieldOp) or last.value.type != self.result.type:
            raise VerifyException(
                f"{self.name}: body must end in mlvm.fused_yield of the result type"
            )
        out = result_shape(self)
        for op in list(block.ops)[:-1]:
            if not hasattr(op, "scalar_expr"):
                raise VerifyException(f"{self.name}: {op.name} is not elementwise")
            t = op.results[0].type
            if not isinstance(t, TensorType) or tuple(t.get_shape()) != out:
                raise VerifyException(
                    f"{self.name}: body op {op.name} must produce the result shape"
                )

    def can_run_inplace(self, k: int) -> bool:
        return self.inputs[k].type == self.result.type

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        env: dict[SSAValue, np.ndarray] = dict(zip(self.body.block.args, inputs, strict=True))
        for op in self.body_ops():
            env[op.results[0]] = op.reference([env[v] for v in op.operands], params)[0]
        last = self.body.block.last_op
        assert isinstance(last, FusedYieldOp)
        return [env[last.value]]

    def lower(self, cg: Lowering) -> None:
        out_shape = result_shape(self)
        args = list(self.body.block.args)
        strides = [contiguous_strides(out_shape)] + [
            broadcast_strides(tuple(a.type.get_shape()), out_shape)  # type: ignore[attr-defined]
            for a in args
        ]
        shape, cstrides = collapse(out_shape, strides)
        names: dict[SSAValue, str] = {}
        lines = ["{"]
        for k, (a, v) in enumerate(zip(args, self.inputs, strict=True)):
            ctype = _C_TYPES[elem_name(a.type.element_type) or "f32"]  # type: ignore[attr-defined]
            lines.append(f"    const {ctype} *in{k} = {cg.ptr(v)};")
        out_t = _C_TYPES[elem_name(self.result.type.element_type) or "f32"]  # type: ignore[attr-defined]
        lines.append(f"    {out_t} *out = {cg.ptr(self.result)};")
        idx = [f"i{d}" for d in range(len(shape))]
        lines.append(f"    mlvm_index_t {', '.join(idx)};")
        pad = "    "
        for d, n in enumerate(shape):
            lines.append(f"{pad}for ({idx[d]} = 0; {idx[d]} < {n}; ++{idx[d]}) {{")
            pad += "    "

        def at(stride: Sequence[int]) -> str:
            terms = [f"{i} * {s}" if s != 1 else i for i, s in zip(idx, stride) if s != 0]
            return " + ".join(terms) or "0"

        for k, a in enumerate(args):
            if not a.uses:
                continue
            ctype = _C_TYPES[elem_name(a.type.element_type) or "f32"]  # type: ignore[attr-defined]
            names[a] = f"a{k}"
            lines.append(f"{pad}const {ctype} a{k} = in{k}[{at(cstrides[k + 1])}];")
        for j, op in enumerate(self.body_ops()):
            r = op.results[0]
            ctype = _C_TYPES[elem_name(r.type.element_type) or "f32"]  # type: ignore[attr-defined]
            names[r] = f"t{j}"
            expr = op.scalar_expr([names[v] for v in op.operands])  # type: ignore[attr-defined]
            lines.append(f"{pad}const {ctype} t{j} = {expr};")
        last = self.body.block.last_op
        assert isinstance(last, FusedYieldOp)
        lines.append(f"{pad}out[{at(cstrides[0])}] = {names[last.value]};")
        for d in range(len(shape)):
            pad = pad[:-4]
            lines.append(f"{pad}}}")
        lines.append("}")
        cg.stmt("\n    ".join(lines))


@irdl_op_definition
class FusedYieldOp(IRDLOperation):
    name = "mlvm.fused_yield"
    value = operand_def(TensorType)
    traits = traits_def(IsTerminator(), HasParent(FusedOp))
