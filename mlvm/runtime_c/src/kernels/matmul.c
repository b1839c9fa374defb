/* Matrix products. The row-major case runs an i-k-j loop whose inner loop
 * is a contiguous axpy that the compiler vectorises; a transposed rhs runs
 * dot products with several partial sums. */
#include "iter.h"

#define MLVM_DOT_LANES 8

static float dot_strided(mlvm_index_t k, const float *a, mlvm_index_t sa,
                         const float *b, mlvm_index_t sb)
{
    float s = 0.0f;
    mlvm_index_t kk;
    for (kk = 0; kk < k; ++kk)
        s += a[kk * sa] * b[kk * sb];
    return s;
}

static float dot_contiguous(mlvm_index_t k, const float *a, const float *b)
{
    float acc[MLVM_DOT_LANES] = {0};
    float s = 0.0f;
    mlvm_index_t kk = 0;
    int l;
    for (; kk + MLVM_DOT_LANES <= k; kk += MLVM_DOT_LANES)
        for (l = 0; l < MLVM_DOT_LANES; ++l)
            acc[l] += a[kk + l] * b[kk + l];
    for (l = 0; l < MLVM_DOT_LANES; ++l)
        s += acc[l];
    for (; kk < k; ++kk)
        s += a[kk] * b[kk];
    return s;
}

static void matmul_2d(const mlvm_matmul_t *p, const float *a, const float *b,
                      float *out)
{
    const mlvm_index_t m = p->m, n = p->n, k = p->k;
    mlvm_index_t i, j, kk;
    if (p->b_cs == 1) {
        for (i = 0; i < m; ++i) {
            float *o = out + i * n;
            for (j = 0; j < n; ++j)
                o[j] = 0.0f;
            for (kk = 0; kk < k; ++kk) {
                const float av = a[i * p->a_rs + kk * p->a_cs];
                const float *br = b + kk * p->b_rs;
                for (j = 0; j < n; ++j)
                    o[j] += av * br[j];
            }
        }
    } else if (p->a_cs == 1 && p->b_rs == 1) {
        for (i = 0; i < m; ++i)
            for (j = 0; j < n; ++j)
                out[i * n + j] = dot_contiguous(k, a + i * p->a_rs, b + j * p->b_cs);
    } else {
        for (i = 0; i < m; ++i)
            for (j = 0; j < n; ++j)
                out[i * n + j] = dot_strided(k, a + i * p->a_rs, p->a_cs,
                                             b + j * p->b_cs, p->b_rs);
    }
}

void mlvm_matmul_f32(const mlvm_matmul_t *p, const mlvm_iter_t *batch,
                     const float *a, const float *b, float *out)
{
    mlvm_index_t idx[MLVM_MAX_RANK] = {0};
    mlvm_index_t oa = 0, ob = 0;
    size_t t, count = mlvm_iter_count(batch, batch->rank);
    for (t = 0; t < count; ++t, out += p->m * p->n) {
        matmul_2d(p, a + oa, b + ob, out);
        mlvm_iter_step(batch, batch->rank, idx, &oa, &ob);
    }
}
