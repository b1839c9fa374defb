/* matmul, conv2d and pooling kernels against float64 loops, for one kernel path
 * (the build's flags choose it: portable C, AVX2 + FMA or AVX-512).
 * Sizes cross every blocking edge: ragged tiles, several contraction
 * slices, more rows than a row block, transposed and strided operands;
 * conv2d over strides, dilations, groups and padding on every side.
 * Prints "kernel_paths[<path>]: N cases, F failures"; exit 1 on a failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlvm/kernels.h"
#include "mlvm/kernels_nn.h"

/* the rows of one of the GEMM's row blocks (gemm.h's MLVM_MM_SLAB_M): no slab for them */
#define MLVM_MM_SLAB_ROWS 192

/* MLVM_TEST_SMALL: a microcontroller's run (its heap of a few MB, its
 * soft-float doubles): the shapes up to 33 and every small edge case, the
 * large ones left to the host. */
#ifdef MLVM_TEST_SMALL
#define BIG 0
#else
#define BIG 1
#endif

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

static float uniform(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng_state >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
}

static float *random_array(size_t n)
{
    float *p = (float *)malloc((n ? n : 1) * sizeof *p);
    size_t i;
    for (i = 0; i < n; ++i)
        p[i] = uniform();
    return p;
}

static long cases, failures;

/* |got - want| <= 1e-5 * bound + 1e-30 for every element. */
static void compare(const char *what, size_t n, const float *got, const double *want,
                    const double *bound)
{
    size_t i;
    ++cases;
    for (i = 0; i < n; ++i)
        if (!(fabs((double)got[i] - want[i]) <= 1e-5 * bound[i] + 1e-30)) {
            ++failures;
            fprintf(stderr, "%s: element %lu is %.9g, want %.9g\n", what, (unsigned long)i, got[i], want[i]);
            return;
        }
}

/* b copied into panels `panel` columns wide (kernels.h), zero-padded. */
static float *panels_of(const float *b, const mlvm_matmul_t *p, mlvm_index_t panel)
{
    const mlvm_index_t np = (p->n + panel - 1) / panel;
    float *out = (float *)calloc((size_t)(np * panel * p->k) + 1, sizeof *out);
    mlvm_index_t j, kk;
    for (j = 0; j < p->n; ++j)
        for (kk = 0; kk < p->k; ++kk)
            out[(j / panel) * p->k * panel + kk * panel + j % panel] = b[kk * p->b_rs + j * p->b_cs];
    return out;
}

/* panel: 0, or b stored in panels that wide (the compiler's layout of
 * large constant weights). */
static void check_matmul_as(mlvm_index_t m, mlvm_index_t n, mlvm_index_t k, int ta, int tb,
                            mlvm_index_t panel)
{
    mlvm_matmul_t p;
    mlvm_iter_t one = {1, {1}, {{0}, {0}}};
    float *a = random_array((size_t)(m * k)), *b = random_array((size_t)(k * n));
    float *out = random_array((size_t)(m * n));
    double *want = (double *)calloc((size_t)(m * n) + 1, sizeof *want);
    double *bound = (double *)calloc((size_t)(m * n) + 1, sizeof *bound);
    mlvm_index_t i, j, kk;
    char what[96];
    p.m = m, p.n = n, p.k = k;
    p.a_rs = ta ? 1 : k, p.a_cs = ta ? m : 1;
    p.b_rs = tb ? 1 : n, p.b_cs = tb ? k : 1;
    for (i = 0; i < m; ++i)
        for (j = 0; j < n; ++j)
            for (kk = 0; kk < k; ++kk) {
                const double t = (double)a[i * p.a_rs + kk * p.a_cs] * b[kk * p.b_rs + j * p.b_cs];
                want[i * n + j] += t;
                bound[i * n + j] += fabs(t);
            }
    if (panel != 0) {
        float *packed = panels_of(b, &p, panel);
        free(b);
        b = packed;
    }
    p.b_panel = panel;
    mlvm_matmul_f32(&p, &one, a, b, out);
    snprintf(what, sizeof what, "matmul m=%ld n=%ld k=%ld ta=%d tb=%d panel=%ld", (long)m, (long)n,
             (long)k, ta, tb, (long)panel);
    compare(what, (size_t)(m * n), out, want, bound);
    if (m == 1) { /* the single row's entries, wide and narrow (any n, any layout of b) */
        char what_row[128];
        for (j = 0; j < n; ++j)
            out[j] = NAN;
        mlvm_matmul_row_f32(&p, a, b, out, NULL, NULL);
        snprintf(what_row, sizeof what_row, "%s [row entry]", what);
        compare(what_row, (size_t)n, out, want, bound);
        for (j = 0; j < n; ++j)
            out[j] = NAN;
        mlvm_matmul_row4_f32(&p, a, b, out, NULL, NULL);
        snprintf(what_row, sizeof what_row, "%s [row4 entry]", what);
        compare(what_row, (size_t)n, out, want, bound);
    }
    free(a), free(b), free(out), free(want), free(bound);
}

static void check_matmul(mlvm_index_t m, mlvm_index_t n, mlvm_index_t k, int ta, int tb)
{
    check_matmul_as(m, n, k, ta, tb, 0);
}

/* got is want bit for bit, but for which NaN a sum of two NaNs is (IEEE
 * leaves it open, and compilers swap the operands of an addition). */
static void same_product(const char *what, const mlvm_matmul_t *p, const float *got,
                         const float *want)
{
    mlvm_index_t i;
    for (i = 0; i < p->m * p->n; ++i)
        if (memcmp(&got[i], &want[i], sizeof *got) != 0 && !(isnan(got[i]) && isnan(want[i]))) {
            ++failures;
            fprintf(stderr, "%s m=%ld n=%ld k=%ld: element %ld is %.9g, want %.9g\n", what,
                    (long)p->m, (long)p->n, (long)p->k, (long)i, got[i], want[i]);
            break;
        }
}

/* An epilogue the GEMM applies in its tiles' stores (an activation alone,
 * a Linear layer's column bias with a ReLU or nothing) against the plain
 * product with the epilogue function applied after: bit for bit, NaN and
 * infinities planted in a, but for which NaN a sum of two NaNs is (IEEE
 * leaves it open, and compilers swap the operands of an addition); for a
 * single row (m = 1) also its entries. */
static void check_epilogue(mlvm_index_t m, mlvm_index_t n, mlvm_index_t k, mlvm_epilogue_fn fn,
                           const void *ctx, const char *what)
{
    mlvm_matmul_t p;
    mlvm_iter_t one = {1, {1}, {{0}, {0}}};
    float *a = random_array((size_t)(m * k)), *b = random_array((size_t)(k * n));
    float *want = random_array((size_t)(m * n)), *got = random_array((size_t)(m * n));
    mlvm_index_t i;
    ++cases;
    /* in every third row of a only (from the second): a special value
     * makes its whole row of sums NaN or infinite, and the other rows check
     * values; and in one element of every fifth column of b (from the
     * third), which a single row's sums see too */
    for (i = 0; i < m * k; i += 7)
        if (i / k % 3 == 1)
            a[i] = i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY;
    for (i = 2; i < n && k > 0; i += 5)
        b[(i * 7 % k) * n + i] = i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY;
    p.m = m, p.n = n, p.k = k, p.a_rs = k, p.a_cs = 1, p.b_rs = n, p.b_cs = 1, p.b_panel = 0;
    mlvm_matmul_f32(&p, &one, a, b, want);
    fn(ctx, 0, m, 0, n, want, n);
    mlvm_matmul_epilogue_f32(&p, a, b, got, fn, ctx);
    same_product(what, &p, got, want);
    if (m == 1) { /* the single row's entries, wide and narrow (any n) */
        char what_row[64];
        int narrow;
        for (narrow = 0; narrow < 2; ++narrow) {
            for (i = 0; i < n; ++i)
                got[i] = NAN;
            (narrow ? mlvm_matmul_row4_f32 : mlvm_matmul_row_f32)(&p, a, b, got, fn, ctx);
            snprintf(what_row, sizeof what_row, "%s [row%s entry]", what, narrow ? "4" : "");
            same_product(what_row, &p, got, want);
            if (fn != mlvm_epilogue_bias_f32)
                continue;
            for (i = 0; i < n; ++i)
                got[i] = NAN;
            (narrow ? mlvm_matmul_row4_bias_f32 : mlvm_matmul_row_bias_f32)(&p, a, b, got,
                                                                             (const mlvm_bias_t *)ctx);
            snprintf(what_row, sizeof what_row, "%s [row%s bias entry]", what, narrow ? "4" : "");
            same_product(what_row, &p, got, want);
        }
    }
    free(a), free(b), free(want), free(got);
}

/* A b in memory that more rows than a row block read, packed into the
 * workspace's slab once per column block and contraction slice
 * (mlvm_matmul_ws_f32, mlvm_matmul_epilogue_ws_f32): the sums of the
 * entries without a workspace, bit for bit, given exactly
 * mlvm_matmul_workspace bytes (a sanitized build sees a write past them);
 * a product in panels or of fewer rows asks for none. b's rows b_rs
 * floats apart (unless tb: then its columns are k apart). */
