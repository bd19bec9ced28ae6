/* npucc_requant.h - int8 requantization arithmetic (TFLite / gemmlowp scheme).
 *
 * Shared bit-exactly by the CPU kernels, the NPU simulator and the tests.
 * All functions are static inline C99 with no dependencies beyond <stdint.h>.
 *
 * A real multiplier M (0 < M < 2^31 after scaling) is represented as
 *   M = mult * 2^-31 * 2^-right_shift,   mult a Q31 integer in [2^30, 2^31).
 * Requantizing an int32 accumulator `acc` is
 *   1. if right_shift < 0: x = acc * 2^-right_shift, saturated to int32
 *      (a left shift, used for multipliers >= 1), and the right shift is 0;
 *   2. y = SRDHM(x, mult): the saturating rounding doubling high multiply,
 *      i.e. x * mult / 2^31 rounded to nearest with ties rounded UP (toward
 *      +infinity: 1.5 -> 2, -1.5 -> -1). This is exactly gemmlowp's nudge:
 *      add 2^30 to a non-negative 64-bit product, 1 - 2^30 to a negative
 *      one, then divide by 2^31 truncating toward zero. The single overflow
 *      case x = mult = INT32_MIN yields INT32_MAX;
 *   3. z = RDBPOT(y, right_shift): y / 2^right_shift rounded to nearest with
 *      ties AWAY from zero (-2.5 -> -3, 2.5 -> 3), right_shift in 0..31;
 *   4. q = z + out_zp, then clamped to [max(act_min, -128), min(act_max, 127)].
 * Steps 2-3 are npucc_mul_qmult, used only inside npucc_add_i8 (TFLite's add).
 * npucc_requant_i8 (every other op) replaces them by ONE rounding of the exact
 * 64-bit product x * mult / 2^(31 + right_shift), ties to even
 * (npucc_mul_qmult_rne). npucc_mul_qmult_fp32 / npucc_requant_i8_r with
 * NPUCC_RQ_FP32 reproduce ONNX Runtime's float32 requantization of
 * QLinearConv/QLinearMatMul bit for bit, with integers only.
 */
#ifndef NPUCC_REQUANT_H
#define NPUCC_REQUANT_H

#include <stdint.h>

static inline int32_t npucc_sat_i32(int64_t v) {
  if (v > INT32_MAX)
    return INT32_MAX;
  if (v < INT32_MIN)
    return INT32_MIN;
  return (int32_t)v;
}

