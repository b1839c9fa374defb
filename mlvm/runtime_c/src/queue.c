/* Lock-free single-producer / single-consumer ring buffer.
 *
 * head and tail count modulo 2 * capacity: slot = counter mod capacity, and
 * size = (tail - head) mod 2 * capacity tells a full ring from an empty one.
 * (Free-running 32-bit counters would need a power-of-two capacity: with any
 * other, `counter % capacity` jumps when the counter wraps at 2^32.) */
#include <string.h>

#include "mlvm/queue.h"

#if defined(__GNUC__) || defined(__clang__)
#define LOAD_ACQUIRE(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#else /* single core: volatile accesses keep the order */
#define LOAD_ACQUIRE(p) (*(p))
#define STORE_RELEASE(p, v) (*(p) = (v))
#endif

mlvm_status_t mlvm_queue_init(mlvm_queue_t *q, const char *name, size_t elem_bytes,
                              uint32_t capacity, void *storage)
{
    if (q == NULL || storage == NULL || elem_bytes == 0 || capacity == 0 ||
        capacity > UINT32_MAX / 2u || elem_bytes > SIZE_MAX / capacity)
        return MLVM_ERR_INVALID;
    q->name = name;
    q->elem_bytes = elem_bytes;
    q->capacity = capacity;
    q->storage = (unsigned char *)storage;
    q->head = 0;
    q->tail = 0;
    return MLVM_OK;
}

/* Counters live in [0, 2 * capacity). */
static uint32_t distance(uint32_t tail, uint32_t head, uint32_t capacity)
{
    return tail >= head ? tail - head : tail + 2u * capacity - head;
}

static uint32_t next(uint32_t counter, uint32_t capacity)
{
    return counter + 1u == 2u * capacity ? 0u : counter + 1u;
}

static size_t slot(uint32_t counter, uint32_t capacity)
{
    return counter < capacity ? counter : counter - capacity;
}

mlvm_status_t mlvm_queue_push(mlvm_queue_t *q, const void *elem)
{
    const uint32_t tail = q->tail;
    const uint32_t head = LOAD_ACQUIRE(&q->head);
    if (distance(tail, head, q->capacity) >= q->capacity)
        return MLVM_SUSPENDED;
    memcpy(q->storage + slot(tail, q->capacity) * q->elem_bytes, elem, q->elem_bytes);
    STORE_RELEASE(&q->tail, next(tail, q->capacity));
    return MLVM_OK;
}

mlvm_status_t mlvm_queue_pop(mlvm_queue_t *q, void *elem)
{
    const uint32_t head = q->head;
    const uint32_t tail = LOAD_ACQUIRE(&q->tail);
    if (tail == head)
        return MLVM_SUSPENDED;
    memcpy(elem, q->storage + slot(head, q->capacity) * q->elem_bytes, q->elem_bytes);
    STORE_RELEASE(&q->head, next(head, q->capacity));
    return MLVM_OK;
}

uint32_t mlvm_queue_size(const mlvm_queue_t *q)
{
    return distance(LOAD_ACQUIRE(&q->tail), LOAD_ACQUIRE(&q->head), q->capacity);
}
