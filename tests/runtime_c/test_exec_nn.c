/* Eager execution of the neural-network ops on small hand-computed cases. */
#include <string.h>

#include "check.h"

static mlvm_vm_t *vm_std(void)
{
    return mlvm_vm_new(mlvm_allocator_std());
}

static void iota(float *x, int n)
{
    int i;
    for (i = 0; i < n; ++i)
        x[i] = (float)i;
}

/* [2,3,4] with perm (2,0,1) -> [4,2,3]; an i32 matrix transposed. */
void test_exec_transpose(void)
{
    static const int64_t d[] = {2, 3, 4}, t[] = {4, 2, 3}, m[] = {2, 3},
                         mt[] = {3, 2};
    const int32_t mi[6] = {1, 2, 3, 4, 5, 6};
    float x[24];
    mlvm_vm_t *vm = vm_std();
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    mlvm_handle_t ta, tt, tm, tmt;
    int i, j, k;
    REQUIRE(vm != NULL);
    iota(x, 24);
    ta = new_f32(vm, 3, d, x);
    tt = new_f32(vm, 3, t, NULL);
    tm = new_i32(vm, 2, m, mi);
    tmt = new_i32(vm, 2, mt, NULL);
    o.ints[0] = 2, o.ints[1] = 0, o.ints[2] = 1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_TRANSPOSE, &o, tt, ta, MLVM_NONE), MLVM_OK);
    for (i = 0; i < 4; ++i)
        for (j = 0; j < 2; ++j)
            for (k = 0; k < 3; ++k)
                CHECK_EQ(f32_of(vm, tt)[(i * 2 + j) * 3 + k], x[(j * 3 + k) * 4 + i]);
    o.ints[0] = 1, o.ints[1] = 0;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_TRANSPOSE, &o, tmt, tm, MLVM_NONE), MLVM_OK);
    CHECK_EQ(i32_of(vm, tmt)[1], 4);
    CHECK_EQ(i32_of(vm, tmt)[4], 3);
    mlvm_vm_free(vm);
}

/* Rows 1 and 3, columns 4, 2, 0 of a [4,5]; stride 0 means 1. */
void test_exec_slice(void)
{
    static const int64_t d[] = {4, 5}, s[] = {2, 3}, r[] = {2, 5};
    float x[20];
    mlvm_vm_t *vm = vm_std();
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    mlvm_handle_t ta, ts, tr;
    int i, j;
    REQUIRE(vm != NULL);
    iota(x, 20);
    ta = new_f32(vm, 2, d, x);
    ts = new_f32(vm, 2, s, NULL);
    tr = new_f32(vm, 2, r, NULL);
    o.ints[MLVM_SLICE_START] = 1;
    o.ints[MLVM_SLICE_START + 1] = 4;
    o.ints[MLVM_SLICE_STRIDE] = 2;
    o.ints[MLVM_SLICE_STRIDE + 1] = -2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SLICE, &o, ts, ta, MLVM_NONE), MLVM_OK);
    for (i = 0; i < 2; ++i)
        for (j = 0; j < 3; ++j)
            CHECK_EQ(f32_of(vm, ts)[i * 3 + j], x[(1 + 2 * i) * 5 + 4 - 2 * j]);
    memset(o.ints, 0, sizeof o.ints);
    o.ints[MLVM_SLICE_START] = 2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SLICE, &o, tr, ta, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, tr)[0], 10);
    CHECK_EQ(f32_of(vm, tr)[9], 19);
    mlvm_vm_free(vm);
}

/* [2,1] ++ [2,2] along the last axis; i32 [1,2] ++ [2,2] along axis 0. */
void test_exec_concat(void)
{
    static const int64_t a[] = {2, 1}, b[] = {2, 2}, c[] = {2, 3}, r1[] = {1, 2},
                         r3[] = {3, 2};
    const float va[2] = {1, 2}, vb[4] = {3, 4, 5, 6};
    const float want[6] = {1, 3, 4, 2, 5, 6};
    const int32_t ia[2] = {7, 8}, ib[4] = {1, 2, 3, 4};
    mlvm_vm_t *vm = vm_std();
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    mlvm_handle_t ta, tb, tc, ti, tj, tk;
    int i;
    REQUIRE(vm != NULL);
    ta = new_f32(vm, 2, a, va);
    tb = new_f32(vm, 2, b, vb);
    tc = new_f32(vm, 2, c, NULL);
    ti = new_i32(vm, 2, r1, ia);
    tj = new_i32(vm, 2, b, ib);
    tk = new_i32(vm, 2, r3, NULL);
    o.axis = -1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONCAT, &o, tc, ta, tb), MLVM_OK);
    for (i = 0; i < 6; ++i)
        CHECK_EQ(f32_of(vm, tc)[i], want[i]);
    o.axis = 0;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONCAT, &o, tk, ti, tj), MLVM_OK);
    CHECK_EQ(i32_of(vm, tk)[1], 8);
    CHECK_EQ(i32_of(vm, tk)[2], 1);
    CHECK_EQ(i32_of(vm, tk)[5], 4);
    mlvm_vm_free(vm);
}

