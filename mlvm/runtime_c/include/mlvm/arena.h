/* Arenas: bump allocation with reset, for temporaries.
 *
 * An arena is a cursor over caller memory: mlvm_arena_init needs no VM and
 * no allocator, so firmware can run a generated module on a static buffer.
 * A VM can also own arenas (mlvm_vm_arena_new), released at mlvm_vm_free.
 * A generated module takes `<MODULE>_ARENA_BYTES` aligned to
 * MLVM_ARENA_ALIGN: mlvm_arena_alloc(a, MODEL_ARENA_BYTES, MLVM_ARENA_ALIGN),
 * or a VM arena of exactly that size, whose base is so aligned. */
#ifndef MLVM_ARENA_H_
#define MLVM_ARENA_H_

#include <stddef.h>

#include "mlvm/status.h"

struct mlvm_vm;

typedef struct mlvm_arena {
    unsigned char *base; /* first byte */
    size_t size;         /* bytes from base */
    size_t used;         /* bytes handed out since the last reset */
    size_t peak;         /* the largest `used` seen */
} mlvm_arena_t;

/* An arena over `size` bytes at `mem` (caller-owned). */
void mlvm_arena_init(mlvm_arena_t *a, void *mem, size_t size);

/* nbytes aligned to `align` (a power of two; 0 means 1); NULL when the arena
 * has no room left. Never allocates. */
void *mlvm_arena_alloc(mlvm_arena_t *a, size_t nbytes, size_t align);

/* Forgets every allocation (the bytes stay; their content is garbage). */
void mlvm_arena_reset(mlvm_arena_t *a);

/* A position to return to: everything allocated after it is released at
 * once by mlvm_arena_release. */
size_t mlvm_arena_mark(const mlvm_arena_t *a);
void mlvm_arena_release(mlvm_arena_t *a, size_t mark);

/* A VM-owned arena of `size` bytes, its base aligned to MLVM_ARENA_ALIGN;
 * NULL when out of memory. */
mlvm_arena_t *mlvm_vm_arena_new(struct mlvm_vm *vm, size_t size);

/* Releases a VM-owned arena before mlvm_vm_free. With MLVM_CHECKS,
 * MLVM_ERR_INVALID for an arena the VM does not own. */
mlvm_status_t mlvm_vm_arena_free(struct mlvm_vm *vm, mlvm_arena_t *a);

#endif /* MLVM_ARENA_H_ */
