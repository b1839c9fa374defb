/* Matrix products, out = a @ b, with a(i, k) = a[i * a_rs + k * a_cs] and
 * b(k, j) = b[k * b_rs + j * b_cs].
 *
 * Blocked for the caches: the contraction runs in slices of MLVM_MM_KC, the
 * rows in blocks of MLVM_MM_MC (MLVM_MM_MC_SLAB with b in the workspace's
 * slab), and within those a register-tiled
 * micro-kernel computes an MR x NR tile of out from MR rows of a and an
 * NR-wide sliver of b, which stays in L1 while the kernel walks down the
 * rows. b is read in place when its rows are contiguous (b_cs == 1) and it
 * is small; a transposed b, one of MLVM_MM_PACK_ABOVE elements or more, or
 * (with AVX) one whose rows are 2, 3, 4 ... KiB apart, is packed
 * sliver by sliver into a buffer on the stack (MLVM_MM_KC * NR
 * floats: 32 KiB with AVX-512, 1 KiB on a Cortex-M; no allocation, no static
 * state), which spares the TLB and the L1 sets. A constant b the compiler
 * stored in panels (b_panel: the slivers side by side, each contiguous and
 * zero-padded) is read in place whatever its size: no call packs it. a is
 * read in place, row-major, transposed or in panels (a_panel: 24 rows side
 * by side per 256-wide contraction slice, Winograd's weight planes): the
 * kernel broadcasts one element per row and step. The signature is
 * unchanged: every caller gets the blocking.
 *
 * Micro-kernels, chosen at compile time:
 *   - AVX-512F: 8 x 32 (16 zmm accumulators), masked loads and stores for
 *     the ragged edge, explicit FMA; 8 x 16 for a sliver of 16 columns or
 *     fewer (a small feature map's last columns: no multiply-adds on lanes
 *     that are all masked);
 *   - AVX2 + FMA: 6 x 16 (12 ymm accumulators), 6 x 8 for 8 columns or fewer;
 *     the 1 or 2 rows under a whole tile over two slivers at once (2 x 32);
 *     constant weights in panels past L2 are prefetched a sliver ahead, and
 *     the partial sums of an earlier slice as a tile starts;
 *   - portable C99: MR x NR accumulators in an array, which gcc and clang
 *     vectorise when b is contiguous;
 *   - scalar C99 for cores without vectors (Cortex-M): a 4 x 4 tile in
 *     sixteen named accumulators, which stay in floating-point registers.
 * The intrinsic kernels use fused multiply-adds (one rounding per term), so
 * their results differ in the last bits from the portable kernel and from
 * numpy's order of summation; every path stays within the accumulation
 * bound the tests check, 1e-5 * sum_k |a_ik| |b_kj|.
 *
 * A single row (a vector-matrix product) is bound by reading b. With
 * vectors, b's contiguous rows stream whole, four at a time, into the
 * output kept in L1 (gemv, with AVX2 prefetching the next four rows of a
 * b past L2; with AVX-512, rows under 512 columns in sixteen
 * registers of sums, gemv_regs); with AVX2 panels stream one by one into
 * eight vectors of sums (gemv_panels); the columns past them take the
 * tiles. With AVX-512 the last row of a tile edge uses a one-row kernel
 * with four partial sums per vector, so that the FMA chain's latency is
 * hidden. The AVX2 kernel uses
 * masked loads and stores only on a tile's ragged edge. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "clamp.h"
#include "gemm.h"
#include "iter.h"
#include "vfp.h"

#if defined(__AVX512F__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_MM_AVX512 1
#define MLVM_MM_MR 8
#define MLVM_MM_NR 32
#elif defined(__AVX2__) && defined(__FMA__) && !defined(MLVM_PORTABLE_KERNELS)
#include <immintrin.h>
#define MLVM_MM_AVX2 1
#define MLVM_MM_MR 6
#define MLVM_MM_NR 16
#elif !defined(MLVM_SCALAR_CORE)
#define MLVM_MM_MR 4
#define MLVM_MM_NR 16
#else /* cores without vectors (Cortex-M); MLVM_SCALAR_KERNELS tests it anywhere */
#define MLVM_MM_MR 4
#define MLVM_MM_NR 4
#endif

#ifndef MLVM_MM_KC
#if defined(MLVM_MM_AVX512) || defined(MLVM_MM_AVX2)
#define MLVM_MM_KC 256
#elif MLVM_MM_NR >= 16
#define MLVM_MM_KC 128
#else
#define MLVM_MM_KC 64
#endif
#endif
#ifndef MLVM_MM_KC_SMALL_M
#define MLVM_MM_KC_SMALL_M 32
#endif
#ifndef MLVM_MM_PACK_ABOVE
#define MLVM_MM_PACK_ABOVE (512 * 512)
#endif
#ifndef MLVM_MM_MC
#define MLVM_MM_MC 192
#endif
/* Rows of a block with b in the workspace's slab: with AVX2 half as many,
 * so that the block of a (96 x 256 floats) and the slab (256 KiB) share a
 * 512 KiB L2 (Zen 2 / 3; with 256 KiB, Haswell to Skylake client, neither
 * size fits both: not measured). On a Zen 3 core, OpenBLAS's sgemm taking
 * turns in the same process, mean of three loop alignments: 512^3 1.07x
 * -> 1.00x its time, 1024^3 1.12x -> 1.09x, 1024 x 256 x 1024 1.05x ->
 * 1.00x; b in panels, 96 rows measured the same as 192. */
#ifndef MLVM_MM_MC_SLAB
#if defined(MLVM_MM_AVX2)
#define MLVM_MM_MC_SLAB 96
#else
#define MLVM_MM_MC_SLAB MLVM_MM_MC
#endif
#endif
#if MLVM_MM_KC > MLVM_MM_SLAB_K || MLVM_MM_SLAB_N % MLVM_MM_NR != 0
#error "a contraction slice or a sliver does not fit the workspace's slab"
#endif
/* Weights in panels (a_panel): tiles start on a panel's rows and slices
 * on a slice of its contraction, whatever the path. */
#if MLVM_CONV_A_PANEL % MLVM_MM_MR != 0 || MLVM_MM_MC % MLVM_CONV_A_PANEL != 0                     \
    || MLVM_MM_MC_SLAB % MLVM_CONV_A_PANEL != 0                                                    \
    || MLVM_CONV_A_PANEL_K % MLVM_MM_KC != 0 || MLVM_CONV_A_PANEL_K % MLVM_MM_KC_SMALL_M != 0
#error "the tile rows, row blocks or contraction slices do not fit MLVM_CONV_A_PANEL(_K)"
#endif
/* Bytes of out one block of columns may span (its m rows), so that the
 * partial sums of a long contraction stay in L2 from one slice to the next
 * (a convolution's output plane or a large product's out would otherwise
 * stream through memory once per slice): 0 = no column blocks. A GEMM
 * packing b into its slab (a matmul's workspace) takes blocks of the
 * slab's MLVM_MM_SLAB_N columns instead, on every path. */
#ifndef MLVM_MM_NC_BYTES
#if defined(MLVM_MM_AVX512)
#define MLVM_MM_NC_BYTES (512 * 1024)
#elif defined(MLVM_MM_AVX2)
#define MLVM_MM_NC_BYTES (256 * 1024)
#else
#define MLVM_MM_NC_BYTES 0
#endif
#endif
/* and at least this many columns, so that the weights' slices are read
 * for several slivers at a time */
#ifndef MLVM_MM_NC_MIN
#define MLVM_MM_NC_MIN (8 * MLVM_MM_NR)
#endif

typedef struct mm_ctx {
    mlvm_index_t kc;               /* contraction length of this slice */
    mlvm_index_t a_rs, a_cs;       /* strides of a */
    mlvm_index_t b_rs;             /* row stride of the (packed or not) sliver */
    const mlvm_index_t *b_off;     /* or row offsets of an unpacked sliver */
    mlvm_index_t c_rs;             /* row stride of out */
    int accumulate;                /* add to out (slices after the first) */
    const float *col_bias;         /* or NULL: the tile's column biases (last slice) */
    const mlvm_clamp_t *act;       /* or NULL: clamp the sums as they are stored (last slice) */
#if defined(MLVM_MM_AVX2)
    mlvm_index_t pf;               /* or 0: floats from a step's row of the sliver to the
                                      same row of the next one, which the tile prefetches
                                      (panels, see gemm_blocked) */
#endif
} mm_ctx_t;

#if !defined(MLVM_MM_AVX512) && !defined(MLVM_MM_AVX2) && !defined(MLVM_SCALAR_CORE)
/* mlvm_epilogue_clamp_f32's clamp of one sum, for the portable stores:
 * relu h < 0 ? 0 : h, else !(h <= lo) ? h : lo then !(m >= hi) ? m : hi. */
static float act_scalar(const mlvm_clamp_t *t, float h)
{
    float m;
    if (t->relu)
        return h < 0.0f ? 0.0f : h;
    m = !(h <= t->lo) ? h : t->lo;
    return !(m >= t->hi) ? m : t->hi;
}
#endif

/* -------------------------------------------------------------------------
 * Micro-kernels: out[0..mr) x [0..nr) (+)= a rows x b sliver
 * ---------------------------------------------------------------------- */

#if defined(MLVM_MM_AVX512)

#define MLVM_INLINE static inline __attribute__((always_inline))

/* mlvm_epilogue_clamp_f32's clamp on a vector: max(0, v) is relu's
 * v < 0 ? 0 : v, NaN and -0 kept (max returns its second operand for
 * those); the bounds by compare and select, ties giving the bound. */
MLVM_INLINE __m512 bounds_avx512(__m512 lo, __m512 hi, __m512 v)
{
    v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, lo, _CMP_LE_OQ), lo);
    return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, hi, _CMP_GE_OQ), hi);
}

/* off: NULL, or b's row offsets (a constant NULL in the plain instances,
 * so that their loop keeps its simple addressing). */
/* wide: both vectors of the sliver; otherwise only the first (nr <= 16, a
 * small map's last columns), so no multiply-add is spent on masked lanes. */
