/* mlvm.qsoftmax: a quantized softmax as onnxruntime's QLinearSoftmax
 * computes it, so that the bytes are its own: per row, the table (the
 * compiler's exponentials of each byte value's distance from 255, by the
 * byte's bits) read from where the row's largest value meets its largest
 * entry, the row's entries summed in order in f32, each output
 * nearbyint((t / sum) * floor(1 / ys)) + zy, saturated (a NaN or huge
 * quotient, which the table's margin below FLT_MAX rules out for finite
 * scales, gives the largest value). */
#include <math.h>

#include "mlvm/kernels.h"
#include "mlvm/kernels_nn.h"

/* The row's value v as the table's index (the row's largest at 255, or
 * at 127 for i8, whose table is by two's-complement bits). */
static unsigned qs_index(const uint8_t *x, size_t j, int32_t is_signed, int32_t top)
{
    return is_signed ? (unsigned)(uint8_t)(127 - top + (int8_t)x[j]) : (unsigned)(255 - top + x[j]);
}

void mlvm_qsoftmax_8(size_t rows, size_t n, int32_t is_signed, const void *x, const float *table,
                     const float *ys, const void *zy, void *y)
{
    const float inv = floorf(1.0f / *ys);
    const int32_t z = is_signed ? *(const int8_t *)zy : *(const uint8_t *)zy;
    const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
    size_t r, j;
    for (r = 0; r < rows; ++r) {
        const uint8_t *xr = (const uint8_t *)x + r * n;
        uint8_t *yr = (uint8_t *)y + r * n;
        int32_t top = is_signed ? (int8_t)xr[0] : xr[0];
        float sum = 0.0f;
        for (j = 1; j < n; ++j) {
            const int32_t v = is_signed ? (int8_t)xr[j] : xr[j];
            top = v > top ? v : top;
        }
        for (j = 0; j < n; ++j)
            sum += table[qs_index(xr, j, is_signed, top)];
        for (j = 0; j < n; ++j) {
            const float q = nearbyintf(table[qs_index(xr, j, is_signed, top)] / sum * inv);
            int32_t k = q >= 0.0f && q <= 0x1p30f ? (int32_t)q + z : hi;
            k = k < lo ? lo : k > hi ? hi : k;
            yr[j] = (uint8_t)k; /* i8: its two's-complement byte */
        }
    }
}
