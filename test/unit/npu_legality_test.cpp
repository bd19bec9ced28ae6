//===- npu_legality_test.cpp - placeNode's decisions and reasons; npu-partition ===//
//
// target::placeNode on small int8 graphs written as textual IR: the exact
// reason strings for what an NPU description refuses (kernel list, requant
// mode, fused clamp, weight zero point, grouped conv, batch, average pooling,
// stride), and for what it accepts the command kind, geometry and MACs.
// Then the npu-partition pass run with PassContext::target set directly
// (test/lit/npu/partition-opt.ir runs it through `npucc opt --target`): npu=
// attributes, NHWC values and Transposes only at NPU/CPU boundaries, results
// unchanged; and the placements on a pre-quantized shared model.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Driver.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/ir/Printer.h"
#include "npucc/ir/Verifier.h"
#include "npucc/passes/Pass.h"
#include "npucc/lower/NpuLowering.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include "../../runtime/hal/npucc_params.h"

#include "CiSkip.h"
#include "TargetJsonEdit.h"
#include "TestTargets.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <random>

using namespace npucc;
using npucc::target::Placement;
using npucc::target::TargetDesc;

namespace {

std::unique_ptr<ir::Graph> parse(const std::string &text) {
  auto r = ir::parseGraph(text, "legality.ir");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : nullptr;
}

TargetDesc load(const std::string &name) {
  auto r = target::loadTarget(name);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : TargetDesc{};
}

/// runtime/targets/npu-default.json with one edit.
TargetDesc editedDefault(const std::function<void(test::json &)> &edit) {
  test::json j = test::json::parse(
      test::readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
  edit(j);
  auto r = target::parseTargetJson(j.dump(2), "edited.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : TargetDesc{};
}

const ir::Node *nodeNamed(const ir::Graph &g, const std::string &name) {
  for (const auto &n : g.nodes())
    if (n->name == name)
      return n.get();
  ADD_FAILURE() << "no node " << name;
  return nullptr;
}

/// Places the node named `node` of `text` on `t`.
Placement place(const std::string &text, const std::string &node, const TargetDesc &t) {
  auto g = parse(text);
  if (!g)
    return {};
  const ir::Node *n = nodeNamed(*g, node);
  return n ? target::placeNode(*n, t) : Placement{};
}

/// A one-conv graph: x [N,C,H,W] -> y [N,OC,OH,OW]; `wq` is the weights'
/// quantization text, `attrs` the node attributes (kernel_shape first).
std::string convGraph(const std::string &x, const std::string &w, const std::string &wq,
                      const std::string &oc, const std::string &attrs, const std::string &y) {
  return "graph @main(%x: i8[" + x + "] q(0.5, 0)) -> (%y) {\n"
         "  const @w: i8[" + w + "] " + wq + " = dense<elided>\n"
         "  const @b: i32[" + oc + "] = dense<elided>\n"
         "  %y = Conv(%x, @w, @b) {" + attrs + "} : i8[" + y + "] q(0.25, 0) loc(\"c\")\n"
         "  return %y\n}\n";
}

std::vector<std::string> one(const std::string &s) { return {s}; }

// --- Refusals: the exact reasons --------------------------------------------------------

TEST(NpuLegality, KernelNotInTheKernelListOfNpuSmall) {
  TargetDesc t = load("npu-small");
  Placement p = place(convGraph("1,16,16,16", "16,16,7,7", "q(0.05, 0)", "16",
                                "kernel_shape=[7, 7]", "1,16,10,10"),
                      "c", t);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.candidate, "conv");
  // npu-small gives "kernel_sizes": [1, 3] (the reason names that key); both dimensions come from
  // it. The kernel list comes first; the 4-bit KERNEL fields cannot hold 7 either.
  std::vector<std::string> want = {"kernel 7x7 not in conv.kernel_sizes [1, 3]",
                                   "k_h 7 outside what conv's field 'A5.kh_m1' holds (1..4)",
                                   "k_w 7 outside what conv's field 'A5.kw_m1' holds (1..4)"};
  EXPECT_EQ(p.reasons, want);
}

TEST(NpuLegality, ValueWithoutACaseInTheTableOfItsField) {
  // Issue 19 phase 3: in_w recovered from a cases table (16 or 32 pixels):
  // 20 is refused naming the table's values (before: "is not a multiple of 1").
  TargetDesc t = editedDefault([](test::json &j) {
    test::json &c = j["commands"]["conv"];
    c["params"].erase("in_w");
    test::json cases = test::json::array();
    cases.push_back({{"when", {{"in_w", 16}}}, {"value", 0}});
    cases.push_back({{"when", {{"in_w", 32}}}, {"value", 1}});
    c["fields"]["IN_SHAPE.w"]["cases"] = cases;
  });
  Placement p = place(convGraph("1,16,16,20", "16,16,3,3", "q(0.05, 0)", "16",
                                "kernel_shape=[3, 3], pads=[1, 1, 1, 1]", "1,16,16,20"),
                      "c", t);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons, one("command 'conv' parameter 'in_w' = 20 has no case in the table of "
                           "its field 'IN_SHAPE.w' (16, 32)"));
}

TEST(NpuLegality, PerChannelWeightsOnAPerTensorOnlyNpu) {
  TargetDesc t = load(test::testTarget("npu-third.json"));
  ASSERT_FALSE(t.operation("conv")->perChannelRequant);
  Placement p = place(convGraph("1,4,8,8", "2,4,1,1", "q<0>([0.25, 0.125], [0, 0])", "2",
                                "kernel_shape=[1, 1]", "1,2,8,8"),
                      "c", t);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons, one("per-channel requantization but the NPU's conv has only per_tensor"));
  // Equal per-channel scales are per-tensor in effect: accepted.
  Placement q = place(convGraph("1,4,8,8", "2,4,1,1", "q<0>([0.25, 0.25], [0, 0])", "2",
                                "kernel_shape=[1, 1]", "1,2,8,8"),
                      "c", t);
  EXPECT_TRUE(q.onNpu()) << (q.reasons.empty() ? "" : q.reasons[0]);
}

