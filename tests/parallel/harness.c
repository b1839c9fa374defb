/* Four ranks on four threads, one instance each, over the shared-memory
 * communicator (built with ThreadSanitizer by test_tsan.py). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "expect.h"
#include "model.h"

#define RANKS 4
#define STEPS 200

static mlvm_shm_world_t world;

typedef struct rank {
    mlvm_shm_comm_t comm;
    mlvm_instance_t inst;
    unsigned char arena[MODEL_ARENA_BYTES + 64];
    float x[1031], s[1031];
    int32_t k[3], g[12], b[3], r;
    int bad;
} rank_t;

static rank_t ranks[RANKS];

static void *run(void *arg)
{
    rank_t *me = (rank_t *)arg;
    const int id = (int)(me - ranks);
    int step, i;
    unsigned char *arena = me->arena + (64 - (uintptr_t)me->arena % 64) % 64;
    for (step = 0; step < STEPS; ++step) {
        model_step_call_t call;
        mlvm_status_t st;
        for (i = 0; i < 1031; ++i)
            me->x[i] = (float)(id + 1) * (float)(i % 7) + (float)step;
        for (i = 0; i < 3; ++i)
            me->k[i] = id * 10 + i + step;
        st = model_step_begin(&call, &me->inst, arena, me->x, me->k, me->s, me->g, me->b, &me->r);
        while (st == MLVM_SUSPENDED) {
            sched_yield();  /* four ranks may share fewer cores: let the peers run */
            st = model_step_resume(&call);
        }
        if (st != MLVM_OK || me->r != id)
            ++me->bad;
        for (i = 0; i < 1031; ++i)  /* (1+2+3+4) * (i % 7) + 4 * step */
            if (me->s[i] != 10.0f * (float)(i % 7) + 4.0f * (float)step)
                ++me->bad;
        for (i = 0; i < 12; ++i)
            if (me->g[i] != (i / 3) * 10 + i % 3 + step)
                ++me->bad;
        if (me->b[0] != 30 + step || me->b[2] != 32 + step)
            ++me->bad;
    }
    return NULL;
}

int main(void)
{
    pthread_t th[RANKS];
    int r;
    EXPECT(mlvm_shm_world_init(&world, RANKS) == MLVM_OK);
    EXPECT(mlvm_shm_world_init(&world, MLVM_SHM_MAX_RANKS + 1) == MLVM_ERR_INVALID);
    EXPECT(mlvm_shm_world_init(&world, RANKS) == MLVM_OK);
    for (r = 0; r < RANKS; ++r) {
        const char *missing = NULL;
        EXPECT(mlvm_shm_comm_init(&ranks[r].comm, &world, r) == MLVM_OK);
        EXPECT(mlvm_instance_init(&ranks[r].inst, &model_module, NULL, NULL, 0, NULL, NULL, 0, &missing) == MLVM_OK);
        ranks[r].inst.comm = &ranks[r].comm.base;
    }
    EXPECT(mlvm_shm_comm_init(&ranks[0].comm, &world, RANKS) == MLVM_ERR_INVALID);
    EXPECT(mlvm_shm_comm_init(&ranks[0].comm, &world, 0) == MLVM_OK);
    for (r = 0; r < RANKS; ++r)
        pthread_create(&th[r], NULL, run, &ranks[r]);
    for (r = 0; r < RANKS; ++r)
        pthread_join(th[r], NULL);
    for (r = 0; r < RANKS; ++r)
        EXPECT(ranks[r].bad == 0);
    return EXPECT_REPORT();
}
