"""Every element type through every elementwise and data-movement op, against
numpy and against rules written out independently here.

* Integer results are exact, checked against Python integer arithmetic
  wrapped to the type (two's complement), with the edge values MIN, MAX,
  MIN / -1, x / 0, shifts by negative amounts and by the width.
* f16 / bf16 are computed in f32 and rounded to nearest even: + - * / max
  min are exact against float64 rounded once to the type (f32 carries more
  than 2p + 2 bits, so rounding twice is harmless). f64 is exact IEEE.
  Transcendental ops are within a few units in the last place of the type.
* Comparisons, logic and select are exact; NaN compares unequal.
* Casts between all 13 x 13 pairs are exact against the op reference, and
  the documented rules (truncate and saturate, NaN -> 0, != 0 for i1,
  wrapping, rounding once from double) against values worked out by hand.

Every case runs with the default pipeline (folding, fusion, in place) and
with plain op-by-op code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import EXACT, Suite, Tolerance, op_func, rng, ttype  # noqa: E402

from mlvm.dialect.elements import ALL, ELEMS, FLOATS, INTS, NUMERIC, SIGNED  # noqa: E402

SUITE = Suite("elements", variants=("default", "plain"))
INDEX_TYPES = ("i32", "i64")
BF16 = np.dtype(ml_dtypes.bfloat16)


class Ulps(Tolerance):
    """Within n units in the last place of the result's own float type."""

    def __init__(self, n: float) -> None:
        self.n = n

    def check(self, got: np.ndarray, want: np.ndarray, what: str) -> None:
        assert got.shape == want.shape and got.dtype == want.dtype, what
        g, w = got.astype(np.float64), want.astype(np.float64)
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan), f"{what}: NaN positions differ"
        inf = np.isinf(w)
        assert np.array_equal(g[inf], w[inf]), f"{what}: infinities differ"
        fin = ~nan & ~inf
        eps = float(ml_dtypes.finfo(got.dtype).eps)
        tiny = float(ml_dtypes.finfo(got.dtype).smallest_subnormal)
        bound = self.n * np.maximum(np.abs(w[fin]) * eps, tiny)
        err = np.abs(g[fin] - w[fin])
        assert np.all(err <= bound), f"{what}: error {err.max()} > {bound[np.argmax(err - bound)]}"

    def __repr__(self) -> str:
        return f"Ulps({self.n})"


def specials(name: str) -> np.ndarray:
    """The edge values of a type."""
    e = ELEMS[name]
    if e.kind == "b":
        return np.array([False, True])
    if e.is_int:
        lo, hi = e.min, e.max
        vals = {0, 1, 2, 7, lo, hi, hi - 1, 100 % (hi + 1)}
        if e.kind == "i":
            vals |= {-1, -2, -7, lo + 1}
        return np.array(sorted(vals), dtype=e.dtype)
    fi = ml_dtypes.finfo(e.dtype)
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -3.0, float(fi.max), -float(fi.max),
            float(fi.smallest_normal), float(fi.smallest_subnormal), -float(fi.smallest_subnormal), 0.1]
    return np.array(vals, dtype=np.float64).astype(e.dtype)


def data(name: str, g: np.random.Generator, shape: tuple[int, ...], small: bool = False) -> np.ndarray:
    e = ELEMS[name]
    if e.kind == "b":
        return g.integers(0, 2, size=shape).astype(bool)
    if e.is_int:
        lo, hi = (-8, 9) if small else (e.min, e.max + 1)
        lo = max(lo, e.min)
        return g.integers(lo, hi, size=shape, dtype=np.int64 if e.dtype != np.uint64 else np.uint64).astype(e.dtype)
    span = 8.0 if small else 100.0
    return g.uniform(-span, span, size=shape).astype(e.dtype)


