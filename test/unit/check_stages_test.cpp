//===- check_stages_test.cpp - `npucc check`'s interpreter comparisons -----===//
//
// Issue 23: the C outputs are compared with the interpreter on the compiled
// graph and on earlier stages of the same compile (the graph as imported,
// the graph before the target's rewrites). driver::compareWithInterpreter's
// rules, and compileModel keeping those graphs (keepStageGraphs): the
// pre-target graph computes bit for bit what the compiled graph computes,
// including npu-partition's exact rounding of QLinearConv nodes on the NPU,
// and a planted layout bug in the compiled graph (a same-shape constant left
// NCHW, the bug 57a6826 fixed) separates the two.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Compare.h"
#include "npucc/driver/Driver.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/onnx/Importer.h"

#include "OnnxModelBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

using namespace npucc;
using driver::OutputKind;
using driver::OutputQuant;
using ir::DType;
using ir::Tensor;

namespace {

Tensor dq(std::vector<float> v) {
  return Tensor::fromFloats({1, static_cast<int64_t>(v.size())}, v);
}

OutputQuant dqKind(double s) {
  OutputQuant q;
  q.kind = OutputKind::Dequantized;
  q.scale = s;
  return q;
}

TEST(CheckStages, ExactRuleOfAQuantizedProgramIsBitExact) {
  Tensor want = dq({0.5f, 1.0f, -0.25f});
  auto same = driver::compareWithInterpreter(want, want, dqKind(0.25), true, true, 1e-4, 0);
  EXPECT_TRUE(same.pass && same.bitExact);
  EXPECT_EQ(same.rule, "bit-exact");
  auto oneStep =
      driver::compareWithInterpreter(dq({0.5f, 1.25f, -0.25f}), want, dqKind(0.25), true, true,
                                     1e-4, 5); // `steps` does not apply to exact stages
  EXPECT_FALSE(oneStep.pass);
  EXPECT_EQ(oneStep.cmp.mismatches, 1);
  // A float output of a quantized program: bit-exact too, one ulp fails.
  Tensor f = Tensor::fromFloats({2}, {1.0f, 2.0f});
  Tensor g = Tensor::fromFloats({2}, {1.0f, std::nextafter(2.0f, 3.0f)});
  EXPECT_FALSE(driver::compareWithInterpreter(g, f, OutputQuant{}, true, true, 1e-4, 0).pass);
}

TEST(CheckStages, ExactRuleOfSoftmaxOfDqNeedsEqualLogitsOnly) {
  OutputQuant q;
  q.kind = OutputKind::SoftmaxOfDq;
  q.scale = 0.5;
  q.axis = 1;
  Tensor want = Tensor::fromFloats({1, 3}, {0.2f, 0.3f, 0.5f});
  Tensor near = Tensor::fromFloats({1, 3}, {0.2f, 0.3f, std::nextafter(0.5f, 1.0f)});
  auto c = driver::compareWithInterpreter(near, want, q, true, true, 1e-4, 0);
  EXPECT_FALSE(c.bitExact);
  EXPECT_TRUE(c.pass);
  Tensor off = Tensor::fromFloats({1, 3}, {0.1f, 0.4f, 0.5f});
  EXPECT_FALSE(driver::compareWithInterpreter(off, want, q, true, true, 1e-4, 0).pass);
}

TEST(CheckStages, ImportedStageAllowsTheGivenSteps) {
  Tensor want = dq({0.5f, 1.0f, -0.25f});
  Tensor one = dq({0.5f, 1.25f, -0.25f}), two = dq({0.5f, 1.5f, -0.25f});
  auto c1 = driver::compareWithInterpreter(one, want, dqKind(0.25), true, false, 1e-4, 1);
  EXPECT_TRUE(c1.pass);
  EXPECT_FALSE(c1.bitExact);
  EXPECT_EQ(c1.rule, "steps<=1");
  EXPECT_DOUBLE_EQ(c1.cmp.maxSteps, 1.0);
  EXPECT_FALSE(driver::compareWithInterpreter(two, want, dqKind(0.25), true, false, 1e-4, 1).pass);
  // Integer outputs: |got - want|.
  OutputQuant iq;
  iq.kind = OutputKind::Integer;
  Tensor a = Tensor::fromInts(DType::I8, {3}, {1, 2, 3}),
         b = Tensor::fromInts(DType::I8, {3}, {1, 4, 3});
  EXPECT_FALSE(driver::compareWithInterpreter(b, a, iq, true, false, 1e-4, 1).pass);
  EXPECT_TRUE(driver::compareWithInterpreter(b, a, iq, true, false, 1e-4, 2).pass);
}

TEST(CheckStages, FloatProgramsCompareWithinTheTolerance) {
  Tensor want = Tensor::fromFloats({3}, {1.0f, -2.0f, 4.0f});
  Tensor near = Tensor::fromFloats({3}, {1.0f, -2.0f, 4.0f + 2e-4f});
  Tensor far = Tensor::fromFloats({3}, {1.0f, -2.0f, 4.01f});
  for (bool exact : {true, false}) {
    auto c = driver::compareWithInterpreter(near, want, OutputQuant{}, false, exact, 1e-4, 0);
    EXPECT_TRUE(c.pass) << exact;
    EXPECT_EQ(c.rule, "rel<=0.0001");
    EXPECT_FALSE(
        driver::compareWithInterpreter(far, want, OutputQuant{}, false, exact, 1e-4, 0).pass);
  }
}

// The diff tier's regression of 57a6826: Conv1x1 -> Add(same-shape constant), [1,3,2,2].
std::string regression(const std::string &name) {
  return std::string(NPUCC_SOURCE_DIR) + "/test/diff/regressions/" + name;
}

std::map<std::string, Tensor> inputsOf(const ir::Graph &g, const std::string &dir) {
  auto t = npucc::onnx::readTensorProto(dir + "/test_data_set_0/input_0.pb");
  EXPECT_TRUE(t.ok());
  std::map<std::string, Tensor> in;
  if (t.ok())
    in.emplace(g.inputs[0]->name, t.take());
  return in;
}

Tensor firstOutput(const ir::Graph &g, const std::map<std::string, Tensor> &in) {
  auto r = interp::runGraph(g, in);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r->at(g.outputs[0]->name) : Tensor();
}

bool anyNode(const ir::Graph &g, const std::function<bool(const ir::Node &)> &f) {
  for (const auto &n : g.nodes())
    if (f(*n))
      return true;
  return false;
}

TEST(CheckStages, CompileKeepsTheImportedAndThePreTargetGraph) {
  std::string dir = regression("npu_add_same_shape_constant");
  driver::CompileOptions o;
  o.modelPath = dir + "/model.onnx";
  o.target = "npu-default";
  auto plain = driver::compileModel(o);
  ASSERT_TRUE(plain.ok()) << plain.error().str();
  EXPECT_FALSE(plain->importedGraph || plain->preTargetGraph); // only when asked

  o.keepStageGraphs = true;
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_TRUE(r->importedGraph && r->preTargetGraph);
  auto isQdq = [](const ir::Node &n) { return n.kind == ir::OpKind::DequantizeLinear; };
  auto onNpu = [](const ir::Node &n) { return n.hasAttr("npu"); };
  EXPECT_TRUE(anyNode(*r->importedGraph, isQdq)); // before fold-qdq
  EXPECT_FALSE(anyNode(*r->preTargetGraph, onNpu));
  EXPECT_TRUE(anyNode(*r->graph, onNpu));

  auto in = inputsOf(*r->graph, dir);
  Tensor fin = firstOutput(*r->graph, in);
  EXPECT_TRUE(fin == firstOutput(*r->preTargetGraph, in));

  // The bug of 57a6826 planted in the compiled graph: the NHWC Add reads the constant in
  // NCHW order while it runs NHWC. The compiled graph's interpreter follows it, the
  // pre-target graph does not.
  bool planted = false;
  for (const auto &n : r->graph->nodes())
    if (n->kind == ir::OpKind::Add && n->attrString("layout", "") == "NHWC")
      for (ir::Value *&v : n->inputs)
        if (v->isConstant() && v->name.find("_nhwc") != std::string::npos) {
          ir::Value *nchw = r->graph->addConstant("planted", *v->constant);
          nchw->quant = v->quant;
          const Tensor &c = *v->constant;
          const ir::Shape &s = c.shape(); // [N,H,W,C]: write the data in NCHW order
          for (int64_t h = 0; h < s[1]; ++h)
            for (int64_t w = 0; w < s[2]; ++w)
              for (int64_t ch = 0; ch < s[3]; ++ch)
                nchw->constant->setInt((ch * s[1] + h) * s[2] + w,
                                       c.getInt((h * s[2] + w) * s[3] + ch));
          v = nchw;
          planted = true;
        }
  ASSERT_TRUE(planted);
  EXPECT_FALSE(firstOutput(*r->graph, in) == firstOutput(*r->preTargetGraph, in));

  o.target = "cpu"; // no target rewrites: no pre-target graph
  auto cpu = driver::compileModel(o);
  ASSERT_TRUE(cpu.ok());
  EXPECT_TRUE(cpu->importedGraph && !cpu->preTargetGraph);
}

// x: i8 [1,4,3,3] -> QLinearConv (1x1, int8 weights) -> i8 [1,4,3,3]: imported with fp32
// requantization, which the NPU replaces by its exact rounding.
std::string qlinearConvModel(const std::filesystem::path &dir) {
  npucc::testing::MB mb(13);
  mb.input("x", {1, 4, 3, 3}, ::onnx::TensorProto::INT8);
  mb.output("y", {1, 4, 3, 3}, ::onnx::TensorProto::INT8);
  auto raw = [&](const std::string &n, int type, std::vector<int64_t> dims, std::string bytes) {
    auto *t = mb.g->add_initializer();
    t->set_name(n);
    t->set_data_type(type);
    for (int64_t d : dims)
      t->add_dims(d);
    t->set_raw_data(bytes);
  };
  std::string w;
  for (int i = 0; i < 16; ++i)
    w.push_back(static_cast<char>((i * 37) % 255 - 127));
  raw("w", ::onnx::TensorProto::INT8, {4, 4, 1, 1}, w);
  raw("wz", ::onnx::TensorProto::INT8, {}, std::string(1, '\0'));
  raw("xz", ::onnx::TensorProto::INT8, {}, std::string(1, '\x03'));
  raw("yz", ::onnx::TensorProto::INT8, {}, std::string(1, '\xfb'));
  mb.floats("xs", {}, {0.05f});
  mb.floats("ws", {}, {0.01f});
  mb.floats("ys", {}, {0.037f});
  mb.node("QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"y"}, "qconv")
      ->add_attribute()
      ->CopyFrom([] {
        ::onnx::AttributeProto a;
        a.set_name("kernel_shape");
        a.set_type(::onnx::AttributeProto::INTS);
        a.add_ints(1);
        a.add_ints(1);
        return a;
      }());
  return mb.save(dir);
}

TEST(CheckStages, PreTargetGraphRoundsLikeTheNpu) {
  npucc::testing::TempDir tmp("stages");
  driver::CompileOptions o;
  o.modelPath = qlinearConvModel(tmp.path);
  o.target = "npu-default";
  o.keepStageGraphs = true;
  auto requantOf = [](const ir::Graph &g) {
    for (const auto &n : g.nodes())
      if (n->kind == ir::OpKind::Conv)
        return n->attrString("requant", "none");
    return std::string("no conv");
  };
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_TRUE(r->stats.count("npu-partition.rounding-exact"));
  EXPECT_EQ(requantOf(*r->graph), "none");
  ASSERT_TRUE(r->preTargetGraph);
  EXPECT_EQ(requantOf(*r->preTargetGraph), "none"); // npu-partition's change applied
  EXPECT_EQ(requantOf(*r->importedGraph), "fp32");  // as imported

  o.requant = "fp32"; // stays on the CPU with fp32 rounding: nothing to apply
  auto f = driver::compileModel(o);
  ASSERT_TRUE(f.ok()) << f.error().str();
  EXPECT_EQ(requantOf(*f->graph), "fp32");
  if (f->preTargetGraph) {
    EXPECT_EQ(requantOf(*f->preTargetGraph), "fp32");
  }
}

/// On an NPU whose requantization stage is fp32_scale (test/target/npu-fp32lut.json), a node
/// with the exact rounding takes the NPU's float32 rounding (requant="fp32") in the final
/// graph and in the pre-target graph, so both interpreters compute what the NPU computes;
/// `--requant exact` keeps the exact rounding and the node on the CPU.
TEST(CheckStages, PreTargetGraphTakesTheNpusFp32Rounding) {
  driver::CompileOptions o;
  o.modelPath = std::string(NPUCC_SOURCE_DIR) + "/models/tinycnn_int8/model.onnx";
  o.target = std::string(NPUCC_SOURCE_DIR) + "/test/target/npu-fp32lut.json";
  o.keepStageGraphs = true;
  auto conv = [](const ir::Graph &g) -> const ir::Node * {
    for (const auto &n : g.nodes())
      if (n->kind == ir::OpKind::Conv)
        return n.get();
    return nullptr;
  };
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_TRUE(r->stats.count("npu-partition.rounding-fp32"));
  EXPECT_FALSE(r->stats.count("npu-partition.rounding-exact"));
  ASSERT_TRUE(conv(*r->graph) && r->preTargetGraph && conv(*r->preTargetGraph));
  EXPECT_EQ(conv(*r->graph)->attrString("npu", ""), "conv");
  EXPECT_EQ(conv(*r->graph)->attrString("requant", "none"), "fp32");
  EXPECT_EQ(conv(*r->preTargetGraph)->attrString("requant", "none"), "fp32");

  o.requant = "exact";
  auto e = driver::compileModel(o);
  ASSERT_TRUE(e.ok()) << e.error().str();
  EXPECT_FALSE(e->stats.count("npu-partition.rounding-fp32"));
  ASSERT_TRUE(conv(*e->graph));
  EXPECT_EQ(conv(*e->graph)->attrString("npu", ""), "");
  EXPECT_EQ(conv(*e->graph)->attrString("requant", "none"), "none");
}

} // namespace
