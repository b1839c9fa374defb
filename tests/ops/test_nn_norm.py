"""`mlvm.softmax`, `mlvm.log_softmax`, `mlvm.layer_norm` and `mlvm.gelu`
against float64 numpy.

Tolerances (see tests/harness.py and docs/ops.md):

* softmax: rel 1e-5 against float64 (and between the C and the op's
  reference): a sum of positive terms, then one division.
* log_softmax, against float64 v = z - log(sum(exp(z))), z = x - max:
  `|err| <= 1e-5 (|z| + 1)`: z is exact to an f32 rounding, and the log of
  the sum carries the sum's relative error as an absolute one.
* layer_norm, against the float64 result v = g * (x - m) / s + b, with
  s = sqrt(var + eps): `|err| <= 1e-5 * (|g| (|v0| + max|x| / s) + |b|)`,
  where v0 = (x - m) / s and max|x| is taken over the normalised group (the
  error of the mean and of the variance, relative to s).
* gelu "tanh", against float64 0.5 x (1 + tanh(u)), with t = -2u:
  `|err| <= 1e-6 (4 + |t|) |v| + |x| / FLT_MAX`. The result x / (1 + exp(t))
  has relative condition |t| in t, and t carries a few f32 roundings; where
  exp(t) overflows f32 the result is 0, against |v| < |x| / FLT_MAX.
* gelu "none" (erf), against float64: `|err| <= 1e-6 (|x| + |v|)`: where
  erf(x / sqrt 2) is near -1, 1 + erf cancels and its absolute error,
  about one f32 ulp of 1, is multiplied by 0.5 |x|.

The tolerance bounds the C and the op's reference against float64, and the
two against each other at twice the bound. Every case runs with the default
pass pipeline (gelu fuses with its neighbours there) and plain kernel calls.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import (  # noqa: E402
    F32,
    REL,
    TINY,
    Bound,
    Suite,
    array_attr,
    f32_attr,
    f32_data,
    i64_attr,
    op_func,
    random_shape,
    rng,
    str_attr,
    ttype,
)

SUITE = Suite("nn_norm", variants=("default", "plain"))
NAN, INF = np.nan, np.inf


def sid(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or "scalar"


# --------------------------------------------------------------------------
# softmax
# --------------------------------------------------------------------------


def softmax64(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def add_softmax(x: np.ndarray, axis: int | None, tag: str = "") -> None:
    props = {} if axis is None else {"axis": i64_attr(axis)}
    body = op_func("mlvm.softmax", [x], [(x.shape, F32)], props)
    ax = -1 if axis is None else axis
    SUITE.add(f"softmax-{sid(x.shape)}-axis{axis}{tag}", body, [x],
              lambda a: [softmax64(a, ax)], REL)


g = rng(41)
for rank in range(1, 5):
    for _ in range(3):
        shape = random_shape(g, rank)
        add_softmax(f32_data(g, shape, -10, 10), int(g.integers(-rank, rank)))
add_softmax(f32_data(g, (3, 257), -30, 30), None, "-default-axis")
add_softmax(f32_data(g, (4, 100, 3), -30, 30), 1, "-middle")
add_softmax(f32_data(g, (5, 1)), 1, "-single")
# rows past the vector maxima's 64-float steps: a NaN inside them (the
# whole row NaN), a maximum far above the rest (exp of the others' shift
# would overflow: a missed maximum shows) in the last element and in the
# fourth vector of a step, -inf among them
vec_x = f32_data(g, (4, 131), -5, 5)
vec_x[0, 70] = NAN
vec_x[1, 130] = 500.0
vec_x[1, 3] = -INF
vec_x[2, 50] = 400.0
vec_x[3, 100] = 300.0
add_softmax(vec_x, 1, "-vector-maxima")
add_softmax(np.array([[1e30, -1e30, 0.0], [-INF, 0.0, 1.0], [NAN, 1.0, 2.0]], np.float32), 1,
            "-extremes")


def log_softmax_expect(axis: int):  # noqa: ANN201
    def expect(x: np.ndarray) -> list[Bound]:
        x64 = x.astype(np.float64)
        with np.errstate(all="ignore"):
            z = x64 - x64.max(axis=axis, keepdims=True)
            v = z - np.log(np.exp(z).sum(axis=axis, keepdims=True))
            err = 1e-5 * (np.abs(z) + 1.0)
        return [Bound(v, np.where(np.isfinite(err), err, 0.0) + TINY)]

    return expect


def add_log_softmax(x: np.ndarray, axis: int | None, tag: str = "") -> None:
    props = {} if axis is None else {"axis": i64_attr(axis)}
    body = op_func("mlvm.log_softmax", [x], [(x.shape, F32)], props)
    SUITE.add(f"log_softmax-{sid(x.shape)}-axis{axis}{tag}", body, [x],
              log_softmax_expect(-1 if axis is None else axis))


g = rng(43)
for rank in range(1, 5):
    for _ in range(3):
        shape = random_shape(g, rank)
        add_log_softmax(f32_data(g, shape, -10, 10), int(g.integers(-rank, rank)))
add_log_softmax(f32_data(g, (3, 257), -30, 30), None, "-default-axis")
add_log_softmax(f32_data(g, (4, 100, 3), -30, 30), 1, "-middle")
add_log_softmax(f32_data(g, (5, 1)), 1, "-single")
add_log_softmax(vec_x, 1, "-vector-maxima")
add_log_softmax(f32_data(g, (2, 1, 7)), 1, "-single-strided")
# logits far apart (the softmax underflows to 0 there, its log to -inf)
add_log_softmax(np.array([[0.0, -150.0, 3.0, -300.0, 80.0, 1e3, -1e3]], np.float32), None, "-wide")
add_log_softmax(np.array([[0.0, -150.0], [3.0, -300.0], [80.0, 1e3]], np.float32), 0, "-wide-strided")
add_log_softmax(np.array([[1e30, -1e30, 0.0], [-INF, 0.0, 1.0], [NAN, 1.0, 2.0]], np.float32), 1,
                "-extremes")
add_log_softmax(np.array([[1e30, -1e30, 0.0], [-INF, 0.0, 1.0], [NAN, 1.0, 2.0]], np.float32).T.copy(),
                0, "-extremes-strided")


# --------------------------------------------------------------------------
# layer_norm
# --------------------------------------------------------------------------


def layer_norm_expect(axes: tuple[int, ...], eps: float, affine: bool):  # noqa: ANN201
    def expect(x: np.ndarray, *gb: np.ndarray) -> list[Bound]:
        ax = tuple(a % x.ndim for a in axes)
        x64 = x.astype(np.float64)
        m = x64.mean(axis=ax, keepdims=True)
        s = np.sqrt(((x64 - m) ** 2).mean(axis=ax, keepdims=True) + np.float64(np.float32(eps)))
        v0 = (x64 - m) / s
        big = np.abs(x64).max(axis=ax, keepdims=True)
        if affine:
            full = tuple(n if i in ax else 1 for i, n in enumerate(x.shape))
            gm = gb[0].astype(np.float64).reshape(full)
            bt = gb[1].astype(np.float64).reshape(full)
        else:
            gm, bt = np.float64(1), np.float64(0)
        v = gm * v0 + bt
        err = 1e-5 * (np.abs(gm) * (np.abs(v0) + big / s) + np.abs(bt))
        return [Bound(v, err + TINY)]

    return expect


def add_layer_norm(x: np.ndarray, axes: tuple[int, ...] | None, eps: float | None,
                   affine: bool, g: np.random.Generator, tag: str = "") -> None:
    ax = axes if axes is not None else (-1,)
    props = {}
    if axes is not None:
        props["axes"] = array_attr(axes)
    if eps is not None:
        props["eps"] = f32_attr(eps)
    inputs = [x]
    if affine:
        norm = tuple(x.shape[a % x.ndim] for a in sorted(a % x.ndim for a in ax))
        inputs += [f32_data(g, norm, -2, 2), f32_data(g, norm, -1, 1)]
    body = op_func("mlvm.layer_norm", inputs, [(x.shape, F32)], props)
    name = f"layer_norm-{sid(x.shape)}-axes{'_'.join(map(str, ax))}-{'affine' if affine else 'plain'}"
    SUITE.add(name + tag, body, inputs, layer_norm_expect(ax, 1e-5 if eps is None else eps, affine))


g = rng(42)
for rank in range(1, 5):
    for k in range(4):
        shape = random_shape(g, rank)
        n_axes = int(g.integers(1, rank + 1))
        axes = tuple(int(a) for a in g.choice(rank, n_axes, replace=False))
        axes = tuple(a - rank if g.random() < 0.3 else a for a in axes)
        add_layer_norm(f32_data(g, shape), axes, 1e-5 if k % 2 else 1e-3, k < 3, g)
add_layer_norm(f32_data(g, (64, 128)), (-1,), 1e-6, True, g, "-mixer")
add_layer_norm(f32_data(g, (3, 130)), None, None, True, g, "-defaults")
add_layer_norm(f32_data(g, (3, 13)), None, None, False, g, "-defaults")
add_layer_norm(f32_data(g, (2, 5, 7, 3)), (1, 2, 3), 1e-5, True, g, "-trailing3")
add_layer_norm(f32_data(g, (2, 5, 7, 3)), (1,), 1e-5, True, g, "-channels")
add_layer_norm(f32_data(g, (2, 5, 7, 3)), (0, 2), 1e-5, False, g, "-scattered")
# Far from zero: the mean is large against the spread.
add_layer_norm((1000 + f32_data(g, (4, 33))).astype(np.float32), (-1,), 1e-5, True, g, "-offset")
add_layer_norm(np.full((3, 8), 2.5, np.float32), (-1,), 1e-5, False, g, "-constant-rows")


# --------------------------------------------------------------------------
# gelu
# --------------------------------------------------------------------------

SQRT_2_PI = math.sqrt(2.0 / math.pi)
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def gelu64(x: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """float64 gelu and its error bound."""
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if mode == "tanh":
            # 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)): the second form keeps
            # its precision in float64 where tanh(u) rounds to -1.
            u = SQRT_2_PI * (x + 0.044715 * x**3)
            v = x / (1.0 + np.exp(-2.0 * u))
            err = 1e-6 * (4.0 + np.minimum(np.abs(2 * u), 200.0)) * np.abs(v)
            # where exp(-2u) overflows f32, x / inf = 0 against |v| < |x| / FLT_MAX
            err = err + np.abs(x) / float(np.finfo(np.float32).max)
        else:
            v = 0.5 * x * _erfc(-x / math.sqrt(2.0))  # 1 + erf(y) = erfc(-y)
            err = 1e-6 * (np.abs(x) + np.abs(v))
    return v, np.nan_to_num(err, posinf=0.0) + TINY


def add_gelu(x: np.ndarray, mode: str | None, tag: str = "") -> None:
    props = {} if mode is None else {"approximate": str_attr(mode)}
    body = op_func("mlvm.gelu", [x], [(x.shape, F32)], props)
    m = mode or "none"

    def expect(a: np.ndarray) -> list[Bound]:
        v, err = gelu64(a, m)
        return [Bound(v, err)]

    SUITE.add(f"gelu-{m}-{sid(x.shape)}{tag}", body, [x], expect)


g = rng(43)
for mode in ("tanh", "none", None):
    for rank in range(0, 4):
        add_gelu(f32_data(g, random_shape(g, rank), -6, 6), mode)
    add_gelu(np.linspace(-12, 12, 2001, dtype=np.float32), mode, "-sweep")
    add_gelu(f32_data(g, (1000,), -0.01, 0.01), mode, "-near-zero")
    add_gelu(np.array([0.0, -0.0, 1e-30, -1e-30, 88.0, -88.0, 1e20, -1e20, 3e38, INF, -INF, NAN],
                      np.float32), mode, "-specials")


# gelu between elementwise neighbours, and after a matmul with a bias (the
# default pipeline fuses these into one loop / a matmul epilogue; a gelu
# ending one runs by its vector kernel after it where the C has vector
# math, mlvm.fused's kernel root).
def add_gelu_chain(m: int, k: int, n: int, mode: str, g: np.random.Generator) -> None:
    a, w = f32_data(g, (m, k), -1, 1), f32_data(g, (k, n), -1, 1)
    b, c = f32_data(g, (n,)), f32_data(g, (m, n))
    tm, ta, tw, tb = ttype((m, n)), ttype((m, k)), ttype((k, n)), ttype((n,))
    body = (
        f"func.func @FUNC(%a: {ta}, %w: {tw}, %b: {tb}, %c: {tm}) -> ({tm}, {tm}) {{\n"
        f'  %0 = "mlvm.matmul"(%a, %w) : ({ta}, {tw}) -> {tm}\n'
        f'  %1 = "mlvm.add"(%0, %b) : ({tm}, {tb}) -> {tm}\n'
        f'  %2 = "mlvm.gelu"(%1) <{{approximate = "{mode}"}}> : ({tm}) -> {tm}\n'
        f'  %3 = "mlvm.add"(%c, %b) : ({tm}, {tb}) -> {tm}\n'
        f'  %4 = "mlvm.gelu"(%3) <{{approximate = "{mode}"}}> : ({tm}) -> {tm}\n'
        f'  %5 = "mlvm.mul"(%4, %c) : ({tm}, {tm}) -> {tm}\n'
        f"  func.return %2, %5 : {tm}, {tm}\n}}"
    )

    def expect(a, w, b, c) -> list[Bound]:  # noqa: ANN001
        z = a.astype(np.float64) @ w + b
        scale = np.abs(a.astype(np.float64)) @ np.abs(w) + np.abs(b)
        v1, e1 = gelu64(z, mode)
        # gelu' is within [-0.13, 1.13]: the product's error passes through.
        e1 = e1 + 1.2e-5 * scale
        s = (c + b).astype(np.float32)  # one f32 rounding, exact in float64 below
        v2, e2 = gelu64(s, mode)
        return [Bound(v1, e1), Bound(v2 * c, e2 * np.abs(c) + 1e-7 * np.abs(v2 * c) + TINY)]

    SUITE.add(f"gelu-chain-{mode}-m{m}k{k}n{n}", body, [a, w, b, c], expect)


for mode in ("tanh", "none"):
    add_gelu_chain(5, 7, 3, mode, g)
    add_gelu_chain(64, 128, 200, mode, g)


@pytest.mark.parametrize("case,variant", SUITE.params_list())
def test_nn_norm(case, variant: str) -> None:  # noqa: ANN001
    SUITE.check(case, variant)
