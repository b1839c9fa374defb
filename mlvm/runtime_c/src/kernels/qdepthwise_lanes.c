/* int8 depthwise convolutions (mlvm.qconv2d and mlvm.qconv2d_requant with
 * one input channel and one output per group) with the channels in the
 * vector lanes, for the builds with AVX2 or AVX-512: depthwise_lanes.c's
 * scheme in integers.
 *
 * qconv_ws.c's planar path spends most of a small map's time on per-row
 * copies, on lanes past the rows' ends and on compacting its rows again
 * (a keyword spotter's 25x5 maps: a copy per 5 bytes). Here LANES channels
 * at a time are transposed into a band of padded input rows on the stack,
 * position-major, each value x - zx as a 32-bit lane (x ^ 0x80 for i8 less
 * its zero point, so padding is 0), and each output position is LANES
 * channels in one vector: per tap one multiply-add of 16-bit halves
 * (vpdpwssd with AVX-512 VNNI, vpmaddwd and an add otherwise) with the
 * tap's weights less their zero points, |x - zx|, |w - zw| <= 255, high
 * halves of the weights 0: each product exact. The sums are exact (at most
 * 64 taps), as the reference's int32 sums are; the requantization is
 * qconv_ws.c's (bias added wrapping, times the multiplier in f32, rounded
 * half to even, the zero point, clamped, NaN to the zero point), per
 * channel in the lanes, before LANES positions are transposed back into
 * the output planes. */
#include <string.h>

#include "depthwise.h"

#if defined(MLVM_QDW_LANES)
#include <immintrin.h>

#include "requant.h"
#include "transpose.h"
#include "window.h"

#define MLVM_QDWL_BAND 8192 /* 32-bit values of padded input rows (32 KiB, in L1) */
#define MLVM_QDWL_TAPS 64   /* kernels up to 8 x 8 */
#define MLVM_QDWL_INLINE static inline __attribute__((always_inline))

#if defined(MLVM_QDW_LANES_512)
#define L 16
typedef __m512i qv_t;
typedef __m512 qf_t;
typedef __mmask16 qmask_t;
#define qv_zero _mm512_setzero_si512
#define qv_set1 _mm512_set1_epi32
#define qv_add _mm512_add_epi32
#define qv_sub _mm512_sub_epi32
#define qv_xor _mm512_xor_si512
#define qv_load(p) _mm512_loadu_si512((const void *)(p))
#define qv_store(p, v) _mm512_storeu_si512((void *)(p), v)
#if defined(__AVX512VNNI__)
#define qv_madd(acc, x, w) _mm512_dpwssd_epi32(acc, x, w)
#else
#define qv_madd(acc, x, w) _mm512_add_epi32(acc, _mm512_madd_epi16(x, w))
#endif
#define qf_set1 _mm512_set1_ps
#define qf_loadu _mm512_loadu_ps

/* n bytes from p (n <= 16) as 32-bit lanes, zero past n; nothing read past n. */
MLVM_QDWL_INLINE qv_t qv_bytes(const uint8_t *p, int n)
{
    return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8((__mmask16)((1u << n) - 1u), p));
}

#define qv_as_f _mm512_castsi512_ps
#define qf_as_v _mm512_castps_si512
#define qf_transpose mlvm_transpose16_512

#define qv_requant mlvm_requant512

/* The first n lanes as bytes (requantized results) or as int32. */
MLVM_QDWL_INLINE void qv_store_bytes(uint8_t *p, qv_t v, int n)
{
    _mm512_mask_cvtepi32_storeu_epi8(p, (__mmask16)((1u << n) - 1u), v);
}

MLVM_QDWL_INLINE void qv_store_n(int32_t *p, qv_t v, int n)
{
    _mm512_mask_storeu_epi32(p, (__mmask16)((1u << n) - 1u), v);
}
#else /* AVX2 */
#define L 8
typedef __m256i qv_t;
typedef __m256 qf_t;
#define qv_zero _mm256_setzero_si256
#define qv_set1 _mm256_set1_epi32
#define qv_add _mm256_add_epi32
#define qv_sub _mm256_sub_epi32
#define qv_xor _mm256_xor_si256
#define qv_load(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define qv_store(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#if defined(__AVXVNNI__)
#define qv_madd(acc, x, w) _mm256_dpwssd_avx_epi32(acc, x, w)
#else
#define qv_madd(acc, x, w) _mm256_add_epi32(acc, _mm256_madd_epi16(x, w))
#endif
#define qf_set1 _mm256_set1_ps
#define qf_loadu _mm256_loadu_ps

