/* npucc_softmax_s8.h - int8 -> int8 Softmax (C99, integer only).
 *
 * X and Y are [outer][axis_n][inner]. For each softmax vector:
 *   d_i = max_j x_j - x_i                        (0..255)
 *   e_i = exp_table[d_i]                         (round(2^16 exp(-s_x d)), compiler-built)
 *   S   = sum_i e_i                              (int64)
 *   y_i = saturate_i8(out_zp + floor((2 e_i inv_scale + S 2^16) / (S 2^17)))
 * i.e. out_zp + round_half_up(e_i inv_scale / (S 2^16)) with inv_scale =
 * round(2^16 / s_y) (quant::softmaxInvScaleQ16), all in int64. */
#ifndef NPUCC_SOFTMAX_S8_H
#define NPUCC_SOFTMAX_S8_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_softmax_s8(const int8_t *X, int8_t *Y, int32_t outer, int32_t axis_n, int32_t inner,
                      int32_t out_zp, int32_t inv_scale, const int32_t *exp_table);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_SOFTMAX_S8_H */
