/* npucc_quantize.c - QuantizeLinear / DequantizeLinear kernels. See npucc_quantize.h. */
#include "npucc_quantize.h"

#include <math.h>

void npucc_quantize_f32_s8(const float *X, int8_t *Y, int32_t outer, int32_t channels,
                           int32_t inner, const float *scale, const int32_t *zp) {
  int32_t o, c, i;
  for (o = 0; o < outer; o++) {
    for (c = 0; c < channels; c++) {
      const float *x = X + ((size_t)o * channels + c) * inner;
      int8_t *y = Y + ((size_t)o * channels + c) * inner;
      float s = scale[c], z = (float)zp[c];
      for (i = 0; i < inner; i++) {
        float r = rintf(x[i] / s);
        if (r != r) /* NaN */
          r = 0.0f;
        r = r < -512.0f ? -512.0f : (r > 512.0f ? 512.0f : r);
        r += z;
        y[i] = (int8_t)(r < -128.0f ? -128 : (r > 127.0f ? 127 : (int32_t)r));
      }
    }
  }
}

void npucc_dequantize_s8_f32(const int8_t *X, float *Y, int32_t outer, int32_t channels,
                             int32_t inner, const float *scale, const int32_t *zp) {
  int32_t o, c, i;
  for (o = 0; o < outer; o++) {
    for (c = 0; c < channels; c++) {
      const int8_t *x = X + ((size_t)o * channels + c) * inner;
      float *y = Y + ((size_t)o * channels + c) * inner;
      float s = scale[c];
      int32_t z = zp[c];
      for (i = 0; i < inner; i++)
        y[i] = (float)((int32_t)x[i] - z) * s;
    }
  }
}