def crossed(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Every edge value against every other: (n, 1) and (1, n)."""
    s = specials(name)
    return s.reshape(-1, 1), s.reshape(1, -1)


def _py(x: np.ndarray) -> list:
    return [int(v) for v in np.asarray(x).reshape(-1)]


def wrap(vals: list[int], dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return np.array([v & 1 for v in vals], dtype=bool)
    info = np.iinfo(dtype)
    span = 1 << (8 * dtype.itemsize)
    return np.array([(v - info.min) % span + info.min for v in vals], dtype=dtype)


def int_rule(rule):  # noqa: ANN001, ANN201
    """An independent expectation from a rule on Python ints."""
    def expect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a2, b2 = np.broadcast_arrays(a, b)
        out = [rule(x, y, a.dtype) for x, y in zip(_py(a2), _py(b2))]
        return wrap(out, a.dtype).reshape(a2.shape)
    return expect


def _tdiv(x: int, y: int, dt: np.dtype) -> int:
    if y == 0:
        return 0
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _bits(dt: np.dtype) -> int:
    return 8 * dt.itemsize


INT_RULES = {
    "add": lambda x, y, dt: x + y,
    "sub": lambda x, y, dt: x - y,
    "mul": lambda x, y, dt: x * y,
    "div": _tdiv,
    "max": lambda x, y, dt: max(x, y),
    "min": lambda x, y, dt: min(x, y),
    "mod": lambda x, y, dt: 0 if y == 0 else x % y,
    "fmod": lambda x, y, dt: 0 if y == 0 else x - y * _tdiv(x, y, dt),
    "and": lambda x, y, dt: x & y,
    "or": lambda x, y, dt: x | y,
    "xor": lambda x, y, dt: x ^ y,
    "shl": lambda x, y, dt: x << y if 0 <= y < _bits(dt) else 0,
    "shr": lambda x, y, dt: x >> y if 0 <= y < _bits(dt) else (-1 if x < 0 else 0),
}


def float_rule(fn):  # noqa: ANN001, ANN201
    """float64 arithmetic rounded once to the operands' type."""
    def expect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(fn(a.astype(np.float64), b.astype(np.float64))).astype(a.dtype)
    return expect


def _fmax(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(a >= b, a, b))


def _fmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(a <= b, a, b))


FLOAT_RULES = {
    "add": float_rule(lambda a, b: a + b),
    "sub": float_rule(lambda a, b: a - b),
    "mul": float_rule(lambda a, b: a * b),
    "div": float_rule(lambda a, b: a / b),
    "max": float_rule(_fmax),
    "min": float_rule(_fmin),
    "mod": float_rule(np.mod),
    "fmod": float_rule(np.fmod),
}

PROPS = {"fmod": {"fmod": "true"}}


def add_binary(op: str, name: str, a: np.ndarray, b: np.ndarray, tag: str) -> None:
    e = ELEMS[name]
    mlvm_op = "mod" if op == "fmod" else op
    out = np.broadcast_shapes(a.shape, b.shape)
    body = op_func(f"mlvm.{mlvm_op}", [a, b], [(out, e.dtype)], PROPS.get(op))
    rule = int_rule(INT_RULES[op]) if e.is_int or e.kind == "b" else FLOAT_RULES[op]
    SUITE.add(f"{op}-{name}-{tag}", body, [a, b], rule)


ARITH = ("add", "sub", "mul", "div", "max", "min", "mod", "fmod")
for k, name in enumerate(NUMERIC):
    g = rng(100 + k)
    for op in ARITH:
        a, b = crossed(name)
        add_binary(op, name, a, b, "edges")
        small = op in ("div", "mod", "fmod")
        add_binary(op, name, data(name, g, (3, 1, 5)), data(name, g, (7, 1), small), "3x1x5-7x1")
        add_binary(op, name, data(name, g, ()), data(name, g, (13,), small), "scalar-13")

# pow: C's pow / powf against float64 numpy.power rounded once to the type:
# within 1 ulp (libm's powf is not correctly rounded; f16 / bf16 round an
# f32 result once more); the edge values (0, +-inf, NaN, negative bases
# with integer and fractional exponents) crossed, broadcasting, scalars.
for k, name in enumerate(FLOATS):
    g = rng(250 + k)
    a, b = crossed(name)
    pow_rule = float_rule(np.power)
    for tag, (x, y) in {
        "edges": (a, b),
        "3x1x5-7x1": (np.abs(data(name, g, (3, 1, 5), True)), data(name, g, (7, 1), True)),
        "negative-integer-exponents": (data(name, g, (4, 5), True),
                                       np.round(data(name, g, (5,), True))),
        "scalar-13": (data(name, g, (), True) ** 2, data(name, g, (13,), True)),
    }.items():
        out = np.broadcast_shapes(x.shape, y.shape)
        SUITE.add(f"pow-{name}-{tag}", op_func("mlvm.pow", [x, y], [(out, x.dtype)]), [x, y],
                  pow_rule, Ulps(1 if name != "f64" else 2))

