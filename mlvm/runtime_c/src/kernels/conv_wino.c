/* 3x3 stride-1 convolutions by Winograd's minimal filtering F(m x m, 3x3),
 * m = 2 (mlvm_conv2d_wino_f32) or 4 (mlvm_conv2d_wino4_f32).
 *
 * Each m x m block of outputs ("tile") of a channel is A^T [sum_c U_c (.)
 * V_c] A, where V_c = B^T d B transforms the tile's (m + 2) x (m + 2) input
 * window d of channel c and U_c = G g G^T the channel's 3x3 weights (done
 * once, by the compiler: w stored [(m + 2)^2][O][C / groups], element (i,
 * j) of U in plane (m + 2) i + j). The sum over channels is, for each
 * plane and each group, one product of the group's [O/g x C/g] by its [C/g
 * x tiles] on the blocked GEMM: 16 multiply-adds per 2x2 tile and channel
 * pair (36 per 4x4) where the direct sums take 36 (144).
 *
 * Tiles are numbered row by row across the images, and go in blocks of
 * tile rows whose transformed inputs V [planes][C][ld] and products M
 * [planes][O][ld] stay in cache (MLVM_WINO_BLOCK_BYTES), of at least
 * MLVM_WINO_MIN_TILES tiles (each block reads all of U). Both transforms
 * are split in a pass along the rows and one down the columns, so that
 * the vectors run over consecutive tiles of as many tile rows as they hold
 * (full lanes on small maps too):
 *   - input: each padded input row's window columns times B (Z, m + 2
 *     values per tile: from the row's columns of each phase mod m, taken
 *     from the input by masked loads and permutes), kept apart by row
 *     phase; then B^T down the m + 2 rows of each tile's window;
 *   - output: A^T down each tile's rows of M, then the columns times A,
 *     plus the bias; each tile's m x m outputs go interleaved into their
 *     rows.
 * The epilogue (activation, residual add) runs per block and image while
 * the outputs are in cache.
 *
 * Rounding: F(2x2)'s transforms add and subtract (B and A hold 0 and +-1);
 * F(4x4)'s scale by up to 5 (B) and 8 (A). U was rounded once from exact
 * arithmetic; the products sum in the GEMM's order. The results differ
 * from the direct sums' in the last bits (docs/ops.md gives the bounds the
 * tests check). */
#include <string.h>

#include "gemm.h"
#include "split2.h"
#include "mlvm/kernels.h"

#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_WV_AVX512 1
#define MLVM_WV_LANES 16
typedef __m512 wv_t;
#define WV_LOAD _mm512_loadu_ps
#define WV_STORE _mm512_storeu_ps
#define WV_ADD _mm512_add_ps
#define WV_SUB _mm512_sub_ps
#define WV_SET1 _mm512_set1_ps
#define WV_MUL _mm512_mul_ps
#define WV_FMA _mm512_fmadd_ps
#elif defined(__AVX2__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_WV_AVX2 1
#define MLVM_WV_LANES 8
typedef __m256 wv_t;
#define WV_LOAD _mm256_loadu_ps
#define WV_STORE _mm256_storeu_ps
#define WV_ADD _mm256_add_ps
#define WV_SUB _mm256_sub_ps
#define WV_SET1 _mm256_set1_ps
#define WV_MUL _mm256_mul_ps
#define WV_FMA _mm256_fmadd_ps
#else
#define MLVM_WV_LANES 1
typedef float wv_t;
#define WV_LOAD(p) (*(p))
#define WV_STORE(p, v) (*(p) = (v))
#define WV_ADD(a, b) ((a) + (b))
#define WV_SUB(a, b) ((a) - (b))
#define WV_SET1(a) (a)
#define WV_MUL(a, b) ((a) * (b))
#define WV_FMA(a, b, c) ((a) * (b) + (c))
#endif

#ifndef MLVM_WINO_BLOCK_BYTES
#define MLVM_WINO_BLOCK_BYTES (512 * 1024)
#endif
#ifndef MLVM_WINO_MIN_TILES
#define MLVM_WINO_MIN_TILES 128
#endif
#define MLVM_WINO_ALIGN 64
#define MLVM_WINO_PAD 16 /* vector tails: the widest vector's floats */

typedef struct wino_geom {
    int m;                   /* outputs per tile side: 2, F(2x2, 3x3), or 4, F(4x4, 3x3) */
    int np;                  /* transformed planes, (m + 2)^2 */
    mlvm_index_t tx, ty;     /* tiles per row, tile rows per image */
    mlvm_index_t rows;       /* tile rows per block */
    mlvm_index_t ld;         /* row stride of V and M (floats) */
    mlvm_index_t zs;         /* floats per plane of Z (m row phases x m + 2 values) */
    size_t y_off, v_off, m_off; /* byte offsets in the workspace (Z at 0) */
} wino_geom_t;

