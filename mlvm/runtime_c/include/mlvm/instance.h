/* A module instance: the module's imports and queues bound by name, and the
 * storage of its module state.
 *
 * Native functions are registered by the user in a table; binding happens
 * once, when the instance is made, and fails naming the first import (or
 * queue) it cannot find. Calls that suspend (begin / resume) take the
 * instance. Its only mutable part is the module state (mlvm.global), in
 * storage the caller owns: calls of functions that use state must not run
 * at the same time on one instance; two instances never share state. */
#ifndef MLVM_INSTANCE_H_
#define MLVM_INSTANCE_H_

#include <stddef.h>

#include "mlvm/module.h"
#include "mlvm/queue.h"
#include "mlvm/status.h"

/* A native function: args / results point to buffers of the shapes the
 * module's import descriptor gives. Returns MLVM_OK, MLVM_SUSPENDED for
 * "would block" (the call suspends and retries it on resume), or an error,
 * which ends the call with that status. */
typedef mlvm_status_t (*mlvm_native_fn)(void *user, void *const *args, void *const *results);

typedef struct mlvm_native {
    const char *name;
    mlvm_native_fn fn;
    void *user;
} mlvm_native_t;

typedef struct mlvm_instance {
    const mlvm_module_t *module;
    const mlvm_native_t *const *imports; /* module->num_imports, in module order */
    mlvm_queue_t *const *queues;         /* module->num_queues, in module order */
    unsigned char *state;                /* module->state_bytes; NULL until bound */
    const void *const *params;           /* module->num_params weights; NULL until bound */
    struct mlvm_comm *comm;              /* the communicator of collectives, or NULL */
} mlvm_instance_t;

/* Binds the module's imports among `natives` and its queues among `queues`
 * (by name, queue element sizes checked) into the caller's slot arrays,
 * which must hold num_imports / num_queues entries. On MLVM_ERR_IMPORT
 * (or MLVM_ERR_SHAPE for a queue element size), *missing names the culprit. */
mlvm_status_t mlvm_instance_init(mlvm_instance_t *inst, const mlvm_module_t *module,
                                 const mlvm_native_t **import_slots,
                                 const mlvm_native_t *natives, size_t num_natives,
                                 mlvm_queue_t **queue_slots, mlvm_queue_t *const *queues,
                                 size_t num_queues, const char **missing);

/* Gives the instance caller-owned storage for the module state (at least
 * module->state_bytes, aligned to MLVM_ARENA_ALIGN) and sets every global
 * to its initial value. Functions that use state return MLVM_ERR_INVALID
 * until it is bound. */
mlvm_status_t mlvm_instance_bind_state(mlvm_instance_t *inst, void *state, size_t bytes);

/* Sets every global of the bound state back to its initial value. */
mlvm_status_t mlvm_instance_reset_state(mlvm_instance_t *inst);

/* The global named `name`, or NULL: where its bytes are in inst->state. */
const mlvm_global_desc_t *mlvm_module_find_global(const mlvm_module_t *module,
                                                  const char *name);

#endif /* MLVM_INSTANCE_H_ */
