/* Contexts from plain C (built with ASan and UBSan by test_context.py):
 * b imports a's exports through links, with signature checks. */
#include <stdio.h>
#include <string.h>

#include "a.h"
#include "expect.h"
#include "b.h"
#include "bad.h"
#include "mlvm/context.h"


static mlvm_status_t negate(void *user, void *const *args, void *const *results)
{
    const float *x = (const float *)args[0];
    float *y = (float *)results[0];
    int i;
    (void)user;
    for (i = 0; i < 4; ++i)
        y[i] = -x[i];
    return MLVM_OK;
}

static unsigned char arena[B_ARENA_BYTES + 64] MLVM_ALIGNED(64);

/* b.main(x) through begin / resume: the number of suspensions. */
static int run_main(const mlvm_instance_t *b, const float *x, float *y, mlvm_status_t *st)
{
    b_main_call_t call;
    int suspended = 0;
    *st = b_main_begin(&call, b, arena, x, y);
    while (*st == MLVM_SUSPENDED) {
        ++suspended;
        *st = b_main_resume(&call);
    }
    return suspended;
}

int main(void)
{
    const mlvm_native_t natives[] = {{"negate", negate, NULL}};
    mlvm_context_t *ctx = mlvm_context_new(mlvm_allocator_std());
    mlvm_instance_t *a = NULL, *b = NULL, *bad = NULL;
    const char *what = NULL;
    const float x[4] = {1, 2, 3, 4};
    float y[4];
    mlvm_status_t st;
    int k;

    EXPECT(ctx != NULL);
    /* b before a: its imports are found nowhere. */
    EXPECT(mlvm_context_add(ctx, &b_module, natives, 1, &b, &what) == MLVM_ERR_IMPORT);
    EXPECT(what != NULL && strcmp(what, "scale") == 0);
    EXPECT(mlvm_context_add(ctx, &a_module, NULL, 0, &a, &what) == MLVM_OK);
    /* Without the native, b's "negate" is missing. */
    EXPECT(mlvm_context_add(ctx, &b_module, NULL, 0, &b, &what) == MLVM_ERR_IMPORT);
    EXPECT(strcmp(what, "negate") == 0);
    EXPECT(mlvm_context_add(ctx, &b_module, natives, 1, &b, &what) == MLVM_OK);
    /* A signature that differs from a's export is refused, naming it. */
    EXPECT(mlvm_context_add(ctx, &bad_module, NULL, 0, &bad, &what) == MLVM_ERR_SHAPE);
    EXPECT(strcmp(what, "scale") == 0);
    EXPECT(mlvm_context_find(ctx, "a") == a && mlvm_context_find(ctx, "b") == b);
    EXPECT(mlvm_context_find(ctx, "bad") == NULL);

    /* -(x * 2 + total + 1), total accumulating in a's state; a.slow yields
     * once, which suspends b's call. */
    for (k = 1; k <= 3; ++k) {
        EXPECT(run_main(b, x, y, &st) == 1);
        EXPECT(st == MLVM_OK);
        EXPECT(y[0] == -(2.0f * (float)k + 1.0f) && y[3] == -(8.0f * (float)k + 1.0f));
    }
    /* a's state is a's: its own instance sees the same total. */
    EXPECT(a_accumulate(a, arena, x, y) == MLVM_OK && y[1] == 3 * 4.0f + 2.0f);

    mlvm_context_free(ctx);
    return EXPECT_REPORT();
}
