/* npucc_stages.h - The arithmetic of the NPU's pipeline stages.
 *
 * A MAC operation (conv, depthwise, matmul) computes each output element as
 * a pipeline of stages, one per slot (NPUCC_STAGE_LIST in npucc_params.h):
 *   input -> correction -> mac -> requant -> activation -> pool -> output.
 * Each stage's arithmetic is one function here, shared by the simulator
 * (runtime/sim/npucc_sim_mac.c) and the compiler's integer interpreter; a
 * naive reference checks each of them (test/unit/stage_ops_test.cpp).
 * Static inline C99 on top of npucc_requant.h; no other dependency.
 */
#ifndef NPUCC_STAGES_H
#define NPUCC_STAGES_H

#include <stdint.h>

#include "npucc_params.h"
#include "npucc_requant.h"

/* npucc_stage_slot, npucc_stage_default and npucc_stage_of (a description's
 * pipeline table) are in npucc_params.h, beside the stage list. */

/* ---- input: int8 ----
 * One stored byte read as a signed 8-bit element. */
static inline int32_t npucc_stage_in_int8(uint8_t byte) { return (int32_t)(int8_t)byte; }

/* ---- input: uint8 ----
 * One stored byte read as an unsigned 8-bit element (0..255). A uint8 NPU
 * holds an int8 value q as the byte q + 128 (its zero point zp as zp + 128);
 * in_zp is the uint8 zero point (0..255), which the padding pixels hold. */
static inline int32_t npucc_stage_in_uint8(uint8_t byte) { return (int32_t)byte; }

/* ---- correction: subtract_zp ----
 * One product term of the MAC: (x - in_zp) * w, weights symmetric (no weight
 * zero point). |x - in_zp| <= 255, |w| <= 128: exact in int32. */
static inline int32_t npucc_stage_subtract_zp(int32_t x, int32_t in_zp, int32_t w) {
  return (x - in_zp) * w;
}

/* ---- correction: correction_terms ----
 * The K210 KPU's form: the MAC sums the raw products x * w (weights read as
 * uint8 0..255, the padding pixels as in_zp), and this stage adds the zero
 * point terms once per output element:
 *   acc + (corr_x * sum_x >> sx) + (corr_w * sum_w >> sw) + corr_add * c_group
 * sum_x: the window's inputs (padding included), sum_w: the output channel's
 * weights, c_group: the input channels one output reads (conv: in_ch,
 * depthwise: 1, matmul: k). The shifts are arithmetic (floor), 0..63. With
 * corr_x = -zw, corr_w = -zx, corr_add = k_h * k_w * zw * zx and shifts 0 it
 * is sum((x - zx) * (w - zw)) exactly. The widths are the description's
 * (stage_params); the caller keeps |corr_x|, |corr_w| < 2^31, |sum_x|,
 * |sum_w| < 2^31 and |corr_add| < 2^40, so nothing here overflows int64 for
 * c_group < 2^22. */
static inline int64_t npucc_corr_shift(int64_t v, int32_t sh) {
  if (sh <= 0)
    return v;
  if (sh > 63)
    sh = 63;
  return v >= 0 ? v >> sh : -((-(v + 1)) >> sh) - 1; /* floor, no shift of a negative */
}

static inline int64_t npucc_stage_corr_terms(int64_t acc, int64_t sum_x, int64_t sum_w,
                                             int32_t corr_x, int32_t corr_x_shift, int32_t corr_w,
                                             int32_t corr_w_shift, int64_t corr_add,
                                             int64_t c_group) {
  return acc + npucc_corr_shift((int64_t)corr_x * sum_x, corr_x_shift) +
         npucc_corr_shift((int64_t)corr_w * sum_w, corr_w_shift) + corr_add * c_group;
}

/* ---- mac ----
 * The accumulator plus one term, in 64 bits; the caller checks the result
 * against the accumulator's width with npucc_stage_acc_fits. */
