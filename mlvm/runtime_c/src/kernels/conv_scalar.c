/* conv2d for cores without vectors: direct, in place, four output channels
 * per pass (or, for depthwise-like groups, four positions of one channel).
 * A Cortex-M4 has no cache to fill and no vector lanes to feed,
 * so gathering input windows into a buffer (the implicit GEMM of conv.c)
 * only costs: here each output position sums its taps straight from x and
 * w, four channels in four registers, one load of x per four multiply-adds,
 * and only the taps inside the input (no padding tests in the loop). */
#include "conv_scalar.h"
#include "clamp.h"
#include "depthwise.h"
#include "window.h"

int mlvm_conv2d_scalar_applies(const mlvm_conv2d_t *p)
{
    const int pointwise = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1
                          && p->pt == 0 && p->pl == 0 && p->oh == p->h && p->ow == p->w;
    return !pointwise;
}

/* Output channels o0 .. o0+4 of one group at every position: two
 * positions of a row at a time where their windows have the same taps
 * inside the input (each weight loaded once for eight multiply-adds); a
 * position alone (a border one, or the last of the row) runs the same loop
 * with its own window as the second one's, whose sums are dropped: one
 * loop body instead of two, for a few extra multiply-adds per row. x is
 * the group's first input channel. The window's first tap inside the
 * input is found once per position and the pointers step from there
 * (indices recomputed per channel and kernel row had cost the 28x28 CNN
 * 2 % more instructions and 8 bytes more code). Not inlined: the entries
 * below share it. */
MLVM_NOINLINE static void four_channels(const mlvm_conv2d_t *p, const float *x, const float *w,
                                        const float *bias, float *out)
{
    const mlvm_index_t cg = p->c / p->groups, taps = p->kh * p->kw, ws = cg * taps;
    const mlvm_index_t plane = p->oh * p->ow, in_plane = p->h * p->w;
    const mlvm_index_t sw = p->sw, dw = p->dw, row_step = p->dh * p->w;
    const float b0 = bias != NULL ? bias[0] : 0.0f, b1 = bias != NULL ? bias[1] : 0.0f;
    const float b2 = bias != NULL ? bias[2] : 0.0f, b3 = bias != NULL ? bias[3] : 0.0f;
    mlvm_index_t oy, ox, c, i, j, ilo, ihi, jlo, jhi, jlo2, jhi2;
    for (oy = 0; oy < p->oh; ++oy) {
        const mlvm_index_t iy0 = oy * p->sh - p->pt;
        float *o = out + oy * p->ow;
        mlvm_valid_span(iy0, p->dh, p->h, p->kh, &ilo, &ihi);
        for (ox = 0; ox < p->ow; ++ox) {
            const mlvm_index_t ix0 = ox * sw - p->pl;
            float a0 = b0, a1 = b1, a2 = b2, a3 = b3, e0 = b0, e1 = b1, e2 = b2, e3 = b3;
            mlvm_index_t step = 0; /* from the first window to the second */
            const float *xc, *qc;
            mlvm_valid_span(ix0, dw, p->w, p->kw, &jlo, &jhi);
            if (ox + 1 < p->ow) {
                mlvm_valid_span(ix0 + sw, dw, p->w, p->kw, &jlo2, &jhi2);
                if (jlo2 == jlo && jhi2 == jhi)
                    step = sw;
            }
            xc = x + (iy0 + ilo * p->dh) * p->w + ix0 + jlo * dw;
            qc = w + ilo * p->kw + jlo;
            for (c = 0; c < cg; ++c, xc += in_plane, qc += taps) {
                const float *xr = xc, *q = qc;
                for (i = ilo; i < ihi; ++i, xr += row_step, q += p->kw)
                    for (j = 0; j < jhi - jlo; ++j) {
                        const float v = xr[j * dw], u = xr[step + j * dw];
                        const float q0 = q[j], q1 = q[ws + j], q2 = q[2 * ws + j];
                        const float q3 = q[3 * ws + j];
                        MLVM_MADD(a0, v, q0), MLVM_MADD(e0, u, q0);
                        MLVM_MADD(a1, v, q1), MLVM_MADD(e1, u, q1);
                        MLVM_MADD(a2, v, q2), MLVM_MADD(e2, u, q2);
                        MLVM_MADD(a3, v, q3), MLVM_MADD(e3, u, q3);
                    }
            }
            o[ox] = a0, o[plane + ox] = a1, o[2 * plane + ox] = a2, o[3 * plane + ox] = a3;
            if (step != 0) {
                ++ox;
                o[ox] = e0, o[plane + ox] = e1, o[2 * plane + ox] = e2, o[3 * plane + ox] = e3;
            }
        }
    }
}

