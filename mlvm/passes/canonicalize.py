"""Algebraic simplification and constant folding on the mlvm dialect.

Rewrites (each keeps the result type, so users see no change):

  * `x + (-0)`, `(-0) + x`, `x - 0`, `x * 1`, `1 * x`, `x / 1` -> `x`, when
    the constant is all such values (bit for bit: `x + 0.0` is not `x` for
    x = -0.0) and broadcasting does not grow `x`;
  * `reshape(reshape(x))` -> `reshape(x)`; a reshape or broadcast_to to
    the operand's own type -> the operand; `reshape(constant)` -> a
    constant of the new shape, when the reshape is the constant's one user
    or it is small (RESHAPE_COPY_LIMIT elements);
  * `broadcast_to(constant)` -> a constant of the broadcast shape;
  * an elementwise op on a rank-2 product's rows split by a reshape (an
    ONNX MatMul over a batch, which the importer writes as a matmul of
    [batch * rows, n]) runs on [batch * rows, n] and is reshaped after, its
    other operands viewed alike (`ElementwiseInRows`): a Linear layer's
    bias, activation and residual add then join the GEMM's epilogue
    (mlvm-fuse) instead of passing over its output again;
  * an average pool of f32 with one window over the whole map and no
    padding (ONNX GlobalAveragePool) -> a mean over the two spatial axes
    (`GlobalPoolAsMean`; mlvm-fuse-qdq, before this pass, has made a QDQ
    one an integer pool);
  * an op whose operands are all constants, with a result of at most
    `fold_limit` elements -> a constant, computed by the op's reference;
  * pure ops whose results are unused are erased (ops with effects stay).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import Pure
from xdsl.utils.exceptions import PassFailedException
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlvm.dialect.base import MlvmOp
from mlvm.dialect.elements import elem_of_type, to_bytes
from mlvm.dialect.nn import Pool2dOp, pool2d_is_global
from mlvm.dialect.ops import (
    AddOp,
    BroadcastToOp,
    ConstantOp,
    DivOp,
    ElementwiseOp,
    MatmulOp,
    MulOp,
    ReduceOp,
    ReshapeOp,
    SubOp,
)


def constant_of(v: SSAValue) -> np.ndarray | None:
    owner = v.owner
    return owner.data() if isinstance(owner, ConstantOp) else None


def only_use(v: SSAValue, user: Operation) -> bool:
    """Whether `user` is the one op reading v (once): the fusing passes'
    test that a value dies inside what they replace."""
    uses = list(v.uses)
    return len(uses) == 1 and uses[0].operation is user


def make_constant(t: Attribute, arr: np.ndarray) -> ConstantOp:
    assert isinstance(t, TensorType)
    e = elem_of_type(t.element_type)
    assert e is not None
    value = DenseIntOrFPElementsAttr(t, BytesAttr(to_bytes(e, arr)))
    return ConstantOp.create(result_types=[t], properties={"value": value})


def _is_splat(v: SSAValue, x: float) -> bool:
    """Whether v is a constant whose every element is x (floats bit for bit)."""
    arr = constant_of(v)
    if arr is None:
        return False
    if arr.dtype.kind in "iub":
        return bool(np.all(arr == int(x)))
    bits = np.dtype(f"u{arr.dtype.itemsize}")
    want = np.array(x, dtype=arr.dtype).view(bits)
    return bool(np.all(arr.view(bits) == want))


class IdentityOperand(RewritePattern):
    """x + 0, x - 0, x * 1, x / 1 (and the commuted forms) -> x."""

    # op class -> (neutral value, operand positions the neutral may take).
    # Bit-exact for every x: x + (-0.0) and x - (+0.0) keep the sign of a
    # zero x, whereas x + (+0.0) turns -0.0 into +0.0; integers have one 0.
    RULES: dict[type[MlvmOp], tuple[float, tuple[int, ...]]] = {
        AddOp: (-0.0, (0, 1)),
        SubOp: (0.0, (1,)),
        MulOp: (1.0, (0, 1)),
        DivOp: (1.0, (1,)),
    }

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, MlvmOp) or (rule := self.RULES.get(type(op))) is None:
            return
        neutral, positions = rule
        for k in positions:
            other = op.operands[1 - k]
            if other.type == op.results[0].type and _is_splat(op.operands[k], neutral):
                rewriter.replace(op, [], [other])
                return


# A constant shared by other users is reshaped at compile time up to this
# many elements (its bytes then stored twice); one read by the reshape
# alone, whatever its size.
RESHAPE_COPY_LIMIT = 64


class ReshapeChain(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        src = op.operand
        if src.type == op.result.type:
            rewriter.replace(op, [], [src])
            return
        inner = src.owner
        arr = constant_of(src)
        if arr is not None and (only_use(src, op) or arr.size <= RESHAPE_COPY_LIMIT):
            t = op.result.type
            assert isinstance(t, TensorType)
            rewriter.replace(op, make_constant(t, arr.reshape(t.get_shape())))
            return
        if isinstance(inner, ReshapeOp):
            rewriter.replace(
                op, ReshapeOp.create(operands=[inner.operand], result_types=[op.result.type])
            )


def _in_rows(shape: tuple[int, ...], lead: tuple[int, ...]) -> tuple[int, ...] | None:
    """An operand's shape as it broadcasts over [prod(lead), n] where it had
    broadcast over [*lead, n]: [n'] when it is one row for all (n' its last
    dim, 1 or n), [prod(lead), n'] when it has every row, else None."""
    full = (1,) * (len(lead) + 1 - len(shape)) + shape
    if len(full) != len(lead) + 1:
        return None
    if all(d == 1 for d in full[:-1]):
        return full[-1:]
    if full[:-1] == lead:
        return (prod(lead), full[-1])
    return None


def _moves_in_rows(user: Operation, v: SSAValue, lead: tuple[int, ...]) -> bool:
    """Whether `user` of v (a reshape's [*lead, n]) is an elementwise op of
    v's shape whose other operands `_in_rows` can view: one ElementwiseInRows
    would move too."""
    return (
        isinstance(user, ElementwiseOp)
        and len(user.results) == 1
        and user.results[0].type == v.type
        and all(
            w is v or (isinstance(w.type, TensorType)
                       and _in_rows(tuple(w.type.get_shape()), lead) is not None)
            for w in user.operands
        )
    )


class ElementwiseInRows(RewritePattern):
    """op(reshape(v), ...) -> reshape(op(v, ...)), v a rank-2 [m, n] made by a
    matmul (or by an op already moved here) and the reshape only splitting
    its rows ([*lead, n], prod(lead) = m), when every other operand either
    has all of those rows or is one row for all (a bias): it is then viewed
    as [m, n'] or [n'] (a reshape, no copy). The same elements in the same
    order, so the same values; the fuse pass can then take the matmul as
    the elementwise tree's head. Not while another reader of the reshaped
    value could not move alike (an operand with a row per batch): the tree
    would then split by shape, one more pass over the output and its value
    kept whole."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ElementwiseOp) or len(op.results) != 1:
            return
        rt = op.results[0].type
        if not isinstance(rt, TensorType):
            return
        shape = tuple(rt.get_shape())
        for k, v in enumerate(op.operands):
            r = v.owner
            if not isinstance(r, ReshapeOp) or r.result.type != rt:
                continue
            src = r.operand
            st = src.type
            if not (isinstance(st, TensorType) and len(st.get_shape()) == 2
                    and isinstance(src.owner, MatmulOp | ElementwiseOp)):
                continue
            m, n = st.get_shape()
            lead = shape[:-1]
            if len(shape) < 2 or shape == (m, n) or shape[-1] != n or prod(lead) != m:
                continue
            if not all(_moves_in_rows(u.operation, v, lead) for u in v.uses):
                continue  # (op among them: its own operands checked too)
            others = [_in_rows(tuple(w.type.get_shape()), lead)
                      if isinstance(w.type, TensorType) else None for w in op.operands]
            new_ops: list[Operation] = []
            operands: list[SSAValue] = []
            for j, w in enumerate(op.operands):
                wt = w.type
                assert isinstance(wt, TensorType)
                want = (m, n) if j == k else others[j]
                assert want is not None
                if j == k:
                    operands.append(src)
                elif tuple(wt.get_shape()) == want:
                    operands.append(w)
                else:
                    view = ReshapeOp.create(operands=[w], result_types=[TensorType(wt.element_type, want)])
                    new_ops.append(view)
                    operands.append(view.result)
            rows = type(op).create(
                operands=operands,
                result_types=[TensorType(rt.element_type, (m, n))],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
            back = ReshapeOp.create(operands=[rows.results[0]], result_types=[rt])
            rows.location = op.location
            rewriter.replace(op, [*new_ops, rows, back], [back.result])
            return


@dataclass
class BroadcastSimplify(RewritePattern):
    limit: int  # a constant is broadcast at compile time up to this many elements

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BroadcastToOp, rewriter: PatternRewriter) -> None:
        if op.operand.type == op.result.type:
            rewriter.replace(op, [], [op.operand])
            return
        arr = constant_of(op.operand)
        t = op.result.type
        assert isinstance(t, TensorType)
        if arr is not None and prod(t.get_shape()) <= self.limit:
            rewriter.replace(op, make_constant(t, np.broadcast_to(arr, t.get_shape())))


class GlobalPoolAsMean(RewritePattern):
    """An f32 average pool whose one window is the map, unpadded: the mean
    over axes 2 and 3 (the row sums' kernel, which mlvm-fuse also fuses
    with the op before)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Pool2dOp, rewriter: PatternRewriter) -> None:
        if op.kind.data != "avg" or op.elem_of(op.x, "x") != "f32":
            return
        if not pool2d_is_global(op.dims()):
            return
        rewriter.replace(op, ReduceOp.build(
            operands=[op.x], result_types=[op.result.type],
            properties={"kind": StringAttr("mean"), "axes": DenseArrayBase.from_list(i64, [2, 3]),
                        "keepdims": IntegerAttr.from_bool(True)}))


