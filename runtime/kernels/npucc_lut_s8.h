/* npucc_lut_s8.h - int8 unary ops: table lookup and clamp (C99, integer only).
 *   npucc_lut_s8(X, Y, n, table): Y[i] = table[X[i] + 128]; the 256-entry table
 *       (int32 values in -128..127) is built by the compiler (Sigmoid, Tanh,
 *       HardSwish, LeakyRelu, and Relu/Clip whose input and output params differ).
 *   npucc_clamp_s8(X, Y, n, lo, hi): Y[i] = min(max(X[i], lo), hi) (Relu/Clip with
 *       shared params; lo/hi from quant::activationBounds). In-place safe. */
#ifndef NPUCC_LUT_S8_H
#define NPUCC_LUT_S8_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_lut_s8(const int8_t *X, int8_t *Y, int32_t n, const int32_t *table);
void npucc_clamp_s8(const int8_t *X, int8_t *Y, int32_t n, int32_t lo, int32_t hi);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_LUT_S8_H */
