//===- quant_import_test.cpp - Pre-quantized ONNX import and fold-qdq ------===//
//
// The Ops.def rows of the QLinear*/ConvInteger/MatMulInteger ops, their
// import into typed integer IR (ONNX node tests and the com.microsoft ops of
// the ONNX-zoo mobilenetv2_12_int8), fold-qdq on the QDQ models of
// shared/models (every Conv/Gemm/MatMul typed, u8 converted to i8) and
// fold-qdq being a no-op on a float model.
//
//===----------------------------------------------------------------------===//
#include "npucc/ir/Printer.h"
#include "npucc/onnx/Importer.h"
#include "npucc/passes/Pass.h"

#include "CiSkip.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <fstream>

#include <filesystem>

#include "NodeTestModels.h"

namespace {

namespace fs = std::filesystem;
using namespace npucc;
using ir::DType;

using npucc::testing::constantizedModel;
using ir::OpKind;

const char *kNode = "/usr/share/libonnx-testdata/data/node/";

std::unique_ptr<ir::Graph> importOrFail(const std::string &path) {
  auto g = npucc::onnx::importModel(path);
  EXPECT_TRUE(g.ok()) << path << ": " << (g.ok() ? "" : g.error().message);
  return g.ok() ? g.take() : nullptr;
}

TEST(QuantOps, TableRows) {
  for (const char *op : {"QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger"}) {
    auto k = ir::opFromName(op, "");
    ASSERT_TRUE(k.has_value()) << op;
    EXPECT_TRUE(ir::opInfo(*k).flags & ir::OPF_QUANT) << op;
  }
  for (const char *op : {"QLinearAdd", "QLinearMul", "QLinearAveragePool",
                         "QLinearGlobalAveragePool", "QLinearConcat"}) {
    auto k = ir::opFromName(op, "com.microsoft");
    ASSERT_TRUE(k.has_value()) << op;
    EXPECT_TRUE(ir::opInfo(*k).flags & ir::OPF_QUANT) << op;
    EXPECT_FALSE(ir::opFromName(op, "").has_value()) << op << " is not in the ONNX domain";
  }
}

TEST(QuantImport, QLinearConvBecomesTypedConv) {
  fs::path dir = fs::path(kNode) / "test_qlinearconv";
  if (!fs::exists(dir))
    NPUCC_SKIP() << dir << " missing";
  std::string p = constantizedModel(dir);
  ASSERT_FALSE(p.empty());
  auto g = importOrFail(p);
  fs::remove(p);
  auto xs = npucc::onnx::readTensorProto((dir / "test_data_set_0" / "input_1.pb").string());
  auto xz = npucc::onnx::readTensorProto((dir / "test_data_set_0" / "input_2.pb").string());
  ASSERT_TRUE(xs.ok() && xz.ok());
  ASSERT_TRUE(g);
  ASSERT_EQ(g->nodes().size(), 1u);
  const ir::Node &n = *g->nodes()[0];
  EXPECT_EQ(n.kind, OpKind::Conv);
  ASSERT_GE(n.inputs.size(), 2u);
  ASSERT_TRUE(n.input(0)->quant && n.input(1)->quant && n.output(0)->quant);
  EXPECT_EQ(n.output(0)->dtype, DType::U8);     // declared model type kept at the boundary
  EXPECT_FLOAT_EQ(n.input(0)->quant->scale[0], static_cast<float>(xs->getDouble(0)));
  EXPECT_EQ(n.input(0)->quant->zeroPoint[0], xz->getInt(0));
  EXPECT_TRUE(n.hasAttr("kernel_shape") && n.hasAttr("pads"));
}

TEST(QuantImport, ScalesAsGraphInputsWithInitializersAreConstants) {
  // QLinearConv / QLinearMatMul whose scales and zero points are graph inputs that
  // also have initializers: they are constants, and the node becomes typed.
  for (const char *c : {"test_qlinearconv", "test_qlinearmatmul_2D"}) {
    fs::path dir = fs::path(kNode) / c;
    if (!fs::exists(dir))
      NPUCC_SKIP() << dir << " missing";
    std::string p = constantizedModel(dir, /*keepInputs=*/true);
    ASSERT_FALSE(p.empty());
    auto g = importOrFail(p);
    fs::remove(p);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->inputs.size(), 1u) << c; // the data input only
    ASSERT_EQ(g->nodes().size(), 1u);
    const ir::Node &n = *g->nodes()[0];
    EXPECT_TRUE(n.kind == OpKind::Conv || n.kind == OpKind::MatMul) << c;
    EXPECT_TRUE(n.input(0)->quant && n.output(0)->quant) << c;
    EXPECT_EQ(n.attrString("requant", "exact"), "fp32") << c;
  }
}

