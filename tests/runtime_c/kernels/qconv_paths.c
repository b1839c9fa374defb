/* mlvm_qconv2d_ws_8, mlvm_qconv2d_requant_8 (and mlvm_qconv2d_8) against an
 * int64 loop and scalar.h's quantize, for one
 * kernel path (the build's flags choose it). Shapes cross every edge of the
 * tiles: channel counts off the quads, output channels off the row blocks,
 * positions off the slivers and chunks, strides, dilations, groups,
 * padding on every side, batches; operands of both signs, zero points
 * inside and at the ends of their ranges, extreme operands. The workspace
 * is malloc'ed at its exact size and filled with garbage first.
 * Prints "qconv_paths[<path>]: N cases, F failures"; exit 1 on a failure.
 * Cases of the GEMM path with i8 weights run again with the weights in
 * lanes (w_lanes, packed here from kernels.h's description of the layout).
 * Cases with weights that fit 16-bit pair sums (kernels.h's w_pairs; as
 * onnxruntime's reduce_range makes them, and at the rule's edges: two
 * weights of a row adding up to 128 or -128 times bytes of 255) run with
 * w_pairs set most of the time.
 * mlvm_qadd_8 is checked against its formula (check_qadd), and
 * mlvm_qavgpool2d_global_8 against an int64 sum (check_qgap).
 * With the argument "ws", prints mlvm_qconv2d_workspace and
 * mlvm_qconv2d_requant_workspace for each line of 20 numbers on stdin (the
 * fields of mlvm_qconv2d_t) instead. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlvm/kernels.h"
#include "mlvm/kernels_nn.h"
#include "mlvm/scalar.h"

static unsigned long long rng_state = 0x2545f4914f6cdd1dull;

static int rnd(int lo, int hi) /* [lo, hi] */
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (int)((rng_state >> 33) % (unsigned long long)(hi - lo + 1));
}

static long cases, failures;

static int32_t at8(const void *p, size_t i, int is_signed)
{
    return is_signed ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static int32_t reference(const mlvm_qconv2d_t *p, const void *x, const void *w, int32_t zx,
                         const void *zw, mlvm_index_t b, mlvm_index_t o, mlvm_index_t y,
                         mlvm_index_t xx)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups, c0 = o / og * cg;
    const int32_t zwo = at8(zw, (size_t)(p->zw_per_o ? o : 0), p->w_signed);
    long long acc = 0;
    mlvm_index_t ci, ky, kx;
    for (ci = 0; ci < cg; ++ci)
        for (ky = 0; ky < p->kh; ++ky)
            for (kx = 0; kx < p->kw; ++kx) {
                const mlvm_index_t iy = y * p->sh - p->pt + ky * p->dh;
                const mlvm_index_t ix = xx * p->sw - p->pl + kx * p->dw;
                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
                    continue;
                acc += (long long)(at8(x, (size_t)(((b * p->c + c0 + ci) * p->h + iy) * p->w + ix),
                                       p->x_signed) - zx)
                       * (at8(w, (size_t)(((o * cg + ci) * p->kh + ky) * p->kw + kx), p->w_signed)
                          - zwo);
            }
    return (int32_t)(uint32_t)(unsigned long long)acc;
}

static void fill(uint8_t *p, size_t n, int extreme, int is_signed)
{
    size_t i;
    for (i = 0; i < n; ++i)
        p[i] = (uint8_t)(extreme ? (is_signed ? (extreme > 0 ? 0x7F : 0x80) : (extreme > 0 ? 0xFF : 0))
                                 : rnd(0, 255));
}

/* Weights that fit w_pairs' rule (as i8; u8 weights 128 more), row by
 * row: within [-64, 64] (+-64 when extreme); or one weight b of 65 to 127,
 * one -c of -65 to -128 and the rest within [c - 128, 128 - b] (at its
 * ends when extreme: with bytes of 255, pair sums of +-32,640). */
static void fill_pairs(uint8_t *w, const mlvm_qconv2d_t *p, int extreme)
{
    const mlvm_index_t per = (p->c / p->groups) * p->kh * p->kw;
    mlvm_index_t o, i;
    for (o = 0; o < p->o; ++o) {
        uint8_t *row = w + o * per;
        const int mode = rnd(0, 1);
        const int b = rnd(65, 127), c = rnd(65, 128);
        for (i = 0; i < per; ++i) {
            const int v = mode == 0 ? (extreme ? (rnd(0, 1) ? 64 : -64) : rnd(-64, 64))
                                    : (extreme ? (rnd(0, 1) ? 128 - b : c - 128) : rnd(c - 128, 128 - b));
            row[i] = (uint8_t)(p->w_signed ? v : v + 128);
        }
        if (mode == 1 && per >= 2) {
            const mlvm_index_t at = rnd(0, (int)per - 1), other = (at + rnd(1, (int)per - 1)) % per;
            row[at] = (uint8_t)(p->w_signed ? b : b + 128);
            row[other] = (uint8_t)(p->w_signed ? -c : 128 - c);
        }
    }
}

