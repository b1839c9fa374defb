/* Times mlvm_matmul_ws_f32 from several builds of the runtime against
 * OpenBLAS's sgemm in one process, taking turns (bench/gemm_ab.py builds
 * the shared objects and runs this):
 *
 *     gemm_ab M N K PANEL ROUNDS BLAS.so SGEMM INT64 SET_THREADS RT.so...
 *
 * PANEL 0: b row-major (k x n); else b in panels of PANEL columns (as the
 * compiler stores constant weights), OpenBLAS still row-major. Each round
 * calls every build and OpenBLAS once (or a few times for a short
 * product), in a shuffled order; per build it prints the median time of a
 * call and the median over rounds of its time over OpenBLAS's in the same
 * round. Each .so is a whole runtime linked with -Bsymbolic, so builds of
 * different sources live side by side. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlvm/kernels.h"

typedef void (*ws_fn)(const mlvm_matmul_t *, const mlvm_iter_t *, const float *, const float *,
                      float *, void *);
typedef size_t (*wsz_fn)(const mlvm_matmul_t *);
typedef void (*sgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, float, const float *,
                           int64_t, const float *, int64_t, float, float *, int64_t);
typedef void (*sgemm32_fn)(int, int, int, int, int, int, float, const float *, int,
                           const float *, int, float, float *, int);

#define MAX_LIBS 8

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return v[n / 2];
}

static float *floats(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, (n > 0 ? n : 1) * sizeof(float)) != 0) {
        fprintf(stderr, "gemm_ab: out of memory\n");
        exit(1);
    }
    return (float *)p;
}

static void *symbol(void *h, const char *name, const char *lib)
{
    void *s = dlsym(h, name);
    if (s == NULL) {
        fprintf(stderr, "gemm_ab: %s has no %s\n", lib, name);
        exit(1);
    }
    return s;
}

int main(int argc, char **argv)
{
    mlvm_matmul_t p;
    mlvm_iter_t one;
    ws_fn fn[MAX_LIBS];
    void *blas, *ws = NULL;
    sgemm64_fn sg64 = NULL;
    sgemm32_fn sg32 = NULL;
    float *a, *b, *c;
    double *t, *col, flop;
    int nv, rounds, reps, r, v, q, i, order[MAX_LIBS + 1];
    size_t bytes = 0, cols;
    if (argc < 11 || argc - 10 > MAX_LIBS) {
        fprintf(stderr, "usage: gemm_ab M N K PANEL ROUNDS BLAS.so SGEMM INT64 SET_THREADS RT.so"
                        "... (at most %d)\n", MAX_LIBS);
        return 2;
    }
    memset(&p, 0, sizeof p);
    memset(&one, 0, sizeof one);
    one.rank = 1, one.shape[0] = 1;
    p.m = atol(argv[1]), p.n = atol(argv[2]), p.k = atol(argv[3]), p.b_panel = atol(argv[4]);
    p.a_rs = p.k, p.a_cs = 1, p.b_rs = p.n, p.b_cs = 1;
    rounds = atoi(argv[5]);
    nv = argc - 10;
    cols = (size_t)(p.b_panel > 0 ? (p.n + p.b_panel - 1) / p.b_panel * p.b_panel : p.n);
    a = floats((size_t)(p.m * p.k)), b = floats((size_t)p.k * cols), c = floats((size_t)(p.m * p.n));
    for (i = 0; i < p.m * p.k; ++i)
        a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (i = 0; i < (int)((size_t)p.k * cols); ++i)
        b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    blas = dlopen(argv[6], RTLD_NOW | RTLD_LOCAL);
    if (blas == NULL) {
        fprintf(stderr, "gemm_ab: %s\n", dlerror());
        return 1;
    }
    if (atoi(argv[8]))
        sg64 = (sgemm64_fn)symbol(blas, argv[7], argv[6]);
    else
        sg32 = (sgemm32_fn)symbol(blas, argv[7], argv[6]);
    ((void (*)(int))symbol(blas, argv[9], argv[6]))(1);
    for (v = 0; v < nv; ++v) {
        void *h = dlopen(argv[10 + v], RTLD_NOW | RTLD_LOCAL);
        size_t need;
        if (h == NULL) {
            fprintf(stderr, "gemm_ab: %s\n", dlerror());
            return 1;
        }
        fn[v] = (ws_fn)symbol(h, "mlvm_matmul_ws_f32", argv[10 + v]);
        need = ((wsz_fn)symbol(h, "mlvm_matmul_workspace", argv[10 + v]))(&p);
        bytes = need > bytes ? need : bytes;
    }
    if (bytes > 0) /* one workspace for all: where it lies is then no difference between them */
        ws = floats(bytes / sizeof(float) + 16);
    flop = 2.0 * (double)p.m * (double)p.n * (double)p.k;
    reps = (int)(3e7 / (flop > 1.0 ? flop : 1.0)) + 1;
    t = (double *)calloc((size_t)rounds * (size_t)(nv + 1), sizeof *t);
    col = (double *)calloc((size_t)rounds, sizeof *col);
    if (t == NULL || col == NULL)
        return 1;
    for (r = 0; r < rounds; ++r) {
        for (v = 0; v <= nv; ++v)
            order[v] = v;
        for (v = nv; v > 0; --v) {
            const int j = rand() % (v + 1), x = order[v];
            order[v] = order[j], order[j] = x;
        }
        for (q = 0; q <= nv; ++q) {
            const double t0 = now();
            v = order[q];
            for (i = 0; i < reps; ++i) {
                if (v < nv)
                    fn[v](&p, &one, a, b, c, ws);
                else if (sg64 != NULL) /* row-major, no transposes */
                    sg64(101, 111, 111, p.m, p.n, p.k, 1.0f, a, p.k, b, p.n, 0.0f, c, p.n);
                else
                    sg32(101, 111, 111, (int)p.m, (int)p.n, (int)p.k, 1.0f, a, (int)p.k, b,
                         (int)p.n, 0.0f, c, (int)p.n);
            }
            t[r * (nv + 1) + v] = (now() - t0) / reps;
        }
    }
    for (v = 0; v <= nv; ++v) {
        double time, ratio;
        for (r = 0; r < rounds; ++r)
            col[r] = t[r * (nv + 1) + v];
        time = median(col, rounds);
        for (r = 0; r < rounds; ++r)
            col[r] = t[r * (nv + 1) + v] / t[r * (nv + 1) + nv];
        ratio = median(col, rounds);
        printf("%s\t%.3f\t%.1f\t%.4f\n", v < nv ? argv[10 + v] : "openblas", time * 1e6,
               flop / time * 1e-9, ratio);
    }
    fflush(stdout);
    return 0;
}
