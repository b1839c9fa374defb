/* Prints mlvm_matmul_workspace for each line "m n k b_rs b_cs b_panel" on stdin, so
 * that the compiler's copy of it (mlvm.dialect.ops.matmul_workspace_bytes,
 * MatmulOp.workspace_bytes) can be checked. */
#include <stdio.h>

#include "mlvm/kernels.h"

int main(void)
{
    long m, n, k, b_rs, b_cs, panel;
    while (scanf("%ld %ld %ld %ld %ld %ld", &m, &n, &k, &b_rs, &b_cs, &panel) == 6) {
        mlvm_matmul_t p;
        p.m = m, p.n = n, p.k = k, p.a_rs = k, p.a_cs = 1, p.b_rs = b_rs, p.b_cs = b_cs;
        p.b_panel = panel;
        printf("%lu\n", (unsigned long)mlvm_matmul_workspace(&p));
    }
    return 0;
}