MLVM_INLINE void kern_avx512(const mm_ctx_t *x, int mr, int wide, const mlvm_index_t *off,
                             const float *a, const float *b, float *c, const float *bias,
                             __mmask16 m0, __mmask16 m1)
{
    __m512 c0[MLVM_MM_MR], c1[MLVM_MM_MR];
    const mlvm_index_t a_rs = x->a_rs, a_cs = x->a_cs, b_rs = x->b_rs;
    mlvm_index_t kk;
    int r;
    for (r = 0; r < mr; ++r) {
        c0[r] = _mm512_setzero_ps();
        c1[r] = _mm512_setzero_ps();
    }
    for (kk = 0; kk < x->kc; ++kk) {
        const float *bk = off != NULL ? b + off[kk] : b + kk * b_rs;
        const __m512 b0 = _mm512_maskz_loadu_ps(m0, bk);
        const __m512 b1 = wide ? _mm512_maskz_loadu_ps(m1, bk + 16) : b0;
        const float *ak = a + kk * a_cs;
        for (r = 0; r < mr; ++r) {
            const __m512 av = _mm512_set1_ps(ak[r * a_rs]);
            c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
            if (wide)
                c1[r] = _mm512_fmadd_ps(av, b1, c1[r]);
        }
    }
    for (r = 0; r < mr; ++r) {
        float *cr = c + r * x->c_rs;
        if (x->accumulate) {
            c0[r] = _mm512_add_ps(c0[r], _mm512_maskz_loadu_ps(m0, cr));
            if (wide)
                c1[r] = _mm512_add_ps(c1[r], _mm512_maskz_loadu_ps(m1, cr + 16));
        } else if (bias != NULL) {
            c0[r] = _mm512_add_ps(c0[r], _mm512_set1_ps(bias[r]));
            c1[r] = _mm512_add_ps(c1[r], _mm512_set1_ps(bias[r]));
        }
    }
    if (x->col_bias != NULL) {
        const __m512 cb0 = _mm512_maskz_loadu_ps(m0, x->col_bias);
        const __m512 cb1 = _mm512_maskz_loadu_ps(m1, x->col_bias + 16);
        for (r = 0; r < mr; ++r) {
            c0[r] = _mm512_add_ps(c0[r], cb0);
            c1[r] = _mm512_add_ps(c1[r], cb1);
        }
    }
    /* tested once per tile: tests between the rows' stores cost the sums
     * their registers (gcc kept them in memory, the kernel 2x slower) */
    if (x->act != NULL && x->act->relu) {
        for (r = 0; r < mr; ++r) {
            c0[r] = _mm512_max_ps(_mm512_setzero_ps(), c0[r]);
            c1[r] = _mm512_max_ps(_mm512_setzero_ps(), c1[r]);
        }
    } else if (x->act != NULL) {
        const __m512 lo = _mm512_set1_ps(x->act->lo), hi = _mm512_set1_ps(x->act->hi);
        for (r = 0; r < mr; ++r) {
            c0[r] = bounds_avx512(lo, hi, c0[r]);
            c1[r] = bounds_avx512(lo, hi, c1[r]);
        }
    }
    for (r = 0; r < mr; ++r) {
        float *cr = c + r * x->c_rs;
        _mm512_mask_storeu_ps(cr, m0, c0[r]);
        if (wide)
            _mm512_mask_storeu_ps(cr + 16, m1, c1[r]);
    }
}

/* One row: four independent partial sums per vector, over k mod 4. */
static void kern_row_avx512(const mm_ctx_t *x, const mlvm_index_t *off, const float *a,
                            const float *b, float *c, const float *bias, __mmask16 m0,
                            __mmask16 m1)
{
    __m512 s0[4], s1[4];
    const mlvm_index_t a_cs = x->a_cs, b_rs = x->b_rs, kc = x->kc;
    mlvm_index_t kk = 0;
    int u;
    for (u = 0; u < 4; ++u) {
        s0[u] = _mm512_setzero_ps();
        s1[u] = _mm512_setzero_ps();
    }
    for (; kk + 4 <= kc; kk += 4)
        for (u = 0; u < 4; ++u) {
            const __m512 av = _mm512_set1_ps(a[(kk + u) * a_cs]);
            const float *bk = off != NULL ? b + off[kk + u] : b + (kk + u) * b_rs;
            s0[u] = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(m0, bk), s0[u]);
            s1[u] = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(m1, bk + 16), s1[u]);
        }
    for (; kk < kc; ++kk) {
        const __m512 av = _mm512_set1_ps(a[kk * a_cs]);
        const float *bk = off != NULL ? b + off[kk] : b + kk * b_rs;
        s0[0] = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(m0, bk), s0[0]);
        s1[0] = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(m1, bk + 16), s1[0]);
    }
    s0[0] = _mm512_add_ps(_mm512_add_ps(s0[0], s0[1]), _mm512_add_ps(s0[2], s0[3]));
    s1[0] = _mm512_add_ps(_mm512_add_ps(s1[0], s1[1]), _mm512_add_ps(s1[2], s1[3]));
    if (x->accumulate) {
        s0[0] = _mm512_add_ps(s0[0], _mm512_maskz_loadu_ps(m0, c));
        s1[0] = _mm512_add_ps(s1[0], _mm512_maskz_loadu_ps(m1, c + 16));
    } else if (bias != NULL) {
        s0[0] = _mm512_add_ps(s0[0], _mm512_set1_ps(bias[0]));
        s1[0] = _mm512_add_ps(s1[0], _mm512_set1_ps(bias[0]));
    }
    if (x->col_bias != NULL) {
        s0[0] = _mm512_add_ps(s0[0], _mm512_maskz_loadu_ps(m0, x->col_bias));
        s1[0] = _mm512_add_ps(s1[0], _mm512_maskz_loadu_ps(m1, x->col_bias + 16));
    }
    if (x->act != NULL && x->act->relu) {
        s0[0] = _mm512_max_ps(_mm512_setzero_ps(), s0[0]);
        s1[0] = _mm512_max_ps(_mm512_setzero_ps(), s1[0]);
    } else if (x->act != NULL) {
        const __m512 lo = _mm512_set1_ps(x->act->lo), hi = _mm512_set1_ps(x->act->hi);
        s0[0] = bounds_avx512(lo, hi, s0[0]);
        s1[0] = bounds_avx512(lo, hi, s1[0]);
    }
    _mm512_mask_storeu_ps(c, m0, s0[0]);
    _mm512_mask_storeu_ps(c + 16, m1, s1[0]);
}

/* A single row times a b with contiguous rows of fewer than 512 columns,
 * over the first n128 (a multiple of 128): up to 256 columns at a time in
 * 16 accumulators, b streamed row by row (up to 1 KiB contiguous per
 * step). Where the accumulators span whole rows (256 or 128 columns) b is
 * read in order, faster than through `gemv`'s output in memory (784 x 256:
 * 3.5 against 5.9 us); past 512 columns `gemv` streams whole rows. */
#define MLVM_HAVE_GEMV_REGS 1
#define MLVM_GEMV_COLS 256
static void gemv_regs(mlvm_index_t n128, mlvm_index_t k, const float *a, mlvm_index_t a_cs,
                 const float *b, mlvm_index_t b_rs, float *out)
{
    mlvm_index_t j0, kk;
    int v;
    for (j0 = 0; j0 < n128; j0 += MLVM_GEMV_COLS) {
        __m512 acc[MLVM_GEMV_COLS / 16];
        if (n128 - j0 >= MLVM_GEMV_COLS) {
            for (v = 0; v < MLVM_GEMV_COLS / 16; ++v)
                acc[v] = _mm512_setzero_ps();
            for (kk = 0; kk < k; ++kk) {
                const __m512 av = _mm512_set1_ps(a[kk * a_cs]);
                const float *br = b + kk * b_rs + j0;
                for (v = 0; v < MLVM_GEMV_COLS / 16; ++v)
                    acc[v] = _mm512_fmadd_ps(av, _mm512_loadu_ps(br + 16 * v), acc[v]);
            }
            for (v = 0; v < MLVM_GEMV_COLS / 16; ++v)
                _mm512_storeu_ps(out + j0 + 16 * v, acc[v]);
        } else {
            for (v = 0; v < 8; ++v)
                acc[v] = _mm512_setzero_ps();
            for (kk = 0; kk < k; ++kk) {
                const __m512 av = _mm512_set1_ps(a[kk * a_cs]);
                const float *br = b + kk * b_rs + j0;
                for (v = 0; v < 8; ++v)
                    acc[v] = _mm512_fmadd_ps(av, _mm512_loadu_ps(br + 16 * v), acc[v]);
            }
            for (v = 0; v < 8; ++v)
                _mm512_storeu_ps(out + j0 + 16 * v, acc[v]);
        }
    }
}

/* Vectors for the single-row kernels below. */
typedef __m512 mlvm_vf;
#define MLVM_VF_LEN 16
#define MLVM_VF_LOAD _mm512_loadu_ps
#define MLVM_VF_STORE _mm512_storeu_ps
#define MLVM_VF_FMA _mm512_fmadd_ps
#define MLVM_VF_SET1 _mm512_set1_ps

/* One instance per row count 2 .. 8, with one vector or both (the one-row
 * kernel for a single row) */
#define MLVM_MM_ROWS(wide)                                                                        \
    case 8: kern_avx512(x, 8, wide, off, a, b, c, bias, m0, m1); break;                          \
    case 7: kern_avx512(x, 7, wide, off, a, b, c, bias, m0, m1); break;                          \
    case 6: kern_avx512(x, 6, wide, off, a, b, c, bias, m0, m1); break;                          \
    case 5: kern_avx512(x, 5, wide, off, a, b, c, bias, m0, m1); break;                          \
    case 4: kern_avx512(x, 4, wide, off, a, b, c, bias, m0, m1); break;                          \
    case 3: kern_avx512(x, 3, wide, off, a, b, c, bias, m0, m1); break;                          \
    case 2: kern_avx512(x, 2, wide, off, a, b, c, bias, m0, m1); break;

/* The tile kernel for mr rows, with b's rows at off (or NULL: b_rs apart). */
MLVM_INLINE void micro_mr(const mm_ctx_t *x, int mr, const mlvm_index_t *off, const float *a,
                          const float *b, float *c, const float *bias, __mmask16 m0,
                          __mmask16 m1)
{
    if (m1 == 0) {
        switch (mr) {
            MLVM_MM_ROWS(0)
        default: kern_row_avx512(x, off, a, b, c, bias, m0, m1); break;
        }
        return;
    }
    switch (mr) {
        MLVM_MM_ROWS(1)
    default: kern_row_avx512(x, off, a, b, c, bias, m0, m1); break;
    }
}

MLVM_INLINE void micro(const mm_ctx_t *x, const mlvm_index_t *off, int mr, int nr,
                       const float *a, const float *b, float *c, const float *bias)
{
    const __mmask16 m0 = (__mmask16)(nr >= 16 ? 0xFFFFu : (1u << nr) - 1u);
    const __mmask16 m1 = (__mmask16)(nr >= 32 ? 0xFFFFu : nr <= 16 ? 0u : (1u << (nr - 16)) - 1u);
    micro_mr(x, mr, off, a, b, c, bias, m0, m1);
}

#elif defined(MLVM_MM_AVX2)

#define MLVM_INLINE static inline __attribute__((always_inline))

/* The clamp on a vector, as bounds_avx512. */
MLVM_INLINE __m256 bounds_avx2(__m256 lo, __m256 hi, __m256 v)
{
    v = _mm256_blendv_ps(v, lo, _mm256_cmp_ps(v, lo, _CMP_LE_OQ));
    return _mm256_blendv_ps(v, hi, _mm256_cmp_ps(v, hi, _CMP_GE_OQ));
}

#if defined(__GNUC__)
#define MLVM_UNROLL4 _Pragma("GCC unroll 4")
#else
#define MLVM_UNROLL4
#endif

/* full: all 16 columns, plain loads and stores (masked ones cost more on
 * every AVX2 core); the masks are used only on the ragged edge. wide: both
 * vectors of the sliver; otherwise only the first (nr <= 8). pf: each step
 * prefetches the next sliver's row, x->pf floats on. */
