/* The shared-memory communicator: ranks on threads of one process.
 *
 * Every collective publishes its buffers in the world, meets the others at
 * a barrier, reads its peers' buffers directly and meets them again before
 * its buffers may change. A large all_reduce is one pass over the
 * participants' own buffers: rank r reduces chunk r of every input and
 * writes the result into chunk r of every output (only rank r touches
 * chunk r, so an output may be its rank's input), so each rank reads n and
 * writes n elements whatever the number of ranks (a memcpy's traffic), and
 * nothing is copied to a staging buffer; results of STREAM_BYTES or more are
 * written with non-temporal stores (no read of the lines they fill).
 * Reductions run in rank order, so every rank gets the same bits. */
#include <string.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "mlvm/comm.h"
#include "mlvm/module.h" /* MLVM_F32, MLVM_I32 */

#if defined(__GNUC__) || defined(__clang__)
#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define FETCH_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#else /* one core: ranks interleave only at suspensions */
#define LOAD_ACQ(p) (*(p))
#define STORE_REL(p, v) (*(p) = (v))
#define FETCH_ADD(p, v) ((*(p) += (v)) - (v))
#endif

/* Elements reduced at a time, in a local accumulator, then streamed to each
 * output in turn: 64 (four lines per output) moved 2 x 64 MiB between two
 * ranks in 2.4-2.5 ms where 256 took 3.0-3.9 ms on the same machine, as
 * fast as one fused loop over the lines (bench/README.md). */
#define BLOCK 64
#define CHUNK_ALIGN 16

static mlvm_shm_world_t *world_of(mlvm_comm_t *c)
{
    return ((mlvm_shm_comm_t *)(void *)c)->world;
}

/* The barrier: 1 once every rank has arrived, 0 to suspend (retry later),
 * -1 when the world is poisoned (a rank failed and will never arrive). */
static int arrive(mlvm_shm_world_t *w, mlvm_coll_t *p)
{
    if (LOAD_ACQ(&w->poisoned))
        return -1;
    if (!p->waiting) {
        p->gen = LOAD_ACQ(&w->gen);
        p->waiting = 1;
        if (FETCH_ADD(&w->arrived, 1) == w->size - 1) {
            STORE_REL(&w->arrived, 0);
            STORE_REL(&w->gen, p->gen + 1);
        }
    }
    if (LOAD_ACQ(&w->gen) == p->gen)
        return 0;
    p->waiting = 0;
    return 1;
}

/* Suspends until every rank arrives; fails in a poisoned world. */
#define WAIT(w, p)                                                             \
    do {                                                                       \
        const int a_ = arrive((w), (p));                                       \
        if (a_ <= 0)                                                           \
            return a_ < 0 ? MLVM_ERR_INVALID : MLVM_SUSPENDED;                 \
    } while (0)

/* Start of rank r's chunk of n elements (aligned, so chunks share no line). */
static size_t chunk(size_t n, int32_t r, int32_t size)
{
    size_t lo;
    if (r >= size)
        return n;
    lo = (size_t)((double)n * r / size);
    lo -= lo % CHUNK_ALIGN;
    return lo;
}

/* The reductions, as expressions of the running value `a` and the next
 * rank's `b` (rank order: every rank gets the same bits). A NaN wins max
 * and min; integer sums wrap, as everywhere in mlvm. */
#define SUM_F32(a, b) ((a) + (b))
#define MAX_F32(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define MIN_F32(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))
#define SUM_I32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define MAX_I32(a, b) ((a) > (b) ? (a) : (b))
#define MIN_I32(a, b) ((a) < (b) ? (a) : (b))

/* Results at least this large are written past the caches (non-temporal
 * stores): the caller reads them long after, and the stores then need no
 * read of the line they fill. */
#define STREAM_BYTES ((size_t)4 << 20)