for k, name in enumerate((*INTS, "i1")):
    g = rng(200 + k)
    for op in ("and", "or", "xor"):
        a, b = crossed(name)
        add_binary(op, name, a, b, "edges")
        add_binary(op, name, data(name, g, (2, 31)), data(name, g, (31,)), "2x31-31")

for k, name in enumerate(INTS):
    g = rng(300 + k)
    bits = 8 * ELEMS[name].size
    amounts = np.array([0, 1, 3, bits - 1, bits, bits + 1, 127 % (ELEMS[name].max + 1)]
                       + ([-1, -bits] if name in SIGNED else []), dtype=ELEMS[name].dtype)
    for op in ("shl", "shr"):
        a = specials(name).reshape(-1, 1)
        add_binary(op, name, a, amounts.reshape(1, -1), "edges")


# -- comparisons ------------------------------------------------------------

CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
       "gt": np.greater, "ge": np.greater_equal, "cmpl": np.greater}

for k, name in enumerate(ALL):
    g = rng(400 + k)
    for op, fn in CMP.items():
        a, b = crossed(name)
        for res in ("i1", "f32"):
            want = (lambda f, r: lambda x, y: f(x, y).astype(ELEMS[r].dtype))(fn, res)
            out = np.broadcast_shapes(a.shape, b.shape)
            SUITE.add(f"{op}-{name}-{res}-edges",
                      op_func(f"mlvm.{op}", [a, b], [(out, ELEMS[res].dtype)]), [a, b], want)
        x, y = data(name, g, (5, 3), True), data(name, g, (3,), True)
        SUITE.add(f"{op}-{name}-i1-5x3-3", op_func(f"mlvm.{op}", [x, y], [((5, 3), bool)]), [x, y],
                  (lambda f: lambda p, q: f(p, q))(fn))


# -- unary ------------------------------------------------------------------

def add_unary(op: str, name: str, x: np.ndarray, want, tol: Tolerance, tag: str) -> None:  # noqa: ANN001
    body = op_func(f"mlvm.{op}", [x], [(x.shape, x.dtype)])
    SUITE.add(f"{op}-{name}-{tag}", body, [x], want, tol)


for k, name in enumerate(NUMERIC):
    e = ELEMS[name]
    x = specials(name)
    if e.is_int:
        add_unary("neg", name, x, lambda v: wrap([-i for i in _py(v)], v.dtype), EXACT, "edges")
        add_unary("abs", name, x, lambda v: wrap([abs(i) for i in _py(v)], v.dtype), EXACT, "edges")
        add_unary("not", name, x, lambda v: wrap([~i for i in _py(v)], v.dtype), EXACT, "edges")
    else:
        add_unary("neg", name, x, lambda v: -v, EXACT, "edges")
        add_unary("abs", name, x, lambda v: np.abs(v), EXACT, "edges")

add_unary("not", "i1", np.array([True, False, True]), lambda v: ~v, EXACT, "3")

UNARY_F = {
    "exp": (np.exp, 3), "log": (np.log, 2), "sqrt": (np.sqrt, 0.5), "tanh": (np.tanh, 3),
    "sigmoid": (lambda v: 1 / (1 + np.exp(-v)), 3), "floor": (np.floor, 0), "ceil": (np.ceil, 0),
    "sin": (np.sin, 2), "cos": (np.cos, 2), "relu": (lambda v: np.maximum(v, 0), 0),
    "erf": (np.vectorize(__import__("math").erf, otypes=[np.float64]), 3),
}

for k, name in enumerate(("f16", "bf16", "f64")):
    g = rng(500 + k)
    dt = ELEMS[name].dtype
    for op, (fn, ulps) in UNARY_F.items():
        lo = 0.0 if op in ("log", "sqrt") else -6.0
        x = g.uniform(lo, 6.0, size=(7, 13)).astype(dt)
        x.reshape(-1)[:4] = np.array([0.0, 1.0, np.inf, np.nan], dtype=np.float64).astype(dt)

        def want(v: np.ndarray, fn=fn) -> np.ndarray:  # noqa: ANN001
            with np.errstate(all="ignore"):
                return np.asarray(fn(v.astype(np.float64))).astype(v.dtype)

        # f64 against libm / numpy; f16 and bf16 round an f32 result once more.
        tol = EXACT if ulps == 0 else Ulps(ulps if name == "f64" else 1)
        add_unary(op, name, x, want, tol, "7x13")


