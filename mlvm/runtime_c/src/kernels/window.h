/* Internal: the window geometry conv2d's and qconv2d's direct paths share
 * (conv.c, qconv_ws.c): which outputs of a strided row read inside the
 * input, the stride-phase planes of a padded copy of the input, and where
 * each tap of output position 0 lies in them. */
#ifndef MLVM_KERNELS_WINDOW_H_
#define MLVM_KERNELS_WINDOW_H_

#include "mlvm/kernels.h"

/* A convolution's output size, kernel, strides and dilations. */
typedef struct mlvm_window {
    mlvm_index_t oh, ow, kh, kw, sh, sw, dh, dw;
} mlvm_window_t;

/* The padded input split into stride phases: per channel, `phases` planes
 * of hq x wq (phase (a, b) holds rows a, a + sh, ... and columns b, b + sw,
 * ...), so that every tap of flat output position q (row pitch wq) is q
 * plus a constant; n = (oh - 1) * wq + ow positions. */
typedef struct mlvm_phases {
    mlvm_index_t hq, wq, phases, plane, n;
} mlvm_phases_t;

/* Padded input rows (or columns) that n outputs with stride s read through
 * k taps d apart. */
static inline mlvm_index_t mlvm_reach(mlvm_index_t n, mlvm_index_t s, mlvm_index_t k,
                                      mlvm_index_t d)
{
    return (n - 1) * s + (k - 1) * d + 1;
}

static inline mlvm_phases_t mlvm_phases_of(const mlvm_window_t *w)
{
    /* padded rows and columns the windows reach */
    const mlvm_index_t hp = mlvm_reach(w->oh, w->sh, w->kh, w->dh);
    const mlvm_index_t wp = mlvm_reach(w->ow, w->sw, w->kw, w->dw);
    mlvm_phases_t g;
    g.hq = (hp + w->sh - 1) / w->sh;
    g.wq = (wp + w->sw - 1) / w->sw;
    g.phases = w->sh * w->sw;
    g.plane = g.hq * g.wq;
    g.n = (w->oh - 1) * g.wq + w->ow;
    return g;
}

/* floor(a / b) and ceil(a / b) for b > 0 and any sign of a. */
static inline mlvm_index_t mlvm_floor_div(mlvm_index_t a, mlvm_index_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static inline mlvm_index_t mlvm_ceil_div(mlvm_index_t a, mlvm_index_t b)
{
    return -mlvm_floor_div(-a, b);
}

static inline mlvm_index_t mlvm_imin(mlvm_index_t a, mlvm_index_t b) { return a < b ? a : b; }
static inline mlvm_index_t mlvm_imax(mlvm_index_t a, mlvm_index_t b) { return a > b ? a : b; }

/* mlvm_valid_span with s == 1: no division, inline where a loop calls it
 * per output (conv_scalar.c's one channel at four rows). */
static inline void mlvm_valid_span1(mlvm_index_t i0, mlvm_index_t len, mlvm_index_t n,
                                    mlvm_index_t *lo, mlvm_index_t *hi)
{
    *lo = mlvm_imin(n, mlvm_imax(0, -i0));
    *hi = mlvm_imax(*lo, mlvm_imin(n, len - i0));
}

/* The outputs q in [0, n) of a row whose input column i0 + q * s lies in
 * [0, len): [*lo, *hi). Not `inline`: the compiler's own choice keeps it a
 * call in the Cortex-M4's row loops (inlined there, they spill: DS-CNN in
 * f32 6 % more instructions) and inlines it on x86. Marked unused for the
 * files that include this header for its other helpers alone. */
#if defined(__GNUC__)
__attribute__((unused))
#endif
static void mlvm_valid_span(mlvm_index_t i0, mlvm_index_t s, mlvm_index_t len,
                            mlvm_index_t n, mlvm_index_t *lo, mlvm_index_t *hi)
{
    if (s == 1) { /* called per channel on small maps */
        mlvm_valid_span1(i0, len, n, lo, hi);
        return;
    }
    *lo = mlvm_imin(n, mlvm_imax(0, mlvm_ceil_div(-i0, s)));
    *hi = mlvm_imax(*lo, mlvm_imin(n, mlvm_floor_div(len - 1 - i0, s) + 1));
}

/* Whether some tap reads phase (a, b): a 1x1 kernel with stride 2 reads
 * one phase of four. */
static inline int mlvm_phase_read(const mlvm_window_t *w, mlvm_index_t a, mlvm_index_t b)
{
    mlvm_index_t i, j;
    int rows = 0, cols = 0;
    for (i = 0; i < w->kh && !rows; ++i)
        rows = i * w->dh % w->sh == a;
    for (j = 0; j < w->kw && !cols; ++j)
        cols = j * w->dw % w->sw == b;
    return rows && cols;
}

/* off[t] for t < count: where tap t = (c, i, j) of output position 0 lies
 * in the phase planes, in elements of a plane (channel c's planes, then
 * the phase of (i dh, j dw) and the row and column in it). Each kernel row
 * and column is divided once. */
static inline void mlvm_tap_offsets(const mlvm_window_t *w, const mlvm_phases_t *g,
                                    mlvm_index_t count, mlvm_index_t *off)
{
    const mlvm_index_t taps = w->kh * w->kw, chan = g->phases * g->plane;
    mlvm_index_t i, j, t;
    for (i = 0; i < w->kh; ++i) {
        const mlvm_index_t di = i * w->dh;
        const mlvm_index_t row = di % w->sh * w->sw * g->plane + di / w->sh * g->wq;
        for (j = 0; j < w->kw; ++j) {
            const mlvm_index_t dj = j * w->dw;
            off[i * w->kw + j] = row + dj % w->sw * g->plane + dj / w->sw;
        }
    }
    for (t = taps; t < count; ++t)
        off[t] = off[t - taps] + chan;
}

#endif /* MLVM_KERNELS_WINDOW_H_ */
