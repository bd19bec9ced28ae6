//===- quant_exact_test.cpp - Calibration arithmetic at exact values ------===//
//
// Issue 24: two calibration bugs changed tinycnn's scales and biases while
// every test passed, because the tests' tolerances were wider than the error.
// Here the expected values are derived by hand, exactly:
//  - percentile: on a histogram whose bins are filled by hand, the upper end
//    is the upper edge of the bin where the cumulative count reaches p% of
//    the values, the lower end the lower edge of the bin where it reaches
//    (100 - p)% (one bin off is a failure: the bins are ~0.001 wide, the
//    comparison is to 4 float ulps); a count that reaches the target exactly
//    stops in that bin; percentile 100 is [min, max];
//  - bias correction of padded convolutions: weights and ranges chosen so
//    that each output channel's int32 bias equals, in units, the number of
//    output positions (of the whole output) where one kernel tap reads the
//    input rather than the zero padding - counted by hand for a padded 3x3
//    conv, a strided conv with asymmetric padding and a dilated one.
// Default (per-channel weight) quantization throughout.
//
//===----------------------------------------------------------------------===//
#include "npucc/ir/Parser.h"
#include "npucc/quant/Calibrate.h"
#include "npucc/quant/InsertQdq.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace npucc;
using namespace npucc::quant;