/* Along the last axis and along axis 0 of a [2,3]. */
void test_exec_softmax(void)
{
    static const int64_t d[] = {2, 3};
    const float x[6] = {1, 2, 3, 0, 0, 0};
    mlvm_vm_t *vm = vm_std();
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    mlvm_handle_t tx, ty;
    double s;
    REQUIRE(vm != NULL);
    tx = new_f32(vm, 2, d, x);
    ty = new_f32(vm, 2, d, NULL);
    o.axis = -1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SOFTMAX, &o, ty, tx, MLVM_NONE), MLVM_OK);
    s = exp(1.0) + exp(2.0) + exp(3.0);
    CHECK_NEAR(f32_of(vm, ty)[2], exp(3.0) / s, 1e-6);
    CHECK_NEAR(f32_of(vm, ty)[4], 1.0 / 3, 1e-6);
    o.axis = 0;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_SOFTMAX, &o, ty, tx, MLVM_NONE), MLVM_OK);
    CHECK_NEAR(f32_of(vm, ty)[0], exp(1.0) / (exp(1.0) + 1), 1e-6);
    CHECK_NEAR(f32_of(vm, ty)[5], 1 / (exp(3.0) + 1), 1e-6);
    mlvm_vm_free(vm);
}

/* Rows of [2,4] with gamma and beta; then over axis 0 (strided), plain. */
void test_exec_layer_norm(void)
{
    static const int64_t d[] = {2, 4}, c[] = {4};
    const float x[8] = {1, 2, 3, 4, 10, 10, 10, 14};
    const float g[4] = {1, 2, 1, 1}, b[4] = {0, 0, 5, 0};
    mlvm_vm_t *vm = vm_std();
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    mlvm_handle_t tx, tg, tb, ty;
    const double r = 1 / sqrt(1.25 + 1e-5);
    REQUIRE(vm != NULL);
    tx = new_f32(vm, 2, d, x);
    tg = new_f32(vm, 1, c, g);
    tb = new_f32(vm, 1, c, b);
    ty = new_f32(vm, 2, d, NULL);
    o.f = 1e-5f;
    o.aux = tb;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &o, ty, tx, tg), MLVM_OK);
    CHECK_NEAR(f32_of(vm, ty)[0], -1.5 * r, 1e-5);
    CHECK_NEAR(f32_of(vm, ty)[1], 2 * -0.5 * r, 1e-5);
    CHECK_NEAR(f32_of(vm, ty)[2], 0.5 * r + 5, 1e-5);
    CHECK_NEAR(f32_of(vm, ty)[7], 3 / sqrt(3.0 + 1e-5), 1e-5);
    o.aux = MLVM_NONE;
    o.axes = 1u; /* over the two rows: each column is a pair */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &o, ty, tx, MLVM_NONE), MLVM_OK);
    CHECK_NEAR(f32_of(vm, ty)[0], -1 / sqrt(1 + 1e-5 / 20.25), 1e-5);
    CHECK_NEAR(f32_of(vm, ty)[4], 1 / sqrt(1 + 1e-5 / 20.25), 1e-5);
    {   /* Zeroed options mean the dialect's eps (1e-5); -0 is an eps of 0. */
        const float t[4] = {1.0f, 1.002f, 0.998f, 1.0f}; /* variance 2e-6 */
        mlvm_opts_t z = MLVM_OPTS_DEFAULT;
        mlvm_handle_t tt = new_f32(vm, 1, c, t), tu = new_f32(vm, 1, c, NULL);
        CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &z, tu, tt, MLVM_NONE), MLVM_OK);
        CHECK_NEAR(f32_of(vm, tu)[1], 0.002 / sqrt(2e-6 + MLVM_LAYER_NORM_EPS), 1e-2);
        CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, NULL, tu, tt, MLVM_NONE), MLVM_OK);
        CHECK_NEAR(f32_of(vm, tu)[1], 0.002 / sqrt(2e-6 + MLVM_LAYER_NORM_EPS), 1e-2);
        z.f = -0.0f;
        CHECK_EQ(mlvm_exec(vm, MLVM_OP_LAYER_NORM, &z, tu, tt, MLVM_NONE), MLVM_OK);
        CHECK_NEAR(f32_of(vm, tu)[1], 0.002 / sqrt(2e-6), 1e-2);
    }
    mlvm_vm_free(vm);
}