# -- select -----------------------------------------------------------------

for k, name in enumerate(ALL):
    g = rng(600 + k)
    c = g.integers(0, 2, size=(3, 1, 5)).astype(bool)
    a, b = data(name, g, (7, 1)), data(name, g, (5,))
    out = np.broadcast_shapes(c.shape, a.shape, b.shape)
    SUITE.add(f"select-{name}-3x1x5-7x1-5", op_func("mlvm.select", [c, a, b], [(out, a.dtype)]),
              [c, a, b], lambda cc, aa, bb: np.where(cc, aa, bb))


# -- data movement ------------------------------------------------------------

def _mlir_list(vals) -> str:  # noqa: ANN001
    return "array<i64: " + ", ".join(str(v) for v in vals) + ">"


for k, name in enumerate(ALL):
    g = rng(700 + k)
    x = data(name, g, (3, 5, 7))
    dt = x.dtype
    SUITE.add(f"transpose-{name}", op_func("mlvm.transpose", [x], [((7, 3, 5), dt)],
              {"perm": _mlir_list([2, 0, 1])}), [x], lambda v: np.transpose(v, (2, 0, 1)))
    SUITE.add(f"slice-{name}", op_func("mlvm.slice", [x], [((2, 2, 4), dt)],
              {"start": _mlir_list([1, 4, 6]), "stride": _mlir_list([1, -3, -2])}),
              [x], lambda v: v[1:3, 4::-3, 6::-2])
    y = data(name, g, (3, 2, 7))
    SUITE.add(f"concat-{name}", op_func("mlvm.concat", [x, y], [((3, 7, 7), dt)], {"axis": "1 : i64"}),
              [x, y], lambda p, q: np.concatenate([p, q], axis=1))
    z = data(name, g, (5, 1))
    SUITE.add(f"broadcast_to-{name}", op_func("mlvm.broadcast_to", [z], [((2, 5, 3), dt)]),
              [z], lambda v: np.broadcast_to(v, (2, 5, 3)).copy())
    SUITE.add(f"reshape-{name}", op_func("mlvm.reshape", [x], [((15, 7), dt)]),
              [x], lambda v: v.reshape(15, 7))
    # A chain fused into one loop over a broadcast operand: select(eq(x, y), x, y).
    body = (
        f"func.func @FUNC(%a: {ttype((3, 5, 7), dt)}, %b: {ttype((5, 1), dt)}) -> {ttype((3, 5, 7), dt)} {{\n"
        f'  %m = "mlvm.ne"(%a, %b) : ({ttype((3, 5, 7), dt)}, {ttype((5, 1), dt)}) -> {ttype((3, 5, 7), "i1")}\n'
        f'  %r = "mlvm.select"(%m, %a, %b) : ({ttype((3, 5, 7), "i1")}, {ttype((3, 5, 7), dt)}, '
        f"{ttype((5, 1), dt)}) -> {ttype((3, 5, 7), dt)}\n"
        f"  func.return %r : {ttype((3, 5, 7), dt)}\n}}"
    )
    SUITE.add(f"chain-ne-select-{name}", body, [x, z], lambda p, q: np.where(p != q, p, q))


# -- reductions ---------------------------------------------------------------

def _int_reduce(kind: str, axes: tuple[int, ...]):  # noqa: ANN202
    def expect(v: np.ndarray) -> np.ndarray:
        big = v.astype(object)
        if kind in ("max", "min"):
            out = (np.max if kind == "max" else np.min)(big, axis=axes)
        else:
            out = np.sum(big, axis=axes) if kind != "prod" else np.prod(big, axis=axes)
            out = np.asarray(out, dtype=object)
            if kind == "mean":  # the wrapped sum, truncated
                count = int(np.prod([v.shape[a] for a in axes]))
                out = np.vectorize(lambda t: _tdiv(int(wrap([int(t)], v.dtype)[0]), count, v.dtype),
                                   otypes=[object])(out)
        flat = [int(t) for t in np.asarray(out, dtype=object).reshape(-1)]
        return wrap(flat, v.dtype).reshape(np.shape(out))
    return expect


