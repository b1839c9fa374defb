"""quantize, dequantize, requantize and qmatmul against numpy and against
the rules written out here with Python numbers: rounding half to even,
saturation, NaN -> zero point, per-channel parameters by broadcasting, the
integer matmul in exact integer arithmetic. All results are exact."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import Suite, op_func, rng  # noqa: E402

SUITE = Suite("quant", variants=("default", "plain", "no-workspaces"))
QT = {"i8": np.int8, "ui8": np.uint8, "i16": np.int16, "ui16": np.uint16}


def rne(v: float) -> int:
    """Round half to even, on a Python float (exact)."""
    f = np.floor(v)
    d = v - f
    if d > 0.5 or (d == 0.5 and int(f) % 2 == 1):
        return int(f) + 1
    return int(f)


def sat(v: float, zp: int, dtype: type) -> int:
    info = np.iinfo(dtype)
    if np.isnan(v):
        return zp
    if np.isinf(v):
        return info.max if v > 0 else info.min
    return int(min(max(rne(v) + zp, info.min), info.max))


def quantize_rule(x: np.ndarray, s: np.ndarray, zp: np.ndarray) -> np.ndarray:
    xb, sb, zb = np.broadcast_arrays(x, s, zp)
    with np.errstate(all="ignore"):
        r = (xb.astype(np.float32) / sb).astype(np.float32)  # the f32 division
    out = [sat(float(v), int(z), zp.dtype.type) for v, z in zip(r.reshape(-1), zb.reshape(-1))]
    return np.array(out, dtype=zp.dtype).reshape(r.shape)


def requantize_rule(acc: np.ndarray, m: np.ndarray, zp: np.ndarray) -> np.ndarray:
    ab, mb, zb = np.broadcast_arrays(acc, m, zp)
    r = (ab.astype(np.float32) * mb).astype(np.float32)
    out = [sat(float(v), int(z), zp.dtype.type) for v, z in zip(r.reshape(-1), zb.reshape(-1))]
    return np.array(out, dtype=zp.dtype).reshape(r.shape)


def dequantize_rule(q: np.ndarray, s: np.ndarray, zp: np.ndarray) -> np.ndarray:
    qb, sb, zb = np.broadcast_arrays(q, s, zp)
    d = np.array([float(int(a) - int(b)) for a, b in zip(qb.reshape(-1), zb.reshape(-1))], dtype=np.float32)
    return (d.reshape(qb.shape) * sb).astype(np.float32)


def qmatmul_rule(a: np.ndarray, b: np.ndarray, za: np.ndarray, zb: np.ndarray) -> np.ndarray:
    aa = a.reshape(-1, a.shape[-1]).astype(object) - int(za)
    bb = b.astype(object) - np.broadcast_to(zb.reshape(-1), (b.shape[1],)).astype(object)
    out = aa.dot(bb)
    flat = [((int(v) + 2**31) % 2**32) - 2**31 for v in out.reshape(-1)]
    shape = (*a.shape[:-1], b.shape[1])
    return np.array(flat, dtype=np.int32).reshape(shape)


g = rng(11)
for q, dt in QT.items():
    info = np.iinfo(dt)
    # Ties in both directions, saturation, NaN, infinities, -0.
    s = np.float32(0.5)
    x = np.array([0.25, 0.75, -0.25, -0.75, 1.25, 0.0, -0.0, 1e9, -1e9, np.nan, np.inf, -np.inf,
                  63.75, -64.25, 0.2, 100.1], dtype=np.float32)
    zp = np.array(3 if info.min == 0 else -2, dtype=dt)
    SUITE.add(f"quantize-{q}-edges", op_func("mlvm.quantize", [x, s, zp], [(x.shape, dt)]),
              [x, s, zp], quantize_rule)
    # Per channel along axis 1 of [2, 3, 4]: scale and zero point shaped [3, 1].
    x = g.standard_normal((2, 3, 4)).astype(np.float32) * 20
    sc = np.array([[0.1], [0.25], [0.07]], dtype=np.float32)
    zc = np.array([[0], [5], [info.max // 3]], dtype=dt)
    SUITE.add(f"quantize-{q}-per-channel", op_func("mlvm.quantize", [x, sc, zc], [(x.shape, dt)]),
              [x, sc, zc], quantize_rule)
    xh = x.astype(np.float16)
    SUITE.add(f"quantize-{q}-from-f16", op_func("mlvm.quantize", [xh, sc, zc], [(x.shape, dt)]),
              [xh, sc, zc], quantize_rule)
    qv = np.array([info.min, info.max, 0, 1, 7, info.max // 2], dtype=dt)
    zq = np.array(info.max // 4, dtype=dt)
    SUITE.add(f"dequantize-{q}", op_func("mlvm.dequantize", [qv, np.float32(0.03), zq], [(qv.shape, np.float32)]),
              [qv, np.float32(0.03), zq], dequantize_rule)
    acc = np.array([0, 1, -1, 2**31 - 1, -(2**31), 1000, -1000, 4321, 13, -13], dtype=np.int32)
    m = np.float32(0.5)
    SUITE.add(f"requantize-{q}", op_func("mlvm.requantize", [acc, m, zp], [(acc.shape, dt)]),
              [acc, m, zp], requantize_rule)
    acc2 = g.integers(-50000, 50000, size=(5, 3)).astype(np.int32)
    mc = np.array([0.001, 0.0123, 0.5], dtype=np.float32)
    SUITE.add(f"requantize-{q}-per-column", op_func("mlvm.requantize", [acc2, mc, zp], [(acc2.shape, dt)]),
              [acc2, mc, zp], requantize_rule)

acc32 = np.array([5, -5, 2**31 - 1], dtype=np.int32)
z32 = np.array(-7, dtype=np.int32)
SUITE.add("dequantize-i32", op_func("mlvm.dequantize", [acc32, np.float32(1e-3), z32], [(acc32.shape, np.float32)]),
          [acc32, np.float32(1e-3), z32], dequantize_rule)

# qmatmul: all four signedness pairs, zero points, per-column rhs zero points,
# odd sizes, K = 1, rank-1 and batched lhs.
for ta in (np.int8, np.uint8):
    for tb in (np.int8, np.uint8):
        ia, ib = np.iinfo(ta), np.iinfo(tb)
        for shape_a, (k, n), per_col in (((7, 13), (13, 5), False), ((1, 1), (1, 3), True),
                                         ((2, 3, 31), (31, 17), True), ((31,), (31, 2), False),
                                         ((4, 64), (64, 64), True)):
            a = g.integers(ia.min, ia.max + 1, size=shape_a).astype(ta)
            b = g.integers(ib.min, ib.max + 1, size=(k, n)).astype(tb)
            za = np.array(g.integers(ia.min, ia.max + 1), dtype=ta)
            zb = g.integers(ib.min, ib.max + 1, size=(n,) if per_col else ()).astype(tb)
            out = (*shape_a[:-1], n)
            name = f"qmatmul-{np.dtype(ta).name}-{np.dtype(tb).name}-{'x'.join(map(str, shape_a))}-{n}"
            SUITE.add(name, op_func("mlvm.qmatmul", [a, b, za, zb], [(out, np.int32)]), [a, b, za, zb],
                      qmatmul_rule)

# Extremes: every product at its largest, K large enough to wrap... not int32
# (255 * 255 * 4096 < 2^31), but the correction term at its extremes.
a = np.full((2, 4096), 255, np.uint8)
b = np.full((4096, 3), 255, np.uint8)
SUITE.add("qmatmul-extremes", op_func("mlvm.qmatmul", [a, b, np.uint8(0), np.uint8(0)], [((2, 3), np.int32)]),
          [a, b, np.array(0, np.uint8), np.array(0, np.uint8)], qmatmul_rule)
a8 = np.full((1, 4096), -128, np.int8)
b8 = np.full((4096, 2), -128, np.int8)
SUITE.add("qmatmul-extremes-signed", op_func("mlvm.qmatmul", [a8, b8, np.int8(127), np.int8(127)],
          [((1, 2), np.int32)]), [a8, b8, np.array(127, np.int8), np.array(127, np.int8)], qmatmul_rule)


def qconv_rule(props: dict):  # noqa: ANN202
    """Direct convolution in Python integers (padding contributes nothing)."""
    st, pad, dil, groups = props["strides"], props["padding"], props["dilations"], props["groups"]

    def expect(x: np.ndarray, w: np.ndarray, zx: np.ndarray, zw: np.ndarray) -> np.ndarray:
        n, c, h, wd = x.shape
        o, cg, kh, kw = w.shape
        oh = (h + pad[0] + pad[2] - (kh - 1) * dil[0] - 1) // st[0] + 1
        ow = (wd + pad[1] + pad[3] - (kw - 1) * dil[1] - 1) // st[1] + 1
        zwv = np.broadcast_to(zw.reshape(-1), (o,)).astype(np.int64)
        xi = x.astype(np.int64) - int(zx)
        wi = w.astype(np.int64) - zwv.reshape(-1, 1, 1, 1)
        out = np.zeros((n, o, oh, ow), np.int64)
        og = o // groups
        for b in range(n):
            for oc in range(o):
                c0 = (oc // og) * cg
                for y in range(oh):
                    for xx in range(ow):
                        acc = 0
                        for ci in range(cg):
                            for ky in range(kh):
                                iy = y * st[0] - pad[0] + ky * dil[0]
                                if not 0 <= iy < h:
                                    continue
                                for kx in range(kw):
                                    ix = xx * st[1] - pad[1] + kx * dil[1]
                                    if 0 <= ix < wd:
                                        acc += int(xi[b, c0 + ci, iy, ix]) * int(wi[oc, ci, ky, kx])
                        out[b, oc, y, xx] = acc
        return out.astype(np.int32)
    return expect


def qconv_requant_rule(props: dict, relu: int):  # noqa: ANN202
    """The integer sums, + bias (wrapping), then requantize_rule, then relu."""
    sums = qconv_rule(props)

    def expect(x: np.ndarray, w: np.ndarray, zx: np.ndarray, zw: np.ndarray, m: np.ndarray, zy: np.ndarray,
               bias: np.ndarray | None = None) -> np.ndarray:
        acc = sums(x, w, zx, zw).astype(np.int64)
        if bias is not None:
            acc = acc + bias.astype(np.int64).reshape(1, -1, 1, 1)
        acc32 = (acc & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        y = requantize_rule(acc32, m.reshape(1, -1, 1, 1) if m.size > 1 else m, zy)
        return np.maximum(y, zy) if relu else y
    return expect


def _arr(v) -> str:  # noqa: ANN001
    return "array<i64: " + ", ".join(str(int(t)) for t in v) + ">"


for ta in (np.int8, np.uint8):
    for tb in (np.int8, np.uint8):
        ia, ib = np.iinfo(ta), np.iinfo(tb)
        for xs, ws, props, per_o, zw_zero in (
            ((1, 3, 7, 6), (4, 3, 3, 3), dict(strides=[1, 1], padding=[1, 1, 1, 1], dilations=[1, 1], groups=1), True, False),
            ((2, 4, 9, 5), (4, 1, 3, 2), dict(strides=[2, 1], padding=[0, 1, 2, 0], dilations=[1, 2], groups=4), False, False),
            ((1, 6, 5, 5), (3, 2, 1, 1), dict(strides=[1, 2], padding=[0, 0, 0, 0], dilations=[1, 1], groups=3), True, False),
            # zero weight zero points (the integer GEMM path for i8 weights):
            # channels off the quads, output channels off the row blocks,
            # positions off the slivers, rows at another pitch, groups
            ((1, 5, 11, 13), (12, 5, 3, 3), dict(strides=[1, 1], padding=[1, 1, 1, 1], dilations=[1, 1], groups=1), True, True),
            ((2, 8, 9, 7), (10, 4, 3, 2), dict(strides=[2, 1], padding=[1, 0, 1, 2], dilations=[2, 1], groups=2), False, True),
            ((1, 3, 17, 19), (8, 3, 5, 5), dict(strides=[2, 2], padding=[2, 2, 2, 2], dilations=[1, 1], groups=1), True, True),
            ((1, 16, 6, 7), (9, 16, 1, 1), dict(strides=[1, 1], padding=[0, 0, 0, 0], dilations=[1, 1], groups=1), True, True),
            ((1, 7, 10, 9), (7, 1, 3, 3), dict(strides=[1, 1], padding=[1, 1, 1, 1], dilations=[1, 1], groups=7), True, True),
        ):
            x = g.integers(ia.min, ia.max + 1, size=xs).astype(ta)
            w = g.integers(ib.min, ib.max + 1, size=ws).astype(tb)
            zx = np.array(g.integers(ia.min, ia.max + 1), dtype=ta)
            zw = g.integers(ib.min, ib.max + 1, size=(ws[0],) if per_o else ()).astype(tb)
            if zw_zero:
                zw[...] = 0
            n, _, h, wd = xs
            oh = (h + props["padding"][0] + props["padding"][2] - (ws[2] - 1) * props["dilations"][0] - 1) // props["strides"][0] + 1
            ow = (wd + props["padding"][1] + props["padding"][3] - (ws[3] - 1) * props["dilations"][1] - 1) // props["strides"][1] + 1
            mlir_props = {k: (_arr(v) if isinstance(v, list) else f"{v} : i64") for k, v in props.items()}
            name = (f"qconv2d-{np.dtype(ta).name}-{np.dtype(tb).name}-g{props['groups']}-{'x'.join(map(str, ws))}"
                    f"{'-zw0' if zw_zero else ''}")
            SUITE.add(name, op_func("mlvm.qconv2d", [x, w, zx, zw], [((n, ws[0], oh, ow), np.int32)], mlir_props),
                      [x, w, zx, zw], qconv_rule(props))
            # the same, requantized in the kernel: bias or not, one or
            # per-channel multipliers, i8 / u8 out, with and without relu
            k = len(SUITE.cases)
            ty = (np.int8, np.uint8)[k % 2]
            relu, per_m, use_bias = (k // 2) % 2, (k // 4) % 2, (k // 8) % 2 == 0
            mult = (g.integers(1, 3000, size=(ws[0],) if per_m else ()) * 1e-5).astype(np.float32)
            zy = np.array(g.integers(np.iinfo(ty).min, np.iinfo(ty).max + 1), dtype=ty)
            bias = g.integers(-30000, 30000, size=(ws[0],)).astype(np.int32)
            ins = [x, w, zx, zw, mult, zy] + ([bias] if use_bias else [])
            rprops = {**mlir_props, "relu": f"{relu} : i64"}
            SUITE.add(f"{name}-requant-{np.dtype(ty).name}{'-relu' if relu else ''}{'-pm' if per_m else ''}"
                      f"{'-bias' if use_bias else ''}",
                      op_func("mlvm.qconv2d_requant", ins, [((n, ws[0], oh, ow), ty)], rprops), ins,
                      qconv_requant_rule(props, relu))


_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_LIBM.fmaf.argtypes = [ctypes.c_float, ctypes.c_float, ctypes.c_float]
_LIBM.fmaf.restype = ctypes.c_float
_fmaf = np.frompyfunc(lambda a, b, c: np.float32(_LIBM.fmaf(float(a), float(b), float(c))), 3, 1)


def fmaf(a: object, b: object, c: object) -> np.ndarray:
    """The C library's fmaf, elementwise: a * b + c rounded once."""
    return np.asarray(_fmaf(a, b, c), dtype=np.float32)