/* a += r[0] q0, r[1] q1, r[2] q2 in that order (ROW2: two taps) */
#define MLVM_ROW3(a, r, q0, q1, q2) \
    (MLVM_MADD(a, (r)[0], q0), MLVM_MADD(a, (r)[1], q1), MLVM_MADD(a, (r)[2], q2))
#define MLVM_ROW2(a, r, q0, q1) (MLVM_MADD(a, (r)[0], q0), MLVM_MADD(a, (r)[1], q1))

/* Output row oy of one channel (rows near the top and bottom border, and
 * the last oh % 4). */
static void one_row(const mlvm_conv2d_t *p, mlvm_index_t cg, const float *x, const float *w,
                    float b, mlvm_index_t oy, float *out)
{
    const mlvm_index_t taps = p->kh * p->kw, in_plane = p->h * p->w, iy0 = oy * p->sh - p->pt;
    mlvm_index_t ox, c, i, j, ilo, ihi, jlo, jhi;
    mlvm_valid_span(iy0, p->dh, p->h, p->kh, &ilo, &ihi);
    for (ox = 0; ox < p->ow; ++ox) {
        const mlvm_index_t ix0 = ox * p->sw - p->pl;
        float a = b;
        mlvm_valid_span(ix0, p->dw, p->w, p->kw, &jlo, &jhi);
        for (c = 0; c < cg; ++c)
            for (i = ilo; i < ihi; ++i) {
                const float *xr = x + c * in_plane + (iy0 + i * p->dh) * p->w + ix0;
                const float *q = w + c * taps + i * p->kw;
                for (j = jlo; j < jhi; ++j)
                    MLVM_MADD(a, xr[j * p->dw], q[j]);
            }
        out[oy * p->ow + ox] = a;
    }
}

/* Output rows oy .. oy + 4 of a 3x3 channel of stride 1 down, undilated,
 * whose windows lie inside the input's rows (one input channel): the nine
 * weights in registers, each input row read once for up to three outputs
 * (output k takes kernel row i from input row k + i); a border column takes
 * the kernel's columns inside (two, by the same code with its weights; a
 * column with fewer, the taps one by one). Bias, then the taps in (i, j)
 * order: one_row's sums. A function of its own: inlined into one_channel,
 * gcc kept the rows' pointers on the stack. */
