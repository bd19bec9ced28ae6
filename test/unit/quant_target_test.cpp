//===- quant_target_test.cpp - Quantizing for what an NPU accepts -----------===//
//
// target::quantRules / weightRuleFor read a description's requantization
// modes (per_channel / per_tensor per operation, a fixed requant_mult = a
// shift-only requantizer) and quant::insertQdq applies them: per-tensor
// symmetric weights, power-of-two weight and activation scales. The values
// are worked out by hand in the comments. Issue 23: the calibrator always made
// per-channel weights, so every conv fell back to the CPU on a per-tensor-only
// NPU. The end-to-end check (the convs then run on the NPU, bit-exact) is in
// test/e2e/quant_calib_test.sh.
//
//===----------------------------------------------------------------------===//
#include "TargetJsonEdit.h"
#include "TestTargets.h"

#include "npucc/driver/Driver.h"
#include "npucc/quant/Accuracy.h"

#include "npucc/ir/Parser.h"
#include "npucc/passes/Pass.h"
#include "npucc/quant/InsertQdq.h"
#include "npucc/target/Legality.h"
#include "npucc/target/QuantRules.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace npucc;

namespace {

target::TargetDesc load(const std::string &nameOrFile) {
  auto t = target::loadTarget(nameOrFile);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().str());
  return t.ok() ? t.take() : target::TargetDesc();
}

// Weights [2,1,1,1]: channel 0 holds 1.0, channel 1 holds 0.25 (bias 0.5, 0.5).
const char *ConvGemmAdd = R"(graph @main(%x: f32[1,1,2,2]) -> (%z) {
  const @w: f32[2,1,1,1] = dense<[1.0, 0.25]>
  const @b: f32[2] = dense<[0.5, 0.5]>
  const @w5: f32[2,2,5,5] = dense<elided>
  const @g: f32[2,3] = dense<[1.0, 0.5, 0.25, -1.0, 2.0, 0.125]>
  const @st: i64[1] = dense<[0]>
  const @en: i64[1] = dense<[2]>
  %c = Conv(%x, @w, @b) {kernel_shape=[1, 1]} : f32[1,2,2,2] loc("conv1x1")
  %c5 = Conv(%c, @w5) {kernel_shape=[5, 5], pads=[2, 2, 2, 2]} : f32[1,2,2,2] loc("conv5x5")
  %f = Flatten(%c5) {axis=1} : f32[1,8] loc("flat")
  %s = Slice(%f, @st, @en) : f32[1,2] loc("slice")
  %m = MatMul(%s, @g) : f32[1,3] loc("mm")
  %z = Add(%m, %m) : f32[1,3] loc("add")
  return %z
})";

std::unique_ptr<ir::Graph> graph() {
  auto g = ir::parseGraph(ConvGemmAdd, "t.ir");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().str());
  return g.ok() ? g.take() : nullptr;
}

/// Every activation of graph() calibrated to [-1, 3].
std::map<std::string, quant::Range> ranges() {
  std::map<std::string, quant::Range> r;
  for (const char *v : {"x", "c", "c5", "f", "s", "m", "z"})
    r[v] = quant::Range(-1.0f, 3.0f);
  return r;
}

const ir::Node *node(const ir::Graph &g, const std::string &name) {
  for (const auto &n : g.nodes())
    if (n->name == name)
      return n.get();
  ADD_FAILURE() << "no node " << name;
  return nullptr;
}

} // namespace

TEST(QuantTarget, RulesFollowTheRequantizationModes) {
  auto g = graph();
  ASSERT_TRUE(g);
  const ir::Node *conv = node(*g, "conv1x1"), *mm = node(*g, "mm"), *add = node(*g, "add");
  // npu-default has both modes: per-channel stays (the default rule, no options).
  target::TargetDesc def = load("npu-default");
  EXPECT_TRUE(target::weightRuleFor(*conv, def).isDefault());
  EXPECT_TRUE(target::quantRules(def).isDefault());
  // npu-third: per_tensor only.
  target::TargetDesc third = load(test::testTarget("npu-third.json"));
  quant::WeightRule r = target::weightRuleFor(*conv, third);
  EXPECT_FALSE(r.perChannel);
  EXPECT_FALSE(r.powerOfTwo);
  EXPECT_EQ(r.reason, "the NPU's conv requantizes per tensor only");
  EXPECT_EQ(target::weightRuleFor(*mm, third).reason,
            "the NPU's matmul requantizes per tensor only");
  EXPECT_TRUE(target::weightRuleFor(*add, third).isDefault()); // no weights
  quant::QdqOptions o = target::quantRules(third);
  EXPECT_TRUE(bool(o.weightRule));
  EXPECT_FALSE(o.powerOfTwoActivations);
  // quant-shift: requant_mult fixed at 2^30.
  target::TargetDesc shift = load(test::testTarget("quant-shift.json"));
  r = target::weightRuleFor(*conv, shift);
  EXPECT_FALSE(r.perChannel);
  EXPECT_TRUE(r.powerOfTwo);
  EXPECT_EQ(r.reason, "the NPU's conv requantizes per tensor by a shift only: requant_mult is "
                      "fixed at 2^30");
  EXPECT_TRUE(target::quantRules(shift).powerOfTwoActivations);
}

