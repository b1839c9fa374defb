"""ONNX Resize (opsets 10-21) and Upsample (7-9) as gathers.

Resize is separable: each resized axis maps output position y to a source
coordinate x (coordinate_transformation_mode), takes the n input elements
nearest x (edge-clamped) and weighs them (mode: nearest one-hot, linear 2
taps, cubic 4, wider windows when antialias filters a downscale). The
scales or sizes are known at import, so the taps' indices and weights are
constants computed here in float64, as the operator's definition does; the
model then runs one `mlvm.gather` per tap along the axis, times its
weights, summed (nearest: one gather). No new dialect op: gathers are
exact, and the weighted sums fuse into one loop."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from mlvm.dialect.elements import ELEMS, FLOATS
from mlvm.dialect.index import GatherOp
from mlvm.dialect.ops import AddOp, MulOp
from mlvm.frontend.onnx.importer import (
    Const,
    Importer,
    NodeError,
    RunTimeInput,
    Tensor,
    Unsupported,
    Value,
)
from mlvm.frontend.onnx.ops import _axis, _ints_input, binary, converter, select

COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                    "asymmetric", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def source_coords(mode: str, out_n: int, in_n: int, scale: float,
                  roi: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray | None]:
    """x for every output position y of one axis, and for
    tf_crop_and_resize which of them fall outside the input (else None)."""
    y = np.arange(out_n, dtype=np.float64)
    length = scale * in_n  # the output length before flooring
    if mode == "asymmetric":
        return y / scale, None
    if mode == "align_corners":
        return (np.zeros(out_n) if length == 1 else y * (in_n - 1) / (length - 1)), None
    if mode == "pytorch_half_pixel":
        return (np.full(out_n, -0.5) if length == 1 else (y + 0.5) / scale - 0.5), None
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5, None
    if mode == "half_pixel_symmetric":
        offset = in_n / 2 * (1 - out_n / length)
        return offset + (y + 0.5) / scale - 0.5, None
    assert mode == "tf_crop_and_resize" and roi is not None
    # roi stays float32 where the definition computes with it alone
    lo, hi = np.float32(roi[0]), np.float32(roi[1])
    x: np.ndarray = (np.full(out_n, (hi - lo) * (in_n - 1) / 2) if length == 1
                     else y * (hi - lo) * (in_n - 1) / (length - 1))
    x = x + lo * (in_n - 1)
    return x, (x < 0) | (x > in_n - 1)


def _keys(t: np.ndarray, a: float) -> np.ndarray:
    """The cubic convolution kernel (Keys, parameter a) at distances t."""
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def weights(mode: str, ratio: np.ndarray, scale: float, nearest_mode: str, cubic_a: float,
            antialias: bool) -> np.ndarray:
    """[out, n] weights of the n taps around each x, from ratio = x minus
    the tap left of it, in (0, 1]. Antialiased (downscaling) linear and
    cubic windows stretch by 1 / scale and are normalised."""
    r = ratio[:, None]
    if mode == "nearest":
        whole = r == 1.0
        if nearest_mode == "round_prefer_floor":
            right = r > 0.5
        elif nearest_mode == "round_prefer_ceil":
            right = r >= 0.5
        else:
            right = np.full_like(r, nearest_mode == "ceil", dtype=bool)
        right = right | whole
        return np.concatenate([~right, right], axis=1).astype(np.float64)
    s = min(scale, 1.0) if antialias else 1.0
    reach = 1.0 if mode == "linear" else 2.0
    start = int(np.floor(-reach / s)) + 1
    taps = np.arange(start, 2 - start)[None, :]
    dist = (taps - r) * s
    w = np.clip(1 - np.abs(dist), 0, 1) if mode == "linear" else _keys(dist, cubic_a)
    return w / w.sum(axis=1, keepdims=True) if antialias else w


def axis_taps(x: np.ndarray, n: int, in_n: int,
              w: np.ndarray, exclude_outside: bool) -> tuple[np.ndarray, np.ndarray]:
    """Indices [out, n] (clamped to the axis: edge padding) of the taps the
    weights w apply to: the n nearest x, ties to the left."""
    p = np.floor(x).astype(np.int64)
    frac = x - p
    if n % 2 == 0:
        start = p - n // 2 + np.where(frac == 0, 0, 1)
    else:
        start = p - (n - 1) // 2 + np.where(frac <= 0.5, 0, 1)
    idx = start[:, None] + np.arange(n)[None, :]
    if exclude_outside:
        w = np.where((idx < 0) | (idx >= in_n), 0.0, w)
        total = w.sum(axis=1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    return np.clip(idx, 0, in_n - 1), w


def _floats(v: Value | None, what: str) -> list[float] | None:
    if v is None:
        return None
    if not isinstance(v, Const):
        raise RunTimeInput(what, v)
    return [float(f) for f in v.array.reshape(-1)] or None


class Plan:
    """What the attributes and constant inputs ask for, per axis."""

    def __init__(self, imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
                 attrs: dict[str, Any], shape: tuple[int, ...]) -> None:
        rank = len(shape)
        upsample = node.op_type == "Upsample"
        self.mode = str(attrs.get("mode", "nearest"))
        if self.mode not in ("nearest", "linear", "cubic"):
            raise Unsupported(f"mode '{self.mode}'")
        old = upsample or imp.opset < 11  # Upsample and Resize-10
        self.coords = "asymmetric" if old else str(
            attrs.get("coordinate_transformation_mode", "half_pixel"))
        if self.coords not in COORDINATE_MODES:
            raise Unsupported(f"coordinate_transformation_mode '{self.coords}'")
        self.nearest = "floor" if old else str(attrs.get("nearest_mode", "round_prefer_floor"))
        if self.nearest not in NEAREST_MODES:
            raise Unsupported(f"nearest_mode '{self.nearest}'")
        self.cubic_a = float(attrs.get("cubic_coeff_a", -0.75))
        self.exclude = bool(int(attrs.get("exclude_outside", 0)))
        self.extrapolation = float(attrs.get("extrapolation_value", 0.0))
        self.antialias = bool(int(attrs.get("antialias", 0))) and self.mode != "nearest"
        axes = [_axis(a, rank) for a in attrs.get("axes", range(rank))]
        if len(set(axes)) != len(axes):
            raise NodeError(f"axes {list(attrs.get('axes', []))} repeat an axis")
        if upsample and imp.opset < 9:
            scales = [float(s) for s in attrs.get("scales", [])] or None
            sizes, roi = None, None
        elif old:
            scales, sizes, roi = _floats(ins[1] if len(ins) > 1 else None, "scales"), None, None
        else:
            roi = _floats(ins[1] if len(ins) > 1 else None, "roi")
            scales = _floats(ins[2] if len(ins) > 2 else None, "scales")
            sizes = _ints_input(ins[3] if len(ins) > 3 else None, "sizes") or None
        if (scales is None) == (sizes is None):
            raise NodeError("needs exactly one of scales and sizes")
        given = scales if scales is not None else sizes
        assert given is not None
        if len(given) != len(axes):
            raise NodeError(f"{'scales' if sizes is None else 'sizes'} has {len(given)} values "
                            f"for {len(axes)} axes")
        self.scale = [1.0] * rank
        self.out = list(shape)
        if sizes is not None:
            for a, n in zip(axes, sizes, strict=True):
                if n < 0:
                    raise NodeError(f"size {n} is negative")
                self.out[a], self.scale[a] = int(n), int(n) / shape[a] if shape[a] else 1.0
            policy = str(attrs.get("keep_aspect_ratio_policy", "stretch"))
            if policy in ("not_larger", "not_smaller"):
                pick = min if policy == "not_larger" else max
                common = pick(self.scale[a] for a in axes)
                for a in axes:
                    self.scale[a], self.out[a] = common, int(common * shape[a] + 0.5)
            elif policy != "stretch":
                raise Unsupported(f"keep_aspect_ratio_policy '{policy}'")
        else:
            assert scales is not None
            for a, s in zip(axes, scales, strict=True):
                if not s > 0:
                    raise NodeError(f"scale {s} is not positive")
                self.scale[a], self.out[a] = s, int(s * shape[a])
        self.roi: list[tuple[float, float] | None] = [None] * rank
        if self.coords == "tf_crop_and_resize":
            if roi is None or len(roi) != 2 * len(axes):
                raise NodeError(f"tf_crop_and_resize needs roi with {2 * len(axes)} values")
            for k, a in enumerate(axes):
                self.roi[a] = (roi[k], roi[len(axes) + k])
        self.axes = axes

    def taps(self, a: int, in_n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
        """(indices, weights, extrapolated) of axis a, or None where the
        axis is left as it is."""
        out_n, scale = self.out[a], self.scale[a]
        if out_n == in_n and np.isclose(scale, 1.0) and self.roi[a] in (None, (0.0, 1.0)):
            return None
        x, extra = source_coords(self.coords, out_n, in_n, scale, self.roi[a])
        base = np.floor(x)
        ratio = np.where(x == base, 1.0, x - base)
        w = weights(self.mode, ratio, scale, self.nearest, self.cubic_a, self.antialias)
        idx, w = axis_taps(x, w.shape[1], in_n, w, self.exclude)
        return idx, w, extra


def _axis_const(a: np.ndarray, ax: int, plan: Plan, idx: np.ndarray, w: np.ndarray,
                extra: np.ndarray | None) -> np.ndarray:
    """One axis of a resize of a known tensor, in float64 (as the operator
    is defined), rounded back to its type at the end by the caller."""
    shape = [1] * a.ndim
    shape[ax] = idx.shape[0]
    y = sum(np.take(a, idx[:, j], axis=ax) * w[:, j].reshape(shape) for j in range(idx.shape[1]))
    if extra is not None:
        y = np.where(extra.reshape(shape), plan.extrapolation, y)
    return np.asarray(y)


def _axis_tensor(imp: Importer, v: Value, ax: int, plan: Plan, idx: np.ndarray, w: np.ndarray,
                 extra: np.ndarray | None) -> Value:
    shape = list(imp.shape(v))
    out_shape = tuple(shape[:ax] + [idx.shape[0]] + shape[ax + 1:])
    elem = imp.elem(v)
    bshape = [1] * len(shape)
    bshape[ax] = idx.shape[0]

    def gather(ix: np.ndarray) -> Tensor:
        return Tensor(imp.emit(GatherOp, [imp.t(v), imp.t(Const(ix.astype(np.int64)))], out_shape,
                               elem, axis=ax))

    one_hot = np.all((w == 0) | (w == 1), axis=1) & (w.sum(axis=1) == 1)
    acc: Value
    if one_hot.all():
        acc = gather(idx[np.arange(idx.shape[0]), np.argmax(w, axis=1)])
    else:
        if elem not in FLOATS:
            raise Unsupported(f"{plan.mode} resize of a {elem} tensor")
        terms = []
        for j in range(idx.shape[1]):
            if not np.any(w[:, j]):
                continue
            wj = Const(w[:, j].reshape(bshape).astype(ELEMS[elem].dtype))
            terms.append(binary(imp, MulOp, gather(idx[:, j]), wj))
        acc = terms[0]
        for t in terms[1:]:
            acc = binary(imp, AddOp, acc, t)
    if extra is not None and extra.any():
        mask = Const(extra.reshape(bshape))
        fill = Const(np.asarray(plan.extrapolation, dtype=ELEMS[elem].dtype))
        acc = select(imp, mask, fill, acc)
    return acc


@converter("Resize", "Upsample")
def _resize(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
            attrs: dict[str, Any]) -> list[Value]:
    if not ins or ins[0] is None:
        raise NodeError("needs an input")
    x: Value = ins[0]
    plan = Plan(imp, node, ins, attrs, imp.shape(x))
    if isinstance(x, Const):
        a = x.array.astype(np.float64)
        for ax in plan.axes:
            t = plan.taps(ax, a.shape[ax])
            if t is not None:
                a = _axis_const(a, ax, plan, *t)
        out = a if np.issubdtype(x.array.dtype, np.floating) else np.rint(a)
        return [Const(out.astype(x.array.dtype))]
    for ax in plan.axes:
        t = plan.taps(ax, imp.shape(x)[ax])
        if t is not None:
            x = _axis_tensor(imp, x, ax, plan, *t)
    return [x]