static size_t wino_align(size_t n) { return (n + MLVM_WINO_ALIGN - 1) / MLVM_WINO_ALIGN * MLVM_WINO_ALIGN; }

static mlvm_index_t round_up(mlvm_index_t v, mlvm_index_t m) { return (v + m - 1) / m * m; }

static void wino_geom(const mlvm_conv2d_t *p, int m, wino_geom_t *g)
{
    const mlvm_index_t per_tile = (m + 2) * (m + 2) * (p->c + p->o) * (mlvm_index_t)sizeof(float);
    g->m = m;
    g->np = (m + 2) * (m + 2);
    g->tx = (p->ow + m - 1) / m;
    g->ty = (p->oh + m - 1) / m;
    g->rows = MLVM_WINO_BLOCK_BYTES / (per_tile * g->tx);
    /* at least MLVM_WINO_MIN_TILES columns per product: each block reads
     * all of U, which many channels make larger than the block */
    if (g->rows * g->tx < MLVM_WINO_MIN_TILES)
        g->rows = (MLVM_WINO_MIN_TILES + g->tx - 1) / g->tx;
    g->rows = g->rows > p->n * g->ty ? p->n * g->ty : g->rows;
    g->ld = round_up(g->rows * g->tx, MLVM_WINO_PAD) + MLVM_WINO_PAD;
    g->zs = (g->rows + 1) * g->tx + MLVM_WINO_PAD;
    g->y_off = wino_align((size_t)(m * (m + 2) * g->zs) * sizeof(float));
    g->v_off = g->y_off + wino_align((size_t)(m * m * g->ld) * sizeof(float));
    g->m_off = g->v_off + wino_align((size_t)(g->np * p->c * g->ld) * sizeof(float));
}

static size_t wino_workspace(const mlvm_conv2d_t *p, int m)
{
    wino_geom_t g;
    if (p->n * p->o == 0 || p->oh * p->ow == 0)
        return 0;
    wino_geom(p, m, &g);
    return g.m_off + wino_align((size_t)(g.np * p->o * g.ld) * sizeof(float));
}

size_t mlvm_conv2d_wino_workspace(const mlvm_conv2d_t *p) { return wino_workspace(p, 2); }

size_t mlvm_conv2d_wino4_workspace(const mlvm_conv2d_t *p) { return wino_workspace(p, 4); }

#ifdef MLVM_WV_AVX512
/* Lanes k of a 16-float load or store at s with 0 <= s + k < w. */
static __mmask16 inside(mlvm_index_t s, mlvm_index_t w)
{
    const mlvm_index_t lo = s < 0 ? -s : 0, hi = w - s > 16 ? 16 : w - s;
    if (hi <= lo)
        return 0;
    return (__mmask16)((0xffffu >> (16 - (hi - lo))) << lo);
}
#elif defined(MLVM_WV_AVX2)
/* The same as lanes of -1 for _mm256_maskload_ps (8 floats). */
static __m256i inside8(mlvm_index_t s, mlvm_index_t w)
{
    const __m256i i = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                       _mm256_set1_epi32((int)s));
    return _mm256_and_si256(_mm256_cmpgt_epi32(i, _mm256_set1_epi32(-1)),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32((int)w), i));
}

#endif

/* The row pass of one padded input row xr (column j is input column j -
 * pl, zero outside 0 .. w): tile t's window columns x0..x3 (padded columns
 * 2t .. 2t + 3) times B, z[k * zs + t] = (x0 - x2, x1 + x2, x2 - x1, x1 -
 * x3)[k] for t < tx (and up to a vector past it). Loads straight from the
 * input, masked at its edges. */