TEST(QuantTarget, InsertQdqMakesPerTensorAndPowerOfTwoParameters) {
  // Activations: the range [-1, 3] gives scale 4/255 = 0.0156863; the smallest power of two
  // that covers it is 2^-5 (2^-6 = 0.015625 is just below).
  ir::QuantParams a = quant::activationParams(quant::Range(-1.0f, 3.0f));
  EXPECT_FLOAT_EQ(a.scale[0], 4.0f / 255.0f);
  ir::QuantParams a2 = quant::activationParams(quant::Range(-1.0f, 3.0f), true);
  EXPECT_EQ(a2.scale[0], 0.03125f);
  EXPECT_EQ(a2.zeroPoint[0], -96); // -128 - (-1 / 2^-5) = -96
  ir::QuantParams a3 = quant::activationParams(quant::Range(0.0f, 255.0f / 64.0f), true);
  EXPECT_EQ(a3.scale[0], 1.0f / 64.0f); // exactly a power of two already

  for (int mode = 0; mode < 3; ++mode) {
    SCOPED_TRACE(mode == 0 ? "per-channel" : mode == 1 ? "per-tensor" : "power of two");
    auto g = graph();
    ASSERT_TRUE(g);
    quant::QdqOptions o;
    if (mode > 0)
      o.weightRule = [mode](const ir::Node &n) {
        quant::WeightRule r;
        if (n.name == "conv1x1") {
          r.perChannel = false;
          r.powerOfTwo = mode == 2;
          r.reason = "test";
        }
        return r;
      };
    o.powerOfTwoActivations = mode == 2;
    auto st = quant::insertQdq(*g, ranges(), o);
    ASSERT_TRUE(st.ok()) << st.error().str();
    EXPECT_EQ(st->constrained.size(), mode > 0 ? 1u : 0u);
    if (mode > 0) {
      EXPECT_EQ(st->constrained[0], std::string("conv1x1 (Conv): per-tensor") +
                                        (mode == 2 ? ", power-of-two" : "") + " weights (test)");
    }
    passes::PassContext ctx;
    ASSERT_TRUE(passes::runPipeline(*g, "fold-qdq,dce", ctx));
    const ir::Node *conv = node(*g, "conv1x1");
    ASSERT_TRUE(conv && conv->input(1) && conv->input(1)->quant);
    const ir::QuantParams &wq = *conv->input(1)->quant;
    const ir::Tensor &w = *conv->input(1)->constant;
    if (mode == 0) { // 1.0 / 127 and 0.25 / 127: both channels at +127
      ASSERT_EQ(wq.scale.size(), 2u);
      EXPECT_FLOAT_EQ(wq.scale[1], 0.25f / 127.0f);
      EXPECT_EQ(w.getInt(1), 127);
    } else if (mode == 1) { // one scale 1.0 / 127: 0.25 -> round(31.75) = 32
      ASSERT_EQ(wq.scale.size(), 1u);
      EXPECT_FLOAT_EQ(wq.scale[0], 1.0f / 127.0f);
      EXPECT_EQ(w.getInt(0), 127);
      EXPECT_EQ(w.getInt(1), 32);
    } else { // 2^ceil(log2(1/127)) = 2^-6: 1.0 -> 64, 0.25 -> 16
      ASSERT_EQ(wq.scale.size(), 1u);
      EXPECT_EQ(wq.scale[0], 0.015625f);
      EXPECT_EQ(w.getInt(0), 64);
      EXPECT_EQ(w.getInt(1), 16);
      EXPECT_EQ(conv->input(0)->quant->scale[0], 0.03125f); // the activation, power of two
    }
    for (int32_t z : wq.zeroPoint)
      EXPECT_EQ(z, 0); // symmetric: the NPU has no weight zero point
  }
}

