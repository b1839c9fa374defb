/* Kernels of the neural-network ops: softmax, layer norm, gelu and pooling (conv2d: conv.c). */
#include <math.h>
#include <string.h>

#if (defined(__AVX512F__) || defined(__AVX2__)) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#endif

#include "gemm.h" /* MLVM_SCALAR_CORE, MLVM_ALWAYS_INLINE */
#include "iter.h"
#include "vexp.h"

#define MLVM_LN_LANES 16
#define MLVM_SOFTMAX_LANES 16

static mlvm_index_t imin(mlvm_index_t a, mlvm_index_t b) { return a < b ? a : b; }
static mlvm_index_t imax(mlvm_index_t a, mlvm_index_t b) { return a > b ? a : b; }

/* -------------------------------------------------------------------------
 * softmax
 * ---------------------------------------------------------------------- */

/* NaN wins, as in numpy.max. */
static float max_nan(float acc, float v)
{
    return (v > acc || v != v) ? v : acc;
}

/* The row's maximum in lanes. NaN is skipped here (x > m ? x : m, which is
 * vmaxps(x, m)): it still makes the sum, and so the whole row, NaN, as
 * numpy's NaN maximum does. With AVX-512 / AVX2 (vexp.h's vectors) four
 * running maxima of vectors (gcc left the portable loop as sixteen scalar
 * maxima per step: a third of softmax's time); the maximum does not depend
 * on the order. */
static float row_max(size_t n, const float *x)
{
    float lane[MLVM_SOFTMAX_LANES];
    float mx = -HUGE_VALF;
    size_t i = 0;
    int l;
#ifdef MLVM_HAVE_VEXP
    mlvm_vf m[4];
    int v;
    for (v = 0; v < 4; ++v)
        m[v] = vf_set1(-HUGE_VALF);
    for (; i + 4 * MLVM_VLANES <= n; i += 4 * MLVM_VLANES)
        for (v = 0; v < 4; ++v)
            m[v] = vf_max(vf_load(x + i + v * MLVM_VLANES), m[v]);
    for (; i + MLVM_VLANES <= n; i += MLVM_VLANES)
        m[0] = vf_max(vf_load(x + i), m[0]);
    m[0] = vf_max(vf_max(m[0], m[1]), vf_max(m[2], m[3]));
    for (l = 0; l < MLVM_SOFTMAX_LANES; l += MLVM_VLANES) /* the same maximum in every lane group */
        vf_store(lane + l, m[0]);
#else
    for (l = 0; l < MLVM_SOFTMAX_LANES; ++l)
        lane[l] = -HUGE_VALF;
    for (; i + MLVM_SOFTMAX_LANES <= n; i += MLVM_SOFTMAX_LANES)
        for (l = 0; l < MLVM_SOFTMAX_LANES; ++l)
            lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];
#endif
    for (; i < n; ++i)
        mx = x[i] > mx ? x[i] : mx;
    for (l = 0; l < MLVM_SOFTMAX_LANES; ++l)
        mx = lane[l] > mx ? lane[l] : mx;
    return mx;
}

/* The sum of exp(x[i] - mx), i < n, in MLVM_SOFTMAX_LANES lanes and then
 * the last n % lanes in order; each exponential stored to o[i] when o is
 * not NULL (softmax), only summed otherwise (log-softmax). With AVX-512
 * one vector of sixteen, with AVX2 two of eight (vexp.h: the same bits);
 * elsewhere the exponentials
 * are stored first and summed in a second loop (gcc vectorised a loop doing
 * both less well), the same sums. Inlined: o is NULL or not per caller. */
