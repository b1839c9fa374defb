/* int8 depthwise convolutions over small planes (mlvm.qconv2d and
 * mlvm.qconv2d_requant with one input and one output channel per group, the
 * input plane under 128 bytes: a keyword spotter's 25x5 maps), for the
 * builds with AVX-512 VBMI and VNNI.
 *
 * qdepthwise_lanes.c puts 16 channels in the lanes: a transpose in and out
 * per 16 positions and one multiply-add per tap, half of each lane idle.
 * Here a channel's whole plane sits in two registers (128 bytes, x as
 * unsigned, the byte after the plane its zero point), and one vpermt2b
 * gathers, for 16 output positions, the bytes of four taps into each
 * position's 32-bit lane, where one vpdpbusd multiplies them by the four
 * weights: 64 multiply-adds per two instructions, the outputs in the
 * lanes in plane order, stored as they are. Taps outside the input read
 * the zero point, whose share (zx * sum_t w[t]) leaves the sums as in
 * qconv_ws.c; the byte indices depend on the geometry alone and are built
 * once per call; a pass sums four output vectors side by side. Weights i8 with zero points 0 (symmetric, as quantizers
 * write them): |w| <= 128, so each product and sum is exact. */
#include <math.h>
#include <string.h>

#include "depthwise.h"
#include "window.h"

#if defined(MLVM_QDW_PERM)
#include <immintrin.h>

#include "requant.h"

#define MLVM_QDWP_VECS 64 /* index vectors: tap quads x output vectors (4 KiB) */
#define MLVM_QDWP_PASS 4  /* output vectors summed side by side (independent chains) */

/* Output vectors of 16 positions, in whole passes. */
static mlvm_index_t perm_vectors(const mlvm_qconv2d_t *p)
{
    const mlvm_index_t nv = (p->oh * p->ow + 15) / 16;
    return (nv + MLVM_QDWP_PASS - 1) / MLVM_QDWP_PASS * MLVM_QDWP_PASS;
}

/* The mask of vector v's positions below nq. */
static __mmask16 perm_live(mlvm_index_t nq, mlvm_index_t v)
{
    const mlvm_index_t rem = nq - 16 * v;
    return (__mmask16)(rem >= 16 ? 0xFFFFu : rem <= 0 ? 0u : (1u << rem) - 1u);
}

/* 16 results r (lanes m) at position `at` of out: int32 sums (rq NULL), or
 * requantized bytes by the channel's constants (fin: a finite multiplier,
 * requant.h's shorter form). Both kernels below store through it. */
static inline __attribute__((always_inline)) void
qdw_store(const mlvm_qrequant_t *rq, int fin, void *out, size_t at, __mmask16 m, __m512i r, __m512 vmo,
          __m512i vzyi, __m512 vzy, __m512 vlo, __m512 vhi)
{
    if (rq == NULL)
        _mm512_mask_storeu_epi32((int32_t *)out + at, m, r);
    else if (fin)
        _mm512_mask_cvtepi32_storeu_epi8((uint8_t *)out + at, m, mlvm_requant512_finite(r, vmo, vzyi, vlo, vhi));
    else
        _mm512_mask_cvtepi32_storeu_epi8((uint8_t *)out + at, m, mlvm_requant512(r, vmo, vzy, vlo, vhi));
}

int mlvm_qdw_perm_applies(const mlvm_qconv2d_t *p, const void *zw)
{
    const mlvm_index_t tq = (p->kh * p->kw + 3) / 4, nv = perm_vectors(p);
    mlvm_index_t i;
    if (!(p->c == p->groups && p->o == p->c && p->n > 0 && p->oh > 0 && p->ow > 0 && p->w_signed
          && p->h * p->w < 128 && p->kh > 0 && p->kw > 0 && tq * nv <= MLVM_QDWP_VECS))
        return 0;
    for (i = 0; i < (p->zw_per_o ? p->o : 1); ++i)
        if (((const int8_t *)zw)[i] != 0)
            return 0;
    return 1;
}

