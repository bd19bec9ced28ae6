/* npucc_rqrow_s8.h - The fast int8 kernels' output stage (C99, header-only, internal).
 *
 * Requantization of int32 sums to int8 with npucc_rq32_prep's words (npucc_requant.h)
 * held in locals, for the convolution kernels npucc_conv_s8_fast.c and
 * npucc_dwconv_s8_fast.c: a whole row per call (the words and bounds in registers for
 * the row), the EXACT fast words inline and anything else through npucc_rq32_i8. */
#ifndef NPUCC_RQROW_S8_H
#define NPUCC_RQROW_S8_H

#include "npucc_common.h"
#include "npucc_rq32.h"

/* Out of line (a row per call keeps the words in registers), and maybe unused by one of
 * the two kernel files that include this header. */
#if defined(__GNUC__)
#define NPUCC_RQROW_FN static __attribute__((noinline, unused))
#else
#define NPUCC_RQROW_FN static
#endif


/* The output stage of a convolution: rounding, zero point, clamp bounds. */
typedef struct {
  int32_t rounding, zp, lo, hi;
} npucc_cf_out;

/* npucc_rq32_exact with the words in locals (mult, sh = rq[1] >= 0, rnd = rq[3]:rq[2]),
 * plus the zero point: int8 stores may alias any pointer, locals they cannot. */
static inline int32_t npucc_cf_exact32(int32_t acc, int32_t mult, int32_t sh, int64_t rnd,
                                       int32_t zp) {
  int64_t p = (int64_t)acc * mult;
  int32_t bit = ((int32_t)(p >> 32) >> sh) & 1;
  return ((int32_t)((p + rnd + bit) >> 32) >> sh) + zp;
}
/* ... clamped to [lo, hi] (within int8). */
static inline int8_t npucc_cf_exact(int32_t acc, int32_t mult, int32_t sh, int64_t rnd,
                                    int32_t zp, int32_t lo, int32_t hi) {
  int32_t v = npucc_cf_exact32(acc, mult, sh, rnd, zp);
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  return (int8_t)v;
}
/* ... saturated to int8 (no fused activation narrower than int8; NPUCC_SAT8). */
static inline int8_t npucc_cf_exact_sat(int32_t acc, int32_t mult, int32_t sh, int64_t rnd,
                                        int32_t zp) {
  int32_t v = npucc_cf_exact32(acc, mult, sh, rnd, zp);
  return (int8_t)NPUCC_SAT8(v);
}

/* y[b * YS + i * YE] = requantized s[b * RS + i] for rows b < rows and i < n, EXACT
 * rounding with npucc_rq32_exact's fast words (r[1] >= 0) in locals; the common
 * full-range clamp is one saturation. */
NPUCC_RQROW_FN void npucc_cf_rq_rows_exact(const int32_t *NPUCC_RESTRICT s, int32_t rows,
                                           int32_t RS, int32_t n, const int32_t *r, int32_t zp,
                                           int32_t lo, int32_t hi, int8_t *NPUCC_RESTRICT y,
                                           int32_t YS, int32_t YE) {
  int32_t i, mult = r[0], sh = r[1];
  int64_t rnd = (int64_t)(((uint64_t)(uint32_t)r[3] << 32) | (uint32_t)r[2]);
  if (lo == -128 && hi == 127 && YE == 1) {
    for (; rows > 0; rows--, s += RS, y += YS)
      for (i = 0; i < n; i++)
        y[i] = npucc_cf_exact_sat(s[i], mult, sh, rnd, zp);
    return;
  }
  if (lo == -128 && hi == 127) {
    for (; rows > 0; rows--, s += RS, y += YS) {
      int8_t *yi = y;
      for (i = 0; i < n; i++, yi += YE)
        *yi = npucc_cf_exact_sat(s[i], mult, sh, rnd, zp);
    }
    return;
  }
  for (; rows > 0; rows--, s += RS, y += YS)
    for (i = 0; i < n; i++)
      y[(size_t)i * YE] = npucc_cf_exact(s[i], mult, sh, rnd, zp, lo, hi);
}

/* The same for one channel's words r in any rounding (npucc_rq32_i8 where the EXACT fast
 * words do not apply). */
NPUCC_RQROW_FN void npucc_cf_rq_rows(const int32_t *NPUCC_RESTRICT s, int32_t rows, int32_t RS,
                                     int32_t n, const int32_t *r, const npucc_cf_out *o,
                                     int8_t *NPUCC_RESTRICT y, int32_t YS, int32_t YE) {
  int32_t i, rw[NPUCC_RQ32_WORDS];
  if (r[1] >= 0 && o->rounding != NPUCC_RQ_FP32) {
    npucc_cf_rq_rows_exact(s, rows, RS, n, r, o->zp, o->lo, o->hi, y, YS, YE);
    return;
  }
  rw[0] = r[0];
  rw[1] = r[1];
  rw[2] = r[2];
  rw[3] = r[3];
  for (; rows > 0; rows--, s += RS, y += YS)
    for (i = 0; i < n; i++)
      y[(size_t)i * YE] = npucc_rq32_i8(s[i], rw, o->rounding, o->zp, o->lo, o->hi);
}

#endif /* NPUCC_RQROW_S8_H */
