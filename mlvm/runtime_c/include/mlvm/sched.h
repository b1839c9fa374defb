/* A round-robin scheduler for suspended calls on one thread.
 *
 * Each task is a call already begun: its resume function and its call
 * state. mlvm_sched_run resumes every unfinished task in turn until all
 * have finished (MLVM_OK) or failed, or `max_rounds` rounds pass. */
#ifndef MLVM_SCHED_H_
#define MLVM_SCHED_H_

#include <stddef.h>

#include <stdint.h>

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

#endif /* MLVM_SCHED_H_ */