MLVM_INLINE void kern_avx2(const mm_ctx_t *x, int mr, int full, int wide, int pf,
                           const mlvm_index_t *off, const float *a, const float *b, float *c,
                           const float *bias, __m256i m0, __m256i m1)
{
    __m256 c0[MLVM_MM_MR], c1[MLVM_MM_MR];
    const mlvm_index_t a_rs = x->a_rs, a_cs = x->a_cs, b_rs = x->b_rs;
    mlvm_index_t kk;
    int r;
    for (r = 0; r < mr; ++r) {
        c0[r] = _mm256_setzero_ps();
        c1[r] = _mm256_setzero_ps();
        /* The partial sums this tile adds to were stored a slice ago, the
         * whole column block since (past L2 in a large product): fetched
         * now, they are in L1 by the end (a 1024^3 product 0.9x the time
         * on a Zen 3 core). Its first and last columns' lines. */
        if (x->accumulate) {
            _mm_prefetch((const char *)(c + r * x->c_rs), _MM_HINT_T0);
            _mm_prefetch((const char *)(c + r * x->c_rs + (full ? MLVM_MM_NR - 1 : wide ? 8 : 0)),
                         _MM_HINT_T0);
        }
    }
    /* Four steps a loop (the tile's 27 instructions a step were one loop
     * that ran 5-15 % slower or faster by where it fell against 32- and
     * 64-byte lines: on a Zen 3 core, OpenBLAS's sgemm taking turns in the
     * same process, 512^3 1.12x -> 1.08x its time, mean of three loop
     * alignments; 1024 x 256 x 1024 1.08x -> 1.05x; the slab packed sliver
     * by sliver in both). */
    MLVM_UNROLL4
    for (kk = 0; kk < x->kc; ++kk) {
        const float *bk = off != NULL ? b + off[kk] : b + kk * b_rs;
        const __m256 b0 = full ? _mm256_loadu_ps(bk) : _mm256_maskload_ps(bk, m0);
        const __m256 b1 = !wide ? b0 : full ? _mm256_loadu_ps(bk + 8)
                                            : _mm256_maskload_ps(bk + 8, m1);
        const float *ak = a + kk * a_cs;
        if (pf)
            _mm_prefetch((const char *)(bk + x->pf), _MM_HINT_T0);
        for (r = 0; r < mr; ++r) {
            const __m256 av = _mm256_broadcast_ss(ak + r * a_rs);
            c0[r] = _mm256_fmadd_ps(av, b0, c0[r]);
            if (wide)
                c1[r] = _mm256_fmadd_ps(av, b1, c1[r]);
        }
    }
    for (r = 0; r < mr; ++r) {
        float *cr = c + r * x->c_rs;
        if (x->accumulate) {
            c0[r] = _mm256_add_ps(c0[r], full ? _mm256_loadu_ps(cr) : _mm256_maskload_ps(cr, m0));
            if (wide)
                c1[r] = _mm256_add_ps(c1[r], full ? _mm256_loadu_ps(cr + 8)
                                                  : _mm256_maskload_ps(cr + 8, m1));
        } else if (bias != NULL) {
            c0[r] = _mm256_add_ps(c0[r], _mm256_set1_ps(bias[r]));
            c1[r] = _mm256_add_ps(c1[r], _mm256_set1_ps(bias[r]));
        }
    }
    if (x->col_bias != NULL) {
        const __m256 cb0 = full ? _mm256_loadu_ps(x->col_bias) : _mm256_maskload_ps(x->col_bias, m0);
        const __m256 cb1 = !wide ? cb0 : full ? _mm256_loadu_ps(x->col_bias + 8)
                                              : _mm256_maskload_ps(x->col_bias + 8, m1);
        for (r = 0; r < mr; ++r) {
            c0[r] = _mm256_add_ps(c0[r], cb0);
            c1[r] = _mm256_add_ps(c1[r], cb1);
        }
    }
    /* tested once per tile, as in kern_avx512 */
    if (x->act != NULL && x->act->relu) {
        for (r = 0; r < mr; ++r) {
            c0[r] = _mm256_max_ps(_mm256_setzero_ps(), c0[r]);
            c1[r] = _mm256_max_ps(_mm256_setzero_ps(), c1[r]);
        }
    } else if (x->act != NULL) {
        const __m256 lo = _mm256_set1_ps(x->act->lo), hi = _mm256_set1_ps(x->act->hi);
        for (r = 0; r < mr; ++r) {
            c0[r] = bounds_avx2(lo, hi, c0[r]);
            c1[r] = bounds_avx2(lo, hi, c1[r]);
        }
    }
    for (r = 0; r < mr; ++r) {
        float *cr = c + r * x->c_rs;
        if (full) {
            _mm256_storeu_ps(cr, c0[r]);
            _mm256_storeu_ps(cr + 8, c1[r]);
        } else {
            _mm256_maskstore_ps(cr, m0, c0[r]);
            if (wide)
                _mm256_maskstore_ps(cr + 8, m1, c1[r]);
        }
    }
}

/* Vectors for the single-row kernels below. */
typedef __m256 mlvm_vf;
#define MLVM_VF_LEN 8
#define MLVM_VF_LOAD _mm256_loadu_ps
#define MLVM_VF_STORE _mm256_storeu_ps
#define MLVM_VF_FMA _mm256_fmadd_ps
#define MLVM_VF_SET1 _mm256_set1_ps
#define MLVM_VF_ZERO _mm256_setzero_ps
#define MLVM_VF_ADD _mm256_add_ps

static __m256i lane_mask(int n)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}

/* One vector of a row's sums into out at cr (mask mv unless whole): the
 * earlier slices' sums or the row's bias, the column bias at cb (or
 * NULL), the clamp. */
MLVM_INLINE void vec_out_avx2(const mm_ctx_t *x, __m256 t, float *cr, const float *cb,
                              const float *bias_r, int whole, __m256i mv)
{
    if (x->accumulate)
        t = _mm256_add_ps(t, whole ? _mm256_loadu_ps(cr) : _mm256_maskload_ps(cr, mv));
    else if (bias_r != NULL)
        t = _mm256_add_ps(t, _mm256_set1_ps(*bias_r));
    if (cb != NULL)
        t = _mm256_add_ps(t, whole ? _mm256_loadu_ps(cb) : _mm256_maskload_ps(cb, mv));
    if (x->act != NULL && x->act->relu)
        t = _mm256_max_ps(_mm256_setzero_ps(), t);
    else if (x->act != NULL)
        t = bounds_avx2(_mm256_set1_ps(x->act->lo), _mm256_set1_ps(x->act->hi), t);
    if (whole)
        _mm256_storeu_ps(cr, t);
    else
        _mm256_maskstore_ps(cr, mv, t);
}

/* A row of kern_avx2_pair's tile: its four vectors (the last two masked
 * unless full2; the fourth only when wide2). Called with constant rows, so
 * that the sums stay in registers (a loop over them kept them in memory). */
MLVM_INLINE void pair_row_out(const mm_ctx_t *x, __m256 t0, __m256 t1, __m256 t2, __m256 t3,
                              float *cr, const float *br, int full2, int wide2, __m256i m0,
                              __m256i m1)
{
    const float *cb = x->col_bias;
    vec_out_avx2(x, t0, cr, cb, br, 1, m0);
    vec_out_avx2(x, t1, cr + 8, cb != NULL ? cb + 8 : NULL, br, 1, m0);
    vec_out_avx2(x, t2, cr + 16, cb != NULL ? cb + 16 : NULL, br, full2, m0);
    if (wide2)
        vec_out_avx2(x, t3, cr + 24, cb != NULL ? cb + 24 : NULL, br, full2, m1);
}

/* The rows left under a whole tile (1 or 2) over two slivers at once: b0's
 * 16 columns (whole), then b1's nr2 (1 .. 16), both b_rs apart, so that
 * the tile has 4 or 8 independent sums, not 2 or 4 waiting on the FMA's
 * latency (8 rows as 6 + 2 over a 1024 x 1024 product: the 2-row tile
 * took two thirds of the 6-row one's time; paired, 0.86x the product's
 * time on a Zen 3 core). The same sums in the same order as two tiles of
 * 16 columns (the same bits). */
MLVM_INLINE void kern_avx2_pair(const mm_ctx_t *x, int mr, int full2, int wide2, const float *a,
                                const float *b0, const float *b1, float *c, const float *bias,
                                __m256i m0, __m256i m1)
{
    __m256 s0[2], s1[2], s2[2], s3[2];
    const mlvm_index_t a_rs = x->a_rs, a_cs = x->a_cs, b_rs = x->b_rs;
    mlvm_index_t kk;
    int r;
    for (r = 0; r < mr; ++r)
        s0[r] = s1[r] = s2[r] = s3[r] = _mm256_setzero_ps();
    /* as kern_avx2's (weights in panels, against one step a loop, mean of
     * three loop alignments: 8 x 1024 x 1024 0.93x the time, 8 x 256 x 784
     * 0.93x, 2 x 1024 x 1024 0.85x) */
    MLVM_UNROLL4
    for (kk = 0; kk < x->kc; ++kk) {
        const float *k0 = b0 + kk * b_rs, *k1 = b1 + kk * b_rs, *ak = a + kk * a_cs;
        const __m256 v0 = _mm256_loadu_ps(k0), v1 = _mm256_loadu_ps(k0 + 8);
        const __m256 v2 = full2 ? _mm256_loadu_ps(k1) : _mm256_maskload_ps(k1, m0);
        const __m256 v3 = !wide2 ? v2 : full2 ? _mm256_loadu_ps(k1 + 8)
                                              : _mm256_maskload_ps(k1 + 8, m1);
        for (r = 0; r < mr; ++r) {
            const __m256 av = _mm256_broadcast_ss(ak + r * a_rs);
            s0[r] = _mm256_fmadd_ps(av, v0, s0[r]);
            s1[r] = _mm256_fmadd_ps(av, v1, s1[r]);
            s2[r] = _mm256_fmadd_ps(av, v2, s2[r]);
            if (wide2)
                s3[r] = _mm256_fmadd_ps(av, v3, s3[r]);
        }
    }
    pair_row_out(x, s0[0], s1[0], s2[0], s3[0], c, bias, full2, wide2, m0, m1);
    if (mr == 2)
        pair_row_out(x, s0[1], s1[1], s2[1], s3[1], c + x->c_rs, bias != NULL ? bias + 1 : NULL,
                     full2, wide2, m0, m1);
}

/* kern_avx2_pair for 1 or 2 rows; nr2: the second sliver's columns */
MLVM_INLINE void micro_pair(const mm_ctx_t *x, int mr, int nr2, const float *a, const float *b0,
                            const float *b1, float *c, const float *bias)
{
    const __m256i m0 = lane_mask(nr2), m1 = lane_mask(nr2 - 8);
    if (nr2 == MLVM_MM_NR) {
        if (mr == 2)
            kern_avx2_pair(x, 2, 1, 1, a, b0, b1, c, bias, m0, m1);
        else
            kern_avx2_pair(x, 1, 1, 1, a, b0, b1, c, bias, m0, m1);
    } else if (nr2 > 8) {
        if (mr == 2)
            kern_avx2_pair(x, 2, 0, 1, a, b0, b1, c, bias, m0, m1);
        else
            kern_avx2_pair(x, 1, 0, 1, a, b0, b1, c, bias, m0, m1);
    } else if (mr == 2) {
        kern_avx2_pair(x, 2, 0, 0, a, b0, b1, c, bias, m0, m1);
    } else {
        kern_avx2_pair(x, 1, 0, 0, a, b0, b1, c, bias, m0, m1);
    }
}

/* One instance per row count 1 .. 6: whole slivers (full) with plain
 * loads and stores, the ragged ones masked with one vector or both; whole
 * slivers also prefetching the next (pf) */
#define MLVM_MM_ROWS(full, wide, pf)                                                              \
    case 6: kern_avx2(x, 6, full, wide, pf, off, a, b, c, bias, m0, m1); break;                  \
    case 5: kern_avx2(x, 5, full, wide, pf, off, a, b, c, bias, m0, m1); break;                  \
    case 4: kern_avx2(x, 4, full, wide, pf, off, a, b, c, bias, m0, m1); break;                  \
    case 3: kern_avx2(x, 3, full, wide, pf, off, a, b, c, bias, m0, m1); break;                  \
    case 2: kern_avx2(x, 2, full, wide, pf, off, a, b, c, bias, m0, m1); break;                  \
    default: kern_avx2(x, 1, full, wide, pf, off, a, b, c, bias, m0, m1); break;

