//===- quant_equalize_test.cpp - Channel equalization before calibration ---===//
//
// quant::equalizeChannels on small float graphs whose channels differ in
// magnitude by up to 40x: the float function is unchanged, the channel ranges
// of the rescaled activation move as documented (t_k proportional to
// sqrt(w_k / R_k), spread bounded by maxScale), the int8 weights of the
// producer do not change, the quantized graph gets closer to the float one
// when a dense Conv amplifies the small channels, and the ineligible patterns
// (Relu6, a second user, a graph output, a consumer that is not a Conv) are
// left alone.
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/passes/Pass.h"
#include "npucc/quant/Calibrate.h"
#include "npucc/quant/Equalize.h"
#include "npucc/quant/InsertQdq.h"
#include "npucc/quant/Samples.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace npucc;
using namespace npucc::ir;
using namespace npucc::quant;

namespace {

// P: 2 -> 4 channels with magnitudes 1, 0.05, 2, 0.1 (weights and bias); no tie
// of w / max|w| * 127 lands on .5. C: a depthwise 3x3 over the 4 channels (Dw), or
// a dense 1x1 4 -> 3 (Dense) whose weights are about 1 / magnitude, as after a
// folded BatchNorm: every channel matters as much to the output.
const char *Pair = R"(graph @main(%x: f32[1,2,6,6]) -> (%y) {
  const @wp: f32[4,2,1,1] = dense<[1.0, -0.45, 0.05, 0.0223, 2.0, -1.37, 0.1, 0.0411]>
  const @bp: f32[4] = dense<[0.1, 0.005, 0.2, 0.01]>
  %v = Conv(%x, @wp, @bp) {ACT kernel_shape=[1, 1]} : f32[1,4,6,6]
  CONSUMER
  return %y
})";
const char *Dw =
    R"(const @wc: f32[4,1,3,3] = dense<[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, -0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.7, -0.8, -0.9, 0.3, 0.1, 0.2, 0.5, 0.4, 0.6, 0.9, 0.8, 0.7, 0.2, -0.2, 0.2, -0.2, 0.2, -0.2, 0.2, -0.2, 0.2]>
  %y = Conv(%v, @wc) {group=4, kernel_shape=[3, 3], pads=[1, 1, 1, 1]} : f32[1,4,6,6])";
const char *Dense =
    R"(const @wc: f32[3,4,1,1] = dense<[0.9, 20.0, -0.45, 10.0, -0.7, 13.0, 0.5, -7.0, 1.0, -17.0, 0.3, 8.0]>
  %y = Conv(%v, @wc) {kernel_shape=[1, 1]} : f32[1,3,6,6])";

std::unique_ptr<Graph> pairGraph(const char *act, const char *consumer) {
  std::string t = Pair;
  t.replace(t.find("ACT"), 3, act);
  t.replace(t.find("CONSUMER"), 8, consumer);
  auto r = parseGraph(t, "pair.ir");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : nullptr;
}

GraphEvaluator evaluator() {
  return [](const Graph &gr, const std::map<std::string, Tensor> &in,
            std::map<std::string, Tensor> &all) -> Status {
    auto r = interp::runGraph(gr, in, &all);
    if (!r)
      return std::move(r.error());
    return success();
  };
}

std::map<std::string, ValueStats> statsOf(const Graph &g, const std::vector<Sample> &s) {
  auto r = collectStats(g, s, evaluator());
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : std::map<std::string, ValueStats>{};
}

/// Output SNR (dB) of `q` against `f` over the samples.
double snr(const Graph &f, const Graph &q, const std::vector<Sample> &samples) {
  double s2 = 0, e2 = 0;
  for (const Sample &s : samples) {
    auto a = interp::runGraph(f, s.inputs), b = interp::runGraph(q, s.inputs);
    EXPECT_TRUE(a.ok() && b.ok());
    const Tensor &ta = a->at("y"), &tb = b->at("y");
    for (int64_t i = 0; i < ta.numElements(); ++i) {
      s2 += ta.getDouble(i) * ta.getDouble(i);
      e2 += (ta.getDouble(i) - tb.getDouble(i)) * (ta.getDouble(i) - tb.getDouble(i));
    }
  }
  return 10 * std::log10(s2 / e2);
}

/// The typed int8 graph of `g` calibrated (minmax) on `samples`.
std::unique_ptr<Graph> quantized(const Graph &g, const std::vector<Sample> &samples) {
  auto q = g.clone();
  EXPECT_TRUE(insertQdq(*q, computeRanges(statsOf(g, samples), CalibMethod::MinMax)).ok());
  passes::PassContext ctx;
  EXPECT_TRUE(passes::runPipeline(*q, "fold-qdq,dce", ctx).ok());
  return q;
}

void expectSameFunction(const Graph &a, const Graph &b, const std::vector<Sample> &samples) {
  for (const Sample &s : samples) {
    auto ra = interp::runGraph(a, s.inputs), rb = interp::runGraph(b, s.inputs);
    ASSERT_TRUE(ra.ok() && rb.ok());
    const Tensor &ta = ra->at("y"), &tb = rb->at("y");
    for (int64_t i = 0; i < ta.numElements(); ++i)
      ASSERT_NEAR(ta.getDouble(i), tb.getDouble(i), 1e-5 * (1 + std::fabs(ta.getDouble(i))));
  }
}

