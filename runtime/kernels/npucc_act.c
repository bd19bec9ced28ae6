/* npucc_act.c - Unary activation kernels (C99).
 *
 * Each kernel has an out-of-place loop (x and y restrict) and an in-place
 * loop (one pointer), both split into a multiple-of-8 part and a tail so
 * that gcc -O2 vectorizes the cheap ones. */
#include "npucc_act.h"

#include <math.h>


#define NPUCC_ACT_LOOP(n, STMT)                                                                    \
  do {                                                                                             \
    int32_t i_ = 0;                                                                                \
    const int32_t n8_ = (n) & ~(int32_t)7;                                                         \
    for (; i_ < n8_; i_++) {                                                                       \
      STMT;                                                                                        \
    }                                                                                              \
    for (; i_ < (n); i_++) {                                                                       \
      STMT;                                                                                        \
    }                                                                                              \
  } while (0)

#define NPUCC_ACT_NOX
/* LINKAGE: empty or static; FN: function name; OP(v XA): the scalar function; XP/XA: extra
 * params/args. */
#define NPUCC_ACT_IMPL_L(LINKAGE, FN, T, OP, XP, XA)                                               \
  NPUCC_NOINLINE static void FN##_r(const T *NPUCC_RESTRICT x, T *NPUCC_RESTRICT y,            \
                                        int32_t n XP) {                                            \
    NPUCC_ACT_LOOP(n, y[i_] = OP(x[i_] XA));                                                       \
  }                                                                                                \
  NPUCC_NOINLINE static void FN##_i(T *NPUCC_RESTRICT y, int32_t n XP) {                       \
    NPUCC_ACT_LOOP(n, y[i_] = OP(y[i_] XA));                                                       \
  }                                                                                                \
  LINKAGE void FN(const T *x, T *y, int32_t n XP) {                                                \
    if (x == y)                                                                                    \
      FN##_i(y, n XA);                                                                             \
    else                                                                                           \
      FN##_r(x, y, n XA);                                                                          \
  }

/* ---- float ---------------------------------------------------------------- */

static inline float npucc_act_relu_f32(float v) { return v > 0.0f ? v : 0.0f; }
/* max(v,0) + alpha*min(v,0): select-free so that it vectorizes. */
static inline float npucc_act_leaky_f32(float v, float alpha) {
  return npucc_maxf(v, 0.0f) + alpha * npucc_minf(v, 0.0f);
}
static inline float npucc_act_clip_f32(float v, float lo, float hi) {
  return npucc_clampf(v, lo, hi);
}
static inline float npucc_act_sigmoid_f32(float v) { return 1.0f / (1.0f + expf(-v)); }
static inline float npucc_act_hsig_f32(float v, float alpha, float beta) {
  return npucc_clampf(alpha * v + beta, 0.0f, 1.0f);
}
static inline float npucc_act_hswish_f32(float v) {
  return v * npucc_clampf(v * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
}
static inline float npucc_act_tanh_f32(float v) { return tanhf(v); }

#define NPUCC_ACT_P_ALPHA , float alpha
#define NPUCC_ACT_A_ALPHA , alpha
#define NPUCC_ACT_P_LOHI , float lo, float hi
#define NPUCC_ACT_A_LOHI , lo, hi
#define NPUCC_ACT_P_AB , float alpha, float beta
#define NPUCC_ACT_A_AB , alpha, beta

NPUCC_ACT_IMPL_L(NPUCC_ACT_NOX, npucc_relu_f32, float, npucc_act_relu_f32, NPUCC_ACT_NOX,
                 NPUCC_ACT_NOX)
NPUCC_ACT_IMPL_L(NPUCC_ACT_NOX, npucc_leakyrelu_f32, float, npucc_act_leaky_f32, NPUCC_ACT_P_ALPHA,
                 NPUCC_ACT_A_ALPHA)
NPUCC_ACT_IMPL_L(NPUCC_ACT_NOX, npucc_clip_f32, float, npucc_act_clip_f32, NPUCC_ACT_P_LOHI,
                 NPUCC_ACT_A_LOHI)
NPUCC_ACT_IMPL_L(NPUCC_ACT_NOX, npucc_sigmoid_f32, float, npucc_act_sigmoid_f32, NPUCC_ACT_NOX,
                 NPUCC_ACT_NOX)
NPUCC_ACT_IMPL_L(NPUCC_ACT_NOX, npucc_hardsigmoid_f32, float, npucc_act_hsig_f32, NPUCC_ACT_P_AB,
                 NPUCC_ACT_A_AB)
NPUCC_ACT_IMPL_L(NPUCC_ACT_NOX, npucc_hardswish_f32, float, npucc_act_hswish_f32, NPUCC_ACT_NOX,
                 NPUCC_ACT_NOX)
NPUCC_ACT_IMPL_L(NPUCC_ACT_NOX, npucc_tanh_f32, float, npucc_act_tanh_f32, NPUCC_ACT_NOX,
                 NPUCC_ACT_NOX)

/* ---- integer ------------------------------------------------------------ */

#define NPUCC_ACT_RELU_INT(SUF, T)                                                                 \
  static inline T npucc_act_relu_##SUF(T v) { return v > 0 ? v : (T)0; }                           \
  NPUCC_ACT_IMPL_L(NPUCC_ACT_NOX, npucc_relu_##SUF, T, npucc_act_relu_##SUF, NPUCC_ACT_NOX,        \
                   NPUCC_ACT_NOX)

NPUCC_ACT_RELU_INT(i8, int8_t)
NPUCC_ACT_RELU_INT(i16, int16_t)
NPUCC_ACT_RELU_INT(i32, int32_t)
NPUCC_ACT_RELU_INT(i64, int64_t)

/* The int64 bounds are first saturated to T's range so that the element loop
 * compares in T. */
#define NPUCC_ACT_P_TLOHI(T) , T lo, T hi
#define NPUCC_ACT_CLIP_INT(SUF, T, TMIN, TMAX)                                                     \
  static inline T npucc_act_clip_##SUF(T v, T lo, T hi) {                                          \
    return v < lo ? lo : (v > hi ? hi : v);                                                        \
  }                                                                                                \
  NPUCC_ACT_IMPL_L(static, npucc_clip_##SUF##_t, T, npucc_act_clip_##SUF, NPUCC_ACT_P_TLOHI(T),    \
                   NPUCC_ACT_A_LOHI)                                                               \
  void npucc_clip_##SUF(const T *x, T *y, int32_t n, int64_t lo, int64_t hi, int32_t has_lo,       \
                        int32_t has_hi) {                                                          \
    T tlo = (T)(TMIN), thi = (T)(TMAX);                                                            \
    if (has_lo)                                                                                    \
      tlo = lo <= (int64_t)(TMIN) ? (T)(TMIN) : (lo >= (int64_t)(TMAX) ? (T)(TMAX) : (T)lo);       \
    if (has_hi)                                                                                    \
      thi = hi <= (int64_t)(TMIN) ? (T)(TMIN) : (hi >= (int64_t)(TMAX) ? (T)(TMAX) : (T)hi);       \
    npucc_clip_##SUF##_t(x, y, n, tlo, thi);                                                       \
  }

