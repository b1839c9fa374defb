"""Shape arithmetic shared by the verifiers, the references and the lowering."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

MAX_RANK = 8
"""Largest rank the runtime's iteration descriptors hold (after collapsing)."""

Shape = tuple[int, ...]

LAYER_NORM_EPS = 1e-5
"""layer_norm's default eps, in the dialect, `mlvm.eager` and the C eager API
(MLVM_LAYER_NORM_EPS in exec.h)."""


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> Shape | None:
    """numpy broadcasting of two shapes, or None when they do not broadcast."""
    rank = max(len(a), len(b))
    pa = (1,) * (rank - len(a)) + tuple(a)
    pb = (1,) * (rank - len(b)) + tuple(b)
    out: list[int] = []
    for x, y in zip(pa, pb):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def can_broadcast_to(src: Sequence[int], dst: Sequence[int]) -> bool:
    """Whether `src` broadcasts to exactly `dst` (numpy's broadcast_to rule)."""
    return len(src) <= len(dst) and broadcast_shapes(src, dst) == tuple(dst)


def contiguous_strides(shape: Sequence[int]) -> Shape:
    strides = [0] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= shape[i]
    return tuple(strides)


def broadcast_strides(src: Sequence[int], dst: Sequence[int]) -> Shape:
    """Element strides that read a contiguous `src` at every index of `dst`."""
    own = contiguous_strides(src)
    pad = len(dst) - len(src)
    return tuple(
        0 if i < pad or src[i - pad] == 1 else own[i - pad] for i in range(len(dst))
    )


def collapse(
    shape: Sequence[int], strides: Sequence[Sequence[int]]
) -> tuple[Shape, tuple[Shape, ...]]:
    """Drop unit dims and merge neighbours that every operand walks as one.

    Dims i and i+1 merge when, for each stride list, stride[i] equals
    stride[i+1] * shape[i+1]; a contiguous or fully broadcast pair always does.
    The result has rank >= 1 so kernels always have an innermost loop.
    """
    dims = [i for i, n in enumerate(shape) if n != 1]
    out_shape: list[int] = []
    out_strides: list[list[int]] = [[] for _ in strides]
    for i in dims:
        if out_shape and all(
            s[-1] == st[i] * shape[i] for s, st in zip(out_strides, strides)
        ):
            out_shape[-1] *= shape[i]
            for s, st in zip(out_strides, strides):
                s[-1] = st[i]
            continue
        out_shape.append(shape[i])
        for s, st in zip(out_strides, strides):
            s.append(st[i])
    if not out_shape:
        return (1,), tuple((0,) for _ in strides)
    return tuple(out_shape), tuple(tuple(s) for s in out_strides)


def normalize_axis(axis: int, rank: int) -> int | None:
    """numpy's negative-axis rule; None when out of range."""
    if axis < -rank or axis >= rank:
        return None
    return axis % rank


def num_elements(shape: Sequence[int]) -> int:
    return prod(shape)
