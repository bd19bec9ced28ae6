//===- quant_accuracy_test.cpp - Float vs int8 accuracy report ------------===//
//
// The metrics of quant/Accuracy.h on hand-computed vectors (SNR of a known
// noise, cosine of orthogonal/parallel vectors, top-1 agreement, sums over
// all samples), dequantization with per-tensor and per-channel params, the
// per-layer matching by name on two small text-IR graphs (an int8 typed
// graph vs its float twin), the text/JSON output, and an end-to-end
// measurement on shared/models/torch_ptq_qdq: its QDQ form run as ONNX
// fake-quant in the float interpreter vs the default pipeline's typed int8
// graph, then the same with one weight scale corrupted.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/Accuracy.h"

#include "npucc/ir/Parser.h"
#include "npucc/onnx/Importer.h"
#include "npucc/passes/Pass.h"

#include "CiSkip.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>

namespace {

namespace fs = std::filesystem;
using namespace npucc;
using quant::MetricAccumulator;

TEST(AccuracyMetrics, SnrOfKnownNoise) {
  // ref = +-1 (power 1), noise = +-0.1 (power 0.01): SNR = 10 log10(100) = 20 dB.
  std::vector<double> ref, q;
  for (int i = 0; i < 100; ++i) {
    double r = (i % 2) ? 1.0 : -1.0;
    ref.push_back(r);
    q.push_back(r + ((i % 3) ? 0.1 : -0.1));
  }
  MetricAccumulator m;
  m.add(ref, q);
  EXPECT_NEAR(m.snrDb(), 20.0, 1e-9);
  EXPECT_NEAR(m.maxAbsError(), 0.1, 1e-12);
  EXPECT_EQ(m.elements(), 100);
  EXPECT_EQ(m.rows(), 0); // not a classifier
}

TEST(AccuracyMetrics, SnrSumsOverAllSamples) {
  // Sample 1: ref 1, error 0.1; sample 2: ref 10, no error.
  // sum ref^2 = 101, sum err^2 = 0.01: 10 log10(10100) = 40.04 dB (not a per-sample mean).
  MetricAccumulator m;
  m.add({1.0}, {1.1});
  m.add({10.0}, {10.0});
  EXPECT_NEAR(m.snrDb(), 10.0 * std::log10(10100.0), 1e-6);
  EXPECT_NEAR(m.maxAbsError(), 0.1, 1e-12);
}

TEST(AccuracyMetrics, ZeroErrorIsInfinite) {
  MetricAccumulator m;
  m.add({1.0, -2.0}, {1.0, -2.0});
  EXPECT_TRUE(std::isinf(m.snrDb()) && m.snrDb() > 0);
  EXPECT_DOUBLE_EQ(m.cosine(), 1.0);
  EXPECT_EQ(m.maxAbsError(), 0.0);
  MetricAccumulator z; // zero reference, non-zero error
  z.add({0.0, 0.0}, {0.5, 0.0});
  EXPECT_TRUE(std::isinf(z.snrDb()) && z.snrDb() < 0);
  EXPECT_DOUBLE_EQ(z.cosine(), 0.0);
}

TEST(AccuracyMetrics, Cosine) {
  MetricAccumulator orth, par, anti;
  orth.add({1.0, 0.0}, {0.0, 3.0});
  par.add({1.0, 2.0, 3.0}, {2.0, 4.0, 6.0});
  anti.add({1.0, 2.0}, {-1.0, -2.0});
  EXPECT_NEAR(orth.cosine(), 0.0, 1e-12);
  EXPECT_NEAR(par.cosine(), 1.0, 1e-12);
  EXPECT_NEAR(anti.cosine(), -1.0, 1e-12);
  MetricAccumulator tilted; // 45 degrees
  tilted.add({1.0, 0.0}, {1.0, 1.0});
  EXPECT_NEAR(tilted.cosine(), std::sqrt(0.5), 1e-12);
}

TEST(AccuracyMetrics, Top1Agreement) {
  // Three rows of 2 classes: rows 0 and 2 agree, row 1 does not.
  MetricAccumulator m;
  m.add({0.1, 0.9, 0.8, 0.2, 0.3, 0.7}, {0.2, 0.8, 0.1, 0.9, 0.4, 0.6}, 2);
  EXPECT_EQ(m.rows(), 3);
  EXPECT_EQ(m.rowsAgreeing(), 2);
  m.add({5.0, 1.0}, {4.0, 1.0}, 2); // a second sample, agreeing
  EXPECT_EQ(m.rows(), 4);
  EXPECT_EQ(m.rowsAgreeing(), 3);
  EXPECT_TRUE(quant::isClassifierShape({1, 10}));
  EXPECT_TRUE(quant::isClassifierShape({4, 2}));
  EXPECT_FALSE(quant::isClassifierShape({1, 1}));
  EXPECT_FALSE(quant::isClassifierShape({1, 10, 1, 1}));
}

TEST(AccuracyDequantize, PerTensorAndPerChannel) {
  ir::Tensor t = ir::Tensor::fromInts(ir::DType::I8, {4}, {-128, 0, 5, 127});
  ir::QuantParams q{{0.5f}, {3}, 0};
  auto r = quant::dequantize(t, &q);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<double>{-65.5, -1.5, 1.0, 62.0}));

  // [2,3] per channel along axis 1: scales [1, 0.25, 2], zero points [0, 2, -1].
  ir::Tensor c = ir::Tensor::fromInts(ir::DType::I8, {2, 3}, {1, 2, 3, 4, 6, -1});
  ir::QuantParams pc{{1.0f, 0.25f, 2.0f}, {0, 2, -1}, 1};
  auto rc = quant::dequantize(c, &pc);
  ASSERT_TRUE(rc.ok()) << rc.error().message;
  EXPECT_EQ(*rc, (std::vector<double>{1.0, 0.0, 8.0, 4.0, 1.0, 0.0}));

  ir::QuantParams bad{{1.0f, 2.0f}, {0, 0}, 1}; // 2 scales for 3 channels
  EXPECT_FALSE(quant::dequantize(c, &bad).ok());
  EXPECT_FALSE(quant::dequantize(t, nullptr).ok()); // integers need params
  auto f = quant::dequantize(ir::Tensor::fromFloats({2}, {1.5f, -2.0f}), nullptr);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, (std::vector<double>{1.5, -2.0}));
}

