/* Eager execution: each op's iteration space computed at run time, then the
 * same kernel call the compiler would emit. */
#include <math.h>
#include <string.h>

#include "mlvm/exec.h"
#include "mlvm/kernels.h"
#include "vm_impl.h"

typedef int64_t dims_t[MLVM_MAX_RANK];
typedef mlvm_index_t strides_t[MLVM_MAX_RANK];

/* ------------------------------------------------------------------------ */
/* Shape arithmetic (mirrors mlvm/dialect/shapes.py)                         */
/* ------------------------------------------------------------------------ */

static void contiguous_strides(int32_t rank, const int64_t *dims,
                               mlvm_index_t *st)
{
    mlvm_index_t acc = 1;
    int32_t d;
    for (d = rank - 1; d >= 0; --d) {
        st[d] = acc;
        acc *= (mlvm_index_t)dims[d];
    }
}

/* Element strides that read a contiguous src (srank, sdims) at every index
 * of a rank-`rank` space: 0 on padded and unit dims. */
static void broadcast_strides(int32_t srank, const int64_t *sdims,
                              int32_t rank, mlvm_index_t *st)
{
    strides_t own;
    int32_t d, pad = rank - srank;
    contiguous_strides(srank, sdims, own);
    for (d = 0; d < rank; ++d)
        st[d] = (d < pad || sdims[d - pad] == 1) ? 0 : own[d - pad];
}

#ifdef MLVM_CHECKS
/* numpy broadcasting of two dims lists into out; 0 when they do not
 * broadcast. */
static int broadcast_dims(int32_t ra, const int64_t *a, int32_t rb,
                          const int64_t *b, int32_t *rank, int64_t *out)
{
    int32_t r = ra > rb ? ra : rb, d;
    for (d = 0; d < r; ++d) {
        int64_t x = d - (r - ra) >= 0 ? a[d - (r - ra)] : 1;
        int64_t y = d - (r - rb) >= 0 ? b[d - (r - rb)] : 1;
        if (x == y || y == 1)
            out[d] = x;
        else if (x == 1)
            out[d] = y;
        else
            return 0;
    }
    *rank = r;
    return 1;
}

static int dims_eq(int32_t ra, const int64_t *a, int32_t rb, const int64_t *b)
{
    int32_t d;
    if (ra != rb)
        return 0;
    for (d = 0; d < ra; ++d)
        if (a[d] != b[d])
            return 0;
    return 1;
}

/* Whether src broadcasts to exactly dst (numpy.broadcast_to). */
static int broadcasts_to(const mlvm_shape_t *src, const mlvm_shape_t *dst)
{
    dims_t out;
    int32_t r;
    return src->rank <= dst->rank &&
           broadcast_dims(src->rank, src->dims, dst->rank, dst->dims, &r, out) &&
           dims_eq(r, out, dst->rank, dst->dims);
}
#endif

/* An iteration over `rank` dims for two stride lists, with unit dims dropped
 * and neighbours merged where both operands walk them as one (rank >= 1). */
static void make_iter(int32_t rank, const int64_t *dims, const mlvm_index_t *s0,
                      const mlvm_index_t *s1, mlvm_iter_t *it)
{
    int32_t d, r = 0;
    for (d = 0; d < rank; ++d) {
        const mlvm_index_t n = (mlvm_index_t)dims[d];
        if (n == 1)
            continue;
        if (r > 0 && it->stride[0][r - 1] == s0[d] * n &&
            it->stride[1][r - 1] == s1[d] * n) {
            it->shape[r - 1] *= n;
            it->stride[0][r - 1] = s0[d];
            it->stride[1][r - 1] = s1[d];
            continue;
        }
        it->shape[r] = n;
        it->stride[0][r] = s0[d];
        it->stride[1][r] = s1[d];
        ++r;
    }
    if (r == 0) {
        it->shape[0] = 1;
        it->stride[0][0] = 0;
        it->stride[1][0] = 0;
        r = 1;
    }
    it->rank = r;
}

static size_t prod(int32_t from, int32_t to, const int64_t *dims)
{
    size_t n = 1;
    int32_t d;
    for (d = from; d < to; ++d)
        n *= (size_t)dims[d];
    return n;
}

/* ------------------------------------------------------------------------ */
/* Checks shared by the families                                             */
/* ------------------------------------------------------------------------ */

#ifdef MLVM_CHECKS
static int bytes_overlap(const mlvm_slot_t *x, const mlvm_slot_t *y)
{
    const uintptr_t a = (uintptr_t)x->data, b = (uintptr_t)y->data;
    return x->nbytes > 0 && y->nbytes > 0 && a < b + y->nbytes &&
           b < a + x->nbytes;
}

/* Elementwise: dst may be the operand itself, never a part of it. */
static int inplace_ok(const mlvm_slot_t *dst, const mlvm_slot_t *src)
{
    return !bytes_overlap(dst, src) ||
           (dst->data == src->data && dst->nbytes == src->nbytes);
}
#endif

#define SLOT(h) (&vm->slots[(h)])
#define DIMS(s) ((s)->shape->dims)
#define RANK(s) ((s)->shape->rank)
#define SIZE(s) ((s)->shape->size)

/* ------------------------------------------------------------------------ */
/* Families                                                                  */
/* ------------------------------------------------------------------------ */

/* Eager arithmetic has f32 and i32 kernels; tensors of the other element
 * types can be made, read, written, copied and moved (checked even without
 * MLVM_CHECKS: a kernel of the wrong width would write out of bounds). */
static int arith_dtype(int32_t dtype)
{
    return dtype == MLVM_F32 || dtype == MLVM_I32;
}

/* The data-movement kernel of an element size (called, not taken by
 * address: the runtime stays free of relocations through a GOT). */
static void gather_n(size_t size, const mlvm_iter_t *it, const void *in, void *out)
{
    if (size == 1)
        mlvm_gather_b8(it, in, out);
    else if (size == 2)
        mlvm_gather_b16(it, in, out);
    else if (size == 8)
        mlvm_gather_b64(it, in, out);
    else
        mlvm_gather_b32(it, in, out);
}

static void broadcast_n(size_t size, const mlvm_iter_t *it, const void *in, void *out)
{
    if (size == 1)
        mlvm_broadcast_b8(it, in, out);
    else if (size == 2)
        mlvm_broadcast_b16(it, in, out);
    else if (size == 8)
        mlvm_broadcast_b64(it, in, out);
    else
        mlvm_broadcast_b32(it, in, out);
}

