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

/* Between tries: a pause for a short wait; after that, the caller's idle
 * function (a host's sched_yield, as ranks may outnumber cores). */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define PAUSE() __builtin_ia32_pause()
#else
#define PAUSE() ((void)0)
#endif
#define SPINS_BEFORE_IDLE 64

mlvm_status_t mlvm_call_drive(mlvm_status_t (*resume)(void *call), void *call,
                              size_t max_resumes, int (*idle)(void))
{
    mlvm_status_t st = MLVM_SUSPENDED;
    size_t k;
    if (resume == NULL || call == NULL)
        return MLVM_ERR_INVALID;
    for (k = 0; st == MLVM_SUSPENDED && (max_resumes == 0 || k < max_resumes); ++k) {
        if (k >= SPINS_BEFORE_IDLE && idle != NULL)
            (void)idle();
        else if (k > 0)
            PAUSE();
        st = resume(call);
    }
    return st;
}

mlvm_status_t mlvm_call_steps(const mlvm_export_t *fn, const struct mlvm_instance *inst,
                              void *call, void *arena, size_t steps,
                              void *const *inputs, const size_t *in_strides,
                              void *const *outputs, const size_t *out_strides,
                              void **ptrs, size_t *done)
{
    size_t k, i, n_in, n_out;
    mlvm_status_t st;
    if (done == NULL)
        return MLVM_ERR_INVALID;
    *done = 0;
    if (fn == NULL || fn->begin == NULL || call == NULL || ptrs == NULL || fn->num_inputs < 0
        || fn->num_outputs < 0)
        return MLVM_ERR_INVALID;
    n_in = (size_t)fn->num_inputs;
    n_out = (size_t)fn->num_outputs;
    if ((n_in > 0 && (inputs == NULL || in_strides == NULL))
        || (n_out > 0 && (outputs == NULL || out_strides == NULL)))
        return MLVM_ERR_INVALID;
    for (k = 0; k < steps; ++k) {
        for (i = 0; i < n_in; ++i)
            ptrs[i] = (unsigned char *)inputs[i] + k * in_strides[i];
        for (i = 0; i < n_out; ++i)
            ptrs[n_in + i] = (unsigned char *)outputs[i] + k * out_strides[i];
        st = fn->begin(call, inst, arena, ptrs, ptrs + n_in);
        if (st != MLVM_OK)
            return st;
        *done = k + 1;
    }
    return MLVM_OK;
}
