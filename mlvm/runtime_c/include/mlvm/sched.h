/* A round-robin scheduler for suspended calls on one thread.
 *
 * Each task is a call already begun: its resume function and its call
 * state. mlvm_sched_run resumes every unfinished task in turn until all
 * have finished (MLVM_OK) or failed, or `max_rounds` rounds pass. */
#ifndef MLVM_SCHED_H_
#define MLVM_SCHED_H_

#include <stddef.h>

#include <stdint.h>

#include "mlvm/module.h"
#include "mlvm/status.h"

typedef struct mlvm_task {
    mlvm_status_t (*resume)(void *call);
    void *call;
    mlvm_status_t status; /* MLVM_SUSPENDED until the task ends */
} mlvm_task_t;

/* MLVM_OK when every task ended (each task's own status says how), or
 * MLVM_SUSPENDED when some are still waiting after max_rounds rounds. */
mlvm_status_t mlvm_sched_run(mlvm_task_t *tasks, size_t num_tasks, size_t max_rounds);

/* Resumes one call while it suspends, up to max_resumes times (0: no
 * limit), pausing the core between the first tries and then calling
 * `idle` (a host's sched_yield, so that ranks may outnumber cores; NULL
 * to keep spinning): how a thread that owns one rank waits for its peers
 * at a collective. The call's last status. */
mlvm_status_t mlvm_call_drive(mlvm_status_t (*resume)(void *call), void *call,
                              size_t max_resumes, int (*idle)(void));

/* Runs export `fn` of `inst` `steps` times in a row, as a training loop
 * over an epoch's batches does: step k reads input i at inputs[i] +
 * k * in_strides[i] bytes and writes output j at outputs[j] + k *
 * out_strides[j] (a stride of 0: the same buffer at every step). The
 * module's state carries from step to step with no return to the caller
 * in between. `call` holds fn->call_bytes bytes, `ptrs` room for
 * num_inputs + num_outputs pointers. Stops at the first step that does not
 * end with MLVM_OK and returns its status; *done = the steps that ended OK.
 * A step that suspends (MLVM_SUSPENDED) is left in `call`: resume it with
 * fn->resume, then run the steps after it. MLVM_ERR_INVALID (no step run)
 * for a NULL export, call, ptrs or done, or NULL arrays or strides where
 * the export has inputs or outputs. */
mlvm_status_t mlvm_call_steps(const mlvm_export_t *fn, const struct mlvm_instance *inst,
                              void *call, void *arena, size_t steps,
                              void *const *inputs, const size_t *in_strides,
                              void *const *outputs, const size_t *out_strides,
                              void **ptrs, size_t *done);

#endif /* MLVM_SCHED_H_ */
