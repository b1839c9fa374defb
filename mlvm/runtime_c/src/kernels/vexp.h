/* Internal: mlvm/vmath.h's functions a vector at a time, for the kernels
 * that run them over arrays (exp, sigmoid, tanh, erf, gelu, and the
 * exponentials of softmax and log-softmax): sixteen lanes with AVX-512,
 * eight with AVX2 and FMA (MLVM_VLANES; MLVM_HAVE_VEXP). Each function is
 * written once over the mlvm_vf operations below and does the scalar
 * form's operations in its order: the same bits (any NaN for NaN).
 *
 * 2^k: AVX-512's vscalefps applies it with one rounding, as mlvm_expf's
 * two powers of two do (the first exact), subnormal results included; AVX2
 * has no such instruction and takes the scalar form's two steps on the
 * exponent bits, or, where every lane's result is normal, one integer
 * add to them (MLVM_VEXP_NORMAL). vmaxps / vminps clamp and keep NaN
 * (they return their second operand where either is NaN). AVX-512's exp
 * is 16 vector operations where gcc's vectorisation of mlvm_expf took
 * about 26; with
 * AVX2 the explicit forms are 10-15 % faster than gcc's (tanh 30 -> 27 us
 * over [64, 1000] on a Zen 4, -march=haswell), and gcc left softmax's lane
 * sums scalar. Elsewhere MLVM_HAVE_VEXP is undefined and the kernels call
 * the scalar functions. */
#ifndef MLVM_KERNELS_VEXP_H_
#define MLVM_KERNELS_VEXP_H_

#include <stddef.h>

#include "mlvm/vmath.h"

#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_HAVE_VEXP 1
#define MLVM_VLANES 16
typedef __m512 mlvm_vf;
typedef __mmask16 mlvm_vmask;
#define vf_set1 _mm512_set1_ps
#define vf_load _mm512_loadu_ps
#define vf_store _mm512_storeu_ps
#define vf_add _mm512_add_ps
#define vf_sub _mm512_sub_ps
#define vf_mul _mm512_mul_ps
#define vf_div _mm512_div_ps
#define vf_min _mm512_min_ps
#define vf_max _mm512_max_ps
#define vf_fma _mm512_fmadd_ps   /* a b + c */
#define vf_fms _mm512_fmsub_ps   /* a b - c */
#define vf_fnma _mm512_fnmadd_ps /* c - a b */
#define vf_abs _mm512_abs_ps
#define vf_lt(a, b) _mm512_cmp_ps_mask((a), (b), _CMP_LT_OQ)
#define vf_select(m, a, b) _mm512_mask_mov_ps((b), (m), (a)) /* a where m, else b */

/* copysign(m, x), one instruction: the bits of m outside the sign, x's sign. */
static inline mlvm_vf vf_copysign(mlvm_vf m, mlvm_vf x)
{
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
        _mm512_castps_si512(m), _mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff), 0xe4));
}

/* AVX2's shorter forms below (-|x| by the sign bit, selects by x's sign
 * bit, copysign of a non-negative m), in AVX-512's operations as before
 * them (not measured on an AVX-512 core): 0 - |x| (+0 for -0: e^0 either
 * way), x < 0 (-0 then takes 1 / (1 + e), e = 1: 1 / 2 either way),
 * copysign (one ternary-logic operation). */
#define vf_negabs(x) vf_sub(vf_set1(0.0f), vf_abs(x))
#define vf_select_signbit(x, a, b) vf_select(vf_lt((x), vf_set1(0.0f)), (a), (b))
#define vf_setsign vf_copysign

/* p 2^k, k an integer in [-150, 128] (or NaN), rounded once. */
static inline mlvm_vf vf_scale(mlvm_vf p, mlvm_vf k)
{
    return _mm512_scalef_ps(p, k);
}

/* 2^k for t = vf_exp_round(x), k = t - MLVM_EXP_ROUND in [-126, 127]:
 * exact, from k */