// A calibrated conv that a per-tensor-only NPU runs: after the rule, placeNode accepts it.
TEST(QuantTarget, PerTensorWeightsLandOnAPerTensorNpu) {
  target::TargetDesc third = load(test::testTarget("npu-third.json"));
  for (bool constrained : {false, true}) {
    auto g = graph();
    ASSERT_TRUE(g);
    quant::QdqOptions o;
    if (constrained)
      o = target::quantRules(third);
    ASSERT_TRUE(quant::insertQdq(*g, ranges(), o).ok());
    passes::PassContext ctx;
    ASSERT_TRUE(passes::runPipeline(*g, "fold-qdq,dce", ctx));
    target::Placement p = target::placeNode(*node(*g, "conv1x1"), third);
    EXPECT_EQ(p.onNpu(), constrained);
    if (!constrained) {
      ASSERT_FALSE(p.reasons.empty());
      EXPECT_EQ(p.reasons[0], "per-channel requantization but the NPU's conv has only per_tensor");
    }
  }
}

// A fixed multiplier that is not a power of two cannot be reached by power-of-two
// scales: per-tensor weights, but no power-of-two rule.
TEST(QuantTarget, OnlyAPowerOfTwoFixedMultiplierIsShiftOnly) {
  for (int64_t mult : {int64_t(1) << 30, int64_t(3) << 28}) {
    auto t = test::parseEdited([mult](test::json &j) {
      test::del(j, "/commands/matmul/params/requant_mult");
      test::set(j, "/commands/matmul/fixed", {{"requant_mult", mult}});
    });
    ASSERT_TRUE(t.ok()) << t.error().str();
    auto g = graph();
    ASSERT_TRUE(g);
    quant::WeightRule r = target::weightRuleFor(*node(*g, "mm"), *t);
    EXPECT_FALSE(r.perChannel);
    EXPECT_EQ(r.powerOfTwo, mult == (int64_t(1) << 30)) << mult;
    EXPECT_EQ(target::quantRules(*t).powerOfTwoActivations, r.powerOfTwo);
  }
}

// Through the driver: tinycnn (three 3x3 convs and a Gemm) calibrated for npu-third gets
// per-tensor weights on all four; on a copy of npu-third whose conv takes no 3x3 kernel the
// convs run on the CPU anyway, so they get per-channel weights back and only the Gemm stays
// per tensor. The graph quantized without the constraints is kept for the report.
TEST(QuantTarget, TheDriverRelaxesLayersTheNpuRejectsAnyway) {
  namespace fs = std::filesystem;
  std::string third = test::testTarget("npu-third.json");
  test::json j = test::json::parse(test::readText(third));
  test::set(j, "/compute/operations/conv/kernel_sizes", {1});
  fs::path no3 = fs::path(::testing::TempDir()) / "npu-third-no3x3.json";
  std::ofstream(no3) << j.dump(2);
  for (const std::string &tgt : {third, no3.string()}) {
    SCOPED_TRACE(tgt);
    driver::CompileOptions o;
    o.modelPath = std::string(NPUCC_SOURCE_DIR) + "/models/tinycnn/model.onnx";
    o.target = tgt;
    o.quant.mode = "int8";
    o.quant.randomSamples = 4;
    o.quant.method = "minmax";
    auto r = driver::compileModel(o);
    ASSERT_TRUE(r.ok()) << r.error().str();
    bool relaxed = tgt != third;
    ASSERT_EQ(r->quantConstraints.size(), relaxed ? 1u : 4u);
    EXPECT_EQ(r->quantConstraints.back(),
              "/fc/Gemm (Gemm): per-tensor weights (the NPU's matmul requantizes per tensor only)");
    ASSERT_TRUE(r->unconstrainedGraph);
    for (const auto &n : r->graph->nodes()) {
      if (n->kind == ir::OpKind::Conv && n->input(1) && n->input(1)->quant) {
        EXPECT_EQ(n->input(1)->quant->scale.size() > 1, relaxed) << n->name; // per channel?
      }
    }
  }
}

TEST(QuantTarget, TheReportStatesTheConstraintsAndTheirCost) {
  quant::AccuracyReport r;
  quant::TensorAccuracy c;
  c.name = "out";
  c.op = "DequantizeLinear";
  c.qtype = "f32";
  c.shape = {1, 10};
  c.snrDb = 40.0;
  c.cosine = 0.99;
  quant::TensorAccuracy u = c;
  u.snrDb = 42.5;
  r.outputs = {c};
  r.constrainedBy = "npu-third";
  r.constraints = {"conv (Conv): per-tensor weights (why)"};
  r.unconstrainedOutputs = {u};
  std::string text = quant::formatReport(r);
  EXPECT_NE(text.find("Quantized for the target 'npu-third' (what its requantizer accepts):\n"
                      "  conv (Conv): per-tensor weights (why)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  cost of the constraints on out: SNR 42.50 -> 40.00 dB (-2.50 dB)\n"),
            std::string::npos)
      << text;
  std::string js = quant::reportJson(r);
  EXPECT_NE(js.find("\"target_constraints\""), std::string::npos) << js;
  EXPECT_NE(js.find("\"unconstrained_outputs\""), std::string::npos) << js;
}