/* w (OIHW, i8) as kernels.h's w_lanes layout, or NULL where it does not
 * apply (fewer than 4 outputs per group, u8 weights). */
static int8_t *lanes_of(const mlvm_qconv2d_t *p, const uint8_t *w)
{
    const mlvm_index_t cg = p->c / p->groups, khw = p->kh * p->kw;
    const mlvm_index_t k = cg < 3 ? (cg * khw + 3) / 4 : (cg + 3) / 4 * khw;
    mlvm_index_t o, ci, t;
    int8_t *out;
    if (p->o / p->groups < 4 || !p->w_signed)
        return NULL;
    out = calloc((size_t)(p->o * k * 4), 1);
    for (o = 0; o < p->o; ++o)
        for (ci = 0; ci < cg; ++ci)
            for (t = 0; t < khw; ++t) {
                const mlvm_index_t at = cg < 3 ? ci * khw + t : ((ci / 4) * khw + t) * 4 + ci % 4;
                out[o * k * 4 + at] = (int8_t)w[(o * cg + ci) * khw + t];
            }
    return out;
}

/* p's kernels, with the weights in lanes where that applies: the same
 * results (out, y) as with w itself, from a workspace of garbage. */
static int same_with_lanes(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const uint8_t *x,
                           const uint8_t *w, const uint8_t *zx, const uint8_t *zw,
                           const int32_t *bias, const float *mult, const uint8_t *zy,
                           const void *want, size_t no)
{
    mlvm_qconv2d_t pl = *p;
    int8_t *wl = lanes_of(p, w);
    size_t ws_bytes;
    void *ws, *got;
    int same;
    if (wl == NULL)
        return 1;
    pl.w_lanes = 1;
    ws_bytes = rq == NULL ? mlvm_qconv2d_workspace(&pl) : mlvm_qconv2d_requant_workspace(&pl);
    ws = malloc(ws_bytes ? ws_bytes : 1);
    got = malloc(no ? no * 4 : 1);
    memset(ws, 0xA5, ws_bytes);
    if (rq == NULL)
        mlvm_qconv2d_ws_8(&pl, x, wl, zx, zw, got, ws);
    else
        mlvm_qconv2d_requant_8(&pl, rq, x, wl, zx, zw, bias, mult, zy, got, ws);
    same = memcmp(got, want, no * (rq == NULL ? 4 : 1)) == 0;
    if (!same)
        fprintf(stderr, "%s with w in lanes: c%ld o%ld k%ldx%ld g%ld differs\n",
                rq == NULL ? "qconv" : "requant", (long)p->c, (long)p->o, (long)p->kh, (long)p->kw,
                (long)p->groups);
    free(wl), free(ws), free(got);
    return same;
}

/* Per output channel the sum of its weights as i8 (u8 less 128): the
 * descriptor's w_sums, as the compiler computes them. */
static int32_t *weight_sums(const mlvm_qconv2d_t *p, const uint8_t *w)
{
    const size_t per = (size_t)((p->c / p->groups) * p->kh * p->kw);
    int32_t *s = malloc((size_t)(p->o ? p->o : 1) * sizeof *s);
    mlvm_index_t o;
    size_t i;
    for (o = 0; o < p->o; ++o) {
        uint32_t t = 0;
        for (i = 0; i < per; ++i)
            t += (uint32_t)(p->w_signed ? (int32_t)(int8_t)w[o * per + i] : (int32_t)w[o * per + i] - 128);
        s[o] = (int32_t)t;
    }
    return s;
}

