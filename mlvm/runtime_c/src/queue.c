/* Lock-free single-producer / single-consumer ring buffer.
 * head and tail count up forever (mod 2^32); size = tail - head. */
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
    if (q == NULL || storage == NULL || elem_bytes == 0 || capacity == 0)
        return MLVM_ERR_INVALID;
    q->name = name;
    q->elem_bytes = elem_bytes;
    q->capacity = capacity;
    q->storage = (unsigned char *)storage;
    q->head = 0;
    q->tail = 0;
    return MLVM_OK;
}

mlvm_status_t mlvm_queue_push(mlvm_queue_t *q, const void *elem)
{
    const uint32_t tail = q->tail;
    const uint32_t head = LOAD_ACQUIRE(&q->head);
    if (tail - head >= q->capacity)
        return MLVM_SUSPENDED;
    memcpy(q->storage + (size_t)(tail % q->capacity) * q->elem_bytes, elem, q->elem_bytes);
    STORE_RELEASE(&q->tail, tail + 1u);
    return MLVM_OK;
}

mlvm_status_t mlvm_queue_pop(mlvm_queue_t *q, void *elem)
{
    const uint32_t head = q->head;
    const uint32_t tail = LOAD_ACQUIRE(&q->tail);
    if (tail == head)
        return MLVM_SUSPENDED;
    memcpy(elem, q->storage + (size_t)(head % q->capacity) * q->elem_bytes, q->elem_bytes);
    STORE_RELEASE(&q->head, head + 1u);
    return MLVM_OK;
}

uint32_t mlvm_queue_size(const mlvm_queue_t *q)
{
    return LOAD_ACQUIRE(&q->tail) - LOAD_ACQUIRE(&q->head);
}
