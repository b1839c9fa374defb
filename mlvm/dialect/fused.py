"""`mlvm.fused`: a tree of elementwise ops computed in one loop nest.

Made by the `mlvm-fuse` pass. The region holds the original ops on tensors;
block arguments stand for the operands (which may broadcast). Every op in
the body produces the fused result's shape, so the loop computes each
output element once, from scalars, with no intermediate buffer.

The body may start with a rank-2 `mlvm.matmul` (the head) whose result the
elementwise tree consumes: the product is computed into the output by one
blocked GEMM (`mlvm_matmul_epilogue_f32`), which hands each finished block
(a row block over a column block, still in L2) to a generated function
applying the elementwise epilogue (bias, activation, residual add, ...)
in place; a Linear layer's bias and an activation alone its tile kernels
apply in registers instead; the product needs no buffer of its own
and the GEMM streams its operands once whatever the epilogue. A
`mlvm.conv2d` head works the same way (`mlvm_conv2d_epilogue_f32`), its
output seen as the matrix [n * o, oh * ow] and handed over group by group
(ReLU, Clip, a residual add, ...).

The body may instead end in an f32 `mlvm.reduce` (sum, mean or max over
its operand's last axes; the tail) of the tree's value: the tree is
computed a chunk of rows at a time into a workspace (TAIL_CHUNK elements)
and each row reduced by the runtime's row functions, which its reduction
kernels use too, so the result is the unfused ops' bit for bit, and the
tree's value (a dequantized feature map before a global average pool)
never needs a buffer of its own.

The body may end in an op whose array kernel, a vector at a time, is
faster than its scalar form in the loop (`UnaryOp.kernel_faster`: exp,
sigmoid, erf, GELU; the kernel root). Where the runtime has those vector
forms (`MLVM_VECTOR_MATH`, mlvm/vmath.h) the C computes the body without it
(loop or epilogue) into the output, then runs the kernel over it in place;
elsewhere the loop or epilogue applies it as the other ops. The same bits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from math import prod
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, BlockArgument, Region, SSAValue
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

from mlvm.codegen.lowering import elem, elementwise_loop, output_shared, value_shape
from mlvm.dialect.base import MlvmOp, result_shape
from mlvm.dialect.nn import Conv2dOp, conv2d_call, conv2d_taps_call
from mlvm.dialect.ops import (
    REDUCE_KERNELS,
    AddOp,
    ConstantOp,
    MatmulOp,
    MaxOp,
    MinOp,
    ReduceOp,
    ReluOp,
    UnaryOp,
    row_entry,
)
from mlvm.dialect.shapes import broadcast_strides

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering

Head = MatmulOp | Conv2dOp

# Elements of the tree a fused reduction computes into its workspace at a
# time (whole rows: at least one): enough for vector loops, a few KiB.
TAIL_CHUNK = 512


def tail_geometry(op: ReduceOp) -> tuple[int, int, int]:
    """(rows, elements per row, rows per chunk) of a reduction over its
    operand's last axes."""
    shape = value_shape(op.operand)
    n = prod(shape[len(shape) - len(op.norm_axes()):])
    rows = prod(shape) // n if n else 0
    return rows, n, max(1, min(rows, TAIL_CHUNK // max(n, 1)))


def tail_misfit(op: ReduceOp) -> str | None:
    """Why a reduction cannot end a fused tree (None when it can): it must
    be f32, of a kind the runtime's f32 kernels reduce (REDUCE_KERNELS: the
    rows are its row functions'), over its operand's last axes (rows of
    contiguous elements), of more rows than a chunk holds (else the chunk
    would hold the whole tree: nothing saved)."""
    shape = value_shape(op.operand)
    axes = tuple(sorted(op.norm_axes()))
    if op.kind.data not in REDUCE_KERNELS:
        return f"its kind '{op.kind.data}' is not one of {', '.join(REDUCE_KERNELS)}"
    if elem(op.operand).name != "f32" or elem(op.result).name != "f32":
        return f"it reduces {elem(op.operand).name} to {elem(op.result).name}, not f32"
    if not axes or axes != tuple(range(len(shape) - len(axes), len(shape))):
        return f"its axes {list(axes)} are not the last of {len(shape)}"
    rows, _, chunk = tail_geometry(op)
    if rows <= chunk:
        return f"its {rows} rows fit one chunk of {chunk}"
    return None


def tail_fits(op: ReduceOp) -> bool:
    return tail_misfit(op) is None


def conv_epilogue_strides(a: SSAValue, conv: Conv2dOp) -> tuple[int, int] | None:
    """Strides (row, column) that read `a` at element (i, j) of the conv's
    output seen as [n * o, oh * ow], broadcasting as `a`'s shape does; None
    when no such pair exists (a per-channel operand over several images)."""
    n, o, oh, ow = result_shape(conv)
    st = broadcast_strides(value_shape(a), (n, o, oh, ow))
    if (n > 1 and st[0] != o * st[1]) or (oh > 1 and st[2] != ow * st[3]):
        return None
    return st[1], st[3]


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

    def kernel_root(self) -> UnaryOp | None:
        """The body's last op when its kernel is faster than its scalar
        form in the loop (UnaryOp.kernel_faster) and it reads the body's
        own value (with a tail, the last op is the reduction)."""
        ops = self.body_ops()
        if len(ops) < 2:
            return None
        root = ops[-1]
        if not isinstance(root, UnaryOp) or not root.kernel_faster():
            return None
        return root if not isinstance(root.operand, BlockArgument) else None

    def _lowered_ops(self) -> list[MlvmOp]:
        """The ops the loop or epilogue computes: the body's, less the
        kernel root while the C for the vector kernels is written."""
        ops = self.body_ops()
        return ops[:-1] if getattr(self, "_root_apart", False) else ops

    def _lowered_value(self) -> SSAValue:
        last = self.body.block.last_op
        assert isinstance(last, FusedYieldOp)
        if getattr(self, "_root_apart", False):  # the kernel root's operand
            return self.body_ops()[-1].operands[0]
        return last.value

    def head(self) -> Head | None:
        first = self.body.block.first_op
        return first if isinstance(first, MatmulOp | Conv2dOp) else None

    def tail(self) -> ReduceOp | None:
        ops = list(self.body.block.ops)
        return ops[-2] if len(ops) >= 2 and isinstance(ops[-2], ReduceOp) else None

    def tree_shape(self) -> tuple[int, ...]:
        """The shape every elementwise op of the body produces."""
        tail = self.tail()
        return value_shape(tail.operand) if tail is not None else result_shape(self)

    def workspace_bytes(self) -> int:
        head, tail = self.head(), self.tail()
        if tail is not None:
            _, n, chunk = tail_geometry(tail)
            return 4 * n * chunk  # a chunk of the tree's rows
        return head.workspace_bytes() if head is not None else 0

    def workspace_required(self) -> bool:
        head = self.head()
        return self.tail() is not None or head is not None and head.workspace_required()

    def verify_(self) -> None:
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException(f"{self.name}: block arguments do not match the operands")
        last = block.last_op
        if not isinstance(last, FusedYieldOp) or last.value.type != self.result.type:
            raise VerifyException(
                f"{self.name}: body must end in mlvm.fused_yield of the result type"
            )
        out = self.tree_shape()
        head, tail = self.head(), self.tail()
        if tail is not None:
            why = ("it follows a head" if head is not None
                   else "its result is not what the body yields" if last.value is not tail.result
                   else tail_misfit(tail))
            if why is not None:
                raise VerifyException(f"{self.name}: the reduction cannot end the body: {why}")
        if isinstance(head, MatmulOp):
            if len(out) != 2 or tuple(head.operands) != tuple(block.args[:2]):
                raise VerifyException(
                    f"{self.name}: a matmul head must be rank 2 and read operands 0 and 1"
                )
        if isinstance(head, Conv2dOp):
            k = len(head.operands)
            if tuple(head.operands) != tuple(block.args[:k]):
                raise VerifyException(
                    f"{self.name}: a conv2d head must read the first {k} operands"
                )
            for a in block.args[k:]:
                if a.uses and conv_epilogue_strides(a, head) is None:
                    raise VerifyException(
                        f"{self.name}: operand {a.index} cannot be read by a conv2d "
                        "epilogue (per-channel over several images)"
                    )
        inner = set(block.ops)
        for op in block.ops:  # the body reads its block's arguments and its own results alone
            for v in op.operands:
                if v.owner is not block and v.owner not in inner:
                    raise VerifyException(
                        f"{self.name}: body op {op.name} reads a value from outside the "
                        "fused op (pass it as an operand)"
                    )
        if tail is not None:
            for a in block.args:
                if math.prod(value_shape(a)) > 1 and value_shape(a) != out:
                    raise VerifyException(
                        f"{self.name}: with a reduction at the end, operand {a.index} must be one "
                        "value or of the reduced tree's shape"
                    )
        for op in list(block.ops)[1 if head is not None else 0 : -2 if tail is not None else -1]:
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
        return self.head() is None and self.tail() is None and self.inputs[k].type == self.result.type

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
        root = self.kernel_root()
        if root is None:
            self._lower_body(cg)
            return
        n = prod(result_shape(self))
        out = cg.ptr(self.result)
        cg.stmt("\n#if MLVM_VECTOR_MATH")
        self._root_apart = True
        cg.guard = "MLVM_VECTOR_MATH"
        try:
            self._lower_body(cg)
            cg.stmt(f"{root.kernel_name()}({n}, {out}, {out});\n#else")
            self._root_apart = False
            cg.guard = "!MLVM_VECTOR_MATH"
            self._lower_body(cg)
        finally:
            self._root_apart = False
            cg.guard = ""
        cg.stmt("\n#endif")

    def _lower_body(self, cg: Lowering) -> None:
        if self.head() is not None:
            self._lower_with_head(cg)
            return
        if self.tail() is not None:
            self._lower_with_tail(cg)
            return
        args = list(self.body.block.args)
        used = [k for k, a in enumerate(args) if a.uses]

        def body(names: list[str]) -> tuple[list[str], str]:
            env: dict[SSAValue, str] = {args[k]: n for k, n in zip(used, names, strict=True)}
            return self._chain(env, self._lowered_ops())

        elementwise_loop(cg, self.result, [self.inputs[k] for k in used], body,
                         restrict=not output_shared(cg, self))

    def _chain(
        self, names: dict[SSAValue, str], ops: Sequence[MlvmOp], value: SSAValue | None = None
    ) -> tuple[list[str], str]:
        """Statements computing `ops` from named scalars; the yielded value (or
        `value`).

        Each temporary is rounded to its element type (f16, bf16), so the
        fused loop computes what the ops one by one would.
        """
        lines = []
        for j, op in enumerate(ops):
            r = op.results[0]
            names[r] = f"t{j}"
            expr = op.scalar_expr([names[v] for v in op.operands])  # type: ignore[attr-defined]
            e = elem(r)
            lines.append(f"const {e.compute} t{j} = {e.round(expr)};")
        return lines, names[self._lowered_value() if value is None else value]

    def _lower_with_tail(self, cg: Lowering) -> None:
        """A chunk of whole rows of the tree's value at a time into the
        workspace (one loop over contiguous elements, which vectorizes),
        then each row reduced by the runtime's own row functions, so the
        bits are the unfused kernel's. (Summing each element into the lanes
        as it was computed ran 2.7x slower on x86: the conversions did not
        vectorize; a chunk of one row, 2.1x: its sums read the row's
        vector stores back at once.)"""
        tail = self.tail()
        assert tail is not None
        rows, n, chunk = tail_geometry(tail)
        if rows * n == 0:
            return
        args = list(self.body.block.args)
        used = [k for k, a in enumerate(args) if a.uses]
        scalars = [k for k in used if prod(value_shape(args[k])) == 1]
        env: dict[SSAValue, str] = {args[k]: f"a{k}" for k in used}
        stmts, value = self._chain(env, self.body_ops()[:-1], tail.operand)
        kind = tail.kind.data
        row = {"sum": "0.0f + mlvm_row_sum_f32({n}, buf + r * {n})",
               "mean": "(0.0f + mlvm_row_sum_f32({n}, buf + r * {n})) / (float){n}",
               "max": "mlvm_row_max_f32({n}, buf + r * {n}, -HUGE_VALF)",
               "min": "mlvm_row_min_f32({n}, buf + r * {n}, HUGE_VALF)"}[kind].format(n=n)
        lines = ["{", *self._pointers(cg, used)]
        for k in scalars:
            e = elem(args[k])
            lines.append(f"    const {e.compute} a{k} = {e.load.format(f'in{k}[0]')};")
        lines += [f"    float *restrict buf = (float *){cg.workspace(self)};",
                  "    mlvm_index_t o, j, r;",
                  f"    for (o = 0; o < {rows}; o += {chunk}) {{",
                  f"        const mlvm_index_t m = ({rows} - o < {chunk} ? {rows} - o : {chunk}) * {n};",
                  "        for (j = 0; j < m; ++j) {"]
        for k in used:
            if k not in scalars:
                e = elem(args[k])
                lines.append(f"            const {e.compute} a{k} = {e.load.format(f'in{k}[o * {n} + j]')};")
        lines += [*("            " + x for x in stmts), f"            buf[j] = {value};", "        }",
                  f"        for (r = 0; r * {n} < m; ++r)", f"            out[o + r] = {row};", "    }", "}"]
        cg.stmt("\n    ".join(lines))

    def _pointers(self, cg: Lowering, which: Sequence[int]) -> list[str]:
        args = list(self.body.block.args)
        lines = [f"    const {elem_ctype(args[k])} *in{k} = {cg.ptr(self.inputs[k])};" for k in which]
        qual = "" if output_shared(cg, self) else "restrict "
        lines.append(f"    {elem_ctype(self.result)} *{qual}out = {cg.ptr(self.result)};")
        return lines


    def _epilogue(
        self, pad: str, names: dict[SSAValue, str], ops: Sequence[MlvmOp], target: str
    ) -> list[str]:
        stmts, value = self._chain(names, ops)
        return [pad + s for s in stmts] + [f"{pad}{target} = {value};"]

    def _scalar_constant(self, v: SSAValue) -> float | None:
        """The value of block argument v when its operand is a one-element
        f32 constant."""
        if not isinstance(v, BlockArgument) or v.block is not self.body.block:
            return None
        owner = self.inputs[v.index].owner
        if not isinstance(owner, ConstantOp) or elem(owner.result).name != "f32":
            return None
        data = owner.data()
        return float(data.reshape(-1)[0]) if data.size == 1 else None

    def clamp(self) -> tuple[float, float, bool] | None:
        """(lo, hi, relu) when the head's epilogue is an activation alone:
        relu, or max with a constant then min with one (Clip; either may be
        absent), which the runtime's mlvm_epilogue_clamp_f32 computes (and
        the depthwise kernels in their registers). Of the whole tree, what
        module-wide rules read (nn.taps_convs), whichever form is being
        written."""
        return self._clamp_of(self.body_ops()[1:])

    def _lowered_clamp(self) -> tuple[float, float, bool] | None:
        """clamp() of the epilogue being written (without a kernel root)."""
        return self._clamp_of(self._lowered_ops()[1:])

    def _clamp_of(self, ops: Sequence[MlvmOp]) -> tuple[float, float, bool] | None:
        head = self.head()
        if head is None or not ops or elem(self.result).name != "f32":
            return None
        v = head.results[0]
        if len(ops) == 1 and isinstance(ops[0], ReluOp) and ops[0].operands[0] is v:
            return 0.0, 0.0, True
        lo, hi = -math.inf, math.inf
        for i, op in enumerate(ops):
            c = self._scalar_constant(op.operands[1]) if len(op.operands) == 2 else None
            # a NaN bound keeps the generated function (the vector clamp
            # follows the ops' rules for NaN operands, not NaN bounds)
            if c is None or math.isnan(c) or op.operands[0] is not v or len(list(v.uses)) != 1:
                return None
            if isinstance(op, MaxOp) and i == 0:
                lo = c
            elif isinstance(op, MinOp) and i == len(ops) - 1:
                hi = c
            else:
                return None
            v = op.results[0]
        return lo, hi, False

    def bias(self) -> tuple[int, float] | None:
        """(k, lo) when a matmul's epilogue is a Linear layer's: h + in{k},
        in{k} one f32 value per column, then a ReLU (lo 0) or nothing (lo
        -inf), which the runtime's mlvm_epilogue_bias_f32 computes."""
        head = self.head()
        ops = self._lowered_ops()[1:]
        if not isinstance(head, MatmulOp) or not 1 <= len(ops) <= 2 or elem(self.result).name != "f32":
            return None
        add, v = ops[0], head.results[0]
        if not isinstance(add, AddOp) or len(list(v.uses)) != 1:
            return None
        others = [o for o in add.operands if o is not v]
        if len(others) != 1:
            return None
        b = others[0]
        if not isinstance(b, BlockArgument) or b.block is not self.body.block or elem(b).name != "f32":
            return None
        shape = result_shape(self)
        if len(shape) != 2:
            return None
        m, n = shape
        st = broadcast_strides(value_shape(b), (m, n))
        if (st[0] != 0 and m > 1) or (st[1] != 1 and n > 1):
            return None
        if len(ops) == 1:
            return b.index, -math.inf
        relu, t = ops[1], add.results[0]
        if not isinstance(relu, ReluOp) or relu.operands[0] is not t or len(list(t.uses)) != 1:
            return None
        return b.index, 0.0

    def _epilogue_of(self, cg: Lowering, n: int) -> tuple[str, str, list[str]]:
        """The epilogue function, its ctx and the lines declaring that ctx
        in the call's block: the runtime's clamp with its bounds, the
        runtime's bias with a local struct (the bias is an operand), or a
        generated function with the operands; none where the kernel root
        was the tree's one op."""
        if len(self._lowered_ops()) == 1:
            return "NULL", "NULL", []
        c = self._lowered_clamp()
        if c is not None:
            lo, hi, relu = c
            return "mlvm_epilogue_clamp_f32", cg.const_struct(
                "mlvm_clamp_t", f"{cg.flt(lo)}, {cg.flt(hi)}, {int(relu)}"), []
        b = self.bias()
        if b is not None:
            return "mlvm_epilogue_bias_f32", "&bias", [
                f"    const mlvm_bias_t bias = {{in{b[0]}, {cg.flt(b[1])}}};"]
        k = len(self.body.block.args)
        return cg.function(lambda name: self._epilogue_function(name, n)), "ctx", [
            f"    const void *ctx[{k}];", *(f"    ctx[{kk}] = in{kk};" for kk in range(k))]

    def _lower_with_head(self, cg: Lowering) -> None:
        head = self.head()
        assert head is not None
        if isinstance(head, Conv2dOp):
            self._lower_with_conv(cg, head)
            return
        m, n = result_shape(self)
        p = head.descriptor(cg)
        epilogue, ctx, decl = self._epilogue_of(cg, n)
        if m == 1 and epilogue == "mlvm_epilogue_bias_f32" and cg.own_loops():  # the bias in the entry's loop
            call = f"{row_entry(cg.narrow_rows(), True)}({p}, in0, in1, out, {ctx});"
        elif (ws := cg.workspace(self)) is not None:  # (m > 1)
            call = f"mlvm_matmul_epilogue_ws_f32({p}, in0, in1, out, {epilogue}, {ctx}, {ws});"
        else:
            entry = row_entry(cg.narrow_rows(), False) if m == 1 else "mlvm_matmul_epilogue_f32"
            call = f"{entry}({p}, in0, in1, out, {epilogue}, {ctx});"
        self._call_with_epilogue(cg, call, decl, ctx == "ctx")

    def _lower_with_conv(self, cg: Lowering, head: Conv2dOp) -> None:
        if prod(result_shape(self)) == 0:
            return
        d = head.dims()
        p = head.descriptor(cg)
        epilogue, ctx, decl = self._epilogue_of(cg, d["oh"] * d["ow"])
        bias = "in2" if head.bias is not None else "NULL"
        args = f"{p}, in0, in1, {bias}, out"
        call = conv2d_taps_call(cg, head, args,
                                conv2d_call(d, head.layout(), args, cg.workspace(self), epilogue, ctx,
                                            cg.own_loops()),
                                self._lowered_clamp(), epilogue, ctx)
        self._call_with_epilogue(cg, call, decl, ctx == "ctx")

    def _call_with_epilogue(self, cg: Lowering, call: str, decl: list[str], with_ctx: bool) -> None:
        """A block naming every operand (in0, ...) and the output, the
        epilogue's ctx declared (`decl`) and, for the runtime's epilogues,
        the operands they do not read marked unused (their constants stay
        referenced), around the kernel call."""
        n = len(self.body.block.args)
        head = self.head()
        assert head is not None
        unread = range(len(head.operands), n)  # the clamp's bounds: in its struct
        lines = [
            "{",
            *self._pointers(cg, range(n)),
            *([] if with_ctx else [f"    (void)in{kk};" for kk in unread]),
            *decl,
            f"    {call}",
            "}",
        ]
        cg.stmt("\n    ".join(lines))

    def _epilogue_function(self, name: str, n: int) -> str:
        """The epilogue applied to each finished block of the head's product
        (a conv2d's output seen as [n * o, oh * ow])."""
        head = self.head()
        assert head is not None
        m = result_shape(self)[0]
        args = list(self.body.block.args)
        lines = [
            f"static void {name}(const void *ctx, mlvm_index_t i0, mlvm_index_t rows,",
            "                   mlvm_index_t j0, mlvm_index_t cols, float *tile, mlvm_index_t ldo)",
            "{",
            "    const void *const *in = (const void *const *)ctx;",
        ]
        pad = "            "
        names: dict[SSAValue, str] = {head.results[0]: "h"}
        loads = []
        flat = True  # every operand's index linear in the flat index i * n + j
        for kk, a in enumerate(args):
            if any(u.operation is not head for u in a.uses):
                if isinstance(head, Conv2dOp):
                    st2 = conv_epilogue_strides(a, head)
                    assert st2 is not None
                    st: tuple[int, ...] = st2
                else:
                    st = broadcast_strides(value_shape(a), (m, n))
                lines.append(f"    const {elem_ctype(a)} *in{kk} = (const {elem_ctype(a)} *)in[{kk}];")
                names[a] = f"a{kk}"
                flat = flat and st[0] == n * st[1]
                loads.append(
                    f"{pad}const {elem_ctype(a)} a{kk} = in{kk}[(i0 + i) * {st[0]} + (j0 + j) * {st[1]}];"
                )
        lines += [
            "    mlvm_index_t i, j;",
            "    (void)in; (void)i0; (void)j0;",
        ]
        if flat:
            # whole rows (a conv2d's planes, a product as wide as its tile) as
            # one run: it vectorises without a scalar remainder per row
            lines += [
                "    if (ldo == cols && rows > 1) {",
                "        cols *= rows;",
                "        rows = 1;",
                "    }",
            ]
        lines += [
            "    for (i = 0; i < rows; ++i) {",
            "        float *restrict row = tile + i * ldo;",
            "        for (j = 0; j < cols; ++j) {",
            f"{pad}const float h = row[j];",
            *loads,
        ]
        lines += self._epilogue(pad, names, self._lowered_ops()[1:], "row[j]")
        lines += ["        }", "    }", "}"]
        return "\n".join(lines)


@irdl_op_definition
class FusedYieldOp(IRDLOperation):
    name = "mlvm.fused_yield"
    value = operand_def(TensorType)
    traits = traits_def(IsTerminator(), HasParent(FusedOp))


def elem_ctype(v: SSAValue) -> str:
    return elem(v).ctype