MLVM_ALWAYS_INLINE float exp_sum_row(size_t n, const float *x, float mx, float *o)
{
    float acc[MLVM_SOFTMAX_LANES] = {0};
    float s = 0.0f;
    size_t i = 0, t;
    int l;
#ifdef MLVM_HAVE_VEXP
    /* the sixteen lanes in MLVM_SOFTMAX_LANES / MLVM_VLANES vectors */
    mlvm_vf a[MLVM_SOFTMAX_LANES / MLVM_VLANES];
    const mlvm_vf m = vf_set1(mx);
    int v;
    for (v = 0; v < MLVM_SOFTMAX_LANES / MLVM_VLANES; ++v)
        a[v] = vf_set1(0.0f);
    for (; i + MLVM_SOFTMAX_LANES <= n; i += MLVM_SOFTMAX_LANES)
        for (v = 0; v < MLVM_SOFTMAX_LANES / MLVM_VLANES; ++v) {
            const mlvm_vf e = mlvm_expv(vf_sub(vf_load(x + i + v * MLVM_VLANES), m));
            if (o != NULL)
                vf_store(o + i + v * MLVM_VLANES, e);
            a[v] = vf_add(a[v], e);
        }
    for (v = 0; v < MLVM_SOFTMAX_LANES / MLVM_VLANES; ++v)
        vf_store(acc + v * MLVM_VLANES, a[v]);
#else
    if (o != NULL) {
        for (t = 0; t < n - n % MLVM_SOFTMAX_LANES; ++t)
            o[t] = mlvm_expf(x[t] - mx);
        for (; i + MLVM_SOFTMAX_LANES <= n; i += MLVM_SOFTMAX_LANES)
            for (l = 0; l < MLVM_SOFTMAX_LANES; ++l)
                acc[l] += o[i + l];
    } else {
        for (; i + MLVM_SOFTMAX_LANES <= n; i += MLVM_SOFTMAX_LANES)
            for (l = 0; l < MLVM_SOFTMAX_LANES; ++l)
                acc[l] += mlvm_expf(x[i + l] - mx);
    }
#endif
    for (l = 0; l < MLVM_SOFTMAX_LANES; ++l)
        s += acc[l];
    for (t = i; t < n; ++t) {
        const float e = mlvm_expf(x[t] - mx);
        if (o != NULL)
            o[t] = e;
        s += e;
    }
    return s;
}

/* The maximum, the exponentials and their sum, then one multiplication
 * by 1 / sum per element (a division each had cost a fifth of the row;
 * within 1.5 ulp of the quotient). */
static void softmax_row(size_t n, const float *x, float *o)
{
    const float inv = 1.0f / exp_sum_row(n, x, row_max(n, x), o);
    size_t i;
    for (i = 0; i < n; ++i)
        o[i] = o[i] * inv;
}

/* z - log(sum(exp(z))), z = x - max, over a contiguous row: the
 * exponentials summed (not stored), one log per row, then one pass of
 * subtractions. */
static void log_softmax_row(size_t n, const float *x, float *o)
{
    const float mx = row_max(n, x);
    const float lse = logf(exp_sum_row(n, x, mx, NULL));
    size_t i;
    for (i = 0; i < n; ++i)
        o[i] = (x[i] - mx) - lse;
}

/* Softmax (log_form 0) or log-softmax (1) over axis n of [outer, n,
 * inner]: contiguous rows by the row kernels, otherwise one column j at a
 * time. Inlined into each entry, log_form a constant there. */
MLVM_ALWAYS_INLINE void softmax_axis(size_t outer, size_t n, size_t inner, const float *in,
                                     float *out, int log_form)
{
    size_t b, i, j;
    for (b = 0; b < outer; ++b) {
        const float *x = in + b * n * inner;
        float *o = out + b * n * inner;
        if (inner == 1) {
            if (log_form)
                log_softmax_row(n, x, o);
            else
                softmax_row(n, x, o);
            continue;
        }
        for (j = 0; j < inner; ++j) {
            const float *xj = x + j;
            float *oj = o + j;
            float mx = -HUGE_VALF, s = 0.0f;
            for (i = 0; i < n; ++i)
                mx = max_nan(mx, xj[i * inner]);
            if (log_form) {
                float lse;
                for (i = 0; i < n; ++i)
                    s += mlvm_expf(xj[i * inner] - mx);
                lse = logf(s);
                for (i = 0; i < n; ++i)
                    oj[i * inner] = (xj[i * inner] - mx) - lse;
                continue;
            }
            for (i = 0; i < n; ++i) {
                oj[i * inner] = mlvm_expf(xj[i * inner] - mx);
                s += oj[i * inner];
            }
            for (i = 0; i < n; ++i)
                oj[i * inner] = oj[i * inner] / s;
        }
    }
}

void mlvm_softmax_f32(size_t outer, size_t n, size_t inner, const float *in,
                      float *out)
{
    softmax_axis(outer, n, inner, in, out, 0);
}

void mlvm_log_softmax_f32(size_t outer, size_t n, size_t inner, const float *in, float *out)
{
    softmax_axis(outer, n, inner, in, out, 1);
}

/* -------------------------------------------------------------------------
 * layer norm
 * ---------------------------------------------------------------------- */

