/* Internal: conv2d on cores without vectors (Cortex-M), read in place. */
#ifndef MLVM_KERNELS_CONV_SCALAR_H_
#define MLVM_KERNELS_CONV_SCALAR_H_

#include "gemm.h" /* MLVM_SCALAR_CORE */

/* Whether mlvm_conv2d_scalar_f32 takes p: any convolution but a 1x1
 * stride-1 one (that one is a GEMM reading x in place). */
int mlvm_conv2d_scalar_applies(const mlvm_conv2d_t *p);
/* The convolution with four output channels at a time (one channel at
 * four positions for the rest of a group and depthwise-like groups) summed
 * in FPU registers, over the taps inside the input (padding adds nothing),
 * in the order c, kernel row, kernel column after the bias; no workspace,
 * no stack buffer. */
void mlvm_conv2d_scalar_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                            const float *bias, float *out);

#endif /* MLVM_KERNELS_CONV_SCALAR_H_ */
