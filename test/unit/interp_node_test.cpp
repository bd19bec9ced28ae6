//===- interp_node_test.cpp - Interpreter vs. ONNX backend node tests -----===//
//
// Runs the reference interpreter on ONNX's own backend node tests
// (/usr/share/libonnx-testdata/data/node/<case>/model.onnx with
// test_data_set_0/{input,output}_K.pb), which we did not write, and compares
// with the expected outputs: rel 1e-4 for floats, exact for integers.
//
// The graph is built here straight from the ModelProto (no importer), every
// model input fed as a runtime tensor, so cases whose shape operands are
// runtime inputs (Slice starts, Reshape shape, Resize scales ...) are covered
// too. Intermediate shapes of multi-node models come from ONNX shape
// inference. A second suite (InterpImportedNodeTest) runs the same check on
// the graphs produced by npucc's ONNX importer (canonical IR forms) for the
// cases listed in test/e2e/node_tests.txt, and a third (InterpModelTest)
// runs the real models of shared/models (float and QDQ) against their ONNX
// Runtime golden outputs. Cases are discovered: every model whose ops are all in
// Ops.def and whose tensors all have npucc dtypes. A few cases are known to be unsupported by
// design; for those the test asserts a clean error instead.
//
//===----------------------------------------------------------------------===//
#include "OrtResizeValues.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/onnx/Importer.h"

#include "CiSkip.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace {

namespace fs = std::filesystem;
using namespace npucc;
using ir::DType;
using ir::Tensor;

const char *kNodeDir = "/usr/share/libonnx-testdata/data/node";

/// Cases that must fail with a Diagnostic (not wrong numbers), with why.
const std::map<std::string, std::string> &knownUnsupported() {
  static const std::map<std::string, std::string> m = {
      {"test_training_dropout", "random training-mode mask"},
      {"test_training_dropout_default", "random training-mode mask"},
      {"test_training_dropout_default_mask", "random training-mode mask"},
      {"test_training_dropout_mask", "random training-mode mask"},
  };
  return m;
}

bool readProto(const fs::path &p, google::protobuf::Message &msg) {
  std::ifstream f(p, std::ios::binary);
  return f && msg.ParseFromIstream(&f);
}

/// onnx.TensorProto -> Tensor; false for dtypes npucc does not have.
bool toTensor(const ::onnx::TensorProto &tp, Tensor &out) {
  auto dt = ir::dtypeFromOnnx(tp.data_type());
  if (!dt || (tp.has_data_location() && tp.data_location() == ::onnx::TensorProto::EXTERNAL))
    return false;
  ir::Shape s(tp.dims().begin(), tp.dims().end());
  int64_t count = 1;
  for (int64_t d : s) {
    if (d < 0 || d > (int64_t(1) << 26))
      return false;
    count *= d;
  }
  if (count > (int64_t(1) << 26))
    return false;
  Tensor t(*dt, s);
  int64_t n = t.numElements();
  if (tp.has_raw_data()) {
    if (tp.raw_data().size() != t.byteSize())
      return false;
    if (t.byteSize())
      std::memcpy(t.raw(), tp.raw_data().data(), t.byteSize());
  } else if (tp.float_data_size() == n) {
    for (int64_t i = 0; i < n; ++i)
      t.setDouble(i, tp.float_data(static_cast<int>(i)));
  } else if (tp.double_data_size() == n) {
    for (int64_t i = 0; i < n; ++i)
      t.setDouble(i, tp.double_data(static_cast<int>(i)));
  } else if (tp.int32_data_size() == n) {
    for (int64_t i = 0; i < n; ++i)
      t.setInt(i, tp.int32_data(static_cast<int>(i)));
  } else if (tp.int64_data_size() == n) {
    for (int64_t i = 0; i < n; ++i)
      t.setInt(i, tp.int64_data(static_cast<int>(i)));
  } else if (tp.uint64_data_size() == n) {
    for (int64_t i = 0; i < n; ++i) {
      uint64_t v = tp.uint64_data(static_cast<int>(i));
      if (*dt == DType::U32) {
        uint32_t w = static_cast<uint32_t>(v);
        std::memcpy(t.raw() + i * 4, &w, 4);
      } else {
        std::memcpy(t.raw() + i * 8, &v, 8);
      }
    }
  } else if (n != 0) {
    return false;
  }
  out = std::move(t);
  return true;
}

