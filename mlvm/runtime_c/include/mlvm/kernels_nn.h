/* Kernels of the neural-network ops (transpose, slice, concat, softmax,
 * layer_norm, gelu, conv2d, pool2d). Included by mlvm/kernels.h. No checks:
 * the compiler guarantees shapes and sizes. */
#ifndef MLVM_KERNELS_NN_H_
#define MLVM_KERNELS_NN_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Strided gather of 32-bit elements: out is contiguous over it->shape and
 * reads in at the offsets of it->stride[0] (stride[1] is out's own,
 * contiguous, strides). When the input's unit-stride dim is not the
 * innermost one (a transpose), the two dims are walked in square tiles so
 * that both sides stay in cache. */
void mlvm_gather_b32(const mlvm_iter_t *it, const void *in, void *out);

/* rows x cols 32-bit elements from src (row stride src_rs) to dst (dst_rs). */
void mlvm_copy2d_b32(size_t rows, size_t cols, const void *src, ptrdiff_t src_rs,
                     void *dst, ptrdiff_t dst_rs);

/* Softmax along the middle dim of [outer, n, inner]. */
void mlvm_softmax_f32(size_t outer, size_t n, size_t inner, const float *in,
                      float *out);

/* Layer norm of each row of [rows, cols]; gamma and beta (cols each) may be
 * NULL together. Per row, the statistics (sums of x - x[0] and of their
 * squares, in lanes; the shift keeps the variance accurate for rows far from
 * 0), then the output, while the row is still in L1. */
void mlvm_layer_norm_f32(size_t rows, size_t cols, float eps, const float *x,
                         const float *gamma, const float *beta, float *out);

/* Layer norm over any set of axes: `outer` walks the kept dims (stride 0: x
 * and out offsets), `inner` the normalised dims (stride 0: x and out
 * offsets, stride 1: gamma / beta offsets). */
void mlvm_layer_norm_strided_f32(const mlvm_iter_t *outer, const mlvm_iter_t *inner,
                                 float eps, const float *x, const float *gamma,
                                 const float *beta, float *out);

/* a * b + c: one fused operation where the target has it in hardware (and
 * the compiler turns fmaf into an instruction), two roundings elsewhere. */
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(__FP_FAST_FMAF)
#define MLVM_FMA(a, b, c) fmaf((a), (b), (c))
#else
#define MLVM_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* exp(x) without a libm call, branch-free so that loops calling it
 * vectorise: Cody-Waite reduction by ln 2 and a degree-6 polynomial
 * (Cephes' expf), within 2 ulp of exp on [-86, 88.72]; below -86 it returns
 * exp(-86) (about 4e-38) rather than a subnormal or 0, above 88.72 +inf.
 * NaN gives a finite value: callers that must propagate NaN do so. */
static inline float mlvm_exp_approx(float x)
{
    float k, r, p, scale;
    uint32_t bits, mono;
    /* Clamp x to [-86, 88.72284] on its bits mapped to an unsigned order
     * (negative floats: all bits flipped; positive: the sign bit flipped):
     * integer min / max stay one straight line that vectorises, where a
     * float ?: lets the compiler split the function into constant cases.
     * A NaN lands on one end or the other. */
    memcpy(&bits, &x, sizeof bits);
    mono = bits ^ ((0u - (bits >> 31)) | 0x80000000u);
    mono = mono < 0x3d53ffffu ? 0x3d53ffffu : mono;  /* -86.0f */
    mono = mono > 0xc2b17218u ? 0xc2b17218u : mono;  /* 88.72284f */
    bits = mono ^ (((mono >> 31) - 1u) | 0x80000000u);
    memcpy(&x, &bits, sizeof x);
    k = MLVM_FMA(x, 0x1.715476p+0f, 0x1.8p23f); /* round to nearest integer ... */
    k = k - 0x1.8p23f;                          /* ... (C99 keeps the two steps) */
    r = MLVM_FMA(k, -0x1.63p-1f, x);
    r = MLVM_FMA(k, 0x1.bd0106p-13f, r);
    p = 1.9875691500e-4f;
    p = MLVM_FMA(p, r, 1.3981999507e-3f);
    p = MLVM_FMA(p, r, 8.3334519073e-3f);
    p = MLVM_FMA(p, r, 4.1665795894e-2f);
    p = MLVM_FMA(p, r, 1.6666665459e-1f);
    p = MLVM_FMA(p, r, 5.0000001201e-1f);
    p = MLVM_FMA(p * r, r, r) + 1.0f;
    /* 2^(k-1) then * 2: k = 128 (x near 88.7) still has a finite result. */
    bits = (uint32_t)((int32_t)k + 126) << 23;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale * 2.0f;
}

/* gelu, approximate = "tanh": 0.5 x (1 + tanh(u)), u = sqrt(2/pi)(x +
 * 0.044715 x^3), computed as x / (1 + exp(-2u)): one exp, and no
 * cancellation where tanh(u) is near -1. */
static inline float mlvm_gelu_tanh(float x)
{
    float t = x * x;
    t = t * x;
    t = MLVM_FMA(t, 0x1.6e4e26p-5f, x);  /* x + 0.044715 x^3 */
    t = t * -0x1.988454p+0f;             /* -2 sqrt(2 / pi) */
    return x / (1.0f + mlvm_exp_approx(t));
}

/* gelu, approximate = "none": 0.5 x (1 + erf(x / sqrt 2)). */
static inline float mlvm_gelu_erf(float x)
{
    return (0.5f * x) * (1.0f + erff(x * 0x1.6a09e6p-1f));
}

/* gelu over n contiguous f32 (out may equal a). */
void mlvm_gelu_tanh_f32(size_t n, const float *a, float *out);
void mlvm_gelu_erf_f32(size_t n, const float *a, float *out);

/* 2-D convolution, x NCHW, w OIHW (I = c / groups), bias NULL or o values;
 * padding is top (pt) and left (pl); bottom and right follow from oh, ow. */
typedef struct mlvm_conv2d {
    mlvm_index_t n, c, h, w, o, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw, groups;
} mlvm_conv2d_t;
void mlvm_conv2d_f32(const mlvm_conv2d_t *p, const float *x, const float *w,
                     const float *bias, float *out);

/* Pooling over planes of [planes, h, w]; padded positions are left out (of
 * the max, and of the average's count). */
typedef struct mlvm_pool2d {
    mlvm_index_t planes, h, w, kh, kw, oh, ow, sh, sw, pt, pl;
} mlvm_pool2d_t;
void mlvm_maxpool2d_f32(const mlvm_pool2d_t *p, const float *x, float *out);
void mlvm_avgpool2d_f32(const mlvm_pool2d_t *p, const float *x, float *out);

#endif /* MLVM_KERNELS_NN_H_ */
