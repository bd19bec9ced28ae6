//===- layer_distance_test.cpp - NPU vs model arithmetic per layer --------===//
//
// Issue 19, phase 7f: `npucc check` reports, per NPU layer, the distance of
// the NPU's arithmetic to the model's in output steps (driver::
// accumulateLayerDistances): the layer alone ("own") and accumulated through
// the network. Two clones of a two-MatMul graph differ only in the first
// node's requantization rounding (requant="fp32", ONNX Runtime's float32
// rounding, vs the exact rounding); on the 256 inputs below the roundings
// differ on some elements by one step, which the second (unchanged) layer
// carries on.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Driver.h"
#include "npucc/driver/LayerDistance.h"
#include "npucc/ir/Parser.h"

#include <gtest/gtest.h>

#include "EveryInt8.h"

#include <memory>

using namespace npucc;
using ir::Tensor;

namespace {

std::unique_ptr<ir::Graph> parse(const std::string &text) {
  auto r = ir::parseGraph(text, "layer_distance.ir");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str()) << "\n" << text;
  return r.ok() ? r.take() : nullptr;
}

/// x (256 rows: every int8 value) -> MatMul @w1 (rounding `rq`) -> MatMul @w2 -> y.
std::string twoLayers(const std::string &rq) {
  return "graph @main(%x: i8[256,1] q(0.75, 0)) -> (%y) {\n"
         "  const @w1: i8[1,4] q(1, 0) = dense<[1, -1, 3, 1]>\n"
         "  const @w2: i8[4,2] q(0.00999999978, 0) = dense<[5, -7, 11, 13, -17, 19, 23, 29]>\n"
         "  %h = MatMul(%x, @w1)" +
         rq +
         " : i8[256,4] q(0.300000012, 3) loc(\"mm1\")\n"
         "  %y = MatMul(%h, @w2) : i8[256,2] q(0.0370000005, -2) loc(\"mm2\")\n"
         "  return %y\n}\n";
}

using test::everyInt8;

TEST(LayerDistance, ChangedRoundingShowsOwnAndAccumulatedSteps) {
  auto npu = parse(twoLayers(" {requant=\"fp32\"}"));
  auto model = parse(twoLayers(""));
  ASSERT_TRUE(npu && model);
  std::vector<driver::LayerDistance> layers;
  ASSERT_TRUE(driver::accumulateLayerDistances(*npu, *model, {{0, "matmul"}, {1, "matmul"}},
                                               everyInt8(), layers)
                  .ok());
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].node, "mm1");
  EXPECT_TRUE(layers[0].changed);
  EXPECT_FALSE(layers[1].changed);
  // One step where the roundings differ (odd accumulators: 2.5 * acc is a tie in float32
  // and just below it exactly), carried on by the unchanged second layer.
  EXPECT_EQ(layers[0].ownSteps, 1);
  EXPECT_EQ(layers[0].steps, 1);
  EXPECT_GT(layers[0].mismatches, 0);
  EXPECT_EQ(layers[0].elements, 256 * 4);
  EXPECT_EQ(layers[1].ownSteps, 0);
  EXPECT_GE(layers[1].steps, 1);
  EXPECT_GT(layers[1].mismatches, 0);
  std::string text = driver::layerDistanceText(layers, 20);
  EXPECT_NE(text.find("1 of 2 NPU layers requantize differently; own distance at most 1 step(s), "
                      "accumulated at most " +
                      std::to_string(layers[1].steps) + " step(s) (at 'mm2')"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("mm1"), std::string::npos);
  // A second data set keeps the largest figures and adds the counts.
  int64_t mism = layers[0].mismatches;
  ASSERT_TRUE(driver::accumulateLayerDistances(*npu, *model, {{0, "matmul"}, {1, "matmul"}},
                                               everyInt8(), layers)
                  .ok());
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].ownSteps, 1);
  EXPECT_EQ(layers[0].mismatches, 2 * mism);
  EXPECT_EQ(layers[0].elements, 2 * 256 * 4);
  // At most one row, then how many more.
  EXPECT_NE(driver::layerDistanceText(layers, 1).find("... 1 more layer(s)"), std::string::npos);
}

TEST(LayerDistance, SameArithmeticIsZeroEverywhere) {
  auto a = parse(twoLayers("")), b = parse(twoLayers(""));
  ASSERT_TRUE(a && b);
  std::vector<driver::LayerDistance> layers;
  ASSERT_TRUE(
      driver::accumulateLayerDistances(*a, *b, {{0, "matmul"}, {1, "matmul"}}, everyInt8(), layers)
          .ok());
  ASSERT_EQ(layers.size(), 2u);
  for (const auto &l : layers) {
    EXPECT_FALSE(l.changed);
    EXPECT_EQ(l.steps, 0);
    EXPECT_EQ(l.mismatches, 0);
  }
}

TEST(LayerDistance, MismatchedGraphsAreAnError) {
  auto a = parse(twoLayers(""));
  auto one = parse("graph @main(%x: i8[256,1] q(0.75, 0)) -> (%h) {\n"
                   "  const @w1: i8[1,4] q(1, 0) = dense<[1, -1, 3, 1]>\n"
                   "  %h = MatMul(%x, @w1) : i8[256,4] q(0.300000012, 3) loc(\"mm1\")\n"
                   "  return %h\n}\n");
  ASSERT_TRUE(a && one);
  std::vector<driver::LayerDistance> layers;
  Status s = driver::accumulateLayerDistances(*a, *one, {{0, "matmul"}}, everyInt8(), layers);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().str().find("differ in their nodes"), std::string::npos);
  Status r = driver::accumulateLayerDistances(*a, *a, {{5, "matmul"}}, everyInt8(), layers);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().str().find("out of range"), std::string::npos);
}

/// compileModel keeps the model-arithmetic graph exactly when npu-partition changed a placed
/// node's rounding (tinycnn_int8, exact rounding, on npu-fp32lut: the MAC layers take the
/// NPU's float32 rounding; on npu-default nothing changes), and lists the NPU nodes.
TEST(LayerDistance, CompileKeepsTheModelArithmeticGraph) {
  driver::CompileOptions o;
  o.modelPath = std::string(NPUCC_SOURCE_DIR) + "/models/tinycnn_int8/model.onnx";
  o.target = std::string(NPUCC_SOURCE_DIR) + "/test/target/npu-fp32lut.json";
  o.keepStageGraphs = true;
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_TRUE(r->preTargetGraph && r->modelArithGraph);
  ASSERT_FALSE(r->preTargetNpu.empty());
  size_t changed = 0;
  for (const auto &[k, op] : r->preTargetNpu) {
    const ir::Node &p = *r->preTargetGraph->nodes()[k], &m = *r->modelArithGraph->nodes()[k];
    EXPECT_EQ(p.name, m.name);
    changed += p.attrString("requant", "none") != m.attrString("requant", "none");
  }
  EXPECT_EQ(changed, 4u); // three convs and the Gemm; the MaxPool has no requantization
  o.target = "npu-default";
  auto d = driver::compileModel(o);
  ASSERT_TRUE(d.ok()) << d.error().str();
  EXPECT_TRUE(d->preTargetGraph);
  EXPECT_FALSE(d->modelArithGraph);
  EXPECT_FALSE(d->preTargetNpu.empty());
}

} // namespace
