/* mlvm.qconv2d (mlvm_qconv2d_ws_8: int32 sums) and mlvm.qconv2d_requant
 * (mlvm_qconv2d_requant_8: bias, requantization and ReLU applied to the
 * sums in registers) with a workspace: the input copied once per call,
 * padded, so that every tap is read in place, as conv.c's direct path does
 * for f32.
 *
 * Groups of 4 or more output channels are one integer GEMM per image and
 * group. The copy interleaves channels by four ([c / 4][phase][hq][wq][4]
 * bytes, x as unsigned: x ^ 0x80 for i8), so that one 32-bit lane holds
 * four channels of one position at one (ky, kx): the lanes of 16
 * consecutive positions are 64 consecutive bytes, read in place at the
 * tap's offset (one or two channels: lanes of four consecutive taps, an
 * im2col of a planar copy, instead). The weights are reordered to match
 * once per call (as i8: u8 weights less 128), so the lane product is one
 * vpdpbusd (AVX-512 VNNI, AVX-VNNI), two vpmaddwd of widened bytes (AVX2;
 * vpmaddubsw and a vpmaddwd by ones where the weights allow, w_pairs),
 * two SMLAD of halfword pairs (the Arm DSP extension), or four products
 * in plain C. Padding holds the zero point, whose share (zx * sum_t w[o,
 * t], per output channel) leaves the inner loop, as does a weight zero
 * point's (zw[o] * sum_t x, the windows' sums computed by a row of ones
 * through the same tiles). Sums wrap modulo 2^32, like the reference's
 * int32, on every path.
 *
 * Groups with fewer output channels (depthwise) add their taps over chunks
 * of 64 positions of planar copies (all channels copied at once); on cores
 * with the DSP extension a 3x3 one of stride 1 reads its channel's plane
 * widened to halfwords, two taps per load (q_dw3_rows), and one of stride
 * 2 its plane's bytes padded, three taps per load (q_dw3s2_channel). With
 * vectors, the
 * depthwise kernels of depthwise.h take most such layers first, with no
 * workspace (qdepthwise_perm.c, qdepthwise_rows3.c, qdepthwise_lanes.c). */
#include <math.h>
#include <string.h>

#include "depthwise.h"
#include "qgemv.h"
#include "mlvm/kernels.h"
#include "requant.h"
#include "window.h"

#if !defined(MLVM_PORTABLE_KERNELS) && (defined(__AVX2__) || defined(__SSE2__))
#include <immintrin.h>
#endif

#if !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX512F__) && defined(__AVX512VNNI__)            \
    && !defined(MLVM_Q_EMULATE_AVXVNNI)
#include <immintrin.h>
#define MLVM_Q_ZMM 1 /* vpdpbusd, 16 lanes */
#define MLVM_Q_MR 8
#define MLVM_Q_NR 32
#elif !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX2__)                                         \
    && (defined(__AVXVNNI__) || defined(MLVM_Q_EMULATE_AVXVNNI))
#include <immintrin.h>
#define MLVM_Q_VNNI 1 /* vpdpbusd (VEX), 8 lanes */
#define MLVM_Q_MR 6
#define MLVM_Q_NR 16
#if !defined(__AVXVNNI__)
/* For the tests: the AVX-VNNI tiles on a core with AVX-512 VNNI instead
 * (the EVEX vpdpbusd of ymm registers: the same sums), which the hosts
 * that have no AVX-VNNI often do. */
#define _mm256_dpbusd_avx_epi32 _mm256_dpbusd_epi32
#endif
#elif !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX2__)
#include <immintrin.h>
#define MLVM_Q_AVX2 1 /* vpmaddwd of widened bytes, or vpmaddubsw of byte pairs (w_pairs) */
#define MLVM_Q_MR 6
#define MLVM_Q_NR 8 /* (widened bytes; byte pairs: MLVM_Q_NR_PAIRS) */
#elif !defined(MLVM_PORTABLE_KERNELS) && defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>
#define MLVM_Q_DSP 1 /* SMLAD on halfword pairs (Cortex-M4 and up): q_group_rows */
#else
#define MLVM_Q_MR 4
#define MLVM_Q_NR 4
#endif

/* The two paths and the depthwise rows each in a function of their own:
 * inlined into one caller, gcc merges their frames (the stack a call
 * needs grows) and spills what the inner loops keep in registers. */
#if defined(__GNUC__)
#define MLVM_Q_NOINLINE __attribute__((noinline))
#else
#define MLVM_Q_NOINLINE
#endif

#define MLVM_QW_ALIGN 64
#define MLVM_QW_SLACK 256 /* bytes after the copy: the last tile's and chunk's reads */
#define MLVM_QW_CHUNK 64  /* positions per chunk of the taps path */
#define MLVM_QW_GEMM_ROWS 4

const char *mlvm_qkernel_path(void)
{
#if defined(MLVM_Q_ZMM) && defined(MLVM_QDW_PERM)
    return "avx512-vnni-vbmi"; /* small depthwise planes by byte permutes */
#elif defined(MLVM_Q_ZMM)
    return "avx512-vnni";
#elif defined(MLVM_Q_VNNI)
    return "avx-vnni";
#elif defined(MLVM_Q_AVX2)
    return "avx2";
#elif defined(MLVM_Q_DSP)
    return "dsp";
#else
    return "portable";
#endif
}

static size_t qw_align(size_t n) { return (n + MLVM_QW_ALIGN - 1) / MLVM_QW_ALIGN * MLVM_QW_ALIGN; }

typedef struct qgeom {
    mlvm_window_t win;
    mlvm_phases_t ph;                   /* phase planes of one channel (quad), flat outputs */
    mlvm_index_t quads;                 /* GEMM path: channel quads of a group, else 0 */
    mlvm_index_t k;                     /* lanes per window: quads * kh * kw, or cg * kh * kw */
    mlvm_index_t taps;                  /* tap quads: the cg * kh * kw taps a lane's bytes are of */
    size_t off_bytes, in_bytes, w_bytes, out_bytes;
} qgeom_t;

/* One input channel per group, 3x3, stride and dilation 1 (a depthwise
 * layer of a keyword spotter or MobileNet): the taps path's workspace then
 * also holds a channel's plane widened to halfwords (q_dw3_rows', on cores
 * with the DSP extension; planned on every target) at an even row pitch.
 * No read passes its end: a row's last pair reads up to its column
 * wq - 1, an odd row's last position up to column wq, where wq is odd and
 * the pitch wq + 1. */
static int q_dw3_shape(const mlvm_qconv2d_t *p)
{
    return p->c == p->groups && p->kh == 3 && p->kw == 3 && p->sh == 1 && p->sw == 1 && p->dh == 1
           && p->dw == 1;
}

/* The widened plane's row pitch in halfwords: even, so that every pair of
 * positions starting at an even column is word-aligned (LDRD). */
static mlvm_index_t q_dw3_pitch(const qgeom_t *g) { return g->ph.wq + (g->ph.wq & 1); }

static size_t q_dw3_bytes(const qgeom_t *g)
{
    return qw_align((size_t)(g->ph.hq * q_dw3_pitch(g)) * 2);
}

/* requant: the results are bytes (mlvm_qconv2d_requant_8), so that rows
 * at the copy's pitch take a byte each, not an int32. */
static void qgeom(const mlvm_qconv2d_t *p, int requant, qgeom_t *g)
{
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups;
    const mlvm_window_t win = {p->oh, p->ow, p->kh, p->kw, p->sh, p->sw, p->dh, p->dw};
    const int gemm = og >= MLVM_QW_GEMM_ROWS;
    g->win = win;
    g->ph = mlvm_phases_of(&win);
    /* one or two channels: lanes of four consecutive taps (an im2col of
     * the planar copy) rather than of four channels, three of them empty */
    g->taps = gemm && cg < 3 ? cg * p->kh * p->kw : 0;
    g->quads = gemm && !g->taps ? (cg + 3) / 4 : 0;
    g->k = g->taps ? (g->taps + 3) / 4 : (gemm ? g->quads : cg) * p->kh * p->kw;
    g->off_bytes = qw_align((size_t)(g->k + g->taps) * 8);
    g->in_bytes = g->taps ? qw_align((size_t)(cg * g->ph.phases * g->ph.plane) + MLVM_QW_SLACK)
                                + qw_align((size_t)(g->k * g->ph.n * 4) + MLVM_QW_SLACK)
                : qw_align((size_t)(gemm ? g->quads * 4 * g->ph.phases * g->ph.plane
                                         : p->c * g->ph.phases * g->ph.plane) + MLVM_QW_SLACK);
    /* GEMM: reordered weights of every output channel and a row of ones,
     * zx shares, weight zero points, sums of each window (colx), the DSP
     * path's halfwords of 6 positions (on every target: the compiler plans
     * one size; AVX2 widens a block of 6 rows' weights there); taps: one
     * output channel's weights less its zero point */
    g->w_bytes = gemm ? qw_align((size_t)(((p->w_lanes ? 0 : p->o) + 1) * g->k) * 4)
                            + 2 * qw_align((size_t)p->o * 4)
                            + qw_align((size_t)(g->ph.n + MLVM_QW_CHUNK) * 4)
                            + qw_align((size_t)g->k * 48)
                      : qw_align((size_t)g->k * 4) + (q_dw3_shape(p) ? q_dw3_bytes(g) : 0);
    g->out_bytes = g->ph.wq == p->ow ? 0 : qw_align((size_t)(og * g->ph.n) * (requant ? 1 : 4));
}

static size_t q_workspace(const mlvm_qconv2d_t *p, int requant)
{
    qgeom_t g;
    if (p->n <= 0 || p->o <= 0 || p->oh <= 0 || p->ow <= 0)
        return 0;
    if (requant && mlvm_qgemv_applies(p))
        return MLVM_QW_ALIGN; /* qconv_gemv.c needs none (0 would say: no outputs) */
    qgeom(p, requant, &g);
    return g.off_bytes + g.in_bytes + g.w_bytes + g.out_bytes;
}

size_t mlvm_qconv2d_workspace(const mlvm_qconv2d_t *p) { return q_workspace(p, 0); }

size_t mlvm_qconv2d_requant_workspace(const mlvm_qconv2d_t *p) { return q_workspace(p, 1); }

#if defined(__SSE2__) && !defined(MLVM_PORTABLE_KERNELS)
#define MLVM_Q_LANES_SSE2 1
/* 16 elements of a row from p, element j at j * s (s 1 or 2). With s = 2
 * the second load starts a byte early and takes the odd bytes, so that no
 * byte past the last element (30) is read: a row of 16 needs no tail. */
static inline __m128i q_row16(const uint8_t *p, mlvm_index_t s)
{
    const __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)p);
    if (s == 1)
        return lo;
    return _mm_packus_epi16(_mm_and_si128(lo, _mm_set1_epi16(0xFF)),
                            _mm_srli_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p + 15)), 8));
}

/* 8 elements of a row from p (element j at j * s, s 1 or 2) in the low
 * half; as q_row16, no byte past the last element is read. */
static inline __m128i q_row8(const uint8_t *p, mlvm_index_t s)
{
    const __m128i lo = _mm_loadl_epi64((const __m128i *)(const void *)p);
    if (s == 1)
        return lo;
    return _mm_packus_epi16(
        _mm_unpacklo_epi64(_mm_and_si128(lo, _mm_set1_epi16(0xFF)),
                           _mm_srli_epi16(_mm_loadl_epi64((const __m128i *)(const void *)(p + 7)), 8)),
        _mm_setzero_si128());
}

/* Lanes of the first `half` * 8 (8 or 16) elements of four rows' vectors. */
static inline void q_lanes16(uint8_t *d, __m128i a, __m128i b, __m128i c, __m128i e, __m128i f,
                             int half)
{
    const __m128i ab0 = _mm_unpacklo_epi8(a, b), ce0 = _mm_unpacklo_epi8(c, e);
    __m128i *o = (__m128i *)(void *)d;
    _mm_storeu_si128(o, _mm_xor_si128(_mm_unpacklo_epi16(ab0, ce0), f));
    _mm_storeu_si128(o + 1, _mm_xor_si128(_mm_unpackhi_epi16(ab0, ce0), f));
    if (half == 2) {
        const __m128i ab1 = _mm_unpackhi_epi8(a, b), ce1 = _mm_unpackhi_epi8(c, e);
        _mm_storeu_si128(o + 2, _mm_xor_si128(_mm_unpacklo_epi16(ab1, ce1), f));
        _mm_storeu_si128(o + 3, _mm_xor_si128(_mm_unpackhi_epi16(ab1, ce1), f));
    }
}
#endif

#if defined(MLVM_Q_DSP)
/* Halfword packing and byte extraction of a word rotated by 8 bits, one
 * instruction each (GCC's arm_acle.h has no PKHBT / PKHTB, and does not
 * fold the rotation into UXTB16 / SXTB16 by itself). */