/* dst[0, bytes) = src[0, bytes), streamed past the caches when `stream`. */
static void store_block(void *dst, const void *src, size_t bytes, int stream)
{
#if defined(__SSE2__)
    if (stream) {
        unsigned char *d = (unsigned char *)dst;
        const unsigned char *s = (const unsigned char *)src;
        size_t head = (16 - (uintptr_t)d % 16) % 16;
        if (head > bytes)
            head = bytes;
        memcpy(d, s, head);
        for (d += head, s += head, bytes -= head; bytes >= 16; d += 16, s += 16, bytes -= 16)
            _mm_stream_si128((__m128i *)(void *)d, _mm_loadu_si128((const __m128i *)(const void *)s));
        memcpy(d, s, bytes);
        return;
    }
#endif
    (void)stream;
    memcpy(dst, src, bytes);
}

/* Blocks of [lo, hi): acc = ins[0] OP ins[1] OP ..., then FINISH(acc[k]),
 * then acc stored into every output. A block is read whole before it is
 * written, so an output may be one of the inputs. */
#define REDUCE_BLOCKS(T, OP, FINISH)                                              \
    for (i = lo; i < hi; i += n) {                                                \
        T acc[BLOCK];                                                             \
        const T *x0 = (const T *)ins[0] + offset + i;                             \
        n = hi - i < BLOCK ? hi - i : BLOCK;                                      \
        if (size == 1) {                                                          \
            memcpy(acc, x0, n * sizeof(T));                                       \
        } else {                                                                  \
            const T *x1 = (const T *)ins[1] + offset + i;                         \
            for (k = 0; k < n; ++k)                                               \
                acc[k] = OP(x0[k], x1[k]);                                        \
        }                                                                         \
        for (r = 2; r < size; ++r) {                                              \
            const T *x = (const T *)ins[r] + offset + i;                          \
            for (k = 0; k < n; ++k)                                               \
                acc[k] = OP(acc[k], x[k]);                                        \
        }                                                                         \
        for (k = 0; k < n; ++k)                                                   \
            acc[k] = FINISH(acc[k]);                                              \
        for (j = 0; j < nout; ++j)                                                \
            store_block((T *)outs[j] + i, acc, n * sizeof(T), stream);            \
    }

#define AS_IS(v) (v)
#define MEAN_OF(v) ((v) / (float)size)

/* outs[j][i] = in_0[i] (op) in_1[i] ... for i in [lo, hi) and each of the
 * nout outputs, reading every rank's input (ins[r]) at `offset` elements. */
static void reduce_range(const mlvm_shm_world_t *w, const void *const volatile *ins, int32_t kind,
                         int32_t dtype, size_t offset, void *const volatile *outs, int32_t nout,
                         size_t lo, size_t hi)
{
    const int32_t size = w->size;
    const int stream = (hi - lo) * 4 * (size_t)nout >= STREAM_BYTES;
    size_t i, k, n;
    int32_t r, j;
    if (dtype == MLVM_I32) {
        switch (kind) {
        case MLVM_REDUCE_MAX:
            REDUCE_BLOCKS(int32_t, MAX_I32, AS_IS)
            break;
        case MLVM_REDUCE_MIN:
            REDUCE_BLOCKS(int32_t, MIN_I32, AS_IS)
            break;
        default:
            REDUCE_BLOCKS(int32_t, SUM_I32, AS_IS)
        }
    } else {
        switch (kind) {
        case MLVM_REDUCE_MAX:
            REDUCE_BLOCKS(float, MAX_F32, AS_IS)
            break;
        case MLVM_REDUCE_MIN:
            REDUCE_BLOCKS(float, MIN_F32, AS_IS)
            break;
        case MLVM_REDUCE_MEAN:
            REDUCE_BLOCKS(float, SUM_F32, MEAN_OF)
            break;
        default:
            REDUCE_BLOCKS(float, SUM_F32, AS_IS)
        }
    }
#if defined(__SSE2__)
    if (stream)
        _mm_sfence(); /* the streamed stores land before the barrier says so */
#endif
}

