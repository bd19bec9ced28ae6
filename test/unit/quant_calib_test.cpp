//===- quant_calib_test.cpp - Calibration: sample readers, methods, QDQ -----===//
//
// .npy / .pb readers on good and malformed files, the sample folder layouts,
// the range methods (minmax, percentile, entropy, mse) on known
// distributions, and QDQ insertion on small graphs followed by the existing
// fold-qdq pass (typed int8 result that stays close to the float graph; Slice,
// Gather, Split and a standalone Relu become int8, a channel Softmax stays float).
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/ir/Verifier.h"
#include "npucc/onnx/Importer.h"
#include "npucc/passes/Pass.h"
#include "npucc/quant/Calibrate.h"
#include "npucc/quant/InsertQdq.h"
#include "npucc/quant/Samples.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

using namespace npucc;
using namespace npucc::ir;
using namespace npucc::quant;
namespace fs = std::filesystem;

namespace {

fs::path tempDir(const std::string &name) {
  fs::path p = fs::temp_directory_path() /
               ("npucc_calib_" + name + "_" +
                std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void writeBytes(const fs::path &p, const std::string &b) {
  std::ofstream f(p, std::ios::binary);
  f << b;
}

/// A .npy file: version `major`, header dict text, raw data.
std::string npy(int major, const std::string &dict, const std::string &data) {
  std::string h = dict;
  size_t pre = major == 1 ? 10 : 12;
  while ((pre + h.size() + 1) % 64)
    h += ' ';
  h += '\n';
  std::string b = "\x93NUMPY";
  b += static_cast<char>(major);
  b += '\0';
  if (major == 1) {
    b += static_cast<char>(h.size() & 0xff);
    b += static_cast<char>(h.size() >> 8);
  } else {
    for (int i = 0; i < 4; ++i)
      b += static_cast<char>((h.size() >> (8 * i)) & 0xff);
  }
  return b + h + data;
}

template <typename T> std::string raw(const std::vector<T> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
}

std::unique_ptr<Graph> parse(const std::string &text) {
  auto r = parseGraph(text, "test.ir");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : nullptr;
}

const char *OneInput = R"(graph @main(%x: f32[1,3,2,2]) -> (%y) {
  %y = Relu(%x) : f32[1,3,2,2]
  return %y
})";

const char *TwoInputs = R"(graph @main(%a: f32[2,2], %b: f32[2,2]) -> (%y) {
  %y = Add(%a, %b) : f32[2,2]
  return %y
})";

} // namespace