TEST(AccuracyDequantize, ParamsOfQdqValues) {
  // The QDQ form: a u8 QuantizeLinear output without q(...) type, behind an identity Cast.
  auto g = ir::parseGraph(R"(graph @main(%x: f32[1,4]) -> (%c) {
  const @s: f32[] = dense<[0.5]>
  const @z: u8[] = dense<[128]>
  %q = QuantizeLinear(%x, @s, @z) : u8[1,4]
  %c = Cast(%q) {to=2} : u8[1,4]
  return %c
}
)");
  ASSERT_TRUE(g.ok()) << g.error().str();
  auto p = quant::realValueParams(*(*g)->findValue("c"));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->scale, std::vector<float>{0.5f});
  EXPECT_EQ(p->zeroPoint, std::vector<int32_t>{128});
  EXPECT_FALSE(quant::realValueParams(*(*g)->findValue("x")).has_value()); // float
}

// The float model: a = Relu(x), b = Identity(a), and an %aq of another shape.
const char *kFloatIr = R"(graph @main(%x: f32[1,4]) -> (%b) {
  %aq = Transpose(%x) {perm=[1, 0]} : f32[4,1]
  %a = Relu(%x) : f32[1,4]
  %b = Identity(%a) : f32[1,4]
  return %b
}
)";

// Its int8 twin: x quantized with scale 0.1, typed i8 Relu, dequantized.
const char *kQuantIr = R"(graph @main(%x: f32[1,4]) -> (%b) {
  const @s: f32[] = dense<[0.1]>
  const @z: i8[] = dense<[0]>
  %aq = QuantizeLinear(%x, @s, @z) : i8[1,4] q(0.1, 0)
  %a = Relu(%aq) : i8[1,4] q(0.1, 0)
  %b = DequantizeLinear(%a, @s, @z) : f32[1,4]
  return %b
}
)";

