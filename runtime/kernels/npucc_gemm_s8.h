/* npucc_gemm_s8.h - int8 matrix multiply for Gemm/MatMul (C99, integer only).
 *
 *   Y[b][i][j] = requant(bias[j] + sum_k (A[b][i][k] - a_zp) * (B(b,k,j) - b_zp[j]),
 *                        mult[j], shift[j], out_zp, act_min, act_max, rounding)
 * A is [batch][M][K] dense; B(b,k,j) = B[b*b_bs + k*b_rs + j*b_cs] (b_bs = 0 for a
 * shared weight matrix; b_rs = 1, b_cs = K for transposed [N][K] weights). bias
 * may be NULL; b_zp, mult and shift hold `per` values (per == 1: per-tensor,
 * per == N: per output column); rounding: NPUCC_RQ_EXACT or NPUCC_RQ_FP32 (npucc_requant.h).
 * `scratch` holds N int32 accumulators. npucc_gemm_s8_acc32 writes the int32 sums themselves (ONNX
 * MatMulInteger). */
#ifndef NPUCC_GEMM_S8_H
#define NPUCC_GEMM_S8_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_gemm_s8(const int8_t *A, const int8_t *B, const int32_t *bias, int8_t *Y,
                   int32_t *scratch, int32_t batch, int32_t M, int32_t N, int32_t K, int32_t b_bs,
                   int32_t b_rs, int32_t b_cs, int32_t a_zp, int32_t out_zp, int32_t act_min,
                   int32_t act_max, int32_t per, const int32_t *b_zp, const int32_t *mult,
                   const int32_t *shift, int32_t rounding);
void npucc_gemm_s8_acc32(const int8_t *A, const int8_t *B, const int32_t *bias, int32_t *Y,
                         int32_t *scratch, int32_t batch, int32_t M, int32_t N, int32_t K,
                         int32_t b_bs, int32_t b_rs, int32_t b_cs, int32_t a_zp, int32_t per,
                         const int32_t *b_zp);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_GEMM_S8_H */