/* The tile kernel for mr rows, with b's rows at off (or NULL: b_rs apart). */
MLVM_INLINE void micro_mr(const mm_ctx_t *x, int mr, int nr, const mlvm_index_t *off,
                          const float *a, const float *b, float *c, const float *bias)
{
    const __m256i m0 = lane_mask(nr), m1 = lane_mask(nr - 8);
    if (nr == MLVM_MM_NR && x->pf != 0 && off == NULL) {
        switch (mr) {
            MLVM_MM_ROWS(1, 1, 1)
        }
        return;
    }
    if (nr == MLVM_MM_NR) {
        switch (mr) {
            MLVM_MM_ROWS(1, 1, 0)
        }
        return;
    }
    if (nr <= 8) {
        switch (mr) {
            MLVM_MM_ROWS(0, 0, 0)
        }
        return;
    }
    switch (mr) {
        MLVM_MM_ROWS(0, 1, 0)
    }
}

MLVM_INLINE void micro(const mm_ctx_t *x, const mlvm_index_t *off, int mr, int nr,
                       const float *a, const float *b, float *c, const float *bias)
{
    micro_mr(x, mr, nr, off, a, b, c, bias);
}

#elif MLVM_MM_NR == 4 && MLVM_MM_MR == 4 /* scalar C99 */

/* Per step four values of b (a packed sliver, or a row read in place at
 * off, full slivers only) and one of each row of a: sixteen products into
 * sixteen named sums, which compilers keep in registers (an array of them
 * they keep in memory: three times the instructions on a Cortex-M4), fused
 * multiply-adds where the FPU has them (VFMA on a Cortex-M4F). Rows past
 * mr read row 0 again; their sums are never stored. */
#define MLVM_MM_SCALAR 1

#ifdef MLVM_FPU_VLDM /* (vfp.h) */
/* The 4 x 4 tile's sums over `pairs` pairs of steps into t[4 r + j]: per
 * pair two rows of b (at b + off[kk], or b_step bytes apart) and two
 * elements of each row of a (contiguous in k) by six VLDMs, then the
 * thirty-two VFMAs, step kk before kk + 1: the sums MLVM_MADD_4X4 makes.
 * The assembly takes its operands from one block in memory into registers
 * it names and clobbers (r0-r6, r8): with each operand a register of the
 * compiler's choice, gcc found none left for them where micro is inlined
 * and r7 is kept as the frame pointer (-fno-omit-frame-pointer). With
 * position-independent code as well (r9 kept too) it is not inlined. */
typedef struct tile4_args {
    const float *a0, *a1, *a2, *a3, *b; /* r0-r4, by one LDM */
    const void *off_or_step;            /* r5: off, or b_step in bytes */
    mlvm_index_t pairs;                 /* r6 */
    float *t;
} tile4_args_t;

#if defined(__PIC__)
MLVM_NOINLINE
#endif
static void tile4_vldm(const float *a0, const float *a1, const float *a2, const float *a3,
                       const float *b, const mlvm_index_t *off, mlvm_index_t b_step,
                       mlvm_index_t pairs, float *t)
{
#define MLVM_TILE_FMAS                                                                            \
    "vldmia r0!, {s24-s25}\n\tvldmia r1!, {s26-s27}\n\t"                                        \
    "vldmia r2!, {s28-s29}\n\tvldmia r3!, {s30-s31}\n\t"                                        \
    "vfma.f32 s0, s24, s16\n\tvfma.f32 s1, s24, s17\n\tvfma.f32 s2, s24, s18\n\t"                \
    "vfma.f32 s3, s24, s19\n\tvfma.f32 s4, s26, s16\n\tvfma.f32 s5, s26, s17\n\t"                \
    "vfma.f32 s6, s26, s18\n\tvfma.f32 s7, s26, s19\n\tvfma.f32 s8, s28, s16\n\t"                \
    "vfma.f32 s9, s28, s17\n\tvfma.f32 s10, s28, s18\n\tvfma.f32 s11, s28, s19\n\t"              \
    "vfma.f32 s12, s30, s16\n\tvfma.f32 s13, s30, s17\n\tvfma.f32 s14, s30, s18\n\t"             \
    "vfma.f32 s15, s30, s19\n\t"                                                                \
    "vfma.f32 s0, s25, s20\n\tvfma.f32 s1, s25, s21\n\tvfma.f32 s2, s25, s22\n\t"                \
    "vfma.f32 s3, s25, s23\n\tvfma.f32 s4, s27, s20\n\tvfma.f32 s5, s27, s21\n\t"                \
    "vfma.f32 s6, s27, s22\n\tvfma.f32 s7, s27, s23\n\tvfma.f32 s8, s29, s20\n\t"                \
    "vfma.f32 s9, s29, s21\n\tvfma.f32 s10, s29, s22\n\tvfma.f32 s11, s29, s23\n\t"              \
    "vfma.f32 s12, s31, s20\n\tvfma.f32 s13, s31, s21\n\tvfma.f32 s14, s31, s22\n\t"             \
    "vfma.f32 s15, s31, s23\n\t"                                                                \
    "subs r6, r6, #1\n\t"                                                                         \
    "bne 1b\n\t"                                                                                  \
    "ldr r8, [%[g], %[ot]]\n\t"                                                                   \
    "vstmia r8, {s0-s15}"
/* the arguments into r0-r6, the sums to zero (r8 = 0) */
#define MLVM_TILE_START                                                                           \
    "ldmia %[g], {r0, r1, r2, r3, r4, r5, r6}\n\tmov r8, #0\n\t" MLVM_ZERO_16_R("r8")
#define MLVM_TILE_CLOBBERS                                                                        \
    "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r8", "s0", "s1", "s2", "s3", "s4", "s5", "s6",      \
        "s7", "s8", "s9", "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19",     \
        "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31",         \
        "memory", "cc"
    tile4_args_t g;
    g.a0 = a0, g.a1 = a1, g.a2 = a2, g.a3 = a3, g.b = b, g.pairs = pairs, g.t = t;
    if (off != NULL) {
        g.off_or_step = off;
        __asm__ volatile(MLVM_TILE_START "1:\n\t"
                         "ldr r8, [r5], #4\n\t"
                         "add r8, r4, r8, lsl #2\n\t"
                         "vldmia r8, {s16-s19}\n\t"
                         "ldr r8, [r5], #4\n\t"
                         "add r8, r4, r8, lsl #2\n\t"
                         "vldmia r8, {s20-s23}\n\t" MLVM_TILE_FMAS
                         :
                         : [g] "r"(&g), "m"(g), [ot] "i"(offsetof(tile4_args_t, t))
                         : MLVM_TILE_CLOBBERS);
    } else {
        g.off_or_step = (const void *)(uintptr_t)(size_t)b_step;
        __asm__ volatile(MLVM_TILE_START "1:\n\t"
                         "add r8, r4, r5\n\t"
                         "vldmia r4, {s16-s19}\n\t"
                         "vldmia r8, {s20-s23}\n\t"
                         "add r4, r8, r5\n\t" MLVM_TILE_FMAS
                         :
                         : [g] "r"(&g), "m"(g), [ot] "i"(offsetof(tile4_args_t, t))
                         : MLVM_TILE_CLOBBERS);
    }
#undef MLVM_TILE_FMAS
#undef MLVM_TILE_START
#undef MLVM_TILE_CLOBBERS
}
#endif

static void micro(const mm_ctx_t *x, const mlvm_index_t *off, int mr, int nr, const float *a,
                  const float *b, float *c, const float *bias)
{
    const mlvm_index_t a_cs = x->a_cs, b_rs = x->b_rs, kc = x->kc;
    const float *a0 = a, *a1 = mr > 1 ? a + x->a_rs : a, *a2 = mr > 2 ? a + 2 * x->a_rs : a;
    const float *a3 = mr > 3 ? a + 3 * x->a_rs : a;
    MLVM_SUMS_4X4;
    mlvm_index_t kk = 0;
    int r, j;
#ifdef MLVM_FPU_VLDM
    if (a_cs == 1 && kc >= 2) { /* pairs of steps by VLDM; an odd last one below */
        float t[16];
        tile4_vldm(a0, a1, a2, a3, b, off, b_rs * (mlvm_index_t)sizeof *b, kc / 2, t);
        if (mr == 4 && nr == 4 && (kc & 1) == 0) {
            /* a whole tile and no odd step: t straight to the rows (not
             * through the named sums and the general store's loops, which
             * keep a copy of them in memory) */
            for (r = 0; r < 4; ++r) {
                float *cr = c + r * x->c_rs;
                const float *tr = t + 4 * r;
                if (x->accumulate)
                    cr[0] += tr[0], cr[1] += tr[1], cr[2] += tr[2], cr[3] += tr[3];
                else if (bias != NULL)
                    cr[0] = tr[0] + bias[r], cr[1] = tr[1] + bias[r], cr[2] = tr[2] + bias[r],
                    cr[3] = tr[3] + bias[r];
                else
                    cr[0] = tr[0], cr[1] = tr[1], cr[2] = tr[2], cr[3] = tr[3];
            }
            return;
        }
        c00 = t[0], c01 = t[1], c02 = t[2], c03 = t[3], c10 = t[4], c11 = t[5], c12 = t[6];
        c13 = t[7], c20 = t[8], c21 = t[9], c22 = t[10], c23 = t[11], c30 = t[12], c31 = t[13];
        c32 = t[14], c33 = t[15];
        kk = kc & ~(mlvm_index_t)1;
    }
#endif
    /* two loops, so that the step does not test off (-O2 does not
     * unswitch loops) */
#define MLVM_MM_STEP(bk)                                                                  \
    do {                                                                                  \
        const float b0 = (bk)[0], b1 = (bk)[1], b2 = (bk)[2], b3 = (bk)[3];               \
        const float x0 = a0[kk * a_cs], x1 = a1[kk * a_cs], x2 = a2[kk * a_cs];           \
        const float x3 = a3[kk * a_cs];                                                   \
        MLVM_MADD_4X4(x0, x1, x2, x3, b0, b1, b2, b3);                                    \
    } while (0)
    if (off != NULL)
        for (; kk < kc; ++kk)
            MLVM_MM_STEP(b + off[kk]);
    else
        for (; kk < kc; ++kk)
            MLVM_MM_STEP(b + kk * b_rs);
#undef MLVM_MM_STEP
    {
        const float t[4][4] = {{c00, c01, c02, c03}, {c10, c11, c12, c13},
                               {c20, c21, c22, c23}, {c30, c31, c32, c33}};
        for (r = 0; r < mr && r < 4; ++r) {
            float *cr = c + r * x->c_rs;
            if (x->accumulate)
                for (j = 0; j < nr && j < 4; ++j)
                    cr[j] += t[r][j];
            else if (bias != NULL)
                for (j = 0; j < nr && j < 4; ++j)
                    cr[j] = t[r][j] + bias[r];
            else
                for (j = 0; j < nr && j < 4; ++j)
                    cr[j] = t[r][j];
        }
    }
}

#else /* portable C99 */

/* b is always a packed or panel-stored, zero-padded sliver here (b_rs ==
 * MLVM_MM_NR or the panel width; off is NULL). */
