/* Error of mlvm/vmath.h's functions against the exact value (computed in
 * double), in ulps of the exact value's binade (the smallest subnormal's
 * spacing below the normal range). A result the exact value rounds to +-inf
 * or 0 must be exactly that; NaN must give NaN.
 *
 *     vmath_ulp STEP    every STEP-th f32 bit pattern, and the edge values
 *     vmath_ulp 1       all 2^32 inputs (a few minutes per function)
 *
 * Prints "vmath_ulp[<path>] <fn>: max <ulps> ulp at <x>" per function and
 * exits 1 when a bound (BOUNDS below, the ones docs/ops.md states) is
 * exceeded. Then the array kernels mlvm_exp_f32, mlvm_sigmoid_f32, mlvm_tanh_f32,
 * mlvm_erf_f32, mlvm_gelu_erf_f32 and mlvm_gelu_tanh_f32 (sixteen lanes at a
 * time on AVX-512)
 * against the scalar functions over
 * the same inputs, bit for bit (any NaN for NaN), in runs of 4093 (a
 * masked tail): "vmath_ulp[<path>] arrays: <n> differ". And mlvm_fma_exact
 * against the C library's fmaf (rounded once with or without the
 * instruction) over random triples, sums that cancel and addends far below
 * the product: "vmath_ulp[<path>] fma_exact: <n> differ". */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlvm/kernels.h"

static double ulps(float got, double want)
{
    const float rounded = (float)want;
    double u;
    int e;
    if (isnan(want))
        return isnan(got) ? 0.0 : INFINITY;
    if (isinf(rounded) || rounded == 0.0f)
        return got == rounded ? 0.0 : fabs((double)got - want) / ldexp(1.0, -149);
    (void)frexp(fabs(want), &e);
    u = ldexp(1.0, e - 24);
    if (u < ldexp(1.0, -149))
        u = ldexp(1.0, -149);
    return fabs((double)got - want) / u;
}

static double sigmoid64(double x) { return 1.0 / (1.0 + exp(-x)); }
static float call_exp(float x) { return mlvm_expf(x); }
static float call_sigmoid(float x) { return mlvm_sigmoidf(x); }
static float call_tanh(float x) { return mlvm_tanhf(x); }
static float call_erf(float x) { return mlvm_erff(x); }
static float call_gelu_erf(float x) { return mlvm_gelu_erf(x); }
static float call_gelu_tanh(float x) { return mlvm_gelu_tanh(x); }

typedef struct fn {
    const char *name;
    float (*f)(float);
    double (*ref)(double);
    double bound;
} fn_t;

static const fn_t FNS[] = {
    {"exp", call_exp, exp, 1.1},
    {"sigmoid", call_sigmoid, sigmoid64, 2.5},
    {"tanh", call_tanh, tanh, 2.5},
    {"erf", call_erf, erf, 2.5},
};

static const float EDGES[] = {
    0.0f, -0.0f, 1e-45f, -1e-45f, 1e-38f, 1.0f, -1.0f, 0.625f, -0.625f, 0.6249999f,
    88.72283f, 88.722839f, 88.72284f, 88.7229f, 89.0f, -87.33654f, -88.0f, -100.0f,
    -103.2789f, -103.97208f, -104.0f, -105.0f, 9.0f, -9.0f, 9.01f, 9.1f, -9.1f, 9.2f, 20.0f, -20.0f,
    0.875f, -0.875f, 0.87499994f, 3.9f, 3.92f, 4.0f, -4.0f, 1e-30f,
    3.4028235e38f, -3.4028235e38f, INFINITY, -INFINITY, NAN,
};

static void check(const fn_t *fn, float x, double *worst, float *at, int *bad)
{
    const float got = fn->f(x);
    const double u = ulps(got, fn->ref((double)x));
    if (u > *worst || u != u) {
        *worst = u;
        *at = x;
    }
    if (!(u <= fn->bound))
        *bad = 1;
}

#define RUN 4093

static long differ(const float *got, const float *in, size_t n, float (*ref)(float))
{
    long d = 0;
    size_t i;
    for (i = 0; i < n; ++i) {
        const float w = ref(in[i]);
        d += mlvm_f32_to_bits(got[i]) != mlvm_f32_to_bits(w) && !(got[i] != got[i] && w != w);
    }
    return d;
}

/* The array kernels on in[0 .. n) against the scalar functions. */
static long arrays_differ(const float *in, size_t n)
{
    static float out[RUN];
    long d = 0;
    mlvm_exp_f32(n, in, out);
    d += differ(out, in, n, mlvm_expf);
    mlvm_sigmoid_f32(n, in, out);
    d += differ(out, in, n, mlvm_sigmoidf);
    mlvm_tanh_f32(n, in, out);
    d += differ(out, in, n, mlvm_tanhf);
    mlvm_erf_f32(n, in, out);
    d += differ(out, in, n, mlvm_erff);
    mlvm_gelu_erf_f32(n, in, out);
    d += differ(out, in, n, call_gelu_erf);
    mlvm_gelu_tanh_f32(n, in, out);
    d += differ(out, in, n, call_gelu_tanh);
    return d;
}

/* Every f32 from a to b (same sign; either order of magnitude) in runs. */
static long sweep_differ(float a, float b)
{
    static float in[RUN];
    uint32_t lo = mlvm_f32_to_bits(a), hi = mlvm_f32_to_bits(b), x;
    long d = 0;
    size_t n = 0;
    if (lo > hi)
        x = lo, lo = hi, hi = x;
    for (x = lo;; ++x) {
        in[n++] = mlvm_bits_to_f32(x);
        if (n == RUN || x == hi) {
            d += arrays_differ(in, n);
            n = 0;
        }
        if (x == hi)
            break;
    }
    return d;
}