static inline mlvm_vf vf_pow2_rounded(mlvm_vf t, mlvm_vf k)
{
    (void)t;
    return _mm512_scalef_ps(_mm512_set1_ps(1.0f), k);
}
#elif defined(__AVX2__) && defined(__FMA__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_HAVE_VEXP 1
#define MLVM_VLANES 8
typedef __m256 mlvm_vf;
typedef __m256 mlvm_vmask;
#define vf_set1 _mm256_set1_ps
#define vf_load _mm256_loadu_ps
#define vf_store _mm256_storeu_ps
#define vf_add _mm256_add_ps
#define vf_sub _mm256_sub_ps
#define vf_mul _mm256_mul_ps
#define vf_div _mm256_div_ps
#define vf_min _mm256_min_ps
#define vf_max _mm256_max_ps
#define vf_fma _mm256_fmadd_ps
#define vf_fms _mm256_fmsub_ps
#define vf_fnma _mm256_fnmadd_ps
#define vf_abs(x) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (x))
#define vf_lt(a, b) _mm256_cmp_ps((a), (b), _CMP_LT_OQ)
#define vf_select(m, a, b) _mm256_blendv_ps((b), (a), (m))

static inline mlvm_vf vf_copysign(mlvm_vf m, mlvm_vf x)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(sign, m), _mm256_and_ps(sign, x));
}

/* copysign(m, x) of an m whose sign bit is clear: one operation less */
static inline mlvm_vf vf_setsign(mlvm_vf m, mlvm_vf x)
{
    return _mm256_or_ps(m, _mm256_and_ps(_mm256_set1_ps(-0.0f), x));
}

static inline mlvm_vf vf_negabs(mlvm_vf x) { return _mm256_or_ps(x, _mm256_set1_ps(-0.0f)); }

/* blendv takes the lanes by the mask's sign bit */
#define vf_select_signbit(x, a, b) _mm256_blendv_ps((b), (a), (x))

/* mlvm_expf's two steps: 2^floor(k/2) added to p's exponent (exact, as the
 * scalar form's multiplication is; a NaN k gives INT_MIN, which adds 0), then a
 * multiplication by 2^(k - floor(k/2)). k is an integer: truncation is exact. */
static inline mlvm_vf vf_scale(mlvm_vf p, mlvm_vf k)
{
    const __m256i ki = _mm256_cvttps_epi32(k), k1 = _mm256_srai_epi32(ki, 1);
    p = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(k1, 23)));
    return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(
                                _mm256_add_epi32(_mm256_sub_epi32(ki, k1), _mm256_set1_epi32(127)), 23)));
}

/* 2^k from t's bits (t = vf_exp_round(x): 0x4B400000 + k, and 0x400000 << 23
 * is 0 modulo 2^32), k in [-126, 127]: no conversion */
static inline mlvm_vf vf_pow2_rounded(mlvm_vf t, mlvm_vf k)
{
    (void)k;
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_slli_epi32(_mm256_castps_si256(t), 23),
                                                _mm256_set1_epi32(127 << 23)));
}

/* exp's shorter form where every lane's result is normal (MLVM_VEXP_NORMAL,
 * AVX2 only): t = x log2e + 1.5 2^23 holds k in its low mantissa bits, as
 * 0x4B400000 + k. For k in [-125, 127] the clamps do nothing and p 2^k is
 * normal (p in [0.70, 1.42]: exponent 126 or 127), so adding k to p's
 * exponent field is the two steps' exact product: 18 vector operations,
 * range test included, where the full form takes 24: exp over [64, 1000]
 * 24 -> 17 us on a Zen 4 (-march=haswell). Lanes of x <= -104 (softmax's
 * masked logits, -inf) are 0 by a blend beside them, where the full form
 * multiplied into subnormals (a microcode assist: vectors with such
 * lanes 52-68 -> 19 us over the same array). A NaN, +inf or any other k
 * takes the full form. With AVX-512 the same form was no faster than
 * vscalefps. */
