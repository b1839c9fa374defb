/* Internal: mlvm_expf (mlvm/vmath.h) sixteen lanes at a time on AVX-512,
 * for the kernels that run exp over arrays (exp, sigmoid, tanh, softmax,
 * log-softmax), and mlvm_erff's form (erf, gelu). The same reduction and polynomial (vmath.h's named
 * constants), the same bits: vscalefps applies 2^k with one rounding, as
 * mlvm_expf's two powers of two do (the first exact), subnormal results
 * included; vmaxps / vminps clamp and keep NaN. 16 vector operations
 * instead of about 26. Elsewhere MLVM_HAVE_EXP16 is undefined and the
 * kernels call the scalar functions. */
#ifndef MLVM_KERNELS_VEXP_H_
#define MLVM_KERNELS_VEXP_H_

#include "mlvm/vmath.h"

#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_HAVE_EXP16 1

/* mlvm_expf of an x inside its clamps (or NaN): the clamps would do nothing. */
static inline __m512 mlvm_exp16_in_range(__m512 x)
{
    const __m512 magic = _mm512_set1_ps(MLVM_EXP_ROUND);
    const __m512 k = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(MLVM_EXP_LOG2E), magic), magic);
    __m512 r, p;
    r = _mm512_fmadd_ps(k, _mm512_set1_ps(MLVM_EXP_MLN2_HI), x);
    r = _mm512_fmadd_ps(k, _mm512_set1_ps(MLVM_EXP_MLN2_LO), r);
    p = _mm512_set1_ps(MLVM_EXP_P5);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MLVM_EXP_P4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MLVM_EXP_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MLVM_EXP_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MLVM_EXP_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MLVM_EXP_P0));
    p = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, k);
}

static inline __m512 mlvm_exp16(__m512 x)
{
    /* max / min return their second operand where either is NaN */
    return mlvm_exp16_in_range(_mm512_min_ps(_mm512_set1_ps(MLVM_EXP_HI),
                                             _mm512_max_ps(_mm512_set1_ps(MLVM_EXP_LO), x)));
}

/* mlvm_sigmoidf on sixteen lanes, the same operations (and bits). */
static inline __m512 mlvm_sigmoid16(__m512 x)
{
    const __m512 ax = _mm512_abs_ps(x);
    const __m512 e = mlvm_exp16(_mm512_sub_ps(_mm512_setzero_ps(), ax));
    const __m512 num = _mm512_mask_mov_ps(_mm512_set1_ps(1.0f),
                                          _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), e);
    return _mm512_div_ps(num, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

/* copysign(m, x), one instruction: the bits of m outside the sign, x's sign. */
static inline __m512 mlvm_copysign16(__m512 m, __m512 x)
{
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
        _mm512_castps_si512(m), _mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff), 0xe4));
}

/* mlvm_tanhf on sixteen lanes, the same operations (and bits): 2^k by
 * vscalefps, exact as the scalar form's exponent bits are. */
static inline __m512 mlvm_tanh16(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f), magic = _mm512_set1_ps(MLVM_EXP_ROUND);
    const __m512 h = _mm512_min_ps(_mm512_set1_ps(MLVM_TANH_HI), _mm512_abs_ps(x)); /* NaN kept */
    const __m512 y = _mm512_add_ps(h, h);
    const __m512 k = _mm512_sub_ps(_mm512_fmadd_ps(y, _mm512_set1_ps(MLVM_EXP_LOG2E), magic), magic);
    __m512 r, p, t, e;
    r = _mm512_fmadd_ps(k, _mm512_set1_ps(MLVM_EXP_MLN2_HI), y);
    r = _mm512_fmadd_ps(k, _mm512_set1_ps(MLVM_EXP_MLN2_LO), r);
    p = _mm512_set1_ps(MLVM_EXP_P5);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MLVM_EXP_P4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MLVM_EXP_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MLVM_EXP_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MLVM_EXP_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MLVM_EXP_P0));
    p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r);
    t = _mm512_scalef_ps(one, k);
    e = _mm512_fmadd_ps(t, p, _mm512_sub_ps(t, one));
    return mlvm_copysign16(_mm512_div_ps(e, _mm512_add_ps(e, _mm512_set1_ps(2.0f))), x);
}

/* mlvm_erff on sixteen lanes, the same operations (and bits). gcc's
 * vectorisation of the scalar form took about 20 % longer. */
