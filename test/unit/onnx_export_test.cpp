//===- onnx_export_test.cpp - Graph IR -> ONNX model (Exporter.h) ---------===//
//
// Round trips: models/ (tinycnn, mobilenetv2, tinyunet), the QDQ models of
// /work/shared/models and the supported ONNX backend node tests are
// imported, optionally run through a Q/DQ-keeping pass pipeline (incl.
// fuse-activation, so act_min/act_max get expanded), exported, re-imported,
// and the reference interpreter's outputs of both graphs are compared on
// test_data_set_0. Also: exact initializer bytes, deterministic bytes,
// hand-built fused clamps, and the error paths (typed int8 IR refused with
// the node named, no file left behind, an existing file untouched).
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/onnx/Exporter.h"
#include "npucc/onnx/Importer.h"
#include "npucc/passes/Pass.h"

#include <onnx/onnx_pb.h>

#include "CiSkip.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace npucc;
using namespace npucc::ir;

namespace {

const std::string kSrc = NPUCC_SOURCE_DIR;
const std::string kShared = "/work/shared/models";
const std::string kNode = "/usr/share/libonnx-testdata/data/node";
/// Keeps Q/DQ nodes (no fold-qdq) but fuses activations into act_min/act_max.
const char *kFusePipeline = "remove-identity,constant-fold,fold-pad,fold-batchnorm,"
                            "fuse-activation,dce";
/// Also keeps the DequantizeLinear nodes of constant int8 weights.
const char *kQdqPipeline = "remove-identity,fold-pad,fold-batchnorm,fuse-activation,dce";

fs::path tmpPath(const std::string &stem) {
  return fs::temp_directory_path() /
         ("npucc_export_" + std::to_string(::getpid()) + "_" + stem + ".onnx");
}

::onnx::ModelProto parse(const std::string &bytes) {
  ::onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  return m;
}

std::map<std::string, int> opCounts(const ::onnx::ModelProto &m) {
  std::map<std::string, int> r;
  for (const auto &n : m.graph().node())
    ++r[n.op_type()];
  return r;
}

/// Graph input names of a model file (initializers excluded), in order.
std::vector<std::string> inputNames(const std::string &model) {
  ::onnx::ModelProto m;
  std::ifstream in(model, std::ios::binary);
  if (!m.ParseFromIstream(&in))
    return {};
  std::set<std::string> inits;
  for (const auto &t : m.graph().initializer())
    inits.insert(t.name());
  std::vector<std::string> r;
  for (const auto &vi : m.graph().input())
    if (!inits.count(vi.name()))
      r.push_back(vi.name());
  return r;
}

std::vector<std::pair<std::string, Tensor>> readSet(const fs::path &dir, const std::string &kind,
                                                    const std::vector<std::string> &names) {
  std::vector<std::pair<std::string, Tensor>> r;
  for (size_t i = 0;; ++i) {
    fs::path p = dir / (kind + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(p))
      break;
    std::string name;
    auto t = npucc::onnx::readTensorProto(p.string(), &name);
    EXPECT_TRUE(t) << t.error().str();
    if (!t)
      break;
    if (i < names.size())
      name = names[i];
    r.emplace_back(name, t.take());
  }
  return r;
}

/// max |a-b| relative to max(1, max |b|); infinite on a shape/type mismatch.
double relDiff(const Tensor &a, const Tensor &b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype())
    return INFINITY;
  double maxRef = 0, maxDiff = 0;
  for (int64_t i = 0; i < b.numElements(); ++i) {
    double x = a.getDouble(i), y = b.getDouble(i);
    if (std::isnan(x) && std::isnan(y))
      continue;
    maxRef = std::max(maxRef, std::fabs(y));
    maxDiff = std::max(maxDiff, std::fabs(x - y));
  }
  return maxDiff / std::max(1.0, maxRef);
}

