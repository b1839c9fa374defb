/* Elementwise kernels. Binary ops broadcast through an mlvm_iter_t; the
 * innermost loop is specialised for the contiguous and scalar cases so the
 * compiler can vectorise it. */
#include <math.h>
#include <string.h>

#include "clamp.h"
#include "iter.h"
#include "vexp.h"
#include "vfp.h"
#include "mlvm/scalar.h"

#define MLVM_DEFINE_BINARY(name, sfx, T, OutT, EXPR)                            \
    void mlvm_##name##_##sfx(const mlvm_iter_t *it, const T *a, const T *b,   \
                             OutT *out)                                        \
    {                                                                          \
        mlvm_index_t idx[MLVM_MAX_RANK] = {0};                                 \
        mlvm_index_t oa = 0, ob = 0, i;                                        \
        const int32_t outer = it->rank - 1;                                    \
        const mlvm_index_t n = it->shape[outer];                               \
        const mlvm_index_t sa = it->stride[0][outer];                          \
        const mlvm_index_t sb = it->stride[1][outer];                          \
        size_t r, rows = mlvm_iter_count(it, outer);                           \
        for (r = 0; r < rows; ++r, out += n) {                                 \
            const T *pa = a + oa, *pb = b + ob;                                \
            if (sa == 1 && sb == 1) {                                          \
                for (i = 0; i < n; ++i) {                                      \
                    const T x = pa[i], y = pb[i];                              \
                    out[i] = (EXPR);                                           \
                }                                                              \
            } else if (sa == 0 && sb == 1) {                                   \
                const T x = pa[0];                                             \
                for (i = 0; i < n; ++i) {                                      \
                    const T y = pb[i];                                         \
                    out[i] = (EXPR);                                           \
                }                                                              \
            } else if (sa == 1 && sb == 0) {                                   \
                const T y = pb[0];                                             \
                for (i = 0; i < n; ++i) {                                      \
                    const T x = pa[i];                                         \
                    out[i] = (EXPR);                                           \
                }                                                              \
            } else {                                                           \
                for (i = 0; i < n; ++i) {                                      \
                    const T x = pa[i * sa], y = pb[i * sb];                    \
                    out[i] = (EXPR);                                           \
                }                                                              \
            }                                                                  \
            mlvm_iter_step(it, outer, idx, &oa, &ob);                          \
        }                                                                      \
    }

/* Integer arithmetic wraps (two's complement), as numpy's int32 does. */
#define WRAP(op) ((int32_t)((uint32_t)x op (uint32_t)y))

MLVM_DEFINE_BINARY(add, f32, float, float, x + y)
MLVM_DEFINE_BINARY(sub, f32, float, float, x - y)
MLVM_DEFINE_BINARY(mul, f32, float, float, x * y)
MLVM_DEFINE_BINARY(div, f32, float, float, x / y)
/* max / min propagate NaN like numpy.maximum / numpy.minimum. */
MLVM_DEFINE_BINARY(max, f32, float, float, (x > y || x != x) ? x : y)
MLVM_DEFINE_BINARY(min, f32, float, float, (x < y || x != x) ? x : y)
MLVM_DEFINE_BINARY(eq, f32, float, float, x == y ? 1.0f : 0.0f)
MLVM_DEFINE_BINARY(cmpl, f32, float, float, x > y ? 1.0f : 0.0f)

MLVM_DEFINE_BINARY(add, i32, int32_t, int32_t, WRAP(+))
MLVM_DEFINE_BINARY(sub, i32, int32_t, int32_t, WRAP(-))
MLVM_DEFINE_BINARY(mul, i32, int32_t, int32_t, WRAP(*))
/* Integer division is not an mlvm op (div is f32 only); kept for the table. */
MLVM_DEFINE_BINARY(div, i32, int32_t, int32_t, mlvm_scalar_div_i32(x, y))
MLVM_DEFINE_BINARY(max, i32, int32_t, int32_t, x > y ? x : y)
MLVM_DEFINE_BINARY(min, i32, int32_t, int32_t, x < y ? x : y)
MLVM_DEFINE_BINARY(eq, i32, int32_t, float, x == y ? 1.0f : 0.0f)
MLVM_DEFINE_BINARY(cmpl, i32, int32_t, float, x > y ? 1.0f : 0.0f)

