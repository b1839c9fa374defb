/* The queue as a lock-free SPSC channel: a producer thread pushes a long
 * sequence while the main thread pops it; every element arrives once, in
 * order. Built with ThreadSanitizer by the test. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "mlvm/queue.h"

#define COUNT 50000u

static mlvm_queue_t q;
static uint64_t storage[64];

static void *producer(void *arg)
{
    uint64_t i;
    (void)arg;
    for (i = 0; i < COUNT;) {
        const uint64_t v[1] = {i * 2654435761u};
        if (mlvm_queue_push(&q, v) == MLVM_OK)
            ++i;
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    uint64_t i = 0, v, bad = 0, suspended = 0;
    if (mlvm_queue_init(&q, "seq", sizeof(uint64_t), 64, storage) != MLVM_OK)
        return 1;
    pthread_create(&t, NULL, producer, NULL);
    while (i < COUNT) {
        if (mlvm_queue_pop(&q, &v) != MLVM_OK) {
            ++suspended;
            continue;
        }
        bad += v != i * 2654435761u;
        ++i;
    }
    pthread_join(t, NULL);
    printf("popped %llu, out of order %llu, empty polls %llu\n", (unsigned long long)i,
           (unsigned long long)bad, (unsigned long long)suspended);
    printf("%d passed, %d failed\n", bad == 0 ? 1 : 0, bad == 0 ? 0 : 1);
    return bad != 0;
}
