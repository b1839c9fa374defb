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

/* mlvm.qconv2d on 8-bit operands: for each output row, rows of int32
 * accumulators for a block of up to four output channels take, for every
 * (channel, ky, kx) tap, the weights times the input row the tap meets
 * (x - zx), over the output columns whose input column is inside the image
 * (padding adds nothing). One pass over the input row feeds all four
 * channels; the innermost loop runs over output columns and vectorises
 * (stride 1 reads the row contiguously). Rows longer than MLVM_QCONV_CHUNK
 * go in chunks; the accumulators and one gathered row take
 * 5 * MLVM_QCONV_CHUNK * 4 bytes of stack. Sums wrap modulo 2^32 (as the int32 of the reference). */
#define MLVM_QCONV_CHUNK 64
#define MLVM_QCONV_BLOCK 4

static mlvm_index_t ceil_div(mlvm_index_t a, mlvm_index_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

#define MLVM_QADD(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))

#define MLVM_QTAP(name, TX)                                                   \
    static void name(int32_t (*acc)[MLVM_QCONV_CHUNK], int nb, const TX *row,  \
                     mlvm_index_t lo, mlvm_index_t hi, mlvm_index_t stride,   \
                     mlvm_index_t off, const int32_t *wv, int32_t zx)         \
    {                                                                         \
        mlvm_index_t j;                                                       \
        int b;                                                                \
        if (nb == MLVM_QCONV_BLOCK && stride == 1) {                          \
            const TX *r = row + off;                                          \
            const int32_t w0 = wv[0], w1 = wv[1], w2 = wv[2], w3 = wv[3];     \
            int32_t *a0 = acc[0], *a1 = acc[1], *a2 = acc[2], *a3 = acc[3];   \
            for (j = lo; j < hi; ++j) {                                       \
                const int32_t v = (int32_t)r[j] - zx;                         \
                a0[j] = MLVM_QADD(a0[j], w0 * v);                             \
                a1[j] = MLVM_QADD(a1[j], w1 * v);                             \
                a2[j] = MLVM_QADD(a2[j], w2 * v);                             \
                a3[j] = MLVM_QADD(a3[j], w3 * v);                             \
            }                                                                 \
            return;                                                           \
        }                                                                     \
        {   /* strided or fewer channels: the row's taps once, then a    \
               vectorised multiply-add per channel */                          \
            int32_t v[MLVM_QCONV_CHUNK];                                      \
            for (j = lo; j < hi; ++j)                                         \
                v[j] = (int32_t)row[j * stride + off] - zx;                   \
            for (b = 0; b < nb; ++b) {                                        \
                int32_t *a = acc[b];                                          \
                const int32_t w = wv[b];                                      \
                for (j = lo; j < hi; ++j)                                     \
                    a[j] = MLVM_QADD(a[j], w * v[j]);                         \
            }                                                                 \
        }                                                                     \
    }

MLVM_QTAP(qtap_s8, int8_t)
MLVM_QTAP(qtap_u8, uint8_t)

void mlvm_qconv2d_8(const mlvm_qconv2d_t *p, const void *x, const void *w, const void *zx,
                    const void *zw, int32_t *out)
{
    const mlvm_index_t og = p->o / p->groups, cg = p->c / p->groups;
    const mlvm_index_t taps = cg * p->kh * p->kw;
    const int32_t zxv = load8(zx, 0, p->x_signed);
    int32_t acc[MLVM_QCONV_BLOCK][MLVM_QCONV_CHUNK];
    int32_t zwo[MLVM_QCONV_BLOCK], wv[MLVM_QCONV_BLOCK];
    mlvm_index_t n, o, oy, j0, c, ky, kx, j;
    int b, nb;
    for (n = 0; n < p->n; ++n)
        for (o = 0; o < p->o; o += nb) {
            const mlvm_index_t c0 = (o / og) * cg;
            /* a block stays within its group */
            nb = (int)(og - o % og < MLVM_QCONV_BLOCK ? og - o % og : MLVM_QCONV_BLOCK);
            for (b = 0; b < nb; ++b)
                zwo[b] = load8(zw, p->zw_per_o ? o + b : 0, p->w_signed);
            for (oy = 0; oy < p->oh; ++oy)
                for (j0 = 0; j0 < p->ow; j0 += MLVM_QCONV_CHUNK) {
                    const mlvm_index_t cols = p->ow - j0 < MLVM_QCONV_CHUNK ? p->ow - j0 : MLVM_QCONV_CHUNK;
                    for (b = 0; b < nb; ++b)
                        for (j = 0; j < cols; ++j)
                            acc[b][j] = 0;
                    for (kx = 0; kx < p->kw; ++kx) {
                        /* ix = (j0 + j) * sw - pl + kx * dw must lie in [0, w) */
                        const mlvm_index_t off = j0 * p->sw - p->pl + kx * p->dw;
                        mlvm_index_t lo = ceil_div(-off, p->sw), hi = ceil_div(p->w - off, p->sw);
                        lo = lo < 0 ? 0 : lo;
                        hi = hi > cols ? cols : hi;
                        if (lo >= hi)
                            continue;
                        for (c = 0; c < cg; ++c)
                            for (ky = 0; ky < p->kh; ++ky) {
                                const mlvm_index_t iy = oy * p->sh - p->pt + ky * p->dh;
                                const mlvm_index_t row = ((n * p->c + c0 + c) * p->h + iy) * p->w;
                                const mlvm_index_t tap = (c * p->kh + ky) * p->kw + kx;
                                if (iy < 0 || iy >= p->h)
                                    continue;
                                for (b = 0; b < nb; ++b)
                                    wv[b] = load8(w, (o + b) * taps + tap, p->w_signed) - zwo[b];
                                if (p->x_signed)
                                    qtap_s8(acc, nb, (const int8_t *)x + row, lo, hi, p->sw, off, wv, zxv);
                                else
                                    qtap_u8(acc, nb, (const uint8_t *)x + row, lo, hi, p->sw, off, wv, zxv);
                            }
                    }
                    for (b = 0; b < nb; ++b)
                        for (j = 0; j < cols; ++j)
                            out[((n * p->o + o + b) * p->oh + oy) * p->ow + j0 + j] = acc[b][j];
                }
        }
}