static void check(const mlvm_qconv2d_t *p0, int extreme, int zw_zero, int pairs)
{
    /* half the cases with the weight sums given (the compiler's), half
     * summed by the kernels; with `pairs`, weights that fit w_pairs */
    mlvm_qconv2d_t pc = *p0;
    const mlvm_qconv2d_t *const p = &pc;
    const size_t nx = (size_t)(p->n * p->c * p->h * p->w);
    const size_t nw = (size_t)(p->o * (p->c / p->groups) * p->kh * p->kw);
    const size_t no = (size_t)(p->n * p->o * p->oh * p->ow);
    const size_t nz = (size_t)(p->zw_per_o ? p->o : 1);
    const size_t ws_bytes = mlvm_qconv2d_workspace(p), rq_bytes = mlvm_qconv2d_requant_workspace(p);
    uint8_t *x = malloc(nx ? nx : 1), *w = malloc(nw ? nw : 1), zx, *zw = malloc(nz);
    int32_t *out = malloc((no ? no : 1) * sizeof *out), *out8 = malloc((no ? no : 1) * sizeof *out);
    void *ws = ws_bytes ? malloc(ws_bytes) : NULL;
    int32_t zxv;
    mlvm_index_t b, o, y, xx;
    size_t i, bad = 0;
    int32_t *sums;
    fill(x, nx, extreme, p->x_signed);
    if (pairs)
        fill_pairs(w, p, extreme);
    else
        fill(w, nw, -extreme, p->w_signed);
    pc.w_pairs = pairs && rnd(0, 3) != 0;
    sums = weight_sums(p, w);
    if (rnd(0, 1))
        pc.w_sums = sums;
    zx = (uint8_t)(extreme ? (p->x_signed ? 0x80 : 0) : rnd(0, 255));
    for (i = 0; i < nz; ++i)
        zw[i] = (uint8_t)(zw_zero ? 0 : rnd(0, 255));
    if (ws != NULL)
        memset(ws, 0xA5, ws_bytes);
    memset(out, 0x5A, no * sizeof *out);
    zxv = p->x_signed ? (int8_t)zx : zx;
    mlvm_qconv2d_ws_8(p, x, w, &zx, zw, out, ws);
    mlvm_qconv2d_8(p, x, w, &zx, zw, out8);
    ++cases;
    for (b = 0; b < p->n; ++b)
        for (o = 0; o < p->o; ++o)
            for (y = 0; y < p->oh; ++y)
                for (xx = 0; xx < p->ow; ++xx) {
                    const size_t at = (size_t)(((b * p->o + o) * p->oh + y) * p->ow + xx);
                    const int32_t want = reference(p, x, w, zxv, zw, b, o, y, xx);
                    if ((out[at] != want || out8[at] != want) && bad++ == 0)
                        fprintf(stderr,
                                "qconv n%ld c%ld %ldx%ld o%ld k%ldx%ld s%ld,%ld p%ld,%ld d%ld,%ld "
                                "g%ld xs%d ws%d pairs%d: [%ld,%ld,%ld,%ld] = %d (ws) %d, want %d\n",
                                (long)p->n, (long)p->c, (long)p->h, (long)p->w, (long)p->o,
                                (long)p->kh, (long)p->kw, (long)p->sh, (long)p->sw, (long)p->pt,
                                (long)p->pl, (long)p->dh, (long)p->dw, (long)p->groups,
                                (int)p->x_signed, (int)p->w_signed, (int)p->w_pairs, (long)b, (long)o, (long)y,
                                (long)xx, (int)out[at], (int)out8[at], (int)want);
                }
    if (ws != NULL && !same_with_lanes(p, NULL, x, w, &zx, zw, NULL, NULL, NULL, out, no))
        ++bad;
    failures += bad != 0;
    {   /* requantized: bias, one or per-channel multipliers, ReLU */
        mlvm_qrequant_t rq;
        int32_t *bias = malloc((size_t)p->o * sizeof *bias);
        float *mult = malloc((size_t)p->o * sizeof *mult);
        uint8_t zy, *y = malloc(no ? no : 1);
        const int use_bias = rnd(0, 3) != 0;
        /* often multipliers up to +-40000: products past +-2^31 (extreme
         * sums are large and negative, a 3x3 depthwise one's -293,760),
         * which the kernels' packed requantization (multipliers up to 0.5)
         * must leave to the float clamp */
        const int big = extreme && rnd(0, 1) == 0;
        const float scale = big ? (rnd(0, 1) ? 10.0f : -10.0f) : extreme ? 1e-3f : 1e-5f;
        rq.y_signed = rnd(0, 1), rq.mult_per_o = rnd(0, 1), rq.relu = rnd(0, 1);
        for (i = 0; i < (size_t)p->o; ++i) {
            bias[i] = rnd(-40000, 40000);
            mult[i] = (float)rnd(1, 4000) * scale;
        }
        if (rnd(0, 7) == 0)
            mult[0] = rnd(0, 1) ? NAN : INFINITY;
        zy = (uint8_t)rnd(0, 255);
        /* its own workspace, of exactly its size (bytes at the rows) */
        free(ws);
        ws = malloc(rq_bytes ? rq_bytes : 1);
        memset(ws, 0xA5, rq_bytes);
        mlvm_qconv2d_requant_8(p, &rq, x, w, &zx, zw, use_bias ? bias : NULL, mult, &zy, y, ws);
        ++cases;
        bad = 0;
        for (b = 0; b < p->n; ++b)
            for (o = 0; o < p->o; ++o)
                for (i = 0; i < (size_t)(p->oh * p->ow); ++i) {
                    const size_t at = (size_t)((b * p->o + o) * p->oh * p->ow) + i;
                    const int32_t acc = (int32_t)((uint32_t)out8[at] + (uint32_t)(use_bias ? bias[o] : 0));
                    const float r = (float)acc * mult[rq.mult_per_o ? o : 0];
                    int32_t want = rq.y_signed ? mlvm_quantize_i8(r, (int8_t)zy) : mlvm_quantize_ui8(r, zy);
                    const int32_t got = rq.y_signed ? (int8_t)y[at] : y[at];
                    const int32_t zyv = rq.y_signed ? (int8_t)zy : zy;
                    if (rq.relu && want < zyv)
                        want = zyv;
                    if (got != want && bad++ == 0)
                        fprintf(stderr, "requant c%ld o%ld k%ldx%ld g%ld ys%d per%d relu%d: [%ld,%ld,%lu] = %d, want %d (acc %d)\n",
                                (long)p->c, (long)p->o, (long)p->kh, (long)p->kw, (long)p->groups,
                                (int)rq.y_signed, (int)rq.mult_per_o, (int)rq.relu, (long)b, (long)o,
                                (unsigned long)i, (int)got, (int)want, (int)acc);
                }
        if (!same_with_lanes(p, &rq, x, w, &zx, zw, use_bias ? bias : NULL, mult, &zy, y, no))
            ++bad;
        failures += bad != 0;
        free(bias), free(mult), free(y);
    }
    free(x), free(w), free(zw), free(out), free(out8), free(ws), free(sums);
}

