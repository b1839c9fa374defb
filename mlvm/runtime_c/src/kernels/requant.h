/* Internal: the requantization of int32 sums, for qconv_ws.c and the
 * depthwise kernels, clamp(nearbyint((float)v * mult) + zy, lo, hi), NaN
 * -> zy, as scalar.h's mlvm_quantize_* (rounded half to even), and the
 * quantization of floats it ends with (qadd.c). Its
 * bounds; on vectors, the results as int32 lanes, and those lanes' low
 * bytes (AVX2 has no vpmovdb). */
#ifndef MLVM_KERNELS_REQUANT_H_
#define MLVM_KERNELS_REQUANT_H_

#include "mlvm/kernels.h"

/* The output zero point and the range rq's results are clamped to (from
 * the zero point with a fused ReLU), as floats. */
typedef struct mlvm_requant_bounds {
    float zy, lo, hi;
} mlvm_requant_bounds_t;

static inline mlvm_requant_bounds_t mlvm_requant_bounds(const mlvm_qrequant_t *rq, const void *zy)
{
    mlvm_requant_bounds_t b;
    const int32_t z = rq->y_signed ? *(const int8_t *)zy : *(const uint8_t *)zy;
    b.zy = (float)z;
    b.lo = rq->relu ? (float)z : rq->y_signed ? -128.0f : 0.0f;
    b.hi = rq->y_signed ? 127.0f : 255.0f;
    return b;
}

/* The multipliers mlvm_requant512_bytes takes: |mult| <= 0.5, so that
 * |v mult| < 2^31 for every int32 v and the conversion never overflows. */
#define MLVM_REQUANT_PACKS_MAX 0.5f

#if defined(__AVX2__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>

#if defined(__AVX512F__)
/* clamp(nearbyint(f) + zy, lo, hi), NaN -> zy, as int32 lanes (scalar.h's
 * mlvm_quantize_* of f). */
static inline __attribute__((always_inline)) __m512i mlvm_quantize512(__m512 f, __m512 zy,
                                                                      __m512 lo, __m512 hi)
{
    f = _mm512_add_ps(_mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zy);
    f = _mm512_mask_mov_ps(f, _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q), zy);
    f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
    return _mm512_cvtps_epi32(f);
}

static inline __attribute__((always_inline)) __m512i mlvm_requant512(__m512i v, __m512 mult,
                                                                     __m512 zy, __m512 lo,
                                                                     __m512 hi)
{
    return mlvm_quantize512(_mm512_mul_ps(_mm512_cvtepi32_ps(v), mult), zy, lo, hi);
}

/* The same for a finite multiplier, with which no NaN arises: the product
 * clamped to [lo - zy, hi - zy] (integers, so clamping first and rounding
 * after give the same integer), rounded half to even by the conversion
 * itself (embedded rounding, whatever MXCSR says), then zy added in
 * integers. Three instructions fewer. */
static inline __attribute__((always_inline)) __m512i
mlvm_requant512_finite(__m512i v, __m512 mult, __m512i zy, __m512 lo_zy, __m512 hi_zy)
{
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), mult);
    f = _mm512_min_ps(_mm512_max_ps(f, lo_zy), hi_zy);
    return _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                            zy);
}

#if defined(__AVX512BW__)

/* The bytes of four vectors' mlvm_requant512_finite (v0's 16, then v1's,
 * v2's, v3's; multipliers m0..m3 within MLVM_REQUANT_PACKS_MAX), the clamp
 * done in integers: each product rounded half to even, the four packed to
 * 16 bits with saturation, zy (16-bit lanes) added with saturation, packed
 * to bytes with saturation (u8, or s8 where y_signed), then clamped to
 * [lo, hi] (bytes). Saturation is monotonic and never crosses a bound in
 * [-128, 255], so the bytes are clamp(round(v m) + zy, lo, hi) as there;
 * three instructions fewer a vector, and one store for 64 outputs (4.8 ->
 * 3.2 cycles a vector on Zen 4). */
