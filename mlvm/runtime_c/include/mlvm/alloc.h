/* Allocators: where a VM's memory comes from.
 *
 * A VM never calls malloc itself: it takes an allocator, a pair of function
 * pointers with user data, so firmware can hand it a pool, a static buffer
 * or an RTOS heap. The allocator struct must outlive the VM and every shape
 * made from it. */
#ifndef MLVM_ALLOC_H_
#define MLVM_ALLOC_H_

#include <stddef.h>

typedef struct mlvm_allocator {
    /* nbytes > 0. Returns memory aligned for any scalar type (as malloc
     * does), or NULL when out of memory. */
    void *(*alloc)(void *ud, size_t nbytes);
    /* Releases a block from `alloc`; nbytes is the size it was asked for. */
    void (*free)(void *ud, void *ptr, size_t nbytes);
    void *ud;
} mlvm_allocator_t;

#ifndef MLVM_NO_STDLIB
/* malloc / free (src/alloc_std.c, the only runtime file that needs
 * <stdlib.h>; leave it out, or define MLVM_NO_STDLIB, on bare metal).
 * Stateless and shared: safe to use from any thread. */
const mlvm_allocator_t *mlvm_allocator_std(void);
#endif

#endif /* MLVM_ALLOC_H_ */