static void check_slab_rs(mlvm_index_t m, mlvm_index_t n, mlvm_index_t k, int ta, int tb,
                          mlvm_index_t b_rs)
{
    static const mlvm_clamp_t relu = {0.0f, 0.0f, 1};
    mlvm_matmul_t p;
    mlvm_iter_t one = {1, {1}, {{0}, {0}}};
    float *a = random_array((size_t)(m * k)), *b = random_array((size_t)(tb ? k * n : k * b_rs));
    float *want = random_array((size_t)(m * n)), *got = random_array((size_t)(m * n));
    void *ws;
    ++cases;
    p.m = m, p.n = n, p.k = k, p.b_panel = 0;
    p.a_rs = ta ? 1 : k, p.a_cs = ta ? m : 1;
    p.b_rs = tb ? 1 : b_rs, p.b_cs = tb ? k : 1;
    if (mlvm_matmul_workspace(&p) == 0) {
        ++failures;
        fprintf(stderr, "matmul m=%ld n=%ld k=%ld tb=%d: no workspace\n", (long)m, (long)n, (long)k, tb);
    }
    ws = malloc(mlvm_matmul_workspace(&p) + !mlvm_matmul_workspace(&p));
    mlvm_matmul_f32(&p, &one, a, b, want);
    mlvm_matmul_ws_f32(&p, &one, a, b, got, ws);
    same_product("matmul with its workspace", &p, got, want);
    mlvm_epilogue_clamp_f32(&relu, 0, m, 0, n, want, n);
    mlvm_matmul_epilogue_ws_f32(&p, a, b, got, mlvm_epilogue_clamp_f32, &relu, ws);
    same_product("matmul with its workspace and a relu", &p, got, want);
    p.b_panel = 32;
    if (mlvm_matmul_workspace(&p) != 0 || (p.b_panel = 0, p.m = MLVM_MM_SLAB_ROWS,
                                           mlvm_matmul_workspace(&p) != 0)) {
        ++failures;
        fprintf(stderr, "matmul n=%ld k=%ld: a workspace for panels or %d rows\n", (long)n,
                (long)k, MLVM_MM_SLAB_ROWS);
    }
    free(a), free(b), free(want), free(got), free(ws);
}

static void check_slab(mlvm_index_t m, mlvm_index_t n, mlvm_index_t k, int ta, int tb)
{
    check_slab_rs(m, n, k, ta, tb, n); /* b's rows (tb: columns) contiguous */
}

/* mlvm_epilogue_clamp_f32 itself against the rules written out here (the
 * other checks compare kernels with it): relu gives +0 below 0 and keeps
 * -0 and NaN; a clip gives lo at or below lo, then hi at or above hi, and
 * keeps NaN; bit for bit, over rows of 1 to 13 values (the Cortex-M
 * blocks of four and the rest), one run or rows with a gap between them,
 * the special values (+-0, +-inf, NaN of both signs, the bounds
 * themselves) among random ones. */
static void check_clamp_rules(void)
{
    /* bounds of zero (a tie there tells the bound's bits from the value's),
     * lo above hi (hi everywhere but NaN: the bounds' order), infinite ones */
    static const mlvm_clamp_t acts[8] = {
        {0.0f, 0.0f, 1},  {0.0f, 6.0f, 0},  {-0.25f, 0.5f, 0}, {-0.0f, HUGE_VALF, 0},
        {-1.0f, 0.0f, 0}, {1.0f, -1.0f, 0}, {0.0f, -0.0f, 0},  {-HUGE_VALF, HUGE_VALF, 0}};
    const float specials[12] = {0.0f,  -0.0f, HUGE_VALF, -HUGE_VALF, NAN,    -NAN,
                                6.0f,  -0.25f, 0.5f,     1e-40f,     -1e-40f, 1.0f};
    float x[2 * 16], want[2 * 16];
    mlvm_index_t cols, ldo, i, j, t; /* t: the specials in each of a block's four places */
    int a;
    for (a = 0; a < 8; ++a)
        for (cols = 1; cols <= 13; ++cols)
            for (ldo = cols; ldo <= cols + 2; ldo += 2)
                for (t = 0; t < 4; ++t) {
                    const mlvm_clamp_t *c = &acts[a];
                    ++cases;
                    for (i = 0; i < 2 * 16; ++i) {
                        x[i] = (i + t) % 3 == 0 ? specials[((i + t) / 3 + (mlvm_index_t)a) % 12]
                                                : 8.0f * uniform() - 4.0f;
                        want[i] = x[i];
                    }
                    for (i = 0; i < 2; ++i)
                        for (j = 0; j < cols; ++j) {
                            float *w = &want[i * ldo + j];
                            if (c->relu)
                                *w = *w < 0.0f ? 0.0f : *w;
                            else {
                                *w = *w <= c->lo ? c->lo : *w;
                                *w = *w >= c->hi ? c->hi : *w;
                            }
                        }
                    mlvm_epilogue_clamp_f32(c, 0, 2, 0, cols, x, ldo);
                    for (i = 0; i < 2 * 16; ++i)
                        if (memcmp(&x[i], &want[i], sizeof *x) != 0) {
                            ++failures;
                            fprintf(stderr,
                                    "clamp rules relu=%d lo=%g hi=%g cols=%ld ldo=%ld: element %ld is "
                                    "%.9g, want %.9g\n", (int)c->relu, c->lo, c->hi, (long)cols,
                                    (long)ldo, (long)i, x[i], want[i]);
                            break;
                        }
                }
}

static void check_clamp(mlvm_index_t m, mlvm_index_t n, mlvm_index_t k, const mlvm_clamp_t *c)
{
    check_epilogue(m, n, k, mlvm_epilogue_clamp_f32, c, c->relu ? "clamp relu" : "clamp bounds");
}

/* A column bias (-0, NaN and infinities among them) with a ReLU (lo 0) or
 * nothing (lo -inf). */
static void check_bias(mlvm_index_t m, mlvm_index_t n, mlvm_index_t k, int relu)
{
    float *bias = random_array((size_t)n);
    mlvm_bias_t b;
    mlvm_index_t j;
    for (j = 0; j < n; j += 5)
        bias[j] = j % 4 == 0 ? -0.0f : j % 4 == 1 ? NAN : j % 4 == 2 ? INFINITY : -INFINITY;
    b.bias = bias;
    b.lo = relu ? 0.0f : -HUGE_VALF;
    check_epilogue(m, n, k, mlvm_epilogue_bias_f32, &b, relu ? "bias relu" : "bias");
    free(bias);
}

/* An epilogue of the compiler's kind (neither of the runtime's two, so no
 * tile kernel applies it): a residual added to half the sum, as generated
 * epilogue functions do, and each element's visits counted. Whatever the
 * path (b in place or packed, the workspace's slab, panels, a single row's
 * gemv, several slices), every output is handed over exactly once, after
 * its last slice, inside the product: the plain product with the function
 * applied after, bit for bit. */
typedef struct residual_ctx {
    const float *res;
    unsigned char *seen;
    mlvm_index_t m, n;
    long *bad; /* calls outside the product */
} residual_ctx_t;

static void residual_epilogue(const void *ctx, mlvm_index_t i0, mlvm_index_t rows,
                              mlvm_index_t j0, mlvm_index_t cols, float *tile, mlvm_index_t ldo)
{
    const residual_ctx_t *r = (const residual_ctx_t *)ctx;
    mlvm_index_t i, j;
    if (i0 < 0 || j0 < 0 || rows < 0 || cols < 0 || i0 + rows > r->m || j0 + cols > r->n) {
        ++*r->bad;
        return;
    }
    for (i = 0; i < rows; ++i)
        for (j = 0; j < cols; ++j) {
            tile[i * ldo + j] = 0.5f * tile[i * ldo + j] + r->res[(i0 + i) * r->n + j0 + j];
            ++r->seen[(i0 + i) * r->n + j0 + j];
        }
}

/* panel: 0, or b in panels that wide; ws: with the workspace (when the
 * product asks for one) */
static void check_residual(mlvm_index_t m, mlvm_index_t n, mlvm_index_t k, mlvm_index_t panel,
                           int ws)
{
    mlvm_matmul_t p;
    mlvm_iter_t one = {1, {1}, {{0}, {0}}};
    float *a = random_array((size_t)(m * k)), *b = random_array((size_t)(k * n));
    float *res = random_array((size_t)(m * n)), *want = random_array((size_t)(m * n));
    float *got = random_array((size_t)(m * n)), *bp = NULL;
    unsigned char *seen = (unsigned char *)calloc((size_t)(m * n) + 1, 1);
    void *work = NULL;
    long bad = 0;
    residual_ctx_t r;
    mlvm_index_t i;
    char what[96];
    ++cases;
    p.m = m, p.n = n, p.k = k, p.a_rs = k, p.a_cs = 1, p.b_rs = n, p.b_cs = 1, p.b_panel = 0;
    if (panel != 0) { /* (the sums of panels: their own order) */
        bp = panels_of(b, &p, panel);
        p.b_rs = panel, p.b_panel = panel;
    }
    mlvm_matmul_f32(&p, &one, a, bp != NULL ? bp : b, want);
    r.res = res, r.seen = seen, r.m = m, r.n = n, r.bad = &bad;
    residual_epilogue(&r, 0, m, 0, n, want, n);
    memset(seen, 0, (size_t)(m * n));
    if (ws && mlvm_matmul_workspace(&p) != 0) {
        work = malloc(mlvm_matmul_workspace(&p));
        mlvm_matmul_epilogue_ws_f32(&p, a, bp != NULL ? bp : b, got, residual_epilogue, &r, work);
    } else {
        mlvm_matmul_epilogue_f32(&p, a, bp != NULL ? bp : b, got, residual_epilogue, &r);
    }
    snprintf(what, sizeof what, "residual epilogue panel=%ld%s", (long)panel,
             work != NULL ? " with its workspace" : "");
    same_product(what, &p, got, want);
    for (i = 0; i < m * n && bad == 0; ++i)
        if (seen[i] != 1)
            bad = 1;
    if (bad != 0) {
        ++failures;
        fprintf(stderr, "%s m=%ld n=%ld k=%ld: an output handed over %d times, or a call outside\n",
                what, (long)m, (long)n, (long)k, i > 0 ? seen[i - 1] : -1);
    }
    free(a), free(b), free(res), free(want), free(got), free(bp), free(seen), free(work);
}

typedef void (*conv_epilogue_fn)(const mlvm_conv2d_t *p, const float *x, const float *w,
                                 const float *bias, float *out, void *ws, mlvm_epilogue_fn fn,
                                 const void *ctx);

/* A convolution with the activation epilogue (in the depthwise kernels'
 * registers where they run) against the same path without it and
 * mlvm_epilogue_clamp_f32 applied after: bit for bit, a NaN planted in x;
 * relu and a clip whose bounds both bite, case by case. conv:
 * mlvm_conv2d_epilogue_f32 (w OIHW) or mlvm_conv2d_ihwo_f32 (w IHWO); ws
 * its workspace or NULL. */
