//===- quant_multiplier_test.cpp - quant::quantizeMultiplier and friends ---===//
//
// Edges of the Q31 decomposition (M near 1, tiny M, exact powers of two,
// M >= 1 giving a left shift), the 2^-31 relative accuracy on random M, and
// the clamp-bound, lookup-table, softmax-table and Add-parameter helpers.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "npucc/quant/Multiplier.h"
#include "npucc_requant.h"

#include <cmath>
#include <random>

using namespace npucc::quant;

namespace {

void expectNormalized(QuantMultiplier q) {
  EXPECT_GE(q.mult, int32_t(1) << 30);
  EXPECT_LT(int64_t(q.mult), int64_t(1) << 31);
}

double relErr(QuantMultiplier q, double m) { return std::fabs(multiplierValue(q) - m) / m; }

TEST(QuantMultiplier, PowersOfTwoAreExact) {
  for (int e = -40; e <= 30; ++e) {
    double m = std::ldexp(1.0, e);
    QuantMultiplier q = quantizeMultiplier(m);
    if (e < -32)
      continue; // beyond shift 31; covered by TinyMultipliers
    EXPECT_EQ(q.mult, int32_t(1) << 30) << "e=" << e;
    EXPECT_EQ(q.shift, -e - 1) << "e=" << e;
    EXPECT_EQ(multiplierValue(q), m);
  }
  QuantMultiplier one = quantizeMultiplier(1.0);
  EXPECT_EQ(one.mult, 1 << 30);
  EXPECT_EQ(one.shift, -1); // M >= 1: negative (left) shift
  EXPECT_EQ(quantizeMultiplier(0.5).shift, 0);
}

TEST(QuantMultiplier, NearOneRoundsUpIntoNextBinade) {
  // frac rounds to 1.0 -> mult = 2^30 and the exponent grows by one.
  double m = 1.0 - std::ldexp(1.0, -33);
  QuantMultiplier q = quantizeMultiplier(m);
  EXPECT_EQ(q.mult, 1 << 30);
  EXPECT_EQ(q.shift, -1);
  EXPECT_LE(relErr(q, m), std::ldexp(1.0, -31));
  double below = 1.0 - std::ldexp(1.0, -20);
  QuantMultiplier qb = quantizeMultiplier(below);
  expectNormalized(qb);
  EXPECT_EQ(qb.shift, 0);
  EXPECT_LE(relErr(qb, below), std::ldexp(1.0, -31));
  double above = 1.0 + std::ldexp(1.0, -20);
  QuantMultiplier qa = quantizeMultiplier(above);
  expectNormalized(qa);
  EXPECT_EQ(qa.shift, -1);
}

TEST(QuantMultiplier, LargeMultipliersShiftLeft) {
  QuantMultiplier q = quantizeMultiplier(3.0);
  EXPECT_EQ(q.shift, -2);
  EXPECT_EQ(q.mult, 3 << 29);
  EXPECT_EQ(npucc_mul_qmult(100, q.mult, q.shift), 300);
  QuantMultiplier big = quantizeMultiplier(1e12); // >= 2^31: clamped
  EXPECT_EQ(big.shift, -31);
  EXPECT_EQ(big.mult, INT32_MAX);
}

TEST(QuantMultiplier, TinyMultipliers) {
  double m = std::ldexp(1.0, -32) * 1.5; // exponent -31 -> shift 31, still normalized
  QuantMultiplier q = quantizeMultiplier(m);
  EXPECT_EQ(q.shift, 31);
  expectNormalized(q);
  double tiny = std::ldexp(1.0, -40) * 1.25; // shift would be 39: folded into mult
  QuantMultiplier t = quantizeMultiplier(tiny);
  EXPECT_EQ(t.shift, 31);
  EXPECT_EQ(t.mult, (5 << 28) >> 8);
  EXPECT_NEAR(multiplierValue(t), tiny, tiny * 1e-6);
  QuantMultiplier z = quantizeMultiplier(1e-300);
  EXPECT_EQ(z.mult, 0);
  EXPECT_EQ(npucc_mul_qmult(INT32_MAX, z.mult, z.shift), 0);
  EXPECT_EQ(quantizeMultiplier(0.0).mult, 0);
  EXPECT_EQ(quantizeMultiplier(-1.0).mult, 0);
  EXPECT_EQ(quantizeMultiplier(std::nan("")).mult, 0);
}

TEST(QuantMultiplier, RandomWithinQ31Precision) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> ex(-30.0, 20.0);
  for (int i = 0; i < 20000; ++i) {
    double m = std::pow(2.0, ex(rng));
    QuantMultiplier q = quantizeMultiplier(m);
    expectNormalized(q);
    ASSERT_LE(relErr(q, m), std::ldexp(1.0, -31)) << "M=" << m;
    // Requantizing stays within one unit of the real product (two roundings).
    int32_t acc = int32_t(rng() % 20001) - 10000;
    double want = acc * m;
    if (std::fabs(want) < 1e9) {
      int32_t got = npucc_mul_qmult(acc, q.mult, q.shift);
      ASSERT_LT(std::fabs(got - want), 1.0 + std::fabs(want) * 1e-8)
          << "acc=" << acc << " M=" << m;
    }
  }
}