static void micro(const mm_ctx_t *x, const mlvm_index_t *off, int mr, int nr, const float *a,
                  const float *b, float *c, const float *bias)
{
    float t[MLVM_MM_MR][MLVM_MM_NR];
    mlvm_index_t kk;
    int r, j;
    (void)off;
    memset(t, 0, sizeof t);
    for (kk = 0; kk < x->kc; ++kk) {
        const float *bk = b + kk * x->b_rs;
        const float *ak = a + kk * x->a_cs;
        for (r = 0; r < MLVM_MM_MR; ++r) {
            const float av = r < mr ? ak[r * x->a_rs] : 0.0f;
            for (j = 0; j < MLVM_MM_NR; ++j)
                t[r][j] += av * bk[j];
        }
    }
    for (r = 0; r < mr && r < MLVM_MM_MR; ++r) {
        float *cr = c + r * x->c_rs;
        if (x->accumulate)
            for (j = 0; j < nr && j < MLVM_MM_NR; ++j)
                cr[j] += t[r][j];
        else if (bias != NULL)
            for (j = 0; j < nr && j < MLVM_MM_NR; ++j)
                cr[j] = t[r][j] + bias[r];
        else
            for (j = 0; j < nr && j < MLVM_MM_NR; ++j)
                cr[j] = t[r][j];
        for (j = 0; x->col_bias != NULL && j < nr && j < MLVM_MM_NR; ++j)
            cr[j] += x->col_bias[j];
        for (j = 0; x->act != NULL && j < nr && j < MLVM_MM_NR; ++j)
            cr[j] = act_scalar(x->act, cr[j]);
    }
}

#endif

/* b(k0 .. k0+kc, j0 .. j0+nr) into buf, kc rows of MLVM_MM_NR floats,
 * zero-padded on the right. */
static void pack_sliver(mlvm_index_t kc, int nr, const float *b, mlvm_index_t b_rs,
                        mlvm_index_t b_cs, float *buf)
{
    mlvm_index_t kk;
    int j;
    if (b_rs == 1) { /* transposed b: column j is contiguous in k */
        if (nr < MLVM_MM_NR)
            memset(buf, 0, (size_t)kc * MLVM_MM_NR * sizeof *buf);
        for (j = 0; j < nr; ++j) {
            const float *col = b + j * b_cs;
            for (kk = 0; kk < kc; ++kk)
                buf[kk * MLVM_MM_NR + j] = col[kk];
        }
        return;
    }
    for (kk = 0; kk < kc; ++kk) {
        const float *row = b + kk * b_rs;
        float *o = buf + kk * MLVM_MM_NR;
        for (j = 0; j < nr; ++j)
            o[j] = row[j * b_cs];
        for (; j < MLVM_MM_NR; ++j)
            o[j] = 0.0f;
    }
}

/* b(k0 .. k0+kc, j0 .. j0+cols) with contiguous rows into the slab as
 * pack_sliver would (slivers side by side, kc x MLVM_MM_NR each, the last
 * zero-padded), but a row of b at a time: b's rows stream in order, where
 * sliver by sliver each step was a line of its own, a row apart (on a
 * Zen 3 core 512^3 1.09x -> 1.04x OpenBLAS's time, 1024^3 1.15x -> 1.11x,
 * the tile's loop unrolled in both). Every path. */
MLVM_NOINLINE static void pack_slab(mlvm_index_t kc, mlvm_index_t cols, const float *b,
                                    mlvm_index_t b_rs, float *slab)
{
    const mlvm_index_t whole = cols / MLVM_MM_NR * MLVM_MM_NR;
    mlvm_index_t kk, j;
    for (kk = 0; kk < kc; ++kk) {
        const float *row = b + kk * b_rs;
        float *o = slab + kk * MLVM_MM_NR;
        for (j = 0; j < whole; j += MLVM_MM_NR)
            memcpy(o + j * kc, row + j, MLVM_MM_NR * sizeof *o);
        if (whole < cols) {
            o += whole * kc;
            for (j = whole; j < cols; ++j)
                o[j - whole] = row[j];
            for (; j < whole + MLVM_MM_NR; ++j)
                o[j - whole] = 0.0f;
        }
    }
}

/* Where column j of b starts (row 0), whether b has strides or panels. */
static const float *column_at(const mlvm_gemm_t *g, mlvm_index_t j)
{
    const mlvm_index_t w = g->b_panel;
    return w != 0 ? g->b + (j / w) * g->k * w + j % w : g->b + j * g->b_cs;
}

/* Where a's rows i .. and contraction k0 .. start: by its strides, or in
 * its panel (kernels_nn.h), whose rows are then 1 and columns
 * MLVM_CONV_A_PANEL apart (a tile never crosses a panel or a slice). The
 * GEMM reading b at row offsets (by_off) never has panels. */
static const float *a_at(const mlvm_gemm_t *g, int by_off, mlvm_index_t i, mlvm_index_t k0)
{
    if (by_off || g->a_panel == 0)
        return g->a + i * g->a_rs + k0 * g->a_cs;
    return g->a + mlvm_conv2d_a_panel_index(i, k0, g->m, g->k);
}

/* Outputs the tile kernels did not store (an empty contraction, the
 * single-row kernels): the gemm's column bias, clamp, then epilogue. */
static void finish(const mlvm_gemm_t *g, mlvm_index_t i0, mlvm_index_t rows, mlvm_index_t j0,
                   mlvm_index_t cols)
{
    float *tile = g->out + i0 * g->c_rs + j0;
    if (g->col_bias != NULL) {
        const mlvm_bias_t b = {g->col_bias, -HUGE_VALF};
        mlvm_epilogue_bias_f32(&b, i0, rows, j0, cols, tile, g->c_rs);
    }
    if (g->act != NULL)
        mlvm_epilogue_clamp_f32(g->act, i0, rows, j0, cols, tile, g->c_rs);
    if (g->epilogue != NULL)
        g->epilogue(g->epilogue_ctx, i0, rows, j0, cols, tile, g->c_rs);
}

#ifdef MLVM_VF_LEN
#define MLVM_HAVE_GEMV 1
/* A single row times b with contiguous rows, over its first nv columns (a
 * multiple of two vectors): b's rows streamed whole, four at a time, into
 * out, which stays in L1 (chunks of MLVM_GEMV_CHUNK columns). Four
 * sequential streams the prefetchers follow; column blocks held in
 * registers read 256 bytes of each row, rows 4 KiB apart, and ran at 0.6x
 * the speed with AVX2 on 1024 x 1024. Each output sums its terms in order,
 * one fused multiply-add each, from zero. pf: each group of four rows
 * prefetches the next group's lines as it reads its own (AVX2, where k nv
 * is MLVM_GEMV_PF_KN or more: the MLP's 784 x 256 and 256 x 256 at batch
 * 1, whose weights come from past L2 between calls, from C 0.93-0.95x
 * the time on a Zen 3, mean of three loop alignments, old and new in one
 * process; a 64 x 256 b, in L2, took longer with it; rows of 2,048
 * columns or more, the next group a whole L1 ahead, not measured). */
#define MLVM_GEMV_CHUNK 2048
#define MLVM_GEMV_PF_KN (256 * 256)
#define MLVM_VF_ROW4(j)                                                                           \
    MLVM_VF_FMA(a3, MLVM_VF_LOAD(b3 + (j)),                                                       \
                MLVM_VF_FMA(a2, MLVM_VF_LOAD(b2 + (j)),                                           \
                            MLVM_VF_FMA(a1, MLVM_VF_LOAD(b1 + (j)),                               \
                                        MLVM_VF_FMA(a0, MLVM_VF_LOAD(b0 + (j)),                   \
                                                    MLVM_VF_LOAD(y + (j))))))
static void gemv(mlvm_index_t nv, mlvm_index_t k, const float *a, mlvm_index_t a_cs,
                 const float *b, mlvm_index_t b_rs, float *out, int pf)
{
    mlvm_index_t j0, kk, j;
    for (j0 = 0; j0 < nv; j0 += MLVM_GEMV_CHUNK) {
        const mlvm_index_t nc = nv - j0 < MLVM_GEMV_CHUNK ? nv - j0 : MLVM_GEMV_CHUNK;
        float *y = out + j0;
        memset(y, 0, (size_t)nc * sizeof *y);
        for (kk = 0; kk + 4 <= k; kk += 4) {
            const float *b0 = b + kk * b_rs + j0, *b1 = b0 + b_rs, *b2 = b1 + b_rs, *b3 = b2 + b_rs;
            const mlvm_vf a0 = MLVM_VF_SET1(a[kk * a_cs]), a1 = MLVM_VF_SET1(a[(kk + 1) * a_cs]);
            const mlvm_vf a2 = MLVM_VF_SET1(a[(kk + 2) * a_cs]), a3 = MLVM_VF_SET1(a[(kk + 3) * a_cs]);
            /* the next four rows, where there are four more and pf */
            const float *nx = pf && kk + 8 <= k ? b3 + b_rs : NULL;
            for (j = 0; j < nc; j += 2 * MLVM_VF_LEN) {
                const mlvm_vf s = MLVM_VF_ROW4(j), t = MLVM_VF_ROW4(j + MLVM_VF_LEN);
                if (nx != NULL) { /* (AVX2: j's step is 64 bytes of each row) */
                    _mm_prefetch((const char *)(nx + j), _MM_HINT_T0);
                    _mm_prefetch((const char *)(nx + b_rs + j), _MM_HINT_T0);
                    _mm_prefetch((const char *)(nx + 2 * b_rs + j), _MM_HINT_T0);
                    _mm_prefetch((const char *)(nx + 3 * b_rs + j), _MM_HINT_T0);
                }
                MLVM_VF_STORE(y + j, s);
                MLVM_VF_STORE(y + j + MLVM_VF_LEN, t);
            }
        }
        for (; kk < k; ++kk) {
            const float *b0 = b + kk * b_rs + j0;
            const mlvm_vf a0 = MLVM_VF_SET1(a[kk * a_cs]);
            for (j = 0; j < nc; j += MLVM_VF_LEN)
                MLVM_VF_STORE(y + j, MLVM_VF_FMA(a0, MLVM_VF_LOAD(b0 + j), MLVM_VF_LOAD(y + j)));
        }
    }
}
#undef MLVM_VF_ROW4

#ifdef MLVM_MM_AVX2
#define MLVM_HAVE_GEMV_PANELS 1
/* A single row times b in panels of 32 columns (the first np panels), one
 * panel at a time, a contiguous stream: eight vectors of sums, the
 * panel's even and odd rows of b apart (as the AVX-512 one-row tile keeps
 * partial sums), added at the end. The 6 x 16 tile's one row had two
 * chains of sums, bound by the latency of the multiply-adds (1.6x slower
 * on a 1024 x 1024 Linear layer). AVX-512 keeps its one-row tile, which
 * reads a panel's slices in the same order and ran faster than this. */
#define MLVM_GEMV_VPP (32 / MLVM_VF_LEN)
static void gemv_panels(mlvm_index_t np, mlvm_index_t k, const float *a, mlvm_index_t a_cs,
                        const float *b, float *out)
{
    mlvm_index_t p, kk;
    int v;
    for (p = 0; p < np; ++p) {
        const float *bp = b + p * k * 32;
        mlvm_vf e[MLVM_GEMV_VPP], o[MLVM_GEMV_VPP];
        for (v = 0; v < MLVM_GEMV_VPP; ++v)
            e[v] = o[v] = MLVM_VF_ZERO();
        for (kk = 0; kk + 2 <= k; kk += 2) {
            const mlvm_vf ae = MLVM_VF_SET1(a[kk * a_cs]), ao = MLVM_VF_SET1(a[(kk + 1) * a_cs]);
            for (v = 0; v < MLVM_GEMV_VPP; ++v) {
                e[v] = MLVM_VF_FMA(ae, MLVM_VF_LOAD(bp + kk * 32 + v * MLVM_VF_LEN), e[v]);
                o[v] = MLVM_VF_FMA(ao, MLVM_VF_LOAD(bp + (kk + 1) * 32 + v * MLVM_VF_LEN), o[v]);
            }
        }
        if (kk < k) {
            const mlvm_vf ae = MLVM_VF_SET1(a[kk * a_cs]);
            for (v = 0; v < MLVM_GEMV_VPP; ++v)
                e[v] = MLVM_VF_FMA(ae, MLVM_VF_LOAD(bp + kk * 32 + v * MLVM_VF_LEN), e[v]);
        }
        for (v = 0; v < MLVM_GEMV_VPP; ++v)
            MLVM_VF_STORE(out + p * 32 + v * MLVM_VF_LEN, MLVM_VF_ADD(e[v], o[v]));
    }
}
#endif
#endif

