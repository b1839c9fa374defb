/* Internal: the even and odd floats of sixteen in a row (a stride-2 row's
 * two column phases) in two AVX2 vectors, for conv.c's phase-plane copies,
 * conv_wino.c's stride-2 input tiles and depthwise.c's strided taps. */
#ifndef MLVM_KERNELS_SPLIT2_H_
#define MLVM_KERNELS_SPLIT2_H_

#if defined(__AVX2__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>

/* a shuffle's a0 a2 b0 b2 a4 a6 b4 b6 (or a1 a3 b1 b3 ...) with its 64-bit
 * quarters in order 0 2 1 3 */
#define MLVM_SPLIT2_ORDER(v) _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xD8))

/* a0 a2 a4 a6 b0 b2 b4 b6: the even floats of a (0 .. 7), then of b (8 .. 15) */
static inline __m256 mlvm_even8(__m256 a, __m256 b)
{
    return MLVM_SPLIT2_ORDER(_mm256_shuffle_ps(a, b, 0x88));
}

/* a1 a3 a5 a7 b1 b3 b5 b7 */
static inline __m256 mlvm_odd8(__m256 a, __m256 b)
{
    return MLVM_SPLIT2_ORDER(_mm256_shuffle_ps(a, b, 0xDD));
}
#endif

#endif /* MLVM_KERNELS_SPLIT2_H_ */