/* Mean and 1 / sqrt(var + eps) from the sums of d = x - x0 and d^2. */
static void ln_stats(float x0, float sum, float sq, size_t n, float eps,
                     float *mean, float *rstd)
{
    const float md = sum / (float)n;
    float var = sq / (float)n - md * md;
    if (var < 0.0f)
        var = 0.0f;
    *mean = x0 + md;
    *rstd = 1.0f / sqrtf(var + eps);
}

/* Sums of x - x0 and of (x - x0)^2 over a contiguous row, in lanes (each
 * loop a plain lane-wise update that compilers vectorise). */
static void ln_sums(size_t n, const float *x, float x0, float *sum, float *sq)
{
    float s[MLVM_LN_LANES] = {0}, q[MLVM_LN_LANES] = {0};
    float ts = 0.0f, tq = 0.0f;
    size_t i = 0;
    int l;
    for (; i + MLVM_LN_LANES <= n; i += MLVM_LN_LANES)
        for (l = 0; l < MLVM_LN_LANES; ++l)
            s[l] += x[i + l] - x0;
    for (i = 0; i + MLVM_LN_LANES <= n; i += MLVM_LN_LANES)
        for (l = 0; l < MLVM_LN_LANES; ++l) {
            const float d = x[i + l] - x0;
            q[l] += d * d;
        }
    for (l = 0; l < MLVM_LN_LANES; ++l) {
        ts += s[l];
        tq += q[l];
    }
    for (; i < n; ++i) {
        const float d = x[i] - x0;
        ts += d;
        tq += d * d;
    }
    *sum = ts;
    *sq = tq;
}

void mlvm_layer_norm_f32(size_t rows, size_t cols, float eps, const float *x,
                         const float *gamma, const float *beta, float *out)
{
    size_t r, i;
    for (r = 0; r < rows; ++r) {
        const float *xr = x + r * cols;
        float *o = out + r * cols;
        const float x0 = xr[0];
        float sum, sq, mean, rstd;
        ln_sums(cols, xr, x0, &sum, &sq);
        ln_stats(x0, sum, sq, cols, eps, &mean, &rstd);
        if (gamma != NULL) {
            for (i = 0; i < cols; ++i)
                o[i] = (xr[i] - mean) * rstd * gamma[i] + beta[i];
        } else {
            for (i = 0; i < cols; ++i)
                o[i] = (xr[i] - mean) * rstd;
        }
    }
}

void mlvm_layer_norm_strided_f32(const mlvm_iter_t *outer, const mlvm_iter_t *inner,
                                 float eps, const float *x, const float *gamma,
                                 const float *beta, float *out)
{
    mlvm_index_t oidx[MLVM_MAX_RANK] = {0};
    mlvm_index_t ox = 0, unused = 0;
    const size_t n = mlvm_iter_count(inner, inner->rank);
    size_t t, i, rows = mlvm_iter_count(outer, outer->rank);
    for (t = 0; t < rows; ++t) {
        mlvm_index_t idx[MLVM_MAX_RANK] = {0};
        mlvm_index_t ix = 0, ig = 0;
        const float x0 = x[ox];
        float sum = 0.0f, sq = 0.0f, mean, rstd;
        for (i = 0; i < n; ++i) {
            const float d = x[ox + ix] - x0;
            sum += d;
            sq += d * d;
            mlvm_iter_step(inner, inner->rank, idx, &ix, &ig);
        }
        ln_stats(x0, sum, sq, n, eps, &mean, &rstd);
        for (i = 0; i < n; ++i) {
            const float y = (x[ox + ix] - mean) * rstd;
            out[ox + ix] = gamma != NULL ? y * gamma[ig] + beta[ig] : y;
            mlvm_iter_step(inner, inner->rank, idx, &ix, &ig);
        }
        mlvm_iter_step(outer, outer->rank, oidx, &ox, &unused);
    }
}

/* -------------------------------------------------------------------------
 * gelu
 * ---------------------------------------------------------------------- */

#ifdef MLVM_HAVE_VEXP
/* mlvm_gelu_tanh and mlvm_gelu_erf a vector at a time (the same bits) */
static inline mlvm_vf gelu_tanhv(mlvm_vf x)
{
    mlvm_vf t = vf_mul(vf_mul(x, x), x);
    t = vf_fma(t, vf_set1(MLVM_GELU_TANH_C3), x);
    t = vf_mul(t, vf_set1(MLVM_GELU_TANH_M2K));
    return vf_div(x, vf_add(vf_set1(1.0f), mlvm_expv(t)));
}
MLVM_DEFINE_ARRAYV(mlvm_gelu_tanh_f32, gelu_tanhv, mlvm_gelu_tanh)

