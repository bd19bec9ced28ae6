/* npucc_fc_s8_fast.h - int8 fully connected layer (Gemm/MatMul with one row of A and
 * constant weights), fast CPU form (C99).
 *
 * Same result as npucc_gemm_s8 (npucc_gemm_s8.h) bit for bit for what the compiler routes
 * here (--cpu-kernels=fast; zero weight zero points):
 *   Y[r][j] = requant(bias_f[j] + sum_k A[r][k] * W[j][k])   for each row r < rows
 * bias_f[j] = bias[j] - a_zp * sum_k W[j][k] (the input zero point folded in by the
 * compiler); rq holds `per` (1 or N) groups of NPUCC_RQ32_WORDS words from
 * npucc_rq32_prep (npucc_requant.h). The weights are packed at compile time by
 * npucc_fc_s8_pack: output channels in blocks of four (the last block padded with zero
 * rows), K in groups of four (the last group padded with zeros), channel c's four weights
 * of group g one word at byte (b * kpad(K)/4 + g) * 16 + 4c in natural order k0..k3, so
 * that SXTB16 of a weight word and of four activations pair (k0, k2) and (k1, k3) alike.
 * The activations are read in place: no scratch. Each block of four channels is one
 * pass over A's row with the four sums in registers (Arm DSP: SXTB16 + SMLAD, two
 * products per instruction). */
#ifndef NPUCC_FC_S8_FAST_H
#define NPUCC_FC_S8_FAST_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline int32_t npucc_fc_s8_kpad(int32_t K) { return (K + 3) / 4 * 4; }
static inline size_t npucc_fc_s8_packed_bytes(int32_t N, int32_t K) {
  return (size_t)((N + 3) / 4) * 4 * (size_t)npucc_fc_s8_kpad(K);
}
/* w [N][K] into out[npucc_fc_s8_packed_bytes(N, K)]. */
static inline void npucc_fc_s8_pack(const int8_t *w, int32_t N, int32_t K, int8_t *out) {
  int32_t j, k, G = npucc_fc_s8_kpad(K) / 4;
  memset(out, 0, npucc_fc_s8_packed_bytes(N, K));
  for (j = 0; j < N; j++)
    for (k = 0; k < K; k++)
      out[((size_t)(j / 4) * (size_t)G + (size_t)(k / 4)) * 16 + (size_t)(j % 4) * 4 +
          (size_t)(k % 4)] = w[(size_t)j * (size_t)K + (size_t)k];
}

void npucc_fc_s8_fast(const int8_t *A, const int8_t *Wp, const int32_t *bias_f, int8_t *Y,
                      int32_t rows, int32_t N, int32_t K, int32_t out_zp, int32_t act_min,
                      int32_t act_max, int32_t per, const int32_t *rq, int32_t rounding);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_FC_S8_FAST_H */