TEST(NpuLegality, FusedClampOnAnOperationWithoutFusedActivations) {
  std::string g = convGraph("1,16,8,8", "16,16,3,3", "q(0.05, 0)", "16",
                            "act_max=6.0, act_min=0.0, kernel_shape=[3, 3], pads=[1, 1, 1, 1]",
                            "1,16,8,8");
  TargetDesc with = load("npu-default");
  EXPECT_TRUE(place(g, "c", with).onNpu());
  TargetDesc without = editedDefault(
      [](test::json &j) { test::set(j, "/compute/operations/conv/fused_activations", test::json::array()); });
  ASSERT_FALSE(without.operation("conv")->fusedClamp);
  ASSERT_TRUE(without.operation("depthwise")->fusedClamp); // only conv was edited
  Placement p = place(g, "c", without);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons,
            one("fused clamp (act_min/act_max) but the NPU's conv has no fused activation"));
}

TEST(NpuLegality, WeightZeroPoint) {
  Placement p = place(convGraph("1,16,8,8", "16,16,1,1", "q(0.05, 3)", "16", "kernel_shape=[1, 1]",
                                "1,16,8,8"),
                      "c", load("npu-default"));
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons, one("weights have zero point 3 (the NPU has no weight zero point)"));
}

TEST(NpuLegality, GroupedConvolutionIsNeitherConvNorDepthwise) {
  // group 2 of 8 channels: neither 1 nor the channel count.
  Placement p = place(convGraph("1,8,8,8", "8,4,3,3", "q(0.05, 0)", "8",
                                "group=2, kernel_shape=[3, 3], pads=[1, 1, 1, 1]", "1,8,8,8"),
                      "c", load("npu-default"));
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.candidate, "");
  EXPECT_EQ(p.reasons,
            one("grouped convolution (group 2) is neither a conv nor a depthwise convolution"));
}

TEST(NpuLegality, BatchTwo) {
  Placement p = place(convGraph("2,16,8,8", "16,16,1,1", "q(0.05, 0)", "16", "kernel_shape=[1, 1]",
                                "2,16,8,8"),
                      "c", load("npu-default"));
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons, one("batch 2 (the NPU runs batch 1)"));
}

