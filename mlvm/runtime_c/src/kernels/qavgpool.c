/* mlvm.qavgpool2d: a quantized average pool as onnxruntime's
 * QLinearAveragePool computes it, so that the bytes are its own: every
 * value dequantized in f32, (float)(x - zx) * xs (what onnxruntime's
 * table of the 256 byte values holds; no table here, a kilobyte of stack
 * on a microcontroller), each window summed from 0 row by row, divided by its count, then the zero
 * point added before rounding half to even. The order of the sums is
 * part of the result (a 2x2 window summed column by column differs in a
 * fifth of a percent of a quantized DenseNet's outputs), so no partial
 * sums are shared between windows. */
#include <math.h>
#include <string.h>

#include "mlvm/kernels.h"
#include "mlvm/kernels_nn.h"
#include "mlvm/scalar.h"
#include "window.h"

#if defined(__ARM_FEATURE_SIMD32) && !defined(MLVM_PORTABLE_KERNELS)
#include <arm_acle.h>
#define MLVM_QP_USADA8 1
#endif

/* A chunk of up to MLVM_QP_CHUNK outputs of a row at a time, each its own
 * lane of acc: per input row of the windows, its values in the chunk's
 * columns dequantized once into buf (0.0f for the padding), then tap by
 * tap added to every lane, so that each window is still summed in its own
 * row-major order (a padded tap adds +0.0f, which leaves any sum that is
 * not -0.0f as it is, and a sum from +0.0f is never -0.0f). */
#ifdef MLVM_SCALAR_CORE
#define MLVM_QP_CHUNK 16
#else
#define MLVM_QP_CHUNK 64
#endif

typedef struct qp_ctx {
    const mlvm_pool2d_t *p;
    int32_t is_signed, zx;
    float s, sy, zy;
} qp_ctx_t;

/* buf[t - a] = row[t] dequantized for t in [a, b), 0 outside [0, w). */
static void qp_row(const qp_ctx_t *c, const uint8_t *row, mlvm_index_t a, mlvm_index_t b, float *buf)
{
    const mlvm_index_t lo = mlvm_imax(a, 0), hi = mlvm_imax(lo, mlvm_imin(b, c->p->w));
    const int32_t zx = c->zx; /* in locals: the stores to buf might alias *c */
    const float s = c->s;
    mlvm_index_t t;
    for (t = a; t < lo; ++t)
        buf[t - a] = 0.0f;
    if (c->is_signed)
        for (t = lo; t < hi; ++t)
            buf[t - a] = (float)((int32_t)(int8_t)row[t] - zx) * s;
    else
        for (t = lo; t < hi; ++t)
            buf[t - a] = (float)((int32_t)row[t] - zx) * s;
    for (t = hi; t < b; ++t)
        buf[t - a] = 0.0f;
}

/* acc[u] of a window that reaches past x's columns. */
static float qp_edge(const mlvm_pool2d_t *p, float acc, mlvm_index_t col, mlvm_index_t rows, float sy, float zy)
{
    const mlvm_index_t w0 = mlvm_imax(col, 0), w1 = mlvm_imin(col + p->kw, p->w);
    return acc / (float)(rows * (w1 - w0)) / sy + zy;
}

/* o[u] from the sums acc[u] of n outputs of a row, u < n: output u's
 * window spans input rows [h0, h1) and padded columns from a + u * sw;
 * its sum over the count of its elements inside x, over ys, plus zy,
 * quantized. The windows whose columns all lie inside x, [u0, u1), share
 * one count, so that their loop vectorises (its divisions too); the two
 * loops apart, and one per sign, for the same reason. */
static void qp_finish(const qp_ctx_t *c, float *restrict acc, mlvm_index_t n, mlvm_index_t h0, mlvm_index_t h1,
                      mlvm_index_t a, uint8_t *restrict o)
{
    const mlvm_pool2d_t *p = c->p;
    const float sy = c->sy, zy = c->zy;
    const mlvm_index_t sw = p->sw, rows = h1 - h0, right = p->w - p->kw - a;
    const mlvm_index_t u0 = mlvm_imin(a >= 0 ? 0 : (-a + sw - 1) / sw, n);
    const mlvm_index_t u1 = right < 0 ? u0 : mlvm_imax(u0, mlvm_imin(right / sw + 1, n));
    const float inside = (float)(rows * p->kw);
    mlvm_index_t u;
    for (u = 0; u < u0; ++u)
        acc[u] = qp_edge(p, acc[u], a + u * sw, rows, sy, zy);
    for (; u < u1; ++u)
        acc[u] = acc[u] / inside / sy + zy;
    for (; u < n; ++u)
        acc[u] = qp_edge(p, acc[u], a + u * sw, rows, sy, zy);
    if (c->is_signed)
        for (u = 0; u < n; ++u)
            o[u] = (uint8_t)mlvm_quantize_i8(acc[u], 0);
    else
        for (u = 0; u < n; ++u)
            o[u] = mlvm_quantize_ui8(acc[u], 0);
}

