#include <string.h>

#include "mlvm/launch.h"
#include "vm_impl.h"

#if defined(__GNUC__) || defined(__clang__)
#define TRY_ACQUIRE(p) __atomic_exchange_n((p), 1, __ATOMIC_ACQUIRE) == 0
#define RELEASE(p) __atomic_store_n((p), 0, __ATOMIC_RELEASE)
#else /* one core: a launch is never preempted by another launch */
#define TRY_ACQUIRE(p) (*(p) == 0 ? (*(p) = 1, 1) : 0)
#define RELEASE(p) (*(p) = 0)
#endif

/* The state the VM keeps for an instance launched without its own (a list,
 * freed with the VM). It is bound to the instance only while a launch of
 * it runs, so the instance never points at the VM's memory otherwise. */
typedef struct mlvm_state_block {
    struct mlvm_state_block *next;
    const mlvm_instance_t *owner;
    unsigned char *state;
    size_t block_bytes;
} state_block_t;

void mlvm_vm_launch_free_(mlvm_vm_t *vm)
{
    while (vm->states != NULL) {
        state_block_t *b = vm->states;
        vm->states = b->next;
        mlvm_vm_release_(vm, b, b->block_bytes);
    }
    mlvm_vm_release_(vm, vm->launch_block, vm->launch_bytes);
    vm->launch_block = NULL;
    vm->launch_bytes = 0;
}

/* The first MLVM_ARENA_ALIGN-aligned address at or after p. */
static unsigned char *aligned(unsigned char *p)
{
    return p + ((MLVM_ARENA_ALIGN - (uintptr_t)p % MLVM_ARENA_ALIGN) % MLVM_ARENA_ALIGN);
}

/* Scratch of at least n aligned bytes, kept for the next launches. */
static unsigned char *scratch(mlvm_vm_t *vm, size_t n)
{
    const size_t want = n + MLVM_ARENA_ALIGN;
    if (vm->launch_bytes < want) {
        unsigned char *b = (unsigned char *)mlvm_vm_alloc_(vm, want);
        if (b == NULL)
            return NULL;
        mlvm_vm_release_(vm, vm->launch_block, vm->launch_bytes);
        vm->launch_block = b;
        vm->launch_bytes = want;
    }
    return aligned(vm->launch_block);
}

/* Binds the VM's state for an instance that has none (made and set to the
 * initial values on its first launch); *lent says whether to unbind it. */
static mlvm_status_t lend_state(mlvm_vm_t *vm, mlvm_instance_t *inst, int *lent)
{
    const size_t n = inst->module->state_bytes;
    const size_t block = sizeof(state_block_t) + MLVM_ARENA_ALIGN + n;
    state_block_t *b;
    mlvm_status_t st;
    *lent = 0;
    if (n == 0 || inst->state != NULL)
        return MLVM_OK; /* none needed, or the caller's own */
    for (b = vm->states; b != NULL; b = b->next) {
        if (b->owner == inst) {
            inst->state = b->state;
            *lent = 1;
            return MLVM_OK;
        }
    }
    b = (state_block_t *)mlvm_vm_alloc_(vm, block);
    if (b == NULL)
        return MLVM_ERR_NOMEM;
    b->block_bytes = block;
    b->owner = inst;
    b->state = aligned((unsigned char *)(b + 1));
    b->next = vm->states;
    vm->states = b;
    st = mlvm_instance_bind_state(inst, b->state, n);
    *lent = st == MLVM_OK;
    return st;
}

/* Whether handle t is a live tensor of the described dtype and shape. */
static mlvm_status_t check_tensor(const mlvm_vm_t *vm, mlvm_handle_t t,
                                  const mlvm_tensor_desc_t *d)
{
    const mlvm_slot_t *s;
    int32_t k;
    if (!mlvm_handle_ok_(vm, t))
        return MLVM_ERR_INVALID;
    s = &vm->slots[t];
    if (s->dtype != d->dtype || s->shape->rank != d->rank)
        return MLVM_ERR_SHAPE;
    for (k = 0; k < d->rank; ++k)
        if (s->shape->dims[k] != d->dims[k])
            return MLVM_ERR_SHAPE;
    return MLVM_OK;
}

static const mlvm_export_t *find_export(const mlvm_module_t *m, const char *fn)
{
    int32_t k;
    for (k = 0; k < m->num_exports; ++k)
        if (strcmp(m->exports[k].name, fn) == 0)
            return &m->exports[k];
    return NULL;
}