NPUCC_ACT_CLIP_INT(i8, int8_t, INT8_MIN, INT8_MAX)
NPUCC_ACT_CLIP_INT(u8, uint8_t, 0, UINT8_MAX)
NPUCC_ACT_CLIP_INT(i16, int16_t, INT16_MIN, INT16_MAX)
NPUCC_ACT_CLIP_INT(u16, uint16_t, 0, UINT16_MAX)
NPUCC_ACT_CLIP_INT(i32, int32_t, INT32_MIN, INT32_MAX)
NPUCC_ACT_CLIP_INT(u32, uint32_t, 0, UINT32_MAX)
NPUCC_ACT_CLIP_INT(i64, int64_t, INT64_MIN, INT64_MAX)

/* u64 bounds arrive as int64 (the compiler rejects larger constants). */
static inline uint64_t npucc_act_clip_u64(uint64_t v, uint64_t lo, uint64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}
NPUCC_ACT_IMPL_L(static, npucc_clip_u64_t, uint64_t, npucc_act_clip_u64,
                 NPUCC_ACT_P_TLOHI(uint64_t), NPUCC_ACT_A_LOHI)
void npucc_clip_u64(const uint64_t *x, uint64_t *y, int32_t n, int64_t lo, int64_t hi,
                    int32_t has_lo, int32_t has_hi) {
  uint64_t tlo = 0, thi = UINT64_MAX;
  if (has_lo)
    tlo = lo < 0 ? 0 : (uint64_t)lo;
  if (has_hi)
    thi = hi < 0 ? 0 : (uint64_t)hi;
  npucc_clip_u64_t(x, y, n, tlo, thi);
}

/* ---- Clip with runtime bounds -------------------------------------------- */

void npucc_clip_f32_dyn(const float *x, const float *lo, const float *hi, float *y, int32_t n,
                        int32_t has_lo, int32_t has_hi) {
  npucc_clip_f32(x, y, n, has_lo ? *lo : -HUGE_VALF, has_hi ? *hi : HUGE_VALF);
}

#define NPUCC_ACT_CLIP_DYN(SUF, T, TMIN, TMAX)                                                     \
  void npucc_clip_##SUF##_dyn(const T *x, const T *lo, const T *hi, T *y, int32_t n,               \
                              int32_t has_lo, int32_t has_hi) {                                    \
    npucc_clip_##SUF##_t(x, y, n, has_lo ? *lo : (T)(TMIN), has_hi ? *hi : (T)(TMAX));             \
  }
NPUCC_ACT_CLIP_DYN(i8, int8_t, INT8_MIN, INT8_MAX)
NPUCC_ACT_CLIP_DYN(u8, uint8_t, 0, UINT8_MAX)
NPUCC_ACT_CLIP_DYN(i16, int16_t, INT16_MIN, INT16_MAX)
NPUCC_ACT_CLIP_DYN(u16, uint16_t, 0, UINT16_MAX)
NPUCC_ACT_CLIP_DYN(i32, int32_t, INT32_MIN, INT32_MAX)
NPUCC_ACT_CLIP_DYN(u32, uint32_t, 0, UINT32_MAX)
NPUCC_ACT_CLIP_DYN(i64, int64_t, INT64_MIN, INT64_MAX)
NPUCC_ACT_CLIP_DYN(u64, uint64_t, 0, UINT64_MAX)
