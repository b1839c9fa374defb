/* Scratch pads: one VM-owned block from which tensors are cut at offsets.
 *
 * A cut allocates no data: the tensor views bytes [offset, offset + size) of
 * the pad, and cuts may overlap (the caller plans the layout, as the
 * compiler's memory planner does for an arena). Freeing a cut tensor leaves
 * the pad alone; a pad must outlive its cuts (MLVM_ERR_INVALID with
 * MLVM_CHECKS otherwise). Pads still alive are released by mlvm_vm_free. */
#ifndef MLVM_SCRATCH_H_
#define MLVM_SCRATCH_H_

#include <stddef.h>

#include "mlvm/module.h"
#include "mlvm/shape.h"
#include "mlvm/vm.h"

typedef struct mlvm_pad mlvm_pad_t;

/* A pad of nbytes whose start is aligned to MLVM_ARENA_ALIGN (so it can also
 * serve as a generated module's arena); NULL when out of memory. */
mlvm_pad_t *mlvm_pad_new(mlvm_vm_t *vm, size_t nbytes);

/* The pad's bytes and their number. */
void *mlvm_pad_data(const mlvm_pad_t *pad);
size_t mlvm_pad_size(const mlvm_pad_t *pad);

/* A tensor over the pad's bytes from `offset`; `shape` gains a reference.
 * Returns its handle, or MLVM_ERR_NOMEM when the tensor table must grow and
 * cannot (mlvm_vm_reserve avoids that). With MLVM_CHECKS: MLVM_ERR_BOUNDS
 * when the tensor would pass the pad's end, MLVM_ERR_INVALID for an unknown
 * pad, a NULL shape, a bad dtype or an offset not a multiple of 4. */
mlvm_handle_t mlvm_pad_cut(mlvm_vm_t *vm, mlvm_pad_t *pad, size_t offset,
                           mlvm_dtype_t dtype, mlvm_shape_t *shape);

/* Releases the pad. With MLVM_CHECKS, MLVM_ERR_INVALID while tensors cut from
 * it are alive. */
mlvm_status_t mlvm_pad_free(mlvm_vm_t *vm, mlvm_pad_t *pad);

#endif /* MLVM_SCRATCH_H_ */
