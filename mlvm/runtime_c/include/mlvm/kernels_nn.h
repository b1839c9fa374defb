/* Kernels of the neural-network ops (transpose, slice, concat, softmax,
 * layer_norm, gelu, conv2d, pool2d). Included by mlvm/kernels.h. No checks:
 * the compiler guarantees shapes and sizes. */
#ifndef MLVM_KERNELS_NN_H_
#define MLVM_KERNELS_NN_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mlvm/vmath.h"

/* Strided gather of 8/16/32/64-bit elements: out is contiguous over it->shape and
 * reads in at the offsets of it->stride[0] (stride[1] is out's own,
 * contiguous, strides). When the input's unit-stride dim is not the
 * innermost one (a transpose), the two dims are walked in square tiles so
 * that both sides stay in cache. */
void mlvm_gather_b8(const mlvm_iter_t *it, const void *in, void *out);
void mlvm_gather_b16(const mlvm_iter_t *it, const void *in, void *out);
void mlvm_gather_b32(const mlvm_iter_t *it, const void *in, void *out);
void mlvm_gather_b64(const mlvm_iter_t *it, const void *in, void *out);

/* rows x cols elements of 8/16/32/64 bits from src (row stride src_rs, in
 * elements) to dst (dst_rs). */
void mlvm_copy2d_b8(size_t rows, size_t cols, const void *src, ptrdiff_t src_rs,
                    void *dst, ptrdiff_t dst_rs);
void mlvm_copy2d_b16(size_t rows, size_t cols, const void *src, ptrdiff_t src_rs,
                     void *dst, ptrdiff_t dst_rs);
void mlvm_copy2d_b32(size_t rows, size_t cols, const void *src, ptrdiff_t src_rs,
                     void *dst, ptrdiff_t dst_rs);
void mlvm_copy2d_b64(size_t rows, size_t cols, const void *src, ptrdiff_t src_rs,
                     void *dst, ptrdiff_t dst_rs);

/* Softmax along the middle dim of [outer, n, inner]. */
void mlvm_softmax_f32(size_t outer, size_t n, size_t inner, const float *in,
                      float *out);
/* z - log(sum(exp(z))), z = x - max along n (max-shifted: no underflow). */
void mlvm_log_softmax_f32(size_t outer, size_t n, size_t inner, const float *in, float *out);

/* Layer norm of each row of [rows, cols]; gamma and beta (cols each) may be
 * NULL together. Per row, the statistics (sums of x - x[0] and of their
 * squares, in lanes; the shift keeps the variance accurate for rows far from
 * 0), then the output, while the row is still in L1. */
void mlvm_layer_norm_f32(size_t rows, size_t cols, float eps, const float *x,
                         const float *gamma, const float *beta, float *out);

/* Layer norm over any set of axes: `outer` walks the kept dims (stride 0: x
 * and out offsets), `inner` the normalised dims (stride 0: x and out
 * offsets, stride 1: gamma / beta offsets). */
void mlvm_layer_norm_strided_f32(const mlvm_iter_t *outer, const mlvm_iter_t *inner,
                                 float eps, const float *x, const float *gamma,
                                 const float *beta, float *out);

/* gelu, approximate = "tanh": 0.5 x (1 + tanh(u)), u = sqrt(2/pi)(x +
 * 0.044715 x^3), computed as x / (1 + exp(-2u)): one exp, and no
 * cancellation where tanh(u) is near -1. */
#define MLVM_GELU_TANH_C3 0x1.6e4e26p-5f   /* 0.044715 */
#define MLVM_GELU_TANH_M2K (-0x1.988454p+0f) /* -2 sqrt(2 / pi) */
static inline float mlvm_gelu_tanh(float x)
{
    float t = x * x;
    t = t * x;
    t = MLVM_FMA(t, MLVM_GELU_TANH_C3, x); /* x + 0.044715 x^3 */
    t = t * MLVM_GELU_TANH_M2K;
    return x / (1.0f + mlvm_expf(t));
}

