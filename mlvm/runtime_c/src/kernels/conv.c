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
 * convolutions) do too little work per gathered element for a GEMM: with
 * stride 1 and "same" widths they sum chunks of rows in vector registers
 * (depthwise.c, AVX2 / AVX-512) or tap by tap over flat chunks (conv_flat);
 * otherwise they accumulate row by row, one output row in L1 at a time,
 * with a contiguous (vectorisable) inner loop for stride 1. */
#include <string.h>

#if (defined(__AVX512F__) || defined(__AVX2__)) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#endif

#include "conv_cvec.h"
#include "conv_scalar.h"
#include "depthwise.h"
#include "gemm.h"
#include "split2.h"
#include "window.h"
#include "mlvm/kernels.h"

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
            const mlvm_index_t seg = mlvm_imin(nr - col, p->ow - ow);
            const mlvm_index_t ih = oh * p->sh + i * p->dh - p->pt;
            const mlvm_index_t iw0 = ow * p->sw + j * p->dw - p->pl;
            const float *xr = xc; /* row ih from column iw0, once ih is valid */
            float *d = dst + col;
            if (ih >= 0 && ih < p->h)
                xr += ih * p->w + iw0;
            if (ih < 0 || ih >= p->h) {
                put_run(d, NULL, seg);
            } else if (p->sw == 1) {
                lo = mlvm_imin(seg, mlvm_imax(0, -iw0));
                hi = mlvm_imax(lo, mlvm_imin(seg, p->w - iw0));
                if (lo == 0 && hi == seg) {
                    put_run(d, xr, seg);
                } else {
                    put_run(d, NULL, lo);
                    put_run(d + lo, xr + lo, hi - lo);
                    put_run(d + hi, NULL, seg - hi);
                }
            } else {
                mlvm_valid_span(iw0, p->sw, p->w, seg, &lo, &hi);
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
        mlvm_valid_span(j * p->dw - p->pl, p->sw, p->w, p->ow, &span_lo[j], &span_hi[j]);
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
                            mlvm_valid_span(iw0, p->sw, p->w, p->ow, &lo, &hi);
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
 * conv_rows. Only where loops vectorise; kernels up to MLVM_DW_TAPS wide;
 * with AVX2 / AVX-512, only where depthwise.c does not apply (rows wider than
 * its chunk, kernels taller than 16 rows). */
#define MLVM_DW_CHUNK 256
static int flat_ok(const mlvm_conv2d_t *p)
{
    return p->c == p->groups && p->sh == 1 && p->sw == 1 && p->ow == p->w
           && p->kw <= MLVM_DW_TAPS && p->ow <= MLVM_DW_CHUNK;
}

#if defined(__x86_64__) || defined(__aarch64__) || defined(__powerpc64__)
#define MLVM_DW_FLAT 1

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
            const mlvm_index_t r1 = mlvm_imin(p->oh, r0 + rows);
            float *oc = op + r0 * ow;
            for (i = 0; i < p->kh; ++i) {
                /* output rows whose input row for tap i exists */
                lo = mlvm_imax(r0, p->pt - i * p->dh);
                hi = mlvm_imin(r1, p->h + p->pt - i * p->dh);
                for (j = 0; j < p->kw && lo < hi; ++j) {
                    const float wv = w[o * p->kh * p->kw + i * p->kw + j];
                    const mlvm_index_t off = (i * p->dh - p->pt) * p->w + j * p->dw - p->pl;
                    const float *m = mask[j];
                    /* the chunk's flat range, trimmed to reads inside the
                     * plane (the trimmed ends are masked columns anyway) */
                    t0 = (lo - r0) * ow;
                    t1 = (hi - r0) * ow;
                    t0 = mlvm_imax(t0, -off - r0 * ow);
                    t1 = mlvm_imin(t1, plane - off - r0 * ow);
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

/* Direct path, given a workspace (mlvm_conv2d_ws_f32): each group's input
 * channels are copied once per call, zero-padded and split into sh * sw
 * stride phases (plane (a, b) holds padded rows a, a + sh, ... and columns
 * b, b + sw, ...), each phase plane hq x wq. Then tap (c, i, j) of every
 * output position (oy, ox) lies at one constant offset from the position's
 * flat index oy * wq + ox, so the product is a GEMM whose b rows are read
 * in place at those offsets (no gathering per sliver). Outputs are computed
 * at row pitch wq; when wq > ow (kernels wider than 1) the wq - ow extra
 * columns of each row are computed into the workspace and dropped when the
 * rows are copied out. Padding enters as zeros: 0 * w is added where the
 * portable path adds nothing (the same result unless w is inf or NaN). */
typedef struct direct_geom {
    mlvm_window_t win;
    mlvm_phases_t ph;   /* phase planes of one channel, flat outputs per channel */
    mlvm_index_t chans; /* channels copied at once: a group's, or the image's */
    size_t off_bytes, in_bytes, out_bytes; /* workspace parts, each 64-byte aligned */
} direct_geom_t;

#define MLVM_WS_ALIGN 64
#define MLVM_WS_OFF_BYTES 8 /* per tap offset, whatever sizeof(mlvm_index_t) */
#define MLVM_WS_SLACK 64    /* floats after the phase planes (taps_flat reads them) */

static size_t ws_align(size_t n) { return (n + MLVM_WS_ALIGN - 1) / MLVM_WS_ALIGN * MLVM_WS_ALIGN; }

/* A 1x1 convolution with stride 1 and no padding: x is its GEMM's b (or,
 * with IHWO weights, its broadcast operand) in place. */
MLVM_ALWAYS_INLINE int is_pointwise(const mlvm_conv2d_t *p)
{
    return p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pt == 0 && p->pl == 0
           && p->oh == p->h && p->ow == p->w;
}

/* Not for a 1x1 convolution that reads x in place anyway, nor for
 * depthwise ones the flat path covers without copying (on small maps the
 * copy costs more than the taps). */
static int direct_applies(const mlvm_conv2d_t *p)
{
    const int pointwise = is_pointwise(p);
    const int flat = p->o / p->groups < MLVM_CONV_GEMM_ROWS && flat_ok(p);
    return !pointwise && !flat && p->oh > 0 && p->ow > 0;
}

static void direct_geom(const mlvm_conv2d_t *p, direct_geom_t *g)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups;
    const mlvm_window_t win = {p->oh, p->ow, p->kh, p->kw, p->sh, p->sw, p->dh, p->dw};
    g->win = win;
    g->ph = mlvm_phases_of(&win);
    /* depthwise-like groups: all channels in one pass (spans found once) */
    g->chans = og < MLVM_CONV_GEMM_ROWS ? p->c : cg;
    g->off_bytes = ws_align((size_t)(cg * p->kh * p->kw) * MLVM_WS_OFF_BYTES);
    g->in_bytes = ws_align((size_t)(g->chans * g->ph.phases * g->ph.plane + MLVM_WS_SLACK)
                           * sizeof(float));
    g->out_bytes = g->ph.wq == p->ow ? 0 : ws_align((size_t)(og * g->ph.n) * sizeof(float));
}

size_t mlvm_conv2d_workspace(const mlvm_conv2d_t *p)
{
    direct_geom_t g;
    if (!direct_applies(p))
        return 0;
    direct_geom(p, &g);
    return g.off_bytes + g.in_bytes + g.out_bytes;
}

/* n floats (a row into or out of the phase planes): vector loads and
 * stores with a masked tail where there are vectors (no memcpy call per
 * row of 32 or 5 floats); elsewhere 4-float steps, which no compiler turns
 * back into a memcpy call. */
#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
static void copy_row(float *dst, const float *src, mlvm_index_t n)
{
    mlvm_index_t q = 0;
    for (; q + 16 <= n; q += 16)
        _mm512_storeu_ps(dst + q, _mm512_loadu_ps(src + q));
    if (q < n) {
        const __mmask16 m = (__mmask16)((1u << (n - q)) - 1u);
        _mm512_mask_storeu_ps(dst + q, m, _mm512_maskz_loadu_ps(m, src + q));
    }
}
#elif defined(__AVX2__) && !defined(MLVM_PORTABLE_KERNELS)
static void copy_row(float *dst, const float *src, mlvm_index_t n)
{
    mlvm_index_t q = 0;
    for (; q + 8 <= n; q += 8)
        _mm256_storeu_ps(dst + q, _mm256_loadu_ps(src + q));
    if (q < n) {
        const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - q)),
                                             _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        _mm256_maskstore_ps(dst + q, m, _mm256_maskload_ps(src + q, m));
    }
}
#else
static void copy_row(float *dst, const float *src, mlvm_index_t n)
{
    mlvm_index_t q = 0;
    if (n >= 32) {
        memcpy(dst, src, (size_t)n * sizeof *dst);
        return;
    }
    for (; q + 4 <= n; q += 4) {
        const float a = src[q], b = src[q + 1], c = src[q + 2], d = src[q + 3];
        dst[q] = a, dst[q + 1] = b, dst[q + 2] = c, dst[q + 3] = d;
    }
    for (; q < n; ++q)
        dst[q] = src[q];
}
#endif

