//===- lower_s8_test.cpp - Lowering of typed int8 nodes, executed on the host ===//
//
// Lowers typed quantized nodes with lowerQuantizedNode and runs the emitted
// kernel calls on a host arena against naive integer references (bit-exact).
// The kernels themselves are tested in kernels_s8_test.cpp.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Graph.h"
#include "npucc/lower/QuantLowering.h"

#include "HostRunS8.h"
#include "npucc/quant/Multiplier.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

extern "C" {
#include "../../runtime/include/npucc_requant.h"
#include "../../runtime/kernels/npucc_conv_s8.h"
#include "../../runtime/kernels/npucc_eltwise_s8.h"
#include "../../runtime/kernels/npucc_gemm_s8.h"
#include "../../runtime/kernels/npucc_lut_s8.h"
#include "../../runtime/kernels/npucc_move.h"
#include "../../runtime/kernels/npucc_pool_s8.h"
#include "../../runtime/kernels/npucc_quantize.h"
#include "../../runtime/kernels/npucc_softmax_s8.h"
}

namespace {

using npucc::quant::quantizeMultiplier;
using npucc::quant::QuantMultiplier;
using I8 = std::vector<int8_t>;
using I32 = std::vector<int32_t>;

std::mt19937 &rng() {
  static std::mt19937 r(12345);
  return r;
}
int32_t rint_(int32_t lo, int32_t hi) {
  return std::uniform_int_distribution<int32_t>(lo, hi)(rng());
}


// ---- Lowering: typed quantized nodes -> kernel calls, executed here ----

namespace ir = npucc::ir;
namespace lir = npucc::lir;

using npucc::test::HostContext;
using npucc::test::runS8;

ir::Value *qval(ir::Graph &g, const std::string &name, ir::Shape s, float scale, int32_t zp) {
  ir::Value *v = g.addValue(name, ir::DType::I8, std::move(s));
  v->quant = ir::QuantParams{{scale}, {zp}, 0};
  return v;
}

void fillRandom(HostContext &ctx, const ir::Value *v) {
  int8_t *p = ctx.ptr<int8_t>(v);
  for (int64_t i = 0; i < v->numElements(); ++i)
    p[i] = int8_t(rint_(-128, 127));
}

TEST(LowerS8, ConvPerChannelWithFusedRelu6) {
  ir::Graph g;
  ir::Value *x = qval(g, "x", {1, 3, 6, 6}, 0.05f, -3);
  ir::Tensor wt(ir::DType::I8, {4, 3, 3, 3}), bt(ir::DType::I32, {4});
  for (int64_t i = 0; i < wt.numElements(); ++i)
    wt.data<int8_t>()[i] = int8_t(rint_(-127, 127));
  for (int64_t i = 0; i < 4; ++i)
    bt.data<int32_t>()[i] = rint_(-3000, 3000);
  ir::Value *w = g.addConstant("w", wt), *b = g.addConstant("b", bt);
  std::vector<float> sw = {0.01f, 0.002f, 0.03f, 0.0005f};
  w->quant = ir::QuantParams{sw, {0, 0, 0, 0}, 0};
  ir::Value *y = qval(g, "y", {1, 4, 3, 3}, 0.03f, -128);
  ir::Node *n = g.addNode(ir::OpKind::Conv, "conv", {x, w, b}, {y});
  n->attrs["kernel_shape"] = std::vector<int64_t>{3, 3};
  n->attrs["strides"] = std::vector<int64_t>{2, 2};
  n->attrs["pads"] = std::vector<int64_t>{1, 1, 0, 0};
  n->attrs["dilations"] = std::vector<int64_t>{1, 1};
  n->attrs["group"] = int64_t(1);
  n->attrs["act_min"] = 0.0f;
  n->attrs["act_max"] = 6.0f;
  ASSERT_TRUE(npucc::lower::isQuantizedNode(*n));
  HostContext ctx;
  std::vector<lir::Instr> out;
  auto st = npucc::lower::lowerQuantizedNode(*n, ctx, out);
  ASSERT_TRUE(bool(st)) << st.error().str();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].callee, "npucc_conv2d_s8");
  EXPECT_EQ(std::get<lir::BufferRef>(out[0].args[4]).dtype, ir::DType::I32); // int32_t *scratch
  EXPECT_EQ(ctx.Files, std::vector<std::string>{"kernels/npucc_conv_s8.c"});
  fillRandom(ctx, x);
  runS8(ctx, out[0]);
  const int8_t *xp = ctx.ptr<int8_t>(x), *yp = ctx.ptr<int8_t>(y);
  int hiQ = -128 + int(std::lround(6.0 / 0.03f));
  for (int m = 0; m < 4; ++m)
    for (int oy = 0; oy < 3; ++oy)
      for (int ox = 0; ox < 3; ++ox) {
        double acc = bt.data<int32_t>()[m] * (double(0.05f) * sw[size_t(m)]);
        for (int c = 0; c < 3; ++c)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
              if (iy < 0 || iy >= 6 || ix < 0 || ix >= 6)
                continue;
              acc += double(0.05f) * (xp[(c * 6 + iy) * 6 + ix] + 3) * double(sw[size_t(m)]) *
                     wt.data<int8_t>()[((m * 3 + c) * 3 + ky) * 3 + kx];
            }
        double real = std::min(6.0, std::max(0.0, acc));
        double q = std::min<double>(hiQ, std::max(-128.0, real / double(0.03f) - 128));
        ASSERT_NEAR(yp[(m * 3 + oy) * 3 + ox], q, 1.0) << "m=" << m;
        ASSERT_LE(yp[(m * 3 + oy) * 3 + ox], hiQ);
      }
}