TEST(QuantImport, IntegerOpsHaveI32Output) {
  for (const char *c : {"test_convinteger_with_padding", "test_matmulinteger"}) {
    fs::path dir = fs::path(kNode) / c;
    if (!fs::exists(dir))
      NPUCC_SKIP() << dir << " missing";
    std::string p = constantizedModel(dir);
    ASSERT_FALSE(p.empty());
    auto g = importOrFail(p);
    fs::remove(p);
    ASSERT_TRUE(g);
    ASSERT_EQ(g->nodes().size(), 1u);
    const ir::Node &n = *g->nodes()[0];
    EXPECT_TRUE(n.kind == OpKind::Conv || n.kind == OpKind::MatMul) << c;
    EXPECT_EQ(n.output(0)->dtype, DType::I32) << c;
    EXPECT_FALSE(n.output(0)->quant) << c;
    EXPECT_TRUE(n.input(0)->quant) << c;
  }
}

fs::path shared(const char *m) { return fs::path(NPUCC_SOURCE_DIR "/../shared/models") / m; }

TEST(QuantImport, MobilenetInt8ComMicrosoft) {
  fs::path p = shared("mobilenetv2_12_int8") / "model.onnx";
  if (!fs::exists(p))
    NPUCC_SKIP() << p << " missing";
  npucc::onnx::ImportOptions opts;
  opts.shapes["input"] = {1, 3, 224, 224};
  auto gr = npucc::onnx::importModel(p.string(), opts);
  ASSERT_TRUE(gr.ok()) << gr.error().message;
  auto g = gr.take();
  size_t adds = 0, convs = 0, matmuls = 0;
  for (const auto &n : g->nodes()) {
    bool boundary = n->kind == OpKind::QuantizeLinear || n->kind == OpKind::DequantizeLinear;
    EXPECT_TRUE(boundary || !(n->info().flags & ir::OPF_QUANT)) << n->opName();
    adds += n->kind == OpKind::Add && n->output(0)->quant;
    convs += n->kind == OpKind::Conv && n->output(0)->quant;
    matmuls += n->kind == OpKind::MatMul && n->output(0)->quant;
    // QLinearConv/QLinearMatMul keep ONNX Runtime's float32 requantization; the
    // com.microsoft QLinearAdd does not get the attribute.
    bool product = n->kind == OpKind::Conv || n->kind == OpKind::MatMul;
    EXPECT_EQ(n->attrString("requant", "exact"), product ? "fp32" : "exact") << n->name;
  }
  EXPECT_EQ(adds, 11u);
  EXPECT_EQ(convs, 52u);
  EXPECT_EQ(matmuls, 1u);
  passes::PassContext ctx;
  ASSERT_TRUE(passes::runPipeline(*g, "fold-qdq", ctx).ok());
  EXPECT_GT(ctx.stats["fold-qdq.u8-to-i8"], 50); // activations (weights are i8)
  for (const auto &v : g->values())
    if (v->quant && !g->isGraphInput(v.get()) && !g->isGraphOutput(v.get()) &&
        v->dtype != DType::I32) {
      EXPECT_EQ(v->dtype, DType::I8) << v->name;
    }
}

class FoldQdqModel : public ::testing::TestWithParam<const char *> {};

TEST_P(FoldQdqModel, AllMatrixOpsTyped) {
  fs::path p = shared(GetParam()) / "model.onnx";
  if (!fs::exists(p))
    NPUCC_SKIP() << p << " missing";
  auto g = importOrFail(p.string());
  ASSERT_TRUE(g);
  passes::PassContext ctx;
  auto st = passes::runPipeline(*g, "fold-qdq,dce", ctx);
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_GT(ctx.stats["fold-qdq.folded"], 0);
  size_t heavy = 0;
  for (const auto &n : g->nodes()) {
    if (n->kind != OpKind::Conv && n->kind != OpKind::Gemm && n->kind != OpKind::MatMul)
      continue;
    ++heavy;
    EXPECT_EQ(n->output(0)->dtype, DType::I8) << n->name;
    EXPECT_TRUE(n->output(0)->quant) << n->name;
    EXPECT_EQ(n->input(1)->dtype, DType::I8) << n->name;
    if (n->input(2)) {
      EXPECT_EQ(n->input(2)->dtype, DType::I32) << n->name;
    }
  }
  EXPECT_GT(heavy, 0u);
}

INSTANTIATE_TEST_SUITE_P(Shared, FoldQdqModel,
                         ::testing::Values("mlpt_kws_qdq", "mlpt_ic_qdq", "mlpt_vww_qdq",
                                           "mlpt_ad_qdq", "torch_ptq_qdq"));

TEST(FoldQdq, NoOpOnFloatModel) {
  std::string p = NPUCC_SOURCE_DIR "/models/tinycnn/model.onnx";
  if (!fs::exists(p))
    NPUCC_SKIP() << p << " missing";
  auto g = importOrFail(p);
  ASSERT_TRUE(g);
  std::string before = ir::printGraph(*g);
  passes::PassContext ctx;
  ASSERT_TRUE(passes::runPipeline(*g, "fold-qdq", ctx).ok());
  EXPECT_EQ(ir::printGraph(*g), before);
  EXPECT_EQ(ctx.stats.count("fold-qdq.folded"), 0u);
}

} // namespace