static void copy2d_n(size_t size, size_t rows, size_t cols, const void *src,
                     ptrdiff_t src_rs, void *dst, ptrdiff_t dst_rs)
{
    if (size == 1)
        mlvm_copy2d_b8(rows, cols, src, src_rs, dst, dst_rs);
    else if (size == 2)
        mlvm_copy2d_b16(rows, cols, src, src_rs, dst, dst_rs);
    else if (size == 8)
        mlvm_copy2d_b64(rows, cols, src, src_rs, dst, dst_rs);
    else
        mlvm_copy2d_b32(rows, cols, src, src_rs, dst, dst_rs);
}

static mlvm_status_t exec_fill(mlvm_vm_t *vm, mlvm_op_t op,
                               const mlvm_opts_t *o, mlvm_handle_t dst,
                               mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    mlvm_slot_t *d = SLOT(dst);
    (void)op;
    (void)lhs;
    (void)rhs;
    if (!arith_dtype(d->dtype))
        return MLVM_ERR_SHAPE;
    if (d->dtype == MLVM_F32)
        mlvm_fill_f32(SIZE(d), o->f, (float *)d->data);
    else
        mlvm_fill_i32(SIZE(d), (int32_t)o->f, (int32_t *)d->data);
    return MLVM_OK;
}

typedef void (*binary_f32_fn)(const mlvm_iter_t *, const float *, const float *,
                              float *);
typedef void (*binary_i32_fn)(const mlvm_iter_t *, const int32_t *,
                              const int32_t *, int32_t *);
typedef void (*compare_i32_fn)(const mlvm_iter_t *, const int32_t *,
                               const int32_t *, float *);

static mlvm_status_t exec_binary(mlvm_vm_t *vm, mlvm_op_t op,
                                 const mlvm_opts_t *o, mlvm_handle_t dst,
                                 mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs), *b = SLOT(rhs);
    const int compare = op == MLVM_OP_EQ || op == MLVM_OP_CMPL;
    strides_t sa, sb;
    mlvm_iter_t it;
    (void)o;
    if (!arith_dtype(a->dtype))
        return MLVM_ERR_SHAPE;
#ifdef MLVM_CHECKS
    {
        dims_t out;
        int32_t r;
        MLVM_REQUIRE(a->dtype == b->dtype, MLVM_ERR_SHAPE);
        MLVM_REQUIRE(op != MLVM_OP_DIV || a->dtype == MLVM_F32, MLVM_ERR_SHAPE);
        MLVM_REQUIRE(d->dtype == (compare ? MLVM_F32 : a->dtype), MLVM_ERR_SHAPE);
        MLVM_REQUIRE(broadcast_dims(RANK(a), DIMS(a), RANK(b), DIMS(b), &r, out) &&
                         dims_eq(r, out, RANK(d), DIMS(d)),
                     MLVM_ERR_SHAPE);
        MLVM_REQUIRE(inplace_ok(d, a) && inplace_ok(d, b), MLVM_ERR_INVALID);
    }
#endif
    if (SIZE(d) == 0)
        return MLVM_OK;
    broadcast_strides(RANK(a), DIMS(a), RANK(d), sa);
    broadcast_strides(RANK(b), DIMS(b), RANK(d), sb);
    make_iter(RANK(d), DIMS(d), sa, sb, &it);
    if (a->dtype == MLVM_F32) {
        static const binary_f32_fn fns[] = {
            mlvm_add_f32, mlvm_sub_f32, mlvm_mul_f32, mlvm_div_f32,
            mlvm_max_f32, mlvm_min_f32, mlvm_eq_f32,  mlvm_cmpl_f32};
        fns[op - MLVM_OP_ADD](&it, (const float *)a->data,
                              (const float *)b->data, (float *)d->data);
    } else if (compare) {
        static const compare_i32_fn fns[] = {mlvm_eq_i32, mlvm_cmpl_i32};
        fns[op - MLVM_OP_EQ](&it, (const int32_t *)a->data,
                             (const int32_t *)b->data, (float *)d->data);
    } else {
        static const binary_i32_fn fns[] = {mlvm_add_i32, mlvm_sub_i32,
                                            mlvm_mul_i32, mlvm_div_i32,
                                            mlvm_max_i32, mlvm_min_i32};
        fns[op - MLVM_OP_ADD](&it, (const int32_t *)a->data,
                              (const int32_t *)b->data, (int32_t *)d->data);
    }
    return MLVM_OK;
}

/* Same shape, f32 in and out, dst may be the operand. */
#define REQUIRE_UNARY_F32(d, a)                                                \
    do {                                                                       \
        MLVM_REQUIRE((a)->dtype == MLVM_F32 && (d)->dtype == MLVM_F32,         \
                     MLVM_ERR_SHAPE);                                          \
        MLVM_REQUIRE(mlvm_shape_equal((a)->shape, (d)->shape), MLVM_ERR_SHAPE); \
        MLVM_REQUIRE(inplace_ok(d, a), MLVM_ERR_INVALID);                      \
    } while (0)

static mlvm_status_t exec_unary(mlvm_vm_t *vm, mlvm_op_t op,
                                const mlvm_opts_t *o, mlvm_handle_t dst,
                                mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    typedef void (*unary_fn)(size_t, const float *, float *);
#define MLVM_UNARY_ENTRY_(name) mlvm_##name##_f32,
    static const unary_fn fns[] = {MLVM_UNARY_KERNELS(MLVM_UNARY_ENTRY_)};
#undef MLVM_UNARY_ENTRY_
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs);
    (void)o;
    (void)rhs;
    REQUIRE_UNARY_F32(d, a);
    fns[op - MLVM_OP_NEG](SIZE(d), (const float *)a->data, (float *)d->data);
    return MLVM_OK;
}

static mlvm_status_t exec_rsqrt(mlvm_vm_t *vm, mlvm_op_t op,
                                const mlvm_opts_t *o, mlvm_handle_t dst,
                                mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs);
    (void)op;
    (void)rhs;
    REQUIRE_UNARY_F32(d, a);
    mlvm_rsqrt_f32(SIZE(d), o->f, (const float *)a->data, (float *)d->data);
    return MLVM_OK;
}