@dataclass
class FoldConstants(RewritePattern):
    limit: int

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (
            not isinstance(op, MlvmOp)
            or not op.has_trait(Pure)
            or op.IS_DATA
            or not op.operands
            or not op.results
        ):
            return
        if isinstance(op, ReshapeOp | BroadcastToOp):
            return  # handled without materialising the data
        arrays = [constant_of(v) for v in op.operands]
        if any(a is None for a in arrays):
            return
        sizes = [prod(r.type.get_shape()) for r in op.results if isinstance(r.type, TensorType)]
        if sum(sizes) > self.limit:
            return
        outs = op.reference([a for a in arrays if a is not None], {})
        consts = [make_constant(r.type, a) for r, a in zip(op.results, outs, strict=True)]
        rewriter.replace(op, consts, [c.result for c in consts])


class EraseDead(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (
            isinstance(op, MlvmOp)
            and op.has_trait(Pure)
            and op.results
            and all(not r.uses for r in op.results)
        ):
            rewriter.erase_op(op)


@dataclass(frozen=True)
class CanonicalizePass(ModulePass):
    name = "mlvm-canonicalize"

    fold_limit: int = 4096

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.fold_limit < 0:
            raise PassFailedException(
                f"mlvm-canonicalize: fold_limit {self.fold_limit} must not be negative"
            )
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    IdentityOperand(),
                    ReshapeChain(),
                    ElementwiseInRows(),
                    BroadcastSimplify(self.fold_limit),
                    GlobalPoolAsMean(),
                    FoldConstants(self.fold_limit),
                    EraseDead(),
                ]
            ),
            walk_reverse=True,
        ).rewrite_module(op)