#if defined(__GNUC__)
static uint32_t q_pkhbt(uint32_t lo, uint32_t hi) /* lo[15:0] | hi[15:0] << 16 */
{
    uint32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(lo), "r"(hi));
    return r;
}
static uint32_t q_pkhtb(uint32_t hi, uint32_t lo) /* hi[31:16] | lo[31:16] >> 16 */
{
    uint32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(hi), "r"(lo));
    return r;
}
static uint32_t q_uxtb16_8(uint32_t x) /* bytes 1 and 3 */
{
    uint32_t r;
    __asm__("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}
#else
static uint32_t q_pkhbt(uint32_t lo, uint32_t hi) { return (lo & 0xFFFFu) | hi << 16; }
static uint32_t q_pkhtb(uint32_t hi, uint32_t lo) { return (hi & 0xFFFF0000u) | lo >> 16; }
static uint32_t q_uxtb16_8(uint32_t x) { return __uxtb16(x >> 8 | x << 24); }
/* (q_tile6's C form; with GNU C its lanes are assembly) */
static int32_t q_sxtb16_8(int32_t x) { return __sxtb16((int32_t)((uint32_t)x >> 8 | (uint32_t)x << 24)); }
#endif
#endif

/* n lanes of four bytes from four rows (element j at j * s): lane j =
 * r0[j] | r1[j] << 8 | r2[j] << 16 | r3[j] << 24, xor flip4 (the copies of
 * inputs and weights). For s = 1 or 2, 16 lanes at a time from the rows'
 * interleaved bytes (SSE2; the compiler leaves the loop scalar: d may alias
 * the rows), then 8; the loads stay within the elements read. */
static void q_lanes(uint8_t *d, const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                    const uint8_t *r3, mlvm_index_t n, mlvm_index_t s, uint32_t flip4)
{
    mlvm_index_t j = 0;
#if defined(MLVM_Q_LANES_SSE2)
    const __m128i f = _mm_set1_epi32((int)flip4);
    /* a step reads elements j .. j + 15 and nothing past them */
    for (; (s == 1 || s == 2) && j + 16 <= n; j += 16)
        q_lanes16(d + 4 * j, q_row16(r0 + j * s, s), q_row16(r1 + j * s, s),
                  q_row16(r2 + j * s, s), q_row16(r3 + j * s, s), f, 2);
    for (; (s == 1 || s == 2) && j + 8 <= n; j += 8)
        q_lanes16(d + 4 * j, q_row8(r0 + j * s, s), q_row8(r1 + j * s, s), q_row8(r2 + j * s, s),
                  q_row8(r3 + j * s, s), f, 1);
#elif defined(MLVM_Q_DSP)
    /* four lanes a step from one word of each row, the 4 x 4 bytes
     * transposed by UXTB16 (bytes 0 and 2, or 1 and 3), an ORR of two rows'
     * halfword pairs and PKHBT / PKHTB: 32 instructions a step at -O2
     * where byte by byte took 48 */
    for (; s == 1 && j + 4 <= n; j += 4) {
        uint32_t a, b, c, e, ab02, ab13, ce02, ce13, v;
        memcpy(&a, r0 + j, 4), memcpy(&b, r1 + j, 4), memcpy(&c, r2 + j, 4), memcpy(&e, r3 + j, 4);
        ab02 = __uxtb16(a) | __uxtb16(b) << 8, ab13 = q_uxtb16_8(a) | q_uxtb16_8(b) << 8;
        ce02 = __uxtb16(c) | __uxtb16(e) << 8, ce13 = q_uxtb16_8(c) | q_uxtb16_8(e) << 8;
        v = q_pkhbt(ab02, ce02) ^ flip4, memcpy(d + 4 * j, &v, 4);
        v = q_pkhbt(ab13, ce13) ^ flip4, memcpy(d + 4 * j + 4, &v, 4);
        v = q_pkhtb(ce02, ab02) ^ flip4, memcpy(d + 4 * j + 8, &v, 4);
        v = q_pkhtb(ce13, ab13) ^ flip4, memcpy(d + 4 * j + 12, &v, 4);
    }
#endif
    if (s == 1) {
        for (; j < n; ++j) {
            const uint32_t v = ((uint32_t)r0[j] | (uint32_t)r1[j] << 8 | (uint32_t)r2[j] << 16
                                | (uint32_t)r3[j] << 24) ^ flip4;
            memcpy(d + 4 * j, &v, 4);
        }
        return;
    }
    for (; j < n; ++j) {
        const uint32_t v = ((uint32_t)r0[j * s] | (uint32_t)r1[j * s] << 8
                            | (uint32_t)r2[j * s] << 16 | (uint32_t)r3[j * s] << 24) ^ flip4;
        memcpy(d + 4 * j, &v, 4);
    }
}

/* n bytes from src (element j at j * s) to dst, xor flip. */
static void q_bytes(uint8_t *d, const uint8_t *src, mlvm_index_t n, mlvm_index_t s, uint8_t flip)
{
    mlvm_index_t j = 0;
    if (s == 1 && flip == 0 && n >= 64) {
        memcpy(d, src, (size_t)n);
        return;
    }
#if defined(MLVM_Q_DSP)
    {
        const uint32_t flip4 = 0x01010101u * flip;
        /* stride 2 (a strided layer's phase planes): four bytes a step
         * from two words, bytes 0 and 2 of each by UXTB16, an ORR and a
         * PKHBT (11 instructions for four bytes where one by one took 6
         * a byte); while the step's last read, src[2 j + 7], lies before
         * the last element, src[2 (n - 1)] */
        for (; s == 2 && j + 4 < n; j += 4) {
            uint32_t a, b, v;
            memcpy(&a, src + 2 * j, 4), memcpy(&b, src + 2 * j + 4, 4);
            a = __uxtb16(a), b = __uxtb16(b);
            v = q_pkhbt(a | a >> 8, b | b >> 8) ^ flip4;
            memcpy(d + j, &v, 4);
        }
        for (; s == 1 && j + 4 <= n; j += 4) { /* i8 flipped: a word a step */
            uint32_t v;
            memcpy(&v, src + j, 4), v ^= flip4, memcpy(d + j, &v, 4);
        }
    }
#endif
    for (; j < n; ++j)
        d[j] = (uint8_t)(src[j * s] ^ flip);
}

/* Channels [c0, c0 + cn) of one image into phase planes of `lanes`-byte
 * positions (lanes 4: channel c at byte c % 4 of quad c / 4; lanes 1:
 * planar), padding = zxu. Bytes are x ^ flip (0x80 makes i8 unsigned). A
 * quad short of channels repeats its first one there (their weights are
 * 0). Rows that are contiguous in x and in the copy (no padding, stride 1:
 * a pointwise convolution) go as one run. */
static void q_copy(const mlvm_qconv2d_t *p, const qgeom_t *g, const uint8_t *x, mlvm_index_t c0,
                   mlvm_index_t cn, int lanes, uint8_t flip, uint8_t zxu, uint8_t *xs)
{
    const mlvm_index_t wq = g->ph.wq, groups = (cn + lanes - 1) / lanes, plane = p->h * p->w;
    const uint32_t flip4 = 0x01010101u * flip;
    mlvm_index_t a, b, r, q, r0, r1, lo, hi;
    /* the padding holds the zero point; a copy with none (a pointwise
     * convolution's) writes every byte below */
    if (!(p->sh == 1 && p->sw == 1 && p->pt == 0 && p->pl == 0 && g->ph.hq == p->h && wq == p->w))
        memset(xs, zxu, (size_t)(groups * lanes * g->ph.phases * g->ph.plane));
    for (a = 0; a < p->sh; ++a)
        for (b = 0; b < p->sw; ++b) {
            if (!mlvm_phase_read(&g->win, a, b))
                continue; /* left at zxu */
            mlvm_valid_span(a - p->pt, p->sh, p->h, g->ph.hq, &r0, &r1);
            mlvm_valid_span(b - p->pl, p->sw, p->w, wq, &lo, &hi);
            for (q = 0; q < groups; ++q) {
                const uint8_t *xc = x + (c0 + q * lanes) * plane;
                uint8_t *dst = xs + (q * g->ph.phases + a * p->sw + b) * g->ph.plane * lanes;
                const int whole = lo == 0 && hi == wq && wq == p->w && p->sh == 1 && p->sw == 1;
                const mlvm_index_t rows = whole ? (r1 > r0) : r1 - r0;
                const mlvm_index_t len = whole ? (r1 - r0) * wq : hi - lo;
                for (r = 0; r < rows; ++r) {
                    const mlvm_index_t off = ((r0 + r) * p->sh + a - p->pt) * p->w + lo * p->sw + b - p->pl;
                    uint8_t *d = dst + ((r0 + r) * wq + lo) * lanes;
                    if (lanes == 1) {
                        q_bytes(d, xc + off, len, p->sw, flip);
                        continue;
                    }
                    q_lanes(d, xc + off, xc + off + (4 * q + 1 < cn ? plane : 0),
                            xc + off + (4 * q + 2 < cn ? 2 * plane : 0),
                            xc + off + (4 * q + 3 < cn ? 3 * plane : 0), len, p->sw, flip4);
                }
            }
        }
}

/* The row of ones (k lanes): 1 in a lane's bytes that are taps (channel
 * 4q + byte below cg, or tap below taps), so that it sums each window. */
static void q_ones(const mlvm_qconv2d_t *p, const qgeom_t *g, uint8_t *ones)
{
    const mlvm_index_t cg = p->c / p->groups, khw = p->kh * p->kw;
    mlvm_index_t t;
    for (t = 0; t < g->k * 4; ++t)
        ones[t] = (uint8_t)(g->taps ? t < g->taps : 1);
    if (!g->taps && cg % 4 != 0)
        for (t = 0; t < khw; ++t)
            memset(ones + ((cg / 4) * khw + t) * 4 + cg % 4, 0, (size_t)(4 - cg % 4));
}

/* w4 = w in lanes (kernels.h's w_lanes layout), w' = w as i8 (u8 weights
 * less 128: w ^ 0x80). */
static void q_reorder(const mlvm_qconv2d_t *p, const qgeom_t *g, const void *w, int32_t *w4)
{
    const mlvm_index_t cg = p->c / p->groups, khw = p->kh * p->kw;
    const uint8_t flip = p->w_signed ? 0 : 0x80;
    mlvm_index_t o, q, c, t;
    for (o = 0; o < p->o; ++o) {
        const uint8_t *wo = (const uint8_t *)w + o * cg * khw;
        uint8_t *dst = (uint8_t *)(void *)(w4 + o * g->k);
        if (g->taps) { /* the row itself, zero-padded to whole lanes */
            for (t = 0; t < g->taps; ++t)
                dst[t] = (uint8_t)(wo[t] ^ flip);
            memset(dst + g->taps, 0, (size_t)(g->k * 4 - g->taps));
            continue;
        }
        q = cg - cg % 4; /* channels in whole quads */
        if (khw == 1) /* the lanes are w's own bytes */
            for (c = 0; c < q; ++c)
                dst[c] = (uint8_t)(wo[c] ^ flip);
        else
            for (c = 0; c < q; c += 4)
                q_lanes(dst + c * khw, wo + c * khw, wo + (c + 1) * khw, wo + (c + 2) * khw,
                        wo + (c + 3) * khw, khw, 1, 0x01010101u * flip);
        if (q == cg)
            continue;
        memset(dst + q * khw, 0, (size_t)(khw * 4));
        for (c = q; c < cg; ++c)
            for (t = 0; t < khw; ++t)
                dst[q * khw + 4 * t + c % 4] = (uint8_t)(wo[c * khw + t] ^ flip);
    }
}

/* The sum of n signed bytes (a row of lanes). */
static int32_t q_row_sum(const int8_t *row, mlvm_index_t n)
{
    int32_t sum = 0;
    mlvm_index_t t = 0;
#if defined(__AVX512BW__) && !defined(MLVM_PORTABLE_KERNELS)
    /* 64 bytes per step: vpsadbw sums (byte + 128) over each 8 bytes */
    const __m512i bias = _mm512_set1_epi8((char)0x80);
    __m512i acc = _mm512_setzero_si512();
    for (; t + 64 <= n; t += 64)
        acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_xor_si512(_mm512_loadu_si512((const void *)(row + t)),
                                                                        bias),
                                                       _mm512_setzero_si512()));
    sum = (int32_t)(_mm512_reduce_add_epi64(acc) - 128 * (long long)t);
#elif defined(MLVM_Q_DSP) && defined(__ARM_FEATURE_SIMD32)
    /* 8 bytes per step: USADA8 sums (byte + 128) over 4 bytes (a byte
     * at a time, the loop had cost four instructions a byte) */
    uint32_t acc = 0;
    for (; t + 8 <= n; t += 8) {
        uint32_t a, b;
        memcpy(&a, row + t, 4), memcpy(&b, row + t + 4, 4);
        acc = __usada8(a ^ 0x80808080u, 0u, acc);
        acc = __usada8(b ^ 0x80808080u, 0u, acc);
    }
    sum = (int32_t)(acc - 128u * (uint32_t)t);
#endif
    for (; t < n; ++t)
        sum += row[t];
    return sum;
}

/* From the rows in lanes (or the descriptor's w_sums): share[o] = zxu *
 * sum of w'[o] and zwp[o] = zw[o] (less 128 for u8 weights; wrapping).
 * Returns whether some zwp is not 0 (the windows' sums are then needed). */
static int q_shares(const mlvm_qconv2d_t *p, const qgeom_t *g, const int32_t *w4, const void *zw,
                    uint32_t zxu, uint32_t *share, int32_t *zwp)
{
    mlvm_index_t o;
    int any = 0;
#if !defined(MLVM_SCALAR_CORE) /* (the compiler gives cores without vectors no sums) */
    const int32_t *const sums = p->w_sums;
    if (sums != NULL)
        for (o = 0; o < p->o; ++o)
            share[o] = zxu * (uint32_t)sums[o];
#else
    const int32_t *const sums = NULL;
#endif
    for (o = 0; o < p->o; ++o) {
        if (sums == NULL)
            share[o] = zxu * (uint32_t)q_row_sum((const int8_t *)(const void *)(w4 + o * g->k), g->k * 4);
        zwp[o] = p->w_signed ? ((const int8_t *)zw)[p->zw_per_o ? o : 0]
                             : ((const uint8_t *)zw)[p->zw_per_o ? o : 0] - 128;
        any = any || zwp[o] != 0;
    }
    return any;
}

/* -------------------------------------------------------------------------
 * Where results go (a sink): v = acc - share[o] - zwp[o] * colx[q] is the
 * exact sum (wrapping); stored as int32, or requantized to bytes:
 * clamp(nearbyint((float)(v + bias[o]) * mult[o]) + zy, lo, hi), NaN -> zy,
 * as scalar.h's mlvm_quantize_* (lo = zy for a fused ReLU).
 * ---------------------------------------------------------------------- */

typedef struct qsink {
    const uint32_t *share;
    const int32_t *zwp;  /* NULL when every zero point is 0 */
    const int32_t *colx; /* per position (flat, or compact on the DSP path): the
                          * sum of the window's bytes - k zxu */
    const int32_t *bias; /* NULL or per channel */
    const float *mult;
    int mult_per_o, requant;
    int finite; /* every multiplier finite: no NaN can arise (requant.h; AVX only) */
#if defined(MLVM_Q_ZMM)
    int packs; /* and each within MLVM_REQUANT_PACKS_MAX (mlvm_requant512_bytes) */
    int y_signed;
#endif
#if defined(MLVM_Q_DSP) && defined(MLVM_REQUANT_VCVTR)
    int32_t zyi, loi, hii; /* zy, lo, hi as integers, and the clamp they make */
    int clamp;             /* (q_finish_scalar): 0 the u8 range, 1 the s8 range, 2 other */
#define MLVM_Q_VCVTR 1
#endif
    float zy, lo, hi;
    void *out;       /* row o at o * ld elements (int32, or bytes) ... */
    mlvm_index_t ld;
    mlvm_index_t q0; /* ... position q at q - q0 */
} qsink_t;

/* Channel o's bias less its zero point's share (both wrap), and its
 * multiplier. */
static inline uint32_t q_base(const qsink_t *s, mlvm_index_t o)
{
    return (s->bias != NULL ? (uint32_t)s->bias[o] : 0u) - s->share[o];
}

static inline float q_mult(const qsink_t *s, mlvm_index_t o) { return s->mult[s->mult_per_o ? o : 0]; }

#if !defined(MLVM_Q_ZMM)
/* nearbyintf in the default rounding mode (half to even), without a libm
 * call (which saves and restores the FPU's flags on a Cortex-M): below
 * 2^22 in magnitude, adding and subtracting 1.5 * 2^23 rounds to an
 * integer; above it every float is one already. NaN stays NaN. */
static float q_round(float f)
{
    return fabsf(f) < 0x1p22f ? (f + 0x1.8p23f) - 0x1.8p23f : f;
}

#ifdef MLVM_Q_VCVTR
/* n results v[j] + base (less zwp * colx[j] where colx is not NULL; v[j]
 * alone where `biased`: the tile started its sums from base) requantized
 * by mult to bytes at out, with the sink's zero point and clamp
 * (mlvm_vcvtr_add, then the clamp in integers): one loop per case
 * (-O2 does not unswitch), the clamp as one USAT or SSAT where the bounds
 * are the whole u8 or s8 range (no activation, or a ReLU whose zero point
 * is 0), else as two conditional moves rather than branches. */
