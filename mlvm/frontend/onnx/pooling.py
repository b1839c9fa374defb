"""ONNX MaxPool, AveragePool and their global forms.

2-D and 1-D windows without dilation of f32 (and 8-bit integers, for a
max) run on `mlvm.pool2d`. The rest (3-D inputs, dilations, wider integer
or half-precision max pools, an average
that counts the pads in ceil mode) follow the operator's definition as a
sum or max over the kernel's taps: the input padded once (with the type's
lowest value for a max, zeros for an average), then one strided slice per
tap of one axis at a time (a box's max or sum is separable); an average divides by a constant count per output position, the
taps inside the input (or inside input and pads, with count_include_pad).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx

from mlvm.dialect.elements import ELEMS
from mlvm.dialect.index import PadOp
from mlvm.dialect.nn import Pool2dOp, pool2d_elems
from mlvm.dialect.ops import AddOp, DivOp, MaxOp
from mlvm.frontend.onnx.importer import MAX_FOLD_ELEMENTS, Const, Importer, NodeError, Tensor, Unsupported, Value
from mlvm.frontend.onnx.ops import (
    _one,
    _only_first_output,
    _spatial_attrs,
    _to_2d,
    binary,
    cast,
    converter,
    kept_dims,
    reduce,
    reshape,
    slice_value,
)

MAX_TAPS = 4096
"""Most taps (summed over the axes) of a window pooled by slices."""


def _out_sizes(spatial: tuple[int, ...], kernel: list[int], strides: list[int], dilations: list[int],
               pads: list[int], ceil: bool) -> list[int]:
    """Output sizes; in ceil mode the last window must start inside the input or its begin pad."""
    n, out = len(spatial), []
    for i, (size, k, s, d) in enumerate(zip(spatial, kernel, strides, dilations, strict=True)):
        span = size + pads[i] + pads[i + n] - ((k - 1) * d + 1)
        if span < 0:
            raise NodeError(f"the window ({k} with dilation {d}) is larger than the padded input ({size})")
        o = (-(-span // s) if ceil else span // s) + 1
        if ceil and (o - 1) * s >= size + pads[i]:
            o -= 1
        out.append(o)
    return out


def _counts(size: int, o: int, k: int, s: int, d: int, begin: int, end: int, with_pads: bool) -> np.ndarray:
    """Taps of each of the o windows along one axis that an average divides
    by: those inside the input (or inside input and pads), counted without
    listing them (o values, whatever the kernel)."""
    lo, hi = (-begin, size + end) if with_pads else (0, size)
    first = np.arange(o, dtype=np.int64) * s - begin  # the windows' first taps
    t_lo = np.clip(-((first - lo) // d), 0, k)  # ceil((lo - first) / d)
    t_hi = np.clip(-((first - hi) // d), 0, k)  # ceil((hi - first) / d)
    return np.maximum(t_hi - t_lo, 0)


def pool_by_taps(imp: Importer, x: Value, kind: str, kernel: list[int], strides: list[int],
                 dilations: list[int], pads: list[int], ceil: bool, count_pad: bool) -> Value:
    """The pool of x (rank 3 or more) by slices; kind is max, avg or sum
    (the window's sum, for LpPool)."""
    s = imp.shape(x)
    spatial, n = tuple(s[2:]), len(s) - 2
    if len(kernel) != n or min(kernel, default=1) < 1:
        raise NodeError(f"kernel_shape {kernel} must have one positive size per spatial dim")
    if sum(kernel) > MAX_TAPS:
        raise Unsupported(f"a {'x'.join(map(str, kernel))} window with dilations or in {n}-D")
    out = _out_sizes(spatial, kernel, strides, dilations, pads, ceil)
    if kind == "avg" and math.prod(out) > MAX_FOLD_ELEMENTS:  # its divisors are a constant
        raise Unsupported(f"an average pool over {math.prod(out)} output positions")
    elem = imp.elem(x)
    if kind != "max" and ELEMS[elem].kind != "f":
        raise NodeError(f"{'AveragePool' if kind == 'avg' else 'LpPool'} of {elem}")
    if kind != "max" and elem in ("f16", "bf16"):  # summed in f32, rounded once
        return cast(imp, pool_by_taps(imp, cast(imp, x, "f32"), kind, kernel, strides, dilations,
                                      pads, ceil, count_pad), elem)
    # the extent the windows read, past the end pad in ceil mode
    ends = [max(pads[i + n], (o - 1) * st + (k - 1) * d + 1 - size - pads[i])
            for i, (size, o, k, st, d) in enumerate(zip(spatial, out, kernel, strides, dilations, strict=True))]
    padded = x
    if any(pads[:n]) or any(ends):
        dt = ELEMS[elem].dtype
        fill = 0.0 if kind != "max" else float(-np.inf if ELEMS[elem].kind == "f" else np.iinfo(dt).min)
        shape = [*s[:2], *(size + pads[i] + ends[i] for i, size in enumerate(spatial))]
        padded = Tensor(imp.emit(PadOp, [imp.t(x)], shape, elem, pads=[0, 0, *pads[:n], 0, 0, *ends],
                                 mode="constant", value=fill))
    # a box's max or sum is one axis after another: k1 + k2 + ... slices
    acc = padded
    for i, (k, o, st, d) in enumerate(zip(kernel, out, strides, dilations, strict=True)):
        along: Value | None = None
        for t in range(k):
            v = slice_value(imp, acc, [t * d], [t * d + (o - 1) * st + 1], [2 + i], [st])
            along = v if along is None else binary(imp, MaxOp if kind == "max" else AddOp, along, v)
        assert along is not None
        acc = along
    if kind != "avg":
        return acc
    count = np.ones((), np.int64)
    for i, (size, o, k, st, d) in enumerate(zip(spatial, out, kernel, strides, dilations, strict=True)):
        count = np.multiply.outer(count, _counts(size, o, k, st, d, pads[i], pads[i + n], count_pad))
    return binary(imp, DivOp, acc, Const(count.astype(ELEMS[imp.elem(acc)].dtype)))


@converter("MaxPool", "AveragePool")
def _pool(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    _only_first_output(node, "Indices")
    x = _one(ins)
    s = imp.shape(x)
    if len(s) < 3:
        raise NodeError(f"needs a rank of 3 or more (N, C, spatial dims), not {len(s)}")
    kernel = [int(k) for k in attrs.get("kernel_shape", [])]
    if len(kernel) != len(s) - 2 or min(kernel, default=1) < 1:
        raise NodeError(f"kernel_shape {kernel} must have one positive size per spatial dim")
    if int(attrs.get("storage_order", 0)):
        raise Unsupported("storage_order")
    strides, dilations, pads = _spatial_attrs(attrs, s[2:], kernel)
    kind = "max" if node.op_type == "MaxPool" else "avg"
    ceil, count_pad = bool(int(attrs.get("ceil_mode", 0))), bool(int(attrs.get("count_include_pad", 0)))
    if (len(s) > 4 or any(d != 1 for d in dilations) or imp.elem(x) not in pool2d_elems(kind)
            or (kind == "avg" and count_pad and ceil and any(pads))):
        return [pool_by_taps(imp, x, kind, kernel, strides, dilations, pads, ceil, count_pad)]
    return [_pool_2d(imp, x, kind, attrs, count_pad)]


def _pool_2d(imp: Importer, x: Value, kind: str, attrs: dict[str, Any], count_pad: bool) -> Value:
    """A pool of a 1-D or 2-D input without dilations on mlvm.pool2d (f32,
    or an 8-bit max)."""
    x4, squeeze = _to_2d(imp, x)
    kernel = [int(k) for k in attrs.get("kernel_shape", [])]
    a = dict(attrs)
    if squeeze:
        kernel = [1] + kernel
        for key in ("strides", "dilations"):
            if key in a:
                a[key] = [1] + list(a[key])
        if "pads" in a:
            p = list(a["pads"])
            a["pads"] = [0, p[0], 0, p[1]]
    n, c, h, w = imp.shape(x4)
    strides, _, pads = _spatial_attrs(a, (h, w), kernel)
    if kind == "avg" and count_pad and any(pads):
        # the pads counted: zeros padded in first, then a pool without pads
        x4 = Tensor(imp.emit(PadOp, [imp.t(x4)], (n, c, h + pads[0] + pads[2], w + pads[1] + pads[3]),
                             imp.elem(x4), pads=[0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]],
                             mode="constant", value=0.0))
        h, w = h + pads[0] + pads[2], w + pads[1] + pads[3]
        pads = [0, 0, 0, 0]
    out = _out_sizes((h, w), kernel, strides, [1, 1], pads, bool(int(attrs.get("ceil_mode", 0))))
    for k, (size, kk, s, o) in enumerate(zip((h, w), kernel, strides, out, strict=True)):
        # ceil mode: windows past the end see padding, which is left out
        pads[k + 2] = max(pads[k + 2], (o - 1) * s + kk - size - pads[k])
    y: Value = Tensor(imp.emit(Pool2dOp, [imp.t(x4)], (n, c, out[0], out[1]), imp.elem(x4), kind=kind,
                               window=kernel, strides=strides, padding=pads))
    if squeeze:
        y = reshape(imp, y, (n, c, out[1]))
    return y


@converter("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(imp: Importer, node: onnx.NodeProto, ins: list[Value | None], attrs: dict[str, Any]) -> list[Value]:
    """A max or mean over the spatial axes; a 1-D or 2-D average of f32 as
    mlvm.pool2d with one window over the map, which mlvm-fuse-qdq computes
    in integers between a dequantize and a quantize as onnxruntime's
    QLinearGlobalAveragePool does (mlvm-canonicalize makes the others a
    mean again)."""
    x = _one(ins)
    s = imp.shape(x)
    if len(s) < 3:
        raise NodeError(f"needs a rank of 3 or more (N, C, spatial dims), not {len(s)}")
    axes = list(range(2, len(s)))
    if node.op_type == "GlobalMaxPool":
        return [reduce(imp, x, "max", axes, kept_dims(s, axes), True)]
    if len(s) > 4 or imp.elem(x) not in pool2d_elems("avg") or 0 in s[2:]:
        return [reduce(imp, x, "mean", axes, kept_dims(s, axes), True)]
    return [_pool_2d(imp, x, "avg", {"kernel_shape": list(s[2:])}, False)]
