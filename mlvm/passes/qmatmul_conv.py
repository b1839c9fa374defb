"""Integer matmuls on the int8 convolution kernels.

`mlvm.qmatmul` (ONNX MatMulInteger, QLinearMatMul, and QDQ matmuls whose
right-hand side is computed at run time) has a portable row-by-row kernel
of its own. The int8 convolution's kernels are the fast ones (vpdpbusd,
vpmaddubsw or vpmaddwd tiles on x86, SMLAD on a Cortex-M, weights stored in
their lanes at compile time), so this pass writes the product as a 1x1
convolution, as mlvm-fuse-qdq writes a Linear layer:

    qmatmul(a [..., K], b [K, N], za, zb)
      = transpose(qconv2d(transpose(a [M, K]) as [1, K, M, 1],
                          b^T as [N, K, 1, 1], za, zb))  as [..., N]

M = prod(...) positions of K channels, N output channels whose weights are
b's columns (transposed at compile time when b is a constant; zb one value
or one per output channel, which qconv2d takes as they are). With one row
(M = 1) no transpose is needed and the convolution is one dot product per
column (qconv_gemv.c). A `mlvm.requantize` that alone reads the product,
to 8 bits with one zero point and a multiplier of one value or one per
column, joins it as `mlvm.qconv2d_requant`: the int32 sums never leave the
kernel. Sums are exact int32 (wrapping) either way: the same results.
`CompileOptions(qmatmul_conv=False)` / `--no-qmatmul-conv` keeps qmatmul.
"""

from __future__ import annotations

from math import prod

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlvm.codegen.lowering import elem, value_shape
from mlvm.dialect.nn import TransposeOp
from mlvm.dialect.quant import QConv2dOp, QConv2dRequantOp, QMatmulOp, RequantizeOp
from mlvm.passes.canonicalize import only_use
from mlvm.passes.fuse_qdq import SWAP, QBuilder, image_as_rows, linear_weight, rows_as_image, weight_zero_point


def _fused_requantize(op: QMatmulOp, n: int) -> RequantizeOp | None:
    """The requantize that alone reads op's sums, to 8 bits with one zero
    point and one multiplier or one per column (what qconv2d_requant
    takes), or None."""
    uses = list(op.result.uses)
    if len(uses) != 1 or not isinstance(rq := uses[0].operation, RequantizeOp):
        return None
    if uses[0].index != 0 or not only_use(op.result, rq):
        return None
    if elem(rq.result).name not in ("i8", "ui8") or value_shape(rq.result) != value_shape(op.result):
        return None
    if prod(value_shape(rq.zero_point)) != 1:
        return None
    ms = value_shape(rq.multiplier)
    if prod(ms) != 1 and not (ms[-1:] == (n,) and prod(ms) == n):
        return None
    return rq


class QMatmulAsConv(RewritePattern):
    """qmatmul (and a requantize reading it alone) as a 1x1 int8
    convolution over the rows of its lhs (the module docstring). Products
    of the same lhs in one block (a layer's query, key and value) share its
    transposed rows: the first one's transpose, made before that qmatmul
    (not before its requantize, which may follow a later qmatmul)."""

    def __init__(self) -> None:
        self.rows: dict[SSAValue, SSAValue] = {}

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QMatmulOp, rewriter: PatternRewriter) -> None:
        sa, (k, n) = value_shape(op.lhs), value_shape(op.rhs)
        m = prod(sa[:-1])
        if m * k * n == 0:
            return
        rq = _fused_requantize(op, n)
        at = rq if rq is not None else op
        b = QBuilder(rewriter, at)
        w = linear_weight(b, op.rhs, transposed=False)
        if w is None:  # computed at run time: transposed here
            w = b.reshape(b.op(TransposeOp, [op.rhs], (n, k), elem(op.rhs).name, perm=SWAP), (n, k, 1, 1))
        x = self.rows.get(op.lhs)
        if x is None or x.owner.parent is not op.parent:
            x = self.rows[op.lhs] = rows_as_image(QBuilder(rewriter, op), op.lhs, m, k)
        zx = b.reshape(op.lhs_zero_point, ())
        zw = weight_zero_point(b, op.rhs_zero_point, prod(value_shape(op.rhs_zero_point)) != 1, n)
        if rq is None:
            y = b.op(QConv2dOp, [x, w, zx, zw], (1, n, m, 1), "i32")
        else:
            mult = b.reshape(rq.multiplier, () if prod(value_shape(rq.multiplier)) == 1 else (n,))
            y = b.op(QConv2dRequantOp, [x, w, zx, zw, mult, b.reshape(rq.zero_point, ())], (1, n, m, 1),
                     elem(rq.result).name)
        rewriter.replace(at, [], [image_as_rows(b, y, n, m, value_shape(at.results[0]))])
        if rq is not None:
            rewriter.erase(op)


class QMatmulConvPass(ModulePass):
    name = "mlvm-qmatmul-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(QMatmulAsConv(), apply_recursively=False).rewrite_module(op)
