/* npucc_gemm_s8_fast.c - int8 GEMM with folded input zero point and precomputed
 * requantization words (see npucc_gemm_s8_fast.h). [N][K] weights: 2x2 (two rows of A,
 * two weight rows) or, for a single row, 1x2 register blocks over contiguous K;
 * [K][N] weights: one row of A against four columns, the A value loaded once. */
#include "npucc_gemm_s8_fast.h"
#include "npucc_dot_s8.h"
#include "npucc_rq32.h"

void npucc_gemm_s8_fast(const int8_t *A, const int8_t *B, const int32_t *bias_f, int8_t *Y,
                        int32_t rows, int32_t N, int32_t K, int32_t b_rs, int32_t b_cs,
                        int32_t out_zp, int32_t act_min, int32_t act_max, int32_t per,
                        const int32_t *rq, int32_t rounding) {
  int32_t lo = npucc_max_i32(act_min, -128), hi = npucc_min_i32(act_max, 127);
  int32_t i, j, k, rs = per == 1 ? 0 : NPUCC_RQ32_WORDS;
  if (b_rs == 1 && b_cs == K) {
    for (i = 0; i < rows; i += 2) {
      const int8_t *a0 = A + (size_t)i * K;
      int32_t two = i + 1 < rows;
      const int8_t *a1 = two ? a0 + K : a0;
      int8_t *y0 = Y + (size_t)i * N, *y1 = y0 + N;
      for (j = 0; j < N; j += 2) {
        int32_t jj = j + 1 < N ? j + 1 : j, acc[4];
        const int32_t *r0 = rq + (size_t)j * rs, *r1 = rq + (size_t)jj * rs;
        acc[0] = acc[1] = bias_f[j];
        acc[2] = acc[3] = bias_f[jj];
        if (two) {
          npucc_dot_2x2(B + (size_t)j * K, B + (size_t)jj * K, a0, a1, K, acc);
        } else {
          int32_t t[2];
          t[0] = acc[0];
          t[1] = acc[2];
          npucc_dot_1x2(a0, B + (size_t)j * K, B + (size_t)jj * K, K, t);
          acc[0] = t[0];
          acc[2] = t[1];
        }
        y0[j] = npucc_rq32_i8(acc[0], r0, rounding, out_zp, lo, hi);
        if (jj != j)
          y0[jj] = npucc_rq32_i8(acc[2], r1, rounding, out_zp, lo, hi);
        if (two) {
          y1[j] = npucc_rq32_i8(acc[1], r0, rounding, out_zp, lo, hi);
          if (jj != j)
            y1[jj] = npucc_rq32_i8(acc[3], r1, rounding, out_zp, lo, hi);
        }
      }
    }
    return;
  }
  for (i = 0; i < rows; i++) {
    const int8_t *ar = A + (size_t)i * K;
    int8_t *yr = Y + (size_t)i * N;
    for (j = 0; j < N; j += 4) {
      int32_t nj = npucc_min_i32(4, N - j), t;
      int32_t a0 = bias_f[j], a1 = nj > 1 ? bias_f[j + 1] : 0, a2 = nj > 2 ? bias_f[j + 2] : 0;
      int32_t a3 = nj > 3 ? bias_f[j + 3] : 0;
      const int8_t *bc = B + (size_t)j * b_cs;
      if (nj == 4) {
        for (k = 0; k < K; k++) {
          const int8_t *br = bc + (size_t)k * b_rs;
          int32_t av = ar[k];
          a0 += av * br[0];
          a1 += av * br[b_cs];
          a2 += av * br[2 * b_cs];
          a3 += av * br[3 * b_cs];
        }
      } else {
        for (k = 0; k < K; k++) {
          const int8_t *br = bc + (size_t)k * b_rs;
          int32_t av = ar[k];
          a0 += av * br[0];
          if (nj > 1)
            a1 += av * br[b_cs];
          if (nj > 2)
            a2 += av * br[2 * b_cs];
        }
      }
      for (t = 0; t < nj; t++) {
        int32_t acc = t == 0 ? a0 : (t == 1 ? a1 : (t == 2 ? a2 : a3));
        yr[j + t] = npucc_rq32_i8(acc, rq + (size_t)(j + t) * rs, rounding, out_zp, lo, hi);
      }
    }
  }
}
