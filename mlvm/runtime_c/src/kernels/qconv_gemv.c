/* mlvm.qconv2d_requant (and mlvm.qconv2d's int32 sums) of a 1x1
 * convolution over one position per image: a Linear layer's row as
 * mlvm-fuse-qdq writes it, a product of one row (mlvm-qmatmul-conv), or a
 * classifier over a 1x1 map. Each output is one dot product of the
 * image's c bytes with its weight row, then requantized as the tiles do.
 * The tiles of qconv_ws.c put positions in the vector lanes, of which one
 * position fills a sixteenth (AVX-512) or an eighth (the Cortex-M's
 * 8-position tile); here the contraction fills them, and the weights
 * stream once.
 *
 * The sums wrap as the reference's int32 does. With vectors, in the bytes'
 * own types: sum_j (x - zx)(w - zw) = sum x w - zx sum w - zw sum (x - zx),
 * sum x w one dot-product idiom (vpdpbusd for u8 x i8), sum w from the
 * descriptor's w_sums where the compiler gave them (sums of w as i8, u8
 * weights less 128: used for i8 weights only); on scalar cores sum (x - zx)
 * w, one multiply-add per byte and no weight sums. */
#include "mlvm/scalar.h"
#include "qgemv.h"

int mlvm_qgemv_applies(const mlvm_qconv2d_t *p)
{
    return p->groups == 1 && p->kh == 1 && p->kw == 1 && p->h == 1 && p->w == 1 && p->oh == 1
        && p->ow == 1 && p->pt == 0 && p->pl == 0 && p->c > 0;
}

/* sum_j (x[j] - zx) w[j] over n bytes, x of type TX, w of TW, in int32
 * over chunks of 32768 bytes (|(x - zx) w| <= 65025: no chunk overflows),
 * the chunks' sums wrapping as the reference's int32 does. With vectors zx
 * is 0 here (the caller takes zx times the weights' sum off): then the loop
 * is a dot-product idiom the compiler vectorises (vpdpbusd for u8 x i8). */
#define MLVM_QGEMV_DOT(NAME, TX, TW)                                                     \
    static uint32_t NAME(const void *xv, const void *wv, mlvm_index_t n, int32_t zx)     \
    {                                                                                    \
        const TX *x = (const TX *)xv;                                                    \
        const TW *w = (const TW *)wv;                                                    \
        uint32_t dot = 0;                                                                \
        mlvm_index_t j0, j;                                                              \
        for (j0 = 0; j0 < n; j0 += 32768) {                                              \
            const mlvm_index_t j1 = n - j0 < 32768 ? n : j0 + 32768;                     \
            int32_t part = 0;                                                            \
            for (j = j0; j < j1; ++j)                                                    \
                part += (MLVM_QGEMV_X((int32_t)x[j], zx)) * (int32_t)w[j];               \
            dot += (uint32_t)part;                                                       \
        }                                                                                \
        return dot;                                                                      \
    }
#if defined(MLVM_SCALAR_CORE)
#define MLVM_QGEMV_X(x, zx) ((x) - (zx))
#else
#define MLVM_QGEMV_X(x, zx) ((void)(zx), (x))
#endif
#if !defined(MLVM_SCALAR_CORE) && !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX2__)                \
    && !defined(__AVX512VNNI__)
#include <immintrin.h>
/* AVX2 without VNNI: gcc's loop multiplied in 16 bits, widened each product
 * and added it to one sum (a chain of adds, about 9 products per ns on a
 * Zen 3 core); here 32 bytes a step widened to 16 bits, two exact vpmaddwd
 * into two sums. The sums wrap modulo 2^32 in any order, as the chunks'
 * do. */
#define MLVM_QGEMV_DOT_AVX2(NAME, TX, TW, WX, WW)                                                \
    static uint32_t NAME(const void *xv, const void *wv, mlvm_index_t n, int32_t zx)             \
    {                                                                                            \
        const TX *x = (const TX *)xv;                                                            \
        const TW *w = (const TW *)wv;                                                            \
        __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();                        \
        __m128i h;                                                                               \
        uint32_t dot;                                                                            \
        mlvm_index_t j = 0;                                                                      \
        (void)zx;                                                                                \
        for (; j + 32 <= n; j += 32) {                                                           \
            const __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(x + j));         \
            const __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(x + j + 16));    \
            const __m128i w0 = _mm_loadu_si128((const __m128i *)(const void *)(w + j));         \
            const __m128i w1 = _mm_loadu_si128((const __m128i *)(const void *)(w + j + 16));    \
            s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(WX(x0), WW(w0)));                        \
            s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(WX(x1), WW(w1)));                        \
        }                                                                                        \
        s0 = _mm256_add_epi32(s0, s1);                                                           \
        h = _mm_add_epi32(_mm256_castsi256_si128(s0), _mm256_extracti128_si256(s0, 1));          \
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));                                        \
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));                                        \
        dot = (uint32_t)_mm_cvtsi128_si32(h);                                                    \
        for (; j < n; ++j)                                                                       \
            dot += (uint32_t)((int32_t)x[j] * (int32_t)w[j]);                                    \
        return dot;                                                                              \
    }
