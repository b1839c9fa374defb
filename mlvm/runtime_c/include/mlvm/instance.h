/* A module instance: the module's imports and queues bound by name.
 *
 * Native functions are registered by the user in a table; binding happens
 * once, when the instance is made, and fails naming the first import (or
 * queue) it cannot find. Calls that suspend (begin / resume) take the
 * instance; it holds no mutable state, so many calls can share it. */
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

#endif /* MLVM_INSTANCE_H_ */
