/* mlvm.qconv2d with a workspace (mlvm_qconv2d_ws_8): the input copied once
 * per call, padded, so that every tap is read in place, as conv.c's direct
 * path does for f32.
 *
 * Groups of 4 or more output channels are one integer GEMM per image and
 * group. The copy interleaves channels by four ([c / 4][phase][hq][wq][4]
 * bytes, x as unsigned: x ^ 0x80 for i8), so that one 32-bit lane holds
 * four channels of one position at one (ky, kx): the lanes of 16
 * consecutive positions are 64 consecutive bytes, read in place at the
 * tap's offset. The weights are reordered to match once per call
 * (w4[o][k-quad] = four channels' bytes of one (ky, kx), zero past cg), so
 * the lane product is one vpdpbusd (AVX-512 VNNI, AVX-VNNI) or two
 * vpmaddwd of widened bytes (AVX2), and sums of four products in plain C
 * elsewhere. Padding holds the zero point, and the zero point's share
 * (zx * sum_t w[o, t], per output channel) leaves the inner loop:
 * sum_t w (x - zx) = sum_t w x - zx sum_t w. Sums wrap modulo 2^32, like
 * the reference's int32, on every path.
 *
 * Groups with fewer output channels (depthwise) add their taps over chunks
 * of 64 positions of planar copies (all channels copied at once).
 *
 * The GEMM path needs i8 weights with zero points of 0 (what quantizers
 * write for per-channel weights); the others take mlvm_qconv2d_8. */
#include <string.h>

#include "mlvm/kernels.h"

#if !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX2__)
#include <immintrin.h>
#endif

#if !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX512F__) && defined(__AVX512VNNI__)
#include <immintrin.h>
#define MLVM_Q_ZMM 1 /* vpdpbusd, 16 lanes */
#define MLVM_Q_MR 8
#define MLVM_Q_NR 32
#elif !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX2__) && defined(__AVXVNNI__)
#include <immintrin.h>
#define MLVM_Q_VNNI 1 /* vpdpbusd (VEX), 8 lanes */
#define MLVM_Q_MR 6
#define MLVM_Q_NR 16
#elif !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX2__)
#include <immintrin.h>
#define MLVM_Q_AVX2 1 /* vpmaddwd of widened bytes */
#define MLVM_Q_MR 6
#define MLVM_Q_NR 8
#else
#define MLVM_Q_MR 4
#define MLVM_Q_NR 4
#endif

#define MLVM_QW_ALIGN 64
#define MLVM_QW_SLACK 256 /* bytes after the copy: the last tile's and chunk's reads */
#define MLVM_QW_CHUNK 64  /* positions per chunk of the taps path */
#define MLVM_QW_GEMM_ROWS 4

const char *mlvm_qkernel_path(void)
{
#if defined(MLVM_Q_ZMM)
    return "avx512-vnni";
#elif defined(MLVM_Q_VNNI)
    return "avx-vnni";
#elif defined(MLVM_Q_AVX2)
    return "avx2";
#else
    return "portable";
#endif
}

static size_t qw_align(size_t n) { return (n + MLVM_QW_ALIGN - 1) / MLVM_QW_ALIGN * MLVM_QW_ALIGN; }
static mlvm_index_t qmin(mlvm_index_t a, mlvm_index_t b) { return a < b ? a : b; }

typedef struct qgeom {
    mlvm_index_t hq, wq, phases, plane; /* phase planes of one channel (quad) */
    mlvm_index_t n;                     /* flat outputs per channel: (oh - 1) * wq + ow */
    mlvm_index_t quads;                 /* GEMM path: channel quads of a group, else 0 */
    mlvm_index_t k;                     /* taps: quads * kh * kw, or cg * kh * kw */
    size_t off_bytes, in_bytes, w_bytes, out_bytes;
} qgeom_t;