static void check_conv_clamp(conv_epilogue_fn conv, const mlvm_conv2d_t *p, const float *x,
                             const float *w, const float *bias, void *ws, const char *what)
{
    static const mlvm_clamp_t relu = {0.0f, 0.0f, 1}, clip = {-0.25f, 0.5f, 0};
    const mlvm_clamp_t *c = cases % 2 ? &relu : &clip;
    const size_t in = (size_t)(p->n * p->c * p->h * p->w), size = (size_t)(p->n * p->o * p->oh * p->ow);
    float *xn = (float *)malloc(in * sizeof *xn), *want = random_array(size), *got = random_array(size);
    size_t q;
    ++cases;
    memcpy(xn, x, in * sizeof *xn);
    xn[in / 2] = NAN;
    conv(p, xn, w, bias, want, ws, NULL, NULL);
    if (size > 0)
        mlvm_epilogue_clamp_f32(c, 0, p->n * p->o, 0, p->oh * p->ow, want, p->oh * p->ow);
    conv(p, xn, w, bias, got, ws, mlvm_epilogue_clamp_f32, c);
    for (q = 0; q < size; ++q)
        if (memcmp(&got[q], &want[q], sizeof *got) != 0) {
            ++failures;
            fprintf(stderr, "%s [clamp relu=%d]: element %lu is %.9g, want %.9g\n", what,
                    (int)c->relu, (unsigned long)q, got[q], want[q]);
            break;
        }
    free(xn), free(want), free(got);
}

/* Winograd's F(2x2, 3x3) and F(4x4, 3x3) with each plane of the
 * transformed weights in the GEMM's panels (w_panel = MLVM_CONV_A_PANEL,
 * kernels_nn.h) against the same weights plain: the same bits, with and
 * without the clamp epilogue; the panels' rows past o are NaN (no tile may
 * read them). The weights need not be a transform of anything: the sums
 * are the same either way. */
static void check_a_panels(mlvm_index_t n, mlvm_index_t c, mlvm_index_t h, mlvm_index_t w,
                           mlvm_index_t o, int bias)
{
    static const mlvm_clamp_t relu = {0.0f, 0.0f, 1};
    const mlvm_index_t o_pad = (o + MLVM_CONV_A_PANEL - 1) / MLVM_CONV_A_PANEL * MLVM_CONV_A_PANEL;
    const size_t size = (size_t)(n * o * h * w);
    mlvm_conv2d_t p = {0};
    float *x = random_array((size_t)(n * c * h * w)), *bv = random_array((size_t)o);
    float *want = (float *)malloc(size * sizeof *want + 1), *got = (float *)malloc(size * sizeof *got + 1);
    mlvm_index_t oc, ci, q, t;
    int m, e;
    char what[160];
    p.n = n, p.c = c, p.h = h, p.w = w, p.o = o, p.kh = 3, p.kw = 3, p.oh = h, p.ow = w;
    p.sh = 1, p.sw = 1, p.pt = 1, p.pl = 1, p.dh = 1, p.dw = 1, p.groups = 1;
    for (m = 2; m <= 4; m += 2) {
        const mlvm_index_t planes = (m + 2) * (m + 2);
        const size_t ws_bytes = m == 2 ? mlvm_conv2d_wino_workspace(&p) : mlvm_conv2d_wino4_workspace(&p);
        conv_epilogue_fn conv = m == 2 ? mlvm_conv2d_wino_f32 : mlvm_conv2d_wino4_f32;
        float *u = random_array((size_t)(planes * o * c));
        float *up = (float *)malloc((size_t)(planes * o_pad * c) * sizeof *up + 1);
        void *ws = malloc(ws_bytes + 1);
        mlvm_conv2d_t pp = p;
        pp.w_panel = MLVM_CONV_A_PANEL;
        /* written in storage order: planes, slices, their panels, a
         * panel's rows of MLVM_CONV_A_PANEL; checked against the index
         * function */
        for (q = 0, t = 0; t < planes; ++t)
            for (ci = 0; ci < c; ci += MLVM_CONV_A_PANEL_K) {
                const mlvm_index_t kc = c - ci < MLVM_CONV_A_PANEL_K ? c - ci : MLVM_CONV_A_PANEL_K;
                mlvm_index_t o0, kk, r;
                for (o0 = 0; o0 < o_pad; o0 += MLVM_CONV_A_PANEL)
                    for (kk = 0; kk < kc; ++kk)
                        for (r = 0; r < MLVM_CONV_A_PANEL; ++r, ++q) {
                            oc = o0 + r;
                            up[q] = oc < o ? u[(t * o + oc) * c + ci + kk] : NAN;
                            if (oc < o && t * o_pad * c + mlvm_conv2d_a_panel_index(oc, ci + kk, o, c) != q) {
                                ++failures;
                                fprintf(stderr, "a panel index of (%ld, %ld) is not %ld\n", (long)oc,
                                        (long)(ci + kk), (long)(q - t * o_pad * c));
                            }
                        }
            }
        for (e = 0; e < 2; ++e) {
            const mlvm_clamp_t *act = e ? &relu : NULL;
            ++cases;
            conv(&p, x, u, bias ? bv : NULL, want, ws, act ? mlvm_epilogue_clamp_f32 : NULL, act);
            conv(&pp, x, up, bias ? bv : NULL, got, ws, act ? mlvm_epilogue_clamp_f32 : NULL, act);
            snprintf(what, sizeof what, "wino%d n%ld c%ld %ldx%ld o%ld%s%s [u in panels]", m, (long)n, (long)c,
                     (long)h, (long)w, (long)o, bias ? " +bias" : "", act ? " relu" : "");
            for (q = 0; q < (mlvm_index_t)size; ++q)
                if (memcmp(&got[q], &want[q], sizeof *got) != 0) {
                    ++failures;
                    fprintf(stderr, "%s: element %ld is %.9g, want %.9g\n", what, (long)q, got[q], want[q]);
                    break;
                }
        }
        free(u), free(up), free(ws);
    }
    free(x), free(bv), free(want), free(got);
}

/* Winograd's G for F(2x2, 3x3) (4 x 3) and F(4x4, 3x3) (6 x 3). */
static const double wino_g2[4][3] = {{1, 0, 0}, {.5, .5, .5}, {.5, -.5, .5}, {0, 0, 1}};
static const double wino_g4[6][3] = {{1. / 4, 0, 0},       {-1. / 6, -1. / 6, -1. / 6},
                                     {-1. / 6, 1. / 6, -1. / 6}, {1. / 24, 1. / 12, 1. / 6},
                                     {1. / 24, -1. / 12, 1. / 6}, {0, 0, 1}};

/* F(4x4, 3x3)'s bound (docs/ops.md): each output's is the largest of its
 * 4x4 tile's (its transforms mix the tile's sums: an output whose own
 * window is all padding gets rounding from its neighbours'), times scale
 * (100 where a group has fewer than 16 channels: the transforms' rounding
 * is then no longer small against the sums; the compiler does not choose
 * it there). */
static double *wino_tile_bound(const mlvm_conv2d_t *p, const double *bound, double scale)
{
    const mlvm_index_t planes = p->n * p->o;
    double *tb = (double *)malloc((size_t)(planes * p->oh * p->ow + 1) * sizeof *tb);
    mlvm_index_t q, oy, ox, i, j;
    for (q = 0; q < planes; ++q)
        for (oy = 0; oy < p->oh; ++oy)
            for (ox = 0; ox < p->ow; ++ox) {
                const double *b = bound + q * p->oh * p->ow;
                double mx = 0.0;
                for (i = oy / 4 * 4; i < oy / 4 * 4 + 4 && i < p->oh; ++i)
                    for (j = ox / 4 * 4; j < ox / 4 * 4 + 4 && j < p->ow; ++j)
                        mx = b[i * p->ow + j] > mx ? b[i * p->ow + j] : mx;
                tb[(q * p->oh + oy) * p->ow + ox] = scale * mx;
            }
    return tb;
}

/* The IHWO weights wi ([taps][o]) stored in panels of 32 channels, as the
 * compiler stores them where o is a multiple of 32 (w_panel): the same
 * bits as with wi, with the workspace and without. */
static void check_ihwo_panels(const mlvm_conv2d_t *p, const float *x, const float *wi,
                              const float *bias, void *ws, const char *what)
{
    const mlvm_index_t taps = p->c * p->kh * p->kw, size = p->n * p->o * p->oh * p->ow;
    mlvm_conv2d_t q = *p;
    float *wp, *out, *plain;
    mlvm_index_t oc, t;
    char what_p[200];
    int pass;
    if (p->o % 32 != 0)
        return;
    wp = (float *)malloc((size_t)(p->o * taps) * sizeof *wp);
    out = (float *)malloc((size_t)size * sizeof *out);
    plain = (float *)malloc((size_t)size * sizeof *plain);
    for (oc = 0; oc < p->o; ++oc)
        for (t = 0; t < taps; ++t)
            wp[(oc / 32) * 32 * taps + t * 32 + oc % 32] = wi[t * p->o + oc];
    q.w_panel = 32;
    for (pass = 0; pass < 2; ++pass) {
        for (t = 0; t < size; ++t)
            out[t] = plain[t] = NAN;
        mlvm_conv2d_ihwo_f32(p, x, wi, bias, plain, pass == 0 ? ws : NULL, NULL, NULL);
        mlvm_conv2d_ihwo_f32(&q, x, wp, bias, out, pass == 0 ? ws : NULL, NULL, NULL);
        snprintf(what_p, sizeof what_p, "%s [panels of 32%s]", what, pass == 0 ? "" : ", no ws");
        for (t = 0; t < size; ++t)
            if (memcmp(&out[t], &plain[t], sizeof *out) != 0) {
                ++failures;
                fprintf(stderr, "%s: element %ld is %.9g, want %.9g\n", what_p, (long)t, out[t],
                        plain[t]);
                break;
            }
    }
    free(wp);
    free(out);
    free(plain);
}

