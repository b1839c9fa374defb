/* Shapes: reference counts, shared instances, sharing across VMs. */
#include "check.h"

void test_shape_refcount(void)
{
    static const int64_t d[] = {2, 3, 4};
    counting_t c;
    mlvm_shape_t *s;
    counting_init(&c);
    s = mlvm_shape_new(&c.a, 3, d);
    REQUIRE(s != NULL);
    CHECK_EQ(s->refs, 1);
    CHECK_EQ(s->rank, 3);
    CHECK_EQ(s->size, 24);
    CHECK_EQ(s->dims[2], 4);
    CHECK_EQ(c.live_bytes, mlvm_shape_bytes(3));
    CHECK(mlvm_shape_incref(s) == s);
    CHECK_EQ(s->refs, 2);
    mlvm_shape_decref(s);
    CHECK_EQ(c.live_blocks, 1);
    mlvm_shape_decref(s);
    CHECK_EQ(c.live_blocks, 0);
    CHECK_EQ(c.bad_frees, 0);
    mlvm_shape_decref(NULL);
    /* Rank 0: a scalar of one element. */
    s = mlvm_shape_new(&c.a, 0, NULL);
    REQUIRE(s != NULL);
    CHECK_EQ(s->size, 1);
    mlvm_shape_decref(s);
    CHECK_EQ(c.live_bytes, 0);
}

void test_shape_interned(void)
{
    static const int64_t a[] = {3, 5}, b[] = {5, 3}, e[] = {3, 5, 1};
    counting_t c;
    mlvm_vm_t *vm;
    mlvm_shape_t *s1, *s2, *s3, *s4;
    size_t before;
    counting_init(&c);
    vm = mlvm_vm_new(&c.a);
    REQUIRE(vm != NULL);
    s1 = mlvm_vm_shape_new(vm, 2, a);
    before = mlvm_vm_consumed(vm);
    s2 = mlvm_vm_shape_new(vm, 2, a);
    CHECK(s1 == s2);
    CHECK_EQ(mlvm_vm_consumed(vm), before); /* no new bytes */
    s3 = mlvm_vm_shape_new(vm, 2, b);
    s4 = mlvm_vm_shape_new(vm, 3, e);
    CHECK(s3 != s1 && s4 != s1 && s3 != s4);
    CHECK(!mlvm_shape_equal(s1, s3));
    CHECK(mlvm_shape_equal(s1, s2));
    CHECK(mlvm_vm_shape_new(vm, 0, NULL) == mlvm_vm_shape_new(vm, 0, NULL));
    CHECK_EQ(s1->refs, 1); /* the VM's reference */
    CHECK(new_f32(vm, 2, a, NULL) >= 0);
    CHECK_EQ(s1->refs, 2);
    CHECK_EQ(mlvm_vm_consumed(vm), c.live_bytes);
    mlvm_vm_free(vm);
    CHECK_EQ(c.live_bytes, 0);
}

/* One caller shape used by tensors of two VMs. */
void test_shape_shared_across_vms(void)
{
    static const int64_t d[] = {4, 4};
    counting_t c;
    mlvm_vm_t *v1, *v2;
    mlvm_shape_t *s;
    counting_init(&c);
    v1 = mlvm_vm_new(&c.a);
    v2 = mlvm_vm_new(&c.a);
    s = mlvm_shape_new(&c.a, 2, d);
    REQUIRE(v1 != NULL && v2 != NULL && s != NULL);
    CHECK(mlvm_tensor_new(v1, MLVM_F32, s) >= 0);
    CHECK(mlvm_tensor_new(v2, MLVM_F32, s) >= 0);
    CHECK(mlvm_tensor_new(v2, MLVM_I32, s) >= 0);
    CHECK_EQ(s->refs, 4);
    mlvm_shape_decref(s);
    mlvm_vm_free(v1);
    CHECK_EQ(s->refs, 2);
    CHECK_EQ(mlvm_vm_consumed(v2) + mlvm_shape_bytes(2), c.live_bytes);
    mlvm_vm_free(v2);
    CHECK_EQ(c.live_bytes, 0);
    CHECK_EQ(c.bad_frees, 0);
}

/* A VM-owned shape used by another VM survives the first VM. */
void test_shape_outlives_vm(void)
{
    static const int64_t d[] = {6};
    counting_t c;
    mlvm_vm_t *v1, *v2;
    mlvm_shape_t *s;
    mlvm_handle_t t;
    counting_init(&c);
    v1 = mlvm_vm_new(&c.a);
    v2 = mlvm_vm_new(&c.a);
    REQUIRE(v1 != NULL && v2 != NULL);
    s = mlvm_vm_shape_new(v1, 1, d);
    REQUIRE(s != NULL);
    t = mlvm_tensor_new(v2, MLVM_F32, s);
    CHECK(t >= 0);
    mlvm_vm_free(v1);
    CHECK_EQ(s->refs, 1);
    CHECK_EQ(s->size, 6);
    CHECK_EQ(mlvm_vm_consumed(v2) + mlvm_shape_bytes(1), c.live_bytes);
    CHECK_EQ(mlvm_tensor_free(v2, t), MLVM_OK);
    CHECK_EQ(mlvm_vm_consumed(v2), c.live_bytes);
    mlvm_vm_free(v2);
    CHECK_EQ(c.live_bytes, 0);
}