MLVM_QDWL_INLINE qv_t qv_bytes(const uint8_t *p, int n)
{
    long long b = 0;
    memcpy(&b, p, (size_t)n);
    return _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(b));
}

#define qv_as_f _mm256_castsi256_ps
#define qf_as_v _mm256_castps_si256
#define qf_transpose mlvm_transpose8_256

#define qv_requant mlvm_requant256

MLVM_QDWL_INLINE void qv_store_bytes(uint8_t *p, qv_t v, int n)
{
    long long b = _mm_cvtsi128_si64(mlvm_low_bytes256(v));
    memcpy(p, &b, (size_t)n);
}

MLVM_QDWL_INLINE void qv_store_n(int32_t *p, qv_t v, int n)
{
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n),
                                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_maskstore_epi32(p, m, v);
}
#endif

/* r[i][j] -> r[j][i], as floats (transpose.h). */
MLVM_QDWL_INLINE void qv_transpose(qv_t r[L])
{
    qf_t f[L];
    int i;
    for (i = 0; i < L; ++i)
        f[i] = qv_as_f(r[i]);
    qf_transpose(f);
    for (i = 0; i < L; ++i)
        r[i] = qf_as_v(f[i]);
}

/* What every chunk needs: the finishing constants and the input's flip. */
typedef struct qdwl {
    const mlvm_qconv2d_t *p;
    const mlvm_qrequant_t *rq; /* NULL: int32 sums */
    qv_t flip, zxu;
    qf_t zy, lo, hi;
    mlvm_index_t wp;           /* padded columns every output row reads */
    mlvm_index_t toff[MLVM_QDWL_TAPS];
} qdwl_t;

int mlvm_qdw_lanes_applies(const mlvm_qconv2d_t *p)
{
    return p->c == p->groups && p->o == p->c && p->c >= L && p->n > 0 && p->oh > 0 && p->ow > 0
           && p->kh * p->kw <= MLVM_QDWL_TAPS && p->pt >= 0 && p->pl >= 0
           && mlvm_reach(1, p->sh, p->kh, p->dh) * mlvm_reach(p->ow, p->sw, p->kw, p->dw)
                  <= MLVM_QDWL_BAND / L;
}

/* Positions 0 .. cnt of nc channels (channel c's bytes at src + c * stride)
 * as cnt vectors of x - zx (v[k] = position k's channels), zero past nc. */
static void columns_of(const qdwl_t *q, qv_t v[L], const uint8_t *src, mlvm_index_t stride, int nc,
                       int cnt)
{
    int c;
    for (c = 0; c < nc; ++c)
        v[c] = qv_sub(qv_xor(qv_bytes(src + c * stride, cnt), q->flip), q->zxu);
    for (; c < L; ++c)
        v[c] = qv_zero();
    qv_transpose(v);
}

/* Padded rows py0 .. py0 + nrows of channels c0 .. c0 + nc of image x
 * into band, position-major (wp positions per row, L values each). */