/* gelu, approximate = "none": 0.5 x (1 + erf(x / sqrt 2)), as h + h erf(..). */
#define MLVM_GELU_RSQRT2 0x1.6a09e6p-1f /* 1 / sqrt 2 */
static inline float mlvm_gelu_erf(float x)
{
    const float h = 0.5f * x;
    return MLVM_FMA(h, mlvm_erff(x * MLVM_GELU_RSQRT2), h);
}

/* gelu over n contiguous f32 (out may equal a). */
void mlvm_gelu_tanh_f32(size_t n, const float *a, float *out);
void mlvm_gelu_erf_f32(size_t n, const float *a, float *out);

/* 2-D convolution, x NCHW, w OIHW (I = c / groups), bias NULL or o values;
 * padding is top (pt) and left (pl); bottom and right follow from oh, ow. */
typedef struct mlvm_conv2d {
    mlvm_index_t n, c, h, w, o, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw, groups;
    /* 0 for weights stored as the entry says (OIHW, IHWO: [C][KH][KW][O],
     * Winograd's: [planes][O][C / groups]). The IHWO entries
     * (mlvm_conv2d_ihwo_*) take P (a multiple of 32) for
     * [ceil(O / P)][C][KH][KW][P], each panel's weights contiguous (zero
     * past O). The Winograd entries take MLVM_CONV_A_PANEL with one group
     * and at least MLVM_CONV_A_PANEL outputs: each plane's [O][C] stored
     * per slice of MLVM_CONV_A_PANEL_K input channels and panel of
     * MLVM_CONV_A_PANEL output channels, [ceil(C / K)][ceil(O / P)][kc][P]
     * (kc = the slice's width, zero past O; mlvm_conv2d_a_panel_index), a
     * plane mlvm_conv2d_a_panel_rows(O) C floats, so
     * that the GEMM's tiles read them in order (other values: plain).
     * Every other entry ignores it. Set every field: a descriptor built
     * field by field needs w_panel = 0 too. */
    mlvm_index_t w_panel;
} mlvm_conv2d_t;
/* Weight panels of a GEMM's left operand: a multiple of every kernel
 * path's tile rows (8, 6, 4) and a divisor of its row blocks; the slices a
 * multiple of every path's contraction slices, so that no tile crosses a
 * panel or a slice. */
#define MLVM_CONV_A_PANEL 24
#define MLVM_CONV_A_PANEL_K 256
/* The rows o_count rows take in panels: whole panels, the last padded. */
static inline mlvm_index_t mlvm_conv2d_a_panel_rows(mlvm_index_t o_count)
{
    return (o_count + MLVM_CONV_A_PANEL - 1) / MLVM_CONV_A_PANEL * MLVM_CONV_A_PANEL;
}
/* Where element (o, c) of an o_count x c_count weight lies in its panels. */
static inline mlvm_index_t mlvm_conv2d_a_panel_index(mlvm_index_t o, mlvm_index_t c,
                                                    mlvm_index_t o_count, mlvm_index_t c_count)
{
    const mlvm_index_t o_pad = mlvm_conv2d_a_panel_rows(o_count);
    const mlvm_index_t s = c / MLVM_CONV_A_PANEL_K, c0 = s * MLVM_CONV_A_PANEL_K;
    const mlvm_index_t kc = c_count - c0 < MLVM_CONV_A_PANEL_K ? c_count - c0 : MLVM_CONV_A_PANEL_K;
    return c0 * o_pad + (o / MLVM_CONV_A_PANEL) * kc * MLVM_CONV_A_PANEL
           + (c - c0) * MLVM_CONV_A_PANEL + o % MLVM_CONV_A_PANEL;
}
void mlvm_conv2d_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                     const float *bias, float *out);
/* The same with a caller's workspace of mlvm_conv2d_workspace(p) bytes
 * (64-byte aligned), which lets the kernel copy its input once, padded, and
 * read every tap in place. Workspace 0 (or ws NULL): as mlvm_conv2d_f32. */
