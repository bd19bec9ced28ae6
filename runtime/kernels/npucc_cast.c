/* npucc_cast.c - Element type conversions (C99).
 *
 * One function per (from, to) pair, generated from the type lists in
 * npucc_cast.h; the conversion expression depends on the two type classes. */
#include "npucc_cast.h"

/* Saturating float -> integer conversions (C leaves out-of-range undefined). */
#define NPUCC_CV_SAT(TS, TT, TMIN, TMAX)                                                           \
  static inline TT npucc_cv_sat_##TS(double v) {                                                   \
    if (v != v)                                                                                    \
      return 0;                                                                                    \
    if (v <= (double)(TMIN))                                                                       \
      return (TT)(TMIN);                                                                           \
    if (v >= (double)(TMAX))                                                                       \
      return (TT)(TMAX);                                                                           \
    return (TT)v;                                                                                  \
  }
NPUCC_CV_SAT(i8, int8_t, INT8_MIN, INT8_MAX)
NPUCC_CV_SAT(u8, uint8_t, 0, UINT8_MAX)
NPUCC_CV_SAT(i16, int16_t, INT16_MIN, INT16_MAX)
NPUCC_CV_SAT(u16, uint16_t, 0, UINT16_MAX)
NPUCC_CV_SAT(i32, int32_t, INT32_MIN, INT32_MAX)
NPUCC_CV_SAT(u32, uint32_t, 0, UINT32_MAX)
NPUCC_CV_SAT(i64, int64_t, INT64_MIN, INT64_MAX)
NPUCC_CV_SAT(u64, uint64_t, 0, UINT64_MAX)

/* NPUCC_CV_<from class><to class>(v, to suffix, to type) */
#define NPUCC_CV_FF(v, TS, TT) ((TT)(v))
#define NPUCC_CV_FI(v, TS, TT) npucc_cv_sat_##TS((double)(v))
#define NPUCC_CV_FB(v, TS, TT) ((TT)((v) != 0))
#define NPUCC_CV_IF(v, TS, TT) ((TT)(v))
#define NPUCC_CV_II(v, TS, TT) ((TT)(v))
#define NPUCC_CV_IB(v, TS, TT) ((TT)((v) != 0))
#define NPUCC_CV_BF(v, TS, TT) ((TT)((v) != 0))
#define NPUCC_CV_BI(v, TS, TT) ((TT)((v) != 0))
#define NPUCC_CV_BB(v, TS, TT) ((TT)((v) != 0))

#define NPUCC_CAST_IMPL_ONE(FS, FT, FC, TS, TT, TC)                                                \
  void npucc_cast_##FS##_##TS(const FT *x, TT *y, int32_t n) {                                     \
    int32_t i;                                                                                     \
    for (i = 0; i < n; i++)                                                                        \
      y[i] = NPUCC_CV_##FC##TC(x[i], TS, TT);                                                      \
  }
#define NPUCC_CAST_IMPL_FROM(FS, FT, FC) NPUCC_CAST_TO_LIST(NPUCC_CAST_IMPL_ONE, FS, FT, FC)
NPUCC_CAST_FROM_LIST(NPUCC_CAST_IMPL_FROM)

void npucc_ints_to_i64(int64_t *y, int32_t n, const int32_t *vals) {
  int32_t i;
  for (i = 0; i < n; i++)
    y[i] = vals[i];
}
