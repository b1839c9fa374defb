"""`mlvm.reduce` (sum, max, mean, min) against float64 numpy.

Every kind with keepdims true, false and left out; axes empty, single,
negative, non-contiguous, unsorted, all; unit dims and odd primes; scalars;
and reductions over up to ~5000 elements along the innermost axis, an outer
axis, and several axes at once, so that accumulation error shows.

Tolerances:

* max, min: bit-exact, NaN propagates (numpy's `max`); the expectation is taken
  from a sort (NaN sorts last; a NaN anywhere gives NaN for min), not from
  `np.max`.
* sum: `|err| <= 1e-5 * sum |x|` over the reduced elements, against the
  float64 sum.
* mean: `|err| <= 1e-5 * sum |x| / count`, against the float64 mean.
"""

from __future__ import annotations

import sys
from math import prod
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import (  # noqa: E402
    EXACT,
    F32,
    Suite,
    array_attr,
    bool_attr,
    f32_data,
    op_func,
    rng,
    str_attr,
    sum_bound,
)

SUITE = Suite("reduce")

NAN, INF = np.nan, np.inf


def norm(axes: tuple[int, ...], rank: int) -> tuple[int, ...]:
    return tuple(sorted(a % rank for a in axes))


def result_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    ax = norm(axes, len(shape))
    if keepdims:
        return tuple(1 if i in ax else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in ax)


def _sorted_max(x: np.ndarray, ax: tuple[int, ...]) -> np.ndarray:
    """Max over `ax` by sorting the reduced elements (NaN sorts last)."""
    rest = [i for i in range(x.ndim) if i not in ax]
    moved = np.transpose(x, rest + list(ax))
    flat = moved.reshape(*[x.shape[i] for i in rest], -1)
    return np.sort(flat, axis=-1)[..., -1]


def _sorted_min(x: np.ndarray, ax: tuple[int, ...]) -> np.ndarray:
    """Min over `ax` by sorting the reduced elements, NaN where one is NaN."""
    rest = [i for i in range(x.ndim) if i not in ax]
    moved = np.transpose(x, rest + list(ax))
    flat = moved.reshape(*[x.shape[i] for i in rest], -1)
    return np.where(np.isnan(flat).any(axis=-1), np.float32(np.nan), np.sort(flat, axis=-1)[..., 0])


def expectation(kind: str, shape, axes, keepdims):  # noqa: ANN001, ANN201
    out = result_shape(shape, axes, keepdims)
    ax = norm(axes, len(shape))

    def expect(x: np.ndarray) -> list:
        x64 = x.astype(np.float64)
        count = prod(shape[i] for i in ax)
        if kind == "max":
            return [_sorted_max(x, ax).astype(np.float32).reshape(out)]
        if kind == "min":
            return [_sorted_min(x, ax).astype(np.float32).reshape(out)]
        total = x64.sum(axis=ax).reshape(out) if ax else x64.reshape(out)
        scale = np.abs(x64).sum(axis=ax).reshape(out) if ax else np.abs(x64).reshape(out)
        if kind == "sum":
            return [sum_bound(total, scale)]
        return [sum_bound(total / count, scale / count)]

    return expect


def add_reduce(
    kind: str,
    x: np.ndarray,
    axes: tuple[int, ...],
    keepdims: bool | None,
    tag: str = "",
) -> None:
    props = {"kind": str_attr(kind), "axes": array_attr(axes)}
    if keepdims is not None:
        props["keepdims"] = bool_attr(keepdims)
    out = result_shape(x.shape, axes, bool(keepdims))
    body = op_func("mlvm.reduce", [x], [(out, F32)], props)
    sid = "x".join(map(str, x.shape)) or "scalar"
    aid = ",".join(map(str, axes)) or "none"
    kid = {None: "kd-default", True: "kd", False: "nokd"}[keepdims]
    SUITE.add(
        f"{kind}-{sid}-axes{aid}-{kid}{tag}",
        body,
        [x],
        expectation(kind, x.shape, axes, bool(keepdims)),
        EXACT,
    )


