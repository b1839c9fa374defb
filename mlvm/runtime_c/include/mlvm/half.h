/* f16 (IEEE binary16) and bf16 (bfloat16) as stored bits.
 *
 * Values of both types are computed in float: loads widen exactly, stores
 * round to nearest even (ties to even), overflow gives infinity, NaN stays
 * NaN (quiet, sign kept). Integer-only code: the same bits on every target,
 * with or without a hardware half type. From double, rounding goes through
 * a float rounded to odd, so the result is the correctly rounded one (no
 * double rounding). */
#ifndef MLVM_HALF_H_
#define MLVM_HALF_H_

#include <stdint.h>

#include "mlvm/vmath.h" /* mlvm_f32_to_bits, mlvm_bits_to_f32 */

static inline float mlvm_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    if (exp == 0x1Fu) /* inf / NaN */
        return mlvm_bits_to_f32(sign | 0x7F800000u | (man << 13));
    if (exp != 0)
        return mlvm_bits_to_f32(sign | ((exp + 112u) << 23) | (man << 13));
    if (man == 0)
        return mlvm_bits_to_f32(sign);
    {   /* subnormal: normalise */
        uint32_t e = 113u;
        while ((man & 0x400u) == 0) {
            man <<= 1;
            --e;
        }
        return mlvm_bits_to_f32(sign | (e << 23) | ((man & 0x3FFu) << 13));
    }
}

static inline uint16_t mlvm_f32_to_f16(float f)
{
    const uint32_t u = mlvm_f32_to_bits(f);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7FFFFFFFu;
    if (a >= 0x7F800000u) /* inf, NaN (quiet, top payload bits kept) */
        return (uint16_t)(sign | 0x7C00u | (a > 0x7F800000u ? 0x200u | ((a >> 13) & 0x3FFu) : 0u));
    if (a >= 0x477FF000u) /* rounds to >= 65520: overflow */
        return (uint16_t)(sign | 0x7C00u);
    if (a >= 0x38800000u) { /* normal in f16 */
        const uint32_t r = a + 0xFFFu + ((a >> 13) & 1u);
        return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
    }
    if (a < 0x33000000u) /* below half the smallest subnormal: +-0 */
        return sign;
    {   /* subnormal in f16: shift the full significand, round to even */
        const uint32_t e = a >> 23;
        const uint32_t man = (a & 0x7FFFFFu) | 0x800000u;
        const uint32_t shift = 126u - e; /* 14 .. 24 */
        const uint32_t half = 1u << (shift - 1u);
        const uint32_t rest = man & ((1u << shift) - 1u);
        uint32_t q = man >> shift;
        if (rest > half || (rest == half && (q & 1u)))
            ++q;
        return (uint16_t)(sign | q);
    }
}

static inline float mlvm_bf16_to_f32(uint16_t b)
{
    return mlvm_bits_to_f32((uint32_t)b << 16);
}

static inline uint16_t mlvm_f32_to_bf16(float f)
{
    const uint32_t u = mlvm_f32_to_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) /* NaN: quiet, sign kept */
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* A double rounded to a float toward zero, with the last bit set when
 * inexact ("round to odd"): rounding that float again to a narrower type
 * gives the correctly rounded result. */
static inline float mlvm_f64_to_f32_odd_(double d)
{
    float f = (float)d;
    if (d == d && (double)f != d) {
        uint32_t u = mlvm_f32_to_bits(f);
        if ((f < 0 ? -(double)f : (double)f) > (d < 0 ? -d : d))
            --u; /* rounded away from zero: step back (inf -> max) */
        f = mlvm_bits_to_f32(u | 1u);
    }
    return f;
}

static inline uint16_t mlvm_f64_to_f16(double d)
{
    return mlvm_f32_to_f16(mlvm_f64_to_f32_odd_(d));
}

static inline uint16_t mlvm_f64_to_bf16(double d)
{
    return mlvm_f32_to_bf16(mlvm_f64_to_f32_odd_(d));
}

#endif /* MLVM_HALF_H_ */
