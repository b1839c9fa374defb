/* A small C harness that times a generated mlvm module with no Python in
 * the way: it links the module's C (built with -DMLVM_SO_ENTRY) and the
 * runtime, reads the first export from the module descriptor, fills the
 * inputs with deterministic values in [0, 1), and times calls through the
 * descriptor's entry point.
 *
 *     harness BATCHES CALLS_PER_BATCH [cpu|wall]
 *     harness --serve [cpu|wall]
 *     harness --kernel-path
 *
 * prints one line per batch: the time of one call in nanoseconds (batch
 * time / calls), measured with the thread's CPU clock (default) or the
 * monotonic wall clock. With --serve it prints "ready", then for each
 * number N read from stdin makes one untimed call and prints the time of
 * one of N timed calls (so that bench/run.py can interleave its batches
 * with the other runners'); it ends at end of input. With --kernel-path it
 * prints the matmul / conv kernels the linked runtime was built with
 * ("avx512", "avx2" or "portable", mlvm_kernel_path()) and exits. */
#define _POSIX_C_SOURCE 200112L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlvm/kernels.h"
#include "mlvm/module.h"

const mlvm_module_t *mlvm_so_module(void);

static size_t elems(const mlvm_tensor_desc_t *d)
{
    size_t n = 1;
    int32_t i;
    for (i = 0; i < d->rank; ++i)
        n *= (size_t)d->dims[i];
    return n;
}

static void *aligned(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes > 0 ? bytes : 64) != 0) {
        fprintf(stderr, "harness: out of memory\n");
        exit(1);
    }
    memset(p, 0, bytes > 0 ? bytes : 64);
    return p;
}

static double now(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    const mlvm_module_t *m = mlvm_so_module();
    const mlvm_export_t *f;
    void *ins[16], *outs[16], *arena;
    long batches, calls, b, c;
    clockid_t clock = CLOCK_THREAD_CPUTIME_ID;
    uint32_t state = 12345u;
    int32_t i;
    int serve;
    if (argc == 2 && strcmp(argv[1], "--kernel-path") == 0) {
        printf("%s\n", mlvm_kernel_path());
        return 0;
    }
    serve = argc >= 2 && strcmp(argv[1], "--serve") == 0;
    if (argc < (serve ? 2 : 3)) {
        fprintf(stderr, "usage: harness BATCHES CALLS_PER_BATCH [cpu|wall] | --serve [cpu|wall]"
                        " | --kernel-path\n");
        return 2;
    }
    batches = serve ? 0 : atol(argv[1]);
    calls = serve ? 3 : atol(argv[2]);
    if (argc > (serve ? 2 : 3) && strcmp(argv[serve ? 2 : 3], "wall") == 0)
        clock = CLOCK_MONOTONIC;
    if (m == NULL || m->magic != MLVM_MODULE_MAGIC || m->num_exports < 1) {
        fprintf(stderr, "harness: not an mlvm module\n");
        return 1;
    }
    f = &m->exports[0];
    if (f->num_inputs > 16 || f->num_outputs > 16 || f->call == NULL) {
        fprintf(stderr, "harness: unsupported export %s\n", f->name);
        return 1;
    }
    for (i = 0; i < f->num_inputs; ++i) {
        size_t k, n = elems(&f->inputs[i]);
        float *x = (float *)aligned(n * 4);
        for (k = 0; k < n; ++k) {
            state = state * 1664525u + 1013904223u;
            x[k] = (float)(state >> 8) / 16777216.0f;
        }
        ins[i] = x;
    }
    for (i = 0; i < f->num_outputs; ++i)
        outs[i] = aligned(elems(&f->outputs[i]) * 4);
    arena = aligned(f->arena_bytes);
    for (c = 0; c < calls || c < 3; ++c) /* warm up */
        if (f->call(arena, ins, outs) != MLVM_OK) {
            fprintf(stderr, "harness: call failed\n");
            return 1;
        }
    if (serve) {
        printf("ready\n");
        fflush(stdout);
        while (scanf("%ld", &calls) == 1 && calls > 0) {
            double t0;
            f->call(arena, ins, outs);
            t0 = now(clock);
            for (c = 0; c < calls; ++c)
                f->call(arena, ins, outs);
            printf("%.3f\n", (now(clock) - t0) / (double)calls);
            fflush(stdout);
        }
        return 0;
    }
    for (b = 0; b < batches; ++b) {
        const double t0 = now(clock);
        for (c = 0; c < calls; ++c)
            f->call(arena, ins, outs);
        printf("%.3f\n", (now(clock) - t0) / (double)calls);
    }
    return 0;
}