static void fill_band(const qdwl_t *q, const uint8_t *x, mlvm_index_t c0, int nc,
                      mlvm_index_t py0, mlvm_index_t nrows, int32_t *band)
{
    const mlvm_qconv2d_t *p = q->p;
    const mlvm_index_t plane = p->h * p->w, wp = q->wp;
    mlvm_index_t r, k0, e, e1, y, xc, lo, hi, y0, y1;
    qv_t v[L];
    int k, cnt;
    /* the band's rows [lo, hi) are input rows [y0, y1) */
    mlvm_valid_span(py0 - p->pt, 1, p->h, nrows, &lo, &hi);
    y0 = py0 - p->pt + lo;
    y1 = py0 - p->pt + hi;
    /* zeros (x = zx): rows outside x, and each inside row's pad columns */
    for (r = 0; r < nrows; ++r) {
        int32_t *row = band + r * wp * L;
        const int inside = r >= lo && r < hi;
        for (k0 = 0; k0 < (inside ? mlvm_imin(p->pl, wp) : wp); ++k0)
            qv_store(row + k0 * L, qv_zero());
        for (k0 = p->pl + p->w; inside && k0 < wp; ++k0)
            qv_store(row + k0 * L, qv_zero());
    }
    if (y0 >= y1)
        return;
    /* the inside rows are contiguous in each plane: flat chunks of L
     * positions, one transpose each however narrow the rows are */
    e1 = y1 * p->w;
    for (e = y0 * p->w; e < e1; e += L) {
        cnt = (int)mlvm_imin(L, e1 - e);
        columns_of(q, v, x + c0 * plane + e, plane, nc, cnt);
        y = e / p->w;
        xc = e % p->w;
        for (k = 0; k < cnt; ++k) {
            if (xc + p->pl < wp)
                qv_store(band + ((y + p->pt - py0) * wp + xc + p->pl) * L, v[k]);
            if (++xc == p->w) {
                xc = 0;
                ++y;
            }
        }
    }
}

/* Output positions q0 .. q0 + cnt (flat, in the band's rows from oy0) of
 * channels c0 .. c0 + nc: four positions at a time over every tap (four
 * sums, each tap's weights loaded once for them; the band read by the
 * multiply-adds themselves), finished with the channels in the lanes, then
 * transposed into the output planes of image out. */
static void band_chunk(const qdwl_t *q, const int32_t *band, mlvm_index_t oy0, mlvm_index_t q0,
                       int cnt, const int32_t *wt, qv_t bias, qf_t mult, mlvm_index_t c0, int nc,
                       void *out)
{
    const mlvm_qconv2d_t *p = q->p;
    const mlvm_index_t plane = p->oh * p->ow, taps = p->kh * p->kw;
    const int32_t *at[L];
    qv_t acc[L];
    mlvm_index_t t, oy = q0 / p->ow, ox = q0 % p->ow;
    int k, c;
    for (k = 0; k < L; ++k) {
        at[k] = band + ((oy - oy0) * p->sh * q->wp + ox * p->sw) * L;
        if (k + 1 < cnt && ++ox == p->ow) {
            ox = 0;
            ++oy;
        }
    }
    for (k = 0; k < L; k += 8) {
        const int32_t *a0 = at[k], *a1 = at[k + 1], *a2 = at[k + 2], *a3 = at[k + 3];
        const int32_t *a4 = at[k + 4], *a5 = at[k + 5], *a6 = at[k + 6], *a7 = at[k + 7];
        qv_t s0 = qv_zero(), s1 = qv_zero(), s2 = qv_zero(), s3 = qv_zero();
        qv_t s4 = qv_zero(), s5 = qv_zero(), s6 = qv_zero(), s7 = qv_zero();
        for (t = 0; t < taps; ++t) {
            const qv_t wv = qv_load(wt + t * L);
            const mlvm_index_t off = q->toff[t];
            s0 = qv_madd(s0, qv_load(a0 + off), wv);
            s1 = qv_madd(s1, qv_load(a1 + off), wv);
            s2 = qv_madd(s2, qv_load(a2 + off), wv);
            s3 = qv_madd(s3, qv_load(a3 + off), wv);
            s4 = qv_madd(s4, qv_load(a4 + off), wv);
            s5 = qv_madd(s5, qv_load(a5 + off), wv);
            s6 = qv_madd(s6, qv_load(a6 + off), wv);
            s7 = qv_madd(s7, qv_load(a7 + off), wv);
        }
        acc[k] = s0, acc[k + 1] = s1, acc[k + 2] = s2, acc[k + 3] = s3;
        acc[k + 4] = s4, acc[k + 5] = s5, acc[k + 6] = s6, acc[k + 7] = s7;
    }
    if (q->rq == NULL) {
        qv_transpose(acc);
        for (c = 0; c < nc; ++c)
            qv_store_n((int32_t *)out + (c0 + c) * plane + q0, acc[c], cnt);
        return;
    }
    for (k = 0; k < L; ++k)
        acc[k] = qv_requant(qv_add(acc[k], bias), mult, q->zy, q->lo, q->hi);
    qv_transpose(acc);
    for (c = 0; c < nc; ++c)
        qv_store_bytes((uint8_t *)out + (c0 + c) * plane + q0, acc[c], cnt);
}

