/* Arenas over caller memory: a cursor, a peak, no allocation. */
#include <stdint.h>

#include "mlvm/arena.h"

void mlvm_arena_init(mlvm_arena_t *a, void *mem, size_t size)
{
    a->base = (unsigned char *)mem;
    a->size = size;
    a->used = 0;
    a->peak = 0;
}

void *mlvm_arena_alloc(mlvm_arena_t *a, size_t nbytes, size_t align)
{
    const uintptr_t base = (uintptr_t)a->base;
    uintptr_t at;
    size_t start;
    if (align == 0)
        align = 1;
    if ((align & (align - 1)) != 0 || align > a->size + 1)
        return NULL; /* not a power of two (or beyond any fit): refused, not misaligned */
    at = (base + a->used + (align - 1)) & ~(uintptr_t)(align - 1);
    start = (size_t)(at - base);
    if (start > a->size || nbytes > a->size - start)
        return NULL;
    a->used = start + nbytes;
    if (a->used > a->peak)
        a->peak = a->used;
    return a->base + start;
}

void mlvm_arena_reset(mlvm_arena_t *a)
{
    a->used = 0;
}

size_t mlvm_arena_mark(const mlvm_arena_t *a)
{
    return a->used;
}

void mlvm_arena_release(mlvm_arena_t *a, size_t mark)
{
    if (mark < a->used)
        a->used = mark;
}