/* A 3x3 stride-1 convolution by Winograd's F(2x2, 3x3) and F(4x4, 3x3):
 * the weights transformed as the compiler stores them (G g G^T in double,
 * rounded once, [(m + 2)^2][o][c / groups]), a workspace of exactly the
 * size it asks for filled with NaN, the outputs within the sums' bound
 * (F(4x4): wino_tile_bound's); with the clamp epilogue, the same bits as
 * the clamp applied after. */
static void check_wino_of(const mlvm_conv2d_t *p, const float *x, const float *wt,
                          const float *bias, float *out, const double *want,
                          const double *bound, const char *what)
{
    const size_t size = (size_t)(p->n * p->o * p->oh * p->ow);
    const mlvm_index_t cg = p->c / p->groups;
    int m;
    for (m = 2; m <= 4; m += 2) {
        const int k = m + 2;
        const double(*g)[3] = m == 2 ? wino_g2 : wino_g4;
        const size_t ws_bytes = m == 2 ? mlvm_conv2d_wino_workspace(p) : mlvm_conv2d_wino4_workspace(p);
        conv_epilogue_fn conv = m == 2 ? mlvm_conv2d_wino_f32 : mlvm_conv2d_wino4_f32;
        float *u = (float *)malloc((size_t)(k * k * p->o * cg) * sizeof *u + 1);
        float *ws = ws_bytes > 0 ? (float *)malloc(ws_bytes) : NULL;
        char what_w[160];
        mlvm_index_t oc, ci, i, j, a, b;
        size_t q;
        for (oc = 0; oc < p->o; ++oc)
            for (ci = 0; ci < cg; ++ci)
                for (i = 0; i < k; ++i)
                    for (j = 0; j < k; ++j) {
                        double t = 0.0;
                        for (a = 0; a < 3; ++a)
                            for (b = 0; b < 3; ++b)
                                t += g[i][a] * wt[((oc * cg + ci) * 3 + a) * 3 + b] * g[j][b];
                        u[((i * k + j) * p->o + oc) * cg + ci] = (float)t;
                    }
        for (q = 0; q < ws_bytes / sizeof *ws; ++q)
            ws[q] = NAN;
        for (q = 0; q < size; ++q)
            out[q] = NAN;
        conv(p, x, u, bias, out, ws, NULL, NULL);
        snprintf(what_w, sizeof what_w, "%s [wino F(%dx%d)]", what, m, m);
        if (m == 2) {
            compare(what_w, size, out, want, bound);
        } else {
            double *tb = wino_tile_bound(p, bound, cg >= 16 ? 1.0 : 100.0);
            compare(what_w, size, out, want, tb);
            free(tb);
        }
        check_conv_clamp(conv, p, x, u, bias, ws, what_w);
        free(u), free(ws);
    }
}

typedef void (*direct_clamp_fn)(const mlvm_conv2d_t *p, const float *x, const float *w,
                                const float *bias, float *out, const mlvm_clamp_t *act);

/* The direct entries with the activation as their own loop
 * (mlvm_conv2d_direct*_clamp_f32) against mlvm_conv2d_direct_f32 with
 * mlvm_epilogue_clamp_f32 applied after: bit for bit, relu and a clip whose
 * bounds both bite, for each entry the compiler may call on p (the four-
 * channel one where every group has a multiple of 4 output channels, the
 * one-channel one where every group has one). */
static void check_direct_clamp(const mlvm_conv2d_t *p, const float *x, const float *w,
                               const float *bias, const char *what)
{
    static const mlvm_clamp_t acts[2] = {{0.0f, 0.0f, 1}, {-0.25f, 0.5f, 0}};
    const mlvm_index_t og = p->o / p->groups, plane = p->oh * p->ow;
    const size_t size = (size_t)(p->n * p->o * plane);
    const direct_clamp_fn entries[3] = {mlvm_conv2d_direct_clamp_f32, mlvm_conv2d_direct4_clamp_f32,
                                        mlvm_conv2d_direct1_clamp_f32};
    const int applies[3] = {1, og % 4 == 0, og == 1};
    float *want = random_array(size), *got = random_array(size);
    size_t q;
    int a, e;
    mlvm_conv2d_direct_f32(p, x, w, bias, want, NULL, NULL);
    for (a = 0; a < 2; ++a) {
        float *plain = random_array(size);
        memcpy(plain, want, size * sizeof *plain);
        if (size > 0)
            mlvm_epilogue_clamp_f32(&acts[a], 0, p->n * p->o, 0, plane, plain, plane);
        for (e = 0; e < 3; ++e) {
            if (!applies[e])
                continue;
            ++cases;
            for (q = 0; q < size; ++q)
                got[q] = NAN;
            entries[e](p, x, w, bias, got, &acts[a]);
            for (q = 0; q < size; ++q)
                if (memcmp(&got[q], &plain[q], sizeof *got) != 0) {
                    ++failures;
                    fprintf(stderr, "%s [clamp entry %d relu=%d]: element %lu is %.9g, want %.9g\n",
                            what, e, (int)acts[a].relu, (unsigned long)q, got[q], plain[q]);
                    break;
                }
        }
        free(plain);
    }
    free(want), free(got);
}

static void check_conv_sw(mlvm_index_t n, mlvm_index_t c, mlvm_index_t h, mlvm_index_t w,
                          mlvm_index_t o, mlvm_index_t kh, mlvm_index_t kw, mlvm_index_t s,
                          mlvm_index_t d, mlvm_index_t groups, const mlvm_index_t pad[4], int bias,
                          mlvm_index_t sw, mlvm_index_t dw)
{
    mlvm_conv2d_t p;
    const mlvm_index_t cg = c / groups, og = o / groups;
    float *x, *wt, *bv, *out;
    double *want, *bound;
    mlvm_index_t b, oc, oy, ox, ci, i, j, size;
    char what[128];
    p.n = n, p.c = c, p.h = h, p.w = w, p.o = o, p.kh = kh, p.kw = kw;
    p.oh = (h + pad[0] + pad[2] - d * (kh - 1) - 1) / s + 1;
    p.sh = s, p.sw = sw, p.pt = pad[0], p.pl = pad[1], p.dh = d, p.dw = dw, p.groups = groups;
    p.w_panel = 0;
    p.ow = (w + pad[1] + pad[3] - dw * (kw - 1) - 1) / p.sw + 1;
    size = n * o * p.oh * p.ow;
    x = random_array((size_t)(n * c * h * w));
    wt = random_array((size_t)(o * cg * kh * kw));
    bv = random_array((size_t)o);
    out = random_array((size_t)size);
    want = (double *)calloc((size_t)size + 1, sizeof *want);
    bound = (double *)calloc((size_t)size + 1, sizeof *bound);
    for (b = 0; b < n; ++b)
        for (oc = 0; oc < o; ++oc)
            for (oy = 0; oy < p.oh; ++oy)
                for (ox = 0; ox < p.ow; ++ox) {
                    const mlvm_index_t at = ((b * o + oc) * p.oh + oy) * p.ow + ox;
                    if (bias) {
                        want[at] = bv[oc];
                        bound[at] = fabs(bv[oc]);
                    }
                    for (ci = 0; ci < cg; ++ci)
                        for (i = 0; i < kh; ++i)
                            for (j = 0; j < kw; ++j) {
                                const mlvm_index_t iy = oy * p.sh + i * p.dh - p.pt;
                                const mlvm_index_t ix = ox * p.sw + j * p.dw - p.pl;
                                double t;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                    continue;
                                t = (double)x[((b * c + oc / og * cg + ci) * h + iy) * w + ix]
                                    * wt[((oc * cg + ci) * kh + i) * kw + j];
                                want[at] += t;
                                bound[at] += fabs(t);
                            }
                }
    mlvm_conv2d_f32(&p, x, wt, bias ? bv : NULL, out);
    snprintf(what, sizeof what,
             "conv2d n=%ld c=%ld %ldx%ld o=%ld k=%ldx%ld s=%ld d=%ld g=%ld pad=%ld,%ld,%ld,%ld",
             (long)n, (long)c, (long)h, (long)w, (long)o, (long)kh, (long)kw, (long)s, (long)d,
             (long)groups, (long)pad[0], (long)pad[1], (long)pad[2], (long)pad[3]);
    compare(what, (size_t)size, out, want, bound);
    {
        /* the no-workspace entry the compiler calls where cores without
         * vectors sum the taps in place (right for any shape); with the
         * clamp epilogue, the same bits as the clamp applied after */
        static const mlvm_clamp_t relu = {0.0f, 0.0f, 1};
        char what_d[160];
        float *clamped = random_array((size_t)size);
        size_t q;
        for (q = 0; q < (size_t)size; ++q)
            out[q] = NAN;
        mlvm_conv2d_direct_f32(&p, x, wt, bias ? bv : NULL, out, NULL, NULL);
        snprintf(what_d, sizeof what_d, "%s [direct entry]", what);
        compare(what_d, (size_t)size, out, want, bound);
        if (og % 4 == 0) { /* groups of 4k channels: the entry without the one-channel pass */
            char what_4[160];
            float *four = random_array((size_t)size);
            mlvm_conv2d_direct4_f32(&p, x, wt, bias ? bv : NULL, four, NULL, NULL);
            snprintf(what_4, sizeof what_4, "%s [direct4 entry]", what);
            compare(what_4, (size_t)size, four, want, bound);
            free(four);
        }
        if (size > 0)
            mlvm_epilogue_clamp_f32(&relu, 0, p.n * p.o, 0, p.oh * p.ow, out, p.oh * p.ow);
        mlvm_conv2d_direct_f32(&p, x, wt, bias ? bv : NULL, clamped, mlvm_epilogue_clamp_f32, &relu);
        for (q = 0; q < (size_t)size; ++q)
            if (memcmp(&clamped[q], &out[q], sizeof *out) != 0) {
                ++failures;
                fprintf(stderr, "%s [clamp]: element %lu is %.9g, want %.9g\n", what_d,
                        (unsigned long)q, clamped[q], out[q]);
                break;
            }
        free(clamped);
        check_direct_clamp(&p, x, wt, bias ? bv : NULL, what_d);
    }
    {
        /* the direct path, with a workspace of exactly the size it asks for
         * (filled with NaN: nothing may read it before writing it) */
        const size_t ws_bytes = mlvm_conv2d_workspace(&p);
        float *ws = ws_bytes > 0 ? (float *)malloc(ws_bytes) : NULL;
        size_t q;
        for (q = 0; q < ws_bytes / sizeof *ws; ++q)
            ws[q] = NAN;
        for (q = 0; q < (size_t)size; ++q)
            out[q] = NAN;
        mlvm_conv2d_ws_f32(&p, x, wt, bias ? bv : NULL, out, ws);
        strncat(what, ws_bytes > 0 ? " [direct]" : " [ws 0]", sizeof what - strlen(what) - 1);
        compare(what, (size_t)size, out, want, bound);
        check_conv_clamp(mlvm_conv2d_epilogue_f32, &p, x, wt, bias ? bv : NULL, ws, what);
        if (groups == 1) {
            /* the weights as the compiler stores them for the channels-in-
             * lanes kernel ([c][kh][kw][o]), with the workspace and without */
            const mlvm_index_t taps = c * kh * kw;
            float *wi = (float *)malloc((size_t)(o * taps) * sizeof *wi);
            mlvm_index_t t;
            for (oc = 0; oc < o; ++oc)
                for (t = 0; t < taps; ++t)
                    wi[t * o + oc] = wt[oc * taps + t];
            for (q = 0; q < ws_bytes / sizeof *ws; ++q)
                ws[q] = NAN;
            for (q = 0; q < (size_t)size; ++q)
                out[q] = NAN;
            mlvm_conv2d_ihwo_f32(&p, x, wi, bias ? bv : NULL, out, ws, NULL, NULL);
            strncat(what, " [ihwo]", sizeof what - strlen(what) - 1);
            compare(what, (size_t)size, out, want, bound);
            check_conv_clamp(mlvm_conv2d_ihwo_f32, &p, x, wi, bias ? bv : NULL, ws, what);
            for (q = 0; q < (size_t)size; ++q)
                out[q] = NAN;
            mlvm_conv2d_ihwo_f32(&p, x, wi, bias ? bv : NULL, out, NULL, NULL, NULL);
            strncat(what, " [no ws]", sizeof what - strlen(what) - 1);
            compare(what, (size_t)size, out, want, bound);
            check_conv_clamp(mlvm_conv2d_ihwo_f32, &p, x, wi, bias ? bv : NULL, NULL, what);
            check_ihwo_panels(&p, x, wi, bias ? bv : NULL, ws, what);
            free(wi);
        }
        free(ws);
    }
    if (kh == 3 && kw == 3 && s == 1 && sw == 1 && d == 1 && dw == 1)
        check_wino_of(&p, x, wt, bias ? bv : NULL, out, want, bound, what);
    free(x), free(wt), free(bv), free(out), free(want), free(bound);
}