static void qgeom(const mlvm_qconv2d_t *p, qgeom_t *g)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups;
    const mlvm_index_t hp = (p->oh - 1) * p->sh + (p->kh - 1) * p->dh + 1;
    const mlvm_index_t wp = (p->ow - 1) * p->sw + (p->kw - 1) * p->dw + 1;
    const int gemm = og >= MLVM_QW_GEMM_ROWS;
    g->hq = (hp + p->sh - 1) / p->sh;
    g->wq = (wp + p->sw - 1) / p->sw;
    g->phases = p->sh * p->sw;
    g->plane = g->hq * g->wq;
    g->n = (p->oh - 1) * g->wq + p->ow;
    g->quads = gemm ? (cg + 3) / 4 : 0;
    g->k = (gemm ? g->quads : cg) * p->kh * p->kw;
    g->off_bytes = qw_align((size_t)g->k * 8);
    g->in_bytes = qw_align((size_t)(gemm ? g->quads * 4 * g->phases * g->plane
                                         : p->c * g->phases * g->plane) + MLVM_QW_SLACK);
    /* GEMM: reordered weights of every output channel and their zx shares;
     * taps: one output channel's weights less its zero point */
    g->w_bytes = gemm ? qw_align((size_t)(p->o * g->k) * 4) + qw_align((size_t)p->o * 4)
                      : qw_align((size_t)g->k * 4);
    g->out_bytes = g->wq == p->ow ? 0 : qw_align((size_t)(og * g->n) * 4);
}

size_t mlvm_qconv2d_workspace(const mlvm_qconv2d_t *p)
{
    qgeom_t g;
    if (!p->w_signed || p->oh <= 0 || p->ow <= 0)
        return 0;
    qgeom(p, &g);
    return g.off_bytes + g.in_bytes + g.w_bytes + g.out_bytes;
}

/* The rows r * sh + a - pt of x that lie in [0, h) for r in [0, hq):
 * [*lo, *hi) (and the same for columns). */
static void q_span(mlvm_index_t i0, mlvm_index_t s, mlvm_index_t len, mlvm_index_t n,
                   mlvm_index_t *lo, mlvm_index_t *hi)
{
    mlvm_index_t l = 0, h;
    while (l < n && i0 + l * s < 0)
        ++l;
    h = l;
    while (h < n && i0 + h * s < len)
        ++h;
    *lo = l;
    *hi = h;
}

/* Channels [c0, c0 + cn) of one image into phase planes of `lanes`-byte
 * positions (lanes 4: channel c at byte c % 4 of quad c / 4; lanes 1:
 * planar), padding = zxu. Bytes are x ^ flip (0x80 makes i8 unsigned). */
static void q_copy(const mlvm_qconv2d_t *p, const qgeom_t *g, const uint8_t *x, mlvm_index_t c0,
                   mlvm_index_t cn, int lanes, uint8_t flip, uint8_t zxu, uint8_t *xs)
{
    const mlvm_index_t wq = g->wq, quads = (cn + lanes - 1) / lanes;
    mlvm_index_t a, b, r, col, c, r0, r1, lo, hi;
    memset(xs, zxu, (size_t)(quads * lanes * g->phases * g->plane));
    for (a = 0; a < p->sh; ++a)
        for (b = 0; b < p->sw; ++b) {
            q_span(a - p->pt, p->sh, p->h, g->hq, &r0, &r1);
            q_span(b - p->pl, p->sw, p->w, wq, &lo, &hi);
            for (c = 0; c < cn; ++c) {
                const uint8_t *xc = x + (c0 + c) * p->h * p->w;
                uint8_t *dst = xs + ((c / lanes * g->phases + a * p->sw + b) * g->plane) * lanes
                               + c % lanes;
                for (r = r0; r < r1; ++r) {
                    const uint8_t *xr = xc + (r * p->sh + a - p->pt) * p->w + b - p->pl;
                    uint8_t *d = dst + r * wq * lanes;
                    for (col = lo; col < hi; ++col)
                        d[col * lanes] = (uint8_t)(xr[col * p->sw] ^ flip);
                }
            }
        }
}

/* Where tap t of output position 0 lies, in lanes: tap (quad or channel,
 * i, j) at the phase of (i dh, j dw), its row and column. */
static void q_offsets(const mlvm_qconv2d_t *p, const qgeom_t *g, mlvm_index_t *off)
{
    const mlvm_index_t taps = p->kh * p->kw, chan = g->phases * g->plane;
    mlvm_index_t i, j, t;
    for (i = 0; i < p->kh; ++i) {
        const mlvm_index_t di = i * p->dh;
        const mlvm_index_t row = di % p->sh * p->sw * g->plane + di / p->sh * g->wq;
        for (j = 0; j < p->kw; ++j) {
            const mlvm_index_t dj = j * p->dw;
            off[i * p->kw + j] = row + dj % p->sw * g->plane + dj / p->sw;
        }
    }
    for (t = taps; t < g->k; ++t)
        off[t] = off[t - taps] + chan;
}