TEST(QuantCalibNpy, ReadsV1AndV2) {
  fs::path d = tempDir("npy");
  std::vector<float> v = {1, 2, 3, 4, 5, 6};
  writeBytes(d / "a.npy",
             npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", raw(v)));
  auto t = readNpy((d / "a.npy").string());
  ASSERT_TRUE(t.ok()) << t.error().str();
  EXPECT_EQ(t->dtype(), DType::F32);
  EXPECT_EQ(t->shape(), (Shape{2, 3}));
  EXPECT_EQ(t->getDouble(5), 6.0);
  std::vector<int16_t> w = {-7, 9};
  writeBytes(d / "b.npy",
             npy(2, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", raw(w)));
  auto u = readNpy((d / "b.npy").string());
  ASSERT_TRUE(u.ok()) << u.error().str();
  EXPECT_EQ(u->dtype(), DType::I16);
  EXPECT_EQ(u->getInt(0), -7);
  // A scalar: shape ().
  writeBytes(d / "c.npy", npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                              raw(std::vector<double>{2.5})));
  auto s = readNpy((d / "c.npy").string());
  ASSERT_TRUE(s.ok()) << s.error().str();
  EXPECT_TRUE(s->shape().empty());
  EXPECT_EQ(s->getDouble(0), 2.5);
}

TEST(QuantCalibNpy, RejectsMalformedFiles) {
  fs::path d = tempDir("npybad");
  std::vector<float> v = {1, 2, 3, 4, 5, 6};
  struct Case {
    std::string file, bytes, expect;
  } cases[] = {
      {"magic.npy", "PK\x03\x04 not numpy at all", "bad magic"},
      {"short.npy", npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", raw(v)),
       "does not match shape"},
      {"big.npy", npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", raw(v)),
       "big-endian"},
      {"fortran.npy", npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", raw(v)),
       "Fortran"},
      {"dtype.npy", npy(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", raw(v)),
       "unsupported .npy dtype"},
      {"trunc.npy",
       npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", raw(v)).substr(0, 30),
       "truncated"},
  };
  for (const Case &c : cases) {
    writeBytes(d / c.file, c.bytes);
    auto t = readNpy((d / c.file).string());
    ASSERT_FALSE(t.ok()) << c.file;
    EXPECT_NE(t.error().str().find(c.expect), std::string::npos) << t.error().str();
    EXPECT_NE(t.error().str().find(c.file), std::string::npos) << t.error().str();
  }
}

TEST(QuantCalibPb, ReadsWhatTheOnnxWriterWrites) {
  fs::path d = tempDir("pb");
  Tensor t = Tensor::fromFloats({1, 3, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -11.5f});
  ASSERT_TRUE(onnx::writeTensorProto((d / "input_0.pb").string(), t, "x").ok());
  auto r = readTensorPb((d / "input_0.pb").string());
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_TRUE(*r == t);
  // Hand-made: dims [2] (packed), data_type INT64 (7), int64_data packed {3, -1}.
  std::string b = {0x0a, 0x01, 0x02, 0x10, 0x07, 0x3a};
  std::string payload = {0x03};
  for (int i = 0; i < 9; ++i)
    payload += static_cast<char>(0xff);
  payload += static_cast<char>(0x01);
  b += static_cast<char>(payload.size());
  b += payload;
  writeBytes(d / "i64.pb", b);
  auto q = readTensorPb((d / "i64.pb").string());
  ASSERT_TRUE(q.ok()) << q.error().str();
  EXPECT_EQ(q->dtype(), DType::I64);
  EXPECT_EQ(q->toInts(), (std::vector<int64_t>{3, -1}));
}

TEST(QuantCalibPb, RejectsMalformedFiles) {
  fs::path d = tempDir("pbbad");
  Tensor t = Tensor::fromFloats({4}, {1, 2, 3, 4});
  ASSERT_TRUE(onnx::writeTensorProto((d / "ok.pb").string(), t, "x").ok());
  std::ifstream f(d / "ok.pb", std::ios::binary);
  std::string good((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  writeBytes(d / "trunc.pb", good.substr(0, good.size() - 3));
  auto r = readTensorPb((d / "trunc.pb").string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().str().find("trunc.pb"), std::string::npos) << r.error().str();
  // dims say 3 elements, float_data holds 1.
  std::string b = {0x0a, 0x01, 0x03, 0x10, 0x01, 0x22, 0x04, 0, 0, static_cast<char>(0x80), 0x3f};
  writeBytes(d / "count.pb", b);
  auto c = readTensorPb((d / "count.pb").string());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().str().find("has 1 elements of data"), std::string::npos) << c.error().str();
  // Unknown data type 99.
  writeBytes(d / "type.pb", std::string{0x10, 0x63});
  auto u = readTensorPb((d / "type.pb").string());
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.error().str().find("type#99"), std::string::npos) << u.error().str();
}

TEST(QuantCalibSamples, FlatFilesBatchedNpyAndConversion) {
  auto g = parse(OneInput);
  ASSERT_TRUE(g);
  fs::path d = tempDir("flat");
  std::vector<float> one(12, 0.5f);
  writeBytes(d / "a.npy",
             npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 2, 2), }", raw(one)));
  std::vector<float> four(48);
  for (size_t i = 0; i < four.size(); ++i)
    four[i] = static_cast<float>(i);
  writeBytes(
      d / "b.npy",
      npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3, 2, 2), }", raw(four)));
  std::vector<double> dbl(12, -1.25);
  writeBytes(d / "c.npy",
             npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3, 2, 2), }", raw(dbl)));
  auto s = loadSamples(d.string(), *g);
  ASSERT_TRUE(s.ok()) << s.error().str();
  ASSERT_EQ(s->size(), 6u); // a, b[0..3], c
  EXPECT_EQ((*s)[0].inputs.at("x").getDouble(0), 0.5);
  EXPECT_EQ((*s)[3].inputs.at("x").getDouble(0), 24.0); // b[2] starts at element 24
  EXPECT_EQ((*s)[3].inputs.at("x").shape(), (Shape{1, 3, 2, 2}));
  EXPECT_EQ((*s)[5].inputs.at("x").dtype(), DType::F32); // f64 converted
  EXPECT_EQ((*s)[5].inputs.at("x").getDouble(11), -1.25);
}

