/* Kernels: the compute routines generated code calls. No checks: callers
 * (the compiler, or a checked eager boundary) guarantee shapes and sizes. */
#ifndef MLVM_KERNELS_H_
#define MLVM_KERNELS_H_

#include <stddef.h>
#include <stdint.h>

/* Cores without vectors (Cortex-M): kernels there read their operands in
 * place instead of packing them (no buffers on the stack, no copies in the
 * arena), and generated code may sum a convolution in a loop nest of its
 * own (mlvm.conv2d on such cores, docs/c_abi.md). MLVM_PORTABLE_KERNELS
 * with MLVM_SCALAR_KERNELS selects them on any host (the tests' "scalar"
 * kernel path). */
#if ((defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))                          \
     && !defined(MLVM_PORTABLE_KERNELS))                                                        \
    || ((defined(__x86_64__) || defined(__aarch64__) || defined(__powerpc64__))                 \
        && !defined(MLVM_SCALAR_KERNELS))
#else
#define MLVM_SCALAR_CORE 1
#endif

/* Of two descriptors, the one for cores with vectors (v) or the one for
 * cores without (s): generated code defines each under its condition, so
 * that data only the vector kernels read (mlvm_qconv2d_t's w_sums) is not
 * in a firmware, whose descriptors stay shared between layers. */
#ifdef MLVM_SCALAR_CORE
#define MLVM_VECTOR_PICK(v, s) (s)
#else
#define MLVM_VECTOR_PICK(v, s) (v)
#endif

/* s += x * y on such cores: one fused multiply-add where the FPU has it
 * (VFMA on a Cortex-M4F). */
#if defined(__ARM_FEATURE_FMA)
#define MLVM_MADD(s, x, y) ((s) = __builtin_fmaf((x), (y), (s)))
#else
#define MLVM_MADD(s, x, y) ((s) += (x) * (y))
#endif

#define MLVM_MAX_RANK 8

typedef ptrdiff_t mlvm_index_t;

/* An iteration space over `shape` (row-major, innermost last) in which
 * operand k reads element `sum(idx[d] * stride[k][d])`. Broadcast dims have
 * stride 0. The compiler collapses dims so rank is small. */
typedef struct mlvm_iter {
    int32_t rank;
    mlvm_index_t shape[MLVM_MAX_RANK];
    mlvm_index_t stride[2][MLVM_MAX_RANK];
} mlvm_iter_t;

/* One matrix product out[m][n] = sum_k a(i, k) * b(k, j) with
 * a(i, k) = a[i * a_rs + k * a_cs] and b(k, j) = b[k * b_rs + j * b_cs].
 * With b_panel = P > 0, b is stored in panels of P columns instead (a
 * constant weight the compiler laid out for the kernel): b(k, j) =
 * b[(j / P) * k_total * P + k * P + j % P], zero past column n, and b_rs /
 * b_cs are ignored. P is a multiple of 32 (the widest sliver of any kernel). */
typedef struct mlvm_matmul {
    mlvm_index_t m, n, k;
    mlvm_index_t a_rs, a_cs, b_rs, b_cs;
    mlvm_index_t b_panel;
} mlvm_matmul_t;

/* Elementwise binary ops; `it` strides address a (0) and b (1); out is
 * contiguous over it->shape. */
#define MLVM_BINARY_KERNELS(X) \
    X(add) X(sub) X(mul) X(div) X(max) X(min)
#define MLVM_DECLARE_BINARY(name)                                              \
    void mlvm_##name##_f32(const mlvm_iter_t *it, const float *a,              \
                           const float *b, float *out);                        \
    void mlvm_##name##_i32(const mlvm_iter_t *it, const int32_t *a,            \
                           const int32_t *b, int32_t *out);
MLVM_BINARY_KERNELS(MLVM_DECLARE_BINARY)

/* Comparisons: f32 1.0 where true, 0.0 where false. */
void mlvm_eq_f32(const mlvm_iter_t *it, const float *a, const float *b, float *out);
void mlvm_eq_i32(const mlvm_iter_t *it, const int32_t *a, const int32_t *b, float *out);
void mlvm_cmpl_f32(const mlvm_iter_t *it, const float *a, const float *b, float *out);
void mlvm_cmpl_i32(const mlvm_iter_t *it, const int32_t *a, const int32_t *b, float *out);

/* Elementwise unary ops over n contiguous f32 (out may equal a). */
#define MLVM_UNARY_KERNELS(X) \
    X(neg) X(exp) X(log) X(sqrt) X(tanh) X(sigmoid) X(relu) \
    X(erf) X(abs) X(floor) X(ceil) X(sin) X(cos)
#define MLVM_DECLARE_UNARY(name) \
    void mlvm_##name##_f32(size_t n, const float *a, float *out);