#define MLVM_DEFINE_UNARY(name, EXPR)                                          \
    void mlvm_##name##_f32(size_t n, const float *a, float *out)               \
    {                                                                          \
        size_t i;                                                              \
        for (i = 0; i < n; ++i) {                                              \
            const float x = a[i];                                              \
            out[i] = (EXPR);                                                   \
        }                                                                      \
    }

#ifdef MLVM_HAVE_VEXP
/* a vector at a time (vexp.h: the same bits as the scalar functions) */
MLVM_DEFINE_ARRAYV(mlvm_exp_f32, mlvm_expv, mlvm_expf)
MLVM_DEFINE_ARRAYV(mlvm_sigmoid_f32, mlvm_sigmoidv, mlvm_sigmoidf)
MLVM_DEFINE_ARRAYV(mlvm_tanh_f32, mlvm_tanhv, mlvm_tanhf)
MLVM_DEFINE_ARRAYV(mlvm_erf_f32, mlvm_erfv, mlvm_erff)
#else
MLVM_DEFINE_UNARY(exp, mlvm_expf(x))
MLVM_DEFINE_UNARY(sigmoid, mlvm_sigmoidf(x))
MLVM_DEFINE_UNARY(tanh, mlvm_tanhf(x))
MLVM_DEFINE_UNARY(erf, mlvm_erff(x))
#endif
MLVM_DEFINE_UNARY(neg, -x)
MLVM_DEFINE_UNARY(log, logf(x))
MLVM_DEFINE_UNARY(sqrt, sqrtf(x))
/* NaN passes through, like numpy.maximum(x, 0). */
MLVM_DEFINE_UNARY(relu, x < 0.0f ? 0.0f : x)
MLVM_DEFINE_UNARY(abs, fabsf(x))
MLVM_DEFINE_UNARY(floor, floorf(x))
MLVM_DEFINE_UNARY(ceil, ceilf(x))
MLVM_DEFINE_UNARY(sin, sinf(x))
MLVM_DEFINE_UNARY(cos, cosf(x))

void mlvm_rsqrt_f32(size_t n, float eps, const float *a, float *out)
{
    size_t i;
    for (i = 0; i < n; ++i)
        out[i] = 1.0f / sqrtf(a[i] + eps);
}

void mlvm_fill_f32(size_t n, float v, float *out)
{
    size_t i;
    for (i = 0; i < n; ++i)
        out[i] = v;
}

void mlvm_fill_i32(size_t n, int32_t v, int32_t *out)
{
    size_t i;
    for (i = 0; i < n; ++i)
        out[i] = v;
}

/* Truncates toward zero; out-of-range values are the C conversion's. */
void mlvm_cast_f32_i32(size_t n, const float *in, int32_t *out)
{
    size_t i;
    for (i = 0; i < n; ++i)
        out[i] = mlvm_f32_to_i32(in[i]); /* truncates, saturates, NaN -> 0 */
}

void mlvm_cast_i32_f32(size_t n, const int32_t *in, float *out)
{
    size_t i;
    for (i = 0; i < n; ++i)
        out[i] = (float)in[i];
}

void mlvm_copy(size_t nbytes, const void *src, void *dst)
{
    if (src != dst)
        memmove(dst, src, nbytes);
}


void mlvm_epilogue_bias_f32(const void *ctx, mlvm_index_t i0, mlvm_index_t rows, mlvm_index_t j0,
                            mlvm_index_t cols, float *tile, mlvm_index_t ldo)
{
    const mlvm_bias_t *e = (const mlvm_bias_t *)ctx;
    mlvm_index_t i;
    (void)i0;
    for (i = 0; i < rows; ++i)
        mlvm_bias_run(e->bias + j0, e->lo, tile + i * ldo, cols);
}

