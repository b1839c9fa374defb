/* Queues: FIFO order across counter wraparound for capacities that are and
 * are not powers of two (hardening finding 7: with free-running counters,
 * slots collided after 2^32 operations unless the capacity was a power of 2). */
#include "check.h"
#include "mlvm/queue.h"

static void fifo_across_wraps(uint32_t capacity)
{
    mlvm_queue_t q;
    int32_t storage[8], out = 0;
    int32_t next_in = 0, next_out = 0, k;
    CHECK_EQ(mlvm_queue_init(&q, "q", sizeof(int32_t), capacity, storage), MLVM_OK);
    /* Start just before the counters wrap back to 0. */
    q.head = q.tail = 2u * capacity - 1u;
    for (k = 0; k < 1000; ++k) {
        /* Fill completely, then drain a varying amount: every phase of the ring. */
        while (mlvm_queue_push(&q, &next_in) == MLVM_OK)
            ++next_in;
        CHECK_EQ(mlvm_queue_size(&q), capacity);
        while ((int32_t)mlvm_queue_size(&q) > k % (int32_t)capacity) {
            CHECK_EQ(mlvm_queue_pop(&q, &out), MLVM_OK);
            CHECK_EQ(out, next_out);
            ++next_out;
        }
        CHECK(q.head < 2u * capacity && q.tail < 2u * capacity);
    }
    while (mlvm_queue_pop(&q, &out) == MLVM_OK) {
        CHECK_EQ(out, next_out);
        ++next_out;
    }
    CHECK_EQ(next_out, next_in);
    CHECK_EQ(mlvm_queue_size(&q), 0);
}

void test_queue_wraparound(void)
{
    uint32_t caps[] = {1, 3, 5, 7, 8};
    size_t i;
    for (i = 0; i < sizeof caps / sizeof caps[0]; ++i)
        fifo_across_wraps(caps[i]);
}

void test_queue_init_limits(void)
{
    mlvm_queue_t q;
    int32_t storage[1];
    CHECK_EQ(mlvm_queue_init(&q, "q", 4, 0, storage), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_queue_init(&q, "q", 0, 1, storage), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_queue_init(&q, "q", 4, 1, NULL), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_queue_init(&q, "q", 4, 0x80000000u, storage), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_queue_init(&q, "q", SIZE_MAX / 2, 3, storage), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_queue_init(NULL, "q", 4, 1, storage), MLVM_ERR_INVALID);
}
