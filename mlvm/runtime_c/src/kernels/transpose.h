/* Internal: in-register transposes of 32-bit elements, for
 * depthwise_lanes.c and qdepthwise_lanes.c (LANES x LANES blocks) and
 * conv_cvec.c (tiles of 8 positions, and AVX2's of 6). The first stages:
 * four rows r[0..3] to s[0..3], where 128-bit lane l of s[k] holds column
 * 4 l + k of the four rows (row i in element i). Pairs of rows
 * interleaved, then pairs of pairs; the last stage gathers the 128-bit
 * lanes of several such groups. */
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

#if defined(__AVX512F__)
/* r[i][j] -> r[j][i] for 16 x 16: four groups of four rows, then the
 * 128-bit lanes of the groups gathered. */
static inline __attribute__((always_inline)) void mlvm_transpose16_512(__m512 r[16])
{
    __m512 s[16];
    int i;
    for (i = 0; i < 4; ++i)
        mlvm_transpose4_512(r + 4 * i, s + 4 * i);
    for (i = 0; i < 4; ++i) {
        const __m512 u0 = _mm512_shuffle_f32x4(s[i], s[4 + i], 0x44);
        const __m512 u1 = _mm512_shuffle_f32x4(s[i], s[4 + i], 0xEE);
        const __m512 u2 = _mm512_shuffle_f32x4(s[8 + i], s[12 + i], 0x44);
        const __m512 u3 = _mm512_shuffle_f32x4(s[8 + i], s[12 + i], 0xEE);
        r[i] = _mm512_shuffle_f32x4(u0, u2, 0x88);
        r[4 + i] = _mm512_shuffle_f32x4(u0, u2, 0xDD);
        r[8 + i] = _mm512_shuffle_f32x4(u1, u3, 0x88);
        r[12 + i] = _mm512_shuffle_f32x4(u1, u3, 0xDD);
    }
}
#endif

/* r[i][j] -> r[j][i] for 8 x 8. */
static inline __attribute__((always_inline)) void mlvm_transpose8_256(__m256 r[8])
{
    __m256 s[8];
    int i;
    mlvm_transpose4_256(r, s);
    mlvm_transpose4_256(r + 4, s + 4);
    for (i = 0; i < 4; ++i) {
        r[i] = _mm256_permute2f128_ps(s[i], s[4 + i], 0x20);
        r[4 + i] = _mm256_permute2f128_ps(s[i], s[4 + i], 0x31);
    }
}
#endif

#endif /* MLVM_KERNELS_TRANSPOSE_H_ */