/* p with random operand types (the signs, the weights' zero points per
 * channel or not, some zero), checked. */
static void check_random_types(mlvm_qconv2d_t *p, int extreme)
{
    p->x_signed = rnd(0, 1);
    p->w_signed = rnd(0, 4) != 0;
    p->zw_per_o = rnd(0, 1);
    p->w_lanes = 0;
    check(p, extreme, rnd(0, 3) != 0, rnd(0, 2) == 0);
}

static void random_case(int extreme)
{
    mlvm_qconv2d_t p;
    memset(&p, 0, sizeof p); /* w_sums NULL */
    const int depthwise = rnd(0, 3) == 0;
    mlvm_index_t pb, pr;
    /* depthwise: up to 40 channels, past the lanes of the channels-in-lanes
     * kernel (8 or 16) and off them */
    p.groups = depthwise ? (rnd(0, 1) ? rnd(1, 12) : rnd(13, 40)) : rnd(1, 3) == 1 ? 2 : 1;
    p.c = p.groups * (depthwise ? 1 : rnd(1, 11));
    p.o = p.groups * (depthwise ? rnd(1, 2) : rnd(1, 3) == 1 ? rnd(1, 3) : rnd(4, 21));
    p.n = rnd(1, 2);
    p.kh = rnd(1, 5), p.kw = rnd(1, 5);
    p.sh = rnd(1, 3), p.sw = rnd(1, 3), p.dh = rnd(1, 2), p.dw = rnd(1, 2);
    p.h = rnd(1, 23), p.w = rnd(1, 41);
    p.pt = rnd(0, 2), p.pl = rnd(0, 2), pb = rnd(0, 2), pr = rnd(0, 2);
    p.oh = (p.h + p.pt + pb - p.dh * (p.kh - 1) - 1) / p.sh + 1;
    p.ow = (p.w + p.pl + pr - p.dw * (p.kw - 1) - 1) / p.sw + 1;
    if (p.h + p.pt + pb - p.dh * (p.kh - 1) - 1 < 0 || p.w + p.pl + pr - p.dw * (p.kw - 1) - 1 < 0)
        return;
    check_random_types(&p, extreme);
}

/* One position per image (qconv_gemv.c: a Linear layer's rows): a 1x1
 * kernel over a 1x1 map, padding after it below the stride (still one
 * position); rows of up to 300 bytes, sometimes past 32768 (the dot's
 * chunks). */
static void gemv_case(int extreme)
{
    mlvm_qconv2d_t p;
    memset(&p, 0, sizeof p); /* w_sums NULL */
    p.groups = 1;
    p.c = rnd(0, 15) == 0 ? rnd(32760, 33100) : rnd(1, 300);
    p.o = p.c > 300 ? rnd(1, 3) : rnd(1, 40);
    p.n = rnd(1, 3);
    p.kh = p.kw = p.h = p.w = p.oh = p.ow = 1;
    p.sh = rnd(1, 3), p.sw = rnd(1, 3), p.dh = rnd(1, 2), p.dw = rnd(1, 2);
    check_random_types(&p, extreme);
}