MLVM_NOINLINE static void nine_rows4(const mlvm_conv2d_t *p, const float *x, const float *w,
                                     float b, mlvm_index_t oy, float *out)
{
    const float w00 = w[0], w01 = w[1], w02 = w[2], w10 = w[3], w11 = w[4], w12 = w[5];
    const float w20 = w[6], w21 = w[7], w22 = w[8];
    const mlvm_index_t iw = p->w, ow = p->ow;
    const float *const xrow = x + (oy - p->pt) * iw;
    float *o = out + oy * ow;
    mlvm_index_t ox, i, j;
    for (ox = 0; ox < ow; ++ox, ++o) {
        const mlvm_index_t ix0 = ox * p->sw - p->pl;
        const mlvm_index_t jlo = ix0 < 0 ? -ix0 : 0, jhi = mlvm_imin(3, iw - ix0);
        const float *const r0 = xrow + ix0 + jlo, *const r1 = r0 + iw, *const r2 = r1 + iw;
        const float *const r3 = r2 + iw, *const r4 = r3 + iw, *const r5 = r4 + iw;
        float a0 = b, a1 = b, a2 = b, a3 = b;
#define MLVM_NINE4(ROW)                                                        \
    (ROW(a0, r0, 0), ROW(a0, r1, 1), ROW(a1, r1, 0), ROW(a0, r2, 2),           \
     ROW(a1, r2, 1), ROW(a2, r2, 0), ROW(a1, r3, 2), ROW(a2, r3, 1),           \
     ROW(a3, r3, 0), ROW(a2, r4, 2), ROW(a3, r4, 1), ROW(a3, r5, 2))
#define MLVM_FULL(a, r, K) MLVM_ROW3(a, r, w##K##0, w##K##1, w##K##2)
#define MLVM_LEFT(a, r, K) MLVM_ROW2(a, r, w##K##1, w##K##2)
#define MLVM_RIGHT(a, r, K) MLVM_ROW2(a, r, w##K##0, w##K##1)
        if (jlo == 0 && jhi == 3)
            MLVM_NINE4(MLVM_FULL);
        else if (jlo == 1 && jhi == 3)
            MLVM_NINE4(MLVM_LEFT);
        else if (jlo == 0 && jhi == 2)
            MLVM_NINE4(MLVM_RIGHT);
        else
            for (i = 0; i < 3; ++i) {
                const float *const q = w + 3 * i;
                const float *const xr = xrow + i * iw + ix0;
                for (j = jlo; j < jhi; ++j) {
                    MLVM_MADD(a0, xr[j], q[j]), MLVM_MADD(a1, xr[iw + j], q[j]);
                    MLVM_MADD(a2, xr[2 * iw + j], q[j]), MLVM_MADD(a3, xr[3 * iw + j], q[j]);
                }
            }
#undef MLVM_RIGHT
#undef MLVM_LEFT
#undef MLVM_FULL
#undef MLVM_NINE4
        o[0] = a0, o[ow] = a1, o[2 * ow] = a2, o[3 * ow] = a3;
    }
}

/* One output row of such a channel whose window crosses the top or bottom
 * border (or a map too short for nine_rows4): one_row's sums, its kernel
 * rows and columns inside found without a call per position. */
MLVM_NOINLINE static void nine_row1(const mlvm_conv2d_t *p, const float *x, const float *w,
                                    float b, mlvm_index_t oy, float *out)
{
    const mlvm_index_t iw = p->w, iy0 = oy - p->pt;
    mlvm_index_t ilo, ihi, ox, i, j;
    mlvm_valid_span1(iy0, p->h, 3, &ilo, &ihi);
    for (ox = 0; ox < p->ow; ++ox) {
        const mlvm_index_t ix0 = ox * p->sw - p->pl;
        const mlvm_index_t jlo = ix0 < 0 ? -ix0 : 0, jhi = mlvm_imin(3, iw - ix0);
        float a = b;
        for (i = ilo; i < ihi; ++i) {
            const float *const xr = x + (iy0 + i) * iw + ix0, *const q = w + 3 * i;
            for (j = jlo; j < jhi; ++j)
                MLVM_MADD(a, xr[j], q[j]);
        }
        out[oy * p->ow + ox] = a;
    }
}

/* One output channel (depthwise-like groups, and the last og % 4 of a
 * group): four rows at a time where their windows have the same kernel rows
 * inside the input (the spans only shrink towards the bottom border, so
 * equal spans at the first and fourth row hold for the two between), each
 * column's taps found once and each weight loaded once for four
 * multiply-adds; a row at a time elsewhere. The same sums in the same order
 * either way. Rows rather than columns: a keyword spotter's maps are 5
 * columns wide, and every column of a 3x3 window there is a border one. */