static void row_pass(const float *xr, mlvm_index_t w, mlvm_index_t pl, mlvm_index_t tx, float *z,
                     mlvm_index_t zs)
{
    mlvm_index_t t = 0;
#ifdef MLVM_WV_AVX512
    const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
    for (; t < tx; t += 16) {
        const mlvm_index_t s = 2 * t - pl;
        const __m512 a = _mm512_maskz_loadu_ps(inside(s, w), xr + s);
        const __m512 b = _mm512_maskz_loadu_ps(inside(s + 16, w), xr + s + 16);
        const __m512 a2 = _mm512_maskz_loadu_ps(inside(s + 2, w), xr + s + 2);
        const __m512 b2 = _mm512_maskz_loadu_ps(inside(s + 18, w), xr + s + 18);
        const __m512 x0 = _mm512_permutex2var_ps(a, ie, b), x1 = _mm512_permutex2var_ps(a, io, b);
        const __m512 x2 = _mm512_permutex2var_ps(a2, ie, b2), x3 = _mm512_permutex2var_ps(a2, io, b2);
        _mm512_storeu_ps(z + t, _mm512_sub_ps(x0, x2));
        _mm512_storeu_ps(z + zs + t, _mm512_add_ps(x1, x2));
        _mm512_storeu_ps(z + 2 * zs + t, _mm512_sub_ps(x2, x1));
        _mm512_storeu_ps(z + 3 * zs + t, _mm512_sub_ps(x1, x3));
    }
#elif defined(MLVM_WV_AVX2)
    for (; t < tx; t += 8) {
        const mlvm_index_t s = 2 * t - pl;
        const __m256 a0 = _mm256_maskload_ps(xr + s, inside8(s, w));
        const __m256 b0 = _mm256_maskload_ps(xr + s + 8, inside8(s + 8, w));
        const __m256 a2 = _mm256_maskload_ps(xr + s + 2, inside8(s + 2, w));
        const __m256 b2 = _mm256_maskload_ps(xr + s + 10, inside8(s + 10, w));
        const __m256 x0 = mlvm_even8(a0, b0), x1 = mlvm_odd8(a0, b0);
        const __m256 x2 = mlvm_even8(a2, b2), x3 = mlvm_odd8(a2, b2);
        _mm256_storeu_ps(z + t, _mm256_sub_ps(x0, x2));
        _mm256_storeu_ps(z + zs + t, _mm256_add_ps(x1, x2));
        _mm256_storeu_ps(z + 2 * zs + t, _mm256_sub_ps(x2, x1));
        _mm256_storeu_ps(z + 3 * zs + t, _mm256_sub_ps(x1, x3));
    }
#else
    for (; t < tx; ++t) {
        float x[4];
        int k;
        for (k = 0; k < 4; ++k) {
            const mlvm_index_t j = 2 * t + k - pl;
            x[k] = j >= 0 && j < w ? xr[j] : 0.0f;
        }
        z[t] = x[0] - x[2];
        z[zs + t] = x[1] + x[2];
        z[2 * zs + t] = x[2] - x[1];
        z[3 * zs + t] = x[1] - x[3];
    }
#endif
}

typedef void (*wino_row_fn)(const float *xr, mlvm_index_t w, mlvm_index_t pl, mlvm_index_t tx,
                            float *z, mlvm_index_t zs);

/* The row passes (pass: row_pass or row_pass4) of an image's padded input
 * rows m r0 .. m (r0 + rows) + m - 1 of channel xc into Z, plane (m + 2) k
 * + j holding value j of the rows of phase k (m r + k), row after row;
 * rows outside the input give zeros. */
static void row_passes(const mlvm_conv2d_t *p, const wino_geom_t *g, const float *xc,
                       mlvm_index_t r0, mlvm_index_t rows, float *z, wino_row_fn pass)
{
    const int m = g->m;
    mlvm_index_t r, k, j;
    for (r = 0; r <= rows; ++r)
        for (k = 0; k < m; ++k) {
            const mlvm_index_t iy = m * (r0 + r) + k - p->pt;
            float *zr = z + (m + 2) * k * g->zs + r * g->tx;
            if (iy >= 0 && iy < p->h) {
                pass(xc + iy * p->w, p->w, p->pl, g->tx, zr, g->zs);
                continue;
            }
            for (j = 0; j < m + 2; ++j)
                memset(zr + j * g->zs, 0, (size_t)g->tx * sizeof(float));
        }
}

/* V[plane][c][col0 ..] of an image's tile rows r0 .. r0 + rows, channel
 * xc: the row pass of padded rows 2 r0 .. 2 (r0 + rows) + 1 into Z (even
 * rows' planes then odd rows', row after row), then B^T down each tile's
 * rows (2r, 2r + 1, 2r + 2, 2r + 3: Z even r, odd r, even r + 1, odd r + 1),
 * over consecutive tiles of all the rows. */