/* A 3x3 depthwise layer of stride 1 (q_dw3_shape: the DSP path's
 * halfword rows): rows past the chunk of 64 positions, planes of one
 * position, channel multipliers up to 3, padding on every side. */
static void dw3_case(int extreme)
{
    mlvm_qconv2d_t p;
    memset(&p, 0, sizeof p); /* w_sums NULL */
    mlvm_index_t pb, pr;
    p.groups = rnd(1, 9);
    p.c = p.groups;
    p.o = p.groups * rnd(1, 3);
    p.n = rnd(1, 2);
    p.kh = p.kw = 3;
    p.sh = p.sw = p.dh = p.dw = 1;
    p.h = rnd(1, 19), p.w = rnd(1, 3) == 1 ? rnd(60, 90) : rnd(1, 20);
    p.pt = rnd(0, 2), p.pl = rnd(0, 2), pb = rnd(0, 2), pr = rnd(0, 2);
    p.oh = p.h + p.pt + pb - 2;
    p.ow = p.w + p.pl + pr - 2;
    if (p.oh < 1 || p.ow < 1)
        return;
    check_random_types(&p, extreme);
}

/* A 3x3 depthwise layer of stride 1 with one row and column of padding on
 * every side (qdepthwise_rows3.c with AVX2): planes from under 16
 * positions (not taken) to past 8192, rows of one position to 40, of 480
 * to 513 (513 not taken), one to three channels (a plane's last vector
 * short with no channel after it to spill into, nor input after it to
 * read), one to three images. */
static void rows3_case(int t, int extreme)
{
    mlvm_qconv2d_t p;
    memset(&p, 0, sizeof p); /* w_sums NULL */
    p.kh = p.kw = 3;
    p.sh = p.sw = p.dh = p.dw = 1;
    p.pt = p.pl = 1;
    p.n = rnd(1, 3);
    p.groups = t % 4 == 0 ? rnd(1, 3) : rnd(1, 20);
    switch (t % 8) {
    case 0: /* planes near 16 */
        p.w = rnd(1, 40);
        p.h = (rnd(14, 40) + p.w - 1) / p.w;
        break;
    case 1:
        p.w = rnd(0, 1) ? 512 : 513;
        p.h = rnd(1, 3);
        break;
    case 2: /* planes near 8192, of narrow rows and of rows near 512 (the
             * largest stack copy) */
        p.w = t % 16 == 2 ? rnd(1, 128) : rnd(480, 513);
        p.h = 8192 / p.w + rnd(0, 1);
        p.groups = rnd(1, 2);
        break;
    default:
        p.h = rnd(1, 30), p.w = rnd(1, 40);
        break;
    }
    p.c = p.o = p.groups;
    p.oh = p.h, p.ow = p.w;
    check_random_types(&p, extreme);
}

/* A 3x3 depthwise layer of stride 2 (qdepthwise_rows3.c's stride-2
 * kernel with AVX2 takes first padding 0 or 1): padding 0 to 2 before
 * the map and up to 20 after it, outputs cut short of the padding's,
 * maps of one position to past a vector's 8 outputs, rows of whole
 * vectors of 16, rows of 480 to 520 positions (past 512 not taken),
 * copies near the kernel's largest (2 oh + 1 rows of the pitch), one to
 * three channels and images. */
