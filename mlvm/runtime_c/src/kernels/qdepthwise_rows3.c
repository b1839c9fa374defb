/* int8 depthwise 3x3 convolutions of stride 1 with one row and column of
 * padding on every side (output as large as the input), plane by plane:
 * 16 positions in the lanes, no transposes; and of stride 2 (below).
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
#include "window.h"

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

/* The output's constants of q from rq (NULL: int32 sums, unused). */
static void output_constants(const mlvm_qrequant_t *rq, const void *zy, qdwr_t *q)
{
    if (rq != NULL) {
        const mlvm_requant_bounds_t b = mlvm_requant_bounds(rq, zy);
        q->zy = _mm256_set1_ps(b.zy), q->lo = _mm256_set1_ps(b.lo), q->hi = _mm256_set1_ps(b.hi);
        q->zyi = _mm256_set1_epi32((int32_t)b.zy);
        q->lo_zy = _mm256_set1_ps(b.lo - b.zy), q->hi_zy = _mm256_set1_ps(b.hi - b.zy);
    } else {
        q->zy = q->lo = q->hi = q->lo_zy = q->hi_zy = _mm256_setzero_ps();
        q->zyi = _mm256_setzero_si256();
    }
}

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

/* Channel c's nine weights less their zero point, and a 0 after them. */
static void taps_of(const mlvm_qconv2d_t *p, const void *w, const void *zw, mlvm_index_t c,
                    int32_t v[10])
{
    const mlvm_index_t zo = p->zw_per_o ? c : 0;
    const int32_t z = p->w_signed ? ((const int8_t *)zw)[zo] : ((const uint8_t *)zw)[zo];
    int t;
    for (t = 0; t < 9; ++t)
        v[t] = (p->w_signed ? ((const int8_t *)w)[c * 9 + t] : ((const uint8_t *)w)[c * 9 + t]) - z;
    v[9] = 0;
}

/* Channel c's weights paired as sums16 reads them. */
static void weights_of(const mlvm_qconv2d_t *p, const void *w, const void *zw, mlvm_index_t c,
                       __m256i wt[5])
{
    int32_t v[10];
    int t;
    taps_of(p, w, zw, c, v);
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
    output_constants(rq, zy, &q);
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

/* ---- stride 2 ----
 * Output position x of a row reads columns 2 x - pl .. 2 x - pl + 2 of
 * three input rows. With each input row widened to 16-bit values between
 * zero columns, one unaligned load at 2 x0 - pl holds, in its 32-bit lane
 * j, the pair (x[2 (x0 + j) - pl], x[2 (x0 + j) - pl + 1]): the window's
 * first two taps of output x0 + j, already in output order. The load two
 * values on holds the third tap and the next one, which meets a weight 0.
 * So 8 outputs take two loads and two vpmaddwd per kernel row and no
 * shuffle before the sums: no transposes (qdepthwise_lanes.c's), no masks
 * (the zero columns and rows are in the copy). The copy: rows 2 y + k (k < 3) of
 * output row y at buf + (2 y + k) P, column c of the input at 1 + c; input
 * row i at 2 y + k = i + pt. */

/* The copy's row pitch: the widened row (16 values a store) after its
 * zero column, and what the last output vector's loads read, with a few
 * values to spare. */
static mlvm_index_t s2_pitch(const mlvm_qconv2d_t *p)
{
    const mlvm_index_t row = (p->w + 15) / 16 * 16 + 2, reads = 2 * ((p->ow + 7) / 8 * 8) + 4;
    return row > reads ? row : reads;
}

int mlvm_qdw_rows3s2_applies(const mlvm_qconv2d_t *p)
{
    return p->c == p->groups && p->o == p->c && p->n > 0 && p->kh == 3 && p->kw == 3
           && p->sh == 2 && p->sw == 2 && p->dh == 1 && p->dw == 1 && (p->pt == 0 || p->pt == 1)
           && (p->pl == 0 || p->pl == 1) && p->h > 0 && p->w > 0 && p->oh > 0 && p->ow > 0
           && p->w <= MLVM_QDWR_W && p->ow <= MLVM_QDWR_W && p->oh * p->ow >= 8
           && (2 * p->oh + 1) * s2_pitch(p) <= MLVM_QDWR_PLANE + 2 * MLVM_QDWR_W + 2;
}

/* Input rows of channel plane xc (bytes, flipped, less zxu) into the copy
 * (b: its first row), those an output row reads; columns past the row stay
 * 0 (masked), as do the copy's rows outside the input. A load of 16 bytes
 * past the input's end (avail: bytes from xc to it) goes through a copy. */
static void s2_widen(const mlvm_qconv2d_t *p, const uint8_t *xc, size_t avail, mlvm_index_t pitch,
                     __m128i flip, __m256i zxu, int16_t *b)
{
    const __m256i idx = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const mlvm_index_t rows = mlvm_imin(p->h, 2 * p->oh + 1 - p->pt);
    mlvm_index_t i, j;
    for (i = 0; i < rows; ++i) {
        const uint8_t *src = xc + i * p->w;
        int16_t *d = b + (i + p->pt) * pitch + 1;
        for (j = 0; j < p->w; j += 16) {
            const __m256i keep = _mm256_cmpgt_epi16(_mm256_set1_epi16((int16_t)(p->w - j)), idx);
            const uint8_t *s = src + j;
            uint8_t t[16];
            __m128i v;
            if ((size_t)(i * p->w + j) + 16 > avail) {
                memset(t, 0, sizeof t);
                memcpy(t, s, (size_t)mlvm_imin(16, p->w - j));
                s = t;
            }
            v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)s), flip);
            _mm256_storeu_si256((__m256i *)(void *)(d + j),
                                _mm256_and_si256(_mm256_sub_epi16(_mm256_cvtepu8_epi16(v), zxu), keep));
        }
    }
}

