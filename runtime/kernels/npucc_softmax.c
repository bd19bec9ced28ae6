/* npucc_softmax.c - Softmax over one axis (C99).
 *
 * The contiguous case (inner == 1) works row by row; otherwise each of the
 * `inner` columns of an [axis][inner] block is a strided row. Every pass
 * reads x[k] before it writes y[k], so y == x is allowed. */
#include "npucc_softmax.h"

#include <math.h>

static void npucc_softmax_row(const float *x, float *y, int32_t n, int32_t stride) {
  float mx = x[0], sum = 0.0f, inv;
  int32_t k;
  for (k = 1; k < n; k++) {
    const float v = x[(ptrdiff_t)k * stride];
    mx = v > mx ? v : mx;
  }
  for (k = 0; k < n; k++) {
    const float e = expf(x[(ptrdiff_t)k * stride] - mx);
    y[(ptrdiff_t)k * stride] = e;
    sum += e;
  }
  inv = 1.0f / sum;
  for (k = 0; k < n; k++)
    y[(ptrdiff_t)k * stride] *= inv;
}

void npucc_softmax_f32(const float *x, float *y, int32_t outer, int32_t axis, int32_t inner) {
  int32_t o, i;
  if (axis <= 0)
    return;
  for (o = 0; o < outer; o++) {
    const ptrdiff_t base = (ptrdiff_t)o * axis * inner;
    for (i = 0; i < inner; i++)
      npucc_softmax_row(x + base + i, y + base + i, axis, inner);
  }
}
