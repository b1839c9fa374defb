/* Depthwise-like conv2d groups (one input channel, fewer than
 * MLVM_CONV_GEMM_ROWS outputs) with stride 1 and output rows as wide as the
 * input rows ("same" padding), with the sums in vector registers.
 *
 * Then tap (i, j) of flat output position q reads the channel's plane at
 * q + off(i, j), one constant per tap. A chunk of whole output rows (up to
 * MLVM_DW_VECS vectors: a keyword spotter's 25x5 map is one chunk) is summed
 * in MLVM_DW_VECS accumulators over every tap and stored once, so the output
 * is not read back and rewritten per tap. A lane whose input lies outside
 * the plane, or in a row it wraps into, is masked: not loaded (a masked
 * load neither reads nor faults there) and not added, so a NaN or inf
 * beyond the border cannot leak in. Bias first, then the taps in (i, j)
 * order, each one fused multiply-add (one rounding per tap: the row path,
 * conv.c's conv_rows, rounds the product too, so the two differ in the last
 * bits, within the bound the tests check). The 3x3 kernels of stride 1
 * and padding 1 differ: dw_sep3 (a map in AVX-512 registers) sums each
 * kernel row first, its neighbours outside the row zero (products w * 0
 * added: the same sums for finite weights); dw_rows3 loads the wrapped
 * lanes too and drops the kernel's left and right columns' sums there,
 * after the middle column's. */
#include "depthwise.h"

#if defined(MLVM_DW_REGS)
#include <immintrin.h>
#include <string.h>

#include "clamp.h"
#include "split2.h"
#include "window.h"

#define MLVM_DW_VECS 8
#define MLVM_DW_ROWS 16 /* the tallest kernel */

#if defined(__AVX512F__)
#define MLVM_DW_LANES 16
typedef __m512 dw_vec_t;
#define dw_set1 _mm512_set1_ps
#define dw_clamp mlvm_clamp512

/* acc + w * p[lane] in the lanes of bits, acc elsewhere */
static inline __attribute__((always_inline)) dw_vec_t dw_madd(dw_vec_t acc, dw_vec_t w,
                                                              const float *p, unsigned bits)
{
    const __mmask16 k = (__mmask16)bits;
    return _mm512_mask3_fmadd_ps(w, _mm512_maskz_loadu_ps(k, p), acc, k);
}

static inline __attribute__((always_inline)) void dw_store(float *p, dw_vec_t v, unsigned bits)
{
    _mm512_mask_storeu_ps(p, (__mmask16)bits, v);
}

/* acc + w * p[2 * lane] in the lanes of add, acc elsewhere; lo and hi
 * mask the loads of p[0 .. 16) and p[16 .. 32) */
static inline __attribute__((always_inline)) dw_vec_t dw_madd_even(dw_vec_t acc, dw_vec_t w,
                                                                   const float *p, unsigned lo,
                                                                   unsigned hi, unsigned add)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                           28, 30);
    const __m512 x = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps((__mmask16)lo, p), even,
                                            _mm512_maskz_loadu_ps((__mmask16)hi, p + 16));
    return _mm512_mask3_fmadd_ps(w, x, acc, (__mmask16)add);
}
#else /* AVX2 */
#define MLVM_DW_LANES 8
typedef __m256 dw_vec_t;
#define dw_set1 _mm256_set1_ps
#define dw_clamp mlvm_clamp256

static inline __attribute__((always_inline)) __m256i dw_lanes(unsigned bits)
{
    const __m256i sel = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)bits), sel), sel);
}

static inline __attribute__((always_inline)) dw_vec_t dw_madd(dw_vec_t acc, dw_vec_t w,
                                                              const float *p, unsigned bits)
{
    const __m256i m = dw_lanes(bits);
    const __m256 t = _mm256_fmadd_ps(w, _mm256_maskload_ps(p, m), acc);
    return _mm256_blendv_ps(acc, t, _mm256_castsi256_ps(m));
}

static inline __attribute__((always_inline)) void dw_store(float *p, dw_vec_t v, unsigned bits)
{
    _mm256_maskstore_ps(p, dw_lanes(bits), v);
}

static inline __attribute__((always_inline)) dw_vec_t dw_madd_even(dw_vec_t acc, dw_vec_t w,
                                                                   const float *p, unsigned lo,
                                                                   unsigned hi, unsigned add)
{
    const __m256 a = _mm256_maskload_ps(p, dw_lanes(lo)), b = _mm256_maskload_ps(p + 8, dw_lanes(hi));
    const __m256 x = mlvm_even8(a, b);
    const __m256i m = dw_lanes(add);
    const __m256 t = _mm256_fmadd_ps(w, x, acc);
    return _mm256_blendv_ps(acc, t, _mm256_castsi256_ps(m));
}
#endif

#define MLVM_DW_REGS_CHUNK (MLVM_DW_LANES * MLVM_DW_VECS)
#define MLVM_DW_FULL ((1u << MLVM_DW_LANES) - 1u)

/* Lanes [a, b) of the vector starting at lane s of a chunk, as bits. */
static inline unsigned dw_span(mlvm_index_t a, mlvm_index_t b, mlvm_index_t s)
{
    const mlvm_index_t lo = mlvm_imin(mlvm_imax(a - s, 0), MLVM_DW_LANES);
    const mlvm_index_t hi = mlvm_imin(mlvm_imax(b - s, 0), MLVM_DW_LANES);
    return hi > lo ? (MLVM_DW_FULL >> (MLVM_DW_LANES - (hi - lo))) << lo : 0u;
}

/* Lanes of the vector at flat position q0 of rows iw wide whose column has
 * a neighbour in its row on the left (side < 0) or the right (side > 0),
 * as bits (the 3x3 kernels' side columns: dw_sep3, dw_rows3). */
static inline unsigned dw_side_bits(mlvm_index_t q0, mlvm_index_t iw, int side)
{
    unsigned bits = 0;
    int l;
    for (l = 0; l < MLVM_DW_LANES; ++l) {
        const mlvm_index_t col = (q0 + l) % iw;
        bits |= (unsigned)(side < 0 ? col != 0 : col != iw - 1) << l;
    }
    return bits;
}