/* w4[o][(q * kh + i) * kw + j] = bytes w[o, 4q .. 4q + 3, i, j] (0 past cg),
 * and share[o] = zxu * sum of w[o] (wrapping): a channel's row of taps at
 * a time, both loops over contiguous bytes. */
static void q_reorder(const mlvm_qconv2d_t *p, const qgeom_t *g, const int8_t *w, uint32_t zxu,
                      int32_t *w4, uint32_t *share)
{
    const mlvm_index_t cg = p->c / p->groups, khw = p->kh * p->kw;
    mlvm_index_t o, c, t;
    for (o = 0; o < p->o; ++o) {
        const int8_t *wo = w + o * cg * khw;
        int8_t *dst = (int8_t *)(void *)(w4 + o * g->k);
        uint32_t sum = 0;
        for (t = 0; t < cg * khw; ++t)
            sum += (uint32_t)(int32_t)wo[t];
        share[o] = zxu * sum;
        if (cg % 4)
            memset(dst + (cg / 4) * khw * 4, 0, (size_t)(khw * 4));
        for (c = 0; c < cg; ++c) {
            const int8_t *row = wo + c * khw;
            int8_t *d = dst + (c / 4) * khw * 4 + c % 4;
            for (t = 0; t < khw; ++t)
                d[4 * t] = row[t];
        }
    }
}

/* -------------------------------------------------------------------------
 * Tiles: out[r][j] = sum over k-quads of lane products - share[r], for
 * r < mr rows of w4 and j < np positions from q0; rows past mr read row 0
 * again and are never stored. xs is the group's copy, read at off[t] + q.
 * ---------------------------------------------------------------------- */

typedef struct qtile {
    const int32_t *w4;    /* the tile's first row */
    mlvm_index_t k;       /* k-quads per row */
    const mlvm_index_t *off;
    const uint8_t *xs;    /* the group's copy, lanes of 4 bytes */
    const uint32_t *share;
    int32_t *out;         /* the tile's first output */
    mlvm_index_t ld;      /* row pitch of out */
} qtile_t;

#if defined(MLVM_Q_ZMM)

static void q_tile(const qtile_t *t, mlvm_index_t q0, int mr, int np)
{
    const int32_t *w[MLVM_Q_MR];
    __m512i c0[MLVM_Q_MR], c1[MLVM_Q_MR];
    const __mmask16 m0 = (__mmask16)(np >= 16 ? 0xFFFF : (1u << np) - 1u);
    const __mmask16 m1 = (__mmask16)(np >= 32 ? 0xFFFF : np <= 16 ? 0 : (1u << (np - 16)) - 1u);
    mlvm_index_t kk;
    int r;
    for (r = 0; r < MLVM_Q_MR; ++r) {
        w[r] = t->w4 + (r < mr ? r : 0) * t->k;
        c0[r] = _mm512_setzero_si512();
        c1[r] = _mm512_setzero_si512();
    }
    for (kk = 0; kk < t->k; ++kk) {
        const int32_t *bk = (const int32_t *)(const void *)(t->xs) + t->off[kk] + q0;
        const __m512i b0 = _mm512_loadu_si512((const void *)bk);
        const __m512i b1 = _mm512_loadu_si512((const void *)(bk + 16));
        for (r = 0; r < MLVM_Q_MR; ++r) {
            const __m512i wv = _mm512_set1_epi32(w[r][kk]);
            c0[r] = _mm512_dpbusd_epi32(c0[r], b0, wv);
            c1[r] = _mm512_dpbusd_epi32(c1[r], b1, wv);
        }
    }
    for (r = 0; r < mr; ++r) {
        const __m512i s = _mm512_set1_epi32((int32_t)t->share[r]);
        int32_t *o = t->out + r * t->ld;
        _mm512_mask_storeu_epi32(o, m0, _mm512_sub_epi32(c0[r], s));
        _mm512_mask_storeu_epi32(o + 16, m1, _mm512_sub_epi32(c1[r], s));
    }
}

