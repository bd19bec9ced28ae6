/* npucc_softmax_s8.c - int8 Softmax via a compile-time exp table and one exact int64
 * division per element. See npucc_softmax_s8.h for the arithmetic. */
#include "npucc_softmax_s8.h"

void npucc_softmax_s8(const int8_t *X, int8_t *Y, int32_t outer, int32_t axis_n, int32_t inner,
                      int32_t out_zp, int32_t inv_scale, const int32_t *exp_table) {
  int32_t o, i, j;
  for (o = 0; o < outer; o++) {
    for (i = 0; i < inner; i++) {
      const int8_t *x = X + (size_t)o * axis_n * inner + i;
      int8_t *y = Y + (size_t)o * axis_n * inner + i;
      int32_t mx = -128;
      int64_t sum = 0, den;
      for (j = 0; j < axis_n; j++)
        mx = x[(size_t)j * inner] > mx ? x[(size_t)j * inner] : mx;
      for (j = 0; j < axis_n; j++)
        sum += exp_table[mx - x[(size_t)j * inner]];
      if (sum <= 0)
        sum = 1;
      den = sum * ((int64_t)1 << 17);
      for (j = 0; j < axis_n; j++) {
        int64_t e = exp_table[mx - x[(size_t)j * inner]];
        int64_t q = (2 * e * (int64_t)inv_scale + sum * ((int64_t)1 << 16)) / den + out_zp;
        y[(size_t)j * inner] = (int8_t)(q < -128 ? -128 : (q > 127 ? 127 : q));
      }
    }
  }
}