TEST(NpuLegality, AveragePoolIsRefusedWithItsReason) {
  // npu-default lists "avg" in pool.kinds and its pool command requantizes: a 2x2 average
  // runs with the multiplier of 1/4. Without the requantization the NPU averages with ties
  // away from zero: a window of 4 pixels can tie, where the int8 semantics round to even
  // (npu_avgpool_test.cpp has the cases that run, npu_poolrq_test.cpp the requantizing ones).
  TargetDesc t = load("npu-default");
  ASSERT_TRUE(t.operation("pool")->allowsKind("avg"));
  const std::string g = "graph @main(%x: i8[1,8,8,8] q(0.5, 0)) -> (%y) {\n"
                        "  %y = AveragePool(%x) {kernel_shape=[2, 2], strides=[2, 2]} : "
                        "i8[1,8,4,4] q(0.5, 0) loc(\"ap\")\n"
                        "  return %y\n}\n";
  Placement rq = place(g, "ap", t);
  ASSERT_TRUE(rq.onNpu());
  EXPECT_TRUE(rq.op->poolRequant);
  EXPECT_EQ(rq.op->poolCount, 4);
  std::ifstream in(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, true, true);
  for (const char *k : {"in_zp", "out_zp", "requant_mult", "requant_shift"})
    j["commands"]["pool"]["params"].erase(k);
  auto plain = npucc::target::parseTargetJson(j.dump(), "plain");
  ASSERT_TRUE(plain.ok()) << plain.error().str();
  Placement p = place(g, "ap", *plain);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.candidate, "pool");
  EXPECT_EQ(p.reasons, one("a window of 4 pixels: the NPU's average rounds half_away_from_zero "
                           "(pool.avg_rounding), the int8 semantics requantize the sum by the Q31 "
                           "multiplier of 1/count with ties to even"));
}

TEST(NpuLegality, StrideThree) {
  Placement p = place(convGraph("1,16,9,9", "16,16,3,3", "q(0.05, 0)", "16",
                                "kernel_shape=[3, 3], strides=[3, 3]", "1,16,3,3"),
                      "c", load("npu-default"));
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons, one("stride 3 not in conv.strides [1, 2]"));
}

TEST(NpuLegality, EveryFailedConstraintIsListed) {
  // 7x7 with padding 3 on npu-small: the kernel and two padding sides.
  Placement p = place(convGraph("1,16,16,16", "16,16,7,7", "q(0.05, 0)", "16",
                                "kernel_shape=[7, 7], pads=[3, 0, 3, 0]", "1,16,16,10"),
                      "c", load("npu-small"));
  std::vector<std::string> want = {"kernel 7x7 not in conv.kernel_sizes [1, 3]",
                                   "padding top 3 exceeds conv.max_padding top 1",
                                   "padding bottom 3 exceeds conv.max_padding bottom 1",
                                   "k_h 7 outside what conv's field 'A5.kh_m1' holds (1..4)",
                                   "k_w 7 outside what conv's field 'A5.kw_m1' holds (1..4)",
                                   "pad_top 3 outside what conv's field 'A5.pt' holds (0..1)"};
  EXPECT_EQ(p.reasons, want);
}

TEST(NpuLegality, OperationTheNpuDoesNotHave) {
  // npu-small has no pooling at all.
  Placement p = place("graph @main(%x: i8[1,8,8,8] q(0.5, 0)) -> (%y) {\n"
                      "  %y = MaxPool(%x) {kernel_shape=[2, 2], strides=[2, 2]} : "
                      "i8[1,8,4,4] q(0.5, 0) loc(\"mp\")\n"
                      "  return %y\n}\n",
                      "mp", load("npu-small"));
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons, one("the NPU has no pool operation"));
}

// --- Acceptance: kind, geometry, MACs -----------------------------------------------------

