/* conv2d for cores without vectors: direct, in place, four output channels
 * per pass. A Cortex-M4 has no cache to fill and no vector lanes to feed,
 * so gathering input windows into a buffer (the implicit GEMM of conv.c)
 * only costs: here each output position sums its taps straight from x and
 * w, four channels in four registers, one load of x per four multiply-adds,
 * and only the taps inside the input (no padding tests in the loop). */
#include "conv_scalar.h"
#include "depthwise.h"
#include "window.h"

int mlvm_conv2d_scalar_applies(const mlvm_conv2d_t *p)
{
    const int pointwise = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1
                          && p->pt == 0 && p->pl == 0 && p->oh == p->h && p->ow == p->w;
    return !pointwise && p->o / p->groups >= MLVM_CONV_GEMM_ROWS;
}

/* Output channels o0 .. o0+4 of one group at every position: two
 * positions of a row at a time where their windows have the same taps
 * inside the input (each weight loaded once for eight multiply-adds). */
static void four_channels(const mlvm_conv2d_t *p, mlvm_index_t cg, const float *x,
                          const float *w, const float *bias, float *out)
{
    const mlvm_index_t taps = p->kh * p->kw, ws = cg * taps, plane = p->oh * p->ow;
    const mlvm_index_t in_plane = p->h * p->w, sw = p->sw, dw = p->dw;
    const float b0 = bias != NULL ? bias[0] : 0.0f, b1 = bias != NULL ? bias[1] : 0.0f;
    const float b2 = bias != NULL ? bias[2] : 0.0f, b3 = bias != NULL ? bias[3] : 0.0f;
    mlvm_index_t oy, ox, c, i, j, ilo, ihi, jlo, jhi, jlo2, jhi2;
    for (oy = 0; oy < p->oh; ++oy) {
        const mlvm_index_t iy0 = oy * p->sh - p->pt;
        float *o = out + oy * p->ow;
        mlvm_valid_span(iy0, p->dh, p->h, p->kh, &ilo, &ihi);
        for (ox = 0; ox < p->ow; ++ox) {
            const mlvm_index_t ix0 = ox * sw - p->pl;
            float a0 = b0, a1 = b1, a2 = b2, a3 = b3;
            mlvm_valid_span(ix0, dw, p->w, p->kw, &jlo, &jhi);
            if (ox + 1 < p->ow) {
                mlvm_valid_span(ix0 + sw, dw, p->w, p->kw, &jlo2, &jhi2);
                if (jlo2 == jlo && jhi2 == jhi) {
                    float e0 = b0, e1 = b1, e2 = b2, e3 = b3;
                    for (c = 0; c < cg; ++c)
                        for (i = ilo; i < ihi; ++i) {
                            const float *xr = x + c * in_plane + (iy0 + i * p->dh) * p->w + ix0;
                            const float *q = w + c * taps + i * p->kw;
                            for (j = jlo; j < jhi; ++j) {
                                const float v = xr[j * dw], u = xr[sw + j * dw];
                                const float q0 = q[j], q1 = q[ws + j], q2 = q[2 * ws + j];
                                const float q3 = q[3 * ws + j];
                                MLVM_MADD(a0, v, q0), MLVM_MADD(e0, u, q0);
                                MLVM_MADD(a1, v, q1), MLVM_MADD(e1, u, q1);
                                MLVM_MADD(a2, v, q2), MLVM_MADD(e2, u, q2);
                                MLVM_MADD(a3, v, q3), MLVM_MADD(e3, u, q3);
                            }
                        }
                    o[ox] = a0, o[plane + ox] = a1, o[2 * plane + ox] = a2, o[3 * plane + ox] = a3;
                    ++ox;
                    o[ox] = e0, o[plane + ox] = e1, o[2 * plane + ox] = e2, o[3 * plane + ox] = e3;
                    continue;
                }
            }
            for (c = 0; c < cg; ++c)
                for (i = ilo; i < ihi; ++i) {
                    const float *xr = x + c * in_plane + (iy0 + i * p->dh) * p->w + ix0;
                    const float *q = w + c * taps + i * p->kw;
                    for (j = jlo; j < jhi; ++j) {
                        const float v = xr[j * dw];
                        MLVM_MADD(a0, v, q[j]);
                        MLVM_MADD(a1, v, q[ws + j]);
                        MLVM_MADD(a2, v, q[2 * ws + j]);
                        MLVM_MADD(a3, v, q[3 * ws + j]);
                    }
                }
            o[ox] = a0, o[plane + ox] = a1, o[2 * plane + ox] = a2, o[3 * plane + ox] = a3;
        }
    }
}

/* One output channel (the last og % 4 of a group). */
static void one_channel(const mlvm_conv2d_t *p, mlvm_index_t cg, const float *x, const float *w,
                        const float *bias, float *out)
{
    const mlvm_index_t taps = p->kh * p->kw, in_plane = p->h * p->w;
    mlvm_index_t oy, ox, c, i, j, ilo, ihi, jlo, jhi;
    for (oy = 0; oy < p->oh; ++oy) {
        const mlvm_index_t iy0 = oy * p->sh - p->pt;
        mlvm_valid_span(iy0, p->dh, p->h, p->kh, &ilo, &ihi);
        for (ox = 0; ox < p->ow; ++ox) {
            const mlvm_index_t ix0 = ox * p->sw - p->pl;
            float a = bias != NULL ? bias[0] : 0.0f;
            mlvm_valid_span(ix0, p->dw, p->w, p->kw, &jlo, &jhi);
            for (c = 0; c < cg; ++c)
                for (i = ilo; i < ihi; ++i) {
                    const float *xr = x + c * in_plane + (iy0 + i * p->dh) * p->w;
                    const float *wr = w + c * taps + i * p->kw;
                    for (j = jlo; j < jhi; ++j)
                        MLVM_MADD(a, xr[ix0 + j * p->dw], wr[j]);
                }
            out[oy * p->ow + ox] = a;
        }
    }
}

void mlvm_conv2d_scalar_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                            const float *bias, float *out)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups, plane = p->oh * p->ow;
    const mlvm_index_t in_plane = p->h * p->w, wsize = cg * p->kh * p->kw;
    mlvm_index_t n, g, o;
    for (n = 0; n < p->n; ++n)
        for (g = 0; g < p->groups; ++g) {
            const float *xg = x + (n * p->c + g * cg) * in_plane;
            const mlvm_index_t end = (g + 1) * og;
            float *dst = out + n * p->o * plane;
            for (o = g * og; o + 4 <= end; o += 4)
                four_channels(p, cg, xg, w + o * wsize, bias != NULL ? bias + o : NULL, dst + o * plane);
            for (; o < end; ++o)
                one_channel(p, cg, xg, w + o * wsize, bias != NULL ? bias + o : NULL, dst + o * plane);
        }
}

void mlvm_conv2d_direct_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                            const float *bias, float *out, mlvm_epilogue_fn fn, const void *ctx)
{
#ifdef MLVM_SCALAR_CORE
    mlvm_conv2d_scalar_f32(p, x, w, bias, out);
    if (fn != NULL && p->n * p->o > 0 && p->oh * p->ow > 0)
        fn(ctx, 0, p->n * p->o, 0, p->oh * p->ow, out, p->oh * p->ow);
#else
    mlvm_conv2d_epilogue_f32(p, x, w, bias, out, NULL, fn, ctx);
#endif
}