/* n zeros: with vectors, stores with a masked tail (the pads between two
 * rows, and a plane's top and bottom rows: a memset call each cost the
 * padded copies of ResNet-8's planes a tenth of their time); elsewhere a
 * memset call for long runs, short ones in 4-float steps. */
#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
static void zeros(float *d, mlvm_index_t n)
{
    mlvm_index_t q = 0;
    if (n >= 4096) {
        memset(d, 0, (size_t)n * sizeof *d);
        return;
    }
    for (; q + 16 <= n; q += 16)
        _mm512_storeu_ps(d + q, _mm512_setzero_ps());
    if (q < n)
        _mm512_mask_storeu_ps(d + q, (__mmask16)((1u << (n - q)) - 1u), _mm512_setzero_ps());
}
#else
static void zeros(float *d, mlvm_index_t n)
{
    mlvm_index_t q = 0;
    if (n >= 32) {
        memset(d, 0, (size_t)n * sizeof *d);
        return;
    }
    for (; q + 4 <= n; q += 4)
        d[q] = 0.0f, d[q + 1] = 0.0f, d[q + 2] = 0.0f, d[q + 3] = 0.0f;
    for (; q < n; ++q)
        d[q] = 0.0f;
}
#endif

/* d[q] = s[2 q] for q < n: a stride-2 phase's row. With AVX-512 / AVX2,
 * the even elements of two loads (the second masked so that nothing past
 * s[2 n - 2] is read). */