size_t mlvm_conv2d_workspace(const mlvm_conv2d_t *p);
void mlvm_conv2d_ws_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                        const float *bias, float *out, void *ws);
/* The same, then fn (mlvm/kernels.h: bias, activation, residual add, ...)
 * on the finished outputs, seen as a matrix [n * o, oh * ow]: group by
 * group while they are in cache on the direct path, all at once otherwise. */
void mlvm_conv2d_epilogue_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                              const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                              const void *ctx);
/* A 1x1 convolution with stride 1 and no padding (x read in place as a
 * GEMM's b), then fn (or NULL) as above: the entry the compiler calls for
 * one. On cores without vectors that GEMM alone, so a firmware links no
 * other convolution for it; on other cores mlvm_conv2d_epilogue_f32
 * without a workspace. */
void mlvm_conv2d_pointwise_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                               const float *bias, float *out, mlvm_epilogue_fn fn,
                               const void *ctx);
/* conv2d given its workspace, then fn (or NULL) as above: the entry the
 * compiler calls where mlvm_conv2d_workspace(p) is not 0 (a workspace of
 * that size must be given). On cores without vectors that is the direct
 * path alone (the padded copy, a GEMM reading it at the taps' offsets), so
 * a firmware links no other convolution; on other cores it is
 * mlvm_conv2d_epilogue_f32. */
void mlvm_conv2d_direct_ws_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                               const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                               const void *ctx);
/* conv2d without a workspace, then fn (or NULL) as above: the entry the
 * compiler calls where cores without vectors sum the taps in place (any
 * but a 1x1 stride-1 convolution). There it
 * is that kernel alone, so a firmware links no other convolution; on other
 * cores it is mlvm_conv2d_epilogue_f32 with no workspace. Any shape is
 * computed correctly. */
void mlvm_conv2d_direct_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                            const float *bias, float *out, mlvm_epilogue_fn fn, const void *ctx);
/* The same where every group has a multiple of 4 output channels (o /
 * groups % 4 == 0: the compiler calls it only then; other channels would
 * be left unwritten): on cores without vectors the in-place sums without
 * their one-channel pass, so a firmware whose convolutions all have such
 * groups links no one-channel code. */
void mlvm_conv2d_direct4_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                             const float *bias, float *out, mlvm_epilogue_fn fn, const void *ctx);
/* The same where every group has one output channel (depthwise: the
 * compiler calls it only then): on cores without vectors the one-channel
 * pass alone. */
void mlvm_conv2d_direct1_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                             const float *bias, float *out, mlvm_epilogue_fn fn, const void *ctx);
/* The three entries above with an activation alone as their epilogue
 * (act: mlvm_epilogue_clamp_f32's bounds and rules, the same bits): on
 * cores without vectors the clamp is their own loop. The compiler calls
 * them in modules that link no GEMM (nn.own_loop_epilogues: every
 * convolution one of these entries, every product a single row), whose
 * firmware then links no epilogue function; elsewhere the GEMM links the
 * runtime's clamp anyway, and the entries above take it as fn. */
void mlvm_conv2d_direct_clamp_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                                  const float *bias, float *out, const mlvm_clamp_t *act);
void mlvm_conv2d_direct4_clamp_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                                   const float *bias, float *out, const mlvm_clamp_t *act);
void mlvm_conv2d_direct1_clamp_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                                   const float *bias, float *out, const mlvm_clamp_t *act);
/* conv2d with the weights stored [c][kh][kw][o] ("IHWO", the compiler's
 * layout for constant weights where it pays; groups must be 1): the
 * output channels in the vector lanes, so small maps fill them. ws: a
 * workspace of mlvm_conv2d_workspace(p) bytes, or NULL (then only a 1x1
 * stride-1 convolution without padding is fast); fn as above, or NULL. */
