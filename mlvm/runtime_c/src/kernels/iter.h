/* Internal: walking an mlvm_iter_t row by row (the innermost dim is the
 * kernel's own loop). */
#ifndef MLVM_KERNELS_ITER_H_
#define MLVM_KERNELS_ITER_H_

#include "mlvm/kernels.h"

/* Number of positions over the first `ndims` dims. */
static inline size_t mlvm_iter_count(const mlvm_iter_t *it, int32_t ndims)
{
    size_t n = 1;
    int32_t d;
    for (d = 0; d < ndims; ++d)
        n *= (size_t)it->shape[d];
    return n;
}

/* Advance the odometer `idx` over the first `ndims` dims, keeping the two
 * operand offsets in step. */
static inline void mlvm_iter_step(const mlvm_iter_t *it, int32_t ndims,
                                  mlvm_index_t *idx, mlvm_index_t *o0,
                                  mlvm_index_t *o1)
{
    int32_t d;
    for (d = ndims - 1; d >= 0; --d) {
        *o0 += it->stride[0][d];
        *o1 += it->stride[1][d];
        if (++idx[d] < it->shape[d])
            return;
        *o0 -= it->stride[0][d] * it->shape[d];
        *o1 -= it->stride[1][d] * it->shape[d];
        idx[d] = 0;
    }
}

#endif /* MLVM_KERNELS_ITER_H_ */
