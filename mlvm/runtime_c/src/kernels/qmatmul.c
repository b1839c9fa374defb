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
