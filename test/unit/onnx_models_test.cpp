//===- onnx_models_test.cpp - Importer on model files with reference data --===//
//
// Imports real models (/work/shared/models), a sample of ONNX backend node
// tests, the canonicalization fixtures (test/e2e/bad/canon, made by
// make_bad_models.py with numpy references) and the bad-input fixtures.
// Imported graphs are run with the reference interpreter and compared with
// the reference outputs, so a wrong canonicalization shows up as a mismatch.
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"
#include "npucc/onnx/Importer.h"

#include <onnx/onnx_pb.h>

#include "CiSkip.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace npucc;
using namespace npucc::ir;
using namespace npucc::onnx;

namespace {

const std::string kModels = "/work/shared/models";
const std::string kNode = "/usr/share/libonnx-testdata/data/node";
const std::string kBad = std::string(NPUCC_SOURCE_DIR) + "/test/e2e/bad";

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
    auto t = readTensorProto(p.string(), &name);
    EXPECT_TRUE(t) << t.error().str();
    if (!t)
      break;
    if (i < names.size())
      name = names[i];
    r.emplace_back(name, t.take());
  }
  return r;
}

/// Imports `dir`/model.onnx (binding input shapes from test_data_set_0),
/// runs it with the interpreter and compares every output.
void importAndRun(const fs::path &dir, double relTol = 1e-4, int targetOpset = 13) {
  std::string model = (dir / "model.onnx").string();
  fs::path set = dir / "test_data_set_0";
  auto inputs = readSet(set, "input", inputNames(model));
  ImportOptions opts;
  opts.targetOpset = targetOpset;
  for (const auto &kv : inputs)
    opts.shapes[kv.first] = kv.second.shape();
  auto g = importModel(model, opts);
  ASSERT_TRUE(g) << g.error().str();
  for (const auto &n : (*g)->nodes())
    EXPECT_NE(n->kind, OpKind::Constant);
  for (const auto &v : (*g)->values())
    for (int64_t d : v->shape)
      EXPECT_GE(d, 0) << v->name;
  std::vector<std::string> outNames;
  for (Value *v : (*g)->outputs)
    outNames.push_back(v->name);
  auto expected = readSet(set, "output", outNames);
  ASSERT_EQ(expected.size(), (*g)->outputs.size());
  std::map<std::string, Tensor> feed(inputs.begin(), inputs.end());
  auto got = interp::runGraph(**g, feed);
  ASSERT_TRUE(got) << got.error().str();
  for (const auto &kv : expected) {
    auto it = got->find(kv.first);
    ASSERT_NE(it, got->end()) << kv.first;
    const Tensor &a = it->second, &e = kv.second;
    ASSERT_EQ(a.shape(), e.shape()) << kv.first;
    ASSERT_EQ(a.dtype(), e.dtype()) << kv.first;
    double maxRef = 0, maxDiff = 0;
    for (int64_t i = 0; i < e.numElements(); ++i) {
      maxRef = std::max(maxRef, std::fabs(e.getDouble(i)));
      maxDiff = std::max(maxDiff, std::fabs(a.getDouble(i) - e.getDouble(i)));
    }
    EXPECT_LE(maxDiff, relTol * std::max(1.0, maxRef)) << dir << " output " << kv.first;
  }
}


TEST(OnnxModels, SharedFloatModelsImportAndMatchReference) {
  int ran = 0;
  for (const char *m : {"ali_ad_f32", "ali_ic_f32", "ali_kws_f32", "ali_vww_f32",
                        "blazeface_front128", "mlpt_vww_f32", "mnist8", "onnx2c_atmega_mnist"}) {
    fs::path dir = fs::path(kModels) / m;
    if (!fs::exists(dir / "model.onnx")) {
      NPUCC_SKIP_PART(dir << " missing");
      continue;
    }
    SCOPED_TRACE(m);
    importAndRun(dir);
    ++ran;
  }
  EXPECT_GT(ran, 0) << "no models found under " << kModels;
}

TEST(OnnxModels, NodeTestSample) {
  for (const char *t :
       {"test_conv_with_strides_padding", "test_conv_with_autopad_same", "test_softmax_axis_0",
        "test_softmax_default_axis", "test_maxpool_2d_same_lower", "test_maxpool_2d_same_upper",
        "test_averagepool_2d_same_upper", "test_convtranspose_autopad_same",
        "test_convtranspose_output_shape", "test_flatten_axis2", "test_gemm_default_no_bias",
        "test_dropout_default_mask", "test_split_equal_parts_2d", "test_unsqueeze_axis_3",
        "test_constant", "test_shape_start_1_end_negative_1", "test_reduce_mean_keepdims_example",
        "test_cast_FLOAT_to_DOUBLE"}) {
    fs::path dir = fs::path(kNode) / t;
    if (!fs::exists(dir / "model.onnx")) {
      NPUCC_SKIP_PART(dir << " missing");
      continue;
    }
    SCOPED_TRACE(t);
    importAndRun(dir, 1e-5);
  }
}

TEST(OnnxModels, RuntimeShapeOperandsAreRefused) {
  for (const char *t : {"test_squeeze", "test_slice", "test_reshape_reduced_dims"}) {
    std::string model = kNode + "/" + t + "/model.onnx";
    if (!fs::exists(model)) {
      NPUCC_SKIP_PART(model << " missing");
      continue;
    }
    auto r = importModel(model);
    ASSERT_FALSE(r) << t;
    EXPECT_NE(r.error().str().find("is a runtime value; npucc needs shape operands to be "
                                   "constant"),
              std::string::npos)
        << r.error().str();
    EXPECT_FALSE(r.error().node.empty());
  }
}

