//===- npu_avgpool_test.cpp - AveragePool on the NPU, by its rounding -----===//
//
// Issue 21: AveragePool and GlobalAveragePool run on the NPU where the
// description states how its average divides (pool.avg_rounding) and that
// rounding equals the int8 semantics for every window of the layer
// (lib/target/Legality.cpp, averageMismatch): odd window sizes with either
// round-to-nearest mode; powers of two with ties to even and an even zero
// point; otherwise the layer stays on the CPU with the reason. The NPU's
// division (npucc_div_round_mode) against an independent reference, the
// key's loading, and each placement rule against the reference interpreter.
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include "RequantReference.h"
#include "TestTargets.h"

#include "../../runtime/hal/npucc_params.h"
#include "npucc_requant.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>
#include <sstream>

using namespace npucc;
using namespace npucc::target;

namespace {

TEST(NpuAvgPool, DivisionModesMatchTheReference) {
  for (unsigned mode = 0; mode < 4; ++mode)
    for (int32_t den = 1; den <= 130; ++den)
      for (int32_t num = -1200; num <= 1200; ++num)
        ASSERT_EQ(npucc_div_round_mode(num, den, int(mode)), testref::averageOf(num, den, mode))
            << num << " / " << den << " mode " << mode;
  // The ties, spelled out: 5/2, -5/2, 3/2, -3/2.
  EXPECT_EQ(npucc_div_round_mode(5, 2, NPUCC_AVG_HALF_AWAY), 3);
  EXPECT_EQ(npucc_div_round_mode(5, 2, NPUCC_AVG_HALF_EVEN), 2);
  EXPECT_EQ(npucc_div_round_mode(-5, 2, NPUCC_AVG_HALF_EVEN), -2);
  EXPECT_EQ(npucc_div_round_mode(-3, 2, NPUCC_AVG_HALF_EVEN), -2);
  EXPECT_EQ(npucc_div_round_mode(-5, 2, NPUCC_AVG_TRUNCATE), -2);
  EXPECT_EQ(npucc_div_round_mode(-5, 2, NPUCC_AVG_FLOOR), -3);
}

/// npu-avgpool's description with its pool operation replaced by `pool` (JSON text).
std::string descWith(const std::string &pool) {
  std::ifstream in(npucc::test::testTarget("npu-avgpool.json"));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, true, true);
  j["compute"]["operations"]["pool"] = nlohmann::json::parse(pool);
  return j.dump();
}

TEST(NpuAvgPool, LoaderTakesTheRounding) {
  auto t = loadTarget(npucc::test::testTarget("npu-avgpool.json"));
  ASSERT_TRUE(t.ok()) << t.error().str();
  EXPECT_EQ(t->operation("pool")->avgRounding, unsigned(NPUCC_AVG_HALF_EVEN));
  auto d = loadTarget("npu-default");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->operation("pool")->avgRounding, unsigned(NPUCC_AVG_HALF_AWAY));
  auto bad = parseTargetJson(
      descWith(R"({ "kernel_sizes": [2], "kinds": ["avg"], "avg_rounding": "nearest" })"), "a");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().str().find("/compute/operations/pool/avg_rounding: unknown avg_rounding "
                                   "'nearest' (expected half_away_from_zero, half_to_even, "
                                   "truncate or floor)"),
            std::string::npos)
      << bad.error().str();
  auto noAvg = parseTargetJson(
      descWith(R"({ "kernel_sizes": [2], "kinds": ["max"], "avg_rounding": "floor" })"), "a");
  ASSERT_FALSE(noAvg.ok());
  EXPECT_NE(noAvg.error().str().find("/compute/operations/pool/avg_rounding: avg_rounding "
                                     "without \"avg\" in pool.kinds"),
            std::string::npos)
      << noAvg.error().str();
}

std::unique_ptr<ir::Graph> parse(const std::string &text) {
  auto r = ir::parseGraph(text, "avgpool.ir");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str()) << "\n" << text;
  return r.ok() ? r.take() : nullptr;
}

/// An int8 AveragePool [1,4,H,W] -> [1,4,OH,OW] with zero point `zp` and attributes `attrs`.
std::string avgGraph(int h, int w, int oh, int ow, int zp, const std::string &attrs,
                     const std::string &op = "AveragePool") {
  std::string q = "q(0.25, " + std::to_string(zp) + ")";
  return "graph @main(%x: i8[1,4," + std::to_string(h) + "," + std::to_string(w) + "] " + q +
         ") -> (%y) {\n  %y = " + op + "(%x)" + (attrs.empty() ? "" : " {" + attrs + "}") +
         " : i8[1,4," + std::to_string(oh) + "," + std::to_string(ow) + "] " + q +
         " loc(\"ap\")\n  return %y\n}\n";
}

Placement placeIn(const std::string &text, const TargetDesc &t) {
  auto g = parse(text);
  if (!g)
    return {};
  return placeNode(*g->nodes()[0], t);
}