/* Stride 1 with rows as wide as the input's: flat chunks (dw_flat). */
static int flat_applies(const mlvm_conv2d_t *p)
{
    return p->sh == 1 && p->sw == 1 && p->ow == p->w && p->ow <= MLVM_DW_REGS_CHUNK;
}

/* Stride 2: each output row from its input rows, every other column. */
static int stride2_applies(const mlvm_conv2d_t *p)
{
    return p->sh == 2 && p->sw == 2 && p->ow <= MLVM_DW_REGS_CHUNK;
}

int mlvm_dw_regs_applies(const mlvm_conv2d_t *p)
{
    return p->c == p->groups && p->o / p->groups < MLVM_CONV_GEMM_ROWS && p->oh > 0
           && p->ow > 0 && p->kw <= MLVM_DW_TAPS && p->kh <= MLVM_DW_ROWS
           && (flat_applies(p) || stride2_applies(p));
}

/* One chunk of rows: which lanes each tap adds (its input inside the plane
 * and inside its row), which lanes are outputs, and the tap rows any lane
 * reads. The same for every channel. */
typedef struct dw_chunk {
    const mlvm_clamp_t *act; /* or NULL */
    mlvm_index_t r0;
    mlvm_index_t i0, i1;
    unsigned short bits[MLVM_DW_ROWS][MLVM_DW_TAPS][MLVM_DW_VECS];
    unsigned short out[MLVM_DW_VECS];
} dw_chunk_t;

/* nc output channels (1 or 2, a constant where this is inlined) over a
 * chunk: x[k] their input planes, w[k] their kh x kw taps, out[k] their
 * output planes; nv vectors, a constant too. Two channels share each
 * lane mask and tap offset (the same for every channel), and give the
 * multiply-adds twice the independent sums. */
static inline __attribute__((always_inline)) void dw_channel(const mlvm_conv2d_t *p,
                                                             const dw_chunk_t *ch, int nv, int nc,
                                                             const float *const *x,
                                                             const float *const *w,
                                                             const float *b, float *const *out)
{
    dw_vec_t acc[2][MLVM_DW_VECS];
    mlvm_index_t i, j;
    int v, k;
    for (k = 0; k < nc; ++k)
        for (v = 0; v < nv; ++v)
            acc[k][v] = dw_set1(b[k]);
    for (i = ch->i0; i < ch->i1; ++i)
        for (j = 0; j < p->kw; ++j) {
            const mlvm_index_t off = (ch->r0 + i * p->dh - p->pt) * p->w + j * p->dw - p->pl;
            dw_vec_t wv[2];
            for (k = 0; k < nc; ++k)
                wv[k] = dw_set1(w[k][i * p->kw + j]);
            for (v = 0; v < nv; ++v) {
                const unsigned bits = ch->bits[i][j][v];
                for (k = 0; k < nc; ++k)
                    acc[k][v] = dw_madd(acc[k][v], wv[k], x[k] + off + v * MLVM_DW_LANES, bits);
            }
        }
    if (ch->act != NULL)
        for (k = 0; k < nc; ++k)
            for (v = 0; v < nv; ++v)
                acc[k][v] = dw_clamp(ch->act, acc[k][v]);
    for (k = 0; k < nc; ++k)
        for (v = 0; v < nv; ++v)
            dw_store(out[k] + ch->r0 * p->ow + v * MLVM_DW_LANES, acc[k][v], ch->out[v]);
}

/* Channels in pairs where the registers hold both channels' sums (32
 * with AVX-512; 16 with AVX2: up to four vectors each). */
#if MLVM_DW_LANES == 16
#define MLVM_DW_PAIRS(nv) 1
#else
#define MLVM_DW_PAIRS(nv) ((nv) <= 4)
#endif

/* Case nv of a switch over the vector count (a constant in each case:
 * accumulators in registers, loops unrolled): every channel, in pairs while
 * `pairs`, through CALL(nv, nc, inputs, taps, biases, outputs); og, the
 * outputs per group, is the caller's (no division per channel). */
#define MLVM_DW_EACH_CHANNEL(nv, pairs, CALL)                                                     \
    case nv:                                                                                      \
        for (c = 0; (pairs) && c + 1 < p->o; c += 2) {                                           \
            const float *xs[2], *ws[2];                                                           \
            float bs[2], *os[2];                                                                  \
            channel_args(p, og, c, x, w, bias, xs, ws, bs, os, out);                              \
            channel_args(p, og, c + 1, x, w, bias, xs + 1, ws + 1, bs + 1, os + 1, out);          \
            CALL(nv, 2, xs, ws, bs, os);                                                          \
        }                                                                                         \
        for (; c < p->o; ++c) {                                                                   \
            const float *xs[1], *ws[1];                                                           \
            float bs[1], *os[1];                                                                  \
            channel_args(p, og, c, x, w, bias, xs, ws, bs, os, out);                              \
            CALL(nv, 1, xs, ws, bs, os);                                                          \
        }                                                                                         \
        break;

/* Every channel over one chunk. */
#define MLVM_DW_FLAT_CALL(nv, nc, xs, ws, bs, os) dw_channel(p, ch, nv, nc, xs, ws, bs, os)
#define MLVM_DW_CASE(nv) MLVM_DW_EACH_CHANNEL(nv, MLVM_DW_PAIRS(nv), MLVM_DW_FLAT_CALL)

/* Output channel c's input plane (og outputs per group) in image x. */
static inline const float *channel_plane(const mlvm_conv2d_t *p, mlvm_index_t og, mlvm_index_t c,
                                         const float *x)
{
    return x + c / og * p->h * p->w;
}

/* Output channel c's input plane, taps, bias and output plane. */
static inline void channel_args(const mlvm_conv2d_t *p, mlvm_index_t og, mlvm_index_t c,
                                const float *x, const float *w, const float *bias,
                                const float **xc, const float **wc, float *bc, float **oc,
                                float *out)
{
    *xc = channel_plane(p, og, c, x);
    *wc = w + c * p->kh * p->kw;
    *bc = bias != NULL ? bias[c] : 0.0f;
    *oc = out + c * p->oh * p->ow;
}

