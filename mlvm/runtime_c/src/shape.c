/* Shapes: reference counting, and the VM's set of shared instances. */
#include <string.h>

#include "vm_impl.h"

size_t mlvm_shape_bytes(int32_t rank)
{
    return sizeof(mlvm_shape_t) + (size_t)rank * sizeof(int64_t);
}

/* Checked in every build: a shape is made at allocation time, not on the
 * hot path, and a size that overflows would make every later byte count lie. */
static int shape_args_ok(int32_t rank, const int64_t *dims)
{
    if (rank < 0 || rank > MLVM_MAX_RANK || (rank > 0 && dims == NULL))
        return 0;
    return mlvm_dims_size_(rank, dims) != SIZE_MAX;
}

static void shape_fill(mlvm_shape_t *s, const mlvm_allocator_t *alloc,
                       int32_t rank, const int64_t *dims)
{
    int32_t d;
    s->refs = 1;
    s->rank = rank;
    s->alloc = alloc;
    s->size = 1;
    for (d = 0; d < rank; ++d) {
        s->dims[d] = dims[d];
        s->size *= (size_t)dims[d];
    }
}

mlvm_shape_t *mlvm_shape_new(const mlvm_allocator_t *alloc, int32_t rank,
                             const int64_t *dims)
{
    mlvm_shape_t *s;
    if (alloc == NULL || !shape_args_ok(rank, dims))
        return NULL;
    s = (mlvm_shape_t *)alloc->alloc(alloc->ud, mlvm_shape_bytes(rank));
    if (s != NULL)
        shape_fill(s, alloc, rank, dims);
    return s;
}

mlvm_shape_t *mlvm_shape_incref(mlvm_shape_t *s)
{
    ++s->refs;
    return s;
}

void mlvm_shape_decref(mlvm_shape_t *s)
{
    if (s != NULL && --s->refs == 0)
        s->alloc->free(s->alloc->ud, s, mlvm_shape_bytes(s->rank));
}

static int dims_equal(const mlvm_shape_t *s, int32_t rank, const int64_t *dims)
{
    int32_t d;
    if (s->rank != rank)
        return 0;
    for (d = 0; d < rank; ++d)
        if (s->dims[d] != dims[d])
            return 0;
    return 1;
}

int mlvm_shape_equal(const mlvm_shape_t *a, const mlvm_shape_t *b)
{
    return a == b || dims_equal(a, b->rank, b->dims);
}

/* FNV-1a over the rank and the dims. */
static size_t dims_hash(int32_t rank, const int64_t *dims)
{
    uint32_t h = 2166136261u;
    int32_t d;
    int b;
    h = (h ^ (uint32_t)rank) * 16777619u;
    for (d = 0; d < rank; ++d) {
        uint64_t v = (uint64_t)dims[d];
        for (b = 0; b < 8; ++b, v >>= 8)
            h = (h ^ (uint32_t)(v & 0xffu)) * 16777619u;
    }
    return (size_t)h;
}

/* The entry for dims: the shape that has them, or the empty entry where they
 * go. shape_cap is a power of two and never full. */
static mlvm_shape_t **shape_slot(mlvm_shape_t **table, size_t cap,
                                 int32_t rank, const int64_t *dims)
{
    size_t i = dims_hash(rank, dims) & (cap - 1);
    while (table[i] != NULL && !dims_equal(table[i], rank, dims))
        i = (i + 1) & (cap - 1);
    return &table[i];
}

static int grow_shapes(mlvm_vm_t *vm)
{
    size_t cap = vm->shape_cap ? vm->shape_cap * 2 : 16, i;
    mlvm_shape_t **table;
    table = (mlvm_shape_t **)mlvm_vm_alloc_(vm, cap * sizeof *table);
    if (table == NULL)
        return 0;
    for (i = 0; i < cap; ++i)
        table[i] = NULL;
    for (i = 0; i < vm->shape_cap; ++i) {
        mlvm_shape_t *s = vm->shapes[i];
        if (s != NULL)
            *shape_slot(table, cap, s->rank, s->dims) = s;
    }
    mlvm_vm_release_(vm, vm->shapes, vm->shape_cap * sizeof *vm->shapes);
    vm->shapes = table;
    vm->shape_cap = cap;
    return 1;
}

mlvm_shape_t *mlvm_vm_shape_new(mlvm_vm_t *vm, int32_t rank,
                                const int64_t *dims)
{
    mlvm_shape_t **entry, *s;
    if (vm == NULL || !shape_args_ok(rank, dims))
        return NULL;
    if (vm->shape_cap > 0) {
        entry = shape_slot(vm->shapes, vm->shape_cap, rank, dims);
        if (*entry != NULL)
            return *entry;
    }
    /* Keep the load at most one half. */
    if (2 * (vm->nshapes + 1) > vm->shape_cap && !grow_shapes(vm))
        return NULL;
    s = (mlvm_shape_t *)mlvm_vm_alloc_(vm, mlvm_shape_bytes(rank));
    if (s == NULL)
        return NULL;
    shape_fill(s, vm->alloc, rank, dims);
    *shape_slot(vm->shapes, vm->shape_cap, rank, dims) = s;
    ++vm->nshapes;
    return s;
}