#elif defined(MLVM_Q_VNNI) || defined(MLVM_Q_AVX2)

#if defined(MLVM_Q_VNNI)
/* lanes of 8 positions; each acc lane is a position's sum */
#define MLVM_Q_ACCS 2
#define MLVM_Q_STEP(acc, b, wq4)                                              \
    do {                                                                      \
        const __m256i wv_ = _mm256_set1_epi32(wq4);                           \
        acc[0] = _mm256_dpbusd_avx_epi32(acc[0], b[0], wv_);                  \
        acc[1] = _mm256_dpbusd_avx_epi32(acc[1], b[1], wv_);                  \
    } while (0)
#define MLVM_Q_LOAD(b, p)                                                     \
    do {                                                                      \
        b[0] = _mm256_loadu_si256((const __m256i *)(const void *)(p));        \
        b[1] = _mm256_loadu_si256((const __m256i *)(const void *)((p) + 8));  \
    } while (0)
#else
/* bytes widened to int16: an acc lane holds half a position's sum (two
 * channels), two lanes per position; vpmaddwd's pair sums are exact */
#define MLVM_Q_ACCS 2
#define MLVM_Q_STEP(acc, b, wq4)                                              \
    do {                                                                      \
        const __m256i wv_ = _mm256_cvtepi8_epi16(_mm_set1_epi32(wq4));        \
        acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(b[0], wv_));      \
        acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(b[1], wv_));      \
    } while (0)
#define MLVM_Q_LOAD(b, p)                                                     \
    do {                                                                      \
        b[0] = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p))); \
        b[1] = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)((p) + 4))); \
    } while (0)
#endif

static void q_tile(const qtile_t *t, mlvm_index_t q0, int mr, int np)
{
    const int32_t *w[MLVM_Q_MR];
    __m256i c[MLVM_Q_MR][MLVM_Q_ACCS];
    int32_t tmp[MLVM_Q_NR];
    mlvm_index_t kk;
    int r, j;
    for (r = 0; r < MLVM_Q_MR; ++r) {
        w[r] = t->w4 + (r < mr ? r : 0) * t->k;
        c[r][0] = _mm256_setzero_si256();
        c[r][1] = _mm256_setzero_si256();
    }
    for (kk = 0; kk < t->k; ++kk) {
        const int32_t *bk = (const int32_t *)(const void *)(t->xs) + t->off[kk] + q0;
        __m256i b[2];
        MLVM_Q_LOAD(b, bk);
        for (r = 0; r < MLVM_Q_MR; ++r)
            MLVM_Q_STEP(c[r], b, w[r][kk]);
    }
    for (r = 0; r < mr; ++r) {
        const __m256i s = _mm256_set1_epi32((int32_t)t->share[r]);
        int32_t *o = t->out + r * t->ld;
#if defined(MLVM_Q_VNNI)
        const __m256i v0 = _mm256_sub_epi32(c[r][0], s), v1 = _mm256_sub_epi32(c[r][1], s);
#else
        /* pair sums (p0 p1 p4 p5 | p2 p3 p6 p7), back in position order */
        const __m256i v0 = _mm256_sub_epi32(
            _mm256_permute4x64_epi64(_mm256_hadd_epi32(c[r][0], c[r][1]), 0xD8), s);
        const __m256i v1 = v0;
#endif
        if (np == MLVM_Q_NR) {
            _mm256_storeu_si256((__m256i *)(void *)o, v0);
            if (MLVM_Q_NR > 8)
                _mm256_storeu_si256((__m256i *)(void *)(o + 8), v1);
            continue;
        }
        _mm256_storeu_si256((__m256i *)(void *)tmp, v0);
        if (MLVM_Q_NR > 8)
            _mm256_storeu_si256((__m256i *)(void *)(tmp + 8), v1);
        for (j = 0; j < np; ++j)
            o[j] = tmp[j];
    }
}

#else /* portable C99 */

