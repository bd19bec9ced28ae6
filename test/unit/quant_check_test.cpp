//===- quant_check_test.cpp - Quantized-output checks and one-rounding requant -===//
//
// npucc_mul_qmult_rne (the single rounding, ties to even, of npucc_requant_i8)
// against an independent 128-bit model; driver::compareSteps and
// driver::classifyOutput, which `npucc check` uses for quantized programs; the
// int32-output (ConvInteger/MatMulInteger) kernels and the uint8 boundary kernels.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Compare.h"
#include "npucc/ir/Graph.h"

extern "C" {
#include "../../runtime/include/npucc_requant.h"
#include "../../runtime/kernels/npucc_boundary_s8.h"
#include "../../runtime/kernels/npucc_conv_s8.h"
#include "../../runtime/kernels/npucc_gemm_s8.h"
}

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace npucc;

namespace {

__extension__ typedef __int128 I128;

/// round(x * mult / 2^(31 + shift)) to nearest, ties to even, in 128 bits.
int32_t modelRne(int32_t x, int32_t mult, int shift) {
  if (shift < 0) {
    I128 v = (I128)x * ((I128)1 << -shift); // not x << n: UB for negative x
    v = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
    x = int32_t(v);
    shift = 0;
  }
  I128 p = (I128)x * mult;
  I128 d = (I128)1 << (31 + shift);
  I128 a = p < 0 ? -p : p;
  I128 q = a / d, r = a % d;
  if (2 * r > d || (2 * r == d && (q & 1)))
    ++q;
  I128 y = p < 0 ? -q : q;
  return int32_t(y > INT32_MAX ? INT32_MAX : y < INT32_MIN ? INT32_MIN : y);
}

std::vector<float> softmax(const std::vector<double> &z) {
  double m = *std::max_element(z.begin(), z.end()), s = 0;
  for (double v : z)
    s += std::exp(v - m);
  std::vector<float> p;
  for (double v : z)
    p.push_back(float(std::exp(v - m) / s));
  return p;
}

} // namespace

TEST(QuantRequantRne, OneRoundingWhereTfliteRoundsTwice) {
  // A real QLinearConv output of mobilenetv2_12_int8: acc 18091 times
  // M = 0.0026809 is 48.49968; the two-step SRDHM + rounding shift gives 49.
  EXPECT_EQ(npucc_mul_qmult(18091, 1473825752, 8), 49);
  EXPECT_EQ(npucc_mul_qmult_rne(18091, 1473825752, 8), 48);
  EXPECT_EQ(npucc_requant_i8(18091, 1473825752, 8, -100, -128, 127), -52);
}

TEST(QuantRequantRne, TiesToEven) {
  const int32_t half = 1 << 30; // 0.5
  EXPECT_EQ(npucc_mul_qmult_rne(3, half, 0), 2);   // 1.5
  EXPECT_EQ(npucc_mul_qmult_rne(5, half, 0), 2);   // 2.5
  EXPECT_EQ(npucc_mul_qmult_rne(-5, half, 0), -2); // -2.5
  EXPECT_EQ(npucc_mul_qmult_rne(-3, half, 0), -2); // -1.5
  EXPECT_EQ(npucc_mul_qmult_rne(1, half, 0), 0);   // 0.5
  EXPECT_EQ(npucc_mul_qmult_rne(10, half, 1), 2);  // 2.5
  EXPECT_EQ(npucc_mul_qmult_rne(11, half, 1), 3);  // 2.75
  EXPECT_EQ(npucc_mul_qmult_rne(100, INT32_MAX, -3), 800);
  EXPECT_EQ(npucc_mul_qmult_rne(INT32_MIN, INT32_MAX, 0), -INT32_MAX);
  EXPECT_EQ(npucc_mul_qmult_rne(INT32_MAX, INT32_MAX, -31), INT32_MAX - 1); // x saturates first
}