TEST(QuantCalibSamples, ShapeMismatchNamesTheFile) {
  auto g = parse(OneInput);
  ASSERT_TRUE(g);
  fs::path d = tempDir("mismatch");
  std::vector<float> v(10, 0.f);
  writeBytes(d / "wrong.npy",
             npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", raw(v)));
  auto s = loadSamples(d.string(), *g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().str().find("wrong.npy"), std::string::npos) << s.error().str();
  EXPECT_NE(s.error().str().find("1x3x2x2"), std::string::npos) << s.error().str();
  auto e = loadSamples((d / "none").string(), *g);
  EXPECT_FALSE(e.ok());
}

TEST(QuantCalibSamples, MultiInputSubFolders) {
  auto g = parse(TwoInputs);
  ASSERT_TRUE(g);
  fs::path d = tempDir("multi");
  for (int k = 0; k < 2; ++k) {
    fs::path s = d / ("test_data_set_" + std::to_string(k));
    fs::create_directories(s);
    ASSERT_TRUE(onnx::writeTensorProto((s / "input_0.pb").string(),
                                       Tensor::fromFloats({2, 2}, {1, 2, 3, float(k)}), "a")
                    .ok());
    writeBytes(s / "b.npy", npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                                raw(std::vector<float>{9, 9, 9, 9})));
  }
  auto s = loadSamples(d.string(), *g);
  ASSERT_TRUE(s.ok()) << s.error().str();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[1].inputs.at("a").getDouble(3), 1.0);
  EXPECT_EQ((*s)[1].inputs.at("b").getDouble(0), 9.0);
  // Flat files are ambiguous for two inputs: a clear error.
  fs::path f = tempDir("multiflat");
  writeBytes(f / "x.npy", npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                              raw(std::vector<float>{9, 9, 9, 9})));
  auto e = loadSamples(f.string(), *g);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().str().find("sub-folder"), std::string::npos) << e.error().str();
  // A sample folder missing input 1.
  fs::remove(d / "test_data_set_1" / "b.npy");
  auto m = loadSamples(d.string(), *g);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().str().find("input 1"), std::string::npos) << m.error().str();
}

TEST(QuantCalibSamples, RandomSamplesAreSeeded) {
  auto g = parse(OneInput);
  ASSERT_TRUE(g);
  auto a = randomSamples(*g, 3, 7), b = randomSamples(*g, 3, 7), c = randomSamples(*g, 3, 8);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_TRUE(a[2].inputs.at("x") == b[2].inputs.at("x"));
  EXPECT_FALSE(a[2].inputs.at("x") == c[2].inputs.at("x"));
}

namespace {

ValueStats statsOf(const std::vector<float> &v) {
  ValueStats s;
  s.seen = true;
  s.min = s.max = v[0];
  for (float x : v) {
    s.min = std::min(s.min, double(x));
    s.max = std::max(s.max, double(x));
  }
  // In chunks, so that the histogram has to grow.
  for (size_t i = 0; i < v.size(); i += 1000)
    s.hist.add(v.data() + i, static_cast<int64_t>(std::min<size_t>(1000, v.size() - i)));
  return s;
}

std::vector<float> normalWithOutlier(float outlier) {
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0.f, 1.f);
  std::vector<float> v(200000);
  for (float &x : v)
    x = n(rng);
  v[123456] = outlier;
  return v;
}

} // namespace

TEST(QuantCalibMethods, HistogramGrowsWithoutLosingCounts) {
  Histogram h;
  std::vector<float> a = {0.1f, -0.2f}, b = {50.f, -3.f, 0.f};
  h.add(a.data(), 2);
  h.add(b.data(), 3);
  EXPECT_EQ(h.total(), 5.0);
  EXPECT_GT(h.limit(), 50.0);
  double sum = 0;
  for (double x : h.bins())
    sum += x;
  EXPECT_EQ(sum, 5.0);
}