MLVM_NOINLINE static void one_channel(const mlvm_conv2d_t *p, mlvm_index_t cg, const float *x,
                                     const float *w, const float *bias, float *out)
{
    const mlvm_index_t taps = p->kh * p->kw, in_plane = p->h * p->w, rs = p->sh * p->w;
    const mlvm_index_t dw = p->dw;
    const float b = bias != NULL ? bias[0] : 0.0f;
    /* one input channel, 3x3, stride 1 down, undilated: nine_rows4 (a
     * keyword spotter's and a MobileNet's depthwise layers), and the last
     * inner rows as the block of four ending at the last of them (its first
     * rows again: the same sums, written twice) */
    const int nine = cg == 1 && p->kh == 3 && p->kw == 3 && p->sh == 1 && p->dh == 1 && dw == 1;
    const mlvm_index_t inner_end = mlvm_imin(p->oh, p->h - 2 + p->pt);
    mlvm_index_t oy = 0, ox, c, i, j, ilo, ihi, ilo4, ihi4, jlo, jhi;
    while (oy < p->oh) {
        const mlvm_index_t iy0 = oy * p->sh - p->pt;
        mlvm_valid_span(iy0, p->dh, p->h, p->kh, &ilo, &ihi);
        if (nine && ilo == 0 && ihi == 3 && inner_end - 4 >= p->pt) {
            oy = mlvm_imin(oy, inner_end - 4);
            nine_rows4(p, x, w, b, oy, out);
            oy += 4;
            continue;
        }
        if (nine) { /* a border row, or a map too short for a block */
            nine_row1(p, x, w, b, oy, out);
            ++oy;
            continue;
        }
        ilo4 = -1, ihi4 = -1;
        if (oy + 4 <= p->oh)
            mlvm_valid_span(iy0 + 3 * p->sh, p->dh, p->h, p->kh, &ilo4, &ihi4);
        if (ilo4 != ilo || ihi4 != ihi) {
            one_row(p, cg, x, w, b, oy, out);
            ++oy;
            continue;
        }
        for (ox = 0; ox < p->ow; ++ox) {
            const mlvm_index_t ix0 = ox * p->sw - p->pl;
            float a0 = b, a1 = b, a2 = b, a3 = b;
            if (dw == 1) /* the taps inside the row, without a call */
                mlvm_valid_span1(ix0, p->w, p->kw, &jlo, &jhi);
            else
                mlvm_valid_span(ix0, dw, p->w, p->kw, &jlo, &jhi);
            for (c = 0; c < cg; ++c)
                for (i = ilo; i < ihi; ++i) {
                    /* the four rows' inputs of kernel row i, from its
                     * first tap inside the input */
                    const float *x0 = x + c * in_plane + (iy0 + i * p->dh) * p->w + ix0 + jlo * dw;
                    const float *x1 = x0 + rs, *x2 = x1 + rs, *x3 = x2 + rs;
                    const float *q = w + c * taps + i * p->kw + jlo;
                    for (j = jlo; j < jhi; ++j, ++q, x0 += dw, x1 += dw, x2 += dw, x3 += dw) {
                        const float wj = *q;
                        MLVM_MADD(a0, *x0, wj), MLVM_MADD(a1, *x1, wj);
                        MLVM_MADD(a2, *x2, wj), MLVM_MADD(a3, *x3, wj);
                    }
                }
            out[oy * p->ow + ox] = a0, out[(oy + 1) * p->ow + ox] = a1;
            out[(oy + 2) * p->ow + ox] = a2, out[(oy + 3) * p->ow + ox] = a3;
        }
        oy += 4;
    }
}

/* Every group four output channels at a time (`fours`), then (`ones`) the
 * rest of the group one channel at a time. Four alone (every group's
 * channels a multiple of 4) is one loop over the blocks of four, each
 * finding its group: 110 bytes less code than the loop over groups. */
MLVM_ALWAYS_INLINE void scalar_groups(const mlvm_conv2d_t *p, const float *x, const float *w,
                                      const float *bias, float *out, const int fours,
                                      const int ones)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups, plane = p->oh * p->ow;
    const mlvm_index_t in_plane = p->h * p->w, wsize = cg * p->kh * p->kw;
    mlvm_index_t n, g, o;
    if (fours && !ones) {
        for (n = 0; n < p->n; ++n)
            for (o = 0; o < p->o; o += 4)
                four_channels(p, x + (n * p->c + o / og * cg) * in_plane, w + o * wsize,
                              bias != NULL ? bias + o : NULL, out + (n * p->o + o) * plane);
        return;
    }
    for (n = 0; n < p->n; ++n)
        for (g = 0; g < p->groups; ++g) {
            const float *xg = x + (n * p->c + g * cg) * in_plane;
            const mlvm_index_t end = (g + 1) * og;
            float *dst = out + n * p->o * plane;
            for (o = g * og; fours && o + 4 <= end; o += 4)
                four_channels(p, xg, w + o * wsize, bias != NULL ? bias + o : NULL, dst + o * plane);
            for (; ones && o < end; ++o)
                one_channel(p, cg, xg, w + o * wsize, bias != NULL ? bias + o : NULL, dst + o * plane);
        }
}