static void input_transform(const mlvm_conv2d_t *p, const wino_geom_t *g, const float *xc,
                            mlvm_index_t r0, mlvm_index_t rows, float *z, float *v,
                            mlvm_index_t ps)
{
    const mlvm_index_t tx = g->tx, zs = g->zs, n = rows * tx;
    mlvm_index_t k, j;
    row_passes(p, g, xc, r0, rows, z, row_pass);
    for (j = 0; j < 4; ++j) {
        const float *ze = z + j * zs, *zo = z + (4 + j) * zs;
        float *vj = v + j * ps;
        for (k = 0; k < n; k += MLVM_WV_LANES) {
            const wv_t e0 = WV_LOAD(ze + k), e1 = WV_LOAD(ze + k + tx);
            const wv_t o0 = WV_LOAD(zo + k), o1 = WV_LOAD(zo + k + tx);
            WV_STORE(vj + k, WV_SUB(e0, e1));
            WV_STORE(vj + 4 * ps + k, WV_ADD(o0, e1));
            WV_STORE(vj + 8 * ps + k, WV_SUB(e1, o0));
            WV_STORE(vj + 12 * ps + k, WV_SUB(o0, o1));
        }
    }
}

/* Tiles per put_row2 / put_row4. */
#if defined(MLVM_WV_AVX2)
#define MLVM_WINO_PUT 8
#else
#define MLVM_WINO_PUT 16
#endif

/* n floats (at most 2 MLVM_WINO_PUT) of one output row from the columns
 * y0, y1 of consecutive tiles, interleaved. */
static void put_row2(float *row, mlvm_index_t n, const float *y0, const float *y1)
{
    mlvm_index_t j;
#if defined(MLVM_WV_AVX512)
    const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    const __m512 a = _mm512_loadu_ps(y0), b = _mm512_loadu_ps(y1);
    (void)j;
    _mm512_mask_storeu_ps(row, inside(0, n), _mm512_permutex2var_ps(a, lo, b));
    _mm512_mask_storeu_ps(row + 16, inside(16, n), _mm512_permutex2var_ps(a, hi, b));
#else
#if defined(MLVM_WV_AVX2)
    if (n == 16) {
        const __m256 a = _mm256_loadu_ps(y0), b = _mm256_loadu_ps(y1);
        const __m256 l = _mm256_unpacklo_ps(a, b), h = _mm256_unpackhi_ps(a, b);
        _mm256_storeu_ps(row, _mm256_permute2f128_ps(l, h, 0x20));
        _mm256_storeu_ps(row + 8, _mm256_permute2f128_ps(l, h, 0x31));
        return;
    }
#endif
    for (j = 0; j < n; ++j)
        row[j] = (j & 1 ? y1 : y0)[j >> 1];
#endif
}

static void put_row4(float *row, mlvm_index_t n, const float *y0, const float *y1, const float *y2,
                     const float *y3);

/* The outputs of an image's tile rows r0 .. r0 + rows of one channel from
 * y (plane m a + b: output (a, b) of each tile) into its plane out_o, row
 * by row: each output row interleaves its m planes (put_row2 / put_row4);
 * the rows and columns past the plane's are not stored. */
static void put_tiles(const mlvm_conv2d_t *p, const wino_geom_t *g, mlvm_index_t r0,
                      mlvm_index_t rows, const float *y, float *out_o)
{
    const int m = g->m;
    const mlvm_index_t tx = g->tx, ld = g->ld;
    mlvm_index_t r, t;
    int a;
    for (r = 0; r < rows; ++r)
        for (a = 0; a < m && m * (r0 + r) + a < p->oh; ++a) {
            const float *ya = y + m * a * ld + r * tx;
            float *row = out_o + (m * (r0 + r) + a) * p->ow;
            for (t = 0; t < tx; t += MLVM_WINO_PUT) {
                const mlvm_index_t x0 = m * t;
                const mlvm_index_t nx = p->ow - x0 < m * MLVM_WINO_PUT ? p->ow - x0 : m * MLVM_WINO_PUT;
                if (m == 2)
                    put_row2(row + x0, nx, ya + t, ya + ld + t);
                else
                    put_row4(row + x0, nx, ya + t, ya + ld + t, ya + 2 * ld + t, ya + 3 * ld + t);
            }
        }
}

/* Channel o's outputs of an image's tile rows r0 .. r0 + rows from M (its
 * row of plane 0 at m): A^T down each tile's rows of M (u = m0 + m1 + m2,
 * w = m1 - m2 - m3, per column), the columns times A plus the bias into y
 * (the four outputs of each tile: plane 2 a + b, output (a, b)), then y
 * into the output rows (put_tiles). */
