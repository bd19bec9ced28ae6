/* npucc_conv_s8.h - int8 2-D convolution (regular, grouped, depthwise) (C99, integer only).
 *
 * Layouts are ONNX's: X [N][C][H][W] int8, W [M][C/group][KH][KW] int8,
 * bias [M] int32 (may be NULL), Y [N][M][OH][OW] int8. Pads are the top/left
 * pads; bottom/right pads are implied by OH/OW. Per output channel m:
 *   acc = bias[m] + sum (x - x_zp) * (w - w_zp[m])   (padding contributes 0)
 *   y   = npucc_requant_i8_r(acc, mult[m], shift[m], out_zp, act_min, act_max, rounding)
 * rounding is NPUCC_RQ_EXACT or NPUCC_RQ_FP32 (npucc_requant.h). w_zp may be
 * NULL (all zero). `scratch` holds OH*OW int32 accumulators.
 * npucc_conv2d_s8_acc32 writes acc itself to an int32 Y (ONNX ConvInteger).
 * 1-D convolutions are 2-D ones with H = KH = 1. */
#ifndef NPUCC_CONV_S8_H
#define NPUCC_CONV_S8_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_conv2d_s8(const int8_t *X, const int8_t *Wt, const int32_t *bias, int8_t *Y,
                     int32_t *scratch, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                     int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                     int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t group, int32_t x_zp,
                     int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *w_zp,
                     const int32_t *mult, const int32_t *shift, int32_t rounding);
void npucc_conv2d_s8_acc32(const int8_t *X, const int8_t *Wt, const int32_t *bias, int32_t *Y,
                           int32_t *scratch, int32_t N, int32_t C, int32_t H, int32_t W,
                           int32_t M, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                           int32_t SH, int32_t SW, int32_t DH, int32_t DW, int32_t PT,
                           int32_t PL, int32_t group, int32_t x_zp, const int32_t *w_zp);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_CONV_S8_H */
