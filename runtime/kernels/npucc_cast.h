/* npucc_cast.h - Element type conversions (C99).
 *
 *   npucc_cast_<from>_<to>(x, y, n) for every pair of f32, f64, i8, u8, i16,
 *       u16, i32, u32, i64, u64, bool (bool is one byte, 0 or 1).
 *       Integer <- integer and float <- any: C conversions (narrowing
 *       integers wrap). Integer <- float: truncation toward zero, saturated
 *       to the target range, NaN gives 0. bool <- any: x != 0.
 *   npucc_ints_to_i64(y, n, vals): y[i] = vals[i] (the Shape op). */
#ifndef NPUCC_CAST_H
#define NPUCC_CAST_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(suffix, C type, class): class F = floating, I = integer, B = bool. */
#define NPUCC_CAST_FROM_LIST(X)                                                                    \
  X(f32, float, F)                                                                                 \
  X(f64, double, F)                                                                                \
  X(i8, int8_t, I)                                                                                 \
  X(u8, uint8_t, I)                                                                                \
  X(i16, int16_t, I)                                                                               \
  X(u16, uint16_t, I)                                                                              \
  X(i32, int32_t, I)                                                                               \
  X(u32, uint32_t, I)                                                                              \
  X(i64, int64_t, I)                                                                               \
  X(u64, uint64_t, I)                                                                              \
  X(bool, uint8_t, B)
#define NPUCC_CAST_TO_LIST(X, FS, FT, FC)                                                          \
  X(FS, FT, FC, f32, float, F)                                                                     \
  X(FS, FT, FC, f64, double, F)                                                                    \
  X(FS, FT, FC, i8, int8_t, I)                                                                     \
  X(FS, FT, FC, u8, uint8_t, I)                                                                    \
  X(FS, FT, FC, i16, int16_t, I)                                                                   \
  X(FS, FT, FC, u16, uint16_t, I)                                                                  \
  X(FS, FT, FC, i32, int32_t, I)                                                                   \
  X(FS, FT, FC, u32, uint32_t, I)                                                                  \
  X(FS, FT, FC, i64, int64_t, I)                                                                   \
  X(FS, FT, FC, u64, uint64_t, I)                                                                  \
  X(FS, FT, FC, bool, uint8_t, B)

#define NPUCC_CAST_DECL_ONE(FS, FT, FC, TS, TT, TC)                                                \
  void npucc_cast_##FS##_##TS(const FT *x, TT *y, int32_t n);
#define NPUCC_CAST_DECL_FROM(FS, FT, FC) NPUCC_CAST_TO_LIST(NPUCC_CAST_DECL_ONE, FS, FT, FC)
NPUCC_CAST_FROM_LIST(NPUCC_CAST_DECL_FROM)

void npucc_ints_to_i64(int64_t *y, int32_t n, const int32_t *vals);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_CAST_H */