#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
static void copy_even(float *d, const float *s, mlvm_index_t n)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                           28, 30);
    mlvm_index_t q = 0;
    for (; q + 16 <= n; q += 16) {
        const __m512 a = _mm512_loadu_ps(s + 2 * q);
        const __m512 b = _mm512_maskz_loadu_ps((__mmask16)0x7FFF, s + 2 * q + 16);
        _mm512_storeu_ps(d + q, _mm512_permutex2var_ps(a, even, b));
    }
    for (; q < n; ++q)
        d[q] = s[2 * q];
}
#elif defined(__AVX2__) && !defined(MLVM_PORTABLE_KERNELS)
static void copy_even(float *d, const float *s, mlvm_index_t n)
{
    const __m256i seven = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, -1, 0);
    mlvm_index_t q = 0;
    for (; q + 8 <= n; q += 8) {
        const __m256 a = _mm256_loadu_ps(s + 2 * q);
        const __m256 b = _mm256_maskload_ps(s + 2 * q + 8, seven);
        _mm256_storeu_ps(d + q, mlvm_even8(a, b));
    }
    for (; q < n; ++q)
        d[q] = s[2 * q];
}
#else
static void copy_even(float *d, const float *s, mlvm_index_t n)
{
    mlvm_index_t q;
    for (q = 0; q < n; ++q)
        d[q] = s[2 * q];
}
#endif

/* Both column phases of a stride-2 row in one pass (AVX-512, AVX2): d0[q] =
 * s[2 q] for q < n0 and d1[q] = s[2 q + 1] for q < n1 (n1 = n0 or n0 - 1),
 * the even and odd elements of the same two loads. Elsewhere each phase on
 * its own (copy_even). */
#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
#define MLVM_PHASE_PAIRS 1
static void copy_even_odd(float *d0, float *d1, const float *s, mlvm_index_t n0, mlvm_index_t n1)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                           28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27,
                                          29, 31);
    const mlvm_index_t len = n0 + n1; /* the row's elements: s[0 .. len) */
    mlvm_index_t q = 0;
    for (; 2 * q + 32 <= len; q += 16) {
        const __m512 a = _mm512_loadu_ps(s + 2 * q), b = _mm512_loadu_ps(s + 2 * q + 16);
        _mm512_storeu_ps(d0 + q, _mm512_permutex2var_ps(a, even, b));
        _mm512_storeu_ps(d1 + q, _mm512_permutex2var_ps(a, odd, b));
    }
    if (2 * q < len) {
        const mlvm_index_t left = len - 2 * q; /* 1 .. 31 elements */
        const __mmask16 ma = (__mmask16)(left >= 16 ? 0xFFFFu : (1u << left) - 1u);
        const __mmask16 mb = (__mmask16)(left <= 16 ? 0u : (1u << (left - 16)) - 1u);
        const __m512 a = _mm512_maskz_loadu_ps(ma, s + 2 * q);
        const __m512 b = _mm512_maskz_loadu_ps(mb, s + 2 * q + 16);
        _mm512_mask_storeu_ps(d0 + q, (__mmask16)((1u << (n0 - q)) - 1u),
                              _mm512_permutex2var_ps(a, even, b));
        if (n1 > q)
            _mm512_mask_storeu_ps(d1 + q, (__mmask16)((1u << (n1 - q)) - 1u),
                                  _mm512_permutex2var_ps(a, odd, b));
    }
}
#elif defined(__AVX2__) && !defined(MLVM_PORTABLE_KERNELS)
#define MLVM_PHASE_PAIRS 1
/* (each phase's row on its own read the input row twice, a pass per
 * phase with a masked load each step: MobileNet's stem, 3 -> 8 channels
 * of 96 x 96 at stride 2, spent about 30 % of its time in the copy) */
static void copy_even_odd(float *d0, float *d1, const float *s, mlvm_index_t n0, mlvm_index_t n1)
{
    const mlvm_index_t len = n0 + n1; /* the row's elements: s[0 .. len) */
    mlvm_index_t q = 0;
    for (; 2 * q + 16 <= len; q += 8) {
        const __m256 a = _mm256_loadu_ps(s + 2 * q), b = _mm256_loadu_ps(s + 2 * q + 8);
        _mm256_storeu_ps(d0 + q, mlvm_even8(a, b));
        _mm256_storeu_ps(d1 + q, mlvm_odd8(a, b));
    }
    for (; q < n1; ++q)
        d0[q] = s[2 * q], d1[q] = s[2 * q + 1];
    if (q < n0)
        d0[q] = s[2 * q];
}
#endif