TEST(NpuLegality, ConvAccepted) {
  Placement p = place(convGraph("1,16,12,10", "32,16,3,3", "q(0.05, 0)", "32",
                                "kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]",
                                "1,32,6,5"),
                      "c", load("npu-default"));
  ASSERT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  const target::NpuOp &op = *p.op;
  EXPECT_EQ(op.kindName, "conv");
  EXPECT_EQ(op.kind, NPUCC_KIND_CONV);
  EXPECT_EQ(op.inH, 12);
  EXPECT_EQ(op.inW, 10);
  EXPECT_EQ(op.inC, 16);
  EXPECT_EQ(op.outH, 6);
  EXPECT_EQ(op.outW, 5);
  EXPECT_EQ(op.outC, 32);
  EXPECT_EQ(op.kh, 3);
  EXPECT_EQ(op.kw, 3);
  EXPECT_EQ(op.strideH, 2);
  EXPECT_EQ(op.strideW, 2);
  EXPECT_EQ(op.padTop, 1);
  EXPECT_EQ(op.padLeft, 1);
  EXPECT_EQ(op.padBottom, 1);
  EXPECT_EQ(op.padRight, 1);
  EXPECT_FALSE(op.perChannel); // per-tensor weights, NPU has per_tensor
  EXPECT_EQ(op.macs, uint64_t(6 * 5 * 32 * 3 * 3 * 16));
}

TEST(NpuLegality, DepthwiseWithChannelMultiplierTwoOnNpuFourth) {
  TargetDesc t = load(test::testTarget("npu-fourth.json"));
  ASSERT_TRUE(t.operation("depthwise")->allowsDepthMultiplier(2));
  // group 8 = input channels, 16 output channels: multiplier 2.
  std::string g = convGraph("1,8,10,10", "16,1,3,3", "q(0.05, 0)", "16",
                            "group=8, kernel_shape=[3, 3], pads=[1, 1, 1, 1]", "1,16,10,10");
  Placement p = place(g, "c", t);
  ASSERT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  EXPECT_EQ(p.op->kindName, "depthwise");
  EXPECT_EQ(p.op->kind, NPUCC_KIND_DEPTHWISE);
  EXPECT_EQ(p.op->depthMult, 2);
  EXPECT_EQ(p.op->inC, 8);
  EXPECT_EQ(p.op->outC, 16);
  EXPECT_EQ(p.op->inH, 10);
  EXPECT_EQ(p.op->outH, 10);
  EXPECT_EQ(p.op->macs, uint64_t(10 * 10 * 16 * 3 * 3));
  // npu-default's depthwise has multiplier 1 only.
  Placement d = place(g, "c", load("npu-default"));
  EXPECT_FALSE(d.onNpu());
  std::vector<std::string> want = {"channel multiplier 2 not in depthwise.channel_multipliers [1]",
                                   "depth_mult 2 but the depthwise command fixes depth_mult = 1"};
  EXPECT_EQ(d.reasons, want);
}

TEST(NpuLegality, GemmWithTransBAccepted) {
  Placement p = place("graph @main(%a: i8[1,64] q(0.5, 0)) -> (%y) {\n"
                      "  const @w: i8[10,64] q(0.05, 0) = dense<elided>\n"
                      "  const @b: i32[10] = dense<elided>\n"
                      "  %y = Gemm(%a, @w, @b) {transB=1} : i8[1,10] q(0.25, 0) loc(\"fc\")\n"
                      "  return %y\n}\n",
                      "fc", load("npu-default"));
  ASSERT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  EXPECT_EQ(p.op->kindName, "matmul");
  EXPECT_EQ(p.op->kind, NPUCC_KIND_MATMUL);
  EXPECT_EQ(p.op->m, 1);
  EXPECT_EQ(p.op->k, 64);
  EXPECT_EQ(p.op->n, 10); // from W's first dimension (transB)
  EXPECT_EQ(p.op->macs, uint64_t(64 * 10));
}

TEST(NpuLegality, MaxPoolAccepted) {
  Placement p = place("graph @main(%x: i8[1,8,8,6] q(0.5, 0)) -> (%y) {\n"
                      "  %y = MaxPool(%x) {kernel_shape=[3, 3], pads=[1, 1, 1, 1], "
                      "strides=[2, 2]} : i8[1,8,4,3] q(0.5, 0) loc(\"mp\")\n"
                      "  return %y\n}\n",
                      "mp", load("npu-default"));
  ASSERT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  EXPECT_EQ(p.op->kindName, "pool");
  EXPECT_EQ(p.op->kind, NPUCC_KIND_POOL);
  EXPECT_EQ(p.op->poolKind, NPUCC_POOL_MAX);
  EXPECT_EQ(p.op->inC, 8);
  EXPECT_EQ(p.op->inH, 8);
  EXPECT_EQ(p.op->inW, 6);
  EXPECT_EQ(p.op->outH, 4);
  EXPECT_EQ(p.op->outW, 3);
  EXPECT_EQ(p.op->kh, 3);
  EXPECT_EQ(p.op->strideH, 2);
  EXPECT_EQ(p.op->padTop, 1);
  EXPECT_EQ(p.op->macs, 0u);
}

