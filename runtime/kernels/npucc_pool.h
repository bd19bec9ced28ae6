/* npucc_pool.h - float32 pooling kernels: MaxPool, AveragePool, GlobalAverage/MaxPool (C99).
 *
 * Tensors are [NC][H][W] planes (N*C planes; 1-D pooling is H = KH = 1).
 * Pads: PT/PL top/left, PB/PR bottom/right; OH/OW come from the model (so
 * ceil_mode is already reflected in them). Windows are clipped to the
 * input; MaxPool ignores padding (a window with no input yields -FLT_MAX).
 * AveragePool divides by the taps inside the input, or with
 * count_include_pad by the taps inside the padded input. */
#ifndef NPUCC_POOL_H
#define NPUCC_POOL_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_maxpool2d_f32(const float *X, float *Y, int32_t NC, int32_t H, int32_t W, int32_t OH,
                         int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW, int32_t DH,
                         int32_t DW, int32_t PT, int32_t PL);

void npucc_avgpool2d_f32(const float *X, float *Y, int32_t NC, int32_t H, int32_t W, int32_t OH,
                         int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW, int32_t DH,
                         int32_t DW, int32_t PT, int32_t PL, int32_t PB, int32_t PR,
                         int32_t count_include_pad);

/* Y[i] = mean (or max) of the `spatial` floats of plane i, for i < NC. */
void npucc_global_avgpool_f32(const float *X, float *Y, int32_t NC, int32_t spatial);
void npucc_global_maxpool_f32(const float *X, float *Y, int32_t NC, int32_t spatial);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_POOL_H */
