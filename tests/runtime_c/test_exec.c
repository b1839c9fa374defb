/* Eager execution: each op family on small hand-computed cases. */
#include <string.h>

#include "check.h"

static mlvm_vm_t *vm_std(void)
{
    return mlvm_vm_new(mlvm_allocator_std());
}

void test_exec_fill(void)
{
    static const int64_t d[] = {2, 3};
    mlvm_vm_t *vm = vm_std();
    mlvm_opts_t o = {2.5f, 0, 0u, 0u, MLVM_NONE, {0}};
    mlvm_handle_t f, i;
    REQUIRE(vm != NULL);
    f = new_f32(vm, 2, d, NULL);
    i = new_i32(vm, 2, d, NULL);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_FILL, &o, f, MLVM_NONE, MLVM_NONE), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_FILL, &o, i, MLVM_NONE, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, f)[5], 2.5);
    CHECK_EQ(i32_of(vm, i)[5], 2);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_FILL, NULL, f, MLVM_NONE, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, f)[0], 0);
    mlvm_vm_free(vm);
}

void test_exec_binary_broadcast(void)
{
    /* [2,1,3] op [4,1] -> [2,4,3] */
    static const int64_t da[] = {2, 1, 3}, db[] = {4, 1}, dd[] = {2, 4, 3};
    const float a[6] = {1, 2, 3, 4, 5, 6};
    const float b[4] = {10, 20, 30, 40};
    mlvm_vm_t *vm = vm_std();
    mlvm_handle_t ta, tb, td;
    int i, j, k;
    REQUIRE(vm != NULL);
    ta = new_f32(vm, 3, da, a);
    tb = new_f32(vm, 2, db, b);
    td = new_f32(vm, 3, dd, NULL);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ADD, NULL, td, ta, tb), MLVM_OK);
    for (i = 0; i < 2; ++i)
        for (j = 0; j < 4; ++j)
            for (k = 0; k < 3; ++k)
                CHECK_EQ(f32_of(vm, td)[(i * 4 + j) * 3 + k], a[i * 3 + k] + b[j]);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SUB, NULL, td, tb, ta), MLVM_OK);
    CHECK_EQ(f32_of(vm, td)[(1 * 4 + 2) * 3 + 1], 30 - 5);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_DIV, NULL, td, ta, tb), MLVM_OK);
    CHECK_EQ(f32_of(vm, td)[(1 * 4 + 3) * 3 + 2], 6.0f / 40.0f);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MAX, NULL, td, ta, tb), MLVM_OK);
    CHECK_EQ(f32_of(vm, td)[0], 10);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MIN, NULL, td, ta, tb), MLVM_OK);
    CHECK_EQ(f32_of(vm, td)[0], 1);
    /* A scalar (rank 0) operand. */
    {
        const float two = 2;
        mlvm_handle_t s = new_f32(vm, 0, NULL, &two);
        mlvm_handle_t out = new_f32(vm, 3, da, NULL);
        CHECK_EQ(mlvm_exec(vm, MLVM_OP_MUL, NULL, out, ta, s), MLVM_OK);
        CHECK_EQ(f32_of(vm, out)[5], 12);
    }
    mlvm_vm_free(vm);
}

void test_exec_binary_i32_and_compare(void)
{
    static const int64_t d[] = {4};
    const int32_t a[4] = {1, -2, INT32_MAX, 7};
    const int32_t b[4] = {1, 3, 1, -7};
    mlvm_vm_t *vm = vm_std();
    mlvm_handle_t ta, tb, ti, tf;
    REQUIRE(vm != NULL);
    ta = new_i32(vm, 1, d, a);
    tb = new_i32(vm, 1, d, b);
    ti = new_i32(vm, 1, d, NULL);
    tf = new_f32(vm, 1, d, NULL);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ADD, NULL, ti, ta, tb), MLVM_OK);
    CHECK_EQ(i32_of(vm, ti)[2], INT32_MIN); /* wraps, as numpy int32 does */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MUL, NULL, ti, ta, tb), MLVM_OK);
    CHECK_EQ(i32_of(vm, ti)[3], -49);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_EQ, NULL, tf, ta, tb), MLVM_OK);
    CHECK_EQ(f32_of(vm, tf)[0], 1);
    CHECK_EQ(f32_of(vm, tf)[1], 0);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CMPL, NULL, tf, ta, tb), MLVM_OK);
    CHECK_EQ(f32_of(vm, tf)[1], 0);
    CHECK_EQ(f32_of(vm, tf)[3], 1);
    mlvm_vm_free(vm);
}