/* idx[(g * nv + v) * 64 + 4 i + s]: the plane byte that tap 4g + s of
 * output position 16v + i reads, or the zero point's (plane) outside the
 * input, past the last tap or the last position (nv: perm_vectors). */
static void perm_indices(const mlvm_qconv2d_t *p, mlvm_index_t nv, uint8_t *idx)
{
    const mlvm_index_t taps = p->kh * p->kw, tq = (taps + 3) / 4, nq = p->oh * p->ow;
    const __m512i pad = _mm512_set1_epi32((int32_t)(p->h * p->w)), h = _mm512_set1_epi32((int32_t)p->h);
    const __m512i w = _mm512_set1_epi32((int32_t)p->w), zero = _mm512_setzero_si512();
    /* each step, 16 positions further: the column by 16 % ow, the row by
     * 16 / ow and one more where the column passed ow (no division or
     * branch per position or tap: they had been a third of a 25 x 5
     * layer's time) */
    const __m512i ow = _mm512_set1_epi32((int32_t)p->ow), step_x = _mm512_set1_epi32((int32_t)(16 % p->ow));
    const __m512i step_y = _mm512_set1_epi32((int32_t)(16 / p->ow)), one = _mm512_set1_epi32(1);
    const __m512i sh = _mm512_set1_epi32((int32_t)p->sh), sw = _mm512_set1_epi32((int32_t)p->sw);
    const __m512i pt = _mm512_set1_epi32((int32_t)p->pt), pl = _mm512_set1_epi32((int32_t)p->pl);
    int32_t oy[16], ox[16], dy[64], dx[64]; /* taps <= 64: tq <= 16 (perm_applies) */
    __m512i vy, vx;
    mlvm_index_t v, g, t, y = 0, x = 0;
    int i, s;
    for (i = 0; i < 16; ++i) { /* the first 16 positions' output row and column */
        oy[i] = (int32_t)y, ox[i] = (int32_t)x;
        if (++x == p->ow)
            x = 0, ++y;
    }
    for (t = 0, y = 0, x = 0; t < taps; ++t) { /* each tap's offset in the window */
        dy[t] = (int32_t)(y * p->dh), dx[t] = (int32_t)(x * p->dw);
        if (++x == p->kw)
            x = 0, ++y;
    }
    vy = _mm512_loadu_si512((const void *)oy);
    vx = _mm512_loadu_si512((const void *)ox);
    for (v = 0; v < nv; ++v) {
        const __mmask16 live = perm_live(nq, v);
        /* the positions' top-left input row and column */
        const __m512i iy0 = _mm512_sub_epi32(_mm512_mullo_epi32(vy, sh), pt);
        const __m512i ix0 = _mm512_sub_epi32(_mm512_mullo_epi32(vx, sw), pl);
        __mmask16 wrap;
        for (g = 0; g < tq; ++g) {
            __m512i lanes = zero;
            for (s = 0; s < 4; ++s) {
                __m512i b = pad;
                t = 4 * g + s;
                if (t < taps) {
                    const __m512i iy = _mm512_add_epi32(iy0, _mm512_set1_epi32(dy[t]));
                    const __m512i ix = _mm512_add_epi32(ix0, _mm512_set1_epi32(dx[t]));
                    __mmask16 in = _mm512_mask_cmpge_epi32_mask(live, iy, zero);
                    in = _mm512_mask_cmplt_epi32_mask(in, iy, h);
                    in = _mm512_mask_cmpge_epi32_mask(in, ix, zero);
                    in = _mm512_mask_cmplt_epi32_mask(in, ix, w);
                    b = _mm512_mask_add_epi32(pad, in, _mm512_mullo_epi32(iy, w), ix);
                }
                lanes = _mm512_or_si512(lanes, _mm512_sll_epi32(b, _mm_cvtsi32_si128(8 * s)));
            }
            _mm512_storeu_si512((void *)(idx + (g * nv + v) * 64), lanes);
        }
        vx = _mm512_add_epi32(vx, step_x);
        vy = _mm512_add_epi32(vy, step_y);
        wrap = _mm512_cmpge_epi32_mask(vx, ow);
        vx = _mm512_mask_sub_epi32(vx, wrap, vx, ow);
        vy = _mm512_mask_add_epi32(vy, wrap, vy, one);
    }
}