static void s2_case(int t, int extreme)
{
    mlvm_qconv2d_t p;
    memset(&p, 0, sizeof p); /* w_sums NULL */
    mlvm_index_t pb, pr;
    p.kh = p.kw = 3;
    p.sh = p.sw = 2, p.dh = p.dw = 1;
    p.n = rnd(1, 3);
    p.groups = rnd(1, 3) == 1 ? rnd(1, 3) : rnd(1, 20);
    p.pt = rnd(0, 2), p.pl = rnd(0, 2), pb = rnd(0, 2), pr = rnd(0, 2);
    switch (t % 8) {
    case 0: /* rows near 512 */
        p.w = rnd(480, 520), p.h = rnd(1, 4);
        break;
    case 1: /* copies near the largest: pitch about 2 ow + 4, 2 oh + 1 rows */
        p.w = rnd(16, 200);
        p.h = 2 * (9218 / (p.w + 6) / 2) + rnd(-3, 3);
        p.groups = rnd(1, 2);
        break;
    case 2: /* rows of whole vectors of 16 (the widening's last store) */
        p.w = 16 * rnd(1, 4), p.h = rnd(1, 12);
        break;
    case 3: /* padding after the map of up to 20 (outputs past the input) */
        p.h = rnd(1, 12), p.w = rnd(1, 20), pb = rnd(0, 20), pr = rnd(0, 20);
        break;
    case 5: /* rows of whole vectors of 8 outputs past a narrow input */
        p.h = rnd(1, 12), p.w = rnd(1, 12), pb = rnd(0, 4);
        pr = 2 * (8 * rnd(1, 3) - 1) + 3 - p.w - p.pl;
        break;
    default:
        p.h = rnd(1, 40), p.w = rnd(1, 40);
        break;
    }
    p.c = p.o = p.groups;
    if (p.h + p.pt + pb < 3 || p.w + p.pl + pr < 3)
        return;
    p.oh = (p.h + p.pt + pb - 3) / 2 + 1, p.ow = (p.w + p.pl + pr - 3) / 2 + 1;
    if (t % 4 == 2) /* outputs cut short of what the padding gives */
        p.oh = rnd(1, (int)p.oh), p.ow = rnd(1, (int)p.ow);
    check_random_types(&p, extreme);
}

/* mlvm_qadd_8 against its formula, written out with the C library's fmaf
 * (rounded once, instruction or not): every signedness, both operands
 * whole or one of them [mid] (a or b, broadcast over inner or not), the
 * lowering's rule for swap, lengths around the vectors' widths, ratios of
 * scales that make ties (0.25-4) half the time, zero, infinite, NaN, tiny
 * and huge scales among the rest (NaN and sums past int32 -> the minimum); y in place of the whole operand every other time. */
static void check_qadd(int t)
{
    static const float odd[] = {0.0f, INFINITY, NAN, 1e-40f, 3e38f}, tie[] = {0.25f, 0.5f, 1.0f, 2.0f, 4.0f};
    static const mlvm_index_t lens[] = {1, 3, 7, 8, 15, 16, 17, 31, 64, 100, 257};
    const int small = t % 3;
    const size_t outer = small ? (size_t)rnd(1, 3) : 1, mid = (size_t)lens[rnd(0, 10)];
    const size_t inner = small && rnd(0, 1) ? 1 : (size_t)lens[rnd(0, 10)], n = outer * mid * inner;
    const size_t na = small == 1 ? mid : n, nb = small == 2 ? mid : n;
    mlvm_qadd_t p;
    uint8_t *a = malloc(na), *b = malloc(nb), *y = malloc(n), *want = malloc(n);
    const uint8_t za = (uint8_t)rnd(0, 255), zb = (uint8_t)rnd(0, 255), zy = (uint8_t)rnd(0, 255);
    float sy = (float)rnd(1, 3000) * 1e-4f, sa = (float)rnd(1, 3000) * 1e-4f, sb = (float)rnd(1, 3000) * 1e-4f;
    const int in_place = rnd(0, 1), into_a = small == 2 || (small == 0 && rnd(0, 1));
    size_t o, m, i;
    p.a_signed = t / 3 & 1, p.b_signed = t / 6 & 1, p.y_signed = t / 12 & 1;
    p.small = small, p.swap = na == 1 || (small == 1 && inner > 1);
    fill(a, na, 0, p.a_signed);
    fill(b, nb, 0, p.b_signed);
    if (rnd(0, 1))
        sa = sy * tie[rnd(0, 4)], sb = sy * tie[rnd(0, 4)];
    else if (rnd(0, 3) == 0)
        *(rnd(0, 1) ? &sy : &sa) = odd[rnd(0, 4)];
    for (o = 0; o < outer; ++o)
        for (m = 0; m < mid; ++m)
            for (i = 0; i < inner; ++i) {
                const size_t at = (o * mid + m) * inner + i;
                const float va = (float)at8(a, small == 1 ? m : at, p.a_signed);
                const float vb = (float)at8(b, small == 2 ? m : at, p.b_signed);
                const float fa = (float)at8(&za, 0, p.a_signed), fb = (float)at8(&zb, 0, p.b_signed);
                const float x = p.swap ? vb : va, w = p.swap ? va : vb, zx = p.swap ? fb : fa, zw = p.swap ? fa : fb;
                const float rx = (p.swap ? sb : sa) / sy, rw = (p.swap ? sa : sb) / sy;
                const float fixed = (float)at8(&zy, 0, p.y_signed) - fmaf(rx, zx, rw * zw);
                const float v = fmaf(x, rx, fmaf(w, rw, fixed)), lo = p.y_signed ? -128.0f : 0.0f;
                /* NaN and past int32: the conversion's INT_MIN, saturated */
                want[at] = (uint8_t)(int32_t)(v == v && fabsf(v) < 0x1p31f
                                                  ? fminf(fmaxf(nearbyintf(v), lo), p.y_signed ? 127.0f : 255.0f)
                                                  : lo);
            }
    if (in_place)
        memcpy(y, into_a ? a : b, n);
    mlvm_qadd_8(&p, outer, mid, inner, in_place && into_a ? y : a, &sa, &za, in_place && !into_a ? y : b,
                &sb, &zb, &sy, &zy, y);
    ++cases;
    if (memcmp(y, want, n) != 0) {
        for (i = 0; y[i] == want[i]; ++i)
            ;
        fprintf(stderr, "qadd %lux%lux%lu small %d swap %d flags %d: [%lu] = %d, want %d (sa %g sb %g sy %g)\n",
                (unsigned long)outer, (unsigned long)mid, (unsigned long)inner, small, (int)p.swap, t / 3 % 8,
                (unsigned long)i, y[i], want[i], (double)sa, (double)sb, (double)sy);
        ++failures;
    }
    free(a), free(b), free(y), free(want);
}