/* The int32 sums of outputs x0 .. x0 + 7 of a row whose three input rows
 * start at r (the copy, column -pl of x0's window): from init. */
MLVM_QDWR_INLINE __m256i s2_sums8(const int16_t *r, mlvm_index_t pitch, const __m256i wt[6],
                                  __m256i init)
{
#define MLVM_QDWR_LD(q) _mm256_loadu_si256((const __m256i *)(const void *)(q))
    __m256i a = _mm256_add_epi32(init, _mm256_madd_epi16(MLVM_QDWR_LD(r), wt[0]));
    a = _mm256_add_epi32(a, _mm256_madd_epi16(MLVM_QDWR_LD(r + 2), wt[1]));
    a = _mm256_add_epi32(a, _mm256_madd_epi16(MLVM_QDWR_LD(r + pitch), wt[2]));
    a = _mm256_add_epi32(a, _mm256_madd_epi16(MLVM_QDWR_LD(r + pitch + 2), wt[3]));
    a = _mm256_add_epi32(a, _mm256_madd_epi16(MLVM_QDWR_LD(r + 2 * pitch), wt[4]));
    return _mm256_add_epi32(a, _mm256_madd_epi16(MLVM_QDWR_LD(r + 2 * pitch + 2), wt[5]));
#undef MLVM_QDWR_LD
}

/* One channel's output plane from its copy b: bytes (rq) or int32 sums.
 * A vector's 8 results are stored whole where the output goes on for 8
 * past its first (room: the values from the plane's start to the end of
 * the image's last channel; those past a row are the next row's or the
 * next channel's, written after it), else through a buffer. */
