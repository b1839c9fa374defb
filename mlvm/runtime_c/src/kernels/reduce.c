/* Reductions, argmax and the softmax cross-entropy loss. */
#include <math.h>

#include "iter.h"
#include "mlvm/kernels.h"
#include "mlvm/vmath.h"

#define MLVM_SUM_LANES 8

/* Sum of a contiguous row with several partial sums: vectorisable, and the
 * rounding error grows with n / MLVM_SUM_LANES rather than n. */
float mlvm_row_sum_f32(mlvm_index_t n, const float *x)
{
    float acc[MLVM_SUM_LANES] = {0};
    float s = 0.0f;
    mlvm_index_t i = 0;
    int l;
    for (; i + MLVM_SUM_LANES <= n; i += MLVM_SUM_LANES)
        for (l = 0; l < MLVM_SUM_LANES; ++l)
            acc[l] += x[i + l];
    for (l = 0; l < MLVM_SUM_LANES; ++l)
        s += acc[l];
    for (; i < n; ++i)
        s += x[i];
    return s;
}

/* NaN wins, as in numpy.max (one condition, no short circuit). */
static float max2(float acc, float v)
{
    return ((v > acc) | (v != v)) ? v : acc;
}

static float min2(float acc, float v)
{
    return ((v < acc) | (v != v)) ? v : acc;
}

/* In lanes (one running maximum made the loop a chain of compares, one
 * element at a time): the maximum does not depend on the order, and NaN
 * wins in any order. gcc vectorises these lanes with AVX-512's masks only;
 * with AVX2 it left a compare and a branch per element (a dynamically
 * quantized transformer's range reductions: 11 % of its time). */
#define MLVM_ROW_EXTREME(name, pick)                                                              \
    static float name(mlvm_index_t n, const float *x, float acc)                                  \
    {                                                                                             \
        float lane[MLVM_SUM_LANES];                                                               \
        mlvm_index_t i = 0;                                                                       \
        int l;                                                                                    \
        for (l = 0; l < MLVM_SUM_LANES; ++l)                                                      \
            lane[l] = acc;                                                                        \
        for (; i + MLVM_SUM_LANES <= n; i += MLVM_SUM_LANES)                                      \
            for (l = 0; l < MLVM_SUM_LANES; ++l)                                                  \
                lane[l] = pick(lane[l], x[i + l]);                                                \
        for (; i < n; ++i)                                                                        \
            acc = pick(acc, x[i]);                                                                \
        for (l = 0; l < MLVM_SUM_LANES; ++l)                                                      \
            acc = pick(acc, lane[l]);                                                             \
        return acc;                                                                               \
    }
MLVM_ROW_EXTREME(row_max_lanes, max2)
MLVM_ROW_EXTREME(row_min_lanes, min2)

#if defined(__AVX__) && !defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
/* With AVX (not AVX-512, whose masks vectorise the lanes above): vmaxps /
 * vminps over two vectors of lanes, which keep a lane's value where x is
 * NaN, and an unordered compare noting any NaN; a row with a NaN anywhere
 * (or a NaN acc) is picked again by the lanes above, so that the NaN
 * returned, sign and payload, is theirs. A row holding both zeros may
 * return the other one (they compare equal; docs/ops.md). */
#include <immintrin.h>
static float row_extreme_avx(mlvm_index_t n, const float *x, float acc, int is_max)
{
    __m256 m0 = _mm256_set1_ps(acc), m1 = m0, nan = _mm256_setzero_ps();
    float lane[8];
    mlvm_index_t i = 0;
    int l;
    if (acc != acc)
        return is_max ? row_max_lanes(n, x, acc) : row_min_lanes(n, x, acc);
    for (; i + 16 <= n; i += 16) {
        const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        m0 = is_max ? _mm256_max_ps(v0, m0) : _mm256_min_ps(v0, m0);
        m1 = is_max ? _mm256_max_ps(v1, m1) : _mm256_min_ps(v1, m1);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q));
    }
    for (l = 0; i + l < n; ++l) /* the tail's NaN too */
        nan = _mm256_or_ps(nan, _mm256_set1_ps(x[i + l] != x[i + l] ? -1.0f : 0.0f));
    if (_mm256_movemask_ps(nan))
        return is_max ? row_max_lanes(n, x, acc) : row_min_lanes(n, x, acc);
    _mm256_storeu_ps(lane, is_max ? _mm256_max_ps(m0, m1) : _mm256_min_ps(m0, m1));
    for (; i < n; ++i)
        acc = is_max ? max2(acc, x[i]) : min2(acc, x[i]);
    for (l = 0; l < 8; ++l)
        acc = is_max ? max2(acc, lane[l]) : min2(acc, lane[l]);
    return acc;
}

float mlvm_row_max_f32(mlvm_index_t n, const float *x, float acc)
{
    return row_extreme_avx(n, x, acc, 1);
}

float mlvm_row_min_f32(mlvm_index_t n, const float *x, float acc)
{
    return row_extreme_avx(n, x, acc, 0);
}
#else
float mlvm_row_max_f32(mlvm_index_t n, const float *x, float acc)
{
    return row_max_lanes(n, x, acc);
}

float mlvm_row_min_f32(mlvm_index_t n, const float *x, float acc)
{
    return row_min_lanes(n, x, acc);
}
#endif

enum { REDUCE_SUM, REDUCE_MAX, REDUCE_MIN };