static inline mlvm_vf gelu_erfv(mlvm_vf x)
{
    const mlvm_vf h = vf_mul(vf_set1(0.5f), x);
    return vf_fma(h, mlvm_erfv(vf_mul(x, vf_set1(MLVM_GELU_RSQRT2))), h);
}
MLVM_DEFINE_ARRAYV(mlvm_gelu_erf_f32, gelu_erfv, mlvm_gelu_erf)
#else
void mlvm_gelu_tanh_f32(size_t n, const float *a, float *out)
{
    size_t i;
    for (i = 0; i < n; ++i)
        out[i] = mlvm_gelu_tanh(a[i]);
}

void mlvm_gelu_erf_f32(size_t n, const float *a, float *out)
{
    size_t i;
    for (i = 0; i < n; ++i)
        out[i] = mlvm_gelu_erf(a[i]);
}
#endif

/* -------------------------------------------------------------------------
 * pooling
 * ---------------------------------------------------------------------- */

/* Output row o of plane xp (its window rows [h0, h1)), one window at a time. */
static void pool_window_row(const mlvm_pool2d_t *p, const float *xp, mlvm_index_t h0,
                            mlvm_index_t h1, float *o, int is_max)
{
    mlvm_index_t ow, i, j;
    for (ow = 0; ow < p->ow; ++ow) {
        const mlvm_index_t w0 = imax(ow * p->sw - p->pl, 0);
        const mlvm_index_t w1 = imin(ow * p->sw - p->pl + p->kw, p->w);
        float acc = is_max ? -HUGE_VALF : 0.0f;
        for (i = h0; i < h1; ++i)
            for (j = w0; j < w1; ++j)
                acc = is_max ? max_nan(acc, xp[i * p->w + j]) : acc + xp[i * p->w + j];
        o[ow] = is_max ? acc : acc / (float)((h1 - h0) * (w1 - w0));
    }
}

#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
#define MLVM_POOL_AVX512 1

/* The lanes t < 16 with 0 <= s + t < w. */
static __mmask16 pool_lanes(mlvm_index_t s, mlvm_index_t w)
{
    const mlvm_index_t lo = imax(-s, 0), hi = imin(w - s, 16);
    return hi <= lo ? 0 : (__mmask16)((0xFFFFu >> (16 - (hi - lo))) << lo);
}

/* One output row, sixteen outputs per vector: the window's rows joined
 * per input column into vectors v0 .. v2 of the 16 * sw + 16 columns the
 * sixteen read (masked loads: the padding's -inf or 0 outside x), then its
 * columns j as lanes t of those at t * sw + j (vpermt2ps; the blend for
 * stride 2 where they run into v2). The same joins in the same order as
 * the two passes below, so the same results; the maximum keeps the
 * earlier of equal values as max_nan does (vmaxps returns its second
 * operand on ties). Returns 0 where it read a NaN: the caller redoes the
 * row one window at a time, where NaN wins. sw is 1 or 2, kw <= 16. */
