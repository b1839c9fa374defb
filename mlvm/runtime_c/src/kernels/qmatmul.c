/* Integer matmul of 8-bit operands with 32-bit accumulation (mlvm.qmatmul,
 * ONNX MatMulInteger): out[m, n] = sum_k (a[m, k] - za) * (b[k, n] - zb[n]).
 *
 * The zero point of b leaves the inner loop: sum_k (a - za) * (b - zb)
 * = sum_k (a - za) * b - zb * sum_k (a - za), so the inner loop is one
 * widening multiply-add per element over a row of b, which compilers
 * vectorise. Sums wrap modulo 2^32 like the int32 of the reference. */
#include "iter.h"

static int32_t load8(const void *p, mlvm_index_t i, int32_t is_signed)
{
    return is_signed ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

#define MLVM_QROW(name, T)                                                    \
    static void name(int32_t *o, const T *b, mlvm_index_t n, int32_t av)      \
    {                                                                         \
        mlvm_index_t j;                                                       \
        for (j = 0; j < n; ++j)                                               \
            o[j] = (int32_t)((uint32_t)o[j] + (uint32_t)(av * (int32_t)b[j])); \
    }

MLVM_QROW(qrow_s8, int8_t)
MLVM_QROW(qrow_u8, uint8_t)

void mlvm_qmatmul_8(const mlvm_qmatmul_t *p, const void *a, const void *b, const void *za,
                    const void *zb, int32_t *out)
{
    const mlvm_index_t m = p->m, n = p->n, k = p->k;
    const int32_t zav = load8(za, 0, p->a_signed);
    mlvm_index_t i, kk, j;
    for (i = 0; i < m; ++i, out += n) {
        uint32_t asum = 0;
        for (j = 0; j < n; ++j)
            out[j] = 0;
        for (kk = 0; kk < k; ++kk) {
            const int32_t av = load8(a, i * k + kk, p->a_signed) - zav;
            if (av == 0)
                continue;
            asum += (uint32_t)av;
            if (p->b_signed)
                qrow_s8(out, (const int8_t *)b + kk * n, n, av);
            else
                qrow_u8(out, (const uint8_t *)b + kk * n, n, av);
        }
        for (j = 0; j < n; ++j) {
            const int32_t zbv = load8(zb, p->zb_per_col ? j : 0, p->b_signed);
            out[j] = (int32_t)((uint32_t)out[j] - (uint32_t)zbv * asum);
        }
    }
}

/* mlvm.qconv2d on 8-bit operands, as an implicit GEMM per group:
 * out[o, p] = sum_t (w[o, t] - zw[o]) * (window[t, p] - zx) over the taps t
 * (channel, ky, kx) and output positions p (oy * ow + ox). Positions go in
 * slivers of MLVM_QC_NR; for each block of MLVM_QC_KC taps the sliver's
 * windows are gathered once (x - zx as int16, 0 for padding), then every
 * block of MLVM_QC_MR output channels multiplies them into an MR x NR tile
 * kept in the output itself (int32, in the caller's memory), so the stack
 * holds only the packed block (KC * NR * 2 bytes) and one tile. The inner
 * loop runs over the NR positions and vectorises. Sums wrap modulo 2^32. */
#define MLVM_QC_NR 16
#define MLVM_QC_MR 4
#define MLVM_QC_KC 64

#define MLVM_QADD(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))

/* The packed block's layout: where tap k of position j lives. With the DSP
 * extension (Cortex-M4 and up) taps go in pairs, so SMLAD multiplies two
 * taps by two weights at once; elsewhere each tap is a row of NR positions
 * (the form x86 compilers vectorise best). */
#if defined(__ARM_FEATURE_DSP)
#define MLVM_QC_AT(k, j) ((((k) / 2) * MLVM_QC_NR + (j)) * 2 + (k) % 2)
#else
#define MLVM_QC_AT(k, j) ((k) * MLVM_QC_NR + (j))
#endif

typedef struct qconv_sliver {
    mlvm_index_t iy0[MLVM_QC_NR], ix0[MLVM_QC_NR];
    mlvm_index_t iy_lo, iy_hi, ix_lo, ix_hi; /* the extremes of iy0 / ix0 */
    int np;
} qconv_sliver_t;

/* The windows of the sliver's positions for taps k0 .. k0 + kc of image n,
 * group channels from c0: b[MLVM_QC_AT(k, j)] = x - zx, or 0 outside the
 * image; an odd block gets a zero tap to complete its last pair. One
 * version per signedness of x, so the element loop has no type branch. */
#define MLVM_QC_PACK(name, TX)                                                \
    static void name(const mlvm_qconv2d_t *p, const TX *x, int32_t zx, mlvm_index_t n, \
                     mlvm_index_t c0, const qconv_sliver_t *s, mlvm_index_t k0,  \
                     mlvm_index_t kc, int16_t *b)                                \
    {                                                                         \
        const mlvm_index_t khw = p->kh * p->kw;                               \
        mlvm_index_t k, c = k0 / khw, ky = (k0 % khw) / p->kw, kx = k0 % p->kw; \
        int j;                                                                \
        for (k = 0; k < kc; ++k) {                                            \
            const TX *plane = x + (n * p->c + c0 + c) * p->h * p->w;          \
            const mlvm_index_t dy = ky * p->dh, dx = kx * p->dw;              \
            if (s->np == MLVM_QC_NR && s->iy_lo + dy >= 0 && s->iy_hi + dy < p->h && \
                s->ix_lo + dx >= 0 && s->ix_hi + dx < p->w) {                 \
                /* every window inside the image: no checks */                \
                const TX *at = plane + dy * p->w + dx;                        \
                for (j = 0; j < MLVM_QC_NR; ++j)                              \
                    b[MLVM_QC_AT(k, j)] = (int16_t)((int32_t)at[s->iy0[j] * p->w + s->ix0[j]] - zx); \
            } else {                                                          \
                for (j = 0; j < MLVM_QC_NR; ++j) {                            \
                    const mlvm_index_t iy = s->iy0[j] + dy, ix = s->ix0[j] + dx; \
                    b[MLVM_QC_AT(k, j)] = (int16_t)(j < s->np && iy >= 0 && iy < p->h && ix >= 0 && \
                                                    ix < p->w ? (int32_t)plane[iy * p->w + ix] - zx : 0); \
                }                                                             \
            }                                                                 \
            if (++kx == p->kw) {                                              \
                kx = 0;                                                       \
                if (++ky == p->kh) {                                          \
                    ky = 0;                                                   \
                    ++c;                                                      \
                }                                                             \
            }                                                                 \
        }                                                                     \
        if (kc % 2)                                                           \
            for (j = 0; j < MLVM_QC_NR; ++j)                                  \
                b[MLVM_QC_AT(kc, j)] = 0;                                     \
    }

MLVM_QC_PACK(qconv_pack_s8, int8_t)
MLVM_QC_PACK(qconv_pack_u8, uint8_t)

/* tile[i][j] (+)= sum_k (w[o + i, k0 + k] - zw[o + i]) * b(k, j) for i < mr;
 * one version per signedness of w. With the DSP extension, two taps per
 * SMLAD (a pair's sum fits in int32: |.| <= 2 * 255^2); elsewhere one
 * widening multiply-add per tap over a row of NR positions. */
#if defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>
#include <string.h>

static int32_t qc_pair(int32_t lo, int32_t hi)
{
    return (int32_t)(((uint32_t)(uint16_t)hi << 16) | (uint32_t)(uint16_t)lo);
}

#define MLVM_QC_TILE(name, TW)                                                \
    static void name(const TW *w, const int32_t *zwo, mlvm_index_t o, mlvm_index_t taps, \
                     mlvm_index_t k0, mlvm_index_t kc, int mr, const int16_t *b, \
                     int32_t (*tile)[MLVM_QC_NR])                              \
    {                                                                         \
        mlvm_index_t k;                                                       \
        int i, j;                                                             \
        if (mr == MLVM_QC_MR) {                                               \
            const TW *w0 = w + o * taps + k0, *w1 = w0 + taps, *w2 = w1 + taps, *w3 = w2 + taps; \
            int32_t *t0 = tile[0], *t1 = tile[1], *t2 = tile[2], *t3 = tile[3]; \
            for (k = 0; k < kc; k += 2) {                                     \
                const int16_t *bk = b + MLVM_QC_AT(k, 0);                     \
                const int two = k + 1 < kc;                                   \
                const int32_t a0 = qc_pair((int32_t)w0[k] - zwo[0], two ? (int32_t)w0[k + 1] - zwo[0] : 0); \
                const int32_t a1 = qc_pair((int32_t)w1[k] - zwo[1], two ? (int32_t)w1[k + 1] - zwo[1] : 0); \
                const int32_t a2 = qc_pair((int32_t)w2[k] - zwo[2], two ? (int32_t)w2[k + 1] - zwo[2] : 0); \
                const int32_t a3 = qc_pair((int32_t)w3[k] - zwo[3], two ? (int32_t)w3[k + 1] - zwo[3] : 0); \
                for (j = 0; j < MLVM_QC_NR; ++j) {                            \
                    int32_t bw;                                               \
                    memcpy(&bw, bk + 2 * j, sizeof bw);                       \
                    t0[j] = __smlad(a0, bw, t0[j]);                           \
                    t1[j] = __smlad(a1, bw, t1[j]);                           \
                    t2[j] = __smlad(a2, bw, t2[j]);                           \
                    t3[j] = __smlad(a3, bw, t3[j]);                           \
                }                                                             \
            }                                                                 \
            return;                                                           \
        }                                                                     \
        for (i = 0; i < mr; ++i) {                                            \
            const TW *wi = w + (o + i) * taps + k0;                           \
            int32_t *t = tile[i];                                             \
            for (k = 0; k < kc; k += 2) {                                     \
                const int16_t *bk = b + MLVM_QC_AT(k, 0);                     \
                const int32_t hi = k + 1 < kc ? (int32_t)wi[k + 1] - zwo[i] : 0; \
                const int32_t a = qc_pair((int32_t)wi[k] - zwo[i], hi);       \
                for (j = 0; j < MLVM_QC_NR; ++j) {                            \
                    int32_t bw;                                               \
                    memcpy(&bw, bk + 2 * j, sizeof bw);                       \
                    t[j] = __smlad(a, bw, t[j]);                              \
                }                                                             \
            }                                                                 \
        }                                                                     \
    }
#else
#define MLVM_QC_TILE(name, TW)                                                \
    static void name(const TW *w, const int32_t *zwo, mlvm_index_t o, mlvm_index_t taps, \
                     mlvm_index_t k0, mlvm_index_t kc, int mr, const int16_t *b, \
                     int32_t (*tile)[MLVM_QC_NR])                              \
    {                                                                         \
        mlvm_index_t k;                                                       \
        int i, j;                                                             \
        if (mr == MLVM_QC_MR) {                                               \
            const TW *w0 = w + o * taps + k0, *w1 = w0 + taps, *w2 = w1 + taps, *w3 = w2 + taps; \
            int32_t *t0 = tile[0], *t1 = tile[1], *t2 = tile[2], *t3 = tile[3]; \
            for (k = 0; k < kc; ++k) {                                        \
                const int16_t *bk = b + MLVM_QC_AT(k, 0);                     \
                const int32_t a0 = (int32_t)w0[k] - zwo[0], a1 = (int32_t)w1[k] - zwo[1]; \
                const int32_t a2 = (int32_t)w2[k] - zwo[2], a3 = (int32_t)w3[k] - zwo[3]; \
                for (j = 0; j < MLVM_QC_NR; ++j) {                            \
                    const int32_t v = bk[j];                                  \
                    t0[j] = MLVM_QADD(t0[j], a0 * v);                         \
                    t1[j] = MLVM_QADD(t1[j], a1 * v);                         \
                    t2[j] = MLVM_QADD(t2[j], a2 * v);                         \
                    t3[j] = MLVM_QADD(t3[j], a3 * v);                         \
                }                                                             \
            }                                                                 \
            return;                                                           \
        }                                                                     \
        for (i = 0; i < mr; ++i) {                                            \
            const TW *wi = w + (o + i) * taps + k0;                           \
            for (k = 0; k < kc; ++k) {                                        \
                const int16_t *bk = b + MLVM_QC_AT(k, 0);                     \
                const int32_t a = (int32_t)wi[k] - zwo[i];                    \
                for (j = 0; j < MLVM_QC_NR; ++j)                              \
                    tile[i][j] = MLVM_QADD(tile[i][j], a * bk[j]);            \
            }                                                                 \
        }                                                                     \
    }
#endif

MLVM_QC_TILE(qconv_tile_s8, int8_t)
MLVM_QC_TILE(qconv_tile_u8, uint8_t)

void mlvm_qconv2d_8(const mlvm_qconv2d_t *p, const void *x, const void *w, const void *zx,
                    const void *zw, int32_t *out)
{
    const mlvm_index_t og = p->o / p->groups, cg = p->c / p->groups;
    const mlvm_index_t taps = cg * p->kh * p->kw, positions = p->oh * p->ow;
    const int32_t zxv = load8(zx, 0, p->x_signed);
    int16_t b[MLVM_QC_KC * MLVM_QC_NR];
    int32_t tile[MLVM_QC_MR][MLVM_QC_NR], zwo[MLVM_QC_MR];
    qconv_sliver_t s;
    mlvm_index_t n, g, p0, k0, o;
    int i, j;
    for (n = 0; n < p->n; ++n)
        for (g = 0; g < p->groups; ++g)
            for (p0 = 0; p0 < positions; p0 += MLVM_QC_NR) {
                s.np = (int)(positions - p0 < MLVM_QC_NR ? positions - p0 : MLVM_QC_NR);
                s.iy_lo = s.ix_lo = PTRDIFF_MAX;
                s.iy_hi = s.ix_hi = PTRDIFF_MIN;
                for (j = 0; j < MLVM_QC_NR; ++j) {
                    const mlvm_index_t q = p0 + (j < s.np ? j : 0);
                    s.iy0[j] = (q / p->ow) * p->sh - p->pt;
                    s.ix0[j] = (q % p->ow) * p->sw - p->pl;
                    s.iy_lo = s.iy0[j] < s.iy_lo ? s.iy0[j] : s.iy_lo;
                    s.iy_hi = s.iy0[j] > s.iy_hi ? s.iy0[j] : s.iy_hi;
                    s.ix_lo = s.ix0[j] < s.ix_lo ? s.ix0[j] : s.ix_lo;
                    s.ix_hi = s.ix0[j] > s.ix_hi ? s.ix0[j] : s.ix_hi;
                }
                for (k0 = 0; k0 < taps; k0 += MLVM_QC_KC) {
                    const mlvm_index_t kc = taps - k0 < MLVM_QC_KC ? taps - k0 : MLVM_QC_KC;
                    if (p->x_signed)
                        qconv_pack_s8(p, (const int8_t *)x, zxv, n, g * cg, &s, k0, kc, b);
                    else
                        qconv_pack_u8(p, (const uint8_t *)x, zxv, n, g * cg, &s, k0, kc, b);
                    for (o = g * og; o < (g + 1) * og; o += MLVM_QC_MR) {
                        const int mr = (int)((g + 1) * og - o < MLVM_QC_MR ? (g + 1) * og - o : MLVM_QC_MR);
                        for (i = 0; i < mr; ++i) {
                            int32_t *dst = out + (n * p->o + o + i) * positions + p0;
                            zwo[i] = load8(zw, p->zw_per_o ? o + i : 0, p->w_signed);
                            for (j = 0; j < MLVM_QC_NR; ++j)
                                tile[i][j] = k0 == 0 || j >= s.np ? 0 : dst[j];
                        }
                        if (p->w_signed)
                            qconv_tile_s8((const int8_t *)w, zwo, o, taps, k0, kc, mr,
                                          b, tile);
                        else
                            qconv_tile_u8((const uint8_t *)w, zwo, o, taps, k0, kc, mr,
                                          b, tile);
                        for (i = 0; i < mr; ++i) {
                            int32_t *dst = out + (n * p->o + o + i) * positions + p0;
                            for (j = 0; j < s.np; ++j)
                                dst[j] = tile[i][j];
                        }
                    }
                }
            }
}
