/* Tensors: VM-owned buffers of any mlvm_dtype_t, named by integer handles.
 *
 * A tensor owns its data (allocated from the VM's allocator) unless it was
 * cut from a scratch pad. It holds a reference to its shape. Reads and writes
 * copy, as an RPC would; mlvm_tensor_data is the explicit zero-copy path and
 * mlvm_tensor_swap hands a buffer over without copying. */
#ifndef MLVM_TENSOR_H_
#define MLVM_TENSOR_H_

#include <stddef.h>

#include "mlvm/module.h" /* mlvm_dtype_t */
#include "mlvm/shape.h"
#include "mlvm/vm.h"

/* Bytes of one element. */
#define MLVM_DTYPE_SIZE(dtype) mlvm_dtype_size((int32_t)(dtype))

/* A new tensor of `shape` (which gains a reference) with uninitialised data.
 * Returns its handle, or MLVM_ERR_NOMEM (or, with MLVM_CHECKS,
 * MLVM_ERR_INVALID for a NULL shape or an unknown dtype). */
mlvm_handle_t mlvm_tensor_new(mlvm_vm_t *vm, mlvm_dtype_t dtype,
                              mlvm_shape_t *shape);

/* Releases the tensor's data (unless cut from a pad) and its shape reference.
 * The handle may be reused by the next tensor made. */
mlvm_status_t mlvm_tensor_free(mlvm_vm_t *vm, mlvm_handle_t t);

/* The tensor's dtype and shape (borrowed: valid while the tensor lives).
 * Either output may be NULL. */
mlvm_status_t mlvm_tensor_info(const mlvm_vm_t *vm, mlvm_handle_t t,
                               mlvm_dtype_t *dtype, const mlvm_shape_t **shape);

/* The raw data pointer, contiguous, row-major (NULL for 0 elements). Valid
 * until the tensor is freed or swapped. No copy: the zero-copy path. */
mlvm_status_t mlvm_tensor_data(const mlvm_vm_t *vm, mlvm_handle_t t,
                               void **data);

/* Pointer swap: the tensor takes *data and *data receives the tensor's old
 * buffer; nothing is copied. Ownership changes hands: *data must have been
 * allocated with mlvm_vm_allocator(vm) with the tensor's size in bytes, and
 * the caller must release the buffer it gets back the same way. Not for
 * tensors cut from a pad (MLVM_ERR_INVALID with MLVM_CHECKS). */
mlvm_status_t mlvm_tensor_swap(mlvm_vm_t *vm, mlvm_handle_t t, void **data);

/* Copies nbytes of the tensor, from byte `offset`, into dst. With
 * MLVM_CHECKS, MLVM_ERR_BOUNDS when the range passes the tensor's end. */
mlvm_status_t mlvm_tensor_read(const mlvm_vm_t *vm, mlvm_handle_t t,
                               size_t offset, void *dst, size_t nbytes);

/* Copies nbytes from src into the tensor at byte `offset`. With
 * MLVM_CHECKS, MLVM_ERR_BOUNDS when the range passes the tensor's end. */
mlvm_status_t mlvm_tensor_write(mlvm_vm_t *vm, mlvm_handle_t t, size_t offset,
                                const void *src, size_t nbytes);

#endif /* MLVM_TENSOR_H_ */