TEST(LowerS8, AddBroadcastSoftmaxConcatPadRelu) {
  ir::Graph g;
  ir::Value *a = qval(g, "a", {2, 3, 4}, 0.1f, 10), *b = qval(g, "b", {3, 1}, 0.05f, -20);
  ir::Value *s = qval(g, "s", {2, 3, 4}, 0.12f, 0);
  ir::Node *add = g.addNode(ir::OpKind::Add, "add", {a, b}, {s});
  ir::Value *p = qval(g, "p", {2, 3, 4}, 1.0f / 256, -128);
  ir::Node *sm = g.addNode(ir::OpKind::Softmax, "sm", {s}, {p});
  ir::Value *c = qval(g, "c", {2, 6, 4}, 0.12f, 0);
  ir::Node *cat = g.addNode(ir::OpKind::Concat, "cat", {s, a}, {c});
  cat->attrs["axis"] = int64_t(1);
  ir::Value *r = qval(g, "r", {2, 6, 4}, 0.12f, 0);
  ir::Node *relu = g.addNode(ir::OpKind::Relu, "relu", {c}, {r});
  ir::Tensor pads = ir::Tensor::fromInts(ir::DType::I64, {6}, {0, 0, 1, 0, 0, 1});
  ir::Value *padv = qval(g, "padded", {2, 3, 6}, 0.1f, 10);
  ir::Node *pad = g.addNode(ir::OpKind::Pad, "pad", {a, g.addConstant("pads", pads)}, {padv});
  pad->attrs["mode"] = std::string("constant");
  HostContext ctx;
  fillRandom(ctx, a);
  fillRandom(ctx, b);
  for (ir::Node *n : {add, sm, cat, relu, pad}) {
    ASSERT_TRUE(npucc::lower::isQuantizedNode(*n)) << n->name;
    std::vector<lir::Instr> out;
    auto st = npucc::lower::lowerQuantizedNode(*n, ctx, out);
    ASSERT_TRUE(bool(st)) << n->name << ": " << st.error().str();
    for (const auto &in : out)
      runS8(ctx, in);
  }
  const int8_t *ap = ctx.ptr<int8_t>(a), *bp = ctx.ptr<int8_t>(b), *sp = ctx.ptr<int8_t>(s);
  const int8_t *pp = ctx.ptr<int8_t>(p), *cp = ctx.ptr<int8_t>(c), *rp = ctx.ptr<int8_t>(r);
  const int8_t *dp = ctx.ptr<int8_t>(padv);
  for (int i = 0; i < 24; ++i) {
    double real = 0.1 * (ap[i] - 10) + 0.05 * (bp[(i / 4) % 3] + 20);
    ASSERT_NEAR(sp[i], std::min(127.0, std::max(-128.0, real / 0.12)), 1.0) << i;
  }
  for (int row = 0; row < 6; ++row) { // softmax over the last axis
    double sum = 0;
    for (int j = 0; j < 4; ++j)
      sum += std::exp(0.12 * sp[row * 4 + j]);
    for (int j = 0; j < 4; ++j)
      ASSERT_NEAR(pp[row * 4 + j], std::min(127.0, std::exp(0.12 * sp[row * 4 + j]) / sum * 256 - 128), 1.0);
  }
  for (int n = 0; n < 2; ++n)
    for (int k = 0; k < 12; ++k) {
      ASSERT_EQ(cp[n * 24 + k], sp[n * 12 + k]); // same params: exact copy
      double real = 0.1 * (ap[n * 12 + k] - 10);
      ASSERT_NEAR(cp[n * 24 + 12 + k], std::min(127.0, std::max(-128.0, real / 0.12)), 0.5 + 1e-9);
    }
  for (int i = 0; i < 48; ++i)
    ASSERT_EQ(rp[i], std::max<int8_t>(cp[i], 0)); // Relu with zp 0: clamp at 0
  for (int row = 0; row < 6; ++row) { // Pad: one zero-point column each side
    ASSERT_EQ(dp[row * 6], 10);
    ASSERT_EQ(dp[row * 6 + 5], 10);
    for (int j = 0; j < 4; ++j)
      ASSERT_EQ(dp[row * 6 + 1 + j], ap[row * 4 + j]);
  }
}