static void dw_channels(const mlvm_conv2d_t *p, const dw_chunk_t *ch, int nv, const float *x,
                        const float *w, const float *bias, float *out)
{
    const mlvm_index_t og = p->o / p->groups;
    mlvm_index_t c;
    switch (nv) {
        MLVM_DW_CASE(1)
        MLVM_DW_CASE(2)
        MLVM_DW_CASE(3)
        MLVM_DW_CASE(4)
        MLVM_DW_CASE(5)
        MLVM_DW_CASE(6)
        MLVM_DW_CASE(7)
        MLVM_DW_CASE(8)
    default:
        break;
    }
}

static void dw_flat(const mlvm_conv2d_t *p, const float *x, const float *w, const float *bias,
                    float *out, const mlvm_clamp_t *act)
{
    /* rows per chunk (the chunks as even as they can be: 12 rows of 12 are
     * two chunks of 6, not 10 and 2), lanes a chunk of that many rows holds */
    const mlvm_index_t most = mlvm_imin(p->oh, MLVM_DW_REGS_CHUNK / p->ow);
    const mlvm_index_t chunks = (p->oh + most - 1) / most;
    const mlvm_index_t rows = (p->oh + chunks - 1) / chunks, lanes = rows * p->ow;
    const int nv = (int)((lanes + MLVM_DW_LANES - 1) / MLVM_DW_LANES);
    unsigned short cols[MLVM_DW_TAPS][MLVM_DW_VECS];
    dw_chunk_t ch;
    mlvm_index_t i, j, r, lo, hi, n, b;
    int v;
    ch.act = act;
    /* per kernel column, the lanes whose input column lies in the row */
    for (j = 0; j < p->kw; ++j) {
        mlvm_valid_span(j * p->dw - p->pl, 1, p->w, p->ow, &lo, &hi);
        for (v = 0; v < nv; ++v) {
            cols[j][v] = 0;
            for (r = 0; r < rows; ++r)
                cols[j][v] |= (unsigned short)dw_span(r * p->ow + lo, r * p->ow + hi,
                                                      v * MLVM_DW_LANES);
        }
    }
    for (ch.r0 = 0; ch.r0 < p->oh; ch.r0 += rows) {
        n = mlvm_imin(rows, p->oh - ch.r0);
        ch.i0 = p->kh;
        ch.i1 = 0;
        for (i = 0; i < p->kh; ++i) {
            /* the chunk's rows whose input row for tap row i exists */
            mlvm_valid_span(ch.r0 + i * p->dh - p->pt, 1, p->h, n, &lo, &hi);
            if (lo < hi) {
                ch.i0 = mlvm_imin(ch.i0, i);
                ch.i1 = i + 1;
            }
            for (v = 0; v < nv; ++v) {
                const unsigned span = dw_span(lo * p->ow, hi * p->ow, v * MLVM_DW_LANES);
                for (j = 0; j < p->kw; ++j)
                    ch.bits[i][j][v] = (unsigned short)(cols[j][v] & span);
            }
        }
        for (v = 0; v < nv; ++v)
            ch.out[v] = (unsigned short)dw_span(0, n * p->ow, v * MLVM_DW_LANES);
        /* every image with the chunk's masks (built once per call); a
         * shorter last chunk: only the vectors its rows fill */
        for (b = 0; b < p->n; ++b)
            dw_channels(p, &ch, (int)((n * p->ow + MLVM_DW_LANES - 1) / MLVM_DW_LANES),
                        x + b * p->c * p->h * p->w, w, bias, out + b * p->o * p->oh * p->ow);
    }
}

/* Stride 2: a chunk is `rows` output rows of nv vectors each (rows * nv <=
 * MLVM_DW_VECS accumulators); output column q of a row reads input column
 * 2 q + j dw - pl, the even lanes of two loads. Per kernel column j and
 * vector v: the loads' lanes inside the input row, and the outputs that
 * exist and read inside it. A kernel row whose input row lies outside the
 * plane is skipped for that output row. */
typedef struct dw2_geom {
    const mlvm_clamp_t *act; /* or NULL */
    unsigned short lo[MLVM_DW_TAPS][MLVM_DW_VECS], hi[MLVM_DW_TAPS][MLVM_DW_VECS];
    unsigned short add[MLVM_DW_TAPS][MLVM_DW_VECS], out[MLVM_DW_VECS];
} dw2_geom_t;

static inline __attribute__((always_inline)) void dw2_chunk(const mlvm_conv2d_t *p,
                                                            const dw2_geom_t *g, int nv,
                                                            int rows, mlvm_index_t r0,
                                                            const float *x, const float *w,
                                                            float b, float *out)
{
    dw_vec_t acc[MLVM_DW_VECS];
    mlvm_index_t i, j;
    int r, v;
    for (v = 0; v < rows * nv; ++v)
        acc[v] = dw_set1(b);
    for (i = 0; i < p->kh; ++i) {
        /* the chunk's rows whose input row for tap row i lies in the plane,
         * as bits (the loops over rows and vectors unroll completely) */
        unsigned ok = 0;
        for (r = 0; r < rows; ++r) {
            const mlvm_index_t iy = 2 * (r0 + r) + i * p->dh - p->pt;
            ok |= (unsigned)(iy >= 0 && iy < p->h && r0 + r < p->oh) << r;
        }
        if (ok == 0)
            continue;
        for (j = 0; j < p->kw; ++j) {
            const dw_vec_t wv = dw_set1(w[i * p->kw + j]);
            /* input row of the chunk's first output row, column of output 0 */
            const mlvm_index_t at = (2 * r0 + i * p->dh - p->pt) * p->w + j * p->dw - p->pl;
            for (r = 0; r < rows; ++r) {
                if ((ok >> r & 1u) == 0)
                    continue;
                for (v = 0; v < nv; ++v)
                    acc[r * nv + v] = dw_madd_even(acc[r * nv + v], wv,
                                                   x + at + 2 * r * p->w + 2 * MLVM_DW_LANES * v,
                                                   g->lo[j][v], g->hi[j][v], g->add[j][v]);
            }
        }
    }
    if (g->act != NULL)
        for (v = 0; v < rows * nv; ++v)
            acc[v] = dw_clamp(g->act, acc[v]);
    for (r = 0; r < rows && r0 + r < p->oh; ++r)
        for (v = 0; v < nv; ++v)
            dw_store(out + (r0 + r) * p->ow + MLVM_DW_LANES * v, acc[r * nv + v], g->out[v]);
}

