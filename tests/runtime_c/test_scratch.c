/* Scratch pads: tensors cut at offsets without allocation. */
#include <stdint.h>

#include "check.h"

void test_pad_cut_no_allocation(void)
{
    static const int64_t d[] = {4, 4};
    counting_t c;
    mlvm_vm_t *vm;
    mlvm_pad_t *pad;
    mlvm_shape_t *s;
    mlvm_handle_t a, b;
    long allocs;
    size_t consumed;
    counting_init(&c);
    vm = mlvm_vm_new(&c.a);
    REQUIRE(vm != NULL);
    pad = mlvm_pad_new(vm, 256);
    REQUIRE(pad != NULL);
    CHECK_EQ(mlvm_pad_size(pad), 256);
    CHECK_EQ((uintptr_t)mlvm_pad_data(pad) % MLVM_ARENA_ALIGN, 0);
    s = mlvm_vm_shape_new(vm, 2, d);
    REQUIRE(s != NULL);
    CHECK_EQ(mlvm_vm_reserve(vm, 2), MLVM_OK);
    allocs = c.allocs;
    consumed = mlvm_vm_consumed(vm);
    a = mlvm_pad_cut(vm, pad, 0, MLVM_F32, s);
    b = mlvm_pad_cut(vm, pad, 64, MLVM_I32, s);
    CHECK(a >= 0 && b >= 0);
    CHECK_EQ(c.allocs, allocs); /* nothing allocated */
    CHECK_EQ(mlvm_vm_consumed(vm), consumed);
    CHECK(f32_of(vm, a) == (const float *)mlvm_pad_data(pad));
    CHECK((const unsigned char *)i32_of(vm, b) ==
          (const unsigned char *)mlvm_pad_data(pad) + 64);
    CHECK_EQ(mlvm_tensor_free(vm, a), MLVM_OK);
    CHECK_EQ(mlvm_vm_consumed(vm), consumed); /* the pad keeps its bytes */
    mlvm_vm_free(vm);                         /* with b still cut */
    CHECK_EQ(c.live_bytes, 0);
    CHECK_EQ(c.bad_frees, 0);
}

/* Cuts may share bytes: writes through one show through the other. */
void test_pad_overlapping_cuts(void)
{
    static const int64_t d8[] = {8}, d24[] = {2, 4};
    const float v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_pad_t *pad;
    mlvm_handle_t flat, mat, tail;
    REQUIRE(vm != NULL);
    pad = mlvm_pad_new(vm, 64);
    REQUIRE(pad != NULL);
    flat = mlvm_pad_cut(vm, pad, 0, MLVM_F32, mlvm_vm_shape_new(vm, 1, d8));
    mat = mlvm_pad_cut(vm, pad, 0, MLVM_F32, mlvm_vm_shape_new(vm, 2, d24));
    tail = mlvm_pad_cut(vm, pad, 16, MLVM_F32, mlvm_vm_shape_new(vm, 1, d8));
    REQUIRE(flat >= 0 && mat >= 0 && tail >= 0);
    CHECK_EQ(mlvm_tensor_write(vm, flat, 0, v, sizeof v), MLVM_OK);
    CHECK_EQ(f32_of(vm, mat)[5], 5);
    CHECK_EQ(f32_of(vm, tail)[0], 4);
    /* A reshape for free: the same bytes seen as [2, 4]. */
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_RELU, NULL, mat, mat, MLVM_NONE), MLVM_OK);
    CHECK_EQ(f32_of(vm, flat)[7], 7);
    mlvm_vm_free(vm);
}

void test_pad_free(void)
{
    static const int64_t d[] = {2};
    counting_t c;
    mlvm_vm_t *vm;
    mlvm_pad_t *p1, *p2, *p3;
    mlvm_handle_t t;
    counting_init(&c);
    vm = mlvm_vm_new(&c.a);
    REQUIRE(vm != NULL);
    p1 = mlvm_pad_new(vm, 16);
    p2 = mlvm_pad_new(vm, 32);
    p3 = mlvm_pad_new(vm, 0);
    REQUIRE(p1 != NULL && p2 != NULL && p3 != NULL);
    t = mlvm_pad_cut(vm, p2, 8, MLVM_F32, mlvm_vm_shape_new(vm, 1, d));
    CHECK(t >= 0);
    CHECK_EQ(mlvm_tensor_free(vm, t), MLVM_OK);
    CHECK_EQ(mlvm_pad_free(vm, p2), MLVM_OK); /* middle of the list */
    CHECK_EQ(mlvm_pad_free(vm, p3), MLVM_OK); /* head */
    CHECK_EQ(mlvm_vm_consumed(vm), c.live_bytes);
    CHECK_EQ(mlvm_pad_free(vm, p1), MLVM_OK);
    CHECK_EQ(mlvm_vm_consumed(vm), c.live_bytes);
    mlvm_vm_free(vm);
    CHECK_EQ(c.live_bytes, 0);
}
