/* The MPI communicator (see mlvm/comm_mpi.h). */
#include <string.h>

#include "mlvm/comm_mpi.h"
#include "mlvm/module.h"

#ifdef MLVM_WITH_MPI
#include <stdlib.h> /* realloc: MPI builds are hosted */

static mlvm_mpi_comm_t *mpi_of(mlvm_comm_t *c)
{
    return (mlvm_mpi_comm_t *)(void *)c;
}

static MPI_Op op_of(int32_t kind)
{
    return kind == MLVM_REDUCE_MAX ? MPI_MAX : kind == MLVM_REDUCE_MIN ? MPI_MIN : MPI_SUM;
}

static MPI_Datatype type_of(int32_t dtype)
{
    return dtype == MLVM_I32 ? MPI_INT32_T : MPI_FLOAT;
}

/* Phase 1: the started operation, tested; the rest when it completes. */
static mlvm_status_t test(mlvm_mpi_comm_t *m, mlvm_coll_t *p)
{
    int done = 0;
    if (MPI_Test(&m->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return MLVM_ERR_INVALID;
    if (!done)
        return MLVM_SUSPENDED;
    p->phase = 0;
    if (m->type != MPI_DATATYPE_NULL)
        MPI_Type_free(&m->type);
    return MLVM_OK;
}

static mlvm_status_t started(mlvm_mpi_comm_t *m, mlvm_coll_t *p, int rc)
{
    if (rc != MPI_SUCCESS)
        return MLVM_ERR_INVALID;
    p->phase = 1;
    return test(m, p);
}

/* A buffer of n bytes kept by the communicator (grown as needed). */
static void *scratch(mlvm_mpi_comm_t *m, size_t n)
{
    if (m->scratch_bytes < n) {
        void *b = realloc(m->scratch, n);
        if (b == NULL)
            return NULL;
        m->scratch = b;
        m->scratch_bytes = n;
    }
    return m->scratch;
}

static mlvm_status_t mpi_all_reduce(mlvm_comm_t *c, mlvm_coll_t *p, int32_t kind, int32_t dtype,
                                    const void *in, void *out, size_t count)
{
    mlvm_mpi_comm_t *m = mpi_of(c);
    mlvm_status_t st;
    size_t i;
    if (p->phase == 0) {
        const void *src = in == out ? MPI_IN_PLACE : in;
        st = started(m, p, MPI_Iallreduce(src, out, (int)count, type_of(dtype), op_of(kind),
                                          m->comm, &m->req));
    } else {
        st = test(m, p);
    }
    if (st == MLVM_OK && kind == MLVM_REDUCE_MEAN)
        for (i = 0; i < count; ++i)
            ((float *)out)[i] = ((float *)out)[i] / (float)c->size;
    return st;
}

static mlvm_status_t mpi_all_gather(mlvm_comm_t *c, mlvm_coll_t *p, const void *in, void *out,
                                    size_t outer, size_t block)
{
    mlvm_mpi_comm_t *m = mpi_of(c);
    MPI_Datatype vec;
    if (p->phase != 0)
        return test(m, p);
    /* Rank r's outer blocks land every size * block bytes, from r * block. */
    if (MPI_Type_vector((int)outer, (int)block, (int)(block * (size_t)c->size), MPI_BYTE, &vec)
            != MPI_SUCCESS
        || MPI_Type_create_resized(vec, 0, (MPI_Aint)block, &m->type) != MPI_SUCCESS)
        return MLVM_ERR_INVALID;
    MPI_Type_free(&vec);
    MPI_Type_commit(&m->type);
    return started(m, p, MPI_Iallgather(in, (int)(outer * block), MPI_BYTE, out, 1, m->type,
                                        m->comm, &m->req));
}

static mlvm_status_t mpi_reduce_scatter(mlvm_comm_t *c, mlvm_coll_t *p, int32_t kind,
                                        int32_t dtype, const void *in, void *out, size_t outer,
                                        size_t count)
{
    mlvm_mpi_comm_t *m = mpi_of(c);
    const size_t n = (size_t)c->size, bytes = count * 4;
    mlvm_status_t st;
    size_t a, r, i;
    if (p->phase == 0) {
        /* MPI wants rank r's part contiguous: [outer][size][count] -> [size][outer][count]. */
        unsigned char *t = (unsigned char *)scratch(m, outer * n * bytes + 1);
        if (t == NULL)
            return MLVM_ERR_NOMEM;
        for (a = 0; a < outer; ++a)
            for (r = 0; r < n; ++r)
                memcpy(t + (r * outer + a) * bytes, (const unsigned char *)in + (a * n + r) * bytes, bytes);
        st = started(m, p, MPI_Ireduce_scatter_block(t, out, (int)(outer * count), type_of(dtype),
                                                     op_of(kind), m->comm, &m->req));
    } else {
        st = test(m, p);
    }
    if (st == MLVM_OK && kind == MLVM_REDUCE_MEAN)
        for (i = 0; i < outer * count; ++i)
            ((float *)out)[i] = ((float *)out)[i] / (float)c->size;
    return st;
}

static mlvm_status_t mpi_broadcast(mlvm_comm_t *c, mlvm_coll_t *p, int32_t root, const void *in,
                                   void *out, size_t bytes)
{
    mlvm_mpi_comm_t *m = mpi_of(c);
    if (p->phase != 0)
        return test(m, p);
    if (c->rank == root && in != out && bytes > 0)
        memcpy(out, in, bytes);
    return started(m, p, MPI_Ibcast(out, (int)bytes, MPI_BYTE, root, m->comm, &m->req));
}

static mlvm_status_t mpi_barrier(mlvm_comm_t *c, mlvm_coll_t *p)
{
    mlvm_mpi_comm_t *m = mpi_of(c);
    if (p->phase != 0)
        return test(m, p);
    return started(m, p, MPI_Ibarrier(m->comm, &m->req));
}

static mlvm_status_t mpi_send(mlvm_comm_t *c, mlvm_coll_t *p, int32_t peer, int32_t tag,
                              const void *buf, size_t bytes)
{
    mlvm_mpi_comm_t *m = mpi_of(c);
    if (p->phase != 0)
        return test(m, p);
    return started(m, p, MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, m->comm, &m->req));
}

static mlvm_status_t mpi_recv(mlvm_comm_t *c, mlvm_coll_t *p, int32_t peer, int32_t tag,
                              void *buf, size_t bytes)
{
    mlvm_mpi_comm_t *m = mpi_of(c);
    if (p->phase != 0)
        return test(m, p);
    return started(m, p, MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, tag, m->comm, &m->req));
}

