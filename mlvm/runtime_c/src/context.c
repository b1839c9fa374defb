#include <string.h>

#include "mlvm/context.h"

/* What identifies the importing call: the buffers it passes (its results
 * are in its own arena or outputs, which no other call in flight shares). */
static const void *token(const mlvm_export_t *fn, void *const *args, void *const *results)
{
    if (fn->num_outputs > 0)
        return results[0];
    return fn->num_inputs > 0 ? args[0] : NULL;
}

mlvm_status_t mlvm_link_call(void *user, void *const *args, void *const *results)
{
    mlvm_link_t *l = (mlvm_link_t *)user;
    const void *me = token(l->fn, args, results);
    mlvm_status_t st;
    if (l->running && l->owner != me)
        return MLVM_ERR_BUSY; /* another call is suspended in this link */
    if (!l->running) {
        l->owner = me;
        st = l->fn->begin(l->call, l->target, l->arena, args, results);
    } else {
        st = l->fn->resume(l->call);
    }
    l->running = st == MLVM_SUSPENDED;
    return st;
}

void mlvm_link_reset(mlvm_link_t *link)
{
    if (link != NULL) {
        link->running = 0;
        link->owner = NULL;
    }
}

static int same_tensor(const mlvm_tensor_desc_t *a, const mlvm_tensor_desc_t *b)
{
    int32_t d;
    if (a->dtype != b->dtype || a->rank != b->rank)
        return 0;
    for (d = 0; d < a->rank; ++d)
        if (a->dims[d] != b->dims[d])
            return 0;
    return 1;
}

int mlvm_signature_matches(const mlvm_import_desc_t *imp, const mlvm_export_t *exp)
{
    int32_t k;
    if (imp->num_args != exp->num_inputs || imp->num_results != exp->num_outputs)
        return 0;
    for (k = 0; k < imp->num_args; ++k)
        if (!same_tensor(&imp->args[k], &exp->inputs[k]))
            return 0;
    for (k = 0; k < imp->num_results; ++k)
        if (!same_tensor(&imp->results[k], &exp->outputs[k]))
            return 0;
    return 1;
}

/* One module of the context and the blocks made for it (one list). */
typedef struct entry {
    struct entry *prev;
    mlvm_instance_t inst;
    const mlvm_native_t **slots;
    unsigned char *state_block;   /* state_bytes + alignment slack */
    mlvm_link_t *links;           /* one per import (unused ones zero) */
    unsigned char **blocks;       /* arenas and call states of the links */
    int32_t num_blocks;
} entry_t;

struct mlvm_context {
    const mlvm_allocator_t *alloc;
    entry_t *last;
};

mlvm_context_t *mlvm_context_new(const mlvm_allocator_t *alloc)
{
    mlvm_context_t *ctx;
    if (alloc == NULL)
        return NULL;
    ctx = (mlvm_context_t *)alloc->alloc(alloc->ud, sizeof *ctx);
    if (ctx == NULL)
        return NULL;
    ctx->alloc = alloc;
    ctx->last = NULL;
    return ctx;
}

static void *zalloc(const mlvm_allocator_t *a, size_t n)
{
    void *p = a->alloc(a->ud, n > 0 ? n : 1);
    if (p != NULL)
        memset(p, 0, n > 0 ? n : 1);
    return p;
}

/* A block of n bytes whose usable start is MLVM_ARENA_ALIGN-aligned; the
 * raw block goes to e->blocks for release (its size is kept before it). */
static void *aligned_block(const mlvm_allocator_t *a, entry_t *e, size_t n)
{
    const size_t total = n + MLVM_ARENA_ALIGN + sizeof(size_t);
    unsigned char *raw = (unsigned char *)zalloc(a, total);
    uintptr_t start;
    if (raw == NULL)
        return NULL;
    memcpy(raw, &total, sizeof total);
    e->blocks[e->num_blocks++] = raw;
    start = ((uintptr_t)(raw + sizeof(size_t)) + MLVM_ARENA_ALIGN - 1)
            & ~(uintptr_t)(MLVM_ARENA_ALIGN - 1);
    return (void *)start;
}

static void entry_free(const mlvm_allocator_t *a, entry_t *e)
{
    int32_t k;
    const int32_t n = e->inst.module != NULL ? e->inst.module->num_imports : 0;
    for (k = 0; k < e->num_blocks; ++k) {
        size_t total;
        memcpy(&total, e->blocks[k], sizeof total);
        a->free(a->ud, e->blocks[k], total);
    }
    if (e->blocks != NULL)
        a->free(a->ud, e->blocks, (size_t)(2 * n + 1) * sizeof *e->blocks);
    if (e->links != NULL)
        a->free(a->ud, e->links, (size_t)(n > 0 ? n : 1) * sizeof *e->links);
    if (e->slots != NULL)
        a->free(a->ud, (void *)e->slots, (size_t)(n > 0 ? n : 1) * sizeof *e->slots);
    a->free(a->ud, e, sizeof *e);
}

