/* npucc_norm.h - float32 inference BatchNormalization kernels (C99).
 *
 * Tensors are [N][C][inner]. npucc_channel_affine_f32 applies a per-channel
 * y = x * scale[c] + shift[c], with scale/shift folded by the compiler from
 * constant BatchNormalization parameters. npucc_batchnorm_f32 takes the
 * five ONNX inputs and folds them at run time. */
#ifndef NPUCC_NORM_H
#define NPUCC_NORM_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_channel_affine_f32(const float *X, float *Y, int32_t N, int32_t C, int32_t inner,
                              const float *scale, const float *shift);

void npucc_batchnorm_f32(const float *X, const float *gamma, const float *beta, const float *mean,
                         const float *var, float *Y, int32_t N, int32_t C, int32_t inner,
                         float epsilon);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_NORM_H */