static mlvm_status_t exec_matmul(mlvm_vm_t *vm, mlvm_op_t op,
                                 const mlvm_opts_t *o, mlvm_handle_t dst,
                                 mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs), *b = SLOT(rhs);
    const int32_t ra = RANK(a), rb = RANK(b);
    const int ta = (o->flags & MLVM_TRANSPOSE_LHS) != 0;
    const int tb = (o->flags & MLVM_TRANSPOSE_RHS) != 0;
    const int64_t *da = DIMS(a), *db = DIMS(b), *dd = DIMS(d);
    const int32_t br = RANK(d) - 2; /* batch rank */
    strides_t sa, sb;
    mlvm_matmul_t p;
    mlvm_iter_t it;
    mlvm_index_t mat_a, mat_b;
    int32_t i;
    (void)op;
#ifdef MLVM_CHECKS
    MLVM_REQUIRE((o->flags & ~(MLVM_TRANSPOSE_LHS | MLVM_TRANSPOSE_RHS)) == 0,
                 MLVM_ERR_INVALID);
    MLVM_REQUIRE(a->dtype == MLVM_F32 && b->dtype == MLVM_F32 &&
                     d->dtype == MLVM_F32,
                 MLVM_ERR_SHAPE);
    MLVM_REQUIRE(ra >= 2 && rb >= 2 && (ra == 2) == (rb == 2), MLVM_ERR_SHAPE);
    MLVM_REQUIRE(!bytes_overlap(d, a) && !bytes_overlap(d, b), MLVM_ERR_INVALID);
#endif
    p.m = (mlvm_index_t)(ta ? da[ra - 1] : da[ra - 2]);
    p.k = (mlvm_index_t)(ta ? da[ra - 2] : da[ra - 1]);
    p.n = (mlvm_index_t)(tb ? db[rb - 2] : db[rb - 1]);
#ifdef MLVM_CHECKS
    {
        dims_t batch;
        int32_t r;
        const mlvm_index_t kb = (mlvm_index_t)(tb ? db[rb - 1] : db[rb - 2]);
        MLVM_REQUIRE(p.k == kb, MLVM_ERR_SHAPE);
        MLVM_REQUIRE(broadcast_dims(ra - 2, da, rb - 2, db, &r, batch),
                     MLVM_ERR_SHAPE);
        MLVM_REQUIRE(r == br && dims_eq(r, batch, br, dd) &&
                         dd[br] == p.m && dd[br + 1] == p.n,
                     MLVM_ERR_SHAPE);
    }
#endif
    if (SIZE(d) == 0)
        return MLVM_OK;
    if (p.k == 0) {
        mlvm_fill_f32(SIZE(d), 0.0f, (float *)d->data);
        return MLVM_OK;
    }
    /* Element strides of the (i, k) and (k, j) walks inside one matrix. */
    p.a_rs = ta ? 1 : p.k;
    p.a_cs = ta ? p.m : 1;
    p.b_rs = tb ? 1 : p.n;
    p.b_cs = tb ? p.k : 1;
    p.b_panel = 0;
    mat_a = (mlvm_index_t)(da[ra - 1] * da[ra - 2]);
    mat_b = (mlvm_index_t)(db[rb - 1] * db[rb - 2]);
    broadcast_strides(ra - 2, da, br, sa);
    broadcast_strides(rb - 2, db, br, sb);
    for (i = 0; i < br; ++i) {
        sa[i] *= mat_a;
        sb[i] *= mat_b;
    }
    make_iter(br, dd, sa, sb, &it);
    mlvm_matmul_f32(&p, &it, (const float *)a->data, (const float *)b->data,
                    (float *)d->data);
    return MLVM_OK;
}

static mlvm_status_t exec_reduce(mlvm_vm_t *vm, mlvm_op_t op,
                                 const mlvm_opts_t *o, mlvm_handle_t dst,
                                 mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs);
    const int32_t rank = RANK(a);
    const int64_t *dims = DIMS(a);
    dims_t kept = {0};
    strides_t sin, sout;
    mlvm_iter_t it;
    size_t count = 1;
    int32_t i;
    (void)rhs;
    MLVM_REQUIRE(rank >= 32 || (o->axes >> rank) == 0, MLVM_ERR_INVALID);
    for (i = 0; i < rank; ++i) {
        const int reduced = (o->axes >> i) & 1u;
        kept[i] = reduced ? 1 : dims[i];
        if (reduced)
            count *= (size_t)dims[i];
    }
#ifdef MLVM_CHECKS
    MLVM_REQUIRE(a->dtype == MLVM_F32 && d->dtype == MLVM_F32, MLVM_ERR_SHAPE);
    {
        dims_t dropped;
        int32_t r = 0;
        for (i = 0; i < rank; ++i)
            if (!((o->axes >> i) & 1u))
                dropped[r++] = dims[i];
        MLVM_REQUIRE(dims_eq(rank, kept, RANK(d), DIMS(d)) ||
                         dims_eq(r, dropped, RANK(d), DIMS(d)),
                     MLVM_ERR_SHAPE);
    }
    MLVM_REQUIRE(!bytes_overlap(d, a), MLVM_ERR_INVALID);
    /* The maximum of nothing has no value (as argmax, and numpy, say). */
    MLVM_REQUIRE(op != MLVM_OP_REDUCE_MAX || count > 0 || SIZE(d) == 0, MLVM_ERR_SHAPE);
#endif
    if (SIZE(d) == 0)
        return MLVM_OK;
    contiguous_strides(rank, dims, sin);
    contiguous_strides(rank, kept, sout);
    for (i = 0; i < rank; ++i)
        if ((o->axes >> i) & 1u)
            sout[i] = 0;
    make_iter(rank, dims, sin, sout, &it);
    if (op == MLVM_OP_REDUCE_SUM)
        mlvm_reduce_sum_f32(&it, (const float *)a->data, (float *)d->data,
                            SIZE(d), count);
    else if (op == MLVM_OP_REDUCE_MAX)
        mlvm_reduce_max_f32(&it, (const float *)a->data, (float *)d->data,
                            SIZE(d), count);
    else
        mlvm_reduce_mean_f32(&it, (const float *)a->data, (float *)d->data,
                             SIZE(d), count);
    return MLVM_OK;
}

static mlvm_status_t exec_argmax(mlvm_vm_t *vm, mlvm_op_t op,
                                 const mlvm_opts_t *o, mlvm_handle_t dst,
                                 mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs);
    const int32_t rank = RANK(a);
    const int64_t *dims = DIMS(a);
    const int32_t ax = o->axis < 0 ? o->axis + rank : o->axis;
    (void)op;
    (void)rhs;
    MLVM_REQUIRE(ax >= 0 && ax < rank, MLVM_ERR_INVALID);
