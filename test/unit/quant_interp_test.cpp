//===- quant_interp_test.cpp - Integer reference interpreter vs. ONNX data -===//
//
// Imports ONNX's quantized backend node tests (data we did not write) and the
// pre-quantized models of shared/models, runs fold-qdq, evaluates the graph
// with the integer reference interpreter (typed nodes) and the float one
// (float regions), and compares with the expected outputs: node tests
// exactly; models within one quantization step (in the int domain of the
// final DequantizeLinear when the model ends in one, else within the last
// DequantizeLinear's scale on the float output).
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Compare.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/interp/QuantInterpreter.h"
#include "npucc/onnx/Importer.h"
#include "npucc/passes/Pass.h"

#include "CiSkip.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <fstream>

#include <cmath>
#include <filesystem>
#include <map>

#include "NodeTestModels.h"

namespace {

namespace fs = std::filesystem;
using namespace npucc;
using ir::DType;

using npucc::testing::constantizedModel;
using ir::Tensor;

/// Runs every node in order: typed ones in the integer interpreter.
Result<std::map<std::string, Tensor>> runMixed(const ir::Graph &g,
                                               const std::map<std::string, Tensor> &inputs) {
  std::map<const ir::Value *, Tensor> vals;
  for (const ir::Value *v : g.inputs) {
    auto it = inputs.find(v->name);
    if (it == inputs.end())
      return error("missing input " + v->name);
    vals[v] = it->second;
  }
  for (const auto &n : g.nodes()) {
    std::vector<const Tensor *> in;
    for (const ir::Value *v : n->inputs) {
      if (!v) {
        in.push_back(nullptr);
        continue;
      }
      if (v->isConstant()) {
        in.push_back(v->constant.get());
        continue;
      }
      auto it = vals.find(v);
      if (it == vals.end())
        return error("value " + v->name + " not computed");
      in.push_back(&it->second);
    }
    auto r = interp::canEvaluateQuantized(*n) ? interp::evaluateQuantizedNode(*n, in)
                                               : interp::evaluateNode(*n, in);
    if (!r)
      return r.error();
    for (size_t i = 0; i < n->outputs.size() && i < r->size(); ++i)
      vals[n->outputs[i]] = std::move((*r)[i]);
  }
  std::map<std::string, Tensor> out;
  for (const ir::Value *v : g.outputs) {
    if (v->isConstant())
      out[v->name] = *v->constant;
    else if (vals.count(v))
      out[v->name] = vals[v];
    else
      return error("output " + v->name + " not computed");
  }
  return out;
}

struct Loaded {
  std::unique_ptr<ir::Graph> g;
  std::map<std::string, Tensor> inputs;
  std::vector<Tensor> expected;
};

Loaded load(const fs::path &dir, bool nodeTest) {
  Loaded l;
  std::string path = nodeTest ? constantizedModel(dir) : (dir / "model.onnx").string();
  EXPECT_FALSE(path.empty());
  // Dynamic input dims (mobilenetv2_12_int8) are bound from the test data.
  npucc::onnx::ImportOptions opts;
  for (int i = 0; !nodeTest; ++i) {
    fs::path ip = dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(ip))
      break;
    std::string name;
    auto t = npucc::onnx::readTensorProto(ip.string(), &name);
    if (t.ok() && !name.empty())
      opts.shapes[name] = t->shape();
  }
  auto g = npucc::onnx::importModel(path, opts);
  if (nodeTest)
    fs::remove(path);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  if (!g.ok())
    return l;
  l.g = g.take();
  passes::PassContext ctx;
  auto st = passes::runPipeline(*l.g, "fold-qdq,dce", ctx);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  fs::path data = dir / "test_data_set_0";
  for (size_t i = 0; i < l.g->inputs.size(); ++i) {
    auto t = npucc::onnx::readTensorProto((data / ("input_" + std::to_string(i) + ".pb")).string());
    EXPECT_TRUE(t.ok());
    if (t.ok())
      l.inputs[l.g->inputs[i]->name] = t.take();
  }
  for (size_t i = 0; i < l.g->outputs.size(); ++i) {
    auto t = npucc::onnx::readTensorProto((data / ("output_" + std::to_string(i) + ".pb")).string());
    EXPECT_TRUE(t.ok());
    if (t.ok())
      l.expected.push_back(t.take());
  }
  return l;
}

//===--- ONNX node tests: exact -----------------------------------------===//

class QuantNodeTest : public ::testing::TestWithParam<const char *> {};

