#include "mlvm/sched.h"

mlvm_status_t mlvm_sched_run(mlvm_task_t *tasks, size_t num_tasks, size_t max_rounds)
{
    size_t round, i, waiting = 0;
    for (round = 0; round < max_rounds; ++round) {
        waiting = 0;
        for (i = 0; i < num_tasks; ++i) {
            if (tasks[i].status != MLVM_SUSPENDED)
                continue;
            tasks[i].status = tasks[i].resume(tasks[i].call);
            if (tasks[i].status == MLVM_SUSPENDED)
                ++waiting;
        }
        if (waiting == 0)
            return MLVM_OK;
    }
    return MLVM_SUSPENDED;
}
