/* Convolution products with the output channels in the vector lanes (see
 * conv_cvec.h).
 *
 * A tile is MR output positions by an NR-wide sliver of output channels:
 * per tap, the sliver's row of weights is loaded once and each position's
 * input broadcast against it. Slivers run outermost, so a sliver's weights
 * stay in cache while the positions stream past; the taps are summed in
 * registers (with AVX2 in slices of MLVM_CV_KC taps over a block of tiles,
 * see cvec_all), the bias added, and the tile stored transposed into the
 * output planes. Micro-kernels, chosen at compile time:
 *   - AVX-512F: 8 positions x 32 channels (8 x 16 for 16 channels or fewer);
 *   - AVX2 + FMA: 6 x 32 as two 6 x 16 halves over each slice (one half,
 *     or 6 x 8, for fewer channels);
 *   - portable C99: 4 x 16 sums in an array, which compilers vectorise;
 *   - cores without vectors (Cortex-M): 4 x 4 in sixteen named sums.
 * Each output sums its taps in order, with fused multiply-adds where the
 * kernel has them. */
#include "conv_cvec.h"
#include "gemm.h"
#include "transpose.h"
#include "vfp.h"

#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_CV_AVX512 1
#define MLVM_CV_MR 8
#define MLVM_CV_NR 32
#elif defined(__AVX2__) && defined(__FMA__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_CV_AVX2 1
#define MLVM_CV_MR 6
#define MLVM_CV_NR 32
#elif !defined(MLVM_SCALAR_CORE)
#define MLVM_CV_MR 4
#define MLVM_CV_NR 16
#else
#define MLVM_CV_MR 4
#define MLVM_CV_NR 4
#endif

typedef float cv_tile_t[MLVM_CV_MR][MLVM_CV_NR];

/* Floats from one tap's weights of a sliver to the next tap's: a panel's
 * width, or all n channels. */
static inline mlvm_index_t w_row_stride(const mlvm_cvec_t *g)
{
    return g->w_panel != 0 ? g->w_panel : g->n;
}

/* For positions q0 .. q0 + mr of the images' run (q = image * m + p): the
 * input of tap 0 (rp) and the output of channel 0 (op). Rows past mr repeat
 * the last one (read, never stored). */
static void tile_rows(const mlvm_cvec_t *g, mlvm_index_t q0, int mr, const float **rp,
                      float **op)
{
    mlvm_index_t img = q0 / g->m, q = q0 % g->m, oy = q / g->ow, ox = q % g->ow;
    int r;
    for (r = 0; r < MLVM_CV_MR; ++r) {
        rp[r] = g->x + img * g->x_image + oy * g->wq + ox;
        op[r] = g->out + img * g->out_image + q;
        if (r + 1 >= mr)
            continue;
        ++q;
        if (++ox == g->ow) {
            ox = 0;
            ++oy;
        }
        if (q == g->m) {
            q = oy = ox = 0;
            ++img;
        }
    }
}

/* t[r][j] (+ bias[j0 + j]) to op[r][(j0 + j) * m]: the transpose back into
 * the planes. */
static void store_tile(const mlvm_cvec_t *g, float *const *op, int mr, mlvm_index_t j0, int nr,
                       cv_tile_t t)
{
    int r, j;
    for (j = 0; j < nr; ++j) {
        const float b = g->bias != NULL ? g->bias[j0 + j] : 0.0f;
        for (r = 0; r < mr; ++r)
            op[r][(j0 + j) * g->m] = t[r][j] + b;
    }
}

#define MLVM_CV_OFF(g, by_off, kk) ((by_off) ? (g)->off[kk] : (kk) * (g)->t_stride)

#if defined(MLVM_CV_AVX512)

