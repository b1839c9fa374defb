/* The check module's comparisons: the worst element, not just a verdict. */
#include <math.h>

#include "iter.h"

/* Scans the broadcast pair (a, b) and returns 1 when some element fails,
 * with the flat index and values of the worst one (a NaN mismatch is the
 * worst possible). `excess` says how far an element is from passing. */
#define MLVM_DEFINE_CHECK(name, T, FAILS, EXCESS)                              \
    int name(const mlvm_iter_t *it, const T *a, const T *b, float atol,        \
             float rtol, int64_t *index, float *got, float *want)              \
    {                                                                          \
        mlvm_index_t idx[MLVM_MAX_RANK] = {0};                                 \
        mlvm_index_t oa = 0, ob = 0, i;                                        \
        const int32_t outer = it->rank - 1;                                    \
        const mlvm_index_t n = it->shape[outer];                               \
        size_t r, rows = mlvm_iter_count(it, outer);                           \
        int64_t flat = 0;                                                      \
        float worst = -1.0f;                                                   \
        int failed = 0;                                                        \
        (void)atol;                                                            \
        (void)rtol;                                                            \
        for (r = 0; r < rows; ++r) {                                           \
            for (i = 0; i < n; ++i, ++flat) {                                  \
                const T x = a[oa + i * it->stride[0][outer]];                  \
                const T y = b[ob + i * it->stride[1][outer]];                  \
                if (FAILS) {                                                   \
                    const float e = (EXCESS);                                  \
                    if (!failed || e > worst || e != e) {                      \
                        worst = e != e ? HUGE_VALF : e;                        \
                        *index = flat;                                         \
                        *got = (float)x;                                       \
                        *want = (float)y;                                      \
                    }                                                          \
                    failed = 1;                                                \
                }                                                              \
            }                                                                  \
            mlvm_iter_step(it, outer, idx, &oa, &ob);                          \
        }                                                                      \
        return failed;                                                         \
    }

/* |a - b| <= atol + rtol * |b|, as numpy.isclose; NaN never passes. */
MLVM_DEFINE_CHECK(mlvm_check_close_f32, float,
                  !(fabsf(x - y) <= atol + rtol * fabsf(y)),
                  fabsf(x - y) - (atol + rtol * fabsf(y)))
MLVM_DEFINE_CHECK(mlvm_check_eq_f32, float, !(x == y), fabsf(x - y))
MLVM_DEFINE_CHECK(mlvm_check_eq_i32, int32_t, x != y,
                  (float)(x > y ? (double)x - (double)y : (double)y - (double)x))