void mlvm_qdw_perm_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                     const void *w, const void *zx, const int32_t *bias, const float *mult,
                     const void *zy, void *out)
{
    uint8_t idx[MLVM_QDWP_VECS * 64];
    const mlvm_index_t taps = p->kh * p->kw, tq = (taps + 3) / 4, plane = p->h * p->w;
    const mlvm_index_t nq = p->oh * p->ow, nv = perm_vectors(p);
    const uint8_t flip = p->x_signed ? 0x80 : 0, zxu = (uint8_t)(*(const uint8_t *)zx ^ flip);
    const __mmask64 m0 = plane >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << plane) - 1;
    const __mmask64 m1 = plane > 64 ? ((__mmask64)1 << (plane - 64)) - 1 : 0;
    const __m512i flip64 = _mm512_set1_epi8((char)flip), flip80 = _mm512_set1_epi8((char)0x80);
    const __mmask64 mt = taps >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << taps) - 1;
    mlvm_requant_bounds_t b = {0.0f, 0.0f, 0.0f};
    mlvm_index_t n, c, v, g;
    __m512 vmo, vzy, vlo, vhi;
    __m512i vzyi, zy16, lo8, hi8;
    const int y_signed = rq != NULL && rq->y_signed;
    int fin, packs;
    if (rq != NULL)
        b = mlvm_requant_bounds(rq, zy);
    zy16 = _mm512_set1_epi16((int16_t)b.zy);
    lo8 = _mm512_set1_epi8((char)(int32_t)b.lo), hi8 = _mm512_set1_epi8((char)(int32_t)b.hi);
    vzy = _mm512_set1_ps(b.zy);
    vzyi = _mm512_set1_epi32((int32_t)b.zy);
    perm_indices(p, nv, idx);
    for (n = 0; n < p->n; ++n)
        for (c = 0; c < p->c; ++c) {
            const uint8_t *xc = (const uint8_t *)x + (n * p->c + c) * plane;
            const int8_t *wc = (const int8_t *)w + c * taps;
            const size_t at = (size_t)((n * p->o + c) * nq);
            __m512i lo = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m0, xc), flip64);
            __m512i hi = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m1, xc + 64), flip64);
            __m512i wq[16], add, wv; /* tq <= 16: tq * nv <= 64 with nv >= MLVM_QDWP_PASS */
            float mo = 0.0f;
            int32_t sum;
            if (plane < 64)
                lo = _mm512_mask_set1_epi8(lo, (__mmask64)1 << plane, (char)zxu);
            else
                hi = _mm512_mask_set1_epi8(hi, (__mmask64)1 << (plane - 64), (char)zxu);
            /* the taps in one register, zero past the last (taps <= 64):
             * their sum by vpsadbw of (w + 128), and four weights per lane,
             * quad g broadcast */
            wv = _mm512_maskz_loadu_epi8(mt, wc);
            sum = p->w_sums != NULL ? p->w_sums[c]
                  : (int32_t)(_mm512_reduce_add_epi64(_mm512_sad_epu8(_mm512_xor_si512(wv, flip80),
                                                                     _mm512_setzero_si512())) - 128 * 64);
            for (g = 0; g < tq; ++g)
                wq[g] = _mm512_permutexvar_epi32(_mm512_set1_epi32((int32_t)g), wv);
            /* the bias (requantized results only) less the zero point's share */
            add = _mm512_set1_epi32((int32_t)((uint32_t)(rq != NULL && bias != NULL ? bias[c] : 0)
                                              - (uint32_t)zxu * (uint32_t)sum));
            if (rq != NULL)
                mo = mult[rq->mult_per_o ? c : 0];
            /* the channel's requantization constants, once (gcc had kept
             * their broadcasts and subtractions in the vector loop) */
            fin = rq != NULL && isfinite(mo);
            packs = fin && fabsf(mo) <= MLVM_REQUANT_PACKS_MAX;
            vmo = _mm512_set1_ps(mo);
            vlo = _mm512_set1_ps(fin ? b.lo - b.zy : b.lo);
            vhi = _mm512_set1_ps(fin ? b.hi - b.zy : b.hi);
            for (v = 0; v < nv; v += MLVM_QDWP_PASS) {
                /* a pass's vectors side by side: the multiply-adds' and the
                 * requantization's latencies overlap */
                __m512i acc[MLVM_QDWP_PASS];
                int k;
                for (k = 0; k < MLVM_QDWP_PASS; ++k)
                    acc[k] = _mm512_setzero_si512();
                for (g = 0; g < tq; ++g) {
                    const uint8_t *ig = idx + (g * nv + v) * 64;
                    for (k = 0; k < MLVM_QDWP_PASS; ++k)
                        acc[k] = _mm512_dpbusd_epi32(
                            acc[k],
                            _mm512_permutex2var_epi8(lo, _mm512_loadu_si512((const void *)(ig + 64 * k)), hi),
                            wq[g]);
                }
                if (packs && nq - 16 * v > 32) { /* the pass's outputs (three vectors or four) by one store */
                    const mlvm_index_t left = nq - 16 * v;
                    const __mmask64 m = left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
                    _mm512_mask_storeu_epi8((uint8_t *)out + at + 16 * v, m,
                                            mlvm_requant512_bytes(_mm512_add_epi32(acc[0], add),
                                                                  _mm512_add_epi32(acc[1], add),
                                                                  _mm512_add_epi32(acc[2], add),
                                                                  _mm512_add_epi32(acc[3], add), vmo, vmo,
                                                                  vmo, vmo, zy16, lo8, hi8, y_signed));
                    continue;
                }
                for (k = 0; k < MLVM_QDWP_PASS; ++k) {
                    const __mmask16 m = perm_live(nq, v + k);
                    if (m == 0) /* the pass's vectors past the plane's positions */
                        break;
                    qdw_store(rq, fin, out, at + (size_t)(16 * (v + k)), m, _mm512_add_epi32(acc[k], add), vmo,
                              vzyi, vzy, vlo, vhi);
                }
            }
        }
}