static mlvm_status_t check_args(const mlvm_vm_t *vm, const mlvm_export_t *e,
                                const mlvm_handle_t *in, const mlvm_handle_t *out)
{
    int32_t i, j;
    mlvm_status_t st;
    if ((e->num_inputs > 0 && in == NULL) || (e->num_outputs > 0 && out == NULL))
        return MLVM_ERR_INVALID;
    for (i = 0; i < e->num_inputs; ++i)
        if ((st = check_tensor(vm, in[i], &e->inputs[i])) != MLVM_OK)
            return st;
    for (j = 0; j < e->num_outputs; ++j) {
        if (out[j] == MLVM_NONE)
            continue;
        if ((st = check_tensor(vm, out[j], &e->outputs[j])) != MLVM_OK)
            return st;
        for (i = 0; i < e->num_inputs; ++i)
            if (in[i] == out[j])
                return MLVM_ERR_INVALID;
        for (i = 0; i < j; ++i)
            if (out[i] == out[j])
                return MLVM_ERR_INVALID;
    }
    return MLVM_OK;
}

/* New tensors for the outputs given as MLVM_NONE (all or none are made). */
static mlvm_status_t make_outputs(mlvm_vm_t *vm, const mlvm_export_t *e, mlvm_handle_t *out,
                                  mlvm_handle_t *made)
{
    int32_t j, k;
    for (j = 0; j < e->num_outputs; ++j) {
        const mlvm_tensor_desc_t *d = &e->outputs[j];
        mlvm_shape_t *shape;
        made[j] = MLVM_NONE;
        if (out[j] != MLVM_NONE)
            continue;
        shape = mlvm_vm_shape_new(vm, d->rank, d->dims);
        made[j] = shape != NULL ? mlvm_tensor_new(vm, (mlvm_dtype_t)d->dtype, shape) : MLVM_ERR_NOMEM;
        if (made[j] < 0) {
            for (k = 0; k < j; ++k)
                if (made[k] >= 0)
                    mlvm_tensor_free(vm, made[k]);
            return MLVM_ERR_NOMEM;
        }
    }
    for (j = 0; j < e->num_outputs; ++j)
        if (made[j] >= 0)
            out[j] = made[j];
    return MLVM_OK;
}

static mlvm_status_t launch_locked(mlvm_vm_t *vm, mlvm_instance_t *inst, const mlvm_export_t *e,
                                   const mlvm_handle_t *in, mlvm_handle_t *out)
{
    const size_t nptr = (size_t)(e->num_inputs + 2 * e->num_outputs) + 1;
    const size_t arena_end = mlvm_align_up_(e->arena_bytes, MLVM_ARENA_ALIGN);
    const size_t call_end = arena_end + mlvm_align_up_(e->call_bytes, MLVM_ARENA_ALIGN);
    unsigned char *s;
    void **ptrs;
    mlvm_handle_t *made;
    mlvm_status_t st;
    int32_t k;
    int lent = 0;
    if ((st = check_args(vm, e, in, out)) != MLVM_OK)
        return st;
    s = scratch(vm, call_end + nptr * sizeof(void *));
    if (s == NULL)
        return MLVM_ERR_NOMEM;
    ptrs = (void **)(void *)(s + call_end);
    made = (mlvm_handle_t *)(void *)(ptrs + e->num_inputs + e->num_outputs);
    if ((st = make_outputs(vm, e, out, made)) != MLVM_OK)
        return st;
    if ((st = lend_state(vm, inst, &lent)) != MLVM_OK)
        return st;
    for (k = 0; k < e->num_inputs; ++k)
        ptrs[k] = vm->slots[in[k]].data;
    for (k = 0; k < e->num_outputs; ++k)
        ptrs[e->num_inputs + k] = vm->slots[out[k]].data;
    st = e->begin(s + arena_end, inst, s, ptrs, ptrs + e->num_inputs);
    while (st == MLVM_SUSPENDED)
        st = e->resume(s + arena_end);
    if (lent)
        inst->state = NULL;
    return st;
}

mlvm_status_t mlvm_vm_try_launch(mlvm_vm_t *vm, mlvm_instance_t *inst, const char *fn,
                                 const mlvm_handle_t *in, mlvm_handle_t *out)
{
    const mlvm_export_t *e;
    mlvm_status_t st;
    if (vm == NULL || inst == NULL || inst->module == NULL || fn == NULL)
        return MLVM_ERR_INVALID;
    e = find_export(inst->module, fn);
    if (e == NULL)
        return MLVM_ERR_INVALID;
    if (!(TRY_ACQUIRE(&vm->launching)))
        return MLVM_ERR_BUSY;
    st = launch_locked(vm, inst, e, in, out);
    RELEASE(&vm->launching);
    return st;
}

mlvm_status_t mlvm_vm_launch(mlvm_vm_t *vm, mlvm_instance_t *inst, const char *fn,
                             const mlvm_handle_t *in, mlvm_handle_t *out)
{
    mlvm_status_t st;
    while ((st = mlvm_vm_try_launch(vm, inst, fn, in, out)) == MLVM_ERR_BUSY)
        ;
    return st;
}
