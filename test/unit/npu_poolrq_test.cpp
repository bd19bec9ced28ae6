//===- npu_poolrq_test.cpp - The requantizing average pool on the NPU -----===//
//
// Issue 21: a pool command that binds in_zp, out_zp, requant_mult and
// requant_shift averages as requant(sum(x - in_zp)) + out_zp, so an
// AveragePool whose input and output quantization differ runs on the NPU
// where every window of the layer divides by the same count. The loader
// (all four parameters or none), the placement rules, and the NPU's
// arithmetic with the compiler's multiplier (target::poolMultiplier) against
// the reference interpreter.
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/passes/Pass.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include "RequantReference.h"
#include "TestTargets.h"

#include "../../runtime/hal/npucc_params.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace npucc;
using namespace npucc::target;

namespace {

std::string poolrqPath() { return npucc::test::testTarget("npu-poolrq.json"); }

/// npu-poolrq's description with its pool command's params edited by `edit`.
std::string descEdited(void (*edit)(nlohmann::json &params)) {
  std::ifstream in(poolrqPath());
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, true, true);
  edit(j["commands"]["pool"]["params"]);
  return j.dump();
}

TEST(NpuPoolRq, LoaderTakesAllFourOrNone) {
  auto rq = loadTarget(poolrqPath());
  ASSERT_TRUE(rq.ok()) << rq.error().str();
  EXPECT_TRUE(poolRequantizes(*rq));
  auto def = loadTarget("npu-default");
  ASSERT_TRUE(def.ok());
  EXPECT_TRUE(poolRequantizes(*def));
  auto old = loadTarget(npucc::test::testTarget("npu-avgpool.json"));
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(poolRequantizes(*old)); // the avg_rounding path stays tested there
  auto half = parseTargetJson(descEdited([](nlohmann::json &p) { p.erase("requant_shift"); }), "h");
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.error().str().find("/commands/pool/params: a requantizing pool binds 'in_zp', "
                                    "'out_zp', 'requant_mult' and 'requant_shift' together; "
                                    "missing 'requant_shift'"),
            std::string::npos)
      << half.error().str();
  auto none =
      parseTargetJson(descEdited([](nlohmann::json &p) {
                        for (const char *k : {"in_zp", "out_zp", "requant_mult", "requant_shift"})
                          p.erase(k);
                      }),
                      "n");
  ASSERT_TRUE(none.ok()) << none.error().str();
  EXPECT_FALSE(poolRequantizes(*none));
}

std::unique_ptr<ir::Graph> parse(const std::string &text) {
  auto r = ir::parseGraph(text, "poolrq.ir");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str()) << "\n" << text;
  return r.ok() ? r.take() : nullptr;
}

/// An int8 pooling [1,3,H,W] q(0.25, 6) -> [1,3,OH,OW] q(`outQ`).
std::string poolGraph(int h, int w, int oh, int ow, const std::string &attrs,
                      const std::string &outQ = "q(0.0371, -3)",
                      const std::string &op = "AveragePool") {
  return "graph @main(%x: i8[1,3," + std::to_string(h) + "," + std::to_string(w) +
         "] q(0.25, 6)) -> (%y) {\n  %y = " + op + "(%x)" +
         (attrs.empty() ? "" : " {" + attrs + "}") + " : i8[1,3," + std::to_string(oh) + "," +
         std::to_string(ow) + "] " + outQ + " loc(\"ap\")\n  return %y\n}\n";
}

Placement placeIn(const std::string &text, const TargetDesc &t) {
  auto g = parse(text);
  if (!g)
    return {};
  return placeNode(*g->nodes()[0], t);
}

