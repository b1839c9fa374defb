/* mlvm.qadd: the sum of two 8-bit quantized tensors, requantized (ONNX
 * DequantizeLinear, Add, QuantizeLinear), as onnxruntime's QLinearAdd
 * computes it on x86-64 (its AVX2 kernel, fused multiply-adds), so that
 * the integers are the same: with rx = sx / sy and rw = sw / sy in f32,
 *   y = saturate(nearbyint(fma(x, rx, fma(w, rw, zy - fma(rx, zx, rw zw)))))
 * (x, w) being (a, b), or (b, a) where a is constant along the run
 * (`swap`, decided by the lowering). Every fma is rounded once on every
 * target (vmath.h's mlvm_fma_exact where there is no instruction). NaN,
 * and values past int32, give the type's minimum (its conversion's
 * INT_MIN, saturated): only degenerate scales make them, which take
 * qadd_tail for every element.
 *
 * Vectors take 16 (AVX-512) or 8 (AVX2 with FMA) elements a step: the
 * bytes made unsigned (i8 ^ 0x80, the 128 taken away after widening) so
 * that the signedness costs no branch in the loop. The elements past the
 * last whole vector, and builds without vectors, go through scalar.h's
 * quantize; Cortex-M4F and up round by VCVTR instead (requant.h's
 * mlvm_vcvtr_add). */
#include "mlvm/kernels.h"
#include "mlvm/scalar.h"
#include "mlvm/vmath.h"
#include "requant.h"

/* One call's constants, in the roles x and w. */
typedef struct qadd_consts {
    float rx, rw, fixed;
    int32_t ox, ow; /* 128 for i8: its bytes ^ 0x80, less 128, are its values */
    uint8_t fx, fw; /* 0x80 for i8 */
    int32_t y_signed;
    int32_t bounded; /* |v| < 2^30 for every input: no NaN, nothing past int32 */
} qadd_consts_t;

static int32_t at8(const void *p, size_t i, int is_signed)
{
    return is_signed ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static float value8(const uint8_t *p, uint8_t f, int32_t o)
{
    return (float)((int32_t)(uint8_t)(*p ^ f) - o);
}

/* The elements [i, n) one by one; w is read at each or, w_each 0, once.
 * Also every element where the scales are degenerate (zero, infinite, NaN,
 * ratios past 2^22): onnxruntime's conversion gives INT_MIN for NaN and
 * for anything past int32, which its saturating packs make the type's
 * minimum; the rest rounded and saturated. */
static void qadd_tail(const qadd_consts_t *k, size_t i, size_t n, const uint8_t *x,
                      const uint8_t *w, int w_each, uint8_t *y)
{
    const float rx = k->rx, rw = k->rw, fixed = k->fixed;
    const uint8_t fx = k->fx, fw = k->fw;
    const int32_t ox = k->ox, ow = k->ow;
    const float t0 = mlvm_fma_exact(value8(w, fw, ow), rw, fixed);
    for (; i < n; ++i) {
        const float t = w_each ? mlvm_fma_exact(value8(w + i, fw, ow), rw, fixed) : t0;
        const float v = mlvm_fma_exact(value8(x + i, fx, ox), rx, t);
        const int in_range = fabsf(v) < 0x1p31f; /* (false for NaN) */
        y[i] = k->y_signed ? (uint8_t)(in_range ? mlvm_quantize_i8(v, 0) : INT8_MIN)
                           : (in_range ? mlvm_quantize_ui8(v, 0) : 0);
    }
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && !defined(MLVM_PORTABLE_KERNELS)
static __m512 qadd_f16(const uint8_t *p, __m128i f, __m512i o)
{
    const __m128i bytes = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)p), f);
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(bytes), o));
}