static inline __attribute__((always_inline)) void
q_requant_run(uint8_t *out, const uint32_t *v, mlvm_index_t n, uint32_t base, float mult,
              const int32_t *colx, uint32_t zwp, const qsink_t *s, int biased)
{
    const int32_t zyi = s->zyi, loi = s->loi, hii = s->hii;
    const uint32_t *pv = v;
    mlvm_index_t j;
#define MLVM_Q_FINISH_ONE(r, CLAMP)                                            \
    do {                                                                       \
        const int32_t y = mlvm_vcvtr_add((float)(int32_t)(r) * mult, zyi);     \
        out[j] = (uint8_t)CLAMP(y);                                            \
    } while (0)
#define MLVM_Q_U8(y) __usat((y), 8)
#define MLVM_Q_S8(y) __ssat((y), 8)
#define MLVM_Q_BOUNDS(y) ((y) < loi ? loi : (y) > hii ? hii : (y))
/* biased: the sum's bits loaded straight into a float register (VLDMIA
 * with write-back: gcc would load a core register and move it) and
 * converted there, no add */
#define MLVM_Q_FINISH_BIASED(CLAMP)                                            \
    do {                                                                       \
        float f;                                                               \
        int32_t y;                                                             \
        __asm__("vldmia %1!, {%0}\n\tvcvt.f32.s32 %0, %0"                      \
                : "=t"(f), "+r"(pv) : "m"(*pv));                                \
        y = mlvm_vcvtr_add(f * mult, zyi);                                     \
        out[j] = (uint8_t)CLAMP(y);                                            \
    } while (0)
/* biased, and the clamp one instruction: first blocks of four sums by one
 * VLDMIA, converted, scaled and rounded in s0-s3 and moved out two by a
 * VMOV (30 or 31 instructions for four where the loop below takes 40:
 * gcc moves each value between the register files alone); ZY adds the
 * zero point (saturating: VCVTR's result may be near INT32_MAX), or not
 * where it is 0 (ReLU outputs as quantizers make them: 4 fewer); then a
 * pair the same way */
#define MLVM_Q_ZY(y) __qadd((y), zyi)
#define MLVM_Q_ZY0(y) (y)
#define MLVM_Q_FINISH_BIASED4(CLAMP, ZY)                                       \
    do {                                                                       \
        for (j = 0; j + 4 <= n; j += 4) {                                      \
            int32_t a, b, c, d;                                                \
            __asm__("vldmia %[p]!, {s0-s3}\n\t"                                \
                    "vcvt.f32.s32 s0, s0\n\tvcvt.f32.s32 s1, s1\n\t"           \
                    "vcvt.f32.s32 s2, s2\n\tvcvt.f32.s32 s3, s3\n\t"           \
                    "vmul.f32 s0, s0, %[m]\n\tvmul.f32 s1, s1, %[m]\n\t"       \
                    "vmul.f32 s2, s2, %[m]\n\tvmul.f32 s3, s3, %[m]\n\t"       \
                    "vcvtr.s32.f32 s0, s0\n\tvcvtr.s32.f32 s1, s1\n\t"         \
                    "vcvtr.s32.f32 s2, s2\n\tvcvtr.s32.f32 s3, s3\n\t"         \
                    "vmov %[a], %[b], s0, s1\n\tvmov %[c], %[d], s2, s3"       \
                    : [a] "=r"(a), [b] "=r"(b), [c] "=r"(c), [d] "=r"(d),     \
                      [p] "+r"(pv)                                             \
                    : [m] "t"(mult),                                           \
                      "m"(*(const uint32_t(*)[4])(const void *)pv)             \
                    : "s0", "s1", "s2", "s3");                                 \
            out[j] = (uint8_t)CLAMP(ZY(a));                                    \
            out[j + 1] = (uint8_t)CLAMP(ZY(b));                                \
            out[j + 2] = (uint8_t)CLAMP(ZY(c));                                \
            out[j + 3] = (uint8_t)CLAMP(ZY(d));                                \
        }                                                                      \
        if (j + 2 <= n) { /* a pair the same way (a GEMM chunk of 6, any run) */  \
            int32_t a, b;                                                      \
            __asm__("vldmia %[p]!, {s0-s1}\n\t"                                \
                    "vcvt.f32.s32 s0, s0\n\tvcvt.f32.s32 s1, s1\n\t"           \
                    "vmul.f32 s0, s0, %[m]\n\tvmul.f32 s1, s1, %[m]\n\t"       \
                    "vcvtr.s32.f32 s0, s0\n\tvcvtr.s32.f32 s1, s1\n\t"         \
                    "vmov %[a], %[b], s0, s1"                                  \
                    : [a] "=r"(a), [b] "=r"(b), [p] "+r"(pv)                   \
                    : [m] "t"(mult),                                           \
                      "m"(*(const uint32_t(*)[2])(const void *)pv)             \
                    : "s0", "s1");                                             \
            out[j] = (uint8_t)CLAMP(ZY(a));                                    \
            out[j + 1] = (uint8_t)CLAMP(ZY(b));                                \
            j += 2;                                                            \
        }                                                                      \
        for (; j < n; ++j)                                                     \
            MLVM_Q_FINISH_BIASED(CLAMP);                                       \
    } while (0)
#define MLVM_Q_FINISH_ALL(CLAMP)                                               \
    do {                                                                       \
        if (biased)                                                            \
            for (j = 0; j < n; ++j)                                            \
                MLVM_Q_FINISH_BIASED(CLAMP);                                   \
        else if (colx != NULL)                                                 \
            for (j = 0; j < n; ++j)                                            \
                MLVM_Q_FINISH_ONE(v[j] + base - zwp * (uint32_t)colx[j], CLAMP); \
        else                                                                   \
            for (j = 0; j < n; ++j)                                            \
                MLVM_Q_FINISH_ONE(v[j] + base, CLAMP);                         \
    } while (0)
    if (s->clamp == 0 && biased && zyi == 0)
        MLVM_Q_FINISH_BIASED4(MLVM_Q_U8, MLVM_Q_ZY0);
    else if (s->clamp == 0 && biased)
        MLVM_Q_FINISH_BIASED4(MLVM_Q_U8, MLVM_Q_ZY);
    else if (s->clamp == 1 && biased)
        MLVM_Q_FINISH_BIASED4(MLVM_Q_S8, MLVM_Q_ZY);
    else if (s->clamp == 0)
        MLVM_Q_FINISH_ALL(MLVM_Q_U8);
    else if (s->clamp == 1)
        MLVM_Q_FINISH_ALL(MLVM_Q_S8);
    else
        MLVM_Q_FINISH_ALL(MLVM_Q_BOUNDS);
#undef MLVM_Q_FINISH_ALL
#undef MLVM_Q_FINISH_BIASED4
#undef MLVM_Q_ZY0
#undef MLVM_Q_ZY
#undef MLVM_Q_FINISH_BIASED
#undef MLVM_Q_BOUNDS
#undef MLVM_Q_S8
#undef MLVM_Q_U8
#undef MLVM_Q_FINISH_ONE
}
#endif

/* Results v[0 .. n) of channel o from position q (flat, or compact where
 * the sink is), one by one. The sink's fields are copied first: the byte
 * stores may alias anything, and would otherwise reload each of them per
 * element. */
static void q_finish_scalar(const qsink_t *s, mlvm_index_t o, mlvm_index_t q, const uint32_t *v,
                            mlvm_index_t n)
{
    const uint32_t share = s->share[o], zwp = s->zwp != NULL ? (uint32_t)s->zwp[o] : 0u;
    const int32_t *colx = s->zwp != NULL ? s->colx + q : NULL;
    mlvm_index_t j;
    if (!s->requant) {
        int32_t *out = (int32_t *)s->out + o * s->ld + (q - s->q0);
        for (j = 0; j < n; ++j)
            out[j] = (int32_t)(v[j] - share - (colx != NULL ? zwp * (uint32_t)colx[j] : 0u));
        return;
    }
    {
        const uint32_t base = q_base(s, o);
        const float mult = q_mult(s, o), zy = s->zy, lo = s->lo, hi = s->hi;
        uint8_t *out = (uint8_t *)s->out + o * s->ld + (q - s->q0);
#ifdef MLVM_Q_VCVTR
        q_requant_run(out, v, n, base, mult, colx, zwp, s, 0);
        return;
#endif
        for (j = 0; j < n; ++j) {
            const uint32_t r = v[j] + base - (colx != NULL ? zwp * (uint32_t)colx[j] : 0u);
            float f = q_round((float)(int32_t)r * mult) + zy;
            f = f != f ? zy : f;
            f = f < lo ? lo : f;
            f = f > hi ? hi : f;
            out[j] = (uint8_t)(int32_t)f;
        }
    }
}
#endif

/* -------------------------------------------------------------------------
 * Tiles: the sums over k-quads of lane products for r < mr rows of w4
 * and np positions from q0, to the sink; rows past mr read row 0 again and
 * are never stored. A tile of at most MLVM_Q_X0_POS positions (one vector,
 * x0) sums that vector alone: its second sums stay 0 and are never
 * stored. With 256-bit vectors a tile of more positions and at most 4
 * rows sums 4 rows. xs is the group's copy, read at off[t] + q. (The DSP
 * path instead runs one row over 6 positions of halfwords: q_group_rows.)
 * ---------------------------------------------------------------------- */

typedef struct qtile {
    const int32_t *w4; /* the tile's first row */
    mlvm_index_t k;    /* k-quads per row */
    const mlvm_index_t *off;
    const uint8_t *xs; /* the group's copy, lanes of 4 bytes */
#if defined(MLVM_Q_AVX2)
    int64_t *w16; /* workspace for a tile's rows widened to int16 (q_rows) */
    int pairs;    /* the layer's w_pairs: the tiles of byte pairs (q_tile_pairs) */
#endif
} qtile_t;

#if defined(MLVM_Q_ZMM) || defined(MLVM_Q_VNNI) || defined(MLVM_Q_AVX2)
/* The vector tiles' row r: its sums of both halves, and its step (the
 * vector type, the weight's broadcast and the dot product are each ISA's
 * below). Named variables, not arrays: in arrays gcc kept copies of the
 * sums in the loop and spilled them. */
#define MLVM_Q_SUMS(r)                                                                            \
    MLVM_QV a##r = MLVM_QV_ZERO(), b##r = MLVM_QV_ZERO();                                         \
    const int32_t *w##r = MLVM_Q_WROWS(t) + (r < mr ? r : 0) * t->k * MLVM_Q_WORDS