/* dst equal to an operand: elementwise ops run in place. */
void test_exec_inplace(void)
{
    static const int64_t d[] = {3, 2}, r[] = {2};
    const float a[6] = {1, -2, 3, -4, 5, -6}, b[2] = {10, 100};
    mlvm_vm_t *vm = vm_std();
    mlvm_handle_t ta, tb;
    size_t consumed;
    REQUIRE(vm != NULL);
    ta = new_f32(vm, 2, d, a);
    tb = new_f32(vm, 1, r, b);
    consumed = mlvm_vm_consumed(vm);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ADD, NULL, ta, ta, tb), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MUL, NULL, ta, tb, ta), MLVM_OK);
    CHECK_EQ(f32_of(vm, ta)[4], (5 + 10) * 10);
    CHECK_EQ(f32_of(vm, ta)[5], (-6 + 100) * 100);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_NEG, NULL, ta, ta, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, ta)[0], -110);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_RELU, NULL, ta, ta, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, ta)[0], 0);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SUB, NULL, ta, ta, ta), MLVM_OK);
    CHECK_EQ(f32_of(vm, ta)[3], 0);
    CHECK_EQ(mlvm_vm_consumed(vm), consumed); /* nothing allocated */
    mlvm_vm_free(vm);
}

void test_exec_unary(void)
{
    static const int64_t d[] = {5};
    const float a[5] = {-2, -0.5f, 0, 0.5f, 4};
    mlvm_vm_t *vm = vm_std();
    mlvm_handle_t ta, td;
    mlvm_opts_t eps = {1.0f, 0, 0u, 0u, MLVM_NONE, {0}};
    int i;
    REQUIRE(vm != NULL);
    ta = new_f32(vm, 1, d, a);
    td = new_f32(vm, 1, d, NULL);
#define UNARY(OP, expr)                                                        \
    CHECK_EQ(mlvm_exec(vm, OP, NULL, td, ta, MLVM_NONE), MLVM_OK);             \
    for (i = 0; i < 5; ++i) {                                                  \
        const float x = a[i];                                                  \
        CHECK_NEAR(f32_of(vm, td)[i], (expr), 1e-6 * (1 + fabs(expr)));        \
    }
    UNARY(MLVM_OP_NEG, -x)
    UNARY(MLVM_OP_EXP, exp(x))
    UNARY(MLVM_OP_TANH, tanh(x))
    UNARY(MLVM_OP_SIGMOID, 1 / (1 + exp(-x)))
    UNARY(MLVM_OP_RELU, x < 0 ? 0 : x)
#undef UNARY
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SQRT, NULL, td, ta, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, td)[4], 2);
    CHECK(f32_of(vm, td)[0] != f32_of(vm, td)[0]); /* NaN */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_LOG, NULL, td, ta, MLVM_NONE), MLVM_OK);
    CHECK_NEAR(f32_of(vm, td)[4], log(4.0), 1e-6);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_RSQRT, &eps, td, ta, MLVM_NONE), MLVM_OK);
    CHECK_NEAR(f32_of(vm, td)[4], 1 / sqrt(5.0), 1e-6);
    mlvm_vm_free(vm);
}

void test_exec_matmul(void)
{
    /* a [2,3], b [3,2]; also a^T [3,2] and b^T [2,3] with the flags. */
    static const int64_t d23[] = {2, 3}, d32[] = {3, 2}, d22[] = {2, 2};
    const float a[6] = {1, 2, 3, 4, 5, 6};
    const float b[6] = {7, 8, 9, 10, 11, 12};
    const float at[6] = {1, 4, 2, 5, 3, 6};
    const float bt[6] = {7, 9, 11, 8, 10, 12};
    const float want[4] = {58, 64, 139, 154};
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    mlvm_vm_t *vm = vm_std();
    mlvm_handle_t ta, tb, tat, tbt, td;
    int i;
    REQUIRE(vm != NULL);
    ta = new_f32(vm, 2, d23, a);
    tb = new_f32(vm, 2, d32, b);
    tat = new_f32(vm, 2, d32, at);
    tbt = new_f32(vm, 2, d23, bt);
    td = new_f32(vm, 2, d22, NULL);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, NULL, td, ta, tb), MLVM_OK);
    for (i = 0; i < 4; ++i)
        CHECK_EQ(f32_of(vm, td)[i], want[i]);
    o.flags = MLVM_TRANSPOSE_LHS;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, &o, td, tat, tb), MLVM_OK);
    for (i = 0; i < 4; ++i)
        CHECK_EQ(f32_of(vm, td)[i], want[i]);
    o.flags = MLVM_TRANSPOSE_RHS;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, &o, td, ta, tbt), MLVM_OK);
    for (i = 0; i < 4; ++i)
        CHECK_EQ(f32_of(vm, td)[i], want[i]);
    o.flags = MLVM_TRANSPOSE_LHS | MLVM_TRANSPOSE_RHS;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, &o, td, tat, tbt), MLVM_OK);
    for (i = 0; i < 4; ++i)
        CHECK_EQ(f32_of(vm, td)[i], want[i]);
    mlvm_vm_free(vm);
}