TEST(QuantEqualize, DepthwiseConsumerHalvesTheChannelSpread) {
  auto g = pairGraph("act_min=0.0,", Dw);
  ASSERT_TRUE(g);
  auto samples = randomSamples(*g, 16, 3), eval = randomSamples(*g, 16, 99);
  auto before = statsOf(*g, samples);
  const std::vector<double> &r0 = before.at("v").channelAbsMax;
  ASSERT_EQ(r0.size(), 4u);
  auto eq = g->clone();
  EXPECT_EQ(equalizeChannels(*eq, before), 1);
  expectSameFunction(*g, *eq, eval);
  // t_k ~ 1/sqrt(R_k): the spread max R / min R becomes its square root.
  auto after = statsOf(*eq, samples);
  const std::vector<double> &r1 = after.at("v").channelAbsMax;
  auto spread = [](const std::vector<double> &r) {
    return *std::max_element(r.begin(), r.end()) / *std::min_element(r.begin(), r.end());
  };
  EXPECT_GT(spread(r0), 20.0);
  EXPECT_NEAR(spread(r1), std::sqrt(spread(r0)), 0.01 * std::sqrt(spread(r0)));
  // The producer's int8 weights are unchanged (per-channel scales absorb t_k).
  auto q0 = quantized(*g, samples), q1 = quantized(*eq, samples);
  auto convWeights = [](const Graph &q) {
    for (const auto &n : q.nodes())
      if (n->kind == OpKind::Conv && n->attrInt("group", 1) == 1)
        return n->input(1)->constant->bytes();
    return std::vector<uint8_t>{};
  };
  EXPECT_FALSE(convWeights(*q0).empty());
  EXPECT_EQ(convWeights(*q0), convWeights(*q1));
  // maxScale bounds the spread of t: with 2, the smallest channel gains only 2x.
  auto capped = g->clone();
  EXPECT_EQ(equalizeChannels(*capped, before, EqualizeOptions{2.0}), 1);
  expectSameFunction(*g, *capped, eval);
  EXPECT_NEAR(spread(statsOf(*capped, samples).at("v").channelAbsMax), spread(r0) / 2,
              0.01 * spread(r0));
}

TEST(QuantEqualize, DenseConsumerBalancesActivationAndWeightRanges) {
  auto g = pairGraph("", Dense); // no activation: signed values scale as well
  ASSERT_TRUE(g);
  auto samples = randomSamples(*g, 16, 5), eval = randomSamples(*g, 16, 77);
  auto before = statsOf(*g, samples);
  auto eq = g->clone();
  EXPECT_EQ(equalizeChannels(*eq, before), 1);
  expectSameFunction(*g, *eq, eval);
  // After: channel k spans sqrt(R_k w_k) in v and in C's weights alike, so the
  // ratio R'_k / w'_k is the same for every channel.
  auto after = statsOf(*eq, samples);
  const std::vector<double> &r = after.at("v").channelAbsMax;
  const Value *wc = nullptr;
  for (const auto &n : eq->nodes())
    if (n->input(0) && n->input(0)->name == "v")
      wc = n->input(1);
  ASSERT_TRUE(wc);
  std::vector<double> w(4, 0.0);
  for (int64_t i = 0; i < wc->constant->numElements(); ++i)
    w[size_t(i % 4)] = std::max(w[size_t(i % 4)], std::fabs(wc->constant->getDouble(i)));
  for (size_t k = 1; k < 4; ++k)
    EXPECT_NEAR(r[k] / w[k], r[0] / w[0], 1e-3 * r[0] / w[0]) << "channel " << k;
  // The small channels, which the dense Conv amplifies, lose less to the per-tensor
  // int8 step: the quantized graph gets closer to the float one.
  double s0 = snr(*g, *quantized(*g, samples), eval);
  double s1 = snr(*g, *quantized(*eq, samples), eval);
  EXPECT_GT(s1, s0 + 3.0) << "without " << s0 << " dB, with " << s1 << " dB";
}

TEST(QuantEqualize, LeavesIneligiblePairsAlone) {
  auto samples = [](const Graph &g) { return randomSamples(g, 4, 1); };
  // Relu6 does not commute with a per-channel scale.
  auto relu6 = pairGraph("act_max=6.0, act_min=0.0,", Dw);
  EXPECT_EQ(equalizeChannels(*relu6, statsOf(*relu6, samples(*relu6))), 0);
  // A second user of v (here: also a graph output) would see the rescaled values.
  std::string twoUsers = Pair;
  twoUsers.replace(twoUsers.find("ACT"), 3, "");
  twoUsers.replace(twoUsers.find("CONSUMER"), 8, Dw);
  twoUsers.replace(twoUsers.find("-> (%y)"), 7, "-> (%y, %v)");
  twoUsers.replace(twoUsers.find("return %y"), 9, "return %y, %v");
  auto g2 = parseGraph(twoUsers, "two.ir");
  ASSERT_TRUE(g2.ok()) << g2.error().str();
  EXPECT_EQ(equalizeChannels(**g2, statsOf(**g2, samples(**g2))), 0);
  // A consumer that is not a Conv.
  auto pool = pairGraph("", "%y = MaxPool(%v) {kernel_shape=[2, 2]} : f32[1,4,5,5]");
  EXPECT_EQ(equalizeChannels(*pool, statsOf(*pool, samples(*pool))), 0);
  // No statistics: nothing to go by.
  auto dw = pairGraph("", Dw);
  EXPECT_EQ(equalizeChannels(*dw, {}), 0);
}

} // namespace