/* width: stride s + 1, no dilation; height: stride s, dilation d */
static void check_conv(mlvm_index_t n, mlvm_index_t c, mlvm_index_t h, mlvm_index_t w,
                       mlvm_index_t o, mlvm_index_t kh, mlvm_index_t kw, mlvm_index_t s,
                       mlvm_index_t d, mlvm_index_t groups, const mlvm_index_t pad[4], int bias)
{
    check_conv_sw(n, c, h, w, o, kh, kw, s, d, groups, pad, bias, s + 1, 1);
}

/* Depthwise with stride 1 and output rows as wide as input rows (the flat
 * paths: sums in registers with AVX2 / AVX-512, else loops that vectorise):
 * pads that keep the width, dilations, multipliers, widths from 1 to past
 * one chunk (64 floats with AVX2, 128 with AVX-512), kernels past its taps
 * and past 16 rows, one-row maps; planes of at most 10 vectors whose taps
 * lie within one vector (AVX-512's shifted windows), tap offsets of
 * exactly +-16 and fewer output rows than input rows among them. */
/* 3x3, stride and dilation 1, top and left padding 1, planes of at most
 * 10 vectors and rows of at most 15 (AVX-512's kernel-row sums, dw_sep3):
 * planes ending on a vector's end (the next row's neighbours must not leak
 * in), of 7 and 10 vectors, rows of 1 and 15 columns, one row, one column,
 * fewer output rows than input rows (the last one's sums from past the
 * output's vectors) and more, channel multipliers, no bias, two images;
 * and the shapes next to it that dw_perm keeps (left padding 0 and 2,
 * dilation, 1x3, 5x3 and 3x5 kernels). */
static void check_depthwise_rows3(void)
{
    static const mlvm_index_t same3[4] = {1, 1, 1, 1}, short3[4] = {1, 1, 0, 1},
                              long3[4] = {1, 1, 2, 1}, l0[4] = {1, 0, 1, 2}, l2[4] = {1, 2, 1, 0},
                              dil[4] = {1, 1, 3, 3}, k13[4] = {1, 1, 0, 1}, k53[4] = {1, 1, 3, 1},
                              k35[4] = {1, 1, 1, 3};
    check_conv_sw(1, 3, 8, 15, 3, 3, 3, 1, 1, 3, same3, 1, 1, 1);
    check_conv_sw(2, 4, 4, 4, 4, 3, 3, 1, 1, 4, same3, 1, 1, 1);
    check_conv_sw(1, 2, 2, 8, 2, 3, 3, 1, 1, 2, same3, 0, 1, 1);
    check_conv_sw(1, 2, 10, 15, 2, 3, 3, 1, 1, 2, same3, 1, 1, 1);
    check_conv_sw(1, 2, 14, 7, 2, 3, 3, 1, 1, 2, same3, 1, 1, 1);
    check_conv_sw(1, 2, 32, 5, 2, 3, 3, 1, 1, 2, same3, 1, 1, 1);
    check_conv_sw(1, 3, 1, 13, 3, 3, 3, 1, 1, 3, same3, 1, 1, 1);
    check_conv_sw(1, 3, 17, 1, 3, 3, 3, 1, 1, 3, same3, 1, 1, 1);
    check_conv_sw(1, 3, 11, 7, 3, 3, 3, 1, 1, 3, short3, 1, 1, 1);
    check_conv_sw(1, 3, 10, 7, 3, 3, 3, 1, 1, 3, short3, 1, 1, 1);
    check_conv_sw(1, 3, 11, 7, 3, 3, 3, 1, 1, 3, long3, 1, 1, 1);
    check_conv_sw(1, 2, 9, 5, 6, 3, 3, 1, 1, 2, same3, 1, 1, 1);
    check_conv_sw(2, 5, 25, 5, 5, 3, 3, 1, 1, 5, same3, 0, 1, 1);
    check_conv_sw(1, 2, 6, 5, 2, 3, 3, 1, 1, 2, l0, 1, 1, 1);
    check_conv_sw(1, 2, 6, 5, 2, 3, 3, 1, 1, 2, l2, 1, 1, 1);
    check_conv_sw(1, 2, 5, 4, 2, 3, 3, 1, 2, 2, dil, 1, 1, 2);
    check_conv_sw(1, 2, 5, 4, 2, 3, 3, 1, 1, 2, dil, 1, 1, 2);
    check_conv_sw(1, 2, 5, 4, 2, 3, 3, 1, 2, 2, k13, 1, 1, 1);
    check_conv_sw(1, 2, 6, 5, 2, 1, 3, 1, 1, 2, k13, 1, 1, 1);
    check_conv_sw(1, 2, 6, 5, 2, 5, 3, 1, 1, 2, k53, 1, 1, 1);
    check_conv_sw(1, 2, 6, 3, 2, 3, 5, 1, 1, 2, k35, 1, 1, 1);
    /* dw_rows3 (every such shape with AVX2; with AVX-512 planes past ten
     * vectors or rows of 16 and more): multipliers, more and fewer output
     * rows, no bias, one row, rows of 2, 16, 17, 24, 100 and 127 */
    check_conv_sw(1, 2, 6, 24, 6, 3, 3, 1, 1, 2, same3, 1, 1, 1);
    check_conv_sw(1, 3, 5, 17, 3, 3, 3, 1, 1, 3, long3, 1, 1, 1);
    check_conv_sw(1, 2, 6, 24, 2, 3, 3, 1, 1, 2, short3, 0, 1, 1);
    check_conv_sw(1, 2, 40, 5, 2, 3, 3, 1, 1, 2, same3, 1, 1, 1);
    check_conv_sw(1, 2, 3, 16, 2, 3, 3, 1, 1, 2, same3, 1, 1, 1);
    check_conv_sw(1, 2, 9, 2, 2, 3, 3, 1, 1, 2, same3, 1, 1, 1);
    check_conv_sw(1, 3, 1, 100, 3, 3, 3, 1, 1, 3, same3, 1, 1, 1);
    check_conv_sw(2, 2, 2, 127, 4, 3, 3, 1, 1, 2, long3, 1, 1, 1);
}

