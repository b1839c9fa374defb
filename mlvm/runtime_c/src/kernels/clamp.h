/* Internal: mlvm_epilogue_clamp_f32 (kernels.h) on one vector, for the
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

#endif /* MLVM_KERNELS_CLAMP_H_ */
