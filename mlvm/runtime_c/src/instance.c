#include <stdint.h>
#include <string.h>

#include "mlvm/instance.h"
#include "mlvm/kernels.h" /* MLVM_MAX_RANK */

/* Bytes of a described tensor; SIZE_MAX for a descriptor that is not sane. */
static size_t tensor_bytes(const mlvm_tensor_desc_t *t)
{
    size_t n = 4;
    int32_t d;
    if (t->rank < 0 || t->rank > MLVM_MAX_RANK || (t->rank > 0 && t->dims == NULL))
        return SIZE_MAX;
    for (d = 0; d < t->rank; ++d) {
        if (t->dims[d] < 0 || (t->dims[d] != 0 && n > SIZE_MAX / 2 / (uint64_t)t->dims[d]))
            return SIZE_MAX;
        n *= (size_t)t->dims[d];
    }
    return n;
}

/* Cheap, once per instance: the arguments a binding reads. Checked in every
 * build (instance creation is not the hot path). */
static int instance_args_ok(const mlvm_instance_t *inst, const mlvm_module_t *module,
                            const mlvm_native_t **import_slots, const mlvm_native_t *natives,
                            size_t num_natives, mlvm_queue_t **queue_slots,
                            mlvm_queue_t *const *queues, size_t num_queues)
{
    size_t k;
    if (inst == NULL || module == NULL || module->magic != MLVM_MODULE_MAGIC)
        return 0;
    if (module->num_imports < 0 || module->num_queues < 0)
        return 0;
    if (module->num_imports > 0 && (import_slots == NULL || module->imports == NULL))
        return 0;
    if (module->num_queues > 0 && (queue_slots == NULL || module->queues == NULL))
        return 0;
    if ((num_natives > 0 && natives == NULL) || (num_queues > 0 && queues == NULL))
        return 0;
    for (k = 0; k < num_queues; ++k)
        if (queues[k] == NULL)
            return 0;
    return 1;
}

mlvm_status_t mlvm_instance_init(mlvm_instance_t *inst, const mlvm_module_t *module,
                                 const mlvm_native_t **import_slots,
                                 const mlvm_native_t *natives, size_t num_natives,
                                 mlvm_queue_t **queue_slots, mlvm_queue_t *const *queues,
                                 size_t num_queues, const char **missing)
{
    int32_t i;
    size_t k;
    if (!instance_args_ok(inst, module, import_slots, natives, num_natives, queue_slots,
                          queues, num_queues))
        return MLVM_ERR_INVALID;
    inst->module = module;
    inst->imports = import_slots;
    inst->queues = queue_slots;
    inst->state = NULL;
    inst->params = NULL;
    inst->comm = NULL;
    for (i = 0; i < module->num_imports; ++i) {
        const char *name = module->imports[i].name;
        import_slots[i] = NULL;
        for (k = 0; k < num_natives; ++k)
            if (natives[k].name != NULL && strcmp(natives[k].name, name) == 0)
                import_slots[i] = &natives[k];
        if (import_slots[i] == NULL) {
            if (missing != NULL)
                *missing = name;
            return MLVM_ERR_IMPORT;
        }
    }
    for (i = 0; i < module->num_queues; ++i) {
        const mlvm_queue_desc_t *want = &module->queues[i];
        queue_slots[i] = NULL;
        for (k = 0; k < num_queues; ++k)
            if (queues[k]->name != NULL && strcmp(queues[k]->name, want->name) == 0)
                queue_slots[i] = queues[k];
        if (queue_slots[i] == NULL || queue_slots[i]->elem_bytes != tensor_bytes(&want->elem)) {
            if (missing != NULL)
                *missing = want->name;
            return queue_slots[i] == NULL ? MLVM_ERR_IMPORT : MLVM_ERR_SHAPE;
        }
    }
    return MLVM_OK;
}

/* Every global inside the state, sized as its tensor: the descriptor is
 * checked once, where the state is bound, not on every call. */
static int globals_ok(const mlvm_module_t *m)
{
    int32_t i;
    if (m->num_globals < 0 || (m->num_globals > 0 && m->globals == NULL))
        return 0;
    for (i = 0; i < m->num_globals; ++i) {
        const mlvm_global_desc_t *g = &m->globals[i];
        const size_t n = tensor_bytes(&g->tensor);
        if (n == SIZE_MAX || g->bytes < n || g->offset % MLVM_ARENA_ALIGN != 0
            || g->offset > m->state_bytes || g->bytes > m->state_bytes - g->offset)
            return 0;
    }
    return 1;
}

mlvm_status_t mlvm_instance_reset_state(mlvm_instance_t *inst)
{
    const mlvm_module_t *m;
    int32_t i;
    if (inst == NULL || inst->module == NULL || inst->state == NULL)
        return MLVM_ERR_INVALID;
    m = inst->module;
    for (i = 0; i < m->num_globals; ++i) {
        const mlvm_global_desc_t *g = &m->globals[i];
        if (g->init != NULL)
            memcpy(inst->state + g->offset, g->init, g->bytes);
        else
            memset(inst->state + g->offset, 0, g->bytes);
    }
    return MLVM_OK;
}

mlvm_status_t mlvm_instance_bind_state(mlvm_instance_t *inst, void *state, size_t bytes)
{
    if (inst == NULL || inst->module == NULL || state == NULL)
        return MLVM_ERR_INVALID;
    if ((uintptr_t)state % MLVM_ARENA_ALIGN != 0 || !globals_ok(inst->module))
        return MLVM_ERR_INVALID;
    if (bytes < inst->module->state_bytes)
        return MLVM_ERR_SHAPE;
    inst->state = (unsigned char *)state;
    return mlvm_instance_reset_state(inst);
}

const mlvm_global_desc_t *mlvm_module_find_global(const mlvm_module_t *module,
                                                  const char *name)
{
    int32_t i;
    if (module == NULL || name == NULL)
        return NULL;
    for (i = 0; i < module->num_globals; ++i)
        if (module->globals[i].tensor.name != NULL
            && strcmp(module->globals[i].tensor.name, name) == 0)
            return &module->globals[i];
    return NULL;
}