/// Imports dir/model.onnx with the input shapes of test_data_set_0 (its
/// inputs go to `feed`) and runs `pipeline`; null when the model is missing
/// (failures are recorded).
std::unique_ptr<Graph> importDir(const fs::path &dir, const std::string &pipeline,
                                 std::map<std::string, Tensor> &feed,
                                 npucc::onnx::ImportOptions *optsOut = nullptr) {
  std::string model = (dir / "model.onnx").string();
  if (!fs::exists(model))
    return nullptr;
  auto inputs = readSet(dir / "test_data_set_0", "input", inputNames(model));
  npucc::onnx::ImportOptions opts;
  for (const auto &kv : inputs)
    opts.shapes[kv.first] = kv.second.shape();
  feed.insert(inputs.begin(), inputs.end());
  if (optsOut)
    *optsOut = opts;
  auto g = npucc::onnx::importModel(model, opts);
  EXPECT_TRUE(g) << g.error().str();
  if (!g)
    return nullptr;
  passes::PassContext ctx;
  auto st = pipeline.empty() ? success() : passes::runPipeline(**g, pipeline, ctx);
  EXPECT_TRUE(st) << st.error().str();
  return st ? g.take() : nullptr;
}

struct RoundTrip {
  ::onnx::ModelProto exported;
  double maxDiff = 0;       // re-imported graph vs the graph before export
  double maxGoldenDiff = 0; // re-imported graph vs test_data_set_0 outputs
};

/// Imports dir/model.onnx, runs `pipeline`, exports, re-imports and runs both
/// graphs on test_data_set_0.
void roundTrip(const fs::path &dir, const std::string &pipeline, RoundTrip &rt) {
  std::map<std::string, Tensor> feed;
  npucc::onnx::ImportOptions opts;
  auto g = importDir(dir, pipeline, feed, &opts);
  ASSERT_TRUE(g) << dir;
  auto before = interp::runGraph(*g, feed);
  ASSERT_TRUE(before) << before.error().str();

  fs::path out = tmpPath(dir.filename().string());
  auto st = npucc::onnx::exportModel(*g, out.string());
  ASSERT_TRUE(st) << st.error().str();
  auto bytes = npucc::onnx::exportModelBytes(*g);
  ASSERT_TRUE(bytes) << bytes.error().str();
  std::ifstream in(out, std::ios::binary);
  std::string fileBytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(fileBytes, *bytes) << "file and bytes differ, or export is not deterministic";
  rt.exported = parse(*bytes);

  auto g2 = npucc::onnx::importModel(out.string(), opts);
  fs::remove(out);
  ASSERT_TRUE(g2) << g2.error().str();
  auto after = interp::runGraph(**g2, feed);
  ASSERT_TRUE(after) << after.error().str();
  ASSERT_EQ(after->size(), before->size());
  std::vector<std::string> outNames;
  for (Value *v : g->outputs)
    outNames.push_back(v->name);
  auto golden = readSet(dir / "test_data_set_0", "output", outNames);
  for (const auto &kv : *before) {
    auto it = after->find(kv.first);
    ASSERT_NE(it, after->end()) << "output " << kv.first << " lost";
    rt.maxDiff = std::max(rt.maxDiff, relDiff(it->second, kv.second));
  }
  for (const auto &kv : golden) {
    auto it = after->find(kv.first);
    ASSERT_NE(it, after->end()) << "output " << kv.first;
    rt.maxGoldenDiff = std::max(rt.maxGoldenDiff, relDiff(it->second, kv.second));
  }
}

class ExportOwnModels : public ::testing::TestWithParam<const char *> {};

