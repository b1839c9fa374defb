/* The default allocator: malloc and free. The only runtime source that needs
 * <stdlib.h>; compiled to nothing with MLVM_NO_STDLIB (bare metal). */
#include "mlvm/alloc.h"

#ifndef MLVM_NO_STDLIB
#include <stdlib.h>

static void *std_alloc(void *ud, size_t nbytes)
{
    (void)ud;
    return malloc(nbytes);
}

static void std_free(void *ud, void *ptr, size_t nbytes)
{
    (void)ud;
    (void)nbytes;
    free(ptr);
}

static const mlvm_allocator_t std_allocator = {std_alloc, std_free, NULL};

const mlvm_allocator_t *mlvm_allocator_std(void)
{
    return &std_allocator;
}
#else
/* ISO C wants at least one declaration per translation unit. */
typedef int mlvm_alloc_std_unused_t;
#endif