bool typeOf(const ::onnx::TypeProto &tp, DType &dt, ir::Shape &shape) {
  if (!tp.has_tensor_type())
    return false;
  auto d = ir::dtypeFromOnnx(tp.tensor_type().elem_type());
  if (!d || !tp.tensor_type().has_shape())
    return false;
  dt = *d;
  shape.clear();
  for (const auto &dim : tp.tensor_type().shape().dim()) {
    if (!dim.has_dim_value())
      return false;
    shape.push_back(dim.dim_value());
  }
  return true;
}

bool toAttr(const ::onnx::AttributeProto &a, ir::Attribute &out) {
  switch (a.type()) {
  case ::onnx::AttributeProto::INT:
    out = static_cast<int64_t>(a.i());
    return true;
  case ::onnx::AttributeProto::FLOAT:
    out = a.f();
    return true;
  case ::onnx::AttributeProto::STRING:
    out = a.s();
    return true;
  case ::onnx::AttributeProto::INTS:
    out = std::vector<int64_t>(a.ints().begin(), a.ints().end());
    return true;
  case ::onnx::AttributeProto::FLOATS:
    out = std::vector<float>(a.floats().begin(), a.floats().end());
    return true;
  case ::onnx::AttributeProto::STRINGS:
    out = std::vector<std::string>(a.strings().begin(), a.strings().end());
    return true;
  case ::onnx::AttributeProto::TENSOR: {
    Tensor t;
    if (!toTensor(a.t(), t))
      return false;
    out = std::move(t);
    return true;
  }
  default:
    return false;
  }
}

/// One node test loaded as an npucc graph with its data set 0.
struct LoadedCase {
  std::unique_ptr<ir::Graph> graph;
  std::map<std::string, Tensor> inputs;
  std::vector<std::pair<std::string, Tensor>> expected;
};

/// Builds the case; returns an empty string on success or why it cannot.
std::string loadCase(const std::string &name, LoadedCase &lc) {
  fs::path dir = fs::path(kNodeDir) / name;
  ::onnx::ModelProto model;
  if (!readProto(dir / "model.onnx", model))
    return "cannot parse model.onnx";
  fs::path data = dir / "test_data_set_0";
  if (!fs::exists(data))
    return "no test_data_set_0";
  for (const auto &node : model.graph().node()) {
    std::string dom = node.domain() == "ai.onnx" ? "" : node.domain();
    if (!ir::opFromName(node.op_type(), dom))
      return "op " + node.op_type() + " not in Ops.def";
  }
  try {
    ::onnx::shape_inference::InferShapes(model);
  } catch (const std::exception &e) {
    if (model.graph().node_size() > 1)
      return std::string("shape inference failed: ") + e.what();
  }
  const ::onnx::GraphProto &gp = model.graph();
  lc.graph = std::make_unique<ir::Graph>();
  ir::Graph &g = *lc.graph;
  std::map<std::string, ir::Value *> values;
  std::set<std::string> inits;
  for (const auto &init : gp.initializer()) {
    Tensor t;
    if (!toTensor(init, t))
      return "unsupported initializer " + init.name();
    values[init.name()] = g.addConstant(init.name(), std::move(t));
    inits.insert(init.name());
  }
  int k = 0;
  for (const auto &in : gp.input()) {
    if (inits.count(in.name()))
      continue;
    if (!in.type().has_tensor_type())
      return "input " + in.name() + " is not a tensor";
    ::onnx::TensorProto tp;
    Tensor t;
    if (!readProto(data / ("input_" + std::to_string(k++) + ".pb"), tp) || !toTensor(tp, t))
      return "unsupported input " + in.name();
    if (ir::dtypeFromOnnx(in.type().tensor_type().elem_type()) != t.dtype())
      return "input " + in.name() + " has a dtype npucc lacks";
    ir::Value *v = g.addValue(in.name(), t.dtype(), t.shape());
    g.inputs.push_back(v);
    values[in.name()] = v;
    lc.inputs[v->name] = std::move(t);
  }
  std::map<std::string, Tensor> outData;
  k = 0;
  for (const auto &out : gp.output()) {
    if (!out.type().has_tensor_type())
      return "output " + out.name() + " is not a tensor";
    ::onnx::TensorProto tp;
    Tensor t;
    if (!readProto(data / ("output_" + std::to_string(k++) + ".pb"), tp) || !toTensor(tp, t))
      return "unsupported output " + out.name();
    if (ir::dtypeFromOnnx(out.type().tensor_type().elem_type()) != t.dtype())
      return "output " + out.name() + " has a dtype npucc lacks";
    outData[out.name()] = std::move(t);
  }
  std::map<std::string, const ::onnx::TypeProto *> infos;
  for (const auto &vi : gp.value_info())
    infos[vi.name()] = &vi.type();
  for (const auto &node : gp.node()) {
    std::string dom = node.domain() == "ai.onnx" ? "" : node.domain();
    std::vector<ir::Value *> ins, outs;
    for (const auto &i : node.input()) {
      if (i.empty()) {
        ins.push_back(nullptr);
        continue;
      }
      if (!values.count(i))
        return "undefined input " + i;
      ins.push_back(values[i]);
    }
    for (const auto &o : node.output()) {
      if (o.empty()) {
        outs.push_back(nullptr);
        continue;
      }
      DType dt;
      ir::Shape s;
      if (outData.count(o)) {
        dt = outData[o].dtype();
        s = outData[o].shape();
      } else if (!infos.count(o) || !typeOf(*infos[o], dt, s)) {
        return "no static type for " + o;
      }
      outs.push_back(values[o] = g.addValue(o, dt, s));
    }
    while (!outs.empty() && !outs.back())
      outs.pop_back();
    ir::Node *n = g.addNode(*ir::opFromName(node.op_type(), dom), node.name(), ins, outs);
    for (const auto &a : node.attribute()) {
      ir::Attribute attr;
      if (!toAttr(a, attr))
        return "unsupported attribute " + a.name();
      n->attrs[a.name()] = std::move(attr);
    }
  }
  for (const auto &out : gp.output()) {
    if (!values.count(out.name()))
      return "graph output not produced";
    g.outputs.push_back(values[out.name()]);
    lc.expected.emplace_back(values[out.name()]->name, std::move(outData[out.name()]));
  }
  return "";
}