#ifdef MLVM_CHECKS
    MLVM_REQUIRE(a->dtype == MLVM_F32 && d->dtype == MLVM_I32, MLVM_ERR_SHAPE);
    {
        dims_t kept, dropped;
        int32_t i, r = 0;
        for (i = 0; i < rank; ++i) {
            kept[i] = i == ax ? 1 : dims[i];
            if (i != ax)
                dropped[r++] = dims[i];
        }
        MLVM_REQUIRE(dims_eq(rank, kept, RANK(d), DIMS(d)) ||
                         dims_eq(r, dropped, RANK(d), DIMS(d)),
                     MLVM_ERR_SHAPE);
        MLVM_REQUIRE(dims[ax] > 0 || SIZE(d) == 0, MLVM_ERR_SHAPE);
    }
    MLVM_REQUIRE(!bytes_overlap(d, a), MLVM_ERR_INVALID);
#endif
    if (SIZE(d) == 0)
        return MLVM_OK;
    mlvm_argmax_f32(prod(0, ax, dims), (size_t)dims[ax],
                    prod(ax + 1, rank, dims), (const float *)a->data,
                    (int32_t *)d->data);
    return MLVM_OK;
}

static mlvm_status_t exec_softmax_xent(mlvm_vm_t *vm, mlvm_op_t op,
                                       const mlvm_opts_t *o, mlvm_handle_t dst,
                                       mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *loss = SLOT(dst), *y = SLOT(lhs), *x = SLOT(rhs), *g;
    size_t cols;
    (void)op;
    MLVM_REQUIRE(mlvm_handle_ok_(vm, o->aux), MLVM_ERR_INVALID);
    g = SLOT(o->aux);
#ifdef MLVM_CHECKS
    MLVM_REQUIRE(y->dtype == MLVM_F32 && x->dtype == MLVM_F32 &&
                     loss->dtype == MLVM_F32 && g->dtype == MLVM_F32,
                 MLVM_ERR_SHAPE);
    MLVM_REQUIRE(RANK(x) >= 1 && mlvm_shape_equal(x->shape, y->shape) &&
                     mlvm_shape_equal(x->shape, g->shape) &&
                     dims_eq(RANK(x) - 1, DIMS(x), RANK(loss), DIMS(loss)),
                 MLVM_ERR_SHAPE);
    MLVM_REQUIRE(!bytes_overlap(loss, x) && !bytes_overlap(loss, y) &&
                     !bytes_overlap(g, x) && !bytes_overlap(g, y) &&
                     !bytes_overlap(g, loss),
                 MLVM_ERR_INVALID);
#endif
    if (SIZE(x) == 0)
        return MLVM_OK;
    cols = (size_t)DIMS(x)[RANK(x) - 1];
    mlvm_softmax_xent_f32(SIZE(x) / cols, cols, (const float *)y->data,
                          (const float *)x->data, (float *)loss->data,
                          (float *)g->data);
    return MLVM_OK;
}

static mlvm_status_t exec_cast(mlvm_vm_t *vm, mlvm_op_t op,
                               const mlvm_opts_t *o, mlvm_handle_t dst,
                               mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs);
    (void)op;
    (void)o;
    (void)rhs;
    MLVM_REQUIRE(mlvm_shape_equal(a->shape, d->shape), MLVM_ERR_SHAPE);
    MLVM_REQUIRE(inplace_ok(d, a), MLVM_ERR_INVALID);
    if (a->dtype != d->dtype && !(arith_dtype(a->dtype) && arith_dtype(d->dtype)))
        return MLVM_ERR_SHAPE;
    if (a->dtype == d->dtype)
        mlvm_copy(d->nbytes, a->data, d->data);
    else if (a->dtype == MLVM_F32)
        mlvm_cast_f32_i32(SIZE(d), (const float *)a->data, (int32_t *)d->data);
    else
        mlvm_cast_i32_f32(SIZE(d), (const int32_t *)a->data, (float *)d->data);
    return MLVM_OK;
}

static mlvm_status_t exec_reshape(mlvm_vm_t *vm, mlvm_op_t op,
                                  const mlvm_opts_t *o, mlvm_handle_t dst,
                                  mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs);
    (void)op;
    (void)o;
    (void)rhs;
    MLVM_REQUIRE(a->dtype == d->dtype && SIZE(a) == SIZE(d), MLVM_ERR_SHAPE);
    if (d->nbytes > 0)
        mlvm_copy(d->nbytes, a->data, d->data); /* memmove: overlap is fine */
    return MLVM_OK;
}

static mlvm_status_t exec_broadcast_to(mlvm_vm_t *vm, mlvm_op_t op,
                                       const mlvm_opts_t *o, mlvm_handle_t dst,
                                       mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs);
    strides_t sa, zero;
    mlvm_iter_t it;
    (void)op;
    (void)o;
    (void)rhs;
    MLVM_REQUIRE(a->dtype == d->dtype && broadcasts_to(a->shape, d->shape),
                 MLVM_ERR_SHAPE);
    MLVM_REQUIRE(inplace_ok(d, a), MLVM_ERR_INVALID);
    if (SIZE(d) == 0)
        return MLVM_OK;
    memset(zero, 0, sizeof zero);
    broadcast_strides(RANK(a), DIMS(a), RANK(d), sa);
    make_iter(RANK(d), DIMS(d), sa, zero, &it);
    broadcast_n(MLVM_DTYPE_SIZE(d->dtype), &it, a->data, d->data);
    return MLVM_OK;
}

/* ------------------------------------------------------------------------ */
/* Neural-network ops (mirrors mlvm/dialect/nn.py)                           */
/* ------------------------------------------------------------------------ */

/* An axis option (negative counts from the end) in 0..rank-1, or -1. */
static int32_t norm_axis(int32_t axis, int32_t rank)
{
    const int32_t a = axis < 0 ? axis + rank : axis;
    return a >= 0 && a < rank ? a : -1;
}

/* Strides, dilations and groups: 0 means 1. */
static mlvm_index_t one_if_zero(int32_t v)
{
    return v == 0 ? 1 : (mlvm_index_t)v;
}

/* dst (contiguous over its dims) = the elements of `in` at element strides
 * st, as mlvm.transpose and mlvm.slice lower. */