static size_t qadd_vectors(const qadd_consts_t *k, size_t n, const uint8_t *x, const uint8_t *w,
                           int w_each, uint8_t *y)
{
    const __m128i fx = _mm_set1_epi8((char)k->fx), fw = _mm_set1_epi8((char)k->fw);
    const __m512i ox = _mm512_set1_epi32(k->ox), ow = _mm512_set1_epi32(k->ow);
    const __m512 rx = _mm512_set1_ps(k->rx), rw = _mm512_set1_ps(k->rw), fixed = _mm512_set1_ps(k->fixed);
    const __m512 zero = _mm512_setzero_ps(), lo = _mm512_set1_ps(k->y_signed ? -128.0f : 0.0f),
                 hi = _mm512_set1_ps(k->y_signed ? 127.0f : 255.0f);
    const __m512 t0 = _mm512_set1_ps(mlvm_fma_exact(value8(w, k->fw, k->ow), k->rw, k->fixed));
    size_t i = 0;
#define MLVM_QADD_LOOP(T)                                                                          \
    for (; i + 16 <= n; i += 16) {                                                                 \
        const __m512 v = _mm512_fmadd_ps(qadd_f16(x + i, fx, ox), rx, (T));                       \
        _mm_storeu_si128((__m128i *)(void *)(y + i),                                               \
                         _mm512_cvtepi32_epi8(mlvm_quantize512(v, zero, lo, hi)));                 \
    }
    if (w_each)
        MLVM_QADD_LOOP(_mm512_fmadd_ps(qadd_f16(w + i, fw, ow), rw, fixed))
    else
        MLVM_QADD_LOOP(t0)
#undef MLVM_QADD_LOOP
    return i;
}
#elif defined(__AVX2__) && defined(__FMA__) && !defined(MLVM_PORTABLE_KERNELS)
static __m256 qadd_f8(const uint8_t *p, __m128i f, __m256i o)
{
    const __m128i bytes = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)p), f);
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepu8_epi32(bytes), o));
}

static size_t qadd_vectors(const qadd_consts_t *k, size_t n, const uint8_t *x, const uint8_t *w,
                           int w_each, uint8_t *y)
{
    const __m128i fx = _mm_set1_epi8((char)k->fx), fw = _mm_set1_epi8((char)k->fw);
    const __m256i ox = _mm256_set1_epi32(k->ox), ow = _mm256_set1_epi32(k->ow);
    const __m256 rx = _mm256_set1_ps(k->rx), rw = _mm256_set1_ps(k->rw), fixed = _mm256_set1_ps(k->fixed);
    const __m256 zero = _mm256_setzero_ps(), lo = _mm256_set1_ps(k->y_signed ? -128.0f : 0.0f),
                 hi = _mm256_set1_ps(k->y_signed ? 127.0f : 255.0f);
    const __m256 t0 = _mm256_set1_ps(mlvm_fma_exact(value8(w, k->fw, k->ow), k->rw, k->fixed));
    size_t i = 0;
#define MLVM_QADD_LOOP(T)                                                                          \
    for (; i + 8 <= n; i += 8) {                                                                   \
        const __m256 v = _mm256_fmadd_ps(qadd_f8(x + i, fx, ox), rx, (T));                         \
        _mm_storel_epi64((__m128i *)(void *)(y + i), mlvm_low_bytes256(mlvm_quantize256(v, zero, lo, hi))); \
    }
    if (w_each)
        MLVM_QADD_LOOP(_mm256_fmadd_ps(qadd_f8(w + i, fw, ow), rw, fixed))
    else
        MLVM_QADD_LOOP(t0)
#undef MLVM_QADD_LOOP
    return i;
}
#elif defined(MLVM_REQUANT_VCVTR)
/* Cortex-M4F and up: VFMA twice, then VCVTR and a saturation. */
static size_t qadd_vectors(const qadd_consts_t *k, size_t n, const uint8_t *x, const uint8_t *w,
                           int w_each, uint8_t *y)
{
    const float rx = k->rx, rw = k->rw, fixed = k->fixed;
    const uint8_t fx = k->fx, fw = k->fw;
    const int32_t ox = k->ox, ow = k->ow;
    const float t0 = fmaf(value8(w, fw, ow), rw, fixed);
    size_t i;
/* one loop per case: -O2 does not unswitch */
#define MLVM_QADD_VCVTR(SAT, T)                                                                    \
    for (i = 0; i < n; ++i)                                                                        \
        y[i] = (uint8_t)SAT(mlvm_vcvtr_add(fmaf(value8(x + i, fx, ox), rx, (T)), 0), 8);
    if (w_each && k->y_signed)
        MLVM_QADD_VCVTR(__ssat, fmaf(value8(w + i, fw, ow), rw, fixed))
    else if (w_each)
        MLVM_QADD_VCVTR(__usat, fmaf(value8(w + i, fw, ow), rw, fixed))
    else if (k->y_signed)
        MLVM_QADD_VCVTR(__ssat, t0)
    else
        MLVM_QADD_VCVTR(__usat, t0)
#undef MLVM_QADD_VCVTR
    return n;
}
#else
static size_t qadd_vectors(const qadd_consts_t *k, size_t n, const uint8_t *x, const uint8_t *w,
                           int w_each, uint8_t *y)
{
    (void)k, (void)n, (void)x, (void)w, (void)w_each, (void)y;
    return 0;
}
#endif