namespace {

// --- Percentile ----------------------------------------------------------------------------

/// Statistics of hand-placed values: `counts` values at the centre of each
/// listed bin of a histogram whose limit is set by the first two values, -2
/// and +2 (bins 0 and 4095; their counts are part of the totals below).
struct BinFill {
  int bin;
  int count;
};
ValueStats handHistogram(const std::vector<BinFill> &fill) {
  ValueStats s;
  s.seen = true;
  std::vector<float> ends = {-2.0f, 2.0f};
  s.hist.add(ends.data(), 2); // limit 2 * (1 + 1e-6), 4096 bins of limit / 2048
  s.min = -2.0;
  s.max = 2.0;
  const double w = 2.0 * s.hist.limit() / Histogram::NumBins;
  for (const BinFill &f : fill) {
    std::vector<float> v(static_cast<size_t>(f.count),
                         static_cast<float>(s.hist.lowerEdge(f.bin) + 0.5 * w));
    s.hist.add(v.data(), static_cast<int64_t>(v.size()));
  }
  return s;
}

/// The lower edge of bin i, from the limit alone: -L + i * L / 2048.
double edge(const ValueStats &s, int i) { return s.hist.limit() * (i - 2048) / 2048.0; }

TEST(QuantExact, HistogramOfTheHandPlacedValues) {
  ValueStats s = handHistogram({{1000, 149}, {2000, 9700}, {3000, 149}});
  EXPECT_DOUBLE_EQ(s.hist.limit(), 2.0 * (1.0 + 1e-6));
  EXPECT_EQ(s.hist.total(), 10000.0);
  const auto &b = s.hist.bins();
  EXPECT_EQ(b[0], 1.0);
  EXPECT_EQ(b[1000], 149.0);
  EXPECT_EQ(b[2000], 9700.0);
  EXPECT_EQ(b[3000], 149.0);
  EXPECT_EQ(b[4095], 1.0);
}

TEST(QuantExact, PercentileReadsTheUpperEdgeOfTheUpperBinAndTheLowerEdgeOfTheLower) {
  // 10000 values: 1 at bin 0, 149 at bin 1000, 9700 at bin 2000, 149 at bin
  // 3000, 1 at bin 4095. Percentile 99: the upper target is 9900 values; the
  // cumulative count is 9850 after bin 2000 and 9999 after bin 3000, so the
  // upper end is bin 3000's upper edge = lower edge of bin 3001 =
  // L * (3001 - 2048) / 2048 = L * 953 / 2048. The lower target is 100
  // values: 1 after bin 0, 150 after bin 1000, so the lower end is bin 1000's
  // lower edge = L * (1000 - 2048) / 2048 = -L * 1048 / 2048.
  ValueStats s = handHistogram({{1000, 149}, {2000, 9700}, {3000, 149}});
  const double L = s.hist.limit();
  Range r = computeRange(s, CalibMethod::Percentile, 99.0);
  EXPECT_FLOAT_EQ(r.max, static_cast<float>(L * 953 / 2048)) << "upper end one bin off";
  EXPECT_FLOAT_EQ(r.min, static_cast<float>(-L * 1048 / 2048)) << "lower end one bin off";
  EXPECT_FLOAT_EQ(r.max, static_cast<float>(edge(s, 3001)));
  EXPECT_FLOAT_EQ(r.min, static_cast<float>(edge(s, 1000)));
  // One bin is 2L / 4096 ~ 0.001 wide: far more than 4 float ulps at ~1.
  EXPECT_GT(edge(s, 3001) - edge(s, 3000), 100 * 4 * std::ldexp(1.0, -23));
}

TEST(QuantExact, PercentileStopsInTheBinThatReachesTheTargetExactly) {
  // 10000 values: 1 at bin 0, 4999 at bin 1500, 4999 at bin 2500, 1 at bin
  // 4095. Percentile 50: both targets are 5000 values, reached exactly after
  // bin 1500 (1 + 4999), so the range is bin 1500 itself: from its lower edge
  // L * (1500 - 2048) / 2048 = -L * 548 / 2048 to its upper edge
  // -L * 547 / 2048 (not bin 2500's, 1000 bins further).
  ValueStats s = handHistogram({{1500, 4999}, {2500, 4999}});
  const double L = s.hist.limit();
  Range r = computeRange(s, CalibMethod::Percentile, 50.0);
  EXPECT_FLOAT_EQ(r.min, static_cast<float>(-L * 548 / 2048));
  EXPECT_FLOAT_EQ(r.max, static_cast<float>(-L * 547 / 2048));
}

TEST(QuantExact, PercentileHundredIsMinMax) {
  // Targets 0 and 10000: the first and the last non-empty bins (0 and 4095),
  // edges -L and +L, clamped to the values seen: [-2, 2].
  ValueStats s = handHistogram({{1000, 149}, {2000, 9700}, {3000, 149}});
  Range r = computeRange(s, CalibMethod::Percentile, 100.0);
  EXPECT_EQ(r.min, -2.0f);
  EXPECT_EQ(r.max, 2.0f);
}

// --- Bias correction of padded convolutions ------------------------------------------------

/// A float Conv of one input channel and nine output channels with a 3x3
/// kernel: output channel o has weight 127/128 at one tap (the quantization
/// scale is then exactly 1/128 and that tap exact) and 0.25/128 at tap o
/// (quantized to 0: error -1/512), zero elsewhere; zero bias. So the weight
/// rounding shifts channel o by -(1/512) * mean * inside(o), where inside(o)
/// is the fraction of output positions at which tap o reads the input. The
/// input's range [0, 255/64] gives scale 1/64, the bias scale is
/// 1/64 * 1/128 = 1/8192, and the corrected bias is
/// round(mean * inside(o) / 512 * 8192) = round(16 * mean * inside(o)).
// clang-format off
std::string biasConvGraph(const std::string &x, const std::string &y, const std::string &attrs) {
  std::string w;
  for (int o = 0; o < 9; ++o)
    for (int tap = 0; tap < 9; ++tap) {
      int big = o == 4 ? 0 : 4;
      w += std::string(w.empty() ? "" : ", ") +
           (tap == big ? "0.9921875" : tap == o ? "0.001953125" : "0.0");
    }
  return "graph @main(%x: f32[" + x + "]) -> (%y) {\n"
         "  const @w: f32[9,1,3,3] = dense<[" + w + "]>\n"
         "  const @b: f32[9] = dense<[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]>\n"
         "  %y = Conv(%x, @w, @b) {" + attrs + "} : f32[" + y + "]\n"
         "  return %y\n}\n";
}
// clang-format on

/// The corrected int32 biases of that Conv with input channel mean `mean`.
std::vector<int64_t> correctedBiases(const std::string &text, float mean) {
  auto g = ir::parseGraph(text, "bias.ir");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().str());
  if (!g.ok())
    return {};
  std::map<std::string, Range> ranges;
  ranges["x"] = Range(0.0f, 3.984375f); // 255/64: scale 1/64, zero point -128
  ranges["x"].channelMean = {mean};
  ranges["y"] = Range(-1.0f, 1.0f);
  auto st = insertQdq(**g, ranges);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().str());
  std::vector<int64_t> out;
  for (const auto &n : (*g)->nodes())
    if (n->kind == ir::OpKind::Conv) {
      const ir::Value *b = n->input(2);
      EXPECT_TRUE(b && b->producer && b->producer->kind == ir::OpKind::DequantizeLinear);
      if (!b || !b->producer)
        return {};
      const ir::Value *q = b->producer->input(0);
      const ir::Value *s = b->producer->input(1);
      EXPECT_TRUE(q->isConstant() && q->dtype == ir::DType::I32);
      for (int64_t c = 0; c < q->constant->numElements(); ++c) {
        EXPECT_EQ(s->constant->getDouble(c), 1.0 / 8192) << "bias scale of channel " << c;
        out.push_back(q->constant->getInt(c));
      }
    }
  return out;
}

