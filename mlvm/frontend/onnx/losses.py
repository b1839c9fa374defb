"""ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, composed.

loss[n, d...] = -input[n, target[n, d...], d...] * weight[target] (gather
of the target's class along axis 1, gather of its weight), 0 where the
target is ignore_index (a select, so an out-of-range ignored target is
never read); reduced by "none", "sum" or "mean" (the sum over the sum of
the weights used). SoftmaxCrossEntropyLoss is the same over the
log-softmax of its scores along axis 1 (max-shifted), which it may also
return."""

from __future__ import annotations

from typing import Any

import onnx

from mlvm.dialect.index import GatherElementsOp, GatherOp
from mlvm.dialect.logic import NeOp
from mlvm.dialect.ops import DivOp, MulOp, NegOp
from mlvm.frontend.onnx.importer import Importer, NodeError, Tensor, Unsupported, Value
from mlvm.frontend.onnx.ops import (
    binary,
    compare,
    converter,
    log_softmax,
    reduce,
    reshape,
    scalar,
    select,
    unary,
)

FLOATS = ("f32",)


def nll(imp: Importer, logp: Value, target: Value, weight: Value | None,
        attrs: dict[str, Any]) -> Value:
    s, t = imp.shape(logp), imp.shape(target)
    if len(s) < 2 or t != s[:1] + s[2:]:
        raise NodeError(f"target {list(t)} does not match input {list(s)} without its class dim")
    if imp.elem(target) not in ("i32", "i64"):
        raise NodeError(f"target must be int32 or int64, not {imp.elem(target)}")
    if imp.elem(logp) not in FLOATS:
        raise Unsupported(f"a loss over {imp.elem(logp)}")
    reduction = str(attrs.get("reduction", "mean"))
    if reduction not in ("none", "sum", "mean"):
        raise NodeError(f"reduction '{reduction}'")
    ignore = attrs.get("ignore_index")
    valid: Value | None = None
    safe = target
    if ignore is not None:
        valid = compare(imp, NeOp, target, scalar(imp, int(ignore), target))
        safe = select(imp, valid, target, scalar(imp, 0, target))
    idx = reshape(imp, safe, t[:1] + (1,) + t[1:])
    picked = reshape(imp, Tensor(imp.emit(GatherElementsOp, [imp.t(logp), imp.t(idx)],
                                          imp.shape(idx), imp.elem(logp), axis=1)), t)
    w: Value = scalar(imp, 1.0, logp)
    if weight is not None:
        if imp.shape(weight) != s[1:2]:
            raise NodeError(f"weight {list(imp.shape(weight))} is not one per class ({s[1]})")
        w = Tensor(imp.emit(GatherOp, [imp.t(weight), imp.t(safe)], t, imp.elem(weight), axis=0))
    if valid is not None:
        w = select(imp, valid, w, scalar(imp, 0.0, logp))
    loss = unary(imp, NegOp, binary(imp, MulOp, picked, w))
    if reduction == "none":
        return loss
    every = list(range(len(t)))
    total = reduce(imp, loss, "sum", every, (), False)
    if reduction == "sum":
        return total
    if weight is None and valid is None:
        return reduce(imp, loss, "mean", every, (), False)
    return binary(imp, DivOp, total, reduce(imp, w, "sum", every, (), False))  # w has t's shape


def _inputs(ins: list[Value | None]) -> tuple[Value, Value, Value | None]:
    if len(ins) < 2 or ins[0] is None or ins[1] is None:
        raise NodeError("needs an input and a target")
    return ins[0], ins[1], ins[2] if len(ins) > 2 else None


@converter("NegativeLogLikelihoodLoss")
def _nll_loss(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
              attrs: dict[str, Any]) -> list[Value]:
    x, target, weight = _inputs(ins)
    return [nll(imp, x, target, weight, attrs)]


@converter("SoftmaxCrossEntropyLoss")
def _softmax_xent(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
                  attrs: dict[str, Any]) -> list[Value]:
    x, target, weight = _inputs(ins)
    if len(imp.shape(x)) < 2:
        raise NodeError("scores need a class dim")
    logp = log_softmax(imp, x, [1])
    loss = nll(imp, logp, target, weight, attrs)
    return [loss, logp] if len(node.output) > 1 and node.output[1] else [loss]