# shape -> axes sets (incl. negative, non-contiguous, unsorted, unit dims, all)
AXES = {
    (): [()],
    (7,): [(), (0,), (-1,)],
    (3, 5): [(0,), (1,), (-1,), (-2, -1), (1, 0)],
    (2, 3, 5): [(0,), (1,), (2,), (0, 2), (-3, -1), (2, 0), (0, 1, 2), (-2,)],
    (13, 1, 31): [(1,), (0, 2), (-1, 0), (0, 1)],
    (2, 3, 5, 7): [(1, 3), (0, 2), (-1, -3), (0, 1, 2, 3), (3, 1, 2), (-4,)],
    (1, 1, 1): [(0, 1, 2), (1,)],
    (5, 1, 3, 1, 2): [(0, 2, 4), (1, 3), (-5, -2)],
    # rank 8 with every other axis reduced: nothing merges
    (2, 3, 2, 3, 2, 3, 2, 3): [(0, 2, 4, 6), (-1, -3, -5, -7), (1, 2, 5)],
}

g = rng(11)
for kind in ("sum", "max", "mean", "min"):
    for shape, axes_sets in AXES.items():
        for axes in axes_sets:
            for keepdims in (True, False, None):
                if keepdims is None and (kind != "sum" or len(shape) != 3):
                    continue
                add_reduce(kind, f32_data(g, shape), axes, keepdims)

# Long reductions: innermost axis (contiguous rows), outer axis (strided
# accumulation), several axes at once, positive data (no cancellation) and
# data spread over orders of magnitude.
LONG = [
    ((5000,), (0,)),
    ((4999,), (-1,)),
    ((3, 4999), (1,)),
    ((4999, 3), (0,)),
    ((71, 73), (0, 1)),
    ((13, 383, 1), (0, 1)),
    ((7, 357, 2), (0, 2)),
    ((2, 2503), (-1,)),
]
for kind in ("sum", "mean", "max", "min"):
    for shape, axes in LONG:
        add_reduce(kind, f32_data(g, shape), axes, False, "-long")
    for shape, axes in LONG[:4]:
        add_reduce(kind, f32_data(g, shape, 0.0, 1.0), axes, True, "-long-positive")
        spread = (f32_data(g, shape) * 10.0 ** g.uniform(-4, 4, size=shape)).astype(np.float32)
        add_reduce(kind, spread, axes, False, "-long-spread")


# NaN and infinities: NaN propagates through max (and sum, mean); a row of
# -inf has max -inf; NaN first, last, in the middle of a row; along the
# innermost and an outer axis.
def special_rows() -> np.ndarray:
    x = f32_data(rng(12), (6, 37))
    x[0, 0] = NAN
    x[1, 36] = NAN
    x[2, 17] = NAN
    x[2, 18] = INF
    x[3, :] = -INF
    x[4, 5] = INF
    x[5, 9] = -INF
    return x


for kind in ("max", "sum", "mean", "min"):
    x = special_rows()
    add_reduce(kind, x, (1,), False, "-specials")
    add_reduce(kind, np.ascontiguousarray(x.T), (0,), True, "-specials")
    add_reduce(kind, x, (0, 1), False, "-specials")
    add_reduce(kind, x[:1].copy(), (1,), False, "-nan-first")
    add_reduce(kind, x[3:4].copy(), (-1,), False, "-all-neg-inf")


# Empty tensors: sum over no elements is 0, mean is NaN (0 / 0).
for kind in ("sum", "mean"):
    add_reduce(kind, np.zeros((0, 3), np.float32), (0,), False, "-empty")
    add_reduce(kind, np.zeros((3, 0), np.float32), (1,), True, "-empty")


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_reduce(case) -> None:  # noqa: ANN001
    SUITE.check(case)


def test_reduce_cases_cover_every_option() -> None:
    ids = [c.id for c in SUITE.cases]
    for kind in ("sum", "max", "mean"):
        for kd in ("-kd", "-nokd"):
            assert any(i.startswith(kind) and kd in i for i in ids)
        assert any(i.startswith(kind) and "axes-" in i and "," in i for i in ids)
    assert any("kd-default" in i for i in ids)