MLVM_QDWR_INLINE void s2_plane(const mlvm_qconv2d_t *p, const qdwr_t *q, const int16_t *b,
                               mlvm_index_t pitch, const __m256i wt[6], int32_t bias, float mult,
                               int requant, int finite, int y_signed, mlvm_index_t room,
                               void *out)
{
    const __m256i init = _mm256_set1_epi32(bias), lows = _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0);
    const __m256 mu = _mm256_set1_ps(mult);
    mlvm_index_t y, x0;
    for (y = 0; y < p->oh; ++y) {
        const int16_t *r = b + 2 * y * pitch + 1 - p->pl;
        for (x0 = 0; x0 < p->ow; x0 += 8) {
            const mlvm_index_t at = y * p->ow + x0, n = room - at >= 8 ? 8 : p->ow - x0;
            __m256i v = s2_sums8(r + 2 * x0, pitch, wt, init);
            if (!requant) {
                int32_t *o = (int32_t *)out + at, t[8];
                _mm256_storeu_si256((__m256i *)(void *)(n == 8 ? o : t), v);
                if (n < 8)
                    memcpy(o, t, (size_t)n * sizeof *t);
                continue;
            }
            v = finite ? mlvm_requant256_finite(v, mu, q->zyi, q->lo_zy, q->hi_zy)
                       : mlvm_requant256(v, mu, q->zy, q->lo, q->hi);
            v = _mm256_packs_epi32(v, v); /* in [-128, 255] */
            v = y_signed ? _mm256_packs_epi16(v, v) : _mm256_packus_epi16(v, v);
            v = _mm256_permutevar8x32_epi32(v, lows); /* bytes 0-3 of each half */
            {
                uint8_t *o = (uint8_t *)out + at, t[8];
                _mm_storel_epi64((__m128i *)(void *)(n == 8 ? o : t), _mm256_castsi256_si128(v));
                if (n < 8)
                    memcpy(o, t, (size_t)n);
            }
        }
    }
}

void mlvm_qdw_rows3s2_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                        const void *w, const void *zx, const void *zw, const int32_t *bias,
                        const float *mult, const void *zy, void *out)
{
    int16_t buf[MLVM_QDWR_PLANE + 2 * MLVM_QDWR_W + 2];
    const mlvm_index_t pitch = s2_pitch(p), plane = p->h * p->w, oplane = p->oh * p->ow;
    const uint8_t flip = p->x_signed ? 0x80 : 0;
    const __m128i flipv = _mm_set1_epi8((char)flip);
    const __m256i zxu = _mm256_set1_epi16((int16_t)(uint8_t)(*(const uint8_t *)zx ^ flip));
    const size_t total = (size_t)(p->n * p->c * plane);
    qdwr_t q;
    mlvm_index_t n, c;
    output_constants(rq, zy, &q);
    /* zero once: every channel writes the same cells */
    memset(buf, 0, (size_t)((2 * p->oh + 1) * pitch) * sizeof *buf);
    for (c = 0; c < p->c; ++c) {
        __m256i wt[6];
        const int32_t bc = bias != NULL ? bias[c] : 0;
        const float mc = rq != NULL ? mult[rq->mult_per_o ? c : 0] : 0.0f;
        const int finite = isfinite(mc), y_signed = rq != NULL && rq->y_signed;
        int32_t v[10];
        int k;
        /* (w[k][0], w[k][1]) and (w[k][2], 0) per kernel row k */
        taps_of(p, w, zw, c, v);
        for (k = 0; k < 3; ++k) {
            wt[2 * k] = pair_of(v[3 * k], v[3 * k + 1]);
            wt[2 * k + 1] = pair_of(v[3 * k + 2], 0);
        }
        for (n = 0; n < p->n; ++n) {
            const size_t at = (size_t)((n * p->c + c) * plane);
            const mlvm_index_t room = (p->o - c) * oplane, o = (n * p->o + c) * oplane;
            s2_widen(p, (const uint8_t *)x + at, total - at, pitch, flipv, zxu, buf);
            if (rq == NULL)
                s2_plane(p, &q, buf, pitch, wt, 0, 0.0f, 0, 1, 0, room, (int32_t *)out + o);
            else if (finite && y_signed)
                s2_plane(p, &q, buf, pitch, wt, bc, mc, 1, 1, 1, room, (uint8_t *)out + o);
            else if (finite)
                s2_plane(p, &q, buf, pitch, wt, bc, mc, 1, 1, 0, room, (uint8_t *)out + o);
            else
                s2_plane(p, &q, buf, pitch, wt, bc, mc, 1, 0, y_signed, room, (uint8_t *)out + o);
        }
    }
}
#else
typedef int mlvm_qdw_rows3_not_built; /* ISO C: a translation unit is never empty */
#endif
