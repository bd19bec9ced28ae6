/* npucc_eltwise_s8_fast.c - table-driven int8 Add, 32-bit int8 Mul and rintf-free float
 * QuantizeLinear (see npucc_eltwise_s8_fast.h). Broadcasting walks the output like
 * npucc_eltwise_s8.c: a plain inner loop, an index counter over the outer axes. */
#include "npucc_eltwise_s8_fast.h"
#include "npucc_rq32.h"

#include <float.h>
#include <math.h>

/* npucc_srdhm(x, m) for m >= 0 in one 64-bit add and shift: gemmlowp's nudged truncation
 * (+2^30 for a non-negative product, 1 - 2^30 and truncation toward zero for a negative
 * one) is floor((x*m + 2^30) / 2^31) in both cases. */
static inline int32_t npucc_ef_srdhm(int32_t x, int32_t m) {
  return (int32_t)(((int64_t)x * m + ((int64_t)1 << 30)) >> 31);
}

typedef struct {
  const int32_t *ta, *tb, *rq;
  int32_t mult, shift, a_zp, b_zp, out_zp, lo, hi;
} npucc_ef_params;

/* The row of an Add. The compiler guarantees |ta| + |tb| < 2^30 (its tables are below
 * 2^28: nine-bit differences shifted by 20 and scaled by at most 0.5), so the rounding
 * divide by 2^e (ties away from zero, npucc_rdbpot) is (x + 2^(e-1) - (x < 0)) >> e
 * without overflow: three instructions instead of a mask, a compare and a select. */
static void npucc_ef_add_row(const npucc_ef_params *p, const int8_t *a, const int8_t *b,
                             int8_t *y, int32_t n, int32_t as, int32_t bs) {
  const int32_t *ta = p->ta + 128, *tb = p->tb + 128;
  int32_t j, mult = p->mult, shift = p->shift, zp = p->out_zp, lo = p->lo, hi = p->hi;
  int32_t half = shift ? (int32_t)1 << (shift - 1) : 0, neg = shift ? -1 : 0;
  if (as == 1 && bs == 1 && shift > 0 && lo == -128 && hi == 127) { /* the common row */
    for (j = 0; j < n; j++) {
      int32_t x = npucc_ef_srdhm(ta[a[j]] + tb[b[j]], mult);
      int32_t v = ((x + half + (x >> 31)) >> shift) + zp;
      y[j] = (int8_t)NPUCC_SAT8(v);
    }
    return;
  }
  for (j = 0; j < n; j++) {
    int32_t x = npucc_ef_srdhm(ta[a[(size_t)j * as]] + tb[b[(size_t)j * bs]], mult);
    int32_t v = ((x + half + ((x >> 31) & neg)) >> shift) + zp;
    y[j] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
  }
}

static void npucc_ef_mul_row(const npucc_ef_params *p, const int8_t *a, const int8_t *b,
                             int8_t *y, int32_t n, int32_t as, int32_t bs) {
  int32_t j;
  for (j = 0; j < n; j++) {
    int32_t acc = ((int32_t)a[(size_t)j * as] - p->a_zp) * ((int32_t)b[(size_t)j * bs] - p->b_zp);
    y[j] = npucc_rq32_i8(acc, p->rq, NPUCC_RQ_EXACT, p->out_zp, p->lo, p->hi);
  }
}

typedef void (*npucc_ef_row_fn)(const npucc_ef_params *, const int8_t *, const int8_t *,
                                int8_t *, int32_t, int32_t, int32_t);

static void npucc_ef_run(const npucc_ef_params *p, npucc_ef_row_fn row, const int8_t *A,
                         const int8_t *B, int8_t *Y, int32_t rank, const int32_t *shape,
                         const int32_t *a_str, const int32_t *b_str) {
  int32_t idx[8];
  int32_t last = rank - 1, inner = shape[last], k;
  size_t outer = 1, o, ao = 0, bo = 0;
  for (k = 0; k < last; k++) {
    idx[k] = 0;
    outer *= (size_t)shape[k];
  }
  for (o = 0; o < outer; o++) {
    row(p, A + ao, B + bo, Y + o * (size_t)inner, inner, a_str[last], b_str[last]);
    for (k = last - 1; k >= 0; k--) { /* advance the outer index */
      idx[k]++;
      ao += (size_t)a_str[k];
      bo += (size_t)b_str[k];
      if (idx[k] < shape[k])
        break;
      ao -= (size_t)a_str[k] * (size_t)shape[k];
      bo -= (size_t)b_str[k] * (size_t)shape[k];
      idx[k] = 0;
    }
  }
}

void npucc_add_s8_fast(const int8_t *A, const int8_t *B, int8_t *Y, const int32_t *ta,
                       const int32_t *tb, int32_t out_mult, int32_t out_shift, int32_t out_zp,
                       int32_t act_min, int32_t act_max, int32_t rank, const int32_t *shape,
                       const int32_t *a_str, const int32_t *b_str) {
  npucc_ef_params p;
  memset(&p, 0, sizeof(p));
  p.ta = ta;
  p.tb = tb;
  p.mult = out_mult;
  p.shift = out_shift;
  p.out_zp = out_zp;
  p.lo = npucc_max_i32(act_min, -128);
  p.hi = npucc_min_i32(act_max, 127);
  npucc_ef_run(&p, npucc_ef_add_row, A, B, Y, rank, shape, a_str, b_str);
}

void npucc_mul_s8_fast(const int8_t *A, const int8_t *B, int8_t *Y, int32_t a_zp, int32_t b_zp,
                       const int32_t *rq, int32_t out_zp, int32_t act_min, int32_t act_max,
                       int32_t rank, const int32_t *shape, const int32_t *a_str,
                       const int32_t *b_str) {
  npucc_ef_params p;
  memset(&p, 0, sizeof(p));
  p.rq = rq;
  p.a_zp = a_zp;
  p.b_zp = b_zp;
  p.out_zp = out_zp;
  p.lo = npucc_max_i32(act_min, -128);
  p.hi = npucc_min_i32(act_max, 127);
  npucc_ef_run(&p, npucc_ef_mul_row, A, B, Y, rank, shape, a_str, b_str);
}

/* The bits of a float. */
static inline uint32_t npucc_ef_bits(float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  return u;
}

void npucc_quantize_f32_s8_fast(const float *X, int8_t *Y, int32_t n, const float *scale,
                                int32_t zp) {
  float s = scale[0];
  int32_t i;
  for (i = 0; i < n; i++) {
    float v = X[i] / s;
    int32_t q;
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    /* |v| < 512 (the magnitude bits below those of 512.0f): adding 1.5 * 2^23 leaves a unit
     * in the last place of 1, so the float addition rounds v to an integer, to nearest
     * even, as rintf does, and the sum's bits are 0x4B400000 plus that integer. Else
     * NaN gives 0 and anything else (512 and up, infinities) saturates. */
    uint32_t a = npucc_ef_bits(v) & 0x7FFFFFFFu;
    if (a < 0x44000000u)
      q = (int32_t)(npucc_ef_bits(v + 12582912.0f) - 0x4B400000u);
    else
      q = a > 0x7F800000u ? 0 : (v < 0.0f ? -512 : 512);
#else
    if (v != v) /* NaN */
      v = 0.0f;
    v = v < -512.0f ? -512.0f : (v > 512.0f ? 512.0f : v);
    q = (int32_t)rintf(v); /* float sums would be rounded in a wider format */
#endif
    q += zp;
    Y[i] = (int8_t)NPUCC_SAT8(q);
  }
}