/* Phase planes of cg channels of x (channel c at xs + c * phases * hq * wq);
 * planes no tap reads are left unwritten. In a plane, the rows that lie in
 * x are [r0, r1) and their columns that do [lo, hi): the zeros between two
 * such rows (this row's right pad, the next one's left) are one run. */
static void pad_phases(const mlvm_conv2d_t *p, const direct_geom_t *g, mlvm_index_t cg,
                       const float *x, float *xs)
{
    const mlvm_index_t plane = g->ph.plane, wq = g->ph.wq, x_step = p->sh * p->w;
    mlvm_index_t c, a, b, r, r0, r1, lo, hi, q;
    for (a = 0; a < p->sh; ++a) {
        /* stride 2 with both column phases read: rows that alternate
         * between them column by column go to both in one pass (pair) */
#ifdef MLVM_PHASE_PAIRS
        int pair = 0;
        mlvm_index_t lo2[2] = {0, 0}, hi2[2] = {0, 0}, first = 0;
        if (p->sw == 2 && mlvm_phase_read(&g->win, a, 0) && mlvm_phase_read(&g->win, a, 1)) {
            mlvm_index_t nfirst, nother;
            mlvm_valid_span(-p->pl, 2, p->w, wq, &lo2[0], &hi2[0]);
            mlvm_valid_span(1 - p->pl, 2, p->w, wq, &lo2[1], &hi2[1]);
            /* phase b's first column in x is 2 lo + b - pl; `first` starts
             * the row, the other must take the very next column and have as
             * many columns or one fewer */
            first = 2 * lo2[0] < 2 * lo2[1] + 1 ? 0 : 1;
            nfirst = hi2[first] - lo2[first];
            nother = hi2[1 - first] - lo2[1 - first];
            pair = 2 * lo2[1 - first] + (1 - first) == 2 * lo2[first] + first + 1
                   && nother > 0 && (nfirst == nother || nfirst == nother + 1);
        }
#endif
        for (b = 0; b < p->sw; ++b) {
            if (!mlvm_phase_read(&g->win, a, b))
                continue;
            mlvm_valid_span(a - p->pt, p->sh, p->h, g->ph.hq, &r0, &r1);
            mlvm_valid_span(b - p->pl, p->sw, p->w, wq, &lo, &hi);
            for (c = 0; c < cg; ++c) {
                float *dst = xs + (c * g->ph.phases + a * p->sw + b) * plane, *d = dst + r0 * wq;
                /* row r * sh + a - pt of x, from column lo * sw + b - pl */
                const float *xr = x + (c * p->h + r0 * p->sh + a - p->pt) * p->w + lo * p->sw
                                  + b - p->pl;
                zeros(dst, r0 * wq + lo);
                for (r = r0; r < r1; ++r, d += wq, xr += x_step) {
                    if (p->sw == 1)
                        copy_row(d + lo, xr, hi - lo);
#ifdef MLVM_PHASE_PAIRS
                    else if (pair) { /* both phases' rows in the first one's pass */
                        if (b == first)
                            copy_even_odd(d + lo, dst + (1 - 2 * first) * plane + r * wq
                                                      + lo2[1 - first],
                                          xr, hi - lo, hi2[1 - first] - lo2[1 - first]);
                    }
#endif
                    else if (p->sw == 2)
                        copy_even(d + lo, xr, hi - lo);
                    else
                        for (q = lo; q < hi; ++q)
                            d[q] = xr[(q - lo) * p->sw];
                    zeros(d + hi, wq - hi + (r + 1 < r1 ? lo : 0));
                }
                zeros(dst + (r1 > r0 ? r1 * wq : r0 * wq + lo), r1 > r0 ? (g->ph.hq - r1) * wq
                                                                      : plane - r0 * wq - lo);
            }
        }
    }
}

/* fn (or NULL) over the whole output, seen as [n * o, oh * ow]. */
static void epilogue_whole(const mlvm_conv2d_t *p, float *out, mlvm_epilogue_fn fn, const void *ctx)
{
    const mlvm_index_t plane = p->oh * p->ow;
    if (fn != NULL && p->n * p->o > 0 && plane > 0)
        fn(ctx, 0, p->n * p->o, 0, plane, out, plane);
}

/* A convolution's GEMM: out (m x n, row stride c_rs) = the weights w (rows
 * of k) times b (rows b_rs apart), bias per row and act (or NULL); no
 * panels, row offsets, packing, column bias or epilogue unless the caller
 * sets them. */
static void conv_gemm(mlvm_gemm_t *gm, mlvm_index_t m, mlvm_index_t n, mlvm_index_t k,
                      const float *w, const float *b, mlvm_index_t b_rs, const float *bias,
                      const mlvm_clamp_t *act, float *out, mlvm_index_t c_rs)
{
    gm->m = m;
    gm->n = n;
    gm->k = k;
    gm->a = w;
    gm->a_rs = k;
    gm->a_cs = 1;
    gm->a_panel = 0;
    gm->b = b;
    gm->b_rs = b_rs;
    gm->b_cs = 1;
    gm->b_panel = 0;
    gm->b_off = NULL;
    gm->pack = NULL;
    gm->pack_ctx = NULL;
    gm->bias = bias;
    gm->col_bias = NULL;
    gm->act = act;
    gm->out = out;
    gm->c_rs = c_rs;
    gm->epilogue = NULL;
    gm->epilogue_ctx = NULL;
    gm->b_slab = NULL;
}

