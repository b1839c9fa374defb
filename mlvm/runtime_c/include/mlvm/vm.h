/* The VM: an owner of tensors, shapes, scratch pads and arenas.
 *
 * Everything a VM allocates comes from its allocator and is released, all at
 * once, by mlvm_vm_free. Tensors are handed out as integer handles. A VM is
 * single-threaded (one VM per processor); distinct VMs share nothing but the
 * shapes the caller chooses to share. */
#ifndef MLVM_VM_H_
#define MLVM_VM_H_

#include <stddef.h>
#include <stdint.h>

#include "mlvm/alloc.h"
#include "mlvm/status.h"

typedef struct mlvm_vm mlvm_vm_t;

/* A tensor handle: an index into the VM's tensor table (>= 0). Functions that
 * make tensors return a handle, or a negative mlvm_status_t. */
typedef int32_t mlvm_handle_t;

/* "No tensor": the unused operands of mlvm_exec. */
#define MLVM_NONE ((mlvm_handle_t)-1)

/* A new, empty VM whose memory comes from `alloc` (for example
 * mlvm_allocator_std()); NULL when out of memory. */
mlvm_vm_t *mlvm_vm_new(const mlvm_allocator_t *alloc);

/* Releases every tensor, scratch pad, arena and VM-owned shape still alive,
 * then the VM. Shapes that other owners still reference survive. NULL is
 * ignored. */
void mlvm_vm_free(mlvm_vm_t *vm);

/* Bytes the VM holds right now, exactly: the VM itself, its tensor table and
 * shape table, the data of every tensor it allocated, every scratch pad and
 * arena, and every VM-owned shape. Tensors cut from a pad add nothing;
 * shapes made by mlvm_shape_new belong to their caller, not to the VM. */
size_t mlvm_vm_consumed(const mlvm_vm_t *vm);

/* The allocator the VM was made with (to allocate buffers for
 * mlvm_tensor_swap and to release the buffers it hands back). */
const mlvm_allocator_t *mlvm_vm_allocator(const mlvm_vm_t *vm);

/* Grows the tensor table to hold `n` tensors, so that making up to n tensors
 * allocates nothing but their data (and a pad cut allocates nothing). */
mlvm_status_t mlvm_vm_reserve(mlvm_vm_t *vm, int32_t n);

/* Number of live tensors. */
int32_t mlvm_vm_tensor_count(const mlvm_vm_t *vm);

#endif /* MLVM_VM_H_ */