static int32_t q_dot4(uint32_t x, int32_t w)
{
    /* four u8 x s8 products of the lanes' bytes (x little end first) */
    const uint32_t u = (uint32_t)w;
    return (int32_t)(x & 0xFF) * (int8_t)(u & 0xFF) + (int32_t)((x >> 8) & 0xFF) * (int8_t)((u >> 8) & 0xFF)
           + (int32_t)((x >> 16) & 0xFF) * (int8_t)((u >> 16) & 0xFF)
           + (int32_t)(x >> 24) * (int8_t)(u >> 24);
}

static void q_tile(const qtile_t *t, mlvm_index_t q0, int mr, int np)
{
    uint32_t c[MLVM_Q_MR][MLVM_Q_NR];
    const int32_t *w[MLVM_Q_MR];
    mlvm_index_t kk;
    int r, j;
    for (r = 0; r < MLVM_Q_MR; ++r) {
        w[r] = t->w4 + (r < mr ? r : 0) * t->k;
        for (j = 0; j < MLVM_Q_NR; ++j)
            c[r][j] = 0;
    }
    for (kk = 0; kk < t->k; ++kk) {
        const uint8_t *bk = t->xs + (t->off[kk] + q0) * 4;
        uint32_t b[MLVM_Q_NR];
        for (j = 0; j < MLVM_Q_NR; ++j)
            b[j] = (uint32_t)bk[4 * j] | (uint32_t)bk[4 * j + 1] << 8 | (uint32_t)bk[4 * j + 2] << 16
                   | (uint32_t)bk[4 * j + 3] << 24;
        for (r = 0; r < MLVM_Q_MR; ++r)
            for (j = 0; j < MLVM_Q_NR; ++j)
                c[r][j] += (uint32_t)q_dot4(b[j], w[r][kk]);
    }
    for (r = 0; r < mr; ++r)
        for (j = 0; j < np; ++j)
            t->out[r * t->ld + j] = (int32_t)(c[r][j] - t->share[r]);
}

#endif

/* Compacts rows of pitch wq in ws to out's pitch ow. */
static void q_rows_out(const mlvm_qconv2d_t *p, const qgeom_t *g, mlvm_index_t og,
                       const int32_t *src, int32_t *out)
{
    mlvm_index_t o, r;
    for (o = 0; o < og; ++o)
        for (r = 0; r < p->oh; ++r)
            memcpy(out + (o * p->oh + r) * p->ow, src + o * g->n + r * g->wq,
                   (size_t)p->ow * sizeof *out);
}

static void q_gemm_group(const mlvm_qconv2d_t *p, const qgeom_t *g, mlvm_index_t og,
                         const qtile_t *base, int32_t *dst)
{
    qtile_t t = *base;
    mlvm_index_t o, q0;
    t.ld = g->wq == p->ow ? p->oh * p->ow : g->n;
    for (o = 0; o < og; o += MLVM_Q_MR) {
        const int mr = (int)qmin(MLVM_Q_MR, og - o);
        t.w4 = base->w4 + o * g->k;
        t.share = base->share + o;
        for (q0 = 0; q0 < g->n; q0 += MLVM_Q_NR) {
            t.out = dst + o * t.ld + q0;
            q_tile(&t, q0, mr, (int)qmin(MLVM_Q_NR, g->n - q0));
        }
    }
}

static void q_gemm_path(const mlvm_qconv2d_t *p, const qgeom_t *g, const uint8_t *x,
                        const int8_t *w, uint8_t flip, uint8_t zxu, uint8_t *ws, int32_t *out)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups, hw = p->oh * p->ow;
    mlvm_index_t *off = (mlvm_index_t *)(void *)ws;
    uint8_t *xs = ws + g->off_bytes;
    int32_t *w4 = (int32_t *)(void *)(xs + g->in_bytes);
    uint32_t *share = (uint32_t *)(void *)((uint8_t *)w4 + qw_align((size_t)(p->o * g->k) * 4));
    int32_t *rows = (int32_t *)(void *)((uint8_t *)w4 + g->w_bytes);
    qtile_t t;
    mlvm_index_t n, gi;
    q_offsets(p, g, off);
    q_reorder(p, g, w, zxu, w4, share);
    memset(xs + g->quads * 4 * g->phases * g->plane, 0, MLVM_QW_SLACK);
    t.off = off;
    t.xs = xs;
    for (n = 0; n < p->n; ++n)
        for (gi = 0; gi < p->groups; ++gi) {
            int32_t *o = out + (n * p->o + gi * og) * hw;
            q_copy(p, g, x + n * p->c * p->h * p->w, gi * cg, cg, 4, flip, zxu, xs);
            t.w4 = w4 + gi * og * g->k;
            t.k = g->k;
            t.share = share + gi * og;
            q_gemm_group(p, g, og, &t, g->out_bytes ? rows : o);
            if (g->out_bytes)
                q_rows_out(p, g, og, rows, o);
        }
}