/* Rows of b at offsets: the portable kernel reads packed slivers only. */
static void pack_rows_at(mlvm_index_t kc, int nr, const float *b, const mlvm_index_t *off,
                         float *buf)
{
    mlvm_index_t kk;
    int j;
    for (kk = 0; kk < kc; ++kk) {
        const float *row = b + off[kk];
        float *o = buf + kk * MLVM_MM_NR;
        for (j = 0; j < nr; ++j)
            o[j] = row[j];
        for (; j < MLVM_MM_NR; ++j)
            o[j] = 0.0f;
    }
}

#ifdef MLVM_SCALAR_CORE
#define MLVM_HAVE_ROW 1

#ifdef MLVM_FPU_VLDM
#define MLVM_ROW_VLDM 1
/* out[0 .. 16) = sum over p < k (k >= 1) of a[p] * b[p][0 .. 16), a's
 * elements a_step bytes apart, b's rows b_step: per step one VLDR of a, one
 * VLDM per eight b values and a VFMA per output, the sums in s0-s15 (one
 * rounding per term, in p order: MLVM_MADD's sums). gcc does not merge
 * separate loads into a VLDM: 22 instructions per 16 multiply-adds instead
 * of 35. The memory the loop reads and writes is named by operands (arrays
 * of unknown size from a and b), not a "memory" clobber, which made gcc
 * reload every field of the caller's matmul after each block. */
#define MLVM_FMA8(a, b, c, d, e, f, g, h)                                                          \
    "vldmia %[b]!, {s16-s23}\n\tvfma.f32 s" #a ", s24, s16\n\tvfma.f32 s" #b ", s24, s17\n\t"   \
    "vfma.f32 s" #c ", s24, s18\n\tvfma.f32 s" #d ", s24, s19\n\tvfma.f32 s" #e ", s24, s20\n\t"  \
    "vfma.f32 s" #f ", s24, s21\n\tvfma.f32 s" #g ", s24, s22\n\tvfma.f32 s" #h ", s24, s23\n\t"
static void row16_vldm(const float *a, mlvm_index_t a_step, const float *b, mlvm_index_t b_step,
                       mlvm_index_t k, float *out)
{
    const mlvm_index_t b_rest = b_step - 16 * 4; /* the VLDMs advanced b */
    const int32_t zero = 0;
    __asm__ volatile(MLVM_ZERO_16 "1:\n\tvldr s24, [%[a]]\n\t" MLVM_FMA8(0, 1, 2, 3, 4, 5, 6, 7)
                     MLVM_FMA8(8, 9, 10, 11, 12, 13, 14, 15) "add %[a], %[a], %[as]\n\t"
                     "add %[b], %[b], %[bs]\n\tsubs %[k], %[k], #1\n\tbne 1b\n\t"
                     "vstmia %[o], {s0-s15}"
                     : [a] "+r"(a), [b] "+r"(b), [k] "+r"(k), "=m"(*(float(*)[16])out)
                     : [as] "r"(a_step), [bs] "r"(b_rest), [o] "r"(out), [z] "r"(zero),
                       "m"(*(const float(*)[])a), "m"(*(const float(*)[])b)
                     : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",
                       "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19", "s20", "s21", "s22",
                       "s23", "s24", "cc");
}
#undef MLVM_FMA8
/* out[0 .. 4) likewise (k >= 1): one VLDR of a, one VLDM of four b values
 * and four VFMAs per step, 10 instructions per 4 multiply-adds where the
 * outputs one by one take 7 per multiply-add (a dense layer of ten
 * classes, as most classifiers end). */
static void row4_vldm(const float *a, mlvm_index_t a_step, const float *b, mlvm_index_t b_step,
                      mlvm_index_t k, float *out)
{
    const int32_t zero = 0;
    __asm__ volatile(MLVM_ZERO_D(0, 1) "1:\n\tvldr s24, [%[a]]\n\tvldmia %[b], {s16-s19}\n\t"
                     "vfma.f32 s0, s24, s16\n\tvfma.f32 s1, s24, s17\n\t"
                     "vfma.f32 s2, s24, s18\n\tvfma.f32 s3, s24, s19\n\t"
                     "add %[a], %[a], %[as]\n\tadd %[b], %[b], %[bs]\n\tsubs %[k], %[k], #1\n\tbne 1b\n\t"
                     "vstmia %[o], {s0-s3}"
                     : [a] "+r"(a), [b] "+r"(b), [k] "+r"(k), "=m"(*(float(*)[4])out)
                     : [as] "r"(a_step), [bs] "r"(b_step), [o] "r"(out), [z] "r"(zero),
                       "m"(*(const float(*)[])a), "m"(*(const float(*)[])b)
                     : "s0", "s1", "s2", "s3", "s16", "s17", "s18", "s19", "s24", "cc");
}
/* *out = sum over p < k (k >= 0) of a[p] * b[p][0], in p order: the
 * same addressing as row16_vldm's, in less code than gcc makes of the C. */
static void row1_vldm(const float *a, mlvm_index_t a_step, const float *b, mlvm_index_t b_step,
                      mlvm_index_t k, float *out)
{
    const int32_t zero = 0;
    __asm__ volatile("vmov s0, %[z]\n\tcmp %[k], #0\n\tbeq 2f\n"
                     "1:\n\tvldr s24, [%[a]]\n\tvldr s16, [%[b]]\n\tvfma.f32 s0, s24, s16\n\t"
                     "add %[a], %[a], %[as]\n\tadd %[b], %[b], %[bs]\n\tsubs %[k], %[k], #1\n\tbne 1b\n"
                     "2:\n\tvstr s0, [%[o]]"
                     : [a] "+r"(a), [b] "+r"(b), [k] "+r"(k), "=m"(*out)
                     : [as] "r"(a_step), [bs] "r"(b_step), [o] "r"(out), [z] "r"(zero),
                       "m"(*(const float(*)[])a), "m"(*(const float(*)[])b)
                     : "s0", "s16", "s24", "cc");
}
#endif

#ifndef MLVM_ROW_VLDM
/* One output of the single row: its terms summed in order. */
static float one_column(const float *a, mlvm_index_t a_cs, const float *b, mlvm_index_t b_rs,
                        mlvm_index_t k)
{
    float s = 0.0f;
    mlvm_index_t p;
    for (p = 0; p < k; ++p)
        MLVM_MADD(s, a[p * a_cs], b[p * b_rs]);
    return s;
}
#endif

/* Column j of b, for the single-row kernels below: column_at's formula
 * over a matmul's fields. One helper taking the fields as arguments cost
 * the Cortex-M row kernel 18 bytes (gcc then loads both k and b_cs before
 * the loop). */
static const float *row_column(const mlvm_matmul_t *p, const float *b, mlvm_index_t j)
{
    const mlvm_index_t w = p->b_panel;
    return w != 0 ? b + (j / w) * p->k * w + j % w : b + j * p->b_cs;
}

/* out[0 .. n) = the single row a times b on a core without vectors
 * (Cortex-M): b is read in place, sixteen outputs per pass held in FPU
 * registers while the contraction streams down b's rows (no packing, no
 * tile of zero rows; one load of a per sixteen multiply-adds), then (without
 * VLDM) eight, four, one. With VLDM the last n % 16 go one by one: an
 * eight-wide copy of the loop cost 110 bytes of flash, a third of the
 * kernel, to save 3 % of the MLP's instructions. `wide` 0 is the entry for
 * modules whose rows are all narrower than 16 (a classifier's last layer,
 * as the 28x28 CNN's ten outputs): four outputs per pass instead (with
 * VLDM the last n % 4 as a block of four ending at n, its first columns
 * again: the same sums, written twice; 10 % of that CNN's instructions),
 * then one by one, and no sixteen-wide code. Blocks never cross a panel
 * (panels are multiples of 32 wide); b's columns must be adjacent, else
 * every output goes alone. Each output sums its terms in order, as the
 * tiled kernel does. */
MLVM_ALWAYS_INLINE void row_passes(const mlvm_matmul_t *p, const float *a, const float *b,
                                   float *out, const int wide)
{
    const mlvm_index_t n = p->n, k = p->k, a_cs = p->a_cs;
    const mlvm_index_t b_rs = p->b_panel != 0 ? p->b_panel : p->b_rs;
    const int blocks = k > 0 && (p->b_cs == 1 || p->b_panel != 0);
#ifdef MLVM_ROW_VLDM
    mlvm_index_t j, w;
    if (wide) {
        for (j = 0; j < n; j += w) {
            const float *c = row_column(p, b, j);
            w = blocks && n - j >= 16 ? 16 : 1;
            if (w == 16)
                row16_vldm(a, a_cs * (mlvm_index_t)sizeof *a, c, b_rs * (mlvm_index_t)sizeof *b, k, out + j);
            else
                row1_vldm(a, a_cs * (mlvm_index_t)sizeof *a, c, b_rs * (mlvm_index_t)sizeof *b, k, out + j);
        }
        return;
    }
    {
        const mlvm_index_t a_step = a_cs * (mlvm_index_t)sizeof *a, b_step = b_rs * (mlvm_index_t)sizeof *b;
        /* (in panels the last block of four might cross one's edge) */
        const int overlap = blocks && n >= 4 && p->b_panel == 0;
        for (j = 0; j < n; j += w) {
            const float *c;
            mlvm_index_t j0 = j;
            w = blocks && (n - j >= 4 || overlap) ? 4 : 1;
            if (n - j < w) /* the block of four ending at n */
                j0 = n - 4;
            c = row_column(p, b, j0);
            if (w == 4)
                row4_vldm(a, a_step, c, b_step, k, out + j0);
            else
                row1_vldm(a, a_step, c, b_step, k, out + j0);
        }
    }
#else
    mlvm_index_t j = 0, q;
    for (; wide && blocks && j + 16 <= n; j += 16) {
        const float *c = row_column(p, b, j);
        float t0 = 0.0f, t1 = 0.0f, t2 = 0.0f, t3 = 0.0f, t4 = 0.0f, t5 = 0.0f, t6 = 0.0f;
        float t7 = 0.0f, t8 = 0.0f, t9 = 0.0f, ta = 0.0f, tb = 0.0f, tc = 0.0f, td = 0.0f;
        float te = 0.0f, tf = 0.0f;
        for (q = 0; q < k; ++q, c += b_rs) {
            const float x = a[q * a_cs];
            MLVM_MADD(t0, x, c[0]), MLVM_MADD(t1, x, c[1]), MLVM_MADD(t2, x, c[2]);
            MLVM_MADD(t3, x, c[3]), MLVM_MADD(t4, x, c[4]), MLVM_MADD(t5, x, c[5]);
            MLVM_MADD(t6, x, c[6]), MLVM_MADD(t7, x, c[7]), MLVM_MADD(t8, x, c[8]);
            MLVM_MADD(t9, x, c[9]), MLVM_MADD(ta, x, c[10]), MLVM_MADD(tb, x, c[11]);
            MLVM_MADD(tc, x, c[12]), MLVM_MADD(td, x, c[13]), MLVM_MADD(te, x, c[14]);
            MLVM_MADD(tf, x, c[15]);
        }
        out[j] = t0, out[j + 1] = t1, out[j + 2] = t2, out[j + 3] = t3, out[j + 4] = t4;
        out[j + 5] = t5, out[j + 6] = t6, out[j + 7] = t7, out[j + 8] = t8, out[j + 9] = t9;
        out[j + 10] = ta, out[j + 11] = tb, out[j + 12] = tc, out[j + 13] = td;
        out[j + 14] = te, out[j + 15] = tf;
    }
    for (; wide && blocks && j + 8 <= n; j += 8) {
        const float *c = row_column(p, b, j);
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
        float s4 = 0.0f, s5 = 0.0f, s6 = 0.0f, s7 = 0.0f;
        for (q = 0; q < k; ++q, c += b_rs) {
            const float x = a[q * a_cs];
            MLVM_MADD(s0, x, c[0]), MLVM_MADD(s1, x, c[1]), MLVM_MADD(s2, x, c[2]);
            MLVM_MADD(s3, x, c[3]), MLVM_MADD(s4, x, c[4]), MLVM_MADD(s5, x, c[5]);
            MLVM_MADD(s6, x, c[6]), MLVM_MADD(s7, x, c[7]);
        }
        out[j] = s0, out[j + 1] = s1, out[j + 2] = s2, out[j + 3] = s3;
        out[j + 4] = s4, out[j + 5] = s5, out[j + 6] = s6, out[j + 7] = s7;
    }
    for (; blocks && j + 4 <= n; j += 4) {
        const float *c = row_column(p, b, j);
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
        for (q = 0; q < k; ++q, c += b_rs) {
            const float x = a[q * a_cs];
            MLVM_MADD(s0, x, c[0]), MLVM_MADD(s1, x, c[1]);
            MLVM_MADD(s2, x, c[2]), MLVM_MADD(s3, x, c[3]);
        }
        out[j] = s0, out[j + 1] = s1, out[j + 2] = s2, out[j + 3] = s3;
    }
    for (; j < n; ++j)
        out[j] = one_column(a, a_cs, row_column(p, b, j), b_rs, k);
#endif
}