MLVM_ALWAYS_INLINE int pool_row_avx512(const mlvm_pool2d_t *p, const float *xp, mlvm_index_t h0,
                                       mlvm_index_t h1, float *o, int is_max, mlvm_index_t sw)
{
    const __m512 fill = _mm512_set1_ps(is_max ? -HUGE_VALF : 0.0f);
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i step = _mm512_mullo_epi32(iota, _mm512_set1_epi32((int)sw));
    const mlvm_index_t w = p->w, kw = p->kw;
    __mmask16 nan = 0;
    mlvm_index_t c0, i, j;
    for (c0 = 0; c0 < p->ow; c0 += 16) {
        const mlvm_index_t s = c0 * sw - p->pl; /* the column lane 0 reads first */
        const __mmask16 m0 = pool_lanes(s, w), m1 = pool_lanes(s + 16, w);
        const __mmask16 m2 = sw == 2 ? pool_lanes(s + 32, w) : 0;
        const __mmask16 out = (__mmask16)(0xFFFFu >> (16 - imin(p->ow - c0, 16)));
        __m512 v0 = fill, v1 = fill, v2 = fill, h = fill;
        for (i = h0; i < h1; ++i) {
            const float *r = xp + i * w + s;
            const __m512 x0 = _mm512_mask_loadu_ps(fill, m0, r);
            const __m512 x1 = _mm512_mask_loadu_ps(fill, m1, r + 16);
            const __m512 x2 = sw == 2 ? _mm512_mask_loadu_ps(fill, m2, r + 32) : fill;
            if (is_max) {
                v0 = _mm512_max_ps(x0, v0), v1 = _mm512_max_ps(x1, v1), v2 = _mm512_max_ps(x2, v2);
                nan |= _mm512_cmp_ps_mask(x0, x0, _CMP_UNORD_Q)
                       | _mm512_cmp_ps_mask(x1, x1, _CMP_UNORD_Q)
                       | _mm512_cmp_ps_mask(x2, x2, _CMP_UNORD_Q);
            } else {
                v0 = _mm512_add_ps(v0, x0), v1 = _mm512_add_ps(v1, x1), v2 = _mm512_add_ps(v2, x2);
            }
        }
        for (j = 0; j < kw; ++j) {
            const __m512i at = _mm512_add_epi32(step, _mm512_set1_epi32((int)j)); /* column t*sw+j */
            __m512 c = _mm512_permutex2var_ps(v0, at, v1);
            if (sw == 2 && j > 0) /* lanes past column 31 from v1, v2 */
                c = _mm512_mask_mov_ps(c, (__mmask16)(0xFFFFu << ((33 - j) / 2)),
                                       _mm512_permutex2var_ps(v1, _mm512_sub_epi32(at, _mm512_set1_epi32(16)), v2));
            h = j == 0 ? c : is_max ? _mm512_max_ps(c, h) : _mm512_add_ps(h, c);
        }
        if (!is_max) { /* divided by the window's elements inside x */
            const __m512i col = _mm512_add_epi32(step, _mm512_set1_epi32((int)s));
            const __m512i lo = _mm512_max_epi32(col, _mm512_setzero_si512());
            const __m512i hi = _mm512_min_epi32(_mm512_add_epi32(col, _mm512_set1_epi32((int)kw)),
                                                _mm512_set1_epi32((int)w));
            const __m512i n = _mm512_mullo_epi32(_mm512_sub_epi32(hi, lo), _mm512_set1_epi32((int)(h1 - h0)));
            h = _mm512_div_ps(h, _mm512_cvtepi32_ps(n));
        }
        _mm512_mask_storeu_ps(o + c0, out, h);
    }
    return nan == 0;
}

#endif

/* Every plane's rows, one window at a time, or (vector set: AVX-512,
 * strides 1 or 2, kw <= 16) by pool_row_avx512, its strides as constants,
 * a row that read a NaN redone one window at a time. */
static void pool2d(const mlvm_pool2d_t *p, const float *x, float *out, int is_max, int vector)
{
    mlvm_index_t pl, oh;
    for (pl = 0; pl < p->planes; ++pl) {
        const float *xp = x + pl * p->h * p->w;
        for (oh = 0; oh < p->oh; ++oh) {
            const mlvm_index_t h0 = imax(oh * p->sh - p->pt, 0);
            const mlvm_index_t h1 = imin(oh * p->sh - p->pt + p->kh, p->h);
            float *o = out + (pl * p->oh + oh) * p->ow;
#ifdef MLVM_POOL_AVX512
            if (vector && (p->sw == 1 ? pool_row_avx512(p, xp, h0, h1, o, is_max, 1)
                                      : pool_row_avx512(p, xp, h0, h1, o, is_max, 2)))
                continue;
#endif
            pool_window_row(p, xp, h0, h1, o, is_max);
        }
    }
    (void)vector;
}

/* Whether pool2d's vector rows take p. */
static int pool_vector(const mlvm_pool2d_t *p)
{
#ifdef MLVM_POOL_AVX512
    return (p->sw == 1 || p->sw == 2) && p->kw <= 16;
#else
    (void)p;
    return 0;
#endif
}

/* Pooling in two passes per output row and chunk of output columns: the
 * maximum (or sum) over the window's rows of each padded input column the
 * chunk reads (-inf, or 0, for the padding; contiguous loops, which
 * compilers vectorise), then over each window's columns of those (loops
 * over the outputs, strides 1 and 2 constant so that they vectorise too).
 * A 3x3 window costs about 3 + 3 operations per output instead of 9, a
 * fraction of that in vectors. The maximum is exact in any order (NaN
 * wins); the average divides by the window's elements inside x, summed
 * rows first (a different order than one window at a time: within the
 * sum's bound). */
