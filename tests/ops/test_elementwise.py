"""Elementwise ops against numpy: binary ops with broadcasting (f32 and i32),
comparisons, and the f32 unary ops.

Tolerances (see tests/harness.py):

* add sub mul div max min eq cmpl neg relu sqrt: bit-exact
  (`np.array_equal`, NaN equal NaN). The float64 expectation rounded once
  to f32 is the correctly rounded result for + - * / and sqrt, so it is
  exact too.
* exp log tanh sigmoid rsqrt: relative 1e-5 against the op reference and
  against float64 rounded to f32.
* i32 add sub mul wrap (two's complement), checked against int64 arithmetic
  wrapped to 32 bits.

Every case runs twice: with the default pass pipeline (constant folding,
fusion of elementwise chains into one loop, in-place buffers) and with
plain kernel calls.
"""

from __future__ import annotations

import math

import sys
from math import prod
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import (  # noqa: E402
    BITS,
    EXACT,
    F32,
    I32,
    REL,
    Suite,
    f32_attr,
    f32_data,
    ttype,
    i32_data,
    op_func,
    dense_attr,
    random_shape,
    rng,
    round_f32,
    wrap_i32,
)

SUITE = Suite("elementwise", variants=("default", "plain"))

INF, NAN = np.inf, np.nan
F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.finfo(np.float32).tiny)

# Special values crossed with each other by a (n, 1) x (1, n) broadcast.
SPECIALS = np.array(
    [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 2.5, -3.0, F32_TINY, F32_MAX, -F32_MAX, 1e-45],
    dtype=np.float32,
)
I32_SPECIALS = np.array(
    [0, 1, -1, 2, 7, -7, 46341, 65536, 2**31 - 1, -(2**31), -(2**31) + 1, 2**30], dtype=np.int32
)

# Broadcasting in both directions and of both operands, scalars, unit dims,
# odd primes, ranks 0 to 6.
FIXED_PAIRS: list[tuple[tuple[int, ...], tuple[int, ...]]] = [
    ((), ()),
    ((1,), (1,)),
    ((7,), (7,)),
    ((13, 31), (13, 31)),
    ((2, 3, 5), (2, 3, 5)),
    ((), (3, 5)),
    ((3, 5), ()),
    ((5,), (3, 5)),
    ((3, 5), (5,)),
    ((3, 1), (1, 5)),
    ((1, 5), (3, 1)),
    ((3, 1), (3, 5)),
    ((7, 13), (7, 1)),
    ((2, 1, 7), (3, 1)),
    ((1, 1, 1), (7,)),
    ((31, 1, 5), (1, 13, 1)),
    ((2, 1, 3, 1, 5), (1, 7, 1, 2, 1)),
    ((1, 2, 1, 3, 1, 5), (5,)),
    ((1031,), (1031,)),
    ((1,), (1031,)),
    # rank 8, the largest: alternating broadcast dims that cannot be merged
    ((2, 1, 3, 1, 2, 1, 3, 1), (1, 3, 1, 2, 1, 3, 1, 2)),
    # empty tensors
    ((0, 3), (3,)),
    ((5, 0), (1, 1)),
]


def random_pair(g: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """An output shape of rank 0..4 and two operands that broadcast to it."""
    while True:
        rank = int(g.integers(0, 5))
        out = random_shape(g, rank)
        if prod(out) <= 4000:
            break

    def operand() -> tuple[int, ...]:
        keep = int(g.integers(0, rank + 1))
        s = list(out[rank - keep :])
        for i in range(len(s)):
            if g.random() < 0.3:
                s[i] = 1
        return tuple(s)

    return operand(), operand()


def shape_id(s: tuple[int, ...]) -> str:
    return "x".join(map(str, s)) or "scalar"


def out_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return np.broadcast_shapes(a, b)


# --------------------------------------------------------------------------
# Independent expectations (float64 / int64)
# --------------------------------------------------------------------------


def f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


def _max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(f64(a), f64(b))
    out = np.where(a >= b, a, b)
    return round_f32(np.where(np.isnan(a) | np.isnan(b), np.nan, out))


def _min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(f64(a), f64(b))
    out = np.where(a <= b, a, b)
    return round_f32(np.where(np.isnan(a) | np.isnan(b), np.nan, out))


def _ieee(fn):  # noqa: ANN001, ANN202
    def expect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return round_f32(fn(f64(a), f64(b)))

    return expect


F32_BINARY = {
    "add": _ieee(lambda a, b: a + b),
    "sub": _ieee(lambda a, b: a - b),
    "mul": _ieee(lambda a, b: a * b),
    "div": _ieee(lambda a, b: a / b),
    "max": _max,
    "min": _min,
    "eq": lambda a, b: (f64(a) == f64(b)).astype(np.float32),
    "cmpl": lambda a, b: (f64(a) > f64(b)).astype(np.float32),
}


def _i64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.int64)