#define MLVM_Q_ROW_STEP(r)                                                                        \
    do {                                                                                          \
        const MLVM_QV wv = MLVM_Q_WEIGHT(w##r, kk);                                               \
        a##r = MLVM_Q_DOT(a##r, x0, wv);                                                          \
        b##r = MLVM_Q_DOT(b##r, x1, wv);                                                          \
    } while (0)
/* (the first half only: b stays 0) */
#define MLVM_Q_HALF_STEP(r) (a##r = MLVM_Q_DOT(a##r, x0, MLVM_Q_WEIGHT(w##r, kk)))
/* A tile's k-loop: each k-quad's positions (X: MLVM_Q_X2 declares x0 and
 * x1 from bk, MLVM_Q_X1 x0 alone, each ISA's below), then ROWS, the steps
 * of the rows it sums (MLVM_Q_ROWS4 / 6 / 8 of a step). */
#define MLVM_Q_K_LOOP(X, ROWS)                                                                    \
    for (kk = 0; kk < t->k; ++kk) {                                                               \
        const int32_t *bk = (const int32_t *)(const void *)(t->xs) + t->off[kk] + q0;             \
        X;                                                                                        \
        ROWS;                                                                                     \
    }
#define MLVM_Q_ROWS4(STEP) STEP(0); STEP(1); STEP(2); STEP(3)
#define MLVM_Q_ROWS6(STEP) MLVM_Q_ROWS4(STEP); STEP(4); STEP(5)
#define MLVM_Q_ROWS8(STEP) MLVM_Q_ROWS6(STEP); STEP(6); STEP(7)
#endif

#if defined(MLVM_Q_ZMM)

/* Channel o's results v[0 .. nv) (16 positions each, from q; masks m),
 * with the channel's constants broadcast once: the bias less the zero
 * point's share is one add (both wrap); finite multipliers take the
 * shorter requantization. */
static inline __attribute__((always_inline)) void
q_finish_zmm(const qsink_t *s, mlvm_index_t o, mlvm_index_t q, __m512i *v, const __mmask16 *m,
             int nv)
{
    const __m512i add = _mm512_set1_epi32((int32_t)q_base(s, o)); /* (int32 sinks have no bias) */
    const __m512 mult = _mm512_set1_ps(s->requant ? q_mult(s, o) : 0.0f);
    int i;
    for (i = 0; i < nv; ++i) {
        const mlvm_index_t at = o * s->ld + (q + 16 * i - s->q0);
        __m512i r = _mm512_add_epi32(v[i], add);
        if (s->zwp != NULL)
            r = _mm512_sub_epi32(r, _mm512_mullo_epi32(_mm512_set1_epi32(s->zwp[o]),
                                                       _mm512_maskz_loadu_epi32(m[i], s->colx + q + 16 * i)));
        if (!s->requant)
            _mm512_mask_storeu_epi32((int32_t *)s->out + at, m[i], r);
        else if (s->finite)
            _mm512_mask_cvtepi32_storeu_epi8(
                (uint8_t *)s->out + at, m[i],
                mlvm_requant512_finite(r, mult, _mm512_set1_epi32((int32_t)s->zy),
                                       _mm512_set1_ps(s->lo - s->zy), _mm512_set1_ps(s->hi - s->zy)));
        else
            _mm512_mask_cvtepi32_storeu_epi8((uint8_t *)s->out + at, m[i],
                                             mlvm_requant512(r, mult, _mm512_set1_ps(s->zy),
                                                             _mm512_set1_ps(s->lo), _mm512_set1_ps(s->hi)));
    }
}

static void q_finish_run(const qsink_t *s, mlvm_index_t o, mlvm_index_t q, const uint32_t *v,
                         mlvm_index_t n)
{
    mlvm_index_t j;
    for (j = 0; j < n; j += 16) {
        const __mmask16 m = (__mmask16)(n - j >= 16 ? 0xFFFF : (1u << (n - j)) - 1u);
        __m512i x = _mm512_maskz_loadu_epi32(m, v + j);
        q_finish_zmm(s, o, q + j, &x, &m, 1);
    }
}

#define MLVM_QV __m512i
#define MLVM_QV_ZERO _mm512_setzero_si512
#define MLVM_Q_WORDS 1 /* int32 words per k-quad of a weight row */
#define MLVM_Q_WROWS(t) ((t)->w4)
#define MLVM_Q_WEIGHT(w, kk) _mm512_set1_epi32((w)[kk])
#define MLVM_Q_DOT(acc, x, wv) _mm512_dpbusd_epi32(acc, x, wv)
#define MLVM_Q_X0_POS 16 /* positions of x0 (a tile of no more sums x0 alone) */
#define MLVM_Q_X1 const __m512i x0 = _mm512_loadu_si512((const void *)bk)
#define MLVM_Q_X2 MLVM_Q_X1, x1 = _mm512_loadu_si512((const void *)(bk + 16))

static void q_tile(const qtile_t *t, const qsink_t *s, mlvm_index_t o, mlvm_index_t q0, int mr,
                   int np)
{
    const __mmask16 m[2] = {(__mmask16)(np >= 16 ? 0xFFFF : (1u << np) - 1u),
                            (__mmask16)(np >= 32 ? 0xFFFF : np <= 16 ? 0 : (1u << (np - 16)) - 1u)};
    mlvm_index_t kk;
    int r;
    MLVM_Q_SUMS(0);
    MLVM_Q_SUMS(1);
    MLVM_Q_SUMS(2);
    MLVM_Q_SUMS(3);
    MLVM_Q_SUMS(4);
    MLVM_Q_SUMS(5);
    MLVM_Q_SUMS(6);
    MLVM_Q_SUMS(7);
    if (np <= MLVM_Q_X0_POS) /* x0's positions only (small maps, a map's last tile) */
        MLVM_Q_K_LOOP(MLVM_Q_X1, MLVM_Q_ROWS8(MLVM_Q_HALF_STEP))
    else
        MLVM_Q_K_LOOP(MLVM_Q_X2, MLVM_Q_ROWS8(MLVM_Q_ROW_STEP))
    {
        if (s->requant && s->finite && s->zwp == NULL) {
            /* the common case with its constants in registers, no test
             * per vector (the byte stores would make gcc reload the
             * sink's fields for every row) */
            const __m512i zy = _mm512_set1_epi32((int32_t)s->zy);
            const __m512 lo = _mm512_set1_ps(s->lo - s->zy), hi = _mm512_set1_ps(s->hi - s->zy);
            const int32_t *bias = s->bias;
            const uint32_t *share = s->share;
            const float *mult = s->mult;
            const int per_o = s->mult_per_o;
            uint8_t *dst = (uint8_t *)s->out + o * s->ld + (q0 - s->q0);
            const mlvm_index_t ld = s->ld;
            /* row by row from the named sums (through an array indexed
             * by r, gcc stored every sum and loaded it back); row i's bias
             * less its zero point's share, and its multiplier */
#define MLVM_Q_ROW_ADD(i)                                                                         \
    _mm512_set1_epi32((int32_t)((bias != NULL ? (uint32_t)bias[o + i] : 0u) - share[o + i]))
#define MLVM_Q_ROW_MULT(i) _mm512_set1_ps(mult[per_o ? o + i : 0])
#define MLVM_Q_FINISH_ROW(i)                                                                      \
    do {                                                                                          \
        if (i < mr) {                                                                             \
            const __m512i add = MLVM_Q_ROW_ADD(i);                                                \
            const __m512 mu = MLVM_Q_ROW_MULT(i);                                                 \
            _mm512_mask_cvtepi32_storeu_epi8(                                                     \
                dst + i * ld, m[0],                                                               \
                mlvm_requant512_finite(_mm512_add_epi32(a##i, add), mu, zy, lo, hi));             \
            if (m[1])                                                                             \
                _mm512_mask_cvtepi32_storeu_epi8(                                                 \
                    dst + i * ld + 16, m[1],                                                      \
                    mlvm_requant512_finite(_mm512_add_epi32(b##i, add), mu, zy, lo, hi));         \
        }                                                                                         \
    } while (0)
#if defined(__AVX512BW__)
            if (s->packs && m[1] && mr == MLVM_Q_MR) {
                /* rows two at a time (their 64 sums to bytes at once,
                 * requant.h), each row's 32 bytes by one store */
                const __m512i zy16 = _mm512_set1_epi16((int16_t)s->zy);
                const __m512i lo8 = _mm512_set1_epi8((char)(int32_t)s->lo);
                const __m512i hi8 = _mm512_set1_epi8((char)(int32_t)s->hi);
                const __mmask64 m32 = (__mmask64)m[0] | (__mmask64)m[1] << 16; /* a row's 32 bytes */
                const int y_signed = s->y_signed;
#define MLVM_Q_FINISH_PAIR(i, j)                                                                  \
    do {                                                                                          \
        const __m512i ai = MLVM_Q_ROW_ADD(i), aj = MLVM_Q_ROW_ADD(j);                             \
        const __m512 mi = MLVM_Q_ROW_MULT(i), mj = MLVM_Q_ROW_MULT(j);                             \
        const __m512i y = mlvm_requant512_bytes(_mm512_add_epi32(a##i, ai), _mm512_add_epi32(b##i, ai), \
                                                _mm512_add_epi32(a##j, aj), _mm512_add_epi32(b##j, aj), \
                                                mi, mi, mj, mj, zy16, lo8, hi8, y_signed);        \
        _mm512_mask_storeu_epi8(dst + i * ld, m32, y);                                            \
        _mm512_mask_storeu_epi8(dst + j * ld, m32, _mm512_shuffle_i64x2(y, y, 0xEE));             \
    } while (0)
                MLVM_Q_FINISH_PAIR(0, 1);
                MLVM_Q_FINISH_PAIR(2, 3);
                MLVM_Q_FINISH_PAIR(4, 5);
                MLVM_Q_FINISH_PAIR(6, 7);
#undef MLVM_Q_FINISH_PAIR
                return;
            }
#endif
            MLVM_Q_FINISH_ROW(0);
            MLVM_Q_FINISH_ROW(1);
            MLVM_Q_FINISH_ROW(2);
            MLVM_Q_FINISH_ROW(3);
            MLVM_Q_FINISH_ROW(4);
            MLVM_Q_FINISH_ROW(5);
            MLVM_Q_FINISH_ROW(6);
            MLVM_Q_FINISH_ROW(7);
#undef MLVM_Q_FINISH_ROW
#undef MLVM_Q_ROW_MULT
#undef MLVM_Q_ROW_ADD
            return;
        }
        {
            __m512i v[2 * MLVM_Q_MR];
            v[0] = a0, v[1] = b0, v[2] = a1, v[3] = b1, v[4] = a2, v[5] = b2, v[6] = a3, v[7] = b3;
            v[8] = a4, v[9] = b4, v[10] = a5, v[11] = b5, v[12] = a6, v[13] = b6, v[14] = a7;
            v[15] = b7;
            for (r = 0; r < mr; ++r)
                q_finish_zmm(s, o + r, q0, v + 2 * r, m, m[1] ? 2 : 1);
        }
    }
}

#elif defined(MLVM_Q_VNNI) || defined(MLVM_Q_AVX2)

#if defined(MLVM_Q_VNNI)
/* lanes of 8 positions; each sum lane is a position's sum */
#define MLVM_Q_X1 const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)bk)
#define MLVM_Q_X2 MLVM_Q_X1, x1 = _mm256_loadu_si256((const __m256i *)(const void *)(bk + 8))
#define MLVM_Q_X0_POS 8 /* positions of x0 (a tile of no more sums x0 alone) */
#define MLVM_Q_WORDS 1
#define MLVM_Q_WROWS(t) ((t)->w4)
#define MLVM_Q_WEIGHT(w, kk) _mm256_set1_epi32((w)[kk])
#define MLVM_Q_DOT(acc, x, wv) _mm256_dpbusd_avx_epi32(acc, x, wv)
#else
/* Two tiles, `pairs` (a constant in each, q_tile_at) choosing. Bytes
 * widened to int16: a sum lane holds half a position's sum (two
 * channels), two lanes per position; vpmaddwd's pair sums are exact. The
 * weight quads are widened once per block of rows (q_rows), so that a
 * step broadcasts each from memory (a load, no shuffle: widened per step,
 * the shuffles had been the tile's bottleneck). Or, where the layer's
 * weights allow it (w_pairs: no two of a row past [-128, 128] on one side,
 * so that two products of bytes fit 16 bits), the bytes themselves in
 * AVX-VNNI's lanes: vpmaddubsw's pair sums, exact there, then vpmaddwd by
 * ones, as vpdpbusd would sum them (3 instructions per 32 multiply-adds
 * where widened bytes take 4, and a shuffle per 16 bytes). */
#define MLVM_Q_X1                                                                                 \
    const __m256i x0 = pairs ? _mm256_loadu_si256((const __m256i *)(const void *)bk)              \
                             : _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)bk))
#define MLVM_Q_X2                                                                                 \
    MLVM_Q_X1,                                                                                    \
        x1 = pairs ? _mm256_loadu_si256((const __m256i *)(const void *)(bk + 8))                  \
                   : _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(bk + 4)))
#define MLVM_Q_X0_POS (pairs ? 8 : 4) /* positions of x0 */
#define MLVM_Q_WORDS (pairs ? 1 : 2)  /* the widened quads are two words */
#define MLVM_Q_WROWS(t) (pairs ? (t)->w4 : (const int32_t *)(const void *)(t)->w16)
#define MLVM_Q_WEIGHT(w, kk)                                                                      \
    (pairs ? _mm256_set1_epi32((w)[kk])                                                           \
           : _mm256_broadcastq_epi64(_mm_loadl_epi64((const __m128i *)(const void *)((w) + 2 * (kk)))))
#define MLVM_Q_DOT(acc, x, wv)                                                                    \
    _mm256_add_epi32(acc, pairs ? _mm256_madd_epi16(_mm256_maddubs_epi16(x, wv), _mm256_set1_epi16(1)) \
                                : _mm256_madd_epi16(x, wv))
#endif
#define MLVM_QV __m256i
#define MLVM_QV_ZERO _mm256_setzero_si256


/* The low 8 bytes of b at dst, n <= 8 of them (a short tile's through a
 * buffer: no store past its end). */
static void q_store8(uint8_t *dst, __m128i b, int n)
{
    uint8_t tmp[16];
    _mm_storel_epi64((__m128i *)(void *)(n == 8 ? dst : tmp), b);
    if (n < 8)
        memcpy(dst, tmp, (size_t)n);
}

/* Eight results from flat position q (np of them real). colx has slack
 * past its n positions, so a short tile reads it whole. */
static void q_finish_ymm(const qsink_t *s, mlvm_index_t o, mlvm_index_t q, __m256i v, int np)
{
    const __m256 zy = _mm256_set1_ps(s->zy);
    v = _mm256_sub_epi32(v, _mm256_set1_epi32((int32_t)s->share[o]));
    if (s->zwp != NULL)
        v = _mm256_sub_epi32(v, _mm256_mullo_epi32(
            _mm256_set1_epi32(s->zwp[o]),
            _mm256_loadu_si256((const __m256i *)(const void *)(s->colx + q))));
    if (!s->requant) {
        int32_t *dst = (int32_t *)s->out + o * s->ld + (q - s->q0), tmp[8];
        _mm256_storeu_si256((__m256i *)(void *)(np == 8 ? dst : tmp), v);
        if (np < 8) /* a short tile's results through a buffer */
            memcpy(dst, tmp, (size_t)np * sizeof *dst);
        return;
    }
    if (s->bias != NULL)
        v = _mm256_add_epi32(v, _mm256_set1_epi32(s->bias[o]));
    v = mlvm_requant256(v, _mm256_set1_ps(q_mult(s, o)), zy,
                        _mm256_set1_ps(s->lo), _mm256_set1_ps(s->hi));
    q_store8((uint8_t *)s->out + o * s->ld + (q - s->q0), mlvm_low_bytes256(v), np);
}

/* The tile's rows in the common case (requantized, finite multipliers,
 * weight zero points 0) with the constants in registers, no test per
 * vector: v[2 r] (and v[2 r + 1] with VNNI's and AVX2's byte pairs' 16
 * positions) is row r's. */
static void q_finish_rows_ymm(const qsink_t *s, mlvm_index_t o, mlvm_index_t q0, const __m256i *v,
                              int mr, int np)
{
    const __m256i zy = _mm256_set1_epi32((int32_t)s->zy);
    const __m256 lo = _mm256_set1_ps(s->lo - s->zy), hi = _mm256_set1_ps(s->hi - s->zy);
    const int32_t *bias = s->bias;
    const uint32_t *share = s->share;
    const float *mult = s->mult;
    const int per_o = s->mult_per_o, nv = np > 8 ? 2 : 1;
    const mlvm_index_t ld = s->ld;
    uint8_t *dst = (uint8_t *)s->out + o * ld + (q0 - s->q0);
    int r, i;
    for (r = 0; r < mr; ++r, dst += ld) {
        const __m256i add = _mm256_set1_epi32(
            (int32_t)((bias != NULL ? (uint32_t)bias[o + r] : 0u) - share[o + r]));
        const __m256 mu = _mm256_set1_ps(mult[per_o ? o + r : 0]);
        if (np == 16) { /* (a whole tile of byte pairs) */
            _mm_storeu_si128((__m128i *)(void *)dst,
                             mlvm_low_bytes256x2(
                                 mlvm_requant256_finite(_mm256_add_epi32(v[2 * r], add), mu, zy, lo, hi),
                                 mlvm_requant256_finite(_mm256_add_epi32(v[2 * r + 1], add), mu, zy, lo, hi)));
            continue;
        }
        for (i = 0; i < nv; ++i) {
            const int n = np - 8 * i < 8 ? np - 8 * i : 8;
            q_store8(dst + 8 * i, mlvm_low_bytes256(mlvm_requant256_finite(
                         _mm256_add_epi32(v[2 * r + i], add), mu, zy, lo, hi)), n);
        }
    }
}

static void q_finish_run(const qsink_t *s, mlvm_index_t o, mlvm_index_t q, const uint32_t *v,
                         mlvm_index_t n)
{
    mlvm_index_t j;
    for (j = 0; j + 8 <= n; j += 8)
        q_finish_ymm(s, o, q + j, _mm256_loadu_si256((const __m256i *)(const void *)(v + j)), 8);
    if (j < n)
        q_finish_scalar(s, o, q + j, v + j, n - j);
}

static inline __attribute__((always_inline)) void q_tile_at(const qtile_t *t, const qsink_t *s,
                                                            mlvm_index_t o, mlvm_index_t q0,
                                                            int mr, int np, const int pairs)
{
    mlvm_index_t kk;
    int r;
    MLVM_Q_SUMS(0);
    MLVM_Q_SUMS(1);
    MLVM_Q_SUMS(2);
    MLVM_Q_SUMS(3);
    MLVM_Q_SUMS(4);
    MLVM_Q_SUMS(5);
    (void)pairs; /* (AVX-VNNI: its one form) */
    if (np <= MLVM_Q_X0_POS) /* x0's positions only: no second half to sum */
        MLVM_Q_K_LOOP(MLVM_Q_X1, MLVM_Q_ROWS6(MLVM_Q_HALF_STEP))
    else if (mr <= 4) /* a group's last rows (8, 16 outputs: 6 + 2, 6 + 6 + 4) */
        MLVM_Q_K_LOOP(MLVM_Q_X2, MLVM_Q_ROWS4(MLVM_Q_ROW_STEP))
    else
        MLVM_Q_K_LOOP(MLVM_Q_X2, MLVM_Q_ROWS6(MLVM_Q_ROW_STEP))
    {
        __m256i v[2 * MLVM_Q_MR];
        v[0] = a0, v[1] = b0, v[2] = a1, v[3] = b1, v[4] = a2, v[5] = b2;
        v[6] = a3, v[7] = b3, v[8] = a4, v[9] = b4, v[10] = a5, v[11] = b5;
#if !defined(MLVM_Q_VNNI)
        if (!pairs) /* pair sums (p0 p1 p4 p5 | p2 p3 p6 p7), in position order */
            for (r = 0; r < mr; ++r)
                v[2 * r] = _mm256_permute4x64_epi64(_mm256_hadd_epi32(v[2 * r], v[2 * r + 1]), 0xD8);
#endif
        if (s->requant && s->finite && s->zwp == NULL) {
            q_finish_rows_ymm(s, o, q0, v, mr, np);
            return;
        }
        for (r = 0; r < mr; ++r) {
            q_finish_ymm(s, o + r, q0, v[2 * r], np < 8 ? np : 8);
            if (np > 8) /* (16 positions: AVX-VNNI's lanes, AVX2's byte pairs) */
                q_finish_ymm(s, o + r, q0 + 8, v[2 * r + 1], np - 8);
        }
    }
}

static void q_tile(const qtile_t *t, const qsink_t *s, mlvm_index_t o, mlvm_index_t q0, int mr,
                   int np)
{
    q_tile_at(t, s, o, q0, mr, np, 0);
}

#if defined(MLVM_Q_AVX2)
#define MLVM_Q_NR_PAIRS 16 /* positions of a tile of byte pairs */
static void q_tile_pairs(const qtile_t *t, const qsink_t *s, mlvm_index_t o, mlvm_index_t q0,
                         int mr, int np)
{
    q_tile_at(t, s, o, q0, mr, np, 1);
}
#endif

#elif defined(MLVM_Q_DSP)

/* Cortex-M4 and up. A chunk of MLVM_Q_POS (6) positions is first widened
 * into halfwords (q_halves: a lane's four bytes as UXTB16 of it and of it
 * rotated by 8, once per chunk rather than once per tile row), then each
 * output channel multiplies its lanes (SXTB16 twice) by the chunk's
 * positions: one weight word, three LDM of four words and 12 SMLAD per
 * lane, the 6 sums in registers (q_tile6). Six, not eight: with six sums
 * four registers are left for the halves, which LDM then loads two
 * positions at a time (18 instructions per 24 multiply-adds, where eight
 * sums and LDRD took 27 per 32). */
#define MLVM_Q_POS 6

/* q_halves across a row's end: each position from its own start, a lane
 * of all six at a time (34 instructions a lane where position by position
 * took 60). */
static void q_halves_apart(const qtile_t *t, const mlvm_index_t *qs, uint32_t *b)
{
    const mlvm_index_t *off = t->off, *const end = off + t->k;
    const uint8_t *const s0 = t->xs + qs[0] * 4, *const s1 = t->xs + qs[1] * 4;
    const uint8_t *const s2 = t->xs + qs[2] * 4, *const s3 = t->xs + qs[3] * 4;
    const uint8_t *const s4 = t->xs + qs[4] * 4, *const s5 = t->xs + qs[5] * 4;
#define MLVM_Q_HALF_AT(j, sj)                                                  \
    do {                                                                       \
        uint32_t v;                                                            \
        memcpy(&v, sj + o, 4);                                                 \
        b[2 * (j)] = __uxtb16(v), b[2 * (j) + 1] = q_uxtb16_8(v);              \
    } while (0)
    for (; off != end; ++off, b += 2 * MLVM_Q_POS) {
        const mlvm_index_t o = *off * 4;
        MLVM_Q_HALF_AT(0, s0);
        MLVM_Q_HALF_AT(1, s1);
        MLVM_Q_HALF_AT(2, s2);
        MLVM_Q_HALF_AT(3, s3);
        MLVM_Q_HALF_AT(4, s4);
        MLVM_Q_HALF_AT(5, s5);
    }
#undef MLVM_Q_HALF_AT
}

/* The positions of a chunk (flat positions qs[0 .. 6) of the copy,
 * consecutive when `run`), lane by lane ([lane][position][2 words], 48 k
 * bytes): lane words (c0, c2) and (c1, c3) as halfwords, in the order
 * SXTB16 and SXTB16 ROR 8 split the weights' lanes. Positions past the
 * plane read the copy's slack; their sums are never stored. */
static void q_halves(const qtile_t *t, const mlvm_index_t *qs, int run, uint32_t *hw)
{
    const mlvm_index_t *off = t->off, *const end = off + t->k;
    uint32_t *b = hw;
    if (run) {
#if defined(__GNUC__) && defined(__OPTIMIZE__)
        /* a lane's 6 words by an LDM and an LDRD, its 12 halfword pairs by three
         * STMs around the 12 UXTB16: 17 instructions where gcc's 6 loads,
         * 12 UXTB16 and 12 stores took 30. The copy and hw are
         * word-aligned (a 64-byte aligned workspace): LDM / STM require
         * it. Six registers (each pair's halves over the words it has
         * read): with eight, gcc found too few left beside a frame pointer
         * (the M55 at -Og, with the lanes across a row's end inlined
         * beside it). Not at -O0, where gcc cannot spare them. */
#define MLVM_Q_HALVES2(a, b)                                                   \
    "uxtb16 r0, " a "\n\tuxtb16 r1, " a ", ror #8\n\tuxtb16 r2, " b "\n\tuxtb16 r3, " b ", ror #8\n\t" \
    "stmia %[b]!, {r0, r1, r2, r3}\n\t"
        for (; off != end; ++off) {
            const uint32_t *src = (const uint32_t *)(const void *)(t->xs + (*off + qs[0]) * 4);
            uint32_t *const dst = b;
            __asm__("ldmia %[s], {r2, r3, r4, r5}\n\t" MLVM_Q_HALVES2("r2", "r3")
                    MLVM_Q_HALVES2("r4", "r5") "ldrd r4, r5, [%[s], #16]\n\t"
                    MLVM_Q_HALVES2("r4", "r5")
                    : [b] "+r"(b), "=m"(*(uint32_t(*)[12])dst)
                    : [s] "r"(src), "m"(*(const uint32_t(*)[6])src)
                    : "r0", "r1", "r2", "r3", "r4", "r5");
        }
#undef MLVM_Q_HALVES2
        return;
#endif
        /* without GNU C's asm or optimization: the same in C, unrolled */
#define MLVM_Q_HALF(b, j, v) ((b)[2 * (j)] = __uxtb16(v), (b)[2 * (j) + 1] = q_uxtb16_8(v))
        for (; off != end; ++off, b += 2 * MLVM_Q_POS) {
            const uint8_t *src = t->xs + (*off + qs[0]) * 4;
            uint32_t v0, v1, v2;
            memcpy(&v0, src, 4), memcpy(&v1, src + 4, 4), memcpy(&v2, src + 8, 4);
            MLVM_Q_HALF(b, 0, v0), MLVM_Q_HALF(b, 1, v1), MLVM_Q_HALF(b, 2, v2);
            memcpy(&v0, src + 12, 4), memcpy(&v1, src + 16, 4), memcpy(&v2, src + 20, 4);
            MLVM_Q_HALF(b, 3, v0), MLVM_Q_HALF(b, 4, v1), MLVM_Q_HALF(b, 5, v2);
        }
#undef MLVM_Q_HALF
        return;
    }
    q_halves_apart(t, qs, b);
}

/* The sums of one row's lanes w .. w_end times the 6 positions of a
 * chunk (q_halves' layout), from c[0] (the sums' start) into c[0 .. 6):
 * 6 sums in registers, one weight word and two SXTB16 per 12
 * multiply-adds. */
#if defined(__GNUC__)
/* In assembly (a naked function: its own prologue): gcc's allocation
 * spilled sums to the stack once the lanes were unrolled, and it cannot
 * give inline asm the 14 registers it needs where r7 is kept as the frame
 * pointer. r4-r9 hold the sums, r0 and r2 the pointers, r1 and r3 a lane's
 * weights, r10-r12 and lr two positions' halves at a time; w_end and c on
 * the stack. Eight lanes a step, the first step entered part way (TBH:
 * the last lane starts 520 bytes on, past TBB's reach) when the lanes are
 * not a multiple of eight: 18 instructions a lane and 3 a step. The
 * table's offsets are the assembler's (label differences). The 44 bytes pushed
 * leave sp 4 mod 8: harmless in a leaf that calls nothing. The stack table
 * counts the pushes (GCC gives a naked function no frame). */
#define MLVM_Q_ACC2(ca, cb)                                                    \
    "ldmia r2!, {r10, r11, r12, lr}\n\t"                                      \
    "smlad " ca ", r10, r3, " ca "\n\t"                                       \
    "smlad " ca ", r11, r1, " ca "\n\t"                                       \
    "smlad " cb ", r12, r3, " cb "\n\t"                                       \
    "smlad " cb ", lr, r1, " cb "\n\t"
#define MLVM_Q_LANE                                                            \
    "ldr r1, [r0], #4\n\t"                                                    \
    "sxtb16 r3, r1\n\t"                                                       \
    "sxtb16 r1, r1, ror #8\n\t"                                               \
    MLVM_Q_ACC2("r4", "r5") MLVM_Q_ACC2("r6", "r7") MLVM_Q_ACC2("r8", "r9")
__attribute__((naked, noinline)) static void
q_tile6(const int32_t *w __attribute__((unused)), const int32_t *w_end __attribute__((unused)),
        const uint32_t *xb __attribute__((unused)), uint32_t *c __attribute__((unused)))
{
    __asm__("push {r1, r3, r4-r11, lr}\n\t"
            "ldr r4, [r3]\n\t"
            "mov r5, r4\n\tmov r6, r4\n\tmov r7, r4\n\tmov r8, r4\n\tmov r9, r4\n\t"
            "cmp r0, r1\n\t"
            "beq 9f\n\t"
            "sub r12, r1, r0\n\t"
            "ubfx r12, r12, #2, #3\n\t" /* lanes % 8 */
            "tbh [pc, r12, lsl #1]\n"
            "0:\n\t"
            ".hword (1f - 0b) / 2, (8f - 0b) / 2, (7f - 0b) / 2, (6f - 0b) / 2\n\t"
            ".hword (5f - 0b) / 2, (4f - 0b) / 2, (3f - 0b) / 2, (2f - 0b) / 2\n"
            "1:\n\t" MLVM_Q_LANE "\n"
            "2:\n\t" MLVM_Q_LANE "\n"
            "3:\n\t" MLVM_Q_LANE "\n"
            "4:\n\t" MLVM_Q_LANE "\n"
            "5:\n\t" MLVM_Q_LANE "\n"
            "6:\n\t" MLVM_Q_LANE "\n"
            "7:\n\t" MLVM_Q_LANE "\n"
            "8:\n\t" MLVM_Q_LANE
            "ldr r12, [sp]\n\t"
            "cmp r0, r12\n\t"
            "bne 1b\n"
            "9:\n\t"
            "ldr r3, [sp, #4]\n\t"
            "stmia r3, {r4-r9}\n\t"
            "pop {r1, r3, r4-r11, pc}");
}
#undef MLVM_Q_LANE
#undef MLVM_Q_ACC2
#else
static void q_tile6(const int32_t *w, const int32_t *const w_end, const uint32_t *xb, uint32_t *c)
{
    const int32_t init = (int32_t)c[0];
    int32_t c0 = init, c1 = init, c2 = init, c3 = init, c4 = init, c5 = init;
    while (w != w_end) {
        const int32_t a = *w++;
        const int32_t al = (int32_t)__sxtb16(a), ah = q_sxtb16_8(a);
#define MLVM_Q_POS1(cj) (cj = __smlad((int32_t)xb[0], al, __smlad((int32_t)xb[1], ah, cj)), xb += 2)
        MLVM_Q_POS1(c0);
        MLVM_Q_POS1(c1);
        MLVM_Q_POS1(c2);
        MLVM_Q_POS1(c3);
        MLVM_Q_POS1(c4);
        MLVM_Q_POS1(c5);
#undef MLVM_Q_POS1
    }
    c[0] = (uint32_t)c0, c[1] = (uint32_t)c1, c[2] = (uint32_t)c2, c[3] = (uint32_t)c3;
    c[4] = (uint32_t)c4, c[5] = (uint32_t)c5;
}
#endif

/* Every row of a group (t->w4 its first), chunk by chunk of 6 of its
 * oh x ow output positions (the copy's columns past ow are skipped): the
 * windows' sums first where a weight zero point needs them (the row of
 * ones into sx), then each row's sums finished, at the positions' own
 * index (s and sx compact). hw: 48 k bytes. */
static void q_group_rows(const qtile_t *t, const qsink_t *s, const qsink_t *sx,
                         const int32_t *ones, mlvm_index_t og, mlvm_index_t oh, mlvm_index_t ow,
                         mlvm_index_t wq, uint32_t *hw)
{
#ifdef MLVM_Q_VCVTR
    /* the sink's fields in a local copy: the byte stores cannot alias it
     * (gcc reloads them from *s after each store otherwise) */
    const qsink_t sk = *s;
    const int fast = sk.requant && sk.zwp == NULL;
#endif
    uint32_t v[MLVM_Q_POS];
    mlvm_index_t qs[MLVM_Q_POS], p0, o;
    for (p0 = 0; p0 < oh * ow; p0 += MLVM_Q_POS) {
        const mlvm_index_t len = mlvm_imin(MLVM_Q_POS, oh * ow - p0), y = p0 / ow, x = p0 % ow;
        const int run = wq == ow || x + MLVM_Q_POS <= ow;
        qs[0] = y * wq + x;
        if (!run) {
            mlvm_index_t j, yy = y, xx = x;
            for (j = 1; j < MLVM_Q_POS; ++j) { /* past the last position: it again */
                if (j < len && ++xx == ow)
                    xx = 0, ++yy;
                qs[j] = yy * wq + xx;
            }
        }
        q_halves(t, qs, run, hw);
        if (sx != NULL) {
            v[0] = 0;
            q_tile6(ones, ones + t->k, hw, v);
            q_finish_scalar(sx, 0, p0, v, len);
        }
#ifdef MLVM_Q_VCVTR
        if (fast) {
            /* the common case: requantized without a call, the sums started
             * from the bias less the zero point's share; every row's
             * pointers stepped, and a whole chunk's 6 results in straight
             * code (gcc unrolls the constant count) */
            const int32_t *w = t->w4;
            const float *mult = sk.mult;
            uint8_t *out = (uint8_t *)sk.out + p0;
#define MLVM_Q_ROWS(n)                                                         \
    for (o = 0; o < og; ++o, w += t->k, mult += sk.mult_per_o, out += sk.ld) { \
        v[0] = q_base(&sk, o);                                                 \
        q_tile6(w, w + t->k, hw, v);                                           \
        q_requant_run(out, v, n, 0u, *mult, NULL, 0u, &sk, 1);                 \
    }
            if (len == MLVM_Q_POS && sk.clamp == 0 && sk.zyi == 0 && sk.bias != NULL)
                MLVM_Q_ROWS(MLVM_Q_POS) /* ReLU's u8 with a bias: no test left per row */
            else if (len == MLVM_Q_POS)
                MLVM_Q_ROWS(MLVM_Q_POS)
            else
                MLVM_Q_ROWS(len)
#undef MLVM_Q_ROWS
            continue;
        }
#endif
        for (o = 0; o < og; ++o) {
            const int32_t *w = t->w4 + o * t->k;
            v[0] = 0;
            q_tile6(w, w + t->k, hw, v);
            q_finish_scalar(s, o, p0, v, len);
        }
    }
}

#define q_finish_run q_finish_scalar

#else /* portable C99 */

#define q_finish_run q_finish_scalar

static int32_t q_dot4(uint32_t x, int32_t w)
{
    /* four u8 x s8 products of the lanes' bytes (x little end first) */
    const uint32_t u = (uint32_t)w;
    return (int32_t)(x & 0xFF) * (int8_t)(u & 0xFF) + (int32_t)((x >> 8) & 0xFF) * (int8_t)((u >> 8) & 0xFF)
           + (int32_t)((x >> 16) & 0xFF) * (int8_t)((u >> 16) & 0xFF)
           + (int32_t)(x >> 24) * (int8_t)(u >> 24);
}

static void q_tile(const qtile_t *t, const qsink_t *s, mlvm_index_t o, mlvm_index_t q0, int mr,
                   int np)
{
    uint32_t c[MLVM_Q_MR][MLVM_Q_NR];
    const int32_t *w[MLVM_Q_MR];
    mlvm_index_t kk;
    int r, j;
    for (r = 0; r < MLVM_Q_MR; ++r) {
        w[r] = t->w4 + (r < mr ? r : 0) * t->k;
        for (j = 0; j < MLVM_Q_NR; ++j)
            c[r][j] = 0;
    }
    for (kk = 0; kk < t->k; ++kk) {
        const uint8_t *bk = t->xs + (t->off[kk] + q0) * 4;
        uint32_t b[MLVM_Q_NR];
        for (j = 0; j < MLVM_Q_NR; ++j)
            b[j] = (uint32_t)bk[4 * j] | (uint32_t)bk[4 * j + 1] << 8 | (uint32_t)bk[4 * j + 2] << 16
                   | (uint32_t)bk[4 * j + 3] << 24;
        for (r = 0; r < MLVM_Q_MR; ++r)
            for (j = 0; j < MLVM_Q_NR; ++j)
                c[r][j] += (uint32_t)q_dot4(b[j], w[r][kk]);
    }
    for (r = 0; r < mr; ++r)
        q_finish_scalar(s, o + r, q0, c[r], np);
}

#endif

/* Compacts rows of pitch wq in ws to out's pitch ow (elements of `size`
 * bytes). A short row (a keyword spotter's 5 columns) goes as one copy of
 * a fixed width up to twice its size, in order: the excess lands on the
 * next row, copied after it (the last row exactly), and the read stays in
 * the next source row. */
#if defined(MLVM_Q_ZMM) && defined(__AVX512VBMI__) && defined(__AVX512BW__)
#define MLVM_Q_ROWS_PERM 8 /* blocks of 64 output bytes per channel, at most */
/* q_rows_out for rows of up to 8 bytes, 64 output bytes at a time: one
 * vpermt2b gathers them from the 128 bytes of the copy they lie in, with
 * indices built once per call (where every block's rows fit in 128
 * bytes). A keyword spotter's first layer has rows of 5 bytes: a copy per
 * row had cost 8 % of its int8 inference. 0 where it does not apply. */
static int q_rows_out_perm(const mlvm_qconv2d_t *p, const qgeom_t *g, mlvm_index_t og,
                           const uint8_t *src, uint8_t *out)
{
    const mlvm_index_t ow = p->ow, wq = g->ph.wq, hw = p->oh * ow, nb = (hw + 63) / 64;
    const uint8_t *end = src + og * g->ph.n; /* the copy's rows: no read past them */
    __m512i idx[MLVM_Q_ROWS_PERM];
    mlvm_index_t base[MLVM_Q_ROWS_PERM], b, i, o, r = 0, c = 0;
    /* rows of 16 bytes or more copy as fast one by one */
    if (nb > MLVM_Q_ROWS_PERM || ow <= 0 || ow > 8)
        return 0;
    for (b = 0; b < nb; ++b) { /* (r, c): output byte 64 b + i's row and column */
        uint8_t ix[64];
        base[b] = r * wq + c;
        for (i = 0; i < 64; ++i) {
            const mlvm_index_t at = r * wq + c - base[b];
            if (at > 127)
                return 0;
            ix[i] = (uint8_t)at;
            if (64 * b + i + 1 < hw && ++c == ow) /* past the plane: its last byte again */
                c = 0, ++r;
        }
        idx[b] = _mm512_loadu_si512((const void *)ix);
    }
    for (o = 0; o < og; ++o)
        for (b = 0; b < nb; ++b) {
            const uint8_t *sb = src + o * g->ph.n + base[b];
            const mlvm_index_t left = end - sb, rest = hw - 64 * b;
            const __mmask64 m0 = left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
            const __mmask64 m1 = left >= 128 ? ~(__mmask64)0 : left <= 64 ? 0
                                 : ((__mmask64)1 << (left - 64)) - 1;
            const __m512i lo = _mm512_maskz_loadu_epi8(m0, sb), hi = _mm512_maskz_loadu_epi8(m1, sb + 64);
            _mm512_mask_storeu_epi8(out + o * hw + 64 * b,
                                    rest >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << rest) - 1,
                                    _mm512_permutex2var_epi8(lo, idx[b], hi));
        }
    return 1;
}
#endif

#if !defined(MLVM_Q_DSP) /* (the DSP path stores compact rows) */
static void q_rows_out(const mlvm_qconv2d_t *p, const qgeom_t *g, mlvm_index_t og, size_t size,
                       const uint8_t *src, uint8_t *out)
{
    const size_t row = (size_t)p->ow * size;
    const size_t wide = row <= 4 ? 4 : row <= 8 ? 8 : row <= 16 ? 16 : row <= 32 ? 32 : 0;
    mlvm_index_t o, r;
    for (o = 0; o < og; ++o)
        for (r = 0; r < p->oh; ++r) {
            uint8_t *d = out + (size_t)(o * p->oh + r) * row;
            const uint8_t *s = src + (size_t)(o * g->ph.n + r * g->ph.wq) * size;
            if (wide == 0 || wide > 2 * row || (o == og - 1 && r == p->oh - 1))
                memcpy(d, s, row);
            else if (wide == 4)
                memcpy(d, s, 4);
            else if (wide == 8)
                memcpy(d, s, 8);
            else if (wide == 16)
                memcpy(d, s, 16);
            else
                memcpy(d, s, 32);
        }
}
#endif

typedef struct qcall {
    const mlvm_qconv2d_t *p;
    const void *x, *w, *zx, *zw;
    const int32_t *bias;     /* requantized results only */
    const float *mult;
    const mlvm_qrequant_t *rq; /* NULL: int32 results */
    const void *zy;
    void *out;
    uint8_t *ws;
} qcall_t;

/* The sink of image n, group gi: the output itself, or the rows at the
 * copy's pitch in ws (where they differ and rows is not NULL). */
static void q_sink(const qcall_t *c, const qgeom_t *g, mlvm_index_t n, mlvm_index_t gi,
                   void *rows, qsink_t *s)
{
    const mlvm_qconv2d_t *p = c->p;
    const mlvm_index_t og = p->o / p->groups, hw = p->oh * p->ow;
    const size_t size = c->rq != NULL ? 1 : 4;
    s->requant = c->rq != NULL;
    s->bias = c->bias != NULL ? c->bias + gi * og : NULL;
    s->mult = c->mult == NULL ? NULL : c->mult + (c->rq->mult_per_o ? gi * og : 0);
    s->out = g->out_bytes && rows != NULL ? rows
             : (uint8_t *)c->out + (size_t)((n * p->o + gi * og) * hw) * size;
    s->ld = g->out_bytes && rows != NULL ? g->ph.n : hw;
    s->q0 = 0;
    if (c->rq != NULL) {
        const mlvm_requant_bounds_t b = mlvm_requant_bounds(c->rq, c->zy);
        s->mult_per_o = c->rq->mult_per_o;
        s->zy = b.zy, s->lo = b.lo, s->hi = b.hi;
#ifdef MLVM_Q_VCVTR /* once per sink, not per finished run */
        s->zyi = (int32_t)b.zy, s->loi = (int32_t)b.lo, s->hii = (int32_t)b.hi;
        s->clamp = s->loi == 0 && s->hii == 255 ? 0 : s->loi == -128 && s->hii == 127 ? 1 : 2;
#endif
#if defined(MLVM_Q_ZMM) || defined(MLVM_Q_VNNI) || defined(MLVM_Q_AVX2) /* only the AVX finishes read it */
        {
            mlvm_index_t o;
            s->finite = 1;
            for (o = 0; o < (s->mult_per_o ? og : 1); ++o)
                s->finite = s->finite && isfinite(s->mult[o]);
#if defined(MLVM_Q_ZMM)
            s->packs = 1, s->y_signed = c->rq->y_signed;
            for (o = 0; o < (s->mult_per_o ? og : 1); ++o)
                s->packs = s->packs && fabsf(s->mult[o]) <= MLVM_REQUANT_PACKS_MAX; /* (NaN: 0) */
#endif
        }
#endif
    }
}

#if !defined(MLVM_Q_DSP)
static void q_sink_done(const qcall_t *c, const qgeom_t *g, mlvm_index_t n, mlvm_index_t gi,
                        const void *rows)
{
    const mlvm_qconv2d_t *p = c->p;
    const mlvm_index_t og = p->o / p->groups, hw = p->oh * p->ow;
    const size_t size = c->rq != NULL ? 1 : 4;
    uint8_t *out;
    if (g->out_bytes == 0)
        return;
    out = (uint8_t *)c->out + (size_t)((n * p->o + gi * og) * hw) * size;
#ifdef MLVM_Q_ROWS_PERM
    if (size == 1 && q_rows_out_perm(p, g, og, (const uint8_t *)rows, out))
        return;
#endif
    q_rows_out(p, g, og, size, (const uint8_t *)rows, out);
}
#endif

#if defined(MLVM_Q_ZMM) || defined(MLVM_Q_VNNI) || defined(MLVM_Q_AVX2)
#if defined(MLVM_Q_AVX2)
/* quads consecutive quads of bytes from w4 as int16 quads at w16, stored
 * and (MLVM_Q_WEIGHT) read by vector intrinsics alone, which may alias
 * anything. */
static void q_widen_rows(const int32_t *w4, mlvm_index_t quads, int64_t *w16)
{
    const uint8_t *b = (const uint8_t *)(const void *)w4;
    uint8_t *d = (uint8_t *)(void *)w16;
    mlvm_index_t i;
    for (i = 0; i + 4 <= quads; i += 4)
        _mm256_storeu_si256((__m256i *)(void *)(d + 8 * i),
                            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(b + 4 * i))));
    for (; i < quads; ++i) {
        int32_t q;
        memcpy(&q, b + 4 * i, 4);
        _mm_storel_epi64((__m128i *)(void *)(d + 8 * i), _mm_cvtepi8_epi16(_mm_cvtsi32_si128(q)));
    }
}
#endif

/* Rows o .. o + mr of the group, tile by tile, each finished in registers. */
static void q_rows(const qtile_t *t, const qsink_t *s, mlvm_index_t o, int mr, mlvm_index_t n)
{
    mlvm_index_t q0;
#if defined(MLVM_Q_AVX2)
    if (t->pairs) {
        for (q0 = 0; q0 < n; q0 += MLVM_Q_NR_PAIRS)
            q_tile_pairs(t, s, o, q0, mr, (int)mlvm_imin(MLVM_Q_NR_PAIRS, n - q0));
        return;
    }
    q_widen_rows(t->w4, mr * t->k, t->w16);
#endif
    for (q0 = 0; q0 < n; q0 += MLVM_Q_NR)
        q_tile(t, s, o, q0, mr, (int)mlvm_imin(MLVM_Q_NR, n - q0));
}
#elif !defined(MLVM_Q_DSP)
/* The same with scalar finishing: the tiles' raw sums of a chunk of
 * positions go to a buffer, finished a row of the chunk per call (a call
 * per tile row would cost more than its few results). */
static void q_rows(const qtile_t *t, const qsink_t *s, mlvm_index_t o, int mr, mlvm_index_t n)
{
    static const uint32_t zero[MLVM_Q_MR] = {0};
    uint32_t raw[MLVM_Q_MR][MLVM_QW_CHUNK];
    qsink_t r;
    mlvm_index_t q0, q;
    int i;
    memset(&r, 0, sizeof r);
    r.share = zero;
    r.ld = MLVM_QW_CHUNK;
    for (q0 = 0; q0 < n; q0 += MLVM_QW_CHUNK) {
        const mlvm_index_t len = mlvm_imin(MLVM_QW_CHUNK, n - q0);
        r.out = raw;
        r.q0 = q0; /* tile results at q land at raw[.][q - q0] */
        for (q = q0; q < q0 + len; q += MLVM_Q_NR)
            q_tile(t, &r, 0, q, mr, (int)mlvm_imin(MLVM_Q_NR, q0 + len - q));
        for (i = 0; i < mr; ++i)
            q_finish_scalar(s, o + i, q0, raw[i], len);
    }
}
#endif

/* What both paths start from: x's bytes made unsigned (flip) and its zero
 * point so, and the workspace's first parts: tap offsets, the copy, the
 * weights' area. */
typedef struct qstart {
    uint8_t flip, zxu;
    mlvm_index_t *off;
    uint8_t *xs, *w;
} qstart_t;

static void q_start(const qcall_t *c, const qgeom_t *g, qstart_t *st)
{
    st->flip = c->p->x_signed ? 0x80 : 0;
    st->zxu = (uint8_t)(*(const uint8_t *)c->zx ^ st->flip);
    st->off = (mlvm_index_t *)(void *)c->ws;
    st->xs = c->ws + g->off_bytes;
    st->w = st->xs + g->in_bytes;
}

MLVM_Q_NOINLINE static void q_gemm_path(const qcall_t *c, const qgeom_t *g)
{
    const mlvm_qconv2d_t *p = c->p;
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups;
    qstart_t st;
    q_start(c, g, &st);
    /* the weights in lanes (the compiler's, or reordered here), then a row
     * of ones, the zero points' shares, the weights' zero points, the
     * windows' sums, the DSP path's halfwords */
    const mlvm_index_t w4_bytes = p->w_lanes ? 0 : p->o * g->k * 4;
    const int32_t *w4 = p->w_lanes ? (const int32_t *)c->w : (const int32_t *)(void *)st.w;
    uint8_t *ones = st.w + w4_bytes;
    uint8_t *tail = st.w + qw_align((size_t)(w4_bytes + g->k * 4));
    uint32_t *share = (uint32_t *)(void *)tail;
    int32_t *zwp = (int32_t *)(void *)(tail + qw_align((size_t)p->o * 4));
    int32_t *colx = (int32_t *)(void *)(tail + 2 * qw_align((size_t)p->o * 4));
#if defined(MLVM_Q_DSP)
    uint32_t *halves = (uint32_t *)(void *)((uint8_t *)colx + qw_align((size_t)(g->ph.n + MLVM_QW_CHUNK) * 4));
#endif
#if defined(MLVM_Q_DSP)
    void *const rows = NULL; /* q_group_rows stores compact rows */
#else
    void *rows = st.w + g->w_bytes;
#endif
    const uint32_t ones_share = (uint32_t)(cg * p->kh * p->kw) * st.zxu;
    qtile_t t;
    qsink_t s, sx;
    mlvm_index_t n, gi;
    /* tap quads: the planar copy, then its im2col in the copy's place */
    uint8_t *planar = st.xs;
    int any_zw;
    mlvm_index_t kk;
    if (!p->w_lanes)
        q_reorder(p, g, c->w, (int32_t *)(void *)st.w);
    any_zw = q_shares(p, g, w4, c->zw, st.zxu, share, zwp);
    if (any_zw)
        q_ones(p, g, ones);
    if (g->taps) {
        mlvm_tap_offsets(&g->win, &g->ph, g->taps, st.off + g->k);
        planar = st.xs + g->in_bytes - qw_align((size_t)(cg * g->ph.phases * g->ph.plane) + MLVM_QW_SLACK);
        for (kk = 0; kk < g->k; ++kk)
            st.off[kk] = kk * g->ph.n;
        memset(st.xs + g->k * g->ph.n * 4, 0, MLVM_QW_SLACK);
        memset(planar + cg * g->ph.phases * g->ph.plane, 0, MLVM_QW_SLACK);
    } else {
        mlvm_tap_offsets(&g->win, &g->ph, g->k, st.off);
        memset(st.xs + g->quads * 4 * g->ph.phases * g->ph.plane, 0, MLVM_QW_SLACK);
    }
    t.off = st.off;
    t.xs = st.xs;
    t.k = g->k;
#if defined(MLVM_Q_AVX2) /* the DSP path's halfwords' place: 48 k bytes, 8 k a row */
    t.w16 = (int64_t *)(void *)((uint8_t *)colx + qw_align((size_t)(g->ph.n + MLVM_QW_CHUNK) * 4));
    t.pairs = p->w_pairs != 0;
#endif
    /* the windows' sums: the row of ones through the same tiles */
    memset(&sx, 0, sizeof sx);
    sx.share = &ones_share;
    sx.out = colx;
    memset(colx + g->ph.n, 0, MLVM_QW_CHUNK * 4);
    for (n = 0; n < p->n; ++n)
        for (gi = 0; gi < p->groups; ++gi) {
            const uint8_t *xn = (const uint8_t *)c->x + n * p->c * p->h * p->w;
            if (g->taps) {
                const mlvm_index_t *toff = st.off + g->k;
                q_copy(p, g, xn, gi * cg, cg, 1, st.flip, st.zxu, planar);
                for (kk = 0; kk < g->k; ++kk) /* taps past the last: any bytes, weight 0 */
                    q_lanes(st.xs + kk * g->ph.n * 4, planar + toff[4 * kk],
                            planar + toff[4 * kk + 1 < g->taps ? 4 * kk + 1 : 0],
                            planar + toff[4 * kk + 2 < g->taps ? 4 * kk + 2 : 0],
                            planar + toff[4 * kk + 3 < g->taps ? 4 * kk + 3 : 0], g->ph.n, 1, 0);
            } else {
                q_copy(p, g, xn, gi * cg, cg, 4, st.flip, st.zxu, st.xs);
            }
            q_sink(c, g, n, gi, rows, &s);
            s.share = share + gi * og;
            s.zwp = any_zw ? zwp + gi * og : NULL;
            s.colx = colx;
#if defined(MLVM_Q_DSP)
            t.w4 = w4 + gi * og * g->k;
            q_group_rows(&t, &s, any_zw ? &sx : NULL, (const int32_t *)(const void *)ones, og,
                         p->oh, p->ow, g->ph.wq, halves);
#else
            mlvm_index_t o;
            if (any_zw) {
                t.w4 = (const int32_t *)(const void *)ones;
                q_rows(&t, &sx, 0, 1, g->ph.n);
            }
            for (o = 0; o < og; o += MLVM_Q_MR) {
                t.w4 = w4 + (gi * og + o) * g->k;
                q_rows(&t, &s, o, (int)mlvm_imin(MLVM_Q_MR, og - o), g->ph.n);
            }
            q_sink_done(c, g, n, gi, rows);
#endif
        }
}

/* dst[j] = sum_t wt[t] xs[off[t] + j] for one chunk of positions (the
 * zero point's share is the sink's): all of it with vectors, the first len
 * (rounded up to 4) on the DSP path. With vectors, taps go in pairs: bytes
 * of two taps widened into the two 16-bit halves of a lane, times the pair
 * of weights (|wt| <= 255), summed exactly by one vpmaddwd. */
#if !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX512BW__)
#define MLVM_QT_V __m512i
#define MLVM_QT_LANES 16
#define MLVM_QT_ZERO _mm512_setzero_si512
#define MLVM_QT_SET1 _mm512_set1_epi32
#define MLVM_QT_WIDEN(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define MLVM_QT_PAIR(a, b) _mm512_or_si512(a, _mm512_slli_epi32(b, 16))
#define MLVM_QT_MADD(acc, v, w) _mm512_add_epi32(acc, _mm512_madd_epi16(v, w))
#define MLVM_QT_STORE(p, v) _mm512_storeu_si512((void *)(p), v)
#elif !defined(MLVM_PORTABLE_KERNELS) && defined(__AVX2__)
#define MLVM_QT_V __m256i
#define MLVM_QT_LANES 8
#define MLVM_QT_ZERO _mm256_setzero_si256
#define MLVM_QT_SET1 _mm256_set1_epi32
#define MLVM_QT_WIDEN(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
#define MLVM_QT_PAIR(a, b) _mm256_or_si256(a, _mm256_slli_epi32(b, 16))
#define MLVM_QT_MADD(acc, v, w) _mm256_add_epi32(acc, _mm256_madd_epi16(v, w))
#define MLVM_QT_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#endif

#ifdef MLVM_QT_V
#define MLVM_QT_N (MLVM_QW_CHUNK / MLVM_QT_LANES)
static void q_taps_chunk(mlvm_index_t k, const mlvm_index_t *off, const uint8_t *xs,
                         const int32_t *wt, uint32_t *dst, mlvm_index_t len)
{
    (void)len; /* whole vectors */
    MLVM_QT_V acc[MLVM_QT_N];
    mlvm_index_t t;
    int v;
    for (v = 0; v < MLVM_QT_N; ++v)
        acc[v] = MLVM_QT_ZERO();
    for (t = 0; t < k; t += 2) {
        const int two = t + 1 < k;
        const uint8_t *x0 = xs + off[t], *x1 = two ? xs + off[t + 1] : x0;
        const MLVM_QT_V w = MLVM_QT_SET1((int32_t)((uint32_t)(uint16_t)wt[t]
                                                   | (two ? (uint32_t)wt[t + 1] << 16 : 0u)));
        for (v = 0; v < MLVM_QT_N; ++v) {
            const MLVM_QT_V pair = MLVM_QT_PAIR(MLVM_QT_WIDEN(x0 + v * MLVM_QT_LANES),
                                                MLVM_QT_WIDEN(x1 + v * MLVM_QT_LANES));
            acc[v] = MLVM_QT_MADD(acc[v], pair, w);
        }
    }
    for (v = 0; v < MLVM_QT_N; ++v)
        MLVM_QT_STORE(dst + v * MLVM_QT_LANES, acc[v]);
}
#elif defined(MLVM_Q_DSP)
/* Four positions at a time, taps in pairs: one 32-bit load per tap reads
 * its bytes for the four positions, UXTB16 and halfword packing
 * (PKHBT / PKHTB) pair each position's bytes of the two taps, and one SMLAD
 * multiplies them by the pair of weights (|wt| <= 255: exact). */
/* The taps at offsets ot and ou (ou = ot for a tap alone: its weight's
 * high half is 0) of the four positions from xj into the sums a0 .. a3. */
#define MLVM_QT_PAIR4(xj, ot, ou, wp)                                                      \
    do {                                                                                   \
        uint32_t a, b, al, ah, bl, bh;                                                     \
        memcpy(&a, (xj) + (ot), 4);                                                        \
        memcpy(&b, (xj) + (ou), 4);                                                        \
        al = __uxtb16(a), ah = q_uxtb16_8(a);                                              \
        bl = __uxtb16(b), bh = q_uxtb16_8(b);                                              \
        a0 = __smlad((int32_t)q_pkhbt(al, bl), (wp), a0);                                  \
        a1 = __smlad((int32_t)q_pkhbt(ah, bh), (wp), a1);                                  \
        a2 = __smlad((int32_t)q_pkhtb(bl, al), (wp), a2);                                  \
        a3 = __smlad((int32_t)q_pkhtb(bh, ah), (wp), a3);                                  \
    } while (0)

/* wt: the weight pairs (q_pair_weights), taps t and t + 1 in one word. */
static void q_taps_chunk(mlvm_index_t k, const mlvm_index_t *off, const uint8_t *xs,
                         const int32_t *wt, uint32_t *dst, mlvm_index_t len)
{
    /* full pairs in the loop, an odd last tap after it: no test per pair
     * (-O2 does not unswitch), fewer registers live; the pairs' offsets
     * and weights walked by pointer to their end (no count to keep) */
    const mlvm_index_t *const pairs_end = off + (k & ~(mlvm_index_t)1);
    const mlvm_index_t *o;
    const int32_t *wp;
    int j;
    for (j = 0; j < len; j += 4) { /* the chunk's positions, in fours */
        const uint8_t *const xj = xs + j;
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (o = off, wp = wt; o < pairs_end; o += 2, ++wp)
            MLVM_QT_PAIR4(xj, o[0], o[1], *wp);
        if (k & 1)
            MLVM_QT_PAIR4(xj, o[0], o[0], *wp);
        dst[j] = (uint32_t)a0, dst[j + 1] = (uint32_t)a1;
        dst[j + 2] = (uint32_t)a2, dst[j + 3] = (uint32_t)a3;
    }
}
#undef MLVM_QT_PAIR4
#else
static void q_taps_chunk(mlvm_index_t k, const mlvm_index_t *off, const uint8_t *xs,
                         const int32_t *wt, uint32_t *dst, mlvm_index_t len)
{
    (void)len;
    uint32_t acc[MLVM_QW_CHUNK];
    mlvm_index_t t;
    int j;
    for (j = 0; j < MLVM_QW_CHUNK; ++j)
        acc[j] = 0;
    for (t = 0; t < k; ++t) {
        const uint8_t *xt = xs + off[t];
        const uint32_t wv = (uint32_t)wt[t];
        for (j = 0; j < MLVM_QW_CHUNK; ++j)
            acc[j] += wv * xt[j];
    }
    for (j = 0; j < MLVM_QW_CHUNK; ++j)
        dst[j] = acc[j];
}
#endif

#ifdef MLVM_Q_DSP
/* The DSP chunk's weights: taps t and t + 1 as one word of halfwords
 * (t + 1's half 0 past the last tap), in place (pair i from taps 2i, 2i+1). */
static void q_pair_weights(mlvm_index_t k, int32_t *wt)
{
    mlvm_index_t t;
    for (t = 0; t < k; t += 2)
        wt[t / 2] = (int32_t)((uint32_t)(uint16_t)wt[t]
                              | (t + 1 < k ? (uint32_t)wt[t + 1] << 16 : 0u));
}
#else
#define q_pair_weights(k, wt) ((void)(k), (void)(wt))
#endif

#if defined(MLVM_Q_DSP)
/* The widened plane's padding (q_widen_input writes the rest): zxu in
 * all of its plane (q_dw3_bytes), once per call. */
static void q_widen_pad(const qgeom_t *g, uint8_t zxu, uint32_t *xh)
{
    const mlvm_index_t words = g->ph.hq * q_dw3_pitch(g) / 2;
    mlvm_index_t j;
    for (j = 0; j < words; ++j)
        xh[j] = 0x00010001u * zxu;
}

/* A q_dw3_shape channel's plane (xc: h x w input bytes) widened to
 * halfwords, x ^ flip, into the padded plane as q_copy places it but at
 * q_dw3_pitch, straight from the input (no copy first): the word at
 * halfword q of a row is the pair (x[q], x[q + 1]), a kernel row's first
 * two taps for position q. The padding (q_widen_pad) is the same for
 * every channel. Not inlined: in q_taps_path's frame gcc spilled its
 * loop's registers. */
MLVM_Q_NOINLINE static void q_widen_input(const mlvm_qconv2d_t *p, const qgeom_t *g,
                                          const uint8_t *xc, uint8_t flip, uint32_t *xh)
{
    const mlvm_index_t wq = q_dw3_pitch(g), w = p->w;
    const uint32_t flip4 = 0x01010101u * flip;
    mlvm_index_t r0, r1, lo, hi, r;
    mlvm_valid_span1(-p->pt, p->h, g->ph.hq, &r0, &r1);
    mlvm_valid_span1(-p->pl, w, g->ph.wq, &lo, &hi);
    {
        /* the row's pointers stepped, the fields read once: the stores
         * (memcpy) may alias *p, and gcc reloaded them per row. Four
         * values a step, the last four of a row of 4 or more one step
         * whether or not it overlaps the one before (the same halfwords
         * again): no value by value tail. */
        const mlvm_index_t n = hi - lo;
        const uint8_t *src = xc + (r0 - p->pt) * w + (lo - p->pl);
        uint16_t *d = (uint16_t *)(void *)xh + r0 * wq + lo;
#define MLVM_Q_WIDEN4(s, e, FLIP)                                              \
    do { /* (x0, x2), (x1, x3) -> (x0, x1), (x2, x3) */                        \
        uint32_t v, l, h, pair;                                                \
        memcpy(&v, s, 4);                                                      \
        v = FLIP(v);                                                           \
        l = __uxtb16(v), h = q_uxtb16_8(v);                                    \
        pair = q_pkhbt(l, h), memcpy(e, &pair, 4);                             \
        pair = q_pkhtb(h, l), memcpy((e) + 2, &pair, 4);                       \
    } while (0)
#define MLVM_Q_FLIP4(v) ((v) ^ flip4)
#define MLVM_Q_AS_IS(v) (v)
        if (n == 5 && flip == 0) { /* a keyword spotter's rows: four, then one */
            for (r = r0; r < r1; ++r, src += w, d += wq) {
                MLVM_Q_WIDEN4(src, d, MLVM_Q_AS_IS);
                d[4] = src[4];
            }
        } else if (n >= 4 && n <= 8) { /* two steps, no loop */
            for (r = r0; r < r1; ++r, src += w, d += wq) {
                MLVM_Q_WIDEN4(src, d, MLVM_Q_FLIP4);
                MLVM_Q_WIDEN4(src + n - 4, d + n - 4, MLVM_Q_FLIP4);
            }
        } else if (n > 8) {
            for (r = r0; r < r1; ++r, src += w, d += wq) {
                const uint8_t *s = src, *const last = src + n - 4;
                uint16_t *e = d;
                for (; s < last; s += 4, e += 4)
                    MLVM_Q_WIDEN4(s, e, MLVM_Q_FLIP4);
                MLVM_Q_WIDEN4(last, d + n - 4, MLVM_Q_FLIP4);
            }
        } else {
            for (r = r0; r < r1; ++r, src += w, d += wq) {
                mlvm_index_t j;
                for (j = 0; j < n; ++j)
                    d[j] = (uint16_t)(src[j] ^ flip);
            }
        }
#undef MLVM_Q_AS_IS
#undef MLVM_Q_FLIP4
#undef MLVM_Q_WIDEN4
    }
}

/* q_dw3_rows' operands: rows >= 1 output rows of n = 2 pairs + odd
 * positions of one channel (3x3, stride 1) into acc[r * n + x], from
 * init; xh the widened plane at the first row's first position (an even
 * column: word-aligned), pitch its row pitch in bytes (a multiple of 4),
 * wp the kernel rows' pairs (w[r][0], w[r][1]) and (w[r][1], w[r][2]).
 * The assembly reads the fields at these offsets; both forms count rows
 * down to 0 in the caller's struct. */
typedef struct q_dw3 {
    const uint8_t *xh;   /* 0 */
    uint32_t adv;        /* 4: pitch less 4 per pair of a row */
    const int32_t *wp;   /* 8 */
    uint32_t *acc;       /* 12 */
    uint32_t pairs;      /* 16: n / 2 */
    uint32_t odd;        /* 20: n % 2 */
    uint32_t rows;       /* 24 */
    int32_t init;        /* 28 */
    uint32_t pitch;      /* 32 */
} q_dw3_t;

/* Two positions a step: per kernel row the pairs A = (x[q], x[q + 1]) and
 * B = (x[q + 2], x[q + 3]) by one LDRD, position q's sum A.(w0, w1) +
 * B.lo w2 (SMLAD, SMLABT), q + 1's A.hi w0 + B.(w1, w2) (SMLATB, SMLAD):
 * 3 loads and 12 multiplies for 18 multiply-adds; an odd row's last
 * position alone, 3 loads and 6 multiplies. Integer sums: the same bits
 * in any order. */
#if defined(__GNUC__)
typedef char q_dw3_offsets[offsetof(q_dw3_t, pitch) == 32 && sizeof(void *) == 4 ? 1 : -1];

/* In assembly (a naked function, as q_tile6): the 6 weights, the sums'
 * start, 3 row pointers, the output and its end needed 16 registers, and
 * gcc spilled in the loop (27 instructions a step where these take 21).
 * r4-r9 hold the weights, r10 and r11 the two sums, r0 and r1 a row's
 * words, r2, r3 and r12 the three rows, lr the output; a row's end, the
 * sums' start and the operands on the stack. */
#define MLVM_Q_DW3_PAIR(x, wa, wb)                                             \
    "ldrd r0, r1, [" x "], #4\n\t"                                             \
    "smlatb r11, r0, " wa ", r11\n\t"                                          \
    "smlad r10, r0, " wa ", r10\n\t"                                           \
    "smlabt r10, r1, " wb ", r10\n\t"                                          \
    "smlad r11, r1, " wb ", r11\n\t"
#define MLVM_Q_DW3_ONE(x, wa, wb)                                              \
    "ldrd r0, r1, [" x "]\n\t"                                                 \
    "smlad r10, r0, " wa ", r10\n\t"                                           \
    "smlabt r10, r1, " wb ", r10\n\t"
__attribute__((naked, noinline)) static void q_dw3_rows(q_dw3_t *a __attribute__((unused)))
{
    __asm__("push {r0, r4-r11, lr}\n\t"
            "sub sp, sp, #8\n\t" /* [sp]: the row's end, [sp, #4]: init, [sp, #8]: a */
            "ldr r1, [r0, #28]\n\t"
            "str r1, [sp, #4]\n\t"
            "ldr r1, [r0, #8]\n\t"
            "ldm r1, {r4-r9}\n\t"
            "ldr r2, [r0]\n\t"
            "ldr r1, [r0, #32]\n\t"
            "add r3, r2, r1\n\t"
            "add r12, r3, r1\n\t"
            "ldr lr, [r0, #12]\n"
            "1:\n\t" /* a row (r0: a) */
            "ldr r1, [r0, #16]\n\t"
            "cmp r1, #0\n\t"
            "beq 3f\n\t"
            "add r1, lr, r1, lsl #3\n\t"
            "str r1, [sp]\n"
            "2:\n\t" /* a pair */
            "ldr r10, [sp, #4]\n\t"
            "mov r11, r10\n\t"
            MLVM_Q_DW3_PAIR("r2", "r4", "r5")
            MLVM_Q_DW3_PAIR("r3", "r6", "r7")
            MLVM_Q_DW3_PAIR("r12", "r8", "r9")
            "strd r10, r11, [lr], #8\n\t"
            "ldr r1, [sp]\n\t"
            "cmp lr, r1\n\t"
            "bne 2b\n\t"
            "ldr r0, [sp, #8]\n"
            "3:\n\t"
            "ldr r1, [r0, #20]\n\t"
            "cmp r1, #0\n\t"
            "beq 4f\n\t"
            "ldr r10, [sp, #4]\n\t" /* the odd row's last position */
            MLVM_Q_DW3_ONE("r2", "r4", "r5")
            MLVM_Q_DW3_ONE("r3", "r6", "r7")
            MLVM_Q_DW3_ONE("r12", "r8", "r9")
            "str r10, [lr], #4\n\t"
            "ldr r0, [sp, #8]\n"
            "4:\n\t"
            "ldr r1, [r0, #4]\n\t"
            "add r2, r2, r1\n\t"
            "add r3, r3, r1\n\t"
            "add r12, r12, r1\n\t"
            "ldr r1, [r0, #24]\n\t"
            "subs r1, r1, #1\n\t"
            "str r1, [r0, #24]\n\t"
            "bne 1b\n\t"
            "add sp, sp, #8\n\t"
            "pop {r0, r4-r11, pc}");
}
#undef MLVM_Q_DW3_ONE
#undef MLVM_Q_DW3_PAIR
#else
static void q_dw3_rows(q_dw3_t *a)
{
    const int32_t a0 = a->wp[0], a1 = a->wp[1], b0 = a->wp[2], b1 = a->wp[3], c0 = a->wp[4];
    const int32_t c1 = a->wp[5], init = a->init;
    const uint8_t *xh = a->xh;
    uint32_t *o = a->acc;
    for (; a->rows > 0; --a->rows, xh += a->pitch) {
        const uint8_t *x0 = xh, *x1 = xh + a->pitch, *x2 = x1 + a->pitch;
        uint32_t *const end = o + 2 * a->pairs + a->odd;
        for (; o != end; o += 2, x0 += 4, x1 += 4, x2 += 4) {
            uint32_t t0, t1, u0, u1, v0, v1;
            int32_t p, q;
            memcpy(&t0, x0, 4), memcpy(&t1, x0 + 4, 4);
            memcpy(&u0, x1, 4), memcpy(&u1, x1 + 4, 4);
            memcpy(&v0, x2, 4), memcpy(&v1, x2 + 4, 4);
            p = __smlad((int32_t)t0, a0, __smlabt((int32_t)t1, a1, init));
            p = __smlad((int32_t)u0, b0, __smlabt((int32_t)u1, b1, p));
            p = __smlad((int32_t)v0, c0, __smlabt((int32_t)v1, c1, p));
            o[0] = (uint32_t)p;
            if (o + 1 == end) { /* the odd row's last position */
                ++o;
                break;
            }
            q = __smlatb((int32_t)t0, a0, __smlad((int32_t)t1, a1, init));
            q = __smlatb((int32_t)u0, b0, __smlad((int32_t)u1, b1, q));
            q = __smlatb((int32_t)v0, c0, __smlad((int32_t)v1, c1, q));
            o[1] = (uint32_t)q;
        }
    }
}
#endif

/* Whether the 3x3 depthwise paths start channel o's sums from its bias
 * less the zero point's share (q_dw_init) and requantize them as they
 * are (q_dw_done): with VCVTR, bytes out. */
static inline int q_dw_biased(const qsink_t *s)
{
#ifdef MLVM_Q_VCVTR
    return s->requant;
#else
    (void)s;
    return 0;
#endif
}

static inline int32_t q_dw_init(const qsink_t *s, mlvm_index_t o)
{
    return q_dw_biased(s) ? (int32_t)q_base(s, o) : 0;
}

/* A depthwise chunk's n sums of channel o, from compact position at, to
 * the sink: requantized as they are where they started from the bias,
 * else finished one by one. */
static inline void q_dw_done(const qsink_t *s, mlvm_index_t o, mlvm_index_t at, const uint32_t *acc,
                             mlvm_index_t n)
{
#ifdef MLVM_Q_VCVTR
    if (q_dw_biased(s)) {
        q_requant_run((uint8_t *)s->out + o * s->ld + at, acc, n, 0u, q_mult(s, o), NULL, 0u, s, 1);
        return;
    }
#endif
    q_finish_scalar(s, o, at, acc, n);
}

/* Channel o of a q_dw3_shape group: its kernel rows' pairs from the taps
 * less the zero point (wt), then as many whole output rows as the chunk
 * holds at a time (pieces of a row where one is longer) into the compact
 * sink. xh: the group's widened plane. */
static void q_dw3_channel(const qsink_t *s, const qgeom_t *g, mlvm_index_t o, const int32_t *wt,
                          const uint32_t *xh, uint32_t *acc)
{
    const mlvm_index_t wq = q_dw3_pitch(g), ow = g->win.ow, oh = g->win.oh;
    const mlvm_index_t piece = mlvm_imin(ow, MLVM_QW_CHUNK);
    const mlvm_index_t rows = ow > MLVM_QW_CHUNK ? 1 : MLVM_QW_CHUNK / ow;
    int32_t wp[6];
    q_dw3_t a;
    mlvm_index_t y, x0, r;
    for (r = 0; r < 3; ++r) {
        wp[2 * r] = (int32_t)((uint32_t)(uint16_t)wt[3 * r] | (uint32_t)wt[3 * r + 1] << 16);
        wp[2 * r + 1] = (int32_t)((uint32_t)(uint16_t)wt[3 * r + 1] | (uint32_t)wt[3 * r + 2] << 16);
    }
    a.wp = wp;
    a.init = q_dw_init(s, o);
    a.pitch = (uint32_t)wq * 2;
    for (y = 0; y < oh; y += rows)
        for (x0 = 0; x0 < ow; x0 += piece) {
            const mlvm_index_t len = mlvm_imin(piece, ow - x0), nr = mlvm_imin(rows, oh - y);
            a.xh = (const uint8_t *)xh + (y * wq + x0) * 2;
            a.acc = acc;
            a.pairs = (uint32_t)len / 2;
            a.odd = (uint32_t)len & 1;
            a.adv = a.pitch - 4 * a.pairs;
            a.rows = (uint32_t)nr;
            q_dw3_rows(&a);
            q_dw_done(s, o, y * ow + x0, acc, len * nr);
        }
}

/* A 3x3 depthwise layer of stride 2 (one output per group): each channel's
 * plane copied once, padded with the zero point, 2 oh + 1 rows at a pitch
 * of 2 ow + 2 bytes, then per output and kernel row one 32-bit load of
 * its three taps' bytes and one more, UXTB16 of it and of it rotated by
 * 8, one SMLAD with the taps' (w0, w2) and one SMLABB with w1: about 23
 * instructions per output at -O2, where the phase planes' copies and the
 * taps chunk took about 40. No read passes the plane's end: the last
 * output's load ends at column 2 ow + 1 of row 2 oh, the last byte. */
static mlvm_index_t q_dw3s2_pitch(const mlvm_qconv2d_t *p) { return 2 * p->ow + 2; }

static mlvm_index_t q_dw3s2_rows(const mlvm_qconv2d_t *p) { return 2 * p->oh + 1; }

static int q_dw3s2_shape(const mlvm_qconv2d_t *p, const qgeom_t *g)
{
    return p->c == p->groups && p->o == p->c && p->kh == 3 && p->kw == 3 && p->sh == 2 && p->sw == 2
           && p->dh == 1 && p->dw == 1
           && (size_t)(q_dw3s2_rows(p) * q_dw3s2_pitch(p)) <= g->in_bytes;
}

/* Channel xc (h x w bytes) into xp at the pitch, x ^ flip, padding zxu. */
static void q_dw3s2_copy(const mlvm_qconv2d_t *p, const uint8_t *xc, uint8_t flip, uint8_t zxu, uint8_t *xp)
{
    const mlvm_index_t pitch = q_dw3s2_pitch(p), hp = q_dw3s2_rows(p);
    /* (a negative pad crops: the row's columns from -pl) */
    const mlvm_index_t c0 = mlvm_imax(p->pl, 0), n = mlvm_imin(p->w - (c0 - p->pl), pitch - c0);
    mlvm_index_t r;
    memset(xp, zxu, (size_t)(hp * pitch));
    for (r = 0; r < p->h; ++r) {
        const mlvm_index_t y = r + p->pt;
        if (y < 0 || y >= hp)
            continue;
        if (n > 0)
            q_bytes(xp + y * pitch + c0, xc + r * p->w + (c0 - p->pl), n, 1, flip);
    }
}

static void q_dw3s2_channel(const mlvm_qconv2d_t *p, const qsink_t *s, mlvm_index_t o,
                            const int32_t *wt, const uint8_t *xp, uint32_t *acc)
{
    const mlvm_index_t pitch = q_dw3s2_pitch(p), ow = p->ow, oh = p->oh;
    const mlvm_index_t piece = mlvm_imin(ow, MLVM_QW_CHUNK);
    const mlvm_index_t rows = ow > MLVM_QW_CHUNK ? 1 : MLVM_QW_CHUNK / ow;
    const int32_t init = q_dw_init(s, o);
    int32_t w02[3], w1[3];
    mlvm_index_t y, x0, r, x;
    for (r = 0; r < 3; ++r) {
        w02[r] = (int32_t)((uint32_t)(uint16_t)wt[3 * r] | (uint32_t)wt[3 * r + 2] << 16);
        w1[r] = wt[3 * r + 1];
    }
    for (y = 0; y < oh; y += rows)
        for (x0 = 0; x0 < ow; x0 += piece) {
            const mlvm_index_t len = mlvm_imin(piece, ow - x0), nr = mlvm_imin(rows, oh - y);
            uint32_t *a = acc;
            for (r = 0; r < nr; ++r) {
                const uint8_t *row = xp + 2 * (y + r) * pitch + 2 * x0;
                for (x = 0; x < len; ++x, row += 2) {
                    uint32_t v0, v1, v2;
                    int32_t sum;
                    memcpy(&v0, row, 4), memcpy(&v1, row + pitch, 4), memcpy(&v2, row + 2 * pitch, 4);
                    sum = __smlad((int32_t)__uxtb16(v0), w02[0], init);
                    sum = __smlabb((int32_t)q_uxtb16_8(v0), w1[0], sum);
                    sum = __smlad((int32_t)__uxtb16(v1), w02[1], sum);
                    sum = __smlabb((int32_t)q_uxtb16_8(v1), w1[1], sum);
                    sum = __smlad((int32_t)__uxtb16(v2), w02[2], sum);
                    *a++ = (uint32_t)__smlabb((int32_t)q_uxtb16_8(v2), w1[2], sum);
                }
            }
            q_dw_done(s, o, y * ow + x0, acc, len * nr);
        }
}

/* The results of a chunk of flat positions [q0, q0 + len) at the copy's
 * pitch wq that are output positions (columns below ow), run by run of a
 * row, to a compact sink: the columns past a row's end are neither
 * requantized nor compacted after. */
static void q_finish_valid(const qsink_t *s, mlvm_index_t o, mlvm_index_t q0, const uint32_t *acc,
                           mlvm_index_t len, mlvm_index_t ow, mlvm_index_t wq)
{
    const mlvm_index_t end = q0 + len;
    mlvm_index_t q = q0;
#ifdef MLVM_Q_VCVTR
    /* the channel's constants first: the byte stores may alias *s */
    const uint32_t base = q_base(s, o);
    const float mult = s->requant ? q_mult(s, o) : 0.0f;
    uint8_t *const out = (uint8_t *)s->out + o * s->ld;
    const int requant = s->requant;
#endif
    while (q < end) {
        const mlvm_index_t y = q / wq, x = q - y * wq, run = mlvm_imin(end, y * wq + ow) - q;
        if (x >= ow) {
            q = (y + 1) * wq;
            continue;
        }
#ifdef MLVM_Q_VCVTR
        if (requant)
            q_requant_run(out + y * ow + x, acc + (q - q0), run, base, mult, NULL, 0u, s, 0);
        else
#endif
            q_finish_scalar(s, o, y * ow + x, acc + (q - q0), run);
        q += run;
    }
}
#endif

MLVM_Q_NOINLINE static void q_taps_path(const qcall_t *c, const qgeom_t *g)
{
    const mlvm_qconv2d_t *p = c->p;
    const mlvm_index_t cg = p->c / p->groups, og = p->o / p->groups;
    qstart_t st;
    q_start(c, g, &st);
    int32_t *wt = (int32_t *)(void *)st.w;
#if defined(MLVM_Q_DSP)
    void *const rows = NULL; /* q_finish_valid and the 3x3 paths store compact rows */
#else
    void *rows = (uint8_t *)wt + g->w_bytes;
#endif
    uint32_t acc[MLVM_QW_CHUNK], shares[MLVM_QW_GEMM_ROWS];
    qsink_t s;
    mlvm_index_t n, gi, o, t, q0;
#if defined(MLVM_Q_DSP)
    const int dw3 = q_dw3_shape(p), dw3s2 = q_dw3s2_shape(p, g);
    uint32_t *const xh = (uint32_t *)(void *)(st.w + qw_align((size_t)g->k * 4));
#endif
    mlvm_tap_offsets(&g->win, &g->ph, g->k, st.off);
    memset(st.xs + p->c * g->ph.phases * g->ph.plane, 0, MLVM_QW_SLACK);
#if defined(MLVM_Q_DSP)
    if (dw3)
        q_widen_pad(g, st.zxu, xh);
#endif
    for (n = 0; n < p->n; ++n) {
#if defined(MLVM_Q_DSP)
        if (!dw3 && !dw3s2) /* (q_widen_input and q_dw3s2_copy read the input themselves) */
#endif
            q_copy(p, g, (const uint8_t *)c->x + n * p->c * p->h * p->w, 0, p->c, 1, st.flip, st.zxu,
                   st.xs);
        for (gi = 0; gi < p->groups; ++gi) {
            const uint8_t *xg = st.xs + gi * cg * g->ph.phases * g->ph.plane;
            q_sink(c, g, n, gi, rows, &s);
            s.zwp = NULL;
#if defined(MLVM_Q_DSP)
            if (dw3) /* the group's one channel, widened once for its outputs */
                q_widen_input(p, g, (const uint8_t *)c->x + (n * p->c + gi) * p->h * p->w, st.flip,
                              xh);
            if (dw3s2)
                q_dw3s2_copy(p, (const uint8_t *)c->x + (n * p->c + gi) * p->h * p->w, st.flip, st.zxu,
                             st.xs);
#endif
            for (o = 0; o < og; ++o) {
                const mlvm_index_t oo = gi * og + o;
                const int32_t zwo = p->w_signed ? ((const int8_t *)c->zw)[p->zw_per_o ? oo : 0]
                                                : ((const uint8_t *)c->zw)[p->zw_per_o ? oo : 0];
                uint32_t sum = 0;
                for (t = 0; t < g->k; ++t) {
                    const int32_t wv = p->w_signed ? ((const int8_t *)c->w)[oo * g->k + t]
                                                   : ((const uint8_t *)c->w)[oo * g->k + t];
                    wt[t] = wv - zwo;
                    sum += (uint32_t)wt[t];
                }
                shares[o] = sum * st.zxu;
                s.share = shares;
#if defined(MLVM_Q_DSP)
                if (dw3) {
                    q_dw3_channel(&s, g, o, wt, xh, acc);
                    continue;
                }
                if (dw3s2) {
                    q_dw3s2_channel(p, &s, o, wt, st.xs, acc);
                    continue;
                }
#endif
                q_pair_weights(g->k, wt);
                for (q0 = 0; q0 < g->ph.n; q0 += MLVM_QW_CHUNK) {
                    const mlvm_index_t len = mlvm_imin(MLVM_QW_CHUNK, g->ph.n - q0);
                    q_taps_chunk(g->k, st.off, xg + q0, wt, acc, len);
#if defined(MLVM_Q_DSP)
                    q_finish_valid(&s, o, q0, acc, len, p->ow, g->ph.wq);
#else
                    q_finish_run(&s, o, q0, acc, len);
#endif
                }
            }
#if !defined(MLVM_Q_DSP)
            q_sink_done(c, g, n, gi, rows);
#endif
        }
    }
}

static void q_run(const qcall_t *c)
{
    qgeom_t g;
    qgeom(c->p, c->rq != NULL, &g);
    if (c->p->o / c->p->groups < MLVM_QW_GEMM_ROWS)
        q_taps_path(c, &g);
    else
        q_gemm_path(c, &g);
}

/* The first vector depthwise kernel of depthwise.h that covers p (none
 * needs a workspace), called with rq NULL for int32 sums: 1 if one ran. */
static int q_depthwise(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                       const void *w, const void *zx, const void *zw, const int32_t *bias,
                       const float *mult, const void *zy, void *out)
{
    if (mlvm_qdw_perm_applies(p, zw))
        mlvm_qdw_perm_8(p, rq, x, w, zx, bias, mult, zy, out);
    else if (mlvm_qdw_padded_applies(p, zw))
        mlvm_qdw_padded_8(p, rq, x, w, zx, bias, mult, zy, out);
    else if (mlvm_qdw_rows3s2_applies(p))
        mlvm_qdw_rows3s2_8(p, rq, x, w, zx, zw, bias, mult, zy, out);
    else if (mlvm_qdw_rows3_applies(p))
        mlvm_qdw_rows3_8(p, rq, x, w, zx, zw, bias, mult, zy, out);
    else if (mlvm_qdw_lanes_applies(p))
        mlvm_qdw_lanes_8(p, rq, x, w, zx, zw, bias, mult, zy, out);
    else
        return 0;
    return 1;
}

void mlvm_qconv2d_ws_8(const mlvm_qconv2d_t *p, const void *x, const void *w, const void *zx,
                       const void *zw, int32_t *out, void *ws)
{
    qcall_t c;
    if (q_depthwise(p, NULL, x, w, zx, zw, NULL, NULL, NULL, out))
        return;
    if (mlvm_qgemv_applies(p)) { /* (one position per image: a product of one row) */
        mlvm_qgemv_8(p, NULL, x, w, zx, zw, NULL, NULL, NULL, out);
        return;
    }
    if (ws == NULL || mlvm_qconv2d_workspace(p) == 0) {
        mlvm_qconv2d_8(p, x, w, zx, zw, out);
        return;
    }
    memset(&c, 0, sizeof c);
    c.p = p, c.x = x, c.w = w, c.zx = zx, c.zw = zw, c.out = out, c.ws = (uint8_t *)ws;
    q_run(&c);
}

void mlvm_qconv2d_requant_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                            const void *w, const void *zx, const void *zw, const int32_t *bias,
                            const float *mult, const void *zy, void *out, void *ws)
{
    qcall_t c;
    if (mlvm_qconv2d_requant_workspace(p) == 0)
        return; /* no outputs */
    if (q_depthwise(p, rq, x, w, zx, zw, bias, mult, zy, out))
        return;
    if (mlvm_qgemv_applies(p)) {
        mlvm_qgemv_8(p, rq, x, w, zx, zw, bias, mult, zy, out);
        return;
    }
    c.p = p, c.x = x, c.w = w, c.zx = zx, c.zw = zw, c.bias = bias, c.mult = mult, c.rq = rq;
    c.zy = zy, c.out = out, c.ws = (uint8_t *)ws;
    q_run(&c);
}
