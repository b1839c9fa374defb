/* mlvm.qadd: the sum of two 8-bit quantized tensors, requantized (ONNX
 * DequantizeLinear, Add, QuantizeLinear; onnxruntime's QLinearAdd), with
 * every step the f32 operation the float form does, so that the integers
 * are the same: (float)(a - za) * sa and (float)(b - zb) * sb, their sum,
 * divided by sy, rounded half to even, plus zy, saturated, NaN -> zy.
 *
 * Vectors take 16 (AVX-512) or 8 (AVX2) elements a step: the bytes made
 * unsigned (i8 ^ 0x80, the zero point likewise) and widened, so that the
 * signedness costs no branch in the loop; the division is the IEEE one.
 * The elements past the last whole vector, and builds without vectors, go
 * through scalar.h's quantize; Cortex-M4F and up round by VCVTR instead
 * (requant.h's mlvm_vcvtr_add). */
#include "mlvm/kernels.h"
#include "mlvm/scalar.h"
#include "requant.h"

typedef struct qadd_consts {
    float sa, sb, sy;
    int32_t za, zb; /* the zero points of the unsigned bytes */
    uint8_t fa, fb; /* 0x80 for i8 */
} qadd_consts_t;

static int32_t at8(const void *p, size_t i, int is_signed)
{
    return is_signed ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

/* Elements [i, n) one by one, y of type T: the bytes made unsigned as in
 * the vector loops (no test of the types per element), the constants in
 * locals (a byte store could alias k's fields: gcc would reload them). */
#define MLVM_QADD_TAIL(T, Q)                                                                \
    do {                                                                                    \
        const T z = *(const T *)zy;                                                         \
        for (; i < n; ++i) {                                                                \
            const float da = (float)((int32_t)(uint8_t)(pa[i] ^ fa) - za) * sa;             \
            const float db = (float)((int32_t)(uint8_t)(pb[i] ^ fb) - zb) * sb;             \
            const float s = da + db;                                                        \
            ((T *)y)[i] = Q(s / sy, z);                                                     \
        }                                                                                   \
    } while (0)

static void qadd_tail(const mlvm_qadd_t *p, const qadd_consts_t *k, size_t i, size_t n,
                      const void *a, const void *b, const void *zy, void *y)
{
    const uint8_t *pa = (const uint8_t *)a, *pb = (const uint8_t *)b;
    const uint8_t fa = k->fa, fb = k->fb;
    const int32_t za = k->za, zb = k->zb;
    const float sa = k->sa, sb = k->sb, sy = k->sy;
    if (p->y_signed)
        MLVM_QADD_TAIL(int8_t, mlvm_quantize_i8);
    else
        MLVM_QADD_TAIL(uint8_t, mlvm_quantize_ui8);
}
#undef MLVM_QADD_TAIL

void mlvm_qadd_8(const mlvm_qadd_t *p, size_t n, const void *a, const float *sa, const void *za,
                 const void *b, const float *sb, const void *zb, const float *sy, const void *zy,
                 void *y)
{
    qadd_consts_t k;
    size_t i = 0;
    k.sa = *sa, k.sb = *sb, k.sy = *sy;
    k.fa = p->a_signed ? 0x80 : 0, k.fb = p->b_signed ? 0x80 : 0;
    k.za = at8(za, 0, p->a_signed) + k.fa, k.zb = at8(zb, 0, p->b_signed) + k.fb;
#if defined(__AVX512F__) && defined(__AVX512BW__) && !defined(MLVM_PORTABLE_KERNELS)
    {
        const mlvm_qrequant_t rq = {p->y_signed, 0, 0};
        const mlvm_requant_bounds_t bo = mlvm_requant_bounds(&rq, zy);
        const __m128i fa = _mm_set1_epi8((char)k.fa), fb = _mm_set1_epi8((char)k.fb);
        const __m512i za4 = _mm512_set1_epi32(k.za), zb4 = _mm512_set1_epi32(k.zb);
        const __m512 sa4 = _mm512_set1_ps(k.sa), sb4 = _mm512_set1_ps(k.sb), sy4 = _mm512_set1_ps(k.sy);
        const __m512 zy4 = _mm512_set1_ps(bo.zy), lo = _mm512_set1_ps(bo.lo), hi = _mm512_set1_ps(bo.hi);
        for (; i + 16 <= n; i += 16) {
            const __m512i xa = _mm512_cvtepu8_epi32(
                _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)((const uint8_t *)a + i)), fa));
            const __m512i xb = _mm512_cvtepu8_epi32(
                _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)((const uint8_t *)b + i)), fb));
            const __m512 da = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(xa, za4)), sa4);
            const __m512 db = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(xb, zb4)), sb4);
            const __m512i q = mlvm_quantize512(_mm512_div_ps(_mm512_add_ps(da, db), sy4), zy4, lo, hi);
            _mm_storeu_si128((__m128i *)(void *)((uint8_t *)y + i), _mm512_cvtepi32_epi8(q));
        }
    }
