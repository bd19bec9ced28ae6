/* npucc_quantize.h - QuantizeLinear (f32 -> int8) and DequantizeLinear (int8 -> f32) (C99).
 *
 * The only quantized-path kernels that use floating point (they sit at the
 * boundaries of float regions). X/Y are [outer][channels][inner]; scale[c]
 * and zp[c] apply to channel c (channels = 1: per tensor).
 *   quantize:   y = saturate_i8(rintf(x / scale) + zp)  (float32 division,
 *               rintf in the default rounding mode = half to even; NaN -> zp)
 *   dequantize: y = (float)(q - zp) * scale              (float32) */
#ifndef NPUCC_QUANTIZE_H
#define NPUCC_QUANTIZE_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_quantize_f32_s8(const float *X, int8_t *Y, int32_t outer, int32_t channels,
                           int32_t inner, const float *scale, const int32_t *zp);
void npucc_dequantize_s8_f32(const int8_t *X, float *Y, int32_t outer, int32_t channels,
                             int32_t inner, const float *scale, const int32_t *zp);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_QUANTIZE_H */