static void gather(const mlvm_slot_t *d, const mlvm_index_t *st, const void *in)
{
    strides_t own;
    mlvm_iter_t it;
    contiguous_strides(RANK(d), DIMS(d), own);
    make_iter(RANK(d), DIMS(d), st, own, &it);
    gather_n(MLVM_DTYPE_SIZE(d->dtype), &it, in, d->data);
}

#ifdef MLVM_CHECKS
static int is_perm(int32_t rank, const int32_t *perm)
{
    uint32_t seen = 0;
    int32_t i;
    for (i = 0; i < rank; ++i) {
        if (perm[i] < 0 || perm[i] >= rank || ((seen >> perm[i]) & 1u))
            return 0;
        seen |= 1u << perm[i];
    }
    return 1;
}
#endif

static mlvm_status_t exec_transpose(mlvm_vm_t *vm, mlvm_op_t op,
                                    const mlvm_opts_t *o, mlvm_handle_t dst,
                                    mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs);
    const int32_t rank = RANK(a);
    strides_t own, st;
    int32_t i;
    (void)op;
    (void)rhs;
#ifdef MLVM_CHECKS
    MLVM_REQUIRE(is_perm(rank, o->ints), MLVM_ERR_INVALID);
    MLVM_REQUIRE(a->dtype == d->dtype && RANK(d) == rank, MLVM_ERR_SHAPE);
    for (i = 0; i < rank; ++i)
        MLVM_REQUIRE(DIMS(d)[i] == DIMS(a)[o->ints[i]], MLVM_ERR_SHAPE);
    MLVM_REQUIRE(!bytes_overlap(d, a), MLVM_ERR_INVALID);
#endif
    if (SIZE(d) == 0)
        return MLVM_OK;
    contiguous_strides(rank, DIMS(a), own);
    for (i = 0; i < rank; ++i)
        st[i] = own[o->ints[i]];
    gather(d, st, a->data);
    return MLVM_OK;
}

static mlvm_status_t exec_slice(mlvm_vm_t *vm, mlvm_op_t op,
                                const mlvm_opts_t *o, mlvm_handle_t dst,
                                mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs);
    const int32_t rank = RANK(a);
    const int32_t *start = o->ints + MLVM_SLICE_START;
    const int32_t *step = o->ints + MLVM_SLICE_STRIDE;
    strides_t own, st;
    mlvm_index_t off = 0;
    int32_t i;
    (void)op;
    (void)rhs;
#ifdef MLVM_CHECKS
    MLVM_REQUIRE(a->dtype == d->dtype && RANK(d) == rank, MLVM_ERR_SHAPE);
    for (i = 0; i < rank; ++i) {
        const int64_t n = DIMS(d)[i], len = DIMS(a)[i];
        const int64_t last = start[i] + (n - 1) * (int64_t)one_if_zero(step[i]);
        MLVM_REQUIRE(n == 0 || (start[i] >= 0 && start[i] < len && last >= 0 &&
                                last < len),
                     MLVM_ERR_INVALID);
    }
    MLVM_REQUIRE(!bytes_overlap(d, a), MLVM_ERR_INVALID);
#endif
    if (SIZE(d) == 0)
        return MLVM_OK;
    contiguous_strides(rank, DIMS(a), own);
    for (i = 0; i < rank; ++i) {
        off += start[i] * own[i];
        st[i] = one_if_zero(step[i]) * own[i];
    }
    gather(d, st, (const char *)a->data + off * (mlvm_index_t)MLVM_DTYPE_SIZE(a->dtype));
    return MLVM_OK;
}

#ifdef MLVM_CHECKS
/* a and b agree outside ax, and dst is them joined along ax. */
static int concat_dims_ok(const mlvm_slot_t *d, const mlvm_slot_t *a,
                          const mlvm_slot_t *b, int32_t ax)
{
    int32_t i;
    if (RANK(b) != RANK(a) || RANK(d) != RANK(a))
        return 0;
    for (i = 0; i < RANK(a); ++i) {
        const int64_t want = i == ax ? DIMS(a)[i] + DIMS(b)[i] : DIMS(a)[i];
        if ((i != ax && DIMS(b)[i] != DIMS(a)[i]) || DIMS(d)[i] != want)
            return 0;
    }
    return 1;
}
#endif

static mlvm_status_t exec_concat(mlvm_vm_t *vm, mlvm_op_t op,
                                 const mlvm_opts_t *o, mlvm_handle_t dst,
                                 mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs), *b = SLOT(rhs);
    const int32_t ax = norm_axis(o->axis, RANK(a));
    size_t rows, inner, ca, cb;
    (void)op;
#ifdef MLVM_CHECKS
    MLVM_REQUIRE(ax >= 0, MLVM_ERR_INVALID);
    MLVM_REQUIRE(a->dtype == b->dtype && a->dtype == d->dtype, MLVM_ERR_SHAPE);
    MLVM_REQUIRE(concat_dims_ok(d, a, b, ax), MLVM_ERR_SHAPE);
    MLVM_REQUIRE(!bytes_overlap(d, a) && !bytes_overlap(d, b), MLVM_ERR_INVALID);
#endif
    rows = prod(0, ax, DIMS(d));
    inner = prod(ax + 1, RANK(d), DIMS(d));
    ca = (size_t)DIMS(a)[ax] * inner;
    cb = (size_t)DIMS(b)[ax] * inner;
    if (rows == 0)
        return MLVM_OK;
    if (ca > 0)
        copy2d_n(MLVM_DTYPE_SIZE(d->dtype), rows, ca, a->data, (ptrdiff_t)ca, d->data,
                 (ptrdiff_t)(ca + cb));
    if (cb > 0)
        copy2d_n(MLVM_DTYPE_SIZE(d->dtype), rows, cb, b->data, (ptrdiff_t)cb,
                 (char *)d->data + ca * MLVM_DTYPE_SIZE(d->dtype), (ptrdiff_t)(ca + cb));
    return MLVM_OK;
}

static mlvm_status_t exec_softmax(mlvm_vm_t *vm, mlvm_op_t op,
                                  const mlvm_opts_t *o, mlvm_handle_t dst,
                                  mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs);
    const int32_t rank = RANK(a), ax = norm_axis(o->axis, rank);
    (void)op;
    (void)rhs;