/* mlvm_qavgpool2d_global_8 against an int64 sum of each plane: planes of
 * 1 to 40 bytes (every tail of the DSP path's eight a step), and of 125,
 * 1000 and 4099; signed and not, extreme bytes every fifth time, scales
 * making ties (xs / (ys * n) a power of two) half the time. */
static void check_qgap(int t)
{
    static const size_t big[] = {125, 1000, 4099};
    const int is_signed = t & 1, extreme = t % 5 == 0 ? (t / 5 % 2 ? 1 : -1) : 0;
    const size_t planes = (size_t)rnd(1, 3), n = t % 4 == 3 ? big[rnd(0, 2)] : (size_t)rnd(1, 40);
    uint8_t *x = malloc(planes * n), y[3], want[3];
    const uint8_t zx = (uint8_t)rnd(0, 255), zy = (uint8_t)rnd(0, 255);
    const float xs = (float)rnd(1, 3000) * 1e-4f;
    const float ys = rnd(0, 1) ? xs / (float)n * (float)(1 << rnd(0, 3)) : (float)rnd(1, 3000) * 1e-4f;
    const float scale = xs / (ys * (float)n), lo = is_signed ? -128.0f : 0.0f;
    size_t pl, i;
    fill(x, planes * n, extreme, is_signed);
    for (pl = 0; pl < planes; ++pl) {
        long long acc = -(long long)at8(&zx, 0, is_signed) * (long long)n;
        float f;
        for (i = 0; i < n; ++i)
            acc += at8(x, pl * n + i, is_signed);
        f = (float)(int32_t)acc * scale;
        f = fminf(fmaxf(f, lo - (float)at8(&zy, 0, is_signed)), (is_signed ? 127.0f : 255.0f) - (float)at8(&zy, 0, is_signed));
        want[pl] = (uint8_t)((int32_t)nearbyintf(f) + at8(&zy, 0, is_signed));
    }
    mlvm_qavgpool2d_global_8(planes, n, is_signed, x, &xs, &zx, &ys, &zy, y);
    ++cases;
    for (pl = 0; pl < planes; ++pl)
        if (y[pl] != want[pl]) {
            fprintf(stderr, "qgap n %lu signed %d extreme %d: plane %lu = %d, want %d\n", (unsigned long)n,
                    is_signed, extreme, (unsigned long)pl, y[pl], want[pl]);
            ++failures;
            break;
        }
    free(x);
}