/* wt[t * L + c] = w[c0 + c, t] - zw[c0 + c] in the low 16 bits (the high
 * ones 0, so that the lane's product is exact), 0 for c >= nc. */
static void weights_of(const mlvm_qconv2d_t *p, const void *w, const void *zw, mlvm_index_t c0,
                       int nc, int32_t *wt)
{
    const mlvm_index_t taps = p->kh * p->kw;
    mlvm_index_t t;
    int c;
    memset(wt, 0, (size_t)(taps * L) * sizeof *wt);
    for (c = 0; c < nc; ++c) {
        const mlvm_index_t o = c0 + c, zo = p->zw_per_o ? o : 0;
        const int32_t z = p->w_signed ? ((const int8_t *)zw)[zo] : ((const uint8_t *)zw)[zo];
        for (t = 0; t < taps; ++t) {
            const int32_t v = p->w_signed ? ((const int8_t *)w)[o * taps + t]
                                          : ((const uint8_t *)w)[o * taps + t];
            wt[t * L + c] = (int32_t)((uint32_t)(v - z) & 0xFFFFu);
        }
    }
}

void mlvm_qdw_lanes_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                      const void *w, const void *zx, const void *zw, const int32_t *bias,
                      const float *mult, const void *zy, void *out)
{
    int32_t band[MLVM_QDWL_BAND], wt[MLVM_QDWL_TAPS * L], bv[L];
    float mv[L];
    const mlvm_index_t in_image = p->c * p->h * p->w, out_image = p->o * p->oh * p->ow;
    const size_t size = rq != NULL ? 1 : 4;
    const uint8_t flip = p->x_signed ? 0x80 : 0;
    qdwl_t q;
    mlvm_index_t rows = 1, c0, n, oy0, oy1, qq, q1, i, j;
    int c, nc;
    q.p = p;
    q.rq = rq;
    q.wp = mlvm_reach(p->ow, p->sw, p->kw, p->dw);
    q.flip = qv_set1(flip);
    q.zxu = qv_set1((uint8_t)(*(const uint8_t *)zx ^ flip));
    if (rq != NULL) {
        const mlvm_requant_bounds_t b = mlvm_requant_bounds(rq, zy);
        q.zy = qf_set1(b.zy), q.lo = qf_set1(b.lo), q.hi = qf_set1(b.hi);
    } else {
        q.zy = q.lo = q.hi = qf_set1(0.0f);
    }
    while (rows < p->oh && mlvm_reach(rows + 1, p->sh, p->kh, p->dh) * q.wp <= MLVM_QDWL_BAND / L)
        ++rows;
    for (i = 0; i < p->kh; ++i)
        for (j = 0; j < p->kw; ++j)
            q.toff[i * p->kw + j] = (i * p->dh * q.wp + j * p->dw) * L;
    for (c0 = 0; c0 < p->c; c0 += L) {
        nc = (int)mlvm_imin(L, p->c - c0);
        weights_of(p, w, zw, c0, nc, wt);
        for (c = 0; c < L; ++c) {
            bv[c] = c < nc && bias != NULL ? bias[c0 + c] : 0;
            mv[c] = rq == NULL ? 0.0f : mult[rq->mult_per_o && c < nc ? c0 + c : 0];
        }
        for (n = 0; n < p->n; ++n) {
            const uint8_t *xn = (const uint8_t *)x + n * in_image;
            void *on = (uint8_t *)out + (size_t)(n * out_image) * size;
            for (oy0 = 0; oy0 < p->oh; oy0 = oy1) {
                oy1 = mlvm_imin(p->oh, oy0 + rows);
                fill_band(&q, xn, c0, nc, oy0 * p->sh, mlvm_reach(oy1 - oy0, p->sh, p->kh, p->dh),
                          band);
                q1 = oy1 * p->ow;
                for (qq = oy0 * p->ow; qq < q1; qq += L)
                    band_chunk(&q, band, oy0, qq, (int)mlvm_imin(L, q1 - qq), wt, qv_load(bv),
                               qf_loadu(mv), c0, nc, on);
            }
        }
    }
}
#else
typedef int mlvm_qdw_lanes_not_built; /* ISO C: a translation unit is never empty */
#endif
