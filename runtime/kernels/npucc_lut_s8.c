/* npucc_lut_s8.c - int8 lookup-table and clamp kernels. See npucc_lut_s8.h. */
#include "npucc_lut_s8.h"

void npucc_lut_s8(const int8_t *X, int8_t *Y, int32_t n, const int32_t *table) {
  int8_t t[256];
  int32_t i;
  for (i = 0; i < 256; i++)
    t[i] = (int8_t)(table[i] < -128 ? -128 : (table[i] > 127 ? 127 : table[i]));
  for (i = 0; i < n; i++)
    Y[i] = t[(int32_t)X[i] + 128];
}

void npucc_clamp_s8(const int8_t *X, int8_t *Y, int32_t n, int32_t lo, int32_t hi) {
  int32_t i;
  for (i = 0; i < n; i++) {
    int32_t v = X[i];
    v = v < lo ? lo : v;
    Y[i] = (int8_t)(v > hi ? hi : v);
  }
}
