/* Internal: conv2d's and qconv2d's depthwise-like groups with the sums in
 * vector registers (depthwise.c, depthwise_lanes.c, qdepthwise_lanes.c,
 * qdepthwise_rows3.c, qdepthwise_perm.c), for the builds with AVX2 or
 * AVX-512. */
#ifndef MLVM_KERNELS_DEPTHWISE_H_
#define MLVM_KERNELS_DEPTHWISE_H_

#include "mlvm/kernels.h"

/* Groups with fewer output channels than this do too little work per
 * input element for a GEMM (depthwise convolutions). */
#ifndef MLVM_CONV_GEMM_ROWS
#define MLVM_CONV_GEMM_ROWS 4
#endif
/* The widest kernel the flat depthwise paths take (columns masked per tap). */
#define MLVM_DW_TAPS 5

#if (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))                           \
    && !defined(MLVM_PORTABLE_KERNELS)
#define MLVM_DW_REGS 1
/* Whether mlvm_dw_regs_f32 covers p: one input channel per group, fewer
 * than MLVM_CONV_GEMM_ROWS outputs, stride 1, rows as wide as the input's
 * (up to one chunk), kernels up to MLVM_DW_TAPS wide and 16 tall. */
int mlvm_dw_regs_applies(const mlvm_conv2d_t *p);
/* Every image and channel (the lane masks built once per call): x p->n
 * images of c planes, w o x kh x kw, bias o values or NULL, out p->n
 * images of o planes; act (or NULL) an activation applied to the sums in
 * registers (mlvm_epilogue_clamp_f32's). */
void mlvm_dw_regs_f32(const mlvm_conv2d_t *p, const float *x, const float *w, const float *bias,
                      float *out, const mlvm_clamp_t *act);
/* Whether mlvm_dw_lanes_f32 (depthwise_lanes.c) covers p: one input channel
 * and one output per group, at least one vector of channels, kernels up to
 * 64 taps, the padded input rows of one output row within its band. */
int mlvm_dw_lanes_applies(const mlvm_conv2d_t *p);
/* Every channel of one image, channels in the lanes (x c planes, w, bias
 * and out o planes, act as above). */
void mlvm_dw_lanes_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                       const float *bias, float *out, const mlvm_clamp_t *act);
#else
#define mlvm_dw_regs_applies(p) ((void)(p), 0)
#define mlvm_dw_regs_f32(p, x, w, bias, out, act) ((void)0)
#define mlvm_dw_lanes_applies(p) ((void)(p), 0)
#define mlvm_dw_lanes_f32(p, x, w, bias, out, act) ((void)0)
#endif

/* An int8 depthwise kernel this build lacks: its arguments named, nothing
 * done (its applies test is 0). */
#define MLVM_QDW_NONE(p, rq, x, w, zx, zw, bias, mult, zy, out)                                   \
    ((void)(p), (void)(rq), (void)(x), (void)(w), (void)(zx), (void)(zw), (void)(bias),          \
     (void)(mult), (void)(zy), (void)(out))

#if defined(__AVX2__) && !defined(MLVM_PORTABLE_KERNELS)
#define MLVM_QDW_LANES 1
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define MLVM_QDW_LANES_512 1 /* 16 channels per vector, else 8 */
#endif
/* Whether mlvm_qdw_lanes_8 (qdepthwise_lanes.c) covers p: one input channel
 * and one output per group, at least one vector of channels, kernels up to
 * 64 taps, the padded input rows of one output row within its band. */
int mlvm_qdw_lanes_applies(const mlvm_qconv2d_t *p);
/* mlvm_qconv2d_ws_8 (rq NULL: int32 sums in out) or mlvm_qconv2d_requant_8
 * (bias, mult, zy as there; bytes in out) for such a p, every image, with
 * no workspace. */
void mlvm_qdw_lanes_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                      const void *w, const void *zx, const void *zw, const int32_t *bias,
                      const float *mult, const void *zy, void *out);
