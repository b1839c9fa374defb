/* Internal: Thumb-2 cores with a single-precision FPU (the Cortex-M4F,
 * M7, M33, M55; A-profile Thumb builds too), for the kernels
 * that write their inner loops as inline assembly there. gcc does not
 * merge separate loads into a VLDM (several consecutive floats in one
 * instruction) nor keep more than a few sums in registers across them:
 * the 4 x 4 tiles and single rows (matmul.c), the channel-vector tile
 * (conv_cvec.c) and the clamp epilogue (elementwise.c). */
#ifndef MLVM_KERNELS_VFP_H_
#define MLVM_KERNELS_VFP_H_

#if defined(__GNUC__) && defined(__thumb2__) && defined(__ARM_FP) && (__ARM_FP & 4)
/* VLDM / VSTM, VCMP and VMRS (FPv4 and later) */
#define MLVM_FPU_VFP 1
#if defined(__ARM_FEATURE_FMA) && defined(__OPTIMIZE__)
/* and VFMA: the sums' kernels (not at -O0, where gcc cannot find
 * registers for their operands; the C loops there give the same bits) */
#define MLVM_FPU_VLDM 1
#endif
/* the sums' registers d<a> and d<b> (four floats) to zero, from core
 * register r holding 0 (%[z] by default); the sixteen of s0-s15 */
#define MLVM_ZERO_DR(a, b, r) "vmov d" #a ", " r ", " r "\n\tvmov d" #b ", " r ", " r "\n\t"
#define MLVM_ZERO_D(a, b) MLVM_ZERO_DR(a, b, "%[z]")
#define MLVM_ZERO_16_R(r)                                                      \
    MLVM_ZERO_DR(0, 1, r) MLVM_ZERO_DR(2, 3, r) MLVM_ZERO_DR(4, 5, r) MLVM_ZERO_DR(6, 7, r)
#define MLVM_ZERO_16 MLVM_ZERO_16_R("%[z]")
#endif

#endif /* MLVM_KERNELS_VFP_H_ */