static inline int64_t npucc_stage_mac(int64_t acc, int32_t term) { return acc + term; }

/* True when `acc` is representable in a two's complement accumulator of
 * `bits` bits (2..63). */
static inline int npucc_stage_acc_fits(int64_t acc, unsigned bits) {
  int64_t lim = (int64_t)1 << (bits - 1);
  return acc >= -lim && acc < lim;
}

/* ---- requant: q31 ----
 * acc (the accumulator plus the bias) times M = mult * 2^-31 * 2^-shift,
 * rounded once to nearest, ties to even (npucc_mul_qmult_rne), plus out_zp,
 * saturated to int32. shift in -31..31. */
static inline int32_t npucc_stage_rq_q31(int32_t acc, int32_t mult, int32_t shift, int32_t out_zp) {
  return npucc_sat_i32((int64_t)npucc_mul_qmult_rne(acc, mult, shift) + out_zp);
}

/* ---- requant: fp32_scale ----
 * acc (the accumulator plus the bias) times a binary32 scale (its bit
 * pattern `scale_bits`) as float32 arithmetic computes it, with integers
 * only: acc converted to float32 (rounded to 24 significant bits), the
 * product rounded to 24 significant bits, then to an integer, all ties to
 * even (IEEE's default rounding); plus out_zp, saturated to int32. This is
 * ONNX Runtime's requantization of QLinearConv/QLinearMatMul
 * (float(acc) * scale, rounded, + zero point). A non-finite scale is the
 * caller's error (npucc_stage_fp32_finite); here infinity saturates and NaN
 * gives out_zp. */
static inline int npucc_stage_fp32_finite(uint32_t scale_bits) {
  return ((scale_bits >> 23) & 0xFFu) != 0xFFu;
}

static inline int32_t npucc_stage_rq_fp32(int32_t acc, uint32_t scale_bits, int32_t out_zp) {
  uint32_t ex = (scale_bits >> 23) & 0xFFu, man = scale_bits & 0x7FFFFFu;
  int neg = (int)(scale_bits >> 31) != (acc < 0);
  uint64_t a = acc < 0 ? (uint64_t)0 - (uint64_t)(int64_t)acc : (uint64_t)acc; /* <= 2^31 */
  uint64_t m, p, q;
  int e;
  if (ex == 0xFFu) {
    if (man != 0 || a == 0)
      return out_zp;
    return neg ? INT32_MIN : INT32_MAX;
  }
  m = ex ? (man | 0x800000u) : man; /* scale = m * 2^e */
  e = ex ? (int)ex - 150 : -149;
  p = npucc_round_sig24(npucc_round_sig24(a) * m); /* < 2^55 */
  if (p == 0) {
    q = 0;
  } else if (e >= 0) {
    q = npucc_bitlen_u64(p) + e > 32 ? (uint64_t)1 << 32 : p << e;
  } else if (-e >= 60) {
    q = 0; /* p / 2^-e < 2^55 / 2^60: below one half */
  } else {
    uint64_t rem = p & ((((uint64_t)1) << -e) - 1), half = (uint64_t)1 << (-e - 1);
    q = p >> -e;
    if (rem > half || (rem == half && (q & 1)))
      ++q;
  }
  if (q > (uint64_t)1 << 32)
    q = (uint64_t)1 << 32;
  return npucc_sat_i32((neg ? -(int64_t)q : (int64_t)q) + out_zp);
}

/* ---- requant: shift ----
 * acc (the accumulator plus the bias) shifted right by `shift` (0..31) with
 * rounding to nearest, ties to even, plus out_zp, saturated to int32: the
 * q31 stage's result for the multiplier 2^-shift (mult 2^30, shift - 1;
 * for shift 0 q31 saturates acc * 2 first: the same int8 after the clamp),
 * so a layer whose requantization ratio is a power of two runs with no
 * approximation. A shift outside 0..31 is the caller's error. */
