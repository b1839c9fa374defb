/* int8 depthwise 3x3 convolutions of stride 1 with one row and column of
 * padding on every side (output as large as the input), plane by plane:
 * 16 positions in the lanes, no transposes.
 *
 * qdepthwise_lanes.c puts channels in the lanes, and so spends most of a
 * small map's time transposing them in and out and uses half of each
 * vpmaddwd (one product per 32-bit lane). Here a channel's plane is
 * widened once to 16-bit values x - zx (in [-255, 255]) between zero rows,
 * and each tap of 16 output positions is one unaligned load of that plane
 * shifted by the tap's offset; the left and right kernel columns' loads
 * are masked to 0 in the lanes whose column has no such neighbour (the
 * padding; a row's neighbour in the flat plane is the row before or
 * after). Two taps' loads interleaved (vpunpcklwd / vpunpckhwd) meet the
 * two taps' weights less their zero points in one vpmaddwd: two exact
 * products per 32-bit lane, nine taps in five. The interleave puts
 * positions 0-3 and 8-11 in one sum vector, 4-7 and 12-15 in the other;
 * vpackssdw of the two restores the order (vperm2i128 for int32 sums). Sums are exact (as the
 * reference's int32 sums); the requantization is requant.h's, per channel,
 * as qconv_ws.c's (bias added wrapping, times the multiplier in f32,
 * rounded half to even, the zero point, clamped, NaN to the zero point). */
#include <math.h>
#include <string.h>

#include "depthwise.h"

#if defined(MLVM_QDW_ROWS3)
#include <immintrin.h>

#include "requant.h"

#define MLVM_QDWR_PLANE 8192 /* positions of a plane (its 16-bit copy is on the stack) */
#define MLVM_QDWR_W 512      /* positions of a row (the copy's zero rows, and columns in int16) */
#define MLVM_QDWR_INLINE static inline __attribute__((always_inline))

int mlvm_qdw_rows3_applies(const mlvm_qconv2d_t *p)
{
    return p->c == p->groups && p->o == p->c && p->n > 0 && p->kh == 3 && p->kw == 3
           && p->sh == 1 && p->sw == 1 && p->dh == 1 && p->dw == 1 && p->pt == 1 && p->pl == 1
           && p->oh == p->h && p->ow == p->w && p->h > 0 && p->w > 0 && p->w <= MLVM_QDWR_W
           && p->h * p->w >= 16 && p->h * p->w <= MLVM_QDWR_PLANE;
}

/* What every plane needs: the shape, the output's constants. */
typedef struct qdwr {
    mlvm_index_t w, plane;
    __m256i col0;          /* the first vector's columns: lane j's is j mod w */
    __m256i step, wv, wm1; /* 16 % w, w and w - 1 per 16-bit lane */
    __m256i zyi;           /* the zero point (finite multipliers) */
    __m256 zy, lo, hi, lo_zy, hi_zy;
} qdwr_t;

/* The 16-bit pair (a, b) in each 32-bit lane: the weights vpmaddwd
 * multiplies two interleaved taps by. */
MLVM_QDWR_INLINE __m256i pair_of(int32_t a, int32_t b)
{
    return _mm256_set1_epi32((int32_t)(((uint32_t)a & 0xFFFFu) | (uint32_t)b << 16));
}

/* acc + the products of taps a and b (16 positions each) with their
 * weights ab, lo: positions 0-3 and 8-11, hi: 4-7 and 12-15. */
MLVM_QDWR_INLINE void madd2(__m256i *lo, __m256i *hi, __m256i a, __m256i b, __m256i ab)
{
    *lo = _mm256_add_epi32(*lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), ab));
    *hi = _mm256_add_epi32(*hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), ab));
}

/* Channel plane xc (bytes, flipped by flip, less zxu) into dst, 16-bit,
 * then zeros up to the next multiple of 16 (the zero rows after it stay as
 * they are). The last partial vector reads 16 bytes where the input goes on
 * past the plane (tail_ok), else a copy of the plane's last bytes. */
static void widen(const uint8_t *xc, mlvm_index_t plane, int tail_ok, __m128i flip, __m256i zxu,
                  int16_t *dst)
{
    mlvm_index_t i;
    for (i = 0; i + 16 <= plane; i += 16) {
        const __m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(xc + i)), flip);
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), _mm256_sub_epi16(_mm256_cvtepu8_epi16(b), zxu));
    }
    if (i < plane) {
        const __m256i keep = _mm256_cmpgt_epi16(
            _mm256_set1_epi16((int16_t)(plane - i)),
            _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        uint8_t t[16] = {0};
        const uint8_t *src = xc + i;
        __m128i b;
        if (!tail_ok) {
            memcpy(t, src, (size_t)(plane - i));
            src = t;
        }
        b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)src), flip);
        _mm256_storeu_si256((__m256i *)(void *)(dst + i),
                            _mm256_and_si256(_mm256_sub_epi16(_mm256_cvtepu8_epi16(b), zxu), keep));
    }
}

