/* Internal: conv2d on cores without vectors (Cortex-M), read in place. */
#ifndef MLVM_KERNELS_CONV_SCALAR_H_
#define MLVM_KERNELS_CONV_SCALAR_H_

#include "mlvm/kernels.h"

/* Cores without vectors: kernels there read their operands in place instead
 * of packing them (no buffers on the stack, no copies in the arena).
 * MLVM_PORTABLE_KERNELS with MLVM_SCALAR_KERNELS selects them on any host
 * (the tests' "scalar" kernel path). The same split as matmul.c's. */
#if ((defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))                          \
     && !defined(MLVM_PORTABLE_KERNELS))                                                        \
    || ((defined(__x86_64__) || defined(__aarch64__) || defined(__powerpc64__))                 \
        && !defined(MLVM_SCALAR_KERNELS))
#else
#define MLVM_SCALAR_CORE 1
#endif

/* Whether mlvm_conv2d_scalar_f32 takes p: groups of 4 or more output
 * channels that are not a 1x1 stride-1 convolution (that one is a GEMM
 * reading x in place). */
int mlvm_conv2d_scalar_applies(const mlvm_conv2d_t *p);
/* The convolution with four output channels at a time summed in FPU
 * registers at each output position, over the taps inside the input
 * (padding adds nothing), in the order c, kernel row, kernel column after
 * the bias; no workspace, no stack buffer. */
void mlvm_conv2d_scalar_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                            const float *bias, float *out);

#endif /* MLVM_KERNELS_CONV_SCALAR_H_ */