void mlvm_conv2d_scalar_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                            const float *bias, float *out)
{
    scalar_groups(p, x, w, bias, out, 1, 1);
}

#ifdef MLVM_SCALAR_CORE
/* The in-place sums with the four-channel pass alone and the one-channel
 * pass alone (mlvm_conv2d_scalar_f32: both), not inlined: an entry and its
 * _clamp_f32 form share them. */
MLVM_NOINLINE static void sums4(const mlvm_conv2d_t *p, const float *x, const float *w,
                                const float *bias, float *out)
{
    scalar_groups(p, x, w, bias, out, 1, 0);
}

MLVM_NOINLINE static void sums1(const mlvm_conv2d_t *p, const float *x, const float *w,
                                const float *bias, float *out)
{
    scalar_groups(p, x, w, bias, out, 0, 1);
}
#endif

/* The no-workspace entries: on cores without vectors the in-place sums
 * (with or without the four-channel and the one-channel passes), then
 * act's clamp or fn over the output. */
MLVM_ALWAYS_INLINE void direct(const mlvm_conv2d_t *p, const float *x, const float *w,
                               const float *bias, float *out, mlvm_epilogue_fn fn,
                               const void *ctx, const mlvm_clamp_t *act, const int fours,
                               const int ones)
{
#ifdef MLVM_SCALAR_CORE
    (fours && ones ? mlvm_conv2d_scalar_f32 : fours ? sums4 : sums1)(p, x, w, bias, out);
    if (act != NULL)
        mlvm_clamp_run(act, out, p->n * p->o * p->oh * p->ow); /* no epilogue function */
    else if (fn != NULL && p->n * p->o > 0 && p->oh * p->ow > 0)
        fn(ctx, 0, p->n * p->o, 0, p->oh * p->ow, out, p->oh * p->ow);
#else
    (void)fours, (void)ones;
    if (act != NULL)
        mlvm_conv2d_epilogue_f32(p, x, w, bias, out, NULL, mlvm_epilogue_clamp_f32, act);
    else
        mlvm_conv2d_epilogue_f32(p, x, w, bias, out, NULL, fn, ctx);
#endif
}

void mlvm_conv2d_direct_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                            const float *bias, float *out, mlvm_epilogue_fn fn, const void *ctx)
{
    direct(p, x, w, bias, out, fn, ctx, NULL, 1, 1);
}

void mlvm_conv2d_direct4_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                             const float *bias, float *out, mlvm_epilogue_fn fn, const void *ctx)
{
    direct(p, x, w, bias, out, fn, ctx, NULL, 1, 0);
}

void mlvm_conv2d_direct1_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                             const float *bias, float *out, mlvm_epilogue_fn fn, const void *ctx)
{
    direct(p, x, w, bias, out, fn, ctx, NULL, 0, 1);
}

void mlvm_conv2d_direct_clamp_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                                  const float *bias, float *out, const mlvm_clamp_t *act)
{
    direct(p, x, w, bias, out, NULL, NULL, act, 1, 1);
}

void mlvm_conv2d_direct4_clamp_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                                   const float *bias, float *out, const mlvm_clamp_t *act)
{
    direct(p, x, w, bias, out, NULL, NULL, act, 1, 0);
}

void mlvm_conv2d_direct1_clamp_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                                   const float *bias, float *out, const mlvm_clamp_t *act)
{
    direct(p, x, w, bias, out, NULL, NULL, act, 0, 1);
}