void mlvm_conv2d_ihwo_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                          const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                          const void *ctx);
/* The same for the two kinds the compiler calls, each linking its kernel
 * alone: a 1x1 stride-1 convolution without padding (no workspace), and
 * any other given its workspace (mlvm_conv2d_workspace(p) bytes, not 0). */
void mlvm_conv2d_ihwo_pointwise_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                                    const float *bias, float *out, mlvm_epilogue_fn fn,
                                    const void *ctx);
void mlvm_conv2d_ihwo_ws_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                             const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                             const void *ctx);
/* A 3x3 convolution with stride 1 and dilation 1 by Winograd's F(2x2,
 * 3x3) (src/kernels/conv_wino.c), u its weights transformed by the
 * compiler ("wino23": [16][O][C / groups], G g G^T of each 3x3 kernel), ws a
 * workspace of mlvm_conv2d_wino_workspace(p) bytes (64-byte aligned); fn
 * as above, or NULL. */
size_t mlvm_conv2d_wino_workspace(const mlvm_conv2d_t *p);
void mlvm_conv2d_wino_f32(const mlvm_conv2d_t *p, const float *x, const float *u,
                          const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                          const void *ctx);
/* The same by F(4x4, 3x3): u [36][O][C / groups] ("wino43"), a workspace of
 * mlvm_conv2d_wino4_workspace(p) bytes. */
size_t mlvm_conv2d_wino4_workspace(const mlvm_conv2d_t *p);
void mlvm_conv2d_wino4_f32(const mlvm_conv2d_t *p, const float *x, const float *u,
                           const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                           const void *ctx);

/* Pooling over planes of [planes, h, w]; padded positions are left out (of
 * the max, and of the average's count). */
typedef struct mlvm_pool2d {
    mlvm_index_t planes, h, w, kh, kw, oh, ow, sh, sw, pt, pl;
} mlvm_pool2d_t;
void mlvm_maxpool2d_f32(const mlvm_pool2d_t *p, const float *x, float *out);
void mlvm_avgpool2d_f32(const mlvm_pool2d_t *p, const float *x, float *out);
/* The max over 8-bit planes, signed or not (src/kernels/maxpool8.c). */
void mlvm_maxpool2d_8(const mlvm_pool2d_t *p, int32_t is_signed, const void *x, void *out);
/* mlvm.qsoftmax over rows of n 8-bit values (signed or not; x and y of one
 * type): onnxruntime's QLinearSoftmax with the compiler's table of 256
 * exponentials (qsoftmax_table in mlvm/dialect/quant.py). */
void mlvm_qsoftmax_8(size_t rows, size_t n, int32_t is_signed, const void *x, const float *table,
                     const float *ys, const void *zy, void *y);
/* mlvm.qavgpool2d: the average of each window of 8-bit x (signed or not),
 * dequantized as xs * (x - zx) in f32 and summed from 0 in row-major order,
 * divided by the count inside x, then nearbyint(avg / ys + zy) saturated
 * to x's type (onnxruntime's QLinearAveragePool). Scales and zero points
 * are single values. */
void mlvm_qavgpool2d_8(const mlvm_pool2d_t *p, int32_t is_signed, const void *x, const float *xs,
                       const void *zx, const float *ys, const void *zy, void *out);
/* The same where one window covers a whole map of n values with no
 * padding, as onnxruntime's global pool computes it: the integer sum of
 * x - zx times xs / (ys * n) in f32, clamped, rounded half to even, plus zy. */
void mlvm_qavgpool2d_global_8(size_t planes, size_t n, int32_t is_signed, const void *x,
                              const float *xs, const void *zx, const float *ys, const void *zy,
                              void *out);

#endif /* MLVM_KERNELS_NN_H_ */
