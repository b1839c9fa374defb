/* The MPI communicator: ranks in processes, on one machine or many.
 *
 * Built only with MLVM_WITH_MPI (mlvm-aot build --comm mpi compiles the
 * module and the runtime with mpicc and that macro). Each collective starts
 * a non-blocking MPI operation (MPI_Iallreduce, ...) when the op is reached
 * and tests it when the call resumes: a rank waiting for its peers
 * suspends, exactly as with the shared-memory communicator, and nothing in
 * the module changes between the two. */
#ifndef MLVM_COMM_MPI_H_
#define MLVM_COMM_MPI_H_

#include "mlvm/comm.h"

#ifdef MLVM_WITH_MPI
#include <mpi.h>

typedef struct mlvm_mpi_comm {
    mlvm_comm_t base;
    MPI_Comm comm;
    MPI_Request req;       /* the operation in progress */
    MPI_Datatype type;     /* a receive layout it uses, or MPI_DATATYPE_NULL */
    void *scratch;         /* a reordered copy it uses, or NULL */
    size_t scratch_bytes;
} mlvm_mpi_comm_t;

/* A rank's communicator over `comm` (MPI must be initialised). */
mlvm_status_t mlvm_mpi_comm_init(mlvm_mpi_comm_t *c, MPI_Comm comm);
#endif

/* For loaders without the MPI headers (both 0 / MLVM_ERR_INVALID when the
 * runtime was built without MPI): initialise MPI if it is not (threads:
 * MPI_THREAD_FUNNELED), and bind a communicator over MPI_COMM_WORLD in
 * caller storage of mlvm_mpi_comm_bytes() bytes. */
size_t mlvm_mpi_comm_bytes(void);
mlvm_status_t mlvm_mpi_world_init(void *comm_storage);
/* MPI_Finalize, once no call uses MPI any more (0 when built without MPI). */
mlvm_status_t mlvm_mpi_finalize(void);

#endif /* MLVM_COMM_MPI_H_ */
