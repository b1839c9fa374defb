/* MLVM_CHECKS: every misuse returns its own status code. */
#include <string.h>

#include "check.h"

#ifdef MLVM_CHECKS

void test_checks_bad_handle(void)
{
    static const int64_t d[] = {2};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_handle_t a, b;
    void *p;
    float buf[2];
    REQUIRE(vm != NULL);
    a = new_f32(vm, 1, d, NULL);
    b = new_f32(vm, 1, d, NULL);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ADD, NULL, a, b, 17), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ADD, NULL, a, -5, b), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_NEG, NULL, MLVM_NONE, a, MLVM_NONE),
             MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_tensor_free(vm, b), MLVM_OK);
    /* A freed handle is bad until reused. */
    CHECK_EQ(mlvm_tensor_free(vm, b), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ADD, NULL, a, a, b), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_tensor_info(vm, b, NULL, NULL), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_tensor_data(vm, b, &p), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_tensor_read(vm, 1000, 0, buf, 4), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_tensor_write(vm, b, 0, buf, 4), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_tensor_swap(vm, b, &p), MLVM_ERR_INVALID);
    /* Operands an op does not use are not looked at. */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_NEG, NULL, a, a, 12345), MLVM_OK);
    mlvm_vm_free(vm);
}

void test_checks_shape_mismatch(void)
{
    static const int64_t d23[] = {2, 3}, d32[] = {3, 2}, d4[] = {4},
                         d22[] = {2, 2}, d33[] = {3, 3};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_handle_t a, b, c, m, sq;
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    REQUIRE(vm != NULL);
    a = new_f32(vm, 2, d23, NULL);
    b = new_f32(vm, 2, d32, NULL);
    c = new_f32(vm, 1, d4, NULL);
    m = new_f32(vm, 2, d22, NULL);
    sq = new_f32(vm, 2, d33, NULL);
    /* Operands that do not broadcast, a dst of the wrong shape. */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ADD, NULL, a, a, c), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ADD, NULL, b, a, a), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_EXP, NULL, b, a, MLVM_NONE), MLVM_ERR_SHAPE);
    /* Contraction dims differ; the result shape is wrong. */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, NULL, m, a, a), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, NULL, sq, a, b), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, NULL, m, a, b), MLVM_OK);
    o.flags = MLVM_TRANSPOSE_RHS;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, &o, m, a, a), MLVM_OK);
    /* Rank 2 with rank 1, as the dialect refuses it. */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, NULL, m, a, c), MLVM_ERR_SHAPE);
    /* reduce into a dst that is neither the kept nor the dropped shape. */
    o.axes = 1u;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_REDUCE_SUM, &o, c, a, MLVM_NONE),
             MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_RESHAPE, NULL, c, a, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_BROADCAST_TO, NULL, a, b, MLVM_NONE),
             MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CAST, NULL, b, a, MLVM_NONE), MLVM_ERR_SHAPE);
    o.aux = a;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SOFTMAX_XENT, &o, c, a, a), MLVM_ERR_SHAPE);
    mlvm_vm_free(vm);
}

void test_checks_pad_cut_out_of_bounds(void)
{
    static const int64_t d[] = {4};
    counting_t c;
    mlvm_vm_t *vm;
    mlvm_pad_t *pad;
    mlvm_shape_t *s;
    counting_init(&c);
    vm = mlvm_vm_new(&c.a);
    REQUIRE(vm != NULL);
    pad = mlvm_pad_new(vm, 32);
    s = mlvm_vm_shape_new(vm, 1, d);
    REQUIRE(pad != NULL && s != NULL);
    CHECK(mlvm_pad_cut(vm, pad, 16, MLVM_F32, s) >= 0); /* ends at 32 */
    CHECK_EQ(mlvm_pad_cut(vm, pad, 20, MLVM_F32, s), MLVM_ERR_BOUNDS);
    CHECK_EQ(mlvm_pad_cut(vm, pad, 36, MLVM_F32, s), MLVM_ERR_BOUNDS);
    CHECK_EQ(mlvm_pad_cut(vm, pad, (size_t)-4, MLVM_F32, s), MLVM_ERR_BOUNDS);
    CHECK_EQ(mlvm_pad_cut(vm, pad, 2, MLVM_F32, s), MLVM_ERR_INVALID);
    CHECK_EQ(s->refs, 2); /* failed cuts took no reference */
    CHECK_EQ(mlvm_vm_tensor_count(vm), 1);
    CHECK_EQ(mlvm_vm_consumed(vm), c.live_bytes);
    mlvm_vm_free(vm);
    CHECK_EQ(c.live_bytes, 0);
}

