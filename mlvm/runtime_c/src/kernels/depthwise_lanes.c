/* Depthwise convolutions (one input channel and one output per group) with
 * the channels in the vector lanes, for the builds with AVX2 or AVX-512.
 *
 * In NCHW one channel's plane fills a vector, so small maps (a keyword
 * spotter's 25x5, MobileNet's 6x6 and 3x3, any stride-2 map) leave lanes
 * idle, and every tap needs masks for the columns it wraps into. Here
 * LANES channels at a time are transposed (LANES x LANES blocks in
 * registers) into a zero-padded band of input rows, position-major with the
 * channels interleaved. Each output position is then LANES channels in one
 * vector, and each tap one fused multiply-add with the tap's weights (one
 * vector): no masks, no idle lanes, any stride, dilation and kernel size.
 * LANES flat output positions at a time are transposed back into the
 * output planes. The band (MLVM_DWL_BAND floats on the stack) holds the
 * input rows of as many output rows as fit.
 *
 * Sums: bias, then the taps in (i, j) order, each fused. Padding enters as
 * zeros, so 0 * w is added there (the same result unless w is inf or NaN,
 * as on conv.c's direct path). */
#include "depthwise.h"

#if defined(MLVM_DW_REGS)
#include <immintrin.h>

#include "clamp.h"
#include "transpose.h"
#include "window.h"

#define MLVM_DWL_BAND 8192 /* floats of padded input rows (32 KiB, in L1) */
#define MLVM_DWL_TAPS 64   /* kernels up to 8 x 8 */
#define MLVM_DWL_INLINE static inline __attribute__((always_inline))

#if defined(__AVX512F__)
#define MLVM_DWL_LANES 16
typedef __m512 dwl_vec_t;
#define dwl_zero _mm512_setzero_ps
#define dwl_load _mm512_loadu_ps
#define dwl_store _mm512_storeu_ps
#define dwl_fmadd _mm512_fmadd_ps

MLVM_DWL_INLINE dwl_vec_t dwl_load_n(const float *p, int n)
{
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
}

MLVM_DWL_INLINE void dwl_store_n(float *p, dwl_vec_t v, int n)
{
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), v);
}

#define dwl_transpose mlvm_transpose16_512
#define dwl_clamp mlvm_clamp512
#else /* AVX2 + FMA */
#define MLVM_DWL_LANES 8
typedef __m256 dwl_vec_t;
#define dwl_zero _mm256_setzero_ps
#define dwl_load _mm256_loadu_ps
#define dwl_store _mm256_storeu_ps
#define dwl_fmadd _mm256_fmadd_ps

MLVM_DWL_INLINE __m256i dwl_mask(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* masked only where a vector is short: AVX2's masked loads and stores
 * cost several plain ones (the stores most) */
MLVM_DWL_INLINE dwl_vec_t dwl_load_n(const float *p, int n)
{
    return n == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, dwl_mask(n));
}

MLVM_DWL_INLINE void dwl_store_n(float *p, dwl_vec_t v, int n)
{
    if (n == 8)
        _mm256_storeu_ps(p, v);
    else
        _mm256_maskstore_ps(p, dwl_mask(n), v);
}

#define dwl_transpose mlvm_transpose8_256
#define dwl_clamp mlvm_clamp256
#endif

#define L MLVM_DWL_LANES

/* Where depthwise.c's stride-1 path applies it is as fast (its lanes are
 * full there, and it needs no transposes); strided maps leave most of its
 * lanes idle: faster here by 1.1x on 24x24 outputs to 4x on 3x3 (AVX-512). */
int mlvm_dw_lanes_applies(const mlvm_conv2d_t *p)
{
    return p->c == p->groups && p->o == p->c && p->c >= L && p->oh > 0 && p->ow > 0
           && p->kh * p->kw <= MLVM_DWL_TAPS && p->pt >= 0 && p->pl >= 0
           && mlvm_reach(1, p->sh, p->kh, p->dh) * mlvm_reach(p->ow, p->sw, p->kw, p->dw)
                  <= MLVM_DWL_BAND / L
           && (p->sh != 1 || p->sw != 1 || !mlvm_dw_regs_applies(p));
}

/* Columns 0 .. cnt of nc rows (row c at src + c * stride) as cnt vectors
 * v[k] = (row 0 col k, row 1 col k, ...), zero past row nc. */
static void columns_of(dwl_vec_t v[L], const float *src, mlvm_index_t stride, int nc, int cnt)
{
    int c;
    for (c = 0; c < nc; ++c)
        v[c] = dwl_load_n(src + c * stride, cnt);
    for (; c < L; ++c)
        v[c] = dwl_zero();
    dwl_transpose(v);
}

/* Padded rows py0 .. py0 + nrows of channels c0 .. c0 + nc (nc <= L) into
 * band, position-major (wp positions per row, L floats per position). */