/// Cheap filter (runs in every test process at registration): the model's
/// ops are all float-interpreter ops of Ops.def and its inputs/outputs are
/// tensors of npucc dtypes.
bool isCandidate(const fs::path &dir) {
  ::onnx::ModelProto model;
  if (!fs::exists(dir / "test_data_set_0") || !readProto(dir / "model.onnx", model))
    return false;
  for (const auto &node : model.graph().node()) {
    auto k = ir::opFromName(node.op_type(), node.domain() == "ai.onnx" ? "" : node.domain());
    if (!k)
      return false;
    // Pre-quantized forms (QLinearConv, ConvInteger, ...) are the integer
    // interpreter's (QuantInterpreter.h); Q/DQ boundaries are ours.
    if ((ir::opInfo(*k).flags & ir::OPF_QUANT) && *k != ir::OpKind::QuantizeLinear &&
        *k != ir::OpKind::DequantizeLinear)
      return false;
  }
  for (const auto *list : {&model.graph().input(), &model.graph().output()})
    for (const auto &vi : *list)
      if (!vi.type().has_tensor_type() || !ir::dtypeFromOnnx(vi.type().tensor_type().elem_type()))
        return false;
  return true;
}

std::vector<std::string> discoverCases() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(kNodeDir, ec))
    if (isCandidate(e.path()))
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

const std::vector<std::string> &allCases() {
  static const std::vector<std::string> cases = discoverCases();
  return cases;
}

/// Compares; returns a description of the first mismatch or "".
std::string compare(const Tensor &got, const Tensor &want) {
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + ir::dtypeName(got.dtype()) + " vs " +
           ir::dtypeName(want.dtype());
  if (got.numElements() != want.numElements() ||
      (got.shape() != want.shape() && !(got.shape().empty() && want.numElements() == 1)))
    return "shape " + ir::shapeStr(got.shape()) + " vs " + ir::shapeStr(want.shape());
  for (int64_t i = 0; i < want.numElements(); ++i) {
    if (ir::isFloat(want.dtype())) {
      double a = got.getDouble(i), b = want.getDouble(i);
      if (std::isnan(a) && std::isnan(b))
        continue;
      if (!(std::fabs(a - b) <= 1e-4 * std::fabs(b) + 1e-5))
        return "element " + std::to_string(i) + ": " + std::to_string(a) + " vs " +
               std::to_string(b);
    } else if (std::memcmp(got.raw() + i * ir::dtypeSize(got.dtype()),
                           want.raw() + i * ir::dtypeSize(want.dtype()),
                           ir::dtypeSize(want.dtype())) != 0) {
      return "element " + std::to_string(i) + ": " + std::to_string(got.getInt(i)) + " vs " +
             std::to_string(want.getInt(i));
    }
  }
  return "";
}

class InterpNodeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InterpNodeTest, MatchesOnnxReference) {
  const std::string &name = GetParam();
  LoadedCase lc;
  std::string why = loadCase(name, lc);
  ASSERT_EQ(why, "");
  auto r = interp::runGraph(*lc.graph, lc.inputs);
  auto known = knownUnsupported().find(name);
  if (known != knownUnsupported().end()) {
    ASSERT_FALSE(r.ok()) << name << " is listed as unsupported (" << known->second << ") but ran";
    EXPECT_FALSE(r.error().op.empty()) << "the error must name the op: " << r.error().str();
    return;
  }
  ASSERT_TRUE(r.ok()) << r.error().str();
  auto ort = test::onnxRuntimeResizeValues().find(name);
  for (const auto &[out, want] : lc.expected) {
    ASSERT_TRUE(r->count(out)) << "missing output " << out;
    if (ort != test::onnxRuntimeResizeValues().end()) {
      EXPECT_NE(compare(r->at(out), want), "") << "ONNX's data agree with npucc now: drop " << name;
      EXPECT_EQ(compare(r->at(out), Tensor::fromFloats(want.shape(), ort->second)), "")
          << "output " << out << " (ONNX Runtime's values)";
      continue;
    }
    EXPECT_EQ(compare(r->at(out), want), "") << "output " << out;
  }
}

INSTANTIATE_TEST_SUITE_P(Onnx, InterpNodeTest, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

// Discovery must find the cases this suite exists for (guards against an
// empty or mis-located data set silently passing).
TEST(InterpNodeDiscovery, CoversEveryOpFamily) {
  if (!fs::exists(kNodeDir))
    NPUCC_SKIP() << kNodeDir << " not installed";
  const auto &c = allCases();
  std::set<std::string> have(c.begin(), c.end());
  for (const char *must : {"test_conv_with_strides_padding",
                           "test_convtranspose",
                           "test_gemm_default_vector_bias",
                           "test_matmul_4d",
                           "test_add_bcast",
                           "test_softmax_axis_1",
                           "test_maxpool_2d_pads",
                           "test_averagepool_2d_pads_count_include_pad",
                           "test_resize_upsample_scales_linear",
                           "test_resize_downsample_sizes_nearest",
                           "test_slice_neg_steps",
                           "test_edge_pad",
                           "test_reflect_pad",
                           "test_gather_0",
                           "test_batchnorm_epsilon",
                           "test_globalaveragepool",
                           "test_reduce_mean_keepdims_example",
                           "test_transpose_all_permutations_0",
                           "test_split_equal_parts_1d",
                           "test_hardswish",
                           "test_prelu_broadcast",
                           "test_cast_FLOAT_to_DOUBLE",
                           "test_shape",
                           "test_constantofshape_int_zeros",
                           "test_unsqueeze_axis_0",
                           "test_squeeze",
                           "test_reshape_negative_dim",
                           "test_concat_2d_axis_0",
                           "test_clip",
                           "test_flatten_axis1",
                           "test_max_int64",
                           "test_min_uint8",
                           "test_div_uint8",
                           "test_quantizelinear_axis",
                           "test_dequantizelinear_axis"})
    EXPECT_TRUE(have.count(must)) << must << " was not discovered";
  EXPECT_GE(c.size(), 200u);
}

// ---- Through the importer ----------------------------------------------------

std::vector<std::string> listedCases() {
  std::vector<std::string> names;
#ifdef NPUCC_SOURCE_DIR
  std::ifstream f(std::string(NPUCC_SOURCE_DIR) + "/test/e2e/node_tests.txt");
  std::string line;
  while (std::getline(f, line))
    if (!line.empty() && line[0] != '#' && fs::exists(fs::path(kNodeDir) / line))
      names.push_back(line);
#endif
  return names;
}

class InterpImportedNodeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InterpImportedNodeTest, MatchesOnnxReference) {
  const std::string &name = GetParam();
  fs::path dir = fs::path(kNodeDir) / name;
  auto g = npucc::onnx::importModel((dir / "model.onnx").string());
  ASSERT_TRUE(g.ok()) << g.error().str();
  const ir::Graph &graph = **g;
  fs::path data = dir / "test_data_set_0";
  // input_K.pb feeds the K-th graph input, unless its stored name says otherwise.
  std::map<std::string, Tensor> feeds;
  for (size_t k = 0; fs::exists(data / ("input_" + std::to_string(k) + ".pb")); ++k) {
    std::string tname;
    auto t = npucc::onnx::readTensorProto((data / ("input_" + std::to_string(k) + ".pb")).string(),
                                          &tname);
    ASSERT_TRUE(t.ok()) << t.error().str();
    const ir::Value *v = nullptr;
    for (const ir::Value *in : graph.inputs)
      if (in->name == tname)
        v = in;
    if (!v && k < graph.inputs.size())
      v = graph.inputs[k];
    if (!v)
      continue; // an input the importer turned into a constant
    feeds[v->name] = t.take();
  }
  auto r = interp::runGraph(graph, feeds);
  auto known = knownUnsupported().find(name);
  if (known != knownUnsupported().end()) {
    ASSERT_FALSE(r.ok()) << name << " is listed as unsupported (" << known->second << ")";
    return;
  }
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_FALSE(graph.outputs.empty());
  for (size_t k = 0; k < graph.outputs.size(); ++k) {
    fs::path p = data / ("output_" + std::to_string(k) + ".pb");
    if (!fs::exists(p))
      continue;
    auto want = npucc::onnx::readTensorProto(p.string());
    ASSERT_TRUE(want.ok()) << want.error().str();
    const std::string &out = graph.outputs[k]->name;
    ASSERT_TRUE(r->count(out)) << "missing output " << out;
    EXPECT_EQ(compare(r->at(out), *want), "") << "output " << out;
  }
}

