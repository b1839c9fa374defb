/* mlvm.pool2d's max over 8-bit planes (i8 or ui8): a quantized model's max
 * pools, which mlvm-fuse-qdq moves onto the bytes (the maximum commutes
 * with a quantization's monotone steps), and ONNX MaxPool of 8-bit tensors.
 *
 * As the f32 kernel's columns (nn.c): per output row and chunk of output
 * columns, the maximum over the window's rows of each input column the
 * chunk reads, then over each window's columns of those. Signed bytes are
 * flipped to unsigned order on the way in and back on the way out
 * (x ^ 0x80), so one unsigned path serves both; padded columns are 0 there,
 * the lowest byte, which no maximum keeps where the window holds an element
 * of x (every window does: each pad is smaller than the window).
 *
 * With SSE2, both steps go 16 bytes at a time, the last step of a row
 * overlapping the one before it (a maximum taken twice is the same), and
 * strides 1 and 2 join 16 outputs a step (stride 2 takes the even bytes of
 * two loads by one pack), a row of fewer than 16 through a copy: the
 * planes of a quantized CNN's pools have rows of 13 to 111 bytes, where a
 * loop of single bytes after the vectors cost as much as the vectors. */
#include <string.h>

#if !defined(MLVM_PORTABLE_KERNELS) && defined(__SSE2__)
#include <immintrin.h>
#define MLVM_MP8_SSE2 1
#endif

#include "mlvm/kernels.h"
#include "mlvm/kernels_nn.h"
#include "gemm.h" /* MLVM_SCALAR_CORE, MLVM_ALWAYS_INLINE */
#include "window.h"

#ifdef MLVM_SCALAR_CORE
#define MLVM_MP8_COLS 64 /* bytes of column maxima on the stack */
#else
#define MLVM_MP8_COLS 1024
#endif
/* Past a chunk's columns, what a vector join of 16 outputs may read. */
#define MLVM_MP8_MARGIN 48

MLVM_ALWAYS_INLINE uint8_t mp8_max(uint8_t a, uint8_t b)
{
    return a > b ? a : b;
}

/* cm[t - a] = the maximum over rows [h0, h1) of the plane's column t,
 * flipped, for t in [a, b); 0 outside [0, w). h1 > h0. Column blocks
 * outer, rows inner: each block of cm is stored once, never read back. */
static void mp8_columns(const uint8_t *xp, mlvm_index_t w, mlvm_index_t h0, mlvm_index_t h1,
                        mlvm_index_t a, mlvm_index_t b, uint8_t flip, uint8_t *cm)
{
    const mlvm_index_t lo = mlvm_imax(a, 0), hi = mlvm_imax(lo, mlvm_imin(b, w)), len = hi - lo;
    const uint8_t *x0 = xp + h0 * w + lo;
    uint8_t *c = cm + (lo - a);
    mlvm_index_t i, t = 0;
    memset(cm, 0, (size_t)(lo - a));
    memset(cm + (hi - a), 0, (size_t)(b - hi));
#ifdef MLVM_MP8_SSE2
    if (len >= 16) {
        const __m128i f = _mm_set1_epi8((char)flip);
        for (;; t += 16) {
            __m128i m;
            if (t + 16 > len)
                t = len - 16; /* the last block overlaps the one before: the same bytes again */
            m = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(x0 + t)), f);
            for (i = 1; i < h1 - h0; ++i)
                m = _mm_max_epu8(m, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(x0 + i * w + t)), f));
            _mm_storeu_si128((__m128i *)(c + t), m);
            if (t + 16 == len)
                return;
        }
    }
#endif
    for (; t < len; ++t) {
        uint8_t m = (uint8_t)(x0[t] ^ flip);
        for (i = 1; i < h1 - h0; ++i)
            m = mp8_max(m, (uint8_t)(x0[i * w + t] ^ flip));
        c[t] = m;
    }
}

/* o[t] = the maximum of cm[t * s + j] over j < kw, flipped back, t < n. */
static void mp8_join_any(const uint8_t *cm, mlvm_index_t n, mlvm_index_t s, mlvm_index_t kw, uint8_t flip,
                         uint8_t *o)
{
    mlvm_index_t t, j;
    for (t = 0; t < n; ++t) {
        uint8_t m = cm[t * s];
        for (j = 1; j < kw; ++j)
            m = mp8_max(m, cm[t * s + j]);
        o[t] = (uint8_t)(m ^ flip);
    }
}

#ifdef MLVM_MP8_SSE2
/* Bytes t * s + j, t < 16, of p (s 1 or 2): p[j .. j + 16), or the even
 * bytes of p[j .. j + 32). */
MLVM_ALWAYS_INLINE __m128i mp8_taps(const uint8_t *p, mlvm_index_t s, mlvm_index_t j)
{
    const __m128i lo = _mm_loadu_si128((const __m128i *)(p + j));
    const __m128i even = _mm_set1_epi16(0xff);
    if (s == 1)
        return lo;
    return _mm_packus_epi16(_mm_and_si128(lo, even),
                            _mm_and_si128(_mm_loadu_si128((const __m128i *)(p + j + 16)), even));
}

