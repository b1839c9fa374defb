"""argmax, fill, rng_normal, softmax_xent, cast, reshape, broadcast_to,
constant and param against numpy.

Tolerances (see tests/harness.py):

* argmax, cast, reshape, broadcast_to: exact. argmax returns the first
  maximum, and the first NaN when there is one (numpy's argmax).
* fill, constant, param, rng_normal: the same 32-bit words as the op
  reference (signed zeros and NaN payloads included).
* rng_normal: also deterministic (same seed, same values; element i depends
  only on the seed and i), and standard normal by its moments, tail mass and
  a Kolmogorov-Smirnov statistic on 20000 samples.
* softmax_xent, against float64 with m = max(logits), lse = log sum exp(x - m):
  loss: `|err| <= 1e-5 * sum_c |y_c| (|x_c - m| + lse + 1)` (the terms of
  `-sum y (x - m - lse)`, plus the absolute error of a log of a sum of
  exponentials bounded by 1); grad: `|err| <= 1e-5 * (p_c + |y_c|)`, with
  p = softmax(x), plus the smallest normal f32 for underflow.

Every case runs twice: with the default pass pipeline (which computes ops
on small constants at compile time) and with plain kernel calls.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mlvm  # noqa: E402
from harness import (  # noqa: E402
    BITS,
    F32,
    I32,
    REL,
    Suite,
    dense_attr,
    f32_attr,
    f32_data,
    i32_data,
    i64_attr,
    op_func,
    rng,
    round_f32,
    sum_bound,
    ttype,
)

NAN, INF = np.nan, np.inf

PARAMS = {
    "w": f32_data(rng(90), (5, 3)),
    "b": np.arange(-3, 4, dtype=np.int32).reshape(7, 1),
    "s": np.array(np.float32(-2.5)),
    "specials": np.array([NAN, -0.0, INF, -INF, 1e-45], dtype=np.float32),
}

SUITE = Suite("misc", params=PARAMS, variants=("default", "plain"))


def sid(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or "scalar"


# --------------------------------------------------------------------------
# argmax
# --------------------------------------------------------------------------


def argmax_expect(axis: int, keep: bool):  # noqa: ANN201
    def expect(x: np.ndarray) -> list[np.ndarray]:
        ax = axis % x.ndim
        rows = np.moveaxis(x, ax, -1)
        nan = np.isnan(rows)
        finite_max = np.where(nan, -INF, rows).max(axis=-1, keepdims=True)
        first_max = (rows == finite_max).argmax(axis=-1)
        first_nan = nan.argmax(axis=-1)
        idx = np.where(nan.any(axis=-1), first_nan, first_max).astype(np.int32)
        return [np.expand_dims(idx, ax) if keep else idx]

    return expect


def add_argmax(x: np.ndarray, axis: int, keep: bool, tag: str = "") -> None:
    shape = x.shape
    ax = axis % len(shape)
    out = shape[:ax] + ((1,) if keep else ()) + shape[ax + 1 :]
    body = op_func("mlvm.argmax", [x], [(out, I32)], {"axis": i64_attr(axis)})
    SUITE.add(
        f"argmax-{sid(shape)}-axis{axis}-{'kept' if keep else 'dropped'}{tag}",
        body,
        [x],
        argmax_expect(axis, keep),
    )


g = rng(21)
for shape, axes in [
    ((7,), (0, -1)),
    ((1,), (0,)),
    ((3, 5), (0, 1, -1, -2)),
    ((2, 3, 5), (0, 1, 2, -2)),
    ((13, 1, 31), (1, 2, -3)),
    ((2, 3, 5, 7), (0, 3, -2)),
    ((31, 257), (1, 0)),
]:
    for axis in axes:
        for keep in (False, True):
            add_argmax(f32_data(g, shape), axis, keep)
            # small integers: ties everywhere, the first maximum wins
            ties = np.asarray(g.integers(-2, 3, size=shape), dtype=np.float32)
            add_argmax(ties, axis, keep, "-ties")


def nan_rows() -> np.ndarray:
    x = f32_data(rng(22), (8, 11))
    x[0, 0] = NAN  # NaN first
    x[1, 10] = NAN  # NaN last
    x[2, 3] = NAN  # two NaNs: the first one
    x[2, 7] = NAN
    x[3, 2] = INF  # +inf before a NaN: the NaN still wins
    x[3, 6] = NAN
    x[4, :] = -INF  # all -inf: index 0
    x[5, :] = NAN  # all NaN: index 0
    x[6, 4] = INF  # two +inf: the first
    x[6, 9] = INF
    x[7, :] = -0.0  # -0.0 == 0.0: the first
    x[7, 5] = 0.0
    return x


for keep in (False, True):
    add_argmax(nan_rows(), 1, keep, "-nan")
    add_argmax(np.ascontiguousarray(nan_rows().T), 0, keep, "-nan")
    add_argmax(np.ascontiguousarray(nan_rows().T.reshape(11, 2, 4)), -3, keep, "-nan")


# --------------------------------------------------------------------------
# fill
# --------------------------------------------------------------------------


def fill_case(value: float, shape: tuple[int, ...], dtype) -> None:  # noqa: ANN001
    body = op_func("mlvm.fill", [], [(shape, dtype)], {"value": f32_attr(value)})

    def expect() -> list[np.ndarray]:
        return [np.full(shape, np.float32(value), dtype=np.float32).astype(dtype)]

    elem = "f32" if dtype == F32 else "i32"
    SUITE.add(f"fill-{elem}-{value}-{sid(shape)}", body, [], expect, BITS)


for v in (0.0, -0.0, 1.5, -3.25, NAN, INF, -INF, 1e-45, float(np.finfo(np.float32).max)):
    for shape in ((), (1,), (3, 5), (1031,)):
        fill_case(v, shape, F32)
for v in (0.0, -3.0, 7.0, 16777216.0, -2147483648.0, 2147483520.0):
    for shape in ((), (2, 3)):
        fill_case(v, shape, I32)


# --------------------------------------------------------------------------
# rng_normal
# --------------------------------------------------------------------------


def rng_func(seed: int, shape: tuple[int, ...]) -> str:
    return op_func("mlvm.rng_normal", [], [(shape, F32)], {"seed": i64_attr(seed)})


RNG_SEEDS = (0, 1, 42, -1, 2**62 + 3, -(2**63))
for seed in RNG_SEEDS:
    for shape in ((), (7,), (3, 5), (2, 3, 5, 7)):
        SUITE.add(f"rng_normal-seed{seed}-{sid(shape)}", rng_func(seed, shape), [], None, BITS)
RNG_N = 20000
for seed in (0, 1, 42):
    SUITE.add(f"rng_normal-seed{seed}-stats", rng_func(seed, (RNG_N,)), [], None, BITS)
    SUITE.add(f"rng_normal-seed{seed}-2d", rng_func(seed, (4, 50)), [], None, BITS)

# Two draws with one seed inside one function, and a third seed.
RNG_TWICE = f"""func.func @FUNC() -> ({ttype((3, 5))}, {ttype((3, 5))}, {ttype((3, 5))}) {{
  %0 = "mlvm.rng_normal"() <{{seed = 5 : i64}}> : () -> {ttype((3, 5))}
  %1 = "mlvm.rng_normal"() <{{seed = 5 : i64}}> : () -> {ttype((3, 5))}
  %2 = "mlvm.rng_normal"() <{{seed = 6 : i64}}> : () -> {ttype((3, 5))}
  func.return %0, %1, %2 : {ttype((3, 5))}, {ttype((3, 5))}, {ttype((3, 5))}
}}"""
SUITE.add("rng_normal-twice", RNG_TWICE, [], None, BITS)


# --------------------------------------------------------------------------
# softmax_xent
# --------------------------------------------------------------------------


def xent_expect(labels: np.ndarray, logits: np.ndarray) -> list:
    y = labels.astype(np.float64)
    x = logits.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    lse0 = np.log(e.sum(axis=-1, keepdims=True))
    logp = x - m - lse0
    loss = -(y * logp).sum(axis=-1)
    p = e / e.sum(axis=-1, keepdims=True)
    loss_scale = (np.abs(y) * (np.abs(x - m) + lse0 + 1.0)).sum(axis=-1)
    return [sum_bound(loss, loss_scale), sum_bound(p - y, p + np.abs(y))]


def add_xent(labels: np.ndarray, logits: np.ndarray, tag: str) -> None:
    shape = logits.shape
    body = op_func(
        "mlvm.softmax_xent", [labels, logits], [(shape[:-1], F32), (shape, F32)]
    )
    SUITE.add(f"softmax_xent-{sid(shape)}-{tag}", body, [labels, logits], xent_expect)


def one_hot(g: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    idx = g.integers(0, shape[-1], size=shape[:-1])
    return (np.arange(shape[-1]) == idx[..., None]).astype(np.float32)


def soft(g: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    w = g.uniform(0, 1, size=shape)
    return (w / w.sum(axis=-1, keepdims=True)).astype(np.float32)


g = rng(31)
for shape in ((7,), (1, 1), (3, 5), (2, 3, 13), (31, 1), (13, 257), (4, 1000)):
    logits = (g.normal(0, 3, size=shape)).astype(np.float32)
    add_xent(one_hot(g, shape), logits, "onehot")
    add_xent(soft(g, shape), logits, "soft")

# Rows shifted far from zero (the max is subtracted first), a wide spread
# (exp underflows to 0), a dominant logit (loss near 0), labels that are
# zero or do not sum to 1.
x = (g.normal(0, 3, size=(6, 9))).astype(np.float32)
x[0] += 1000.0
x[1] -= 1000.0
x[2] = np.linspace(-80, 80, 9, dtype=np.float32)
x[3, 4] = 60.0
y = one_hot(g, (6, 9))
y[3] = 0.0
y[3, 4] = 1.0
y[4] = 0.0
y[5] = np.float32(0.3)
add_xent(y, x, "edges")

# Non-finite logits: a NaN (first, middle, last) or +inf makes its row NaN,
# as in numpy; a -inf contributes nothing where its label is 0 ... and NaN
# to the loss all the same (0 * -inf), as in numpy.
x = (g.normal(0, 3, size=(7, 11))).astype(np.float32)
x[0, 0] = np.nan
x[1, 5] = np.nan
x[2, 10] = np.nan
x[3, 2] = np.inf
x[4, 7] = -np.inf
x[5, :] = -np.inf
add_xent(one_hot(g, (7, 11)), x, "nonfinite")


# --------------------------------------------------------------------------
# cast
# --------------------------------------------------------------------------


def cast_expect(dst):  # noqa: ANN001, ANN201
    def expect(x: np.ndarray) -> list[np.ndarray]:
        if x.dtype == dst:
            return [x.copy()]
        if dst == I32:
            return [np.trunc(x.astype(np.float64)).astype(np.int64).astype(np.int32)]
        return [round_f32(x.astype(np.float64))]

    return expect


def add_cast(x: np.ndarray, dst, tag: str = "") -> None:  # noqa: ANN001
    body = op_func("mlvm.cast", [x], [(x.shape, dst)])
    src_e = "f32" if x.dtype == F32 else "i32"
    dst_e = "f32" if dst == F32 else "i32"
    SUITE.add(f"cast-{src_e}-{dst_e}-{sid(x.shape)}{tag}", body, [x], cast_expect(dst))


g = rng(41)
F2I_SPECIALS = np.array(
    [0.0, -0.0, 0.5, -0.5, 0.99999994, -0.99999994, 1.99, -1.99, 2.5, -2.5, 3.5, -3.5,
     1e-45, -1e-45, 16777217.0, 1e9, -1e9, 2147483520.0, -2147483648.0, 123456.79],
    dtype=np.float32,
)
I2F_SPECIALS = np.array(
    [0, 1, -1, 16777216, 16777217, 16777219, -16777219, 33554435, 2**31 - 1, -(2**31),
     2**31 - 64, 2**31 - 65, 123456789],
    dtype=np.int32,
)
for shape in ((), (1,), (7,), (3, 5), (2, 3, 5, 7)):
    add_cast(f32_data(g, shape, -1e6, 1e6), I32)
    add_cast(f32_data(g, shape, -3, 3), I32, "-small")
    add_cast(i32_data(g, shape), F32)
for shape in ((), (3, 5)):
    add_cast(f32_data(g, shape), F32, "-same")
    add_cast(i32_data(g, shape), I32, "-same")
add_cast(F2I_SPECIALS, I32, "-specials")
add_cast(I2F_SPECIALS, F32, "-specials")


# --------------------------------------------------------------------------
# reshape
# --------------------------------------------------------------------------


def reshape_expect(*shapes: tuple[int, ...]):  # noqa: ANN201
    def expect(x: np.ndarray) -> list[np.ndarray]:
        return [x.reshape(s) for s in shapes]

    return expect


def add_reshape(x: np.ndarray, dst: tuple[int, ...]) -> None:
    body = op_func("mlvm.reshape", [x], [(dst, x.dtype)])
    elem = "f32" if x.dtype == F32 else "i32"
    SUITE.add(f"reshape-{elem}-{sid(x.shape)}-to-{sid(dst)}", body, [x], reshape_expect(dst))


g = rng(51)
for src, dst in [
    ((2, 3, 5), (5, 6)),
    ((2, 3, 5), (30,)),
    ((2, 3, 5), (1, 30, 1)),
    ((30,), (2, 3, 5)),
    ((1, 1), ()),
    ((), (1, 1, 1)),
    ((7,), (7,)),
    ((13, 31), (31, 13)),
    ((1, 7, 1), (7,)),
]:
    add_reshape(f32_data(g, src), dst)
add_reshape(i32_data(g, (3, 5)), (5, 3))

# Reshapes of computed values, of a constant, in a chain, returned together
# with the value they alias, and feeding other ops.
RESHAPE_CHAIN = f"""func.func @FUNC(%x: {ttype((2, 3, 5))}, %y: {ttype((6, 5))}) -> ({ttype((30,))}, {ttype((6, 5))}, {ttype((5, 6))}, {ttype((3, 2))}, {ttype((2, 3, 5))}) {{
  %0 = "mlvm.reshape"(%x) : ({ttype((2, 3, 5))}) -> {ttype((6, 5))}
  %1 = "mlvm.add"(%0, %y) : ({ttype((6, 5))}, {ttype((6, 5))}) -> {ttype((6, 5))}
  %2 = "mlvm.reshape"(%1) : ({ttype((6, 5))}) -> {ttype((30,))}
  %3 = "mlvm.reshape"(%2) : ({ttype((30,))}) -> {ttype((5, 6))}
  %4 = "mlvm.neg"(%3) : ({ttype((5, 6))}) -> {ttype((5, 6))}
  %5 = "mlvm.constant"() <{{value = {dense_attr(np.arange(6, dtype=np.float32) - 2.5)}}}> : () -> {ttype((6,))}
  %6 = "mlvm.reshape"(%5) : ({ttype((6,))}) -> {ttype((3, 2))}
  %7 = "mlvm.reshape"(%y) : ({ttype((6, 5))}) -> {ttype((2, 3, 5))}
  func.return %2, %1, %4, %6, %7 : {ttype((30,))}, {ttype((6, 5))}, {ttype((5, 6))}, {ttype((3, 2))}, {ttype((2, 3, 5))}
}}"""


def _reshape_chain(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    s = round_f32(x.reshape(6, 5).astype(np.float64) + y)
    return [s.reshape(30), s, -s.reshape(5, 6), (np.arange(6, dtype=np.float32) - 2.5).reshape(3, 2), y.reshape(2, 3, 5)]


SUITE.add("reshape-chain", RESHAPE_CHAIN, [f32_data(g, (2, 3, 5)), f32_data(g, (6, 5))], _reshape_chain)

# A reshaped result returned, the value it aliases used afterwards.
RESHAPE_LIVE = f"""func.func @FUNC(%x: {ttype((3, 4))}) -> ({ttype((12,))}, {ttype((3, 4))}) {{
  %0 = "mlvm.exp"(%x) : ({ttype((3, 4))}) -> {ttype((3, 4))}
  %1 = "mlvm.reshape"(%0) : ({ttype((3, 4))}) -> {ttype((12,))}
  %2 = "mlvm.mul"(%0, %0) : ({ttype((3, 4))}, {ttype((3, 4))}) -> {ttype((3, 4))}
  func.return %1, %2 : {ttype((12,))}, {ttype((3, 4))}
}}"""
SUITE.add(
    "reshape-returned-alias-live",
    RESHAPE_LIVE,
    [f32_data(g, (3, 4))],
    lambda x: [round_f32(np.exp(x.astype(np.float64))).reshape(12), round_f32(np.exp(x.astype(np.float64)) ** 2)],
    REL,
)


# --------------------------------------------------------------------------
# broadcast_to
# --------------------------------------------------------------------------


def add_broadcast(x: np.ndarray, dst: tuple[int, ...]) -> None:
    body = op_func("mlvm.broadcast_to", [x], [(dst, x.dtype)])
    elem = "f32" if x.dtype == F32 else "i32"

    def expect(a: np.ndarray) -> list[np.ndarray]:
        return [np.broadcast_to(a, dst).copy()]

    SUITE.add(f"broadcast_to-{elem}-{sid(x.shape)}-to-{sid(dst)}", body, [x], expect)


g = rng(61)
for src, dst in [
    ((), ()),
    ((), (2, 3)),
    ((1,), (7,)),
    ((3, 1), (3, 5)),
    ((1, 5), (3, 5)),
    ((5,), (3, 5)),
    ((2, 1, 5), (4, 2, 3, 5)),
    ((13, 1, 31), (2, 13, 7, 31)),
    ((3, 5), (3, 5)),
    ((1, 1, 1), (5, 1, 3)),
    ((7, 1), (1, 3, 7, 5)),
]:
    x = f32_data(g, src)
    if x.size > 1:
        x.reshape(-1)[0] = NAN
        x.reshape(-1)[-1] = -0.0
    add_broadcast(x, dst)
add_broadcast(i32_data(g, (3, 1)), (2, 3, 5))


# --------------------------------------------------------------------------
# constant
# --------------------------------------------------------------------------

CONST_F32 = np.array(
    [[1.0, -0.0, 0.0, 3.5], [NAN, INF, -INF, 1e-45], [float(np.finfo(np.float32).max), -1.0, 0.1, 7.0]],
    dtype=np.float32,
)
CONST_F32.reshape(-1)[7] = np.array(0x00000001, dtype=np.uint32).view(np.float32)
NAN_PAYLOAD = np.array([0x7FC00001, 0xFFC00000, 0x7FA00000], dtype=np.uint32).view(np.float32)
CONST_I32 = np.array([0, 1, -1, 2**31 - 1, -(2**31), 123456789], dtype=np.int32)


def const_func(values: list[tuple[str, tuple[int, ...], object]]) -> str:
    """`@FUNC` returning constants given as (attribute text, shape, dtype)."""
    types = [ttype(s, d) for _, s, d in values]
    lines = [
        f'  %{i} = "mlvm.constant"() <{{value = {attr}}}> : () -> {types[i]}'
        for i, (attr, _, _) in enumerate(values)
    ]
    rets = ", ".join(f"%{i}" for i in range(len(values)))
    return (
        f"func.func @FUNC() -> ({', '.join(types)}) {{\n" + "\n".join(lines)
        + f"\n  func.return {rets} : {', '.join(types)}\n}}"
    )


def const_expect(*arrays: np.ndarray):  # noqa: ANN201
    return lambda: [a.copy() for a in arrays]


SUITE.add(
    "constant-hex",
    const_func([(dense_attr(CONST_F32), CONST_F32.shape, F32), (dense_attr(NAN_PAYLOAD), (3,), F32), (dense_attr(CONST_I32), (6,), I32)]),
    [],
    const_expect(CONST_F32, NAN_PAYLOAD, CONST_I32),
    BITS,
)
SUITE.add(
    "constant-literal",
    const_func(
        [
            (f"dense<[[1.5, -2.0, 0.25], [3.0, -0.0, 1.0e+10]]> : {ttype((2, 3))}", (2, 3), F32),
            (f"dense<[7, -8, 2147483647]> : {ttype((3,), I32)}", (3,), I32),
            (f"dense<-4.5> : {ttype(())}", (), F32),
        ]
    ),
    [],
    const_expect(
        np.array([[1.5, -2.0, 0.25], [3.0, -0.0, 1e10]], dtype=np.float32),
        np.array([7, -8, 2147483647], dtype=np.int32),
        np.array(np.float32(-4.5)),
    ),
    BITS,
)
SUITE.add(
    "constant-splat",
    const_func(
        [
            (f"dense<2.5> : {ttype((3, 5))}", (3, 5), F32),
            (f"dense<-7> : {ttype((2, 1, 3), I32)}", (2, 1, 3), I32),
            (f"dense<-0.0> : {ttype((4,))}", (4,), F32),
        ]
    ),
    [],
    const_expect(
        np.full((3, 5), 2.5, np.float32), np.full((2, 1, 3), -7, np.int32), np.full(4, -0.0, np.float32)
    ),
    BITS,
)

CONST_USE = f"""func.func @FUNC(%x: {ttype((3, 5))}) -> ({ttype((3, 5))}, {ttype((5,))}, {ttype((5,))}) {{
  %0 = "mlvm.constant"() <{{value = {dense_attr(np.arange(5, dtype=np.float32))}}}> : () -> {ttype((5,))}
  %1 = "mlvm.mul"(%x, %0) : ({ttype((3, 5))}, {ttype((5,))}) -> {ttype((3, 5))}
  %2 = "mlvm.constant"() <{{value = {dense_attr(np.arange(5, dtype=np.float32))}}}> : () -> {ttype((5,))}
  func.return %1, %0, %2 : {ttype((3, 5))}, {ttype((5,))}, {ttype((5,))}
}}"""
SUITE.add(
    "constant-used-and-returned",
    CONST_USE,
    [f32_data(rng(71), (3, 5))],
    lambda x: [round_f32(x.astype(np.float64) * np.arange(5)), np.arange(5, dtype=np.float32), np.arange(5, dtype=np.float32)],
)


# --------------------------------------------------------------------------
# param
# --------------------------------------------------------------------------

PARAM_USE = f"""func.func @FUNC(%x: {ttype((2, 5))}) -> ({ttype((2, 3))}, {ttype((7, 1), I32)}, {ttype(())}, {ttype((5, 3))}, {ttype((5,))}) {{
  %w = "mlvm.param"() <{{name = "w"}}> : () -> {ttype((5, 3))}
  %b = "mlvm.param"() <{{name = "b"}}> : () -> {ttype((7, 1), I32)}
  %s = "mlvm.param"() <{{name = "s"}}> : () -> {ttype(())}
  %w2 = "mlvm.param"() <{{name = "w"}}> : () -> {ttype((5, 3))}
  %p = "mlvm.param"() <{{name = "specials"}}> : () -> {ttype((5,))}
  %0 = "mlvm.matmul"(%x, %w) : ({ttype((2, 5))}, {ttype((5, 3))}) -> {ttype((2, 3))}
  %1 = "mlvm.mul"(%0, %s) : ({ttype((2, 3))}, {ttype(())}) -> {ttype((2, 3))}
  func.return %1, %b, %s, %w2, %p : {ttype((2, 3))}, {ttype((7, 1), I32)}, {ttype(())}, {ttype((5, 3))}, {ttype((5,))}
}}"""


def _param_use(x: np.ndarray) -> list:
    prod64 = x.astype(np.float64) @ PARAMS["w"].astype(np.float64)
    scale = np.abs(x.astype(np.float64)) @ np.abs(PARAMS["w"].astype(np.float64))
    return [
        sum_bound(prod64 * -2.5, scale * 2.5),
        PARAMS["b"],
        PARAMS["s"],
        PARAMS["w"],
        PARAMS["specials"],
    ]


SUITE.add("param", PARAM_USE, [f32_data(rng(81), (2, 5))], _param_use, BITS)


# --------------------------------------------------------------------------
# Ops whose operands are all constants (small results may be computed at
# compile time, large ones at run time): the same answers.
# --------------------------------------------------------------------------


def const_op_func(
    op: str,
    operands: list[np.ndarray],
    results: list[tuple[tuple[int, ...], object]],
    props: str = "",
) -> str:
    """`@FUNC()` applying one op to constant operands."""
    in_types = [ttype(a.shape, a.dtype) for a in operands]
    out_types = [ttype(s, d) for s, d in results]
    lines = [
        f'  %c{i} = "mlvm.constant"() <{{value = {dense_attr(a)}}}> : () -> {in_types[i]}'
        for i, a in enumerate(operands)
    ]
    n = len(out_types)
    res = "%r" if n == 1 else f"%r:{n}"
    rets = "%r" if n == 1 else ", ".join(f"%r#{i}" for i in range(n))
    p = f" <{{{props}}}>" if props else ""
    args = ", ".join(f"%c{i}" for i in range(len(operands)))
    lines.append(
        f'  {res} = "mlvm.{op}"({args}){p} : ({", ".join(in_types)}) -> '
        f"({', '.join(out_types)})"
    )
    lines.append(f"  func.return {rets} : {', '.join(out_types)}")
    return f"func.func @FUNC() -> ({', '.join(out_types)}) {{\n" + "\n".join(lines) + "\n}"


def _f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


g = rng(95)
ca, cb = f32_data(g, (3, 5)), f32_data(g, (5,))
SUITE.add(
    "constant-operands-add",
    const_op_func("add", [ca, cb], [((3, 5), F32)]),
    [],
    lambda: [round_f32(_f64(ca) + _f64(cb))],
)
big_a, big_b = f32_data(g, (100, 50)), f32_data(g, (50,))
SUITE.add(
    "constant-operands-add-large",
    const_op_func("mul", [big_a, big_b], [((100, 50), F32)]),
    [],
    lambda: [round_f32(_f64(big_a) * _f64(big_b))],
)
ci1, ci2 = i32_data(g, (3, 4)), i32_data(g, (4,))
SUITE.add(
    "constant-operands-mul-i32",
    const_op_func("mul", [ci1, ci2], [((3, 4), I32)]),
    [],
    lambda: [((ci1.astype(np.int64) * ci2 + 2**31) % 2**32 - 2**31).astype(np.int32)],
)
cn1 = np.array([NAN, 1.0, -INF, 2.0, NAN], dtype=np.float32)
cn2 = np.array([0.0, NAN, 3.0, -1.0, 5.0], dtype=np.float32)
SUITE.add(
    "constant-operands-max-nan",
    const_op_func("max", [cn1, cn2], [((5,), F32)]),
    [],
    lambda: [np.array([NAN, NAN, 3.0, 2.0, NAN], dtype=np.float32)],
)
ce = f32_data(g, (7,), -10, 10)
SUITE.add(
    "constant-operands-exp",
    const_op_func("exp", [ce], [((7,), F32)]),
    [],
    lambda: [round_f32(np.exp(_f64(ce)))],
    REL,
)
cm1, cm2 = f32_data(g, (4, 6)), f32_data(g, (3, 6))
SUITE.add(
    "constant-operands-matmul",
    const_op_func("matmul", [cm1, cm2], [((4, 3), F32)], "transpose_rhs = true"),
    [],
    lambda: [sum_bound(_f64(cm1) @ _f64(cm2).T, np.abs(_f64(cm1)) @ np.abs(_f64(cm2)).T)],
)
cr = f32_data(g, (5000,), 0.0, 1.0)
SUITE.add(
    "constant-operands-reduce",
    const_op_func("reduce", [cr], [((), F32)], 'kind = "sum", axes = array<i64: 0>'),
    [],
    lambda: [sum_bound(_f64(cr).sum(), np.abs(_f64(cr)).sum())],
)
cx = f32_data(g, (4, 9))
cx[1, 3] = NAN
SUITE.add(
    "constant-operands-argmax",
    const_op_func("argmax", [cx], [((4,), I32)], "axis = 1 : i64"),
    [],
    lambda: argmax_expect(1, False)(cx),
)
cy, cl = soft(g, (4, 9)), f32_data(g, (4, 9), -3, 3)
SUITE.add(
    "constant-operands-softmax_xent",
    const_op_func("softmax_xent", [cy, cl], [((4,), F32), ((4, 9), F32)]),
    [],
    lambda: xent_expect(cy, cl),
    group="constant-softmax_xent",  # two results: compiled apart
)
cc = F2I_SPECIALS.copy()
SUITE.add(
    "constant-operands-cast",
    const_op_func("cast", [cc], [((cc.size,), I32)]),
    [],
    lambda: cast_expect(I32)(cc),
)
cbr = f32_data(g, (3, 1))
SUITE.add(
    "constant-operands-broadcast_to",
    const_op_func("broadcast_to", [cbr], [((2, 3, 5), F32)]),
    [],
    lambda: [np.broadcast_to(cbr, (2, 3, 5)).copy()],
)


@pytest.mark.parametrize("case,variant", SUITE.params_list())
def test_misc(case, variant: str) -> None:  # noqa: ANN001
    SUITE.check(case, variant)


# --------------------------------------------------------------------------
# rng_normal: determinism and statistics
# --------------------------------------------------------------------------


def _by_id(case_id: str) -> np.ndarray:
    case = next(c for c in SUITE.cases if c.id == case_id)
    return SUITE.compiled(case)[0]


def test_rng_normal_same_seed_same_values() -> None:
    case = next(c for c in SUITE.cases if c.id == "rng_normal-twice")
    a, b, c = SUITE.compiled(case)
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))
    assert not np.any(a == c)


def test_rng_normal_element_depends_on_seed_and_index_only() -> None:
    for seed in (0, 42):
        flat = _by_id(f"rng_normal-seed{seed}-stats")
        for shape in ((7,), (3, 5), (2, 3, 5, 7)):
            x = _by_id(f"rng_normal-seed{seed}-{sid(shape)}").reshape(-1)
            assert np.array_equal(x.view(np.uint32), flat[: x.size].view(np.uint32))
        scalar = _by_id(f"rng_normal-seed{seed}-scalar")
        assert scalar.shape == () and scalar.view(np.uint32) == flat[:1].view(np.uint32)[0]
        two_d = _by_id(f"rng_normal-seed{seed}-2d")
        assert np.array_equal(two_d.reshape(-1), flat[:200])


def test_rng_normal_seeds_differ() -> None:
    draws = [_by_id(f"rng_normal-seed{s}-3x5").reshape(-1) for s in RNG_SEEDS]
    for i in range(len(draws)):
        for j in range(i + 1, len(draws)):
            assert not np.array_equal(draws[i], draws[j]), (RNG_SEEDS[i], RNG_SEEDS[j])


def _normal_cdf(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.vectorize(math.erf)(z / math.sqrt(2.0)))


@pytest.mark.parametrize("seed", (0, 1, 42))
def test_rng_normal_is_standard_normal(seed: int) -> None:
    x = _by_id(f"rng_normal-seed{seed}-stats").astype(np.float64)
    n = x.size
    assert x.dtype == np.float64 and np.all(np.isfinite(x))
    assert abs(x.mean()) < 4.0 / math.sqrt(n)
    assert abs(x.std() - 1.0) < 4.0 * math.sqrt(0.5 / n)
    skew = np.mean(((x - x.mean()) / x.std()) ** 3)
    kurt = np.mean(((x - x.mean()) / x.std()) ** 4)
    assert abs(skew) < 4.0 * math.sqrt(6.0 / n)
    assert abs(kurt - 3.0) < 4.0 * math.sqrt(24.0 / n)
    tail = np.mean(np.abs(x) > 3.0)  # 0.0027 for N(0, 1)
    assert 0.0015 < tail < 0.0042
    # Kolmogorov-Smirnov: 1.63 / sqrt(n) is the 1% critical value.
    xs = np.sort(x)
    cdf = _normal_cdf(xs)
    ks = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
    assert ks < 1.63 / math.sqrt(n)


def test_rng_normal_seeds_are_uncorrelated() -> None:
    a = _by_id("rng_normal-seed0-stats").astype(np.float64)
    b = _by_id("rng_normal-seed1-stats").astype(np.float64)
    r = np.corrcoef(a, b)[0, 1]
    assert abs(r) < 4.0 / math.sqrt(a.size)
    # consecutive elements of one draw are not correlated either
    r1 = np.corrcoef(a[:-1], a[1:])[0, 1]
    assert abs(r1) < 4.0 / math.sqrt(a.size)


# --------------------------------------------------------------------------
# param: what the archive must hold (reported before any C is built)
# --------------------------------------------------------------------------

PARAM_FILE = """builtin.module {{
  func.func @main() -> {t} {{
    %0 = "mlvm.param"() <{{name = "w"}}> : () -> {t}
    func.return %0 : {t}
  }}
}}
"""


@pytest.mark.parametrize(
    "params,words",
    [
        ({}, ["'w'", "not in the parameter archive"]),
        ({"w": np.zeros((3, 4), np.float32)}, ["'w'", "(3, 4)", "tensor<4x3xf32>"]),
        ({"w": np.zeros((4, 3), np.float64)}, ["'w'", "float64", "f32"]),
        ({"w": np.zeros((4, 3), np.int32)}, ["'w'", "int32", "f32"]),
    ],
    ids=["missing", "shape", "dtype-f64", "dtype-i32"],
)
def test_param_archive_mismatch(tmp_path: Path, params: dict, words: list[str]) -> None:
    path = tmp_path / "p.mlir"
    path.write_text(PARAM_FILE.format(t=ttype((4, 3))))
    with pytest.raises(mlvm.MlvmError) as info:
        mlvm.compile(path, params=params)
    msg = str(info.value)
    assert "\n" not in msg.strip(), msg
    assert f"{path}:3:" in msg and "mlvm.param" in msg, msg
    for w in words:
        assert w in msg, msg


def test_param_from_npz_file(tmp_path: Path) -> None:
    path = tmp_path / "p.mlir"
    path.write_text(PARAM_FILE.format(t=ttype((4, 3))))
    w = f32_data(rng(91), (4, 3))
    np.savez(tmp_path / "w.npz", w=w)
    m = mlvm.compile(path, params=tmp_path / "w.npz")
    assert np.array_equal(m.main().view(np.uint32), w.view(np.uint32))