/* The three misuses of the issue give three different codes. */
void test_checks_distinct_codes(void)
{
    static const int64_t d2[] = {2}, d3[] = {3};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_pad_t *pad;
    mlvm_handle_t a, b;
    mlvm_status_t bad_handle, mismatch, oob;
    REQUIRE(vm != NULL);
    a = new_f32(vm, 1, d2, NULL);
    b = new_f32(vm, 1, d3, NULL);
    pad = mlvm_pad_new(vm, 8);
    REQUIRE(pad != NULL);
    bad_handle = mlvm_exec(vm, MLVM_OP_ADD, NULL, a, a, 99);
    mismatch = mlvm_exec(vm, MLVM_OP_ADD, NULL, a, a, b);
    oob = (mlvm_status_t)mlvm_pad_cut(vm, pad, 4, MLVM_F32,
                                      mlvm_vm_shape_new(vm, 1, d2));
    CHECK_EQ(bad_handle, MLVM_ERR_INVALID);
    CHECK_EQ(mismatch, MLVM_ERR_SHAPE);
    CHECK_EQ(oob, MLVM_ERR_BOUNDS);
    CHECK(bad_handle != mismatch && mismatch != oob && oob != bad_handle);
    mlvm_vm_free(vm);
}

void test_checks_dtypes(void)
{
    static const int64_t d[] = {3};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_handle_t f, i, f2;
    mlvm_shape_t *s;
    REQUIRE(vm != NULL);
    s = mlvm_vm_shape_new(vm, 1, d);
    f = new_f32(vm, 1, d, NULL);
    f2 = new_f32(vm, 1, d, NULL);
    i = new_i32(vm, 1, d, NULL);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ADD, NULL, f, f, i), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ADD, NULL, i, f, f2), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_DIV, NULL, i, i, i), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_EQ, NULL, i, i, i), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_EQ, NULL, f, i, i), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_EXP, NULL, i, i, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, NULL, f, i, i), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ARGMAX, NULL, f, f2, MLVM_NONE),
             MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_RESHAPE, NULL, i, f, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_tensor_new(vm, (mlvm_dtype_t)14, s), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_tensor_new(vm, (mlvm_dtype_t)0, s), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_tensor_new(vm, MLVM_F32, NULL), MLVM_ERR_INVALID);
    {
        const int64_t neg[] = {-1}, big[] = {1 << 20, 1 << 20, 1 << 20,
                                             1 << 20};
        counting_t c;
        counting_init(&c);
        CHECK(mlvm_shape_new(&c.a, 9, big) == NULL);
        CHECK(mlvm_shape_new(&c.a, -1, neg) == NULL);
        CHECK(mlvm_shape_new(&c.a, 1, neg) == NULL);
        CHECK(mlvm_shape_new(&c.a, 4, big) == NULL); /* 2^80 elements */
        CHECK(mlvm_shape_new(NULL, 1, d) == NULL);
        CHECK(mlvm_vm_shape_new(vm, 1, neg) == NULL);
        CHECK_EQ(c.live_bytes, 0);
    }
    mlvm_vm_free(vm);
}

