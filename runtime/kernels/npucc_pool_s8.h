/* npucc_pool_s8.h - int8 pooling and mean reduction (C99, integer only).
 *
 * X is [NC][H][W], Y [NC][OH][OW]; PT/PL are the top/left pads, PB/PR the
 * bottom/right ones (windows may also run past them when ceil_mode made OH/OW
 * larger; those taps are never counted).
 *   npucc_maxpool2d_s8: max of the in-image taps (output params = input params).
 *   npucc_avgpool2d_s8: acc = sum over in-image taps of (x - x_zp); count = the
 *       in-image taps, or with count_include_pad the taps inside the padded
 *       image [-PT, H+PB) x [-PL, W+PR); y = requant(acc, mult[count],
 *       shift[count], out_zp, -128, 127), the tables indexed by count in
 *       0..KH*KW hold s_x / (count * s_y) (the count folded into the multiplier).
 *   npucc_reduce_mean_s8: X viewed as [outer][red][inner], Y as [outer][inner]:
 *       y = requant(sum_r (x - x_zp), mult, shift, out_zp, -128, 127) with
 *       M = s_x / (red * s_y) (GlobalAveragePool: outer = N*C, red = H*W, inner = 1). */
#ifndef NPUCC_POOL_S8_H
#define NPUCC_POOL_S8_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_maxpool2d_s8(const int8_t *X, int8_t *Y, int32_t NC, int32_t H, int32_t W, int32_t OH,
                        int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW, int32_t DH,
                        int32_t DW, int32_t PT, int32_t PL);

void npucc_avgpool2d_s8(const int8_t *X, int8_t *Y, int32_t NC, int32_t H, int32_t W, int32_t OH,
                        int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW, int32_t PT,
                        int32_t PL, int32_t PB, int32_t PR, int32_t count_include_pad,
                        int32_t x_zp, int32_t out_zp, const int32_t *mult,
                        const int32_t *shift);

void npucc_reduce_mean_s8(const int8_t *X, int8_t *Y, int32_t outer, int32_t red, int32_t inner,
                          int32_t x_zp, int32_t out_zp, int32_t mult, int32_t shift);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_POOL_S8_H */
