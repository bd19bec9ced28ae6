/* npucc_reduce.c - Mean reductions (C99).
 *
 * Contiguous rows (inner == 1) are summed with 8 partial sums (a fixed,
 * deterministic order that the compiler can keep in vector registers);
 * otherwise whole [inner] rows are accumulated into y. */
#include "npucc_reduce.h"


static float npucc_reduce_row_sum(const float *NPUCC_RESTRICT x, int32_t n) {
  float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  float s;
  int32_t i = 0, k;
  for (; i + 8 <= n; i += 8)
    for (k = 0; k < 8; k++)
      acc[k] += x[i + k];
  s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; i++)
    s += x[i];
  return s;
}

NPUCC_NOINLINE static void npucc_reduce_row_acc(const float *NPUCC_RESTRICT x,
                                                    float *NPUCC_RESTRICT y, int32_t n) {
  int32_t i = 0;
  const int32_t n8 = n & ~(int32_t)7;
  for (; i < n8; i++)
    y[i] += x[i];
  for (; i < n; i++)
    y[i] += x[i];
}

void npucc_reduce_mean_f32(const float *x, float *y, int32_t outer, int32_t red, int32_t inner) {
  const float inv = red > 0 ? 1.0f / (float)red : 0.0f;
  int32_t o, r, i;
  for (o = 0; o < outer; o++) {
    const float *xo = x + (ptrdiff_t)o * red * inner;
    float *yo = y + (ptrdiff_t)o * inner;
    if (inner == 1) {
      yo[0] = npucc_reduce_row_sum(xo, red) * inv;
      continue;
    }
    for (i = 0; i < inner; i++)
      yo[i] = 0.0f;
    for (r = 0; r < red; r++)
      npucc_reduce_row_acc(xo + (ptrdiff_t)r * inner, yo, inner);
    for (i = 0; i < inner; i++)
      yo[i] *= inv;
  }
}

void npucc_reduce_mean_f32_nd(const float *x, float *y, int32_t ny, int32_t rank,
                              const int32_t *shape, const int32_t *ystrides, int32_t count) {
  int32_t idx[NPUCC_REDUCE_MAX_RANK];
  const float inv = count > 0 ? 1.0f / (float)count : 0.0f;
  ptrdiff_t oy = 0, total = 1, e;
  int32_t k;
  for (k = 0; k < ny; k++)
    y[k] = 0.0f;
  for (k = 0; k < rank; k++) {
    idx[k] = 0;
    total *= shape[k];
  }
  for (e = 0; e < total; e++) {
    y[oy] += x[e];
    for (k = rank - 1; k >= 0; k--) {
      idx[k]++;
      oy += ystrides[k];
      if (idx[k] < shape[k])
        break;
      oy -= (ptrdiff_t)ystrides[k] * shape[k];
      idx[k] = 0;
    }
  }
  for (k = 0; k < ny; k++)
    y[k] *= inv;
}