/* Vectors mixing the short form's kinds of lanes: normal results near
 * both edges, zeros at and past the lower clamp, subnormal results,
 * overflow, infinities and NaN, one lane of each kind in turn. */
static long mixed_differ(void)
{
    static float in[RUN];
    static const float kinds[][2] = {
        {-86.0f, 87.0f},         /* normal results (a step of 1/4096 across) */
        {-105.0f, -104.0f},      /* 0: at or past the lower clamp */
        {-103.9f, -88.0f},       /* subnormal results */
        {88.4f, 90.0f},          /* k = 128 and overflow */
    };
    long d = 0;
    size_t n = 0, i;
    const size_t nk = sizeof kinds / sizeof *kinds;
    for (i = 0; i < 40 * RUN; ++i) {
        const size_t kind = (i * 7 + i / 3) % (nk + 1); /* lanes of every kind in turn */
        float x;
        if (kind == nk)
            x = (i & 8) ? -INFINITY : (i & 16) ? INFINITY : NAN;
        else
            x = kinds[kind][0] + (kinds[kind][1] - kinds[kind][0]) * (float)(i % 4096) / 4096.0f;
        in[n++] = x;
        if (n == RUN) {
            d += arrays_differ(in, n);
            n = 0;
        }
    }
    return d;
}

static int check_arrays(uint64_t step)
{
    static float in[RUN];
    long d = 0;
    size_t n = 0, e;
    uint64_t b;
    for (b = 0;; b += step ? step : 1) {
        const int end = b > 0xffffffffull;
        if (!end)
            in[n++] = mlvm_bits_to_f32((uint32_t)b);
        if (end)
            for (e = 0; e < sizeof EDGES / sizeof *EDGES && n < RUN; ++e)
                in[n++] = EDGES[e];
        if (n == RUN || end) {
            d += arrays_differ(in, n);
            n = 0;
        }
        if (end)
            break;
    }
    /* every f32 where exp's power of two leaves or enters the normal
     * results' short form (AVX2: k = -125 / -126 near -86.99, k = 127 / 128
     * near 88.38; sigmoid's exponential at the first, and its one
     * comparison at -86.5 from either sign of x) or its zeros from the
     * lower clamp (x <= -104), vectors across the edges included */
    d += sweep_differ(-87.5f, -86.0f);
    d += sweep_differ(86.0f, 87.5f); /* sigmoid's -|x| at -86.5, from x > 0 */
    d += sweep_differ(88.0f, 88.8f);
    d += sweep_differ(-104.5f, -103.5f);
    d += mixed_differ();
    printf("vmath_ulp[%s] arrays: %ld differ\n", mlvm_kernel_path(), d);
    return d != 0;
}

/* a, b and c drawn from 64 random bits: any floats, then c as the
 * rounded product's negation (the exact product's low part is left) or
 * scaled 2^-25 to 2^-70 below it (the sum inexact in double: where
 * rounding to odd is needed), then a qadd-like triple (a byte times a
 * ratio, plus a float). */
static int check_fma(void)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    long d = 0, i;
    for (i = 0; i < 4000000; ++i) {
        float a, b, c, got, want;
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        a = mlvm_bits_to_f32((uint32_t)s), b = mlvm_bits_to_f32((uint32_t)(s >> 32));
        c = mlvm_bits_to_f32((uint32_t)(s >> 16));
        if (i % 4 == 1)
            c = -(a * b);
        else if (i % 4 == 2)
            c = ldexpf(a * b, -25 - (int)(s % 46)) * ((s >> 8 & 1) ? 1.0f : -1.0f);
        else if (i % 4 == 3)
            a = (float)(int)(s % 256), b = ldexpf(1.0f + (float)(s >> 40) * 0x1p-24f, -14 + (int)(s >> 20) % 22);
        got = mlvm_fma_exact(a, b, c), want = fmaf(a, b, c);
        d += !(mlvm_f32_to_bits(got) == mlvm_f32_to_bits(want) || (got != got && want != want));
    }
    printf("vmath_ulp[%s] fma_exact: %ld differ\n", mlvm_kernel_path(), d);
    return d != 0;
}

int main(int argc, char **argv)
{
    const uint64_t step = argc > 1 ? (uint64_t)strtoull(argv[1], NULL, 10) : 10007u;
    size_t f, e;
    int failed = 0;
    for (f = 0; f < sizeof FNS / sizeof *FNS; ++f) {
        double worst = 0.0;
        float at = 0.0f;
        int bad = 0;
        uint64_t b;
        for (b = 0; b <= 0xffffffffull; b += step ? step : 1)
            check(&FNS[f], mlvm_bits_to_f32((uint32_t)b), &worst, &at, &bad);
        for (e = 0; e < sizeof EDGES / sizeof *EDGES; ++e)
            check(&FNS[f], EDGES[e], &worst, &at, &bad);
        printf("vmath_ulp[%s] %s: max %.3f ulp at %a (bound %.1f)%s\n", mlvm_kernel_path(),
               FNS[f].name, worst, at, FNS[f].bound, bad ? " EXCEEDED" : "");
        failed |= bad;
    }
    failed |= check_arrays(step);
    failed |= check_fma();
    return failed;
}