/* ---- 3x3, stride 1 or 2, larger planes ----
 * A channel's plane is copied once into rows of w + 2 bytes between zero
 * point columns, after a zero point row and before one (the padding of
 * one on every side, as bytes): output row y of stride s reads rows
 * s y .. s y + 2 of the copy, output x its columns s x .. s x + 2. For 16
 * outputs from x0, one 64-byte load of each of the three rows at column
 * s x0 holds all their taps; two vpermt2b gather, for output x0 + j, the
 * bytes (r0: 0, 1, 2; r1: 0) and (r1: 1, 2; r2: 0, 1) of its window
 * into 32-bit lane j, and a vpermb r2's last tap, so that three vpdpbusd
 * sum the nine taps (the quads' fourth weight past the last tap is 0).
 * The byte indices are three constant vectors; no masks, no divisions in
 * the loop. Where qdepthwise_rows3.c spends ten vpmaddwd and their
 * unpacks per 16 outputs, this takes three. */

#define MLVM_QDWD_PLANE 8192 /* bytes of the padded copy (on the stack) */
#define MLVM_QDWD_MIN 1024   /* the smallest plane taken (bytes) */

int mlvm_qdw_padded_applies(const mlvm_qconv2d_t *p, const void *zw)
{
    mlvm_index_t i;
    if (!(p->c == p->groups && p->o == p->c && p->n > 0 && p->w_signed && p->kh == 3 && p->kw == 3
          && p->dh == 1 && p->dw == 1 && p->sh == p->sw && (p->sh == 1 || p->sh == 2) && p->pt == 1
          && p->pl == 1 && p->oh > 0 && p->ow > 0 && p->h > 0 && p->w > 0
          /* windows inside the copy: one row and column of padding after */
          && (p->oh - 1) * p->sh + 2 <= p->h + 1 && (p->ow - 1) * p->sw + 2 <= p->w + 1
          && (p->h + 2) * (p->w + 2) <= MLVM_QDWD_PLANE && p->w + 2 <= MLVM_QDWD_PLANE / 4
          /* (smaller planes: the rows kernels are as fast or faster) */
          && p->h * p->w >= MLVM_QDWD_MIN))
        return 0;
    for (i = 0; i < (p->zw_per_o ? p->o : 1); ++i)
        if (((const int8_t *)zw)[i] != 0)
            return 0;
    return 1;
}

