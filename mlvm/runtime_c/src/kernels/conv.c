/* conv2d, x NCHW and w OIHW.
 *
 * Each image and group is one matrix product (implicit GEMM): out[og, oh*ow]
 * = w[og, cg*kh*kw] @ cols[cg*kh*kw, oh*ow], where column (oh, ow) of cols
 * holds the input window of that output position. cols is never stored:
 * the blocked GEMM asks for it sliver by sliver (kc rows x NR columns, in a
 * buffer on the stack) and pack_window gathers the sliver from x, copying
 * contiguous runs for stride 1 and writing zeros for the padding. The
 * weights are read in place (row-major OIHW is already the GEMM's a), and
 * the bias is added in the GEMM's store. A 1x1 convolution with stride 1
 * and no padding reads x as b directly.
 *
 * Groups with fewer than MLVM_CONV_GEMM_ROWS output channels (depthwise
 * convolutions) do too little work per gathered element for a GEMM: they
 * accumulate row by row, one output row in L1 at a time, with a contiguous
 * (vectorisable) inner loop for stride 1. */
#include <string.h>

#include "gemm.h"
#include "mlvm/kernels.h"

#ifndef MLVM_CONV_GEMM_ROWS
#define MLVM_CONV_GEMM_ROWS 4
#endif

static mlvm_index_t imin(mlvm_index_t a, mlvm_index_t b) { return a < b ? a : b; }
static mlvm_index_t imax(mlvm_index_t a, mlvm_index_t b) { return a > b ? a : b; }

