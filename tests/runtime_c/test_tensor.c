/* Tensors: info, the raw pointer, copy semantics, pointer swap. */
#include <string.h>

#include "check.h"

void test_tensor_info_and_data(void)
{
    static const int64_t d[] = {2, 5};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_handle_t t;
    mlvm_dtype_t dt;
    const mlvm_shape_t *s;
    void *p = NULL;
    REQUIRE(vm != NULL);
    t = new_i32(vm, 2, d, NULL);
    REQUIRE(t >= 0);
    CHECK_EQ(mlvm_tensor_info(vm, t, &dt, &s), MLVM_OK);
    CHECK_EQ(dt, MLVM_I32);
    CHECK_EQ(s->rank, 2);
    CHECK_EQ(s->dims[1], 5);
    CHECK_EQ(mlvm_tensor_info(vm, t, NULL, NULL), MLVM_OK);
    CHECK_EQ(mlvm_tensor_data(vm, t, &p), MLVM_OK);
    REQUIRE(p != NULL);
    ((int32_t *)p)[9] = 42; /* zero-copy: the VM sees it */
    {
        int32_t v = 0;
        CHECK_EQ(mlvm_tensor_read(vm, t, 9 * 4, &v, 4), MLVM_OK);
        CHECK_EQ(v, 42);
    }
    mlvm_vm_free(vm);
}

void test_tensor_read_write_copy(void)
{
    static const int64_t d[] = {4};
    float in[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_handle_t t;
    REQUIRE(vm != NULL);
    t = new_f32(vm, 1, d, NULL);
    CHECK_EQ(mlvm_tensor_write(vm, t, 0, in, sizeof in), MLVM_OK);
    in[0] = 100; /* the tensor holds a copy */
    CHECK_EQ(mlvm_tensor_read(vm, t, 0, out, sizeof out), MLVM_OK);
    CHECK_EQ(out[0], 1);
    CHECK_EQ(out[3], 4);
    out[1] = -1; /* and hands out copies */
    CHECK_EQ(f32_of(vm, t)[1], 2);
    /* Partial ranges. */
    CHECK_EQ(mlvm_tensor_write(vm, t, 8, in, 4), MLVM_OK);
    CHECK_EQ(f32_of(vm, t)[2], 100);
    CHECK_EQ(mlvm_tensor_read(vm, t, 16, out, 0), MLVM_OK);
    mlvm_vm_free(vm);
}

void test_tensor_swap(void)
{
    static const int64_t d[] = {3};
    const float vals[3] = {1, 2, 3};
    counting_t c;
    mlvm_vm_t *vm;
    mlvm_handle_t t;
    float *mine, *old_data;
    void *p;
    size_t consumed;
    counting_init(&c);
    vm = mlvm_vm_new(&c.a);
    REQUIRE(vm != NULL);
    t = new_f32(vm, 1, d, vals);
    old_data = (float *)(void *)f32_of(vm, t);
    mine = (float *)c.a.alloc(c.a.ud, sizeof vals);
    REQUIRE(mine != NULL);
    mine[0] = 7;
    mine[1] = 8;
    mine[2] = 9;
    consumed = mlvm_vm_consumed(vm);
    p = mine;
    CHECK_EQ(mlvm_tensor_swap(vm, t, &p), MLVM_OK);
    CHECK(p == old_data); /* ownership changed hands: no copy */
    CHECK(f32_of(vm, t) == mine);
    CHECK_EQ(f32_of(vm, t)[2], 9);
    CHECK_EQ(((float *)p)[0], 1);
    CHECK_EQ(mlvm_vm_consumed(vm), consumed);
    /* The buffer we got back is ours to release. */
    mlvm_vm_allocator(vm)->free(c.a.ud, p, sizeof vals);
    CHECK_EQ(mlvm_vm_consumed(vm), c.live_bytes);
    mlvm_vm_free(vm); /* releases `mine` */
    CHECK_EQ(c.live_bytes, 0);
    CHECK_EQ(c.bad_frees, 0);
}