static void output_transform(const mlvm_conv2d_t *p, const wino_geom_t *g, mlvm_index_t r0,
                             mlvm_index_t rows, const float *m, mlvm_index_t ps, float bias,
                             float *y, float *out_o)
{
    const mlvm_index_t tx = g->tx, ld = g->ld, n = rows * tx;
    const wv_t vb = WV_SET1(bias);
    mlvm_index_t k;
    for (k = 0; k < n; k += MLVM_WV_LANES) {
        wv_t u[4], w[4];
        int j;
        for (j = 0; j < 4; ++j) {
            const float *mj = m + j * ps + k;
            const wv_t m0 = WV_LOAD(mj), m1 = WV_LOAD(mj + 4 * ps);
            const wv_t m2 = WV_LOAD(mj + 8 * ps), m3 = WV_LOAD(mj + 12 * ps);
            u[j] = WV_ADD(WV_ADD(m0, m1), m2);
            w[j] = WV_SUB(WV_SUB(m1, m2), m3);
        }
        WV_STORE(y + k, WV_ADD(WV_ADD(WV_ADD(u[0], u[1]), u[2]), vb));
        WV_STORE(y + ld + k, WV_ADD(WV_SUB(WV_SUB(u[1], u[2]), u[3]), vb));
        WV_STORE(y + 2 * ld + k, WV_ADD(WV_ADD(WV_ADD(w[0], w[1]), w[2]), vb));
        WV_STORE(y + 3 * ld + k, WV_ADD(WV_SUB(WV_SUB(w[1], w[2]), w[3]), vb));
    }
    put_tiles(p, g, r0, rows, y, out_o);
}

/* F(4x4, 3x3). B^T times six values (a window's row or column): 4x0 -
 * 5x2 + x4, (x3 + x4) - 4(x1 + x2), (x4 - x3) + 4(x1 - x2), (x4 - x2) +
 * 2(x3 - x1), (x4 - x2) - 2(x3 - x1), 4x1 - 5x3 + x5. */
static inline void bt6(const wv_t *x, wv_t *r)
{
    const wv_t four = WV_SET1(4.0f), two = WV_SET1(2.0f), m5 = WV_SET1(-5.0f);
    const wv_t x42 = WV_SUB(x[4], x[2]), x31 = WV_SUB(x[3], x[1]);
    r[0] = WV_FMA(m5, x[2], WV_FMA(four, x[0], x[4]));
    r[1] = WV_SUB(WV_ADD(x[3], x[4]), WV_MUL(four, WV_ADD(x[1], x[2])));
    r[2] = WV_FMA(four, WV_SUB(x[1], x[2]), WV_SUB(x[4], x[3]));
    r[3] = WV_FMA(two, x31, x42);
    r[4] = WV_SUB(x42, WV_MUL(two, x31));
    r[5] = WV_FMA(m5, x[3], WV_FMA(four, x[1], x[5]));
}

/* A^T times six values: m0 + (m1 + m2) + (m3 + m4), (m1 - m2) + 2(m3 -
 * m4), (m1 + m2) + 4(m3 + m4), (m1 - m2) + 8(m3 - m4) + m5. */
static inline void at6(const wv_t *x, wv_t *r)
{
    const wv_t s1 = WV_ADD(x[1], x[2]), d1 = WV_SUB(x[1], x[2]);
    const wv_t s2 = WV_ADD(x[3], x[4]), d2 = WV_SUB(x[3], x[4]);
    r[0] = WV_ADD(WV_ADD(x[0], s1), s2);
    r[1] = WV_FMA(WV_SET1(2.0f), d2, d1);
    r[2] = WV_FMA(WV_SET1(4.0f), s2, s1);
    r[3] = WV_ADD(WV_FMA(WV_SET1(8.0f), d2, d1), x[5]);
}

/* The row pass of F(4x4, 3x3) over one padded input row xr (column j is
 * input column j - pl, zero outside 0 .. w): tile t's window columns x0 ..
 * x5 (padded columns 4t .. 4t + 5) times B, z[k * zs + t] = (B^T x)[k]
 * for t < tx (and up to a vector past it). The columns of each phase 4t
 * + k come from the input by masked loads and permutes. */
static void row_pass4(const float *xr, mlvm_index_t w, mlvm_index_t pl, mlvm_index_t tx, float *z,
                      mlvm_index_t zs)
{
    mlvm_index_t t = 0;
    wv_t x[6], r[6];
    int k;
#ifdef MLVM_WV_AVX512
    const __m512i next0 = _mm512_set_epi32(16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1);
    const __m512i next1 = _mm512_set_epi32(17, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1);
    for (; t < tx; t += 16) {
        const mlvm_index_t s = 4 * t - pl;
        __m512 a[5];
        for (k = 0; k < 5; ++k)
            a[k] = _mm512_maskz_loadu_ps(inside(s + 16 * k, w), xr + s + 16 * k);
        for (k = 0; k < 4; ++k) { /* phase k of 8 tiles from each pair of vectors */
            const __m512i idx = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 28 + k, 24 + k, 20 + k,
                                                 16 + k, 12 + k, 8 + k, 4 + k, k);
            const __m512 lo = _mm512_permutex2var_ps(a[0], idx, a[1]);
            const __m512 hi = _mm512_permutex2var_ps(a[2], idx, a[3]);
            x[k] = _mm512_shuffle_f32x4(lo, hi, 0x44);
        }
        x[4] = _mm512_permutex2var_ps(x[0], next0, a[4]); /* the next tile's first columns */
        x[5] = _mm512_permutex2var_ps(x[1], next1, a[4]);
        bt6(x, r);
        for (k = 0; k < 6; ++k)
            _mm512_storeu_ps(z + k * zs + t, r[k]);
    }