void test_checks_read_write_bounds(void)
{
    static const int64_t d[] = {4};
    float buf[8] = {0};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_handle_t t;
    REQUIRE(vm != NULL);
    t = new_f32(vm, 1, d, NULL);
    CHECK_EQ(mlvm_tensor_write(vm, t, 0, buf, 16), MLVM_OK);
    CHECK_EQ(mlvm_tensor_write(vm, t, 0, buf, 20), MLVM_ERR_BOUNDS);
    CHECK_EQ(mlvm_tensor_write(vm, t, 12, buf, 8), MLVM_ERR_BOUNDS);
    CHECK_EQ(mlvm_tensor_read(vm, t, 17, buf, 0), MLVM_ERR_BOUNDS);
    CHECK_EQ(mlvm_tensor_read(vm, t, 4, buf, (size_t)-1), MLVM_ERR_BOUNDS);
    CHECK_EQ(mlvm_tensor_read(vm, t, 16, buf, 0), MLVM_OK);
    mlvm_vm_free(vm);
}

void test_checks_overlap(void)
{
    static const int64_t d4[] = {4}, d22[] = {2, 2};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_pad_t *pad;
    mlvm_handle_t a, shifted, m, m2;
    REQUIRE(vm != NULL);
    pad = mlvm_pad_new(vm, 64);
    REQUIRE(pad != NULL);
    a = mlvm_pad_cut(vm, pad, 0, MLVM_F32, mlvm_vm_shape_new(vm, 1, d4));
    shifted = mlvm_pad_cut(vm, pad, 4, MLVM_F32, mlvm_vm_shape_new(vm, 1, d4));
    m = new_f32(vm, 2, d22, NULL);
    m2 = mlvm_pad_cut(vm, pad, 32, MLVM_F32, mlvm_vm_shape_new(vm, 2, d22));
    REQUIRE(a >= 0 && shifted >= 0 && m >= 0 && m2 >= 0);
    /* In place on the same bytes is fine; half-overlapping bytes are not. */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_NEG, NULL, a, a, MLVM_NONE), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_NEG, NULL, shifted, a, MLVM_NONE),
             MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ADD, NULL, a, shifted, a), MLVM_ERR_INVALID);
    /* Ops that are not elementwise never run in place. */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, NULL, m, m, m2), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, NULL, m2, m, m), MLVM_OK);
    mlvm_vm_free(vm);
}

void test_checks_options(void)
{
    static const int64_t d[] = {2, 3}, r[] = {3};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_handle_t a, out, idx, loss;
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    REQUIRE(vm != NULL);
    a = new_f32(vm, 2, d, NULL);
    out = new_f32(vm, 1, r, NULL);
    idx = new_i32(vm, 1, r, NULL);
    loss = new_f32(vm, 1, d, NULL);
    o.axes = 1u << 2; /* past the rank */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_REDUCE_SUM, &o, out, a, MLVM_NONE),
             MLVM_ERR_INVALID);
    o.axis = 2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ARGMAX, &o, idx, a, MLVM_NONE),
             MLVM_ERR_INVALID);
    o.axis = -3;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ARGMAX, &o, idx, a, MLVM_NONE),
             MLVM_ERR_INVALID);
    o.axis = -2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ARGMAX, &o, idx, a, MLVM_NONE), MLVM_OK);
    o.flags = 4u;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, &o, a, a, a), MLVM_ERR_INVALID);
    o.aux = MLVM_NONE; /* softmax_xent without its grad */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SOFTMAX_XENT, &o, loss, a, a),
             MLVM_ERR_INVALID);
    mlvm_vm_free(vm);
}

