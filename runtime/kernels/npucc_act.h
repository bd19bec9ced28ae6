/* npucc_act.h - Unary activation kernels (C99).
 *
 * All kernels map n elements of x to y and accept y == x (in place).
 *   npucc_relu_<t>        max(x, 0)                    f32, i8, i16, i32, i64
 *   npucc_leakyrelu_f32   x >= 0 ? x : alpha * x
 *   npucc_clip_f32        min(max(x, lo), hi)
 *   npucc_clip_<t>        same for integers; a bound is applied only when its
 *                         has_ flag is set           i8, u8, i16, u16, i32, u32, i64, u64
 *   npucc_clip_<t>_dyn    Clip with runtime bounds *lo / *hi (read only when
 *                         has_lo / has_hi is set)   f32 and the integer types
 *   npucc_sigmoid_f32     1 / (1 + exp(-x))
 *   npucc_hardsigmoid_f32 max(0, min(1, alpha * x + beta))
 *   npucc_hardswish_f32   x * max(0, min(1, x / 6 + 1/2))
 *   npucc_tanh_f32        tanh(x) */
#ifndef NPUCC_ACT_H
#define NPUCC_ACT_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_relu_f32(const float *x, float *y, int32_t n);
void npucc_relu_i8(const int8_t *x, int8_t *y, int32_t n);
void npucc_relu_i16(const int16_t *x, int16_t *y, int32_t n);
void npucc_relu_i32(const int32_t *x, int32_t *y, int32_t n);
void npucc_relu_i64(const int64_t *x, int64_t *y, int32_t n);
void npucc_leakyrelu_f32(const float *x, float *y, int32_t n, float alpha);
void npucc_clip_f32(const float *x, float *y, int32_t n, float lo, float hi);
void npucc_sigmoid_f32(const float *x, float *y, int32_t n);
void npucc_hardsigmoid_f32(const float *x, float *y, int32_t n, float alpha, float beta);
void npucc_hardswish_f32(const float *x, float *y, int32_t n);
void npucc_tanh_f32(const float *x, float *y, int32_t n);

#define NPUCC_ACT_DECL_CLIP(SUF, T)                                                                \
  void npucc_clip_##SUF(const T *x, T *y, int32_t n, int64_t lo, int64_t hi, int32_t has_lo,       \
                        int32_t has_hi);                                                           \
  void npucc_clip_##SUF##_dyn(const T *x, const T *lo, const T *hi, T *y, int32_t n,               \
                              int32_t has_lo, int32_t has_hi);
void npucc_clip_f32_dyn(const float *x, const float *lo, const float *hi, float *y, int32_t n,
                        int32_t has_lo, int32_t has_hi);
NPUCC_ACT_DECL_CLIP(i8, int8_t)
NPUCC_ACT_DECL_CLIP(u8, uint8_t)
NPUCC_ACT_DECL_CLIP(i16, int16_t)
NPUCC_ACT_DECL_CLIP(u16, uint16_t)
NPUCC_ACT_DECL_CLIP(i32, int32_t)
NPUCC_ACT_DECL_CLIP(u32, uint32_t)
NPUCC_ACT_DECL_CLIP(i64, int64_t)
NPUCC_ACT_DECL_CLIP(u64, uint64_t)

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_ACT_H */