#elif defined(MLVM_WV_AVX2)
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const __m256i rot = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
    for (; t < tx; t += 8) {
        const mlvm_index_t s = 4 * t - pl;
        __m256 a[5], u0, u1, u2, u3;
        for (k = 0; k < 5; ++k)
            a[k] = _mm256_maskload_ps(xr + s + 8 * k, inside8(s + 8 * k, w));
        /* a 4 x 4 transpose in each half: tiles (0, 2, 4, 6 | 1, 3, 5, 7) */
        u0 = _mm256_unpacklo_ps(a[0], a[1]);
        u1 = _mm256_unpackhi_ps(a[0], a[1]);
        u2 = _mm256_unpacklo_ps(a[2], a[3]);
        u3 = _mm256_unpackhi_ps(a[2], a[3]);
        x[0] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(u0, u2, 0x44), order);
        x[1] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(u0, u2, 0xee), order);
        x[2] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(u1, u3, 0x44), order);
        x[3] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(u1, u3, 0xee), order);
        x[4] = _mm256_blend_ps(_mm256_permutevar8x32_ps(x[0], rot),
                               _mm256_permutevar8x32_ps(a[4], _mm256_set1_epi32(0)), 0x80);
        x[5] = _mm256_blend_ps(_mm256_permutevar8x32_ps(x[1], rot),
                               _mm256_permutevar8x32_ps(a[4], _mm256_set1_epi32(1)), 0x80);
        bt6(x, r);
        for (k = 0; k < 6; ++k)
            _mm256_storeu_ps(z + k * zs + t, r[k]);
    }
#else
    for (; t < tx; ++t) {
        for (k = 0; k < 6; ++k) {
            const mlvm_index_t j = 4 * t + k - pl;
            x[k] = j >= 0 && j < w ? xr[j] : 0.0f;
        }
        bt6(x, r);
        for (k = 0; k < 6; ++k)
            z[k * zs + t] = r[k];
    }
#endif
}

/* V[plane][c][col0 ..] of F(4x4, 3x3) for an image's tile rows r0 .. r0 +
 * rows, channel xc: the row pass of padded rows 4 r0 .. 4 (r0 + rows) + 3
 * into Z (plane 6 k + j: row phase k, value j; row after row), then B^T
 * down each tile's six rows (4r .. 4r + 3, then 4r + 4 and 4r + 5: phases
 * 0 and 1 of row r + 1), over consecutive tiles of all the rows. */
static void input_transform4(const mlvm_conv2d_t *p, const wino_geom_t *g, const float *xc,
                             mlvm_index_t r0, mlvm_index_t rows, float *z, float *v,
                             mlvm_index_t ps)
{
    const mlvm_index_t tx = g->tx, zs = g->zs, n = rows * tx;
    mlvm_index_t k, j;
    row_passes(p, g, xc, r0, rows, z, row_pass4);
    for (j = 0; j < 6; ++j)
        for (k = 0; k < n; k += MLVM_WV_LANES) {
            wv_t d[6], t6[6];
            int i;
            for (i = 0; i < 6; ++i)
                d[i] = WV_LOAD(z + ((i % 4) * 6 + j) * zs + k + (i / 4) * tx);
            bt6(d, t6);
            for (i = 0; i < 6; ++i)
                WV_STORE(v + (6 * i + j) * ps + k, t6[i]);
        }
}

/* n floats (at most 4 MLVM_WINO_PUT) of one output row from the columns
 * y0 .. y3 of consecutive tiles, interleaved by four. */