#ifdef MLVM_SCALAR_CORE
#define MLVM_POOL_COLS 64 /* floats of column maxima / sums on the stack */
#else
#define MLVM_POOL_COLS 1024
#endif

MLVM_ALWAYS_INLINE float pool_join(float acc, float v, int is_max)
{
    return is_max ? max_nan(acc, v) : acc + v;
}

/* o[t] = max (or sum) over j < kw of cm[t * s + j], t < n */
MLVM_ALWAYS_INLINE void window_join_s(const float *cm, mlvm_index_t n, mlvm_index_t s,
                                      mlvm_index_t kw, float *o, int is_max)
{
    mlvm_index_t t, j;
    for (t = 0; t < n; ++t)
        o[t] = cm[t * s];
    for (j = 1; j < kw; ++j)
        for (t = 0; t < n; ++t)
            o[t] = pool_join(o[t], cm[t * s + j], is_max);
}

/* The same with strides 1 and 2 as constants, so that their loops vectorise. */
MLVM_ALWAYS_INLINE void window_join(const float *cm, mlvm_index_t n, mlvm_index_t s,
                                    mlvm_index_t kw, float *o, int is_max)
{
    if (s == 1)
        window_join_s(cm, n, 1, kw, o, is_max);
    else if (s == 2)
        window_join_s(cm, n, 2, kw, o, is_max);
    else
        window_join_s(cm, n, s, kw, o, is_max);
}

MLVM_ALWAYS_INLINE void pool_columns(const mlvm_pool2d_t *p, const float *x, float *out,
                                     int is_max)
{
    float cm[MLVM_POOL_COLS];
    const mlvm_index_t per = (MLVM_POOL_COLS - p->kw) / p->sw + 1; /* outputs per chunk */
    mlvm_index_t pl, oh, c0, n, a, b, lo, hi, i, t;
    for (pl = 0; pl < p->planes; ++pl) {
        const float *xp = x + pl * p->h * p->w;
        float *op = out + pl * p->oh * p->ow;
        for (oh = 0; oh < p->oh; ++oh) {
            const mlvm_index_t h0 = imax(oh * p->sh - p->pt, 0);
            const mlvm_index_t h1 = imin(oh * p->sh - p->pt + p->kh, p->h);
            for (c0 = 0; c0 < p->ow; c0 += n) {
                float *o = op + oh * p->ow + c0;
                n = imin(p->ow - c0, per);
                /* padded columns [a, b); those inside x: [lo, hi) */
                a = c0 * p->sw - p->pl;
                b = a + (n - 1) * p->sw + p->kw;
                lo = imax(a, 0);
                hi = imax(lo, imin(b, p->w));
                for (t = 0; t < b - a; ++t)
                    cm[t] = is_max ? -HUGE_VALF : 0.0f;
                for (i = h0; i < h1; ++i) {
                    const float *xr = xp + i * p->w;
                    for (t = lo; t < hi; ++t)
                        cm[t - a] = pool_join(cm[t - a], xr[t], is_max);
                }
                window_join(cm, n, p->sw, p->kw, o, is_max);
                if (is_max)
                    continue;
                for (t = 0; t < n; ++t) { /* the window's elements inside x */
                    const mlvm_index_t w0 = imax(a + t * p->sw, 0);
                    const mlvm_index_t w1 = imin(a + t * p->sw + p->kw, p->w);
                    o[t] /= (float)((h1 - h0) * (w1 - w0));
                }
            }
        }
    }
}

static void maxpool_columns(const mlvm_pool2d_t *p, const float *x, float *out)
{
    pool_columns(p, x, out, 1);
}

static void avgpool_columns(const mlvm_pool2d_t *p, const float *x, float *out)
{
    pool_columns(p, x, out, 0);
}

void mlvm_maxpool2d_f32(const mlvm_pool2d_t *p, const float *x, float *out)
{
    if (pool_vector(p)) {
        pool2d(p, x, out, 1, 1);
        return;
    }
    if (p->kw <= MLVM_POOL_COLS) {
        maxpool_columns(p, x, out);
        return;
    }
    pool2d(p, x, out, 1, 0);
}

void mlvm_avgpool2d_f32(const mlvm_pool2d_t *p, const float *x, float *out)
{
    if (pool_vector(p)) {
        pool2d(p, x, out, 0, 1);
        return;
    }
    if (p->kw <= MLVM_POOL_COLS) {
        avgpool_columns(p, x, out);
        return;
    }
    pool2d(p, x, out, 0, 0);
}
