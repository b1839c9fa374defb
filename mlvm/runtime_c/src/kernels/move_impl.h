/* Data movement of one element width, included by move.c once per width
 * with MLVM_MOVE_T (an unsigned type of that width) and MLVM_MOVE_NAME(x)
 * (x suffixed by the width) defined, and MLVM_MOVE_TILE(s, ss, d, ds)
 * where a whole tile of the transposing gather goes in vectors. No
 * include guard on purpose. */

static void MLVM_MOVE_NAME(gather_rows_)(const mlvm_iter_t *it, const MLVM_MOVE_T *src,
                                         MLVM_MOVE_T *dst)
{
    mlvm_index_t idx[MLVM_MAX_RANK] = {0};
    mlvm_index_t oi = 0, oo = 0, i;
    const int32_t last = it->rank - 1;
    const mlvm_index_t n = it->shape[last];
    const mlvm_index_t s = it->stride[0][last];
    size_t r, rows = mlvm_iter_count(it, last);
    for (r = 0; r < rows; ++r, dst += n) {
        if (s == 1) {
            memcpy(dst, src + oi, (size_t)n * sizeof *dst);
        } else {
            const MLVM_MOVE_T *p = src + oi;
            for (i = 0; i < n; ++i)
                dst[i] = p[i * s];
        }
        mlvm_iter_step(it, last, idx, &oi, &oo);
    }
}

void MLVM_MOVE_NAME(mlvm_gather_b)(const mlvm_iter_t *it, const void *in, void *out)
{
    const MLVM_MOVE_T *src = (const MLVM_MOVE_T *)in;
    MLVM_MOVE_T *dst = (MLVM_MOVE_T *)out;
    const int32_t last = it->rank - 1;
    const mlvm_index_t n = it->shape[last], s = it->stride[0][last];
    mlvm_index_t idx[MLVM_MAX_RANK] = {0};
    mlvm_index_t oi = 0, oo = 0, m, os, i0, j0, i, j;
    int32_t dims[MLVM_MAX_RANK];
    int32_t q = -1, d, k, nd = 0;
    size_t t, count = 1;
    if (s != 1)
        for (d = last - 1; d >= 0; --d)
            if (it->stride[0][d] == 1) {
                q = d;
                break;
            }
    if (q < 0) {
        MLVM_MOVE_NAME(gather_rows_)(it, src, dst);
        return;
    }
    /* Dim q is contiguous in the input, `last` in the output: tile them. */
    for (d = 0; d < last; ++d)
        if (d != q) {
            dims[nd++] = d;
            count *= (size_t)it->shape[d];
        }
    m = it->shape[q];
    os = it->stride[1][q];
    for (t = 0; t < count; ++t) {
        const MLVM_MOVE_T *sp = src + oi;
        MLVM_MOVE_T *dp = dst + oo;
        for (i0 = 0; i0 < m; i0 += MLVM_GATHER_TILE) {
            const mlvm_index_t ie = move_imin(i0 + MLVM_GATHER_TILE, m);
            for (j0 = 0; j0 < n; j0 += MLVM_GATHER_TILE) {
                const mlvm_index_t je = move_imin(j0 + MLVM_GATHER_TILE, n);
#ifdef MLVM_MOVE_TILE
                if (ie - i0 == MLVM_GATHER_TILE && je - j0 == MLVM_GATHER_TILE) {
                    MLVM_MOVE_TILE(sp + i0 + j0 * s, s, dp + i0 * os + j0, os);
                    continue;
                }
#endif
                for (i = i0; i < ie; ++i)
                    for (j = j0; j < je; ++j)
                        dp[i * os + j] = sp[i + j * s];
            }
        }
        for (k = nd - 1; k >= 0; --k) {
            d = dims[k];
            oi += it->stride[0][d];
            oo += it->stride[1][d];
            if (++idx[d] < it->shape[d])
                break;
            oi -= it->stride[0][d] * it->shape[d];
            oo -= it->stride[1][d] * it->shape[d];
            idx[d] = 0;
        }
    }
}

void MLVM_MOVE_NAME(mlvm_broadcast_b)(const mlvm_iter_t *it, const void *in, void *out)
{
    const MLVM_MOVE_T *src = (const MLVM_MOVE_T *)in;
    MLVM_MOVE_T *dst = (MLVM_MOVE_T *)out;
    mlvm_index_t idx[MLVM_MAX_RANK] = {0};
    mlvm_index_t oi = 0, unused = 0, i;
    const int32_t outer = it->rank - 1;
    const mlvm_index_t n = it->shape[outer];
    const mlvm_index_t s = it->stride[0][outer];
    size_t r, rows = mlvm_iter_count(it, outer);
    for (r = 0; r < rows; ++r, dst += n) {
        for (i = 0; i < n; ++i)
            dst[i] = src[oi + i * s];
        mlvm_iter_step(it, outer, idx, &oi, &unused);
    }
}

void MLVM_MOVE_NAME(mlvm_copy2d_b)(size_t rows, size_t cols, const void *src,
                                   ptrdiff_t src_rs, void *dst, ptrdiff_t dst_rs)
{
    const MLVM_MOVE_T *s = (const MLVM_MOVE_T *)src;
    MLVM_MOVE_T *o = (MLVM_MOVE_T *)dst;
    size_t r;
    if (src_rs == (ptrdiff_t)cols && dst_rs == (ptrdiff_t)cols) {
        memcpy(o, s, rows * cols * sizeof *o);
        return;
    }
    for (r = 0; r < rows; ++r, s += src_rs, o += dst_rs)
        memcpy(o, s, cols * sizeof *o);
}
