/* Internal: mlvm_expf (mlvm/vmath.h) sixteen lanes at a time on AVX-512,
 * for the kernels that run exp over arrays (exp, sigmoid, tanh, softmax,
 * log-softmax). The same reduction and polynomial (vmath.h's named
 * constants), the same bits: vscalefps applies 2^k with one rounding, as
 * mlvm_expf's two powers of two do (the first exact), subnormal results
 * included; vmaxps / vminps clamp and keep NaN. 16 vector operations
 * instead of about 26. Elsewhere MLVM_HAVE_EXP16 is undefined and the
 * kernels call mlvm_expf. */
#ifndef MLVM_KERNELS_VEXP_H_
#define MLVM_KERNELS_VEXP_H_

#include "mlvm/vmath.h"

#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_HAVE_EXP16 1

static inline __m512 mlvm_exp16(__m512 x)
{
    /* max / min return their second operand where either is NaN */
    const __m512 xc = _mm512_min_ps(_mm512_set1_ps(MLVM_EXP_HI),
                                    _mm512_max_ps(_mm512_set1_ps(MLVM_EXP_LO), x));
    const __m512 magic = _mm512_set1_ps(MLVM_EXP_ROUND);
    const __m512 k = _mm512_sub_ps(_mm512_fmadd_ps(xc, _mm512_set1_ps(MLVM_EXP_LOG2E), magic), magic);
    __m512 r, p;
    r = _mm512_fmadd_ps(k, _mm512_set1_ps(MLVM_EXP_MLN2_HI), xc);
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

/* mlvm_sigmoidf on sixteen lanes, the same operations (and bits). */
static inline __m512 mlvm_sigmoid16(__m512 x)
{
    const __m512 ax = _mm512_abs_ps(x);
    const __m512 e = mlvm_exp16(_mm512_sub_ps(_mm512_setzero_ps(), ax));
    const __m512 num = _mm512_mask_mov_ps(_mm512_set1_ps(1.0f),
                                          _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), e);
    return _mm512_div_ps(num, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

/* mlvm_tanhf on sixteen lanes, the same operations (and bits). */
static inline __m512 mlvm_tanh16(__m512 x)
{
    const __m512 ax = _mm512_abs_ps(x), z = _mm512_mul_ps(x, x), one = _mm512_set1_ps(1.0f);
    const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u));
    __m512 p, big;
    p = _mm512_set1_ps(MLVM_TANH_P4);
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(MLVM_TANH_P3));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(MLVM_TANH_P2));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(MLVM_TANH_P1));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(MLVM_TANH_P0));
    p = _mm512_fmadd_ps(_mm512_mul_ps(p, z), x, x);
    big = _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f),
                                           _mm512_add_ps(mlvm_exp16(_mm512_add_ps(ax, ax)), one)));
    big = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(_mm512_abs_ps(big)), sign));
    return _mm512_mask_mov_ps(big, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(MLVM_TANH_SMALL), _CMP_LT_OQ), p);
}
#endif

#endif /* MLVM_KERNELS_VEXP_H_ */
