/* Tensors: handles into the VM's table, data from the VM's allocator. */
#include <string.h>

#include "vm_impl.h"

mlvm_handle_t mlvm_tensor_new(mlvm_vm_t *vm, mlvm_dtype_t dtype,
                              mlvm_shape_t *shape)
{
    mlvm_slot_t *s;
    size_t nbytes;
    void *data = NULL;
    int32_t t;
    MLVM_REQUIRE(shape != NULL && mlvm_dtype_ok_((int32_t)dtype),
                 MLVM_ERR_INVALID);
    nbytes = shape->size * MLVM_DTYPE_SIZE(dtype);
    if (nbytes > 0) {
        data = mlvm_vm_alloc_(vm, nbytes);
        if (data == NULL)
            return MLVM_ERR_NOMEM;
    }
    t = mlvm_vm_slot_take_(vm);
    if (t < 0) {
        mlvm_vm_release_(vm, data, nbytes);
        return MLVM_ERR_NOMEM;
    }
    s = &vm->slots[t];
    s->data = data;
    s->shape = mlvm_shape_incref(shape);
    s->nbytes = nbytes;
    s->pad = NULL;
    s->dtype = (int32_t)dtype;
    s->next_free = -1;
    return t;
}

mlvm_status_t mlvm_tensor_free(mlvm_vm_t *vm, mlvm_handle_t t)
{
    mlvm_slot_t *s;
    MLVM_REQUIRE(mlvm_handle_ok_(vm, t), MLVM_ERR_INVALID);
    s = &vm->slots[t];
    if (s->pad != NULL)
        --s->pad->cuts;
    else
        mlvm_vm_release_(vm, s->data, s->nbytes);
    mlvm_shape_decref(s->shape);
    s->shape = NULL;
    s->data = NULL;
    s->pad = NULL;
    s->next_free = vm->free_head;
    vm->free_head = t;
    --vm->live;
    return MLVM_OK;
}

mlvm_status_t mlvm_tensor_info(const mlvm_vm_t *vm, mlvm_handle_t t,
                               mlvm_dtype_t *dtype, const mlvm_shape_t **shape)
{
    MLVM_REQUIRE(mlvm_handle_ok_(vm, t), MLVM_ERR_INVALID);
    if (dtype != NULL)
        *dtype = (mlvm_dtype_t)vm->slots[t].dtype;
    if (shape != NULL)
        *shape = vm->slots[t].shape;
    return MLVM_OK;
}

mlvm_status_t mlvm_tensor_data(const mlvm_vm_t *vm, mlvm_handle_t t,
                               void **data)
{
    MLVM_REQUIRE(mlvm_handle_ok_(vm, t) && data != NULL, MLVM_ERR_INVALID);
    *data = vm->slots[t].data;
    return MLVM_OK;
}

mlvm_status_t mlvm_tensor_swap(mlvm_vm_t *vm, mlvm_handle_t t, void **data)
{
    void *old;
    MLVM_REQUIRE(mlvm_handle_ok_(vm, t) && data != NULL, MLVM_ERR_INVALID);
    MLVM_REQUIRE(vm->slots[t].pad == NULL, MLVM_ERR_INVALID);
    MLVM_REQUIRE((*data == NULL) == (vm->slots[t].nbytes == 0),
                 MLVM_ERR_INVALID);
    old = vm->slots[t].data;
    vm->slots[t].data = *data;
    *data = old;
    return MLVM_OK;
}

/* With MLVM_CHECKS: [offset, offset + nbytes) lies within the tensor. */
#define MLVM_REQUIRE_RANGE(vm, t, offset, nbytes)                              \
    do {                                                                       \
        MLVM_REQUIRE(mlvm_handle_ok_(vm, t), MLVM_ERR_INVALID);                \
        MLVM_REQUIRE(offset <= vm->slots[t].nbytes &&                          \
                         nbytes <= vm->slots[t].nbytes - offset,               \
                     MLVM_ERR_BOUNDS);                                         \
    } while (0)

mlvm_status_t mlvm_tensor_read(const mlvm_vm_t *vm, mlvm_handle_t t,
                               size_t offset, void *dst, size_t nbytes)
{
    MLVM_REQUIRE_RANGE(vm, t, offset, nbytes);
    if (nbytes > 0)
        memcpy(dst, (const unsigned char *)vm->slots[t].data + offset, nbytes);
    return MLVM_OK;
}

mlvm_status_t mlvm_tensor_write(mlvm_vm_t *vm, mlvm_handle_t t, size_t offset,
                                const void *src, size_t nbytes)
{
    MLVM_REQUIRE_RANGE(vm, t, offset, nbytes);
    if (nbytes > 0)
        memcpy((unsigned char *)vm->slots[t].data + offset, src, nbytes);
    return MLVM_OK;
}