void test_checks_ownership(void)
{
    static const int64_t d[] = {2};
    mlvm_vm_t *v1 = mlvm_vm_new(mlvm_allocator_std());
    mlvm_vm_t *v2 = mlvm_vm_new(mlvm_allocator_std());
    mlvm_pad_t *pad;
    mlvm_arena_t *arena, local;
    mlvm_handle_t cut;
    void *p;
    unsigned char mem[8];
    REQUIRE(v1 != NULL && v2 != NULL);
    pad = mlvm_pad_new(v1, 16);
    arena = mlvm_vm_arena_new(v1, 16);
    REQUIRE(pad != NULL && arena != NULL);
    cut = mlvm_pad_cut(v1, pad, 0, MLVM_F32, mlvm_vm_shape_new(v1, 1, d));
    CHECK(cut >= 0);
    /* Another VM's pad or arena, a caller arena, a pad with live cuts. */
    CHECK_EQ(mlvm_pad_cut(v2, pad, 0, MLVM_F32, mlvm_vm_shape_new(v2, 1, d)),
             MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_pad_free(v2, pad), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_pad_free(v1, pad), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_vm_arena_free(v2, arena), MLVM_ERR_INVALID);
    mlvm_arena_init(&local, mem, sizeof mem);
    CHECK_EQ(mlvm_vm_arena_free(v1, &local), MLVM_ERR_INVALID);
    /* A cut tensor's bytes are the pad's: no swap. */
    p = NULL;
    CHECK_EQ(mlvm_tensor_swap(v1, cut, &p), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_tensor_free(v1, cut), MLVM_OK);
    CHECK_EQ(mlvm_pad_free(v1, pad), MLVM_OK);
    CHECK_EQ(mlvm_vm_arena_free(v1, arena), MLVM_OK);
    mlvm_vm_free(v1);
    mlvm_vm_free(v2);
}

void test_checks_batch_reports_index(void)
{
    static const int64_t d[] = {2}, e[] = {3};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_handle_t a, b;
    mlvm_oparg_t ops[3] = {
        {MLVM_OP_NEG, 0, 0, MLVM_NONE, MLVM_OPTS_DEFAULT},
        {MLVM_OP_ADD, 0, 0, 1, MLVM_OPTS_DEFAULT},
        {MLVM_OP_NEG, 0, 0, MLVM_NONE, MLVM_OPTS_DEFAULT}};
    const float v[2] = {1, 2};
    size_t failed = 0;
    REQUIRE(vm != NULL);
    a = new_f32(vm, 1, d, v);
    b = new_f32(vm, 1, e, NULL);
    CHECK_EQ(a, 0);
    CHECK_EQ(b, 1);
    CHECK_EQ(mlvm_batch(vm, 3, ops, &failed), MLVM_ERR_SHAPE);
    CHECK_EQ(failed, 1);
    CHECK_EQ(f32_of(vm, a)[1], -2); /* the first op ran, the third did not */
    mlvm_vm_free(vm);
}