TEST(QuantHelpers, ActivationBounds) {
  ClampBounds relu = activationBounds(0.0, INFINITY, 0.05, -10);
  EXPECT_EQ(relu.lo, -10);
  EXPECT_EQ(relu.hi, 127);
  ClampBounds relu6 = activationBounds(0.0, 6.0, 0.05, -128);
  EXPECT_EQ(relu6.lo, -128);
  EXPECT_EQ(relu6.hi, -8); // -128 + 120
  ClampBounds half = activationBounds(-0.025, 0.125, 0.05, 0); // -0.5 -> -1, 2.5 -> 3
  EXPECT_EQ(half.lo, -1);
  EXPECT_EQ(half.hi, 3);
  ClampBounds wide = activationBounds(-1e30, 1e30, 1e-3, 5);
  EXPECT_EQ(wide.lo, -128);
  EXPECT_EQ(wide.hi, 127);
}

TEST(QuantHelpers, LookupTables) {
  LutTable t = buildLut(LutFunction::Sigmoid, 0.1, 0, 1.0 / 256, -128);
  EXPECT_EQ(t[128], 0);    // sigmoid(0) = 0.5 -> 128 - 128
  EXPECT_EQ(t[255], 127);  // sigmoid(12.7) ~ 1 saturates
  EXPECT_EQ(t[0], -128);   // sigmoid(-12.8) ~ 0
  for (int i = 1; i < 256; ++i)
    EXPECT_GE(t[size_t(i)], t[size_t(i - 1)]);
  LutTable lr = buildLut(LutFunction::LeakyRelu, 0.5, 10, 0.5, 10, 0.25);
  EXPECT_EQ(lr[size_t(14 + 128)], 14); // positive side: identity
  EXPECT_EQ(lr[size_t(2 + 128)], 8);   // (2-10)*0.5*0.25 = -1 -> -2 + 10
  LutTable hs = buildLut(LutFunction::HardSwish, 0.1, 0, 0.1, 0);
  EXPECT_EQ(hs[size_t(-50 + 128)], 0); // x = -5 -> 0
  EXPECT_EQ(hs[size_t(50 + 128)], 50); // x = 5 -> 5
  EXPECT_EQ(hs[size_t(10 + 128)], 7);  // x = 1 -> 4/6 = 0.667 -> 6.67 -> 7
  LutTable th = buildLut(LutFunction::Tanh, 0.05, 0, 1.0 / 128, 0);
  EXPECT_EQ(th[128], 0);
  EXPECT_EQ(th[255], 127);
}

TEST(QuantHelpers, SoftmaxTablesAndAddParams) {
  auto e = softmaxExpTable(0.1);
  EXPECT_EQ(e[0], 65536);
  EXPECT_EQ(e[10], int32_t(std::lround(65536.0 * std::exp(-1.0))));
  for (int d = 1; d < 256; ++d)
    EXPECT_LE(e[size_t(d)], e[size_t(d - 1)]);
  EXPECT_EQ(softmaxInvScaleQ16(1.0 / 256), 1 << 24);
  EXPECT_EQ(softmaxInvScaleQ16(std::ldexp(1.0, -16)), 0); // does not fit int32
  EXPECT_EQ(softmaxInvScaleQ16(0.0), 0);
  AddParams p = addParams(0.02, 0.01, 0.05);
  EXPECT_EQ(p.leftShift, 20);
  EXPECT_NEAR(multiplierValue(p.a), 0.5, 1e-9);
  EXPECT_NEAR(multiplierValue(p.b), 0.25, 1e-9);
  EXPECT_NEAR(multiplierValue(p.out), 0.04 / (1048576.0 * 0.05), 1e-15);
}

} // namespace