static void qadd_run(const qadd_consts_t *k, size_t n, const uint8_t *x, const uint8_t *w,
                     int w_each, uint8_t *y)
{
    /* degenerate scales: every element one by one, off the hot loops */
    qadd_tail(k, k->bounded ? qadd_vectors(k, n, x, w, w_each, y) : 0, n, x, w, w_each, y);
}

void mlvm_qadd_8(const mlvm_qadd_t *p, size_t outer, size_t mid, size_t inner, const void *a,
                 const float *sa, const void *za, const void *b, const float *sb, const void *zb,
                 const float *sy, const void *zy, void *y)
{
    const int swap = p->swap != 0;
    const uint8_t *x = (const uint8_t *)(swap ? b : a), *w = (const uint8_t *)(swap ? a : b);
    const int x_signed = swap ? p->b_signed : p->a_signed, w_signed = swap ? p->a_signed : p->b_signed;
    const float rx = (swap ? *sb : *sa) / *sy, rw = (swap ? *sa : *sb) / *sy;
    const float zx = (float)at8(swap ? zb : za, 0, x_signed), zw = (float)at8(swap ? za : zb, 0, w_signed);
    const int x_small = p->small == (swap ? 2 : 1), w_small = p->small == (swap ? 1 : 2);
    uint8_t *py = (uint8_t *)y;
    qadd_consts_t k;
    size_t o, m;
    k.rx = rx, k.rw = rw, k.y_signed = p->y_signed;
    k.fixed = (float)at8(zy, 0, p->y_signed) - mlvm_fma_exact(rx, zx, rw * zw);
    k.fx = x_signed ? 0x80 : 0, k.fw = w_signed ? 0x80 : 0;
    k.ox = x_signed ? 128 : 0, k.ow = w_signed ? 128 : 0;
    k.bounded = 256.0f * (fabsf(rx) + fabsf(rw)) + fabsf(k.fixed) < 0x1p30f; /* false for NaN */
    if (p->small == 0) {
        qadd_run(&k, outer * mid * inner, x, w, 1, py);
    } else if (inner == 1) { /* runs of mid: the small operand read whole each time */
        for (o = 0; o < outer; ++o)
            qadd_run(&k, mid, x_small ? x : x + o * mid, w_small ? w : w + o * mid, 1, py + o * mid);
    } else { /* runs of inner: the small operand (w) one value per run */
        for (o = 0; o < outer; ++o)
            for (m = 0; m < mid; ++m) {
                const size_t at = (o * mid + m) * inner;
                qadd_run(&k, inner, x + at, w + m, 0, py + at);
            }
    }
}