TEST_P(ExportOwnModels, RoundTripMatchesInterpreter) {
  fs::path dir = fs::path(kSrc) / "models" / GetParam();
  if (!fs::exists(dir / "model.onnx"))
    NPUCC_SKIP() << dir << " missing";
  for (const std::string pipeline : {"", kFusePipeline}) {
    SCOPED_TRACE("pipeline '" + pipeline + "'");
    RoundTrip rt;
    roundTrip(dir, pipeline, rt);
    if (HasFatalFailure())
      return;
    EXPECT_LE(rt.maxDiff, 1e-6);
    EXPECT_LE(rt.maxGoldenDiff, 1e-3);
    auto ops = opCounts(rt.exported);
    EXPECT_EQ(ops.count("Constant"), 0u);
    EXPECT_EQ(rt.exported.opset_import(0).version(), ops.count("HardSwish") ? 14 : 13);
    // fused clamps come back as Relu/Clip nodes
    if (!pipeline.empty()) {
      EXPECT_GT(ops["Relu"] + ops["Clip"], 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ExportOwnModels,
                         ::testing::Values("tinycnn", "mobilenetv2", "tinyunet"));

class ExportQdqModels : public ::testing::TestWithParam<const char *> {};

TEST_P(ExportQdqModels, RoundTripKeepsQdqAndMatches) {
  fs::path dir = fs::path(kShared) / GetParam();
  if (!fs::exists(dir / "model.onnx"))
    NPUCC_SKIP() << dir << " missing";
  for (const std::string pipeline : {"", kQdqPipeline}) {
    SCOPED_TRACE("pipeline '" + pipeline + "'");
    RoundTrip rt;
    roundTrip(dir, pipeline, rt);
    if (HasFatalFailure())
      return;
    EXPECT_LE(rt.maxDiff, 1e-6);
    EXPECT_LE(rt.maxGoldenDiff, 0.05); // one quantization step of the output
    auto ops = opCounts(rt.exported);
    EXPECT_GT(ops["QuantizeLinear"], 0);
    EXPECT_GT(ops["DequantizeLinear"], 0);
    int int8Inits = 0;
    for (const auto &t : rt.exported.graph().initializer())
      int8Inits += t.data_type() == ::onnx::TensorProto::INT8;
    EXPECT_GT(int8Inits, 0) << "int8 weights should stay int8 initializers";
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ExportQdqModels,
                         ::testing::Values("torch_ptq_qdq", "mlpt_kws_qdq"));

TEST(Export, NodeTestsRoundTrip) {
  std::ifstream list(kSrc + "/test/e2e/node_tests.txt");
  if (!fs::exists(kNode) || !list)
    NPUCC_SKIP() << "ONNX node tests missing";
  int ran = 0;
  for (std::string line; std::getline(list, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    fs::path dir = fs::path(kNode) / line;
    if (!fs::exists(dir / "model.onnx")) {
      NPUCC_SKIP_PART(dir << " missing (listed in test/e2e/node_tests.txt)");
      continue;
    }
    SCOPED_TRACE(line);
    RoundTrip rt;
    roundTrip(dir, "", rt);
    EXPECT_LE(rt.maxDiff, 1e-6);
    ++ran;
  }
  EXPECT_GT(ran, 100);
}

/// x: f32[1,2,4,4] -> Conv(3x3, pads 1) with the given fused clamp -> y.
std::unique_ptr<Graph> fusedConv(std::optional<float> lo, std::optional<float> hi) {
  auto g = std::make_unique<Graph>();
  Value *x = g->addValue("x", DType::F32, {1, 2, 4, 4});
  std::vector<float> w(3 * 2 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.5f;
  Value *wc = g->addConstant("w", Tensor::fromFloats({3, 2, 3, 3}, w));
  Value *y = g->addValue("y", DType::F32, {1, 3, 4, 4});
  Node *n = g->addNode(OpKind::Conv, "conv0", {x, wc}, {y});
  n->attrs["kernel_shape"] = std::vector<int64_t>{3, 3};
  n->attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  n->attrs["strides"] = std::vector<int64_t>{1, 1};
  n->attrs["dilations"] = std::vector<int64_t>{1, 1};
  n->attrs["group"] = int64_t(1);
  if (lo)
    n->attrs["act_min"] = *lo;
  if (hi)
    n->attrs["act_max"] = *hi;
  g->inputs = {x};
  g->outputs = {y};
  return g;
}

TEST(Export, FusedActivationBecomesReluOrClip) {
  struct Case {
    std::optional<float> lo, hi;
    const char *op;
    int clipInputs;
  };
  std::vector<float> xs(32);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<float>(static_cast<int>(i * 5 % 11) - 5);
  std::map<std::string, Tensor> feed{{"x", Tensor::fromFloats({1, 2, 4, 4}, xs)}};
  for (const Case &c : {Case{0.0f, {}, "Relu", 0}, Case{0.0f, 6.0f, "Clip", 3},
                        Case{{}, 2.5f, "Clip", 3}, Case{-1.0f, {}, "Clip", 2}}) {
    SCOPED_TRACE(c.op + std::to_string(c.clipInputs));
    auto g = fusedConv(c.lo, c.hi);
    auto bytes = npucc::onnx::exportModelBytes(*g);
    ASSERT_TRUE(bytes) << bytes.error().str();
    auto m = parse(*bytes);
    ASSERT_EQ(m.graph().node_size(), 2);
    EXPECT_EQ(m.graph().node(0).op_type(), "Conv");
    for (const auto &a : m.graph().node(0).attribute())
      EXPECT_TRUE(a.name() != "act_min" && a.name() != "act_max");
    const auto &act = m.graph().node(1);
    EXPECT_EQ(act.op_type(), c.op);
    EXPECT_EQ(act.output(0), "y");
    if (c.clipInputs) {
      EXPECT_EQ(act.input_size(), c.clipInputs);
    }
    if (!c.lo && c.clipInputs) {
      EXPECT_EQ(act.input(1), "") << "absent min";
    }
    // Same numbers after a round trip through a file.
    fs::path p = tmpPath("fused");
    ASSERT_TRUE(npucc::onnx::exportModel(*g, p.string()));
    auto g2 = npucc::onnx::importModel(p.string());
    fs::remove(p);
    ASSERT_TRUE(g2) << g2.error().str();
    auto a = interp::runGraph(*g, feed), b = interp::runGraph(**g2, feed);
    ASSERT_TRUE(a && b);
    const Tensor &ya = a->at("y");
    EXPECT_EQ(relDiff(b->at("y"), ya), 0.0);
    float mn = INFINITY, mx = -INFINITY;
    for (int64_t i = 0; i < ya.numElements(); ++i) {
      mn = std::min(mn, ya.data<float>()[i]);
      mx = std::max(mx, ya.data<float>()[i]);
    }
    if (c.lo) {
      EXPECT_GE(mn, *c.lo);
    }
    if (c.hi) {
      EXPECT_LE(mx, *c.hi);
    }
  }
}

TEST(Export, InitializersKeepExactBytesAndTypes) {
  auto g = std::make_unique<Graph>();
  Value *x = g->addValue("x", DType::F32, {2, 3});
  Tensor wf = Tensor::fromFloats({2, 3}, {1.5f, -0.0f, 3.25e-7f, -2.0f, 1e30f, 7.0f});
  Value *a = g->addConstant("a", wf);
  Tensor q(DType::I8, {3});
  q.data<int8_t>()[0] = -128;
  q.data<int8_t>()[1] = 0;
  q.data<int8_t>()[2] = 127;
  Value *qc = g->addConstant("q", q);
  Value *s = g->addConstant("s", Tensor::fromFloats({}, {0.125f}));
  Value *zp = g->addConstant("zp", Tensor::fromInts(DType::I8, {}, {3}));
  Value *dq = g->addValue("dq", DType::F32, {3});
  g->addNode(OpKind::DequantizeLinear, "dq0", {qc, s, zp}, {dq});
  Value *sum = g->addValue("sum", DType::F32, {2, 3});
  g->addNode(OpKind::Add, "add0", {x, a}, {sum});
  Value *y = g->addValue("y", DType::F32, {2, 3});
  g->addNode(OpKind::Mul, "mul0", {sum, dq}, {y});
  Value *shp = g->addConstant("shp", Tensor::fromInts(DType::I64, {2}, {3, 2}));
  Value *r = g->addValue("r", DType::F32, {3, 2});
  Node *rn = g->addNode(OpKind::Reshape, "reshape0", {y, shp}, {r});
  rn->attrs["allowzero"] = int64_t(0);
  Value *qo = g->addValue("qo", DType::U8, {3, 2});
  Value *s2 = g->addConstant("s2", Tensor::fromFloats({}, {0.5f}));
  Value *zp2 = g->addConstant("zp2", Tensor::fromInts(DType::U8, {}, {128}));
  g->addNode(OpKind::QuantizeLinear, "q0", {r, s2, zp2}, {qo});
  g->inputs = {x};
  g->outputs = {qo, r};
  auto bytes = npucc::onnx::exportModelBytes(*g);
  ASSERT_TRUE(bytes) << bytes.error().str();
  auto again = npucc::onnx::exportModelBytes(*g);
  ASSERT_TRUE(again);
  EXPECT_EQ(*bytes, *again);
  auto m = parse(*bytes);
  EXPECT_EQ(m.opset_import(0).version(), 13);
  std::map<std::string, const ::onnx::TensorProto *> inits;
  for (const auto &t : m.graph().initializer())
    inits[t.name()] = &t;
  for (const Value *c : {a, qc, s, zp, shp, s2, zp2}) {
    ASSERT_TRUE(inits.count(c->name)) << c->name;
    const auto &tp = *inits[c->name];
    EXPECT_EQ(tp.data_type(), dtypeToOnnx(c->dtype)) << c->name;
    EXPECT_EQ(Shape(tp.dims().begin(), tp.dims().end()), c->constant->shape()) << c->name;
    EXPECT_EQ(tp.raw_data(), std::string(reinterpret_cast<const char *>(c->constant->raw()),
                                         c->constant->byteSize()))
        << c->name;
  }
  // Reshape's allowzero=0 is the opset-13 meaning and is not written.
  for (const auto &n : m.graph().node())
    if (n.op_type() == "Reshape") {
      EXPECT_EQ(n.attribute_size(), 0);
    }
  ASSERT_EQ(m.graph().output_size(), 2);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().elem_type(), ::onnx::TensorProto::UINT8);
}

const Node *firstTypedNode(const Graph &g) {
  for (const auto &n : g.nodes())
    if (n->kind != OpKind::QuantizeLinear && n->kind != OpKind::DequantizeLinear)
      for (const Value *v : n->outputs)
        if (v->quant && !isFloat(v->dtype))
          return n.get();
  return nullptr;
}

class ExportTypedModels : public ::testing::TestWithParam<const char *> {};

TEST_P(ExportTypedModels, TypedInt8IrExportsAsQdq) {
  std::map<std::string, Tensor> feed;
  npucc::onnx::ImportOptions opts;
  auto g = importDir(fs::path(kShared) / GetParam(), passes::defaultPipeline(), feed, &opts);
  if (!g)
    NPUCC_SKIP() << GetParam() << " missing";
  ASSERT_NE(firstTypedNode(*g), nullptr) << "fold-qdq made no typed node";
  auto before = interp::runGraph(*g, feed);
  ASSERT_TRUE(before) << before.error().str();
  fs::path p = tmpPath(std::string("typed_") + GetParam());
  auto st = npucc::onnx::exportModel(*g, p.string());
  ASSERT_TRUE(st) << st.error().str();
  auto bytes = npucc::onnx::exportModelBytes(*g);
  ASSERT_TRUE(bytes);
  auto ops = opCounts(parse(*bytes));
  EXPECT_GT(ops["QuantizeLinear"], 0);
  EXPECT_GT(ops["DequantizeLinear"], 0);
  auto g2 = npucc::onnx::importModel(p.string(), opts);
  fs::remove(p);
  ASSERT_TRUE(g2) << g2.error().str();
  auto after = interp::runGraph(**g2, feed);
  ASSERT_TRUE(after) << after.error().str();
  for (const auto &kv : *before) {
    auto it = after->find(kv.first);
    ASSERT_NE(it, after->end()) << kv.first;
    // Integer kernels vs float ops between Q/DQ: a few quantization steps.
    EXPECT_LE(relDiff(it->second, kv.second), 0.1) << kv.first;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ExportTypedModels,
                         ::testing::Values("torch_ptq_qdq", "mlpt_kws_qdq"));

TEST(Export, TypedInt8IrIsRefusedNamingTheNode) {
  std::map<std::string, Tensor> feed;
  auto g = importDir(fs::path(kShared) / "mlpt_kws_qdq", "fold-qdq,dce", feed);
  if (!g)
    NPUCC_SKIP() << "mlpt_kws_qdq missing";
  const Node *typed = firstTypedNode(*g);
  ASSERT_NE(typed, nullptr) << "fold-qdq made no typed node";

  npucc::onnx::ExportOptions o;
  o.expandTypedQuant = false;
  fs::path p = tmpPath("refused");
  fs::remove(p);
  auto st = npucc::onnx::exportModel(*g, p.string(), o);
  ASSERT_FALSE(st);
  std::string text = st.error().str();
  EXPECT_NE(text.find("typed integer IR"), std::string::npos) << text;
  EXPECT_FALSE(st.error().node.empty());
  EXPECT_EQ(st.error().file, g->sourceFile) << "the diagnostic names the source model";
  EXPECT_NE(text.find(p.string()), std::string::npos) << "and the file not written: " << text;
  EXPECT_FALSE(fs::exists(p)) << "no file may be left on error";
  // An existing file is left untouched, and no temporary file remains.
  { std::ofstream(p) << "old"; }
  ASSERT_FALSE(npucc::onnx::exportModel(*g, p.string(), o));
  std::ifstream in(p);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "old");
  for (const auto &e : fs::directory_iterator(p.parent_path()))
    EXPECT_EQ(e.path().string().find(p.string() + ".tmp"), std::string::npos) << e.path();
  fs::remove(p);
}

TEST(Export, HandBuiltErrorsNameTheNode) {
  // A typed i8 Relu with quant params and no Q/DQ around it.
  Graph g;
  Value *x = g.addValue("x", DType::I8, {4});
  x->quant = QuantParams{{0.5f}, {0}, 0};
  Value *y = g.addValue("y", DType::I8, {4});
  y->quant = QuantParams{{0.5f}, {0}, 0};
  g.addNode(OpKind::Relu, "relu_q", {x}, {y});
  g.inputs = {x};
  g.outputs = {y};
  npucc::onnx::ExportOptions refuse;
  refuse.expandTypedQuant = false;
  auto r = npucc::onnx::exportModelBytes(g, refuse);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().node, "relu_q");
  EXPECT_EQ(r.error().op, "Relu");
  // By default it is expanded: DequantizeLinear -> Relu -> QuantizeLinear.
  auto ok = npucc::onnx::exportModelBytes(g);
  ASSERT_TRUE(ok) << ok.error().str();
  auto m = parse(*ok);
  ASSERT_EQ(m.graph().node_size(), 3);
  EXPECT_EQ(m.graph().node(0).op_type(), "DequantizeLinear");
  EXPECT_EQ(m.graph().node(1).op_type(), "Relu");
  EXPECT_EQ(m.graph().node(2).op_type(), "QuantizeLinear");
  EXPECT_EQ(m.graph().node(2).output(0), "y");
  EXPECT_EQ(m.graph().output(0).type().tensor_type().elem_type(), ::onnx::TensorProto::INT8);
  // An attribute ONNX does not have for the op.
  Graph h;
  Value *a = h.addValue("a", DType::F32, {4});
  Value *b = h.addValue("b", DType::F32, {4});
  Node *n = h.addNode(OpKind::Relu, "relu_x", {a}, {b});
  n->attrs["frobnicate"] = int64_t(1);
  h.inputs = {a};
  h.outputs = {b};
  auto r2 = npucc::onnx::exportModelBytes(h);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().node, "relu_x");
  EXPECT_NE(r2.error().message.find("frobnicate"), std::string::npos);
  // A wrong declared shape is caught by onnx's shape inference.
  Graph k;
  Value *c = k.addValue("c", DType::F32, {4});
  Value *d = k.addValue("d", DType::F32, {4});
  Value *e = k.addValue("e", DType::F32, {5});
  k.addNode(OpKind::Relu, "relu_a", {c}, {d});
  k.addNode(OpKind::Relu, "relu_b", {d}, {e});
  k.inputs = {c};
  k.outputs = {e};
  auto r3 = npucc::onnx::exportModelBytes(k);
  ASSERT_FALSE(r3);
  EXPECT_NE(r3.error().message.find("shape inference"), std::string::npos) << r3.error().message;
}

/// Shape ops the node-test list and the models miss, in canonical form.
TEST(Export, CanonicalShapeOpsRoundTrip) {
  const char *text = R"(graph @main(%x: f32[1,2,4,4]) -> (%r, %c) {
  const @pads: i64[8] = dense<[0, 0, 1, 0, 0, 0, 0, 1]>
  const @pv: f32[] = dense<[0.5]>
  const @st: i64[1] = dense<[1]>
  const @en: i64[1] = dense<[5]>
  const @ax: i64[1] = dense<[2]>
  const @sp: i64[1] = dense<[2]>
  const @sc: f32[4] = dense<[1.0, 1.0, 2.0, 2.0]>
  const @a0: i64[1] = dense<[0]>
  const @shp: i64[2] = dense<[2, -1]>
  const @cs: i64[2] = dense<[2, 3]>
  %p = Pad(%x, @pads, @pv) {mode="constant"} : f32[1,2,5,5] loc("pad")
  %s = Slice(%p, @st, @en, @ax, @sp) : f32[1,2,2,5] loc("slice")
  %z = Resize(%s, _, @sc) {coordinate_transformation_mode="asymmetric", cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0.0, mode="nearest", nearest_mode="floor"} : f32[1,2,4,10] loc("resize")
  %q = Squeeze(%z, @a0) : f32[2,4,10] loc("squeeze")
  %u = Unsqueeze(%q, @a0) : f32[1,2,4,10] loc("unsqueeze")
  %r = Reshape(%u, @shp) {allowzero=0} : f32[2,40] loc("reshape")
  %c = ConstantOfShape(@cs) {value=f32[1] dense<[1.5]>} : f32[2,3] loc("cos")
  return %r, %c
})";
  auto g = parseGraph(text);
  ASSERT_TRUE(g) << g.error().str();
  auto bytes = npucc::onnx::exportModelBytes(**g);
  ASSERT_TRUE(bytes) << bytes.error().str();
  auto ops = opCounts(parse(*bytes));
  for (const char *op :
       {"Pad", "Slice", "Resize", "Squeeze", "Unsqueeze", "Reshape", "ConstantOfShape"})
    EXPECT_EQ(ops[op], 1) << op;
  std::vector<float> xs(32);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<float>(i) * 0.25f - 3.0f;
  std::map<std::string, Tensor> feed{{"x", Tensor::fromFloats({1, 2, 4, 4}, xs)}};
  fs::path p = tmpPath("shapeops");
  ASSERT_TRUE(npucc::onnx::exportModel(**g, p.string()));
  auto g2 = npucc::onnx::importModel(p.string());
  fs::remove(p);
  ASSERT_TRUE(g2) << g2.error().str();
  auto a = interp::runGraph(**g, feed), b = interp::runGraph(**g2, feed);
  ASSERT_TRUE(a) << a.error().str();
  ASSERT_TRUE(b) << b.error().str();
  for (const char *out : {"r", "c"}) {
    ASSERT_TRUE(b->count(out)) << out;
    EXPECT_EQ(relDiff(b->at(out), a->at(out)), 0.0) << out;
  }
}

TEST(Export, ConstantGraphOutputGoesThroughIdentity) {
  Graph g;
  Value *x = g.addValue("x", DType::F32, {2});
  Value *y = g.addValue("y", DType::F32, {2});
  g.addNode(OpKind::Relu, "relu0", {x}, {y});
  Value *c = g.addConstant("c", Tensor::fromFloats({2}, {1.0f, 2.0f}));
  g.inputs = {x};
  g.outputs = {y, c};
  auto r = npucc::onnx::exportModelBytes(g);
  ASSERT_TRUE(r) << r.error().str();
  auto m = parse(*r);
  ASSERT_EQ(m.graph().output_size(), 2);
  EXPECT_EQ(m.graph().output(1).name(), "c");
  EXPECT_EQ(opCounts(m)["Identity"], 1);
}

} // namespace