/* Rows of out (m x n, row stride c_rs) as one GEMM whose b rows are read
 * at the tap offsets. */
static void direct_gemm(const direct_geom_t *g, mlvm_index_t m, mlvm_index_t k,
                        const mlvm_index_t *off, const float *xs, const float *w,
                        const float *bias, const mlvm_clamp_t *act, float *out, mlvm_index_t c_rs)
{
    mlvm_gemm_t gm;
    conv_gemm(&gm, m, g->ph.n, k, w, xs, 0, bias, act, out, c_rs);
    gm.b_off = off;
    mlvm_gemm_at_f32(&gm);
}

/* One output channel of a group with too few for a GEMM (depthwise):
 * dst[q] = bias + sum_t w[t] xs[off[t] + q] for MLVM_TAP_CHUNK positions,
 * the partial sums in registers, each tap a product then a sum (no fused
 * multiply-add), in order: the same sums as the row path's. */
#define MLVM_TAP_CHUNK MLVM_WS_SLACK
#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_TV __m512
#define MLVM_TV_LANES 16
#define MLVM_TV_SET1 _mm512_set1_ps
#define MLVM_TV_MUL_ADD(acc, w, p) _mm512_add_ps(acc, _mm512_mul_ps(w, _mm512_loadu_ps(p)))
#define MLVM_TV_STORE _mm512_storeu_ps
#elif defined(__AVX__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_TV __m256
#define MLVM_TV_LANES 8
#define MLVM_TV_SET1 _mm256_set1_ps
#define MLVM_TV_MUL_ADD(acc, w, p) _mm256_add_ps(acc, _mm256_mul_ps(w, _mm256_loadu_ps(p)))
#define MLVM_TV_STORE _mm256_storeu_ps
#endif
#ifdef MLVM_TV
static void taps_chunk(mlvm_index_t k, const mlvm_index_t *off, const float *xs,
                       const float *w, float bias, float *dst, int len)
{
    MLVM_TV a[MLVM_TAP_CHUNK / MLVM_TV_LANES];
    (void)len; /* whole vectors */
    mlvm_index_t t;
    int v;
    for (v = 0; v < MLVM_TAP_CHUNK / MLVM_TV_LANES; ++v)
        a[v] = MLVM_TV_SET1(bias);
    for (t = 0; t < k; ++t) {
        const MLVM_TV wv = MLVM_TV_SET1(w[t]);
        const float *src = xs + off[t];
        for (v = 0; v < MLVM_TAP_CHUNK / MLVM_TV_LANES; ++v)
            a[v] = MLVM_TV_MUL_ADD(a[v], wv, src + MLVM_TV_LANES * v);
    }
    for (v = 0; v < MLVM_TAP_CHUNK / MLVM_TV_LANES; ++v)
        MLVM_TV_STORE(dst + MLVM_TV_LANES * v, a[v]);
}
#else
/* Four positions at a time over every tap, the sums in registers (a sum
 * per position in memory, read and written per tap, had cost a Cortex-M4
 * about 12 instructions per multiply-add on MobileNet's strided depthwise
 * layers); bias first, then the taps in order. */
static void taps_chunk(mlvm_index_t k, const mlvm_index_t *off, const float *xs,
                       const float *w, float bias, float *dst, int len)
{
    mlvm_index_t t;
    int q;
    for (q = 0; q < len; q += 4) { /* the chunk's first len positions, in fours */
        float a0 = bias, a1 = bias, a2 = bias, a3 = bias;
        for (t = 0; t < k; ++t) {
            const float wv = w[t], *const src = xs + off[t] + q;
            MLVM_MADD(a0, src[0], wv), MLVM_MADD(a1, src[1], wv);
            MLVM_MADD(a2, src[2], wv), MLVM_MADD(a3, src[3], wv);
        }
        dst[q] = a0, dst[q + 1] = a1, dst[q + 2] = a2, dst[q + 3] = a3;
    }
}
#endif

/* The ragged last chunk is computed into a buffer (whole with vectors, its
 * positions rounded up to four without): its reads run up to
 * MLVM_TAP_CHUNK - 1 floats past the phase planes, into the workspace's
 * slack (MLVM_WS_SLACK), and the lanes past n are dropped. */
static void taps_flat(mlvm_index_t n, mlvm_index_t k, const mlvm_index_t *off, const float *xs,
                      const float *w, float bias, float *dst)
{
    float last[MLVM_TAP_CHUNK];
    mlvm_index_t q0 = 0, q;
    for (; q0 + MLVM_TAP_CHUNK <= n; q0 += MLVM_TAP_CHUNK)
        taps_chunk(k, off, xs + q0, w, bias, dst + q0, MLVM_TAP_CHUNK);
    if (q0 == n)
        return;
    taps_chunk(k, off, xs + q0, w, bias, last, (int)(n - q0));
    for (q = 0; q < n - q0; ++q)
        dst[q0 + q] = last[q];
}