/* floor(a / b) and ceil(a / b) for b > 0 and any sign of a. */
static mlvm_index_t floor_div(mlvm_index_t a, mlvm_index_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static mlvm_index_t ceil_div(mlvm_index_t a, mlvm_index_t b)
{
    return -floor_div(-a, b);
}

/* The outputs q in [0, n) of a row whose input column iw0 + q * s lies in
 * [0, w): [*lo, *hi). */
static void valid_span(mlvm_index_t iw0, mlvm_index_t s, mlvm_index_t w, mlvm_index_t n,
                       mlvm_index_t *lo, mlvm_index_t *hi)
{
    *lo = imin(n, imax(0, ceil_div(-iw0, s)));
    *hi = imax(*lo, imin(n, floor_div(w - 1 - iw0, s) + 1));
}

typedef struct window_ctx {
    const mlvm_conv2d_t *p;
    const float *x; /* the group's first input channel of this image */
} window_ctx_t;

/* n floats from src to dst, or zeros when src is NULL. The sizes a sliver's
 * runs usually have are constants here, so the compiler inlines the copy
 * rather than calling memcpy for 32 floats. */
static void put_run(float *dst, const float *src, mlvm_index_t n)
{
    switch (n) {
    case 32:
        if (src != NULL) memcpy(dst, src, 32 * sizeof *dst); else memset(dst, 0, 32 * sizeof *dst);
        return;
    case 16:
        if (src != NULL) memcpy(dst, src, 16 * sizeof *dst); else memset(dst, 0, 16 * sizeof *dst);
        return;
    case 8:
        if (src != NULL) memcpy(dst, src, 8 * sizeof *dst); else memset(dst, 0, 8 * sizeof *dst);
        return;
    default:
        if (n <= 0)
            return;
        if (src != NULL) memcpy(dst, src, (size_t)n * sizeof *dst); else memset(dst, 0, (size_t)n * sizeof *dst);
    }
}

/* Rows k0 .. k0+kc of cols (k = (c * kh + i) * kw + j) for output positions
 * j0 .. j0+nr, into buf (row stride ld, zeros past nr). */
static void pack_window(const void *vctx, mlvm_index_t k0, mlvm_index_t kc, mlvm_index_t j0,
                        int nr, float *buf, int ld)
{
    const window_ctx_t *ctx = (const window_ctx_t *)vctx;
    const mlvm_conv2d_t *p = ctx->p;
    const mlvm_index_t taps = p->kh * p->kw, oh0 = j0 / p->ow, ow0 = j0 % p->ow;
    mlvm_index_t t, q, lo, hi;
    mlvm_index_t c = k0 / taps, i = k0 % taps / p->kw, j = k0 % p->kw;
    for (t = 0; t < kc; ++t) {
        const float *xc = ctx->x + c * p->h * p->w;
        float *dst = buf + t * ld;
        mlvm_index_t col = 0, oh = oh0, ow = ow0;
        while (col < nr) {
            const mlvm_index_t seg = imin(nr - col, p->ow - ow);
            const mlvm_index_t ih = oh * p->sh + i * p->dh - p->pt;
            const mlvm_index_t iw0 = ow * p->sw + j * p->dw - p->pl;
            const float *xr = xc; /* row ih from column iw0, once ih is valid */
            float *d = dst + col;
            if (ih >= 0 && ih < p->h)
                xr += ih * p->w + iw0;
            if (ih < 0 || ih >= p->h) {
                put_run(d, NULL, seg);
            } else if (p->sw == 1) {
                lo = imin(seg, imax(0, -iw0));
                hi = imax(lo, imin(seg, p->w - iw0));
                if (lo == 0 && hi == seg) {
                    put_run(d, xr, seg);
                } else {
                    put_run(d, NULL, lo);
                    put_run(d + lo, xr + lo, hi - lo);
                    put_run(d + hi, NULL, seg - hi);
                }
            } else {
                valid_span(iw0, p->sw, p->w, seg, &lo, &hi);
                put_run(d, NULL, lo);
                for (q = lo; q < hi; ++q)
                    d[q] = xr[q * p->sw];
                put_run(d + hi, NULL, seg - hi);
            }
            col += seg;
            ow = 0;
            ++oh;
        }
        put_run(dst + nr, NULL, ld - nr);
        if (++j == p->kw) {
            j = 0;
            if (++i == p->kh) {
                i = 0;
                ++c;
            }
        }
    }
}

/* Output channels o0 .. o0+og of one image, each from its own cg input
 * channels, accumulated row by row. The valid output columns of each kernel
 * column do not depend on the row: they are found once per call (for up
 * to MLVM_CONV_SPAN_TAPS kernel columns; wider kernels find them per row). */
#define MLVM_CONV_SPAN_TAPS 16
static void conv_rows(const mlvm_conv2d_t *p, mlvm_index_t og, const float *x,
                      const float *w, const float *bias, float *out)
{
    const mlvm_index_t cg = p->c / p->groups, taps = p->kh * p->kw;
    mlvm_index_t span_lo[MLVM_CONV_SPAN_TAPS], span_hi[MLVM_CONV_SPAN_TAPS];
    mlvm_index_t o, c, oh, i, j, q, lo, hi;
    for (j = 0; j < p->kw && j < MLVM_CONV_SPAN_TAPS; ++j)
        valid_span(j * p->dw - p->pl, p->sw, p->w, p->ow, &span_lo[j], &span_hi[j]);
    for (o = 0; o < og; ++o) {
        for (oh = 0; oh < p->oh; ++oh) {
            float *orow = out + (o * p->oh + oh) * p->ow;
            mlvm_fill_f32((size_t)p->ow, bias != NULL ? bias[o] : 0.0f, orow);
            for (c = 0; c < cg; ++c) {
                const float *xc = x + c * p->h * p->w;
                const float *wc = w + (o * cg + c) * taps;
                for (i = 0; i < p->kh; ++i) {
                    const mlvm_index_t ih = oh * p->sh + i * p->dh - p->pt;
                    if (ih < 0 || ih >= p->h)
                        continue;
                    for (j = 0; j < p->kw; ++j) {
                        const float wv = wc[i * p->kw + j];
                        const mlvm_index_t iw0 = j * p->dw - p->pl;
                        const float *xr = xc + ih * p->w;
                        if (j < MLVM_CONV_SPAN_TAPS) {
                            lo = span_lo[j];
                            hi = span_hi[j];
                        } else {
                            valid_span(iw0, p->sw, p->w, p->ow, &lo, &hi);
                        }
                        /* constant strides, so that the loads vectorise */
                        if (p->sw == 1)
                            for (q = lo; q < hi; ++q)
                                orow[q] += wv * xr[iw0 + q];
                        else if (p->sw == 2)
                            for (q = lo; q < hi; ++q)
                                orow[q] += wv * xr[iw0 + 2 * q];
                        else
                            for (q = lo; q < hi; ++q)
                                orow[q] += wv * xr[iw0 + q * p->sw];
                    }
                }
            }
        }
    }
}

/* Depthwise-like groups (one input channel) with stride 1 and output rows
 * as wide as input rows ("same" padding): then tap (i, j) reads x at the
 * output's flat index plus one constant, so each tap is one long
 * vectorisable loop over a chunk of rows, rows of a few columns included
 * (a keyword spotter's 25x5 maps). The columns a tap wraps into are masked
 * by a select (never a product, so a NaN or inf there cannot leak), from a
 * mask of the chunk built once per call. Same sums in the same order as
 * conv_rows. Only where loops vectorise; kernels up to MLVM_DW_TAPS wide. */
#if defined(__x86_64__) || defined(__aarch64__) || defined(__powerpc64__)
#define MLVM_DW_FLAT 1
#define MLVM_DW_CHUNK 256
#define MLVM_DW_TAPS 5
static int flat_ok(const mlvm_conv2d_t *p)
{
    return p->c == p->groups && p->sh == 1 && p->sw == 1 && p->ow == p->w
           && p->kw <= MLVM_DW_TAPS && p->ow <= MLVM_DW_CHUNK;
}

typedef float mlvm_dw_mask_t[MLVM_DW_TAPS][MLVM_DW_CHUNK];

/* Which columns of a chunk of rows tap column j reads inside its row. */
static void flat_mask(const mlvm_conv2d_t *p, mlvm_dw_mask_t mask)
{
    const mlvm_index_t ow = p->ow, rows = MLVM_DW_CHUNK / ow;
    mlvm_index_t j, r, q;
    for (j = 0; j < p->kw; ++j)
        for (r = 0; r < rows; ++r)
            for (q = 0; q < ow; ++q) {
                const mlvm_index_t iw = q + j * p->dw - p->pl;
                mask[j][r * ow + q] = iw >= 0 && iw < p->w ? 1.0f : 0.0f;
            }
}

static void conv_flat(const mlvm_conv2d_t *p, mlvm_dw_mask_t mask, mlvm_index_t og,
                      const float *x, const float *w, const float *bias, float *out)
{
    const mlvm_index_t ow = p->ow, rows = MLVM_DW_CHUNK / ow, plane = p->h * p->w;
    mlvm_index_t o, r0, i, j, t, t0, t1, lo, hi;
    for (o = 0; o < og; ++o) {
        float *op = out + o * p->oh * ow;
        mlvm_fill_f32((size_t)(p->oh * ow), bias != NULL ? bias[o] : 0.0f, op);
        for (r0 = 0; r0 < p->oh; r0 += rows) {
            const mlvm_index_t r1 = imin(p->oh, r0 + rows);
            float *oc = op + r0 * ow;
            for (i = 0; i < p->kh; ++i) {
                /* output rows whose input row for tap i exists */
                lo = imax(r0, p->pt - i * p->dh);
                hi = imin(r1, p->h + p->pt - i * p->dh);
                for (j = 0; j < p->kw && lo < hi; ++j) {
                    const float wv = w[o * p->kh * p->kw + i * p->kw + j];
                    const mlvm_index_t off = (i * p->dh - p->pt) * p->w + j * p->dw - p->pl;
                    const float *m = mask[j];
                    /* the chunk's flat range, trimmed to reads inside the
                     * plane (the trimmed ends are masked columns anyway) */
                    t0 = (lo - r0) * ow;
                    t1 = (hi - r0) * ow;
                    t0 = imax(t0, -off - r0 * ow);
                    t1 = imin(t1, plane - off - r0 * ow);
                    if (t0 < t1) {
                        const mlvm_index_t base = r0 * ow + off;
                        for (t = t0; t < t1; ++t)
                            oc[t] += m[t] != 0.0f ? wv * x[base + t] : 0.0f;
                    }
                }
            }
        }
    }
}
#endif

void mlvm_conv2d_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                     const float *bias, float *out)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups;
    const mlvm_index_t plane = p->oh * p->ow, in_plane = p->h * p->w;
    const mlvm_index_t k = cg * p->kh * p->kw;
    const int pointwise = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1
                          && p->pt == 0 && p->pl == 0 && p->oh == p->h && p->ow == p->w;
    mlvm_index_t n, g;