/* Batch dims broadcast: [2,1,2,3] @ [3,3,2] -> [2,3,2,2]. */
void test_exec_matmul_batched(void)
{
    static const int64_t da[] = {2, 1, 2, 3}, db[] = {3, 3, 2},
                         dd[] = {2, 3, 2, 2};
    float a[12], b[18];
    mlvm_vm_t *vm = vm_std();
    mlvm_handle_t ta, tb, td;
    int i, j, m, n, k;
    REQUIRE(vm != NULL);
    for (i = 0; i < 12; ++i)
        a[i] = (float)(i % 5) - 2;
    for (i = 0; i < 18; ++i)
        b[i] = (float)(i % 7) - 3;
    ta = new_f32(vm, 4, da, a);
    tb = new_f32(vm, 3, db, b);
    td = new_f32(vm, 4, dd, NULL);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, NULL, td, ta, tb), MLVM_OK);
    for (i = 0; i < 2; ++i)
        for (j = 0; j < 3; ++j)
            for (m = 0; m < 2; ++m)
                for (n = 0; n < 2; ++n) {
                    float s = 0;
                    for (k = 0; k < 3; ++k)
                        s += a[i * 6 + m * 3 + k] * b[j * 6 + k * 2 + n];
                    CHECK_EQ(f32_of(vm, td)[((i * 3 + j) * 2 + m) * 2 + n], s);
                }
    mlvm_vm_free(vm);
}

void test_exec_reduce(void)
{
    static const int64_t d[] = {2, 3, 4}, k1[] = {2, 1, 4}, r1[] = {2, 4},
                         r02[] = {3};
    float a[24];
    mlvm_vm_t *vm = vm_std();
    mlvm_handle_t ta, tk, tr, t02, ts;
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    int i, j;
    REQUIRE(vm != NULL);
    for (i = 0; i < 24; ++i)
        a[i] = (float)((i * 7) % 11) - 5;
    ta = new_f32(vm, 3, d, a);
    tk = new_f32(vm, 3, k1, NULL);
    tr = new_f32(vm, 2, r1, NULL);
    t02 = new_f32(vm, 1, r02, NULL);
    ts = new_f32(vm, 0, NULL, NULL);
    o.axes = 1u << 1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_REDUCE_SUM, &o, tk, ta, MLVM_NONE), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_REDUCE_MAX, &o, tr, ta, MLVM_NONE), MLVM_OK);
    for (i = 0; i < 2; ++i)
        for (j = 0; j < 4; ++j) {
            const float x0 = a[i * 12 + j], x1 = a[i * 12 + 4 + j],
                        x2 = a[i * 12 + 8 + j];
            const float mx = x0 > x1 ? (x0 > x2 ? x0 : x2) : (x1 > x2 ? x1 : x2);
            CHECK_EQ(f32_of(vm, tk)[i * 4 + j], x0 + x1 + x2);
            CHECK_EQ(f32_of(vm, tr)[i * 4 + j], mx);
        }
    o.axes = (1u << 0) | (1u << 2);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_REDUCE_MEAN, &o, t02, ta, MLVM_NONE), MLVM_OK);
    for (j = 0; j < 3; ++j) {
        double s = 0;
        for (i = 0; i < 8; ++i)
            s += a[(i / 4) * 12 + j * 4 + i % 4];
        CHECK_NEAR(f32_of(vm, t02)[j], s / 8, 1e-6);
    }
    o.axes = 7u;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_REDUCE_SUM, &o, ts, ta, MLVM_NONE), MLVM_OK);
    {
        double s = 0;
        for (i = 0; i < 24; ++i)
            s += a[i];
        CHECK_NEAR(f32_of(vm, ts)[0], s, 1e-5);
    }
    mlvm_vm_free(vm);
}