/* Every channel, chunk by chunk, the vector and row counts constants. */
#define MLVM_DW2_CASE(nv)                                                                         \
    case nv:                                                                                      \
        for (c = 0; c < p->o; ++c)                                                                \
            for (r0 = 0; r0 < p->oh; r0 += MLVM_DW_VECS / nv)                                    \
                dw2_chunk(p, g, nv, MLVM_DW_VECS / nv, r0, x + c / og * in_plane,                \
                          w + c * taps, bias != NULL ? bias[c] : 0.0f, out + c * plane);         \
        break;

static void dw2_channels(const mlvm_conv2d_t *p, const dw2_geom_t *g, int nv, const float *x,
                         const float *w, const float *bias, float *out)
{
    const mlvm_index_t og = p->o / p->groups, taps = p->kh * p->kw;
    const mlvm_index_t in_plane = p->h * p->w, plane = p->oh * p->ow;
    mlvm_index_t c, r0;
    switch (nv) {
        MLVM_DW2_CASE(1)
        MLVM_DW2_CASE(2)
        MLVM_DW2_CASE(3)
        MLVM_DW2_CASE(4)
        MLVM_DW2_CASE(5)
        MLVM_DW2_CASE(6)
        MLVM_DW2_CASE(7)
        MLVM_DW2_CASE(8)
    default:
        break;
    }
}

static void dw_stride2(const mlvm_conv2d_t *p, const float *x, const float *w,
                       const float *bias, float *out, const mlvm_clamp_t *act)
{
    const int nv = (int)((p->ow + MLVM_DW_LANES - 1) / MLVM_DW_LANES);
    dw2_geom_t g;
    mlvm_index_t j, lo, hi, b;
    int v;
    g.act = act;
    for (j = 0; j < p->kw; ++j) {
        const mlvm_index_t c0 = j * p->dw - p->pl; /* input column of output 0 */
        mlvm_valid_span(c0, 2, p->w, p->ow, &lo, &hi);
        for (v = 0; v < nv; ++v) {
            const mlvm_index_t s = 2 * MLVM_DW_LANES * (mlvm_index_t)v;
            g.lo[j][v] = (unsigned short)dw_span(-c0, p->w - c0, s);
            g.hi[j][v] = (unsigned short)dw_span(-c0, p->w - c0, s + MLVM_DW_LANES);
            g.add[j][v] = (unsigned short)dw_span(lo, hi, MLVM_DW_LANES * (mlvm_index_t)v);
        }
    }
    for (v = 0; v < nv; ++v)
        g.out[v] = (unsigned short)dw_span(0, p->ow, MLVM_DW_LANES * (mlvm_index_t)v);
    for (b = 0; b < p->n; ++b)
        dw2_channels(p, &g, nv, x + b * p->c * p->h * p->w, w, bias,
                     out + b * p->o * p->oh * p->ow);
}

#if MLVM_DW_LANES == 16
/* Stride 1 with the whole input and output planes in at most
 * MLVM_DW_PERM_VECS vectors and every tap's offset within one vector (a
 * keyword spotter's 25x5 map, MobileNet's 7x7 and 6x6): the input plane is
 * loaded once into registers, X[0] and those past its end zero (the rows
 * above and below), and a tap's window of output vector v is X[v .. v + 2)
 * shifted by its offset (vpermt2ps), where dw_flat loads it with a masked
 * load per tap and vector (most of them split across two cache lines).
 * Lanes whose column leaves the row are masked on the multiply-add, as
 * there, and the taps summed in the same order; the rows above and below
 * the plane add zero products. */
#define MLVM_DW_PERM_VECS 10

typedef struct dw_perm_tap {
    __m512i idx; /* the window's lanes in (X[v + lo], X[v + lo + 1]) */
    /* 3 * masked (some lane's column leaves the row) + 0 (the window is
     * X[v + 1] itself), 1 (X[v] and X[v + 1]: an offset < 0) or 2 (X[v + 1]
     * and X[v + 2]) */
    int kind;
    int j; /* kernel column: the masks' row */
} dw_perm_tap_t;

typedef struct dw_perm {
    const mlvm_clamp_t *act; /* or NULL */
    int taps;
    unsigned short in[MLVM_DW_PERM_VECS + 1], out[MLVM_DW_PERM_VECS];
    __mmask16 cols[MLVM_DW_TAPS][MLVM_DW_PERM_VECS];
    dw_perm_tap_t tap[MLVM_DW_ROWS * MLVM_DW_TAPS];
} dw_perm_t;

static int perm_applies(const mlvm_conv2d_t *p)
{
    const mlvm_index_t most = MLVM_DW_PERM_VECS * MLVM_DW_LANES;
    mlvm_index_t i, j, off;
    if (!flat_applies(p) || p->h * p->w > most || p->oh * p->ow > most)
        return 0;
    for (i = 0; i < p->kh; ++i)
        for (j = 0; j < p->kw; ++j) {
            off = (i * p->dh - p->pt) * p->w + j * p->dw - p->pl;
            if (off < -MLVM_DW_LANES || off > MLVM_DW_LANES)
                return 0;
        }
    return 1;
}

/* Tap tp's multiply-adds into the sums of nc channels: the window of
 * output vector v is xv[k][v + lo .. v + lo + 2) shifted (lo a constant
 * where this is inlined; -1: xv[k][v + 1] itself), masked by m. */
static inline __attribute__((always_inline)) void perm_tap(__m512 (*acc)[MLVM_DW_PERM_VECS],
                                                           __m512 (*xv)[MLVM_DW_PERM_VECS + 2],
                                                           const __m512 *wv, __m512i idx,
                                                           const __mmask16 *m, int masked,
                                                           int lo, int nv, int nc)
{
    int v, k;
    for (v = 0; v < nv; ++v)
        for (k = 0; k < nc; ++k) {
            const __m512 win = lo < 0 ? xv[k][v + 1]
                                      : _mm512_permutex2var_ps(xv[k][v + lo], idx, xv[k][v + lo + 1]);
            acc[k][v] = masked ? _mm512_mask3_fmadd_ps(wv[k], win, acc[k][v], m[v])
                               : _mm512_fmadd_ps(wv[k], win, acc[k][v]);
        }
}