/* The byte indices of the three tap quads of 16 outputs of stride s (see
 * above): into (r0, r1), (r1, r2) and r2. */
static void padded_indices(mlvm_index_t s, __m512i idx[3])
{
    uint8_t b[3][64];
    int j;
    for (j = 0; j < 16; ++j) {
        const uint8_t c = (uint8_t)(s * j);
        const uint8_t q0[4] = {c, (uint8_t)(c + 1), (uint8_t)(c + 2), (uint8_t)(64 + c)};
        const uint8_t q1[4] = {(uint8_t)(c + 1), (uint8_t)(c + 2), (uint8_t)(64 + c), (uint8_t)(65 + c)};
        const uint8_t q2[4] = {(uint8_t)(c + 2), 0, 0, 0};
        memcpy(b[0] + 4 * j, q0, 4), memcpy(b[1] + 4 * j, q1, 4), memcpy(b[2] + 4 * j, q2, 4);
    }
    for (j = 0; j < 3; ++j)
        idx[j] = _mm512_loadu_si512((const void *)b[j]);
}

/* Channel plane xc (bytes x ^ flip) into the copy, its padding zxu: each
 * row 64 bytes a step (no byte outside it read), its two padding columns
 * one by one. */
static void padded_copy(const mlvm_qconv2d_t *p, const uint8_t *xc, uint8_t flip, uint8_t zxu,
                        uint8_t *buf)
{
    const mlvm_index_t pitch = p->w + 2;
    const __m512i flipv = _mm512_set1_epi8((char)flip);
    mlvm_index_t y, x;
    memset(buf, zxu, (size_t)pitch);
    memset(buf + (p->h + 1) * pitch, zxu, (size_t)pitch);
    for (y = 0; y < p->h; ++y) {
        const uint8_t *src = xc + y * p->w;
        uint8_t *dst = buf + (y + 1) * pitch;
        dst[0] = zxu, dst[p->w + 1] = zxu;
        for (x = 0; x < p->w; x += 64) {
            const mlvm_index_t n = mlvm_imin(64, p->w - x);
            const __mmask64 m = n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
            _mm512_mask_storeu_epi8(dst + 1 + x, m,
                                    _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, src + x), flipv));
        }
    }
}