def _float_reduce(kind: str, axes: tuple[int, ...]):  # noqa: ANN202
    def expect(v: np.ndarray) -> np.ndarray:
        fn = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min}[kind]
        with np.errstate(all="ignore"):
            return np.asarray(fn(v.astype(np.float64), axis=axes)).astype(v.dtype)
    return expect


for k, name in enumerate(NUMERIC):
    g = rng(800 + k)
    e = ELEMS[name]
    for kind in ("sum", "mean", "prod", "max", "min"):
        for shape, axes in (((3, 5, 7), (1,)), ((3, 5, 7), (0, 2)), ((13,), (0,))):
            x = data(name, g, shape, small=kind == "prod")
            if e.is_float and kind in ("max", "min") and shape == (13,):
                x[4] = np.nan
            out = tuple(d for i, d in enumerate(shape) if i not in axes)
            body = op_func("mlvm.reduce", [x], [(out, x.dtype)],
                           {"kind": f'"{kind}"', "axes": _mlir_list(axes)})
            if e.is_int:
                SUITE.add(f"reduce-{kind}-{name}-{len(shape)}d-{len(axes)}", body, [x], _int_reduce(kind, axes))
            else:
                exact = kind in ("max", "min")
                tol = EXACT if exact else Ulps(2 if name != "f64" else 64)
                SUITE.add(f"reduce-{kind}-{name}-{len(shape)}d-{len(axes)}", body, [x],
                          _float_reduce(kind, axes) if exact else None, tol)
                if not exact and name != "f32":  # f32 sums: test_reduce.py, with a sum bound
                    SUITE.add(f"reduce-{kind}-{name}-{len(shape)}d-{len(axes)}-f64", body, [x],
                              _float_reduce(kind, axes), Ulps(3 if name != "f64" else 64))
    for op, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
        sp = specials(name)
        x = np.concatenate([sp, data(name, g, (5 * 7 - sp.size,), True)])
        x = x[g.permutation(x.size)].reshape(5, 7)
        for res in ("i32", "i64"):
            want = (lambda f, r: lambda v: f(v.astype(np.float64) if v.dtype == BF16 else v, axis=1)
                    .astype(ELEMS[r].dtype))(fn, res)
            SUITE.add(f"{op}-{name}-{res}", op_func(f"mlvm.{op}", [x], [((x.shape[0],), ELEMS[res].dtype)],
                      {"axis": "1 : i64"}), [x], want)


# -- indexing: gather, pad, cumsum, iota ---------------------------------------

