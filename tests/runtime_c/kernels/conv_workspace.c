/* Prints mlvm_conv2d_workspace, whether cores without vectors sum in
 * place (mlvm_conv2d_scalar_applies, internal),
 * mlvm_conv2d_wino_workspace and mlvm_conv2d_wino4_workspace for each line of 16 numbers on stdin (the
 * fields of mlvm_conv2d_t in order), so that the compiler's copies of them
 * (mlvm.dialect.nn.conv2d_workspace_bytes, conv2d_sums_in_place and
 * conv2d_wino_workspace_bytes with m 2 and 4) can be checked. */
#include <stdio.h>

#include "mlvm/kernels.h"

int mlvm_conv2d_scalar_applies(const mlvm_conv2d_t *p); /* kernels/conv_scalar.h */

int main(void)
{
    long v[16];
    while (scanf("%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld", &v[0], &v[1],
                 &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12],
                 &v[13], &v[14], &v[15]) == 16) {
        mlvm_conv2d_t p;
        p.n = v[0], p.c = v[1], p.h = v[2], p.w = v[3], p.o = v[4], p.kh = v[5], p.kw = v[6];
        p.oh = v[7], p.ow = v[8], p.sh = v[9], p.sw = v[10], p.pt = v[11], p.pl = v[12];
        p.dh = v[13], p.dw = v[14], p.groups = v[15], p.w_panel = 0;
        printf("%lu %d %lu %lu\n", (unsigned long)mlvm_conv2d_workspace(&p),
               mlvm_conv2d_scalar_applies(&p), (unsigned long)mlvm_conv2d_wino_workspace(&p),
               (unsigned long)mlvm_conv2d_wino4_workspace(&p));
    }
    return 0;
}
