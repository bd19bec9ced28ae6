//===- pwl_fit_test.cpp - The pwl activation stage's fitted segments ------===//
//
// Issue 19, phase 7d: quant::fitPwl / pwlClamp (lib/qmath/Pwl.cpp). A fused
// clamp is exact for every requantized value, wide ones included; a fused
// Sigmoid, Tanh, HardSwish, LeakyRelu or HardSigmoid is within a bound in
// output steps on every int8 input (16 and 8 segments), and every fit is
// constant outside the clamp's range, so the interpreter (which sees the
// clamped int8 value) and the NPU (which sees the wide value) agree.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/Multiplier.h"
#include "npucc/quant/Pwl.h"

#include "../../runtime/include/npucc_stages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

using namespace npucc;
using quant::PwlSegment;

namespace {

/// Inputs around and far beyond the int8 range.
std::vector<int32_t> wideInputs() {
  std::vector<int32_t> ys;
  for (int32_t y = -600; y <= 600; ++y)
    ys.push_back(y);
  for (int32_t y : {INT32_MIN, -1000000, -70000, 70000, 1000000, INT32_MAX})
    ys.push_back(y);
  return ys;
}

TEST(PwlFit, ClampsAreExactSegments) {
  std::vector<std::pair<int32_t, int32_t>> ranges = {
      {-128, 127}, {-128, -128}, {127, 127}, {-5, 127}, {-128, 40}, {-20, 30}, {0, 0}, {3, 4}};
  std::mt19937 rng(5);
  for (int i = 0; i < 60; ++i) {
    int32_t lo = int32_t(rng() % 256) - 128, hi = std::max(lo, int32_t(rng() % 256) - 128);
    ranges.emplace_back(lo, hi);
  }
  for (auto [lo, hi] : ranges) {
    std::vector<PwlSegment> s = quant::pwlClamp(lo, hi);
    ASSERT_FALSE(s.empty());
    ASSERT_LE(s.size(), 3u) << lo << ".." << hi;
    for (int32_t y : wideInputs())
      ASSERT_EQ(quant::pwlValue(s, y), npucc_stage_act_clamp(y, lo, hi))
          << "clamp " << lo << ".." << hi << " y " << y;
  }
  // none: one identity segment; Relu (a lower bound): two; Relu6: three.
  EXPECT_EQ(quant::pwlClamp(-128, 127).size(), 1u);
  EXPECT_EQ(quant::pwlClamp(-7, 127).size(), 2u);
  EXPECT_EQ(quant::pwlClamp(-7, 90).size(), 3u);
}

/// The bound in output steps every fitted activation below meets on every
/// int8 input (measured: see the printed worst errors).
constexpr int32_t Bound16 = 1, Bound8 = 2;

TEST(PwlFit, FusedActivationsWithinTheBound) {
  using quant::LutFunction;
  struct Case {
    LutFunction fn;
    double sx;
    int32_t zx;
    double sy;
    int32_t zy;
    double alpha, beta;
  };
  std::vector<Case> cases;
  for (double sx : {0.02, 0.1, 0.25}) {
    cases.push_back({LutFunction::Sigmoid, sx, 3, 1.0 / 256, -128, 0, 0});
    cases.push_back({LutFunction::Tanh, sx, -5, 1.0 / 128, 0, 0, 0});
    cases.push_back({LutFunction::HardSwish, sx, 10, sx * 0.8, -20, 0, 0});
    cases.push_back({LutFunction::LeakyRelu, sx, 0, sx, 0, 0.125, 0});
    cases.push_back({LutFunction::LeakyRelu, sx, -30, sx * 0.6, -10, 0.01, 0});
    cases.push_back({LutFunction::HardSigmoid, sx, 0, 1.0 / 256, -128, 0.2, 0.5});
  }
  int32_t worst16 = 0, worst8 = 0;
  for (const Case &c : cases)
    for (auto range : {std::pair<int32_t, int32_t>{-128, 127}, {-20, 100}})
      for (unsigned n : {16u, 8u}) {
        // Named copies: clang's C++17 does not capture structured bindings.
        int32_t lo = range.first, hi = range.second;
        quant::LutTable t = quant::buildLut(c.fn, c.sx, c.zx, c.sy, c.zy,
                                            c.fn == LutFunction::LeakyRelu ? c.alpha : 0.2,
                                            c.beta == 0 ? 0.5 : c.beta);
        auto target = [&](int32_t x) {
          return std::clamp(t[size_t(std::clamp(x, lo, hi) + 128)], -128, 127);
        };
        quant::PwlFit f = quant::fitPwl(target, lo, hi, n);
        ASSERT_LE(f.segments.size(), n);
        int32_t err = 0;
        for (int32_t x = -128; x <= 127; ++x)
          err = std::max(err, std::abs(quant::pwlValue(f.segments, x) - target(x)));
        EXPECT_EQ(err, f.maxError) << int(c.fn) << " sx " << c.sx;
        (n == 16 ? worst16 : worst8) = std::max(n == 16 ? worst16 : worst8, err);
        EXPECT_LE(err, n == 16 ? Bound16 : Bound8) << int(c.fn) << " sx " << c.sx << " n " << n;
        // Constant outside [lo, hi]: the NPU's wide input gives the clamped one's output.
        for (int32_t y : wideInputs())
          ASSERT_EQ(quant::pwlValue(f.segments, y),
                    quant::pwlValue(f.segments, std::clamp(y, lo, hi)))
              << int(c.fn) << " y " << y;
        // Deterministic.
        if (n == 16 && lo == -128) {
          ASSERT_EQ(f.segments, quant::fitPwl(target, lo, hi, n).segments);
        }
      }
  std::printf("pwl fit: worst error %d step(s) with 16 segments, %d with 8\n", worst16, worst8);
}

} // namespace