namespace {

/// Runs test/e2e/export_check.py (python onnx's checker, then onnx.reference
/// or ONNX Runtime for Node.js against the golden outputs) on an exported
/// model. Returns its exit code (77: no independent runtime installed).
int independentCheck(const fs::path &model, const fs::path &data, const std::string &extra,
                     std::string &log) {
  fs::path out = tmpPath("check_log");
  std::string cmd = "/usr/bin/python3 '" + kSrc + "/test/e2e/export_check.py' '" + model.string() +
                    "' '" + data.string() + "' " + extra + " > '" + out.string() + "' 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(out);
  log.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(out);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(Export, IndependentRuntimeMatchesGolden) {
  if (!fs::exists("/usr/bin/python3"))
    NPUCC_SKIP() << "no /usr/bin/python3";
  struct Case {
    fs::path dir;
    const char *pipeline;
    const char *extra;
  };
  std::vector<Case> cases = {
      {fs::path(kSrc) / "models/tinycnn", kFusePipeline, "--tol 1e-4"},
      {fs::path(kSrc) / "models/tinyunet", kFusePipeline, "--tol 1e-4"},
      {fs::path(kShared) / "torch_ptq_qdq", kQdqPipeline, "--tol 1e-5"},
      {fs::path(kShared) / "mlpt_kws_qdq", "", "--tol 1e-5"},
      {fs::path(kShared) / "mlpt_kws_qdq", passes::defaultPipeline(), "--tol 1e-5 --quant-steps 3"},
      // Typed int8 IR exported as DQ -> float op -> Q: a few quantization steps.
      {fs::path(kShared) / "torch_ptq_qdq", passes::defaultPipeline(),
       "--tol 1e-5 --quant-steps 3"},
  };
  int ran = 0, skipped = 0;
  std::string why;
  for (const Case &c : cases) {
    if (!fs::exists(c.dir / "model.onnx")) {
      NPUCC_SKIP_PART(c.dir << " missing");
      continue;
    }
    SCOPED_TRACE(c.dir.string() + " with '" + c.pipeline + "'");
    std::map<std::string, Tensor> feed;
    auto g = importDir(c.dir, c.pipeline, feed);
    ASSERT_TRUE(g);
    fs::path p = tmpPath("independent");
    auto st = npucc::onnx::exportModel(*g, p.string());
    ASSERT_TRUE(st) << st.error().str();
    std::string log;
    int rc = independentCheck(p, c.dir / "test_data_set_0", c.extra, log);
    fs::remove(p);
    if (rc == 77) {
      ++skipped;
      why = log;
      EXPECT_NE(log.find("ok: python onnx"), std::string::npos) << log;
      continue;
    }
    EXPECT_EQ(rc, 0) << log;
    std::cout << log;
    ++ran;
  }
  // scripts/test.sh installs ONNX Runtime and sets NPUCC_ORT_NODE_MODULES: then it must run.
  if (std::getenv("NPUCC_ORT_NODE_MODULES")) {
    EXPECT_EQ(skipped, 0) << "NPUCC_ORT_NODE_MODULES is set but ONNX Runtime did not run: " << why;
  }
  if (!ran && skipped)
    NPUCC_SKIP() << "the python onnx checker passed, but no independent runtime: " << why
                 << "(install onnxruntime-node with npm and set NPUCC_ORT_NODE_MODULES)";
  EXPECT_GT(ran, 0);
}

} // namespace