TEST(QuantRequantRne, MatchesIndependentModelOnRandomInputs) {
  std::mt19937 g(11);
  std::uniform_int_distribution<int32_t> acc(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<int32_t> small(-70000, 70000);
  std::uniform_int_distribution<int32_t> mult(1 << 30, INT32_MAX);
  std::uniform_int_distribution<int> shift(-4, 31);
  int differFromTwoStep = 0;
  for (int i = 0; i < 300000; ++i) {
    int32_t a = (i & 1) ? acc(g) : small(g), m = mult(g);
    int s = shift(g);
    int32_t got = npucc_mul_qmult_rne(a, m, s);
    ASSERT_EQ(got, modelRne(a, m, s)) << a << " " << m << " " << s;
    differFromTwoStep += got != npucc_mul_qmult(a, m, s);
  }
  EXPECT_GT(differFromTwoStep, 0); // the two schemes really differ
}

TEST(QuantCheck, DequantizedOutputsCompareInSteps) {
  driver::OutputQuant q;
  q.kind = driver::OutputKind::Dequantized;
  q.scale = 0.25;
  q.zeroPoint = 3;
  ir::Tensor ref = ir::Tensor::fromFloats({4}, {0.5f, -1.0f, 0.25f, 31.75f});
  ir::Tensor got = ir::Tensor::fromFloats({4}, {0.5f, -0.75f, 0.25f, 31.25f});
  driver::Comparison c1 = driver::compareSteps(got, ref, q, 1);
  EXPECT_DOUBLE_EQ(c1.maxSteps, 2.0);
  EXPECT_FALSE(c1.pass);
  EXPECT_EQ(c1.firstMismatch, 3);
  EXPECT_EQ(c1.mismatches, 1);
  EXPECT_NEAR(c1.maxAbsError, 0.5, 1e-9);
  EXPECT_TRUE(driver::compareSteps(got, ref, q, 2).pass);
  EXPECT_TRUE(driver::compareSteps(ref, ref, q, 0).pass);
  ir::Tensor nan = ir::Tensor::fromFloats({4}, {NAN, -1.0f, 0.25f, 31.75f});
  EXPECT_FALSE(driver::compareSteps(nan, ref, q, 5).pass);
}

TEST(QuantCheck, IntegerOutputsCompareInSteps) {
  driver::OutputQuant q;
  q.kind = driver::OutputKind::Integer;
  ir::Tensor ref = ir::Tensor::fromInts(ir::DType::I8, {3}, {-128, 0, 127});
  ir::Tensor got = ir::Tensor::fromInts(ir::DType::I8, {3}, {-127, 0, 127});
  EXPECT_TRUE(driver::compareSteps(got, ref, q, 1).pass);
  EXPECT_FALSE(driver::compareSteps(got, ref, q, 0).pass);
}

TEST(QuantCheck, SoftmaxOutputsCompareLogitStepsUpToAShift) {
  driver::OutputQuant q;
  q.kind = driver::OutputKind::SoftmaxOfDq;
  q.scale = 0.17;
  q.axis = 1;
  std::vector<double> base = {0, 3, -5, 12, 7};
  auto logits = [&](std::vector<int> dq) {
    std::vector<double> z;
    for (size_t i = 0; i < base.size(); ++i)
      z.push_back(q.scale * (base[i] + dq[i]));
    return ir::Tensor::fromFloats({1, 5}, softmax(z));
  };
  ir::Tensor ref = logits({0, 0, 0, 0, 0});
  auto steps = [&](std::vector<int> dq) {
    return driver::compareSteps(logits(dq), ref, q, 1).maxSteps;
  };
  EXPECT_NEAR(steps({0, 0, 0, 0, 0}), 0.0, 1e-3);
  EXPECT_NEAR(steps({4, 4, 4, 4, 4}), 0.0, 1e-3); // a common shift is invisible
  EXPECT_NEAR(steps({1, 0, 0, 0, 0}), 0.5, 1e-3);
  EXPECT_NEAR(steps({1, 0, -1, 0, 0}), 1.0, 1e-3);
  EXPECT_NEAR(steps({0, 3, 0, 0, 0}), 1.5, 1e-3);
  EXPECT_TRUE(driver::compareSteps(logits({1, 0, -1, 0, 0}), ref, q, 1).pass);
  EXPECT_FALSE(driver::compareSteps(logits({0, 3, 0, 0, 0}), ref, q, 1).pass);
  EXPECT_FALSE(driver::compareSteps(logits({1, 0, 0, 0, 0}), ref, q, 0).pass);
  // A failing row names the element that differs, not the row's start (issue 20: a changed
  // golden value was "first bad 0").
  EXPECT_EQ(driver::compareSteps(logits({0, 3, 0, 0, 0}), ref, q, 1).firstMismatch, 1);
  EXPECT_EQ(driver::compareSteps(logits({0, 0, 0, 0, -4}), ref, q, 1).firstMismatch, 4);
  EXPECT_EQ(driver::compareSteps(logits({0, 0, 0, 0, 0}), ref, q, 0).firstMismatch, -1);
  ir::Tensor zero = ir::Tensor::fromFloats({1, 5}, {0, 0, 0, 1, 0});
  EXPECT_FALSE(driver::compareSteps(zero, ref, q, 100).pass); // 0 vs > 0: infinite
}

TEST(QuantCheck, ClassifiesOutputsOfACompiledGraph) {
  ir::Graph g;
  ir::Value *x = g.addValue("x", ir::DType::I8, {1, 4});
  g.inputs.push_back(x);
  ir::Value *s = g.addConstant("s", ir::Tensor::fromFloats({}, {0.5f}));
  ir::Value *z = g.addConstant("z", ir::Tensor::fromInts(ir::DType::I8, {}, {-3}));
  ir::Value *f = g.addValue("f", ir::DType::F32, {1, 4});
  g.addNode(ir::OpKind::DequantizeLinear, "dq", {x, s, z}, {f});
  ir::Value *r = g.addValue("r", ir::DType::F32, {4});
  ir::Value *shp = g.addConstant("shape", ir::Tensor::fromInts(ir::DType::I64, {1}, {4}));
  g.addNode(ir::OpKind::Reshape, "flat", {f, shp}, {r});
  ir::Value *p = g.addValue("p", ir::DType::F32, {1, 4});
  g.addNode(ir::OpKind::Softmax, "sm", {f}, {p});
  ir::Value *e = g.addValue("e", ir::DType::F32, {1, 4});
  g.addNode(ir::OpKind::Sigmoid, "sig", {f}, {e});
  g.outputs = {f, r, p, e, x};
  EXPECT_TRUE(driver::isQuantizedGraph(g));
  driver::OutputQuant qf = driver::classifyOutput(g, *f);
  EXPECT_EQ(qf.kind, driver::OutputKind::Dequantized);
  EXPECT_FLOAT_EQ(float(qf.scale), 0.5f);
  EXPECT_EQ(qf.zeroPoint, -3);
  EXPECT_EQ(driver::classifyOutput(g, *r).kind, driver::OutputKind::Dequantized);
  driver::OutputQuant qp = driver::classifyOutput(g, *p);
  EXPECT_EQ(qp.kind, driver::OutputKind::SoftmaxOfDq);
  EXPECT_EQ(qp.axis, 1);
  EXPECT_EQ(driver::classifyOutput(g, *e).kind, driver::OutputKind::Float);
  EXPECT_EQ(driver::classifyOutput(g, *x).kind, driver::OutputKind::Integer);
  EXPECT_EQ(driver::describe(qf), "dq(s=0.5,zp=-3)");

  ir::Graph fl;
  ir::Value *a = fl.addValue("a", ir::DType::F32, {2});
  ir::Value *b = fl.addValue("b", ir::DType::F32, {2});
  fl.inputs.push_back(a);
  fl.addNode(ir::OpKind::Relu, "relu", {a}, {b});
  fl.outputs = {b};
  EXPECT_FALSE(driver::isQuantizedGraph(fl));
}

TEST(QuantKernelsAcc32, ConvWritesTheAccumulators) {
  std::mt19937 g(5);
  std::uniform_int_distribution<int> d(-128, 127);
  const int C = 3, H = 5, W = 4, M = 2, KH = 3, KW = 2, OH = 3, OW = 4, PT = 1, PL = 1;
  std::vector<int8_t> x(C * H * W), w(M * C * KH * KW);
  for (auto &v : x)
    v = int8_t(d(g));
  for (auto &v : w)
    v = int8_t(d(g));
  std::vector<int32_t> bias = {1000, -7}, wzp = {3, -128}, y(M * OH * OW), scratch(OH * OW);
  const int xzp = -5;
  npucc_conv2d_s8_acc32(x.data(), w.data(), bias.data(), y.data(), scratch.data(), 1, C, H, W, M,
                        OH, OW, KH, KW, 1, 1, 1, 1, PT, PL, 1, xzp, wzp.data());
  for (int m = 0; m < M; ++m)
    for (int oy = 0; oy < OH; ++oy)
      for (int ox = 0; ox < OW; ++ox) {
        int64_t acc = bias[m];
        for (int c = 0; c < C; ++c)
          for (int ky = 0; ky < KH; ++ky)
            for (int kx = 0; kx < KW; ++kx) {
              int iy = oy + ky - PT, ix = ox + kx - PL;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                continue;
              acc += int64_t(x[(c * H + iy) * W + ix] - xzp) *
                     (w[((m * C + c) * KH + ky) * KW + kx] - wzp[m]);
            }
        ASSERT_EQ(y[(m * OH + oy) * OW + ox], acc) << m << " " << oy << " " << ox;
      }
}

TEST(QuantKernelsAcc32, GemmWritesTheSums) {
  // A [2][3] x B [3][2] with zero points 1 and (per column) -2, 0.
  std::vector<int8_t> a = {1, 2, 3, -128, 127, 0}, b = {4, -5, 6, 7, -8, 9};
  std::vector<int32_t> bzp = {-2, 0}, y(4), scratch(2);
  npucc_gemm_s8_acc32(a.data(), b.data(), nullptr, y.data(), scratch.data(), 1, 2, 2, 3, 0, 2, 1,
                      1, 2, bzp.data());
  EXPECT_EQ(y[0], (1 - 1) * 6 + (2 - 1) * 8 + (3 - 1) * -6);
  EXPECT_EQ(y[1], (1 - 1) * -5 + (2 - 1) * 7 + (3 - 1) * 9);
  EXPECT_EQ(y[2], (-129) * 6 + 126 * 8 + (-1) * -6);
  EXPECT_EQ(y[3], (-129) * -5 + 126 * 7 + (-1) * 9);
}

TEST(QuantKernelsBoundary, Uint8QuantizeDequantize) {
  std::vector<float> x = {0.25f, 0.75f, -100.0f, 1000.0f, NAN, 1.25f};
  std::vector<uint8_t> q(6);
  float s = 0.5f;
  int32_t zp = 128;
  npucc_quantize_f32_u8(x.data(), q.data(), 1, 1, 6, &s, &zp);
  // 0.5 -> 0 and 1.5 -> 2 (ties to even), saturation to [0, 255], NaN -> zp, 2.5 -> 2.
  EXPECT_EQ(std::vector<int>(q.begin(), q.end()), (std::vector<int>{128, 130, 0, 255, 128, 130}));
  std::vector<uint8_t> in = {0, 128, 255};
  std::vector<float> out(3);
  npucc_dequantize_u8_f32(in.data(), out.data(), 1, 1, 3, &s, &zp);
  EXPECT_EQ(out, (std::vector<float>{-64.0f, 0.0f, 63.5f}));
}