/* The two kinds of passes as functions of their own (not inlined: the
 * entries and the gemm share them): a firmware links the kind its
 * module's entries call. */
MLVM_NOINLINE static void row_core(const mlvm_matmul_t *p, const float *a, const float *b, float *out)
{
    row_passes(p, a, b, out, 1);
}

MLVM_NOINLINE static void row_core4(const mlvm_matmul_t *p, const float *a, const float *b, float *out)
{
    row_passes(p, a, b, out, 0);
}

/* The gemm's single row: its fields as a matmul's, then the epilogue. */
static void row_times_matrix(const mlvm_gemm_t *g)
{
    mlvm_matmul_t p;
    p.m = 1, p.n = g->n, p.k = g->k;
    p.a_rs = g->a_rs, p.a_cs = g->a_cs, p.b_rs = g->b_rs, p.b_cs = g->b_cs, p.b_panel = g->b_panel;
    row_core(&p, g->a, g->b, g->out);
    finish(g, 0, 1, 0, g->n);
}
#endif

/* The rows of the next tile, `rest` rows left in the block: whole tiles,
 * then the rest. With AVX2, 8 rows as two tiles of 4 (against 6 + 2, whose
 * 2-row tile waits on the FMA's latency) took 1.2-1.5x the time on a Zen 3
 * core, the weights in L2 or past it. */
static int tile_rows(mlvm_index_t rest)
{
    return (int)(rest < MLVM_MM_MR ? rest : MLVM_MM_MR);
}

/* The blocked product, in functions of their own: the packing buffer is
 * stack only while one runs (the single-row path above needs none). One
 * instance reads b's rows at offsets (by_off, exactly when b_off is set),
 * so that the other paths are not compiled into it; one as the strides say:
 * gcc keeps the kernel's accumulators in registers only when one kernel
 * instance is inlined into one function. */