MLVM_UNARY_KERNELS(MLVM_DECLARE_UNARY)
void mlvm_rsqrt_f32(size_t n, float eps, const float *a, float *out);

/* The matmul and conv2d kernels this runtime was built with: "avx512",
 * "avx2" or "portable" (chosen by the compiler's target flags). */
const char *mlvm_kernel_path(void);

/* Batched matmul: `batch` iterates the broadcast batch dims with element
 * strides into a (0) and b (1); out is contiguous, m * n per batch. */
void mlvm_matmul_f32(const mlvm_matmul_t *p, const mlvm_iter_t *batch,
                     const float *a, const float *b, float *out);
/* Bytes of the workspace the _ws entries below take for p (0: none): a
 * b in memory (not panels) read by more than 192 rows (more than one of
 * the GEMM's row blocks without a workspace) is packed once per column
 * block and contraction slice into it, where without it each row block
 * packs b again; where that pays: b transposed, of 512 x 512 elements or
 * more, or its rows a multiple of 256 floats apart. At most 256 x 256
 * floats (256 KiB). */
size_t mlvm_matmul_workspace(const mlvm_matmul_t *p);
/* mlvm_matmul_f32 given its workspace (mlvm_matmul_workspace(p) bytes,
 * not 0); the same sums, bit for bit. */
void mlvm_matmul_ws_f32(const mlvm_matmul_t *p, const mlvm_iter_t *batch, const float *a,
                        const float *b, float *out, void *ws);

/* A matmul finished in its own store: once a block of out (rows i0 ..
 * i0+rows, columns j0 .. j0+cols, starting at `tile`, row stride ldo)
 * holds its final sums, and while it is still in L2 (a row block of the
 * GEMM over its column block: at most 256 KiB with AVX2), fn rewrites it
 * in place (bias, activation, residual add: a fused elementwise tree),
 * reading what else it needs row by row. ctx is passed through. One GEMM
 * pass over a and b whatever the epilogue. */
typedef void (*mlvm_epilogue_fn)(const void *ctx, mlvm_index_t i0, mlvm_index_t rows,
                                 mlvm_index_t j0, mlvm_index_t cols, float *tile,
                                 mlvm_index_t ldo);
/* The epilogue of an activation alone, with ctx a const mlvm_clamp_t *:
 * relu (h < 0 ? 0 : h), or the dialect's max with lo then min with hi
 * (ties give the bound, NaN stays; lo = -inf / hi = inf when absent).
 * The GEMM's tile kernels (a matmul's, a convolution's) and conv2d's
 * depthwise kernels (AVX2 / AVX-512) recognise it and apply it to their
 * sums before the store, so no pass over their output is left. */
typedef struct mlvm_clamp {
    float lo, hi;
    int32_t relu;
} mlvm_clamp_t;
void mlvm_epilogue_clamp_f32(const void *ctx, mlvm_index_t i0, mlvm_index_t rows, mlvm_index_t j0,
                             mlvm_index_t cols, float *tile, mlvm_index_t ldo);
/* The epilogue of a bias along the columns, then a ReLU or nothing (a
 * Linear layer's), with ctx a const mlvm_bias_t *: row[j] = t < lo ? lo : t
 * for t = row[j] + bias[j0 + j], lo 0 for ReLU (which keeps -0 and NaN, as
 * relu does) or -inf. One runtime function for both forms, so that a module
 * links it once instead of a generated function per layer form; the GEMM's
 * tile kernels recognise it and apply it to their sums before the store. */
typedef struct mlvm_bias {
    const float *bias;
    float lo;
} mlvm_bias_t;
void mlvm_epilogue_bias_f32(const void *ctx, mlvm_index_t i0, mlvm_index_t rows, mlvm_index_t j0,
                            mlvm_index_t cols, float *tile, mlvm_index_t ldo);
void mlvm_matmul_epilogue_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                              float *out, mlvm_epilogue_fn fn, const void *ctx);
/* The same given its workspace (mlvm_matmul_workspace(p) bytes, not 0). */
void mlvm_matmul_epilogue_ws_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                                 float *out, mlvm_epilogue_fn fn, const void *ctx, void *ws);
/* The same for p->m == 1 (known when the module is generated): on cores
 * without vectors the single-row kernel is called directly, so that a
 * module whose products are all single rows does not link the blocked
 * GEMM (its code and its packing buffer). fn may be NULL. */
void mlvm_matmul_row_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                         float *out, mlvm_epilogue_fn fn, const void *ctx);
/* The same with a Linear layer's epilogue (mlvm_epilogue_bias_f32's, the
 * same bits): on cores without vectors in the entry's own loop. The
 * compiler calls it in modules that link no GEMM (as the convolutions'
 * _clamp_f32 entries, kernels_nn.h), whose firmware then links no
 * epilogue function. */