/* One group of one image from its phase planes xs. */
static void direct_group(const mlvm_conv2d_t *p, const direct_geom_t *g, const float *xs,
                         const float *w, const float *bias, const mlvm_clamp_t *act, float *out,
                         unsigned char *ws)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups;
    const mlvm_index_t k = cg * p->kh * p->kw;
    const mlvm_index_t *off = (const mlvm_index_t *)(void *)ws;
    float *tmp = (float *)(void *)(ws + g->off_bytes + g->in_bytes);
    mlvm_index_t o, r;
    if (og < MLVM_CONV_GEMM_ROWS) {
        for (o = 0; o < og; ++o)
            taps_flat(g->ph.n, k, off, xs, w + o * k, bias != NULL ? bias[o] : 0.0f,
                      g->out_bytes == 0 ? out + o * p->oh * p->ow : tmp + o * g->ph.n);
    } else {
        direct_gemm(g, og, k, off, xs, w, bias, act, g->out_bytes == 0 ? out : tmp,
                    g->out_bytes == 0 ? p->oh * p->ow : g->ph.n);
    }
    if (g->out_bytes == 0)
        return;
    for (o = 0; o < og; ++o)
        for (r = 0; r < p->oh; ++r)
            copy_row(out + (o * p->oh + r) * p->ow, tmp + o * g->ph.n + r * g->ph.wq, p->ow);
}

/* The direct path over every image and group; fn (or NULL) is applied to
 * each group's outputs as soon as they are written: rows n * o + g * og
 * .. + og of out seen as [n * o, oh * ow]. */
static void direct_all(const mlvm_conv2d_t *p, const float *x, const float *w, const float *bias,
                       float *out, void *ws, mlvm_epilogue_fn fn, const void *ctx)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups, in_plane = p->h * p->w;
    const mlvm_index_t plane = p->oh * p->ow;
    /* an activation alone: stored clamped by the GEMM's tile kernels */
    const mlvm_clamp_t *act = MLVM_GEMM_TILE_ACT && fn == mlvm_epilogue_clamp_f32
                                  && og >= MLVM_CONV_GEMM_ROWS ? (const mlvm_clamp_t *)ctx : NULL;
    direct_geom_t g;
    float *xs;
    mlvm_index_t n, gi;
    direct_geom(p, &g);
    mlvm_tap_offsets(&g.win, &g.ph, cg * p->kh * p->kw, (mlvm_index_t *)ws);
    xs = (float *)(void *)((unsigned char *)ws + g.off_bytes);
    for (n = 0; n < p->n; ++n) {
        const float *xn = x + n * p->c * in_plane;
        if (g.chans == p->c)
            pad_phases(p, &g, p->c, xn, xs);
        for (gi = 0; gi < p->groups; ++gi) {
            const mlvm_index_t c0 = gi * cg, row = n * p->o + gi * og;
            if (g.chans != p->c)
                pad_phases(p, &g, cg, xn + c0 * in_plane, xs);
            direct_group(p, &g, g.chans == p->c ? xs + c0 * g.ph.phases * g.ph.plane : xs,
                         w + gi * og * cg * p->kh * p->kw, bias != NULL ? bias + gi * og : NULL,
                         act, out + row * plane, (unsigned char *)ws);
            if (fn != NULL && act == NULL)
                fn(ctx, row, og, 0, plane, out + row * plane, plane);
        }
    }
}

/* depthwise.c's and depthwise_lanes.c's kernels where they apply (then 1),
 * with act (or NULL) applied to their sums. */
static int depthwise_regs(const mlvm_conv2d_t *p, const float *x, const float *w,
                          const float *bias, float *out, const mlvm_clamp_t *act)
{
    mlvm_index_t n;
    if (mlvm_dw_lanes_applies(p)) {
        for (n = 0; n < p->n; ++n)
            mlvm_dw_lanes_f32(p, x + n * p->c * p->h * p->w, w, bias,
                              out + n * p->o * p->oh * p->ow, act);
        return 1;
    }
    if (mlvm_dw_regs_applies(p)) {
        mlvm_dw_regs_f32(p, x, w, bias, out, act);
        return 1;
    }
    (void)x, (void)w, (void)bias, (void)out, (void)act;
    return 0;
}

void mlvm_conv2d_ws_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                        const float *bias, float *out, void *ws)
{
    mlvm_conv2d_epilogue_f32(p, x, w, bias, out, ws, NULL, NULL);
}

/* Every image and group without a workspace; fn (or NULL) applied to each
 * group's outputs as soon as they are written (rows n * o + g * og .. + og
 * of out seen as [n * o, oh * ow]), or, an activation alone, by the GEMM's
 * tile kernels as they store (after a 1x1 convolution it had been a pass
 * of its own over the whole output, 2.5 % of a keyword spotter's time). */
