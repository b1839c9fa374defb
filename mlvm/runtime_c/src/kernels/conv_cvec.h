/* Internal: convolution as a product with the output channels in the
 * vector lanes (conv_cvec.c), for weights stored [taps][o] ("IHWO").
 *
 * out[j * m + q] = bias[j] + sum_t x[off(t) + at(q)] * w[t * n + j] (or, with
 * w_panel = P, w[(j / P) * P * k + t * P + j % P]: each panel's weights
 * contiguous, read in order by its slivers) for
 * output channel j < n and output position q < m of each image (x and out
 * advanced by x_image and out_image per image), where at(q) = (q / ow) *
 * wq + q % ow (a position's flat index in an input copy of row pitch wq)
 * and off(t) = off[t], or t * t_stride when off is NULL. Each tile is a few
 * positions times a sliver of channels, every position's inputs broadcast
 * against the weights' rows; the tile is transposed on the way out, so
 * out stays NCHW. No position is computed that is then dropped, and a
 * small map fills the lanes as long as there are channels. */
#ifndef MLVM_KERNELS_CONV_CVEC_H_
#define MLVM_KERNELS_CONV_CVEC_H_

#include "mlvm/kernels.h"

typedef struct mlvm_cvec {
    mlvm_index_t m, ow, wq;  /* positions, their row width, the input's row pitch */
    mlvm_index_t images;     /* images, x_image and out_image floats apart: tiles */
    mlvm_index_t x_image, out_image; /* run across them (small maps fill them) */
    mlvm_index_t n, k;       /* output channels, taps */
    const float *x;
    const mlvm_index_t *off; /* or NULL: off(t) = t * t_stride */
    mlvm_index_t t_stride;
    const float *w;          /* k x n, or in panels (w_panel) */
    mlvm_index_t w_panel;    /* 0, or w stored [ceil(n / w_panel)][k][w_panel] (a multiple of 32) */
    const float *bias;       /* n, or NULL */
    float *out;              /* n x m */
} mlvm_cvec_t;

/* For off set (mlvm_cvec_at_f32) or NULL (mlvm_cvec_strided_f32): a
 * caller with one kind links only that kernel. */
void mlvm_cvec_at_f32(const mlvm_cvec_t *g);
void mlvm_cvec_strided_f32(const mlvm_cvec_t *g);

#endif /* MLVM_KERNELS_CONV_CVEC_H_ */