TEST(QuantExact, BiasCorrectionPaddedThreeByThree) {
  // 4x4 input, pads 1, stride 1: 4x4 output. Along each axis tap 0 reads
  // input row o - 1 (inside for o = 1..3: 3 of 4), tap 1 row o (4 of 4), tap 2
  // row o + 1 (o = 0..2: 3 of 4). inside(ky, kx) = fy * fx: corners 9/16,
  // edge taps 12/16, the centre 16/16; with mean 1 the biases are 16 * inside:
  std::vector<int64_t> want = {9, 12, 9, 12, 16, 12, 9, 12, 9};
  EXPECT_EQ(
      correctedBiases(biasConvGraph("1,1,4,4", "1,9,4,4", "kernel_shape=[3, 3], pads=[1, 1, 1, 1]"),
                      1.0f),
      want);
}

TEST(QuantExact, BiasCorrectionStridedAsymmetricPadding) {
  // 5x4 input, strides [2, 1], pads top 1, left 0, bottom 0, right 1: output
  // 2 x 3 ((5 + 1 - 3) / 2 + 1 = 2 rows, 4 + 1 - 3 + 1 = 3 columns).
  // Rows: output row o reads input row 2o - 1 + ky: ky 0 -> rows -1, 1 (1 of 2
  // inside), ky 1 -> 0, 2 (2 of 2), ky 2 -> 1, 3 (2 of 2).
  // Columns: output column o reads o + kx: kx 0 -> 0..2, kx 1 -> 1..3 (all
  // inside), kx 2 -> 2..4 (4 is the right padding: 2 of 3).
  // inside = fy * fx; with mean 3 the biases are 48 * inside:
  //   ky 0: 48 * 1/2 * [1, 1, 2/3] = [24, 24, 16]
  //   ky 1, 2: 48 * [1, 1, 2/3]    = [48, 48, 32]
  std::vector<int64_t> want = {24, 24, 16, 48, 48, 32, 48, 48, 32};
  EXPECT_EQ(correctedBiases(biasConvGraph("1,1,5,4", "1,9,2,3",
                                          "kernel_shape=[3, 3], pads=[1, 0, 0, 1], "
                                          "strides=[2, 1]"),
                            3.0f),
            want);
}

TEST(QuantExact, BiasCorrectionDilatedPadded) {
  // 5x5 input, dilation 2, pads 2: 5x5 output. Along each axis output o reads
  // o - 2 + 2k: k 0 -> inside for o = 2..4 (3 of 5), k 1 -> all 5, k 2 -> o =
  // 0..2 (3 of 5). With mean 25/16 the biases are 16 * 25/16 * inside =
  // 25 * inside: corners 25 * 9/25 = 9, edge taps 15, the centre 25.
  std::vector<int64_t> want = {9, 15, 9, 15, 25, 15, 9, 15, 9};
  EXPECT_EQ(correctedBiases(biasConvGraph("1,1,5,5", "1,9,5,5",
                                          "dilations=[2, 2], kernel_shape=[3, 3], "
                                          "pads=[2, 2, 2, 2]"),
                            1.5625f),
            want);
}

TEST(QuantExact, BiasCorrectionWithoutChannelMeansIsNone) {
  // The same padded conv with mean 0: the weight rounding shifts nothing.
  std::vector<int64_t> want(9, 0);
  EXPECT_EQ(
      correctedBiases(biasConvGraph("1,1,4,4", "1,9,4,4", "kernel_shape=[3, 3], pads=[1, 1, 1, 1]"),
                      0.0f),
      want);
}

} // namespace
