/* Internal: the int8 convolution of one position per image (qconv_gemv.c),
 * which mlvm_qconv2d_requant_8 takes before its tiles. */
#ifndef MLVM_KERNELS_QGEMV_H_
#define MLVM_KERNELS_QGEMV_H_

#include "mlvm/kernels.h"

/* Whether mlvm_qgemv_8 covers p: one group, a 1x1 kernel over a 1x1 input
 * without padding before it (one output position per image). */
int mlvm_qgemv_applies(const mlvm_qconv2d_t *p);
/* mlvm_qconv2d_requant_8's result for such a p (no workspace); with rq
 * NULL, mlvm_qconv2d_ws_8's int32 sums (bias, mult and zy unused). */
void mlvm_qgemv_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x, const void *w,
                  const void *zx, const void *zw, const int32_t *bias, const float *mult,
                  const void *zy, void *out);

#endif