void mlvm_matmul_row_bias_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                              float *out, const mlvm_bias_t *bias);
/* The same two for modules that link no GEMM and whose single rows are
 * all narrower than 16 (the compiler calls these then, and the two above
 * otherwise; any n is computed correctly): on cores without vectors four
 * outputs per pass and no sixteen-wide code, so such a firmware (a CNN's
 * one dense layer) links the narrow passes alone. (The GEMM's own single
 * row takes the wide passes.) */
void mlvm_matmul_row4_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                          float *out, mlvm_epilogue_fn fn, const void *ctx);
void mlvm_matmul_row4_bias_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                               float *out, const mlvm_bias_t *bias);

/* Reductions: `it` walks the input (stride 0) and the output (stride 1, 0 on
 * reduced dims). out has out_n elements; count is the reduced size. */
void mlvm_reduce_sum_f32(const mlvm_iter_t *it, const float *in, float *out,
                         size_t out_n, size_t count);
void mlvm_reduce_max_f32(const mlvm_iter_t *it, const float *in, float *out,
                         size_t out_n, size_t count);
void mlvm_reduce_min_f32(const mlvm_iter_t *it, const float *in, float *out,
                         size_t out_n, size_t count);
void mlvm_reduce_mean_f32(const mlvm_iter_t *it, const float *in, float *out,
                          size_t out_n, size_t count);
/* What those kernels do to one contiguous row of n: its sum (eight partial
 * sums over the whole eights, added in order, then the rest), and its
 * maximum or minimum with acc (NaN wins). A fused tree ending in a
 * reduction sums its rows by these, so its bits are the kernels'. */
float mlvm_row_sum_f32(mlvm_index_t n, const float *x);
float mlvm_row_max_f32(mlvm_index_t n, const float *x, float acc);
float mlvm_row_min_f32(mlvm_index_t n, const float *x, float acc);

/* Index of the first maximum along the middle dim of [outer, n, inner]. */
void mlvm_argmax_f32(size_t outer, size_t n, size_t inner, const float *in,
                     int32_t *out);

/* Softmax cross-entropy per row of [rows, cols]. */
void mlvm_softmax_xent_f32(size_t rows, size_t cols, const float *labels,
                           const float *logits, float *loss, float *grad);

/* mlvm.qmatmul on 8-bit operands: a is [m, k], b is [k, n] (row-major),
 * za one value, zb one value or n (zb_per_col); out is [m, n] int32. */
typedef struct mlvm_qmatmul {
    mlvm_index_t m, n, k;
    int32_t a_signed, b_signed, zb_per_col;
} mlvm_qmatmul_t;
void mlvm_qmatmul_8(const mlvm_qmatmul_t *p, const void *a, const void *b, const void *za,
                    const void *zb, int32_t *out);

/* mlvm.qconv2d on 8-bit operands: x NCHW, w OIHW (I = c / groups), zx one
 * value, zw one value or one per output channel; out NOHW int32.
 * With w_lanes, w is i8 stored as the workspace kernel reads it (the
 * compiler's mlvm-pack-weights does this for constant weights, so no call
 * reorders them): row o holds k lanes of four bytes, 4-byte aligned; for
 * I >= 3, k = ceil(I / 4) kh kw and lane (q kh + i) kw + j is w[o, 4q ..
 * 4q + 3, i, j] (0 past I); for I < 3, k = ceil(I kh kw / 4) and the row is
 * w[o] in OIHW order, zero-padded. Only groups of 4 or more output channels
 * given a workspace read it (mlvm_qconv2d_ws_8, mlvm_qconv2d_requant_8). */
typedef struct mlvm_qconv2d {
    mlvm_index_t n, c, h, w, o, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw, groups;
    int32_t x_signed, w_signed, zw_per_o, w_lanes;
    /* NULL, or per output channel the sum of its weights as i8 (u8 weights
     * less 128, wrapping): the compiler's, from constant weights, so that
     * no call sums them for the zero point's share (read on cores with
     * vectors: on a Cortex-M the tables would cost more flash than the
     * sums cost time; see MLVM_VECTOR_PICK). Set every field: a
     * descriptor built field by field needs w_sums = NULL and w_pairs = 0
     * too. */
    const int32_t *w_sums;
    /* 1 when no two weights of an output channel (as i8, as w_sums takes
     * them) add up past 128, nor past -128: two products with bytes of
     * [0, 255] then fit a 16-bit pair sum (AVX2's vpmaddubsw, exact; the
     * tile of widened bytes otherwise). The compiler's, from constant
     * weights; 0 (not known) is always correct. */
    int32_t w_pairs;
} mlvm_qconv2d_t;
void mlvm_qconv2d_8(const mlvm_qconv2d_t *p, const void *x, const void *w, const void *zx,
                    const void *zw, int32_t *out);