/* nc output channels (1 or 2, a constant where this is inlined): x[k]
 * their input planes, w[k] their taps, out[k] their output planes; nv
 * output vectors, a constant too. Two channels share each tap's masks and
 * give the multiply-adds twice the independent sums. */
static inline __attribute__((always_inline)) void perm_channel(const dw_perm_t *g, int nv, int nc,
                                                               const float *const *x,
                                                               const float *const *w,
                                                               const float *b, float *const *out)
{
    __m512 xv[2][MLVM_DW_PERM_VECS + 2], acc[2][MLVM_DW_PERM_VECS];
    int t, v, k;
    for (k = 0; k < nc; ++k) {
        /* past the input's vectors, a load of no lanes: zero */
        xv[k][0] = _mm512_setzero_ps();
        for (v = 1; v < nv + 2; ++v)
            xv[k][v] = _mm512_maskz_loadu_ps((__mmask16)g->in[v - 1], x[k] + (v - 1) * MLVM_DW_LANES);
        for (v = 0; v < nv; ++v)
            acc[k][v] = _mm512_set1_ps(b[k]);
    }
    for (t = 0; t < g->taps; ++t) {
        const dw_perm_tap_t *tp = &g->tap[t];
        const __mmask16 *m = g->cols[tp->j];
        __m512 wv[2];
        for (k = 0; k < nc; ++k)
            wv[k] = _mm512_set1_ps(w[k][t]);
        /* one loop per kind of tap: no test inside */
        switch (tp->kind) {
        case 0: perm_tap(acc, xv, wv, tp->idx, m, 0, -1, nv, nc); break;
        case 1: perm_tap(acc, xv, wv, tp->idx, m, 0, 0, nv, nc); break;
        case 2: perm_tap(acc, xv, wv, tp->idx, m, 0, 1, nv, nc); break;
        case 3: perm_tap(acc, xv, wv, tp->idx, m, 1, -1, nv, nc); break;
        case 4: perm_tap(acc, xv, wv, tp->idx, m, 1, 0, nv, nc); break;
        default: perm_tap(acc, xv, wv, tp->idx, m, 1, 1, nv, nc); break;
        }
    }
    if (g->act != NULL)
        for (k = 0; k < nc; ++k)
            for (v = 0; v < nv; ++v)
                acc[k][v] = dw_clamp(g->act, acc[k][v]);
    for (k = 0; k < nc; ++k)
        for (v = 0; v < nv; ++v)
            dw_store(out[k] + v * MLVM_DW_LANES, acc[k][v], g->out[v]);
}

/* Every channel; in pairs where the registers hold both channels' planes
 * and sums. */
#define MLVM_DW_PERM_CALL(nv, nc, xs, ws, bs, os) perm_channel(g, nv, nc, xs, ws, bs, os)
#define MLVM_DW_PERM_CASE(nv) MLVM_DW_EACH_CHANNEL(nv, (nv) <= 5, MLVM_DW_PERM_CALL)

static void perm_channels(const mlvm_conv2d_t *p, const dw_perm_t *g, int nv, const float *x,
                          const float *w, const float *bias, float *out)
{
    const mlvm_index_t og = p->o / p->groups;
    mlvm_index_t c;
    switch (nv) {
        MLVM_DW_PERM_CASE(1)
        MLVM_DW_PERM_CASE(2)
        MLVM_DW_PERM_CASE(3)
        MLVM_DW_PERM_CASE(4)
        MLVM_DW_PERM_CASE(5)
        MLVM_DW_PERM_CASE(6)
        MLVM_DW_PERM_CASE(7)
        MLVM_DW_PERM_CASE(8)
        MLVM_DW_PERM_CASE(9)
        MLVM_DW_PERM_CASE(10)
    default:
        break;
    }
}

static void dw_perm(const mlvm_conv2d_t *p, const float *x, const float *w, const float *bias,
                    float *out, const mlvm_clamp_t *act)
{
    const mlvm_index_t in_plane = p->h * p->w, plane = p->oh * p->ow;
    const int nv = (int)((plane + MLVM_DW_LANES - 1) / MLVM_DW_LANES);
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    dw_perm_t g;
    mlvm_index_t i, j, q, b;
    int v, t = 0;
    g.act = act;
    for (v = 0; v <= MLVM_DW_PERM_VECS; ++v) /* none past the input */
        g.in[v] = (unsigned short)dw_span(0, in_plane, v * MLVM_DW_LANES);
    for (v = 0; v < nv; ++v)
        g.out[v] = (unsigned short)dw_span(0, plane, v * MLVM_DW_LANES);
    /* per kernel column, the output lanes whose input column lies in the row */
    for (j = 0; j < p->kw; ++j)
        for (v = 0; v < nv; ++v) {
            unsigned bits = MLVM_DW_FULL;
            for (q = v * MLVM_DW_LANES; q < (v + 1) * MLVM_DW_LANES && q < plane; ++q) {
                const mlvm_index_t col = q % p->ow + j * p->dw - p->pl;
                if (col < 0 || col >= p->w)
                    bits &= ~(1u << (q - v * MLVM_DW_LANES));
            }
            g.cols[j][v] = (__mmask16)bits;
        }
    for (i = 0; i < p->kh; ++i)
        for (j = 0; j < p->kw; ++j, ++t) {
            const mlvm_index_t off = (i * p->dh - p->pt) * p->w + j * p->dw - p->pl;
            const int s = (int)(off < 0 ? off + MLVM_DW_LANES : off);
            int masked = 0;
            for (v = 0; v < nv; ++v)
                masked |= g.cols[j][v] != MLVM_DW_FULL;
            g.tap[t].kind = 3 * masked + (off == 0 ? 0 : off < 0 ? 1 : 2);
            g.tap[t].idx = _mm512_add_epi32(iota, _mm512_set1_epi32(s));
            g.tap[t].j = (int)j;
        }
    g.taps = t;
    for (b = 0; b < p->n; ++b)
        perm_channels(p, &g, nv, x + b * p->c * in_plane, w, bias, out + b * p->o * plane);
}