static const mlvm_comm_ops_t mpi_ops = {
    mpi_all_reduce, mpi_all_gather, mpi_reduce_scatter, mpi_broadcast,
    mpi_barrier, mpi_send, mpi_recv,
};

mlvm_status_t mlvm_mpi_comm_init(mlvm_mpi_comm_t *c, MPI_Comm comm)
{
    int rank, size;
    if (c == NULL || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS
        || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return MLVM_ERR_INVALID;
    memset(c, 0, sizeof *c);
    c->base.ops = &mpi_ops;
    c->base.rank = rank;
    c->base.size = size;
    c->comm = comm;
    c->req = MPI_REQUEST_NULL;
    c->type = MPI_DATATYPE_NULL;
    return MLVM_OK;
}

size_t mlvm_mpi_comm_bytes(void)
{
    return sizeof(mlvm_mpi_comm_t);
}

mlvm_status_t mlvm_mpi_world_init(void *comm_storage)
{
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return MLVM_ERR_INVALID;
    return mlvm_mpi_comm_init((mlvm_mpi_comm_t *)comm_storage, MPI_COMM_WORLD);
}

mlvm_status_t mlvm_mpi_finalize(void)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized)
        MPI_Finalize();
    return MLVM_OK;
}

#else /* built without MPI */

size_t mlvm_mpi_comm_bytes(void)
{
    return 0;
}

mlvm_status_t mlvm_mpi_world_init(void *comm_storage)
{
    (void)comm_storage;
    return MLVM_ERR_INVALID;
}

mlvm_status_t mlvm_mpi_finalize(void)
{
    return MLVM_OK;
}

#endif