#define MLVM_VEXP_NORMAL 1
/* the lanes whose k is in [-125, 127] (all ones), from t's bits */
static inline __m256i vf_exp_normal_lanes(mlvm_vf t)
{
    const __m256i u = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(0x4B400000 - 125));
    return _mm256_cmpeq_epi32(_mm256_min_epu32(u, _mm256_set1_epi32(252)), u);
}

static inline int vf_all_lanes(__m256i m) { return _mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xFF; }

/* p 2^k from t's bits ((0x400000 + k) << 23 is k << 23 modulo 2^32) */
static inline mlvm_vf vf_scale_normal(mlvm_vf p, mlvm_vf t)
{
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p),
                                                _mm256_slli_epi32(_mm256_castps_si256(t), 23)));
}
#endif

/* generated code picks its loops by mlvm/vmath.h's MLVM_VECTOR_MATH */
#if defined(MLVM_HAVE_VEXP) != MLVM_VECTOR_MATH
#error "MLVM_VECTOR_MATH (mlvm/vmath.h) disagrees with vexp.h's paths"
#endif

#ifdef MLVM_HAVE_VEXP
/* x log2e + 1.5 2^23, mlvm_expf's rounding of k (k = t - 1.5 2^23) */
static inline mlvm_vf vf_exp_round(mlvm_vf x)
{
    return vf_fma(x, vf_set1(MLVM_EXP_LOG2E), vf_set1(MLVM_EXP_ROUND));
}

/* e^r - 1 by mlvm_expf's reduction of x and polynomial (without its + 1),
 * t = vf_exp_round(x); k the power of two taken out. */
static inline mlvm_vf vf_expm1_rounded(mlvm_vf x, mlvm_vf t, mlvm_vf *k)
{
    mlvm_vf r, r2, p;
    *k = vf_sub(t, vf_set1(MLVM_EXP_ROUND));
    r = vf_fma(*k, vf_set1(MLVM_EXP_MLN2_HI), x);
    r = vf_fma(*k, vf_set1(MLVM_EXP_MLN2_LO), r);
    r2 = vf_mul(r, r);
    p = vf_fma(vf_fma(vf_set1(MLVM_EXP_P5), r, vf_set1(MLVM_EXP_P4)), r2,
               vf_fma(vf_set1(MLVM_EXP_P3), r, vf_set1(MLVM_EXP_P2)));
    p = vf_fma(p, r2, vf_fma(vf_set1(MLVM_EXP_P1), r, vf_set1(MLVM_EXP_P0)));
    return vf_fma(p, r2, r);
}

static inline mlvm_vf vf_expm1_reduced(mlvm_vf x, mlvm_vf *k)
{
    return vf_expm1_rounded(x, vf_exp_round(x), k);
}

/* mlvm_expf of an x inside its clamps (or NaN), in full: the power of two
 * by vf_scale. */
static inline mlvm_vf vf_exp_full(mlvm_vf x)
{
    mlvm_vf k;
    const mlvm_vf p = vf_add(vf_expm1_reduced(x, &k), vf_set1(1.0f));
    return vf_scale(p, k);
}

/* Whether every lane's mlvm_expf(x) is normal with no clamp applying, or
 * (where some is not) 0 from the lower clamp, as -inf's and masked
 * logits' are in softmax: then the results in *e, by the exponent's bits
 * (those 0 by a blend: the full form would make them by multiplications
 * with subnormal results, which take a microcode assist on x86 cores).
 * Never without MLVM_VEXP_NORMAL. */
#ifdef MLVM_VEXP_NORMAL
/* the short form, t = vf_exp_round(x): right in the lanes whose k is in
 * [-125, 127] */
static inline mlvm_vf vf_exp_normal(mlvm_vf x, mlvm_vf t)
{
    mlvm_vf k;
    return vf_scale_normal(vf_add(vf_expm1_rounded(x, t, &k), vf_set1(1.0f)), t);
}
#endif

/* mlvm_expf of an x whose result is known normal with no clamp applying
 * (erf's e^(-x^2)), or NaN: the short form where there is one (a NaN
 * lane's result is then any value), else the full one. */
