/* Two streams of the streaming model interleaved on one thread.
 *
 * Each stream is a call with its own instance (binding its own "frames"
 * and "results" queues), arena and call state. The loop feeds one frame to
 * each stream when its queue has room, lets the scheduler run one round,
 * and drains results; it prints "stream frame v0 v1 v2 v3" per result. */
#include <stdio.h>

#include "stream.h"
#include "mlvm/sched.h"

#define STREAMS 2
#define FRAMES 3

typedef struct stream {
    mlvm_queue_t frames, results;
    float frame_storage[2 * 16], result_storage[4 * 4];
    mlvm_queue_t *queues[2];
    mlvm_queue_t *slots[STREAM_NUM_QUEUES];
    mlvm_instance_t inst;
    stream_stream_call_t call;
    unsigned char arena[STREAM_ARENA_BYTES + 64] MLVM_ALIGNED(64);
    float gain, total[4];
    int fed, drained;
} stream_t;

static mlvm_status_t resume(void *call)
{
    return stream_stream_resume((stream_stream_call_t *)call);
}

static float frame_value(int s, int f, int i)
{
    return (float)((s * 7 + f * 3 + i) % 11) / 5.0f - 1.0f;
}

int main(void)
{
    static stream_t st[STREAMS];
    mlvm_task_t tasks[STREAMS];
    const char *missing = NULL;
    int s, i, rounds = 0;
    for (s = 0; s < STREAMS; ++s) {
        stream_t *x = &st[s];
        mlvm_queue_init(&x->frames, "frames", sizeof(float) * 16, 2, x->frame_storage);
        mlvm_queue_init(&x->results, "results", sizeof(float) * 4, 4, x->result_storage);
        x->queues[0] = &x->frames;
        x->queues[1] = &x->results;
        if (mlvm_instance_init(&x->inst, &stream_module, NULL, NULL, 0, x->slots, x->queues, 2,
                               &missing) != MLVM_OK) {
            printf("cannot bind %s\n", missing);
            return 1;
        }
        x->gain = s == 0 ? 1.0f : -2.0f;
        tasks[s].resume = resume;
        tasks[s].call = &x->call;
        tasks[s].status = stream_stream_begin(&x->call, &x->inst, x->arena, &x->gain, x->total);
    }
    while (mlvm_sched_run(tasks, STREAMS, 1) != MLVM_OK || st[0].drained + st[1].drained < STREAMS * FRAMES) {
        ++rounds;
        for (s = 0; s < STREAMS; ++s) {
            stream_t *x = &st[s];
            float frame[16], out[4];
            if (x->fed < FRAMES && (rounds + s) % 2 == 0) { /* streams fed at different times */
                for (i = 0; i < 16; ++i)
                    frame[i] = frame_value(s, x->fed, i);
                if (mlvm_queue_push(&x->frames, frame) == MLVM_OK)
                    ++x->fed;
            }
            while (mlvm_queue_pop(&x->results, out) == MLVM_OK) {
                printf("result %d %d %.9g %.9g %.9g %.9g\n", s, x->drained, out[0], out[1], out[2], out[3]);
                ++x->drained;
            }
        }
        if (rounds > 1000)
            return 2;
    }
    for (s = 0; s < STREAMS; ++s) {
        if (tasks[s].status != MLVM_OK)
            return 3;
        printf("total %d %.9g %.9g %.9g %.9g\n", s, st[s].total[0], st[s].total[1], st[s].total[2], st[s].total[3]);
    }
    printf("rounds %d\n", rounds);
    return 0;
}
