/* Arenas: bump allocation over caller memory and VM-owned blocks. */
#include <stdint.h>
#include <string.h>

#include "check.h"

void test_arena_standalone(void)
{
    static unsigned char mem[256];
    mlvm_arena_t a;
    unsigned char *p, *q;
    size_t mark;
    mlvm_arena_init(&a, mem, sizeof mem);
    p = (unsigned char *)mlvm_arena_alloc(&a, 10, 1);
    CHECK(p == mem);
    q = (unsigned char *)mlvm_arena_alloc(&a, 8, 8);
    CHECK_EQ((uintptr_t)q % 8, 0);
    CHECK(q >= p + 10);
    mark = mlvm_arena_mark(&a);
    CHECK(mlvm_arena_alloc(&a, 100, 0) != NULL);
    CHECK(mlvm_arena_alloc(&a, 1000, 4) == NULL); /* no room: NULL */
    mlvm_arena_release(&a, mark);
    CHECK_EQ(a.used, mark);
    CHECK(a.peak >= mark + 100);
    mlvm_arena_reset(&a);
    CHECK_EQ(a.used, 0);
    CHECK(mlvm_arena_alloc(&a, 256, 1) == mem);
    CHECK(mlvm_arena_alloc(&a, 1, 1) == NULL);
    CHECK(mlvm_arena_alloc(&a, 0, 1) != NULL);
    CHECK_EQ(a.peak, 256);
}

void test_arena_vm_owned(void)
{
    counting_t c;
    mlvm_vm_t *vm;
    mlvm_arena_t *a, *b;
    counting_init(&c);
    vm = mlvm_vm_new(&c.a);
    REQUIRE(vm != NULL);
    a = mlvm_vm_arena_new(vm, 1280);
    b = mlvm_vm_arena_new(vm, 64);
    REQUIRE(a != NULL && b != NULL);
    CHECK_EQ((uintptr_t)a->base % MLVM_ARENA_ALIGN, 0);
    /* An arena of exactly a module's size holds its aligned arena. */
    CHECK(mlvm_arena_alloc(a, 1280, MLVM_ARENA_ALIGN) == a->base);
    memset(a->base, 0xab, 1280);
    CHECK_EQ(mlvm_vm_consumed(vm), c.live_bytes);
    CHECK_EQ(mlvm_vm_arena_free(vm, a), MLVM_OK);
    CHECK_EQ(mlvm_vm_consumed(vm), c.live_bytes);
    mlvm_vm_free(vm); /* releases b */
    CHECK_EQ(c.live_bytes, 0);
}

/* Temporaries planned at offsets in one arena, as generated code does:
 * tensors cut from a pad at those offsets, computed eagerly. */
void test_arena_runs_module_layout(void)
{
    static const int64_t d[] = {16};
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_pad_t *pad;
    mlvm_shape_t *s;
    mlvm_handle_t x, t0, t1;
    float in[16];
    mlvm_opts_t two = {2.0f, 0, 0u, 0u, MLVM_NONE, {0}};
    int i;
    REQUIRE(vm != NULL);
    for (i = 0; i < 16; ++i)
        in[i] = (float)(i - 8);
    pad = mlvm_pad_new(vm, 128);
    s = mlvm_vm_shape_new(vm, 1, d);
    REQUIRE(pad != NULL && s != NULL);
    x = new_f32(vm, 1, d, in);
    t0 = mlvm_pad_cut(vm, pad, 0, MLVM_F32, s);  /* offset 0 */
    t1 = mlvm_pad_cut(vm, pad, 64, MLVM_F32, s); /* offset 64 */
    REQUIRE(x >= 0 && t0 >= 0 && t1 >= 0);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_RELU, NULL, t0, x, MLVM_NONE), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_FILL, &two, t1, MLVM_NONE, MLVM_NONE), MLVM_OK);
    CHECK_EQ(mlvm_exec(vm, MLVM_OP_MUL, NULL, t0, t0, t1), MLVM_OK);
    CHECK_EQ(f32_of(vm, t0)[15], 14);
    CHECK_EQ(f32_of(vm, t0)[3], 0);
    mlvm_vm_free(vm);
}