static inline mlvm_vf vf_exp_of_normal(mlvm_vf x)
{
#ifdef MLVM_VEXP_NORMAL
    return vf_exp_normal(x, vf_exp_round(x));
#else
    return vf_exp_full(x);
#endif
}

static inline int vf_exp_if_normal(mlvm_vf x, mlvm_vf *e)
{
#ifdef MLVM_VEXP_NORMAL
    const mlvm_vf t = vf_exp_round(x);
    const __m256i in = vf_exp_normal_lanes(t);
    mlvm_vf zero;
    if (vf_all_lanes(in)) {
        *e = vf_exp_normal(x, t);
        return 1;
    }
    /* x <= MLVM_EXP_LO: mlvm_expf clamps it there, and e^-104 rounds to 0 */
    zero = _mm256_cmp_ps(x, vf_set1(MLVM_EXP_LO), _CMP_LE_OQ);
    if (!vf_all_lanes(_mm256_or_si256(in, _mm256_castps_si256(zero))))
        return 0;
    *e = _mm256_andnot_ps(zero, vf_exp_normal(x, t));
    return 1;
#else
    (void)x, (void)e;
    return 0;
#endif
}

/* mlvm_expf of an x inside its clamps (or NaN): the clamps would do nothing. */
static inline mlvm_vf mlvm_expv_in_range(mlvm_vf x)
{
    mlvm_vf e;
    return vf_exp_if_normal(x, &e) ? e : vf_exp_full(x);
}

static inline mlvm_vf mlvm_expv(mlvm_vf x)
{
    mlvm_vf e;
    if (vf_exp_if_normal(x, &e))
        return e;
    return vf_exp_full(vf_min(vf_set1(MLVM_EXP_HI), vf_max(vf_set1(MLVM_EXP_LO), x)));
}

/* mlvm_expf of z <= 0 (or NaN), as sigmoid takes it: where every lane's z
 * is >= -86.5 (k >= -125: a normal result) the short form after one
 * comparison, in place of vf_exp_if_normal's test of k on both sides (AVX2's
 * sigmoid over [64, 1000] 0.88x the time on a Zen 3). */
static inline mlvm_vf vf_exp_nonpositive(mlvm_vf z)
{
#ifdef MLVM_VEXP_NORMAL
    const __m256 in = _mm256_cmp_ps(z, vf_set1(-86.5f), _CMP_GE_OQ); /* NaN: not */
    if (vf_all_lanes(_mm256_castps_si256(in)))
        return vf_exp_normal(z, vf_exp_round(z));
#endif
    return mlvm_expv(z);
}

/* -|x| by its sign bit, the select by x's (-0 as x < 0: e = 1 gives 1 / 2
 * either way; NaN: any NaN) */
static inline mlvm_vf mlvm_sigmoidv(mlvm_vf x)
{
    const mlvm_vf one = vf_set1(1.0f);
    const mlvm_vf e = vf_exp_nonpositive(vf_negabs(x));
    return vf_div(vf_select_signbit(x, e, one), vf_add(one, e));
}

/* e / (e + 2) >= +0 (or NaN) takes x's sign without copysign's clear */
static inline mlvm_vf mlvm_tanhv(mlvm_vf x)
{
    const mlvm_vf one = vf_set1(1.0f);
    const mlvm_vf h = vf_min(vf_set1(MLVM_TANH_HI), vf_abs(x)); /* NaN kept */
    /* 2 h log2e + 1.5 2^23 from h itself: 2 h is exact, so the same
     * rounding, beside (not after) the add */
    const mlvm_vf y = vf_add(h, h);
    const mlvm_vf r = vf_fma(h, vf_set1(2.0f * MLVM_EXP_LOG2E), vf_set1(MLVM_EXP_ROUND));
    mlvm_vf k, p, t, e;
    p = vf_expm1_rounded(y, r, &k);
    t = vf_pow2_rounded(r, k);
    e = vf_fma(t, p, vf_sub(t, one));
    return vf_setsign(vf_div(e, vf_add(e, vf_set1(2.0f))), x);
}

