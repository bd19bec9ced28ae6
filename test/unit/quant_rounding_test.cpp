//===- quant_rounding_test.cpp - fp32-emulating requantization vs real floats ===//
//
// npucc_mul_qmult_fp32 (runtime/include/npucc_requant.h) claims to compute,
// with integers only, exactly what ONNX Runtime's float32 requantization
// computes: rintf((float)acc * m) for a float32 multiplier m. These tests
// compare it with that very float32 expression evaluated by the host FPU
// (IEEE single precision, round to nearest even), on random accumulators and
// multipliers, on values constructed to sit next to ties, and at the edges
// (|acc| >= 2^24 where the int -> float conversion rounds, saturation, shifts
// of both signs). They also check quant::productMultiplier: the Fp32 multiplier
// is fl(fl(sx * sw) / sy) and is held exactly by the Q31 (mult, shift) pair.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "npucc/quant/Multiplier.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

extern "C" {
#include "../../runtime/include/npucc_requant.h"
}

namespace {

using npucc::quant::applyMultiplier;
using npucc::quant::multiplierValue;
using npucc::quant::productMultiplier;
using npucc::quant::quantizeMultiplier;
using npucc::quant::QuantMultiplier;
using npucc::quant::Rounding;

/// The float32 computation the emulation must reproduce, saturated to int32.
int32_t floatRef(int32_t acc, float m) {
  volatile float a = static_cast<float>(acc);
  volatile float p = a * m;
  float r = std::nearbyint(p); // default rounding mode: to nearest, ties to even
  if (r >= 2147483648.0f)
    return INT32_MAX;
  if (r < -2147483648.0f)
    return INT32_MIN;
  return static_cast<int32_t>(r);
}

int32_t emulated(int32_t acc, float m) {
  QuantMultiplier q = quantizeMultiplier(double(m));
  return npucc_mul_qmult_fp32(acc, q.mult, q.shift);
}

TEST(RequantFp32, Float32MultipliersAreExactInQ31) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> e(-30.0f, 4.0f);
  for (int i = 0; i < 10000; ++i) {
    float m = std::exp2(e(rng));
    QuantMultiplier q = quantizeMultiplier(double(m));
    ASSERT_EQ(q.mult & 0x7f, 0) << m; // a 24-bit significand in a 31-bit mult
    ASSERT_EQ(multiplierValue(q), double(m)) << m;
  }
}

TEST(RequantFp32, MatchesFloat32OnRandomValues) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<int32_t> small(-(1 << 20), 1 << 20);
  std::uniform_real_distribution<float> e(-24.0f, 3.0f);
  for (int i = 0; i < 200000; ++i) {
    float m = std::exp2(e(rng));
    int32_t acc = (i & 1) ? any(rng) : small(rng);
    ASSERT_EQ(emulated(acc, m), floatRef(acc, m)) << "acc " << acc << " m " << m;
  }
}

TEST(RequantFp32, MatchesFloat32NextToTies) {
  // acc * m within a few float32 ulps of k + 0.5: where the float32 product rounds
  // onto (or across) the tie and exact arithmetic does not.
  std::mt19937 rng(3);
  std::uniform_int_distribution<int32_t> kd(-100, 100);
  std::uniform_int_distribution<int32_t> accd(1000, 5000000);
  int differsFromExact = 0;
  for (int i = 0; i < 100000; ++i) {
    int32_t acc = accd(rng) * ((i & 1) ? -1 : 1);
    float target = static_cast<float>(kd(rng)) + 0.5f;
    float m = target / static_cast<float>(acc);
    for (int ulp = -3; ulp <= 3; ++ulp) {
      float mm = m;
      for (int u = 0; u < std::abs(ulp); ++u)
        mm = std::nextafter(mm, ulp > 0 ? 1.0f : 0.0f);
      if (!(mm > 0.0f))
        continue;
      QuantMultiplier q = quantizeMultiplier(double(mm));
      int32_t want = floatRef(acc, mm);
      ASSERT_EQ(npucc_mul_qmult_fp32(acc, q.mult, q.shift), want) << "acc " << acc << " m " << mm;
      differsFromExact += npucc_mul_qmult_rne(acc, q.mult, q.shift) != want;
    }
  }
  // The two modes are different functions: near ties they disagree.
  EXPECT_GT(differsFromExact, 100);
}

