/* Elementwise math without libm calls: exp, sigmoid, tanh and erf as
 * straight-line, branch-free f32 code, so that loops calling them (kernels,
 * fused loops, matmul epilogues) vectorise. Error against the exact value,
 * in ulps of the result, as tested on every kernel path over a sweep of f32
 * inputs (tests/runtime_c/kernels/vmath_ulp.c; docs/ops.md has the table):
 *   mlvm_expf      <= 1.1 ulp, subnormal results and overflow to +inf as expf
 *   mlvm_sigmoidf  <= 2.5 ulp
 *   mlvm_tanhf     <= 2.5 ulp
 *   mlvm_erff      <= 2.5 ulp
 * NaN in gives NaN out; +-inf and +-0 give what the C library gives. */
#ifndef MLVM_VMATH_H_
#define MLVM_VMATH_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

/* 1 where the array kernels of exp, sigmoid, tanh, erf and gelu run a
 * vector at a time (src/kernels/vexp.h: AVX-512, or AVX2 with FMA, unless
 * MLVM_PORTABLE_KERNELS), else 0. They are then faster than a fused loop's
 * vectorisation of the scalar functions below, and generated code whose
 * fused loop or epilogue ends in one of them runs it by its kernel after
 * the loop (mlvm.fused's kernel root); the same bits either way. */
#if (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))) \
    && !defined(MLVM_PORTABLE_KERNELS)
#define MLVM_VECTOR_MATH 1
#else
#define MLVM_VECTOR_MATH 0
#endif

/* a * b + c: one fused operation where the target has it in hardware (and
 * the compiler turns fmaf into an instruction), two roundings elsewhere. */
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(__FP_FAST_FMAF)
#define MLVM_FMA(a, b, c) fmaf((a), (b), (c))
#else
#define MLVM_FMA(a, b, c) ((a) * (b) + (c))
#endif