static inline __m512 mlvm_erf16(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 ax = _mm512_min_ps(_mm512_set1_ps(MLVM_ERF_HI), _mm512_abs_ps(x)); /* NaN kept */
    const __m512 z = _mm512_mul_ps(ax, ax);
    const __m512 zlo = _mm512_fmsub_ps(ax, ax, z);
    const __m512 u = _mm512_sub_ps(_mm512_div_ps(one, ax), _mm512_set1_ps(MLVM_ERF_C));
    __m512 p, q, big, r;
    p = _mm512_set1_ps(MLVM_ERF_P5);
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(MLVM_ERF_P4));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(MLVM_ERF_P3));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(MLVM_ERF_P2));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(MLVM_ERF_P1));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(MLVM_ERF_P0));
    p = _mm512_mul_ps(p, ax);
    q = _mm512_set1_ps(MLVM_ERF_Q9);
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(MLVM_ERF_Q8));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(MLVM_ERF_Q7));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(MLVM_ERF_Q6));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(MLVM_ERF_Q5));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(MLVM_ERF_Q4));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(MLVM_ERF_Q3));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(MLVM_ERF_Q2));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(MLVM_ERF_Q1));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(MLVM_ERF_Q0));
    big = mlvm_exp16_in_range(_mm512_sub_ps(_mm512_setzero_ps(), z));
    big = _mm512_fnmadd_ps(big, zlo, big);
    big = _mm512_fnmadd_ps(big, q, one);
    r = _mm512_mask_mov_ps(big, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(MLVM_ERF_SPLIT), _CMP_LT_OQ), p);
    return mlvm_copysign16(r, x);
}

/* void NAME(size_t n, const float *a, float *out): out[i] = FN16(a[i]),
 * sixteen at a time, the last n % 16 masked (out may equal a). */
#define MLVM_DEFINE_ARRAY16(NAME, FN16)                                        \
    void NAME(size_t n, const float *a, float *out)                            \
    {                                                                          \
        size_t i = 0;                                                          \
        __mmask16 m;                                                           \
        for (; i + 16 <= n; i += 16)                                           \
            _mm512_storeu_ps(out + i, FN16(_mm512_loadu_ps(a + i)));           \
        if (i == n)                                                            \
            return;                                                            \
        m = (__mmask16)((1u << (n - i)) - 1u);                                 \
        _mm512_mask_storeu_ps(out + i, m, FN16(_mm512_maskz_loadu_ps(m, a + i))); \
    }
#elif defined(__AVX2__) && defined(__FMA__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_HAVE_EXP8 1

/* mlvm_expf on eight lanes with AVX2 (no vscalefps: 2^k in two steps on the
 * exponent bits, as the scalar form does), the same bits. gcc vectorised
 * loops calling mlvm_expf, but not softmax's sums over lanes. */
static inline __m256 mlvm_exp8(__m256 x)
{
    /* max / min return their second operand where either is NaN */
    const __m256 xc = _mm256_min_ps(_mm256_set1_ps(MLVM_EXP_HI),
                                    _mm256_max_ps(_mm256_set1_ps(MLVM_EXP_LO), x));
    const __m256 magic = _mm256_set1_ps(MLVM_EXP_ROUND);
    const __m256 k = _mm256_sub_ps(_mm256_fmadd_ps(xc, _mm256_set1_ps(MLVM_EXP_LOG2E), magic), magic);
    __m256 r, p;
    __m256i ki, k1;
    r = _mm256_fmadd_ps(k, _mm256_set1_ps(MLVM_EXP_MLN2_HI), xc);
    r = _mm256_fmadd_ps(k, _mm256_set1_ps(MLVM_EXP_MLN2_LO), r);
    p = _mm256_set1_ps(MLVM_EXP_P5);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MLVM_EXP_P4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MLVM_EXP_P3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MLVM_EXP_P2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MLVM_EXP_P1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MLVM_EXP_P0));
    p = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), _mm256_set1_ps(1.0f));
    ki = _mm256_cvttps_epi32(k); /* k is an integer: truncation is exact */
    k1 = _mm256_srai_epi32(ki, 1);
    p = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(k1, 23)));
    return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(
                                _mm256_add_epi32(_mm256_sub_epi32(ki, k1), _mm256_set1_epi32(127)), 23)));
}
#endif

#endif /* MLVM_KERNELS_VEXP_H_ */
