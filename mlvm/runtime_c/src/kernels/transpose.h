/* Internal: the first stages of the in-register transposes of
 * depthwise_lanes.c (LANES x LANES blocks) and conv_cvec.c (tiles of 8
 * positions): four rows r[0..3] to s[0..3], where 128-bit lane l of s[k]
 * holds column 4 l + k of the four rows (row i in element i). Pairs of rows
 * interleaved, then pairs of pairs; the callers' last stage gathers the
 * 128-bit lanes of several such groups. */
#ifndef MLVM_KERNELS_TRANSPOSE_H_
#define MLVM_KERNELS_TRANSPOSE_H_

#if defined(__AVX__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>

#if defined(__AVX512F__)
static inline __attribute__((always_inline)) void mlvm_transpose4_512(const __m512 *r, __m512 *s)
{
    const __m512d a = _mm512_castps_pd(_mm512_unpacklo_ps(r[0], r[1]));
    const __m512d b = _mm512_castps_pd(_mm512_unpacklo_ps(r[2], r[3]));
    const __m512d c = _mm512_castps_pd(_mm512_unpackhi_ps(r[0], r[1]));
    const __m512d d = _mm512_castps_pd(_mm512_unpackhi_ps(r[2], r[3]));
    s[0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    s[1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    s[2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
    s[3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
}
#endif

static inline __attribute__((always_inline)) void mlvm_transpose4_256(const __m256 *r, __m256 *s)
{
    const __m256d a = _mm256_castps_pd(_mm256_unpacklo_ps(r[0], r[1]));
    const __m256d b = _mm256_castps_pd(_mm256_unpacklo_ps(r[2], r[3]));
    const __m256d c = _mm256_castps_pd(_mm256_unpackhi_ps(r[0], r[1]));
    const __m256d d = _mm256_castps_pd(_mm256_unpackhi_ps(r[2], r[3]));
    s[0] = _mm256_castpd_ps(_mm256_unpacklo_pd(a, b));
    s[1] = _mm256_castpd_ps(_mm256_unpackhi_pd(a, b));
    s[2] = _mm256_castpd_ps(_mm256_unpacklo_pd(c, d));
    s[3] = _mm256_castpd_ps(_mm256_unpackhi_pd(c, d));
}
#endif

#endif /* MLVM_KERNELS_TRANSPOSE_H_ */