MLVM_QGEMV_DOT_AVX2(qgemv_dot_us, uint8_t, int8_t, _mm256_cvtepu8_epi16, _mm256_cvtepi8_epi16)
MLVM_QGEMV_DOT_AVX2(qgemv_dot_ss, int8_t, int8_t, _mm256_cvtepi8_epi16, _mm256_cvtepi8_epi16)
MLVM_QGEMV_DOT_AVX2(qgemv_dot_uu, uint8_t, uint8_t, _mm256_cvtepu8_epi16, _mm256_cvtepu8_epi16)
MLVM_QGEMV_DOT_AVX2(qgemv_dot_su, int8_t, uint8_t, _mm256_cvtepi8_epi16, _mm256_cvtepu8_epi16)
#undef MLVM_QGEMV_DOT_AVX2
#else
MLVM_QGEMV_DOT(qgemv_dot_us, uint8_t, int8_t)
MLVM_QGEMV_DOT(qgemv_dot_ss, int8_t, int8_t)
MLVM_QGEMV_DOT(qgemv_dot_uu, uint8_t, uint8_t)
MLVM_QGEMV_DOT(qgemv_dot_su, int8_t, uint8_t)
#endif
#undef MLVM_QGEMV_X
#undef MLVM_QGEMV_DOT

static int32_t qgemv_at(const void *p, mlvm_index_t i, int32_t is_signed)
{
    return is_signed ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

/* sum_j (x[j] - zx) w[j] over a row of c bytes: with vectors, the dot of
 * the bytes less zx times the weights' sum (the compiler's, or summed
 * here); on scalar cores the centered products (no weight sums). */
static uint32_t qgemv_row(const mlvm_qconv2d_t *p, const uint8_t *x, const uint8_t *row,
                          mlvm_index_t oc, uint32_t zxv)
{
    uint32_t (*const dot)(const void *, const void *, mlvm_index_t, int32_t) =
        p->x_signed ? (p->w_signed ? qgemv_dot_ss : qgemv_dot_su)
                    : (p->w_signed ? qgemv_dot_us : qgemv_dot_uu);
#if !defined(MLVM_SCALAR_CORE)
    uint32_t wsum = 0;
    mlvm_index_t j;
    if (p->w_signed && p->w_sums != NULL) /* u8 weights' sums are less 128 */
        wsum = (uint32_t)p->w_sums[oc];
    else
        for (j = 0; j < p->c; ++j)
            wsum += (uint32_t)qgemv_at(row, j, p->w_signed);
    return dot(x, row, p->c, 0) - zxv * wsum;
#else
    (void)oc;
    return dot(x, row, p->c, (int32_t)zxv);
#endif
}

/* One image: x its c bytes, out its o results (bytes, or int32 sums when
 * rq is NULL). */
static void qgemv_image(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const uint8_t *x,
                        const uint8_t *w, mlvm_index_t ld, uint32_t zxv, const void *zw,
                        const int32_t *bias, const float *mult, const void *zy, void *out)
{
    const int32_t zyv = rq != NULL ? qgemv_at(zy, 0, rq->y_signed) : 0;
    uint32_t xcsum = 0; /* sum (x - zx) */
    mlvm_index_t j, oc;
    for (j = 0; j < p->c; ++j)
        xcsum += (uint32_t)qgemv_at(x, j, p->x_signed) - zxv;
    for (oc = 0; oc < p->o; ++oc) {
        const uint32_t zwv = (uint32_t)qgemv_at(zw, p->zw_per_o ? oc : 0, p->w_signed);
        uint32_t acc = qgemv_row(p, x, w + oc * ld, oc, zxv) - zwv * xcsum;
        float f;
        if (rq == NULL) {
            ((int32_t *)out)[oc] = (int32_t)acc;
            continue;
        }
        if (bias != NULL)
            acc += (uint32_t)bias[oc];
        f = (float)(int32_t)acc * mult[rq->mult_per_o ? oc : 0];
        if (rq->y_signed) {
            int8_t y = mlvm_quantize_i8(f, (int8_t)zyv);
            ((uint8_t *)out)[oc] = (uint8_t)(rq->relu && y < zyv ? (int8_t)zyv : y);
        } else {
            uint8_t y = mlvm_quantize_ui8(f, (uint8_t)zyv);
            ((uint8_t *)out)[oc] = rq->relu && y < zyv ? (uint8_t)zyv : y;
        }
    }
}

void mlvm_qgemv_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x, const void *w,
                  const void *zx, const void *zw, const int32_t *bias, const float *mult,
                  const void *zy, void *out)
{
    /* a row in lanes is padded to whole lanes of four (zero weights) */
    const mlvm_index_t ld = p->w_lanes ? 4 * ((p->c + 3) / 4) : p->c;
    const uint32_t zxv = (uint32_t)qgemv_at(zx, 0, p->x_signed);
    mlvm_index_t n;
    for (n = 0; n < p->n; ++n)
        qgemv_image(p, rq, (const uint8_t *)x + n * p->c, (const uint8_t *)w, ld, zxv, zw, bias,
                    mult, zy,
                    rq != NULL ? (void *)((uint8_t *)out + n * p->o) : (void *)((int32_t *)out + n * p->o));
}
