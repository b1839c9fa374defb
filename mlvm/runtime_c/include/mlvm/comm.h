/* Communicators: MPI-style collectives between module instances (one VM
 * per core), through a small table of functions, bound to an instance
 * (inst->comm) when it is made.
 *
 * A collective never blocks: while its peers have not arrived, it returns
 * MLVM_SUSPENDED and the call suspends; the call's retry continues where it
 * was (`mlvm_coll_t`, kept in the call state). So one thread may drive
 * several ranks, and a scheduler may interleave collectives with other
 * calls. Every rank of a communicator must run the same collectives in the
 * same order with the same shapes (as with MPI). */
#ifndef MLVM_COMM_H_
#define MLVM_COMM_H_

#include <stddef.h>
#include <stdint.h>

#include "mlvm/status.h"

typedef enum mlvm_reduce {
    MLVM_REDUCE_SUM = 0,
    MLVM_REDUCE_MAX = 1,
    MLVM_REDUCE_MIN = 2,
    MLVM_REDUCE_MEAN = 3
} mlvm_reduce_t;

/* How far one collective of one call has come (zero when it starts; the
 * implementation sets it back to zero when it ends). */
typedef struct mlvm_coll {
    int32_t phase;
    int32_t waiting;   /* arrived at a barrier, waiting for generation `gen` */
    uint64_t gen;
} mlvm_coll_t;

typedef struct mlvm_comm mlvm_comm_t;

/* The collectives a transport implements. Buffers are the caller's; `in`
 * and `out` may be the same for all_reduce. Shapes: all_gather concatenates
 * each rank's `outer` blocks of `block` bytes, rank by rank, into blocks of
 * size * block bytes; reduce_scatter reduces `outer` blocks of size * count
 * elements and keeps this rank's `count` of each. */
typedef struct mlvm_comm_ops {
    mlvm_status_t (*all_reduce)(mlvm_comm_t *c, mlvm_coll_t *p, int32_t kind, int32_t dtype,
                                const void *in, void *out, size_t count);
    mlvm_status_t (*all_gather)(mlvm_comm_t *c, mlvm_coll_t *p, const void *in, void *out,
                                size_t outer, size_t block);
    mlvm_status_t (*reduce_scatter)(mlvm_comm_t *c, mlvm_coll_t *p, int32_t kind, int32_t dtype,
                                    const void *in, void *out, size_t outer, size_t count);
    mlvm_status_t (*broadcast)(mlvm_comm_t *c, mlvm_coll_t *p, int32_t root, const void *in,
                               void *out, size_t bytes);
    mlvm_status_t (*barrier)(mlvm_comm_t *c, mlvm_coll_t *p);
    mlvm_status_t (*send)(mlvm_comm_t *c, mlvm_coll_t *p, int32_t peer, int32_t tag,
                          const void *buf, size_t bytes);
    mlvm_status_t (*recv)(mlvm_comm_t *c, mlvm_coll_t *p, int32_t peer, int32_t tag, void *buf,
                          size_t bytes);
} mlvm_comm_ops_t;

struct mlvm_comm {
    const mlvm_comm_ops_t *ops;
    int32_t rank;
    int32_t size;
};

/* ---- shared memory: ranks on threads of one process ---------------------- */

#define MLVM_SHM_MAX_RANKS 16
/* all_reduce of at most this many bytes goes through staging buffers in the
 * world: one barrier instead of three. */
#define MLVM_SHM_STAGE_BYTES 8192

/* One message slot from a rank to another (send waits until received). */
typedef struct mlvm_shm_slot {
    const void *volatile data;
    volatile size_t bytes;
    volatile int32_t tag;
    volatile int32_t full;   /* 1: posted by the sender; 0: taken */
} mlvm_shm_slot_t;

/* What the ranks of one process share: a barrier and the buffers each rank
 * publishes for the collective in progress. Caller-owned (any storage). */
typedef struct mlvm_shm_world {
    int32_t size;
    volatile int32_t arrived;
    volatile uint64_t gen;
    volatile int32_t poisoned; /* a rank failed: collectives fail instead of waiting */
    int32_t pad_;
    const void *volatile in[MLVM_SHM_MAX_RANKS];
    void *volatile out[MLVM_SHM_MAX_RANKS];
    mlvm_shm_slot_t slots[MLVM_SHM_MAX_RANKS][MLVM_SHM_MAX_RANKS]; /* [from][to] */
    /* Two generations of staging, used alternately: a rank writes one only
     * after a barrier that every rank reaches once done reading it. */
    float stage[2][MLVM_SHM_MAX_RANKS][MLVM_SHM_STAGE_BYTES / sizeof(float)];
} mlvm_shm_world_t;

/* A world of `size` ranks (1..MLVM_SHM_MAX_RANKS). */
mlvm_status_t mlvm_shm_world_init(mlvm_shm_world_t *w, int32_t size);

/* Marks the world broken (a rank failed and will not arrive): every
 * collective waiting or started in it ends with MLVM_ERR_INVALID instead of
 * waiting forever. Make a new world to go on. */
void mlvm_shm_world_poison(mlvm_shm_world_t *w);

/* A rank's communicator over a world (caller storage, lives as long as the
 * instances using it). */
typedef struct mlvm_shm_comm {
    mlvm_comm_t base;
    mlvm_shm_world_t *world;
    uint64_t staged;   /* staged collectives so far: their generation parity */
} mlvm_shm_comm_t;

mlvm_status_t mlvm_shm_comm_init(mlvm_shm_comm_t *c, mlvm_shm_world_t *w, int32_t rank);

/* sizeof the two, for loaders that allocate them without the C types. */
size_t mlvm_shm_world_bytes(void);
size_t mlvm_shm_comm_bytes(void);

#endif /* MLVM_COMM_H_ */