TEST(OnnxModels, CanonicalizationFixturesMatchNumpy) {
  int ran = 0;
  for (const auto &e : fs::directory_iterator(kBad + "/canon")) {
    SCOPED_TRACE(e.path().filename().string());
    importAndRun(e.path(), 1e-5);
    ++ran;
  }
  EXPECT_GE(ran, 10);
}

// Without onnx's version converter the importer's own canonicalization of
// old opsets (Slice-1 / Pad-2 / Clip-6 attributes, Softmax-11 coercion, ...)
// must give the same results.
TEST(OnnxModels, CanonicalizationFixturesWithoutVersionConverter) {
  for (const auto &e : fs::directory_iterator(kBad + "/canon")) {
    SCOPED_TRACE(e.path().filename().string());
    importAndRun(e.path(), 1e-5, /*targetOpset=*/0);
  }
  for (const char *m : {"ali_kws_f32", "mnist8", "ali_vww_f32"}) { // opsets 8-11
    fs::path dir = fs::path(kModels) / m;
    if (!fs::exists(dir / "model.onnx")) {
      NPUCC_SKIP_PART(dir << " missing");
      continue;
    }
    SCOPED_TRACE(m);
    importAndRun(dir, 1e-4, /*targetOpset=*/0);
  }
}

TEST(OnnxModels, BadInputFixtures) {
  struct Case {
    const char *file;
    const char *text;
  };
  for (const Case &c : {
           Case{"truncated.onnx", "error: not a valid ONNX model (failed to parse protobuf)"},
           Case{"garbage.onnx", "error: not a valid ONNX model (failed to parse protobuf)"},
           Case{"empty.onnx", "error: not a valid ONNX model"},
           Case{"unsupported_ops.onnx", "error: 3 unsupported operations"},
           Case{"dynamic_unbound.onnx", "note: input 'x' [N,C,4,4]"},
           Case{"bad_add_shapes.onnx", "node 'add0' (Add): error: shape inference failed"},
           Case{"ext_escape_rel.onnx",
                "initializer 'w_ext': external data location '../secret.bin' escapes"},
           Case{"ext_escape_abs.onnx",
                "initializer 'w_ext': external data location '/etc/passwd' is an absolute path"},
           Case{"float16_input.onnx", "graph input 'x' has element type float16"},
           Case{"dropout_training.onnx", "node 'drop0' (Dropout): error: training_mode is true"},
           Case{"reshape_runtime_shape.onnx",
                "node 'reshape0' (Reshape): error: Reshape operand 1 ('s') is a runtime value"},
           // Issue 11: crashed libonnx (a, b), exhausted memory (c, d), or were accepted.
           Case{"output_unproduced.onnx", "graph output 'z' is not produced by any node"},
           Case{"constant_short_raw.onnx", "node 'shape_const' (Constant): error: attribute "
                                           "'value' has 5 bytes of raw data"},
           Case{"init_short_data.onnx", "initializer 'w' has 8 bytes of raw data"},
           Case{"init_huge.onnx", "larger than npucc's limit of 2 GiB for one tensor"},
           Case{"input_dim_2p32.onnx", "graph input 'x' has shape [4294967296], larger"},
           Case{"constant_of_shape_huge.onnx",
                "node 'fill0' (ConstantOfShape): error: output 'y' would have shape [65536x65536]"},
           Case{"conv_rank_mismatch.onnx", // found by fuzz_onnx_import (libonnx SIGSEGV)
                "node 'conv0' (Conv): error: shape inference failed: Attribute kernel_shape"},
           Case{"conv_stride0.onnx", // found by fuzz_onnx_import (libonnx SIGFPE)
                "node 'conv0' (Conv): error: attribute 'strides' has 0"},
           Case{"pad_overflow.onnx", "pad 4611686018427387904 is out of range"},
           Case{"fold_budget.onnx", "node 'pad0' (Pad): error: Pad operand 1 ('p') is a runtime"},
           Case{"output_type0.onnx", "graph output 'y' has element type 0 (undefined)"},
           Case{"no_outputs.onnx", "the graph has no outputs"},
           Case{"gemm_transb5.onnx", "node 'gemm0' (Gemm): error: transB=5: expected 0 or 1"},
           Case{"gemm_alpha_inf.onnx", "node 'gemm0' (Gemm): error: alpha is not a finite"},
           Case{"ext_location_dir.onnx", "location 'canon' is not a regular file"},
           // Issue 23: a NaN scale compiled into C that did not build; inf was "non-positive".
           Case{"scale_nan.onnx", "node 'quant_x' (QuantizeLinear): error: y_scale is NaN"},
           Case{"scale_inf.onnx", "node 'dequant_w' (DequantizeLinear): error: x_scale is "
                                  "infinite"},
           Case{"scale_underflow.onnx", "node 'dequant_w' (DequantizeLinear): error: x_scale is "
                                        "not positive (0)"},
           Case{"qlinear_scale_inf.onnx", "node 'qmm0' (QLinearMatMul): error: output scale is "
                                          "infinite"},
       }) {
    std::string path = kBad + "/" + c.file;
    auto r = importModel(path);
    ASSERT_FALSE(r) << c.file;
    std::string msg = r.error().str();
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(c.text), std::string::npos) << msg;
  }
}

} // namespace