static int workspace_sizes(void)
{
    long long v[20];
    mlvm_qconv2d_t p;
    memset(&p, 0, sizeof p); /* w_sums NULL */
    while (scanf("%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld "
                 "%lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
                 &v[9], &v[10], &v[11], &v[12], &v[13], &v[14], &v[15], &v[16], &v[17], &v[18],
                 &v[19]) == 20) {
        p.n = v[0], p.c = v[1], p.h = v[2], p.w = v[3], p.o = v[4], p.kh = v[5], p.kw = v[6];
        p.oh = v[7], p.ow = v[8], p.sh = v[9], p.sw = v[10], p.pt = v[11], p.pl = v[12];
        p.dh = v[13], p.dw = v[14], p.groups = v[15];
        p.x_signed = (int32_t)v[16], p.w_signed = (int32_t)v[17], p.zw_per_o = (int32_t)v[18];
        p.w_lanes = (int32_t)v[19];
        printf("%lu %lu\n", (unsigned long)mlvm_qconv2d_workspace(&p),
               (unsigned long)mlvm_qconv2d_requant_workspace(&p));
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* a keyword spotter's one-channel stem (lanes of four taps), a ResNet
     * stage, a pointwise conv, a stem with stride 2, depthwise convs (its
     * 25x5 maps, MobileNet's stride 2 with 24 channels, 5x5 dilated) */
    static const mlvm_qconv2d_t fixed[] = {
        {1, 1, 49, 10, 64, 10, 4, 25, 5, 2, 2, 4, 1, 1, 1, 1, 0, 1, 1, 0, NULL, 0},
        {1, 16, 32, 32, 16, 3, 3, 32, 32, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, NULL, 0},
        {2, 64, 5, 25, 64, 1, 1, 5, 25, 1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 0, NULL, 0},
        {1, 3, 33, 31, 8, 3, 3, 17, 16, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, NULL, 0},
        {1, 64, 25, 5, 64, 3, 3, 25, 5, 1, 1, 1, 1, 1, 1, 64, 0, 1, 1, 0, NULL, 0},
        {2, 24, 13, 12, 24, 3, 3, 7, 6, 2, 2, 1, 1, 1, 1, 24, 1, 1, 0, 0, NULL, 0},
        {1, 17, 13, 30, 17, 5, 5, 5, 24, 1, 1, 0, 2, 2, 2, 17, 1, 0, 1, 0, NULL, 0},
        /* depthwise over planes under 128 bytes (qdepthwise_perm.c with
         * AVX-512 VBMI): 64 and 63 bytes, a dilated 5x5 with stride 2, a
         * plane of 127, 49 taps */
        {1, 16, 8, 8, 16, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 16, 0, 1, 1, 0, NULL, 0},
        {2, 20, 9, 7, 20, 3, 3, 9, 7, 1, 1, 1, 1, 1, 1, 20, 1, 1, 0, 0, NULL, 0},
        {1, 17, 11, 11, 17, 5, 5, 3, 6, 2, 2, 1, 2, 2, 1, 17, 0, 1, 1, 0, NULL, 0},
        {1, 16, 127, 1, 16, 3, 1, 127, 1, 1, 1, 1, 0, 1, 1, 16, 1, 1, 0, 0, NULL, 0},
        {1, 16, 9, 9, 16, 7, 7, 3, 3, 1, 1, 0, 0, 1, 1, 16, 0, 1, 1, 0, NULL, 0},
        /* qdepthwise_rows3.c's largest plane with its widest rows (its
         * stack copy at its largest), and one of rows too wide for it */
        {2, 2, 16, 512, 2, 3, 3, 16, 512, 1, 1, 1, 1, 1, 1, 2, 1, 0, 1, 0, NULL, 0},
        {1, 1, 8, 1024, 1, 3, 3, 8, 1024, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, NULL, 0},
        /* its stride-2 kernel: MobileNet's 48x48 to 24x24, an odd map
         * padded after it alone (TensorFlow's SAME), one of rows of 512 */
        {1, 16, 48, 48, 16, 3, 3, 24, 24, 2, 2, 1, 1, 1, 1, 16, 0, 1, 1, 0, NULL, 0},
        {2, 3, 13, 13, 3, 3, 3, 7, 7, 2, 2, 0, 0, 1, 1, 3, 1, 1, 0, 0, NULL, 0},
        {1, 2, 5, 512, 2, 3, 3, 3, 256, 2, 2, 1, 1, 1, 1, 2, 0, 0, 1, 0, NULL, 0},
    };
    size_t i;
    int t;
    if (argc > 1 && strcmp(argv[1], "ws") == 0)
        return workspace_sizes();
    for (i = 0; i < sizeof fixed / sizeof fixed[0]; ++i) {
        check(&fixed[i], 0, 1, 0);
        check(&fixed[i], 1, 1, 0);
        check(&fixed[i], 0, 1, 1);
        check(&fixed[i], 1, 1, 1);
    }
    for (t = 0; t < 600; ++t)
        random_case(t % 10 == 0);
    for (t = 0; t < 80; ++t)
        dw3_case(t % 10 == 0);
    for (t = 0; t < 120; ++t)
        gemv_case(t % 10 == 0);
    for (t = 0; t < 96; ++t)
        rows3_case(t, t % 10 == 0);
    for (t = 0; t < 240; ++t)
        s2_case(t, t % 10 == 0);
    for (t = 0; t < 2400; ++t)
        check_qadd(t);
    for (t = 0; t < 400; ++t)
        check_qgap(t);
    printf("qconv_paths[%s]: %ld cases, %ld failures\n", mlvm_qkernel_path(), cases, failures);
    return failures != 0;
}