#ifdef MLVM_CHECKS
    MLVM_REQUIRE(a->dtype == MLVM_F32 && d->dtype == MLVM_F32, MLVM_ERR_SHAPE);
    MLVM_REQUIRE(rank >= 1 && mlvm_shape_equal(a->shape, d->shape),
                 MLVM_ERR_SHAPE);
    MLVM_REQUIRE(ax >= 0, MLVM_ERR_INVALID);
    MLVM_REQUIRE(!bytes_overlap(d, a), MLVM_ERR_INVALID);
#endif
    if (SIZE(d) == 0)
        return MLVM_OK;
    mlvm_softmax_f32(prod(0, ax, DIMS(a)), (size_t)DIMS(a)[ax],
                     prod(ax + 1, rank, DIMS(a)), (const float *)a->data,
                     (float *)d->data);
    return MLVM_OK;
}

/* layer_norm's normalised dims as a mask: axes, or the last dim. */
static uint32_t norm_mask(const mlvm_opts_t *o, int32_t rank)
{
    if (o->axes != 0u || rank == 0)
        return o->axes;
    return 1u << (rank - 1);
}

#ifdef MLVM_CHECKS
/* gamma or beta: f32 of x's dims at the normalised axes. */
static int affine_ok(const mlvm_slot_t *g, const mlvm_slot_t *x, uint32_t mask)
{
    dims_t want;
    int32_t i, r = 0;
    for (i = 0; i < RANK(x); ++i)
        if ((mask >> i) & 1u)
            want[r++] = DIMS(x)[i];
    return g->dtype == MLVM_F32 && dims_eq(r, want, RANK(g), DIMS(g));
}

static mlvm_status_t check_layer_norm(const mlvm_vm_t *vm, const mlvm_opts_t *o,
                                      mlvm_handle_t dst, mlvm_handle_t lhs,
                                      mlvm_handle_t rhs, uint32_t mask)
{
    const mlvm_slot_t *d = SLOT(dst), *x = SLOT(lhs), *g, *b;
    MLVM_REQUIRE(x->dtype == MLVM_F32 && d->dtype == MLVM_F32, MLVM_ERR_SHAPE);
    MLVM_REQUIRE(RANK(x) >= 1 && mlvm_shape_equal(x->shape, d->shape),
                 MLVM_ERR_SHAPE);
    MLVM_REQUIRE((mask >> RANK(x)) == 0u, MLVM_ERR_INVALID);
    MLVM_REQUIRE(!bytes_overlap(d, x), MLVM_ERR_INVALID);
    if (rhs == MLVM_NONE && o->aux == MLVM_NONE)
        return MLVM_OK;
    MLVM_REQUIRE(mlvm_handle_ok_(vm, rhs) && mlvm_handle_ok_(vm, o->aux),
                 MLVM_ERR_INVALID);
    g = SLOT(rhs);
    b = SLOT(o->aux);
    MLVM_REQUIRE(affine_ok(g, x, mask) && affine_ok(b, x, mask),
                 MLVM_ERR_SHAPE);
    MLVM_REQUIRE(!bytes_overlap(d, g) && !bytes_overlap(d, b), MLVM_ERR_INVALID);
    return MLVM_OK;
}
#endif

/* Whether the mask is the trailing dims (lowest set bit up to rank - 1). */
static int trailing_mask(uint32_t mask, int32_t rank)
{
    const uint32_t low = mask & (0u - mask);
    return mask != 0u && mask == (((1u << rank) - 1u) & ~(low - 1u));
}

/* Normalised dims anywhere: iterations over the kept dims (x and out
 * offsets) and over the normalised dims (x offsets, gamma / beta offsets). */
static void layer_norm_strided(const mlvm_slot_t *x, uint32_t mask, float eps,
                               const float *g, const float *b, float *out)
{
    const int32_t rank = RANK(x);
    dims_t kd, nd;
    strides_t own, ks, ns, nc, zero;
    mlvm_iter_t outer, inner;
    int32_t i, rk = 0, rn = 0;
    contiguous_strides(rank, DIMS(x), own);
    for (i = 0; i < rank; ++i) {
        if ((mask >> i) & 1u) {
            nd[rn] = DIMS(x)[i];
            ns[rn++] = own[i];
        } else {
            kd[rk] = DIMS(x)[i];
            ks[rk++] = own[i];
        }
    }
    memset(zero, 0, sizeof zero);
    contiguous_strides(rn, nd, nc);
    make_iter(rk, kd, ks, zero, &outer);
    make_iter(rn, nd, ns, nc, &inner);
    mlvm_layer_norm_strided_f32(&outer, &inner, eps, (const float *)x->data, g,
                                b, out);
}

static mlvm_status_t exec_layer_norm(mlvm_vm_t *vm, mlvm_op_t op,
                                     const mlvm_opts_t *o, mlvm_handle_t dst,
                                     mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *x = SLOT(lhs);
    const int32_t rank = RANK(x);
    const uint32_t mask = norm_mask(o, rank);
    const float *g = NULL, *b = NULL;
    /* +0 (a zeroed struct) is the default eps; -0 asks for eps = 0 itself. */
    const float eps = (o->f == 0.0f && !signbit(o->f)) ? MLVM_LAYER_NORM_EPS : o->f;
    size_t cols = 1;
    int32_t i;
    (void)op;
#ifdef MLVM_CHECKS
    {
        const mlvm_status_t st = check_layer_norm(vm, o, dst, lhs, rhs, mask);
        if (st != MLVM_OK)
            return st;
    }
#endif
    if (rhs != MLVM_NONE) {
        g = (const float *)SLOT(rhs)->data;
        b = (const float *)SLOT(o->aux)->data;
    }
    if (SIZE(x) == 0)
        return MLVM_OK;
    if (!trailing_mask(mask, rank)) {
        layer_norm_strided(x, mask, eps, g, b, (float *)d->data);
        return MLVM_OK;
    }
    for (i = 0; i < rank; ++i)
        if ((mask >> i) & 1u)
            cols *= (size_t)DIMS(x)[i];
    mlvm_layer_norm_f32(SIZE(x) / cols, cols, eps, (const float *)x->data, g,
                        b, (float *)d->data);
    return MLVM_OK;
}