I32_BINARY = {
    "add": lambda a, b: wrap_i32(_i64(a) + _i64(b)),
    "sub": lambda a, b: wrap_i32(_i64(a) - _i64(b)),
    "mul": lambda a, b: wrap_i32(_i64(a) * _i64(b)),
    "max": lambda a, b: np.where(_i64(a) >= _i64(b), a, b).astype(np.int32),
    "min": lambda a, b: np.where(_i64(a) <= _i64(b), a, b).astype(np.int32),
    "eq": lambda a, b: (_i64(a) == _i64(b)).astype(np.float32),
    "cmpl": lambda a, b: (_i64(a) > _i64(b)).astype(np.float32),
}

COMPARE = ("eq", "cmpl")


def _binary_data(op: str, g: np.random.Generator, shape: tuple[int, ...], dtype) -> np.ndarray:  # noqa: ANN001
    if dtype == I32:
        if op in COMPARE:
            return np.asarray(g.integers(-3, 4, size=shape), dtype=np.int32)
        return i32_data(g, shape)
    if op in COMPARE:
        # Small integers so that equal pairs are frequent.
        return np.asarray(g.integers(-3, 4, size=shape), dtype=np.float32)
    x = f32_data(g, shape, -100.0, 100.0)
    if op == "div" and x.size > 2:
        x.reshape(-1)[:: max(1, x.size // 3)] = 0.0
    return x


def add_binary(op: str, dtype, a_shape, b_shape, g, tag: str = "") -> None:  # noqa: ANN001
    a = _binary_data(op, g, a_shape, dtype)
    b = _binary_data(op, g, b_shape, dtype)
    out_dtype = F32 if op in COMPARE else dtype
    body = op_func(f"mlvm.{op}", [a, b], [(out_shape(a_shape, b_shape), out_dtype)])
    table = F32_BINARY if dtype == F32 else I32_BINARY
    elem = "f32" if dtype == F32 else "i32"
    SUITE.add(
        f"{op}-{elem}-{shape_id(a_shape)}-{shape_id(b_shape)}{tag}", body, [a, b], table[op]
    )


def add_specials(op: str) -> None:
    a = SPECIALS.reshape(-1, 1)
    b = SPECIALS.reshape(1, -1)
    out_dtype = F32
    for lhs, rhs in ((a, b), (b, a)):
        body = op_func(f"mlvm.{op}", [lhs, rhs], [(out_shape(lhs.shape, rhs.shape), out_dtype)])
        SUITE.add(f"{op}-f32-specials-{lhs.shape[0]}x{lhs.shape[1]}", body, [lhs, rhs], F32_BINARY[op])


def add_i32_specials(op: str) -> None:
    a = I32_SPECIALS.reshape(-1, 1)
    b = I32_SPECIALS.reshape(1, -1)
    out_dtype = F32 if op in COMPARE else I32
    body = op_func(f"mlvm.{op}", [a, b], [(out_shape(a.shape, b.shape), out_dtype)])
    SUITE.add(f"{op}-i32-extremes", body, [a, b], I32_BINARY[op])


for k, op in enumerate(F32_BINARY):
    g = rng(1000 + k)
    for sa, sb in FIXED_PAIRS:
        add_binary(op, F32, sa, sb, g)
    for r in range(4):
        sa, sb = random_pair(g)
        add_binary(op, F32, sa, sb, g, f"-r{r}")
    add_specials(op)

for k, op in enumerate(I32_BINARY):
    g = rng(2000 + k)
    for sa, sb in FIXED_PAIRS[::2]:
        add_binary(op, I32, sa, sb, g)
    for r in range(3):
        sa, sb = random_pair(g)
        add_binary(op, I32, sa, sb, g, f"-r{r}")
    add_i32_specials(op)


# A NaN on either side, in every lane position of a vectorised loop, with
# both operands contiguous, one a scalar, or one broadcast along rows.
def add_nan_placement(op: str, g: np.random.Generator) -> None:
    a = f32_data(g, (3, 37))
    b = f32_data(g, (3, 37))
    a[0, ::5] = NAN
    b[1, 1::3] = NAN
    a[2, 7] = INF
    b[2, 9] = -INF
    for lhs, rhs, tag in (
        (a, b, "both"),
        (a, np.array(np.float32(NAN)), "nan-scalar-rhs"),
        (np.array(np.float32(NAN)), b, "nan-scalar-lhs"),
        (a, b[:1].copy(), "row-rhs"),
        (a[:, :1].copy(), b, "col-lhs"),
    ):
        body = op_func(f"mlvm.{op}", [lhs, rhs], [(out_shape(lhs.shape, rhs.shape), F32)])
        SUITE.add(f"{op}-f32-nan-{tag}", body, [lhs, rhs], F32_BINARY[op])


for k, op in enumerate(("max", "min", "eq", "cmpl")):
    add_nan_placement(op, rng(3000 + k))


# --------------------------------------------------------------------------
# Unary ops
# --------------------------------------------------------------------------

UNARY_SHAPES = [(), (1,), (7,), (3, 5), (2, 3, 5, 7), (13, 31), (1, 1, 1031)]


def _unary64(fn):  # noqa: ANN001, ANN202
    def expect(a: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return round_f32(fn(f64(a)))

    return expect


def _relu(a: np.ndarray) -> np.ndarray:
    x = f64(a)
    return round_f32(np.where(np.isnan(x), x, np.where(x > 0, x, 0.0)))


def _sigmoid64(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


# op -> (expectation, tolerance, data range, special values)
UNARY = {
    "neg": (_unary64(np.negative), EXACT, (-100, 100), [NAN, INF, -INF, 0.0, -0.0, F32_MAX, 1e-45]),
    "exp": (_unary64(np.exp), REL, (-87, 88), [NAN, INF, -INF, 0.0, -0.0, 100.0, -100.0, -103.0, 1e-30]),
    "log": (_unary64(np.log), REL, (1e-6, 1e6), [NAN, INF, -INF, 0.0, -0.0, -1.0, 1.0, F32_MAX, F32_TINY, 1e-45]),
    "sqrt": (_unary64(np.sqrt), EXACT, (0, 1e4), [NAN, INF, -INF, 0.0, -0.0, -1.0, 2.0, F32_MAX, 1e-45]),
    "tanh": (_unary64(np.tanh), REL, (-6, 6), [NAN, INF, -INF, 0.0, -0.0, 20.0, -20.0, 1e-20, 1e-3]),
    "sigmoid": (_unary64(_sigmoid64), REL, (-30, 30), [NAN, INF, -INF, 0.0, 100.0, -100.0, -87.0, 88.0]),
    "relu": (_relu, EXACT, (-100, 100), [NAN, INF, -INF, 0.0, -0.0, -1e-45, F32_MAX]),
    "erf": (_unary64(np.vectorize(math.erf, otypes=[np.float64])), REL, (-4, 4),
            [NAN, INF, -INF, 0.0, -0.0, 6.0, -6.0, 1e-30, 1e-3]),
    "abs": (_unary64(np.abs), EXACT, (-100, 100), [NAN, INF, -INF, 0.0, -0.0, -1e-45, -F32_MAX]),
    "floor": (_unary64(np.floor), EXACT, (-100, 100), [NAN, INF, -INF, 0.0, -0.0, -0.5, 0.5, 8388607.5]),
    "ceil": (_unary64(np.ceil), EXACT, (-100, 100), [NAN, INF, -INF, 0.0, -0.0, -0.5, 0.5, -8388607.5]),
    "sin": (_unary64(np.sin), REL, (-10, 10), [NAN, INF, -INF, 0.0, -0.0, 1e-30, 3.14159265]),
    "cos": (_unary64(np.cos), REL, (-10, 10), [NAN, INF, -INF, 0.0, -0.0, 1e-30, 1.0]),
}


def add_unary(op: str, shape: tuple[int, ...], g: np.random.Generator) -> None:
    expect, tol, (lo, hi), specials = UNARY[op]
    if op == "log":
        a = np.asarray(np.exp(g.uniform(np.log(lo), np.log(hi), size=shape)), dtype=np.float32)
    else:
        a = f32_data(g, shape, lo, hi)
    body = op_func(f"mlvm.{op}", [a], [(shape, F32)])
    SUITE.add(f"{op}-{shape_id(shape)}", body, [a], expect, tol)


for k, op in enumerate(UNARY):
    g = rng(4000 + k)
    for shape in UNARY_SHAPES:
        add_unary(op, shape, g)
    sp = np.array(UNARY[op][3], dtype=np.float32)
    SUITE.add(
        f"{op}-specials",
        op_func(f"mlvm.{op}", [sp], [(sp.shape, F32)]),
        [sp],
        UNARY[op][0],
        UNARY[op][1],
    )


def _rsqrt(eps: float):  # noqa: ANN202
    def expect(a: np.ndarray) -> np.ndarray:
        e = float(np.float32(eps))
        with np.errstate(all="ignore"):
            return round_f32(1.0 / np.sqrt(f64(a) + e))

    return expect


for k, eps in enumerate((None, 0.0, 1e-5, 1.0)):
    g = rng(5000 + k)
    props = None if eps is None else {"eps": f32_attr(eps)}
    # eps left out means eps = 0: compiled apart so the other cases never depend on it.
    group = "rsqrt-default-eps" if eps is None else "main"
    for shape in ((), (7,), (3, 5), (13, 31)):
        a = f32_data(g, shape, 1e-3, 100.0)
        body = op_func("mlvm.rsqrt", [a], [(shape, F32)], props)
        SUITE.add(
            f"rsqrt-eps{eps}-{shape_id(shape)}", body, [a], _rsqrt(eps or 0.0), REL, group
        )
    sp = np.array([NAN, INF, 0.0, -0.0, -1.0, 1e-30, F32_MAX, 4.0], dtype=np.float32)
    SUITE.add(
        f"rsqrt-eps{eps}-specials",
        op_func("mlvm.rsqrt", [sp], [(sp.shape, F32)], props),
        [sp],
        _rsqrt(eps or 0.0),
        REL,
        group,
    )


# A chain of elementwise ops in one function: intermediate buffers in the
# arena, an operand used twice, a result returned twice.
CHAIN = """func.func @FUNC(%x: tensor<3x1x5xf32>, %y: tensor<7x1xf32>) -> (tensor<3x7x5xf32>, tensor<3x7x5xf32>, tensor<7x1xf32>) {
  %0 = "mlvm.mul"(%x, %y) : (tensor<3x1x5xf32>, tensor<7x1xf32>) -> tensor<3x7x5xf32>
  %1 = "mlvm.relu"(%0) : (tensor<3x7x5xf32>) -> tensor<3x7x5xf32>
  %2 = "mlvm.sub"(%1, %x) : (tensor<3x7x5xf32>, tensor<3x1x5xf32>) -> tensor<3x7x5xf32>
  %3 = "mlvm.max"(%2, %2) : (tensor<3x7x5xf32>, tensor<3x7x5xf32>) -> tensor<3x7x5xf32>
  %4 = "mlvm.neg"(%y) : (tensor<7x1xf32>) -> tensor<7x1xf32>
  func.return %3, %3, %4 : tensor<3x7x5xf32>, tensor<3x7x5xf32>, tensor<7x1xf32>
}"""


def _chain(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    t = np.maximum(round_f32(f64(x) * f64(y)), np.float32(0))
    r = round_f32(f64(t) - f64(x))
    return [r, r, -y]


g = rng(6000)
SUITE.add("chain", CHAIN, [f32_data(g, (3, 1, 5)), f32_data(g, (7, 1))], _chain)


# Longer programs: every intermediate dies at its next use, so results are
# computed over their operands' buffers (either operand, with the other one
# broadcast), through reshapes, and into the caller's output buffers.
T35, T5, T15, I35 = ttype((3, 5)), ttype((5,)), ttype((15,)), ttype((3, 5), I32)
INPLACE = f"""func.func @FUNC(%x: {T35}, %y: {T5}, %i: {I35}) -> ({T35}, {T15}, {I35}, {T35}) {{
  %0 = "mlvm.mul"(%x, %y) : ({T35}, {T5}) -> {T35}
  %1 = "mlvm.sub"(%y, %0) : ({T5}, {T35}) -> {T35}
  %2 = "mlvm.exp"(%1) : ({T35}) -> {T35}
  %3 = "mlvm.add"(%2, %2) : ({T35}, {T35}) -> {T35}
  %4 = "mlvm.reshape"(%3) : ({T35}) -> {T15}
  %5 = "mlvm.neg"(%4) : ({T15}) -> {T15}
  %6 = "mlvm.reshape"(%5) : ({T15}) -> {T35}
  %7 = "mlvm.max"(%x, %6) : ({T35}, {T35}) -> {T35}
  %8 = "mlvm.cmpl"(%7, %x) : ({T35}, {T35}) -> {T35}
  %9 = "mlvm.relu"(%6) : ({T35}) -> {T35}
  %10 = "mlvm.reshape"(%9) : ({T35}) -> {T15}
  %11 = "mlvm.add"(%i, %i) : ({I35}, {I35}) -> {I35}
  %12 = "mlvm.mul"(%11, %i) : ({I35}, {I35}) -> {I35}
  %13 = "mlvm.div"(%8, %7) : ({T35}, {T35}) -> {T35}
  func.return %13, %10, %12, %7 : {T35}, {T15}, {I35}, {T35}
}}"""


def _inplace(x: np.ndarray, y: np.ndarray, i: np.ndarray) -> list[np.ndarray]:
    p = round_f32(f64(x) * f64(y))
    e = round_f32(np.exp(f64(round_f32(f64(y) - f64(p)))))
    n = -round_f32(f64(e) + f64(e))
    m = np.maximum(x, n)
    c = (m > x).astype(np.float32)
    r = np.where(np.isnan(n) | (n > 0), n, np.float32(0)).reshape(15)
    ii = wrap_i32(wrap_i32(i.astype(np.int64) * 2).astype(np.int64) * i)
    with np.errstate(all="ignore"):
        return [round_f32(f64(c) / f64(m)), r, ii, m]


g = rng(6001)
SUITE.add(
    "inplace-chain",
    INPLACE,
    [f32_data(g, (3, 5)), f32_data(g, (5,)), i32_data(g, (3, 5))],
    _inplace,
    REL,
)

# x + 0, x - 0, x * 1, x / 1 by constants: IEEE results, bit for bit (a
# negative zero plus a positive zero is a positive zero).
SIGNED = np.array([-0.0, 0.0, 1.5, -2.0, NAN, INF, -INF, 1e-45], dtype=np.float32)
for op, const, tag in [
    ("add", 0.0, "plus-zero"),
    ("add", -0.0, "plus-negative-zero"),
    ("sub", 0.0, "minus-zero"),
    ("sub", -0.0, "minus-negative-zero"),
    ("mul", 1.0, "times-one"),
    ("div", 1.0, "over-one"),
]:
    t8 = ttype((8,))
    c = np.full(8, const, dtype=np.float32)
    body = (
        f"func.func @FUNC(%x: {t8}) -> ({t8}, {t8}) {{\n"
        f'  %c = "mlvm.constant"() <{{value = {dense_attr(c)}}}> : () -> {t8}\n'
        f'  %0 = "mlvm.{op}"(%x, %c) : ({t8}, {t8}) -> {t8}\n'
        f'  %1 = "mlvm.{op}"(%c, %x) : ({t8}, {t8}) -> {t8}\n'
        f"  func.return %0, %1 : {t8}, {t8}\n}}"
    )

    def _neutral(x: np.ndarray, op: str = op, const: float = const) -> list[np.ndarray]:
        fn = F32_BINARY[op]
        k = np.full(8, const, dtype=np.float32)
        return [fn(x, k), fn(k, x)]

    SUITE.add(f"{op}-f32-constant-{tag}-bits", body, [SIGNED], _neutral, BITS)


# --------------------------------------------------------------------------
# Chains of elementwise ops of one shape, computed in one loop from
# broadcast operands: every op inside such a chain, f32 and i32, specials.
# --------------------------------------------------------------------------


def _func(args: list[tuple[str, str]], lines: list[str], rets: list[tuple[str, str]]) -> str:
    head = ", ".join(f"%{n}: {t}" for n, t in args)
    out = ", ".join(t for _, t in rets)
    body = "\n".join(f"  {ln}" for ln in lines)
    return (
        f"func.func @FUNC({head}) -> ({out}) {{\n{body}\n"
        f"  func.return {', '.join('%' + n for n, _ in rets)} : {out}\n}}"
    )


def _op(res: str, op: str, args: list[tuple[str, str]], out: str, props: str = "") -> str:
    p = f" <{{{props}}}>" if props else ""
    return (
        f'%{res} = "mlvm.{op}"({", ".join("%" + n for n, _ in args)}){p} : '
        f"({', '.join(t for _, t in args)}) -> {out}"
    )


def add_binary_chain(op: str, dtype, a: np.ndarray, b: np.ndarray, tag: str) -> None:  # noqa: ANN001
    """%0 = op(a, b) with a and b broadcast, then one more op on %0."""
    shape = out_shape(a.shape, b.shape)
    ta, tb = ttype(a.shape, dtype), ttype(b.shape, dtype)
    t0 = ttype(shape, F32 if op in COMPARE else dtype)
    table = F32_BINARY if dtype == F32 else I32_BINARY
    if op in COMPARE or dtype == F32:
        second = _op("1", "neg", [("0", t0)], t0)

        def expect(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            return -table[op](x, y)
    else:
        second = _op("1", "mul", [("0", t0), ("0", t0)], t0)

        def expect(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            r = table[op](x, y).astype(np.int64)
            return wrap_i32(r * r)

    body = _func([("a", ta), ("b", tb)], [_op("0", op, [("a", ta), ("b", tb)], t0), second], [("1", t0)])
    elem = "f32" if dtype == F32 else "i32"
    SUITE.add(f"{op}-{elem}-chain-{tag}", body, [a, b], expect)


for k, op in enumerate(F32_BINARY):
    g = rng(7000 + k)
    add_binary_chain(op, F32, SPECIALS.reshape(-1, 1), SPECIALS.reshape(1, -1), "specials")
    add_binary_chain(op, F32, _binary_data(op, g, (3, 1, 5), F32), _binary_data(op, g, (7, 1), F32), "3x1x5-7x1")
    add_binary_chain(op, F32, _binary_data(op, g, (), F32), _binary_data(op, g, (2, 3), F32), "scalar-2x3")
g = rng(7050)
for sa, sb, tag in [
    ((), (), "scalars"),
    ((0, 3), (3,), "empty"),
    ((2, 1, 3, 1, 2, 1, 3, 1), (1, 3, 1, 2, 1, 3, 1, 2), "rank8"),
]:
    add_binary_chain("sub", F32, f32_data(g, sa), f32_data(g, sb), tag)
    add_binary_chain("mul", I32, i32_data(g, sa), i32_data(g, sb), tag)
for k, op in enumerate(I32_BINARY):
    g = rng(7100 + k)
    add_binary_chain(op, I32, I32_SPECIALS.reshape(-1, 1), I32_SPECIALS.reshape(1, -1), "extremes")
    add_binary_chain(op, I32, _binary_data(op, g, (5, 1), I32), _binary_data(op, g, (1, 13), I32), "5x1-1x13")


def add_unary_chain(op: str, props: str = "", eps: float = 0.0) -> None:
    """%0 = a + b (broadcast), %1 = op(%0), %2 = -%1."""
    expect64, tol, (lo, hi), specials = UNARY[op] if op in UNARY else (None, REL, (1e-3, 100.0), [])
    g = rng(7200 + len(op))
    a = f32_data(g, (3, 1, 5), lo / 2, hi / 2)
    b = f32_data(g, (7, 1), lo / 2, hi / 2)
    if op in ("log", "sqrt", "rsqrt"):
        a, b = np.abs(a), np.abs(b)
    sp = np.array(specials, dtype=np.float32) if specials else np.zeros(0, np.float32)
    ta, tb, t = ttype(a.shape), ttype(b.shape), ttype((3, 7, 5))
    body = _func(
        [("a", ta), ("b", tb)],
        [
            _op("0", "add", [("a", ta), ("b", tb)], t),
            _op("1", op, [("0", t)], t, props),
            _op("2", "neg", [("1", t)], t),
        ],
        [("2", t)],
    )
    fn = expect64 if expect64 is not None else _rsqrt(eps)

    def expect(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return -fn(round_f32(f64(x) + f64(y)))

    SUITE.add(f"{op}-chain-3x1x5-7x1", body, [a, b], expect, tol)
    if sp.size:
        ts = ttype(sp.shape)
        body = _func(
            [("a", ts)],
            [_op("0", op, [("a", ts)], ts, props), _op("1", "neg", [("0", ts)], ts)],
            [("1", ts)],
        )
        SUITE.add(f"{op}-chain-specials", body, [sp], lambda x, fn=fn: -fn(x), tol)


for op in UNARY:
    add_unary_chain(op)
add_unary_chain("rsqrt", f"eps = {f32_attr(1e-3)}", 1e-3)


# Intermediates that are also returned, or used twice.
T375 = ttype((3, 7, 5))
SHARED = _func(
    [("a", ttype((3, 1, 5))), ("b", ttype((7, 1)))],
    [
        _op("0", "sub", [("a", ttype((3, 1, 5))), ("b", ttype((7, 1)))], T375),
        _op("1", "mul", [("0", T375), ("0", T375)], T375),
        _op("2", "max", [("1", T375), ("0", T375)], T375),
        _op("3", "relu", [("0", T375)], T375),
        _op("4", "add", [("2", T375), ("3", T375)], T375),
    ],
    [("4", T375), ("0", T375), ("1", T375)],
)


def _shared(a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    d = round_f32(f64(a) - f64(b))
    sq = round_f32(f64(d) * f64(d))
    mx = np.maximum(sq, d)
    return [round_f32(f64(mx) + f64(np.maximum(d, np.float32(0)))), d, sq]


g = rng(7300)
SUITE.add("chain-shared-intermediates", SHARED, [f32_data(g, (3, 1, 5)), f32_data(g, (7, 1))], _shared)

# A dense layer: matmul, bias, max with a broadcast row, relu (integer-valued
# data, so every result is exact), and a softmax over rows.
T45, T43, T35b, T5r = ttype((4, 5)), ttype((4, 3)), ttype((3, 5)), ttype((5,))
LAYER = _func(
    [("x", T43), ("w", T35b), ("bias", T5r), ("floor", ttype((1, 5)))],
    [
        _op("0", "matmul", [("x", T43), ("w", T35b)], T45),
        _op("1", "add", [("0", T45), ("bias", T5r)], T45),
        _op("2", "max", [("1", T45), ("floor", ttype((1, 5)))], T45),
        _op("3", "relu", [("2", T45)], T45),
    ],
    [("3", T45)],
)


def _layer(x: np.ndarray, w: np.ndarray, bias: np.ndarray, floor: np.ndarray) -> np.ndarray:
    y = f64(x) @ f64(w) + f64(bias)
    return round_f32(np.maximum(np.maximum(y, f64(floor)), 0.0))


def _ints(g: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(g.integers(-9, 10, size=shape), dtype=np.float32)


g = rng(7400)
SUITE.add("chain-dense-layer", LAYER, [_ints(g, (4, 3)), _ints(g, (3, 5)), _ints(g, (5,)), _ints(g, (1, 5))], _layer)

T637, T61 = ttype((6, 37)), ttype((6, 1))
SOFTMAX = _func(
    [("x", T637)],
    [
        _op("m", "reduce", [("x", T637)], T61, 'kind = "max", axes = array<i64: 1>, keepdims = true'),
        _op("0", "sub", [("x", T637), ("m", T61)], T637),
        _op("1", "exp", [("0", T637)], T637),
        _op("s", "reduce", [("1", T637)], T61, 'kind = "sum", axes = array<i64: -1>, keepdims = true'),
        _op("2", "div", [("1", T637), ("s", T61)], T637),
    ],
    [("2", T637)],
)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(f64(x) - f64(x).max(axis=1, keepdims=True))
    return round_f32(e / e.sum(axis=1, keepdims=True))


SUITE.add("chain-softmax", SOFTMAX, [f32_data(rng(7500), (6, 37), -20, 20)], _softmax, REL)


@pytest.mark.parametrize("case,variant", SUITE.params_list())
def test_elementwise(case, variant: str) -> None:  # noqa: ANN001
    SUITE.check(case, variant)


def test_elementwise_cases_cover_every_op() -> None:
    ops = {c.id.split("-")[0] for c in SUITE.cases}
    assert ops >= set(F32_BINARY) | set(UNARY) | {"rsqrt"}
    # broadcasting of each operand alone, of both, and scalars on each side
    for op in F32_BINARY:
        ids = [c.id for c in SUITE.cases if c.id.startswith(op + "-f32-")]
        assert f"{op}-f32-scalar-3x5" in ids and f"{op}-f32-3x5-scalar" in ids
        assert f"{op}-f32-3x1-1x5" in ids and f"{op}-f32-5-3x5" in ids