/* perm_applies' maps with a 3x3 kernel, stride and dilation 1 and "same"
 * padding at the top and left (pt = pl = 1), by rows of the kernel: each
 * input vector's neighbours to the left and right (valignd by one lane,
 * zero where the column leaves the row; past the plane the loads are), the
 * three kernel rows' sums of them at every position (h0, h1 from the bias,
 * h2), then an output vector is h1 + h0 one row up + h2 one row down
 * (vpermt2ps by w lanes). Two shifts per input vector and two per output
 * vector, where dw_perm shifts the input once per tap. The sums' order
 * differs from dw_perm's (kernel rows first), within the same bound. */
typedef struct dw_sep3 {
    const mlvm_clamp_t *act; /* or NULL */
    __m512i up, down;        /* lanes of (h[v - 1], h[v]) one row up; (h[v], h[v + 1]) down */
    __mmask16 in[MLVM_DW_PERM_VECS + 2], left[MLVM_DW_PERM_VECS + 1],
        right[MLVM_DW_PERM_VECS + 1], out[MLVM_DW_PERM_VECS];
} dw_sep3_t;

static int sep3_applies(const mlvm_conv2d_t *p)
{
    return perm_applies(p) && p->kh == 3 && p->kw == 3 && p->dh == 1 && p->dw == 1 && p->pt == 1
           && p->pl == 1;
}

/* (lo, hi) shifted down by `lanes` (1 or 15, a constant where this is
 * inlined: valignd takes an immediate), lanes outside k zero */
static inline __attribute__((always_inline)) __m512 sep3_align(__mmask16 k, __m512 hi, __m512 lo,
                                                               int lanes)
{
    const __m512i a = _mm512_castps_si512(hi), b = _mm512_castps_si512(lo);
    return _mm512_castsi512_ps(lanes == 1 ? _mm512_maskz_alignr_epi32(k, a, b, 1)
                                          : _mm512_maskz_alignr_epi32(k, a, b, 15));
}

/* One channel: x its input plane, w its nine taps, out its output plane;
 * nv output vectors, a constant where this is inlined. */
static inline __attribute__((always_inline)) void sep3_channel(const dw_sep3_t *g, int nv,
                                                               const float *x, const float *w,
                                                               float b, float *out)
{
    __m512 xv[MLVM_DW_PERM_VECS + 2], h0[MLVM_DW_PERM_VECS + 1], h1[MLVM_DW_PERM_VECS + 1];
    __m512 h2[MLVM_DW_PERM_VECS + 1];
    const __m512 zero = _mm512_setzero_ps();
    int v;
    for (v = 0; v < nv + 2; ++v)
        xv[v] = _mm512_maskz_loadu_ps(g->in[v], x + v * MLVM_DW_LANES);
    /* every row sum first (independent chains; the outputs made as soon as
     * their sums were known took 1.5x the time) */
    for (v = 0; v <= nv; ++v) {
        const __m512 l = sep3_align(g->left[v], xv[v], v > 0 ? xv[v - 1] : zero, 15);
        const __m512 r = sep3_align(g->right[v], xv[v + 1], xv[v], 1);
        h2[v] = _mm512_fmadd_ps(_mm512_set1_ps(w[8]), r,
                                _mm512_fmadd_ps(_mm512_set1_ps(w[7]), xv[v],
                                                _mm512_mul_ps(_mm512_set1_ps(w[6]), l)));
        if (v == nv)
            break;
        h0[v] = _mm512_fmadd_ps(_mm512_set1_ps(w[2]), r,
                                _mm512_fmadd_ps(_mm512_set1_ps(w[1]), xv[v],
                                                _mm512_mul_ps(_mm512_set1_ps(w[0]), l)));
        h1[v] = _mm512_fmadd_ps(_mm512_set1_ps(w[5]), r,
                                _mm512_fmadd_ps(_mm512_set1_ps(w[4]), xv[v],
                                                _mm512_fmadd_ps(_mm512_set1_ps(w[3]), l,
                                                                _mm512_set1_ps(b))));
    }
    for (v = 0; v < nv; ++v) {
        __m512 o = _mm512_add_ps(h1[v],
                                 _mm512_permutex2var_ps(v > 0 ? h0[v - 1] : zero, g->up, h0[v]));
        o = _mm512_add_ps(o, _mm512_permutex2var_ps(h2[v], g->down, h2[v + 1]));
        if (g->act != NULL)
            o = dw_clamp(g->act, o);
        dw_store(out + v * MLVM_DW_LANES, o, g->out[v]);
    }
}

/* Every channel, one at a time (one channel's sums fill the registers). */
#define MLVM_DW_SEP3_CALL(nv, nc, xs, ws, bs, os) sep3_channel(g, nv, xs[0], ws[0], bs[0], os[0])
#define MLVM_DW_SEP3_CASE(nv) MLVM_DW_EACH_CHANNEL(nv, 0, MLVM_DW_SEP3_CALL)

static void sep3_channels(const mlvm_conv2d_t *p, const dw_sep3_t *g, int nv, const float *x,
                          const float *w, const float *bias, float *out)
{
    const mlvm_index_t og = p->o / p->groups;
    mlvm_index_t c;
    switch (nv) {
        MLVM_DW_SEP3_CASE(1)
        MLVM_DW_SEP3_CASE(2)
        MLVM_DW_SEP3_CASE(3)
        MLVM_DW_SEP3_CASE(4)
        MLVM_DW_SEP3_CASE(5)
        MLVM_DW_SEP3_CASE(6)
        MLVM_DW_SEP3_CASE(7)
        MLVM_DW_SEP3_CASE(8)
        MLVM_DW_SEP3_CASE(9)
        MLVM_DW_SEP3_CASE(10)
    default:
        break;
    }
}

