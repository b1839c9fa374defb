/* Internal: the blocked matrix product behind matmul and conv2d.
 *
 * out(i, j) = bias[i] + sum_k a(i, k) * b(k, j), with a(i, k) = a[i * a_rs +
 * k * a_cs] and out(i, j) = out[i * c_rs + j]. b is either a matrix in
 * memory (b(k, j) = b[k * b_rs + j * b_cs]) or, when `pack` is set, a
 * virtual one that `pack` writes sliver by sliver: rows k0 .. k0+kc and
 * columns j0 .. j0+nr into buf (row stride ld, zero from column nr to ld).
 * conv2d's packer gathers its input windows that way (implicit GEMM), so
 * no im2col matrix is ever stored. With `b_off`, row k of b starts at
 * b + b_off[k] (b(k, j) = b[b_off[k] + j]): conv2d's direct path reads the
 * taps of its padded input in place that way. */
#ifndef MLVM_KERNELS_GEMM_H_
#define MLVM_KERNELS_GEMM_H_

#include "mlvm/kernels.h"

/* MLVM_SCALAR_CORE and MLVM_MADD: mlvm/kernels.h (generated code tests them too). */

/* The step of the scalar 4 x 4 kernels (matmul.c, conv_cvec.c): sixteen
 * named sums cRJ (declared by MLVM_SUMS_4X4) += xR * bJ. Named scalars,
 * not an array: compilers keep them in floating-point registers (an array
 * they keep in memory: three times the instructions on a Cortex-M4). */
#define MLVM_SUMS_4X4                                                                             \
    float c00 = 0.0f, c01 = 0.0f, c02 = 0.0f, c03 = 0.0f, c10 = 0.0f, c11 = 0.0f, c12 = 0.0f;    \
    float c13 = 0.0f, c20 = 0.0f, c21 = 0.0f, c22 = 0.0f, c23 = 0.0f, c30 = 0.0f, c31 = 0.0f;    \
    float c32 = 0.0f, c33 = 0.0f
#define MLVM_MADD_4X4(x0, x1, x2, x3, b0, b1, b2, b3)                                             \
    (MLVM_MADD(c00, x0, b0), MLVM_MADD(c01, x0, b1), MLVM_MADD(c02, x0, b2),                      \
     MLVM_MADD(c03, x0, b3), MLVM_MADD(c10, x1, b0), MLVM_MADD(c11, x1, b1),                      \
     MLVM_MADD(c12, x1, b2), MLVM_MADD(c13, x1, b3), MLVM_MADD(c20, x2, b0),                      \
     MLVM_MADD(c21, x2, b1), MLVM_MADD(c22, x2, b2), MLVM_MADD(c23, x2, b3),                      \
     MLVM_MADD(c30, x3, b0), MLVM_MADD(c31, x3, b1), MLVM_MADD(c32, x3, b2),                      \
     MLVM_MADD(c33, x3, b3))

/* A kernel instance per constant (tile rows, widths) needs its function
 * inlined, and the instances' callers kept apart (gcc keeps accumulators in
 * registers only when one instance is inlined into one function). */
#if defined(__GNUC__) || defined(__clang__)
#define MLVM_NOINLINE __attribute__((noinline))
#define MLVM_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define MLVM_NOINLINE
#define MLVM_ALWAYS_INLINE static
#endif

typedef void (*mlvm_gemm_pack_fn)(const void *ctx, mlvm_index_t k0, mlvm_index_t kc,
                                  mlvm_index_t j0, int nr, float *buf, int ld);

typedef struct mlvm_gemm {
    mlvm_index_t m, n, k;
    const float *a;
    mlvm_index_t a_rs, a_cs;   /* unless a_panel */
    mlvm_index_t a_panel;      /* or 0: MLVM_CONV_A_PANEL, a (m x k) stored in panels
                                  (kernels_nn.h's w_panel); b_off NULL */
    const float *b;            /* when pack is NULL */
    mlvm_index_t b_rs, b_cs;
    mlvm_index_t b_panel;      /* or 0: b in panels of this many columns (kernels.h) */
    const mlvm_index_t *b_off; /* or NULL: row offsets of b (b_cs must be 1) */
    mlvm_gemm_pack_fn pack;    /* or NULL */
    const void *pack_ctx;
    const float *bias;         /* one per row of out, or NULL */
    const float *col_bias;     /* or NULL: one per column of out, added to the final sums */
    const mlvm_clamp_t *act;   /* or NULL: mlvm_epilogue_clamp_f32's clamp of the final sums
                                  (after col_bias); both in registers as the tiles are stored,
                                  then the epilogue */
    float *out;
    mlvm_index_t c_rs;
    mlvm_epilogue_fn epilogue; /* or NULL: called on each finished block */
    const void *epilogue_ctx;
    float *b_slab;             /* or NULL: where b (in memory, neither packed by `pack` nor
                                  in panels nor at row offsets) is packed once per column
                                  block and slice (a matmul's workspace, given where
                                  mlvm_matmul_workspace says it pays, kernels.h) */
} mlvm_gemm_t;

/* mlvm_matmul_workspace's bounds: the slab holds MLVM_MM_SLAB_K rows of
 * MLVM_MM_SLAB_N columns (whole slivers of any path); a b of
 * MLVM_MM_SLAB_KN elements or more is packed whatever its strides. */
#define MLVM_MM_SLAB_M 192
#define MLVM_MM_SLAB_KN (512 * 512)
#define MLVM_MM_SLAB_K 256
#define MLVM_MM_SLAB_N 256

/* Whether the tile kernels apply col_bias and act in registers as they
 * store. Not the 4 x 4 tile of cores without vectors: there a pass per
 * group (a convolution's) or per finished block costs fewer instructions
 * than tests in its store, and less flash; callers there pass an epilogue
 * instead. */
#ifdef MLVM_SCALAR_CORE
#define MLVM_GEMM_TILE_ACT 0
#else
#define MLVM_GEMM_TILE_ACT 1
#endif

void mlvm_gemm_f32(const mlvm_gemm_t *g);
/* mlvm_gemm_f32 for a b read at row offsets (b_off not NULL), which takes
 * no other path: a caller that only has such products links no other. */
void mlvm_gemm_at_f32(const mlvm_gemm_t *g);
/* mlvm_gemm_f32 for a b read by its strides (b_off NULL), its blocked path
 * alone. */
void mlvm_gemm_strided_f32(const mlvm_gemm_t *g);

#endif /* MLVM_KERNELS_GEMM_H_ */
