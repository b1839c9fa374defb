/* Launch from C (built with TSan, or ASan and UBSan, by test_launch.py):
 * programs on VM tensors, interleaved with eager ops, serialized across
 * threads. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "model.h"
#include "mlvm/exec.h"
#include "mlvm/launch.h"
#include "mlvm/shape.h"
#include "mlvm/tensor.h"

static int inside, overlaps, probes;

/* Copies x; notes a launch running at the same time as this one. */
static mlvm_status_t probe(void *user, void *const *args, void *const *results)
{
    volatile int spin;
    (void)user;
    if (__atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST) != 1)
        __atomic_add_fetch(&overlaps, 1, __ATOMIC_SEQ_CST);
    for (spin = 0; spin < 2000; ++spin)
        ;
    memcpy(results[0], args[0], 64 * sizeof(float));
    __atomic_add_fetch(&probes, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
    return MLVM_OK;
}

typedef struct job {
    mlvm_vm_t *vm;
    mlvm_instance_t *inst;
    mlvm_handle_t in, out[2];
    int n, busy, errors, try_form;
} job_t;

static void *worker(void *arg)
{
    job_t *j = (job_t *)arg;
    int k;
    for (k = 0; k < j->n; ++k) {
        mlvm_status_t st;
        if (j->try_form) {
            while ((st = mlvm_vm_try_launch(j->vm, j->inst, "step", &j->in, j->out)) == MLVM_ERR_BUSY)
                ++j->busy;
        } else {
            st = mlvm_vm_launch(j->vm, j->inst, "step", &j->in, j->out);
        }
        if (st != MLVM_OK)
            ++j->errors;
    }
    return NULL;
}

static mlvm_handle_t vector(mlvm_vm_t *vm, float v)
{
    const int64_t dims[1] = {64};
    float data[64];
    mlvm_handle_t t = mlvm_tensor_new(vm, MLVM_F32, mlvm_vm_shape_new(vm, 1, dims));
    int i;
    for (i = 0; i < 64; ++i)
        data[i] = v;
    mlvm_tensor_write(vm, t, 0, data, sizeof data);
    return t;
}

int main(void)
{
    const mlvm_native_t natives[] = {{"probe", probe, NULL}};
    const mlvm_native_t *slots[MODEL_NUM_IMPORTS];
    mlvm_vm_t *vm = mlvm_vm_new(mlvm_allocator_std());
    mlvm_instance_t inst;
    const char *missing = NULL;
    mlvm_handle_t x, out[2] = {MLVM_NONE, MLVM_NONE}, sum, bad_out[2];
    float y[64], s;
    size_t before;
    pthread_t th[3];
    job_t jobs[3];
    int k;

    EXPECT(mlvm_instance_init(&inst, &model_module, slots, natives, 1, NULL, NULL, 0, &missing) == MLVM_OK);
    x = vector(vm, 1.0f);
    before = mlvm_vm_consumed(vm);
    /* Outputs made by the launch; the VM keeps the instance's state and
     * lends it only while a launch runs. */
    EXPECT(mlvm_vm_launch(vm, &inst, "step", &x, out) == MLVM_OK);
    EXPECT(out[0] >= 0 && out[1] >= 0 && inst.state == NULL);
    mlvm_tensor_read(vm, out[0], 0, y, sizeof y);
    mlvm_tensor_read(vm, out[1], 0, &s, sizeof s);
    EXPECT(y[0] == 3.0f && y[63] == 3.0f && s == 192.0f);
    /* Consumed counts the outputs, the scratch and the state. */
    EXPECT(mlvm_vm_consumed(vm) >= before + 64 * 4 + 4 + MODEL_STATE_BYTES + MODEL_ARENA_BYTES);
    /* Eager ops on the launch's outputs, then a launch on their result. */
    sum = vector(vm, 0.0f);
    EXPECT(mlvm_exec(vm, MLVM_OP_ADD, NULL, sum, out[0], x) == MLVM_OK); /* 3 + 1 */
    EXPECT(mlvm_vm_launch(vm, &inst, "step", &sum, out) == MLVM_OK);      /* 4*2 + (1+4) */
    mlvm_tensor_read(vm, out[0], 0, y, sizeof y);
    EXPECT(y[5] == 13.0f);
    /* Refused: unknown export, wrong shape, output that is an input. */
    EXPECT(mlvm_vm_launch(vm, &inst, "nope", &x, out) == MLVM_ERR_INVALID);
    bad_out[0] = x;
    bad_out[1] = out[1];
    EXPECT(mlvm_vm_launch(vm, &inst, "step", &x, bad_out) == MLVM_ERR_INVALID);
    bad_out[0] = out[1];
    bad_out[1] = out[1];
    EXPECT(mlvm_vm_launch(vm, &inst, "step", &x, bad_out) == MLVM_ERR_SHAPE);
    EXPECT(mlvm_vm_launch(vm, &inst, "step", &out[1], out) == MLVM_ERR_SHAPE);

    /* Three threads launching on one VM: never two at a time. */
    for (k = 0; k < 3; ++k) {
        memset(&jobs[k], 0, sizeof jobs[k]);
        jobs[k].vm = vm;
        jobs[k].inst = &inst;
        jobs[k].in = vector(vm, 0.0f);
        jobs[k].out[0] = vector(vm, 0.0f);
        jobs[k].out[1] = mlvm_tensor_new(vm, MLVM_F32, mlvm_vm_shape_new(vm, 0, NULL));
        jobs[k].n = 300;
        jobs[k].try_form = k == 2;
    }
    probes = 0;
    for (k = 0; k < 3; ++k)
        pthread_create(&th[k], NULL, worker, &jobs[k]);
    for (k = 0; k < 3; ++k)
        pthread_join(th[k], NULL);
    EXPECT(overlaps == 0 && probes == 900);
    EXPECT(jobs[0].errors + jobs[1].errors + jobs[2].errors == 0);
    printf("busy answers to the try form: %d\n", jobs[2].busy);

    mlvm_vm_free(vm);

    /* The instance on a second VM after the first is gone: that VM's own
     * state, from the initial values (nothing points at freed memory). */
    {
        mlvm_vm_t *vm2 = mlvm_vm_new(mlvm_allocator_std());
        mlvm_handle_t x2 = vector(vm2, 1.0f), o2[2] = {MLVM_NONE, MLVM_NONE};
        EXPECT(mlvm_vm_launch(vm2, &inst, "step", &x2, o2) == MLVM_OK);
        mlvm_tensor_read(vm2, o2[0], 0, y, sizeof y);
        EXPECT(y[7] == 3.0f && inst.state == NULL);
        mlvm_vm_free(vm2);
    }
    return EXPECT_REPORT();
}