static void put_row4(float *row, mlvm_index_t n, const float *y0, const float *y1, const float *y2,
                     const float *y3)
{
    mlvm_index_t j;
#if defined(MLVM_WV_AVX512)
    const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    const __m512i q0 = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
    const __m512i q1 = _mm512_add_epi64(q0, _mm512_set1_epi64(4));
    const __m512 a = _mm512_loadu_ps(y0), b = _mm512_loadu_ps(y1);
    const __m512 c = _mm512_loadu_ps(y2), d = _mm512_loadu_ps(y3);
    const __m512d ablo = _mm512_castps_pd(_mm512_permutex2var_ps(a, lo, b));
    const __m512d abhi = _mm512_castps_pd(_mm512_permutex2var_ps(a, hi, b));
    const __m512d cdlo = _mm512_castps_pd(_mm512_permutex2var_ps(c, lo, d));
    const __m512d cdhi = _mm512_castps_pd(_mm512_permutex2var_ps(c, hi, d));
    (void)j;
    _mm512_mask_storeu_ps(row, inside(0, n), _mm512_castpd_ps(_mm512_permutex2var_pd(ablo, q0, cdlo)));
    _mm512_mask_storeu_ps(row + 16, inside(16, n),
                          _mm512_castpd_ps(_mm512_permutex2var_pd(ablo, q1, cdlo)));
    _mm512_mask_storeu_ps(row + 32, inside(32, n),
                          _mm512_castpd_ps(_mm512_permutex2var_pd(abhi, q0, cdhi)));
    _mm512_mask_storeu_ps(row + 48, inside(48, n),
                          _mm512_castpd_ps(_mm512_permutex2var_pd(abhi, q1, cdhi)));
#else
#if defined(MLVM_WV_AVX2)
    if (n == 32) {
        const __m256 a = _mm256_loadu_ps(y0), b = _mm256_loadu_ps(y1);
        const __m256 c = _mm256_loadu_ps(y2), d = _mm256_loadu_ps(y3);
        const __m256 ab0 = _mm256_unpacklo_ps(a, b), ab1 = _mm256_unpackhi_ps(a, b);
        const __m256 cd0 = _mm256_unpacklo_ps(c, d), cd1 = _mm256_unpackhi_ps(c, d);
        const __m256 t0 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(ab0), _mm256_castps_pd(cd0)));
        const __m256 t1 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(ab0), _mm256_castps_pd(cd0)));
        const __m256 t2 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(ab1), _mm256_castps_pd(cd1)));
        const __m256 t3 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(ab1), _mm256_castps_pd(cd1)));
        _mm256_storeu_ps(row, _mm256_permute2f128_ps(t0, t1, 0x20));
        _mm256_storeu_ps(row + 8, _mm256_permute2f128_ps(t2, t3, 0x20));
        _mm256_storeu_ps(row + 16, _mm256_permute2f128_ps(t0, t1, 0x31));
        _mm256_storeu_ps(row + 24, _mm256_permute2f128_ps(t2, t3, 0x31));
        return;
    }
#endif
    for (j = 0; j < n; ++j) {
        const float *yb = (j & 3) == 0 ? y0 : (j & 3) == 1 ? y1 : (j & 3) == 2 ? y2 : y3;
        row[j] = yb[j >> 2];
    }
#endif
}

/* Channel o's outputs of F(4x4, 3x3) for an image's tile rows r0 .. r0 +
 * rows from M (plane 6 i + j, its row of plane 0 at m): A^T down each
 * tile's rows, then the columns times A plus the bias into y (plane 4a +
 * b: output (a, b) of each tile), then y into the output rows (put_tiles). */
static void output_transform4(const mlvm_conv2d_t *p, const wino_geom_t *g, mlvm_index_t r0,
                              mlvm_index_t rows, const float *m, mlvm_index_t ps, float bias,
                              float *y, float *out_o)
{
    const mlvm_index_t tx = g->tx, ld = g->ld, n = rows * tx;
    const wv_t vb = WV_SET1(bias);
    mlvm_index_t k;
    for (k = 0; k < n; k += MLVM_WV_LANES) {
        wv_t col[4][6], v6[6], o4[4];
        int i, j, a;
        for (j = 0; j < 6; ++j) {
            for (i = 0; i < 6; ++i)
                v6[i] = WV_LOAD(m + (6 * i + j) * ps + k);
            at6(v6, o4);
            for (a = 0; a < 4; ++a)
                col[a][j] = o4[a];
        }
        for (a = 0; a < 4; ++a) {
            at6(col[a], o4);
            for (j = 0; j < 4; ++j)
                WV_STORE(y + (4 * a + j) * ld + k, WV_ADD(o4[j], vb));
        }
    }
    put_tiles(p, g, r0, rows, y, out_o);
}

/* Floats of one plane of the transformed weights: [O][C / groups], or in
 * the GEMM's panels (w_panel, kernels_nn.h) [ceil(O / P)][C][P]: each
 * tile reads its weights in order from contiguous memory (the planes'
 * GEMMs have few columns, 49 on a 14x14 map, so their weights are most of
 * what they read; 256 -> 256 channels on 14x14, weights from memory:
 * 0.85x the time). */