static mlvm_status_t exec_gelu(mlvm_vm_t *vm, mlvm_op_t op,
                               const mlvm_opts_t *o, mlvm_handle_t dst,
                               mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *a = SLOT(lhs);
    (void)op;
    (void)rhs;
    MLVM_REQUIRE((o->flags & ~MLVM_GELU_TANH) == 0u, MLVM_ERR_INVALID);
    REQUIRE_UNARY_F32(d, a);
    if (o->flags & MLVM_GELU_TANH)
        mlvm_gelu_tanh_f32(SIZE(d), (const float *)a->data, (float *)d->data);
    else
        mlvm_gelu_erf_f32(SIZE(d), (const float *)a->data, (float *)d->data);
    return MLVM_OK;
}

#ifdef MLVM_CHECKS
/* Window strides and pads are >= 0. */
static int window_opts_ok(const int32_t *v)
{
    int i;
    for (i = MLVM_WIN_SH; i <= MLVM_WIN_PR; ++i)
        if (v[i] < 0)
            return 0;
    return 1;
}

/* Outputs of a window of `span` sliding over n + pads by stride; -1 when
 * the window is larger than the padded input. */
static int64_t window_out(int64_t n, int64_t pads, int64_t span, int64_t stride)
{
    return span > n + pads ? -1 : (n + pads - span) / stride + 1;
}

/* Options, w, bias and dst against x, once the ranks are known to be 4. */
static mlvm_status_t check_conv2d(const mlvm_vm_t *vm, const mlvm_opts_t *o,
                                  const mlvm_conv2d_t *p, const mlvm_slot_t *d,
                                  const mlvm_slot_t *w)
{
    const int32_t *v = o->ints;
    const int64_t *dd = DIMS(d);
    MLVM_REQUIRE(window_opts_ok(v) && v[MLVM_CONV_DH] >= 0 &&
                     v[MLVM_CONV_DW] >= 0 && v[MLVM_CONV_GROUPS] >= 0,
                 MLVM_ERR_INVALID);
    MLVM_REQUIRE(p->c % p->groups == 0 && p->o % p->groups == 0,
                 MLVM_ERR_INVALID);
    MLVM_REQUIRE(DIMS(w)[1] == p->c / p->groups && p->kh >= 1 && p->kw >= 1,
                 MLVM_ERR_SHAPE);
    {
        const int64_t oh = window_out(p->h, p->pt + v[MLVM_WIN_PB],
                                      p->dh * (p->kh - 1) + 1, p->sh);
        const int64_t ow = window_out(p->w, p->pl + v[MLVM_WIN_PR],
                                      p->dw * (p->kw - 1) + 1, p->sw);
        MLVM_REQUIRE(oh >= 0 && ow >= 0, MLVM_ERR_INVALID);
        MLVM_REQUIRE(dd[0] == p->n && dd[1] == p->o && dd[2] == oh && dd[3] == ow,
                     MLVM_ERR_SHAPE);
    }
    if (o->aux != MLVM_NONE) {
        const mlvm_slot_t *b;
        MLVM_REQUIRE(mlvm_handle_ok_(vm, o->aux), MLVM_ERR_INVALID);
        b = SLOT(o->aux);
        MLVM_REQUIRE(b->dtype == MLVM_F32 && RANK(b) == 1 && DIMS(b)[0] == p->o,
                     MLVM_ERR_SHAPE);
        MLVM_REQUIRE(!bytes_overlap(d, b), MLVM_ERR_INVALID);
    }
    return MLVM_OK;
}
#endif

static void conv2d_params(const mlvm_opts_t *o, const mlvm_slot_t *x,
                          const mlvm_slot_t *w, const mlvm_slot_t *d,
                          mlvm_conv2d_t *p)
{
    const int32_t *v = o->ints;
    p->n = (mlvm_index_t)DIMS(x)[0];
    p->c = (mlvm_index_t)DIMS(x)[1];
    p->h = (mlvm_index_t)DIMS(x)[2];
    p->w = (mlvm_index_t)DIMS(x)[3];
    p->o = (mlvm_index_t)DIMS(w)[0];
    p->kh = (mlvm_index_t)DIMS(w)[2];
    p->kw = (mlvm_index_t)DIMS(w)[3];
    p->oh = (mlvm_index_t)DIMS(d)[2];
    p->ow = (mlvm_index_t)DIMS(d)[3];
    p->sh = one_if_zero(v[MLVM_WIN_SH]);
    p->sw = one_if_zero(v[MLVM_WIN_SW]);
    p->pt = v[MLVM_WIN_PT];
    p->pl = v[MLVM_WIN_PL];
    p->dh = one_if_zero(v[MLVM_CONV_DH]);
    p->dw = one_if_zero(v[MLVM_CONV_DW]);
    p->groups = one_if_zero(v[MLVM_CONV_GROUPS]);
    p->w_panel = 0;
}

static mlvm_status_t exec_conv2d(mlvm_vm_t *vm, mlvm_op_t op,
                                 const mlvm_opts_t *o, mlvm_handle_t dst,
                                 mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *x = SLOT(lhs), *w = SLOT(rhs);
    const float *bias = NULL;
    mlvm_conv2d_t p;
    (void)op;
#ifdef MLVM_CHECKS
    MLVM_REQUIRE(x->dtype == MLVM_F32 && w->dtype == MLVM_F32 &&
                     d->dtype == MLVM_F32,
                 MLVM_ERR_SHAPE);
    MLVM_REQUIRE(RANK(x) == 4 && RANK(w) == 4 && RANK(d) == 4, MLVM_ERR_SHAPE);
    MLVM_REQUIRE(!bytes_overlap(d, x) && !bytes_overlap(d, w), MLVM_ERR_INVALID);
#endif
    conv2d_params(o, x, w, d, &p);
#ifdef MLVM_CHECKS
    {
        const mlvm_status_t st = check_conv2d(vm, o, &p, d, w);
        if (st != MLVM_OK)
            return st;
    }
#endif
    if (o->aux != MLVM_NONE)
        bias = (const float *)SLOT(o->aux)->data;
    if (SIZE(d) == 0)
        return MLVM_OK;
    mlvm_conv2d_f32(&p, (const float *)x->data, (const float *)w->data, bias,
                    (float *)d->data);
    return MLVM_OK;
}

