"""`mlvm.fused`: a tree of elementwise ops computed in one loop nest.

Made by the `mlvm-fuse` pass. The region holds the original ops on tensors;
block arguments stand for the operands (which may broadcast). Every op in
the body produces the fused result's shape, so the loop computes each
output element once, from scalars, with no intermediate buffer.

The body may start with a rank-2 `mlvm.matmul` (the head) whose result the
elementwise tree consumes: the loop then runs over blocks of rows, each
block's product computed into its rows of the output and finished there,
in place, by the elementwise epilogue (bias, activation, ...) while it is
still in cache; the product needs no buffer of its own.
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

from mlvm.codegen.lowering import C_TYPES
from mlvm.dialect.base import MlvmOp, elem_name, result_shape
from mlvm.dialect.ops import MatmulOp
from mlvm.dialect.shapes import broadcast_strides, collapse, contiguous_strides

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering

HEAD_BLOCK_BYTES = 16 * 1024


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

    def head(self) -> MatmulOp | None:
        first = self.body.block.first_op
        return first if isinstance(first, MatmulOp) else None

    def _head_rows(self) -> int:
        """Rows per block: about 16 KiB of product, so the epilogue finds it in L1."""
        m, n = result_shape(self)
        return max(1, min(m, HEAD_BLOCK_BYTES // (4 * max(n, 1))))

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
        head = self.head()
        if head is not None:
            if len(out) != 2 or tuple(head.operands) != tuple(block.args[:2]):
                raise VerifyException(
                    f"{self.name}: a matmul head must be rank 2 and read operands 0 and 1"
                )
        for op in list(block.ops)[1 if head is not None else 0 : -1]:
            if not hasattr(op, "scalar_expr"):
                raise VerifyException(f"{self.name}: {op.name} is not elementwise")
            t = op.results[0].type
            if not isinstance(t, TensorType) or tuple(t.get_shape()) != out:
                raise VerifyException(
                    f"{self.name}: body op {op.name} must produce the result shape"
                )

    def can_run_inplace(self, k: int) -> bool:
        # With a head, each block's product lands in the output rows before
        # the epilogue reads its operands: none of them may share the output.
        return self.head() is None and self.inputs[k].type == self.result.type

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
        if self.head() is not None:
            self._lower_with_head(cg)
            return
        out_shape = result_shape(self)
        args = list(self.body.block.args)
        strides = [contiguous_strides(out_shape)] + [
            broadcast_strides(_shape(a), out_shape) for a in args
        ]
        shape, cstrides = collapse(out_shape, strides)
        idx = [f"i{d}" for d in range(len(shape))]
        lines = ["{", *self._pointers(cg, range(len(args)))]
        lines.append(f"    mlvm_index_t {', '.join(idx)};")
        pad = "    "
        for d, n in enumerate(shape):
            lines.append(f"{pad}for ({idx[d]} = 0; {idx[d]} < {n}; ++{idx[d]}) {{")
            pad += "    "
        names: dict[SSAValue, str] = {}
        for k, a in enumerate(args):
            if a.uses:
                names[a] = f"a{k}"
                lines.append(f"{pad}const {_ctype(a)} a{k} = in{k}[{_at(idx, cstrides[k + 1])}];")
        lines += self._epilogue(pad, names, self.body_ops(), f"out[{_at(idx, cstrides[0])}]")
        for _ in shape:
            pad = pad[:-4]
            lines.append(f"{pad}}}")
        lines.append("}")
        cg.stmt("\n    ".join(lines))

    def _pointers(self, cg: Lowering, which: range) -> list[str]:
        args = list(self.body.block.args)
        lines = [f"    const {_ctype(args[k])} *in{k} = {cg.ptr(self.inputs[k])};" for k in which]
        # Unless the result took over an operand's buffer, nothing else
        # addresses the output's bytes during the loop: say so, so the
        # compiler vectorises without run-time overlap checks.
        qual = "" if self.alias_operand() is not None else "restrict "
        lines.append(f"    {_ctype(self.result)} *{qual}out = {cg.ptr(self.result)};")
        return lines

    def _epilogue(
        self, pad: str, names: dict[SSAValue, str], ops: Sequence[MlvmOp], target: str
    ) -> list[str]:
        lines = []
        for j, op in enumerate(ops):
            r = op.results[0]
            names[r] = f"t{j}"
            expr = op.scalar_expr([names[v] for v in op.operands])  # type: ignore[attr-defined]
            lines.append(f"{pad}const {_ctype(r)} t{j} = {expr};")
        last = self.body.block.last_op
        assert isinstance(last, FusedYieldOp)
        lines.append(f"{pad}{target} = {names[last.value]};")
        return lines

    def _lower_with_head(self, cg: Lowering) -> None:
        head = self.head()
        assert head is not None
        m, n = result_shape(self)
        _, _, _, k = head.dims()
        a_rs, a_cs, b_rs, b_cs = head.strides()
        rows = self._head_rows()
        args = list(self.body.block.args)
        lines = [
            "{",
            *self._pointers(cg, range(len(args))),
            "    mlvm_matmul_t p;",
            "    mlvm_index_t r0, i, j;",
            f"    for (r0 = 0; r0 < {m}; r0 += {rows}) {{",
            f"        const mlvm_index_t rb = {m} - r0 < {rows} ? {m} - r0 : {rows};",
            f"        p.m = rb; p.n = {n}; p.k = {k};",
            f"        p.a_rs = {a_rs}; p.a_cs = {a_cs}; p.b_rs = {b_rs}; p.b_cs = {b_cs};",
            f"        mlvm_matmul_f32(&p, {cg.iter((1,), [(0,), (0,)])}, in0 + r0 * {a_rs}, in1, out + r0 * {n});",
            "        for (i = 0; i < rb; ++i) {",
            f"            for (j = 0; j < {n}; ++j) {{",
        ]
        pad = " " * 16
        names: dict[SSAValue, str] = {head.results[0]: "h"}
        lines.append(f"{pad}const float h = out[(r0 + i) * {n} + j];")
        for kk, a in enumerate(args):
            if any(u.operation is not head for u in a.uses):
                st = broadcast_strides(_shape(a), (m, n))
                names[a] = f"a{kk}"
                lines.append(
                    f"{pad}const {_ctype(a)} a{kk} = in{kk}[(r0 + i) * {st[0]} + j * {st[1]}];"
                )
        lines += self._epilogue(pad, names, self.body_ops()[1:], f"out[(r0 + i) * {n} + j]")
        lines += ["            }", "        }", "    }", "}"]
        cg.stmt("\n    ".join(lines))


def _shape(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def _ctype(v: SSAValue) -> str:
    t = v.type
    assert isinstance(t, TensorType)
    return C_TYPES[elem_name(t.element_type) or "f32"]


def _at(idx: Sequence[str], stride: Sequence[int]) -> str:
    terms = [f"{i} * {s}" if s != 1 else i for i, s in zip(idx, stride, strict=True) if s != 0]
    return " + ".join(terms) or "0"


@irdl_op_definition
class FusedYieldOp(IRDLOperation):
    name = "mlvm.fused_yield"
    value = operand_def(TensorType)
    traits = traits_def(IsTerminator(), HasParent(FusedOp))