def qadd_rule(a: np.ndarray, sa: np.ndarray, za: np.ndarray, b: np.ndarray, sb: np.ndarray,
              zb: np.ndarray, sy: np.ndarray, zy: np.ndarray) -> np.ndarray:
    """onnxruntime's QLinearAdd on x86-64 (its AVX2 kernel): with
    ratios r = s / sy, fma(x, rx, fma(w, rw, zy - fma(rx, zx, rw zw))),
    rounded half to even and saturated (NaN and values past int32 the
    type's minimum); x is b where a is constant along
    the innermost run (a single value, or broadcast along y's last dim
    that is not 1), a otherwise."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    pa = (1,) * (len(shape) - a.ndim) + a.shape
    last = [i for i, d in enumerate(shape) if d != 1]
    swap = a.size == 1 or (a.shape != shape and pa[last[-1]] == 1)
    (x, sx, zx), (w, sw, zw) = ((b, sb, zb), (a, sa, za)) if swap else ((a, sa, za), (b, sb, zb))
    with np.errstate(all="ignore"):
        rx, rw = np.float32(sx) / np.float32(sy), np.float32(sw) / np.float32(sy)
        fixed = np.float32(zy) - fmaf(rx, np.float32(zx), rw * np.float32(zw))
        v = fmaf(np.broadcast_to(x, shape).astype(np.float32), rx,
                 fmaf(np.broadcast_to(w, shape).astype(np.float32), rw, fixed))
        info = np.iinfo(zy.dtype)
        # NaN and past int32: its conversion's INT_MIN, saturated
        return np.array([info.min if not abs(float(e)) < 2.0**31 else min(max(round(float(e)), info.min), info.max)
                         for e in v.reshape(-1)], zy.dtype).reshape(v.shape)


# qadd: every signedness of a, b and y, sizes 1, odd primes and past the
# vectors (16, 8) with tails, zero points at the ends of their ranges, a
# sum saturating both ways; and a zero output scale (infinite ratios). One
# of a and b broadcast (a single value; channels, with a run after them or
# not; either operand), scales half the time in ratios that make ties.
QADD_SHAPES = (((1,), (1,)), ((31,), (31,)), ((2, 3, 17), (2, 3, 17)), ((1, 5, 7, 11), (1, 5, 7, 11)),
               ((2, 3, 17), (3, 1)), ((3, 1), (2, 3, 17)), ((2, 5, 7), (7,)), ((7,), (2, 5, 7)),
               ((1,), (31,)), ((31,), (1,)), ((1, 5, 7, 11), (1, 5, 1, 1)), ((1, 5, 1, 1), (2, 5, 7, 3)))
for k, (ta, tb, ty) in enumerate([(x, y, z) for x in (np.int8, np.uint8) for y in (np.int8, np.uint8)
                                  for z in (np.int8, np.uint8)]):
    for j, (shape_a, shape_b) in enumerate(QADD_SHAPES):
        if j >= 4 and (k + j) % 2:
            continue  # (each broadcast layout for half the types)
        ia, ib, iy = np.iinfo(ta), np.iinfo(tb), np.iinfo(ty)
        a = g.integers(ia.min, ia.max + 1, size=shape_a).astype(ta)
        b = g.integers(ib.min, ib.max + 1, size=shape_b).astype(tb)
        za = np.array((ia.min, ia.max, 0)[k % 3], dtype=ta)
        zb = np.array(g.integers(ib.min, ib.max + 1), dtype=tb)
        zy = np.array(g.integers(iy.min, iy.max + 1), dtype=ty)
        sy = np.float32(g.uniform(0.01, 0.3) if shape_a != (31,) or shape_b != (31,) else 0.0)
        sa, sb = np.float32(g.uniform(0.001, 0.2)), np.float32(g.uniform(0.001, 0.2))
        if j % 2 and sy != 0:
            sa, sb = sy * np.float32(g.choice([0.5, 1, 2])), sy * np.float32(g.choice([0.25, 0.5, 1]))
        ins = [a, np.array(sa), za, b, np.array(sb), zb, np.array(sy), zy]
        shape = np.broadcast_shapes(shape_a, shape_b)
        name = (f"qadd-{np.dtype(ta).name}-{np.dtype(tb).name}-{np.dtype(ty).name}-"
                f"{'x'.join(map(str, shape_a))}-{'x'.join(map(str, shape_b))}")
        SUITE.add(name, op_func("mlvm.qadd", ins, [(shape, ty)]), ins, qadd_rule)


# Every pair of values, with scales where the two operand orders round
# differently at some pairs (swap) and where zy - (rx zx + rw zw) rounded
# twice differs from the fma at some (both): a and b whole, a one value
# per row (taken second: swap), b one value per row.
QADD_TIES = ((np.uint8, "0x1.3f88acp-5", "0x1.4f7e16p-3", "0x1.3f88acp-4", 241, 206, 214),
             (np.uint8, "0x1.fbfe72p-4", "0x1.7d801cp-3", "0x1.235da6p-3", 223, 101, 82),
             (np.int8, "0x1.79700ap-4", "0x1.00fe88p-3", "0x1.79700ap-3", -118, 115, -114),
             (np.int8, "0x1.e4a9d8p-5", "0x1.e2083cp-6", "0x1.179efcp-4", 82, -45, -74))
for t, *scales, za_, zb_, zy_ in QADD_TIES:
    values = np.arange(np.iinfo(t).min, np.iinfo(t).max + 1).astype(t)
    sa, sb, sy = (np.array(float.fromhex(v), np.float32) for v in scales)
    za, zb, zy = (np.array(v, t) for v in (za_, zb_, zy_))
    rows, cols = np.repeat(values[:, None], 256, 1), np.repeat(values[None, :], 256, 0)
    for tag, a, b in (("whole", rows, cols), ("a-rows", values[:, None].copy(), cols), ("b-rows", cols, values[:, None].copy())):
        ins = [a, sa, za, b, sb, zb, sy, zy]
        SUITE.add(f"qadd-ties-{np.dtype(t).name}-{scales[0]}-{tag}", op_func("mlvm.qadd", ins, [((256, 256), t)]),
                  ins, qadd_rule)


def qavgpool_rule(window: tuple[int, int], strides: tuple[int, int], pads: tuple[int, int, int, int]):  # noqa: ANN201
    def rule(x: np.ndarray, sx: np.ndarray, zx: np.ndarray, sy: np.ndarray, zy: np.ndarray) -> np.ndarray:
        """onnxruntime's QLinearAveragePool, one window at a time in numpy
        f32 scalars: xs * (x - zx) summed row by row from 0, divided by the
        count inside x, then nearbyint(avg / ys + zy) saturated."""
        n, c, h, w = x.shape
        if tuple(window) == (h, w) and not any(pads):  # its global pool: integer sums
            scale = np.float32(np.float32(sx) / np.float32(np.float32(sy) * np.float32(h * w)))
            info = np.iinfo(x.dtype)
            out = np.zeros((n, c, 1, 1), x.dtype)
            for b, ch in np.ndindex(n, c):
                acc = sum(int(v) - int(zx) for v in x[b, ch].reshape(-1))
                f = float(np.float32(np.float32(acc) * scale))
                f = min(max(f, info.min - int(zy)), info.max - int(zy))
                out[b, ch, 0, 0] = rne(f) + int(zy)
            return out
        oh = (h + pads[0] + pads[2] - window[0]) // strides[0] + 1
        ow = (w + pads[1] + pads[3] - window[1]) // strides[1] + 1
        out = np.zeros((n, c, oh, ow), x.dtype)
        s, t = np.float32(sx), np.float32(sy)
        for b, ch, i, j in np.ndindex(n, c, oh, ow):
            h0, w0 = i * strides[0] - pads[0], j * strides[1] - pads[1]
            rows = range(max(h0, 0), min(h0 + window[0], h))
            cols = range(max(w0, 0), min(w0 + window[1], w))
            acc = np.float32(0.0)
            for r in rows:
                for q in cols:
                    acc = np.float32(acc + np.float32(np.float32(int(x[b, ch, r, q]) - int(zx)) * s))
            avg = np.float32(acc / np.float32(len(rows) * len(cols)))
            out[b, ch, i, j] = sat(float(np.float32(np.float32(avg / t) + np.float32(int(zy)))), 0, x.dtype.type)
        return out
    return rule


# qavgpool2d: both signs; windows 1x1 to 3x3 and a whole 7x7 map, strides,
# padding on each side (left out of the count), maps of 1 and odd primes,
# rows of up to 200;
# output scales equal to the input's (averages of 2 or 4 integers: exact
# ties, broken by the parity of avg / ys + zy) and not.
for k, (t, (hw, win, st, pads)) in enumerate([(t, case) for t in (np.uint8, np.int8) for case in (
        ((5, 7), (2, 2), (2, 2), (0, 0, 0, 0)), ((7, 7), (7, 7), (1, 1), (0, 0, 0, 0)),
        ((11, 13), (3, 3), (1, 1), (1, 1, 1, 1)), ((1, 1), (1, 1), (1, 1), (0, 0, 0, 0)),
        ((6, 9), (3, 2), (2, 3), (2, 0, 1, 1)), ((4, 4), (2, 2), (1, 1), (0, 1, 1, 0)),
        # rows past the kernel's chunk of 64 inner outputs, strides 1, 2, 3
        ((3, 150), (3, 3), (1, 1), (1, 1, 1, 1)), ((4, 141), (3, 3), (2, 2), (1, 1, 1, 1)),
        ((2, 200), (1, 4), (1, 3), (0, 2, 0, 1)), ((40, 60), (3, 3), (1, 1), (1, 1, 1, 1)),
        # stride 1 over small planes (the kernel's whole-plane loops), padding uneven
        ((9, 11), (3, 2), (1, 1), (2, 0, 0, 1)), ((5, 5), (5, 5), (1, 1), (2, 2, 2, 2)),
        # whole maps of even sizes (the global pool's integer sums: ties)
        ((2, 2), (2, 2), (1, 1), (0, 0, 0, 0)), ((4, 6), (4, 6), (1, 1), (0, 0, 0, 0)))]):
    info = np.iinfo(t)
    x = g.integers(info.min, info.max + 1, size=(2, 3, *hw)).astype(t)
    zx = np.array((info.min, info.max, 0, 3)[k % 4], dtype=t)
    zy = np.array(g.integers(info.min, info.max + 1), dtype=t)
    sx = np.float32(g.uniform(0.001, 0.2))
    sy = sx if k % 2 == 0 else np.float32(g.uniform(0.001, 0.2))
    ins = [x, np.array(sx), zx, np.array(sy), zy]
    n, c, h, w = x.shape
    shape = (n, c, (h + pads[0] + pads[2] - win[0]) // st[0] + 1, (w + pads[1] + pads[3] - win[1]) // st[1] + 1)
    props = {"window": f"array<i64: {win[0]}, {win[1]}>", "strides": f"array<i64: {st[0]}, {st[1]}>",
             "padding": "array<i64: " + ", ".join(map(str, pads)) + ">"}
    name = f"qavgpool2d-{np.dtype(t).name}-{'x'.join(map(str, hw))}-w{win[0]}x{win[1]}-s{st[0]}x{st[1]}"
    SUITE.add(name, op_func("mlvm.qavgpool2d", ins, [(shape, t)], props), ins, qavgpool_rule(win, st, pads))


# qsoftmax: C against the op's reference (both onnxruntime's QLinearSoftmax,
# which tests/frontend/onnx/test_qdq.py checks against onnxruntime itself):
# rows of 1, 7 and 1000 values and of 13 and 128 (AVX2's eight at a time
# and a tail), both signs, the table of a few scales; an output scale so
# small that quotients pass 2^30 (the largest value), zero points inside
# the range.
for k, (t, n) in enumerate([(t, n) for t in (np.uint8, np.int8) for n in (1, 7, 1000, 13, 128)]):
    from mlvm.dialect.quant import qsoftmax_table  # noqa: E402

    info = np.iinfo(t)
    x = g.integers(info.min, info.max + 1, size=(3, n)).astype(t)
    table = qsoftmax_table((0.05, 0.2, 0.013)[k % 3], n, t == np.int8)
    ys = np.float32((1 / 256, 1 / 255, 1e-12, 0.003)[k % 4])
    zy = (info.min if t == np.int8 else 0) if k % 4 < 2 else int(g.integers(info.min, info.max + 1))
    ins = [x, table, np.array(ys), np.array(zy, dtype=t)]
    SUITE.add(f"qsoftmax-{np.dtype(t).name}-{n}", op_func("mlvm.qsoftmax", ins, [((3, n), t)]), ins)


@pytest.mark.parametrize("case,variant", SUITE.params_list())
def test_quant(case, variant: str) -> None:  # noqa: ANN001
    SUITE.check(case, variant)


def test_rounding_rule_by_hand() -> None:
    assert [rne(v) for v in (0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, 2.5001)] == [0, 2, 2, 0, -2, 2, 3]
    case = next(c for c in SUITE.cases if c.id == "quantize-i8-edges")
    got = SUITE.compiled(case)[0]
    # x / 0.5 = 0.5, 1.5, -0.5, -1.5, 2.5 round to 0, 2, -0, -2, 2; zero point -2.
    assert got[:5].tolist() == [-2, 0, -2, -4, 0]
    assert got[7:12].tolist() == [127, -128, -2, 127, -128]


def test_byte_pairs_fit_is_the_int16_reach_of_two_products() -> None:
    """kernels.h's w_pairs rule against every pair of a row: two weights
    times bytes of [0, 255] sum within int16 exactly when the rule holds
    (its edges: 127 + 1, 64 + 64, -128 + 0, -64 - 64 fit; 65 + 64, -65 - 64,
    -128 - 1 do not; one weight always fits)."""
    from mlvm.dialect.quant import byte_pairs_fit

    def brute(rows: np.ndarray) -> bool:
        for row in rows.tolist():
            for i in range(len(row)):
                for j in range(i + 1, len(row)):
                    hi = 255 * (max(row[i], 0) + max(row[j], 0))
                    lo = 255 * (min(row[i], 0) + min(row[j], 0))
                    if hi > 32767 or lo < -32768:
                        return False
        return True

    for row, fits in [([127, 1], True), ([64, 64], True), ([-128, 0], True), ([-64, -64], True),
                      ([127, -128, 1, 0], True), ([65, 64], False), ([-65, -64], False),
                      ([-128, -1], False), ([127], True), ([-128], True), ([3, 127, -5, 2], False)]:
        rows = np.array([row], np.int64)
        assert byte_pairs_fit(rows) is fits is brute(rows), row
    g = rng(11)
    for _ in range(300):
        o, k = int(g.integers(1, 4)), int(g.integers(1, 9))
        lim = int(g.integers(1, 129))
        rows = g.integers(-lim, lim + 1, (o, k)).clip(-128, 127)
        assert byte_pairs_fit(rows) == brute(rows), rows


QCONV_CONST = """func.func @main(%x: tensor<1x{c}x7x9xui8>) -> tensor<1x{o}x7x9xi32> {{
  %w = "mlvm.param"() <{{name = "w"}}> : () -> tensor<{o}x{c}x3x3xi8>
  %zx = "mlvm.param"() <{{name = "zx"}}> : () -> tensor<ui8>
  %zw = "mlvm.param"() <{{name = "zw"}}> : () -> tensor<i8>
  %0 = "mlvm.qconv2d"(%x, %w, %zx, %zw) <{{padding = array<i64: 1, 1, 1, 1>}}> : (tensor<1x{c}x7x9xui8>, tensor<{o}x{c}x3x3xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x{o}x7x9xi32>
  func.return %0 : tensor<1x{o}x7x9xi32>
}}
"""


@pytest.mark.parametrize("weights", ["reduced", "edges", "full"])
def test_qconv_constant_weights_pair_sums(tmp_path: Path, weights: str) -> None:
    """Constant weights that fit 16-bit pair sums (w_pairs 1: onnxruntime's
    reduce_range, and rows whose two largest add up to 128 or -128) and
    weights that do not (w_pairs 0), under bytes of 255 (the pair sums at
    their extremes) and random ones: every sum exact, whichever tile the
    host's build takes."""
    import re

    import mlvm
    from mlvm.pipeline import compile_to_c, parse_file

    g = rng(5)
    c, o = 12, 13
    if weights == "reduced":
        w = g.integers(-64, 65, (o, c, 3, 3))
    elif weights == "edges":  # per row one b and one -c, the rest at 128 - b or c - 128
        w = np.empty((o, c * 9), np.int64)
        for r in range(o):
            b, n = int(g.integers(65, 128)), int(g.integers(65, 129))
            w[r] = g.choice([128 - b, n - 128], c * 9)
            w[r, :2] = b, -n
        w = w.reshape(o, c, 3, 3)
    else:
        w = g.integers(-128, 128, (o, c, 3, 3))
    params = {"w": w.astype(np.int8), "zx": np.array(3, np.uint8), "zw": np.array(0, np.int8)}
    path = tmp_path / "q.mlir"
    path.write_text(QCONV_CONST.format(c=c, o=o))
    source, _ = compile_to_c(parse_file(path)[0], tmp_path / "q.c", params, str(path))
    pairs = re.findall(r"mlvm_qconv2d_t \w+ = \{[^}]*, \w+__s\d+, ([01])\};", source)
    assert pairs == ["0" if weights == "full" else "1"], pairs
    f = mlvm.compile(path, params=params).main
    rule = qconv_rule({"strides": [1, 1], "padding": [1, 1, 1, 1], "dilations": [1, 1], "groups": 1})
    for x in (np.full((1, c, 7, 9), 255, np.uint8), g.integers(0, 256, (1, c, 7, 9)).astype(np.uint8)):
        want = rule(x, params["w"], params["zx"], params["zw"])
        assert np.array_equal(f(x), want)