static int u_panels(const mlvm_conv2d_t *p)
{
    return p->w_panel == MLVM_CONV_A_PANEL && p->groups == 1 && p->o >= MLVM_CONV_A_PANEL;
}

static mlvm_index_t u_plane_size(const mlvm_conv2d_t *p)
{
    return (u_panels(p) ? mlvm_conv2d_a_panel_rows(p->o) : p->o) * (p->c / p->groups);
}

/* The first tile row after r of another image, or b1. */
static mlvm_index_t next_image(const wino_geom_t *g, mlvm_index_t r, mlvm_index_t b1)
{
    const mlvm_index_t end = (r / g->ty + 1) * g->ty;
    return end < b1 ? end : b1;
}

static void wino_run(const mlvm_conv2d_t *p, const float *x, const float *u, const float *bias,
                     float *out, void *ws, mlvm_epilogue_fn fn, const void *ctx, int m)
{
    const mlvm_index_t plane = p->oh * p->ow, in_plane = p->h * p->w;
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups;
    wino_geom_t g;
    float *z, *y, *v, *mm;
    mlvm_index_t b0, c, o, gi;
    int q;
    if (p->n * p->o == 0 || plane == 0)
        return;
    wino_geom(p, m, &g);
    z = (float *)ws;
    y = (float *)(void *)((unsigned char *)ws + g.y_off);
    v = (float *)(void *)((unsigned char *)ws + g.v_off);
    mm = (float *)(void *)((unsigned char *)ws + g.m_off);
    for (b0 = 0; b0 < p->n * g.ty; b0 += g.rows) {
        const mlvm_index_t b1 = p->n * g.ty - b0 < g.rows ? p->n * g.ty : b0 + g.rows;
        mlvm_index_t r;
        for (c = 0; c < p->c; ++c)
            for (r = b0; r < b1; r = next_image(&g, r, b1)) { /* each image's rows of the block */
                const mlvm_index_t n = r / g.ty, rows = next_image(&g, r, b1) - r;
                const float *xc = x + (n * p->c + c) * in_plane;
                float *vc = v + c * g.ld + (r - b0) * g.tx;
                if (m == 2)
                    input_transform(p, &g, xc, r % g.ty, rows, z, vc, p->c * g.ld);
                else
                    input_transform4(p, &g, xc, r % g.ty, rows, z, vc, p->c * g.ld);
            }
        for (q = 0; q < g.np; ++q)
            for (gi = 0; gi < p->groups; ++gi) { /* each group's channels, its own product */
                mlvm_gemm_t gm;
                memset(&gm, 0, sizeof gm);
                gm.m = og;
                gm.n = (b1 - b0) * g.tx;
                gm.k = cg;
                gm.a = u + q * u_plane_size(p) + gi * og * cg;
                gm.a_rs = cg;
                gm.a_cs = 1;
                gm.a_panel = u_panels(p) ? MLVM_CONV_A_PANEL : 0;
                gm.b = v + (q * p->c + gi * cg) * g.ld;
                gm.b_rs = g.ld;
                gm.b_cs = 1;
                gm.out = mm + (q * p->o + gi * og) * g.ld;
                gm.c_rs = g.ld;
                mlvm_gemm_strided_f32(&gm);
            }
        for (r = b0; r < b1; r = next_image(&g, r, b1)) {
            const mlvm_index_t n = r / g.ty, r0 = r % g.ty, rows = next_image(&g, r, b1) - r;
            const mlvm_index_t y0 = m * r0, y1 = m * (r0 + rows) < p->oh ? m * (r0 + rows) : p->oh;
            float *on = out + n * p->o * plane;
            for (o = 0; o < p->o; ++o) {
                const float *mo = mm + o * g.ld + (r - b0) * g.tx;
                const float bo = bias != NULL ? bias[o] : 0.0f;
                if (m == 2)
                    output_transform(p, &g, r0, rows, mo, p->o * g.ld, bo, y, on + o * plane);
                else
                    output_transform4(p, &g, r0, rows, mo, p->o * g.ld, bo, y, on + o * plane);
            }
            if (fn != NULL)
                fn(ctx, n * p->o, p->o, y0 * p->ow, (y1 - y0) * p->ow, on + y0 * p->ow, plane);
        }
    }
}

void mlvm_conv2d_wino_f32(const mlvm_conv2d_t *p, const float *x, const float *u,
                          const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                          const void *ctx)
{
    wino_run(p, x, u, bias, out, ws, fn, ctx, 2);
}

void mlvm_conv2d_wino4_f32(const mlvm_conv2d_t *p, const float *x, const float *u,
                           const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                           const void *ctx)
{
    wino_run(p, x, u, bias, out, ws, fn, ctx, 4);
}