static void fill_band(const mlvm_conv2d_t *p, const float *x, mlvm_index_t c0, int nc,
                      mlvm_index_t py0, mlvm_index_t nrows, mlvm_index_t wp, float *band)
{
    const mlvm_index_t plane = p->h * p->w;
    mlvm_index_t r, q, e, e1, y, xc, lo, hi, y0, y1;
    dwl_vec_t v[L];
    int k, cnt;
    /* the band's rows [lo, hi) are input rows [y0, y1) */
    mlvm_valid_span(py0 - p->pt, 1, p->h, nrows, &lo, &hi);
    y0 = py0 - p->pt + lo;
    y1 = py0 - p->pt + hi;
    /* zeros: rows outside x, and each inside row's pad columns */
    for (r = 0; r < nrows; ++r) {
        float *row = band + r * wp * L;
        if (r < lo || r >= hi) {
            for (q = 0; q < wp; ++q)
                dwl_store(row + q * L, dwl_zero());
            continue;
        }
        for (q = 0; q < wp && q < p->pl; ++q)
            dwl_store(row + q * L, dwl_zero());
        for (q = p->pl + p->w; q < wp; ++q)
            dwl_store(row + q * L, dwl_zero());
    }
    if (y0 >= y1)
        return;
    /* the inside rows are contiguous in each plane: flat chunks of L
     * elements, one transpose each however narrow the rows are */
    e1 = y1 * p->w;
    for (e = y0 * p->w; e < e1; e += L) {
        cnt = (int)mlvm_imin(L, e1 - e);
        columns_of(v, x + c0 * plane + e, plane, nc, cnt);
        y = e / p->w;
        xc = e % p->w;
        for (k = 0; k < cnt; ++k) {
            if (xc + p->pl < wp)
                dwl_store(band + ((y + p->pt - py0) * wp + xc + p->pl) * L, v[k]);
            if (++xc == p->w) {
                xc = 0;
                ++y;
            }
        }
    }
}

/* Output positions q0 .. q0 + cnt (flat, within the band's rows oy0 ..) of
 * channels c0 .. c0 + nc: L accumulators, the taps outer. */
static void band_chunk(const mlvm_conv2d_t *p, const float *band, mlvm_index_t wp,
                       mlvm_index_t oy0, mlvm_index_t q0, int cnt, mlvm_index_t taps,
                       const mlvm_index_t *toff, const float *wt, dwl_vec_t bias,
                       mlvm_index_t c0, int nc, float *out, const mlvm_clamp_t *act)
{
    const mlvm_index_t plane = p->oh * p->ow;
    const float *at[L];
    dwl_vec_t acc[L];
    mlvm_index_t t, oy = q0 / p->ow, ox = q0 % p->ow;
    int k, c;
    for (k = 0; k < L; ++k) {
        at[k] = band + ((oy - oy0) * p->sh * wp + ox * p->sw) * L;
        acc[k] = bias;
        if (k + 1 < cnt && ++ox == p->ow) {
            ox = 0;
            ++oy;
        }
    }
    for (t = 0; t < taps; ++t) {
        const dwl_vec_t wv = dwl_load(wt + t * L);
        const mlvm_index_t off = toff[t];
        for (k = 0; k < L; ++k)
            acc[k] = dwl_fmadd(wv, dwl_load(at[k] + off), acc[k]);
    }
    if (act != NULL)
        for (k = 0; k < L; ++k)
            acc[k] = dwl_clamp(act, acc[k]);
    dwl_transpose(acc);
    for (c = 0; c < nc; ++c)
        dwl_store_n(out + (c0 + c) * plane + q0, acc[c], cnt);
}

/* The taps of channels c0 .. c0 + nc as vectors: wt[t * L + c] = w[(c0 +
 * c) * taps + t], zero for c >= nc; transposed L taps at a time. */
static void weights_of(const float *w, mlvm_index_t taps, mlvm_index_t c0, int nc, float *wt)
{
    dwl_vec_t v[L];
    mlvm_index_t t0;
    int k, cnt;
    for (t0 = 0; t0 < taps; t0 += L) {
        cnt = (int)mlvm_imin(L, taps - t0);
        columns_of(v, w + c0 * taps + t0, taps, nc, cnt);
        for (k = 0; k < cnt; ++k)
            dwl_store(wt + (t0 + k) * L, v[k]);
    }
}

void mlvm_dw_lanes_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                       const float *bias, float *out, const mlvm_clamp_t *act)
{
    float band[MLVM_DWL_BAND], wt[MLVM_DWL_TAPS * L], bv[L];
    mlvm_index_t toff[MLVM_DWL_TAPS];
    const mlvm_index_t taps = p->kh * p->kw, wp = mlvm_reach(p->ow, p->sw, p->kw, p->dw);
    mlvm_index_t rows = 1, c0, oy0, oy1, q, q1, i, j;
    int c, nc;
    while (rows < p->oh && mlvm_reach(rows + 1, p->sh, p->kh, p->dh) * wp <= MLVM_DWL_BAND / L)
        ++rows;
    for (i = 0; i < p->kh; ++i)
        for (j = 0; j < p->kw; ++j)
            toff[i * p->kw + j] = (i * p->dh * wp + j * p->dw) * L;
    for (c0 = 0; c0 < p->c; c0 += L) {
        nc = (int)mlvm_imin(L, p->c - c0);
        weights_of(w, taps, c0, nc, wt);
        for (c = 0; c < L; ++c)
            bv[c] = c < nc && bias != NULL ? bias[c0 + c] : 0.0f;
        for (oy0 = 0; oy0 < p->oh; oy0 = oy1) {
            oy1 = mlvm_imin(p->oh, oy0 + rows);
            fill_band(p, x, c0, nc, oy0 * p->sh, mlvm_reach(oy1 - oy0, p->sh, p->kh, p->dh), wp,
                      band);
            q1 = oy1 * p->ow;
            for (q = oy0 * p->ow; q < q1; q += L)
                band_chunk(p, band, wp, oy0, q, (int)mlvm_imin(L, q1 - q), taps, toff, wt,
                           dwl_load(bv), c0, nc, out, act);
        }
    }
}
#else
typedef int mlvm_dw_lanes_not_built; /* ISO C: a translation unit is never empty */
#endif