TEST_P(QuantNodeTest, MatchesExactly) {
  fs::path dir = fs::path("/usr/share/libonnx-testdata/data/node") / GetParam();
  if (!fs::exists(dir))
    NPUCC_SKIP() << "no ONNX test data at " << dir;
  Loaded l = load(dir, true);
  ASSERT_TRUE(l.g);
  // Every compute node is evaluated by the integer interpreter.
  for (const auto &n : l.g->nodes())
    EXPECT_TRUE(interp::canEvaluateQuantized(*n)) << n->opName();
  auto r = runMixed(*l.g, l.inputs);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(l.expected.size(), l.g->outputs.size());
  for (size_t i = 0; i < l.expected.size(); ++i) {
    const Tensor &got = r->at(l.g->outputs[i]->name), &want = l.expected[i];
    ASSERT_EQ(got.shape(), want.shape());
    ASSERT_EQ(got.dtype(), want.dtype());
    for (int64_t k = 0; k < want.numElements(); ++k)
      ASSERT_EQ(got.getDouble(k), want.getDouble(k)) << "element " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(OnnxNode, QuantNodeTest,
                         ::testing::Values("test_quantizelinear", "test_quantizelinear_axis",
                                           "test_dequantizelinear", "test_dequantizelinear_axis",
                                           "test_qlinearconv", "test_qlinearmatmul_2D",
                                           "test_qlinearmatmul_3D", "test_basic_convinteger",
                                           "test_convinteger_with_padding",
                                           "test_convinteger_without_padding",
                                           "test_matmulinteger"),
                         [](const auto &info) { return std::string(info.param).substr(5); });

//===--- Shared pre-quantized models: golden outputs in steps -----------===//

class QuantModelTest : public ::testing::TestWithParam<const char *> {};

TEST_P(QuantModelTest, MatchesGoldenInSteps) {
  fs::path dir = fs::path(NPUCC_SOURCE_DIR "/../shared/models") / GetParam();
  if (!fs::exists(dir))
    NPUCC_SKIP() << "no shared models at " << dir;
  Loaded l = load(dir, false);
  ASSERT_TRUE(l.g);
  // fold-qdq left no float compute op between Q/DQ pairs.
  size_t typed = 0;
  for (const auto &n : l.g->nodes()) {
    bool heavy = n->kind == ir::OpKind::Conv || n->kind == ir::OpKind::Gemm ||
                 n->kind == ir::OpKind::MatMul;
    if (heavy) {
      EXPECT_TRUE(n->output(0)->quant.has_value()) << n->name << " stayed float";
    }
    typed += n->output(0)->quant.has_value() && n->kind != ir::OpKind::QuantizeLinear;
  }
  EXPECT_GT(typed, 3u);
  auto r = runMixed(*l.g, l.inputs);
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (size_t i = 0; i < l.expected.size(); ++i) {
    const ir::Value *ov = l.g->outputs[i];
    const Tensor &got = r->at(ov->name), &want = l.expected[i];
    ASSERT_EQ(got.numElements(), want.numElements());
    const ir::Node *p = ov->producer;
    // Top-1 agrees with the golden output.
    int64_t ga = 0, wa = 0;
    for (int64_t k = 1; k < want.numElements(); ++k) {
      ga = got.getDouble(k) > got.getDouble(ga) ? k : ga;
      wa = want.getDouble(k) > want.getDouble(wa) ? k : wa;
    }
    EXPECT_EQ(ga, wa) << "top-1";
    if (p && p->kind == ir::OpKind::DequantizeLinear && p->input(0)->quant) {
      const ir::QuantParams &q = *p->input(0)->quant;
      // The QDQ models (exact rounding) and mobilenetv2_12_int8 (QLinearConv:
      // requant="fp32", ORT's float32 rounding) match ONNX Runtime exactly.
      for (int64_t k = 0; k < want.numElements(); ++k) {
        double gq = std::nearbyint(got.getDouble(k) / q.scale[0]);
        double wq = std::nearbyint(want.getDouble(k) / q.scale[0]);
        EXPECT_EQ(gq, wq) << "element " << k;
      }
    } else {
      // Float tail (e.g. Softmax after the last DequantizeLinear).
      double step = 0;
      for (const auto &n : l.g->nodes())
        if (n->kind == ir::OpKind::DequantizeLinear && n->input(0)->quant)
          step = n->input(0)->quant->scale[0];
      ASSERT_GT(step, 0);
      for (int64_t k = 0; k < want.numElements(); ++k)
        EXPECT_NEAR(got.getDouble(k), want.getDouble(k), step) << "element " << k;
      // A Softmax of a DequantizeLinear: its logits match the golden's exactly.
      driver::OutputQuant oq = driver::classifyOutput(*l.g, *ov);
      if (oq.kind == driver::OutputKind::SoftmaxOfDq) {
        EXPECT_TRUE(driver::compareSteps(got, want, oq, 0).pass) << "softmax logits differ";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shared, QuantModelTest,
                         ::testing::Values("mlpt_kws_qdq", "mlpt_ic_qdq", "mlpt_vww_qdq",
                                           "mlpt_ad_qdq", "torch_ptq_qdq",
                                           "mobilenetv2_12_int8"));

} // namespace
