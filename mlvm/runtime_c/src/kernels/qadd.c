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
/* One width's operations for the loop below (16 lanes) */
#define MLVM_QADD_LANES 16
typedef __m512 qadd_vf;
typedef __m512i qadd_vi;
#define qadd_set1f _mm512_set1_ps
#define qadd_set1i _mm512_set1_epi32
#define qadd_fma _mm512_fmadd_ps
static qadd_vf qadd_load(const uint8_t *p, __m128i f, qadd_vi o)
{
    const __m128i bytes = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)p), f);
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(bytes), o));
}
static void qadd_store(uint8_t *y, qadd_vf v, qadd_vf zero, qadd_vf lo, qadd_vf hi)
{
    _mm_storeu_si128((__m128i *)(void *)y, _mm512_cvtepi32_epi8(mlvm_quantize512(v, zero, lo, hi)));
}
#elif defined(__AVX2__) && defined(__FMA__) && !defined(MLVM_PORTABLE_KERNELS)
/* (8 lanes) */
#define MLVM_QADD_LANES 8
typedef __m256 qadd_vf;
typedef __m256i qadd_vi;
#define qadd_set1f _mm256_set1_ps
#define qadd_set1i _mm256_set1_epi32
#define qadd_fma _mm256_fmadd_ps
static qadd_vf qadd_load(const uint8_t *p, __m128i f, qadd_vi o)
{
    const __m128i bytes = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)p), f);
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepu8_epi32(bytes), o));
}
static void qadd_store(uint8_t *y, qadd_vf v, qadd_vf zero, qadd_vf lo, qadd_vf hi)
{
    _mm_storel_epi64((__m128i *)(void *)y, mlvm_low_bytes256(mlvm_quantize256(v, zero, lo, hi)));
}
#endif

#ifdef MLVM_QADD_LANES
/* Whole vectors of elements from 0; returns where they stop. */
static size_t qadd_vectors(const qadd_consts_t *k, size_t n, const uint8_t *x, const uint8_t *w,
                           int w_each, uint8_t *y)
{
    const __m128i fx = _mm_set1_epi8((char)k->fx), fw = _mm_set1_epi8((char)k->fw);
    const qadd_vi ox = qadd_set1i(k->ox), ow = qadd_set1i(k->ow);
    const qadd_vf rx = qadd_set1f(k->rx), rw = qadd_set1f(k->rw), fixed = qadd_set1f(k->fixed);
    const qadd_vf zero = qadd_set1f(0.0f), lo = qadd_set1f(k->y_signed ? -128.0f : 0.0f),
                  hi = qadd_set1f(k->y_signed ? 127.0f : 255.0f);
    const qadd_vf t0 = qadd_set1f(mlvm_fma_exact(value8(w, k->fw, k->ow), k->rw, k->fixed));
    size_t i = 0;
/* one loop per case: -O2 does not unswitch */
#define MLVM_QADD_LOOP(T)                                                                          \
    for (; i + MLVM_QADD_LANES <= n; i += MLVM_QADD_LANES)                                         \
        qadd_store(y + i, qadd_fma(qadd_load(x + i, fx, ox), rx, (T)), zero, lo, hi);
    if (w_each)
        MLVM_QADD_LOOP(qadd_fma(qadd_load(w + i, fw, ow), rw, fixed))
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
/* one loop per case: -O2 does not unswitch; u8 operands (no flip, no
 * offset: 18 -> 14 instructions an element) and an u8 result, as a
 * quantizer's ReLU residual adds have them, in a loop of their own */
#define MLVM_QADD_VCVTR(SAT, T)                                                                    \
    for (i = 0; i < n; ++i)                                                                        \
        y[i] = (uint8_t)SAT(mlvm_vcvtr_add(fmaf(value8(x + i, fx, ox), rx, (T)), 0), 8);
    if (w_each && !k->y_signed && fx == 0 && fw == 0 && ox == 0 && ow == 0)
        for (i = 0; i < n; ++i)
            y[i] = (uint8_t)__usat(mlvm_vcvtr_add(fmaf((float)x[i], rx,
                                                       fmaf((float)w[i], rw, fixed)), 0), 8);
    else if (w_each && k->y_signed)
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