/* dst[j] = sum_t wt[t] xs[off[t] + j] - base for one chunk of positions.
 * With vectors, taps go in pairs: bytes of two taps widened into the two
 * 16-bit halves of a lane, times the pair of weights (|wt| <= 255), summed
 * exactly by one vpmaddwd. */
#if !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX512BW__)
#define MLVM_QT_V __m512i
#define MLVM_QT_LANES 16
#define MLVM_QT_ZERO _mm512_setzero_si512
#define MLVM_QT_SET1 _mm512_set1_epi32
#define MLVM_QT_WIDEN(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define MLVM_QT_PAIR(a, b) _mm512_or_si512(a, _mm512_slli_epi32(b, 16))
#define MLVM_QT_MADD(acc, v, w) _mm512_add_epi32(acc, _mm512_madd_epi16(v, w))
#define MLVM_QT_STORE(p, v, s) _mm512_storeu_si512((void *)(p), _mm512_sub_epi32(v, s))
#elif !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX2__)
#define MLVM_QT_V __m256i
#define MLVM_QT_LANES 8
#define MLVM_QT_ZERO _mm256_setzero_si256
#define MLVM_QT_SET1 _mm256_set1_epi32
#define MLVM_QT_WIDEN(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
#define MLVM_QT_PAIR(a, b) _mm256_or_si256(a, _mm256_slli_epi32(b, 16))
#define MLVM_QT_MADD(acc, v, w) _mm256_add_epi32(acc, _mm256_madd_epi16(v, w))
#define MLVM_QT_STORE(p, v, s) _mm256_storeu_si256((__m256i *)(void *)(p), _mm256_sub_epi32(v, s))
#endif

#ifdef MLVM_QT_V
#define MLVM_QT_N (MLVM_QW_CHUNK / MLVM_QT_LANES)
static void q_taps_chunk(mlvm_index_t k, const mlvm_index_t *off, const uint8_t *xs,
                         const int32_t *wt, uint32_t base, uint32_t *dst)
{
    MLVM_QT_V acc[MLVM_QT_N];
    mlvm_index_t t;
    int v;
    for (v = 0; v < MLVM_QT_N; ++v)
        acc[v] = MLVM_QT_ZERO();
    for (t = 0; t < k; t += 2) {
        const int two = t + 1 < k;
        const uint8_t *x0 = xs + off[t], *x1 = two ? xs + off[t + 1] : x0;
        const MLVM_QT_V w = MLVM_QT_SET1((int32_t)((uint32_t)(uint16_t)wt[t]
                                                   | (two ? (uint32_t)wt[t + 1] << 16 : 0u)));
        for (v = 0; v < MLVM_QT_N; ++v) {
            const MLVM_QT_V pair = MLVM_QT_PAIR(MLVM_QT_WIDEN(x0 + v * MLVM_QT_LANES),
                                                MLVM_QT_WIDEN(x1 + v * MLVM_QT_LANES));
            acc[v] = MLVM_QT_MADD(acc[v], pair, w);
        }
    }
    for (v = 0; v < MLVM_QT_N; ++v)
        MLVM_QT_STORE(dst + v * MLVM_QT_LANES, acc[v], MLVM_QT_SET1((int32_t)base));
}
#else
static void q_taps_chunk(mlvm_index_t k, const mlvm_index_t *off, const uint8_t *xs,
                         const int32_t *wt, uint32_t base, uint32_t *dst)
{
    uint32_t acc[MLVM_QW_CHUNK];
    mlvm_index_t t;
    int j;
    for (j = 0; j < MLVM_QW_CHUNK; ++j)
        acc[j] = 0;
    for (t = 0; t < k; ++t) {
        const uint8_t *xt = xs + off[t];
        const uint32_t wv = (uint32_t)wt[t];
        for (j = 0; j < MLVM_QW_CHUNK; ++j)
            acc[j] += wv * xt[j];
    }
    for (j = 0; j < MLVM_QW_CHUNK; ++j)
        dst[j] = acc[j] - base;
}
#endif

