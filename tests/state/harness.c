/* Module state from plain C (built with ASan and UBSan by test_c_state.py):
 * binding, reset, persistence across calls and begin/resume, and two
 * instances of one module that do not share state. */
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "model.h"


static unsigned char arena[MODEL_ARENA_BYTES + 1] MLVM_ALIGNED(64);
static unsigned char state_a[MODEL_STATE_BYTES] MLVM_ALIGNED(64);
static unsigned char state_b[MODEL_STATE_BYTES + 64] MLVM_ALIGNED(64);

static void make(mlvm_instance_t *inst)
{
    const char *missing = NULL;
    EXPECT(mlvm_instance_init(inst, &model_module, NULL, NULL, 0, NULL, NULL, 0, &missing) == MLVM_OK);
}

static const float *global_f32(const mlvm_instance_t *inst, const char *name)
{
    const mlvm_global_desc_t *g = mlvm_module_find_global(inst->module, name);
    return g != NULL ? (const float *)(const void *)(inst->state + g->offset) : NULL;
}

int main(void)
{
    mlvm_instance_t a, b;
    const float ones[4] = {1, 1, 1, 1};
    float out[4] = {0};
    model_slow_step_call_t call;

    make(&a);
    make(&b);
    /* Unbound state: functions that use it refuse to run. */
    EXPECT(model_step(&a, arena, ones, out) == MLVM_ERR_INVALID);
    EXPECT(model_step(NULL, arena, ones, out) == MLVM_ERR_INVALID);
    EXPECT(model_slow_step_begin(&call, &a, arena, ones, out) == MLVM_ERR_INVALID);
    EXPECT(model_slow_step_resume(&call) == MLVM_ERR_INVALID);
    /* Binding checks size and alignment. */
    EXPECT(mlvm_instance_bind_state(&a, state_a, MODEL_STATE_BYTES - 1) == MLVM_ERR_SHAPE);
    EXPECT(mlvm_instance_bind_state(&a, state_b + 1, MODEL_STATE_BYTES) == MLVM_ERR_INVALID);
    EXPECT(mlvm_instance_bind_state(&a, NULL, MODEL_STATE_BYTES) == MLVM_ERR_INVALID);
    memset(state_a, 0xff, sizeof state_a);
    EXPECT(mlvm_instance_bind_state(&a, state_a, MODEL_STATE_BYTES) == MLVM_OK);
    EXPECT(mlvm_instance_bind_state(&b, state_b + 64, MODEL_STATE_BYTES) == MLVM_OK);
    EXPECT(global_f32(&a, "count")[0] == 0.0f && global_f32(&a, "nope") == NULL);
    EXPECT(MODEL_NUM_GLOBALS == 6 && model_module.num_globals == 6);

    /* State persists across calls, per instance. */
    EXPECT(model_step(&a, arena, ones, out) == MLVM_OK && out[3] == 1.0f);
    EXPECT(model_step(&a, arena, ones, out) == MLVM_OK && out[3] == 2.0f);
    EXPECT(model_step(&b, arena, ones, out) == MLVM_OK && out[3] == 1.0f);
    EXPECT(global_f32(&a, "count")[0] == 2.0f && global_f32(&b, "count")[0] == 1.0f);

    /* ... and across begin / resume. */
    EXPECT(model_slow_step_begin(&call, &a, arena, ones, out) == MLVM_SUSPENDED);
    EXPECT(global_f32(&a, "count")[1] == 2.0f);
    EXPECT(model_slow_step_resume(&call) == MLVM_OK && out[1] == 3.0f);
    EXPECT(global_f32(&a, "count")[1] == 3.0f);

    /* Reset: back to the initial values (the init parameter for @w). */
    EXPECT(mlvm_instance_reset_state(&a) == MLVM_OK);
    EXPECT(global_f32(&a, "count")[0] == 0.0f && global_f32(&a, "w")[0] == 0.25f);
    EXPECT(global_f32(&b, "count")[0] == 1.0f);

    /* The uniform entry does not exist for a function that needs state. */
    EXPECT(model_module.exports[0].call == NULL && model_module.exports[0].takes_instance == 1);

    return EXPECT_REPORT();
}