void test_exec_argmax(void)
{
    static const int64_t d[] = {2, 3}, r0[] = {3}, r1[] = {2, 1};
    const float a[6] = {1, 9, 3, 4, 2, 9};
    mlvm_vm_t *vm = vm_std();
    mlvm_handle_t ta, t0, t1;
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    REQUIRE(vm != NULL);
    ta = new_f32(vm, 2, d, a);
    t0 = new_i32(vm, 1, r0, NULL);
    t1 = new_i32(vm, 2, r1, NULL);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ARGMAX, &o, t0, ta, MLVM_NONE), MLVM_OK);
    CHECK_EQ(i32_of(vm, t0)[0], 1);
    CHECK_EQ(i32_of(vm, t0)[1], 0);
    CHECK_EQ(i32_of(vm, t0)[2], 1);
    o.axis = -1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_ARGMAX, &o, t1, ta, MLVM_NONE), MLVM_OK);
    CHECK_EQ(i32_of(vm, t1)[0], 1);
    CHECK_EQ(i32_of(vm, t1)[1], 2);
    mlvm_vm_free(vm);
}

void test_exec_softmax_xent(void)
{
    static const int64_t d[] = {2, 3}, r[] = {2};
    const float y[6] = {0, 1, 0, 1, 0, 0};
    const float x[6] = {1, 2, 3, 0, 0, 0};
    mlvm_vm_t *vm = vm_std();
    mlvm_handle_t ty, tx, tl, tg;
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    double s0;
    REQUIRE(vm != NULL);
    ty = new_f32(vm, 2, d, y);
    tx = new_f32(vm, 2, d, x);
    tl = new_f32(vm, 1, r, NULL);
    tg = new_f32(vm, 2, d, NULL);
    o.aux = tg;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SOFTMAX_XENT, &o, tl, ty, tx), MLVM_OK);
    s0 = exp(1.0) + exp(2.0) + exp(3.0);
    CHECK_NEAR(f32_of(vm, tl)[0], log(s0) - 2, 1e-6);
    CHECK_NEAR(f32_of(vm, tl)[1], log(3.0), 1e-6);
    CHECK_NEAR(f32_of(vm, tg)[1], exp(2.0) / s0 - 1, 1e-6);
    CHECK_NEAR(f32_of(vm, tg)[4], 1.0 / 3, 1e-6);
    mlvm_vm_free(vm);
}

void test_exec_cast_reshape_broadcast(void)
{
    static const int64_t d[] = {2, 2}, f[] = {4}, b[] = {3, 2, 2}, row[] = {1, 2};
    const float a[4] = {1.9f, -1.9f, 3.0f, -0.5f};
    const float r[2] = {5, 6};
    mlvm_vm_t *vm = vm_std();
    mlvm_handle_t ta, ti, tf, tr, tb, trow;
    REQUIRE(vm != NULL);
    ta = new_f32(vm, 2, d, a);
    ti = new_i32(vm, 2, d, NULL);
    tf = new_f32(vm, 2, d, NULL);
    tr = new_f32(vm, 1, f, NULL);
    tb = new_f32(vm, 3, b, NULL);
    trow = new_f32(vm, 2, row, r);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CAST, NULL, ti, ta, MLVM_NONE), MLVM_OK);
    CHECK_EQ(i32_of(vm, ti)[0], 1);
    CHECK_EQ(i32_of(vm, ti)[1], -1);
    CHECK_EQ(i32_of(vm, ti)[3], 0);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CAST, NULL, tf, ti, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, tf)[2], 3);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_RESHAPE, NULL, tr, ta, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, tr)[3], -0.5f);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_BROADCAST_TO, NULL, tb, trow, MLVM_NONE),
             MLVM_OK);
    CHECK_EQ(f32_of(vm, tb)[10], 5);
    CHECK_EQ(f32_of(vm, tb)[11], 6);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_BROADCAST_TO, NULL, tb, ta, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, tb)[9], -1.9f);
    mlvm_vm_free(vm);
}

