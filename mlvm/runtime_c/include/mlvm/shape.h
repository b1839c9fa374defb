/* Shapes: immutable, reference-counted, sharable across tensors and VMs.
 *
 * A shape made with mlvm_shape_new belongs to the caller (one reference);
 * every tensor made with it takes another, so the caller may drop its own
 * reference right after mlvm_tensor_new. A shape made with
 * mlvm_vm_shape_new belongs to the VM: the VM keeps one reference until
 * mlvm_vm_free, and returns the same instance for identical dims.
 *
 * Reference counts are plain integers: a shape shared between VMs on
 * different threads needs the caller's own synchronisation. */
#ifndef MLVM_SHAPE_H_
#define MLVM_SHAPE_H_

#include <stddef.h>
#include <stdint.h>

#include "mlvm/alloc.h"
#include "mlvm/kernels.h" /* MLVM_MAX_RANK */

struct mlvm_vm;

typedef struct mlvm_shape {
    int32_t refs;                  /* references held; freed at 0 */
    int32_t rank;                  /* 0 .. MLVM_MAX_RANK */
    size_t size;                   /* number of elements */
    const mlvm_allocator_t *alloc; /* releases the shape */
    int64_t dims[];                /* rank entries, row-major */
} mlvm_shape_t;

/* Bytes of one shape of `rank` (what its allocation costs). */
size_t mlvm_shape_bytes(int32_t rank);

/* A new shape with one reference, owned by the caller; NULL when out of
 * memory (or, with MLVM_CHECKS, for a rank outside 0..MLVM_MAX_RANK, a
 * negative dim or an element count that overflows). */
mlvm_shape_t *mlvm_shape_new(const mlvm_allocator_t *alloc, int32_t rank,
                             const int64_t *dims);

/* Takes a reference; returns s. */
mlvm_shape_t *mlvm_shape_incref(mlvm_shape_t *s);

/* Drops a reference; the last one releases the shape. NULL is ignored. */
void mlvm_shape_decref(mlvm_shape_t *s);

/* 1 when both have the same rank and dims. */
int mlvm_shape_equal(const mlvm_shape_t *a, const mlvm_shape_t *b);

/* A VM-owned shape: borrowed by the caller, released at mlvm_vm_free.
 * Identical dims give the same instance. NULL when out of memory (or, with
 * MLVM_CHECKS, for the invalid arguments mlvm_shape_new rejects). */
mlvm_shape_t *mlvm_vm_shape_new(struct mlvm_vm *vm, int32_t rank,
                                const int64_t *dims);

#endif /* MLVM_SHAPE_H_ */
