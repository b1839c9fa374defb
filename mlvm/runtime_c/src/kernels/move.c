/* Data movement by element width (8, 16, 32 and 64 bits): the strided
 * gather of transpose / slice, broadcast_to, and 2-D copies of concat.
 * Moving bits needs only the width, not the element type. */
#include <string.h>

#include "iter.h"

/* Side of the square tiles a transposing gather walks: 16 x 16 elements
 * read from 16 input lines and written to 16 output lines. */
#define MLVM_GATHER_TILE 16

static mlvm_index_t move_imin(mlvm_index_t a, mlvm_index_t b) { return a < b ? a : b; }

#if !defined(MLVM_PORTABLE_KERNELS) && defined(__SSE2__)
#include <immintrin.h>
/* A whole tile in vectors (MLVM_MOVE_TILE): d[i * ds + j] = s[i + j * ss]
 * for i, j < 16. Bytes by SSE2's unpacks, four rounds: row pairs into
 * 16-bit units (a column's bytes of two rows), then 32-, 64- and 128-bit
 * units of 4, 8 and 16 rows (64 unpacks where element by element took 256
 * loads and stores). */
static void move_tile8(const uint8_t *s, mlvm_index_t ss, uint8_t *d, mlvm_index_t ds)
{
    __m128i r[16], t[16], v[16], x[4];
    int k, g;
    for (k = 0; k < 16; ++k)
        r[k] = _mm_loadu_si128((const __m128i *)(const void *)(s + k * ss));
    for (k = 0; k < 8; ++k) { /* t[k]: rows 2k, 2k + 1 of columns 0-7; t[k + 8]: 8-15 */
        t[k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
        t[k + 8] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
    }
    for (k = 0; k < 4; ++k) { /* v[4 g + k]: rows 4k .. 4k + 3 of columns 4g .. 4g + 3 */
        v[k] = _mm_unpacklo_epi16(t[2 * k], t[2 * k + 1]);
        v[k + 4] = _mm_unpackhi_epi16(t[2 * k], t[2 * k + 1]);
        v[k + 8] = _mm_unpacklo_epi16(t[8 + 2 * k], t[8 + 2 * k + 1]);
        v[k + 12] = _mm_unpackhi_epi16(t[8 + 2 * k], t[8 + 2 * k + 1]);
    }
    for (g = 0; g < 4; ++g) {
        /* columns 4g, 4g + 1 (x[0], x[2]) and 4g + 2, 4g + 3 (x[1], x[3]) of
         * rows 0-7 and 8-15 */
        x[0] = _mm_unpacklo_epi32(v[4 * g], v[4 * g + 1]);
        x[1] = _mm_unpackhi_epi32(v[4 * g], v[4 * g + 1]);
        x[2] = _mm_unpacklo_epi32(v[4 * g + 2], v[4 * g + 3]);
        x[3] = _mm_unpackhi_epi32(v[4 * g + 2], v[4 * g + 3]);
        _mm_storeu_si128((__m128i *)(void *)(d + (4 * g) * ds), _mm_unpacklo_epi64(x[0], x[2]));
        _mm_storeu_si128((__m128i *)(void *)(d + (4 * g + 1) * ds), _mm_unpackhi_epi64(x[0], x[2]));
        _mm_storeu_si128((__m128i *)(void *)(d + (4 * g + 2) * ds), _mm_unpacklo_epi64(x[1], x[3]));
        _mm_storeu_si128((__m128i *)(void *)(d + (4 * g + 3) * ds), _mm_unpackhi_epi64(x[1], x[3]));
    }
}
#define MLVM_MOVE_TILE8 move_tile8
#endif

#if !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX2__)
/* 32-bit elements: the tile as four 8 x 8 blocks, each by unpacks,
 * shuffles and lane permutes of eight rows (24 where element by element
 * took 64 loads and stores). */
static void move_block8x8_32(const uint32_t *s, mlvm_index_t ss, uint32_t *d, mlvm_index_t ds)
{
    __m256 r[8], t[8], u[8];
    int k;
    for (k = 0; k < 8; ++k)
        r[k] = _mm256_loadu_ps((const float *)(const void *)(s + k * ss));
    for (k = 0; k < 4; ++k) { /* rows 2k, 2k + 1 interleaved, per 128-bit lane */
        t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    for (k = 0; k < 2; ++k) { /* rows 4k .. 4k + 3 of one column per 128-bit lane */
        u[4 * k] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
        u[4 * k + 1] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], 0xEE);
        u[4 * k + 2] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
        u[4 * k + 3] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
    }
    for (k = 0; k < 4; ++k) { /* columns k (low lanes) and k + 4 (high lanes) */
        _mm256_storeu_ps((float *)(void *)(d + k * ds), _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
        _mm256_storeu_ps((float *)(void *)(d + (k + 4) * ds), _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
    }
}

static void move_tile32(const uint32_t *s, mlvm_index_t ss, uint32_t *d, mlvm_index_t ds)
{
    move_block8x8_32(s, ss, d, ds);
    move_block8x8_32(s + 8, ss, d + 8 * ds, ds);
    move_block8x8_32(s + 8 * ss, ss, d + 8, ds);
    move_block8x8_32(s + 8 * ss + 8, ss, d + 8 * ds + 8, ds);
}
#define MLVM_MOVE_TILE32 move_tile32
#endif

#if MLVM_GATHER_TILE != 16
#error "the vector tiles are 16 x 16"
#endif

#define MLVM_MOVE_T uint8_t
#define MLVM_MOVE_NAME(x) x##8
#ifdef MLVM_MOVE_TILE8
#define MLVM_MOVE_TILE MLVM_MOVE_TILE8
#endif
#include "move_impl.h"
#undef MLVM_MOVE_TILE
#undef MLVM_MOVE_T
#undef MLVM_MOVE_NAME

#define MLVM_MOVE_T uint16_t
#define MLVM_MOVE_NAME(x) x##16
#include "move_impl.h"
#undef MLVM_MOVE_T
#undef MLVM_MOVE_NAME

#define MLVM_MOVE_T uint32_t
#define MLVM_MOVE_NAME(x) x##32
#ifdef MLVM_MOVE_TILE32
#define MLVM_MOVE_TILE MLVM_MOVE_TILE32
#endif
#include "move_impl.h"
#undef MLVM_MOVE_TILE
#undef MLVM_MOVE_T
#undef MLVM_MOVE_NAME

#define MLVM_MOVE_T uint64_t
#define MLVM_MOVE_NAME(x) x##64
#include "move_impl.h"
#undef MLVM_MOVE_T
#undef MLVM_MOVE_NAME