static void pool2d_params(const mlvm_opts_t *o, const mlvm_slot_t *x,
                          const mlvm_slot_t *d, mlvm_pool2d_t *p)
{
    const int32_t *v = o->ints;
    p->planes = (mlvm_index_t)(DIMS(x)[0] * DIMS(x)[1]);
    p->h = (mlvm_index_t)DIMS(x)[2];
    p->w = (mlvm_index_t)DIMS(x)[3];
    p->kh = v[MLVM_POOL_KH];
    p->kw = v[MLVM_POOL_KW];
    p->oh = (mlvm_index_t)DIMS(d)[2];
    p->ow = (mlvm_index_t)DIMS(d)[3];
    p->sh = one_if_zero(v[MLVM_WIN_SH]);
    p->sw = one_if_zero(v[MLVM_WIN_SW]);
    p->pt = v[MLVM_WIN_PT];
    p->pl = v[MLVM_WIN_PL];
}

#ifdef MLVM_CHECKS
static mlvm_status_t check_pool2d(const mlvm_opts_t *o, const mlvm_pool2d_t *p,
                                  const mlvm_slot_t *d, const mlvm_slot_t *x)
{
    const int32_t *v = o->ints;
    const int64_t *dd = DIMS(d);
    int64_t oh, ow;
    MLVM_REQUIRE(window_opts_ok(v) && p->kh >= 1 && p->kw >= 1, MLVM_ERR_INVALID);
    MLVM_REQUIRE(p->pt < p->kh && v[MLVM_WIN_PB] < p->kh && p->pl < p->kw &&
                     v[MLVM_WIN_PR] < p->kw,
                 MLVM_ERR_INVALID);
    oh = window_out(p->h, p->pt + v[MLVM_WIN_PB], p->kh, p->sh);
    ow = window_out(p->w, p->pl + v[MLVM_WIN_PR], p->kw, p->sw);
    MLVM_REQUIRE(oh >= 0 && ow >= 0, MLVM_ERR_INVALID);
    MLVM_REQUIRE(dd[0] == DIMS(x)[0] && dd[1] == DIMS(x)[1] && dd[2] == oh &&
                     dd[3] == ow,
                 MLVM_ERR_SHAPE);
    return MLVM_OK;
}
#endif

static mlvm_status_t exec_pool2d(mlvm_vm_t *vm, mlvm_op_t op,
                                 const mlvm_opts_t *o, mlvm_handle_t dst,
                                 mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    const mlvm_slot_t *d = SLOT(dst), *x = SLOT(lhs);
    mlvm_pool2d_t p;
    (void)op;
    (void)rhs;
#ifdef MLVM_CHECKS
    MLVM_REQUIRE((o->flags & ~MLVM_POOL_AVG) == 0u, MLVM_ERR_INVALID);
    MLVM_REQUIRE(x->dtype == MLVM_F32 && d->dtype == MLVM_F32, MLVM_ERR_SHAPE);
    MLVM_REQUIRE(RANK(x) == 4 && RANK(d) == 4, MLVM_ERR_SHAPE);
    MLVM_REQUIRE(!bytes_overlap(d, x), MLVM_ERR_INVALID);
#endif
    pool2d_params(o, x, d, &p);
#ifdef MLVM_CHECKS
    {
        const mlvm_status_t st = check_pool2d(o, &p, d, x);
        if (st != MLVM_OK)
            return st;
    }
#endif
    if (SIZE(d) == 0)
        return MLVM_OK;
    if (o->flags & MLVM_POOL_AVG)
        mlvm_avgpool2d_f32(&p, (const float *)x->data, (float *)d->data);
    else
        mlvm_maxpool2d_f32(&p, (const float *)x->data, (float *)d->data);
    return MLVM_OK;
}

/* ------------------------------------------------------------------------ */
/* The table                                                                 */
/* ------------------------------------------------------------------------ */

/* The kernel tables above follow the enum's order. */
typedef char mlvm_binary_order_[(MLVM_OP_CMPL - MLVM_OP_ADD == 7 &&
                                 MLVM_OP_EQ - MLVM_OP_ADD == 6) ? 1 : -1];
typedef char mlvm_unary_order_[(MLVM_OP_RELU - MLVM_OP_NEG == 6) ? 1 : -1];

typedef mlvm_status_t (*exec_fn)(mlvm_vm_t *, mlvm_op_t, const mlvm_opts_t *,
                                 mlvm_handle_t, mlvm_handle_t, mlvm_handle_t);

typedef struct op_entry {
    const char *name;
    int32_t arity;
    exec_fn run;
} op_entry_t;

#define MLVM_OP_ENTRY_(e, name, arity, family) {#name, arity, exec_##family},
static const op_entry_t op_table[MLVM_OP_COUNT] = {MLVM_OP_TABLE(MLVM_OP_ENTRY_)};
#undef MLVM_OP_ENTRY_

const char *mlvm_op_name(int32_t op)
{
    return op >= 0 && op < MLVM_OP_COUNT ? op_table[op].name : NULL;
}

int32_t mlvm_op_arity(int32_t op)
{
    return op >= 0 && op < MLVM_OP_COUNT ? op_table[op].arity : -1;
}

mlvm_status_t mlvm_exec(mlvm_vm_t *vm, mlvm_op_t op, const mlvm_opts_t *opts,
                        mlvm_handle_t dst, mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    static const mlvm_opts_t defaults = MLVM_OPTS_DEFAULT;
    const op_entry_t *e;
    /* Unsigned: enums may be narrow (-fshort-enums on ARM EABI). */
    if ((uint32_t)op >= (uint32_t)MLVM_OP_COUNT)
        return MLVM_ERR_INVALID;
    e = &op_table[op];
    MLVM_REQUIRE(mlvm_handle_ok_(vm, dst), MLVM_ERR_INVALID);
    MLVM_REQUIRE(e->arity < 1 || mlvm_handle_ok_(vm, lhs), MLVM_ERR_INVALID);
    MLVM_REQUIRE(e->arity < 2 || mlvm_handle_ok_(vm, rhs), MLVM_ERR_INVALID);
    return e->run(vm, op, opts != NULL ? opts : &defaults, dst, lhs, rhs);
}

mlvm_status_t mlvm_batch(mlvm_vm_t *vm, size_t n, const mlvm_oparg_t *ops,
                         size_t *failed)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const mlvm_oparg_t *a = &ops[i];
        const mlvm_status_t st = mlvm_exec(vm, (mlvm_op_t)a->op, &a->opts,
                                           a->dst, a->lhs, a->rhs);
        if (st != MLVM_OK) {
            if (failed != NULL)
                *failed = i;
            return st;
        }
    }
    if (failed != NULL)
        *failed = n;
    return MLVM_OK;
}