static void check_depthwise_same(void)
{
    static const mlvm_index_t same3[4] = {1, 1, 1, 1}, same5[4] = {2, 2, 2, 2},
                              tall[4] = {0, 1, 2, 1}, dil[4] = {2, 2, 2, 2},
                              wide7[4] = {3, 3, 3, 3}, none[4] = {0, 0, 0, 0},
                              rows16[4] = {7, 1, 8, 1}, rows17[4] = {8, 0, 8, 0},
                              down[4] = {0, 0, 1, 0}, up[4] = {1, 0, 0, 0},
                              cols[4] = {0, 1, 0, 1};
    check_conv_sw(1, 2, 5, 16, 2, 2, 1, 1, 1, 2, down, 1, 1, 1);
    check_conv_sw(2, 3, 5, 16, 3, 2, 1, 1, 1, 3, up, 1, 1, 1);
    check_conv_sw(1, 3, 6, 5, 3, 3, 3, 1, 1, 3, cols, 1, 1, 1);
    check_conv_sw(1, 4, 12, 12, 4, 3, 3, 1, 1, 4, same3, 1, 1, 1);
    check_conv_sw(3, 6, 7, 7, 6, 3, 3, 1, 1, 6, same3, 0, 1, 1);
    check_conv_sw(1, 3, 5, 128, 3, 3, 3, 1, 1, 3, same3, 1, 1, 1);
    check_conv_sw(1, 2, 4, 64, 2, 3, 3, 1, 1, 2, same3, 1, 1, 1);
    check_conv_sw(1, 2, 4, 65, 2, 3, 3, 1, 1, 2, same3, 0, 1, 1);
    check_conv_sw(1, 2, 40, 3, 2, 16, 3, 1, 1, 2, rows16, 1, 1, 1);
    check_conv_sw(1, 2, 20, 3, 2, 17, 1, 1, 1, 2, rows17, 1, 1, 1);
    check_conv_sw(2, 5, 3, 3, 15, 3, 3, 1, 1, 5, same3, 1, 1, 1);
    check_conv_sw(1, 4, 1, 7, 4, 3, 3, 1, 1, 4, same3, 1, 1, 1);
    check_conv_sw(1, 8, 48, 48, 8, 3, 3, 1, 1, 8, same3, 1, 1, 1);
    check_conv_sw(2, 64, 25, 5, 64, 3, 3, 1, 1, 64, same3, 1, 1, 1);
    check_conv_sw(1, 6, 13, 7, 12, 3, 3, 1, 1, 6, same3, 1, 1, 1);
    check_conv_sw(1, 4, 9, 1, 4, 3, 3, 1, 1, 4, same3, 0, 1, 1);
    check_conv_sw(1, 3, 11, 6, 3, 5, 5, 1, 1, 3, same5, 1, 1, 1);
    check_conv_sw(1, 3, 12, 9, 3, 4, 3, 1, 1, 3, tall, 1, 1, 1);
    check_conv_sw(1, 2, 10, 8, 2, 3, 3, 1, 2, 2, dil, 1, 1, 2);
    check_conv_sw(1, 2, 40, 130, 2, 3, 3, 1, 1, 2, same3, 1, 1, 1);
    check_conv_sw(1, 2, 3, 300, 2, 3, 3, 1, 1, 2, same3, 1, 1, 1);
    check_conv_sw(1, 2, 9, 9, 2, 7, 7, 1, 1, 2, wide7, 1, 1, 1);
    check_conv_sw(1, 3, 6, 1, 3, 1, 1, 1, 1, 3, none, 1, 1, 1);
    check_depthwise_rows3();
}

/* Depthwise with stride 2 (sums in registers with AVX2 / AVX-512, every
 * other column from two loads): even and odd sizes, pads on every side,
 * dilation, multipliers, rows from 1 to past one chunk, tall kernels. */
static void check_depthwise_stride2(void)
{
    static const mlvm_index_t same3[4] = {1, 1, 1, 1}, tf[4] = {0, 0, 1, 1},
                              odd[4] = {2, 0, 1, 3}, none[4] = {0, 0, 0, 0},
                              rows16[4] = {7, 2, 8, 2};
    mlvm_index_t w;
    for (w = 1; w <= 40; w += 3)
        check_conv_sw(1, 3, 7, w, 3, 3, 3, 2, 1, 3, same3, 1, 2, 1);
    check_conv_sw(2, 16, 48, 48, 16, 3, 3, 2, 1, 16, same3, 1, 2, 1);
    check_conv_sw(1, 4, 12, 12, 8, 3, 3, 2, 1, 4, tf, 1, 2, 1);
    check_conv_sw(1, 3, 13, 11, 9, 5, 5, 2, 1, 3, odd, 0, 2, 1);
    check_conv_sw(1, 2, 9, 17, 2, 3, 3, 2, 2, 2, odd, 1, 2, 2);
    check_conv_sw(1, 2, 5, 256, 2, 3, 3, 2, 1, 2, same3, 1, 2, 1);
    check_conv_sw(1, 2, 5, 258, 2, 3, 3, 2, 1, 2, same3, 1, 2, 1);
    check_conv_sw(1, 2, 40, 9, 2, 16, 5, 2, 1, 2, rows16, 1, 2, 1);
    check_conv_sw(1, 2, 1, 1, 2, 1, 1, 2, 1, 2, none, 1, 2, 1);
}

/* Convolutions at column stride 2 whose taps read both column phases (a
 * row's two phases copied in one pass with AVX2 / AVX-512): widths from 1
 * to past two vectors, even and odd, pads that make either phase the
 * first and the phases as long or one shorter, 2- and 3-wide kernels, a
 * GEMM's rows (MobileNet's stem: 3 -> 8 channels) and two images. */
static void check_conv_stride2(void)
{
    static const mlvm_index_t same3[4] = {1, 1, 1, 1}, odd[4] = {2, 0, 1, 3},
                              none[4] = {0, 0, 0, 0}, left[4] = {0, 1, 0, 0};
    static const mlvm_index_t widths[] = {1, 2, 3, 15, 16, 17, 32, 34, 35, 50};
    size_t i;
    for (i = 0; i < sizeof widths / sizeof *widths; ++i) {
        check_conv_sw(2, 3, 5, widths[i], 8, 3, 3, 2, 1, 1, same3, 1, 2, 1);
        check_conv_sw(1, 2, 4, widths[i], 6, 2, 2, 2, 1, 1, none, 1, 2, 1);
        check_conv_sw(1, 3, 6, widths[i], 5, 3, 3, 2, 1, 1, odd, 0, 2, 1);
        check_conv_sw(1, 1, 3, widths[i], 4, 1, 2, 2, 1, 1, left, 1, 2, 1);
    }
}

/* Depthwise with the channels in the lanes (AVX2 / AVX-512, strided maps):
 * channel counts of one vector, more, and a ragged last vector; strides 2
 * and 3, unequal strides, dilation, 5x5 and 1x7 kernels, pads on every side
 * and none, maps from 1x1 to several bands, flat positions across rows,
 * no bias, two images. */
static void check_depthwise_lanes(void)
{
    static const mlvm_index_t same3[4] = {1, 1, 1, 1}, same5[4] = {2, 2, 2, 2},
                              odd[4] = {2, 0, 1, 3}, none[4] = {0, 0, 0, 0},
                              row7[4] = {0, 3, 0, 3};
    check_conv_sw(1, 16, 12, 12, 16, 3, 3, 2, 1, 16, same3, 1, 2, 1);
    check_conv_sw(2, 24, 7, 5, 24, 3, 3, 2, 1, 24, same3, 1, 2, 1);
    check_conv_sw(1, 33, 13, 11, 33, 5, 5, 2, 1, 33, same5, 0, 2, 1);
    check_conv_sw(1, 17, 6, 6, 17, 3, 3, 2, 1, 17, odd, 1, 2, 1);
    check_conv_sw(1, 8, 11, 10, 8, 3, 3, 3, 2, 8, same3, 1, 1, 1);
    check_conv_sw(1, 40, 9, 14, 40, 3, 3, 2, 2, 40, same3, 1, 3, 2);
    check_conv_sw(1, 16, 1, 1, 16, 3, 3, 2, 1, 16, same3, 1, 2, 1);
    check_conv_sw(1, 16, 2, 2, 16, 1, 1, 2, 1, 16, none, 1, 2, 1);
    check_conv_sw(1, 19, 9, 30, 19, 1, 7, 2, 1, 19, row7, 1, 2, 1);
    check_conv_sw(1, 16, 130, 97, 16, 3, 3, 2, 1, 16, same3, 1, 2, 1);
    check_conv_sw(1, 32, 5, 700, 32, 3, 3, 2, 1, 32, same3, 1, 2, 1);
}

/* Convolutions the compiler gives IHWO weights (small maps, output
 * channels in the lanes): channel counts below, at and past a sliver (16,
 * 32) with ragged ends, maps of 1 to 9 positions per row, positions tiles
 * crossing rows (and images, for 1x1), strides, dilation, 1x1 with and
 * without stride, the keyword spotter's 10x4 stem, two images, long
 * contractions. */
static void check_ihwo(void)
{
    static const mlvm_index_t same3[4] = {1, 1, 1, 1}, none[4] = {0, 0, 0, 0},
                              stem[4] = {4, 1, 5, 1}, odd[4] = {2, 0, 1, 3};
    check_conv_sw(2, 64, 8, 8, 64, 3, 3, 1, 1, 1, same3, 1, 1, 1);
    check_conv_sw(1, 128, 6, 6, 128, 1, 1, 1, 1, 1, none, 1, 1, 1);
    check_conv_sw(1, 40, 3, 3, 37, 1, 1, 1, 1, 1, none, 0, 1, 1);
    check_conv_sw(3, 24, 3, 3, 40, 1, 1, 1, 1, 1, none, 1, 1, 1); /* tiles across images */
    check_conv_sw(5, 8, 5, 1, 33, 1, 1, 1, 1, 1, none, 1, 1, 1);
    check_conv_sw(1, 7, 5, 3, 17, 3, 3, 1, 1, 1, same3, 1, 1, 1);
    check_conv_sw(2, 1, 49, 10, 64, 10, 4, 2, 1, 1, stem, 1, 2, 1);
    check_conv_sw(1, 32, 16, 16, 64, 3, 3, 2, 1, 1, same3, 1, 2, 1);
    check_conv_sw(1, 9, 11, 9, 33, 3, 3, 1, 2, 1, odd, 1, 2, 2);
    check_conv_sw(1, 16, 1, 1, 5, 1, 1, 1, 1, 1, none, 1, 1, 1);
    check_conv_sw(1, 3, 9, 13, 4, 3, 3, 3, 1, 1, same3, 1, 1, 1);
    /* contractions of many slices (conv_cvec.c's MLVM_CV_KC taps each),
     * the last one short; blocks of tiles with a short last block */
    check_conv_sw(1, 150, 7, 7, 70, 3, 3, 1, 1, 1, same3, 1, 1, 1);
    check_conv_sw(2, 521, 6, 5, 40, 1, 1, 2, 1, 1, none, 1, 2, 1);
    check_conv_sw(1, 200, 9, 11, 33, 1, 1, 1, 1, 1, none, 0, 1, 1);
    /* last slivers just past a vector of 8 and of 24 channels (AVX2's
     * halves of one vector or two) */
    check_conv_sw(1, 20, 5, 4, 57, 3, 3, 1, 1, 1, same3, 1, 1, 1);
    check_conv_sw(2, 12, 3, 3, 41, 1, 1, 1, 1, 1, none, 1, 1, 1);
    check_conv_sw(1, 9, 4, 6, 25, 3, 3, 1, 1, 1, same3, 0, 1, 1);
}

