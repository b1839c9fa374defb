/* mlvm.qsoftmax: a quantized softmax as onnxruntime's QLinearSoftmax
 * computes it, so that the bytes are its own: per row, the table (the
 * compiler's exponentials of each byte value's distance from 255, by the
 * byte's bits) read from where the row's largest value meets its largest
 * entry, the row's entries summed in order in f32, each output
 * nearbyint((t / sum) * floor(1 / ys)) + zy, saturated (a NaN or huge
 * quotient, which the table's margin below FLT_MAX rules out for finite
 * scales, gives the largest value). */
#include <math.h>

#if defined(__AVX2__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_QS_AVX2 1
#endif

#include "mlvm/kernels.h"
#include "mlvm/kernels_nn.h"

/* The row's value v as the table's index (the row's largest at 255, or
 * at 127 for i8, whose table is by two's-complement bits). */
static unsigned qs_index(const uint8_t *x, size_t j, int32_t is_signed, int32_t top)
{
    return is_signed ? (unsigned)(uint8_t)(127 - top + (int8_t)x[j]) : (unsigned)(255 - top + x[j]);
}

/* Outputs j0 .. n of a row from its table entries, their sum and the
 * output's constants: nearbyint(t / sum * inv) + z, saturated. */
static void qs_outputs_scalar(const uint8_t *xr, size_t j0, size_t n, int32_t is_signed, int32_t top,
                                const float *table, float sum, float inv, int32_t z, int32_t lo,
                                int32_t hi, uint8_t *yr)
{
    size_t j;
    for (j = j0; j < n; ++j) {
        const float q = nearbyintf(table[qs_index(xr, j, is_signed, top)] / sum * inv);
        int32_t k = q >= 0.0f && q <= 0x1p30f ? (int32_t)q + z : hi;
        k = k < lo ? lo : k > hi ? hi : k;
        yr[j] = (uint8_t)k; /* i8: its two's-complement byte */
    }
}

#ifdef MLVM_QS_AVX2
/* The same eight at a time: the entries by one gather, the division,
 * product and rounding in lanes (each exact as the scalar one: IEEE
 * operations round per lane, and vroundps to nearest is nearbyintf in the
 * default mode), NaN or out-of-range quotients to hi by one blend. The
 * per-element division had left the loop scalar: a statically quantized
 * transformer's attention softmax, 10 % of its time. */
static size_t qs_outputs_avx2(const uint8_t *xr, size_t n, int32_t is_signed, int32_t top,
                              const float *table, float sum, float inv, int32_t z, int32_t lo,
                              int32_t hi, uint8_t *yr)
{
    const __m256i base = _mm256_set1_epi32(is_signed ? 127 - top : 255 - top);
    const __m256i byte = _mm256_set1_epi32(0xFF), zv = _mm256_set1_epi32(z);
    const __m256i lov = _mm256_set1_epi32(lo), hiv = _mm256_set1_epi32(hi);
    const __m256 sv = _mm256_set1_ps(sum), iv = _mm256_set1_ps(inv);
    const __m256 zero = _mm256_setzero_ps(), top30 = _mm256_set1_ps(0x1p30f);
    size_t j;
    for (j = 0; j + 8 <= n; j += 8) {
        const __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(xr + j));
        const __m256i v = is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
        const __m256i idx = _mm256_and_si256(_mm256_add_epi32(base, v), byte);
        const __m256 t = _mm256_i32gather_ps(table, idx, 4);
        const __m256 q = _mm256_round_ps(_mm256_mul_ps(_mm256_div_ps(t, sv), iv),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256 ok = _mm256_and_ps(_mm256_cmp_ps(q, zero, _CMP_GE_OQ), _mm256_cmp_ps(q, top30, _CMP_LE_OQ));
        __m256i k = _mm256_add_epi32(_mm256_cvttps_epi32(q), zv);
        __m128i p;
        k = _mm256_blendv_epi8(hiv, k, _mm256_castps_si256(ok));
        k = _mm256_min_epi32(_mm256_max_epi32(k, lov), hiv);
        p = _mm_packs_epi32(_mm256_castsi256_si128(k), _mm256_extracti128_si256(k, 1));
        p = is_signed ? _mm_packs_epi16(p, p) : _mm_packus_epi16(p, p);
        _mm_storel_epi64((__m128i *)(void *)(yr + j), p);
    }
    return j;
}
#endif

void mlvm_qsoftmax_8(size_t rows, size_t n, int32_t is_signed, const void *x, const float *table,
                     const float *ys, const void *zy, void *y)
{
    const float inv = floorf(1.0f / *ys);
    const int32_t z = is_signed ? *(const int8_t *)zy : *(const uint8_t *)zy;
    const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
    size_t r, j;
    for (r = 0; r < rows; ++r) {
        const uint8_t *xr = (const uint8_t *)x + r * n;
        uint8_t *yr = (uint8_t *)y + r * n;
        int32_t top = is_signed ? (int8_t)xr[0] : xr[0];
        float sum = 0.0f;
        for (j = 1; j < n; ++j) {
            const int32_t v = is_signed ? (int8_t)xr[j] : xr[j];
            top = v > top ? v : top;
        }
        for (j = 0; j < n; ++j)
            sum += table[qs_index(xr, j, is_signed, top)];
#ifdef MLVM_QS_AVX2
        j = qs_outputs_avx2(xr, n, is_signed, top, table, sum, inv, z, lo, hi, yr);
#else
        j = 0;
#endif
        qs_outputs_scalar(xr, j, n, is_signed, top, table, sum, inv, z, lo, hi, yr);
    }
}
