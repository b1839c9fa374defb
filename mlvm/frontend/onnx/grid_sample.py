"""ONNX GridSample (any spatial rank; nearest, linear and cubic; zeros,
border and reflection padding; align_corners) as the operator defines it.

Each output position reads the input where the grid points: per spatial
dim the grid value is denormalized to a pixel coordinate, moved inside by
the padding mode when it lies outside, and split into the taps of the mode
(1, 2 or 4 pixels, with their weights: linear, or Keys' cubic with
a = -0.75). The taps of all dims combine into flat indices into each
image's plane: one `mlvm.gather_elements` per tap combination over
[N, C, positions], weighted and summed; with zero padding, taps outside
the input read 0 (a select, so that an inf there cannot leak)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import onnx

from mlvm.dialect.index import GatherElementsOp
from mlvm.dialect.logic import AndOp, GtOp, LtOp, OrOp
from mlvm.dialect.ops import AddOp, BroadcastToOp, CeilOp, DivOp, FloorOp, MaxOp, MinOp, MulOp, SubOp
from mlvm.frontend.onnx.importer import Const, Importer, NodeError, Tensor, Unsupported, Value
from mlvm.frontend.onnx.ops import binary, cast, compare, converter, in_f32, reshape, select, slice_value, unary

CUBIC_A = -0.75
MAX_TAPS = 64
"""Most tap combinations (4^3 for a 3-D cubic sample), one gather each."""


class _Ops:
    """Short names for the f32 elementwise arithmetic of one node."""

    def __init__(self, imp: Importer) -> None:
        self.imp = imp

    def k(self, v: float) -> Const:
        return Const(np.asarray(v, np.float32))

    def add(self, a: Value, b: Value | float) -> Value:
        return binary(self.imp, AddOp, a, self.k(b) if isinstance(b, float) else b)

    def sub(self, a: Value | float, b: Value | float) -> Value:
        return binary(self.imp, SubOp, self.k(a) if isinstance(a, float) else a,
                      self.k(b) if isinstance(b, float) else b)

    def mul(self, a: Value, b: Value | float) -> Value:
        return binary(self.imp, MulOp, a, self.k(b) if isinstance(b, float) else b)

    def clamp(self, a: Value, lo: float, hi: float) -> Value:
        return binary(self.imp, MinOp, binary(self.imp, MaxOp, a, self.k(lo)), self.k(hi))

    def floor(self, a: Value) -> Value:
        return Tensor(self.imp.emit(FloorOp, [self.imp.t(a)], self.imp.shape(a), "f32"))

    def trunc(self, a: Value) -> Value:
        ceil = Tensor(self.imp.emit(CeilOp, [self.imp.t(a)], self.imp.shape(a), "f32"))
        return select(self.imp, compare(self.imp, LtOp, a, self.k(0.0)), ceil, self.floor(a))

    def outside(self, a: Value, lo: float, hi: float) -> Value:
        return binary(self.imp, OrOp, compare(self.imp, LtOp, a, self.k(lo)),
                      compare(self.imp, GtOp, a, self.k(hi)))

    def reflect(self, v: Value, lo: float, hi: float) -> Value:
        """v reflected by the near border until it lies in [lo, hi]."""
        if hi <= lo:
            return self.clamp(v, lo, hi)
        below = compare(self.imp, LtOp, v, self.k(lo))
        dx = select(self.imp, below, self.sub(lo, v), self.sub(v, hi))
        rng = hi - lo
        turns = self.floor(binary(self.imp, DivOp, dx, self.k(rng)))
        r = self.sub(dx, self.mul(turns, rng))
        odd = compare(self.imp, GtOp, self.sub(turns, self.mul(self.floor(self.mul(turns, 0.5)), 2.0)),
                      self.k(0.5))
        up, down = self.add(r, lo), self.sub(hi, r)  # lo + r, hi - r
        return select(self.imp, below, select(self.imp, odd, down, up), select(self.imp, odd, up, down))


def _coordinate(o: _Ops, v: Value, size: int, align: bool, mode: str, padding: str) -> Value:
    """The pixel coordinate of grid value v along a dim of `size` pixels."""
    if align:
        x = o.mul(o.mul(o.add(v, 1.0), 0.5), float(size - 1))
        lo, hi = 0.0, float(size - 1)
    else:
        x = o.mul(o.sub(o.mul(o.add(v, 1.0), float(size)), 1.0), 0.5)
        lo, hi = -0.5, size - 0.5
    if mode == "nearest":  # half to even, as the definition's rint (|x| < 2^22)
        big = float(np.float32(1.5 * 2**23))
        x = o.sub(o.add(x, big), big)
    if padding == "border":
        x = select(o.imp, o.outside(x, lo, hi), o.clamp(x, 0.0, float(size - 1)), x)
    elif padding == "reflection":
        x = select(o.imp, o.outside(x, lo, hi), o.reflect(x, lo, hi), x)
    return x


def _pixel(o: _Ops, pos: Value, size: int, align: bool, padding: str) -> tuple[Value, Value | None]:
    """(index as f32, inside or None) of whole pixel position pos: zero
    padding reads 0 outside, border the nearest pixel, reflection the
    mirrored one."""
    last = float(size - 1)
    if padding == "zeros":
        inside = binary(o.imp, AndOp, compare(o.imp, GtOp, pos, o.k(-0.5)),
                        compare(o.imp, LtOp, pos, o.k(size - 0.5)))
        return o.clamp(pos, 0.0, last), inside
    if padding == "reflection":
        lo, hi = (0.0, last) if align else (-0.5, size - 0.5)
        pos = o.trunc(o.reflect(pos, lo, hi))
    return o.clamp(pos, 0.0, last), None


def _cubic(o: _Ops, f: Value) -> list[Value]:
    """Keys' cubic weights of the taps at -1, 0, 1, 2 for fraction f."""
    a = CUBIC_A
    f1, g, g2 = o.add(f, 1.0), o.sub(1.0, f), o.sub(2.0, f)

    def outer(t: Value) -> Value:  # ((a t - 5a) t + 8a) t - 4a, for t in [1, 2]
        return o.sub(o.mul(o.add(o.mul(o.sub(o.mul(t, a), 5 * a), t), 8 * a), t), 4 * a)

    def inner(t: Value) -> Value:  # ((a + 2) t - (a + 3)) t t + 1, for t in [0, 1]
        return o.add(o.mul(o.mul(o.sub(o.mul(t, a + 2), a + 3), t), t), 1.0)

    return [outer(f1), inner(f), inner(g), outer(g2)]