/* Convolutions by Winograd's F(2x2, 3x3) and F(4x4, 3x3) (the pass
 * chooses them on maps of 7x7 and more, F(4x4) from 24x24, any padding):
 * maps of every size modulo 4 (the last tile row and column partly
 * outside), "same", "valid", asymmetric and wide padding,
 * widths of 1 to past a vector of tiles (16 with AVX-512) and several
 * rows of tiles per vector, channels from 1 to a GEMM's row block, images
 * whose tile rows share a block, groups; tests/runtime_c/test_kernel_paths.py
 * also runs them with blocks of a few tile rows. */
static void check_wino(void)
{
    static const mlvm_index_t same3[4] = {1, 1, 1, 1}, none[4] = {0, 0, 0, 0},
                              odd[4] = {0, 1, 2, 0}, wide[4] = {2, 3, 2, 2};
    check_conv_sw(1, 16, 32, 32, 16, 3, 3, 1, 1, 1, same3, 1, 1, 1);
    check_conv_sw(3, 32, 16, 16, 32, 3, 3, 1, 1, 1, same3, 0, 1, 1);
    check_conv_sw(2, 64, 8, 8, 64, 3, 3, 1, 1, 1, same3, 1, 1, 1);
    check_conv_sw(2, 5, 7, 9, 3, 3, 3, 1, 1, 1, same3, 1, 1, 1);
    check_conv_sw(1, 3, 13, 37, 7, 3, 3, 1, 1, 1, none, 1, 1, 1);
    check_conv_sw(3, 4, 5, 3, 6, 3, 3, 1, 1, 1, odd, 1, 1, 1);
    check_conv_sw(1, 2, 4, 1, 2, 3, 3, 1, 1, 1, wide, 0, 1, 1);
    check_conv_sw(2, 1, 3, 3, 1, 3, 3, 1, 1, 1, none, 1, 1, 1);
    if (BIG) {
        check_conv_sw(1, 24, 11, 70, 200, 3, 3, 1, 1, 1, odd, 1, 1, 1);
        check_conv_sw(2, 300, 6, 6, 20, 3, 3, 1, 1, 1, same3, 1, 1, 1);
        check_conv_sw(1, 384, 12, 12, 256, 3, 3, 1, 1, 2, same3, 1, 1, 1); /* AlexNet's groups */
    }
    check_conv_sw(2, 12, 9, 7, 18, 3, 3, 1, 1, 3, odd, 0, 1, 1);
    check_conv_sw(1, 16, 30, 29, 24, 3, 3, 1, 1, 1, same3, 1, 1, 1);
    check_conv_sw(2, 8, 27, 70, 9, 3, 3, 1, 1, 1, odd, 1, 1, 1);
    check_conv_sw(1, 5, 11, 130, 6, 3, 3, 1, 1, 1, wide, 0, 1, 1);
}

/* The bits every path gives (nn.c's order): sixteen lane sums of
 * mlvm_expf(x - max) over whole steps of sixteen, the lanes in order, then
 * the rest in order; softmax multiplies by 1 / sum, log-softmax subtracts
 * logf(sum). */
static int same_bits_as_documented(size_t n, const float *x, const float *got, int log_form)
{
    float lane[16] = {0}, mx = -HUGE_VALF, s = 0.0f, inv;
    size_t i, full = n - n % 16;
    for (i = 0; i < n; ++i)
        mx = x[i] > mx ? x[i] : mx;
    for (i = 0; i < full; ++i)
        lane[i % 16] += mlvm_expf(x[i] - mx);
    for (i = 0; i < 16; ++i)
        s += lane[i];
    for (i = full; i < n; ++i)
        s += mlvm_expf(x[i] - mx);
    inv = 1.0f / s;
    for (i = 0; i < n; ++i) {
        const float want = log_form ? (x[i] - mx) - logf(s) : mlvm_expf(x[i] - mx) * inv;
        if (memcmp(&want, &got[i], sizeof want) != 0)
            return 0;
    }
    return 1;
}

/* Softmax and log-softmax over rows of n (exactly sized) against double:
 * rows shorter than a vector, ragged past the vector maxima's steps, a
 * maximum far above the rest (a missed one overflows the others'
 * exponentials) in each position class, and a NaN (the whole row NaN).
 * Every path gives the same bits (same_bits_as_documented). */
static void check_softmax(size_t n, size_t big_at, int nan)
{
    float *x = random_array(n), *got = (float *)malloc(n * sizeof *got);
    double *want = (double *)malloc(n * sizeof *want), *bound = (double *)malloc(n * sizeof *bound);
    double mx = -HUGE_VAL, s = 0.0;
    char what[96];
    size_t i;
    int log_form;
    for (i = 0; i < n; ++i)
        x[i] *= 8.0f;
    if (big_at < n)
        x[big_at] = 300.0f;
    for (i = 0; i < n; ++i)
        mx = x[i] > mx ? x[i] : mx;
    for (i = 0; i < n; ++i)
        s += exp((double)x[i] - mx);
    for (log_form = 0; log_form < 2; ++log_form) {
        for (i = 0; i < n; ++i) {
            const double z = (double)x[i] - mx;
            want[i] = log_form ? z - log(s) : exp(z) / s;
            bound[i] = log_form ? fabs(z) + log(s) : want[i];
        }
        if (nan)
            x[n / 2] = NAN;
        (log_form ? mlvm_log_softmax_f32 : mlvm_softmax_f32)(1, n, 1, x, got);
        snprintf(what, sizeof what, "%s n=%lu big at %lu%s", log_form ? "log_softmax" : "softmax",
                 (unsigned long)n, (unsigned long)big_at, nan ? " NaN" : "");
        if (!nan) {
            compare(what, n, got, want, bound);
            ++cases;
            if (!same_bits_as_documented(n, x, got, log_form)) {
                ++failures;
                fprintf(stderr, "%s: not the documented order's bits\n", what);
            }
            continue;
        }
        ++cases;
        for (i = 0; i < n; ++i)
            if (got[i] == got[i]) {
                ++failures;
                fprintf(stderr, "%s: element %lu is %.9g, want NaN\n", what, (unsigned long)i, got[i]);
                break;
            }
        x[n / 2] = 0.0f;
    }
    free(x), free(got), free(want), free(bound);
}

static void check_softmaxes(void)
{
    static const size_t sizes[] = {1, 7, 16, 25, 33, 47, 64, 131, 1000}; /* n % 16 from 0 to 15 */
    size_t k;
    for (k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        const size_t n = sizes[k];
        check_softmax(n, n, 0);
        check_softmax(n, n - 1, 0);
        check_softmax(n, n / 3, 0);
        if (n > 50)
            check_softmax(n, 50, 0);
        check_softmax(n, n, n > 1);
    }
}

/* Max and average pooling of exactly sized planes (the vector rows read
 * with masked loads right up to both ends) against one window at a time:
 * the maximum exact, the average within its sum's bound. */
static void check_pool(int is_max, mlvm_index_t planes, mlvm_index_t h, mlvm_index_t w,
                       mlvm_index_t kh, mlvm_index_t kw, mlvm_index_t sh, mlvm_index_t sw,
                       mlvm_index_t pt, mlvm_index_t pl, mlvm_index_t pb, mlvm_index_t pr)
{
    mlvm_pool2d_t p;
    float *x, *got;
    double *want, *bound;
    mlvm_index_t q, oh, ow, i, j;
    char what[160];
    p.planes = planes, p.h = h, p.w = w, p.kh = kh, p.kw = kw, p.sh = sh, p.sw = sw;
    p.pt = pt, p.pl = pl;
    p.oh = (h + pt + pb - kh) / sh + 1, p.ow = (w + pl + pr - kw) / sw + 1;
    x = random_array((size_t)(planes * h * w));
    got = (float *)malloc((size_t)(planes * p.oh * p.ow) * sizeof *got);
    want = (double *)malloc((size_t)(planes * p.oh * p.ow) * sizeof *want);
    bound = (double *)malloc((size_t)(planes * p.oh * p.ow) * sizeof *bound);
    (is_max ? mlvm_maxpool2d_f32 : mlvm_avgpool2d_f32)(&p, x, got);
    for (q = 0; q < planes; ++q)
        for (oh = 0; oh < p.oh; ++oh)
            for (ow = 0; ow < p.ow; ++ow) {
                const mlvm_index_t o = (q * p.oh + oh) * p.ow + ow;
                double acc = is_max ? -HUGE_VAL : 0.0, mag = 0.0;
                long cnt = 0;
                for (i = oh * sh - pt; i < oh * sh - pt + kh; ++i)
                    for (j = ow * sw - pl; j < ow * sw - pl + kw; ++j) {
                        double v;
                        if (i < 0 || i >= h || j < 0 || j >= w)
                            continue;
                        v = x[(q * h + i) * w + j];
                        acc = is_max ? (v > acc ? v : acc) : acc + v;
                        mag += fabs(v), ++cnt;
                    }
                want[o] = is_max ? acc : acc / (double)cnt;
                bound[o] = is_max ? 0.0 : mag / (double)cnt;
            }
    snprintf(what, sizeof what, "%s pool %ldx%ldx%ld k=%ldx%ld s=%ldx%ld pad=%ld,%ld,%ld,%ld",
             is_max ? "max" : "avg", (long)planes, (long)h, (long)w, (long)kh, (long)kw, (long)sh,
             (long)sw, (long)pt, (long)pl, (long)pb, (long)pr);
    compare(what, (size_t)(planes * p.oh * p.ow), got, want, bound);
    free(x), free(got), free(want), free(bound);
}

