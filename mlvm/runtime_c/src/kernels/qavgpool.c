/* mlvm.qavgpool2d: a quantized average pool as onnxruntime's
 * QLinearAveragePool computes it, so that the bytes are its own: every
 * value dequantized in f32, (float)(x - zx) * xs (what onnxruntime's
 * table of the 256 byte values holds; no table here, a kilobyte of stack
 * on a microcontroller), each window summed from 0 row by row, divided by its count, then the zero
 * point added before rounding half to even. The order of the sums is
 * part of the result (a 2x2 window summed column by column differs in a
 * fifth of a percent of a quantized DenseNet's outputs), so no partial
 * sums are shared between windows. */
#include "mlvm/kernels.h"
#include "mlvm/kernels_nn.h"
#include "mlvm/scalar.h"

static mlvm_index_t qp_max(mlvm_index_t a, mlvm_index_t b) { return a > b ? a : b; }
static mlvm_index_t qp_min(mlvm_index_t a, mlvm_index_t b) { return a < b ? a : b; }

void mlvm_qavgpool2d_8(const mlvm_pool2d_t *p, int32_t is_signed, const void *x, const float *xs,
                       const void *zx, const float *ys, const void *zy, void *out)
{
    const int32_t zxv = is_signed ? *(const int8_t *)zx : *(const uint8_t *)zx;
    const float zyf = (float)(is_signed ? *(const int8_t *)zy : *(const uint8_t *)zy);
    const float s = *xs, sy = *ys;
    const uint8_t *in = (const uint8_t *)x;
    uint8_t *o = (uint8_t *)out;
    mlvm_index_t pl, oy, ox, i, j;
    for (pl = 0; pl < p->planes; ++pl) {
        const uint8_t *xp = in + pl * p->h * p->w;
        for (oy = 0; oy < p->oh; ++oy) {
            const mlvm_index_t h0 = qp_max(oy * p->sh - p->pt, 0);
            const mlvm_index_t h1 = qp_min(oy * p->sh - p->pt + p->kh, p->h);
            for (ox = 0; ox < p->ow; ++ox, ++o) {
                const mlvm_index_t w0 = qp_max(ox * p->sw - p->pl, 0);
                const mlvm_index_t w1 = qp_min(ox * p->sw - p->pl + p->kw, p->w);
                float sum = 0.0f, f;
                for (i = h0; i < h1; ++i)
                    for (j = w0; j < w1; ++j)
                        sum += (float)((is_signed ? (int32_t)(int8_t)xp[i * p->w + j] : xp[i * p->w + j]) - zxv) * s;
                f = sum / (float)((h1 - h0) * (w1 - w0)) / sy + zyf;
                *o = is_signed ? (uint8_t)mlvm_quantize_i8(f, 0) : mlvm_quantize_ui8(f, 0);
            }
        }
    }
}