static inline __attribute__((always_inline)) __m512i
mlvm_requant512_bytes(__m512i v0, __m512i v1, __m512i v2, __m512i v3, __m512 m0, __m512 m1, __m512 m2,
                      __m512 m3, __m512i zy16, __m512i lo8, __m512i hi8, int y_signed)
{
#define MLVM_RQ_ROUND(v, m)                                                                       \
    _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(v), m), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
    const __m512i a = _mm512_adds_epi16(_mm512_packs_epi32(MLVM_RQ_ROUND(v0, m0), MLVM_RQ_ROUND(v1, m1)), zy16);
    const __m512i b = _mm512_adds_epi16(_mm512_packs_epi32(MLVM_RQ_ROUND(v2, m2), MLVM_RQ_ROUND(v3, m3)), zy16);
#undef MLVM_RQ_ROUND
    /* 128-bit lane l holds dwords 4l .. 4l + 3 of v0, v1, v2, v3 in turn */
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    if (y_signed)
        return _mm512_min_epi8(_mm512_max_epi8(_mm512_permutexvar_epi32(order, _mm512_packs_epi16(a, b)), lo8),
                               hi8);
    return _mm512_min_epu8(_mm512_max_epu8(_mm512_permutexvar_epi32(order, _mm512_packus_epi16(a, b)), lo8), hi8);
}
#endif
#endif

static inline __attribute__((always_inline)) __m256i mlvm_quantize256(__m256 f, __m256 zy,
                                                                      __m256 lo, __m256 hi)
{
    f = _mm256_add_ps(_mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zy);
    f = _mm256_blendv_ps(f, zy, _mm256_cmp_ps(f, f, _CMP_UNORD_Q));
    f = _mm256_min_ps(_mm256_max_ps(f, lo), hi);
    return _mm256_cvtps_epi32(f);
}

static inline __attribute__((always_inline)) __m256i mlvm_requant256(__m256i v, __m256 mult,
                                                                     __m256 zy, __m256 lo,
                                                                     __m256 hi)
{
    return mlvm_quantize256(_mm256_mul_ps(_mm256_cvtepi32_ps(v), mult), zy, lo, hi);
}

/* mlvm_requant512_finite's steps on eight lanes: with no embedded
 * rounding in AVX2, the clamped product is rounded half to even
 * explicitly (MXCSR is not assumed); two instructions fewer than
 * mlvm_requant256. */
static inline __attribute__((always_inline)) __m256i
mlvm_requant256_finite(__m256i v, __m256 mult, __m256i zy, __m256 lo_zy, __m256 hi_zy)
{
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(v), mult);
    f = _mm256_min_ps(_mm256_max_ps(f, lo_zy), hi_zy);
    return _mm256_add_epi32(
        _mm256_cvtps_epi32(_mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)), zy);
}

/* The low byte of each of eight integers in [-128, 255], in the low 8
 * bytes. */
static inline __attribute__((always_inline)) __m128i mlvm_low_bytes256(__m256i v)
{
    const __m128i b16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return _mm_shuffle_epi8(b16, _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1,
                                               -1, -1));
}
/* The same of sixteen, a's eight then b's (one store of a row's 16
 * results where two took a shuffle and an extract each). */
static inline __attribute__((always_inline)) __m128i mlvm_low_bytes256x2(__m256i a, __m256i b)
{
    /* [a0-3 b0-3 | a4-7 b4-7] as int16, their low bytes at each lane's
     * first two words, then the words a0-3 a4-7 b0-3 b4-7 */
    const __m256i b16 = _mm256_packs_epi32(a, b);
    const __m256i lo = _mm256_shuffle_epi8(
        b16, _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1, 0, 2, 4, 6, 8,
                              10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1));
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(lo, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0)));
}
#endif

#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && defined(__ARM_FP) && (__ARM_FP & 4)         \
    && !defined(MLVM_PORTABLE_KERNELS)
#include <arm_acle.h>
#include <string.h>
#define MLVM_REQUANT_VCVTR 1
/* nearbyint(f) + zy, saturated to int32: VCVTR rounds half to even (the
 * FPSCR's default mode), saturates, and gives 0 for NaN, so that a clamp
 * of the result to the bytes' range (USAT, SSAT, or lo / hi) is scalar.h's
 * mlvm_quantize_* of f (Cortex-M4F and up). */
static inline __attribute__((always_inline)) int32_t mlvm_vcvtr_add(float f, int32_t zy)
{
    int32_t y;
    __asm__("vcvtr.s32.f32 %0, %0" : "+t"(f));
    memcpy(&y, &f, 4);
    return __qadd(y, zy);
}
#endif

#endif /* MLVM_KERNELS_REQUANT_H_ */
