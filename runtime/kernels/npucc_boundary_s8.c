/* npucc_boundary_s8.c - uint8 QuantizeLinear / DequantizeLinear. See npucc_boundary_s8.h. */
#include "npucc_boundary_s8.h"

#include <math.h>

void npucc_quantize_f32_u8(const float *X, uint8_t *Y, int32_t outer, int32_t channels,
                           int32_t inner, const float *scale, const int32_t *zp) {
  int32_t o, c, i;
  for (o = 0; o < outer; o++) {
    for (c = 0; c < channels; c++) {
      const float *x = X + ((size_t)o * channels + c) * inner;
      uint8_t *y = Y + ((size_t)o * channels + c) * inner;
      float s = scale[c], z = (float)zp[c];
      for (i = 0; i < inner; i++) {
        float r = rintf(x[i] / s);
        if (r != r) /* NaN */
          r = 0.0f;
        r = r < -512.0f ? -512.0f : (r > 512.0f ? 512.0f : r);
        r += z;
        y[i] = (uint8_t)(r < 0.0f ? 0 : (r > 255.0f ? 255 : (int32_t)r));
      }
    }
  }
}

void npucc_dequantize_u8_f32(const uint8_t *X, float *Y, int32_t outer, int32_t channels,
                             int32_t inner, const float *scale, const int32_t *zp) {
  int32_t o, c, i;
  for (o = 0; o < outer; o++) {
    for (c = 0; c < channels; c++) {
      const uint8_t *x = X + ((size_t)o * channels + c) * inner;
      float *y = Y + ((size_t)o * channels + c) * inner;
      float s = scale[c];
      int32_t z = zp[c];
      for (i = 0; i < inner; i++)
        y[i] = (float)((int32_t)x[i] - z) * s;
    }
  }
}