/// The NPU's requantizing average with the compiler's parameters (the sum of x - in_zp
/// over the pixels inside the image, times poolMultiplier of the placed count, + out_zp)
/// equals the interpreter on every element of several inputs covering [-128, 127].
/// Returns the number of differing elements (-1 when the node is not placed).
int mismatches(const std::string &text, const TargetDesc &t) {
  auto g = parse(text);
  if (!g)
    return -1;
  Placement pl = placeNode(*g->nodes()[0], t);
  if (!pl.onNpu() || !pl.op->poolRequant)
    return -1;
  const NpuOp &op = *pl.op;
  const ir::Value *x = g->inputs[0], *y = g->outputs[0];
  const int32_t zin = x->quant->zeroPoint[0], zout = y->quant->zeroPoint[0];
  quant::QuantMultiplier m = poolMultiplier(x->quant->scale[0], y->quant->scale[0], op.poolCount);
  int64_t H = op.inH, W = op.inW;
  int bad = 0;
  for (int seed = 0; seed < 24; ++seed) {
    ir::Tensor in(ir::DType::I8, x->shape);
    for (int64_t i = 0; i < in.numElements(); ++i)
      in.setInt(i, int64_t((i * 53 + seed * 97 + (i * i) % 23) % 256) - 128);
    auto out = interp::runGraph(*g, {{"x", in}});
    if (!out)
      return -1;
    const ir::Tensor &ref = out->at("y");
    for (int64_t c = 0; c < op.inC; ++c)
      for (int64_t oy = 0; oy < op.outH; ++oy)
        for (int64_t ox = 0; ox < op.outW; ++ox) {
          int32_t sum = 0;
          for (int64_t ky = 0; ky < op.kh; ++ky)
            for (int64_t kx = 0; kx < op.kw; ++kx) {
              int64_t iy = oy * op.strideH - op.padTop + ky, ix = ox * op.strideW - op.padLeft + kx;
              if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                sum += int32_t(in.getInt((c * H + iy) * W + ix)) - zin;
            }
          int32_t npu = testref::requantI8(sum, m.mult, m.shift, zout, -128, 127);
          bad += npu != ref.getInt((c * op.outH + oy) * op.outW + ox);
        }
  }
  return bad;
}

TEST(NpuPoolRq, DifferingQuantizationRunsBitExact) {
  auto rq = loadTarget(poolrqPath());
  ASSERT_TRUE(rq.ok()) << rq.error().str();
  // The MLPerf Tiny shapes: kws 25x5 (125 pixels), ic 8x8 (64), vww 3x3 stride 3 (9).
  const std::string kws = poolGraph(25, 5, 1, 1, "kernel_shape=[25, 5], strides=[25, 5]");
  const std::string ic = poolGraph(8, 8, 1, 1, "kernel_shape=[8, 8], strides=[8, 8]");
  const std::string vww = poolGraph(6, 6, 2, 2, "kernel_shape=[3, 3], strides=[3, 3]");
  for (const std::string *g : {&kws, &ic, &vww}) {
    Placement p = placeIn(*g, *rq);
    ASSERT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
    EXPECT_TRUE(p.op->poolRequant);
    EXPECT_EQ(p.op->poolCount, p.op->kh * p.op->kw);
    EXPECT_EQ(mismatches(*g, *rq), 0) << *g;
  }
  // Equal quantization, 2x2 windows (ties): exact too, with the requantization.
  EXPECT_EQ(
      mismatches(poolGraph(8, 8, 4, 4, "kernel_shape=[2, 2], strides=[2, 2]", "q(0.25, 6)"), *rq),
      0);
  // GlobalAveragePool: one window of 5x7 = 35 pixels.
  EXPECT_EQ(mismatches(poolGraph(5, 7, 1, 1, "", "q(0.02, 11)", "GlobalAveragePool"), *rq), 0);
  // count_include_pad over padding: every window divides by 9, padding adds nothing.
  std::string inc = poolGraph(6, 6, 6, 6,
                              "count_include_pad=1, kernel_shape=[3, 3], pads=[1, 1, 1, 1], "
                              "strides=[1, 1]");
  Placement ip = placeIn(inc, *rq);
  ASSERT_TRUE(ip.onNpu()) << (ip.reasons.empty() ? "" : ip.reasons[0]);
  EXPECT_EQ(ip.op->poolCount, 9);
  EXPECT_EQ(mismatches(inc, *rq), 0);
  // A multiplier one count off differs from the interpreter (what the test guards).
  quant::QuantMultiplier m125 = poolMultiplier(0.25, 0.0371, 125);
  quant::QuantMultiplier m124 = poolMultiplier(0.25, 0.0371, 124);
  EXPECT_NE(m125.mult, m124.mult);
}