/* The sums of 16 positions from b (the widened plane at the first of
 * them), columns col: lo and hi as madd2 leaves them, from init. */
MLVM_QDWR_INLINE void sums16(const qdwr_t *q, const int16_t *b, __m256i col, const __m256i wt[5],
                             __m256i init, __m256i *lo, __m256i *hi)
{
    const __m256i ml = _mm256_cmpgt_epi16(col, _mm256_setzero_si256());
    const __m256i mr = _mm256_cmpgt_epi16(q->wm1, col);
    const int16_t *t = b - q->w, *d = b + q->w;
#define MLVM_QDWR_LD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
    const __m256i t0 = _mm256_and_si256(MLVM_QDWR_LD(t - 1), ml), t1 = MLVM_QDWR_LD(t);
    const __m256i t2 = _mm256_and_si256(MLVM_QDWR_LD(t + 1), mr);
    const __m256i m0 = _mm256_and_si256(MLVM_QDWR_LD(b - 1), ml), m1 = MLVM_QDWR_LD(b);
    const __m256i m2 = _mm256_and_si256(MLVM_QDWR_LD(b + 1), mr);
    const __m256i d0 = _mm256_and_si256(MLVM_QDWR_LD(d - 1), ml), d1 = MLVM_QDWR_LD(d);
    const __m256i d2 = _mm256_and_si256(MLVM_QDWR_LD(d + 1), mr);
#undef MLVM_QDWR_LD
    *lo = init, *hi = init;
    madd2(lo, hi, t0, t1, wt[0]);
    madd2(lo, hi, t2, m0, wt[1]);
    madd2(lo, hi, m1, m2, wt[2]);
    madd2(lo, hi, d0, d1, wt[3]);
    madd2(lo, hi, d2, _mm256_setzero_si256(), wt[4]);
}

/* The next vector's columns: col + 16 mod w (col < w, so one subtraction). */
MLVM_QDWR_INLINE __m256i next_col(const qdwr_t *q, __m256i col)
{
    col = _mm256_add_epi16(col, q->step);
    return _mm256_sub_epi16(col, _mm256_and_si256(_mm256_cmpgt_epi16(col, q->wm1), q->wv));
}

/* One channel's plane of requantized bytes (its sums from bias); finite
 * and y_signed constants in the common callers, so that their loops test
 * neither (a non-finite multiplier's, rare, tests y_signed). */
MLVM_QDWR_INLINE void plane_bytes(const qdwr_t *q, const int16_t *b, const __m256i wt[5],
                                  int32_t bias, float mult, int finite, int y_signed, int spill,
                                  uint8_t *out)
{
    const __m256i init = _mm256_set1_epi32(bias);
    const __m256 mu = _mm256_set1_ps(mult);
    __m256i col = q->col0, lo, hi;
    mlvm_index_t p0;
    for (p0 = 0; p0 < q->plane; p0 += 16, col = next_col(q, col)) {
        __m256i v;
        __m128i r;
        sums16(q, b + p0, col, wt, init, &lo, &hi);
        if (finite) {
            lo = mlvm_requant256_finite(lo, mu, q->zyi, q->lo_zy, q->hi_zy);
            hi = mlvm_requant256_finite(hi, mu, q->zyi, q->lo_zy, q->hi_zy);
        } else {
            lo = mlvm_requant256(lo, mu, q->zy, q->lo, q->hi);
            hi = mlvm_requant256(hi, mu, q->zy, q->lo, q->hi);
        }
        v = _mm256_packs_epi32(lo, hi); /* positions 0-15 in order, in [-128, 255] */
        v = y_signed ? _mm256_packs_epi16(v, v) : _mm256_packus_epi16(v, v);
        r = _mm256_castsi256_si128(_mm256_permute4x64_epi64(v, 0x08));
        if (spill || q->plane - p0 >= 16) {
            _mm_storeu_si128((__m128i *)(void *)(out + p0), r);
        } else { /* the plane's last positions through a buffer */
            uint8_t t[16];
            _mm_storeu_si128((__m128i *)(void *)t, r);
            memcpy(out + p0, t, (size_t)(q->plane - p0));
        }
    }
}