/* Pooling windows of 1 to 17 columns (16 is the vector rows' widest),
 * strides 1 to 3, padding on every side, rows of 1 to 70 columns. */
static void check_pools(void)
{
    static const mlvm_index_t ws[] = {1, 2, 3, 15, 16, 17, 33, 70};
    size_t a, b;
    int is_max;
    for (is_max = 0; is_max < 2; ++is_max)
        for (a = 0; a < sizeof ws / sizeof *ws; ++a)
            for (b = 0; b < 9; ++b) {
                const mlvm_index_t w = ws[a], kw = 1 + (mlvm_index_t)(b * 7 + a) % 17;
                const mlvm_index_t s = 1 + (mlvm_index_t)b % 3, kh = 1 + (mlvm_index_t)(a + b) % 3;
                const mlvm_index_t pl = kw > 1 ? (mlvm_index_t)b % kw : 0, pr = kw > 1 ? (kw - 1) / 2 : 0;
                const mlvm_index_t pt = kh > 1 ? (mlvm_index_t)a % kh : 0;
                if (w + pl + pr < kw)
                    continue;
                check_pool(is_max, 1 + (mlvm_index_t)b % 2, 2 + (mlvm_index_t)a % 5, w, kh, kw, s,
                           s, pt, pl, kh - 1 - pt, pr);
            }
    check_pool(1, 3, 27, 27, 3, 3, 2, 2, 0, 0, 0, 0);
    check_pool(1, 2, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1);
    check_pool(0, 4, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1);
}

/* A depthwise 3x3 of an empty batch reads and writes nothing (AVX2's
 * plane copies took the first plane before looking at the batch). */
static void check_empty_batch_depthwise(void)
{
    const mlvm_conv2d_t p = {0, 8, 5, 5, 8, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 8, 0};
    static const mlvm_clamp_t none = {-HUGE_VALF, HUGE_VALF, 0};
    float w[72] = {0}, bias[8] = {0};
    mlvm_conv2d_direct1_f32(&p, NULL, w, bias, NULL, mlvm_epilogue_clamp_f32, &none);
}

int main(void)
{
    static const mlvm_index_t sizes[] = {1, 2, 5, 7, 17, 33, 64, 131};
    static const mlvm_index_t pads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 0, 1, 3}};
    const size_t ns = BIG ? sizeof sizes / sizeof *sizes : 6;
    size_t i, j, l;
    int t;
    for (i = 0; i < ns; ++i)
        for (j = 0; j < ns; ++j)
            for (l = 0; l < ns; ++l)
                check_matmul(sizes[i], sizes[j], sizes[l], (int)((i + l) % 2), (int)((j + l) % 3 == 0));
    /* several contraction slices, more rows than a row block, a gemv tail */
    if (BIG)
        check_matmul(200, 70, 600, 0, 0);
    check_matmul(1, 300, 513, 0, 0);
    check_matmul(1, 129, 40, 1, 1);
    check_matmul(1, 4200, 6, 1, 0); /* gemv: output chunks, a tail past them */
    check_matmul(1, 2100, 131, 0, 0); /* gemv prefetching (AVX2): two chunks, k % 4 = 3 */
    /* b's rows 2 or 4 KiB apart: its slivers packed (and 1 KiB: in place),
     * with rows under whole tiles */
    check_matmul(64, 512, 37, 0, 0);
    check_matmul(26, 1024, 300, 1, 0);
    check_matmul(31, 256, 19, 0, 0);
    if (BIG) {
        check_matmul(520, 530, 64, 0, 0);
        check_matmul(9, 520, 520, 0, 1);
    }
    /* the slab: one sliver, ragged ones, several column blocks of it
     * (256 columns) and contraction slices, b transposed */
    check_slab(193, 2, 3, 0, 1);
    check_slab(197, 5, 7, 1, 1);
    check_slab(193, 256, 5, 0, 0);
    /* b's rows 256 floats apart (a workspace whatever its size): ragged
     * slivers of a small b, two column blocks, the last one partial */
    check_slab_rs(197, 37, 11, 0, 0, 256);
    check_slab_rs(193, 301, 7, 1, 0, 512);
    if (BIG) {
        check_slab(200, 256, 3, 0, 0);
        check_slab(200, 33, 257, 0, 1);
        check_slab(401, 530, 600, 1, 0);
        check_slab(300, 257, 333, 0, 1);
        check_slab(520, 1024, 64, 1, 0);
    }
    {
        static const mlvm_clamp_t relu = {0.0f, 0.0f, 1}, clip = {0.0f, 6.0f, 0};
        static const mlvm_clamp_t low = {-0.5f, HUGE_VALF, 0};
        for (i = 0; i < ns; ++i) {
            check_clamp(sizes[i], sizes[(i + 3) % ns], sizes[(i + 5) % ns], &relu);
            check_clamp(sizes[(i + 1) % ns], sizes[i], sizes[(i + 2) % ns], &clip);
            check_clamp(sizes[(i + 4) % ns], sizes[(i + 6) % ns], sizes[i], &low);
        }
        check_clamp(1, 300, 40, &clip); /* the single-row kernel, a gemv */
        if (BIG)
            check_clamp(70, 90, 600, &relu); /* several contraction slices */
        for (i = 0; i < ns; ++i) {
            check_bias(sizes[i], sizes[(i + 2) % ns], sizes[(i + 4) % ns], (int)(i % 2));
            check_bias(sizes[(i + 3) % ns], sizes[i], sizes[(i + 1) % ns], (int)(i % 2 == 0));
        }
        check_bias(1, 300, 40, 1); /* a gemv's columns, then tiles for the rest */
        /* the single row's narrow blocks: four, the last one ending at n,
         * and fewer than four columns */
        check_bias(1, 10, 49, 0);
        check_bias(1, 4, 9, 1);
        check_bias(1, 13, 1, 1);
        check_clamp(1, 3, 50, &relu);
        check_clamp(1, 15, 17, &clip);
        check_bias(1, 4200, 6, 0);
        if (BIG)
            check_bias(70, 90, 600, 1); /* the bias on the last of several slices only */
    }
    /* a generated epilogue: b in place, in panels, packed into the slab
     * (several column blocks, slices, row blocks), one row's gemv columns */
    for (i = 0; i < ns; ++i) {
        check_residual(sizes[i], sizes[(i + 1) % ns], sizes[(i + 3) % ns], 0, 0);
        check_residual(sizes[(i + 2) % ns], sizes[i], sizes[(i + 5) % ns], 32, 0);
    }
    check_residual(1, 300, 40, 0, 0);
    check_residual(1, 300, 513, 32, 0);
    check_residual(8, 530, 520, 32, 0);
    check_residual(197, 5, 7, 0, 1);
    if (BIG) {
        check_residual(70, 90, 600, 0, 0);
        check_residual(401, 530, 600, 0, 1);
        check_residual(520, 530, 300, 64, 0);
    }
    /* b in panels: one row (every row path), ragged last panel, several
     * contraction slices and row blocks, panels wider than a sliver */
    for (i = 0; i < ns; ++i)
        for (j = 0; j < ns; ++j)
            check_matmul_as(sizes[i], sizes[j], sizes[(i + j) % ns], (int)(i % 2), 0, 32);
    check_matmul_as(1, 300, 513, 0, 0, 32);
    check_matmul_as(1, 1000, 37, 0, 0, 64);
    check_matmul_as(1, 34, 5, 0, 0, 32); /* 2 columns in the last panel: one by one */
    check_matmul_as(1, 39, 5, 0, 0, 32); /* 7: a block of four, then one by one */
    /* panels past MLVM_MM_SLAB_KN, whose AVX2 tiles prefetch the next
     * sliver: 6 + 2 rows, 6 + 6 + 1, a ragged last panel */
    check_matmul_as(8, 530, 520, 0, 0, 32);
    check_matmul_as(13, 600, 450, 1, 0, 32);
    if (BIG) {
        check_matmul_as(200, 70, 600, 0, 0, 32);
        check_matmul_as(520, 530, 300, 1, 0, 64);
    }
    check_empty_batch_depthwise();
    for (t = 0; t < 3; ++t) {
        const mlvm_index_t *pad = pads[t];
        check_conv(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, pads[0], t);
        check_conv(2, 3, 7, 9, 8, 3, 3, 1, 1, 1, pad, t != 1);
        check_conv(1, 16, 11, 13, 24, 3, 3, 2, 1, 1, pad, 1);
        check_conv(1, 40, 9, 11, 200, 3, 3, 1, 2, 1, pad, t != 2);
        check_conv(1, 300, 5, 7, 8, 1, 1, 1, 1, 1, pad, 1);
        check_conv(2, 8, 10, 10, 16, 3, 3, 1, 1, 2, pad, 1);
        check_conv(1, 6, 13, 7, 6, 3, 3, 1, 1, 6, pad, 0);
        check_conv(1, 6, 13, 7, 12, 3, 3, 2, 1, 6, pad, 1);
        check_conv(1, 5, 17, 19, 7, 5, 3, 2, 1, 1, pad, 1);
        check_conv(1, 32, 32, 32, 16, 3, 3, 1, 1, 1, pad, 1);
    }
    /* Winograd's weights in panels: ragged last panels and contraction
     * slices, several row blocks, few rows (short slices inside a 256 one),
     * odd maps, one tile */
    check_a_panels(1, 1, 2, 2, 24, 1);
    check_a_panels(2, 5, 7, 9, 25, 0);
    if (BIG) {
        check_a_panels(1, 257, 14, 14, 48, 1);
        check_a_panels(1, 300, 5, 6, 30, 0);
        check_a_panels(2, 64, 9, 8, 200, 1);
        check_a_panels(1, 600, 7, 7, 72, 1);
    }
    check_depthwise_same();
    check_depthwise_stride2();
    check_conv_stride2();
    check_depthwise_lanes();
    check_ihwo();
    check_wino();
    check_softmaxes();
    check_clamp_rules();
    check_pools();
    printf("kernel_paths[%s]: %ld cases, %ld failures\n", mlvm_kernel_path(), cases, failures);
    return failures != 0;
}
