/* Scalar semantics generated loops call where C leaves a case undefined or
 * differs from the dialect's definition (docs/ops.md, "Element types"):
 *
 * - integer division truncates; x / 0 is 0 and INT_MIN / -1 is INT_MIN
 *   (wraps): nothing traps;
 * - mod: `mod` takes the sign of the divisor (Python, numpy.mod), `fmod`
 *   the sign of the dividend (C); x mod 0 is 0 for integers;
 * - shifts by a negative amount or by the width or more give 0 (an
 *   arithmetic right shift of a negative value gives -1);
 * - float -> integer casts truncate toward zero and saturate; NaN gives 0;
 * - quantization rounds half to even and saturates; NaN gives the zero point.
 *
 * Signed results are converted from unsigned arithmetic, which wraps on the
 * two's complement targets mlvm supports (gcc, clang). */
#ifndef MLVM_SCALAR_H_
#define MLVM_SCALAR_H_

#include <math.h>
#include <stdint.h>

#define MLVM_SIGNED_OPS_(N, T, U, MIN)                                        \
    static inline T mlvm_scalar_div_##N(T a, T b)                                    \
    {                                                                         \
        return b == 0 ? (T)0 : b == -1 ? (T)(0u - (U)a) : (T)(a / b);       \
    }                                                                         \
    static inline T mlvm_scalar_fmod_##N(T a, T b)                                   \
    {                                                                         \
        return b == 0 || b == -1 ? (T)0 : (T)(a % b);                         \
    }                                                                         \
    static inline T mlvm_scalar_mod_##N(T a, T b)                                    \
    {                                                                         \
        const T r = mlvm_scalar_fmod_##N(a, b);                                      \
        return r != 0 && (r < 0) != (b < 0) ? (T)((U)r + (U)b) : r;           \
    }                                                                         \
    static inline T mlvm_scalar_shl_##N(T a, T s)                                    \
    {                                                                         \
        return s < 0 || s >= (T)(8 * sizeof(T)) ? (T)0 : (T)((U)a << s);      \
    }                                                                         \
    static inline T mlvm_scalar_shr_##N(T a, T s)                                    \
    {                                                                         \
        if (s < 0 || s >= (T)(8 * sizeof(T)))                                 \
            return a < 0 ? (T)-1 : (T)0;                                      \
        return a < 0 ? (T) ~(~(U)a >> s) : (T)((U)a >> s);                    \
    }

#define MLVM_UNSIGNED_OPS_(N, T)                                              \
    static inline T mlvm_scalar_div_##N(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); } \
    static inline T mlvm_scalar_fmod_##N(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); } \
    static inline T mlvm_scalar_mod_##N(T a, T b) { return mlvm_scalar_fmod_##N(a, b); }     \
    static inline T mlvm_scalar_shl_##N(T a, T s)                                    \
    {                                                                         \
        return s >= 8 * sizeof(T) ? (T)0 : (T)((uint64_t)a << s);             \
    }                                                                         \
    static inline T mlvm_scalar_shr_##N(T a, T s)                                    \
    {                                                                         \
        return s >= 8 * sizeof(T) ? (T)0 : (T)(a >> s);                       \
    }

/* The unsigned type each width computes in (no promotion to int). */
MLVM_SIGNED_OPS_(i8, int8_t, uint32_t, INT8_MIN)
MLVM_SIGNED_OPS_(i16, int16_t, uint32_t, INT16_MIN)
MLVM_SIGNED_OPS_(i32, int32_t, uint32_t, INT32_MIN)
MLVM_SIGNED_OPS_(i64, int64_t, uint64_t, INT64_MIN)
MLVM_UNSIGNED_OPS_(ui8, uint8_t)
MLVM_UNSIGNED_OPS_(ui16, uint16_t)
MLVM_UNSIGNED_OPS_(ui32, uint32_t)
MLVM_UNSIGNED_OPS_(ui64, uint64_t)

/* numpy.mod of floats: the sign of the divisor; x mod 0 is NaN. */
static inline float mlvm_scalar_mod_f32(float a, float b)
{
    const float r = fmodf(a, b);
    if (r != 0.0f)
        return (r < 0.0f) != (b < 0.0f) ? r + b : r;
    return b < 0.0f ? -0.0f : 0.0f;
}

static inline double mlvm_scalar_mod_f64(double a, double b)
{
    const double r = fmod(a, b);
    if (r != 0.0)
        return (r < 0.0) != (b < 0.0) ? r + b : r;
    return b < 0.0 ? -0.0 : 0.0;
}

/* Float -> integer: truncate toward zero, saturate, NaN -> 0. The bounds
 * are powers of two, exact in float and double. */