/// The integer reference of the pooling and the NPU's average (the raw values' window sum
/// divided by `mode`) agree on every element of every input in [-128, 127] tried here.
bool npuAgrees(const std::string &text, unsigned mode, int kh, int kw, int s, int pad) {
  auto g = parse(text);
  if (!g)
    return false;
  const ir::Value *x = g->inputs[0];
  int64_t H = x->shape[2], W = x->shape[3];
  const ir::Value *y = g->outputs[0];
  int64_t OH = y->shape[2], OW = y->shape[3];
  for (int seed = 0; seed < 40; ++seed) {
    ir::Tensor in(ir::DType::I8, x->shape);
    for (int64_t i = 0; i < in.numElements(); ++i)
      in.setInt(i, int64_t((i * 37 + seed * 101 + (i * i) % 17) % 256) - 128);
    auto out = interp::runGraph(*g, {{"x", in}});
    if (!out)
      return false;
    const ir::Tensor &ref = out->at("y");
    for (int64_t c = 0; c < 4; ++c)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          int32_t sum = 0, n = 0;
          for (int ky = 0; ky < kh; ++ky)
            for (int kx = 0; kx < kw; ++kx) {
              int64_t iy = oy * s - pad + ky, ix = ox * s - pad + kx;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                continue;
              sum += int32_t(in.getInt((c * H + iy) * W + ix));
              ++n;
            }
          int32_t npu = std::clamp(testref::averageOf(sum, n, mode), -128, 127);
          if (npu != ref.getInt((c * OH + oy) * OW + ox))
            return false;
        }
  }
  return true;
}

TEST(NpuAvgPool, PlacedExactlyWhereTheRoundingAgrees) {
  auto avg = loadTarget(npucc::test::testTarget("npu-avgpool.json")); // half_to_even
  auto def = loadTarget("npu-default");                               // half_away_from_zero
  ASSERT_TRUE(avg.ok() && def.ok());
  const std::string k2 = "kernel_shape=[2, 2], strides=[2, 2]";
  // 2x2 windows of 4 pixels: ties to even with an even zero point agree; else not.
  std::string g4 = avgGraph(8, 8, 4, 4, 6, k2);
  EXPECT_TRUE(placeIn(g4, *avg).onNpu()) << placeIn(g4, *avg).reasons.size();
  EXPECT_TRUE(npuAgrees(g4, NPUCC_AVG_HALF_EVEN, 2, 2, 2, 0));
  EXPECT_FALSE(npuAgrees(g4, NPUCC_AVG_HALF_AWAY, 2, 2, 2, 0)); // why npu-default refuses it
  std::string g4odd = avgGraph(8, 8, 4, 4, 5, k2);
  Placement odd = placeIn(g4odd, *avg);
  EXPECT_FALSE(odd.onNpu());
  ASSERT_FALSE(odd.reasons.empty());
  EXPECT_EQ(odd.reasons.at(0).rfind("a window of 4 pixels with the odd zero point 5: the NPU's "
                                    "average rounds half_to_even",
                                    0),
            0u)
      << odd.reasons.at(0);
  EXPECT_FALSE(npuAgrees(g4odd, NPUCC_AVG_HALF_EVEN, 2, 2, 2, 0));
  // 3x3 windows of 9 pixels never tie: both nearest modes agree, on npu-default too.
  std::string g9 = avgGraph(5, 5, 3, 3, 5, "kernel_shape=[3, 3], strides=[1, 1]");
  EXPECT_TRUE(placeIn(g9, *def).onNpu());
  EXPECT_TRUE(placeIn(g9, *avg).onNpu());
  EXPECT_TRUE(npuAgrees(g9, NPUCC_AVG_HALF_AWAY, 3, 3, 1, 0));
  EXPECT_TRUE(npuAgrees(g9, NPUCC_AVG_HALF_EVEN, 3, 3, 1, 0));
  EXPECT_FALSE(npuAgrees(g9, NPUCC_AVG_TRUNCATE, 3, 3, 1, 0));
  // 3x3 stride 1 with padding 1: edge windows of 4 and 6 pixels; 6 ties where Q31's 1/6
  // decides, so no mode agrees.
  std::string gpad =
      avgGraph(6, 6, 6, 6, 0, "kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]");
  Placement p = placeIn(gpad, *avg);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons.at(0).rfind("a window of 6 pixels: ", 0), 0u) << p.reasons.at(0);
  // count_include_pad over padding: the NPU divides by the pixels inside.
  Placement inc = placeIn(
      avgGraph(6, 6, 6, 6, 0,
               "count_include_pad=1, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]"),
      *avg);
  EXPECT_FALSE(inc.onNpu());
  EXPECT_NE(std::find(inc.reasons.begin(), inc.reasons.end(),
                      "average pooling with count_include_pad over padding (the NPU divides by "
                      "the pixels inside the image)"),
            inc.reasons.end());
  // GlobalAveragePool: one window of the whole image (5x5 = 25 pixels, odd).
  std::string gg = avgGraph(5, 5, 1, 1, 3, "", "GlobalAveragePool");
  Placement gp = placeIn(gg, *avg);
  EXPECT_TRUE(gp.onNpu()) << (gp.reasons.empty() ? "" : gp.reasons[0]);
  ASSERT_TRUE(gp.op);
  EXPECT_EQ(gp.op->kh, 5);
  EXPECT_EQ(gp.op->poolKind, NPUCC_POOL_AVG);
  EXPECT_TRUE(npuAgrees(gg, NPUCC_AVG_HALF_EVEN, 5, 5, 1, 0));
  // 4x4 = 16 pixels on npu-default: the kernel is not in pool.kernel_sizes there.
  EXPECT_FALSE(placeIn(avgGraph(4, 4, 1, 1, 0, "", "GlobalAveragePool"), *def).onNpu());
}

} // namespace
