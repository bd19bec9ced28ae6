/* npucc_fc_s8_fast.c - int8 fully connected layer over packed weights (see
 * npucc_fc_s8_fast.h): per block of four output channels, one pass over the row of A with
 * four int32 sums in registers, then their requantization. */
#include "npucc_fc_s8_fast.h"
#include "npucc_dot_s8.h"
#include "npucc_rq32.h"

/* s[c] = b[c] + sum_k w[c][k] * x[k] for the four channels of one packed block, over the
 * G full groups of four k and then the K % 4 values left (their weights sit in the
 * block's last group, zero beyond K). */
static NPUCC_NOINLINE void npucc_fc_dot4(const int8_t *NPUCC_RESTRICT w,
                                         const int8_t *NPUCC_RESTRICT x, int32_t G,
                                         int32_t rest, const int32_t *b, int32_t *s) {
  int32_t a0 = b[0], a1 = b[1], a2 = b[2], a3 = b[3], i;
#if defined(NPUCC_DOT_DSP)
  for (; G > 0; G--, x += 4, w += 16) { /* (k0,k2) and (k1,k3) pairs of both operands */
    int32_t xv = npucc_ld4(x), xe = __sxtb16(xv), xo = npucc_sxtb16_odd(xv);
    int32_t w0 = npucc_ld4(w), w1 = npucc_ld4(w + 4);
    a0 = __smlad(npucc_sxtb16_odd(w0), xo, __smlad(__sxtb16(w0), xe, a0));
    a1 = __smlad(npucc_sxtb16_odd(w1), xo, __smlad(__sxtb16(w1), xe, a1));
    w0 = npucc_ld4(w + 8);
    w1 = npucc_ld4(w + 12);
    a2 = __smlad(npucc_sxtb16_odd(w0), xo, __smlad(__sxtb16(w0), xe, a2));
    a3 = __smlad(npucc_sxtb16_odd(w1), xo, __smlad(__sxtb16(w1), xe, a3));
  }
#else
  for (; G > 0; G--, x += 4, w += 16) {
    int32_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    a0 += w[0] * x0 + w[1] * x1 + w[2] * x2 + w[3] * x3;
    a1 += w[4] * x0 + w[5] * x1 + w[6] * x2 + w[7] * x3;
    a2 += w[8] * x0 + w[9] * x1 + w[10] * x2 + w[11] * x3;
    a3 += w[12] * x0 + w[13] * x1 + w[14] * x2 + w[15] * x3;
  }
#endif
  for (i = 0; i < rest; i++) { /* the last, partial group: x[K] and on are not read */
    int32_t v = x[i];
    a0 += w[i] * v;
    a1 += w[4 + i] * v;
    a2 += w[8 + i] * v;
    a3 += w[12 + i] * v;
  }
  s[0] = a0;
  s[1] = a1;
  s[2] = a2;
  s[3] = a3;
}

void npucc_fc_s8_fast(const int8_t *A, const int8_t *Wp, const int32_t *bias_f, int8_t *Y,
                      int32_t rows, int32_t N, int32_t K, int32_t out_zp, int32_t act_min,
                      int32_t act_max, int32_t per, const int32_t *rq, int32_t rounding) {
  int32_t lo = npucc_max_i32(act_min, -128), hi = npucc_min_i32(act_max, 127);
  int32_t K4 = npucc_fc_s8_kpad(K), rs = per == 1 ? 0 : NPUCC_RQ32_WORDS, r, j, c;
  int32_t btail[4];
  for (c = 0; c < 4; c++) /* the last block's biases (zero in its padding rows) */
    btail[c] = (N & ~3) + c < N ? bias_f[(N & ~3) + c] : 0;
  for (r = 0; r < rows; r++) {
    const int8_t *x = A + (size_t)r * K;
    int8_t *y = Y + (size_t)r * N;
    for (j = 0; j < N; j += 4) {
      int32_t s[4], mc = npucc_min_i32(4, N - j);
      npucc_fc_dot4(Wp + (size_t)j * K4, x, K / 4, K % 4, mc == 4 ? bias_f + j : btail, s);
      for (c = 0; c < mc; c++)
        y[j + c] = npucc_rq32_i8(s[c], rq + (size_t)(j + c) * rs, rounding, out_zp, lo, hi);
    }
  }
}
