//===- lut_fusion_test.cpp - Lookup-table activations fused into NPU layers ===//
//
// Issue 19, phase 7d: on an NPU whose activation stage is lut256,
// npu-partition folds an int8 Sigmoid / Tanh / HardSwish / LeakyRelu /
// HardSigmoid into the NPU MAC layer before it (quant/FusedActivation.h). The
// fused node must compute exactly what the two nodes computed: checked here
// through the reference interpreter on every int8 input of a MatMul, for each
// activation, and through the NPU's own table (quant::actLut256 of the fused
// clamp and the activation's table, indexed as npucc_stage_act_lut256 does).
// Legality: a fused node runs only on an NPU with the lut256 stage.
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/quant/FusedActivation.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include "TestTargets.h"

#include "npucc_stages.h"

#include <gtest/gtest.h>

#include "EveryInt8.h"

#include <memory>

using namespace npucc;
using ir::Tensor;

namespace {

/// x (256 rows: every int8 value) -> MatMul -> %h (clamped to [0, 2.4]) -> `act` -> %y.
std::string matmulThen(const std::string &act) {
  return "graph @main(%x: i8[256,1] q(0.75, 0)) -> (%y) {\n"
         "  const @w: i8[1,4] q(0.0500000007, 0) = dense<[1, -3, 7, 2]>\n"
         "  %h = MatMul(%x, @w) {act_min=-1.5, act_max=2.4} : i8[256,4] q(0.0299999993, 5) "
         "loc(\"mm\")\n"
         "  %y = " +
         act +
         "(%h) : i8[256,4] q(0.00787401572, -3) loc(\"act\")\n"
         "  return %y\n}\n";
}

using test::everyInt8;

Tensor run(const ir::Graph &g) {
  std::map<std::string, Tensor> all;
  auto r = interp::runGraph(g, everyInt8(), &all);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return all.at("y");
}

/// The graph with its activation fused into the MatMul (what npu-partition does).
std::unique_ptr<ir::Graph> fused(const std::string &text) {
  auto g = ir::parseGraph(text, "fusion.ir").take();
  ir::Node *mm = nullptr, *act = nullptr;
  for (const auto &n : g->nodes())
    (n->kind == ir::OpKind::MatMul ? mm : act) = n.get();
  EXPECT_TRUE(quant::fuseActivation(*mm, *act));
  g->eraseNode(act);
  g->removeUnusedValues();
  return g;
}

const char *const Activations[] = {"Sigmoid", "Tanh", "HardSwish", "LeakyRelu {alpha=0.125}",
                                   "HardSigmoid {alpha=0.25, beta=0.4}"};

std::string withAttrs(const std::string &a) {
  // "LeakyRelu {alpha=0.125}" -> "LeakyRelu" and the attributes after the operand.
  size_t sp = a.find(' ');
  return sp == std::string::npos ? a : a.substr(0, sp);
}

std::string graphFor(const std::string &a) {
  std::string text = matmulThen(withAttrs(a));
  size_t sp = a.find(' ');
  if (sp != std::string::npos) // the attributes go after "(%h)"
    text.replace(text.find("(%h)") + 4, 0, " " + a.substr(sp + 1));
  return text;
}

TEST(LutFusion, FusedNodeEqualsTheTwoNodesForEveryInput) {
  for (const char *a : Activations) {
    std::string text = graphFor(a);
    auto g = ir::parseGraph(text, "fusion.ir");
    ASSERT_TRUE(g.ok()) << g.error().str() << "\n" << text;
    Tensor want = run(**g);
    auto f = fused(text);
    ASSERT_EQ(f->nodes().size(), 1u) << a;
    const ir::Node &n = *f->nodes()[0];
    EXPECT_EQ(n.output(0)->name, "y");
    EXPECT_FLOAT_EQ(n.attrFloat("act_in_scale", 0), 0.03f);
    EXPECT_EQ(n.attrInt("act_in_zp", 0), 5);
    Tensor got = run(*f);
    ASSERT_EQ(got.numElements(), want.numElements());
    int64_t differ = 0;
    for (int64_t i = 0; i < want.numElements(); ++i)
      differ += got.getInt(i) != want.getInt(i);
    EXPECT_EQ(differ, 0) << a;

    // The NPU's table: the MAC part's output through actLut256 (clamp, then the table).
    auto core = quant::coreOf(n);
    ASSERT_TRUE(core);
    std::map<std::string, Tensor> all;
    ASSERT_TRUE(interp::runGraph(**g, everyInt8(), &all).ok());
    const Tensor &h = all.at("h");
    quant::LutTable next = *quant::fusedLut(n);
    std::array<uint8_t, 256> lut = quant::actLut256(-128, 127, &next);
    for (int64_t i = 0; i < h.numElements(); ++i)
      ASSERT_EQ(npucc_stage_act_lut256(int32_t(h.getInt(i)), lut.data()), want.getInt(i))
          << a << " element " << i;
  }
}

TEST(LutFusion, OnlyLookupTableActivationsAndInt8Values) {
  auto g = ir::parseGraph(matmulThen("Relu"), "fusion.ir").take();
  ir::Node *mm = g->nodes()[0].get(), *act = g->nodes()[1].get();
  EXPECT_FALSE(quant::fuseActivation(*mm, *act)); // a clamp, not a table
  EXPECT_FALSE(quant::hasFusedActivation(*mm));
  EXPECT_EQ(quant::coreOf(*mm), nullptr);
  EXPECT_FALSE(quant::fusedLut(*mm).has_value());
}

TEST(LutFusion, AFusedLayerNeedsTheLut256Stage) {
  auto f = fused(graphFor("Sigmoid"));
  const ir::Node &n = *f->nodes()[0];
  auto lut = target::loadTarget(test::testTarget("npu-fp32lut.json"));
  ASSERT_TRUE(lut.ok()) << lut.error().str();
  target::Placement p = target::placeNode(n, *lut);
  ASSERT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  EXPECT_TRUE(p.op->actLut);
  auto def = target::loadTarget("npu-default");
  ASSERT_TRUE(def.ok());
  target::Placement q = target::placeNode(n, *def);
  EXPECT_FALSE(q.onNpu());
  ASSERT_FALSE(q.reasons.empty());
  EXPECT_EQ(q.reasons.back(),
            "fused activation Sigmoid but the NPU's matmul has no lut256 or pwl activation stage");
}

} // namespace
