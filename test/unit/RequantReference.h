//===- RequantReference.h - Exact reference for npucc_requant.h's rounding -===//
//
// A straightforward model of the rounding rules documented in
// runtime/include/npucc_requant.h, written from that text with 128-bit
// integers (floor division plus an explicit tie rule) and sharing no code with
// the header. Used by requant_reference_test.cpp and the kernel edge tests so
// that an error in the shared arithmetic does not cancel out.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <limits>

namespace npucc::testref {

__extension__ typedef __int128 I128;

enum class Tie { Even, Up, Away }; // to even, toward +infinity, away from zero

inline I128 pow2(int e) { return static_cast<I128>(1) << e; }

/// num / 2^e rounded to nearest (e >= 0), ties broken by `tie`.
inline I128 roundDiv2(I128 num, int e, Tie tie) {
  if (e == 0)
    return num;
  I128 d = pow2(e);
  I128 q = num / d, r = num % d; // C++ truncates: make it a floor division
  if (r < 0) {
    q -= 1;
    r += d;
  }
  if (2 * r < d)
    return q;
  if (2 * r > d)
    return q + 1;
  switch (tie) { // exactly q + 1/2
  case Tie::Even:
    return (q % 2 == 0) ? q : q + 1;
  case Tie::Up:
    return q + 1;
  case Tie::Away:
    return q >= 0 ? q + 1 : q;
  }
  return q;
}

inline int32_t sat32(I128 v) {
  if (v > std::numeric_limits<int32_t>::max())
    return std::numeric_limits<int32_t>::max();
  if (v < std::numeric_limits<int32_t>::min())
    return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

/// Step 1 of the header: a negative right shift is a saturating left shift.
inline int32_t leftShifted(int32_t x, int32_t rightShift) {
  if (rightShift >= 0)
    return x;
  int left = -rightShift > 31 ? 31 : -rightShift;
  return sat32(static_cast<I128>(x) * pow2(left));
}

/// SRDHM: a * b / 2^31, ties toward +infinity, saturated (only MIN*MIN overflows).
inline int32_t srdhm(int32_t a, int32_t b) {
  return sat32(roundDiv2(static_cast<I128>(a) * b, 31, Tie::Up));
}

/// RDBPOT: x / 2^e, ties away from zero; e <= 0 leaves x.
inline int32_t rdbpot(int32_t x, int e) {
  if (e <= 0)
    return x;
  return sat32(roundDiv2(x, e > 31 ? 31 : e, Tie::Away));
}

/// npucc_mul_qmult: left shift, then SRDHM, then RDBPOT (two roundings).
inline int32_t mulQmult(int32_t x, int32_t mult, int32_t rightShift) {
  x = leftShifted(x, rightShift);
  return rdbpot(srdhm(x, mult), rightShift < 0 ? 0 : rightShift);
}

/// npucc_mul_qmult_rne: ONE rounding of x * mult / 2^(31 + rs), ties to even.
inline int32_t mulQmultRne(int32_t x, int32_t mult, int32_t rightShift) {
  x = leftShifted(x, rightShift);
  int rs = rightShift < 0 ? 0 : (rightShift > 31 ? 31 : rightShift);
  return sat32(roundDiv2(static_cast<I128>(x) * mult, 31 + rs, Tie::Even));
}

inline int32_t clampOut(int32_t v, int32_t actMin, int32_t actMax) {
  int32_t lo = actMin < -128 ? -128 : actMin, hi = actMax > 127 ? 127 : actMax;
  return v < lo ? lo : (v > hi ? hi : v);
}

/// npucc_requant_i8: rne, + out_zp (saturating), clamp to [max(min,-128), min(max,127)].
inline int8_t requantI8(int32_t acc, int32_t mult, int32_t rs, int32_t zp, int32_t actMin,
                        int32_t actMax) {
  return static_cast<int8_t>(
      clampOut(sat32(static_cast<I128>(mulQmultRne(acc, mult, rs)) + zp), actMin, actMax));
}

/// |v| rounded to 24 significant bits, ties to even, by the host's IEEE
/// uint64 -> float conversion (round to nearest even).
inline uint64_t roundSig24(uint64_t v) {
  return static_cast<uint64_t>(static_cast<float>(v));
}

/// npucc_mul_qmult_fp32: rint(fl(fl(x) * M)) for M = mult * 2^-(31 + rs).
inline int32_t mulQmultFp32(int32_t x, int32_t mult, int32_t rightShift) {
  int rs = rightShift > 31 ? 31 : (rightShift < -31 ? -31 : rightShift);
  I128 a = x < 0 ? -static_cast<I128>(x) : static_cast<I128>(x);
  uint64_t m = mult < 0 ? 0 : static_cast<uint64_t>(mult);
  uint64_t p = roundSig24(roundSig24(static_cast<uint64_t>(a)) * m);
  I128 q = roundDiv2(static_cast<I128>(p), 31 + rs, Tie::Even);
  if (q > std::numeric_limits<int32_t>::max())
    return x < 0 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(x < 0 ? -q : q);
}

/// Integer division rounded to nearest, ties away from zero; 0 for den <= 0.
inline int32_t divRound(int32_t num, int32_t den) {
  if (den <= 0)
    return 0;
  I128 n = static_cast<I128>(num) * 2, d = static_cast<I128>(den) * 2;
  // num/den = n/d; round by comparing the remainder of a floor division.
  I128 q = n / d, r = n % d;
  if (r < 0) {
    q -= 1;
    r += d;
  }
  if (2 * r > d || (2 * r == d && q >= 0))
    q += 1;
  return static_cast<int32_t>(q);
}

/// num / den (den > 0) rounded by an NPU's average pooling mode (pool.avg_rounding, in
/// NPUCC_AVG_* order): 0 to nearest with ties away from zero, 1 ties to even, 2 toward zero,
/// 3 toward minus infinity. From a floor division and its remainder.
inline int32_t averageOf(int32_t num, int32_t den, unsigned mode) {
  int64_t fl = num >= 0 ? num / den : -((-int64_t(num) + den - 1) / den);
  int64_t rem2 = 2 * (int64_t(num) - fl * den); // twice the remainder, in [0, 2 den)
  switch (mode) {
  case 2:
    return int32_t(num < 0 && rem2 ? fl + 1 : fl);
  case 3:
    return int32_t(fl);
  default:
    if (rem2 < den)
      return int32_t(fl);
    if (rem2 > den)
      return int32_t(fl + 1);
    if (mode == 1)
      return int32_t(fl % 2 == 0 ? fl : fl + 1);
    return int32_t(num >= 0 ? fl + 1 : fl);
  }
}

} // namespace npucc::testref
