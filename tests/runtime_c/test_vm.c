/* The VM: lifetime, exact memory accounting, handles, out of memory. */
#include "check.h"

void test_vm_new_free(void)
{
    counting_t c;
    mlvm_vm_t *vm;
    counting_init(&c);
    vm = mlvm_vm_new(&c.a);
    REQUIRE(vm != NULL);
    CHECK(mlvm_vm_allocator(vm) == &c.a);
    CHECK_EQ(mlvm_vm_tensor_count(vm), 0);
    CHECK_EQ(mlvm_vm_consumed(vm), c.live_bytes);
    mlvm_vm_free(vm);
    mlvm_vm_free(NULL);
    CHECK_EQ(c.live_bytes, 0);
    CHECK_EQ(c.live_blocks, 0);
    CHECK_EQ(c.bad_frees, 0);
    CHECK(mlvm_vm_new(NULL) == NULL);
}

/* After every kind of allocation and release, consumed == live bytes. */
void test_vm_consumed_is_live_bytes(void)
{
    static const int64_t d23[] = {2, 3}, d7[] = {7}, d100[] = {10, 10};
    counting_t c;
    mlvm_vm_t *vm;
    mlvm_shape_t *own;
    mlvm_pad_t *pad;
    mlvm_arena_t *arena;
    mlvm_handle_t a, b, cut;
    counting_init(&c);
    vm = mlvm_vm_new(&c.a);
    REQUIRE(vm != NULL);
#define BALANCED() CHECK_EQ(mlvm_vm_consumed(vm), c.live_bytes)
    a = new_f32(vm, 2, d23, NULL);
    BALANCED();
    b = new_i32(vm, 1, d7, NULL);
    BALANCED();
    pad = mlvm_pad_new(vm, 1000);
    REQUIRE(pad != NULL);
    BALANCED();
    cut = mlvm_pad_cut(vm, pad, 64, MLVM_F32, mlvm_vm_shape_new(vm, 2, d100));
    CHECK(cut >= 0);
    BALANCED();
    arena = mlvm_vm_arena_new(vm, 4096);
    REQUIRE(arena != NULL);
    BALANCED();
    CHECK(mlvm_arena_alloc(arena, 100, 64) != NULL);
    BALANCED();
    /* A caller-owned shape is the caller's bytes, not the VM's. */
    own = mlvm_shape_new(&c.a, 1, d7);
    REQUIRE(own != NULL);
    CHECK_EQ(mlvm_vm_consumed(vm) + mlvm_shape_bytes(1), c.live_bytes);
    CHECK(mlvm_tensor_new(vm, MLVM_F32, own) >= 0);
    mlvm_shape_decref(own); /* the tensor holds the last reference */
    CHECK_EQ(mlvm_vm_consumed(vm) + mlvm_shape_bytes(1), c.live_bytes);
    CHECK_EQ(mlvm_tensor_free(vm, a), MLVM_OK);
    CHECK_EQ(mlvm_tensor_free(vm, cut), MLVM_OK);
    CHECK_EQ(mlvm_vm_consumed(vm) + mlvm_shape_bytes(1), c.live_bytes);
    CHECK_EQ(mlvm_vm_arena_free(vm, arena), MLVM_OK);
    CHECK_EQ(mlvm_pad_free(vm, pad), MLVM_OK);
    CHECK_EQ(mlvm_tensor_free(vm, b), MLVM_OK);
    CHECK_EQ(mlvm_vm_consumed(vm) + mlvm_shape_bytes(1), c.live_bytes);
    CHECK_EQ(mlvm_vm_tensor_count(vm), 1);
#undef BALANCED
    mlvm_vm_free(vm);
    CHECK_EQ(c.live_bytes, 0);
    CHECK_EQ(c.live_blocks, 0);
    CHECK_EQ(c.bad_frees, 0);
}

/* 10,000 tensors over 10,000 distinct VM-owned shapes and 10,000 caller
 * shapes; vm_free releases all of it. */
void test_vm_10000_tensors_and_shapes(void)
{
    counting_t c;
    mlvm_vm_t *vm;
    int i;
    size_t data_bytes = 0;
    counting_init(&c);
    vm = mlvm_vm_new(&c.a);
    REQUIRE(vm != NULL);
    for (i = 0; i < 10000; ++i) {
        const int64_t dims[2] = {1 + i % 100, 1 + i / 100};
        mlvm_shape_t *vs = mlvm_vm_shape_new(vm, 2, dims);
        mlvm_shape_t *own = mlvm_shape_new(&c.a, 2, dims);
        REQUIRE(vs != NULL && own != NULL);
        CHECK(mlvm_tensor_new(vm, (i & 1) ? MLVM_I32 : MLVM_F32, vs) >= 0);
        CHECK(mlvm_tensor_new(vm, MLVM_F32, own) >= 0);
        data_bytes += 2 * vs->size * 4;
        mlvm_shape_decref(own);
    }
    CHECK_EQ(mlvm_vm_tensor_count(vm), 20000);
    CHECK(mlvm_vm_consumed(vm) > data_bytes + 10000 * mlvm_shape_bytes(2));
    CHECK_EQ(mlvm_vm_consumed(vm) + 10000 * mlvm_shape_bytes(2), c.live_bytes);
    /* Identical dims give back the same instance. */
    {
        const int64_t dims[2] = {5, 7};
        CHECK(mlvm_vm_shape_new(vm, 2, dims) == mlvm_vm_shape_new(vm, 2, dims));
    }
    mlvm_vm_free(vm);
    CHECK_EQ(c.live_bytes, 0);
    CHECK_EQ(c.live_blocks, 0);
    CHECK_EQ(c.bad_frees, 0);
}