MLVM_ALWAYS_INLINE void kern(const mlvm_cvec_t *g, int by_off, int mr, int wide,
                             const float **rp, const float *w, int nr, cv_tile_t t, int acc)
{
    __m512 c0[MLVM_CV_MR], c1[MLVM_CV_MR];
    const __mmask16 m0 = (__mmask16)(nr >= 16 ? 0xFFFFu : (1u << nr) - 1u);
    const __mmask16 m1 = (__mmask16)(nr >= 32 ? 0xFFFFu : nr <= 16 ? 0u : (1u << (nr - 16)) - 1u);
    const mlvm_index_t n = w_row_stride(g), k = g->k;
    mlvm_index_t kk;
    int r;
    for (r = 0; r < mr; ++r) { /* acc: the sums of the taps before, in t */
        c0[r] = acc ? _mm512_loadu_ps(t[r]) : _mm512_setzero_ps();
        c1[r] = acc && wide ? _mm512_loadu_ps(t[r] + 16) : _mm512_setzero_ps();
    }
    for (kk = 0; kk < k; ++kk) {
        const mlvm_index_t o = MLVM_CV_OFF(g, by_off, kk);
        const __m512 b0 = _mm512_maskz_loadu_ps(m0, w + kk * n);
        const __m512 b1 = wide ? _mm512_maskz_loadu_ps(m1, w + kk * n + 16) : b0;
        for (r = 0; r < mr; ++r) {
            const __m512 a = _mm512_set1_ps(rp[r][o]);
            c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);
            if (wide)
                c1[r] = _mm512_fmadd_ps(a, b1, c1[r]);
        }
    }
    for (r = 0; r < mr; ++r) {
        _mm512_storeu_ps(t[r], c0[r]);
        if (wide)
            _mm512_storeu_ps(t[r] + 16, c1[r]);
    }
}

/* Eight rows of 16 channels (plus bias) to 16 output channels of eight
 * positions each: rows 0-3 and 4-7 as groups of four (transpose.h), then
 * their 128-bit lanes paired, two channels per vector. */
MLVM_ALWAYS_INLINE void store_rows8(const float *t0, const float *bias, int nr, float *out,
                                    mlvm_index_t ld)
{
    const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i hi = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29,
                                         30, 31);
    const __mmask16 mb = (__mmask16)(nr >= 16 ? 0xFFFFu : (1u << nr) - 1u);
    const __m512 b = bias != NULL ? _mm512_maskz_loadu_ps(mb, bias) : _mm512_setzero_ps();
    __m512 r[8], s[8];
    int i, k;
    for (i = 0; i < 8; ++i)
        r[i] = _mm512_add_ps(_mm512_loadu_ps(t0 + i * MLVM_CV_NR), b);
    mlvm_transpose4_512(r, s);
    mlvm_transpose4_512(r + 4, s + 4);
    /* s[4g + k], 128-bit lane l: positions 4g .. 4g+3 of channel 4l + k */
    for (k = 0; k < 4; ++k) {
        const __m512 u = _mm512_permutex2var_ps(s[k], lo, s[4 + k]); /* channels k, 4+k */
        const __m512 v = _mm512_permutex2var_ps(s[k], hi, s[4 + k]); /* channels 8+k, 12+k */
        const int ch[4] = {k, 4 + k, 8 + k, 12 + k};
        const __m512 src[2] = {u, v};
        for (i = 0; i < 4; ++i) {
            const __m512 x = src[i / 2];
            if (ch[i] >= nr)
                continue;
            if (i % 2 == 0)
                _mm256_storeu_ps(out + ch[i] * ld, _mm512_castps512_ps256(x));
            else
                _mm256_storeu_ps(out + ch[i] * ld,
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
        }
    }
}

#define MLVM_CV_WIDE(nr) ((nr) > 16)
#define MLVM_CV_STORE8 1

#elif defined(MLVM_CV_AVX2)

