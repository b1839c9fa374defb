"""GELU in its erf form, as exporters spell it, as one mlvm.gelu.

PyTorch's `nn.GELU()` (and Keras' exact GELU) reach ONNX as five ops:

    0.5 * x * (1 + erf(x / sqrt 2))     (Div, Erf, Add, Mul, Mul)

with the three factors multiplied in any order, `x * (1 / sqrt 2)` for the
division, and `erf + 1` either way round. This pass turns such a chain into
`mlvm.gelu` (approximate = "none"): one pass over the data by the runtime's
kernel (a vector at a time with AVX-512 or AVX2) instead of a fused loop that
divides and calls the scalar erf.

Not bit for bit: mlvm.gelu computes `h + h erf(x * (1 / sqrt 2))`, h = x / 2,
where the chain divides and rounds each product; the difference is within
the ops' documented accuracy (erf's 2.5 ulp, plus the one rounding of its
argument), as onnxruntime's own GELU fusion differs from the chain.
`CompileOptions(fuse_gelu=False)` / `--no-fuse-gelu` keeps the chain.

Matched: x a f32 tensor of the result's type; sqrt 2, 1 / sqrt 2, 1 and 0.5
single-element f32 constants equal to those values rounded to f32; every
intermediate used once, inside the chain (a value used elsewhere keeps its
ops).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import sqrt

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlvm.codegen.lowering import elem
from mlvm.dialect.nn import GeluOp
from mlvm.dialect.ops import AddOp, ConstantOp, DivOp, ErfOp, MulOp
from mlvm.passes.canonicalize import constant_of, only_use

SQRT2 = float(np.float32(sqrt(2.0)))
RSQRT2 = float(np.float32(1.0 / sqrt(2.0)))


def _scalar(v: SSAValue, x: float) -> bool:
    """Whether v is a one-element f32 constant equal to x."""
    arr = constant_of(v)
    return arr is not None and arr.dtype == np.float32 and arr.size == 1 and float(arr.reshape(())) == x


def _factors(v: SSAValue, expand: bool) -> list[tuple[SSAValue, list[MulOp]]] | None:
    """The factors of the product v (mul operands used only by their mul
    expanded, v itself when `expand`), each with the muls from v down to the
    one that reads it; None past three factors."""
    op = v.owner
    if not expand or not isinstance(op, MulOp):
        return [(v, [])]
    out: list[tuple[SSAValue, list[MulOp]]] = []
    for operand in (op.lhs, op.rhs):
        sub = _factors(operand, only_use(operand, op))
        if sub is None:
            return None
        out += [(f, [op, *path]) for f, path in sub]
    return out if len(out) <= 3 else None


def _erf_of(s: SSAValue, user: Operation) -> tuple[SSAValue, list[Operation]] | None:
    """For s = erf(arg(x)) + 1 used only by `user`: x and the chain's ops."""
    add = s.owner
    if not isinstance(add, AddOp) or not only_use(s, user):
        return None
    for e, one in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        erf = e.owner
        if isinstance(erf, ErfOp) and only_use(e, add) and _scalar(one, 1.0):
            scaled = erf.operand.owner
            if not only_use(erf.operand, erf):
                return None
            if isinstance(scaled, DivOp) and _scalar(scaled.rhs, SQRT2):
                return scaled.lhs, [add, erf, scaled]
            if isinstance(scaled, MulOp):
                for x, c in ((scaled.lhs, scaled.rhs), (scaled.rhs, scaled.lhs)):
                    if _scalar(c, RSQRT2):
                        return x, [add, erf, scaled]
            return None
    return None


@dataclass
class GeluChain(RewritePattern):
    """0.5 * x * (erf(x / sqrt 2) + 1), the factors in any order -> mlvm.gelu."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, root: MulOp, rewriter: PatternRewriter) -> None:
        t = root.result.type
        factors = _factors(root.result, True)
        if elem(root.result).name != "f32" or factors is None or len(factors) != 3:
            return
        for h in [i for i, (f, _) in enumerate(factors) if _scalar(f, 0.5)]:
            rest = [factors[i] for i in range(3) if i != h]
            for (x, _), (s, path) in (rest, rest[::-1]):
                chain = _erf_of(s, path[-1])
                if chain is None or chain[0] is not x or x.type != t:
                    continue
                dead: list[Operation] = []
                for _, p in factors:  # outer muls first: each dies with its reader
                    dead += [m for m in p if m is not root and all(m is not d for d in dead)]
                dead += chain[1]
                consts = [v.owner for op in dead for v in op.operands] + [factors[h][0].owner]
                rewriter.replace(root, GeluOp.create(
                    operands=[x], result_types=[t], properties={"approximate": StringAttr("none")}))
                for op in dead:
                    rewriter.erase(op)
                for c in consts:  # the chain's constants, unless read elsewhere too
                    if isinstance(c, ConstantOp) and c.parent is not None and not c.result.uses:
                        rewriter.erase(c)
                return


@dataclass(frozen=True)
class FuseGeluPass(ModulePass):
    name = "mlvm-fuse-gelu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GeluChain(), walk_reverse=True).rewrite_module(op)
