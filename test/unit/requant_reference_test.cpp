//===- requant_reference_test.cpp - npucc_requant.h vs an exact reference -===//
//
// Issue 13 (common mode): the generated C, the simulator and the integer
// interpreter all use runtime/include/npucc_requant.h, so an error there
// cancels out in the end-to-end tiers. Every function of the header is
// compared here with RequantReference.h, a 128-bit model written from the
// header's documentation (floor division plus an explicit tie rule):
// exhaustively over small accumulators, every shift and multipliers at and
// around the ties, and with a fixed-seed random sweep over the whole int32
// range including INT32_MIN/INT32_MAX, shifts -31..31, both rounding modes.
//
//===----------------------------------------------------------------------===//
#include "RequantReference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

extern "C" {
#include "../../runtime/include/npucc_requant.h"
}

namespace {

namespace ref = npucc::testref;
constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

/// Interesting int32 values: extremes, powers of two and their neighbours.
std::vector<int32_t> edgeValues() {
  std::vector<int32_t> v = {0, 1, -1, 2, -2, 3, -3, kMin, kMin + 1, kMax, kMax - 1};
  for (int e = 1; e < 31; ++e)
    for (int32_t d : {-1, 0, 1}) {
      v.push_back((int32_t(1) << e) + d);
      v.push_back(-(int32_t(1) << e) + d);
    }
  return v;
}

/// Q31 multipliers: [2^30, 2^31) as documented, plus the extremes and small ones.
std::vector<int32_t> edgeMults() {
  return {1 << 30, (1 << 30) + 1, (1 << 30) | (1 << 29), kMax, kMax - 1, 1518500250,
          1, 2, 3, 0x40000001, 0x55555555, 1 << 29};
}

std::mt19937 &rng() {
  static std::mt19937 r(20261125);
  return r;
}
int32_t anyI32() { return std::uniform_int_distribution<int32_t>(kMin, kMax)(rng()); }
int32_t inRange(int32_t lo, int32_t hi) {
  return std::uniform_int_distribution<int32_t>(lo, hi)(rng());
}
/// Full range, or small magnitudes (where ties are frequent), or an edge value.
int32_t mixedI32() {
  static const std::vector<int32_t> edges = edgeValues();
  switch (inRange(0, 3)) {
  case 0:
    return anyI32();
  case 1:
    return inRange(-70000, 70000);
  case 2:
    return edges[size_t(inRange(0, int32_t(edges.size()) - 1))];
  default:
    return anyI32() >> inRange(0, 30);
  }
}

TEST(RequantReference, SaturateAndClamp) {
  for (int64_t v : {int64_t(0), int64_t(kMax), int64_t(kMax) + 1, int64_t(kMin), int64_t(kMin) - 1,
                    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()})
    EXPECT_EQ(npucc_sat_i32(v), ref::sat32(v)) << v;
  for (int32_t v = -300; v <= 300; ++v)
    for (int32_t lo : {-128, -5, 0})
      for (int32_t hi : {127, 5, 0})
        if (lo <= hi) {
          EXPECT_EQ(npucc_clamp_i32(v, lo, hi), v < lo ? lo : (v > hi ? hi : v));
        }
}

TEST(RequantReference, SrdhmExhaustiveSmallAndRandomLarge) {
  // a * b / 2^31 for b = 2^k hits every tie pattern: exhaustive a over a small range.
  for (int32_t b : edgeMults())
    for (int32_t a = -5000; a <= 5000; ++a)
      ASSERT_EQ(npucc_srdhm(a, b), ref::srdhm(a, b)) << a << " * " << b;
  for (int k = 0; k < 31; ++k)
    for (int32_t a = -300; a <= 300; ++a) {
      int32_t b = int32_t(1) << k;
      ASSERT_EQ(npucc_srdhm(a * (1 << 20), b), ref::srdhm(a * (1 << 20), b)) << a << " << 20 * 2^" << k;
      ASSERT_EQ(npucc_srdhm(a, -b), ref::srdhm(a, -b)) << a << " * -2^" << k;
    }
  for (int32_t a : edgeValues())
    for (int32_t b : edgeValues())
      ASSERT_EQ(npucc_srdhm(a, b), ref::srdhm(a, b)) << a << " * " << b;
  EXPECT_EQ(npucc_srdhm(kMin, kMin), kMax);
  for (int i = 0; i < 300000; ++i) {
    int32_t a = mixedI32(), b = mixedI32();
    ASSERT_EQ(npucc_srdhm(a, b), ref::srdhm(a, b)) << a << " * " << b;
  }
}

TEST(RequantReference, RdbpotExhaustiveSmallAndRandomLarge) {
  for (int e = 0; e <= 31; ++e)
    for (int32_t x = -5000; x <= 5000; ++x)
      ASSERT_EQ(npucc_rdbpot(x, e), ref::rdbpot(x, e)) << x << " >> " << e;
  for (int e = 0; e <= 31; ++e)
    for (int32_t x : edgeValues())
      ASSERT_EQ(npucc_rdbpot(x, e), ref::rdbpot(x, e)) << x << " >> " << e;
  for (int i = 0; i < 300000; ++i) {
    int32_t x = mixedI32();
    int e = inRange(0, 31);
    ASSERT_EQ(npucc_rdbpot(x, e), ref::rdbpot(x, e)) << x << " >> " << e;
  }
  // Documented: exponent <= 0 leaves x, exponent > 31 acts as 31.
  EXPECT_EQ(npucc_rdbpot(12345, -3), 12345);
  EXPECT_EQ(npucc_rdbpot(kMin, 40), ref::rdbpot(kMin, 31));
}

/// Both single-rounding and two-rounding forms over one (x, mult, shift) triple.
void checkMul(int32_t x, int32_t m, int32_t s) {
  ASSERT_EQ(npucc_mul_qmult(x, m, s), ref::mulQmult(x, m, s))
      << "mul_qmult(" << x << ", " << m << ", " << s << ")";
  ASSERT_EQ(npucc_mul_qmult_rne(x, m, s), ref::mulQmultRne(x, m, s))
      << "mul_qmult_rne(" << x << ", " << m << ", " << s << ")";
}

TEST(RequantReference, MulQmultBothFormsExhaustiveSmall) {
  for (int32_t s = -31; s <= 31; ++s)
    for (int32_t m : edgeMults())
      for (int32_t x = -1100; x <= 1100; ++x)
        checkMul(x, m, s);
}

TEST(RequantReference, MulQmultBothFormsAtEdgesAndRandom) {
  for (int32_t s = -31; s <= 31; ++s)
    for (int32_t m : edgeMults())
      for (int32_t x : edgeValues())
        checkMul(x, m, s);
  for (int i = 0; i < 400000; ++i) {
    int32_t m = inRange(0, 3) ? inRange(1 << 30, kMax) : mixedI32();
    checkMul(mixedI32(), m, inRange(-31, 31));
  }
  // Exactly representable halves: x * 2^30 / 2^(31 + s) = x / 2^(s + 1).
  for (int32_t s = 0; s <= 20; ++s)
    for (int32_t x = -64; x <= 64; ++x)
      checkMul(x * (1 << s), 1 << 30, s);
}

TEST(RequantReference, MulQmultRneTiesGoToEven) {
  // Hand-checked anchors of the reference itself (2.5 -> 2, 3.5 -> 4, -2.5 -> -2).
  EXPECT_EQ(ref::mulQmultRne(5, 1 << 30, 0), 2);
  EXPECT_EQ(ref::mulQmultRne(7, 1 << 30, 0), 4);
  EXPECT_EQ(ref::mulQmultRne(-5, 1 << 30, 0), -2);
  EXPECT_EQ(ref::mulQmult(5, 1 << 30, 0), 3);   // SRDHM: ties toward +infinity
  EXPECT_EQ(ref::mulQmult(-5, 1 << 30, 0), -2);
  EXPECT_EQ(ref::mulQmult(-5, 1 << 30, 1), -1); // -2.5 -> -2 (SRDHM), -1 (RDBPOT, -1 exact)
  EXPECT_EQ(ref::mulQmult(-3, 1 << 30, 1), -1); // -1.5 -> -1, then -0.5 -> -1 (away)
}

TEST(RequantReference, Fp32EmulationVsReference) {
  // mult a float32 value (a multiple of 2^7) as documented; x over all magnitudes.
  for (int32_t s = -31; s <= 31; ++s)
    for (int32_t m : {1 << 30, (1 << 30) + (1 << 7), kMax & ~127, 0x55555580, 1 << 29, 128})
      for (int32_t x : edgeValues())
        ASSERT_EQ(npucc_mul_qmult_fp32(x, m, s), ref::mulQmultFp32(x, m, s))
            << x << " " << m << " " << s;
  for (int32_t x = -3000; x <= 3000; ++x)
    for (int32_t s : {-2, 0, 3, 9, 17})
      ASSERT_EQ(npucc_mul_qmult_fp32(x, 0x55555580, s), ref::mulQmultFp32(x, 0x55555580, s))
          << x << " " << s;
  for (int i = 0; i < 300000; ++i) {
    int32_t x = mixedI32(), m = inRange(0, kMax) & ~127, s = inRange(-31, 31);
    ASSERT_EQ(npucc_mul_qmult_fp32(x, m, s), ref::mulQmultFp32(x, m, s))
        << x << " " << m << " " << s;
  }
  for (uint64_t v : {uint64_t(0), uint64_t(1), (uint64_t(1) << 24) - 1, (uint64_t(1) << 24) + 1,
                     (uint64_t(1) << 25) + 1, (uint64_t(1) << 25) + 3, (uint64_t(1) << 62) + 12345,
                     (uint64_t(1) << 63) - 1})
    EXPECT_EQ(npucc_round_sig24(v), ref::roundSig24(v)) << v;
  for (int i = 0; i < 100000; ++i) {
    uint64_t v = (uint64_t(uint32_t(anyI32())) << 31 | uint32_t(anyI32())) >> inRange(0, 62);
    ASSERT_EQ(npucc_round_sig24(v), ref::roundSig24(v)) << v;
    int len = 0;
    for (uint64_t t = v; t; t >>= 1)
      ++len;
    ASSERT_EQ(npucc_bitlen_u64(v), len) << v;
  }
}

TEST(RequantReference, RequantI8BothModesZeroPointsAndClamps) {
  for (int32_t rounding : {NPUCC_RQ_EXACT, NPUCC_RQ_FP32})
    for (int i = 0; i < 300000; ++i) {
      int32_t acc = mixedI32(), s = inRange(-8, 31);
      int32_t m = inRange(1 << 30, kMax) & (rounding == NPUCC_RQ_FP32 ? ~127 : ~0);
      int32_t zp = inRange(0, 4) ? inRange(-128, 127) : (inRange(0, 1) ? kMin : kMax);
      int32_t lo = inRange(-200, 10), hi = inRange(-10, 200);
      int32_t r = rounding == NPUCC_RQ_FP32 ? ref::mulQmultFp32(acc, m, s)
                                            : ref::mulQmultRne(acc, m, s);
      int8_t want = int8_t(ref::clampOut(ref::sat32(ref::I128(r) + zp), lo, hi));
      ASSERT_EQ(int(npucc_requant_i8_r(acc, m, s, zp, lo, hi, rounding)), int(want))
          << acc << " " << m << " " << s << " zp " << zp << " [" << lo << "," << hi << "] "
          << rounding;
      if (rounding == NPUCC_RQ_EXACT) {
        ASSERT_EQ(int(npucc_requant_i8(acc, m, s, zp, lo, hi)),
                  int(ref::requantI8(acc, m, s, zp, lo, hi)))
            << acc << " " << m << " " << s << " zp " << zp;
      }
    }
  // Every clamp boundary: results land exactly on act_min/act_max and -128/127.
  for (int32_t v = -140; v <= 140; ++v)
    for (int32_t lo : {-128, -129, -1, 0})
      for (int32_t hi : {127, 128, 0, 1})
        if (lo <= hi) {
          ASSERT_EQ(int(npucc_requant_i8(v, 1 << 30, -1, 0, lo, hi)),
                    int(ref::requantI8(v, 1 << 30, -1, 0, lo, hi)))
              << v << " [" << lo << "," << hi << "]";
        }
}

TEST(RequantReference, AddI8AgainstTheComposition) {
  for (int i = 0; i < 200000; ++i) {
    int8_t a = int8_t(inRange(-128, 127)), b = int8_t(inRange(-128, 127));
    int32_t za = inRange(-128, 127), zb = inRange(-128, 127), zy = inRange(-128, 127);
    int32_t ls = inRange(0, 20);
    int32_t ma = inRange(1 << 30, kMax), mb = inRange(1 << 30, kMax), my = inRange(1 << 30, kMax);
    int32_t sa = inRange(-2, 31), sb = inRange(-2, 31), sy = inRange(-2, 31);
    int32_t lo = inRange(-140, 0), hi = inRange(0, 140);
    int32_t xa = ref::sat32(ref::I128(a - za) * ref::pow2(ls));
    int32_t xb = ref::sat32(ref::I128(b - zb) * ref::pow2(ls));
    int32_t sum = ref::sat32(ref::I128(ref::mulQmult(xa, ma, sa)) + ref::mulQmult(xb, mb, sb));
    int32_t want =
        ref::clampOut(ref::sat32(ref::I128(ref::mulQmult(sum, my, sy)) + zy), lo, hi);
    ASSERT_EQ(int(npucc_add_i8(a, b, za, zb, ls, ma, sa, mb, sb, my, sy, zy, lo, hi)), want)
        << int(a) << " " << int(b) << " ls " << ls;
  }
}

TEST(RequantReference, DivRoundTiesAwayFromZero) {
  for (int32_t den = -2; den <= 50; ++den)
    for (int32_t num = -3000; num <= 3000; ++num)
      ASSERT_EQ(npucc_div_round(num, den), ref::divRound(num, den)) << num << " / " << den;
  // Average-pool sums: up to 255 * 65536 taps in magnitude.
  for (int i = 0; i < 200000; ++i) {
    int32_t den = inRange(1, 65536), num = inRange(-255 * 65536, 255 * 65536);
    ASSERT_EQ(npucc_div_round(num, den), ref::divRound(num, den)) << num << " / " << den;
  }
}

} // namespace
