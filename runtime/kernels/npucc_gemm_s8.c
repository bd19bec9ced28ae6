/* npucc_gemm_s8.c - int8 GEMM with int32 accumulators and per-column requantization.
 * Row-major weights ([K][N], b_cs == 1) accumulate a whole output row at once
 * (contiguous inner loop); other layouts (transposed [N][K] weights) run one dot
 * product per output. See npucc_gemm_s8.h. */
#include "npucc_gemm_s8.h"
#include "npucc_requant.h"

/* Y (int8, requantized) or Y32 (int32 accumulators, when Y32 is not NULL). */
static void npucc_gs8_core(const int8_t *A, const int8_t *B, const int32_t *bias, int8_t *Y,
                           int32_t *Y32, int32_t *scratch, int32_t batch, int32_t M, int32_t N,
                           int32_t K, int32_t b_bs, int32_t b_rs, int32_t b_cs, int32_t a_zp,
                           int32_t out_zp, int32_t act_min, int32_t act_max, int32_t per,
                           const int32_t *b_zp, const int32_t *mult, const int32_t *shift,
                           int32_t rounding) {
  int32_t bt, i, j, k;
  for (bt = 0; bt < batch; bt++) {
    const int8_t *Bb = B + (size_t)bt * b_bs;
    for (i = 0; i < M; i++) {
      const int8_t *ar = A + ((size_t)bt * M + i) * K;
      size_t yoff = ((size_t)bt * M + i) * N;
      for (j = 0; j < N; j++)
        scratch[j] = bias ? bias[j] : 0;
      if (b_cs == 1) {
        for (k = 0; k < K; k++) {
          int32_t av = (int32_t)ar[k] - a_zp;
          const int8_t *br = Bb + (size_t)k * b_rs;
          if (av == 0)
            continue;
          if (per == 1) {
            int32_t bz = b_zp ? b_zp[0] : 0;
            for (j = 0; j < N; j++)
              scratch[j] += av * ((int32_t)br[j] - bz);
          } else {
            for (j = 0; j < N; j++)
              scratch[j] += av * ((int32_t)br[j] - (b_zp ? b_zp[j] : 0));
          }
        }
      } else {
        for (j = 0; j < N; j++) {
          const int8_t *bc = Bb + (size_t)j * b_cs;
          int32_t bz = b_zp ? b_zp[per == 1 ? 0 : j] : 0, s = 0;
          for (k = 0; k < K; k++)
            s += ((int32_t)ar[k] - a_zp) * ((int32_t)bc[(size_t)k * b_rs] - bz);
          scratch[j] += s;
        }
      }
      for (j = 0; j < N; j++) {
        int32_t c = per == 1 ? 0 : j;
        if (Y32)
          Y32[yoff + (size_t)j] = scratch[j];
        else
          Y[yoff + (size_t)j] =
              npucc_requant_i8_r(scratch[j], mult[c], shift[c], out_zp, act_min, act_max, rounding);
      }
    }
  }
}

void npucc_gemm_s8(const int8_t *A, const int8_t *B, const int32_t *bias, int8_t *Y,
                   int32_t *scratch, int32_t batch, int32_t M, int32_t N, int32_t K, int32_t b_bs,
                   int32_t b_rs, int32_t b_cs, int32_t a_zp, int32_t out_zp, int32_t act_min,
                   int32_t act_max, int32_t per, const int32_t *b_zp, const int32_t *mult,
                   const int32_t *shift, int32_t rounding) {
  npucc_gs8_core(A, B, bias, Y, NULL, scratch, batch, M, N, K, b_bs, b_rs, b_cs, a_zp, out_zp,
                 act_min, act_max, per, b_zp, mult, shift, rounding);
}

void npucc_gemm_s8_acc32(const int8_t *A, const int8_t *B, const int32_t *bias, int32_t *Y,
                         int32_t *scratch, int32_t batch, int32_t M, int32_t N, int32_t K,
                         int32_t b_bs, int32_t b_rs, int32_t b_cs, int32_t a_zp, int32_t per,
                         const int32_t *b_zp) {
  npucc_gs8_core(A, B, bias, NULL, Y, scratch, batch, M, N, K, b_bs, b_rs, b_cs, a_zp, 0, -128, 127,
                 per, b_zp, NULL, NULL, NPUCC_RQ_EXACT);
}