static void dw_sep3(const mlvm_conv2d_t *p, const float *x, const float *w, const float *bias,
                    float *out, const mlvm_clamp_t *act)
{
    const mlvm_index_t in_plane = p->h * p->w, plane = p->oh * p->ow, iw = p->w;
    const int nv = (int)((plane + MLVM_DW_LANES - 1) / MLVM_DW_LANES);
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    dw_sep3_t g;
    mlvm_index_t b;
    int v;
    g.act = act;
    g.up = _mm512_add_epi32(iota, _mm512_set1_epi32((int)(MLVM_DW_LANES - iw)));
    g.down = _mm512_add_epi32(iota, _mm512_set1_epi32((int)iw));
    for (v = 0; v < nv + 2; ++v)
        g.in[v] = (__mmask16)dw_span(0, in_plane, v * MLVM_DW_LANES);
    for (v = 0; v < nv; ++v)
        g.out[v] = (__mmask16)dw_span(0, plane, v * MLVM_DW_LANES);
    /* by column alone: past the plane, both neighbours are loads of no
     * lanes (zero) or, at its first position, column 0's left one */
    for (v = 0; v <= nv; ++v) {
        g.left[v] = (__mmask16)dw_side_bits(v * MLVM_DW_LANES, iw, -1);
        g.right[v] = (__mmask16)dw_side_bits(v * MLVM_DW_LANES, iw, 1);
    }
    for (b = 0; b < p->n; ++b)
        sep3_channels(p, &g, nv, x + b * p->c * in_plane, w, bias, out + b * p->o * plane);
}
#else
#define perm_applies(p) ((void)(p), 0)
#define dw_perm(p, x, w, bias, out, act) ((void)0)
#define sep3_applies(p) ((void)(p), 0)
#define dw_sep3(p, x, w, bias, out, act) ((void)0)
#endif

/* A 3x3 kernel of stride and dilation 1 with padding 1 at the top and left
 * over rows as wide as the input's (with AVX-512 the maps dw_sep3 leaves:
 * past ten vectors, or rows of 16 and more; every such map with AVX2):
 * each output vector from its nine taps loaded where they lie in the input
 * plane (unaligned loads; masked only for the vectors whose taps reach
 * past the plane, and with AVX2 none where the plane is small enough to
 * be copied between zeros first), the kernel's left and right columns
 * summed apart and added only in the lanes whose column has that
 * neighbour in the row (the masks of the vector's first column, a table
 * built per call), where
 * dw_flat masks each tap's load and multiply-add. The sums' order: bias
 * and the middle column, then the left column's and the right column's
 * sums. */
#if MLVM_DW_LANES == 16
typedef __mmask16 rows3_cols_t;
#define rows3_loadu _mm512_loadu_ps
#define rows3_storeu _mm512_storeu_ps
#define rows3_fmadd _mm512_fmadd_ps
#define rows3_mul _mm512_mul_ps
#define rows3_maskz_load(bits, p) _mm512_maskz_loadu_ps((__mmask16)(bits), p)
#define rows3_cols_of(bits) ((__mmask16)(bits))
#define rows3_add_in(acc, m, v) _mm512_mask_add_ps(acc, m, acc, v)
#else
typedef __m256 rows3_cols_t;
#define rows3_loadu _mm256_loadu_ps
#define rows3_storeu _mm256_storeu_ps
#define rows3_fmadd _mm256_fmadd_ps
#define rows3_mul _mm256_mul_ps
#define rows3_maskz_load(bits, p) _mm256_maskload_ps(p, dw_lanes(bits))
#define rows3_cols_of(bits) _mm256_castsi256_ps(dw_lanes(bits))
#define rows3_add_in(acc, m, v) _mm256_add_ps(acc, _mm256_and_ps(v, m))
#endif

static int rows3_applies(const mlvm_conv2d_t *p)
{
    return flat_applies(p) && p->kh == 3 && p->kw == 3 && p->dh == 1 && p->dw == 1 && p->pt == 1
           && p->pl == 1;
}

/* x[at .. at + LANES), lanes outside [0, n) zero (not read) unless inside */
static inline __attribute__((always_inline)) dw_vec_t rows3_load(const float *x, mlvm_index_t at,
                                                                 mlvm_index_t n, int inside)
{
    return inside ? rows3_loadu(x + at) : rows3_maskz_load(dw_span(0, n, at), x + at);
}

/* Output vector at q of one channel (x its plane, n = h * w floats; wv its
 * taps; cols: the lanes with a left and a right neighbour). */
static inline __attribute__((always_inline)) dw_vec_t
rows3_vector(const float *x, mlvm_index_t q, mlvm_index_t iw, mlvm_index_t n, const dw_vec_t *wv,
             dw_vec_t b, const rows3_cols_t *cols, int inside)
{
    dw_vec_t mid = b, left, right;
    mid = rows3_fmadd(wv[1], rows3_load(x, q - iw, n, inside), mid);
    mid = rows3_fmadd(wv[4], rows3_load(x, q, n, inside), mid);
    mid = rows3_fmadd(wv[7], rows3_load(x, q + iw, n, inside), mid);
    left = rows3_mul(wv[0], rows3_load(x, q - iw - 1, n, inside));
    left = rows3_fmadd(wv[3], rows3_load(x, q - 1, n, inside), left);
    left = rows3_fmadd(wv[6], rows3_load(x, q + iw - 1, n, inside), left);
    right = rows3_mul(wv[2], rows3_load(x, q - iw + 1, n, inside));
    right = rows3_fmadd(wv[5], rows3_load(x, q + 1, n, inside), right);
    right = rows3_fmadd(wv[8], rows3_load(x, q + iw + 1, n, inside), right);
    mid = rows3_add_in(mid, cols[0], left);
    return rows3_add_in(mid, cols[1], right);
}

/* The output vectors [q0, q1) of one channel (q0 a multiple of LANES, t
 * its place in the cycle of cols) of a plane of n floats at xc, into oc:
 * their taps masked unless `inside`, the last one stored in part where it
 * ends past the plane unless `whole` (all of them whole). inside, whole
 * and whether act is NULL are constants where this is inlined, so that
 * the loop over the vectors inside the plane holds nothing else. */
static inline __attribute__((always_inline)) void
rows3_run(const float *xc, float *oc, mlvm_index_t q0, mlvm_index_t q1, mlvm_index_t iw,
          mlvm_index_t n, mlvm_index_t plane, const dw_vec_t *wv, dw_vec_t bv,
          rows3_cols_t (*cols)[2], mlvm_index_t t, mlvm_index_t period, const mlvm_clamp_t *act,
          int inside, int whole)
{
    mlvm_index_t q;
    for (q = q0; q < q1; q += MLVM_DW_LANES) {
        dw_vec_t v = rows3_vector(xc, q, iw, n, wv, bv, cols[t], inside);
        if (act != NULL)
            v = dw_clamp(act, v);
        if (whole || q + MLVM_DW_LANES <= plane)
            rows3_storeu(oc + q, v);
        else
            dw_store(oc + q, v, dw_span(0, plane - q, 0));
        t = t + 1 == period ? 0 : t + 1;
    }
}