MLVM_ALWAYS_INLINE __m256i cv_mask(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Channels h .. h + 15 of the tile (h = 0 or 16; h .. h + 7 when two is
 * 0): 6 x 16 sums, two vectors of weights and six broadcast inputs per tap
 * (a 3 x 32 tile takes four and three: with sixteen registers the weights
 * go back to memory for every multiply-add). */
MLVM_ALWAYS_INLINE void kern_half(const mlvm_cvec_t *g, int by_off, int mr, const float **rp,
                                  const float *w, int nr, cv_tile_t t, int acc, int h,
                                  const int two)
{
    __m256 c0[MLVM_CV_MR], c1[MLVM_CV_MR];
    const __m256i m0 = cv_mask(nr - h), m1 = cv_mask(nr - h - 8);
    const int full = nr - h >= 16;
    const mlvm_index_t n = w_row_stride(g), k = g->k;
    mlvm_index_t kk;
    int r;
    for (r = 0; r < mr; ++r) { /* acc: the sums of the taps before, in t */
        c0[r] = acc ? _mm256_loadu_ps(t[r] + h) : _mm256_setzero_ps();
        c1[r] = acc && two ? _mm256_loadu_ps(t[r] + h + 8) : _mm256_setzero_ps();
    }
    for (kk = 0; kk < k; ++kk) {
        const mlvm_index_t o = MLVM_CV_OFF(g, by_off, kk);
        const float *wk = w + kk * n + h;
        const __m256 b0 = full ? _mm256_loadu_ps(wk) : _mm256_maskload_ps(wk, m0);
        const __m256 b1 = !two ? b0 : full ? _mm256_loadu_ps(wk + 8)
                                           : _mm256_maskload_ps(wk + 8, m1);
        for (r = 0; r < mr; ++r) {
            const __m256 a = _mm256_broadcast_ss(rp[r] + o);
            c0[r] = _mm256_fmadd_ps(a, b0, c0[r]);
            if (two)
                c1[r] = _mm256_fmadd_ps(a, b1, c1[r]);
        }
    }
    for (r = 0; r < mr; ++r) {
        _mm256_storeu_ps(t[r] + h, c0[r]);
        if (two)
            _mm256_storeu_ps(t[r] + h + 8, c1[r]);
    }
}

/* A tile of 32 channels (wide) as two of 16, over the same slice of taps:
 * each 32-channel panel row is read whole while it is in cache. A half of
 * 8 channels or fewer sums one vector per position. */
MLVM_ALWAYS_INLINE void kern(const mlvm_cvec_t *g, int by_off, int mr, int wide,
                             const float **rp, const float *w, int nr, cv_tile_t t, int acc)
{
    if (!wide) {
        if (nr > 8)
            kern_half(g, by_off, mr, rp, w, nr, t, acc, 0, 1);
        else
            kern_half(g, by_off, mr, rp, w, nr, t, acc, 0, 0);
        return;
    }
    kern_half(g, by_off, mr, rp, w, nr, t, acc, 0, 1);
    if (nr > 24)
        kern_half(g, by_off, mr, rp, w, nr, t, acc, 16, 1);
    else
        kern_half(g, by_off, mr, rp, w, nr, t, acc, 16, 0);
}

/* Six rows of 8 channels (plus bias) to 8 output channels of six
 * positions each: rows 0-3 as a group of four (transpose.h), rows 4 and 5
 * interleaved into pairs, a channel's four and two stored apart (the
 * scalar transpose took about half the layer's time: a keyword spotter's
 * 10x4 stem). */
MLVM_ALWAYS_INLINE void store_rows6(const float *t0, const float *bias, int nr, float *out,
                                    mlvm_index_t ld)
{
    const __m256 b = bias != NULL ? _mm256_maskload_ps(bias, cv_mask(nr)) : _mm256_setzero_ps();
    const __m256 r4 = _mm256_add_ps(_mm256_loadu_ps(t0 + 4 * MLVM_CV_NR), b);
    const __m256 r5 = _mm256_add_ps(_mm256_loadu_ps(t0 + 5 * MLVM_CV_NR), b);
    /* 128-bit lane l: channels 4 l, 4 l + 1 (lo) and 4 l + 2, 4 l + 3 (hi)
     * of rows 4 and 5, a channel's pair in 64 bits */
    const __m256 lo = _mm256_unpacklo_ps(r4, r5), hi = _mm256_unpackhi_ps(r4, r5);
    __m256 r[4], s[4];
    int i, j;
    for (i = 0; i < 4; ++i)
        r[i] = _mm256_add_ps(_mm256_loadu_ps(t0 + i * MLVM_CV_NR), b);
    mlvm_transpose4_256(r, s); /* 128-bit lane l of s[k]: channel 4 l + k */
    for (j = 0; j < nr; ++j) {
        const __m256 pairs = j % 4 < 2 ? lo : hi;
        const __m128 four =
            j < 4 ? _mm256_castps256_ps128(s[j]) : _mm256_extractf128_ps(s[j - 4], 1);
        const __m128 two = j < 4 ? _mm256_castps256_ps128(pairs) : _mm256_extractf128_ps(pairs, 1);
        _mm_storeu_ps(out + j * ld, four);
        if (j % 2 == 0)
            _mm_storel_pi((__m64 *)(void *)(out + j * ld + 4), two);
        else
            _mm_storeh_pi((__m64 *)(void *)(out + j * ld + 4), two);
    }
}

#define MLVM_CV_WIDE(nr) ((nr) > 16)
#define MLVM_CV_STORE6 1

#elif MLVM_CV_NR == 4 /* cores without vectors */

#ifdef MLVM_FPU_VLDM /* (vfp.h) */
#define MLVM_CV_VLDM 1
/* t[4 r + j] = the sum over k >= 1 steps of x[r] * w[j], x four
 * neighbouring positions' inputs and w four channels' weights (w_step
 * bytes from one step to the next): per step one VLDM of each and the
 * sixteen VFMAs, step by step (the sums MLVM_MADD_4X4 makes): 22
 * instructions per 16 multiply-adds with x stepping x_step bytes, 23 with
 * x at offsets (x + off[kk] elements), where gcc's separate loads and
 * addressing took about 29 (gcc does not merge loads into a VLDM). Two
 * functions: a test of off in one cost the strided tiles a few
 * instructions each. */
#define MLVM_CV_FMAS                                                                              \
    "vfma.f32 s0, s16, s20\n\tvfma.f32 s1, s16, s21\n\tvfma.f32 s2, s16, s22\n\t"               \
    "vfma.f32 s3, s16, s23\n\tvfma.f32 s4, s17, s20\n\tvfma.f32 s5, s17, s21\n\t"               \
    "vfma.f32 s6, s17, s22\n\tvfma.f32 s7, s17, s23\n\tvfma.f32 s8, s18, s20\n\t"               \
    "vfma.f32 s9, s18, s21\n\tvfma.f32 s10, s18, s22\n\tvfma.f32 s11, s18, s23\n\t"             \
    "vfma.f32 s12, s19, s20\n\tvfma.f32 s13, s19, s21\n\tvfma.f32 s14, s19, s22\n\t"            \
    "vfma.f32 s15, s19, s23\n\tsubs %[k], %[k], #1\n\tbne 1b\n\tvstmia %[t], {s0-s15}"
#define MLVM_CV_CLOBBERS                                                                          \
    "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13", "s14", \
        "s15", "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "cc"
static void cv4_vldm(const float *x, mlvm_index_t x_step, const float *w, mlvm_index_t w_step,
                     mlvm_index_t k, float *t)
{
    const int32_t zero = 0;
    __asm__ volatile(MLVM_ZERO_16 "1:\n\tvldmia %[x], {s16-s19}\n\tvldmia %[w], {s20-s23}\n\t"
                     "add %[x], %[x], %[xs]\n\tadd %[w], %[w], %[ws]\n\t" MLVM_CV_FMAS
                     : [x] "+r"(x), [w] "+r"(w), [k] "+r"(k), "=m"(*(float(*)[16])t)
                     : [xs] "r"(x_step), [ws] "r"(w_step), [t] "r"(t), [z] "r"(zero),
                       "m"(*(const float(*)[])x), "m"(*(const float(*)[])w)
                     : MLVM_CV_CLOBBERS);
}

static void cv4_vldm_at(const float *x, const mlvm_index_t *off, const float *w,
                        mlvm_index_t w_step, mlvm_index_t k, float *t)
{
    const int32_t zero = 0;
    const float *xk; /* the step's inputs */
    __asm__ volatile(MLVM_ZERO_16 "1:\n\tldr %[xk], [%[off]], #4\n\t"
                     "add %[xk], %[x], %[xk], lsl #2\n\t"
                     "vldmia %[xk], {s16-s19}\n\tvldmia %[w], {s20-s23}\n\t"
                     "add %[w], %[w], %[ws]\n\t" MLVM_CV_FMAS
                     : [off] "+r"(off), [w] "+r"(w), [k] "+r"(k), [xk] "=&r"(xk),
                       "=m"(*(float(*)[16])t)
                     : [x] "r"(x), [ws] "r"(w_step), [t] "r"(t), [z] "r"(zero),
                       "m"(*(const float(*)[])x), "m"(*(const float(*)[])w),
                       "m"(*(const mlvm_index_t(*)[])off)
                     : MLVM_CV_CLOBBERS);
}
#undef MLVM_CV_FMAS
#undef MLVM_CV_CLOBBERS
#endif

/* Sixteen named sums (an array of them would live in memory); a ragged
 * sliver reads its last column again, never stored. */
MLVM_ALWAYS_INLINE void kern(const mlvm_cvec_t *g, int by_off, int mr, int wide,
                             const float **rp, const float *w, int nr, cv_tile_t t, int acc)
{
    const mlvm_index_t n = w_row_stride(g), k = g->k;
    const int j1 = nr > 1 ? 1 : 0, j2 = nr > 2 ? 2 : j1, j3 = nr > 3 ? 3 : j2;
    MLVM_SUMS_4X4;
    mlvm_index_t kk;
    (void)mr, (void)wide, (void)acc; /* (no contraction slices here) */
    /* a full sliver's columns at constant offsets (one pointer for the
     * four weights), in a loop of its own: -O2 does not unswitch loops */
#define MLVM_CV_STEP(i1, i2, i3, r1, r2, r3)                                               \
    do {                                                                                   \
        const mlvm_index_t o = MLVM_CV_OFF(g, by_off, kk);                                 \
        const float *wk = w + kk * n;                                                      \
        const float b0 = wk[0], b1 = wk[i1], b2 = wk[i2], b3 = wk[i3];                     \
        const float x0 = rp[0][o], x1 = r1[o], x2 = r2[o], x3 = r3[o];                     \
        MLVM_MADD_4X4(x0, x1, x2, x3, b0, b1, b2, b3);                                     \
    } while (0)
#ifdef MLVM_CV_VLDM
    if (k > 0 && nr == 4 && rp[1] == rp[0] + 1 && rp[2] == rp[0] + 2 && rp[3] == rp[0] + 3) {
        if (by_off)
            cv4_vldm_at(rp[0], g->off, w, n * (mlvm_index_t)sizeof(float), k, &t[0][0]);
        else
            cv4_vldm(rp[0], g->t_stride * (mlvm_index_t)sizeof(float), w,
                     n * (mlvm_index_t)sizeof(float), k, &t[0][0]);
        return;
    }
#endif
    if (nr == 4 && rp[1] == rp[0] + 1 && rp[2] == rp[0] + 2 && rp[3] == rp[0] + 3)
        for (kk = 0; kk < k; ++kk) /* four neighbouring positions: one pointer too */
            MLVM_CV_STEP(1, 2, 3, (rp[0] + 1), (rp[0] + 2), (rp[0] + 3));
    else if (nr == 4)
        for (kk = 0; kk < k; ++kk)
            MLVM_CV_STEP(1, 2, 3, rp[1], rp[2], rp[3]);
    else
        for (kk = 0; kk < k; ++kk)
            MLVM_CV_STEP(j1, j2, j3, rp[1], rp[2], rp[3]);
#undef MLVM_CV_STEP
    t[0][0] = c00, t[0][1] = c01, t[0][2] = c02, t[0][3] = c03;
    t[1][0] = c10, t[1][1] = c11, t[1][2] = c12, t[1][3] = c13;
    t[2][0] = c20, t[2][1] = c21, t[2][2] = c22, t[2][3] = c23;
    t[3][0] = c30, t[3][1] = c31, t[3][2] = c32, t[3][3] = c33;
}

#define MLVM_CV_WIDE(nr) 1

#else /* portable C99 */

MLVM_ALWAYS_INLINE void kern(const mlvm_cvec_t *g, int by_off, int mr, int wide,
                             const float **rp, const float *w, int nr, cv_tile_t t, int acc)
{
    const mlvm_index_t n = w_row_stride(g), k = g->k;
    mlvm_index_t kk;
    int r, j;
    (void)wide, (void)acc; /* (no contraction slices here) */
    for (r = 0; r < mr; ++r)
        for (j = 0; j < MLVM_CV_NR; ++j)
            t[r][j] = 0.0f;
    for (kk = 0; kk < k; ++kk) {
        const mlvm_index_t o = MLVM_CV_OFF(g, by_off, kk);
        const float *wk = w + kk * n;
        for (r = 0; r < mr; ++r) {
            const float a = rp[r][o];
            for (j = 0; j < nr; ++j)
                t[r][j] += a * wk[j];
        }
    }
}

#define MLVM_CV_WIDE(nr) 1

#endif

/* The last tile of fewer positions: one instance per row count (a 3x3 map
 * is a tile of 8 and one of 1, not two of 8). */
MLVM_ALWAYS_INLINE void ragged(const mlvm_cvec_t *g, int by_off, int mr, int wide,
                               const float **rp, const float *w, int nr, cv_tile_t t, int acc)
{
#if MLVM_CV_NR == 4 /* the scalar kernel's rows cost the same either way: one instance */
    (void)mr;
    kern(g, by_off, MLVM_CV_MR, wide, rp, w, nr, t, acc);
#else
    switch (mr * 2 + (wide != 0)) {
#if MLVM_CV_MR == 8
    case 14: kern(g, by_off, 7, 0, rp, w, nr, t, acc); break;
    case 15: kern(g, by_off, 7, 1, rp, w, nr, t, acc); break;
    case 12: kern(g, by_off, 6, 0, rp, w, nr, t, acc); break;
    case 13: kern(g, by_off, 6, 1, rp, w, nr, t, acc); break;
#endif
#if MLVM_CV_MR >= 6
    case 10: kern(g, by_off, 5, 0, rp, w, nr, t, acc); break;
    case 11: kern(g, by_off, 5, 1, rp, w, nr, t, acc); break;
    case 8: kern(g, by_off, 4, 0, rp, w, nr, t, acc); break;
    case 9: kern(g, by_off, 4, 1, rp, w, nr, t, acc); break;
#endif
    case 6: kern(g, by_off, 3, 0, rp, w, nr, t, acc); break;
    case 7: kern(g, by_off, 3, 1, rp, w, nr, t, acc); break;
    case 4: kern(g, by_off, 2, 0, rp, w, nr, t, acc); break;
    case 5: kern(g, by_off, 2, 1, rp, w, nr, t, acc); break;
    case 2: kern(g, by_off, 1, 0, rp, w, nr, t, acc); break;
    default: kern(g, by_off, 1, 1, rp, w, nr, t, acc); break;
    }
#endif
}

/* The sliver's weights: in its panel, or in the rows of all n. */
MLVM_ALWAYS_INLINE const float *sliver_w(const mlvm_cvec_t *g, mlvm_index_t j0)
{
    const mlvm_index_t wp = g->w_panel;
    return wp != 0 ? g->w + (j0 / wp) * wp * g->k + j0 % wp : g->w + j0;
}

#if defined(MLVM_CV_AVX512) || defined(MLVM_CV_AVX2)
/* One tile of mr positions: the kernel instance with its row count and
 * width constants, so that its sums stay in registers. */
MLVM_ALWAYS_INLINE void tile(const mlvm_cvec_t *g, int by_off, int mr, int wide, const float **rp,
                             const float *w, int nr, cv_tile_t t, int acc)
{
    if (mr != MLVM_CV_MR)
        ragged(g, by_off, mr, wide, rp, w, nr, t, acc);
    else if (wide)
        kern(g, by_off, MLVM_CV_MR, 1, rp, w, nr, t, acc);
    else
        kern(g, by_off, MLVM_CV_MR, 0, rp, w, nr, t, acc);
}

/* Tile t of mr positions (bias added) into the planes at sliver j0. */
MLVM_ALWAYS_INLINE void store(const mlvm_cvec_t *g, float *const *op, int mr, mlvm_index_t j0,
                              int nr, cv_tile_t t)
{
#ifdef MLVM_CV_STORE8
    if (mr == 8 && op[7] == op[0] + 7) { /* eight outputs in one plane */
        float *o = op[0] + j0 * g->m;
        const float *b = g->bias != NULL ? g->bias + j0 : NULL;
        store_rows8(t[0], b, nr, o, g->m);
        if (nr > 16)
            store_rows8(t[0] + 16, b != NULL ? b + 16 : NULL, nr - 16, o + 16 * g->m, g->m);
        return;
    }
#endif
#ifdef MLVM_CV_STORE6
    if (mr == 6 && op[5] == op[0] + 5) { /* six outputs in one plane */
        float *o = op[0] + j0 * g->m;
        const float *b = g->bias != NULL ? g->bias + j0 : NULL;
        int j;
        for (j = 0; j < nr; j += 8)
            store_rows6(t[0] + j, b != NULL ? b + j : NULL, nr - j < 8 ? nr - j : 8, o + j * g->m,
                        g->m);
        return;
    }
#endif
    store_tile(g, op, mr, j0, nr, t);
}

/* Contraction slices: a block of MLVM_CV_QB tiles sums MLVM_CV_KC taps at
 * a time, each tile going on from its sums of the taps before (the same
 * sums in the same order as in one pass), so that the slice's weights and
 * the block's inputs of those taps stay in the first-level cache: with
 * every tap at once, a sliver of 512 channels' taps (and the inputs, a
 * line per tap) came from the second level at each tile, and with AVX2
 * that was the kernel's bound (1.4x-1.7x the NCHW kernel's time on
 * ResNet-50's 1x1 layers of 512 to 1024 channels). */
#define MLVM_CV_QB (48 / MLVM_CV_MR) /* AVX2 8 tiles of 6, AVX-512 6 of 8 */
#ifndef MLVM_CV_KC
#ifdef MLVM_CV_AVX2
#define MLVM_CV_KC 128
#else /* AVX-512's 8 x 32 tiles read less per multiply-add: one slice */
#define MLVM_CV_KC ((mlvm_index_t)1 << 30)
#endif
#endif

MLVM_ALWAYS_INLINE void cvec_all(const mlvm_cvec_t *g, const int by_off)
{
    const float *rp[MLVM_CV_QB][MLVM_CV_MR];
    float *op[MLVM_CV_QB][MLVM_CV_MR];
    cv_tile_t t[MLVM_CV_QB];
    const mlvm_index_t total = g->images * g->m, ws = w_row_stride(g);
    mlvm_index_t j0, q0, k0;
    for (j0 = 0; j0 < g->n; j0 += MLVM_CV_NR) {
        const int nr = (int)(g->n - j0 < MLVM_CV_NR ? g->n - j0 : MLVM_CV_NR);
        const int wide = MLVM_CV_WIDE(nr);
        const float *wj = sliver_w(g, j0);
        for (q0 = 0; q0 < total; q0 += MLVM_CV_QB * MLVM_CV_MR) {
            const mlvm_index_t left = total - q0;
            const int full = left >= MLVM_CV_QB * MLVM_CV_MR;
            const int tiles = full ? MLVM_CV_QB : (int)((left + MLVM_CV_MR - 1) / MLVM_CV_MR);
            const int last = full ? MLVM_CV_MR : (int)(left - (mlvm_index_t)(tiles - 1) * MLVM_CV_MR);
            int b, r;
            for (b = 0; b < tiles; ++b)
                tile_rows(g, q0 + b * MLVM_CV_MR, b + 1 < tiles ? MLVM_CV_MR : last, rp[b], op[b]);
            for (k0 = 0; k0 < g->k; k0 += MLVM_CV_KC) {
                mlvm_cvec_t s = *g; /* taps k0 .. k0 + s.k */
                const mlvm_index_t shift = by_off ? 0 : k0 * g->t_stride;
                s.k = g->k - k0 < MLVM_CV_KC ? g->k - k0 : MLVM_CV_KC;
                if (by_off)
                    s.off = g->off + k0;
                for (b = 0; b < tiles; ++b) {
                    const float *rs[MLVM_CV_MR];
                    for (r = 0; r < MLVM_CV_MR; ++r)
                        rs[r] = rp[b][r] + shift;
                    tile(&s, by_off, b + 1 < tiles ? MLVM_CV_MR : last, wide, rs, wj + k0 * ws, nr,
                         t[b], k0 > 0);
                }
            }
            for (b = 0; b < tiles; ++b)
                store(g, op[b], b + 1 < tiles ? MLVM_CV_MR : last, j0, nr, t[b]);
        }
    }
}
#else
/* Every tile, all taps at once (portable C and cores without vectors).
 * The kernel calls are written out rather than through tile() and store():
 * through them gcc -O2 gave the Cortex-M loops 14 bytes more code each and
 * 8 more of stack. */
MLVM_ALWAYS_INLINE void cvec_all(const mlvm_cvec_t *g, const int by_off)
{
    const float *rp[MLVM_CV_MR];
    float *op[MLVM_CV_MR];
    const mlvm_index_t total = g->images * g->m;
    cv_tile_t t;
    mlvm_index_t j0, q0;
    for (j0 = 0; j0 < g->n; j0 += MLVM_CV_NR) {
        const int nr = (int)(g->n - j0 < MLVM_CV_NR ? g->n - j0 : MLVM_CV_NR);
        const int wide = MLVM_CV_WIDE(nr);
        const float *wj = sliver_w(g, j0);
        for (q0 = 0; q0 < total; q0 += MLVM_CV_MR) {
            const int mr = (int)(total - q0 < MLVM_CV_MR ? total - q0 : MLVM_CV_MR);
            tile_rows(g, q0, mr, rp, op);
            if (mr == MLVM_CV_MR) {
                if (wide)
                    kern(g, by_off, MLVM_CV_MR, 1, rp, wj, nr, t, 0);
                else
                    kern(g, by_off, MLVM_CV_MR, 0, rp, wj, nr, t, 0);
            } else {
                ragged(g, by_off, mr, wide, rp, wj, nr, t, 0);
            }
            store_tile(g, op, mr, j0, nr, t);
        }
    }
}
#endif

MLVM_NOINLINE static void cvec_at(const mlvm_cvec_t *g) { cvec_all(g, 1); }
MLVM_NOINLINE static void cvec_strided(const mlvm_cvec_t *g) { cvec_all(g, 0); }

void mlvm_cvec_at_f32(const mlvm_cvec_t *g)
{
    if (g->m > 0 && g->n > 0 && g->images > 0)
        cvec_at(g);
}

void mlvm_cvec_strided_f32(const mlvm_cvec_t *g)
{
    if (g->m > 0 && g->n > 0 && g->images > 0)
        cvec_strided(g);
}