static void conv_all(const mlvm_conv2d_t *p, const float *x, const float *w, const float *bias,
                     float *out, mlvm_epilogue_fn fn, const void *ctx)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups;
    const mlvm_index_t plane = p->oh * p->ow, in_plane = p->h * p->w;
    const mlvm_index_t k = cg * p->kh * p->kw;
    const int pointwise = is_pointwise(p);
    /* an activation alone: stored clamped by the GEMM's tile kernels */
    const mlvm_clamp_t *act = MLVM_GEMM_TILE_ACT && fn == mlvm_epilogue_clamp_f32
                                  ? (const mlvm_clamp_t *)ctx : NULL;
    mlvm_index_t n, g;
#ifdef MLVM_SCALAR_CORE
    if (mlvm_conv2d_scalar_applies(p)) {
        mlvm_conv2d_scalar_f32(p, x, w, bias, out);
        epilogue_whole(p, out, fn, ctx);
        return;
    }
#endif
#ifdef MLVM_DW_FLAT
    mlvm_dw_mask_t mask;
    int flat;
#endif
    if (depthwise_regs(p, x, w, bias, out, NULL)) {
        epilogue_whole(p, out, fn, ctx);
        return;
    }
#ifdef MLVM_DW_FLAT
    flat = og < MLVM_CONV_GEMM_ROWS && flat_ok(p);
    if (flat)
        flat_mask(p, mask);
#endif
    for (n = 0; n < p->n; ++n) {
        for (g = 0; g < p->groups; ++g) {
            const float *xg = x + (n * p->c + g * cg) * in_plane;
            const float *bg = bias != NULL ? bias + g * og : NULL;
            const mlvm_index_t row = n * p->o + g * og;
            float *og_out = out + row * plane;
            window_ctx_t wctx;
            mlvm_gemm_t gm;
            if (og < MLVM_CONV_GEMM_ROWS) {
#ifdef MLVM_DW_FLAT
                if (flat)
                    conv_flat(p, mask, og, xg, w + g * og * k, bg, og_out);
                else
#endif
                    conv_rows(p, og, xg, w + g * og * k, bg, og_out);
                if (fn != NULL && og > 0 && plane > 0)
                    fn(ctx, row, og, 0, plane, og_out, plane);
                continue;
            }
            wctx.p = p;
            wctx.x = xg;
            conv_gemm(&gm, og, plane, k, w + g * og * k, pointwise ? xg : NULL, plane, bg, act, og_out,
                      plane);
            gm.pack = pointwise ? NULL : pack_window;
            gm.pack_ctx = &wctx;
            mlvm_gemm_f32(&gm);
            if (fn != NULL && act == NULL)
                fn(ctx, row, og, 0, plane, og_out, plane);
        }
    }
}

void mlvm_conv2d_epilogue_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                              const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                              const void *ctx)
{
    /* depthwise.c's kernels need no copy; the workspace stays what every
     * build plans (mlvm_conv2d_workspace does not depend on the path) */
    if (ws != NULL && direct_applies(p) && !mlvm_dw_lanes_applies(p) && !mlvm_dw_regs_applies(p)) {
        direct_all(p, x, w, bias, out, ws, fn, ctx);
        return;
    }
    /* an activation alone: in depthwise.c's registers where they run */
    if (fn == mlvm_epilogue_clamp_f32 && depthwise_regs(p, x, w, bias, out, ctx))
        return;
    conv_all(p, x, w, bias, out, fn, ctx);
}

void mlvm_conv2d_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                     const float *bias, float *out)
{
    conv_all(p, x, w, bias, out, NULL, NULL);
}

#ifdef MLVM_SCALAR_CORE
/* Each image's and group's 1x1 product as the blocked GEMM reading x in
 * place, then fn over the group's outputs. */
static void pointwise_groups(const mlvm_conv2d_t *p, const float *x, const float *w,
                             const float *bias, float *out, mlvm_epilogue_fn fn, const void *ctx)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups, plane = p->oh * p->ow;
    mlvm_index_t n, g;
    mlvm_gemm_t gm;
    for (n = 0; n < p->n; ++n)
        for (g = 0; g < p->groups; ++g) {
            const mlvm_index_t row = n * p->o + g * og;
            conv_gemm(&gm, og, plane, cg, w + g * og * cg, x + (n * p->c + g * cg) * plane, plane,
                      bias != NULL ? bias + g * og : NULL, NULL, out + row * plane, plane);
            mlvm_gemm_strided_f32(&gm);
            if (fn != NULL)
                fn(ctx, row, og, 0, plane, gm.out, plane);
        }
}
#endif

void mlvm_conv2d_pointwise_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                               const float *bias, float *out, mlvm_epilogue_fn fn, const void *ctx)
{
#ifdef MLVM_SCALAR_CORE
    if (p->n * p->o > 0 && p->oh * p->ow > 0)
        pointwise_groups(p, x, w, bias, out, fn, ctx);
#else
    mlvm_conv2d_epilogue_f32(p, x, w, bias, out, NULL, fn, ctx);
#endif
}

void mlvm_conv2d_direct_ws_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                               const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                               const void *ctx)
{
#ifdef MLVM_SCALAR_CORE
    direct_all(p, x, w, bias, out, ws, fn, ctx); /* no depthwise vector kernels there */
#else
    mlvm_conv2d_epilogue_f32(p, x, w, bias, out, ws, fn, ctx);
#endif
}

