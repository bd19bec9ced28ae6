/* npucc_eltwise.h - Broadcasting binary element-wise kernels (C99).
 *
 * Ops: add, sub, mul, div, maximum, minimum for f32, f64, i8, i16, i32, i64, u8,
 * u16, u32, u64; prelu (x < 0 ? x * slope : x; a NaN x gives 0) and addc (add, then clamp to
 * [lo, hi]: the fused-activation form of Add) for f32. Integer add/sub/mul
 * wrap around; integer div truncates toward zero and gives 0 for a zero
 * divisor. Every op <op>_<t> comes in four shapes:
 *
 *   npucc_<op>_<t>(a, b, y, n)                        same shape, n elements
 *   npucc_<op>_<t>_rb(a, b, y, outer, mid, inner)     b broadcast: b has `mid`
 *        elements, y[o][m][i] = a[o][m][i] op b[m]  (scalar: 1, 1, n)
 *   npucc_<op>_<t>_lb(a, b, y, outer, mid, inner)     a broadcast (a has `mid`)
 *   npucc_<op>_<t>_nd(a, b, y, rank, shape, sa, sb)   general: y is dense with
 *        `shape` (rank <= NPUCC_EW_MAX_RANK), sa/sb are the element strides of
 *        a and b per axis (0 on broadcast axes).
 * addc variants take two extra trailing floats (lo, hi).
 *
 * In-place: y may be exactly a or exactly b (same buffer, same layout). */
#ifndef NPUCC_ELTWISE_H
#define NPUCC_ELTWISE_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPUCC_EW_MAX_RANK 6

#define NPUCC_EW_DECL(FN, T, XP)                                                                   \
  void FN(const T *a, const T *b, T *y, int32_t n XP);                                             \
  void FN##_rb(const T *a, const T *b, T *y, int32_t outer, int32_t mid, int32_t inner XP);        \
  void FN##_lb(const T *a, const T *b, T *y, int32_t outer, int32_t mid, int32_t inner XP);        \
  void FN##_nd(const T *a, const T *b, T *y, int32_t rank, const int32_t *shape,                   \
               const int32_t *sa, const int32_t *sb XP);

#define NPUCC_EW_NOX
#define NPUCC_EW_CLAMP_PARAMS , float lo, float hi

#define NPUCC_EW_DECL_TYPE(SUF, T)                                                                 \
  NPUCC_EW_DECL(npucc_add_##SUF, T, NPUCC_EW_NOX)                                                  \
  NPUCC_EW_DECL(npucc_sub_##SUF, T, NPUCC_EW_NOX)                                                  \
  NPUCC_EW_DECL(npucc_mul_##SUF, T, NPUCC_EW_NOX)                                                  \
  NPUCC_EW_DECL(npucc_div_##SUF, T, NPUCC_EW_NOX)                                                  \
  NPUCC_EW_DECL(npucc_maximum_##SUF, T, NPUCC_EW_NOX)                                              \
  NPUCC_EW_DECL(npucc_minimum_##SUF, T, NPUCC_EW_NOX)

NPUCC_EW_DECL_TYPE(f32, float)
NPUCC_EW_DECL_TYPE(f64, double)
NPUCC_EW_DECL_TYPE(i8, int8_t)
NPUCC_EW_DECL_TYPE(i16, int16_t)
NPUCC_EW_DECL_TYPE(i32, int32_t)
NPUCC_EW_DECL_TYPE(i64, int64_t)
NPUCC_EW_DECL_TYPE(u8, uint8_t)
NPUCC_EW_DECL_TYPE(u16, uint16_t)
NPUCC_EW_DECL_TYPE(u32, uint32_t)
NPUCC_EW_DECL_TYPE(u64, uint64_t)
NPUCC_EW_DECL(npucc_prelu_f32, float, NPUCC_EW_NOX)
NPUCC_EW_DECL(npucc_addc_f32, float, NPUCC_EW_CLAMP_PARAMS)

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_ELTWISE_H */