/* acc[u] += buf[u * S + j], u < n (S 1 or 2 a constant, so that it vectorises). */
#define MLVM_QP_TAP(S)                                                                          \
    do {                                                                                        \
        for (u = 0; u < n; ++u)                                                                 \
            acc[u] += buf[u * (S) + j];                                                         \
    } while (0)

static void qp_chunk(const qp_ctx_t *c, const uint8_t *xp, mlvm_index_t h0, mlvm_index_t h1,
                     mlvm_index_t ox0, mlvm_index_t n, uint8_t *o)
{
    const mlvm_pool2d_t *p = c->p;
    const mlvm_index_t a = ox0 * p->sw - p->pl, b = a + (n - 1) * p->sw + p->kw;
    float acc[MLVM_QP_CHUNK], buf[(MLVM_QP_CHUNK - 1) * 3 + 16];
    const int fits = b - a <= (mlvm_index_t)(sizeof buf / sizeof buf[0]);
    mlvm_index_t i, j, u;
    for (u = 0; u < n; ++u)
        acc[u] = 0.0f;
    if (!fits) { /* strides past 3 or windows past 16 wide: one output at a time */
        for (u = 0; u < n; ++u) {
            const mlvm_index_t w0 = mlvm_imax(a + u * p->sw, 0), w1 = mlvm_imin(a + u * p->sw + p->kw, p->w);
            for (i = h0; i < h1; ++i)
                for (j = w0; j < w1; ++j)
                    acc[u] += (float)((c->is_signed ? (int32_t)(int8_t)xp[i * p->w + j]
                                                     : (int32_t)xp[i * p->w + j]) - c->zx) * c->s;
        }
    } else {
        for (i = h0; i < h1; ++i) {
            qp_row(c, xp + i * p->w, a, b, buf);
            for (j = 0; j < p->kw; ++j) {
                if (p->sw == 1)
                    MLVM_QP_TAP(1);
                else if (p->sw == 2)
                    MLVM_QP_TAP(2);
                else
                    MLVM_QP_TAP(p->sw);
            }
        }
    }
    qp_finish(c, acc, n, h0, h1, a, o);
}
#undef MLVM_QP_TAP

#ifndef MLVM_SCALAR_CORE
/* Stride 1 over a plane whose padded copy and sums fit MLVM_QP_PLANE floats:
 * the plane dequantized once, zero-padded, at a row pitch wp (the padded
 * width the windows span); then for
 * every tap, in row-major order, one flat loop over all outputs at that
 * pitch (output (y, x) at y * wp + x reads y * wp + x + i * wp + j), so
 * that every window is summed in its own order by long vector loops; the
 * columns past ow are computed and dropped. */
#define MLVM_QP_PLANE 2048 /* 8 KB of stack */

static int qp_flat(const mlvm_pool2d_t *p)
{
    const mlvm_index_t wp = p->ow + p->kw - 1, hp = p->oh + p->kh - 1;
    return p->sh == 1 && p->sw == 1 && hp * wp + p->oh * wp <= MLVM_QP_PLANE;
}

static void qp_plane(const qp_ctx_t *c, const uint8_t *xp, uint8_t *o)
{
    const mlvm_pool2d_t *p = c->p;
    const mlvm_index_t wp = p->ow + p->kw - 1, hp = p->oh + p->kh - 1, n = p->oh * wp;
    float pad[MLVM_QP_PLANE], *const acc = pad + hp * wp;
    mlvm_index_t y, t, i, j;
    for (y = 0; y < hp; ++y) /* padded row y is input row y - pt, at columns pl .. pl + w */
        if (y < p->pt || y - p->pt >= p->h)
            for (t = 0; t < wp; ++t)
                pad[y * wp + t] = 0.0f;
        else
            qp_row(c, xp + (y - p->pt) * p->w, -p->pl, wp - p->pl, pad + y * wp);
    for (t = 0; t < n; ++t)
        acc[t] = 0.0f;
    for (i = 0; i < p->kh; ++i)
        for (j = 0; j < p->kw; ++j) {
            const float *src = pad + i * wp + j;
            for (t = 0; t < n; ++t)
                acc[t] += src[t];
        }
    for (y = 0; y < p->oh; ++y)
        qp_finish(c, acc + y * wp, p->ow, mlvm_imax(y - p->pt, 0), mlvm_imin(y - p->pt + p->kh, p->h),
                  -p->pl, o + y * p->ow);
}
#endif