INSTANTIATE_TEST_SUITE_P(Onnx, InterpImportedNodeTest, ::testing::ValuesIn(listedCases()),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

TEST(InterpImportedNodeList, IsNotEmpty) {
  if (!fs::exists(kNodeDir))
    NPUCC_SKIP() << kNodeDir << " not installed";
  EXPECT_GE(listedCases().size(), 100u);
}

} // namespace

// ---- Real float models with golden outputs (ONNX Runtime) -------------------

namespace {

fs::path modelsDir() {
#ifdef NPUCC_SOURCE_DIR
  fs::path p = fs::path(NPUCC_SOURCE_DIR) / ".." / "shared" / "models";
  if (fs::exists(p))
    return p;
#endif
  return "/work/shared/models";
}

class InterpModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InterpModelTest, MatchesOnnxRuntimeGolden) {
  fs::path dir = modelsDir() / GetParam();
  if (!fs::exists(dir / "model.onnx"))
    NPUCC_SKIP() << dir << " not available";
  auto in = npucc::onnx::readTensorProto((dir / "test_data_set_0" / "input_0.pb").string());
  ASSERT_TRUE(in.ok()) << in.error().str();
  // Bind dynamic dims of the (single) graph input to the data's shape.
  ::onnx::ModelProto model;
  ASSERT_TRUE(readProto(dir / "model.onnx", model));
  std::set<std::string> inits;
  for (const auto &init : model.graph().initializer())
    inits.insert(init.name());
  npucc::onnx::ImportOptions opts;
  for (const auto &gi : model.graph().input())
    if (!inits.count(gi.name()))
      opts.shapes[gi.name()] = in->shape();
  auto g = npucc::onnx::importModel((dir / "model.onnx").string(), opts);
  ASSERT_TRUE(g.ok()) << g.error().str();
  const ir::Graph &graph = **g;
  ASSERT_EQ(graph.inputs.size(), 1u);
  std::map<std::string, Tensor> feeds{{graph.inputs[0]->name, in.take()}};
  auto r = interp::runGraph(graph, feeds);
  ASSERT_TRUE(r.ok()) << r.error().str();
  auto want = npucc::onnx::readTensorProto((dir / "test_data_set_0" / "output_0.pb").string());
  ASSERT_TRUE(want.ok()) << want.error().str();
  const Tensor &got = r->at(graph.outputs[0]->name);
  ASSERT_EQ(got.numElements(), want->numElements());
  // Within 1e-4 of the largest reference magnitude (models/README.md).
  double peak = 0;
  for (int64_t i = 0; i < want->numElements(); ++i)
    peak = std::max(peak, std::fabs(want->getDouble(i)));
  ASSERT_GT(peak, 0.0) << "an all-zero golden output would prove nothing";
  double worst = 0;
  for (int64_t i = 0; i < want->numElements(); ++i) {
    EXPECT_NEAR(got.getDouble(i), want->getDouble(i), 1e-4 * peak + 1e-6) << "element " << i;
    worst = std::max(worst, std::fabs(got.getDouble(i) - want->getDouble(i)));
  }
  RecordProperty("max_abs_error", std::to_string(worst));
  RecordProperty("peak", std::to_string(peak));
}

INSTANTIATE_TEST_SUITE_P(Shared, InterpModelTest,
                         ::testing::Values("ali_ad_f32", "ali_ic_f32", "ali_kws_f32", "ali_vww_f32",
                                           "blazeface_front128", "mlpt_vww_f32", "mnist8",
                                           "onnx2c_atmega_mnist", "mlpt_ad_qdq", "mlpt_ic_qdq",
                                           "mlpt_kws_qdq", "mlpt_vww_qdq", "torch_ptq_qdq"),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

} // namespace