static inline int32_t npucc_stage_rq_shift(int32_t acc, int32_t shift, int32_t out_zp) {
  int64_t mag = acc < 0 ? -(int64_t)acc : (int64_t)acc, q, rem, half;
  if (shift <= 0)
    return npucc_sat_i32((int64_t)acc + out_zp);
  q = mag >> shift;
  rem = mag & ((((int64_t)1) << shift) - 1);
  half = (int64_t)1 << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  return npucc_sat_i32((acc < 0 ? -q : q) + out_zp);
}

/* ---- requant: mul_shift_add ----
 * The batch-norm form: floor(acc * mul / 2^shift) + add, saturated to int32
 * (acc: the accumulator plus the bias). `mul` is signed, `shift` 0..62, the
 * division rounds toward minus infinity (an arithmetic right shift); the
 * output zero point is part of `add`. The widths of mul, shift and add are
 * the description's (the compiler fits them, lib/qmath/MulShiftAdd.cpp);
 * the product is exact in 64 bits for any 32-bit mul. */
static inline int32_t npucc_stage_rq_msa(int32_t acc, int32_t mul, int32_t shift, int32_t add) {
  int64_t p = (int64_t)acc * (int64_t)mul, q;
  if (shift <= 0)
    q = p;
  else if (p >= 0)
    q = p >> shift;
  else
    q = -((-(p + 1)) >> shift) - 1; /* floor for negatives without shifting them */
  return npucc_sat_i32(q + (int64_t)add);
}

/* ---- activation: clamp ----
 * The fused clamp [act_min, act_max] within the int8 range. */
static inline int32_t npucc_stage_act_clamp(int32_t v, int32_t act_min, int32_t act_max) {
  int32_t lo = act_min < -128 ? -128 : act_min;
  int32_t hi = act_max > 127 ? 127 : act_max;
  return npucc_clamp_i32(v, lo, hi);
}

/* ---- activation: lut256 ----
 * A 256-byte table read with the requantized value as index:
 * out = (int8)lut[v + 128], v first saturated to the int8 range (the
 * requant stage's result is already saturated with out_zp added), so
 * lut[0] is the output for -128 and lut[255] the one for 127: the indexing
 * of the CPU's npucc_lut_s8. The table holds the fused clamp and any fused
 * elementwise activation; the stage itself does no arithmetic. */
static inline int32_t npucc_stage_act_lut256(int32_t v, const uint8_t *lut) {
  return (int32_t)(int8_t)lut[npucc_clamp_i32(v, -128, 127) + 128];
}

/* ---- activation: pwl ----
 * An N-segment piecewise-linear function (the K210 KPU's activation). The
 * table (operand act, NPUCC_PWL_TABLE_BYTES) is the K210's format: 16
 * records of 8 bytes, little-endian, bits 0..7 shift (unsigned), 8..23 mul
 * (signed), 24..59 start (signed, 36 bits), 60..63 unused; then 16 bytes
 * add (int8), one per segment. y is the requantized value before any clamp
 * (int32, out_zp included), taken wide as the K210 takes its 36-bit batch
 * norm result: segment k is the last one whose start <= y (segment 0 when
 * none is: it covers everything below);
 * out = round_half_even((y - start) * mul / 2^shift) + add, clamped to int8. */
#define NPUCC_PWL_SEGMENTS 16
#define NPUCC_PWL_TABLE_BYTES 144

/* One segment's value at y (|y - start| < 2^37, so the product < 2^52). */
static inline int32_t npucc_pwl_segment(int32_t y, int64_t start, int32_t mul, uint32_t shift,
                                        int32_t add) {
  int64_t p = ((int64_t)y - start) * (int64_t)mul;
  int64_t mag = p < 0 ? -p : p, q;
  if (shift == 0) {
    q = mag;
  } else if (shift >= 62) {
    q = 0; /* mag < 2^52: below one half */
  } else {
    int64_t rem = mag & ((((int64_t)1) << shift) - 1), half = (int64_t)1 << (shift - 1);
    q = mag >> shift;
    if (rem > half || (rem == half && (q & 1)))
      ++q;
  }
  q = (p < 0 ? -q : q) + add;
  return q < -128 ? -128 : q > 127 ? 127 : (int32_t)q;
}