TEST(QuantCalibMethods, MinMaxKeepsTheOutlierPercentileClipsIt) {
  ValueStats s = statsOf(normalWithOutlier(1000.f));
  Range mm = computeRange(s, CalibMethod::MinMax);
  EXPECT_EQ(mm.max, 1000.f);
  Range pc = computeRange(s, CalibMethod::Percentile, 99.99);
  EXPECT_GT(pc.max, 2.5f); // N(0,1): 99.99% is about 3.7
  EXPECT_LT(pc.max, 5.0f);
  EXPECT_LT(pc.min, -2.5f);
  EXPECT_GT(pc.min, -5.0f);
  Range pc90 = computeRange(s, CalibMethod::Percentile, 90.0);
  EXPECT_NEAR(pc90.max, 1.28f, 0.6f); // bins are 1000/2048 wide here
  // Entropy searches thresholds from 128 of the 2048 |x| bins up (as TensorRT):
  // with the outlier at 1000 the smallest is 1000/16.
  Range en = computeRange(s, CalibMethod::Entropy);
  EXPECT_LT(en.max, 1000.f / 8);
  ValueStats s30 = statsOf(normalWithOutlier(30.f));
  Range en30 = computeRange(s30, CalibMethod::Entropy);
  EXPECT_GT(en30.max, 2.0f);
  EXPECT_LT(en30.max, 15.0f);
  EXPECT_LT(en30.min, -2.0f);
  EXPECT_EQ(computeRange(s30, CalibMethod::MinMax).max, 30.f);
}

TEST(QuantCalibMethods, UniformNonNegativeData) {
  std::vector<float> v(100000);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i) / static_cast<float>(v.size()); // [0, 1)
  ValueStats s = statsOf(v);
  for (CalibMethod m : {CalibMethod::MinMax, CalibMethod::Percentile, CalibMethod::Entropy}) {
    Range r = computeRange(s, m, 99.99);
    EXPECT_EQ(r.min, 0.f) << calibMethodName(m);
    EXPECT_NEAR(r.max, 1.0f, 0.05f) << calibMethodName(m);
  }
  EXPECT_FALSE(parseCalibMethod("bogus").has_value());
  EXPECT_EQ(*parseCalibMethod("entropy"), CalibMethod::Entropy);
}

TEST(QuantCalibQdq, ActivationParamsCoverZero) {
  QuantParams p = activationParams({-1.f, 3.f});
  EXPECT_FLOAT_EQ(p.scale[0], 4.f / 255.f);
  EXPECT_EQ(p.zeroPoint[0], -64);
  QuantParams r = activationParams({0.5f, 2.f}); // 0 is always representable
  EXPECT_EQ(r.zeroPoint[0], -128);
  EXPECT_FLOAT_EQ(r.scale[0], 2.f / 255.f);
}