static void q_taps_path(const mlvm_qconv2d_t *p, const qgeom_t *g, const uint8_t *x,
                        const void *w, const void *zw, uint8_t flip, uint8_t zxu, uint8_t *ws,
                        int32_t *out)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups, hw = p->oh * p->ow;
    mlvm_index_t *off = (mlvm_index_t *)(void *)ws;
    uint8_t *xs = ws + g->off_bytes;
    int32_t *wt = (int32_t *)(void *)(xs + g->in_bytes);
    uint32_t *rows = (uint32_t *)(void *)((uint8_t *)wt + g->w_bytes);
    uint32_t tail[MLVM_QW_CHUNK];
    mlvm_index_t n, gi, o, t, q0;
    q_offsets(p, g, off);
    memset(xs + p->c * g->phases * g->plane, 0, MLVM_QW_SLACK);
    for (n = 0; n < p->n; ++n) {
        q_copy(p, g, x + n * p->c * p->h * p->w, 0, p->c, 1, flip, zxu, xs);
        for (gi = 0; gi < p->groups; ++gi) {
            int32_t *og_out = out + (n * p->o + gi * og) * hw;
            for (o = 0; o < og; ++o) {
                const mlvm_index_t oo = gi * og + o;
                const int32_t zwo = p->w_signed ? ((const int8_t *)zw)[p->zw_per_o ? oo : 0]
                                                : ((const uint8_t *)zw)[p->zw_per_o ? oo : 0];
                const uint8_t *xg = xs + gi * cg * g->phases * g->plane;
                uint32_t *dst = g->out_bytes ? rows + o * g->n : (uint32_t *)(void *)(og_out + o * hw);
                uint32_t sum = 0;
                for (t = 0; t < g->k; ++t) {
                    const int32_t wv = p->w_signed ? ((const int8_t *)w)[oo * g->k + t]
                                                   : ((const uint8_t *)w)[oo * g->k + t];
                    wt[t] = wv - zwo;
                    sum += (uint32_t)wt[t];
                }
                for (q0 = 0; q0 + MLVM_QW_CHUNK <= g->n; q0 += MLVM_QW_CHUNK)
                    q_taps_chunk(g->k, off, xg + q0, wt, sum * zxu, dst + q0);
                if (q0 < g->n) {
                    q_taps_chunk(g->k, off, xg + q0, wt, sum * zxu, tail);
                    memcpy(dst + q0, tail, (size_t)(g->n - q0) * sizeof *dst);
                }
            }
            if (g->out_bytes)
                q_rows_out(p, g, og, (const int32_t *)rows, og_out);
        }
    }
}

void mlvm_qconv2d_ws_8(const mlvm_qconv2d_t *p, const void *x, const void *w, const void *zx,
                       const void *zw, int32_t *out, void *ws)
{
    const mlvm_index_t og = p->o / p->groups;
    const uint8_t flip = p->x_signed ? 0x80 : 0;
    const uint8_t zxu = (uint8_t)(*(const uint8_t *)zx ^ flip);
    qgeom_t g;
    mlvm_index_t o;
    int zero_zw = 1;
    if (ws == NULL || mlvm_qconv2d_workspace(p) == 0) {
        mlvm_qconv2d_8(p, x, w, zx, zw, out);
        return;
    }
    qgeom(p, &g);
    if (og < MLVM_QW_GEMM_ROWS) {
        q_taps_path(p, &g, (const uint8_t *)x, w, zw, flip, zxu, (uint8_t *)ws, out);
        return;
    }
    for (o = 0; o < (p->zw_per_o ? p->o : 1); ++o)
        zero_zw = zero_zw && ((const int8_t *)zw)[o] == 0;
    if (!zero_zw) {
        mlvm_qconv2d_8(p, x, w, zx, zw, out);
        return;
    }
    q_gemm_path(p, &g, (const uint8_t *)x, (const int8_t *)w, flip, zxu, (uint8_t *)ws, out);
}