/* q rounded up to a whole vector of lanes */
static inline mlvm_index_t dw_vectors_to(mlvm_index_t q)
{
    return mlvm_ceil_div(q, MLVM_DW_LANES) * MLVM_DW_LANES;
}

/* With AVX2, planes of at most this many floats, with the zeros the taps
 * read around them, are copied per channel (on the stack) and read
 * unmasked: AVX2 builds each masked load's mask from bits, and with the
 * copy a keyword spotter's 25x5 maps and MobileNet's 24x24 to 3x3 ones
 * took 0.67-0.82 of the time. AVX-512's masks are cheap; the copy was
 * slower there (1.03-1.19x). Two copies take turns: the next channel's
 * plane is copied before this one's taps run, whose unaligned loads of a
 * copy just made had waited on its stores (none forwards to a load that
 * straddles two): 0.75-0.90x the time on those maps. */
#define MLVM_DW_ROWS3_COPY 2048

static void dw_rows3(const mlvm_conv2d_t *p, const float *x, const float *w, const float *bias,
                     float *out, const mlvm_clamp_t *act)
{
    const mlvm_index_t iw = p->w, n = p->h * iw, plane = p->oh * p->ow, og = p->o / p->groups;
    /* the copy: iw + 1 zeros, the plane, then zeros to the last vector's
     * last tap */
    const mlvm_index_t head = iw + 1,
                       tail = mlvm_imax(dw_vectors_to(plane) + iw + 1 - n, 0);
    const int copy = MLVM_DW_LANES == 8 && head + n + tail <= MLVM_DW_ROWS3_COPY;
    float plane_copy[2][MLVM_DW_ROWS3_COPY];
    /* whole vectors from lo to hi read every tap inside the plane (or its
     * copy): the others are masked unless copied, the last one perhaps stored
     * in part; with one row of 16 or more columns lo may pass the plane */
    const mlvm_index_t inner = copy ? 0 : iw + 1, outer = copy ? plane : n - iw - MLVM_DW_LANES;
    const mlvm_index_t lo = dw_vectors_to(inner);
    const mlvm_index_t hi =
        mlvm_imax(lo, dw_vectors_to(mlvm_imin(outer, plane - MLVM_DW_LANES + 1)));
    rows3_cols_t cols[MLVM_DW_REGS_CHUNK][2];
    mlvm_index_t c, b, t, t_lo, t_hi, period = iw, l, j;
    /* vector t's first column is LANES t % iw, a cycle of iw / gcd(iw,
     * LANES) vectors; per vector of the cycle, the lanes whose column has a
     * left (right) neighbour in the row */
    for (l = 1; l < MLVM_DW_LANES && iw % (2 * l) == 0; l *= 2)
        period /= 2;
    for (t = 0; t < period; ++t) {
        cols[t][0] = rows3_cols_of(dw_side_bits(MLVM_DW_LANES * t, iw, -1));
        cols[t][1] = rows3_cols_of(dw_side_bits(MLVM_DW_LANES * t, iw, 1));
    }
    t_lo = lo / MLVM_DW_LANES % period, t_hi = hi / MLVM_DW_LANES % period;
    if (copy) {
        for (j = 0; j < 2; ++j) {
            memset(plane_copy[j], 0, (size_t)head * sizeof(float));
            memset(plane_copy[j] + head + n, 0, (size_t)tail * sizeof(float));
        }
        if (p->n > 0 && p->o > 0) /* (an empty batch has no plane to read) */
            memcpy(plane_copy[0] + head, x, (size_t)n * sizeof(float));
    }
    for (b = 0, j = 0; b < p->n; ++b)
        for (c = 0; c < p->o; ++c, ++j) {
            const float *xc, *wc;
            float bc, *oc;
            dw_vec_t wv[9], bv;
            int k;
            channel_args(p, og, c, x + b * p->c * n, w, bias, &xc, &wc, &bc, &oc,
                         out + b * p->o * plane);
            if (copy) {
                /* the next channel's plane copied now, this one's a channel
                 * ago: its stores long done when the taps read them */
                const mlvm_index_t nb = c + 1 < p->o ? b : b + 1, nc = c + 1 < p->o ? c + 1 : 0;
                if (nb < p->n)
                    memcpy(plane_copy[(j + 1) & 1] + head,
                           channel_plane(p, og, nc, x + nb * p->c * n), (size_t)n * sizeof(float));
                xc = plane_copy[j & 1] + head;
            }
            bv = dw_set1(bc);
            for (k = 0; k < 9; ++k)
                wv[k] = dw_set1(wc[k]);
            rows3_run(xc, oc, 0, mlvm_imin(lo, plane), iw, n, plane, wv, bv, cols, 0, period, act,
                      copy, 0);
            if (act != NULL)
                rows3_run(xc, oc, lo, hi, iw, n, plane, wv, bv, cols, t_lo, period, act, 1, 1);
            else
                rows3_run(xc, oc, lo, hi, iw, n, plane, wv, bv, cols, t_lo, period, NULL, 1, 1);
            rows3_run(xc, oc, hi, plane, iw, n, plane, wv, bv, cols, t_hi, period, act, copy, 0);
        }
}

void mlvm_dw_regs_f32(const mlvm_conv2d_t *p, const float *x, const float *w, const float *bias,
                      float *out, const mlvm_clamp_t *act)
{
    if (sep3_applies(p))
        dw_sep3(p, x, w, bias, out, act);
    else if (rows3_applies(p))
        dw_rows3(p, x, w, bias, out, act);
    else if (perm_applies(p))
        dw_perm(p, x, w, bias, out, act);
    else if (flat_applies(p))
        dw_flat(p, x, w, bias, out, act);
    else
        dw_stride2(p, x, w, bias, out, act);
}
#else
typedef int mlvm_dw_regs_not_built; /* ISO C: a translation unit is never empty */
#endif