/* The same with a caller's workspace of mlvm_qconv2d_workspace(p) bytes
 * (64-byte aligned): the input copied once, padded, every tap read in place
 * (vpdpbusd / vpmaddwd where the CPU has them). Workspace 0 (or ws NULL):
 * as mlvm_qconv2d_8. mlvm_qkernel_path names the instructions built in. */
size_t mlvm_qconv2d_workspace(const mlvm_qconv2d_t *p);
void mlvm_qconv2d_ws_8(const mlvm_qconv2d_t *p, const void *x, const void *w, const void *zx,
                       const void *zw, int32_t *out, void *ws);
const char *mlvm_qkernel_path(void);
/* mlvm.qconv2d_requant: the same sums, plus bias (NULL or o values), then
 * requantized: clamp(nearbyint((float)(acc + bias) * mult) + zy), as
 * i8 / u8 (y_signed), mult one value or o (mult_per_o), clamped below at zy
 * with relu. The workspace (mlvm_qconv2d_requant_workspace(p) bytes, at
 * most mlvm_qconv2d_workspace(p): results kept as bytes; 64-byte aligned,
 * as there) is required. */
size_t mlvm_qconv2d_requant_workspace(const mlvm_qconv2d_t *p);
typedef struct mlvm_qrequant {
    int32_t y_signed, mult_per_o, relu;
} mlvm_qrequant_t;
void mlvm_qconv2d_requant_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                            const void *w, const void *zx, const void *zw, const int32_t *bias,
                            const float *mult, const void *zy, void *out, void *ws);

/* mlvm.qadd of 8-bit a and b (signed or not, as flagged), as onnxruntime's
 * QLinearAdd computes it on x86-64: with rx = sx / sy, rw = sw / sy (f32),
 *   y = saturate(nearbyint(fma(x, rx, fma(w, rw, zy - fma(rx, zx, rw * zw)))))
 * each fma rounded once, NaN and values past int32 -> the type's minimum
 * (onnxruntime's conversion and saturating packs), where (x, w) is (a, b), or (b, a) when
 * `swap` (the lowering sets it where a is constant along onnxruntime's
 * innermost run: a single value, or the small operand with inner > 1).
 * y is [outer, mid, inner]; a and b have its shape but the one `small`
 * names (1: a, 2: b), which is [mid], its value m read for every
 * (o, m, i); when small is 2 or swap is set with inner > 1, the small
 * operand is w. Scales and zero points are single values; y may be the
 * operand of its shape. */
typedef struct mlvm_qadd {
    int32_t a_signed, b_signed, y_signed, swap, small;
} mlvm_qadd_t;
void mlvm_qadd_8(const mlvm_qadd_t *p, size_t outer, size_t mid, size_t inner, const void *a,
                 const float *sa, const void *za, const void *b, const float *sb, const void *zb,
                 const float *sy, const void *zy, void *y);

void mlvm_fill_f32(size_t n, float v, float *out);
void mlvm_fill_i32(size_t n, int32_t v, int32_t *out);
void mlvm_cast_f32_i32(size_t n, const float *in, int32_t *out);
void mlvm_cast_i32_f32(size_t n, const int32_t *in, float *out);
void mlvm_copy(size_t nbytes, const void *src, void *dst);
/* Strided gather of 8/16/32/64-bit elements (broadcast_to): `it` stride 0
 * reads in. */
void mlvm_broadcast_b8(const mlvm_iter_t *it, const void *in, void *out);
void mlvm_broadcast_b16(const mlvm_iter_t *it, const void *in, void *out);
void mlvm_broadcast_b32(const mlvm_iter_t *it, const void *in, void *out);
void mlvm_broadcast_b64(const mlvm_iter_t *it, const void *in, void *out);

/* Check ops: 1 when some element of a (got) differs from b (want) beyond
 * the tolerance, with the flat index and values of the worst element. */
int mlvm_check_close_f32(const mlvm_iter_t *it, const float *a, const float *b,
                         float atol, float rtol, int64_t *index, float *got, float *want);
int mlvm_check_eq_f32(const mlvm_iter_t *it, const float *a, const float *b,
                      float atol, float rtol, int64_t *index, float *got, float *want);
int mlvm_check_eq_i32(const mlvm_iter_t *it, const int32_t *a, const int32_t *b,
                      float atol, float rtol, int64_t *index, float *got, float *want);

/* The neural-network ops: transpose, slice, concat, softmax, layer norm,
 * gelu, conv2d, pooling. */
#include "mlvm/kernels_nn.h"

#endif /* MLVM_KERNELS_H_ */