/* Where IHWO weights keep tap t of output channel o: [taps][o], or in
 * panels of w_panel channels, [o / P][taps][P]. */
static mlvm_index_t ihwo_at(const mlvm_conv2d_t *p, mlvm_index_t t, mlvm_index_t o)
{
    const mlvm_index_t wp = p->w_panel, taps = p->c * p->kh * p->kw;
    return wp != 0 ? (o / wp) * wp * taps + t * wp + o % wp : t * p->o + o;
}

/* IHWO weights without a workspace (not what the compiler plans): the sums
 * directly, in the taps' order. */
static void ihwo_loops(const mlvm_conv2d_t *p, const float *x, const float *w, const float *bias,
                       float *out)
{
    mlvm_index_t n, o, oy, ox, c, i, j;
    for (n = 0; n < p->n; ++n)
        for (o = 0; o < p->o; ++o)
            for (oy = 0; oy < p->oh; ++oy)
                for (ox = 0; ox < p->ow; ++ox) {
                    float s = 0.0f;
                    for (c = 0; c < p->c; ++c)
                        for (i = 0; i < p->kh; ++i)
                            for (j = 0; j < p->kw; ++j) {
                                const mlvm_index_t iy = oy * p->sh + i * p->dh - p->pt;
                                const mlvm_index_t ix = ox * p->sw + j * p->dw - p->pl;
                                if (iy >= 0 && iy < p->h && ix >= 0 && ix < p->w)
                                    MLVM_MADD(s, x[((n * p->c + c) * p->h + iy) * p->w + ix],
                                              w[ihwo_at(p, (c * p->kh + i) * p->kw + j, o)]);
                            }
                    out[((n * p->o + o) * p->oh + oy) * p->ow + ox] =
                        s + (bias != NULL ? bias[o] : 0.0f);
                }
}

/* The IHWO product's descriptor for one image (or all, set by the caller). */
static void ihwo_cvec(const mlvm_conv2d_t *p, const float *w, const float *bias, mlvm_cvec_t *g)
{
    g->m = p->oh * p->ow;
    g->ow = p->ow;
    g->n = p->o;
    g->k = p->c * p->kh * p->kw;
    g->w = w;
    g->w_panel = p->w_panel;
    g->bias = bias;
    g->images = 1;
    g->x_image = p->c * p->h * p->w;
    g->out_image = p->o * p->oh * p->ow;
}

void mlvm_conv2d_ihwo_pointwise_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                                    const float *bias, float *out, mlvm_epilogue_fn fn,
                                    const void *ctx)
{
    const mlvm_index_t plane = p->oh * p->ow;
    mlvm_cvec_t g;
    if (p->n * p->o == 0 || plane == 0)
        return;
    ihwo_cvec(p, w, bias, &g);
    /* tap c of position q at x[c * plane + q]; tiles across images */
    g.wq = p->ow;
    g.off = NULL;
    g.t_stride = p->h * p->w;
    g.images = p->n;
    g.x = x;
    g.out = out;
    mlvm_cvec_strided_f32(&g);
    epilogue_whole(p, out, fn, ctx);
}

void mlvm_conv2d_ihwo_ws_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                             const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                             const void *ctx)
{
    const mlvm_index_t in_plane = p->h * p->w, plane = p->oh * p->ow;
    direct_geom_t dg;
    mlvm_cvec_t g;
    float *xs;
    mlvm_index_t n;
    if (p->n * p->o == 0 || plane == 0)
        return;
    ihwo_cvec(p, w, bias, &g);
    /* taps at offsets in the phase planes */
    direct_geom(p, &dg);
    mlvm_tap_offsets(&dg.win, &dg.ph, g.k, (mlvm_index_t *)ws);
    xs = (float *)(void *)((unsigned char *)ws + dg.off_bytes);
    g.wq = dg.ph.wq;
    g.off = (const mlvm_index_t *)ws;
    g.t_stride = 0;
    for (n = 0; n < p->n; ++n) { /* the workspace holds one image's copy */
        pad_phases(p, &dg, p->c, x + n * p->c * in_plane, xs);
        g.x = xs;
        g.out = out + n * p->o * plane;
        mlvm_cvec_at_f32(&g);
        if (fn != NULL)
            fn(ctx, n * p->o, p->o, 0, plane, g.out, plane);
    }
}

void mlvm_conv2d_ihwo_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                          const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                          const void *ctx)
{
    const mlvm_index_t plane = p->oh * p->ow;
    if (p->n * p->o == 0 || plane == 0)
        return;
    if (is_pointwise(p)) {
        mlvm_conv2d_ihwo_pointwise_f32(p, x, w, bias, out, fn, ctx);
        return;
    }
    if (ws != NULL && direct_applies(p)) {
        mlvm_conv2d_ihwo_ws_f32(p, x, w, bias, out, ws, fn, ctx);
        return;
    }
    ihwo_loops(p, x, w, bias, out);
    epilogue_whole(p, out, fn, ctx);
}
