"""`mlvm.conv2d` and `mlvm.pool2d` against direct float64 loops.

Shapes from unit dims and small odd sizes; every option: strides,
asymmetric padding, dilations, groups (1, some, depthwise), with and
without bias, options left out (their defaults); pooling max and avg with
padding smaller than the window; 8-bit max pools of both signs.

Tolerances: conv2d and avg pooling are accumulations, checked against
float64 with `|err| <= 1e-5 * S` where S is the float64 sum of the
absolute values of the terms (|x| |w| over the window, |bias|; |x| / count
for the average). Max pooling is exact (NaN propagates, as in numpy.max).

Every case runs with the default pass pipeline, with plain kernel calls,
and without kernel workspaces (conv2d's other path).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import (  # noqa: E402
    EXACT,
    F32,
    Bound,
    Suite,
    array_attr,
    f32_data,
    i64_attr,
    op_func,
    rng,
    str_attr,
    sum_bound,
    ttype,
)

SUITE = Suite("nn_conv", variants=("default", "plain", "no-workspaces"))


def sid(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def out_size(n: int, pad: int, k: int, s: int, d: int = 1) -> int:
    return (n + pad - d * (k - 1) - 1) // s + 1


# --------------------------------------------------------------------------
# conv2d
# --------------------------------------------------------------------------


def conv_expect(strides, padding, dil, groups, has_bias):  # noqa: ANN001, ANN201
    def expect(x: np.ndarray, w: np.ndarray, *bias: np.ndarray) -> list:
        n, c, h, wd = x.shape
        o, cg, kh, kw = w.shape
        og = o // groups
        oh = out_size(h, padding[0] + padding[2], kh, strides[0], dil[0])
        ow = out_size(wd, padding[1] + padding[3], kw, strides[1], dil[1])
        val = np.zeros((n, o, oh, ow))
        scale = np.zeros((n, o, oh, ow))
        x64, w64 = x.astype(np.float64), w.astype(np.float64)
        for i in range(oh):
            for j in range(ow):
                for a in range(kh):
                    for b in range(kw):
                        ih = i * strides[0] - padding[0] + a * dil[0]
                        iw = j * strides[1] - padding[1] + b * dil[1]
                        if not (0 <= ih < h and 0 <= iw < wd):
                            continue
                        for gi in range(groups):
                            xs = x64[:, gi * cg : (gi + 1) * cg, ih, iw]  # n, cg
                            ws = w64[gi * og : (gi + 1) * og, :, a, b]  # og, cg
                            val[:, gi * og : (gi + 1) * og, i, j] += xs @ ws.T
                            scale[:, gi * og : (gi + 1) * og, i, j] += np.abs(xs) @ np.abs(ws).T
        if has_bias:
            val += bias[0].reshape(1, -1, 1, 1)
            scale += np.abs(bias[0]).reshape(1, -1, 1, 1)
        return [sum_bound(val, scale)]

    return expect


def add_conv(g: np.random.Generator, n: int, c: int, h: int, w: int, o: int, kh: int, kw: int,
             strides=(1, 1), padding=(0, 0, 0, 0), dil=(1, 1), groups=1, bias=True,  # noqa: ANN001
             explicit: bool = True, tag: str = "") -> None:
    x = f32_data(g, (n, c, h, w), -1, 1)
    wt = f32_data(g, (o, c // groups, kh, kw), -1, 1)
    inputs = [x, wt] + ([f32_data(g, (o,), -1, 1)] if bias else [])
    oh = out_size(h, padding[0] + padding[2], kh, strides[0], dil[0])
    ow = out_size(w, padding[1] + padding[3], kw, strides[1], dil[1])
    props = {}
    if explicit:
        props = {"strides": array_attr(strides), "padding": array_attr(padding),
                 "dilations": array_attr(dil), "groups": i64_attr(groups)}
    body = op_func("mlvm.conv2d", inputs, [((n, o, oh, ow), F32)], props)
    name = (f"conv2d-x{sid(x.shape)}-w{sid(wt.shape)}-s{sid(strides)}-p{sid(padding)}"
            f"-d{sid(dil)}-g{groups}{'-bias' if bias else ''}{tag}")
    SUITE.add(name, body, inputs, conv_expect(strides, padding, dil, groups, bias))


g = rng(51)
add_conv(g, 1, 1, 1, 1, 1, 1, 1)
add_conv(g, 2, 3, 7, 5, 4, 3, 3, tag="-valid")
add_conv(g, 1, 3, 7, 5, 4, 3, 3, explicit=False, bias=False, tag="-defaults")
add_conv(g, 2, 4, 9, 11, 6, 3, 2, (2, 3), (1, 0, 2, 1), (1, 1), 2)
add_conv(g, 1, 6, 13, 7, 6, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 6, tag="-depthwise")
add_conv(g, 2, 6, 13, 7, 12, 3, 3, (2, 1), (1, 1, 1, 1), (1, 1), 6, bias=False, tag="-depthwise-x2")
add_conv(g, 1, 2, 13, 13, 3, 3, 3, (1, 1), (2, 2, 2, 2), (2, 3), 1, tag="-dilated")
add_conv(g, 1, 2, 5, 5, 2, 5, 5, (3, 3), (4, 4, 4, 4), (1, 1), 1, tag="-all-padding")
add_conv(g, 1, 3, 32, 32, 8, 4, 4, (4, 4), (0, 0, 0, 0), (1, 1), 1, tag="-patches")
add_conv(g, 3, 5, 7, 31, 2, 1, 1, tag="-pointwise")
add_conv(g, 1, 9, 6, 6, 3, 2, 2, (1, 2), (0, 1, 1, 0), (2, 1), 3)
# Sizes past the GEMM's blocking: contraction over several slices (K > 256),
# more output channels than a row block (og > 192), ragged column slivers,
# the pointwise path reading x in place, and groups of GEMM size.
add_conv(g, 2, 40, 9, 11, 200, 3, 3, (1, 1), (1, 1, 1, 1), tag="-blocked")
add_conv(g, 1, 300, 5, 7, 8, 1, 1, tag="-pointwise-deep")
add_conv(g, 1, 16, 9, 9, 8, 1, 1, (2, 2), (1, 0, 0, 1), tag="-pointwise-strided")
add_conv(g, 1, 8, 10, 10, 16, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 2, tag="-groups-gemm")
add_conv(g, 1, 5, 17, 19, 7, 5, 3, (2, 1), (2, 0, 1, 2), (1, 2), 1, tag="-strided-gemm")
for _ in range(6):  # random options
    groups = int(g.choice((1, 2, 3)))
    c, o = groups * int(g.integers(1, 4)), groups * int(g.integers(1, 4))
    kh, kw = int(g.integers(1, 4)), int(g.integers(1, 4))
    s = (int(g.integers(1, 4)), int(g.integers(1, 4)))
    d = (int(g.integers(1, 3)), int(g.integers(1, 3)))
    p = tuple(int(v) for v in g.integers(0, 3, size=4))
    h = d[0] * (kh - 1) + 1 + int(g.integers(0, 9))
    w = d[1] * (kw - 1) + 1 + int(g.integers(0, 9))
    add_conv(g, int(g.integers(1, 3)), c, h, w, o, kh, kw, s, p, d, groups, bool(g.integers(0, 2)))


# Elementwise ops after a convolution (mlvm-fuse makes the conv the head of
# one fused op and applies them group by group as its outputs are written):
# a residual add, a per-channel shift, Clip as max / min with scalars. A
# per-channel operand over several images cannot be read that way: that tree
# is fused without the conv. 1-Lipschitz steps keep the conv's bound.
def add_conv_epilogue(g: np.random.Generator, n: int, c: int, hw: int, o: int, k: int,
                      stride: int, groups: int, tag: str) -> None:
    pad = k // 2
    x = f32_data(g, (n, c, hw, hw), -1, 1)
    wt = f32_data(g, (o, c // groups, k, k), -1, 1)
    bias, res = f32_data(g, (o,), -1, 1), None
    oh = out_size(hw, 2 * pad, k, stride)
    out = (n, o, oh, oh)
    res = f32_data(g, out, -1, 1)
    chan = f32_data(g, (1, o, 1, 1), -1, 1)
    lo, hi = np.array([-0.5], np.float32), np.array([0.75], np.float32)
    tx, tw, tb, tr, tc = (ttype(a.shape) for a in (x, wt, bias, res, chan))
    tl, to = ttype((1,)), ttype(out)
    props = (f"strides = array<i64: {stride}, {stride}>, padding = array<i64: {pad}, {pad}, {pad}, {pad}>, "
             f"groups = {groups} : i64")
    body = (
        f"func.func @FUNC(%x: {tx}, %w: {tw}, %b: {tb}, %r: {tr}, %c: {tc}, %lo: {tl}, %hi: {tl}) -> {to} {{\n"
        f'  %0 = "mlvm.conv2d"(%x, %w, %b) <{{{props}}}> : ({tx}, {tw}, {tb}) -> {to}\n'
        f'  %1 = "mlvm.add"(%0, %r) : ({to}, {tr}) -> {to}\n'
        f'  %2 = "mlvm.sub"(%1, %c) : ({to}, {tc}) -> {to}\n'
        f'  %3 = "mlvm.max"(%2, %lo) : ({to}, {tl}) -> {to}\n'
        f'  %4 = "mlvm.min"(%3, %hi) : ({to}, {tl}) -> {to}\n'
        f"  func.return %4 : {to}\n}}"
    )
    conv = conv_expect((stride, stride), (pad,) * 4, (1, 1), groups, True)

    def expect(x, w, b, r, ch, lo_, hi_) -> list:  # noqa: ANN001
        (cb,) = conv(x, w, b)
        v = np.clip(np.asarray(cb.value, np.float64) + r - ch, lo_[0], hi_[0])
        return [Bound(v, cb.err + 1e-6 * (np.abs(r) + np.abs(ch)))]

    SUITE.add(f"conv2d-epilogue-x{sid(x.shape)}-w{sid(wt.shape)}-s{stride}-g{groups}{tag}", body,
              [x, wt, bias, res, chan, lo, hi], expect)


g = rng(53)
add_conv_epilogue(g, 1, 8, 9, 16, 3, 1, 1, "")
add_conv_epilogue(g, 1, 6, 11, 6, 3, 2, 6, "-depthwise")
add_conv_epilogue(g, 2, 4, 7, 8, 1, 2, 1, "-pointwise-strided-n2")
add_conv_epilogue(g, 1, 3, 5, 4, 1, 1, 1, "-pointwise")
add_conv_epilogue(g, 2, 4, 8, 6, 3, 1, 2, "-n2")


# --------------------------------------------------------------------------
# pool2d
# --------------------------------------------------------------------------


def pool_expect(kind: str, window, strides, padding):  # noqa: ANN001, ANN201
    def expect(x: np.ndarray) -> list:
        n, c, h, w = x.shape
        oh = out_size(h, padding[0] + padding[2], window[0], strides[0])
        ow = out_size(w, padding[1] + padding[3], window[1], strides[1])
        val = np.zeros((n, c, oh, ow))
        scale = np.zeros((n, c, oh, ow))
        for i in range(oh):
            for j in range(ow):
                h0, w0 = i * strides[0] - padding[0], j * strides[1] - padding[1]
                win = x[:, :, max(h0, 0) : min(h0 + window[0], h), max(w0, 0) : min(w0 + window[1], w)]
                win = win.reshape(n, c, -1).astype(np.float64)
                if kind == "max":
                    val[:, :, i, j] = np.max(win, axis=-1)
                else:
                    val[:, :, i, j] = win.mean(axis=-1)
                    scale[:, :, i, j] = np.abs(win).mean(axis=-1)
        if kind == "max":
            return [val.astype(x.dtype)]
        return [sum_bound(val, scale)]

    return expect


def add_pool(g: np.random.Generator, kind: str, shape: tuple[int, ...], window, strides=None,  # noqa: ANN001
             padding=None, x: np.ndarray | None = None, tag: str = "") -> None:  # noqa: ANN001
    x = f32_data(g, shape) if x is None else x
    st = strides or (1, 1)
    pd = padding or (0, 0, 0, 0)
    n, c, h, w = x.shape
    out = (n, c, out_size(h, pd[0] + pd[2], window[0], st[0]), out_size(w, pd[1] + pd[3], window[1], st[1]))
    props = {"kind": str_attr(kind), "window": array_attr(window)}
    if strides is not None:
        props["strides"] = array_attr(strides)
    if padding is not None:
        props["padding"] = array_attr(padding)
    body = op_func("mlvm.pool2d", [x], [(out, x.dtype)], props)
    SUITE.add(f"pool2d-{kind}-{sid(x.shape)}-w{sid(window)}-s{sid(st)}-p{sid(pd)}{tag}", body, [x],
              pool_expect(kind, window, st, pd), EXACT)


def random_pool(g: np.random.Generator, win_below: int, more_h: int, more_w: int):  # noqa: ANN201
    """A random pool: shape, window (sides below win_below), strides, pads
    (each smaller than the window), the input up to more_h / more_w past
    the window."""
    win = (int(g.integers(1, win_below)), int(g.integers(1, win_below)))
    st = (int(g.integers(1, 4)), int(g.integers(1, 4)))
    pd = (int(g.integers(0, win[0])), int(g.integers(0, win[1])),
          int(g.integers(0, win[0])), int(g.integers(0, win[1])))
    shape = (int(g.integers(1, 3)), int(g.integers(1, 4)), win[0] + int(g.integers(0, more_h)),
             win[1] + int(g.integers(0, more_w)))
    return shape, win, st, pd


g = rng(52)
for kind in ("max", "avg"):
    add_pool(g, kind, (1, 1, 1, 1), (1, 1))
    add_pool(g, kind, (2, 3, 7, 5), (2, 2))  # defaults: stride 1, no padding
    add_pool(g, kind, (2, 3, 8, 8), (2, 2), (2, 2))
    add_pool(g, kind, (1, 2, 9, 7), (3, 2), (2, 3), (2, 1, 1, 1))
    add_pool(g, kind, (1, 4, 13, 13), (3, 3), (2, 2), (1, 1, 1, 1))
    add_pool(g, kind, (3, 1, 5, 31), (5, 1), (1, 4), (0, 0, 4, 0))
    for _ in range(4):
        shape, win, st, pd = random_pool(g, 4, 8, 8)
        add_pool(g, kind, shape, win, st, pd)
nan_x = f32_data(g, (1, 2, 4, 4))
nan_x[0, 0, 1, 2] = np.nan
nan_x[0, 1, 3, 3] = -np.inf
add_pool(g, "max", nan_x.shape, (2, 2), (2, 2), x=nan_x, tag="-nan")
# rows wider than the max kernel's column chunk (1024 floats; 64 on cores
# without vectors), stride 2 and 3, padded, a NaN in the second chunk
wide_x = f32_data(g, (1, 2, 3, 2101))
wide_x[0, 1, 2, 1500] = np.nan
add_pool(g, "max", wide_x.shape, (3, 3), (1, 2), (1, 1, 1, 1), x=wide_x, tag="-wide")
add_pool(g, "max", (1, 1, 4, 700), (2, 5), (2, 3), (1, 2, 0, 4))
# the vector rows (strides 1 and 2, windows up to 16 columns): outputs in
# ragged chunks of 16, padding on every side, the widest window (stride 2
# reads past 32 columns), one column past it (the other kernels), a NaN
# and infinities in a vector row
for kind in ("max", "avg"):
    add_pool(g, kind, (2, 3, 11, 33), (3, 3), (2, 2), (1, 1, 1, 1))
    add_pool(g, kind, (1, 2, 7, 47), (5, 5), (1, 1), (2, 2, 2, 2))
    add_pool(g, kind, (1, 3, 6, 37), (1, 16), (1, 2), (0, 7, 0, 8))
    add_pool(g, kind, (1, 2, 5, 50), (3, 17), (1, 1), (1, 8, 1, 8))
    add_pool(g, kind, (1, 1, 3, 16), (2, 2), (1, 2), (0, 1, 0, 0))
vec_x = f32_data(g, (1, 3, 9, 40))
vec_x[0, 0, 4, 21] = np.nan
vec_x[0, 1, 2, 3] = np.inf
vec_x[0, 2, 7, 39] = -np.inf
add_pool(g, "max", vec_x.shape, (3, 3), (2, 2), (1, 1, 1, 1), x=vec_x, tag="-vec-nan")
add_pool(g, "avg", vec_x.shape, (3, 3), (1, 1), (1, 1, 1, 1), x=vec_x, tag="-vec-nan")


def int8_data(g: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """Random bytes with each extreme somewhere (the padding's least value)."""
    info = np.iinfo(dtype)
    x = g.integers(info.min, info.max + 1, shape, dtype=dtype)
    x.flat[0], x.flat[-1] = info.min, info.max
    return x


# 8-bit max pools (maxpool8.c): both signs; rows shorter than a vector (a
# join through a copy), of 16 and 17 bytes and longer (overlapping last
# steps), strides 1, 2 (the vector joins) and 3, padding on every side,
# windows wider than a vector join takes and than the column chunk, all
# bytes the least value (padding must never win), a plane of 1x1
for t in (np.uint8, np.int8):
    tag = f"-{np.dtype(t).name}"
    for shape, win, st, pd in [((1, 1, 1, 1), (1, 1), None, None),
                               ((1, 3, 9, 9), (3, 3), (2, 2), None),
                               ((2, 2, 16, 16), (2, 2), (1, 1), None),
                               ((1, 2, 17, 33), (3, 3), (2, 2), (1, 1, 1, 1)),
                               ((1, 4, 23, 111), (3, 3), (2, 2), (0, 0, 0, 0)),
                               ((1, 2, 13, 51), (3, 3), (1, 1), (1, 1, 1, 1)),
                               ((1, 2, 9, 40), (3, 2), (2, 3), (2, 1, 1, 1)),
                               ((1, 1, 5, 70), (2, 40), (1, 1), (1, 20, 0, 39)),
                               ((1, 1, 5, 90), (2, 20), (1, 2), (0, 0, 1, 0)),
                               ((1, 2, 3, 2101), (3, 3), (1, 2), (1, 1, 1, 1)),
                               ((1, 1, 2, 2000), (2, 1100), (1, 1), None)]:
        add_pool(g, "max", shape, win, st, pd, x=int8_data(g, shape, t), tag=tag)
    for _ in range(6):
        shape, win, st, pd = random_pool(g, 5, 9, 40)
        add_pool(g, "max", shape, win, st, pd, x=int8_data(g, shape, t), tag=tag)
    low = np.full((1, 2, 7, 19), np.iinfo(t).min, t)
    add_pool(g, "max", low.shape, (3, 3), (2, 2), (1, 1, 1, 1), x=low, tag=f"{tag}-least")


@pytest.mark.parametrize("case,variant", SUITE.params_list())
def test_nn_conv(case, variant: str) -> None:  # noqa: ANN001
    SUITE.check(case, variant)