TEST(LowerS8, GemmTransBPerChannel) {
  ir::Graph g;
  ir::Value *a = qval(g, "a", {3, 5}, 0.04f, 127);
  ir::Tensor wt(ir::DType::I8, {4, 5}), bt(ir::DType::I32, {4});
  for (int64_t i = 0; i < wt.numElements(); ++i)
    wt.data<int8_t>()[i] = int8_t(rint_(-128, 127));
  for (int64_t i = 0; i < 4; ++i)
    bt.data<int32_t>()[i] = rint_(-500, 500);
  ir::Value *w = g.addConstant("w", wt), *b = g.addConstant("b", bt);
  std::vector<float> sw = {0.01f, 0.02f, 0.005f, 0.04f};
  std::vector<int32_t> zw = {0, 3, -128, 0};
  w->quant = ir::QuantParams{sw, zw, 0};
  ir::Value *y = qval(g, "y", {3, 4}, 0.2f, 5);
  ir::Node *n = g.addNode(ir::OpKind::Gemm, "fc", {a, w, b}, {y});
  n->attrs["transB"] = int64_t(1);
  HostContext ctx;
  std::vector<lir::Instr> out;
  auto st = npucc::lower::lowerQuantizedNode(*n, ctx, out);
  ASSERT_TRUE(bool(st)) << st.error().str();
  ASSERT_EQ(out.size(), 1u);
  fillRandom(ctx, a);
  runS8(ctx, out[0]);
  const int8_t *ap = ctx.ptr<int8_t>(a), *yp = ctx.ptr<int8_t>(y);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      double acc = bt.data<int32_t>()[j] * double(0.04f) * sw[size_t(j)];
      for (int k = 0; k < 5; ++k)
        acc += double(0.04f) * (ap[i * 5 + k] - 127) * double(sw[size_t(j)]) *
               (wt.data<int8_t>()[j * 5 + k] - zw[size_t(j)]);
      double q = std::min(127.0, std::max(-128.0, acc / double(0.2f) + 5));
      ASSERT_NEAR(yp[i * 4 + j], q, 1.0) << i << "," << j;
    }
}

