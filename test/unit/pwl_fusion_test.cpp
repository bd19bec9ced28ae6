//===- pwl_fusion_test.cpp - Lookup-table activations as fitted pwl segments ===//
//
// Issue 19, phase 7d: on an NPU whose activation stage is pwl, an int8
// Sigmoid / Tanh / HardSwish / LeakyRelu / HardSigmoid fused into the MAC
// layer before it (the lut256 fusion) runs as the segments npu-partition
// fitted (attribute act_pwl, quant/Pwl.h). Checked through the reference
// interpreter on every int8 input of a MatMul with a fused clamp: the fused
// node equals the segments on the MAC part's value bit for bit, and is within
// the fit's error of the two nodes. Legality: without its segments the pwl
// NPU refuses the node.
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/quant/FusedActivation.h"
#include "npucc/quant/Pwl.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include <gtest/gtest.h>

#include "EveryInt8.h"
#include "TargetJsonEdit.h"
#include "TestTargets.h"

#include <memory>

using namespace npucc;
using ir::Tensor;
using test::json;

namespace {

/// x (256 rows: every int8 value) -> MatMul (clamped to [-1.5, 2.4]) -> %h -> `act` -> %y.
std::string matmulThen(const std::string &act, const std::string &attrs) {
  return "graph @main(%x: i8[256,1] q(0.75, 0)) -> (%y) {\n"
         "  const @w: i8[1,4] q(0.0500000007, 0) = dense<[1, -3, 7, 2]>\n"
         "  %h = MatMul(%x, @w) {act_min=-1.5, act_max=2.4} : i8[256,4] q(0.0299999993, 5) "
         "loc(\"mm\")\n"
         "  %y = " +
         act + "(%h)" + attrs +
         " : i8[256,4] q(0.00787401572, -3) loc(\"act\")\n"
         "  return %y\n}\n";
}

std::map<std::string, Tensor> runAll(const ir::Graph &g) {
  std::map<std::string, Tensor> all;
  auto r = interp::runGraph(g, test::everyInt8(), &all);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return all;
}

/// npu-pwl with its matmul on the pwl stage too.
target::TargetDesc pwlMatmulTarget() {
  json j = json::parse(test::readText(test::testTarget("npu-pwl.json")), nullptr, true, true);
  j["compute"]["operations"]["matmul"]["arithmetic"] = {{"activation", "pwl"}};
  j["commands"]["matmul"]["params"]["act_addr"] = "COMP_ACT";
  auto t = target::parseTargetJson(j.dump(2), "npu-pwl-matmul.json");
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().str());
  return t.take();
}

TEST(PwlFusion, FusedActivationRunsAsTheFittedSegments) {
  target::TargetDesc t = pwlMatmulTarget();
  const std::pair<const char *, const char *> Acts[] = {{"Sigmoid", ""},
                                                        {"Tanh", ""},
                                                        {"HardSwish", ""},
                                                        {"LeakyRelu", " {alpha=0.125}"},
                                                        {"HardSigmoid", " {alpha=0.25, beta=0.4}"}};
  for (auto [act, attrs] : Acts) {
    std::string text = matmulThen(act, attrs);
    auto g = ir::parseGraph(text, "pwl.ir").take();
    std::map<std::string, Tensor> two = runAll(*g);
    auto f = ir::parseGraph(text, "pwl.ir").take();
    ir::Node *mm = f->nodes()[0].get(), *a = f->nodes()[1].get();
    ASSERT_TRUE(quant::fuseActivation(*mm, *a)) << act;
    f->eraseNode(a);
    f->removeUnusedValues();

    target::Placement bare = target::placeNode(*mm, t);
    EXPECT_FALSE(bare.onNpu());
    ASSERT_FALSE(bare.reasons.empty());
    EXPECT_EQ(bare.reasons.back(), std::string("fused activation ") + act +
                                       " on the NPU's matmul pwl stage without its segments "
                                       "(attribute act_pwl)");

    std::optional<quant::PwlFit> fit = quant::fitFusedActivation(*mm, 16);
    ASSERT_TRUE(fit) << act;
    quant::setPwlAttr(*mm, fit->segments);
    ASSERT_EQ(quant::pwlOf(*mm), fit->segments);
    target::Placement p = target::placeNode(*mm, t);
    ASSERT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
    EXPECT_TRUE(p.op->actLut);

    Tensor got = runAll(*f).at("y");
    const Tensor &h = two.at("h"), &want = two.at("y");
    int64_t worst = 0;
    for (int64_t i = 0; i < want.numElements(); ++i) {
      // The NPU's arithmetic: the segments on the MAC part's (clamped) value.
      ASSERT_EQ(got.getInt(i), quant::pwlValue(fit->segments, int32_t(h.getInt(i))))
          << act << " element " << i;
      worst = std::max<int64_t>(worst, std::llabs(got.getInt(i) - want.getInt(i)));
    }
    EXPECT_LE(worst, fit->maxError) << act;
    EXPECT_LE(fit->maxError, 1) << act;
  }
}

} // namespace
