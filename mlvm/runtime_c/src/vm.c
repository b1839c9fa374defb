/* The VM: its accounting allocator, the tensor table and vm_free. */
#include <string.h>

#include "vm_impl.h"

void *mlvm_vm_alloc_(mlvm_vm_t *vm, size_t nbytes)
{
    void *p;
    if (nbytes == 0)
        return NULL;
    p = vm->alloc->alloc(vm->alloc->ud, nbytes);
    if (p != NULL)
        vm->consumed += nbytes;
    return p;
}

void mlvm_vm_release_(mlvm_vm_t *vm, void *p, size_t nbytes)
{
    if (p == NULL)
        return;
    vm->alloc->free(vm->alloc->ud, p, nbytes);
    vm->consumed -= nbytes;
}

size_t mlvm_dims_size_(int32_t rank, const int64_t *dims)
{
    size_t n = 1;
    int32_t d;
    for (d = 0; d < rank; ++d) {
        if (dims[d] < 0 || (uint64_t)dims[d] > (uint64_t)(SIZE_MAX / 4))
            return SIZE_MAX;
        if (dims[d] != 0 && n > SIZE_MAX / 4 / (size_t)dims[d])
            return SIZE_MAX;
        n *= (size_t)dims[d];
    }
    return n;
}

mlvm_vm_t *mlvm_vm_new(const mlvm_allocator_t *alloc)
{
    mlvm_vm_t *vm;
    if (alloc == NULL)
        return NULL;
    vm = (mlvm_vm_t *)alloc->alloc(alloc->ud, sizeof *vm);
    if (vm == NULL)
        return NULL;
    memset(vm, 0, sizeof *vm);
    vm->alloc = alloc;
    vm->consumed = sizeof *vm;
    vm->free_head = -1;
    return vm;
}

static mlvm_status_t grow_table(mlvm_vm_t *vm, int32_t want)
{
    mlvm_slot_t *slots;
    int32_t cap = vm->cap ? vm->cap : 16;
    while (cap < want) {
        if (cap > INT32_MAX / 2)
            return MLVM_ERR_NOMEM;
        cap *= 2;
    }
    if (cap == vm->cap)
        return MLVM_OK;
    if ((size_t)cap > SIZE_MAX / sizeof *slots)
        return MLVM_ERR_NOMEM;
    slots = (mlvm_slot_t *)mlvm_vm_alloc_(vm, (size_t)cap * sizeof *slots);
    if (slots == NULL)
        return MLVM_ERR_NOMEM;
    if (vm->nslots > 0)
        memcpy(slots, vm->slots, (size_t)vm->nslots * sizeof *slots);
    mlvm_vm_release_(vm, vm->slots, (size_t)vm->cap * sizeof *slots);
    vm->slots = slots;
    vm->cap = cap;
    return MLVM_OK;
}

mlvm_status_t mlvm_vm_reserve(mlvm_vm_t *vm, int32_t n)
{
    int32_t nfree = 0, f;
    if (vm == NULL || n < 0)
        return MLVM_ERR_INVALID;
    for (f = vm->free_head; f >= 0 && nfree < n; f = vm->slots[f].next_free)
        ++nfree;
    if (n - nfree <= vm->cap - vm->nslots)
        return MLVM_OK;
    if (n - nfree > INT32_MAX - vm->nslots)
        return MLVM_ERR_NOMEM;
    return grow_table(vm, vm->nslots + (n - nfree));
}

int32_t mlvm_vm_slot_take_(mlvm_vm_t *vm)
{
    int32_t t = vm->free_head;
    if (t >= 0) {
        vm->free_head = vm->slots[t].next_free;
    } else {
        if (vm->nslots == vm->cap && grow_table(vm, vm->cap + 1) != MLVM_OK)
            return -1;
        t = vm->nslots++;
    }
    ++vm->live;
    return t;
}

void mlvm_vm_free(mlvm_vm_t *vm)
{
    const mlvm_allocator_t *alloc;
    int32_t t;
    size_t i;
    if (vm == NULL)
        return;
    for (t = 0; t < vm->nslots; ++t) {
        mlvm_slot_t *s = &vm->slots[t];
        if (s->shape == NULL)
            continue;
        if (s->pad == NULL)
            mlvm_vm_release_(vm, s->data, s->nbytes);
        mlvm_shape_decref(s->shape);
    }
    mlvm_vm_release_(vm, vm->slots, (size_t)vm->cap * sizeof *vm->slots);
    while (vm->pads != NULL) {
        mlvm_pad_t *p = vm->pads;
        vm->pads = p->next;
        mlvm_vm_release_(vm, p, p->block_bytes);
    }
    mlvm_vm_launch_free_(vm);
    while (vm->arenas != NULL) {
        mlvm_arena_node_t *a = vm->arenas;
        vm->arenas = a->next;
        mlvm_vm_release_(vm, a, a->block_bytes);
    }
    for (i = 0; i < vm->shape_cap; ++i) {
        mlvm_shape_t *s = vm->shapes[i];
        if (s != NULL) {
            vm->consumed -= mlvm_shape_bytes(s->rank);
            mlvm_shape_decref(s);
        }
    }
    mlvm_vm_release_(vm, vm->shapes, vm->shape_cap * sizeof *vm->shapes);
    alloc = vm->alloc;
    alloc->free(alloc->ud, vm, sizeof *vm);
}

size_t mlvm_vm_consumed(const mlvm_vm_t *vm)
{
    return vm->consumed;
}

const mlvm_allocator_t *mlvm_vm_allocator(const mlvm_vm_t *vm)
{
    return vm->alloc;
}

int32_t mlvm_vm_tensor_count(const mlvm_vm_t *vm)
{
    return vm->live;
}