#elif defined(__AVX2__) && !defined(MLVM_PORTABLE_KERNELS)
    {
        const mlvm_qrequant_t rq = {p->y_signed, 0, 0};
        const mlvm_requant_bounds_t bo = mlvm_requant_bounds(&rq, zy);
        const __m128i fa = _mm_set1_epi8((char)k.fa), fb = _mm_set1_epi8((char)k.fb);
        const __m256i za4 = _mm256_set1_epi32(k.za), zb4 = _mm256_set1_epi32(k.zb);
        const __m256 sa4 = _mm256_set1_ps(k.sa), sb4 = _mm256_set1_ps(k.sb), sy4 = _mm256_set1_ps(k.sy);
        const __m256 zy4 = _mm256_set1_ps(bo.zy), lo = _mm256_set1_ps(bo.lo), hi = _mm256_set1_ps(bo.hi);
        for (; i + 8 <= n; i += 8) {
            const __m256i xa = _mm256_cvtepu8_epi32(
                _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)((const uint8_t *)a + i)), fa));
            const __m256i xb = _mm256_cvtepu8_epi32(
                _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)((const uint8_t *)b + i)), fb));
            const __m256 da = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(xa, za4)), sa4);
            const __m256 db = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(xb, zb4)), sb4);
            const __m256i q = mlvm_quantize256(_mm256_div_ps(_mm256_add_ps(da, db), sy4), zy4, lo, hi);
            _mm_storel_epi64((__m128i *)(void *)((uint8_t *)y + i), mlvm_low_bytes256(q));
        }
    }
#elif defined(MLVM_REQUANT_VCVTR)
    { /* Cortex-M4F and up: the float steps, then VCVTR and a saturation */
        const uint8_t *pa = (const uint8_t *)a, *pb = (const uint8_t *)b;
        uint8_t *py = (uint8_t *)y;
        const uint8_t fa = k.fa, fb = k.fb;
        const int32_t za = k.za, zb = k.zb;
        const float sa = k.sa, sb = k.sb, sy = k.sy;
        const int32_t z = p->y_signed ? *(const int8_t *)zy : *(const uint8_t *)zy;
#define MLVM_QADD_VCVTR(SAT)                                                                \
    for (; i < n; ++i) {                                                                    \
        const float da = (float)((int32_t)(uint8_t)(pa[i] ^ fa) - za) * sa;                 \
        const float db = (float)((int32_t)(uint8_t)(pb[i] ^ fb) - zb) * sb;                 \
        py[i] = (uint8_t)SAT(mlvm_vcvtr_add((da + db) / sy, z), 8);                         \
    }
        if (p->y_signed)
            MLVM_QADD_VCVTR(__ssat)
        else
            MLVM_QADD_VCVTR(__usat)
#undef MLVM_QADD_VCVTR
    }
#endif
    qadd_tail(p, &k, i, n, a, b, zy, y);
}