/* Segment i's fields from the table. */
static inline void npucc_pwl_record(const uint8_t *t, int i, int64_t *start, int32_t *mul,
                                    uint32_t *shift, int32_t *add) {
  uint64_t r = 0, s;
  int b;
  for (b = 7; b >= 0; --b)
    r = (r << 8) | t[i * 8 + b];
  s = (r >> 24) & ((((uint64_t)1) << 36) - 1);
  *start = (s >> 35) ? (int64_t)s - ((int64_t)1 << 36) : (int64_t)s;
  *mul = (int32_t)(int16_t)(uint16_t)((r >> 8) & 0xFFFFu);
  *shift = (uint32_t)(r & 0xFFu);
  *add = (int32_t)(int8_t)t[NPUCC_PWL_SEGMENTS * 8 + i];
}

static inline int32_t npucc_stage_act_pwl(int32_t y, const uint8_t *t) {
  int64_t start, s;
  int32_t mul, add, m, a;
  uint32_t shift, h;
  int i;
  npucc_pwl_record(t, 0, &start, &mul, &shift, &add);
  for (i = 1; i < NPUCC_PWL_SEGMENTS; ++i) {
    npucc_pwl_record(t, i, &s, &m, &h, &a);
    if (s <= (int64_t)y) {
      start = s, mul = m, shift = h, add = a;
    }
  }
  return npucc_pwl_segment(y, start, mul, shift, add);
}

/* ---- pool: max ----
 * The largest of a k x k window of activated values (the output type,
 * int8), per channel: element (i, j) of the window is base[i * row + j *
 * col] (row, col: the pitches in elements). The window moves by k and
 * there is no padding, so an h x w activation pools to floor(h / k) x
 * floor(w / k). It is the graph's MaxPool of the activated values, so the
 * stage is exact. k >= 1 (1: the value itself). */
static inline int32_t npucc_stage_pool_max(const int8_t *base, long row, long col, int k) {
  int32_t m = base[0];
  int i, j;
  for (i = 0; i < k; ++i)
    for (j = 0; j < k; ++j)
      if (base[i * row + j * col] > m)
        m = base[i * row + j * col];
  return m;
}

/* ---- pool: select ----
 * The pixel (off_y, off_x) of a k x k window of activated values, per
 * channel: element (i, j) of the window is base[i * row + j * col] (row,
 * col: the pitches in elements). The window moves by k and there is no
 * padding, so an h x w activation selects to floor(h / k) x floor(w / k).
 * A stride-1 convolution followed by it is the stride-k convolution (the
 * compiler picks the offset from the padding), so the stage is exact.
 * 0 <= off_y, off_x < k. */
static inline int32_t npucc_stage_pool_select(const int8_t *base, long row, long col, int off_y,
                                              int off_x) {
  return base[off_y * row + off_x * col];
}

/* ---- output: int8 ----
 * The stored byte of an activated value (saturated to int8). */
static inline uint8_t npucc_stage_out_int8(int32_t v) {
  return (uint8_t)(int8_t)npucc_clamp_i32(v, -128, 127);
}

/* ---- output: uint8 ----
 * The stored byte of an activated value on a uint8 NPU: the value
 * (saturated to int8; requant and activation keep their int8 ranges, out_zp
 * the int8 zero point) plus 128, so the stored tensor has zero point
 * out_zp + 128 and equals the int8 tensor with its sign bit flipped. */
static inline uint8_t npucc_stage_out_uint8(int32_t v) {
  return (uint8_t)(npucc_clamp_i32(v, -128, 127) + 128);
}

#endif /* NPUCC_STAGES_H */