/* Small all_reduce: each rank copies its operand into its staging slot,
 * meets the others once, and reduces every slot itself. */
static mlvm_status_t staged_all_reduce(mlvm_comm_t *c, mlvm_coll_t *p, int32_t kind, int32_t dtype,
                                       const void *in, void *out, size_t count)
{
    mlvm_shm_comm_t *sc = (mlvm_shm_comm_t *)(void *)c;
    mlvm_shm_world_t *w = sc->world;
    const void *ins[MLVM_SHM_MAX_RANKS];
    const int32_t g = (int32_t)(sc->staged & 1u);
    int32_t r;
    if (p->phase == 0) {
        if (count > 0)
            memcpy(w->stage[g][c->rank], in, count * 4);
        p->phase = 1;
    }
    WAIT(w, p);
    for (r = 0; r < w->size; ++r)
        ins[r] = w->stage[g][r];
    reduce_range(w, ins, kind, dtype, 0, &out, 1, 0, count);
    ++sc->staged;
    p->phase = 0;
    return MLVM_OK;
}

static mlvm_status_t shm_all_reduce(mlvm_comm_t *c, mlvm_coll_t *p, int32_t kind, int32_t dtype,
                                    const void *in, void *out, size_t count)
{
    mlvm_shm_world_t *w = world_of(c);
    if (count * 4 <= MLVM_SHM_STAGE_BYTES)
        return staged_all_reduce(c, p, kind, dtype, in, out, count);
    const int32_t me = c->rank;
    switch (p->phase) {
    case 0:
        w->in[me] = in;
        w->out[me] = out;
        p->phase = 1;
        /* fall through */
    case 1:
        WAIT(w, p);
        reduce_range(w, w->in, kind, dtype, 0, w->out, w->size, chunk(count, me, w->size),
                     chunk(count, me + 1, w->size));
        p->phase = 2;
        /* fall through */
    default:
        WAIT(w, p);
        p->phase = 0;
        return MLVM_OK;
    }
}

static mlvm_status_t shm_all_gather(mlvm_comm_t *c, mlvm_coll_t *p, const void *in, void *out,
                                    size_t outer, size_t block)
{
    mlvm_shm_world_t *w = world_of(c);
    const size_t n = (size_t)w->size;
    size_t a;
    int32_t r;
    switch (p->phase) {
    case 0:
        w->in[c->rank] = in;
        p->phase = 1;
        /* fall through */
    case 1:
        WAIT(w, p);
        for (a = 0; a < outer && block > 0; ++a)
            for (r = 0; r < w->size; ++r)
                memcpy((unsigned char *)out + (a * n + (size_t)r) * block,
                       (const unsigned char *)w->in[r] + a * block, block);
        p->phase = 2;
        /* fall through */
    default:
        WAIT(w, p);
        p->phase = 0;
        return MLVM_OK;
    }
}

static mlvm_status_t shm_reduce_scatter(mlvm_comm_t *c, mlvm_coll_t *p, int32_t kind,
                                        int32_t dtype, const void *in, void *out, size_t outer,
                                        size_t count)
{
    mlvm_shm_world_t *w = world_of(c);
    const size_t n = (size_t)w->size;
    size_t a;
    switch (p->phase) {
    case 0:
        w->in[c->rank] = in;
        p->phase = 1;
        /* fall through */
    case 1:
        WAIT(w, p);
        for (a = 0; a < outer; ++a) {
            void *dst = (unsigned char *)out + a * count * 4;
            reduce_range(w, w->in, kind, dtype, (a * n + (size_t)c->rank) * count, &dst, 1, 0, count);
        }
        p->phase = 2;
        /* fall through */
    default:
        WAIT(w, p);
        p->phase = 0;
        return MLVM_OK;
    }
}