/* Saturating rounding doubling high multiply: a * b / 2^31, ties toward +infinity. */
static inline int32_t npucc_srdhm(int32_t a, int32_t b) {
  int64_t ab;
  int64_t nudge;
  if (a == INT32_MIN && b == INT32_MIN)
    return INT32_MAX;
  ab = (int64_t)a * (int64_t)b;
  nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* Rounding divide by 2^exponent (exponent in 0..31), ties away from zero. */
static inline int32_t npucc_rdbpot(int32_t x, int exponent) {
  int64_t mask, rem, threshold;
  if (exponent <= 0)
    return x;
  if (exponent > 31)
    exponent = 31;
  mask = ((int64_t)1 << exponent) - 1;
  rem = (int64_t)x & mask;
  threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (int32_t)(((int64_t)x >> exponent) + (rem > threshold ? 1 : 0));
}

/* x * mult * 2^-31 * 2^-right_shift with the rounding documented above.
 * right_shift in -31..31 (negative: left shift before the multiply). */
static inline int32_t npucc_mul_qmult(int32_t x, int32_t mult, int32_t right_shift) {
  if (right_shift < 0) {
    int left = -right_shift > 31 ? 31 : -right_shift;
    x = npucc_sat_i32((int64_t)x * ((int64_t)1 << left));
    right_shift = 0;
  }
  return npucc_rdbpot(npucc_srdhm(x, mult), (int)right_shift);
}

static inline int32_t npucc_clamp_i32(int32_t v, int32_t lo, int32_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

/* x * mult * 2^-31 * 2^-right_shift with ONE rounding, to nearest with ties
 * to even (the rounding of ONNX QuantizeLinear and of ONNX Runtime's float
 * requantization). The 64-bit product is exact; right_shift in -31..31
 * (negative: saturating left shift of x first, as in npucc_mul_qmult).
 * Unlike npucc_mul_qmult there is no intermediate rounding after the Q31
 * multiply, so the result is the correctly rounded value of x * M for the
 * represented M (double rounding could turn 48.4997 into 49). */
static inline int32_t npucc_mul_qmult_rne(int32_t x, int32_t mult, int32_t right_shift) {
  int64_t p, mag, q, rem, half;
  int e;
  if (right_shift < 0) {
    int left = -right_shift > 31 ? 31 : -right_shift;
    x = npucc_sat_i32((int64_t)x * ((int64_t)1 << left));
    right_shift = 0;
  }
  if (right_shift > 31)
    right_shift = 31;
  e = 31 + (int)right_shift;      /* 31..62 */
  p = (int64_t)x * (int64_t)mult; /* |p| <= 2^62: exact */
  mag = p < 0 ? -p : p;
  q = mag >> e;
  rem = mag & ((((int64_t)1) << e) - 1);
  half = (int64_t)1 << (e - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  return npucc_sat_i32(p < 0 ? -q : q);
}

/* Full requantization of an int32 accumulator to int8 with a fused clamp:
 * npucc_mul_qmult_rne (one rounding, ties to even), + out_zp, saturate. */
static inline int8_t npucc_requant_i8(int32_t acc, int32_t mult, int32_t right_shift,
                                      int32_t out_zp, int32_t act_min, int32_t act_max) {
  int32_t lo = act_min < -128 ? -128 : act_min;
  int32_t hi = act_max > 127 ? 127 : act_max;
  int32_t v = npucc_sat_i32((int64_t)npucc_mul_qmult_rne(acc, mult, right_shift) + out_zp);
  return (int8_t)npucc_clamp_i32(v, lo, hi);
}

/* Requantization rounding modes: the `rounding` argument of the int8 Conv and
 * Gemm/MatMul kernels (and the IR attribute requant="fp32", docs/quantization.md).
 *   NPUCC_RQ_EXACT: npucc_mul_qmult_rne, one rounding of the exact acc * M.
 *   NPUCC_RQ_FP32:  npucc_mul_qmult_fp32, the float32 arithmetic of ONNX
 *                   Runtime's QLinearConv/QLinearMatMul emulated in integers. */
#define NPUCC_RQ_EXACT 0
#define NPUCC_RQ_FP32 1

/* Number of significant bits of v (0 for 0). */
static inline int npucc_bitlen_u64(uint64_t v) {
  int n = 0, step;
  for (step = 32; step > 0; step >>= 1) {
    if (v >> step) {
      n += step;
      v >>= step;
    }
  }
  return n + (int)v;
}

/* v rounded to 24 significant bits, ties to even: the significand of a
 * float32 (round to nearest even, the IEEE default). v < 2^63. */
static inline uint64_t npucc_round_sig24(uint64_t v) {
  int drop = npucc_bitlen_u64(v) - 24;
  uint64_t q, rem, half;
  if (drop <= 0)
    return v;
  q = v >> drop;
  rem = v & ((((uint64_t)1) << drop) - 1);
  half = (uint64_t)1 << (drop - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  return q << drop;
}

/* x * M for M = mult * 2^-31 * 2^-right_shift computed as float32 arithmetic
 * would, with integers only: rint(fl(fl(x) * M)), i.e.
 *   1. x to float32: |x| rounded to 24 significant bits (exact below 2^24);
 *   2. the product rounded to 24 significant bits (the float32 multiply;
 *      M must itself be a float32 value, i.e. mult a multiple of 2^7);
 *   3. that value rounded to an integer, ties to even (cvtps2dq / rintf),
 *      saturated to int32.
 * Ties to even in both roundings, as the IEEE default rounding mode does.
 * ONNX Runtime requantizes QLinearConv/QLinearMatMul accumulators exactly so:
 * float(acc) * (x_scale * w_scale / y_scale) in float32, then rounded. Where
 * the float32 product lands on or across a tie (35.49999806 -> 35.5 -> 36)
 * this differs from npucc_mul_qmult_rne by one. right_shift in -31..31. */
static inline int32_t npucc_mul_qmult_fp32(int32_t x, int32_t mult, int32_t right_shift) {
  uint64_t a = x < 0 ? (uint64_t)0 - (uint64_t)(int64_t)x : (uint64_t)x; /* <= 2^31 */
  uint64_t m = mult < 0 ? 0 : (uint64_t)mult;                            /* < 2^31 */
  uint64_t p, q, rem, half;
  int e;
  if (right_shift > 31)
    right_shift = 31;
  if (right_shift < -31)
    right_shift = -31;
  e = 31 + (int)right_shift;                       /* 0..62 */
  p = npucc_round_sig24(npucc_round_sig24(a) * m); /* < 2^62 */
  q = e > 0 ? p >> e : p;
  if (e > 0) {
    rem = p & ((((uint64_t)1) << e) - 1);
    half = (uint64_t)1 << (e - 1);
    if (rem > half || (rem == half && (q & 1)))
      ++q;
  }
  if (q > (uint64_t)INT32_MAX)
    return x < 0 ? INT32_MIN : INT32_MAX;
  return x < 0 ? -(int32_t)q : (int32_t)q;
}

/* npucc_requant_i8 with a rounding mode (NPUCC_RQ_EXACT or NPUCC_RQ_FP32). */
static inline int8_t npucc_requant_i8_r(int32_t acc, int32_t mult, int32_t right_shift,
                                        int32_t out_zp, int32_t act_min, int32_t act_max,
                                        int32_t rounding) {
  int32_t lo = act_min < -128 ? -128 : act_min;
  int32_t hi = act_max > 127 ? 127 : act_max;
  int32_t r = rounding == NPUCC_RQ_FP32 ? npucc_mul_qmult_fp32(acc, mult, right_shift)
                                        : npucc_mul_qmult_rne(acc, mult, right_shift);
  int32_t v = npucc_sat_i32((int64_t)r + out_zp);
  return (int8_t)npucc_clamp_i32(v, lo, hi);
}

/* ---- 32-bit-friendly requantization (the fast CPU kernels, docs/quantization.md) ----
 * npucc_rq32_prep turns one channel's (mult, right_shift, rounding) into four int32 words
 * NPUCC_RQ32_WORDS, computed once (by the compiler, which emits them as a constant array,
 * or once per channel); npucc_rq32_i8 then requantizes an accumulator to int8 with a
 * 32x32->64 multiply (SMULL/UMULL on Cortex-M, mul+mulh on RV32M) and 32-bit operations,
 * bit-exactly as npucc_requant_i8_r does. Words:
 *   EXACT, right_shift clamped to 1..31 (E = 31 + rs >= 32):
 *     {mult, rs - 1, lo32(2^(E-1) - 1), hi32(2^(E-1) - 1)};
 *     q = floor((acc*mult + 2^(E-1) - 1 + bit_E(acc*mult)) / 2^E) is the product rounded to
 *     nearest, ties to even, and only the high word of the 64-bit sum is shifted.
 *   FP32, mult a multiple of 2^7 (a float32 multiplier), s = 24 + rs >= 1:
 *     {mult >> 7, s, 0, 0}; for |acc| < 2^24 (exact in float32) the float32 product
 *     round24(|acc| * (mult >> 7)) is a < 2^48 integer product rounded at its bit length - 24,
 *     then rounded to an integer at bit s; a product that cannot land inside int8 after the
 *     zero point (>= 2^(s+10)) saturates directly.
 *   Anything else (multipliers >= 0.5 in EXACT, |acc| >= 2^24 in FP32):
 *     {mult, -1, right_shift, rounding}: the generic npucc_requant_i8_r, except EXACT with
 *     right_shift in -30..0 and mult >= 2^30, which npucc_rq32_exact_left does in 32-bit
 *     operations (npucc_rq32_is_left). */
#define NPUCC_RQ32_WORDS 4

static inline void npucc_rq32_prep(int32_t mult, int32_t right_shift, int32_t rounding,
                                   int32_t out[NPUCC_RQ32_WORDS]) {
  int32_t rs = right_shift > 31 ? 31 : right_shift;
  out[0] = mult;
  out[1] = -1;
  out[2] = right_shift;
  out[3] = rounding;
  if (rounding == NPUCC_RQ_FP32) {
    if (mult >= 0 && (mult & 127) == 0 && rs >= -23) {
      out[0] = mult >> 7;
      out[1] = 24 + rs;
      out[2] = 0;
      out[3] = 0;
    }
  } else if (rs >= 1) {
    uint64_t rnd = ((uint64_t)1 << (30 + rs)) - 1;
    out[1] = rs - 1;
    out[2] = (int32_t)(uint32_t)(rnd & 0xFFFFFFFFu); /* two's complement bit pattern */
    out[3] = (int32_t)(rnd >> 32);
  }
}

/* Bit length of a 32-bit value (0 for 0): CLZ where the compiler has it. */
static inline int npucc_bitlen_u32(uint32_t v) {
#if defined(__GNUC__) || defined(__clang__)
  return v ? 32 - __builtin_clz(v) : 0;
#else
  int n = 0;
  if (v >> 16) { n += 16; v >>= 16; }
  if (v >> 8) { n += 8; v >>= 8; }
  if (v >> 4) { n += 4; v >>= 4; }
  if (v >> 2) { n += 2; v >>= 2; }
  if (v >> 1) { n += 1; v >>= 1; }
  return n + (int)v;
#endif
}

/* EXACT fast path: rq[1] = E - 32 in 0..30. */
static inline int32_t npucc_rq32_exact(int32_t acc, const int32_t *rq) {
  int64_t p = (int64_t)acc * rq[0];
  int32_t sh = rq[1];
  int32_t bit = ((int32_t)(p >> 32) >> sh) & 1;
  int64_t rnd = (int64_t)(((uint64_t)(uint32_t)rq[3] << 32) | (uint32_t)rq[2]);
  return (int32_t)((p + rnd + bit) >> 32) >> sh;
}

/* FP32 fast path (|acc| < 2^24): |result| or 1024 when the result saturates int8. The
 * 48-bit product p = hi:lo is rounded to 24 significant bits at bit d = len - 24 <= 24, so
 * its round and sticky bits all lie in lo and the kept bits in hi:lo >> d fit 32 bits. */
static inline int32_t npucc_rq32_fp32_mag(uint32_t a, const int32_t *rq) {
  uint64_t p = (uint64_t)a * (uint32_t)rq[0]; /* < 2^48 */
  uint32_t hi = (uint32_t)(p >> 32), lo = (uint32_t)p, r;
  int s = rq[1], len = hi ? 32 + npucc_bitlen_u32(hi) : npucc_bitlen_u32(lo);
  int d = len - 24, k;
  if (len > s + 10)
    return 1024;
  if (d > 0) { /* the float32 multiply: round to 24 significant bits, ties to even */
    uint32_t half = 1u << (d - 1), rest = lo & (half - 1u);
    r = (lo >> d) | (hi << (32 - d));
    if ((lo & half) && (rest || (r & 1u)))
      r++; /* <= 2^24 */
    k = s - d; /* >= 14 */
  } else {
    r = lo;
    k = s;
  }
  if (k > 25)
    return 0; /* r <= 2^24 <= half of 2^k */
  return (int32_t)((r + ((1u << (k - 1)) - 1) + ((r >> k) & 1)) >> k);
}

/* EXACT for multipliers >= 0.5: right_shift = -L in -30..0 and a normalized mult (>= 2^30),
 * the words {mult, -1, -L, EXACT} (a channel whose weights are all zero often has such a
 * multiplier). The accumulator is clamped to |x| <= 2^(30-L) first: beyond it the
 * reference's x * 2^L * M is >= 2^29 in magnitude, so it saturates int8 the same way as
 * the clamped one, and the sum with the zero point cannot overflow. Then one rounding of
 * x * 2^L * mult / 2^31, ties to even, with a 32x32->64 multiply: the product rounded at
 * bit 31 (bit 31 of the low word is the quotient's lowest bit). */
static inline int npucc_rq32_is_left(const int32_t *rq, int32_t rounding) {
  return rq[1] < 0 && rounding == NPUCC_RQ_EXACT && rq[2] <= 0 && rq[2] >= -30 &&
         rq[0] >= (1 << 30);
}
static inline int32_t npucc_rq32_exact_left(int32_t acc, int32_t mult, int32_t L) {
  int32_t b = (int32_t)1 << (30 - L);
  int32_t x = (acc < -b ? -b : (acc > b ? b : acc)) * ((int32_t)1 << L);
  int64_t p = (int64_t)x * mult;
  int32_t bit = (int32_t)(((uint32_t)p) >> 31);
  return (int32_t)((p + ((int64_t)1 << 30) - 1 + bit) >> 31);
}

/* The generic path of npucc_rq32_i8, kept out of line so that the fast path inlines. Its
 * body is large (the 64-bit and float32 emulations, about 2.6 KB of Cortex-M4 code), so
 * the fast CPU kernels share one copy: they include npucc_rq32.h, which defines
 * NPUCC_RQ32_GENERIC_EXTERN, and npucc_rq32.c defines it; anywhere else each file has its
 * own static copy. */
static inline int8_t npucc_rq32_generic_body(int32_t acc, const int32_t *rq, int32_t rounding,
                                             int32_t out_zp, int32_t lo, int32_t hi) {
  if (npucc_rq32_is_left(rq, rounding)) {
    int32_t v = npucc_rq32_exact_left(acc, rq[0], -rq[2]) + out_zp;
    return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
  }
  if (rq[1] < 0)
    return npucc_requant_i8_r(acc, rq[0], rq[2], out_zp, lo, hi, rounding);
  return npucc_requant_i8_r(acc, rq[0] * 128, rq[1] - 24, out_zp, lo, hi, rounding);
}
#if defined(NPUCC_RQ32_GENERIC_EXTERN)
int8_t npucc_rq32_generic(int32_t acc, const int32_t *rq, int32_t rounding, int32_t out_zp,
                          int32_t lo, int32_t hi);
#else
#if defined(__GNUC__) || defined(__clang__)
static __attribute__((noinline, unused)) int8_t npucc_rq32_generic(
#else
static inline int8_t npucc_rq32_generic(
#endif
    int32_t acc, const int32_t *rq, int32_t rounding, int32_t out_zp, int32_t lo, int32_t hi) {
  return npucc_rq32_generic_body(acc, rq, rounding, out_zp, lo, hi);
}
#endif

/* npucc_requant_i8_r(acc, mult, right_shift, out_zp, act_min, act_max, rounding) for the
 * words rq = npucc_rq32_prep(mult, right_shift, rounding); lo/hi already within int8. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int8_t npucc_rq32_i8(int32_t acc, const int32_t *rq, int32_t rounding,
                                   int32_t out_zp, int32_t lo, int32_t hi) {
  int32_t v;
  if (rq[1] < 0)
    return npucc_rq32_generic(acc, rq, rounding, out_zp, lo, hi);
  if (rounding == NPUCC_RQ_FP32) {
    uint32_t a = acc < 0 ? 0u - (uint32_t)acc : (uint32_t)acc;
    int32_t m;
    if (a >= (1u << 24)) /* not exact in float32: the generic emulation */
      return npucc_rq32_generic(acc, rq, rounding, out_zp, lo, hi);
    m = npucc_rq32_fp32_mag(a, rq);
    v = (acc < 0 ? -m : m) + out_zp;
  } else {
    v = npucc_rq32_exact(acc, rq) + out_zp;
  }
  return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* Quantized int8 addition (TFLite scheme): each input is offset by its zero
 * point, scaled up by 2^left_shift, rescaled by its own multiplier; the sum is
 * rescaled by the output multiplier, offset by out_zp and clamped. */
static inline int8_t npucc_add_i8(int8_t a, int8_t b, int32_t a_zp, int32_t b_zp,
                                  int32_t left_shift, int32_t a_mult, int32_t a_shift,
                                  int32_t b_mult, int32_t b_shift, int32_t out_mult,
                                  int32_t out_shift, int32_t out_zp, int32_t act_min,
                                  int32_t act_max) {
  int32_t sa = npucc_sat_i32(((int64_t)a - a_zp) * ((int64_t)1 << left_shift));
  int32_t sb = npucc_sat_i32(((int64_t)b - b_zp) * ((int64_t)1 << left_shift));
  int32_t ra = npucc_mul_qmult(sa, a_mult, a_shift);
  int32_t rb = npucc_mul_qmult(sb, b_mult, b_shift);
  int32_t lo = act_min < -128 ? -128 : act_min;
  int32_t hi = act_max > 127 ? 127 : act_max;
  /* TFLite's output stage (two roundings, npucc_mul_qmult), kept as is. */
  int32_t v = npucc_sat_i32(
      (int64_t)npucc_mul_qmult(npucc_sat_i32((int64_t)ra + rb), out_mult, out_shift) + out_zp);
  return (int8_t)npucc_clamp_i32(v, lo, hi);
}

/* Integer division rounded to nearest, ties away from zero (average pooling). */
static inline int32_t npucc_div_round(int32_t num, int32_t den) {
  if (den <= 0)
    return 0;
  return num >= 0 ? (num + den / 2) / den : (num - den / 2) / den;
}

/* Integer division num / den (den > 0) rounded as `mode` says (NPUCC_AVG_*
 * of npucc_params.h: the NPU's average pooling). */
static inline int32_t npucc_div_round_mode(int32_t num, int32_t den, int mode) {
  int32_t q, r;
  if (den <= 0)
    return 0;
  q = num / den; /* toward zero */
  r = num % den;
  if (r == 0 || mode == 2)
    return q;
  if (mode == 3)
    return num < 0 ? q - 1 : q;
  if (2 * (r < 0 ? -r : r) == den && mode == 1) /* a tie: to even */
    return (q % 2 == 0) ? q : (num < 0 ? q - 1 : q + 1);
  return npucc_div_round(num, den); /* to nearest, ties away from zero */
}

#endif /* NPUCC_REQUANT_H */