/// npu-partition gives NPU pools NHWC values (layout="NHWC"); the interpreter
/// must evaluate them as before. A GlobalAveragePool there was read as NCHW
/// and wrote past its output (found by the differential tier on npu-poolrq and
/// the calibrated mobilenetv2 on npu-default). Without the fix this test
/// fails on the GlobalAveragePool (and valgrind sees the overrun).
TEST(NpuPoolRq, PartitionedPoolsEvaluateAsBefore) {
  auto def = loadTarget(poolrqPath());
  ASSERT_TRUE(def.ok()) << def.error().str();
  for (const std::string &text :
       {poolGraph(5, 7, 1, 1, "", "q(0.02, 11)", "GlobalAveragePool"),
        poolGraph(6, 6, 3, 3, "kernel_shape=[2, 2], strides=[2, 2]")}) {
    auto g = parse(text);
    ASSERT_TRUE(g);
    ir::Tensor in(ir::DType::I8, g->inputs[0]->shape);
    for (int64_t i = 0; i < in.numElements(); ++i)
      in.setInt(i, (i * 37) % 256 - 128);
    auto before = interp::runGraph(*g, {{"x", in}});
    ASSERT_TRUE(before.ok()) << before.error().str();
    passes::PassContext ctx;
    ctx.target = &*def;
    ASSERT_TRUE(passes::runPipeline(*g, "npu-partition", ctx).ok());
    ASSERT_EQ(ctx.stats["npu-partition.npu"], 1) << text;
    bool nhwc = false;
    for (const auto &n : g->nodes())
      nhwc = nhwc || (n->hasAttr("npu") && n->attrString("layout", "") == "NHWC");
    EXPECT_TRUE(nhwc);
    auto after = interp::runGraph(*g, {{"x", in}});
    ASSERT_TRUE(after.ok()) << after.error().str();
    const ir::Tensor &a = before->at("y"), &b = after->at("y");
    ASSERT_EQ(a.numElements(), b.numElements());
    for (int64_t i = 0; i < a.numElements(); ++i)
      EXPECT_EQ(a.getInt(i), b.getInt(i)) << text << " element " << i;
  }
}

TEST(NpuPoolRq, RefusedWithTheReason) {
  auto rq = loadTarget(poolrqPath());
  auto old = loadTarget(npucc::test::testTarget("npu-avgpool.json"));
  ASSERT_TRUE(rq.ok() && old.ok());
  const std::string ic = poolGraph(8, 8, 1, 1, "kernel_shape=[8, 8], strides=[8, 8]");
  // Without the binding: the old reason.
  Placement p = placeIn(ic, *old);
  EXPECT_FALSE(p.onNpu());
  ASSERT_FALSE(p.reasons.empty());
  EXPECT_EQ(p.reasons[0], "input and output quantization differ");
  // Windows of varying counts (padding not counted): one multiplier cannot do.
  Placement v =
      placeIn(poolGraph(6, 6, 6, 6, "kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]"), *rq);
  EXPECT_FALSE(v.onNpu());
  ASSERT_FALSE(v.reasons.empty());
  EXPECT_EQ(v.reasons[0], "windows of 4, 6, 9 pixels: the NPU's requantizing average applies "
                          "one multiplier per layer");
  // MaxPool: the int8 semantics pass the maximum through unrequantized.
  Placement mx = placeIn(
      poolGraph(8, 8, 4, 4, "kernel_shape=[2, 2], strides=[2, 2]", "q(0.0371, -3)", "MaxPool"),
      *rq);
  EXPECT_FALSE(mx.onNpu());
  ASSERT_FALSE(mx.reasons.empty());
  EXPECT_EQ(mx.reasons[0].rfind("input and output quantization differ (the int8 MaxPool", 0), 0u)
      << mx.reasons[0];
}

} // namespace