#define MLVM_QDW_ROWS3 1
/* Whether mlvm_qdw_rows3_8 (qdepthwise_rows3.c) covers p: one input channel
 * and one output per group, 3x3, stride and dilation 1, one row and column
 * of padding on every side (the output as large as the input), rows of at
 * most 512 positions, planes of 16 to 8192 (smaller ones fill too few
 * lanes: the channels-in-lanes kernels do better there). */
int mlvm_qdw_rows3_applies(const mlvm_qconv2d_t *p);
/* As mlvm_qdw_lanes_8 for such a p. */
void mlvm_qdw_rows3_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                      const void *w, const void *zx, const void *zw, const int32_t *bias,
                      const float *mult, const void *zy, void *out);
/* Whether mlvm_qdw_rows3s2_8 (qdepthwise_rows3.c) covers p: as rows3 but
 * stride 2, the first row and column of padding 0 or 1 (the rest as the
 * output's size needs), rows and output rows of at most 512 positions,
 * 8 outputs or more (fewer: the channels-in-lanes kernels do better), its
 * copy (2 oh + 1 rows) within rows3's. */
int mlvm_qdw_rows3s2_applies(const mlvm_qconv2d_t *p);
/* As mlvm_qdw_lanes_8 for such a p. */
void mlvm_qdw_rows3s2_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                        const void *w, const void *zx, const void *zw, const int32_t *bias,
                        const float *mult, const void *zy, void *out);
#else
#define mlvm_qdw_lanes_applies(p) ((void)(p), 0)
#define mlvm_qdw_lanes_8 MLVM_QDW_NONE
#define mlvm_qdw_rows3_applies(p) ((void)(p), 0)
#define mlvm_qdw_rows3_8 MLVM_QDW_NONE
#define mlvm_qdw_rows3s2_applies(p) ((void)(p), 0)
#define mlvm_qdw_rows3s2_8 MLVM_QDW_NONE
#endif

#if defined(__AVX512VBMI__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)                  \
    && !defined(MLVM_PORTABLE_KERNELS)
#define MLVM_QDW_PERM 1
/* Whether mlvm_qdw_perm_8 (qdepthwise_perm.c) covers p: one input channel
 * and one output per group, i8 weights whose zero points (zw) are all 0,
 * an input plane under 128 bytes, up to 64 vectors of tap quads x 16
 * output positions. */
int mlvm_qdw_perm_applies(const mlvm_qconv2d_t *p, const void *zw);
/* As mlvm_qdw_lanes_8 for such a p (zw all 0, so not passed). */
void mlvm_qdw_perm_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                     const void *w, const void *zx, const int32_t *bias, const float *mult,
                     const void *zy, void *out);
/* Whether mlvm_qdw_padded_8 (qdepthwise_perm.c) covers p: one input
 * channel and one output per group, 3x3, stride 1 or 2 both ways,
 * undilated, a padding of one before (and at most one after), i8 weights
 * whose zero points are all 0, the plane with its padding up to 8 KiB. */
int mlvm_qdw_padded_applies(const mlvm_qconv2d_t *p, const void *zw);
/* As mlvm_qdw_perm_8 for such a p. */
void mlvm_qdw_padded_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                       const void *w, const void *zx, const int32_t *bias, const float *mult,
                       const void *zy, void *out);
#else
#define mlvm_qdw_padded_applies(p, zw) ((void)(p), (void)(zw), 0)
#define mlvm_qdw_padded_8(p, rq, x, w, zx, bias, mult, zy, out)                                 \
    MLVM_QDW_NONE(p, rq, x, w, zx, 0, bias, mult, zy, out)
#define mlvm_qdw_perm_applies(p, zw) ((void)(p), (void)(zw), 0)
#define mlvm_qdw_perm_8(p, rq, x, w, zx, bias, mult, zy, out)                                   \
    MLVM_QDW_NONE(p, rq, x, w, zx, 0, bias, mult, zy, out)
#endif

#endif /* MLVM_KERNELS_DEPTHWISE_H_ */