static inline mlvm_vf mlvm_erfv(mlvm_vf x)
{
    const mlvm_vf one = vf_set1(1.0f);
    const mlvm_vf ax = vf_min(vf_set1(MLVM_ERF_HI), vf_abs(x)); /* NaN kept */
    const mlvm_vf z = vf_mul(ax, ax);
    const mlvm_vf zlo = vf_fms(ax, ax, z);
    const mlvm_vf u = vf_sub(vf_div(one, ax), vf_set1(MLVM_ERF_C));
    mlvm_vf p, q, big;
    p = vf_set1(MLVM_ERF_P5);
    p = vf_fma(p, z, vf_set1(MLVM_ERF_P4));
    p = vf_fma(p, z, vf_set1(MLVM_ERF_P3));
    p = vf_fma(p, z, vf_set1(MLVM_ERF_P2));
    p = vf_fma(p, z, vf_set1(MLVM_ERF_P1));
    p = vf_fma(p, z, vf_set1(MLVM_ERF_P0));
    p = vf_mul(p, ax);
    q = vf_set1(MLVM_ERF_Q9);
    q = vf_fma(q, u, vf_set1(MLVM_ERF_Q8));
    q = vf_fma(q, u, vf_set1(MLVM_ERF_Q7));
    q = vf_fma(q, u, vf_set1(MLVM_ERF_Q6));
    q = vf_fma(q, u, vf_set1(MLVM_ERF_Q5));
    q = vf_fma(q, u, vf_set1(MLVM_ERF_Q4));
    q = vf_fma(q, u, vf_set1(MLVM_ERF_Q3));
    q = vf_fma(q, u, vf_set1(MLVM_ERF_Q2));
    q = vf_fma(q, u, vf_set1(MLVM_ERF_Q1));
    q = vf_fma(q, u, vf_set1(MLVM_ERF_Q0));
    /* -z in [-16, 0]: every k in [-24, 0], no range test (AVX2's erf
     * 0.95x the time); a NaN lane's q is NaN, whatever its exp */
    big = vf_exp_of_normal(vf_sub(vf_set1(0.0f), z));
    big = vf_fnma(big, zlo, big);
    big = vf_fnma(big, q, one);
    return vf_copysign(vf_select(vf_lt(ax, vf_set1(MLVM_ERF_SPLIT)), p, big), x);
}

/* void NAME(size_t n, const float *a, float *out): out[i] = FN(a[i]) a
 * vector at a time (FNV), the last n % MLVM_VLANES by the scalar FN (the
 * same bits; a masked vector with AVX-512). out may equal a. */
#if MLVM_VLANES == 16
#define MLVM_DEFINE_ARRAYV(NAME, FNV, FN)                                      \
    void NAME(size_t n, const float *a, float *out)                            \
    {                                                                          \
        size_t i = 0;                                                          \
        __mmask16 m;                                                           \
        for (; i + 16 <= n; i += 16)                                           \
            _mm512_storeu_ps(out + i, FNV(_mm512_loadu_ps(a + i)));            \
        if (i == n)                                                            \
            return;                                                            \
        m = (__mmask16)((1u << (n - i)) - 1u);                                 \
        _mm512_mask_storeu_ps(out + i, m, FNV(_mm512_maskz_loadu_ps(m, a + i))); \
    }
#else
#define MLVM_DEFINE_ARRAYV(NAME, FNV, FN)                                      \
    void NAME(size_t n, const float *a, float *out)                            \
    {                                                                          \
        size_t i = 0;                                                          \
        for (; i + MLVM_VLANES <= n; i += MLVM_VLANES)                         \
            vf_store(out + i, FNV(vf_load(a + i)));                            \
        for (; i < n; ++i)                                                     \
            out[i] = FN(a[i]);                                                 \
    }
#endif
#endif /* MLVM_HAVE_VEXP */

#endif /* MLVM_KERNELS_VEXP_H_ */
