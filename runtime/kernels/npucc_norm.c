/* npucc_norm.c - float32 inference BatchNormalization as a per-channel affine map (C99). */
#include "npucc_norm.h"

#include <math.h>

/* y[i] = x[i] * a + b in fixed 8-wide chunks (vectorizes at -O2). x may equal y. */
static void npucc_norm_affine_row(const float *x, float *y, int32_t n, float a, float b) {
  int32_t i = 0, t;
  for (; i + 8 <= n; i += 8) {
    float tmp[8];
    for (t = 0; t < 8; t++)
      tmp[t] = x[i + t] * a + b;
    for (t = 0; t < 8; t++)
      y[i + t] = tmp[t];
  }
  for (; i < n; i++)
    y[i] = x[i] * a + b;
}

void npucc_channel_affine_f32(const float *X, float *Y, int32_t N, int32_t C, int32_t inner,
                              const float *scale, const float *shift) {
  int32_t n, c;
  for (n = 0; n < N; n++)
    for (c = 0; c < C; c++) {
      size_t off = ((size_t)n * C + c) * inner;
      npucc_norm_affine_row(X + off, Y + off, inner, scale[c], shift[c]);
    }
}

void npucc_batchnorm_f32(const float *X, const float *gamma, const float *beta, const float *mean,
                         const float *var, float *Y, int32_t N, int32_t C, int32_t inner,
                         float epsilon) {
  int32_t n, c;
  for (n = 0; n < N; n++)
    for (c = 0; c < C; c++) {
      size_t off = ((size_t)n * C + c) * inner;
      float a = gamma[c] / sqrtf(var[c] + epsilon);
      float b = beta[c] - mean[c] * a;
      npucc_norm_affine_row(X + off, Y + off, inner, a, b);
    }
}