/* The nn ops: options no operand allows are MLVM_ERR_INVALID. */
void test_checks_nn_options(void)
{
    static const int64_t d23[] = {2, 3}, d32[] = {3, 2}, d22[] = {2, 2},
                         d43[] = {4, 3}, x4[] = {1, 2, 4, 4}, w4[] = {2, 2, 3, 3},
                         y4[] = {1, 2, 2, 2}, w3[] = {2, 1, 3, 3}, b3[] = {3};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    mlvm_handle_t a, a2, at, s, c, x, w, y, wg, pool;
    REQUIRE(vm != NULL);
    a = new_f32(vm, 2, d23, NULL);
    a2 = new_f32(vm, 2, d23, NULL);
    at = new_f32(vm, 2, d32, NULL);
    s = new_f32(vm, 2, d22, NULL);
    c = new_f32(vm, 2, d43, NULL);
    x = new_f32(vm, 4, x4, NULL);
    w = new_f32(vm, 4, w4, NULL);
    y = new_f32(vm, 4, y4, NULL);
    wg = new_f32(vm, 4, w3, NULL);
    pool = new_f32(vm, 4, y4, NULL);
    /* transpose: not a permutation (repeated, out of range). */
    o.ints[0] = 1, o.ints[1] = 0;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_TRANSPOSE, &o, at, a, MLVM_NONE), MLVM_OK);
    o.ints[0] = 1, o.ints[1] = 1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_TRANSPOSE, &o, at, a, MLVM_NONE), MLVM_ERR_INVALID);
    o.ints[0] = 2, o.ints[1] = 0;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_TRANSPOSE, &o, at, a, MLVM_NONE), MLVM_ERR_INVALID);
    /* slice: starts or last reads outside the operand. */
    memset(o.ints, 0, sizeof o.ints);
    o.ints[MLVM_SLICE_START + 1] = 1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SLICE, &o, s, a, MLVM_NONE), MLVM_OK);
    o.ints[MLVM_SLICE_START + 1] = 2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SLICE, &o, s, a, MLVM_NONE), MLVM_ERR_INVALID);
    o.ints[MLVM_SLICE_START + 1] = -1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SLICE, &o, s, a, MLVM_NONE), MLVM_ERR_INVALID);
    o.ints[MLVM_SLICE_START + 1] = 0;
    o.ints[MLVM_SLICE_STRIDE + 1] = -1; /* reads index -1 */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SLICE, &o, s, a, MLVM_NONE), MLVM_ERR_INVALID);
    /* concat and softmax: axis out of range. */
    memset(o.ints, 0, sizeof o.ints);
    o.axis = 2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONCAT, &o, c, a, a), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SOFTMAX, &o, s, s, MLVM_NONE), MLVM_ERR_INVALID);
    o.axis = -3;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SOFTMAX, &o, a, at, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SOFTMAX, &o, c, c, MLVM_NONE), MLVM_ERR_INVALID);
    o.axis = -2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONCAT, &o, c, a, a), MLVM_OK);
    o.axis = -1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONCAT, &o, c, a, a), MLVM_ERR_SHAPE);
    o.axis = 0;
    /* layer_norm: axes past the rank; gamma without beta; a bad handle. */
    o.axes = 1u << 2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &o, a2, a, MLVM_NONE), MLVM_ERR_INVALID);
    o.axes = 1u << 1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &o, a2, a, MLVM_NONE), MLVM_OK);
    o.axes = 0u;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &o, s, a, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &o, s, c, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &o, at, at, MLVM_NONE), MLVM_ERR_INVALID);
    o.aux = MLVM_NONE;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &o, a, at, s), MLVM_ERR_SHAPE);
    /* gelu and pool2d: unknown flags. */
    o.flags = 2u;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_GELU, &o, a, a, MLVM_NONE), MLVM_ERR_INVALID);
    o.ints[MLVM_POOL_KH] = 2, o.ints[MLVM_POOL_KW] = 2;
    o.ints[MLVM_WIN_SH] = 2, o.ints[MLVM_WIN_SW] = 2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, pool, x, MLVM_NONE), MLVM_ERR_INVALID);
    o.flags = MLVM_POOL_AVG;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, pool, x, MLVM_NONE), MLVM_OK);
    /* pool2d: an empty window, a pad as large as the window, a negative
     * stride, a window larger than the padded input. */
    o.ints[MLVM_POOL_KW] = 0;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, pool, x, MLVM_NONE), MLVM_ERR_INVALID);
    o.ints[MLVM_POOL_KW] = 2;
    o.ints[MLVM_WIN_PB] = 2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, pool, x, MLVM_NONE), MLVM_ERR_INVALID);
    o.ints[MLVM_WIN_PB] = 0;
    o.ints[MLVM_WIN_SW] = -1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, pool, x, MLVM_NONE), MLVM_ERR_INVALID);
    o.ints[MLVM_WIN_SW] = 2;
    o.ints[MLVM_POOL_KH] = 5;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, pool, x, MLVM_NONE), MLVM_ERR_INVALID);
    /* conv2d: [1,2,4,4] * [2,2,3,3] -> [1,2,2,2]. */
    memset(o.ints, 0, sizeof o.ints);
    o.flags = 0u;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, y, x, w), MLVM_OK);
    o.ints[MLVM_WIN_PT] = -1; /* negative pad */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, y, x, w), MLVM_ERR_INVALID);
    o.ints[MLVM_WIN_PT] = 0;
    o.ints[MLVM_CONV_DH] = -2; /* negative dilation */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, y, x, w), MLVM_ERR_INVALID);
    o.ints[MLVM_CONV_DH] = 3; /* dilated kernel 7 > 4 */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, y, x, w), MLVM_ERR_INVALID);
    o.ints[MLVM_CONV_DH] = 0;
    o.ints[MLVM_CONV_GROUPS] = 3; /* does not divide 2 channels */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, y, x, wg), MLVM_ERR_INVALID);
    o.ints[MLVM_CONV_GROUPS] = 2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, y, x, wg), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, y, x, w), MLVM_ERR_SHAPE);
    o.aux = 999; /* a bias handle that names no tensor */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, y, x, wg), MLVM_ERR_INVALID);
    o.aux = new_f32(vm, 1, b3, NULL); /* bias of 3 for 2 channels */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, y, x, wg), MLVM_ERR_SHAPE);
    mlvm_vm_free(vm);
}