TEST(RequantFp32, DocumentedExample) {
  // docs/quantization.md: an exact product just below 35.5 that the float32 multiply
  // rounds onto 35.5, which then rounds to 36 (ties to even); one exact rounding
  // gives 35. Search an accumulator/multiplier pair with that property.
  bool found = false;
  for (int32_t acc = 18000; acc < 19000 && !found; ++acc) {
    float m = 35.5f / static_cast<float>(acc);
    for (int i = 0; i < 4 && !found; ++i, m = std::nextafter(m, 0.0f)) {
      volatile float prod = static_cast<float>(acc) * m;
      if (!(double(acc) * double(m) < 35.5 && prod == 35.5f))
        continue;
      found = true;
      QuantMultiplier q = quantizeMultiplier(double(m));
      EXPECT_EQ(npucc_mul_qmult_fp32(acc, q.mult, q.shift), 36) << acc << " * " << m;
      EXPECT_EQ(npucc_mul_qmult_rne(acc, q.mult, q.shift), 35) << acc << " * " << m;
    }
  }
  EXPECT_TRUE(found);
}

TEST(RequantFp32, Edges) {
  // Accumulators beyond 2^24 are rounded to float32 first (2^24 + 1 -> 2^24).
  EXPECT_EQ(emulated((1 << 24) + 1, 1.0f), 1 << 24);
  EXPECT_EQ(emulated((1 << 24) + 3, 1.0f), (1 << 24) + 4);
  EXPECT_EQ(emulated(-((1 << 24) + 1), 1.0f), -(1 << 24));
  for (int32_t acc : {INT32_MAX, INT32_MIN, INT32_MIN + 1, 0, 1, -1})
    for (float m : {1.0f, 0.5f, 2.0f, 3.0f, 1e-9f, 0.999999f, 1.000001f})
      EXPECT_EQ(emulated(acc, m), floatRef(acc, m)) << acc << " * " << m;
  // Halves round to even in both directions.
  EXPECT_EQ(emulated(5, 0.5f), 2);
  EXPECT_EQ(emulated(7, 0.5f), 4);
  EXPECT_EQ(emulated(-5, 0.5f), -2);
  EXPECT_EQ(emulated(-7, 0.5f), -4);
  // A zero multiplier.
  EXPECT_EQ(npucc_mul_qmult_fp32(12345, 0, 0), 0);
}

TEST(RequantFp32, RequantI8AppliesZeroPointAndClamp) {
  QuantMultiplier q = quantizeMultiplier(0.5);
  EXPECT_EQ(npucc_requant_i8_r(5, q.mult, q.shift, 10, -128, 127, NPUCC_RQ_FP32), 12);
  EXPECT_EQ(npucc_requant_i8_r(5, q.mult, q.shift, 10, -128, 127, NPUCC_RQ_EXACT), 12);
  EXPECT_EQ(npucc_requant_i8_r(1000, q.mult, q.shift, 0, -128, 127, NPUCC_RQ_FP32), 127);
  EXPECT_EQ(npucc_requant_i8_r(-1000, q.mult, q.shift, 0, -128, 127, NPUCC_RQ_FP32), -128);
  EXPECT_EQ(npucc_requant_i8_r(40, q.mult, q.shift, 0, 0, 10, NPUCC_RQ_FP32), 10);
  EXPECT_EQ(npucc_requant_i8_r(-40, q.mult, q.shift, 0, 0, 127, NPUCC_RQ_FP32), 0);
}

TEST(ProductMultiplier, ExactAndFp32) {
  float sx = 0.0235294122f, sw = 0.00319148926f, sy = 0.0470588244f;
  QuantMultiplier ex = productMultiplier(sx, sw, sy, Rounding::Exact);
  EXPECT_EQ(ex.mult, quantizeMultiplier(double(sx) * double(sw) / double(sy)).mult);
  QuantMultiplier f = productMultiplier(sx, sw, sy, Rounding::Fp32);
  volatile float p = sx * sw;
  volatile float m = p / sy;
  EXPECT_EQ(multiplierValue(f), double(m));
  EXPECT_EQ(f.mult & 0x7f, 0);
  // applyMultiplier dispatches on the rounding.
  for (int32_t acc : {-100000, -3, 0, 7, 123456})
    EXPECT_EQ(applyMultiplier(acc, f, Rounding::Fp32), floatRef(acc, m));
  EXPECT_EQ(npucc::quant::parseRounding("fp32"), Rounding::Fp32);
  EXPECT_EQ(npucc::quant::parseRounding("exact"), Rounding::Exact);
  EXPECT_FALSE(npucc::quant::parseRounding("float").has_value());
  EXPECT_STREQ(npucc::quant::roundingName(Rounding::Fp32), "fp32");
  EXPECT_EQ(npucc::quant::roundingCode(Rounding::Fp32), NPUCC_RQ_FP32);
}

} // namespace
