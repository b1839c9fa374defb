"""mlvm.eager: single ops on numpy arrays through the C runtime.

Each case runs one op three ways: eagerly (`mlvm.eager`, which builds the
iteration descriptors at run time in C), as generated C (`mlvm.compile` of a
one-op function, descriptors computed by the compiler), and through the op's
numpy `reference`. Eager and generated C call the same kernels with the same
collapsed iterations, so they must agree bit for bit; against the reference
the tolerances of tests/harness.py apply (exact for single IEEE operations,
relative 1e-5 for libm functions, and for accumulations `1e-5 * scale`,
where scale is the sum of the absolute values of the terms accumulated).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlvm import eager  # noqa: E402
from harness import (  # noqa: E402
    BITS,
    EXACT,
    F32,
    I32,
    REL,
    TINY,
    Bound,
    Case,
    Suite,
    Tolerance,
    array_attr,
    bool_attr,
    f32_attr,
    f32_data,
    i64_attr,
    op_func,
    rng,
    str_attr,
    sum_bound,
)

SUITE = Suite("eager")


@dataclass
class EagerCase:
    case: Case
    op: str  # the eager op (the C table's name)
    run: Callable[..., list[np.ndarray]]
    tol: Tolerance | Callable[..., list[Any]]


CASES: list[EagerCase] = []


def add(id: str, op: str, mlir_op: str, inputs: list[np.ndarray],
        results: list[tuple[tuple[int, ...], Any]], props: dict[str, str] | None,
        run: Callable[..., Any], tol: Tolerance | Callable[..., list[Any]] = EXACT) -> None:
    body = op_func(mlir_op, inputs, results, props)
    case = SUITE.add(id, body, inputs)

    def run_list(*xs: np.ndarray, checks: bool = True) -> list[np.ndarray]:
        out = run(*xs, checks=checks)
        return list(out) if isinstance(out, tuple) else [out]

    CASES.append(EagerCase(case, op, run_list, tol))


def small_ints(g: np.random.Generator, shape: tuple[int, ...], dtype: Any = F32) -> np.ndarray:
    """Values in -3..3, so eq / max / min see ties."""
    return g.integers(-3, 4, size=shape).astype(dtype)


# -- elementwise binary ------------------------------------------------------

BINARY = ["add", "sub", "mul", "div", "max", "min", "eq", "cmpl"]
PAIRS = [((3, 4), (3, 4)), ((2, 1, 3), (4, 1)), ((5,), ()), ((), (2, 3)), ((7, 1), (1, 13))]

for i, op in enumerate(BINARY):
    for j, (sa, sb) in enumerate(PAIRS):
        g = rng(100 * i + j)
        a, b = f32_data(g, sa), f32_data(g, sb)
        if op in ("eq", "max", "min"):
            a, b = small_ints(g, sa), small_ints(g, sb)
        out = np.broadcast_shapes(sa, sb)
        fn = getattr(eager, op)
        add(f"{op}-f32-{j}", op, f"mlvm.{op}", [a, b], [(out, F32)], None, fn)
    if op != "div":
        g = rng(1000 + i)
        a, b = small_ints(g, (4, 1, 3), I32), small_ints(g, (5, 1), I32)
        res = F32 if op in ("eq", "cmpl") else I32
        add(f"{op}-i32", op, f"mlvm.{op}", [a, b], [((4, 5, 3), res)], None, getattr(eager, op))

# -- elementwise unary -------------------------------------------------------

UNARY = {"neg": EXACT, "exp": REL, "log": REL, "sqrt": EXACT, "tanh": REL,
         "sigmoid": REL, "relu": EXACT, "erf": REL, "abs": EXACT, "floor": EXACT, "ceil": EXACT,
         "sin": REL, "cos": REL}
for i, (op, tol) in enumerate(UNARY.items()):
    lo = 1e-3 if op in ("log", "sqrt") else -6.0
    x = f32_data(rng(2000 + i), (3, 7), lo, 6.0)
    add(f"{op}", op, f"mlvm.{op}", [x], [((3, 7), F32)], None, getattr(eager, op), tol)

for eps in (0.0, 1e-5):
    x = f32_data(rng(2100), (2, 9), 1e-2, 10.0)
    add(f"rsqrt-{eps}", "rsqrt", "mlvm.rsqrt", [x], [((2, 9), F32)],
        {"eps": f32_attr(eps)}, lambda x, eps=eps, checks=True: eager.rsqrt(x, eps=eps, checks=checks), REL)


# -- accumulations -----------------------------------------------------------

def matmul_bound(ta: bool, tb: bool) -> Callable[..., list[Any]]:
    def expect(a: np.ndarray, b: np.ndarray) -> list[Any]:
        a64 = np.swapaxes(a, -1, -2).astype(np.float64) if ta else a.astype(np.float64)
        b64 = np.swapaxes(b, -1, -2).astype(np.float64) if tb else b.astype(np.float64)
        return [sum_bound(a64 @ b64, np.abs(a64) @ np.abs(b64))]
    return expect


MATMULS = [
    ((4, 5), (5, 3), False, False),
    ((5, 4), (5, 3), True, False),
    ((4, 5), (3, 5), False, True),
    ((5, 4), (3, 5), True, True),
    ((2, 1, 4, 5), (3, 5, 2), False, False),
    ((3, 2, 6), (3, 7, 6), False, True),
    ((9, 33), (33, 17), False, False),
]
for i, (sa, sb, ta, tb) in enumerate(MATMULS):
    g = rng(3000 + i)
    a, b = f32_data(g, sa), f32_data(g, sb)
    m = sa[-1] if ta else sa[-2]
    n = sb[-2] if tb else sb[-1]
    out = (*np.broadcast_shapes(sa[:-2], sb[:-2]), m, n)
    add(f"matmul-{i}", "matmul", "mlvm.matmul", [a, b], [(out, F32)],
        {"transpose_lhs": bool_attr(ta), "transpose_rhs": bool_attr(tb)},
        lambda a, b, ta=ta, tb=tb, checks=True: eager.matmul(
            a, b, transpose_lhs=ta, transpose_rhs=tb, checks=checks),
        matmul_bound(ta, tb))


def reduce_bound(kind: str, axes: tuple[int, ...], out: tuple[int, ...]) -> Callable[..., list[Any]]:
    def expect(x: np.ndarray) -> list[Any]:
        x64 = x.astype(np.float64)
        ax = tuple(a % x.ndim for a in axes)
        count = int(np.prod([x.shape[a] for a in ax])) if ax else 1
        if kind == "max":
            return [np.asarray(np.max(x, axis=ax) if ax else x).reshape(out)]
        total = x64.sum(axis=ax).reshape(out)
        scale = np.abs(x64).sum(axis=ax).reshape(out)
        if kind == "sum":
            return [sum_bound(total, scale)]
        return [sum_bound(total / count, scale / count)]
    return expect


REDUCES = [((3, 4, 5), (1,)), ((3, 4, 5), (0, 2)), ((3, 4, 5), (-1,)), ((6, 7), (0, 1)),
           ((2, 1, 9), (2,)), ((5,), ())]
for kind in ("sum", "max", "mean"):
    for i, (shape, axes) in enumerate(REDUCES):
        for keep in (False, True):
            x = f32_data(rng(4000 + i), shape)
            ax = sorted(a % len(shape) for a in axes)
            out = tuple(1 if d in ax else s for d, s in enumerate(shape)) if keep else \
                tuple(s for d, s in enumerate(shape) if d not in ax)
            add(f"reduce-{kind}-{i}-{'keep' if keep else 'drop'}", f"reduce_{kind}",
                "mlvm.reduce", [x], [(out, F32)],
                {"kind": str_attr(kind), "axes": array_attr(axes), "keepdims": bool_attr(keep)},
                lambda x, kind=kind, axes=axes, keep=keep, checks=True: eager.reduce(
                    x, kind, axes, keep, checks=checks),
                reduce_bound(kind, axes, out))

for i, (shape, axis, keep) in enumerate([((4, 7), 1, False), ((4, 7), 0, False),
                                         ((3, 5, 2), -2, True), ((6,), 0, False)]):
    x = small_ints(rng(5000 + i), shape)
    dims = list(shape)
    if keep:
        dims[axis % len(shape)] = 1
    else:
        del dims[axis % len(shape)]
    add(f"argmax-{i}", "argmax", "mlvm.argmax", [x], [(tuple(dims), I32)],
        {"axis": i64_attr(axis)},
        lambda x, axis=axis, keep=keep, checks=True: eager.argmax(x, axis, keep, checks))


def xent_bound(y: np.ndarray, x: np.ndarray) -> list[Any]:
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    m = x64.max(axis=-1, keepdims=True)
    e = np.exp(x64 - m)
    lse = np.log(e.sum(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    loss = -(y64 * (x64 - m - lse)).sum(axis=-1)
    scale = (np.abs(y64) * (np.abs(x64 - m) + lse + 1)).sum(axis=-1)
    return [sum_bound(loss, scale), sum_bound(p - y64, p + np.abs(y64))]


for i, shape in enumerate([(4, 10), (2, 3, 5)]):
    g = rng(6000 + i)
    logits = f32_data(g, shape, -5, 5)
    labels = np.eye(shape[-1], dtype=np.float32)[g.integers(0, shape[-1], size=shape[:-1])]
    add(f"softmax_xent-{i}", "softmax_xent", "mlvm.softmax_xent", [labels, logits],
        [(shape[:-1], F32), (shape, F32)], None, eager.softmax_xent, xent_bound)

# -- data movement -----------------------------------------------------------

x = f32_data(rng(7000), (3, 4), -50, 50)
add("cast-f32-i32", "cast", "mlvm.cast", [x], [((3, 4), I32)], None,
    lambda x, checks=True: eager.cast(x, np.int32, checks))
add("cast-i32-f32", "cast", "mlvm.cast", [small_ints(rng(7001), (5,), I32)], [((5,), F32)],
    None, lambda x, checks=True: eager.cast(x, np.float32, checks))
add("cast-f32-f32", "cast", "mlvm.cast", [x], [((3, 4), F32)], None,
    lambda x, checks=True: eager.cast(x, np.float32, checks))
add("reshape-f32", "reshape", "mlvm.reshape", [f32_data(rng(7002), (2, 3, 4))],
    [((6, 4), F32)], None, lambda x, checks=True: eager.reshape(x, (6, -1), checks))
add("reshape-i32", "reshape", "mlvm.reshape", [small_ints(rng(7003), (6,), I32)],
    [((3, 2), I32)], None, lambda x, checks=True: eager.reshape(x, (3, 2), checks))
add("broadcast_to-0", "broadcast_to", "mlvm.broadcast_to", [f32_data(rng(7004), (3, 1))],
    [((2, 3, 4), F32)], None, lambda x, checks=True: eager.broadcast_to(x, (2, 3, 4), checks))
add("broadcast_to-i32", "broadcast_to", "mlvm.broadcast_to",
    [small_ints(rng(7005), (5,), I32)], [((2, 5), I32)], None,
    lambda x, checks=True: eager.broadcast_to(x, (2, 5), checks))
for v, dt in ((2.5, F32), (-0.0, F32), (7.0, I32)):
    add(f"fill-{v}-{dt}", "fill", "mlvm.fill", [], [((2, 3), dt)], {"value": f32_attr(v)},
        lambda v=v, dt=dt, checks=True: eager.fill((2, 3), v, dt, checks), BITS if dt == F32 else EXACT)


# -- neural-network ops ------------------------------------------------------

for i, (shape, perm, dt) in enumerate([((2, 3, 4), (2, 0, 1), F32), ((3, 1, 5), (1, 2, 0), F32),
                                        ((4, 6), (1, 0), I32), ((5,), (0,), F32),
                                        ((33, 65), (1, 0), F32), ((2, 3, 4, 5), (0, 3, 1, 2), F32)]):
    x = small_ints(rng(8000 + i), shape, dt) if dt == I32 else f32_data(rng(8000 + i), shape)
    add(f"transpose-{i}", "transpose", "mlvm.transpose", [x],
        [(tuple(shape[p] for p in perm), dt)], {"perm": array_attr(perm)},
        lambda x, perm=perm, checks=True: eager.transpose(x, perm, checks))

SLICES = [((5, 7), (1, 2), (2, 1), (2, 4), F32), ((6, 5), (5, 4), (-2, -1), (3, 5), F32),
          ((3, 4, 5), (0, 1, 4), (1, 2, -2), (3, 2, 3), I32), ((4, 3), (1, 0), None, (2, 3), F32),
          ((9,), (8,), (-1,), (9,), F32)]
for i, (shape, start, stride, sizes, dt) in enumerate(SLICES):
    x = small_ints(rng(8100 + i), shape, dt) if dt == I32 else f32_data(rng(8100 + i), shape)
    props = {"start": array_attr(start)}
    if stride is not None:
        props["stride"] = array_attr(stride)
    add(f"slice-{i}", "slice", "mlvm.slice", [x], [(sizes, dt)], props,
        lambda x, start=start, sizes=sizes, stride=stride, checks=True: eager.slice(
            x, start, sizes, stride, checks))

CONCATS = [([(2, 3), (2, 4)], 1, F32), ([(1, 3), (2, 3), (3, 3)], 0, F32),
           ([(2, 2, 1), (2, 2, 3)], -1, I32), ([(2, 0, 3), (2, 2, 3)], 1, F32)]
for i, (shapes, axis, dt) in enumerate(CONCATS):
    g = rng(8200 + i)
    xs = [small_ints(g, s, dt) if dt == I32 else f32_data(g, s) for s in shapes]
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    add(f"concat-{i}", "concat", "mlvm.concat", xs, [(tuple(out), dt)], {"axis": i64_attr(axis)},
        lambda *xs, axis=axis, checks=True: eager.concat(xs, axis, checks))


def softmax_bound(axis: int) -> Callable[..., list[Any]]:
    def expect(x: np.ndarray) -> list[Any]:
        x64 = x.astype(np.float64)
        e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
        p = e / e.sum(axis=axis, keepdims=True)
        return [sum_bound(p, p)]
    return expect


for i, (shape, axis) in enumerate([((3, 7), -1), ((4, 5, 6), 1), ((6,), 0), ((2, 3, 4), 0)]):
    add(f"softmax-{i}", "softmax", "mlvm.softmax", [f32_data(rng(8300 + i), shape)],
        [(shape, F32)], {"axis": i64_attr(axis)},
        lambda x, axis=axis, checks=True: eager.softmax(x, axis, checks), softmax_bound(axis))


def layer_norm_bound(axes: tuple[int, ...], eps: float) -> Callable[..., list[Any]]:
    """|err| <= 1e-5 (|g| (|v0| + max|x| / s) + |b|), as tests/ops/test_nn_norm.py."""
    def expect(x: np.ndarray, *gb: np.ndarray) -> list[Any]:
        ax = tuple(a % x.ndim for a in axes)
        x64 = x.astype(np.float64)
        m = x64.mean(axis=ax, keepdims=True)
        s = np.sqrt(((x64 - m) ** 2).mean(axis=ax, keepdims=True) + np.float64(np.float32(eps)))
        v0 = (x64 - m) / s
        big = np.abs(x64).max(axis=ax, keepdims=True)
        gm, bt = np.float64(1), np.float64(0)
        if gb:
            full = tuple(n if i in ax else 1 for i, n in enumerate(x.shape))
            gm, bt = gb[0].astype(np.float64).reshape(full), gb[1].astype(np.float64).reshape(full)
        err = 1e-5 * (np.abs(gm) * (np.abs(v0) + big / s) + np.abs(bt))
        return [Bound(gm * v0 + bt, err + TINY)]
    return expect


LAYER_NORMS = [((4, 16), (-1,), 1e-5, True), ((3, 4, 5), (0, 2), 1e-3, False),
               ((2, 5, 7, 3), (1,), 1e-5, True), ((2, 3, 4), (1, 2), 1e-5, True),
               ((3, 13), None, None, False), ((5, 2, 6), (2, 0), 1e-5, True)]
for i, (shape, axes, eps, affine) in enumerate(LAYER_NORMS):
    g = rng(8400 + i)
    x = f32_data(g, shape)
    ax = axes if axes is not None else (-1,)
    e = eps if eps is not None else 1e-5
    inputs = [x]
    if affine:
        norm = tuple(shape[a % len(shape)] for a in sorted(a % len(shape) for a in ax))
        inputs += [f32_data(g, norm, -2, 2), f32_data(g, norm, -1, 1)]
    props = {}
    if axes is not None:
        props["axes"] = array_attr(axes)
    if eps is not None:
        props["eps"] = f32_attr(eps)
    add(f"layer_norm-{i}", "layer_norm", "mlvm.layer_norm", inputs, [(shape, F32)], props,
        lambda x, *gb, ax=ax, e=e, checks=True: eager.layer_norm(
            x, *(gb or (None, None)), axes=ax, eps=e, checks=checks),
        layer_norm_bound(ax, e))


def gelu_bound(mode: str) -> Callable[..., list[Any]]:
    """As tests/ops/test_nn_norm.py: float64 gelu and its error bound."""
    def expect(x: np.ndarray) -> list[Any]:
        x64 = x.astype(np.float64)
        with np.errstate(all="ignore"):
            if mode == "tanh":
                u = np.sqrt(2.0 / np.pi) * (x64 + 0.044715 * x64**3)
                v = x64 / (1.0 + np.exp(-2.0 * u))
                err = 1e-6 * (4.0 + np.minimum(np.abs(2 * u), 200.0)) * np.abs(v)
            else:
                erf = np.vectorize(__import__("math").erf, otypes=[np.float64])
                v = 0.5 * x64 * (1.0 + erf(x64 / np.sqrt(2.0)))
                err = 1e-6 * (np.abs(x64) + np.abs(v))
        return [Bound(v, err + TINY)]
    return expect


for i, mode in enumerate(["tanh", "none", None]):
    x = f32_data(rng(8500 + i), (3, 37), -6, 6)
    m = mode or "none"
    add(f"gelu-{m}-{i}", "gelu", "mlvm.gelu", [x], [((3, 37), F32)],
        {} if mode is None else {"approximate": str_attr(mode)},
        lambda x, m=m, checks=True: eager.gelu(x, m, checks), gelu_bound(m))


def window_out(n: int, pads: int, k: int, s: int, d: int = 1) -> int:
    return (n + pads - d * (k - 1) - 1) // s + 1


def conv64(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, s: tuple[int, int],
           p: tuple[int, ...], d: tuple[int, int], groups: int) -> np.ndarray:
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = window_out(h, p[0] + p[2], kh, s[0], d[0]), window_out(wd, p[1] + p[3], kw, s[1], d[1])
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    wg = w.reshape(groups, o // groups, cg, kh, kw)
    out = np.zeros((n, groups, o // groups, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * d[0]: i * d[0] + s[0] * (oh - 1) + 1: s[0],
                       j * d[1]: j * d[1] + s[1] * (ow - 1) + 1: s[1]]
            out += np.einsum("ngchw,goc->ngohw", patch.reshape(n, groups, cg, oh, ow),
                             wg[:, :, :, i, j])
    res = out.reshape(n, o, oh, ow)
    return res + b.reshape(1, -1, 1, 1) if b is not None else res


def conv_bound(s: tuple[int, int], p: tuple[int, ...], d: tuple[int, int],
               groups: int) -> Callable[..., list[Any]]:
    def expect(x: np.ndarray, w: np.ndarray, *b: np.ndarray) -> list[Any]:
        x64, w64 = x.astype(np.float64), w.astype(np.float64)
        b64 = b[0].astype(np.float64) if b else None
        val = conv64(x64, w64, b64, s, p, d, groups)
        scale = conv64(np.abs(x64), np.abs(w64), None if b64 is None else np.abs(b64),
                       s, p, d, groups)
        return [sum_bound(val, scale)]
    return expect


CONVS = [((2, 3, 7, 5), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
         ((2, 4, 9, 11), (6, 2, 3, 2), (2, 3), (1, 0, 2, 1), (1, 1), 2, True),
         ((1, 6, 13, 7), (6, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 6, False),
         ((1, 2, 13, 13), (3, 2, 3, 3), (1, 1), (2, 2, 2, 2), (2, 3), 1, True),
         ((1, 9, 6, 6), (3, 3, 2, 2), (1, 2), (0, 1, 1, 0), (2, 1), 3, False)]
for i, (sx, sw, st, pad, dil, groups, bias) in enumerate(CONVS):
    g = rng(8600 + i)
    inputs = [f32_data(g, sx, -1, 1), f32_data(g, sw, -1, 1)]
    if bias:
        inputs.append(f32_data(g, (sw[0],), -1, 1))
    out = (sx[0], sw[0], window_out(sx[2], pad[0] + pad[2], sw[2], st[0], dil[0]),
           window_out(sx[3], pad[1] + pad[3], sw[3], st[1], dil[1]))
    add(f"conv2d-{i}", "conv2d", "mlvm.conv2d", inputs, [(out, F32)],
        {"strides": array_attr(st), "padding": array_attr(pad), "dilations": array_attr(dil),
         "groups": i64_attr(groups)},
        lambda x, w, *b, st=st, pad=pad, dil=dil, groups=groups, checks=True: eager.conv2d(
            x, w, b[0] if b else None, st, pad, dil, groups, checks),
        conv_bound(st, pad, dil, groups))


def avgpool_bound(window: tuple[int, int], s: tuple[int, int],
                  p: tuple[int, ...]) -> Callable[..., list[Any]]:
    def expect(x: np.ndarray) -> list[Any]:
        n, c, h, w = x.shape
        oh, ow = window_out(h, p[0] + p[2], window[0], s[0]), window_out(w, p[1] + p[3], window[1], s[1])
        val, scale = np.zeros((n, c, oh, ow)), np.zeros((n, c, oh, ow))
        x64 = x.astype(np.float64)
        for i in range(oh):
            for j in range(ow):
                h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
                win = x64[:, :, max(h0, 0):min(h0 + window[0], h), max(w0, 0):min(w0 + window[1], w)]
                val[:, :, i, j] = win.mean(axis=(2, 3))
                scale[:, :, i, j] = np.abs(win).mean(axis=(2, 3))
        return [sum_bound(val, scale)]
    return expect


POOLS = [("max", (2, 3, 8, 9), (2, 2), (2, 2), (0, 0, 0, 0)),
         ("max", (1, 2, 7, 5), (3, 3), (2, 1), (1, 1, 2, 0)),
         ("avg", (2, 3, 8, 9), (2, 2), (2, 2), (0, 0, 0, 0)),
         ("avg", (1, 2, 7, 5), (3, 2), (1, 2), (2, 1, 1, 1))]
for i, (kind, shape, window, st, pad) in enumerate(POOLS):
    out = (shape[0], shape[1], window_out(shape[2], pad[0] + pad[2], window[0], st[0]),
           window_out(shape[3], pad[1] + pad[3], window[1], st[1]))
    add(f"pool2d-{kind}-{i}", "pool2d", "mlvm.pool2d", [f32_data(rng(8700 + i), shape)],
        [(out, F32)], {"kind": str_attr(kind), "window": array_attr(window),
                       "strides": array_attr(st), "padding": array_attr(pad)},
        lambda x, kind=kind, window=window, st=st, pad=pad, checks=True: eager.pool2d(
            x, kind, window, st, pad, checks),
        EXACT if kind == "max" else avgpool_bound(window, st, pad))


# --------------------------------------------------------------------------

def check_reference(ec: EagerCase, got: list[np.ndarray]) -> None:
    ref = SUITE.reference(ec.case)
    assert len(got) == len(ref)
    if isinstance(ec.tol, Tolerance):
        for i, (g, r) in enumerate(zip(got, ref)):
            ec.tol.check(g, r, f"output {i}: eager vs op reference")
        return
    expected = ec.tol(*[x.copy() for x in ec.case.inputs])
    for i, (g, r, e) in enumerate(zip(got, ref, expected)):
        if isinstance(e, np.ndarray):
            EXACT.check(g, r, f"output {i}: eager vs op reference")
            continue
        e.check(g, f"output {i}: eager vs float64")
        type(e)(r.astype(np.float64), e.err).check(g, f"output {i}: eager vs op reference", 2.0)


@pytest.mark.parametrize("checks", [True, False], ids=["checks", "release"])
@pytest.mark.parametrize("ec", CASES, ids=[c.case.id for c in CASES])
def test_op(ec: EagerCase, checks: bool) -> None:
    got = ec.run(*[x.copy() for x in ec.case.inputs], checks=checks)
    # The generated C: same kernels, same collapsed iterations, same bits.
    compiled = SUITE.compiled(ec.case)
    assert len(got) == len(compiled)
    for i, (g, c) in enumerate(zip(got, compiled)):
        (BITS if g.dtype == F32 else EXACT).check(g, c, f"output {i}: eager vs generated C")
    check_reference(ec, got)


def test_every_op_is_covered() -> None:
    assert set(eager.op_names()) == {c.op for c in CASES}
    assert eager.op_names() == eager.op_names(checks=False)