struct TwinGraphs {
  std::unique_ptr<ir::Graph> f, q;
};

TwinGraphs parseTwins() {
  TwinGraphs t;
  auto f = ir::parseGraph(kFloatIr, "float.ir");
  auto q = ir::parseGraph(kQuantIr, "quant.ir");
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().str());
  EXPECT_TRUE(q.ok()) << (q.ok() ? "" : q.error().str());
  if (f.ok() && q.ok()) {
    t.f = f.take();
    t.q = q.take();
  }
  return t;
}

std::vector<quant::Sample> oneSample() {
  quant::Sample s;
  s.inputs["x"] = ir::Tensor::fromFloats({1, 4}, {0.0f, 0.26f, 1.0f, -2.0f});
  s.origin = "hand";
  return {s};
}

TEST(AccuracyReport, PerLayerMatchesByName) {
  TwinGraphs g = parseTwins();
  ASSERT_TRUE(g.f && g.q);
  quant::AccuracyOptions o;
  o.perLayer = true;
  o.samplesOrigin = "a hand-written sample";
  auto r = quant::measureAccuracy(*g.f, *g.q, oneSample(), o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  // x -> q = [0, 3, 10, -20] -> Relu -> [0, 3, 10, 0] -> [0, 0.3, 1.0, 0]; the float
  // a = [0, 0.26, 1, 0]: one error of 0.04, SNR = 10 log10((0.26^2 + 1) / 0.04^2).
  double snr = 10.0 * std::log10((0.26 * 0.26 + 1.0) / (0.04 * 0.04));
  ASSERT_EQ(r->layers.size(), 2u);
  EXPECT_EQ(r->layers[0].name, "a");
  EXPECT_EQ(r->layers[0].op, "Relu");
  EXPECT_EQ(r->layers[0].qtype, "i8"); // the int8 value, dequantized with q(0.1, 0)
  EXPECT_NEAR(r->layers[0].snrDb, snr, 1e-3);
  EXPECT_NEAR(r->layers[0].maxAbsError, 0.04, 1e-5);
  EXPECT_EQ(r->layers[1].name, "b");
  EXPECT_EQ(r->layers[1].qtype, "f32");
  EXPECT_NEAR(r->layers[1].snrDb, snr, 1e-3);
  // %aq is in both graphs but with another shape: listed as not compared.
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_NE(r->skipped[0].find("aq"), std::string::npos);
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].name, "b");
  EXPECT_TRUE(r->outputs[0].classifier); // [1, 4]
  EXPECT_EQ(r->outputs[0].top1Rows, 1);
  EXPECT_EQ(r->outputs[0].top1Agree, 1); // argmax 2 in both
  EXPECT_EQ(r->outputs[0].elements, 4);

  // Without perLayer: outputs only.
  auto r2 = quant::measureAccuracy(*g.f, *g.q, oneSample(), quant::AccuracyOptions{});
  ASSERT_TRUE(r2.ok());
  EXPECT_TRUE(r2->layers.empty());
  EXPECT_NEAR(r2->outputs[0].snrDb, snr, 1e-3);
}

// The quantizer's naming: the int8 twin of float %a is %a_quantized.
const char *kQuantSuffixIr = R"(graph @main(%x: f32[1,4]) -> (%b) {
  const @s: f32[] = dense<[0.1]>
  const @z: i8[] = dense<[0]>
  %x_quantized = QuantizeLinear(%x, @s, @z) : i8[1,4] q(0.1, 0)
  %a_quantized = Relu(%x_quantized) : i8[1,4] q(0.1, 0)
  %b = DequantizeLinear(%a_quantized, @s, @z) : f32[1,4]
  return %b
}
)";