void mlvm_qdw_padded_8(const mlvm_qconv2d_t *p, const mlvm_qrequant_t *rq, const void *x,
                       const void *w, const void *zx, const int32_t *bias, const float *mult,
                       const void *zy, void *out)
{
    /* the copy, and what the last row's 64-byte loads read past it */
    uint8_t buf[MLVM_QDWD_PLANE + 128];
    const mlvm_index_t pitch = p->w + 2, s = p->sh, oh = p->oh, ow = p->ow, plane = oh * ow;
    const uint8_t flip = p->x_signed ? 0x80 : 0, zxu = (uint8_t)(*(const uint8_t *)zx ^ flip);
    mlvm_requant_bounds_t b = {0.0f, 0.0f, 0.0f};
    __m512i idx[3], vzyi;
    __m512 vzy;
    mlvm_index_t n, c, oy, x0;
    if (rq != NULL)
        b = mlvm_requant_bounds(rq, zy);
    vzy = _mm512_set1_ps(b.zy);
    vzyi = _mm512_set1_epi32((int32_t)b.zy);
    padded_indices(s, idx);
    memset(buf + (p->h + 2) * pitch, 0, 128);
    for (n = 0; n < p->n; ++n)
        for (c = 0; c < p->c; ++c) {
            const int8_t *wc = (const int8_t *)w + c * 9;
            const size_t at = (size_t)((n * p->o + c) * plane);
            int32_t wsum = 0, q[3];
            __m512i add, w0, w1, w2;
            __m512 vmo, vlo, vhi;
            float mo = 0.0f;
            int t, fin;
            if (p->w_sums != NULL)
                wsum = p->w_sums[c];
            else
                for (t = 0; t < 9; ++t)
                    wsum += wc[t];
            q[0] = (int32_t)((uint32_t)(uint8_t)wc[0] | (uint32_t)(uint8_t)wc[1] << 8
                             | (uint32_t)(uint8_t)wc[2] << 16 | (uint32_t)(uint8_t)wc[3] << 24);
            q[1] = (int32_t)((uint32_t)(uint8_t)wc[4] | (uint32_t)(uint8_t)wc[5] << 8
                             | (uint32_t)(uint8_t)wc[6] << 16 | (uint32_t)(uint8_t)wc[7] << 24);
            q[2] = (int32_t)(uint32_t)(uint8_t)wc[8];
            w0 = _mm512_set1_epi32(q[0]), w1 = _mm512_set1_epi32(q[1]), w2 = _mm512_set1_epi32(q[2]);
            /* the bias (requantized results only) less the zero point's share */
            add = _mm512_set1_epi32((int32_t)((uint32_t)(rq != NULL && bias != NULL ? bias[c] : 0)
                                              - (uint32_t)zxu * (uint32_t)wsum));
            if (rq != NULL)
                mo = mult[rq->mult_per_o ? c : 0];
            fin = rq != NULL && isfinite(mo);
            vmo = _mm512_set1_ps(mo);
            vlo = _mm512_set1_ps(fin ? b.lo - b.zy : b.lo);
            vhi = _mm512_set1_ps(fin ? b.hi - b.zy : b.hi);
            padded_copy(p, (const uint8_t *)x + (n * p->c + c) * p->h * p->w, flip, zxu, buf);
            /* (the sizes in locals: the byte stores may alias p) */
            for (oy = 0; oy < oh; ++oy) {
                const uint8_t *r0 = buf + oy * s * pitch;
                for (x0 = 0; x0 < ow; x0 += 16) {
                    const uint8_t *a = r0 + s * x0;
                    const __m512i ra = _mm512_loadu_si512((const void *)a);
                    const __m512i rb = _mm512_loadu_si512((const void *)(a + pitch));
                    const __m512i rc = _mm512_loadu_si512((const void *)(a + 2 * pitch));
                    const mlvm_index_t left = ow - x0;
                    const __mmask16 m = (__mmask16)(left >= 16 ? 0xFFFF : (1u << left) - 1u);
                    const size_t o = at + (size_t)(oy * ow + x0);
                    __m512i acc = _mm512_dpbusd_epi32(add, _mm512_permutex2var_epi8(ra, idx[0], rb), w0);
                    acc = _mm512_dpbusd_epi32(acc, _mm512_permutex2var_epi8(rb, idx[1], rc), w1);
                    acc = _mm512_dpbusd_epi32(acc, _mm512_permutexvar_epi8(idx[2], rc), w2);
                    qdw_store(rq, fin, out, o, m, acc, vmo, vzyi, vzy, vlo, vhi);
                }
            }
        }
}
#else
typedef int mlvm_qdw_perm_not_built; /* ISO C: a translation unit is never empty */
#endif