MLVM_ALWAYS_INLINE void gemm_blocked(const mlvm_gemm_t *g, const int by_off)
{
    float buf[MLVM_MM_KC * MLVM_MM_NR];
    const mlvm_index_t m = g->m, n = g->n, k = g->k;
    mlvm_index_t pc, ic, jc, nc, jr, ir, i, j_first = 0, kc_step, mc_step;
    int mr;
    mm_ctx_t x;
#if defined(MLVM_MM_AVX512) || defined(MLVM_MM_AVX2)
    /* Large b: contiguous slivers spare the TLB and the L1 sets. So do they
     * for a b whose rows are 2, 3, 4 ... KiB apart (a multiple of 1 KiB),
     * whose sliver in place falls into a few L1 sets (b in panels is read
     * in place before this applies): on a Zen 3 core, against
     * OpenBLAS's sgemm in the same process, 64 x 1024 x 64 1.30x -> 0.98x
     * its time, 128 x 1024 x 128 1.45x -> 0.99x, 96 x 768 x 256 1.06x ->
     * 1.02x, 128 x 512 x 128 0.99x -> 0.97x (rows 1 KiB apart, 64 x 256 x
     * 64: 0.91x -> 1.00x, not packed; nor for fewer than 24 rows, which
     * read each sliver too few times: 8 x 1024 x 256 1.40x the time). */
    const int pack = g->pack != NULL || g->b_cs != 1
                     || (!by_off && m >= 4 * MLVM_MM_MR
                         && (k * n >= MLVM_MM_PACK_ABOVE
                             || (g->b_rs % 256 == 0 && g->b_rs >= 512)));
    const int in_place_off = by_off;
#elif defined(MLVM_MM_SCALAR)
    const int pack = 1;
    const int in_place_off = by_off; /* full slivers */
#else
    const int in_place_off = 0;
    const int pack = 1;
#endif
    /* b packed into the caller's slab once per column block and slice,
     * not once per row block (which re-reads b, rows apart, from memory);
     * where that pays, mlvm_matmul_workspace decided */
    const int slab = !by_off && g->b_slab != NULL && g->pack == NULL && g->b_panel == 0;
    if (m == 0 || n == 0)
        return;
    if (k == 0) {
        for (i = 0; i < m; ++i)
            mlvm_fill_f32((size_t)n, g->bias != NULL ? g->bias[i] : 0.0f, g->out + i * g->c_rs);
        finish(g, 0, m, 0, n);
        return;
    }
#ifdef MLVM_HAVE_GEMV
    /* One row: the columns the single-row kernels cover; the tiles the rest. */
    if (m == 1 && g->pack == NULL && !by_off && g->bias == NULL && g->a_panel == 0) {
#ifdef MLVM_HAVE_GEMV_PANELS
        if (g->b_panel == 32) {
            j_first = n - n % 32;
            gemv_panels(j_first / 32, k, g->a, g->a_cs, g->b, g->out);
        } else
#endif
        if (g->b_panel == 0 && g->b_cs == 1) {
#ifdef MLVM_HAVE_GEMV_REGS
            if (n < 512) {
                j_first = n - n % 128;
                gemv_regs(j_first, k, g->a, g->a_cs, g->b, g->b_rs, g->out);
            } else
#endif
            {
                j_first = n - n % (2 * MLVM_VF_LEN);
#ifdef MLVM_MM_AVX2
                gemv(j_first, k, g->a, g->a_cs, g->b, g->b_rs, g->out, k * j_first >= MLVM_GEMV_PF_KN);
#else
                gemv(j_first, k, g->a, g->a_cs, g->b, g->b_rs, g->out, 0); /* (not measured) */
#endif
            }
        }
        if (j_first > 0)
            finish(g, 0, 1, 0, j_first);
    }
#endif
    /* a in panels (Winograd's weight planes): only for a GEMM reading b by
     * its strides, so that the instance at row offsets has no such code */
    x.a_rs = !by_off && g->a_panel != 0 ? 1 : g->a_rs;
    x.a_cs = !by_off && g->a_panel != 0 ? MLVM_CONV_A_PANEL : g->a_cs;
    x.c_rs = g->c_rs;
    x.b_off = NULL;
    x.b_rs = g->b_rs;
    /* Few rows read in place: short contraction slices, so that every
     * sliver of a slice walks the same few rows of b and b streams in
     * order (a tall sliver would touch one page per row). A convolution's b
     * (rows at offsets in its padded input, or windows its packer gathers)
     * is small and in cache; both of its paths slice alike, so that they
     * sum in the same order. Panels are contiguous slivers: full slices. */
    kc_step = m <= 4 * MLVM_MM_MR && !by_off && g->pack == NULL && g->b_panel == 0
                  ? MLVM_MM_KC_SMALL_M
                  : MLVM_MM_KC;
    /* Column blocks: slices of the contraction inside each (sums in the
     * same order as without). */
    nc = MLVM_MM_NC_BYTES / ((mlvm_index_t)sizeof(float) * m) / MLVM_MM_NR * MLVM_MM_NR;
    if (nc < MLVM_MM_NC_MIN) /* whole slivers: panels must not be cut */
        nc = (MLVM_MM_NC_MIN + MLVM_MM_NR - 1) / MLVM_MM_NR * MLVM_MM_NR;
    nc = MLVM_MM_NC_BYTES == 0 ? n : nc;
    /* with a slab, its width: b packed once gains nothing from narrower
     * blocks, and a's rows stream from the caches once per block (AVX2,
     * where a tall product's blocks had been 128 columns: 2048 x 1024 x
     * 1024 2 %, 4096 x 512 x 512 7 % faster) */
    if (slab)
        nc = MLVM_MM_SLAB_N;
    mc_step = slab ? MLVM_MM_MC_SLAB : MLVM_MM_MC;
    for (jc = j_first; jc < n; jc += nc)
    for (pc = 0; pc < k; pc += kc_step) {
        const int last = pc + kc_step >= k;
        x.kc = k - pc < kc_step ? k - pc : kc_step;
        x.accumulate = pc > 0;
        x.act = MLVM_GEMM_TILE_ACT && last ? g->act : NULL;
        if (slab && g->b_cs == 1)
            pack_slab(x.kc, n - jc < nc ? n - jc : nc, g->b + pc * g->b_rs + jc, g->b_rs, g->b_slab);
        else if (slab) /* the block's slivers side by side, kc x MLVM_MM_NR each */
            for (jr = jc; jr < n && jr < jc + nc; jr += MLVM_MM_NR)
                pack_sliver(x.kc, (int)(n - jr < MLVM_MM_NR ? n - jr : MLVM_MM_NR),
                            g->b + pc * g->b_rs + jr * g->b_cs, g->b_rs, g->b_cs,
                            g->b_slab + (jr - jc) * x.kc);
        for (ic = 0; ic < m; ic += mc_step) {
            const mlvm_index_t mc = m - ic < mc_step ? m - ic : mc_step;
            const mlvm_index_t jn = n - jc < nc ? n : jc + nc;
#if defined(MLVM_MM_AVX2)
            const mlvm_index_t tail = mc % MLVM_MM_MR; /* rows under a whole tile */
            const float *held_b = NULL;
#endif
            for (jr = jc; jr < jn; jr += MLVM_MM_NR) {
                const int nr = (int)(jn - jr < MLVM_MM_NR ? jn - jr : MLVM_MM_NR);
                const float *bs = g->b + pc * g->b_rs + jr * g->b_cs;
                x.col_bias = MLVM_GEMM_TILE_ACT && last && g->col_bias != NULL ? g->col_bias + jr : NULL;
                x.b_off = NULL;
                if (by_off) { /* g->b_off is set exactly then */
                    bs = g->b + jr;
#if defined(MLVM_MM_AVX512) || defined(MLVM_MM_AVX2)
                    if (in_place_off) { /* masked loads stop at nr */
#else
                    if (in_place_off && nr == MLVM_MM_NR) {
#endif
                        x.b_off = g->b_off + pc;
                    } else {
                        pack_rows_at(x.kc, nr, bs, g->b_off + pc, buf);
                        bs = buf;
                        x.b_rs = MLVM_MM_NR;
                    }
                } else if (g->pack != NULL) {
                    g->pack(g->pack_ctx, pc, x.kc, jr, nr, buf, MLVM_MM_NR);
                    bs = buf;
                    x.b_rs = MLVM_MM_NR;
                } else if (slab) {
                    bs = g->b_slab + (jr - jc) * x.kc;
                    x.b_rs = MLVM_MM_NR;
                } else if (g->b_panel != 0) { /* in place: contiguous, zero-padded */
                    bs = column_at(g, jr) + pc * g->b_panel;
                    x.b_rs = g->b_panel;
                } else if (pack) {
                    pack_sliver(x.kc, nr, bs, g->b_rs, g->b_cs, buf);
                    bs = buf;
                    x.b_rs = MLVM_MM_NR;
                } else {
                    x.b_rs = g->b_rs;
                }
#if defined(MLVM_MM_AVX2)
                /* The 1 or 2 rows under a whole tile wait, in an even sliver,
                 * for the next one's: one tile over both (kern_avx2_pair),
                 * with b read where it lies (in place, panels, the slab),
                 * not from the one packing buffer. */
                const int odd = (int)((jr - jc) / MLVM_MM_NR % 2);
                const mlvm_index_t held =
                    (tail == 1 || tail == 2) && !by_off && bs != buf
                            && (odd || (nr == MLVM_MM_NR && jr + MLVM_MM_NR < jn))
                        ? tail
                        : 0;
                x.pf = 0;
#else
                const mlvm_index_t held = 0;
#endif
                for (ir = ic; ir < ic + mc - held; ir += mr) {
                    mr = tile_rows(ic + mc - held - ir);
#if defined(MLVM_MM_AVX2)
                    /* Constant weights in panels past L2 stream from memory
                     * (a Linear layer's 4 MB): the block's last tile, reading
                     * its sliver from L1, fetches the next one meanwhile
                     * (Linear 1024 x 1024 at M = 8: 0.9x the time; weights in
                     * L2, as the MLP's 784 x 256, lose 3 % by it). */
                    if (!by_off && g->b_panel != 0 && k * n >= MLVM_MM_SLAB_KN
                        && ir + mr >= ic + mc - held && jr + MLVM_MM_NR < jn)
                        x.pf = (column_at(g, jr + MLVM_MM_NR) + pc * g->b_panel) - bs;
#endif
                    micro(&x, by_off ? x.b_off : NULL, mr, nr, a_at(g, by_off, ir, pc), bs,
                          g->out + ir * g->c_rs + jr, g->bias != NULL ? g->bias + ir : NULL);
                }
#if defined(MLVM_MM_AVX2)
                if (held != 0 && odd) {
                    const mlvm_index_t i0 = ic + mc - tail, j0 = jr - MLVM_MM_NR;
                    x.col_bias = MLVM_GEMM_TILE_ACT && last && g->col_bias != NULL ? g->col_bias + j0 : NULL;
                    x.pf = 0;
                    micro_pair(&x, (int)tail, nr, a_at(g, by_off, i0, pc), held_b, bs,
                               g->out + i0 * g->c_rs + j0, g->bias != NULL ? g->bias + i0 : NULL);
                }
                held_b = bs;
#endif
            }
            /* The epilogue once the block is final, on its whole rows of
             * the column block: what it reads beside the sums (a residual)
             * then streams row by row; tile by tile its lines were a miss
             * each (a product with a residual add 1.44x the time of the
             * product and a separate pass, at 1024 x 256 x 256 on a Zen 3
             * core). With AVX the block (at most MLVM_MM_NC_BYTES) is
             * still in L2; without (no column blocks) it spans whole rows. */
#if MLVM_GEMM_TILE_ACT
            if (last && g->epilogue != NULL)
                g->epilogue(g->epilogue_ctx, ic, mc, jc, jn - jc, g->out + ic * g->c_rs + jc, g->c_rs);
#else
            if (last && (g->epilogue != NULL || g->act != NULL || g->col_bias != NULL))
                finish(g, ic, mc, jc, jn - jc);
#endif
        }
    }
}

MLVM_NOINLINE static void gemm_blocked_strided(const mlvm_gemm_t *g) { gemm_blocked(g, 0); }
MLVM_NOINLINE static void gemm_blocked_at(const mlvm_gemm_t *g) { gemm_blocked(g, 1); }

void mlvm_gemm_at_f32(const mlvm_gemm_t *g) { gemm_blocked_at(g); }
void mlvm_gemm_strided_f32(const mlvm_gemm_t *g) { gemm_blocked_strided(g); }

void mlvm_gemm_f32(const mlvm_gemm_t *g)
{
#ifdef MLVM_HAVE_ROW
    if (g->m == 1 && g->n > 0 && g->k > 0 && g->pack == NULL && g->b_off == NULL
        && g->bias == NULL && g->a_panel == 0) {
        row_times_matrix(g);
        return;
    }
#endif
    if (g->b_off != NULL)
        gemm_blocked_at(g);
    else
        gemm_blocked_strided(g);
}

static void gemm_of(mlvm_gemm_t *g, const mlvm_matmul_t *p, const float *a, const float *b,
                    float *out, mlvm_epilogue_fn fn, const void *ctx)
{
    g->m = p->m;
    g->n = p->n;
    g->k = p->k;
    g->a = a;
    g->a_rs = p->a_rs;
    g->a_cs = p->a_cs;
    g->a_panel = 0;
    g->b = b;
    g->b_rs = p->b_rs;
    g->b_cs = p->b_cs;
    g->b_panel = p->b_panel;
    g->b_off = NULL;
    g->pack = NULL;
    g->pack_ctx = NULL;
    g->bias = NULL;
    g->col_bias = NULL;
    g->act = NULL;
    g->out = out;
    g->c_rs = p->n;
    g->epilogue = fn;
    g->epilogue_ctx = ctx;
    g->b_slab = NULL;
    /* an activation alone, or a Linear layer's bias with a ReLU or
     * nothing: stored so by the tile kernels, without a pass per tile */
    if (!MLVM_GEMM_TILE_ACT) {
        return;
    } else if (fn == mlvm_epilogue_clamp_f32) {
        g->act = (const mlvm_clamp_t *)ctx;
        g->epilogue = NULL;
    } else if (fn == mlvm_epilogue_bias_f32) {
        static const mlvm_clamp_t relu = {0.0f, 0.0f, 1};
        const mlvm_bias_t *b = (const mlvm_bias_t *)ctx;
        if ((b->lo == 0.0f && !signbit(b->lo)) || b->lo == -HUGE_VALF) {
            g->col_bias = b->bias;
            g->act = b->lo == 0.0f ? &relu : NULL;
            g->epilogue = NULL;
        }
    }
}

size_t mlvm_matmul_workspace(const mlvm_matmul_t *p)
{
    const mlvm_index_t cols = (p->n + 31) / 32 * 32;
    /* where packing pays: b transposed, large, or its rows a multiple of
     * 1 KiB apart (in place, a sliver's rows would share a few L1 sets);
     * a smaller b streams from L2 in place as fast */
    const int pays = p->b_cs != 1 || p->k * p->n >= MLVM_MM_SLAB_KN || p->b_rs % 256 == 0;
    if (p->b_panel != 0 || p->m <= MLVM_MM_SLAB_M || p->n <= 0 || p->k <= 0 || !pays)
        return 0;
    return sizeof(float) * (size_t)(p->k < MLVM_MM_SLAB_K ? p->k : MLVM_MM_SLAB_K)
           * (size_t)(cols < MLVM_MM_SLAB_N ? cols : MLVM_MM_SLAB_N);
}

static void matmul_2d(const mlvm_matmul_t *p, const float *a, const float *b, float *out,
                      mlvm_epilogue_fn fn, const void *ctx, void *ws)
{
    mlvm_gemm_t g;
    gemm_of(&g, p, a, b, out, fn, ctx);
    g.b_slab = ws != NULL && mlvm_matmul_workspace(p) != 0 ? (float *)ws : NULL;
    mlvm_gemm_f32(&g);
}

void mlvm_matmul_epilogue_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                              float *out, mlvm_epilogue_fn fn, const void *ctx)
{
    matmul_2d(p, a, b, out, fn, ctx, NULL);
}

void mlvm_matmul_epilogue_ws_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                                 float *out, mlvm_epilogue_fn fn, const void *ctx, void *ws)
{
    matmul_2d(p, a, b, out, fn, ctx, ws);
}

/* The single-row entries: on cores without vectors the passes of `wide`
 * (row_passes), then fn or the bias in the entry's own loop. */
MLVM_ALWAYS_INLINE void row_entry(const mlvm_matmul_t *p, const float *a, const float *b, float *out,
                                  mlvm_epilogue_fn fn, const void *ctx, const mlvm_bias_t *bias,
                                  const int wide)
{
#ifdef MLVM_HAVE_ROW
    (wide ? row_core : row_core4)(p, a, b, out);
    if (bias != NULL) /* mlvm_epilogue_bias_f32's single row */
        mlvm_bias_run(bias->bias, bias->lo, out, p->n);
    else if (fn != NULL)
        fn(ctx, 0, 1, 0, p->n, out, p->n);
#else
    (void)wide;
    if (bias != NULL)
        matmul_2d(p, a, b, out, mlvm_epilogue_bias_f32, bias, NULL);
    else
        matmul_2d(p, a, b, out, fn, ctx, NULL);
#endif
}

void mlvm_matmul_row_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                         float *out, mlvm_epilogue_fn fn, const void *ctx)
{
    row_entry(p, a, b, out, fn, ctx, NULL, 1);
}

void mlvm_matmul_row_bias_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                              float *out, const mlvm_bias_t *bias)
{
    row_entry(p, a, b, out, NULL, NULL, bias, 1);
}

void mlvm_matmul_row4_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                          float *out, mlvm_epilogue_fn fn, const void *ctx)
{
    row_entry(p, a, b, out, fn, ctx, NULL, 0);
}

void mlvm_matmul_row4_bias_f32(const mlvm_matmul_t *p, const float *a, const float *b,
                               float *out, const mlvm_bias_t *bias)
{
    row_entry(p, a, b, out, NULL, NULL, bias, 0);
}

const char *mlvm_kernel_path(void)
{
#if defined(MLVM_MM_AVX512)
    return "avx512";
#elif defined(MLVM_MM_AVX2)
    return "avx2";
#else
    return "portable";
#endif
}

void mlvm_matmul_ws_f32(const mlvm_matmul_t *p, const mlvm_iter_t *batch, const float *a,
                        const float *b, float *out, void *ws)
{
    mlvm_index_t idx[MLVM_MAX_RANK] = {0};
    mlvm_index_t oa = 0, ob = 0;
    size_t t, count = mlvm_iter_count(batch, batch->rank);
    for (t = 0; t < count; ++t, out += p->m * p->n) {
        matmul_2d(p, a + oa, b + ob, out, NULL, NULL, ws);
        mlvm_iter_step(batch, batch->rank, idx, &oa, &ob);
    }
}

void mlvm_matmul_f32(const mlvm_matmul_t *p, const mlvm_iter_t *batch,
                     const float *a, const float *b, float *out)
{
    mlvm_matmul_ws_f32(p, batch, a, b, out, NULL);
}
