/* Bounded queues of fixed-size elements, owned by the runtime's user.
 *
 * One producer and one consumer: push and pop never block; they answer
 * MLVM_SUSPENDED when the queue is full / empty, and a generated call that
 * meets that suspends. The producer may be another thread (or an interrupt
 * handler): the indices are published with release/acquire ordering where
 * the compiler offers atomics, so the queue is lock-free single-producer /
 * single-consumer. Storage is the caller's: no allocation. */
#ifndef MLVM_QUEUE_H_
#define MLVM_QUEUE_H_

#include <stddef.h>
#include <stdint.h>

#include "mlvm/status.h"

typedef struct mlvm_queue {
    const char *name;        /* matched against a module's queue names */
    size_t elem_bytes;
    uint32_t capacity;       /* elements */
    unsigned char *storage;  /* capacity * elem_bytes bytes */
    volatile uint32_t head;  /* next pop, mod 2 * capacity (consumer-owned) */
    volatile uint32_t tail;  /* next push, mod 2 * capacity (producer-owned) */
} mlvm_queue_t;

/* Returns MLVM_ERR_INVALID for a zero capacity or element size, a capacity
 * over 2^31 - 1, or storage bytes that overflow size_t. */
mlvm_status_t mlvm_queue_init(mlvm_queue_t *q, const char *name, size_t elem_bytes,
                              uint32_t capacity, void *storage);
/* MLVM_OK, or MLVM_SUSPENDED when full (nothing copied). */
mlvm_status_t mlvm_queue_push(mlvm_queue_t *q, const void *elem);
/* MLVM_OK, or MLVM_SUSPENDED when empty (nothing copied). */
mlvm_status_t mlvm_queue_pop(mlvm_queue_t *q, void *elem);
uint32_t mlvm_queue_size(const mlvm_queue_t *q);

#endif /* MLVM_QUEUE_H_ */