TEST(QuantCalibQdq, InsertThenFoldGivesTypedInt8) {
  const char *text = R"(graph @main(%x: f32[1,2,4,4]) -> (%y, %z) {
  const @w: f32[3,2,1,1] = dense<[0.5, -0.25, 1.0, 0.75, -0.5, 0.125]>
  const @b: f32[3] = dense<[0.1, -0.2, 0.3]>
  %c = Conv(%x, @w, @b) {act_min=0.0, kernel_shape=[1, 1]} : f32[1,3,4,4]
  %m = MaxPool(%c) {kernel_shape=[2, 2], strides=[2, 2]} : f32[1,3,2,2]
  %y = Flatten(%m) {axis=1} : f32[1,12]
  %z = GlobalMaxPool(%c) : f32[1,3,1,1]
  return %y, %z
})";
  auto g = parse(text);
  ASSERT_TRUE(g);
  auto samples = randomSamples(*g, 8, 1);
  GraphEvaluator eval = [](const Graph &gr, const std::map<std::string, Tensor> &in,
                           std::map<std::string, Tensor> &all) -> Status {
    auto r = interp::runGraph(gr, in, &all);
    if (!r)
      return std::move(r.error());
    return success();
  };
  auto stats = collectStats(*g, samples, eval);
  ASSERT_TRUE(stats.ok()) << stats.error().str();
  EXPECT_EQ(stats->count("c"), 1u);
  EXPECT_GE(stats->at("c").min, 0.0); // the fused clamp is in the statistics
  auto qdq = g->clone();
  auto st = insertQdq(*qdq, computeRanges(*stats, CalibMethod::MinMax));
  ASSERT_TRUE(st.ok()) << st.error().str();
  EXPECT_EQ(st->quantizedOps, 3);
  ASSERT_EQ(st->floatOps.size(), 1u);
  EXPECT_NE(st->floatOps[0].find("GlobalMaxPool"), std::string::npos);
  ASSERT_TRUE(verifyGraph(*qdq).ok());
  int q = 0, dq = 0;
  for (const auto &n : qdq->nodes()) {
    q += n->kind == OpKind::QuantizeLinear;
    dq += n->kind == OpKind::DequantizeLinear;
  }
  EXPECT_EQ(q, 4);  // x, c, m, y; MaxPool and Flatten reuse their input params
  EXPECT_GE(dq, 5); // + weights and bias
  // fold-qdq turns it into typed int8.
  auto folded = qdq->clone();
  passes::PassContext ctx;
  ASSERT_TRUE(passes::runPipeline(*folded, "fold-qdq,dce", ctx).ok());
  int typedConv = 0;
  for (const auto &n : folded->nodes())
    if (n->kind == OpKind::Conv) {
      ++typedConv;
      EXPECT_EQ(n->output(0)->dtype, DType::I8);
      ASSERT_TRUE(n->input(1)->quant.has_value());
      EXPECT_EQ(n->input(1)->quant->scale.size(), 3u); // per output channel
      EXPECT_EQ(n->input(2)->dtype, DType::I32);
    }
  EXPECT_EQ(typedConv, 1);
  auto fl = floatOpsOf(*folded);
  ASSERT_EQ(fl.size(), 1u);
  EXPECT_NE(fl[0].find("GlobalMaxPool"), std::string::npos);
  // Output names are kept and the int8 graph stays close to the float one.
  for (const auto &s : samples) {
    auto a = interp::runGraph(*g, s.inputs);
    auto b = interp::runGraph(*folded, s.inputs);
    ASSERT_TRUE(a.ok() && b.ok());
    for (const char *name : {"y", "z"}) {
      const Tensor &ta = a->at(name), &tb = b->at(name);
      ASSERT_EQ(ta.numElements(), tb.numElements());
      double amax = 0;
      for (int64_t i = 0; i < ta.numElements(); ++i)
        amax = std::max(amax, std::fabs(ta.getDouble(i)));
      for (int64_t i = 0; i < ta.numElements(); ++i)
        EXPECT_NEAR(ta.getDouble(i), tb.getDouble(i), 0.02 * amax + 1e-3) << name << i;
    }
  }
}

TEST(QuantCalibMethods, SparseValuesFallBackToMinMax) {
  std::vector<float> v = normalWithOutlier(40.f);
  v.resize(1000); // fewer than 4096 values
  v[10] = 40.f;
  ValueStats s = statsOf(v);
  for (CalibMethod m : {CalibMethod::Percentile, CalibMethod::Entropy})
    EXPECT_EQ(computeRange(s, m, 99.0).max, 40.f) << calibMethodName(m);
}

TEST(QuantCalibQdq, AllZeroRangeGetsAUnitRange) {
  QuantParams p = activationParams({0.f, 0.f});
  EXPECT_FLOAT_EQ(p.scale[0], 1.f / 255.f);
  EXPECT_EQ(p.zeroPoint[0], -128);
}

namespace {

/// Mean squared error of int8 quantize-dequantize of v with the range's parameters.
double realMse(const std::vector<float> &v, Range r) {
  QuantParams p = activationParams(r);
  double s = p.scale[0], e = 0;
  for (float x : v) {
    double q = std::clamp<double>(std::round(x / s) + p.zeroPoint[0], -128, 127);
    double d = x - s * (q - p.zeroPoint[0]);
    e += d * d;
  }
  return e / static_cast<double>(v.size());
}

} // namespace

