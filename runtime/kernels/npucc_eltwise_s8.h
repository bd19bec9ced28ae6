/* npucc_eltwise_s8.h - int8 binary elementwise ops and requantizing copies (C99, integer only).
 *
 * Broadcasting: Y is dense with shape[0..rank); A's element for output index
 * idx is A[sum idx[k] * a_str[k]] (stride 0 on broadcast axes), B likewise.
 * rank is 1..NPUCC_ELT_S8_MAX_RANK.
 *   npucc_add_s8: y = npucc_add_i8(a, b, ...) (TFLite scheme, docs/quantization.md)
 *   npucc_mul_s8: y = requant((a - a_zp) * (b - b_zp), mult, shift, out_zp, act_min, act_max)
 *   npucc_requant_rows_s8(X, Y, rows, row_elems, y_stride, y_off, x_zp, mult, shift, out_zp):
 *       Y[y_off + r*y_stride + j] = requant(X[r*row_elems + j] - x_zp, mult, shift, out_zp,
 *       -128, 127) (one Concat input whose quantization differs from the output's). */
#ifndef NPUCC_ELTWISE_S8_H
#define NPUCC_ELTWISE_S8_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPUCC_ELT_S8_MAX_RANK 6

void npucc_add_s8(const int8_t *A, const int8_t *B, int8_t *Y, int32_t a_zp, int32_t b_zp,
                  int32_t left_shift, int32_t a_mult, int32_t a_shift, int32_t b_mult,
                  int32_t b_shift, int32_t out_mult, int32_t out_shift, int32_t out_zp,
                  int32_t act_min, int32_t act_max, int32_t rank, const int32_t *shape,
                  const int32_t *a_str, const int32_t *b_str);

void npucc_mul_s8(const int8_t *A, const int8_t *B, int8_t *Y, int32_t a_zp, int32_t b_zp,
                  int32_t mult, int32_t shift, int32_t out_zp, int32_t act_min, int32_t act_max,
                  int32_t rank, const int32_t *shape, const int32_t *a_str, const int32_t *b_str);

void npucc_requant_rows_s8(const int8_t *X, int8_t *Y, int32_t rows, int32_t row_elems,
                           int32_t y_stride, int32_t y_off, int32_t x_zp, int32_t mult,
                           int32_t shift, int32_t out_zp);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_ELTWISE_S8_H */
