/* Eager execution: one op at a time over tensor handles.
 *
 * mlvm_exec runs op on the tensors named by handles, calling the same kernels
 * generated code calls; broadcasting and dim collapsing are computed at run
 * time. The destination's shape and dtype say what to compute (a reduction's
 * dst may keep the reduced dims as 1 or drop them). Unused operands are
 * ignored: pass MLVM_NONE.
 *
 * In place: the elementwise ops (family binary, unary, rsqrt, gelu, cast,
 * reshape, broadcast_to) accept dst equal to an operand of dst's size. The
 * other ops need a dst that overlaps no operand; without MLVM_CHECKS that is
 * not verified, and an overlapping dst computes garbage. */
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
 *   transpose     dst, lhs        ints[d]: perm            f32, i32
 *   slice         dst, lhs        ints: start, stride      f32, i32
 *   concat        dst, lhs, rhs   axis                     f32, i32
 *   softmax       dst, lhs        axis                     f32
 *   layer_norm    dst, lhs(x)[, rhs(gamma), aux(beta)]; axes, f (eps)  f32
 *   gelu          dst, lhs        flags (MLVM_GELU_TANH)   f32
 *   conv2d        dst, lhs(x), rhs(w)[, aux(bias)]; ints (MLVM_WIN_*, MLVM_CONV_*)  f32
 *   pool2d        dst, lhs        flags (MLVM_POOL_AVG); ints (MLVM_WIN_*, MLVM_POOL_*)  f32
 *
 * Binary ops broadcast as numpy does; matmul takes rank 2 operands, or rank
 * >= 3 operands with numpy-broadcast batch dims, as the mlvm dialect does.
 * The last eight are the mlvm dialect's nn ops with the same semantics (see
 * mlvm/dialect/nn.py); slice's result sizes, conv2d's and pool2d's output
 * height and width are dst's. An optional operand is MLVM_NONE when left
 * out (layer_norm takes gamma and beta together or neither). */
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
    X(ERF, erf, 1, unary)                                                      \
    X(ABS, abs, 1, unary)                                                      \
    X(FLOOR, floor, 1, unary)                                                  \
    X(CEIL, ceil, 1, unary)                                                    \
    X(SIN, sin, 1, unary)                                                      \
    X(COS, cos, 1, unary)                                                      \
    X(RSQRT, rsqrt, 1, rsqrt)                                                  \
    X(MATMUL, matmul, 2, matmul)                                               \
    X(REDUCE_SUM, reduce_sum, 1, reduce)                                       \
    X(REDUCE_MAX, reduce_max, 1, reduce)                                       \
    X(REDUCE_MEAN, reduce_mean, 1, reduce)                                     \
    X(ARGMAX, argmax, 1, argmax)                                               \
    X(SOFTMAX_XENT, softmax_xent, 2, softmax_xent)                             \
    X(CAST, cast, 1, cast)                                                     \
    X(RESHAPE, reshape, 1, reshape)                                            \
    X(BROADCAST_TO, broadcast_to, 1, broadcast_to)                             \
    X(TRANSPOSE, transpose, 1, transpose)                                      \
    X(SLICE, slice, 1, slice)                                                  \
    X(CONCAT, concat, 2, concat)                                               \
    X(SOFTMAX, softmax, 1, softmax)                                            \
    X(LAYER_NORM, layer_norm, 1, layer_norm)                                   \
    X(GELU, gelu, 1, gelu)                                                     \
    X(CONV2D, conv2d, 2, conv2d)                                               \
    X(POOL2D, pool2d, 1, pool2d)

#define MLVM_OP_ENUM_(e, name, arity, family) MLVM_OP_##e,
typedef enum mlvm_op {
    MLVM_OP_TABLE(MLVM_OP_ENUM_)
    MLVM_OP_COUNT
} mlvm_op_t;
#undef MLVM_OP_ENUM_

/* matmul flags */
#define MLVM_TRANSPOSE_LHS 1u
#define MLVM_TRANSPOSE_RHS 2u

/* gelu flag: the tanh approximation (default: erf). */
#define MLVM_GELU_TANH 1u
/* pool2d flag: average (default: max). */
#define MLVM_POOL_AVG 1u

/* Integer options (mlvm_opts_t.ints). */
#define MLVM_OPTS_INTS 16
enum {
    /* slice: ints[MLVM_SLICE_START + d] is dim d's start, ints[MLVM_SLICE_STRIDE
     * + d] its step (0 means 1; negative walks backwards). */
    MLVM_SLICE_START = 0,
    MLVM_SLICE_STRIDE = 8,
    /* conv2d and pool2d: strides (0 means 1) and zero padding. */
    MLVM_WIN_SH = 0,
    MLVM_WIN_SW = 1,
    MLVM_WIN_PT = 2, /* top */
    MLVM_WIN_PL = 3, /* left */
    MLVM_WIN_PB = 4, /* bottom */
    MLVM_WIN_PR = 5, /* right */
    /* conv2d: dilations and groups (0 means 1). */
    MLVM_CONV_DH = 6,
    MLVM_CONV_DW = 7,
    MLVM_CONV_GROUPS = 8,
    /* pool2d: the window (>= 1, and larger than each pad). */
    MLVM_POOL_KH = 6,
    MLVM_POOL_KW = 7
};

/* layer_norm's eps when none is given: the dialect's default (one value,
 * mlvm.dialect.shapes.LAYER_NORM_EPS on the Python side; a test keeps the two equal). */
#define MLVM_LAYER_NORM_EPS 1e-5f

/* Options; a zeroed struct (or a NULL pointer) means the defaults, which are
 * the dialect's: in particular layer_norm's eps is MLVM_LAYER_NORM_EPS. */
typedef struct mlvm_opts {
    float f;           /* fill: value; rsqrt: eps (default 0); layer_norm: eps,
                          +0 meaning MLVM_LAYER_NORM_EPS and -0 an eps of 0 */
    int32_t axis;      /* argmax, concat, softmax (negative: from the end) */
    uint32_t axes;     /* reduce_*: bit d set reduces dim d; layer_norm: the
                          normalised dims (0: the last) */
    uint32_t flags;    /* matmul: MLVM_TRANSPOSE_LHS | MLVM_TRANSPOSE_RHS;
                          gelu: MLVM_GELU_TANH; pool2d: MLVM_POOL_AVG */
    mlvm_handle_t aux; /* softmax_xent: the grad result (logits' shape);
                          layer_norm: beta; conv2d: bias (or MLVM_NONE) */
    int32_t ints[MLVM_OPTS_INTS]; /* transpose: perm; slice, conv2d, pool2d:
                                     the indices above */
} mlvm_opts_t;

/* An initialiser of the defaults: mlvm_opts_t o = MLVM_OPTS_DEFAULT; */
#define MLVM_OPTS_DEFAULT {0.0f, 0, 0u, 0u, MLVM_NONE, {0}}

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

/* The op's number of operands (0, 1 or 2), or -1 outside the table; the
 * optional operands (layer_norm's gamma and beta, conv2d's bias) are not
 * counted. */
int32_t mlvm_op_arity(int32_t op);

#endif /* MLVM_EXEC_H_ */
