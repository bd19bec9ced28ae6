/* npucc_eltwise_s8_fast.h - int8 Add/Mul and float->int8 QuantizeLinear, fast CPU form (C99).
 *
 * Bit-exact with npucc_add_s8 / npucc_mul_s8 (npucc_eltwise_s8.h) and
 * npucc_quantize_f32_s8 (npucc_quantize.h) for what the compiler routes here
 * (--cpu-kernels=fast); broadcasting as in npucc_eltwise_s8.h.
 *   npucc_add_s8_fast: ta[a + 128] and tb[b + 128] are each input's rescaled value
 *     npucc_mul_qmult(((v - zp) << left_shift), mult, shift) for every int8 v, tabulated by
 *     the compiler (which also checks that |ta| + |tb| < 2^30 and 0 <= out_shift <= 31);
 *     per element: two table loads, one add and TFLite's output stage (npucc_mul_qmult)
 *     in 32-bit arithmetic.
 *   npucc_mul_s8_fast: (a - a_zp) * (b - b_zp) requantized with the npucc_rq32_prep words rq
 *     (npucc_requant.h, rounding NPUCC_RQ_EXACT).
 *   npucc_quantize_f32_s8_fast: per-tensor QuantizeLinear, y = sat(rint(x / scale[0]) + zp),
 *     with the rounding done by float arithmetic instead of a libm rintf call. */
#ifndef NPUCC_ELTWISE_S8_FAST_H
#define NPUCC_ELTWISE_S8_FAST_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_add_s8_fast(const int8_t *A, const int8_t *B, int8_t *Y, const int32_t *ta,
                       const int32_t *tb, int32_t out_mult, int32_t out_shift, int32_t out_zp,
                       int32_t act_min, int32_t act_max, int32_t rank, const int32_t *shape,
                       const int32_t *a_str, const int32_t *b_str);
void npucc_mul_s8_fast(const int8_t *A, const int8_t *B, int8_t *Y, int32_t a_zp, int32_t b_zp,
                       const int32_t *rq, int32_t out_zp, int32_t act_min, int32_t act_max,
                       int32_t rank, const int32_t *shape, const int32_t *a_str,
                       const int32_t *b_str);
void npucc_quantize_f32_s8_fast(const float *X, int8_t *Y, int32_t n, const float *scale,
                                int32_t zp);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_ELTWISE_S8_FAST_H */