TEST(NpuLegality, AddAccepted) {
  Placement p = place("graph @main(%a: i8[1,4,5,6] q(0.5, 1), %b: i8[1,4,5,6] q(0.25, -2)) -> (%y) {\n"
                      "  %y = Add(%a, %b) : i8[1,4,5,6] q(0.75, 3) loc(\"add\")\n"
                      "  return %y\n}\n",
                      "add", load("npu-default"));
  ASSERT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  EXPECT_EQ(p.op->kindName, "eltwise");
  EXPECT_EQ(p.op->kind, NPUCC_KIND_ELTWISE);
  EXPECT_EQ(p.op->length, 4 * 5 * 6);
}

// --- npu-partition with PassContext::target ---------------------------------------------

/// conv -> maxpool -> conv (NPU, NHWC between them), a Softmax (CPU) and an
/// Add of the last conv's result and the Softmax's.
const char *const ChainIr = R"(graph @main(%x: i8[1,16,8,8] q(0.1, 0)) -> (%out) {
  const @w: i8[16,16,3,3] q(0.05, 0) = dense<elided>
  const @b: i32[16] = dense<elided>
  const @w2: i8[16,16,1,1] q(0.05, 0) = dense<elided>
  %c = Conv(%x, @w, @b) {kernel_shape=[3, 3], pads=[1, 1, 1, 1]} : i8[1,16,8,8] q(0.1, 0) loc("conv1")
  %p = MaxPool(%c) {kernel_shape=[2, 2], strides=[2, 2]} : i8[1,16,4,4] q(0.1, 0) loc("pool")
  %c2 = Conv(%p, @w2) {kernel_shape=[1, 1]} : i8[1,16,4,4] q(0.1, 0) loc("conv2")
  %s = Softmax(%c2) {axis=3} : i8[1,16,4,4] q(0.00390625, -128) loc("softmax")
  %out = Add(%c2, %s) : i8[1,16,4,4] q(0.2, 0) loc("add")
  return %out
}
)";

struct Partitioned {
  std::unique_ptr<ir::Graph> g;
  passes::PassContext ctx;
  std::string text;
};

Partitioned partition(const std::string &text, const TargetDesc &t) {
  Partitioned r;
  r.g = parse(text);
  if (!r.g)
    return r;
  r.ctx.target = &t;
  Status s = passes::runPipeline(*r.g, "npu-partition", r.ctx);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().str());
  EXPECT_TRUE(ir::verifyGraph(*r.g).ok());
  r.text = ir::printGraph(*r.g);
  return r;
}