/* The export `name` ("f" or "module.f") of the latest earlier module that has it. */
static const mlvm_export_t *find_export(const entry_t *last, const char *name,
                                        const mlvm_instance_t **owner)
{
    const entry_t *e;
    for (e = last; e != NULL; e = e->prev) {
        const mlvm_module_t *m = e->inst.module;
        const size_t mlen = strlen(m->name);
        const char *fn = name;
        int32_t k;
        if (strncmp(name, m->name, mlen) == 0 && name[mlen] == '.')
            fn = name + mlen + 1;
        for (k = 0; k < m->num_exports; ++k) {
            if (strcmp(m->exports[k].name, fn) == 0) {
                *owner = &e->inst;
                return &m->exports[k];
            }
        }
    }
    return NULL;
}

static mlvm_status_t bind_imports(mlvm_context_t *ctx, entry_t *e, const mlvm_native_t *natives,
                                  size_t num_natives, const char **what)
{
    const mlvm_module_t *m = e->inst.module;
    int32_t i;
    for (i = 0; i < m->num_imports; ++i) {
        const mlvm_import_desc_t *imp = &m->imports[i];
        const mlvm_instance_t *owner = NULL;
        const mlvm_export_t *exp = find_export(ctx->last, imp->name, &owner);
        size_t k;
        if (exp != NULL) {
            mlvm_link_t *l = &e->links[i];
            if (!mlvm_signature_matches(imp, exp)) {
                *what = imp->name;
                return MLVM_ERR_SHAPE;
            }
            l->native.name = imp->name;
            l->native.fn = mlvm_link_call;
            l->native.user = l;
            l->target = owner;
            l->fn = exp;
            l->arena = aligned_block(ctx->alloc, e, exp->arena_bytes);
            l->call = aligned_block(ctx->alloc, e, exp->call_bytes);
            if (l->arena == NULL || l->call == NULL)
                return MLVM_ERR_NOMEM;
            e->slots[i] = &l->native;
            continue;
        }
        for (k = 0; k < num_natives; ++k)
            if (natives[k].name != NULL && strcmp(natives[k].name, imp->name) == 0)
                e->slots[i] = &natives[k];
        if (e->slots[i] == NULL) {
            *what = imp->name;
            return MLVM_ERR_IMPORT;
        }
    }
    return MLVM_OK;
}

mlvm_status_t mlvm_context_add(mlvm_context_t *ctx, const mlvm_module_t *module,
                               const mlvm_native_t *natives, size_t num_natives,
                               mlvm_instance_t **out, const char **what)
{
    const char *ignored = NULL;
    entry_t *e;
    int32_t n;
    mlvm_status_t st;
    if (what == NULL)
        what = &ignored;
    if (ctx == NULL || module == NULL || out == NULL || module->magic != MLVM_MODULE_MAGIC
        || module->num_imports < 0 || module->num_queues != 0
        || (num_natives > 0 && natives == NULL))
        return MLVM_ERR_INVALID;
    n = module->num_imports;
    e = (entry_t *)zalloc(ctx->alloc, sizeof *e);
    if (e == NULL)
        return MLVM_ERR_NOMEM;
    e->inst.module = module;
    e->slots = (const mlvm_native_t **)zalloc(ctx->alloc, (size_t)(n > 0 ? n : 1) * sizeof *e->slots);
    e->links = (mlvm_link_t *)zalloc(ctx->alloc, (size_t)(n > 0 ? n : 1) * sizeof *e->links);
    e->blocks = (unsigned char **)zalloc(ctx->alloc, (size_t)(2 * n + 1) * sizeof *e->blocks);
    if (e->slots == NULL || e->links == NULL || e->blocks == NULL) {
        entry_free(ctx->alloc, e);
        return MLVM_ERR_NOMEM;
    }
    e->inst.imports = e->slots;
    st = bind_imports(ctx, e, natives, num_natives, what);
    if (st == MLVM_OK && module->state_bytes > 0) {
        void *state = aligned_block(ctx->alloc, e, module->state_bytes);
        st = state == NULL ? MLVM_ERR_NOMEM
                           : mlvm_instance_bind_state(&e->inst, state, module->state_bytes);
    }
    if (st != MLVM_OK) {
        entry_free(ctx->alloc, e);
        return st;
    }
    e->prev = ctx->last;
    ctx->last = e;
    *out = &e->inst;
    return MLVM_OK;
}

mlvm_instance_t *mlvm_context_find(const mlvm_context_t *ctx, const char *name)
{
    entry_t *e;
    if (ctx == NULL || name == NULL)
        return NULL;
    for (e = ctx->last; e != NULL; e = e->prev)
        if (strcmp(e->inst.module->name, name) == 0)
            return &e->inst;
    return NULL;
}

void mlvm_context_free(mlvm_context_t *ctx)
{
    if (ctx == NULL)
        return;
    while (ctx->last != NULL) {
        entry_t *e = ctx->last;
        ctx->last = e->prev;
        entry_free(ctx->alloc, e);
    }
    ctx->alloc->free(ctx->alloc->ud, ctx, sizeof *ctx);
}
