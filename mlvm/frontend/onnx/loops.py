"""ONNX Scan (opset 9 and up) and Loop unrolled at import.

Scan: the number of iterations is the scan inputs' length along their scan
axes, known from their static shapes: the body graph is imported once per
iteration, its state inputs bound to the previous iteration's states and
its scan inputs to that iteration's slices (from the end for a reverse
direction); the scan outputs of all iterations are stacked along their
axes. Loop: the trip count and the condition must be known at import (the
condition after each iteration too); the body is imported while they say
to go on. A model can ask for at most MAX_UNROLLED nodes this way in all,
so a file cannot make the import run for long."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from mlvm.dialect.nn import ConcatOp
from mlvm.frontend.onnx.importer import Const, Importer, NodeError, Poison, RunTimeInput, Tensor, Unsupported, Value
from mlvm.frontend.onnx.ops import _axis, converter, reshape, slice_value

MAX_UNROLLED = 1 << 14
"""Most body nodes imported by unrolling Scans, over a whole model."""


def _take(imp: Importer, v: Value, axis: int, t: int) -> Value:
    """Slice t of v along axis, that axis dropped."""
    if isinstance(v, Const):
        return Const(np.take(v.array, t, axis=axis))
    s = list(imp.shape(v))
    part = slice_value(imp, v, [t], [t + 1], [axis], [1])
    return reshape(imp, part, s[:axis] + s[axis + 1:])


def _stack(imp: Importer, parts: list[Value], axis: int) -> Value:
    """parts stacked along a new axis."""
    s = list(imp.shape(parts[0]))
    ax = _axis(axis, len(s) + 1)
    if any(list(imp.shape(p)) != s for p in parts):
        raise NodeError("the body's scan outputs change shape between iterations")
    one = [reshape(imp, p, s[:ax] + [1] + s[ax:]) for p in parts]
    if len(one) == 1:
        return one[0]
    elem = next((imp.elem(p) for p in parts if isinstance(p, Tensor)), imp.elem(parts[0]))
    out = s[:ax] + [len(parts)] + s[ax:]
    return Tensor(imp.emit(ConcatOp, [imp.t(p) for p in one], out, elem, axis=ax))


def _spend(imp: Importer, nodes: int) -> None:
    imp.unrolled += max(nodes, 1)  # (an empty body still takes a step)
    if imp.unrolled > MAX_UNROLLED:
        raise Unsupported(f"Scans and Loops unrolled to more than {MAX_UNROLLED} nodes")


def _ints(attrs: dict[str, Any], key: str, n: int) -> list[int]:
    v = [int(a) for a in attrs.get(key, [0] * n)]
    if len(v) != n:
        raise NodeError(f"{key} has {len(v)} values for {n} scans")
    return v


@converter("Scan")
def _scan(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    if imp.opset < 9:
        raise Unsupported("Scan of opset 8 (batched, with sequence_lens)")
    body = attrs.get("body")
    if not isinstance(body, onnx.GraphProto):
        raise NodeError("the body is missing")
    m = int(attrs.get("num_scan_inputs", 0))
    n = len(ins) - m
    k = len(body.output) - n
    if m < 1 or n < 0 or k < 0 or len(body.input) != n + m or any(v is None for v in ins):
        raise NodeError(f"{len(ins)} inputs, {m} scanned, for a body of {len(body.input)} inputs "
                        f"and {len(body.output)} outputs")
    states: list[Value] = [v for v in ins[:n] if v is not None]
    scans: list[Value] = [v for v in ins[n:] if v is not None]
    in_axes = [_axis(a, len(imp.shape(v))) for a, v in zip(_ints(attrs, "scan_input_axes", m), scans,
                                                              strict=True)]
    in_dirs = _ints(attrs, "scan_input_directions", m)
    out_axes, out_dirs = _ints(attrs, "scan_output_axes", k), _ints(attrs, "scan_output_directions", k)
    steps = {imp.shape(v)[a] for v, a in zip(scans, in_axes, strict=True)}
    if len(steps) != 1:
        raise NodeError(f"the scan inputs differ in length ({sorted(steps)})")
    count = steps.pop()
    if count == 0:
        raise Unsupported("a Scan of no iterations")
    _spend(imp, count * len(body.node))
    outs: list[list[Value]] = [[] for _ in range(k)]
    inits = imp.subgraph_initializers(body)  # one array (one param) for every iteration
    for t in range(count):
        for inp, v in zip(body.input[:n], states, strict=True):
            imp.values[inp.name] = v
        for j, (inp, v) in enumerate(zip(body.input[n:], scans, strict=True)):
            imp.values[inp.name] = _take(imp, v, in_axes[j], count - 1 - t if in_dirs[j] else t)
        got = [v for v in imp.run_graph(body, 0, inits) if v is not None]
        if len(got) != n + k:
            raise NodeError("the body does not compute all its outputs")
        if any(isinstance(v, Poison) for v in got):  # a body node was not converted (reported)
            return [Poison() for _ in node.output]
        states = got[:n]
        for j, out in enumerate(got[n:]):
            outs[j].append(out)
    stacked = [_stack(imp, parts[::-1] if out_dirs[j] else parts, out_axes[j]) for j, parts in enumerate(outs)]
    return states + stacked


@converter("Loop")
def _loop(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    body = attrs.get("body")
    if not isinstance(body, onnx.GraphProto):
        raise NodeError("the body is missing")
    trips = ins[0] if ins else None
    cond = ins[1] if len(ins) > 1 else None
    states: list[Value] = [v for v in ins[2:] if v is not None]
    n = len(states)
    k = len(body.output) - 1 - n
    if len(ins[2:]) != n or len(body.input) != 2 + n or k < 0:
        raise NodeError(f"{len(ins)} inputs for a body of {len(body.input)} inputs and "
                        f"{len(body.output)} outputs")
    for v, what in ((trips, "the Loop trip count"), (cond, "the Loop condition")):
        if v is not None and not isinstance(v, Const):
            raise RunTimeInput(what, v)
    limit = int(trips.array.reshape(-1)[0]) if isinstance(trips, Const) else None
    go = bool(cond.array.reshape(-1)[0]) if isinstance(cond, Const) else True
    outs: list[list[Value]] = [[] for _ in range(k)]
    inits = imp.subgraph_initializers(body)
    i = 0
    while go and (limit is None or i < limit):
        _spend(imp, len(body.node))
        imp.values[body.input[0].name] = Const(np.asarray(i, np.int64))
        imp.values[body.input[1].name] = Const(np.asarray(go))
        for inp, v in zip(body.input[2:], states, strict=True):
            imp.values[inp.name] = v
        got = [v for v in imp.run_graph(body, 0, inits) if v is not None]
        if len(got) != 1 + n + k:
            raise NodeError("the body does not compute all its outputs")
        if any(isinstance(v, Poison) for v in got):  # a body node was not converted (reported)
            return [Poison() for _ in node.output]
        if not isinstance(got[0], Const):
            raise RunTimeInput("the Loop condition", got[0])
        go = bool(got[0].array.reshape(-1)[0])
        states = got[1:1 + n]
        for j, out in enumerate(got[1 + n:]):
            outs[j].append(out)
        i += 1
    if k and i == 0:
        raise Unsupported("a Loop of no iterations with scan outputs (their shape is unknown)")
    return states + [_stack(imp, parts, 0) for parts in outs]