static inline float mlvm_bits_to_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* a * b + c rounded once, on every target (results defined by a fused
 * multiply-add, as mlvm.qadd's are): the instruction where there is one;
 * elsewhere in double, where the product of two floats is exact and the
 * sum, rounded to odd (an inexact sum that landed on an even double is
 * moved one ulp toward the exact value, which TwoSum's error gives), then
 * rounds to float as the exact value would (53 >= 2 * 24 + 2 bits). */
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(__FP_FAST_FMAF)
#define mlvm_fma_exact(a, b, c) fmaf((a), (b), (c))
#else
static inline float mlvm_fma_exact(float a, float b, float c)
{
    const double p = (double)a * (double)b, s = p + (double)c, bb = s - p;
    const double e = (p - (s - bb)) + ((double)c - bb);
    uint64_t bits;
    double r;
    memcpy(&bits, &s, sizeof bits);
    if ((e > 0.0 || e < 0.0) && (bits & 1u) == 0) /* (NaN for non-finite sums: left) */
        bits = ((e > 0.0) == (s > 0.0)) ? bits + 1u : bits - 1u;
    memcpy(&r, &bits, sizeof r);
    return (float)r;
}
#endif

static inline uint32_t mlvm_f32_to_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* a where cond holds, else b, chosen on the bits where cores have vectors:
 * loops over the functions below then vectorise with AVX2 too. A float ?:
 * lets gcc keep the arms apart (control flow, under -ftrapping-math), which
 * only masked vector operations (AVX-512) turn back into one straight line.
 * Cortex-M cores without vectors keep the ?: (a conditional move: fewer
 * instructions than a round trip through the integer registers). */
#if defined(__thumb__) && !defined(__ARM_FEATURE_MVE)
#define MLVM_SELECT_F32(cond, a, b) ((cond) ? (a) : (b))
#else
#define MLVM_SELECT_F32(cond, a, b) mlvm_select_bits_f32((cond), (a), (b))
static inline float mlvm_select_bits_f32(int cond, float a, float b)
{
    const uint32_t m = 0u - (uint32_t)(cond != 0);
    return mlvm_bits_to_f32((mlvm_f32_to_bits(a) & m) | (mlvm_f32_to_bits(b) & ~m));
}
#endif

/* exp(x): x = k ln2 + r with |r| <= ln2 / 2 (Cody-Waite, two-part ln2),
 * e^r by Cephes' degree-6 polynomial, then 2^k applied as two powers of two
 * (k = k1 + k2, k1 = floor(k / 2): the first exact (p 2^k1 stays normal),
 * the second a multiplication) so that subnormal results are rounded once,
 * as the exact value would be. x is clamped to [-104, 88.72284]: below, the
 * result rounds to 0; above, to +inf. The clamps keep NaN, which the
 * arithmetic then carries to the result (no select at the end: 25 % fewer
 * vector operations than a clamp on the bits and a final NaN select, the
 * same results). */
/* Its constants, named once: src/kernels/vexp.h's sixteen-lane form uses
 * the same ones. */
#define MLVM_EXP_LO (-104.0f)
#define MLVM_EXP_HI 0x1.62e430p+6f /* 88.72284 */
#define MLVM_EXP_LOG2E 0x1.715476p+0f
#define MLVM_EXP_ROUND 0x1.8p23f /* added and taken away: rounds to an integer */
#define MLVM_EXP_MLN2_HI (-0x1.62e400p-1f)
#define MLVM_EXP_MLN2_LO (-0x1.7f7d1cp-20f)
#define MLVM_EXP_P5 1.9875691500e-4f
#define MLVM_EXP_P4 1.3981999507e-3f
#define MLVM_EXP_P3 8.3334519073e-3f
#define MLVM_EXP_P2 4.1665795894e-2f
#define MLVM_EXP_P1 1.6666665459e-1f
#define MLVM_EXP_P0 5.0000001201e-1f

/* e^r - 1 for x = k ln2 + r (the reduction above and Cephes' polynomial
 * without its + 1), and k: mlvm_expf's steps, shared with mlvm_tanhf. k is
 * taken from the low mantissa bits of the rounded sum (in [2^23, 2^24)),
 * with no float-to-int conversion, which a NaN would make undefined (NaN:
 * any k). The polynomial is evaluated in pairs of terms (Estrin's scheme:
 * a chain of four dependent operations after r, r^2 then three fused
 * steps, where Horner's had seven), which shortens what a vector of them
 * waits on: AVX2's exp, sigmoid and tanh over [64, 1000] 0.91-0.93x the
 * time on a Zen 3, within the same ulp bounds. */
static inline float mlvm_expm1_reduced(float x, int32_t *k)
{
    const float kr = MLVM_FMA(x, MLVM_EXP_LOG2E, MLVM_EXP_ROUND); /* round to nearest integer ... */
    const float kf = kr - MLVM_EXP_ROUND;                         /* ... (C99 keeps the two steps) */
    float r, r2, p;
    r = MLVM_FMA(kf, MLVM_EXP_MLN2_HI, x);
    r = MLVM_FMA(kf, MLVM_EXP_MLN2_LO, r);
    r2 = r * r;
    p = MLVM_FMA(MLVM_FMA(MLVM_EXP_P5, r, MLVM_EXP_P4), r2, MLVM_FMA(MLVM_EXP_P3, r, MLVM_EXP_P2));
    p = MLVM_FMA(p, r2, MLVM_FMA(MLVM_EXP_P1, r, MLVM_EXP_P0));
    *k = (int32_t)(mlvm_f32_to_bits(kr) - mlvm_f32_to_bits(MLVM_EXP_ROUND));
    return MLVM_FMA(p, r2, r);
}

static inline float mlvm_expf(float x)
{
    float xc = MLVM_SELECT_F32(x < MLVM_EXP_LO, MLVM_EXP_LO, x);
    float p;
    int32_t ki, k1;
    xc = MLVM_SELECT_F32(xc > MLVM_EXP_HI, MLVM_EXP_HI, xc);
    p = mlvm_expm1_reduced(xc, &ki) + 1.0f; /* ki: -150 .. 128 */
    k1 = ki >> 1; /* floor(ki / 2), -75 .. 64: an arithmetic shift on every target compiler */
    /* p in [0.7, 1.5) times 2^k1 stays normal: exact. A multiplication, not
     * an addition to p's exponent bits, so that a NaN p stays NaN. */
    p = p * mlvm_bits_to_f32((uint32_t)(k1 + 127) << 23);
    return p * mlvm_bits_to_f32((uint32_t)(ki - k1 + 127) << 23);
}

/* 1 / (1 + e^-x), as e^x / (1 + e^x) for x < 0 so that e^-x never
 * overflows where the result is a small (or subnormal) number. */
static inline float mlvm_sigmoidf(float x)
{
    const float e = mlvm_expf(-fabsf(x));
    return MLVM_SELECT_F32(x < 0.0f, e, 1.0f) / (1.0f + e);
}

/* tanh(x) = sign(x) e / (e + 2), e = e^(2|x|) - 1: one expm1 (mlvm_expf's
 * reduction and polynomial without its final + 1, then 2^k e^r - 1 as
 * 2^k (e^r - 1) + (2^k - 1), whose second term is exact) and one division,
 * accurate near 0 (e is then e^r - 1 itself) where 1 - 2 / (e^2|x| + 1)
 * cancels. |x| is clamped to 9.1, beyond which tanh rounds to +-1: 2^k
 * stays normal (k <= 27) and the division finite. About 20 vector
 * instructions with AVX-512, where an odd polynomial below 0.625
 * selected against the exponential above took 32 (and was within 1.33 ulp,
 * against 2.43; 2.46 without FMA). */
#define MLVM_TANH_HI 9.1f

static inline float mlvm_tanhf(float x)
{
    const float ax = fabsf(x);
    const float y = 2.0f * MLVM_SELECT_F32(ax > MLVM_TANH_HI, MLVM_TANH_HI, ax); /* NaN kept */
    int32_t k;
    const float p = mlvm_expm1_reduced(y, &k);                  /* e^r - 1; k 0 .. 27 */
    const float t = mlvm_bits_to_f32((uint32_t)(k + 127) << 23); /* 2^k (NaN: any) */
    const float e = MLVM_FMA(t, p, t - 1.0f);
    return copysignf(e / (e + 2.0f), x);
}

/* erf(x): x P(x^2) below |x| = 0.875; above, 1 - e^(-x^2) Q(1/|x| - c),
 * with e^(-x^2) of x^2 split into its float and its rounding error (by
 * fma) so that the exponent's rounding is not amplified. P (degree 5 in
 * x^2, its constant 2/sqrt(pi) rounded) and Q (degree 9) are least-squares
 * fits in relative error of erf(x) / x on [0, 0.875] and of erfc(x) e^(x^2)
 * on [0.875, 4]; |x| is clamped to 4, beyond which erf rounds to +-1.
 * Its constants, named once for src/kernels/vexp.h's sixteen-lane form. */
#define MLVM_ERF_SPLIT 0.875f
#define MLVM_ERF_HI 4.0f
#define MLVM_ERF_C 0.69642859697341919f
#define MLVM_ERF_P5 (-6.419406272470951e-4f)
#define MLVM_ERF_P4 5.078244488686323e-3f
#define MLVM_ERF_P3 (-2.6827268302440643e-2f)
#define MLVM_ERF_P2 1.1283678561449051e-1f
#define MLVM_ERF_P1 (-3.761272132396698e-1f)
#define MLVM_ERF_P0 1.128379225730896f /* 2 / sqrt(pi) rounded */
#define MLVM_ERF_Q9 1.7122039571404457e-2f
#define MLVM_ERF_Q8 2.5481993798166513e-3f
#define MLVM_ERF_Q7 (-2.5722146034240723e-2f)
#define MLVM_ERF_Q6 3.242317587137222e-2f
#define MLVM_ERF_Q5 (-3.0597995966672897e-2f)
#define MLVM_ERF_Q4 9.472199715673923e-3f
#define MLVM_ERF_Q3 4.830509051680565e-2f
#define MLVM_ERF_Q2 (-1.6245600581169128e-1f)
#define MLVM_ERF_Q1 3.5835450887680054e-1f
#define MLVM_ERF_Q0 3.3239588141441345e-1f

static inline float mlvm_erff(float x)
{
    const float ax0 = fabsf(x);
    const float ax = MLVM_SELECT_F32(ax0 > MLVM_ERF_HI, MLVM_ERF_HI, ax0); /* NaN kept */
    const float z = ax * ax;
    const float zlo = MLVM_FMA(ax, ax, -z);
    const float u = 1.0f / ax - MLVM_ERF_C;
    float p, q, big;
    p = MLVM_ERF_P5;
    p = MLVM_FMA(p, z, MLVM_ERF_P4);
    p = MLVM_FMA(p, z, MLVM_ERF_P3);
    p = MLVM_FMA(p, z, MLVM_ERF_P2);
    p = MLVM_FMA(p, z, MLVM_ERF_P1);
    p = MLVM_FMA(p, z, MLVM_ERF_P0);
    p = p * ax;
    q = MLVM_ERF_Q9;
    q = MLVM_FMA(q, u, MLVM_ERF_Q8);
    q = MLVM_FMA(q, u, MLVM_ERF_Q7);
    q = MLVM_FMA(q, u, MLVM_ERF_Q6);
    q = MLVM_FMA(q, u, MLVM_ERF_Q5);
    q = MLVM_FMA(q, u, MLVM_ERF_Q4);
    q = MLVM_FMA(q, u, MLVM_ERF_Q3);
    q = MLVM_FMA(q, u, MLVM_ERF_Q2);
    q = MLVM_FMA(q, u, MLVM_ERF_Q1);
    q = MLVM_FMA(q, u, MLVM_ERF_Q0);
    big = mlvm_expf(-z); /* z <= 16: mlvm_expf's clamps do nothing */
    big = MLVM_FMA(-big, zlo, big);
    big = MLVM_FMA(-big, q, 1.0f);
    return copysignf(MLVM_SELECT_F32(ax < MLVM_ERF_SPLIT, p, big), x); /* NaN: from the arithmetic */
}

#endif /* MLVM_VMATH_H_ */
