/* Scratch pads: one block each, tensors cut from them without allocation. */
#include "vm_impl.h"

mlvm_pad_t *mlvm_pad_new(mlvm_vm_t *vm, size_t nbytes)
{
    const size_t head = sizeof(mlvm_pad_t), slack = MLVM_ARENA_ALIGN - 1;
    size_t block;
    mlvm_pad_t *p;
    if (nbytes > SIZE_MAX - head - slack)
        return NULL;
    block = head + nbytes + slack;
    p = (mlvm_pad_t *)mlvm_vm_alloc_(vm, block);
    if (p == NULL)
        return NULL;
    p->data = (unsigned char *)p +
              (mlvm_align_up_((size_t)((uintptr_t)p + head), MLVM_ARENA_ALIGN) -
               (size_t)(uintptr_t)p);
    p->size = nbytes;
    p->block_bytes = block;
    p->cuts = 0;
    p->prev = NULL;
    p->next = vm->pads;
    if (vm->pads != NULL)
        vm->pads->prev = p;
    vm->pads = p;
    return p;
}

void *mlvm_pad_data(const mlvm_pad_t *pad)
{
    return pad->data;
}

size_t mlvm_pad_size(const mlvm_pad_t *pad)
{
    return pad->size;
}

#ifdef MLVM_CHECKS
static int pad_owned(const mlvm_vm_t *vm, const mlvm_pad_t *pad)
{
    const mlvm_pad_t *p;
    for (p = vm->pads; p != NULL; p = p->next)
        if (p == pad)
            return 1;
    return 0;
}
#endif

mlvm_handle_t mlvm_pad_cut(mlvm_vm_t *vm, mlvm_pad_t *pad, size_t offset,
                           mlvm_dtype_t dtype, mlvm_shape_t *shape)
{
    mlvm_slot_t *s;
    size_t nbytes;
    int32_t t;
    MLVM_REQUIRE(pad != NULL && pad_owned(vm, pad), MLVM_ERR_INVALID);
    MLVM_REQUIRE(shape != NULL && mlvm_dtype_ok_((int32_t)dtype),
                 MLVM_ERR_INVALID);
    MLVM_REQUIRE(offset % MLVM_DTYPE_SIZE(dtype) == 0, MLVM_ERR_INVALID);
    nbytes = shape->size * MLVM_DTYPE_SIZE(dtype);
    MLVM_REQUIRE(offset <= pad->size && nbytes <= pad->size - offset,
                 MLVM_ERR_BOUNDS);
    t = mlvm_vm_slot_take_(vm);
    if (t < 0)
        return MLVM_ERR_NOMEM;
    s = &vm->slots[t];
    s->data = nbytes > 0 ? pad->data + offset : NULL;
    s->shape = mlvm_shape_incref(shape);
    s->nbytes = nbytes;
    s->pad = pad;
    s->dtype = (int32_t)dtype;
    s->next_free = -1;
    ++pad->cuts;
    return t;
}

mlvm_status_t mlvm_pad_free(mlvm_vm_t *vm, mlvm_pad_t *pad)
{
    MLVM_REQUIRE(pad != NULL && pad_owned(vm, pad), MLVM_ERR_INVALID);
    MLVM_REQUIRE(pad->cuts == 0, MLVM_ERR_INVALID);
    if (pad->prev != NULL)
        pad->prev->next = pad->next;
    else
        vm->pads = pad->next;
    if (pad->next != NULL)
        pad->next->prev = pad->prev;
    mlvm_vm_release_(vm, pad, pad->block_bytes);
    return MLVM_OK;
}