static void reduce_walk(const mlvm_iter_t *it, const float *in, float *out, int kind)
{
    mlvm_index_t idx[MLVM_MAX_RANK] = {0};
    mlvm_index_t oi = 0, oo = 0, i;
    const int32_t outer = it->rank - 1;
    const mlvm_index_t n = it->shape[outer];
    const mlvm_index_t si = it->stride[0][outer];
    const mlvm_index_t so = it->stride[1][outer];
    size_t r, rows = mlvm_iter_count(it, outer);
    for (r = 0; r < rows; ++r) {
        const float *pi = in + oi;
        float *po = out + oo;
        if (so == 0 && si == 1) {
            po[0] = kind == REDUCE_MAX   ? mlvm_row_max_f32(n, pi, po[0])
                    : kind == REDUCE_MIN ? mlvm_row_min_f32(n, pi, po[0])
                                         : po[0] + mlvm_row_sum_f32(n, pi);
        } else if (kind == REDUCE_MAX) {
            for (i = 0; i < n; ++i)
                po[i * so] = max2(po[i * so], pi[i * si]);
        } else if (kind == REDUCE_MIN) {
            for (i = 0; i < n; ++i)
                po[i * so] = min2(po[i * so], pi[i * si]);
        } else if (so == 1 && si == 1) { /* a row into a row: vectorised */
            for (i = 0; i < n; ++i)
                po[i] += pi[i];
        } else {
            for (i = 0; i < n; ++i)
                po[i * so] += pi[i * si];
        }
        mlvm_iter_step(it, outer, idx, &oi, &oo);
    }
}

void mlvm_reduce_sum_f32(const mlvm_iter_t *it, const float *in, float *out,
                         size_t out_n, size_t count)
{
    (void)count;
    mlvm_fill_f32(out_n, 0.0f, out);
    reduce_walk(it, in, out, REDUCE_SUM);
}

void mlvm_reduce_max_f32(const mlvm_iter_t *it, const float *in, float *out,
                         size_t out_n, size_t count)
{
    (void)count;
    mlvm_fill_f32(out_n, -HUGE_VALF, out);
    reduce_walk(it, in, out, REDUCE_MAX);
}

void mlvm_reduce_min_f32(const mlvm_iter_t *it, const float *in, float *out,
                         size_t out_n, size_t count)
{
    (void)count;
    mlvm_fill_f32(out_n, HUGE_VALF, out);
    reduce_walk(it, in, out, REDUCE_MIN);
}

void mlvm_reduce_mean_f32(const mlvm_iter_t *it, const float *in, float *out,
                          size_t out_n, size_t count)
{
    size_t o;
    mlvm_reduce_sum_f32(it, in, out, out_n, count);
    for (o = 0; o < out_n; ++o)
        out[o] /= (float)count;
}

void mlvm_argmax_f32(size_t outer, size_t n, size_t inner, const float *in,
                     int32_t *out)
{
    size_t o, j, i;
    for (o = 0; o < outer; ++o) {
        const float *base = in + o * n * inner;
        for (j = 0; j < inner; ++j) {
            float best = base[j];
            int32_t bi = 0;
            for (i = 1; i < n; ++i) {
                const float v = base[i * inner + j];
                /* The first NaN is the maximum, as in numpy.argmax. */
                if (v > best || (v != v && best == best)) {
                    best = v;
                    bi = (int32_t)i;
                }
            }
            out[o * inner + j] = bi;
        }
    }
}

#define XENT_ROWS 16

void mlvm_softmax_xent_f32(size_t rows, size_t cols, const float *labels,
                           const float *logits, float *loss, float *grad)
{
    const size_t n = rows * cols;
    size_t r, r0, k, c, i;
    /* Rows are short (one per class): shift each by its max into grad, keep
     * the max in loss[r], then take every exponential in one flat vector
     * loop, and finish the rows (each row's sums in order). */
    for (r = 0; r < rows; ++r) {
        const float *x = logits + r * cols;
        float *g = grad + r * cols;
        float mx = -HUGE_VALF;
        /* No branch: rows of random logits mispredict the one of max2. A
         * NaN need not win here: through the row's sum it makes every
         * output of its row NaN all the same. */
        for (c = 0; c < cols; ++c)
            mx = x[c] > mx ? x[c] : mx;
        for (c = 0; c < cols; ++c)
            g[c] = x[c] - mx;
        loss[r] = mx;
    }
    for (i = 0; i < n; ++i)
        grad[i] = mlvm_expf(grad[i]);
    /* Sixteen rows at a time, each pass over all of them: the rows' sums,
     * logarithms and losses are independent chains the core overlaps (one
     * row's serial sums alone leave it waiting on each add). */
    for (r0 = 0; r0 < rows; r0 += XENT_ROWS) {
        const size_t nb = rows - r0 < XENT_ROWS ? rows - r0 : XENT_ROWS;
        float s[XENT_ROWS], lse[XENT_ROWS];
        for (k = 0; k < nb; ++k) {
            const float *g = grad + (r0 + k) * cols;
            float sum = 0.0f;
            for (c = 0; c < cols; ++c)
                sum += g[c];
            s[k] = sum;
        }
        for (k = 0; k < nb; ++k)
            lse[k] = logf(s[k]);
        for (k = 0; k < nb; ++k) {
            const size_t r = r0 + k;
            const float *x = logits + r * cols;
            const float *y = labels + r * cols;
            float *g = grad + r * cols;
            const float mx = loss[r];
            float l = 0.0f;
            for (c = 0; c < cols; ++c) {
                l -= y[c] * (x[c] - mx - lse[k]);
                g[c] = g[c] / s[k] - y[c];
            }
            loss[r] = l;
        }
    }
}