/* The nn ops: shapes and dtypes that do not fit are MLVM_ERR_SHAPE; a dst
 * overlapping an operand is MLVM_ERR_INVALID (gelu runs in place). */
void test_checks_nn_shapes(void)
{
    static const int64_t d23[] = {2, 3}, d32[] = {3, 2}, d24[] = {2, 4},
                         d6[] = {6}, x4[] = {1, 1, 4, 4}, y4[] = {1, 1, 3, 3},
                         w4[] = {1, 1, 2, 2};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    mlvm_handle_t a, ai, at, b, f, x, y, w, g;
    REQUIRE(vm != NULL);
    a = new_f32(vm, 2, d23, NULL);
    ai = new_i32(vm, 2, d23, NULL);
    at = new_f32(vm, 2, d32, NULL);
    b = new_f32(vm, 2, d24, NULL);
    f = new_f32(vm, 1, d6, NULL);
    x = new_f32(vm, 4, x4, NULL);
    y = new_f32(vm, 4, y4, NULL);
    w = new_f32(vm, 4, w4, NULL);
    g = new_f32(vm, 1, d6, NULL);
    o.ints[0] = 1, o.ints[1] = 0;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_TRANSPOSE, &o, a, a, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_TRANSPOSE, &o, at, ai, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SLICE, NULL, f, a, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SLICE, NULL, a, ai, MLVM_NONE), MLVM_ERR_SHAPE);
    o.axis = 1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONCAT, &o, b, a, ai), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONCAT, &o, b, a, at), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SOFTMAX, &o, a, ai, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SOFTMAX, &o, at, a, MLVM_NONE), MLVM_ERR_SHAPE);
    o.aux = g; /* gamma and beta of 6 for rows of 3 */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &o, at, a, g), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &o, f, f, g), MLVM_ERR_INVALID);
    o.aux = MLVM_NONE;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_GELU, &o, at, a, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_GELU, &o, ai, ai, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_GELU, &o, a, a, MLVM_NONE), MLVM_OK);
    memset(o.ints, 0, sizeof o.ints);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, y, x, w), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, x, x, w), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, x, y, w), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, y, x, a), MLVM_ERR_SHAPE);
    o.ints[MLVM_POOL_KH] = 2, o.ints[MLVM_POOL_KW] = 2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, y, x, MLVM_NONE), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, w, x, MLVM_NONE), MLVM_ERR_SHAPE);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, y, a, MLVM_NONE), MLVM_ERR_SHAPE);
    mlvm_vm_free(vm);
}

#endif /* MLVM_CHECKS */