TEST(AccuracyReport, PerLayerMatchesQuantizedSuffix) {
  TwinGraphs g = parseTwins();
  auto q = ir::parseGraph(kQuantSuffixIr, "suffix.ir");
  ASSERT_TRUE(g.f && q.ok()) << (q.ok() ? "" : q.error().str());
  quant::AccuracyOptions o;
  o.perLayer = true;
  auto r = quant::measureAccuracy(*g.f, **q, oneSample(), o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  // %x_quantized -> %x is a graph input (not a layer); %a_quantized -> %a; %b -> %b.
  ASSERT_EQ(r->layers.size(), 2u);
  EXPECT_EQ(r->layers[0].name, "a");
  EXPECT_EQ(r->layers[0].qtype, "i8");
  EXPECT_NEAR(r->layers[0].maxAbsError, 0.04, 1e-5);
  EXPECT_EQ(r->layers[1].name, "b");
  EXPECT_TRUE(r->skipped.empty());
}

TEST(AccuracyReport, ItsOwnFloatGraphIsExact) {
  TwinGraphs g = parseTwins();
  ASSERT_TRUE(g.f);
  quant::AccuracyOptions o;
  o.perLayer = true;
  auto r = quant::measureAccuracy(*g.f, *g.f, oneSample(), o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_TRUE(std::isinf(r->outputs[0].snrDb));
  std::string text = quant::formatReport(*r);
  EXPECT_NE(text.find(" inf "), std::string::npos) << text;
  auto j = nlohmann::json::parse(quant::reportJson(*r));
  EXPECT_EQ(j["outputs"][0]["snr_db"], "inf");
}

TEST(AccuracyReport, TextAndJson) {
  TwinGraphs g = parseTwins();
  ASSERT_TRUE(g.f && g.q);
  quant::AccuracyOptions o;
  o.perLayer = true;
  o.samplesOrigin = "calibration samples (no --eval given)";
  o.floatOps = {"n1 (Erf)"};
  auto r = quant::measureAccuracy(*g.f, *g.q, oneSample(), o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  std::string text = quant::formatReport(*r);
  std::cout << text;
  EXPECT_EQ(text, quant::formatReport(*r)); // deterministic
  EXPECT_NE(text.find("1 sample(s) from calibration samples (no --eval given)"),
            std::string::npos);
  EXPECT_NE(text.find("28.24"), std::string::npos);       // the SNR, 2 decimals
  EXPECT_NE(text.find("1/1 (100.0%)"), std::string::npos); // top-1
  EXPECT_NE(text.find("n1 (Erf)"), std::string::npos);     // float ops listed
  EXPECT_NE(text.find("not compared: aq"), std::string::npos);
  auto j = nlohmann::json::parse(quant::reportJson(*r));
  EXPECT_EQ(j["samples_origin"], o.samplesOrigin);
  EXPECT_EQ(j["samples"][0], "hand");
  EXPECT_NEAR(j["outputs"][0]["snr_db"].get<double>(), r->outputs[0].snrDb, 1e-9);
  EXPECT_EQ(j["outputs"][0]["top1_agreeing"], 1);
  EXPECT_EQ(j["layers"].size(), 2u);
  EXPECT_EQ(j["float_ops"][0], "n1 (Erf)");
}

TEST(AccuracyReport, Errors) {
  TwinGraphs g = parseTwins();
  ASSERT_TRUE(g.f && g.q);
  EXPECT_FALSE(quant::measureAccuracy(*g.f, *g.q, {}, {}).ok()); // no samples
  quant::Sample wrong;
  wrong.inputs["y"] = ir::Tensor::fromFloats({1, 4}, {0, 0, 0, 0});
  auto r = quant::measureAccuracy(*g.f, *g.q, {wrong}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().str().find("'x'"), std::string::npos) << r.error().str();
}

TEST(AccuracyReport, FloatOpsOfAQuantizedGraph) {
  TwinGraphs g = parseTwins();
  ASSERT_TRUE(g.f && g.q);
  EXPECT_TRUE(quant::listFloatOps(*g.q).empty()); // Q, typed Relu, DQ
  auto fl = quant::listFloatOps(*g.f);
  ASSERT_EQ(fl.size(), 3u);
  EXPECT_NE(fl[1].find("(Relu)"), std::string::npos) << fl[1];
}

//===----------------------------------------------------------------------===//
// End to end: shared/models/torch_ptq_qdq
//===----------------------------------------------------------------------===//

std::unique_ptr<ir::Graph> importWith(const fs::path &p, const std::string &pipeline) {
  auto g = onnx::importModel(p.string());
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().str());
  if (!g.ok())
    return nullptr;
  auto gr = g.take();
  passes::PassContext ctx;
  auto st = passes::runPipeline(*gr, pipeline, ctx);
  EXPECT_TRUE(st.ok()) << pipeline << ": " << (st.ok() ? "" : st.error().str());
  return st.ok() ? std::move(gr) : nullptr;
}

TEST(AccuracyModel, TorchPtqQdqFakeQuantVsInt8) {
  fs::path dir = fs::path(NPUCC_SOURCE_DIR "/../shared/models/torch_ptq_qdq");
  if (!fs::exists(dir / "model.onnx"))
    NPUCC_SKIP() << "no " << dir;
  // (a) QDQ kept: the float interpreter runs ONNX's fake-quant semantics.
  auto fq = importWith(dir / "model.onnx", "remove-identity,dce");
  // (b) the default pipeline: typed int8 IR, integer interpreter.
  auto iq = importWith(dir / "model.onnx", passes::defaultPipeline());
  ASSERT_TRUE(fq && iq);
  ASSERT_EQ(fq->inputs.size(), 1u);
  auto x = onnx::readTensorProto((dir / "test_data_set_0" / "input_0.pb").string());
  ASSERT_TRUE(x.ok()) << x.error().str();
  quant::Sample s;
  s.inputs[fq->inputs[0]->name] = x.take();
  s.origin = "test_data_set_0";

  quant::AccuracyOptions o;
  o.perLayer = true;
  o.samplesOrigin = "torch_ptq_qdq/test_data_set_0";
  o.floatOps = quant::listFloatOps(*iq);
  auto r = quant::measureAccuracy(*fq, *iq, {s}, o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  std::cout << quant::formatReport(*r);
  ASSERT_EQ(r->outputs.size(), 1u);
  const quant::TensorAccuracy &out = r->outputs[0];
  EXPECT_TRUE(out.classifier); // [1, 10]
  EXPECT_GE(out.snrDb, 30.0);
  EXPECT_GT(out.cosine, 0.999);
  EXPECT_EQ(out.top1Agree, 1);
  EXPECT_GT(r->layers.size(), 3u); // quantized activations matched by name
  for (const auto &l : r->layers)
    EXPECT_GE(l.snrDb, 20.0) << l.name;
  for (const auto &f : o.floatOps) // every Conv/Gemm runs in int8
    EXPECT_TRUE(f.find("(Conv)") == std::string::npos && f.find("(Gemm)") == std::string::npos)
        << f;

  // Corrupt one Conv's weight scales (x4): the int8 result must drift away.
  ir::Node *conv = nullptr;
  for (const auto &n : iq->nodes())
    if (n->kind == ir::OpKind::Conv && n->input(1) && n->input(1)->quant) {
      conv = n.get();
      break;
    }
  ASSERT_TRUE(conv);
  for (float &sc : conv->input(1)->quant->scale)
    sc *= 4.0f;
  auto bad = quant::measureAccuracy(*fq, *iq, {s}, quant::AccuracyOptions{});
  ASSERT_TRUE(bad.ok()) << bad.error().str();
  std::cout << "corrupted weight scales of " << conv->name << ":\n" << quant::formatReport(*bad);
  EXPECT_LT(bad->outputs[0].snrDb, 20.0);
  EXPECT_LT(bad->outputs[0].snrDb, out.snrDb - 10.0);
}

} // namespace