/* 16 outputs from p = cm + t * s. */
MLVM_ALWAYS_INLINE __m128i mp8_join16(const uint8_t *p, mlvm_index_t s, mlvm_index_t kw, __m128i f)
{
    __m128i m = mp8_taps(p, s, 0);
    mlvm_index_t j;
    for (j = 1; j < kw; ++j)
        m = _mm_max_epu8(m, mp8_taps(p, s, j));
    return _mm_xor_si128(m, f);
}

/* mp8_join_any for s 1 or 2; cm readable MLVM_MP8_MARGIN bytes past the
 * chunk's columns. */
MLVM_ALWAYS_INLINE void mp8_join_vec(const uint8_t *cm, mlvm_index_t n, mlvm_index_t s, mlvm_index_t kw,
                                     uint8_t flip, uint8_t *o)
{
    const __m128i f = _mm_set1_epi8((char)flip);
    mlvm_index_t t;
    if (n < 16) {
        uint8_t tmp[16];
        _mm_storeu_si128((__m128i *)tmp, mp8_join16(cm, s, kw, f));
        memcpy(o, tmp, (size_t)n);
        return;
    }
    for (t = 0;; t += 16) {
        if (t + 16 > n)
            t = n - 16;
        _mm_storeu_si128((__m128i *)(o + t), mp8_join16(cm + t * s, s, kw, f));
        if (t + 16 == n)
            return;
    }
}
#endif

static void mp8_join(const uint8_t *cm, mlvm_index_t n, mlvm_index_t s, mlvm_index_t kw, uint8_t flip,
                     uint8_t *o)
{
#ifdef MLVM_MP8_SSE2
    /* 16 outputs read up to 15 * s + kw + 16 bytes from their first */
    if (s == 1 && kw <= MLVM_MP8_MARGIN - 16) {
        mp8_join_vec(cm, n, 1, kw, flip, o);
        return;
    }
    if (s == 2 && kw <= MLVM_MP8_MARGIN - 32) {
        mp8_join_vec(cm, n, 2, kw, flip, o);
        return;
    }
#endif
    mp8_join_any(cm, n, s, kw, flip, o);
}

/* *o = one output whose window (from padded column a) is wider than the
 * chunk: its maximum element by element. */
static void mp8_wide(const uint8_t *xp, const mlvm_pool2d_t *p, mlvm_index_t h0, mlvm_index_t h1,
                     mlvm_index_t a, uint8_t flip, uint8_t *o)
{
    const mlvm_index_t lo = mlvm_imax(a, 0), hi = mlvm_imin(a + p->kw, p->w);
    uint8_t m = 0;
    mlvm_index_t i, t;
    for (i = h0; i < h1; ++i)
        for (t = lo; t < hi; ++t)
            m = mp8_max(m, (uint8_t)(xp[i * p->w + t] ^ flip));
    *o = (uint8_t)(m ^ flip);
}

void mlvm_maxpool2d_8(const mlvm_pool2d_t *p, int32_t is_signed, const void *x, void *out)
{
    const uint8_t flip = is_signed ? 0x80u : 0u;
    uint8_t cm[MLVM_MP8_COLS + MLVM_MP8_MARGIN];
    mlvm_index_t per, pl, oh, c0, n, a, b;
    memset(cm, 0, sizeof cm); /* what a vector join reads past a chunk is never indeterminate */
    per = p->kw > MLVM_MP8_COLS ? 1 : (MLVM_MP8_COLS - p->kw) / p->sw + 1; /* outputs per chunk */
    for (pl = 0; pl < p->planes; ++pl) {
        const uint8_t *xp = (const uint8_t *)x + pl * p->h * p->w;
        uint8_t *op = (uint8_t *)out + pl * p->oh * p->ow;
        for (oh = 0; oh < p->oh; ++oh) {
            const mlvm_index_t h0 = mlvm_imax(oh * p->sh - p->pt, 0);
            const mlvm_index_t h1 = mlvm_imin(oh * p->sh - p->pt + p->kh, p->h);
            for (c0 = 0; c0 < p->ow; c0 += n) {
                n = mlvm_imin(p->ow - c0, per);
                a = c0 * p->sw - p->pl; /* padded columns [a, b) */
                b = a + (n - 1) * p->sw + p->kw;
                if (b - a > MLVM_MP8_COLS) { /* a window wider than the chunk */
                    mp8_wide(xp, p, h0, h1, a, flip, op + oh * p->ow + c0);
                    continue;
                }
                mp8_columns(xp, p->w, h0, h1, a, b, flip, cm);
                mp8_join(cm, n, p->sw, p->kw, flip, op + oh * p->ow + c0);
            }
        }
    }
}
