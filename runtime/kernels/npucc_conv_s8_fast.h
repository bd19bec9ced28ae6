/* npucc_conv_s8_fast.h - int8 2-D convolution, fast CPU form (C99, integer only).
 *
 * Same result as npucc_conv2d_s8 (npucc_conv_s8.h) bit for bit, for the cases the
 * compiler routes here (--cpu-kernels=fast): zero weight zero points and group 1
 * (npucc_conv2d_s8_fast) or depthwise with one output channel per input channel
 * (npucc_dwconv2d_s8_fast). Layouts are ONNX's: X [N][C][H][W], W [M][C][KH][KW]
 * (each output channel's K = C*KH*KW weights contiguous), Y [N][M][OH][OW]. The
 * compiler precomputes per output channel
 *   bias_f[m] = bias[m] - x_zp * sum_k W[m][k]   (input zero point folded in), and
 *   rq[4m..4m+3] = npucc_rq32_prep(mult[m], shift[m], rounding)  (npucc_requant.h),
 * so the inner loops are pure int8 dot products and padding reads x_zp.
 * `panel` holds 2*C*KH*KW int8 (two output pixels' input patches); the depthwise
 * kernel's `rows` holds KH*((OW-1)*SW + (KW-1)*DW + 1) int8 (one output row's input rows,
 * padded with x_zp). Pads are the top/left pads; bottom/right ones are implied. */
#ifndef NPUCC_CONV_S8_FAST_H
#define NPUCC_CONV_S8_FAST_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_conv2d_s8_fast(const int8_t *X, const int8_t *Wt, const int32_t *bias_f, int8_t *Y,
                          int8_t *panel, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                          int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                          int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t x_zp,
                          int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *rq,
                          int32_t rounding);
void npucc_dwconv2d_s8_fast(const int8_t *X, const int8_t *Wt, const int32_t *bias_f, int8_t *Y,
                            int8_t *rows, int32_t N, int32_t C, int32_t H, int32_t W, int32_t OH,
                            int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                            int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t x_zp,
                            int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *rq,
                            int32_t rounding);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_CONV_S8_FAST_H */