/* The same with malloc itself, for valgrind and ASan to watch. */
void test_vm_std_allocator_10000(void)
{
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_pad_t *pad;
    int i;
    REQUIRE(vm != NULL);
    pad = mlvm_pad_new(vm, 4096);
    REQUIRE(pad != NULL);
    for (i = 0; i < 10000; ++i) {
        const int64_t dims[3] = {1 + i % 10, 1 + (i / 10) % 10, 1 + i / 100};
        mlvm_shape_t *s = mlvm_vm_shape_new(vm, 3, dims);
        mlvm_handle_t t;
        REQUIRE(s != NULL);
        t = mlvm_tensor_new(vm, MLVM_F32, s);
        CHECK(t >= 0);
        if (i % 3 == 0)
            CHECK_EQ(mlvm_tensor_free(vm, t), MLVM_OK);
    }
    {
        const int64_t dims[1] = {16};
        mlvm_shape_t *own = mlvm_shape_new(mlvm_allocator_std(), 1, dims);
        REQUIRE(own != NULL);
        CHECK(mlvm_pad_cut(vm, pad, 0, MLVM_F32, own) >= 0);
        CHECK(mlvm_pad_cut(vm, pad, 64, MLVM_I32, own) >= 0);
        mlvm_shape_decref(own);
    }
    CHECK(mlvm_vm_arena_new(vm, 1 << 16) != NULL);
    mlvm_vm_free(vm);
}

void test_vm_handles_reused(void)
{
    static const int64_t d[] = {4};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_handle_t a, b, c2;
    REQUIRE(vm != NULL);
    a = new_f32(vm, 1, d, NULL);
    b = new_f32(vm, 1, d, NULL);
    CHECK_EQ(a, 0);
    CHECK_EQ(b, 1);
    CHECK_EQ(mlvm_tensor_free(vm, a), MLVM_OK);
    c2 = new_f32(vm, 1, d, NULL);
    CHECK_EQ(c2, a);
    CHECK_EQ(mlvm_vm_tensor_count(vm), 2);
    mlvm_vm_free(vm);
}

void test_vm_reserve(void)
{
    static const int64_t d[] = {3};
    counting_t c;
    mlvm_vm_t *vm;
    long allocs;
    int i;
    counting_init(&c);
    vm = mlvm_vm_new(&c.a);
    REQUIRE(vm != NULL);
    REQUIRE(mlvm_vm_shape_new(vm, 1, d) != NULL);
    CHECK_EQ(mlvm_vm_reserve(vm, 1000), MLVM_OK);
    allocs = c.allocs;
    for (i = 0; i < 1000; ++i)
        CHECK(new_f32(vm, 1, d, NULL) >= 0);
    /* Only the data: the table did not grow. */
    CHECK_EQ(c.allocs - allocs, 1000);
    CHECK_EQ(mlvm_vm_consumed(vm), c.live_bytes);
    mlvm_vm_free(vm);
    CHECK_EQ(c.live_bytes, 0);
}

/* Every allocation failing in turn: a status, never a leak or a crash. */
void test_vm_nomem(void)
{
    static const int64_t d[] = {8, 8};
    long n;
    for (n = 0; n < 12; ++n) {
        counting_t c;
        mlvm_vm_t *vm;
        mlvm_shape_t *s;
        counting_init(&c);
        c.fail_after = n;
        vm = mlvm_vm_new(&c.a);
        if (vm == NULL) {
            CHECK_EQ(n, 0);
            continue;
        }
        s = mlvm_vm_shape_new(vm, 2, d);
        if (s != NULL) {
            const mlvm_handle_t t = mlvm_tensor_new(vm, MLVM_F32, s);
            CHECK(t >= 0 || t == MLVM_ERR_NOMEM);
            if (mlvm_pad_new(vm, 256) == NULL)
                CHECK(c.allocs >= n);
            if (mlvm_vm_arena_new(vm, 256) == NULL)
                CHECK(c.allocs >= n);
        }
        CHECK_EQ(mlvm_vm_consumed(vm), c.live_bytes);
        mlvm_vm_free(vm);
        CHECK_EQ(c.live_bytes, 0);
        CHECK_EQ(c.live_blocks, 0);
    }
}