TEST(QuantCalibMethods, MseMinimizesTheQuantizationError) {
  EXPECT_EQ(*parseCalibMethod("mse"), CalibMethod::Mse);
  EXPECT_STREQ(calibMethodName(CalibMethod::Mse), "mse");
  // Heavy tails (x = n^3, n ~ N(0,1)): minmax wastes levels on the tails.
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> v(200000);
  for (float &x : v) {
    float n = nd(rng);
    x = n * n * n;
  }
  ValueStats s = statsOf(v);
  Range mse = computeRange(s, CalibMethod::Mse);
  double eMse = realMse(v, mse);
  EXPECT_LT(mse.max, s.max * 0.9) << mse.min << " " << s.min; // clipped
  EXPECT_GT(mse.max, 3.0f);        // but not the body
  EXPECT_LT(mse.min, -3.0f);
  EXPECT_LT(eMse, 0.9 * realMse(v, computeRange(s, CalibMethod::MinMax)));
  for (CalibMethod m : {CalibMethod::Percentile, CalibMethod::Entropy})
    EXPECT_LT(eMse, 1.05 * realMse(v, computeRange(s, m, 99.99))) << calibMethodName(m);
  // Uniform data: any clipping loses more than it gains.
  std::vector<float> u(100000);
  for (size_t i = 0; i < u.size(); ++i)
    u[i] = static_cast<float>(i) / static_cast<float>(u.size());
  Range ru = computeRange(statsOf(u), CalibMethod::Mse);
  EXPECT_EQ(ru.min, 0.f);
  EXPECT_NEAR(ru.max, 1.0f, 0.03f);
}

TEST(QuantCalibQdq, SliceGatherSplitFoldSoftmaxOffLastAxisStaysFloat) {
  const char *text = R"(graph @main(%x: f32[1,3,8]) -> (%y, %g, %sm, %h0, %h1, %rl) {
  const @sp: i64[2] = dense<[4, 4]>
  const @st: i64[1] = dense<[2]>
  const @en: i64[1] = dense<[6]>
  const @ax: i64[1] = dense<[2]>
  const @ix: i64[2] = dense<[2, 0]>
  %s = Slice(%x, @st, @en, @ax) : f32[1,3,4]
  %y = Reshape(%s, @shp) {allowzero=0} : f32[1,12]
  %g = Gather(%x, @ix) {axis=1} : f32[1,2,8]
  %sm = Softmax(%x) {axis=1} : f32[1,3,8]
  %h0, %h1 = Split(%x, @sp) {axis=2} : f32[1,3,4], f32[1,3,4]
  %rl = Relu(%h1) : f32[1,3,4]
  return %y, %g, %sm, %h0, %h1, %rl
})";
  std::string t = text;
  t.replace(t.find("  %s = "), 0, "  const @shp: i64[2] = dense<[1, 12]>\n");
  auto g = parse(t.c_str());
  ASSERT_TRUE(g);
  auto samples = randomSamples(*g, 6, 2);
  GraphEvaluator eval = [](const Graph &gr, const std::map<std::string, Tensor> &in,
                           std::map<std::string, Tensor> &all) -> Status {
    auto r = interp::runGraph(gr, in, &all);
    if (!r)
      return std::move(r.error());
    return success();
  };
  auto stats = collectStats(*g, samples, eval);
  ASSERT_TRUE(stats.ok()) << stats.error().str();
  auto qdq = g->clone();
  auto st = insertQdq(*qdq, computeRanges(*stats, CalibMethod::MinMax));
  ASSERT_TRUE(st.ok()) << st.error().str();
  EXPECT_EQ(st->quantizedOps, 5); // Slice, Reshape, Gather, Split, Relu
  ASSERT_EQ(st->floatOps.size(), 1u);
  EXPECT_NE(st->floatOps[0].find("Softmax"), std::string::npos);
  auto folded = qdq->clone();
  passes::PassContext ctx;
  ASSERT_TRUE(passes::runPipeline(*folded, "fold-qdq,dce", ctx).ok());
  int typed = 0;
  for (const auto &n : folded->nodes())
    if (n->kind == OpKind::Slice || n->kind == OpKind::Gather || n->kind == OpKind::Split ||
        n->kind == OpKind::Relu) {
      ++typed;
      for (const Value *o : n->outputs)
        EXPECT_EQ(o->dtype, DType::I8) << n->name;
    }
  EXPECT_EQ(typed, 4);
  auto fl = floatOpsOf(*folded);
  ASSERT_EQ(fl.size(), 1u);
  EXPECT_NE(fl[0].find("Softmax"), std::string::npos);
  // Data movement only: the int8 outputs are the input quantized (one step);
  // the Relu requantizes to its own range (one more step).
  double step = (stats->at("x").max - std::min(0.0, stats->at("x").min)) / 255.0;
  double stepRl = stats->at("rl").max / 255.0;
  for (const auto &s : samples) {
    auto a = interp::runGraph(*g, s.inputs);
    auto b = interp::runGraph(*folded, s.inputs);
    ASSERT_TRUE(a.ok() && b.ok()) << (b.ok() ? "" : b.error().str());
    for (const char *name : {"y", "g", "sm", "h0", "h1", "rl"}) {
      const Tensor &ta = a->at(name), &tb = b->at(name);
      ASSERT_EQ(ta.numElements(), tb.numElements());
      double tol = 0.51 * (step + (name[0] == 'r' ? stepRl : 0.0)) + 1e-6;
      for (int64_t i = 0; i < ta.numElements(); ++i)
        EXPECT_NEAR(ta.getDouble(i), tb.getDouble(i), tol) << name << i;
    }
  }
}

