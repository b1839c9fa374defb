/* Eager execution: one op at a time over tensor handles.
 *
 * mlvm_exec runs op on the tensors named by handles, calling the same kernels
 * generated code calls; broadcasting and dim collapsing are computed at run
 * time. The destination's shape and dtype say what to compute (a reduction's
 * dst may keep the reduced dims as 1 or drop them). Unused operands are
 * ignored: pass MLVM_NONE.
 *
 * In place: the elementwise ops (family binary, unary, rsqrt, cast, reshape,
 * broadcast_to) accept dst equal to an operand of dst's size. The other ops
 * need a dst that overlaps no operand; without MLVM_CHECKS that is not
 * verified, and an overlapping dst computes garbage. */
#ifndef MLVM_EXEC_H_
#define MLVM_EXEC_H_

#include <stddef.h>
#include <stdint.h>

#include "mlvm/status.h"
#include "mlvm/vm.h"

/* The one table of eager ops: X(ENUM, name, operands, family).
 *
 *   name          operands        options (mlvm_opts_t)    dtypes
 *   fill          dst             f (value; i32: truncated) f32, i32
 *   add sub mul   dst, lhs, rhs   -                        f32, i32
 *   div           dst, lhs, rhs   -                        f32
 *   max min       dst, lhs, rhs   -                        f32, i32
 *   eq cmpl       dst, lhs, rhs   - (dst f32 1/0; cmpl: >) f32, i32
 *   neg .. relu   dst, lhs        -                        f32
 *   rsqrt         dst, lhs        f (eps): 1/sqrt(x + eps) f32
 *   matmul        dst, lhs, rhs   flags (MLVM_TRANSPOSE_*) f32
 *   reduce_*      dst, lhs        axes (bit d: reduce d)   f32
 *   argmax        dst(i32), lhs   axis (negative: from end) f32
 *   softmax_xent  dst(loss), lhs(labels), rhs(logits); aux (grad)  f32
 *   cast          dst, lhs        - (dst dtype)            f32 <-> i32
 *   reshape       dst, lhs        - (dst shape; a copy)    f32, i32
 *   broadcast_to  dst, lhs        - (dst shape)            f32, i32
 *
 * Binary ops broadcast as numpy does; matmul takes rank 2 operands, or rank
 * >= 3 operands with numpy-broadcast batch dims, as the mlvm dialect does. */
#define MLVM_OP_TABLE(X)                                                       \
    X(FILL, fill, 0, fill)                                                     \
    X(ADD, add, 2, binary)                                                     \
    X(SUB, sub, 2, binary)                                                     \
    X(MUL, mul, 2, binary)                                                     \
    X(DIV, div, 2, binary)                                                     \
    X(MAX, max, 2, binary)                                                     \
    X(MIN, min, 2, binary)                                                     \
    X(EQ, eq, 2, binary)                                                       \
    X(CMPL, cmpl, 2, binary)                                                   \
    X(NEG, neg, 1, unary)                                                      \
    X(EXP, exp, 1, unary)                                                      \
    X(LOG, log, 1, unary)                                                      \
    X(SQRT, sqrt, 1, unary)                                                    \
    X(TANH, tanh, 1, unary)                                                    \
    X(SIGMOID, sigmoid, 1, unary)                                              \
    X(RELU, relu, 1, unary)                                                    \
    X(RSQRT, rsqrt, 1, rsqrt)                                                  \
    X(MATMUL, matmul, 2, matmul)                                               \
    X(REDUCE_SUM, reduce_sum, 1, reduce)                                       \
    X(REDUCE_MAX, reduce_max, 1, reduce)                                       \
    X(REDUCE_MEAN, reduce_mean, 1, reduce)                                     \
    X(ARGMAX, argmax, 1, argmax)                                               \
    X(SOFTMAX_XENT, softmax_xent, 2, softmax_xent)                             \
    X(CAST, cast, 1, cast)                                                     \
    X(RESHAPE, reshape, 1, reshape)                                            \
    X(BROADCAST_TO, broadcast_to, 1, broadcast_to)

#define MLVM_OP_ENUM_(e, name, arity, family) MLVM_OP_##e,
typedef enum mlvm_op {
    MLVM_OP_TABLE(MLVM_OP_ENUM_)
    MLVM_OP_COUNT
} mlvm_op_t;
#undef MLVM_OP_ENUM_

/* matmul flags */
#define MLVM_TRANSPOSE_LHS 1u
#define MLVM_TRANSPOSE_RHS 2u

/* Options; a zeroed struct (or a NULL pointer) means the defaults. */
typedef struct mlvm_opts {
    float f;           /* fill: value; rsqrt: eps */
    int32_t axis;      /* argmax */
    uint32_t axes;     /* reduce_*: bit d set reduces dim d */
    uint32_t flags;    /* matmul: MLVM_TRANSPOSE_LHS | MLVM_TRANSPOSE_RHS */
    mlvm_handle_t aux; /* softmax_xent: the grad result (logits' shape) */
} mlvm_opts_t;

/* One op of a batch. */
typedef struct mlvm_oparg {
    int32_t op; /* mlvm_op_t */
    mlvm_handle_t dst, lhs, rhs;
    mlvm_opts_t opts;
} mlvm_oparg_t;

/* Runs one op. Without MLVM_CHECKS it returns MLVM_OK (or MLVM_ERR_INVALID
 * for an op outside the table) and trusts its arguments. With MLVM_CHECKS:
 * MLVM_ERR_INVALID for a bad handle, option or overlap, MLVM_ERR_SHAPE for a
 * shape or dtype that does not fit the op. */
mlvm_status_t mlvm_exec(mlvm_vm_t *vm, mlvm_op_t op, const mlvm_opts_t *opts,
                        mlvm_handle_t dst, mlvm_handle_t lhs,
                        mlvm_handle_t rhs);

/* Runs n ops in order; stops at the first that fails and returns its status.
 * If failed is not NULL it receives that op's index (n when all succeed). */
mlvm_status_t mlvm_batch(mlvm_vm_t *vm, size_t n, const mlvm_oparg_t *ops,
                         size_t *failed);

/* The op's name in the table ("add", "reduce_sum"...), or NULL. */
const char *mlvm_op_name(int32_t op);

/* The op's number of operands (0, 1 or 2), or -1 outside the table. */
int32_t mlvm_op_arity(int32_t op);

#endif /* MLVM_EXEC_H_ */