@converter("GridSample")
@in_f32
def _grid_sample(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
                 attrs: dict[str, Any]) -> list[Value]:
    if len(ins) < 2 or ins[0] is None or ins[1] is None:
        raise NodeError("needs X and grid")
    x, grid = ins[0], ins[1]
    xs, gs = imp.shape(x), imp.shape(grid)
    r = len(xs) - 2
    if r < 1 or len(gs) != r + 2 or gs[0] != xs[0] or gs[-1] != r:
        raise NodeError(f"grid of shape {list(gs)} does not fit X of shape {list(xs)}")
    if imp.elem(x) != "f32" or imp.elem(grid) != "f32":
        raise Unsupported(f"GridSample of {imp.elem(x)} with a {imp.elem(grid)} grid")
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(str(attrs.get("mode", "linear")),
                                                         str(attrs.get("mode", "linear")))
    padding = str(attrs.get("padding_mode", "zeros"))
    align = bool(int(attrs.get("align_corners", 0)))
    if mode not in ("nearest", "linear", "cubic") or padding not in ("zeros", "border", "reflection"):
        raise NodeError(f"mode '{mode}' / padding_mode '{padding}' is not defined")
    taps = {"nearest": 1, "linear": 2, "cubic": 4}[mode]
    if taps ** r > MAX_TAPS:
        raise Unsupported(f"{mode} sampling in {r}-D")
    n, c, spatial, out_sp = xs[0], xs[1], xs[2:], gs[1:-1]
    q, p = math.prod(out_sp), math.prod(spatial)
    o = _Ops(imp)
    g2 = reshape(imp, grid, (n, q, r))
    per_dim: list[list[tuple[Value, Value | None, Value | None]]] = []  # (index, inside, weight)
    for i, size in enumerate(spatial):
        k = r - 1 - i  # the grid lists x (the last dim) first
        v = reshape(imp, slice_value(imp, g2, [k], [k + 1], [2], [1]), (n, q))
        xc = _coordinate(o, v, size, align, mode, padding)
        if mode == "nearest":
            idx, inside = _pixel(o, o.trunc(xc), size, align, padding)
            per_dim.append([(idx, inside, None)])
            continue
        x0 = o.floor(xc)
        f = o.sub(xc, x0)
        weights = [o.sub(1.0, f), f] if mode == "linear" else _cubic(o, f)
        first = 0 if mode == "linear" else -1
        per_dim.append([(*_pixel(o, o.add(x0, float(first + t)), size, align, padding), w)
                        for t, w in enumerate(weights)])
    strides = [math.prod(spatial[i + 1:]) for i in range(r)]
    planes = reshape(imp, x, (n, c, p))
    acc: Value | None = None
    for combo in itertools.product(*per_dim):
        flat: Value | None = None
        within: Value | None = None
        weight: Value | None = None
        for (idx, ins_i, w), stride in zip(combo, strides, strict=True):
            term = o.mul(idx, float(stride)) if stride != 1 else idx
            flat = term if flat is None else o.add(flat, term)
            if ins_i is not None:
                within = ins_i if within is None else binary(imp, AndOp, within, ins_i)
            if w is not None:
                weight = w if weight is None else o.mul(weight, w)
        assert flat is not None
        index = Tensor(imp.emit(BroadcastToOp, [imp.t(reshape(imp, cast(imp, flat, "i32"), (n, 1, q)))],
                                (n, c, q), "i32"))
        val: Value = Tensor(imp.emit(GatherElementsOp, [imp.t(planes), imp.t(index)], (n, c, q), "f32", axis=2))
        if within is not None:
            val = select(imp, reshape(imp, within, (n, 1, q)), val, o.k(0.0))
        if weight is not None:
            val = o.mul(val, reshape(imp, weight, (n, 1, q)))
        acc = val if acc is None else o.add(acc, val)
    assert acc is not None
    return [reshape(imp, acc, (n, c, *out_sp))]
