/* VM-owned arenas: one block each, released at mlvm_vm_free. */
#include <stddef.h>

#include "vm_impl.h"

mlvm_arena_t *mlvm_vm_arena_new(mlvm_vm_t *vm, size_t size)
{
    const size_t head = sizeof(mlvm_arena_node_t), slack = MLVM_ARENA_ALIGN - 1;
    mlvm_arena_node_t *n;
    unsigned char *base;
    size_t block;
    if (size > SIZE_MAX - head - slack)
        return NULL;
    block = head + size + slack;
    n = (mlvm_arena_node_t *)mlvm_vm_alloc_(vm, block);
    if (n == NULL)
        return NULL;
    base = (unsigned char *)n +
           (mlvm_align_up_((size_t)((uintptr_t)n + head), MLVM_ARENA_ALIGN) -
            (size_t)(uintptr_t)n);
    mlvm_arena_init(&n->arena, base, size);
    n->block_bytes = block;
    n->prev = NULL;
    n->next = vm->arenas;
    if (vm->arenas != NULL)
        vm->arenas->prev = n;
    vm->arenas = n;
    return &n->arena;
}

static mlvm_arena_node_t *node_of(mlvm_arena_t *a)
{
    return (mlvm_arena_node_t *)(void *)((unsigned char *)a -
                                         offsetof(mlvm_arena_node_t, arena));
}

#ifdef MLVM_CHECKS
static int arena_owned(const mlvm_vm_t *vm, const mlvm_arena_t *a)
{
    const mlvm_arena_node_t *n;
    for (n = vm->arenas; n != NULL; n = n->next)
        if (&n->arena == a)
            return 1;
    return 0;
}
#endif

mlvm_status_t mlvm_vm_arena_free(mlvm_vm_t *vm, mlvm_arena_t *a)
{
    mlvm_arena_node_t *n;
    MLVM_REQUIRE(a != NULL && arena_owned(vm, a), MLVM_ERR_INVALID);
    n = node_of(a);
    if (n->prev != NULL)
        n->prev->next = n->next;
    else
        vm->arenas = n->next;
    if (n->next != NULL)
        n->next->prev = n->prev;
    mlvm_vm_release_(vm, n, n->block_bytes);
    return MLVM_OK;
}