static mlvm_status_t shm_broadcast(mlvm_comm_t *c, mlvm_coll_t *p, int32_t root, const void *in,
                                   void *out, size_t bytes)
{
    mlvm_shm_world_t *w = world_of(c);
    switch (p->phase) {
    case 0:
        w->in[c->rank] = in;
        p->phase = 1;
        /* fall through */
    case 1:
        WAIT(w, p);
        if (out != w->in[root] && bytes > 0)
            memcpy(out, w->in[root], bytes);
        p->phase = 2;
        /* fall through */
    default:
        WAIT(w, p);
        p->phase = 0;
        return MLVM_OK;
    }
}

static mlvm_status_t shm_barrier(mlvm_comm_t *c, mlvm_coll_t *p)
{
    const int a = arrive(world_of(c), p);
    return a > 0 ? MLVM_OK : a < 0 ? MLVM_ERR_INVALID : MLVM_SUSPENDED;
}

/* send posts the buffer in the (me, peer) slot and waits until it is taken. */
static mlvm_status_t shm_send(mlvm_comm_t *c, mlvm_coll_t *p, int32_t peer, int32_t tag,
                              const void *buf, size_t bytes)
{
    mlvm_shm_slot_t *s = &world_of(c)->slots[c->rank][peer];
    if (LOAD_ACQ(&world_of(c)->poisoned))
        return MLVM_ERR_INVALID;
    if (p->phase == 0) {
        if (LOAD_ACQ(&s->full))
            return MLVM_SUSPENDED; /* the previous message is not taken yet */
        s->data = buf;
        s->bytes = bytes;
        s->tag = tag;
        STORE_REL(&s->full, 1);
        p->phase = 1;
    }
    if (LOAD_ACQ(&s->full))
        return MLVM_SUSPENDED;
    p->phase = 0;
    return MLVM_OK;
}

static mlvm_status_t shm_recv(mlvm_comm_t *c, mlvm_coll_t *p, int32_t peer, int32_t tag,
                              void *buf, size_t bytes)
{
    mlvm_shm_slot_t *s = &world_of(c)->slots[peer][c->rank];
    (void)p;
    if (LOAD_ACQ(&world_of(c)->poisoned))
        return MLVM_ERR_INVALID;
    if (!LOAD_ACQ(&s->full))
        return MLVM_SUSPENDED;
    if (s->tag != tag || s->bytes != bytes)
        return s->tag != tag ? MLVM_ERR_INVALID : MLVM_ERR_SHAPE;
    if (bytes > 0)
        memcpy(buf, s->data, bytes);
    STORE_REL(&s->full, 0);
    return MLVM_OK;
}

static const mlvm_comm_ops_t shm_ops = {
    shm_all_reduce, shm_all_gather, shm_reduce_scatter, shm_broadcast,
    shm_barrier, shm_send, shm_recv,
};

mlvm_status_t mlvm_shm_world_init(mlvm_shm_world_t *w, int32_t size)
{
    if (w == NULL || size < 1 || size > MLVM_SHM_MAX_RANKS)
        return MLVM_ERR_INVALID;
    memset(w, 0, sizeof *w);
    w->size = size;
    return MLVM_OK;
}

void mlvm_shm_world_poison(mlvm_shm_world_t *w)
{
    if (w != NULL)
        STORE_REL(&w->poisoned, 1);
}

mlvm_status_t mlvm_shm_comm_init(mlvm_shm_comm_t *c, mlvm_shm_world_t *w, int32_t rank)
{
    if (c == NULL || w == NULL || rank < 0 || rank >= w->size)
        return MLVM_ERR_INVALID;
    c->base.ops = &shm_ops;
    c->base.rank = rank;
    c->base.size = w->size;
    c->world = w;
    c->staged = 0;
    return MLVM_OK;
}

size_t mlvm_shm_world_bytes(void)
{
    return sizeof(mlvm_shm_world_t);
}

size_t mlvm_shm_comm_bytes(void)
{
    return sizeof(mlvm_shm_comm_t);
}
