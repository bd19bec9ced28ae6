//===- sim_requant_test.cpp - Edge cases of npucc_requant.h ---------------===//
//
// The int8 requantization arithmetic shared by the CPU kernels and the NPU
// simulator: saturation, negative values, exact halves, shifts 0 and 31,
// multipliers near 2^31 and extreme zero points, plus a randomized comparison
// with an independent 128-bit integer model of the documented rounding.
//
//===----------------------------------------------------------------------===//
#include "npucc_requant.h"

#include <gtest/gtest.h>

#include <climits>
#include <random>

namespace {

TEST(Requant, SrdhmTiesRoundTowardPlusInfinity) {
  const int32_t half = 1 << 30;         // multiplying by 2^30 halves (x * 2^30 / 2^31)
  EXPECT_EQ(npucc_srdhm(3, half), 2);   // 1.5 -> 2
  EXPECT_EQ(npucc_srdhm(-3, half), -1); // -1.5 -> -1
  EXPECT_EQ(npucc_srdhm(-5, half), -2); // -2.5 -> -2
  EXPECT_EQ(npucc_srdhm(1, half), 1);   // 0.5 -> 1
  EXPECT_EQ(npucc_srdhm(-1, half), 0);  // -0.5 -> 0
  EXPECT_EQ(npucc_srdhm(4, half), 2);
  EXPECT_EQ(npucc_srdhm(-4, half), -2);
}

TEST(Requant, SrdhmSaturationAndExtremes) {
  EXPECT_EQ(npucc_srdhm(INT32_MIN, INT32_MIN), INT32_MAX); // the only overflow
  EXPECT_EQ(npucc_srdhm(INT32_MIN, INT32_MAX), -INT32_MAX);
  EXPECT_EQ(npucc_srdhm(INT32_MAX, INT32_MAX), INT32_MAX - 1);
  // A multiplier near 2^31 is almost the identity.
  EXPECT_EQ(npucc_srdhm(1000, INT32_MAX), 1000);
  EXPECT_EQ(npucc_srdhm(-1000, INT32_MAX), -1000);
  EXPECT_EQ(npucc_srdhm(0, INT32_MAX), 0);
}

TEST(Requant, RdbpotTiesAwayFromZero) {
  EXPECT_EQ(npucc_rdbpot(5, 1), 3);   // 2.5 -> 3
  EXPECT_EQ(npucc_rdbpot(-5, 1), -3); // -2.5 -> -3
  EXPECT_EQ(npucc_rdbpot(3, 1), 2);   // 1.5 -> 2
  EXPECT_EQ(npucc_rdbpot(-3, 1), -2);
  EXPECT_EQ(npucc_rdbpot(6, 2), 2); // 1.5 -> 2
  EXPECT_EQ(npucc_rdbpot(-6, 2), -2);
  EXPECT_EQ(npucc_rdbpot(5, 2), 1); // 1.25 -> 1
  EXPECT_EQ(npucc_rdbpot(-5, 2), -1);
  EXPECT_EQ(npucc_rdbpot(7, 2), 2); // 1.75 -> 2
  EXPECT_EQ(npucc_rdbpot(-7, 2), -2);
}

TEST(Requant, RdbpotShiftZeroAndThirtyOne) {
  EXPECT_EQ(npucc_rdbpot(12345, 0), 12345);
  EXPECT_EQ(npucc_rdbpot(-12345, 0), -12345);
  EXPECT_EQ(npucc_rdbpot(INT32_MIN, 0), INT32_MIN);
  EXPECT_EQ(npucc_rdbpot(INT32_MAX, 31), 1);     // 0.99999 -> 1
  EXPECT_EQ(npucc_rdbpot(INT32_MIN, 31), -1);    // exactly -1
  EXPECT_EQ(npucc_rdbpot(1 << 30, 31), 1);       // exactly 0.5 -> 1
  EXPECT_EQ(npucc_rdbpot(-(1 << 30), 31), -1);   // exactly -0.5 -> -1
  EXPECT_EQ(npucc_rdbpot((1 << 30) - 1, 31), 0); // just below 0.5
  EXPECT_EQ(npucc_rdbpot(-(1 << 30) + 1, 31), 0);
}

TEST(Requant, NegativeShiftIsASaturatingLeftShift) {
  // right_shift -3: x * 8, then the Q31 multiply by ~1.
  EXPECT_EQ(npucc_mul_qmult(100, INT32_MAX, -3), 800);
  EXPECT_EQ(npucc_mul_qmult(1 << 29, INT32_MAX, -4), INT32_MAX - 1);
  EXPECT_EQ(npucc_mul_qmult(-(1 << 29), INT32_MAX, -4), -INT32_MAX);
}

TEST(Requant, SaturatesToInt8AndClamps) {
  const int32_t m = 1 << 30; // 0.5
  EXPECT_EQ(npucc_requant_i8(1000000, m, 0, 0, -128, 127), 127);
  EXPECT_EQ(npucc_requant_i8(-1000000, m, 0, 0, -128, 127), -128);
  EXPECT_EQ(npucc_requant_i8(INT32_MAX, INT32_MAX, 0, 127, -128, 127), 127);
  EXPECT_EQ(npucc_requant_i8(INT32_MIN, INT32_MAX, 0, -128, -128, 127), -128);
  EXPECT_EQ(npucc_requant_i8(40, m, 0, 0, -128, 127), 20);
  EXPECT_EQ(npucc_requant_i8(40, m, 0, 0, 0, 10), 10);     // fused clamp (ReLU6-like)
  EXPECT_EQ(npucc_requant_i8(-40, m, 0, 0, 0, 127), 0);    // fused ReLU
  EXPECT_EQ(npucc_requant_i8(40, m, 0, 0, -500, 500), 20); // clamp wider than int8
  EXPECT_EQ(npucc_requant_i8(1000, m, 0, 0, -500, 500), 127);
}

TEST(Requant, ExtremeZeroPoints) {
  const int32_t m = 1 << 30;
  EXPECT_EQ(npucc_requant_i8(0, m, 0, 127, -128, 127), 127);
  EXPECT_EQ(npucc_requant_i8(0, m, 0, -128, -128, 127), -128);
  EXPECT_EQ(npucc_requant_i8(-2, m, 0, 127, -128, 127), 126);
  EXPECT_EQ(npucc_requant_i8(2, m, 0, -128, -128, 127), -127);
  // A zero point that would overflow int32 when added saturates instead.
  EXPECT_EQ(npucc_requant_i8(INT32_MAX, INT32_MAX, 0, INT32_MAX, -128, 127), 127);
  EXPECT_EQ(npucc_requant_i8(INT32_MIN, INT32_MAX, 0, INT32_MIN, -128, 127), -128);
}

TEST(Requant, HalvesThroughTheWholePipeline) {
  // acc * 0.5 / 2 = acc / 4 with both rounding steps visible:
  // acc = 6: SRDHM(6, 2^30) = 3, RDBPOT(3, 1) = 2 (1.5 -> 2).
  EXPECT_EQ(npucc_requant_i8(6, 1 << 30, 1, 0, -128, 127), 2);
  // acc = -6: SRDHM = -3, RDBPOT(-3, 1) = -2 (-1.5 -> -2).
  EXPECT_EQ(npucc_requant_i8(-6, 1 << 30, 1, 0, -128, 127), -2);
  // acc = -5: SRDHM(-5, 2^30) = -2 (-2.5 -> -2), RDBPOT(-2, 1) = -1.
  EXPECT_EQ(npucc_requant_i8(-5, 1 << 30, 1, 0, -128, 127), -1);
}

__extension__ typedef __int128 I128;

/// Independent model of the documented rounding with 128-bit integers.
int32_t model(int32_t acc, int32_t mult, int shift) {
  I128 p = (I128)acc * mult;
  // round half up of p / 2^31 == floor((p + 2^30) / 2^31)
  I128 q = p + ((I128)1 << 30);
  I128 y = q >= 0 ? q >> 31 : -((-q + ((I128)1 << 31) - 1) >> 31);
  if (y > INT32_MAX)
    y = INT32_MAX;
  if (shift == 0)
    return int32_t(y);
  I128 d = (I128)1 << shift;
  I128 a = y < 0 ? -y : y;
  I128 r = (a + d / 2) / d; // half away from zero
  return int32_t(y < 0 ? -r : r);
}

TEST(Requant, MatchesIndependentModelOnRandomInputs) {
  std::mt19937 g(42);
  std::uniform_int_distribution<int32_t> acc(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<int32_t> smallAcc(-100000, 100000);
  std::uniform_int_distribution<int32_t> mult(1 << 30, INT32_MAX);
  std::uniform_int_distribution<int> shift(0, 31);
  for (int i = 0; i < 200000; ++i) {
    int32_t a = (i & 1) ? acc(g) : smallAcc(g), m = mult(g);
    int s = shift(g);
    ASSERT_EQ(npucc_mul_qmult(a, m, s), model(a, m, s)) << a << " " << m << " " << s;
  }
}

TEST(Requant, AddAndAverageHelpers) {
  // Equal inputs at their zero points give the output zero point.
  EXPECT_EQ(npucc_add_i8(3, -7, 3, -7, 20, 1 << 30, 0, 1 << 30, 0, 1 << 30, 0, 5, -128, 127), 5);
  EXPECT_EQ(npucc_div_round(5, 2), 3);
  EXPECT_EQ(npucc_div_round(-5, 2), -3);
  EXPECT_EQ(npucc_div_round(4, 3), 1);
  EXPECT_EQ(npucc_div_round(-4, 3), -1);
  EXPECT_EQ(npucc_div_round(-1152, 9), -128);
}

} // namespace