TEST(LowerS8, RequantFp32MultipliersAndRoundingArgument) {
  // requant="fp32" (QLinearMatMul): the multipliers are fl(fl(sa * sw) / sy) in float32
  // and the call's last argument selects the float32-emulating rounding; the outputs
  // are what float32 arithmetic gives: rint(float(acc) * m) + zp, saturated.
  for (bool fp32 : {false, true}) {
    ir::Graph g;
    ir::Value *a = qval(g, "a", {6, 40}, 0.0173f, -7);
    ir::Tensor wt(ir::DType::I8, {40, 8});
    for (int64_t i = 0; i < wt.numElements(); ++i)
      wt.data<int8_t>()[i] = int8_t(rint_(-127, 127));
    ir::Value *w = g.addConstant("w", wt);
    std::vector<float> sw = {0.0031f, 0.0007f, 0.0113f, 0.0049f,
                             0.0021f, 0.0067f, 0.0009f, 0.0041f};
    w->quant = ir::QuantParams{sw, std::vector<int32_t>(8, 0), 1};
    ir::Value *y = qval(g, "y", {6, 8}, 0.0523f, 3);
    ir::Node *n = g.addNode(ir::OpKind::MatMul, "mm", {a, w}, {y});
    if (fp32)
      n->attrs["requant"] = std::string("fp32");
    HostContext ctx;
    std::vector<lir::Instr> out;
    auto st = npucc::lower::lowerQuantizedNode(*n, ctx, out);
    ASSERT_TRUE(bool(st)) << st.error().str();
    ASSERT_EQ(out.size(), 1u);
    const auto &args = out[0].args;
    EXPECT_EQ(std::get<int64_t>(args.back()), fp32 ? NPUCC_RQ_FP32 : NPUCC_RQ_EXACT);
    const auto &mult = std::get<lir::IntArray>(args[args.size() - 3]).values;
    const auto &shift = std::get<lir::IntArray>(args[args.size() - 2]).values;
    ASSERT_EQ(mult.size(), 8u);
    for (size_t c = 0; c < 8; ++c) {
      volatile float prod = 0.0173f * sw[c];
      volatile float m = prod / 0.0523f;
      QuantMultiplier q{int32_t(mult[c]), int32_t(shift[c])};
      if (fp32)
        EXPECT_EQ(npucc::quant::multiplierValue(q), double(m)) << c;
      else
        EXPECT_EQ(q.mult, quantizeMultiplier(double(0.0173f) * sw[c] / double(0.0523f)).mult);
    }
    if (!fp32)
      continue;
    fillRandom(ctx, a);
    runS8(ctx, out[0]);
    const int8_t *ap = ctx.ptr<int8_t>(a), *yp = ctx.ptr<int8_t>(y);
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 8; ++j) {
        int32_t acc = 0;
        for (int k = 0; k < 40; ++k)
          acc += (ap[i * 40 + k] + 7) * wt.data<int8_t>()[k * 8 + j];
        volatile float prod = 0.0173f * sw[size_t(j)];
        volatile float m = prod / 0.0523f;
        volatile float r = float(acc) * m;
        float want = std::min(127.0f, std::max(-128.0f, std::nearbyint(r) + 3.0f));
        ASSERT_EQ(yp[i * 8 + j], int(want)) << i << "," << j;
      }
  }
}