// Bias correction: the int32 bias of a Conv absorbs the expected shift
// sum_i (Wq - W)[o,i] * E[x_i] that the weight rounding causes.
TEST(QuantCalibQdq, ConvBiasCorrectsTheWeightRoundingShift) {
  const char *text = R"(graph @main(%x: f32[1,2,4,4]) -> (%y) {
  const @w: f32[2,2,1,1] = dense<[1.0, 0.0039, -1.0, 0.51]>
  const @b: f32[2] = dense<[0.25, -0.5]>
  %y = Conv(%x, @w, @b) {kernel_shape=[1, 1]} : f32[1,2,4,4]
  return %y
})";
  auto g = parse(text);
  ASSERT_TRUE(g);
  auto samples = randomSamples(*g, 4, 3);
  std::vector<double> mean(2, 0.0); // inputs shifted: channel means 40 and -30
  for (auto &s : samples) {
    Tensor &t = s.inputs.at("x");
    for (int64_t i = 0; i < t.numElements(); ++i) {
      t.setDouble(i, t.getDouble(i) + (i < 16 ? 40.0 : -30.0));
      mean[static_cast<size_t>(i / 16)] += t.getDouble(i) / (16.0 * samples.size());
    }
  }
  GraphEvaluator eval = [](const Graph &gr, const std::map<std::string, Tensor> &in,
                           std::map<std::string, Tensor> &all) -> Status {
    auto r = interp::runGraph(gr, in, &all);
    if (!r)
      return std::move(r.error());
    return success();
  };
  auto stats = collectStats(*g, samples, eval);
  ASSERT_TRUE(stats.ok());
  auto qdq = g->clone();
  ASSERT_TRUE(insertQdq(*qdq, computeRanges(*stats, CalibMethod::MinMax)).ok());
  const double w[2][2] = {{1.0, 0.0039}, {-1.0, 0.51}}, b[2] = {0.25, -0.5};
  const Node *biasDq = nullptr;
  for (const auto &n : qdq->nodes())
    if (n->kind == OpKind::DequantizeLinear && n->input(0)->dtype == DType::I32)
      biasDq = n.get();
  ASSERT_NE(biasDq, nullptr);
  for (int o = 0; o < 2; ++o) {
    double s = 1.0 / 127.0, shift = 0; // max |w| = 1 in both rows
    for (int i = 0; i < 2; ++i)
      shift += (std::round(w[o][i] / s) * s - w[o][i]) * mean[static_cast<size_t>(i)];
    double scale = biasDq->input(1)->constant->getDouble(o);
    double real = static_cast<double>(biasDq->input(0)->constant->getInt(o)) * scale;
    EXPECT_GT(std::fabs(shift), 0.02) << o; // a real shift to correct
    EXPECT_NEAR(real, b[o] - shift, 0.51 * scale + 1e-3 * std::fabs(shift)) << o;
  }
}
