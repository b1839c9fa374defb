/* Eager execution: each op's iteration space computed at run time, then the
 * same kernel call the compiler would emit. */
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

static mlvm_status_t exec_fill(mlvm_vm_t *vm, mlvm_op_t op,
                               const mlvm_opts_t *o, mlvm_handle_t dst,
                               mlvm_handle_t lhs, mlvm_handle_t rhs)
{
    mlvm_slot_t *d = SLOT(dst);
    (void)op;
    (void)lhs;
    (void)rhs;
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
    mlvm_broadcast_b32(&it, a->data, d->data);
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
    static const mlvm_opts_t defaults = {0.0f, 0, 0u, 0u, MLVM_NONE};
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