/* A dense layer with bias and relu as one batch. */
void test_exec_batch(void)
{
    static const int64_t dx[] = {2, 3}, dw[] = {3, 2}, db[] = {2}, dy[] = {2, 2};
    const float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, -1, 1, -1, 1, -1},
                b[2] = {-6, 20};
    mlvm_vm_t *vm = vm_std();
    mlvm_handle_t tx, tw, tb, ty;
    size_t failed = 99;
    REQUIRE(vm != NULL);
    tx = new_f32(vm, 2, dx, x);
    tw = new_f32(vm, 2, dw, w);
    tb = new_f32(vm, 1, db, b);
    ty = new_f32(vm, 2, dy, NULL);
    {
        mlvm_oparg_t ops[3];
        memset(ops, 0, sizeof ops);
        ops[0].op = MLVM_OP_MATMUL;
        ops[0].dst = ty, ops[0].lhs = tx, ops[0].rhs = tw;
        ops[1].op = MLVM_OP_ADD;
        ops[1].dst = ty, ops[1].lhs = ty, ops[1].rhs = tb;
        ops[2].op = MLVM_OP_RELU;
        ops[2].dst = ty, ops[2].lhs = ty, ops[2].rhs = MLVM_NONE;
        CHECK_EQ(mlvm_batch(vm, 3, ops, &failed), MLVM_OK);
    }
    CHECK_EQ(failed, 3);
    CHECK_EQ(f32_of(vm, ty)[0], 0);  /* relu(6 - 6) */
    CHECK_EQ(f32_of(vm, ty)[1], 14); /* -6 + 20 */
    CHECK_EQ(f32_of(vm, ty)[2], 9);  /* 15 - 6 */
    CHECK_EQ(f32_of(vm, ty)[3], 5);  /* -15 + 20 */
    CHECK_EQ(mlvm_batch(vm, 0, NULL, NULL), MLVM_OK);
    mlvm_vm_free(vm);
}

void test_exec_op_table(void)
{
    int32_t op;
    CHECK_EQ(MLVM_OP_COUNT, 40);
    CHECK(strcmp(mlvm_op_name(MLVM_OP_ADD), "add") == 0);
    CHECK(strcmp(mlvm_op_name(MLVM_OP_SOFTMAX_XENT), "softmax_xent") == 0);
    CHECK(mlvm_op_name(MLVM_OP_COUNT) == NULL);
    CHECK(mlvm_op_name(-1) == NULL);
    CHECK_EQ(mlvm_op_arity(MLVM_OP_FILL), 0);
    CHECK_EQ(mlvm_op_arity(MLVM_OP_EXP), 1);
    CHECK_EQ(mlvm_op_arity(MLVM_OP_MATMUL), 2);
    CHECK_EQ(mlvm_op_arity(MLVM_OP_COUNT), -1);
    for (op = 0; op < MLVM_OP_COUNT; ++op)
        CHECK(mlvm_op_name(op) != NULL);
    {
        /* An op outside the table is refused by every build. */
        static const int64_t d[] = {1};
        mlvm_vm_t *vm = vm_std();
        mlvm_handle_t t;
        REQUIRE(vm != NULL);
        t = new_f32(vm, 1, d, NULL);
        CHECK_EQ(mlvm_exec(vm, MLVM_OP_COUNT, NULL, t, t, t), MLVM_ERR_INVALID);
        CHECK_EQ(mlvm_exec(vm, (mlvm_op_t)-3, NULL, t, t, t), MLVM_ERR_INVALID);
        mlvm_vm_free(vm);
    }
}

/* Ops on tensors cut from a pad behave like ops on owned tensors. */
void test_exec_on_pad_cuts(void)
{
    static const int64_t d[] = {2, 2};
    const float a[4] = {1, 2, 3, 4};
    mlvm_vm_t *vm = vm_std();
    mlvm_pad_t *pad;
    mlvm_shape_t *s;
    mlvm_handle_t x, y, z;
    REQUIRE(vm != NULL);
    pad = mlvm_pad_new(vm, 48);
    s = mlvm_vm_shape_new(vm, 2, d);
    REQUIRE(pad != NULL && s != NULL);
    x = mlvm_pad_cut(vm, pad, 0, MLVM_F32, s);
    y = mlvm_pad_cut(vm, pad, 16, MLVM_F32, s);
    z = mlvm_pad_cut(vm, pad, 32, MLVM_F32, s);
    REQUIRE(x >= 0 && y >= 0 && z >= 0);
    CHECK_EQ(mlvm_tensor_write(vm, x, 0, a, sizeof a), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MATMUL, NULL, y, x, x), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SUB, NULL, z, y, x), MLVM_OK);
    CHECK_EQ(f32_of(vm, z)[0], 7 - 1);
    CHECK_EQ(f32_of(vm, z)[3], 22 - 4);
    mlvm_vm_free(vm);
}
