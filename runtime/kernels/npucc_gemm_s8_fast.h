/* npucc_gemm_s8_fast.h - int8 Gemm/MatMul with constant weights, fast CPU form (C99).
 *
 * Same result as npucc_gemm_s8 (npucc_gemm_s8.h) bit for bit for a constant B shared by
 * all batches (b_bs = 0) with zero weight zero points, the cases the compiler routes
 * here (--cpu-kernels=fast):
 *   Y[b][i][j] = requant(bias_f[j] + sum_k A[b][i][k] * B(k, j))
 * B(k, j) = B[k*b_rs + j*b_cs]: transposed [N][K] weights (b_rs = 1, b_cs = K) use the
 * register-blocked dot products of npucc_dot_s8.h, row-major [K][N] (b_rs = N,
 * b_cs = 1) four columns at a time. bias_f[j] = bias[j] - a_zp * sum_k B(k, j) (the
 * input zero point folded in by the compiler); rq holds `per` (1 or N) groups of
 * NPUCC_RQ32_WORDS words from npucc_rq32_prep (npucc_requant.h). No scratch. */
#ifndef NPUCC_GEMM_S8_FAST_H
#define NPUCC_GEMM_S8_FAST_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_gemm_s8_fast(const int8_t *A, const int8_t *B, const int32_t *bias_f, int8_t *Y,
                        int32_t rows, int32_t N, int32_t K, int32_t b_rs, int32_t b_cs,
                        int32_t out_zp, int32_t act_min, int32_t act_max, int32_t per,
                        const int32_t *rq, int32_t rounding);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_GEMM_S8_FAST_H */
