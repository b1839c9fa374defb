/* Contexts: module instances made in order, each importing the exports of
 * the modules before it (and native functions), signatures checked.
 *
 * A module's `mlvm.call_c` names a native function; in a context the name
 * may also be an export of an earlier module ("f", or "module.f" for one
 * module's), which is then called through a link: a native function that
 * runs the export (begin / resume) on the exporting instance, with an arena
 * and call state of its own. A link whose export suspends makes the
 * importing call suspend, and resumes the export when it is retried. A
 * link runs one call at a time: another importing call that reaches it
 * while one is suspended there gets MLVM_ERR_BUSY (mlvm_link_reset frees a
 * link whose importing call was abandoned).
 *
 * Everything a context makes (instances, slots, links, arenas, state) comes
 * from its allocator and is released by mlvm_context_free. */
#ifndef MLVM_CONTEXT_H_
#define MLVM_CONTEXT_H_

#include <stddef.h>
#include <stdint.h>

#include "mlvm/alloc.h"
#include "mlvm/instance.h"
#include "mlvm/status.h"

/* One import bound to an earlier module's export. */
typedef struct mlvm_link {
    mlvm_native_t native;          /* what the importing instance calls */
    const mlvm_instance_t *target; /* the exporting instance */
    const mlvm_export_t *fn;
    void *arena;                   /* fn->arena_bytes, MLVM_ARENA_ALIGN-aligned */
    void *call;                    /* fn->call_bytes: the call across suspensions */
    const void *owner;             /* which importing call it runs for (its buffers) */
    int32_t running;               /* a call of fn is suspended in `call` */
    int32_t pad_;
} mlvm_link_t;

/* The native function of every link (user = the mlvm_link_t). */
mlvm_status_t mlvm_link_call(void *user, void *const *args, void *const *results);

/* Forgets the call suspended in the link (its importing call was dropped). */
void mlvm_link_reset(mlvm_link_t *link);

/* Whether an import's signature equals an export's (count, dtype, dims of
 * each argument / input and result / output). */
int mlvm_signature_matches(const mlvm_import_desc_t *imp, const mlvm_export_t *exp);

typedef struct mlvm_context mlvm_context_t;

/* A new, empty context; NULL when out of memory. */
mlvm_context_t *mlvm_context_new(const mlvm_allocator_t *alloc);

/* Instantiates `module` as the context's next module: its imports are bound
 * to the exports of the modules added before (the latest module first, by
 * plain name or "<module>.<export>"), else to `natives`; its state, if any,
 * is allocated and set to its initial values. On success *out is the
 * instance (owned by the context). Errors: MLVM_ERR_IMPORT (an import found
 * nowhere: *what is its name), MLVM_ERR_SHAPE (an import whose signature
 * differs from the export of that name: *what is its name), MLVM_ERR_NOMEM,
 * MLVM_ERR_INVALID (arguments, or a module with queues: those are bound with
 * mlvm_instance_init). */
mlvm_status_t mlvm_context_add(mlvm_context_t *ctx, const mlvm_module_t *module,
                               const mlvm_native_t *natives, size_t num_natives,
                               mlvm_instance_t **out, const char **what);

/* The instance of the context's module named `name`, or NULL. */
mlvm_instance_t *mlvm_context_find(const mlvm_context_t *ctx, const char *name);

/* Releases every instance and everything the context allocated. */
void mlvm_context_free(mlvm_context_t *ctx);

#endif /* MLVM_CONTEXT_H_ */