TEST(NpuPartition, MarksNpuNodesAndUsesNhwcBetweenThem) {
  TargetDesc t = load("npu-default");
  Partitioned r = partition(ChainIr, t);
  ASSERT_TRUE(r.g);
  std::map<std::string, const ir::Node *> byName;
  int transposes = 0;
  for (const auto &n : r.g->nodes()) {
    byName[n->name] = n.get();
    transposes += n->kind == ir::OpKind::Transpose;
  }
  ASSERT_TRUE(byName.count("conv1") && byName.count("pool") && byName.count("conv2"));
  EXPECT_EQ(byName["conv1"]->attrString("npu", ""), "conv");
  EXPECT_EQ(byName["pool"]->attrString("npu", ""), "pool");
  EXPECT_EQ(byName["conv2"]->attrString("npu", ""), "conv");
  EXPECT_EQ(byName["softmax"]->attrString("npu", ""), "");
  for (const char *n : {"conv1", "pool", "conv2"}) {
    EXPECT_EQ(byName[n]->attrString("layout", ""), "NHWC") << n;
    EXPECT_EQ(byName[n]->output(0)->shape.back(), 16) << n << ": channels last";
  }
  // conv1 reads the NHWC form of the graph input, produced by one Transpose.
  const ir::Value *in = byName["conv1"]->input(0);
  ASSERT_TRUE(in->producer);
  EXPECT_EQ(in->producer->kind, ir::OpKind::Transpose);
  EXPECT_EQ(in->producer->attrInts("perm"), (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_EQ(in->producer->input(0), r.g->inputs[0]);
  // No Transpose between NPU nodes: pool reads conv1's result, conv2 pool's.
  EXPECT_EQ(byName["pool"]->input(0), byName["conv1"]->output(0));
  EXPECT_EQ(byName["conv2"]->input(0), byName["pool"]->output(0));
  // The CPU Softmax sees NCHW through a Transpose back.
  const ir::Value *sIn = byName["softmax"]->input(0);
  ASSERT_TRUE(sIn->producer);
  EXPECT_EQ(sIn->producer->kind, ir::OpKind::Transpose);
  EXPECT_EQ(sIn->producer->attrInts("perm"), (std::vector<int64_t>{0, 3, 1, 2}));
  EXPECT_EQ(sIn->shape, (ir::Shape{1, 16, 4, 4}));
  // Exactly the two boundaries (in -> conv1, conv2 -> CPU): the Add reads the
  // same NCHW value as the Softmax instead of a second Transpose.
  EXPECT_EQ(transposes, 2) << r.text;
  EXPECT_EQ(r.ctx.stats["npu-partition.transposes"], 2);
  // The Add runs on the NPU too (eltwise), in NCHW: one operand is the CPU's.
  EXPECT_EQ(r.ctx.stats["npu-partition.npu"], 4);
  EXPECT_EQ(byName["add"]->attrString("npu", ""), "eltwise");
  EXPECT_FALSE(byName["add"]->hasAttr("layout"));
  EXPECT_EQ(byName["add"]->input(0), sIn);
  EXPECT_EQ(r.g->outputs[0]->shape, (ir::Shape{1, 16, 4, 4})); // the graph output stays NCHW
}

/// Random values for every constant (the text elides them: zeros).
void randomizeConstants(ir::Graph &g, unsigned seed) {
  std::mt19937 rng(seed);
  for (const auto &v : g.values())
    if (v->isConstant()) {
      int lim = v->dtype == ir::DType::I32 ? 200 : 6;
      std::uniform_int_distribution<int> d(-lim, lim);
      for (int64_t i = 0; i < v->constant->numElements(); ++i)
        v->constant->setDouble(i, d(rng));
    }
}

TEST(NpuPartition, ReferenceResultsUnchanged) {
  // The partitioned graph (NHWC nodes, Transposes) computes what the original
  // computes: the layout change is only a change of representation.
  TargetDesc t = load("npu-default");
  auto before = parse(ChainIr);
  ASSERT_TRUE(before);
  randomizeConstants(*before, 7);
  auto after = before->clone();
  passes::PassContext ctx;
  ctx.target = &t;
  ASSERT_TRUE(passes::runPipeline(*after, "npu-partition", ctx).ok());
  ASSERT_GT(ctx.stats["npu-partition.transposes"], 0);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(-128, 127);
  ir::Tensor x(ir::DType::I8, {1, 16, 8, 8});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.setDouble(i, d(rng));
  auto a = interp::runGraph(*before, {{"x", x}});
  auto b = interp::runGraph(*after, {{"x", x}});
  ASSERT_TRUE(a.ok()) << a.error().str();
  ASSERT_TRUE(b.ok()) << b.error().str();
  const ir::Tensor &ya = a->at("out"), &yb = b->at("out");
  ASSERT_EQ(ya.shape(), yb.shape());
  int differ = 0, nonzero = 0;
  for (int64_t i = 0; i < ya.numElements(); ++i) {
    differ += ya.getDouble(i) != yb.getDouble(i);
    nonzero += ya.getDouble(i) != 0;
  }
  EXPECT_EQ(differ, 0);
  EXPECT_GT(nonzero, 0); // the comparison means something
}

TEST(NpuPartition, NoTargetChangesNothing) {
  auto g = parse(ChainIr);
  ASSERT_TRUE(g);
  std::string before = ir::printGraph(*g);
  passes::PassContext ctx; // target null
  ASSERT_TRUE(passes::runPipeline(*g, "npu-partition", ctx).ok());
  EXPECT_EQ(ir::printGraph(*g), before);
}

TEST(NpuPartition, TheDescriptionDecides) {
  // npu-small has no pooling: the MaxPool stays on the CPU in NCHW, so the
  // chain splits in two NPU regions, each with its own boundary Transposes.
  TargetDesc t = load("npu-small");
  Partitioned r = partition(ChainIr, t);
  ASSERT_TRUE(r.g);
  int transposes = 0;
  for (const auto &n : r.g->nodes()) {
    transposes += n->kind == ir::OpKind::Transpose;
    if (n->name == "pool") {
      EXPECT_EQ(n->attrString("npu", ""), "");
      EXPECT_FALSE(n->hasAttr("layout"));
      EXPECT_EQ(n->input(0)->shape, (ir::Shape{1, 16, 8, 8}));
    }
    if (n->name == "conv1" || n->name == "conv2") {
      EXPECT_EQ(n->attrString("npu", ""), "conv") << n->name;
    }
  }
  // in -> conv1, conv1 -> pool, pool -> conv2, conv2 -> softmax/add.
  EXPECT_EQ(transposes, 4) << r.text;
  EXPECT_EQ(r.ctx.stats["npu-partition.npu"], 3); // conv1, conv2, add
  EXPECT_EQ(r.ctx.stats["npu-partition.cpu"], 1); // the pool: a candidate kind refused
}

// --- A pre-quantized shared model ---------------------------------------------------------

TEST(NpuPartition, KeywordSpottingModelOnNpuDefault) {
  // MLPerf Tiny KWS (DS-CNN), QDQ: a 10x4 first conv the NPU cannot run, four
  // depthwise + pointwise pairs it can, an AveragePool it refuses, the dense layer.
  std::string model = std::string(NPUCC_SOURCE_DIR) + "/../shared/models/mlpt_kws_qdq/model.onnx";
  if (!std::filesystem::exists(model))
    NPUCC_SKIP() << model << " not present";
  driver::CompileOptions o;
  o.modelPath = model;
  o.target = "npu-default";
  o.npuHandoff = false; // each layer alone, so none beats its per-layer ideal
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  std::map<std::string, int> kinds;
  const ir::Node *first = nullptr, *avg = nullptr;
  for (const auto &n : r->graph->nodes()) {
    std::string k = n->attrString("npu", "");
    if (!k.empty())
      ++kinds[k];
    if (n->name == "StatefulPartitionedCall/functional_1/conv2d/BiasAdd")
      first = n.get();
    if (n->kind == ir::OpKind::AveragePool)
      avg = n.get();
    if (k.empty())
      continue;
    // Every NPU node was lowered with a plan that fits the description.
    const lower::NpuLayerPlan *plan = r->npuLowering->plan(n->name);
    ASSERT_TRUE(plan) << n->name;
    target::Placement p = target::placeNode(*n, r->target);
    ASSERT_TRUE(p.onNpu()) << n->name;
    EXPECT_EQ(plan->macs, p.op->macs) << n->name;
    EXPECT_GT(plan->tiles, 0) << n->name;
    EXPECT_LE(plan->scratchpadBytes, r->target.scratchpads[0].size) << n->name;
    EXPECT_GE(plan->cycles, plan->computeCycles) << n->name;
    EXPECT_GE(plan->cycles, plan->idealCycles) << n->name << " beats its per-layer ideal";
  }
  EXPECT_EQ(kinds["conv"], 4);
  EXPECT_EQ(kinds["depthwise"], 4);
  EXPECT_EQ(kinds["matmul"], 1);
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->hasAttr("npu"));
  std::vector<std::string> want = {"kernel 10x4 not in conv.kernel_sizes [1, 2, 3, 5, 7]",
                                   "padding top 4 exceeds conv.max_padding top 3",
                                   "padding bottom 5 exceeds conv.max_padding bottom 3"};
  EXPECT_EQ(target::placeNode(*first, r->target).reasons, want);
  ASSERT_TRUE(avg);
  EXPECT_FALSE(avg->hasAttr("npu"));
  // The whole program's NPU MACs are those of the NPU layers.
  uint64_t macs = 0;
  for (const auto &n : r->graph->nodes())
    if (const lower::NpuLayerPlan *plan = r->npuLowering->plan(n->name))
      macs += plan->macs;
  EXPECT_EQ(lower::estimateProgram(r->program, r->target).macs, macs);
}

} // namespace
