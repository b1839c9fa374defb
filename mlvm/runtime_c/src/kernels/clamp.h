/* Internal: the runtime's epilogues' loops (mlvm_clamp_run, mlvm_bias_run),
 * and mlvm_epilogue_clamp_f32 (kernels.h) on one vector, for the
 * kernels that apply an activation alone in their registers (depthwise.c,
 * depthwise_lanes.c). relu keeps h on ties and NaN (max's second operand); max
 * with lo then min with hi give the bound on ties, and NaN stays. */
#ifndef MLVM_KERNELS_CLAMP_H_
#define MLVM_KERNELS_CLAMP_H_

#include "mlvm/kernels.h"

#if defined(__AVX__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>

#if defined(__AVX512F__)
static inline __attribute__((always_inline)) __m512 mlvm_clamp512(const mlvm_clamp_t *c, __m512 h)
{
    __m512 m;
    if (c->relu)
        return _mm512_max_ps(_mm512_setzero_ps(), h);
    m = _mm512_min_ps(_mm512_max_ps(h, _mm512_set1_ps(c->lo)), _mm512_set1_ps(c->hi));
    return _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(h, h, _CMP_UNORD_Q), h);
}
#endif

static inline __attribute__((always_inline)) __m256 mlvm_clamp256(const mlvm_clamp_t *c, __m256 h)
{
    __m256 m;
    if (c->relu)
        return _mm256_max_ps(_mm256_setzero_ps(), h);
    m = _mm256_min_ps(_mm256_max_ps(h, _mm256_set1_ps(c->lo)), _mm256_set1_ps(c->hi));
    return _mm256_blendv_ps(m, h, _mm256_cmp_ps(h, h, _CMP_UNORD_Q));
}
#endif

/* The clamp over n values in place, the rules above: the loop of
 * mlvm_epilogue_clamp_f32 and of the convolution entries that clamp in
 * their own loop (conv_scalar.c). relu is a loop of its own (h < 0 ? 0 :
 * h). The other selects are made on the bits (MLVM_SELECT_F32): a float ?:
 * here stays a branch per element, unvectorised, when the code is built
 * with -fno-trapping-math (or -ffast-math). */
static inline __attribute__((always_inline)) void mlvm_clamp_run(const mlvm_clamp_t *c,
                                                                  float *restrict x, mlvm_index_t n)
{
    const float lo = c->lo, hi = c->hi;
    mlvm_index_t j;
    if (c->relu) {
        for (j = 0; j < n; ++j)
            x[j] = x[j] < 0.0f ? 0.0f : x[j];
        return;
    }
    /* !(h <= lo): above lo, or NaN (kept) */
    for (j = 0; j < n; ++j) {
        const float h = x[j], m = MLVM_SELECT_F32(!(h <= lo), h, lo);
        x[j] = MLVM_SELECT_F32(!(m >= hi), m, hi);
    }
}

/* A Linear layer's bias over n values of a row in place (bias: the row's
 * first column's), then its ReLU (lo 0) or nothing (lo -inf): the loop of
 * mlvm_epilogue_bias_f32 and of the single-row entries that add the bias
 * in their own loop (matmul.c). */
static inline __attribute__((always_inline)) void mlvm_bias_run(const float *restrict bias, float lo,
                                                                 float *restrict x, mlvm_index_t n)
{
    mlvm_index_t j;
    for (j = 0; j < n; ++j) {
        const float t = x[j] + bias[j];
        x[j] = t < lo ? lo : t;
    }
}

#endif /* MLVM_KERNELS_CLAMP_H_ */