#define MLVM_TO_INT_(N, T, LO, HI)                                            \
    static inline T mlvm_f32_to_##N(float x)                                  \
    {                                                                         \
        return x != x ? (T)0 : x <= (float)(LO) ? (T)(LO)                     \
             : x >= (float)(HI) + 1.0f ? (T)(HI) : (T)x;                      \
    }                                                                         \
    static inline T mlvm_f64_to_##N(double x)                                 \
    {                                                                         \
        return x != x ? (T)0 : x <= (double)(LO) ? (T)(LO)                    \
             : x >= (double)(HI) + 1.0 ? (T)(HI) : (T)x;                      \
    }

MLVM_TO_INT_(i8, int8_t, INT8_MIN, INT8_MAX)
MLVM_TO_INT_(i16, int16_t, INT16_MIN, INT16_MAX)
MLVM_TO_INT_(i32, int32_t, INT32_MIN, INT32_MAX)
MLVM_TO_INT_(i64, int64_t, INT64_MIN, INT64_MAX)
MLVM_TO_INT_(ui8, uint8_t, 0, UINT8_MAX)
MLVM_TO_INT_(ui16, uint16_t, 0, UINT16_MAX)
MLVM_TO_INT_(ui32, uint32_t, 0, UINT32_MAX)
MLVM_TO_INT_(ui64, uint64_t, 0, UINT64_MAX)

/* Quantization: nearbyint(r) + zp, saturated to the type; NaN gives zp.
 * (nearbyint rounds half to even in the default rounding mode.) With a
 * Cortex-M's hardware float ABI one VCVTR (rounding in the FPSCR's mode,
 * as nearbyintf does; FPv4 has no VRINTR; NaN converts to 0, values past
 * int32 to its bounds), then with the DSP extension a saturating QADD of
 * zp and one USAT / SSAT to the type: 4 instructions where the float
 * clamp's compares and branches made it about ten (MobileNet's 27,648
 * input values 14 each, the loop counted); without it, r clamped first to
 * the type's range less zp (integers: clamping before rounding gives the
 * same integer; NaN passes through the clamp) and an integer add. (newlib's
 * nearbyintf is a call and some thirty integer instructions more.) */
#if defined(__GNUC__) && defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4) \
    && defined(__ARM_PCS_VFP) && defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SAT)
#include <arm_acle.h>
#define MLVM_QUANTIZE_(N, T, LO, HI)                                          \
    static inline T mlvm_quantize_##N(float r, T zp)                          \
    {                                                                         \
        int32_t i;                                                            \
        __asm__("vcvtr.s32.f32 %0, %0" : "+t"(r));                            \
        __builtin_memcpy(&i, &r, sizeof i);                                   \
        i = __qadd(i, (int32_t)zp);                                           \
        return (T)((LO) < 0 ? __ssat(i, 8 * (int)sizeof(T))                   \
                            : (int32_t)__usat(i, 8 * (int)sizeof(T)));        \
    }
#elif defined(__GNUC__) && defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4) \
    && defined(__ARM_PCS_VFP)
#define MLVM_QUANTIZE_(N, T, LO, HI)                                          \
    static inline T mlvm_quantize_##N(float r, T zp)                          \
    {                                                                         \
        const float lo = (float)(LO) - (float)zp, hi = (float)(HI) - (float)zp; \
        float f = r < lo ? lo : r > hi ? hi : r;                              \
        int32_t i;                                                            \
        __asm__("vcvtr.s32.f32 %0, %0" : "+t"(f));                            \
        __builtin_memcpy(&i, &f, sizeof i);                                   \
        return (T)(i + (int32_t)zp);                                          \
    }
#else
/* The same clamp first, NaN made 0: a loop of them vectorizes into min,
 * max, a blend, one rounding and one conversion (AVX2: 1.5x faster than
 * rounding first, then adding and saturating in floats). Three selects of
 * two values each, not one nested one: gcc if-converts a loop with
 * several of these (a quantized model's fused requantization chains) only
 * then, where the nested form's PHI of four values left 124 of a quantized
 * DenseNet's loops scalar ("control flow in loop"). */
#define MLVM_QUANTIZE_(N, T, LO, HI)                                          \
    static inline T mlvm_quantize_##N(float r, T zp)                          \
    {                                                                         \
        const float lo = (float)(LO) - (float)zp, hi = (float)(HI) - (float)zp; \
        float f = r != r ? 0.0f : r;                                          \
        f = f < lo ? lo : f;                                                  \
        f = f > hi ? hi : f;                                                  \
        return (T)((int32_t)nearbyintf(f) + (int32_t)zp);                     \
    }
#endif

MLVM_QUANTIZE_(i8, int8_t, INT8_MIN, INT8_MAX)
MLVM_QUANTIZE_(ui8, uint8_t, 0, UINT8_MAX)
MLVM_QUANTIZE_(i16, int16_t, INT16_MIN, INT16_MAX)
MLVM_QUANTIZE_(ui16, uint16_t, 0, UINT16_MAX)

#undef MLVM_QUANTIZE_
#undef MLVM_SIGNED_OPS_
#undef MLVM_UNSIGNED_OPS_
#undef MLVM_TO_INT_

#endif /* MLVM_SCALAR_H_ */