#ifdef MLVM_DW_FLAT
    mlvm_dw_mask_t mask;
    const int flat = og < MLVM_CONV_GEMM_ROWS && flat_ok(p);
    if (flat)
        flat_mask(p, mask);
#endif
    for (n = 0; n < p->n; ++n) {
        for (g = 0; g < p->groups; ++g) {
            const float *xg = x + (n * p->c + g * cg) * in_plane;
            const float *bg = bias != NULL ? bias + g * og : NULL;
            float *og_out = out + (n * p->o + g * og) * plane;
            window_ctx_t ctx;
            mlvm_gemm_t gm;
            if (og < MLVM_CONV_GEMM_ROWS) {
#ifdef MLVM_DW_FLAT
                if (flat) {
                    conv_flat(p, mask, og, xg, w + g * og * k, bg, og_out);
                    continue;
                }
#endif
                conv_rows(p, og, xg, w + g * og * k, bg, og_out);
                continue;
            }
            ctx.p = p;
            ctx.x = xg;
            gm.m = og;
            gm.n = plane;
            gm.k = k;
            gm.a = w + g * og * k;
            gm.a_rs = k;
            gm.a_cs = 1;
            gm.b = pointwise ? xg : NULL;
            gm.b_rs = plane;
            gm.b_cs = 1;
            gm.pack = pointwise ? NULL : pack_window;
            gm.pack_ctx = &ctx;
            gm.bias = bg;
            gm.out = og_out;
            gm.c_rs = plane;
            gm.epilogue = NULL;
            gm.epilogue_ctx = NULL;
            mlvm_gemm_f32(&gm);
        }
    }
}