TEST(LowerS8, PadAndResizeMatchTheIntegerInterpreter) {
  // Typed Pad pads with its int8 constant_value (quantized like the input) or, without
  // one, the zero point; Resize nearest picks elements. The lowered C and the integer
  // interpreter give the same bytes.
  ir::Graph g;
  ir::Value *x = qval(g, "x", {1, 2, 3, 4}, 0.02f, -9);
  ir::Value *pads =
      g.addConstant("pads", ir::Tensor::fromInts(ir::DType::I64, {8}, {0, 0, 1, 2, 0, 0, 2, 1}));
  ir::Value *value = g.addConstant("value", ir::Tensor::scalar(ir::DType::I8, 44.0));
  value->quant = x->quant;
  ir::Value *p1 = qval(g, "p1", {1, 2, 6, 7}, 0.02f, -9),
            *p2 = qval(g, "p2", {1, 2, 6, 7}, 0.02f, -9);
  ir::Node *withValue = g.addNode(ir::OpKind::Pad, "padv", {x, pads, value}, {p1});
  ir::Node *noValue = g.addNode(ir::OpKind::Pad, "pad0", {x, pads}, {p2});
  ir::Value *scales = g.addConstant("scales", ir::Tensor::fromFloats({4}, {1, 1, 2, 2}));
  ir::Value *r = qval(g, "r", {1, 2, 6, 8}, 0.02f, -9);
  ir::Node *resize = g.addNode(ir::OpKind::Resize, "up", {x, nullptr, scales}, {r});
  resize->attrs["mode"] = std::string("nearest");
  resize->attrs["coordinate_transformation_mode"] = std::string("asymmetric");
  resize->attrs["nearest_mode"] = std::string("floor");
  for (ir::Node *n : {withValue, noValue, resize})
    n->attrs.emplace("mode", std::string("constant"));
  HostContext ctx;
  fillRandom(ctx, x);
  ir::Tensor xt(ir::DType::I8, x->shape);
  std::copy_n(ctx.ptr<int8_t>(x), x->numElements(), xt.data<int8_t>());
  for (ir::Node *n : {withValue, noValue, resize}) {
    std::vector<lir::Instr> out;
    auto st = npucc::lower::lowerQuantizedNode(*n, ctx, out);
    ASSERT_TRUE(bool(st)) << n->name << ": " << st.error().str();
    for (const lir::Instr &in : out)
      runS8(ctx, in);
    std::vector<const ir::Tensor *> ins = {&xt};
    for (size_t i = 1; i < n->inputs.size(); ++i)
      ins.push_back(n->inputs[i] ? n->inputs[i]->constant.get() : nullptr);
    auto want = npucc::interp::evaluateNode(*n, ins);
    ASSERT_TRUE(bool(want)) << n->name << ": " << want.error().str();
    const ir::Value *y = n->output(0);
    ASSERT_EQ((*want)[0].numElements(), y->numElements());
    for (int64_t i = 0; i < y->numElements(); ++i)
      ASSERT_EQ(ctx.ptr<int8_t>(y)[i], (*want)[0].data<int8_t>()[i]) << n->name << " @" << i;
  }
  // Padded corners hold the value (44) and the zero point (-9).
  EXPECT_EQ(ctx.ptr<int8_t>(p1)[0], 44);
  EXPECT_EQ(ctx.ptr<int8_t>(p2)[0], -9);
  // A pad value with other parameters (or a float one) is refused, not converted.
  value->quant = ir::QuantParams{{0.5f}, {0}, 0};
  std::vector<lir::Instr> out;
  EXPECT_FALSE(bool(npucc::lower::lowerQuantizedNode(*withValue, ctx, out)));
  std::vector<const ir::Tensor *> ins = {&xt, pads->constant.get(), value->constant.get()};
  EXPECT_FALSE(bool(npucc::interp::evaluateNode(*withValue, ins)));
}

TEST(LowerS8, RejectsWhatHasNoIntegerForm) {
  ir::Graph g;
  ir::Value *x = qval(g, "x", {4}, 0.1f, 0), *y = qval(g, "y", {4}, 0.1f, 0);
  ir::Node *n = g.addNode(ir::OpKind::Sub, "sub", {x, x}, {y});
  HostContext ctx;
  std::vector<lir::Instr> out;
  EXPECT_TRUE(npucc::lower::isQuantizedNode(*n));
  EXPECT_FALSE(bool(npucc::lower::lowerQuantizedNode(*n, ctx, out)));
  ir::Value *f = g.addValue("f", ir::DType::F32, {4}), *f2 = g.addValue("f2", ir::DType::F32, {4});
  ir::Node *fl = g.addNode(ir::OpKind::Relu, "frelu", {f}, {f2});
  EXPECT_FALSE(npucc::lower::isQuantizedNode(*fl));
  ir::Value *m = qval(g, "m", {4}, 0.2f, 0);
  ir::Node *mp = g.addNode(ir::OpKind::Transpose, "t", {x}, {m});
  EXPECT_FALSE(bool(npucc::lower::lowerQuantizedNode(*mp, ctx, out))); // params differ
}

} // namespace