def _take(axis: int):  # noqa: ANN202
    """numpy.take with negative indices from the end and zeros outside."""
    def expect(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
        n = x.shape[axis]
        out = np.zeros(x.shape[:axis] + idx.shape + x.shape[axis + 1:], x.dtype)
        for j, i in np.ndenumerate(idx):
            i = int(i) + (n if int(i) < 0 else 0)
            if 0 <= i < n:
                out[(slice(None),) * axis + j] = np.take(x, i, axis=axis)
        return out
    return expect


for k, name in enumerate(ALL):
    g = rng(900 + k)
    x = data(name, g, (3, 5, 2))
    for res in INDEX_TYPES:
        for axis, idx in ((1, np.array([[4, -1, 0], [5, -6, 2]])), (0, np.array(2)), (2, np.array([1, 1, 0, -2]))):
            ii = idx.astype(ELEMS[res].dtype)
            out = x.shape[:axis] + ii.shape + x.shape[axis + 1:]
            SUITE.add(f"gather-{name}-{res}-axis{axis}", op_func("mlvm.gather", [x, ii], [(out, x.dtype)],
                      {"axis": f"{axis} : i64"}), [x, ii], _take(axis))
    for mode in ("constant", "edge", "reflect"):
        pads = [1, 0, 1, 2, 1, 0] if mode != "constant" else [1, -1, 0, 0, 3, 2]
        r = x.ndim
        out = tuple(x.shape[d] + pads[d] + pads[r + d] for d in range(r))
        props = {"pads": _mlir_list(pads), "mode": f'"{mode}"'}
        if mode == "constant":
            props["value"] = "1.0 : f32"

        def want(v: np.ndarray, mode=mode, pads=pads) -> np.ndarray:  # noqa: ANN001
            r = v.ndim
            crop = tuple(slice(max(0, -pads[d]), v.shape[d] - max(0, -pads[r + d])) for d in range(r))
            width = [(max(0, pads[d]), max(0, pads[r + d])) for d in range(r)]
            if mode == "constant":
                return np.pad(v[crop], width, mode="constant", constant_values=np.ones((), v.dtype))
            return np.pad(v[crop], width, mode=mode)

        SUITE.add(f"pad-{name}-{mode}", op_func("mlvm.pad", [x], [(out, x.dtype)], props), [x], want)

def _take_along(axis: int):  # noqa: ANN202
    def expect(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
        out = np.zeros(idx.shape, x.dtype)
        n = x.shape[axis]
        for pos, i in np.ndenumerate(idx):
            i = int(i) + (n if int(i) < 0 else 0)
            if 0 <= i < n:
                src = list(pos)
                src[axis] = i
                out[pos] = x[tuple(src)]
        return out
    return expect


for k, name in enumerate(ALL):
    g = rng(980 + k)
    x = data(name, g, (3, 5, 2))
    for res in INDEX_TYPES:
        idx = np.array([[[4, -1], [0, 7], [-6, 2]], [[1, 1], [3, -5], [2, 0]]]).astype(ELEMS[res].dtype)  # 2x3x2
        SUITE.add(f"gather_elements-{name}-{res}", op_func("mlvm.gather_elements", [x, idx], [(idx.shape, x.dtype)],
                  {"axis": "1 : i64"}), [x, idx], _take_along(1))
    ii = np.array([[0, 3, -1], [5, -6, 2]], dtype=np.int64)
    on, off = (1.0, 0.0) if ELEMS[name].kind == "b" else (3.0, 1.0)

    def hot(v: np.ndarray, dt=ELEMS[name].dtype, on=on, off=off) -> np.ndarray:  # noqa: ANN001
        out = np.full((2, 4, 3), off, dtype=np.float64)
        for (a, c), i in np.ndenumerate(v):
            i = int(i) + (4 if int(i) < 0 else 0)
            if 0 <= i < 4:
                out[a, i, c] = on
        return out.astype(dt)

    SUITE.add(f"one_hot-{name}", op_func("mlvm.one_hot", [ii], [((2, 4, 3), ELEMS[name].dtype)],
              {"axis": "1 : i64", "on": f"{on:.1f} : f32", "off": f"{off:.1f} : f32"}), [ii], hot)

def _topk_rule(k: int, largest: bool):  # noqa: ANN202
    """Stable sort along axis 1 by value (largest first, or smallest), NaN
    last; the first k."""
    def expect(x: np.ndarray) -> list[np.ndarray]:
        vals = np.empty((x.shape[0], k), x.dtype)
        idx = np.empty((x.shape[0], k), np.int64)
        for r in range(x.shape[0]):
            row = [float(v) if ELEMS_BY_DTYPE[x.dtype] in FLOATS else int(v) for v in x[r]]
            order = sorted(range(len(row)), key=lambda j: (row[j] != row[j], (-row[j] if largest else row[j])
                                                            if row[j] == row[j] else 0, j))
            idx[r] = order[:k]
            vals[r] = x[r, order[:k]]
        return [vals, idx]
    return expect


for k, name in enumerate(NUMERIC):
    g = rng(990 + k)
    e = ELEMS[name]
    x = data(name, g, (4, 9), small=True)  # small values: many ties
    if e.is_float:
        x[1, 2] = x[1, 5] = np.nan
        x[2, 0] = np.inf
    for largest in (True, False):
        for kk in (1, 4, 9):
            body = (f"func.func @FUNC(%x: {ttype((4, 9), e.dtype)}) -> ({ttype((4, kk), e.dtype)}, {ttype((4, kk), 'i64')}) {{\n"
                    f'  %v, %i = "mlvm.topk"(%x) <{{axis = 1 : i64, largest = {str(largest).lower()}}}> : '
                    f"({ttype((4, 9), e.dtype)}) -> ({ttype((4, kk), e.dtype)}, {ttype((4, kk), 'i64')})\n"
                    f"  func.return %v, %i : {ttype((4, kk), e.dtype)}, {ttype((4, kk), 'i64')}\n}}")
            SUITE.add(f"topk-{name}-{'largest' if largest else 'smallest'}-k{kk}", body, [x], _topk_rule(kk, largest))

def _scatter_rule(axis: int, kind: str):  # noqa: ANN202
    """Row-major updates; a repeated index: the last wins, or all combine."""
    def expect(x: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
        out = x.copy()
        n = x.shape[axis]
        floaty = ELEMS_BY_DTYPE[x.dtype] in FLOATS
        for pos, i in np.ndenumerate(idx):
            i = int(i) + (n if int(i) < 0 else 0)
            if not 0 <= i < n:
                continue
            dst = list(pos)
            dst[axis] = i
            t = tuple(dst)
            if kind == "none":
                out[t] = upd[pos]
                continue
            if floaty:
                a, u = float(out[t]), float(upd[pos])
                r = {"add": a + u, "mul": a * u, "max": u if (u > a or u != u) else a,
                     "min": u if (u < a or u != u) else a}[kind]
                out[t] = np.array(np.float32(r) if x.dtype != np.float64 else r).astype(x.dtype)
            else:
                a, u = int(out[t]), int(upd[pos])
                r = {"add": a + u, "mul": a * u, "max": max(a, u), "min": min(a, u)}[kind]
                out[t] = wrap([r], x.dtype)[0]
        return out
    return expect


for k, name in enumerate(ALL):
    g = rng(1100 + k)
    x = data(name, g, (3, 5, 2), small=True)
    idx = np.array([[[4, -1], [0, 4], [9, 0]], [[1, 1], [3, -5], [2, 2]]], dtype=np.int64)  # 2x3x2, repeats
    upd = data(name, g, idx.shape, small=True)
    for kind in ("none", "add", "mul", "max", "min") if name != "i1" else ("none",):
        SUITE.add(f"scatter_elements-{name}-{kind}", op_func(
            "mlvm.scatter_elements", [x, idx, upd], [(x.shape, x.dtype)],
            {"axis": "1 : i64", "reduction": f'"{kind}"'}), [x, idx, upd], _scatter_rule(1, kind))

for k, name in enumerate(NUMERIC):
    g = rng(950 + k)
    e = ELEMS[name]
    x = data(name, g, (4, 7), small=True)
    for excl in (False, True):
        for rev in (False, True):
            props = {"axis": "1 : i64", "exclusive": str(excl).lower(), "reverse": str(rev).lower()}

            def want(v: np.ndarray, excl=excl, rev=rev, e=e) -> np.ndarray:  # noqa: ANN001
                w = np.flip(v, 1) if rev else v
                vals = [[0] * w.shape[1] for _ in range(w.shape[0])]
                for i in range(w.shape[0]):
                    acc = 0
                    for j in range(w.shape[1]):
                        t = int(w[i, j]) if e.is_int else float(w[i, j])
                        if excl:
                            vals[i][j] = acc
                            acc += t
                        else:
                            acc += t
                            vals[i][j] = acc
                out = wrap([a for row in vals for a in row], v.dtype).reshape(w.shape) if e.is_int else \
                    np.array(vals, dtype=np.float64).astype(v.dtype)
                return np.ascontiguousarray(np.flip(out, 1) if rev else out)

            SUITE.add(f"cumsum-{name}-{'ex' if excl else 'in'}-{'rev' if rev else 'fwd'}",
                      op_func("mlvm.cumsum", [x], [(x.shape, x.dtype)], props), [x], want,
                      EXACT if e.is_int else Ulps(2 if name != "f32" else 8))
    shape = (3, 4)
    start, step = (-3, 2) if e.kind == "i" else (1, 3)
    body = (f"func.func @FUNC() -> {ttype(shape, e.dtype)} {{\n"
            f'  %r = "mlvm.iota"() <{{axis = 1 : i64, start = {float(start):.1f} : f32, step = {float(step):.1f} : f32}}> : () -> {ttype(shape, e.dtype)}\n'
            f"  func.return %r : {ttype(shape, e.dtype)}\n}}")
    SUITE.add(f"iota-{name}", body, [], (lambda st, sp, dt: lambda: np.broadcast_to(
        (st + sp * np.arange(4)).astype(dt), shape).copy())(start, step, e.dtype))


# -- cast ---------------------------------------------------------------------

def cast_values(src: str) -> np.ndarray:
    e = ELEMS[src]
    if e.is_float:
        extra = np.array([0.5, -0.5, 1.5, -1.5, 127.9, 128.0, -128.5, 255.5, 256.0, -129.0,
                          32767.5, 65504.0, 65520.0, 2.0**31, -2.0**31, 2.0**31 + 2**9, 2.0**63,
                          -2.0**63, 2.0**64, 1e30, -1e30, 3.0e38, 1.0 + 2.0**-9, 1.0 + 2.0**-8 + 2.0**-20],
                         dtype=np.float64)
        with np.errstate(over="ignore"):  # 1e30 is inf in f16
            return np.concatenate([specials(src), extra.astype(e.dtype)])
    return specials(src)


for src in ALL:
    x = cast_values(src)
    for dst in ALL:
        if src == dst:
            continue
        dt = ELEMS[dst].dtype
        SUITE.add(f"cast-{src}-{dst}", op_func("mlvm.cast", [x], [(x.shape, dt)]), [x])


@pytest.mark.parametrize("case,variant", SUITE.params_list())
def test_elements(case, variant: str) -> None:  # noqa: ANN001
    SUITE.check(case, variant)


def _cast(x: np.ndarray, dst: str) -> np.ndarray:
    case = next(c for c in SUITE.cases
                if c.id == f"cast-{ELEMS_BY_DTYPE[x.dtype]}-{dst}" and np.array_equal(c.inputs[0], x, equal_nan=True))
    return SUITE.compiled(case)[0]


ELEMS_BY_DTYPE = {e.dtype: e.name for e in ELEMS.values()}


def test_cast_rules_by_hand() -> None:
    """The documented cast rules, value by value, on the compiled code."""
    f32 = cast_values("f32")

    def table(dst: str) -> dict[float, object]:
        return {float(np.float32(k)): v for k, v in zip(f32.tolist(), _cast(f32, dst).tolist())}

    got = table("i8")
    assert got[float(np.float32(127.9))] == 127 and got[128.0] == 127 and got[-128.5] == -128 and got[-129.0] == -128
    assert got[1.5] == 1 and got[-1.5] == -1 and got[np.inf] == 127 and got[-np.inf] == -128
    nan_at = np.flatnonzero(np.isnan(f32))
    assert all(_cast(f32, d)[nan_at].tolist() == [0] * len(nan_at) for d in ("i8", "ui32", "i64"))
    u8 = table("ui8")
    assert u8[-1.0] == 0 and u8[255.5] == 255 and u8[256.0] == 255 and u8[-0.5] == 0
    i32 = table("i32")
    assert i32[2.0**31] == 2**31 - 1 and i32[-2.0**31] == -(2**31) and i32[float(np.float32(1e30))] == 2**31 - 1
    b = _cast(f32, "i1")
    assert not b[f32 == 0].any() and b[nan_at].all() and b[f32 == np.float32(0.1)].all()
    i64 = specials("i64")
    w8 = _cast(i64, "i8")
    assert w8.tolist() == [((v + 128) % 256) - 128 for v in i64.tolist()]
    # f64 -> bf16 rounds once: 1 + 2^-8 + 2^-20 is above the tie, so it rounds up
    # (through f32 it would land on the tie and round to even, down to 1.0).
    f64 = cast_values("f64")
    at = int(np.flatnonzero(f64 == 1.0 + 2.0**-8 + 2.0**-20)[0])
    assert float(_cast(f64, "bf16")[at]) == 1.0 + 2.0**-7


def test_every_type_and_op_has_cases() -> None:
    ids = {c.id for c in SUITE.cases}
    for name in NUMERIC:
        for op in ARITH:
            assert f"{op}-{name}-edges" in ids
    for name in ALL:
        for op in (*CMP, "select", "transpose", "slice", "concat", "broadcast_to", "reshape"):
            assert any(i == f"{op}-{name}" or i.startswith(f"{op}-{name}-") for i in ids), (op, name)
    assert sum(i.startswith("cast-") for i in ids) == len(ALL) * (len(ALL) - 1)
    assert FLOATS == ("f16", "bf16", "f32", "f64")
