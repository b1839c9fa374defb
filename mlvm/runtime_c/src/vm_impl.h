/* Internal: the VM's structures, its accounting allocator and the checks
 * that MLVM_CHECKS turns on. */
#ifndef MLVM_VM_IMPL_H_
#define MLVM_VM_IMPL_H_

#include <stddef.h>
#include <stdint.h>

#include "mlvm/arena.h"
#include "mlvm/scratch.h"
#include "mlvm/shape.h"
#include "mlvm/tensor.h"
#include "mlvm/vm.h"

/* MLVM_REQUIRE(cond, status): with MLVM_CHECKS, return status unless cond.
 * Without, nothing: the machine trusts its caller. */
#ifdef MLVM_CHECKS
#define MLVM_REQUIRE(cond, status)                                             \
    do {                                                                       \
        if (!(cond))                                                           \
            return (status);                                                   \
    } while (0)
#else
#define MLVM_REQUIRE(cond, status) ((void)0)
#endif

/* One entry of the tensor table. A free entry has shape == NULL and links
 * the free list through next_free. */
typedef struct mlvm_slot {
    void *data;
    mlvm_shape_t *shape;
    size_t nbytes;
    mlvm_pad_t *pad; /* the pad it was cut from, or NULL: owns its data */
    int32_t dtype;
    int32_t next_free;
} mlvm_slot_t;

struct mlvm_pad {
    struct mlvm_pad *prev, *next;
    unsigned char *data;
    size_t size;        /* usable bytes from data */
    size_t block_bytes; /* the whole allocation, header included */
    int32_t cuts;       /* live tensors cut from it */
};

typedef struct mlvm_arena_node {
    struct mlvm_arena_node *prev, *next;
    size_t block_bytes;
    mlvm_arena_t arena;
} mlvm_arena_node_t;

struct mlvm_vm {
    const mlvm_allocator_t *alloc;
    size_t consumed;     /* bytes allocated and not yet released */
    mlvm_slot_t *slots;  /* the tensor table */
    int32_t nslots;      /* entries ever used (handles are below this) */
    int32_t cap;         /* entries allocated */
    int32_t free_head;   /* first free entry, or -1 */
    int32_t live;        /* live tensors */
    mlvm_shape_t **shapes; /* VM-owned shapes: open-addressed hash set */
    size_t shape_cap;      /* 0 or a power of two */
    size_t nshapes;
    mlvm_pad_t *pads;
    mlvm_arena_node_t *arenas;
    /* Launches (launch.c): one at a time, their scratch (arena, call state
     * and pointer arrays, grown as needed) and the state blocks the VM gave
     * instances that had none. */
    volatile int32_t launching;
    unsigned char *launch_block;
    size_t launch_bytes;
    struct mlvm_state_block *states;
};

/* Releases what launches allocated (launch.c). */
void mlvm_vm_launch_free_(mlvm_vm_t *vm);

/* Allocation through the VM's allocator, counted in vm->consumed. */
void *mlvm_vm_alloc_(mlvm_vm_t *vm, size_t nbytes);
void mlvm_vm_release_(mlvm_vm_t *vm, void *p, size_t nbytes);

/* A table entry for a new tensor (grows the table); -1 when out of memory. */
int32_t mlvm_vm_slot_take_(mlvm_vm_t *vm);

/* Element count of dims, or SIZE_MAX when a dim is negative or the product
 * overflows. */
size_t mlvm_dims_size_(int32_t rank, const int64_t *dims);

static inline int mlvm_handle_ok_(const mlvm_vm_t *vm, mlvm_handle_t t)
{
    return t >= 0 && t < vm->nslots && vm->slots[t].shape != NULL;
}

static inline int mlvm_dtype_ok_(int32_t dtype)
{
    return mlvm_dtype_size(dtype) != 0;
}

static inline size_t mlvm_align_up_(size_t x, size_t align)
{
    return (x + align - 1) & ~(align - 1);
}

#endif /* MLVM_VM_IMPL_H_ */
