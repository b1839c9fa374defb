"""ONNX Einsum as transposes, reshapes, sums and matrix products.

The equation is parsed (an ellipsis becomes as many fresh letters as the
operand has dims left; no "->" means the letters used once, sorted, after
the ellipsis). A letter repeated in one operand takes the diagonal (a
gather of the flattened pair); a letter no other operand and not the
output has is summed away; two operands are one batched matmul over
[batch, left, contracted] x [batch, contracted, right]; more are taken
left to right; the result is transposed into the output's order."""

from __future__ import annotations

import math
import string
from typing import Any

import numpy as np
import onnx

from mlvm.dialect.index import GatherOp
from mlvm.dialect.nn import TransposeOp
from mlvm.frontend.onnx.importer import Const, Importer, NodeError, Tensor, Unsupported, Value
from mlvm.frontend.onnx.ops import converter, matmul, reduce, reshape

Term = tuple[Value, str]  # a tensor and the letter of each of its dims


def parse(equation: str, ranks: list[int]) -> tuple[list[str], str]:
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise NodeError(f"equation '{equation}' has {len(terms)} operands, the node {len(ranks)}")
    fresh = [c for c in string.ascii_uppercase if c not in eq]
    ell = ""
    spelled = []
    for t, r in zip(terms, ranks, strict=True):
        if "..." in t:
            n = r - (len(t) - 3)
            if n < 0 or (ell and len(ell) != n and n > len(ell)):
                raise NodeError(f"'{t}' does not fit a rank-{r} operand")
            ell = ell if len(ell) >= n else "".join(fresh[:n])
            t = t.replace("...", ell[len(ell) - n:])
        if len(t) != r or not all(c.isalpha() for c in t):
            raise NodeError(f"'{t}' does not name the {r} dims of its operand")
        spelled.append(t)
    if not arrow:
        once = sorted(c for c in set("".join(spelled)) if "".join(spelled).count(c) == 1
                      and c not in ell)
        return spelled, ell + "".join(once)
    return spelled, out.replace("...", ell)


def _transpose(imp: Importer, t: Term, order: str) -> Term:
    x, letters = t
    if letters == order:
        return t
    perm = [letters.index(c) for c in order]
    s = imp.shape(x)
    return Tensor(imp.emit(TransposeOp, [imp.t(x)], [s[p] for p in perm], imp.elem(x),
                           perm=perm)), order


def _diagonal(imp: Importer, t: Term) -> Term:
    """Every letter once: repeated ones reduced to their diagonal."""
    while True:
        x, letters = t
        rep = next((c for c in letters if letters.count(c) > 1), None)
        if rep is None:
            return t
        first = letters.index(rep)
        second = letters.index(rep, first + 1)
        rest = "".join(c for k, c in enumerate(letters) if k not in (first, second))
        x, _ = _transpose(imp, t, rest + rep + rep)
        s = imp.shape(x)
        n = s[-1]
        if s[-2] != n:
            raise NodeError(f"the dims of '{rep}' differ: {s[-2]} and {n}")
        flat = reshape(imp, x, tuple(s[:-2]) + (n * n,))
        idx = Const(np.arange(n, dtype=np.int64) * (n + 1))
        diag = Tensor(imp.emit(GatherOp, [imp.t(flat), imp.t(idx)], tuple(s[:-2]) + (n,),
                               imp.elem(x), axis=len(s) - 2))
        t = (diag, rest + rep)


def _sum_away(imp: Importer, t: Term, keep: set[str]) -> Term:
    x, letters = t
    axes = [k for k, c in enumerate(letters) if c not in keep]
    if not axes:
        return t
    s = imp.shape(x)
    out = [d for k, d in enumerate(s) if k not in axes]
    return (reduce(imp, x, "sum", axes, out, False),
            "".join(c for c in letters if c in keep))


def _pair(imp: Importer, a: Term, b: Term, keep: set[str]) -> Term:
    """a times b, summed over the letters they share that `keep` lacks."""
    la, lb = a[1], b[1]
    size = {c: d for t in (a, b) for c, d in zip(t[1], imp.shape(t[0]), strict=True)}
    batch = [c for c in la if c in lb and c in keep]
    contract = [c for c in la if c in lb and c not in keep]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]
    for c in batch + contract:
        da, db = imp.shape(a[0])[la.index(c)], imp.shape(b[0])[lb.index(c)]
        if da != db:
            raise Unsupported(f"einsum dims of '{c}' that broadcast ({da} and {db})")
    xa, _ = _transpose(imp, a, "".join(batch + left + contract))
    xb, _ = _transpose(imp, b, "".join(batch + contract + right))

    def n(cs: list[str]) -> int:
        return math.prod(size[c] for c in cs)

    xa = reshape(imp, xa, (n(batch), n(left), n(contract)))
    xb = reshape(imp, xb, (n(batch), n(contract), n(right)))
    y = matmul(imp, xa, xb)
    letters = "".join(batch + left + right)
    return reshape(imp, y, tuple(size[c] for c in letters)), letters


@converter("Einsum")
def _einsum(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
            attrs: dict[str, Any]) -> list[Value]:
    vals = [v for v in ins if v is not None]
    if not vals:
        raise NodeError("needs an input")
    terms, out = parse(str(attrs.get("equation", "")), [len(imp.shape(v)) for v in vals])
    if len(set(out)) != len(out):
        raise NodeError(f"output '{out}' repeats a letter")
    ts: list[Term] = [_diagonal(imp, (v, t)) for v, t in zip(vals, terms, strict=True)]
    acc: Term | None = None
    for k, t in enumerate(ts):
        later = set(out) | {c for u in ts[k + 1:] for c in u[1]}
        if acc is None:
            acc = _sum_away(imp, t, later)
            continue
        t = _sum_away(imp, t, later | set(acc[1]))
        acc = _pair(imp, acc, t, later)
    assert acc is not None
    missing = set(out) - set(acc[1])
    if missing:
        raise NodeError(f"output letters {sorted(missing)} are in no operand")
    return [_transpose(imp, acc, out)[0]]
