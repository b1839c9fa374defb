/* The coroutine interface from C, under ASan/UBSan: instance binding,
 * copying a suspended call's state, the scheduler, queues and checks. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "model.h"
#include "mlvm/sched.h"

#define CHECK EXPECT

static unsigned char arena_a[MODEL_ARENA_BYTES + 64] MLVM_ALIGNED(64);
static unsigned char arena_b[MODEL_ARENA_BYTES + 64] MLVM_ALIGNED(64);

static mlvm_status_t scale(void *user, void *const *args, void *const *results)
{
    const float *c = (const float *)args[0];
    const float *s = (const float *)args[1];
    float *out = (float *)results[0];
    int i;
    ++*(int *)user;
    for (i = 0; i < 4; ++i)
        out[i] = c[i] * s[0];
    return MLVM_OK;
}

static mlvm_status_t resume_steps(void *call)
{
    return model_steps_resume((model_steps_call_t *)call);
}

int main(void)
{
    int calls = 0, i;
    const mlvm_native_t natives[] = {{"other", scale, &calls}, {"scale", scale, &calls}};
    const mlvm_native_t *import_slots[MODEL_NUM_IMPORTS];
    mlvm_queue_t q_in, q_out;
    float in_storage[4 * 4], out_storage[4 * 4];
    mlvm_queue_t *queues[] = {&q_out, &q_in};
    mlvm_queue_t *queue_slots[MODEL_NUM_QUEUES];
    mlvm_instance_t inst;
    const char *missing = NULL;

    /* Binding: a missing import is named; a complete table binds. */
    CHECK(mlvm_queue_init(&q_in, "in", sizeof(float) * 4, 4, in_storage) == MLVM_OK);
    CHECK(mlvm_queue_init(&q_out, "out", sizeof(float) * 4, 4, out_storage) == MLVM_OK);
    CHECK(mlvm_instance_init(&inst, &model_module, import_slots, natives, 1, queue_slots,
                             queues, 2, &missing) == MLVM_ERR_IMPORT);
    CHECK(missing != NULL && strcmp(missing, "scale") == 0);
    CHECK(mlvm_instance_init(&inst, &model_module, import_slots, natives, 2, queue_slots,
                             queues, 1, &missing) == MLVM_ERR_IMPORT);
    CHECK(missing != NULL && strcmp(missing, "in") == 0);
    CHECK(mlvm_instance_init(&inst, &model_module, import_slots, natives, 2, queue_slots,
                             queues, 2, &missing) == MLVM_OK);

    /* A suspended call resumes from a copy of its state at another address. */
    {
        float x[8], want[8], got[8];
        model_steps_call_t call, moved;
        for (i = 0; i < 8; ++i)
            x[i] = (float)i / 4.0f - 1.0f;
        CHECK(model_steps(arena_a, x, want) == MLVM_OK);
        CHECK(model_steps_begin(&call, &inst, arena_b, x, got) == MLVM_SUSPENDED);
        memcpy(&moved, &call, sizeof call);
        memset(&call, 0xA5, sizeof call);
        CHECK(model_steps_resume(&moved) == MLVM_SUSPENDED);
        CHECK(model_steps_resume(&moved) == MLVM_OK);
        CHECK(memcmp(got, want, sizeof want) == 0);
        CHECK(model_steps_resume(&moved) == MLVM_OK);
    }

    /* The scheduler interleaves calls round-robin on one thread. */
    {
        static unsigned char arenas[3][MODEL_STEPS_ARENA_BYTES + 64] MLVM_ALIGNED(64);
        float x[3][8], y[3][8], want[8];
        model_steps_call_t states[3];
        mlvm_task_t tasks[3];
        int t, same = 1;
        for (t = 0; t < 3; ++t) {
            for (i = 0; i < 8; ++i)
                x[t][i] = (float)(t * 8 + i) / 10.0f - 1.0f;
            tasks[t].resume = resume_steps;
            tasks[t].call = &states[t];
            tasks[t].status = model_steps_begin(&states[t], NULL, arenas[t], x[t], y[t]);
        }
        CHECK(mlvm_sched_run(tasks, 3, 1) == MLVM_SUSPENDED);
        CHECK(mlvm_sched_run(tasks, 3, 10) == MLVM_OK);
        for (t = 0; t < 3; ++t) {
            CHECK(tasks[t].status == MLVM_OK);
            model_steps(arena_a, x[t], want);
            same &= memcmp(want, y[t], sizeof want) == 0;
        }
        CHECK(same);
    }

    /* Queues and a native import: waits while "in" is empty. */
    {
        float s = 2.0f, a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, d[4], popped[4];
        model_pipe_call_t call;
        CHECK(model_pipe_begin(&call, &inst, arena_a, &s, d) == MLVM_SUSPENDED);
        CHECK(model_pipe_resume(&call) == MLVM_SUSPENDED && call.hdr.pc == 1);
        CHECK(mlvm_queue_push(&q_in, a) == MLVM_OK && mlvm_queue_push(&q_in, b) == MLVM_OK);
        while (model_pipe_resume(&call) == MLVM_SUSPENDED)
            ;
        CHECK(call.hdr.status == MLVM_OK && calls == 1);
        CHECK(mlvm_queue_pop(&q_out, popped) == MLVM_OK);
        CHECK(popped[0] == 22.0f && popped[3] == 88.0f && d[1] == 44.0f);
        CHECK(mlvm_queue_pop(&q_out, popped) == MLVM_SUSPENDED);
    }

    /* A failing check ends the call with its location and worst element. */
    {
        float x[6] = {0, 1, 2, 3, 4, 5}, y[6] = {0, 1, 2.01f, 3.5f, 4, 5}, out[6];
        int32_t idx[3] = {1, 2, 3};
        model_checked_call_t call;
        CHECK(model_checked_begin(&call, NULL, arena_a, x, y, idx, out) == MLVM_ERR_CHECK);
        CHECK(call.hdr.check.where != NULL &&
              strstr(call.hdr.check.where, "model.mlir:24:3: mlvm.check_close") != NULL);
        CHECK(call.hdr.check.index == 3 && call.hdr.check.got == 3.0f &&
              call.hdr.check.want == 3.5f);
        CHECK(model_checked(arena_a, x, x, idx, out) == MLVM_OK && out[5] == -5.0f);
    }

    /* Steps of one export in a row: the inputs stepped or fixed, a failing
     * step stops the run, a suspending export is refused. */
    {
        const mlvm_export_t *checked = NULL, *steps = NULL;
        float x[3][6], y[3][6], out[3][6];
        int32_t idx[3] = {1, 2, 3};
        void *ins[3], *outs[1], *ptrs[4];
        const size_t in_strides[3] = {sizeof x[0], sizeof y[0], 0}, out_strides[1] = {sizeof out[0]};
        model_checked_call_t call;
        size_t done = 99;
        int k;
        for (k = 0; k < model_module.num_exports; ++k) {
            if (strcmp(model_module.exports[k].name, "checked") == 0)
                checked = &model_module.exports[k];
            if (strcmp(model_module.exports[k].name, "steps") == 0)
                steps = &model_module.exports[k];
        }
        CHECK(checked != NULL && steps != NULL);
        for (k = 0; k < 18; ++k)
            x[k / 6][k % 6] = y[k / 6][k % 6] = (float)k;
        ins[0] = x;
        ins[1] = y;
        ins[2] = idx;
        outs[0] = out;
        CHECK(mlvm_call_steps(checked, &inst, &call, arena_a, 3, ins, in_strides, outs, out_strides,
                              ptrs, &done) == MLVM_OK && done == 3);
        CHECK(out[0][1] == -1.0f && out[2][5] == -17.0f);
        y[2][0] = 100.0f;
        CHECK(mlvm_call_steps(checked, &inst, &call, arena_a, 3, ins, in_strides, outs, out_strides,
                              ptrs, &done) == MLVM_ERR_CHECK && done == 2);
        CHECK(call.hdr.check.where != NULL && call.hdr.check.index == 0);
        CHECK(mlvm_call_steps(NULL, &inst, &call, arena_a, 1, ins, in_strides, outs, out_strides,
                              ptrs, &done) == MLVM_ERR_INVALID && done == 0);
        CHECK(mlvm_call_steps(checked, &inst, &call, arena_a, 1, NULL, in_strides, outs,
                              out_strides, ptrs, &done) == MLVM_ERR_INVALID && done == 0);
        CHECK(mlvm_call_steps(checked, &inst, &call, arena_a, 1, ins, in_strides, outs, NULL,
                              ptrs, &done) == MLVM_ERR_INVALID);
        CHECK(mlvm_call_steps(checked, &inst, &call, arena_a, 1, ins, in_strides, outs,
                              out_strides, ptrs, NULL) == MLVM_ERR_INVALID);
        /* A step that suspends stops the run; it resumes from `call`. */
        {
            float sx[2][8], sy[2][8], want[8];
            void *sin[1], *sout[1];
            const size_t s_in[1] = {sizeof sx[0]}, s_out[1] = {sizeof sy[0]};
            model_steps_call_t scall;
            mlvm_status_t st;
            for (k = 0; k < 16; ++k)
                sx[k / 8][k % 8] = (float)k / 8.0f - 1.0f;
            sin[0] = sx;
            sout[0] = sy;
            CHECK(mlvm_call_steps(steps, &inst, &scall, arena_b, 2, sin, s_in, sout, s_out, ptrs,
                                  &done) == MLVM_SUSPENDED && done == 0);
            do
                st = steps->resume(&scall);
            while (st == MLVM_SUSPENDED);
            CHECK(st == MLVM_OK);
            CHECK(model_steps(arena_a, sx[0], want) == MLVM_OK && memcmp(want, sy[0], sizeof want) == 0);
        }
    }

    return EXPECT_REPORT();
}