void mlvm_qavgpool2d_8(const mlvm_pool2d_t *p, int32_t is_signed, const void *x, const float *xs,
                       const void *zx, const float *ys, const void *zy, void *out)
{
    qp_ctx_t c;
    const uint8_t *in = (const uint8_t *)x;
    uint8_t *o = (uint8_t *)out;
    mlvm_index_t pl, oy, ox, n;
    c.p = p, c.is_signed = is_signed, c.s = *xs, c.sy = *ys;
    c.zx = is_signed ? *(const int8_t *)zx : *(const uint8_t *)zx;
    c.zy = (float)(is_signed ? *(const int8_t *)zy : *(const uint8_t *)zy);
    for (pl = 0; pl < p->planes; ++pl) {
        const uint8_t *xp = in + pl * p->h * p->w;
#ifndef MLVM_SCALAR_CORE
        if (qp_flat(p)) {
            qp_plane(&c, xp, o);
            o += p->oh * p->ow;
            continue;
        }
#endif
        for (oy = 0; oy < p->oh; ++oy, o += p->ow) {
            const mlvm_index_t h0 = mlvm_imax(oy * p->sh - p->pt, 0);
            const mlvm_index_t h1 = mlvm_imin(oy * p->sh - p->pt + p->kh, p->h);
            for (ox = 0; ox < p->ow; ox += n) {
                n = mlvm_imin(p->ow - ox, MLVM_QP_CHUNK);
                qp_chunk(&c, xp, h0, h1, ox, n, o + ox);
            }
        }
    }
}

/* The sum of a plane's n bytes, signed or not, wrapping as int32. With the
 * DSP extension eight at a time by two USADA8 (the sum of their differences
 * from 0; signed bytes flipped to unsigned order first, 128 each taken off
 * after; ARM's SIMD32 instructions, with the DSP extension on a
 * Cortex-M): a keyword spotter's 8,000 bytes took 3 instructions a byte. */
static uint32_t qp_plane_sum(const uint8_t *in, size_t n, int32_t is_signed)
{
    const uint8_t *const end = in + n;
    uint32_t acc = 0;
#ifdef MLVM_QP_USADA8
    const uint32_t flip = is_signed ? 0x80808080u : 0u;
    const uint8_t *const end8 = in + (n & ~(size_t)7);
    uint32_t a, b;
    for (; in != end8; in += 8) {
        memcpy(&a, in, 4), memcpy(&b, in + 4, 4);
        acc = __usada8(b ^ flip, 0u, __usada8(a ^ flip, 0u, acc));
    }
    acc -= (flip & 128u) * (uint32_t)(n & ~(size_t)7);
#endif
    if (is_signed)
        for (; in != end; ++in)
            acc += (uint32_t)(int32_t)(int8_t)*in;
    else
        for (; in != end; ++in)
            acc += *in;
    return acc;
}

/* A window the size of the map, no padding (onnxruntime's QLinearAveragePool
 * then runs its global pool, and its QDQ GlobalAveragePool is this): per
 * plane the integer sum of x - zx, times xs / (ys * n) in f32, clamped to
 * the output's range less zy, rounded half to even, plus zy. */
void mlvm_qavgpool2d_global_8(size_t planes, size_t n, int32_t is_signed, const void *x,
                              const float *xs, const void *zx, const float *ys, const void *zy,
                              void *out)
{
    const int32_t zxv = is_signed ? *(const int8_t *)zx : *(const uint8_t *)zx;
    const int32_t zyv = is_signed ? *(const int8_t *)zy : *(const uint8_t *)zy;
    const float scale = *xs / (*ys * (float)(int32_t)n);
    const float lo = (float)((is_signed ? -128 : 0) - zyv), hi = (float)((is_signed ? 127 : 255) - zyv);
    const uint8_t *in = (const uint8_t *)x;
    uint8_t *o = (uint8_t *)out;
    size_t pl;
    for (pl = 0; pl < planes; ++pl, in += n) {
        /* wraps as onnxruntime's int32 */
        const uint32_t acc = qp_plane_sum(in, n, is_signed) - (uint32_t)zxv * (uint32_t)n;
        float f = (float)(int32_t)acc * scale;
        f = f != f ? 0.0f : f < lo ? lo : f > hi ? hi : f;
        o[pl] = (uint8_t)((int32_t)nearbyintf(f) + zyv);
    }
}
