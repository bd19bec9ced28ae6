/* npucc_boundary_s8.h - uint8 QuantizeLinear / DequantizeLinear at the edges of the int8 path (C99).
 *
 * npucc computes in int8; models with uint8 tensors (ONNX QLinear* / ConvInteger models) keep
 * their uint8 graph inputs and outputs, and these kernels are the float boundary for them,
 * with the semantics of npucc_quantize.h for uint8:
 *   quantize:   y = saturate_u8(rintf(x / scale) + zp)   (float32 division, rintf in the
 *               default rounding mode = half to even; NaN -> zp)
 *   dequantize: y = (float)(q - zp) * scale               (float32)
 * X/Y are [outer][channels][inner]; scale[c] and zp[c] apply to channel c. */
#ifndef NPUCC_BOUNDARY_S8_H
#define NPUCC_BOUNDARY_S8_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_quantize_f32_u8(const float *X, uint8_t *Y, int32_t outer, int32_t channels,
                           int32_t inner, const float *scale, const int32_t *zp);
void npucc_dequantize_u8_f32(const uint8_t *X, float *Y, int32_t outer, int32_t channels,
                             int32_t inner, const float *scale, const int32_t *zp);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_BOUNDARY_S8_H */