#ifdef MLVM_FPU_VFP /* (vfp.h) */
/* Cortex-M cores with a single-precision FPU: the clamp's first n / 4 * 4
 * values in blocks of four, one VLDM and one VSTM a block (gcc loads and
 * stores each value alone): relu 5 instructions a value where the loop
 * took 8, a clip 9 where it took 12 (a MobileNet's ReLU6 after each of its
 * GEMMs). The rules of mlvm_clamp_run: relu sets the value to +0 where it
 * is less than 0 (MI: not for -0 or NaN); a clip sets lo where the value
 * is at most lo (LS: ordered), then hi where it is at least hi (GE:
 * ordered). Returns the values done. */
#define MLVM_CLAMP_BOUND(r, cmp, cond, bound)                                                  \
    "vcmp.f32 " r ", " cmp "\n\tvmrs APSR_nzcv, fpscr\n\tit " cond "\n\tvmov" cond ".f32 " r \
    ", " bound "\n\t"
static mlvm_index_t clamp_blocks(const mlvm_clamp_t *c, float *x, mlvm_index_t n)
{
    mlvm_index_t blocks = n / 4;
    float *p = x;
    if (blocks == 0)
        return 0;
    if (c->relu) {
        const int32_t zero = 0;
        __asm__ volatile("vmov s4, %[z]\n"
                         "1:\n\tvldmia %[p], {s0-s3}\n\t"
                         MLVM_CLAMP_BOUND("s0", "#0", "mi", "s4") MLVM_CLAMP_BOUND("s1", "#0", "mi", "s4")
                         MLVM_CLAMP_BOUND("s2", "#0", "mi", "s4") MLVM_CLAMP_BOUND("s3", "#0", "mi", "s4")
                         "vstmia %[p]!, {s0-s3}\n\tsubs %[b], %[b], #1\n\tbne 1b"
                         : [p] "+r"(p), [b] "+r"(blocks), "+m"(*(float(*)[])x)
                         : [z] "r"(zero)
                         : "s0", "s1", "s2", "s3", "s4", "cc");
    } else {
        __asm__ volatile("vmov s4, %[lo]\n\tvmov s5, %[hi]\n"
                         "1:\n\tvldmia %[p], {s0-s3}\n\t"
                         MLVM_CLAMP_BOUND("s0", "s4", "ls", "s4") MLVM_CLAMP_BOUND("s0", "s5", "ge", "s5")
                         MLVM_CLAMP_BOUND("s1", "s4", "ls", "s4") MLVM_CLAMP_BOUND("s1", "s5", "ge", "s5")
                         MLVM_CLAMP_BOUND("s2", "s4", "ls", "s4") MLVM_CLAMP_BOUND("s2", "s5", "ge", "s5")
                         MLVM_CLAMP_BOUND("s3", "s4", "ls", "s4") MLVM_CLAMP_BOUND("s3", "s5", "ge", "s5")
                         "vstmia %[p]!, {s0-s3}\n\tsubs %[b], %[b], #1\n\tbne 1b"
                         : [p] "+r"(p), [b] "+r"(blocks), "+m"(*(float(*)[])x)
                         : [lo] "r"(c->lo), [hi] "r"(c->hi)
                         : "s0", "s1", "s2", "s3", "s4", "s5", "cc");
    }
    return n / 4 * 4;
}
#undef MLVM_CLAMP_BOUND
#else
#define clamp_blocks(c, x, n) ((void)(c), (void)(x), (void)(n), (mlvm_index_t)0)
#endif

void mlvm_epilogue_clamp_f32(const void *ctx, mlvm_index_t i0, mlvm_index_t rows, mlvm_index_t j0,
                             mlvm_index_t cols, float *tile, mlvm_index_t ldo)
{
    const mlvm_clamp_t *c = (const mlvm_clamp_t *)ctx;
    mlvm_index_t i;
    (void)i0, (void)j0;
    if (ldo == cols && rows > 1) { /* contiguous rows (planes of a conv): one run */
        cols *= rows;
        rows = 1;
    }
    for (i = 0; i < rows; ++i) {
        float *row = tile + i * ldo;
        const mlvm_index_t done = clamp_blocks(c, row, cols);
        mlvm_clamp_run(c, row + done, cols - done);
    }
}