/* One channel's plane of int32 sums. */
static void plane_sums(const qdwr_t *q, const int16_t *b, const __m256i wt[5], int spill,
                       int32_t *out)
{
    __m256i col = q->col0, lo, hi;
    mlvm_index_t p0;
    for (p0 = 0; p0 < q->plane; p0 += 16, col = next_col(q, col)) {
        int32_t t[16];
        int32_t *dst = spill || q->plane - p0 >= 16 ? out + p0 : t;
        sums16(q, b + p0, col, wt, _mm256_setzero_si256(), &lo, &hi);
        _mm256_storeu_si256((__m256i *)(void *)dst, _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(dst + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
        if (dst == t)
            memcpy(out + p0, t, (size_t)(q->plane - p0) * sizeof *t);
    }
}

/* Channel c's weights less their zero point, paired as sums16 reads them. */
static void weights_of(const mlvm_qconv2d_t *p, const void *w, const void *zw, mlvm_index_t c,
                       __m256i wt[5])
{
    const mlvm_index_t zo = p->zw_per_o ? c : 0;
    const int32_t z = p->w_signed ? ((const int8_t *)zw)[zo] : ((const uint8_t *)zw)[zo];
    int32_t v[10];
    int t;
    for (t = 0; t < 9; ++t)
        v[t] = (p->w_signed ? ((const int8_t *)w)[c * 9 + t] : ((const uint8_t *)w)[c * 9 + t]) - z;
    v[9] = 0;
    for (t = 0; t < 5; ++t)
        wt[t] = pair_of(v[2 * t], v[2 * t + 1]);
}

void mlvm_qdw_rows3_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                      const void *w, const void *zx, const void *zw, const int32_t *bias,
                      const float *mult, const void *zy, void *out)
{
    /* the plane rounded up to 16 between a zero row and column before it
     * and after it: at most MLVM_QDWR_PLANE + 2 MLVM_QDWR_W + 2 */
    int16_t buf[MLVM_QDWR_PLANE + 2 * MLVM_QDWR_W + 2];
    const mlvm_index_t plane = p->h * p->w, lead = p->w + 1, body = (plane + 15) / 16 * 16;
    const uint8_t flip = p->x_signed ? 0x80 : 0;
    const __m128i flipv = _mm_set1_epi8((char)flip);
    const __m256i zxu = _mm256_set1_epi16((int16_t)(uint8_t)(*(const uint8_t *)zx ^ flip));
    int16_t col0[16];
    qdwr_t q;
    mlvm_index_t n, c;
    int j;
    q.w = p->w, q.plane = plane;
    q.step = _mm256_set1_epi16((int16_t)(16 % p->w));
    q.wv = _mm256_set1_epi16((int16_t)p->w), q.wm1 = _mm256_set1_epi16((int16_t)(p->w - 1));
    for (j = 0; j < 16; ++j)
        col0[j] = (int16_t)(j % p->w);
    q.col0 = _mm256_loadu_si256((const __m256i *)(const void *)col0);
    if (rq != NULL) {
        const mlvm_requant_bounds_t b = mlvm_requant_bounds(rq, zy);
        q.zy = _mm256_set1_ps(b.zy), q.lo = _mm256_set1_ps(b.lo), q.hi = _mm256_set1_ps(b.hi);
        q.zyi = _mm256_set1_epi32((int32_t)b.zy);
        q.lo_zy = _mm256_set1_ps(b.lo - b.zy), q.hi_zy = _mm256_set1_ps(b.hi - b.zy);
    } else { /* int32 sums: unused */
        q.zy = q.lo = q.hi = q.lo_zy = q.hi_zy = _mm256_setzero_ps();
        q.zyi = _mm256_setzero_si256();
    }
    /* the zero rows above and below the plane (a vector past the plane's
     * end reads up to a row and a column past its last 16 positions) */
    memset(buf, 0, (size_t)lead * sizeof *buf);
    memset(buf + lead + body, 0, (size_t)(p->w + 1) * sizeof *buf);
    for (c = 0; c < p->c; ++c) {
        __m256i wt[5];
        const int32_t bc = bias != NULL ? bias[c] : 0;
        const float mc = rq != NULL ? mult[rq->mult_per_o ? c : 0] : 0.0f;
        const int finite = isfinite(mc), y_signed = rq != NULL && rq->y_signed;
        /* a plane's last vector may store up to 15 values past it where the
         * channels after it (written later) take them */
        const int spill = (p->c - 1 - c) * plane >= 16;
        weights_of(p, w, zw, c, wt);
        for (n = 0; n < p->n; ++n) {
            const int16_t *b = buf + lead;
            uint8_t *oc = (uint8_t *)out + (n * p->o + c) * plane;
            /* and read up to 15 bytes past it where the input goes on */
            widen((const uint8_t *)x + (n * p->c + c) * plane, plane,
                  (p->n * p->c - 1 - (n * p->c + c)) * plane >= 16, flipv, zxu, buf + lead);
            if (rq == NULL)
                plane_sums(&q, b, wt, spill, (int32_t *)out + (n * p->o + c) * plane);
            else if (finite && y_signed)
                plane_bytes(&q, b, wt, bc, mc, 1, 1, spill, oc);
            else if (finite)
                plane_bytes(&q, b, wt, bc, mc, 1, 0, spill, oc);
            else
                plane_bytes(&q, b, wt, bc, mc, 0, y_signed, spill, oc);
        }
    }
}
#else
typedef int mlvm_qdw_rows3_not_built; /* ISO C: a translation unit is never empty */
#endif