/* Both approximations, in place for the second. */
void test_exec_gelu(void)
{
    static const int64_t d[] = {4};
    const float x[4] = {-3, -0.5f, 0, 2};
    mlvm_vm_t *vm = vm_std();
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    mlvm_handle_t tx, ty;
    int i;
    REQUIRE(vm != NULL);
    tx = new_f32(vm, 1, d, x);
    ty = new_f32(vm, 1, d, NULL);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_GELU, &o, ty, tx, MLVM_NONE), MLVM_OK);
    for (i = 0; i < 4; ++i) {
        const double v = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2.0)));
        CHECK_NEAR(f32_of(vm, ty)[i], v, 1e-6 * (1 + fabs(v)));
    }
    o.flags = MLVM_GELU_TANH;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_GELU, &o, tx, tx, MLVM_NONE), MLVM_OK);
    for (i = 0; i < 4; ++i) {
        const double u = sqrt(2 / 3.14159265358979) * (x[i] + 0.044715 * pow(x[i], 3));
        const double v = 0.5 * x[i] * (1 + tanh(u));
        CHECK_NEAR(f32_of(vm, tx)[i], v, 1e-6 * (1 + fabs(v)));
    }
    mlvm_vm_free(vm);
}

/* A 3x3 input, a 2x2 kernel, bias; then stride 2 with one pad all round. */
void test_exec_conv2d(void)
{
    static const int64_t dx[] = {1, 1, 3, 3}, dw[] = {1, 1, 2, 2}, db[] = {1},
                         dy[] = {1, 1, 2, 2};
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 0, 0, -1},
                b[1] = {10};
    mlvm_vm_t *vm = vm_std();
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    mlvm_handle_t tx, tw, tb, ty;
    int i;
    REQUIRE(vm != NULL);
    tx = new_f32(vm, 4, dx, x);
    tw = new_f32(vm, 4, dw, w);
    tb = new_f32(vm, 1, db, b);
    ty = new_f32(vm, 4, dy, NULL);
    o.aux = tb;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, ty, tx, tw), MLVM_OK);
    for (i = 0; i < 4; ++i)
        CHECK_EQ(f32_of(vm, ty)[i], 10 - 4); /* x[i,j] - x[i+1,j+1] */
    /* Padded to 5x5, windows at 0 and 2: (0,0) sees only x[0,0] * -1. */
    o.aux = MLVM_NONE;
    o.ints[MLVM_WIN_SH] = 2, o.ints[MLVM_WIN_SW] = 2;
    o.ints[MLVM_WIN_PT] = 1, o.ints[MLVM_WIN_PL] = 1;
    o.ints[MLVM_WIN_PB] = 1, o.ints[MLVM_WIN_PR] = 1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_CONV2D, &o, ty, tx, tw), MLVM_OK);
    CHECK_EQ(f32_of(vm, ty)[0], -1);
    CHECK_EQ(f32_of(vm, ty)[1], -3);
    CHECK_EQ(f32_of(vm, ty)[3], 5 - 9);
    mlvm_vm_free(vm);
}

/* 2x2 windows over a 4x4, stride 2; then 3x3 windows with one pad. */
void test_exec_pool2d(void)
{
    static const int64_t dx[] = {1, 1, 4, 4}, dy[] = {1, 1, 2, 2};
    float x[16];
    mlvm_vm_t *vm = vm_std();
    mlvm_opts_t o = MLVM_OPTS_DEFAULT;
    mlvm_handle_t tx, ty;
    REQUIRE(vm != NULL);
    iota(x, 16);
    tx = new_f32(vm, 4, dx, x);
    ty = new_f32(vm, 4, dy, NULL);
    o.ints[MLVM_POOL_KH] = 2, o.ints[MLVM_POOL_KW] = 2;
    o.ints[MLVM_WIN_SH] = 2, o.ints[MLVM_WIN_SW] = 2;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, ty, tx, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, ty)[0], 5);
    CHECK_EQ(f32_of(vm, ty)[3], 15);
    o.flags = MLVM_POOL_AVG;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, ty, tx, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, ty)[0], 2.5);
    CHECK_EQ(f32_of(vm, ty)[3], 12.5);
    /* Padded positions are left out of the average's count. */
    o.ints[MLVM_POOL_KH] = 3, o.ints[MLVM_POOL_KW] = 3;
    o.ints[MLVM_WIN_PT] = 1, o.ints[MLVM_WIN_PL] = 1;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, ty, tx, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, ty)[0], (0 + 1 + 4 + 5) / 4.0);
    o.flags = 0u;
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_POOL2D, &o, ty, tx, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, ty)[3], 15);
    mlvm_vm_free(vm);
}
