//===- interp_ops_test.cpp - Hand-built graphs through the interpreter ----===//
//
// Small graphs built in code with results worked out by hand, from the ONNX
// spec examples, or (for grouped/dilated convolutions and broadcasting
// MatMul, which ONNX's node tests do not cover) from PyTorch in float64 on
// inputs given by closed formulas; those expected values are embedded below.
// Also covers the integer shape-computation ops used by constant folding,
// fused activations, diagnostics, canEvaluate and runGraph's bookkeeping.
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using namespace npucc;
using ir::DType;
using ir::OpKind;
using ir::Shape;
using ir::Tensor;

// Inputs by formula (exact binary fractions), mirrored in the generator:
//   X: ((i*37) % 17 - 8) / 8      W: ((i*11) % 13 - 6) / 16      B: (i%5 - 2) / 4
Tensor formula(Shape s, int a, int m, int off, double div) {
  Tensor t(DType::F32, std::move(s));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = static_cast<float>(((i * a) % m - off) / div);
  return t;
}
Tensor fx(Shape s) { return formula(std::move(s), 37, 17, 8, 8.0); }
Tensor fw(Shape s) { return formula(std::move(s), 11, 13, 6, 16.0); }
Tensor fb(int64_t n) {
  Tensor t(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i)
    t.data<float>()[i] = static_cast<float>((i % 5 - 2) / 4.0);
  return t;
}

// Expected outputs generated with torch (float64) from the formulas above.
// shape [1, 6, 4, 3]
const std::vector<float> kConvGroupedExpected = {
    -0.609375,  -0.7421875, -0.046875, -0.125,     0.453125,   0.2109375,  0.0390625,  0.0859375,
    -0.515625,  -0.109375,  -0.25,     -0.7890625, -0.390625,  -0.9921875, -0.1640625, 0.1015625,
    0.4609375,  -0.125,     0.828125,  -0.2734375, -0.1640625, -0.5859375, -0.4921875, -0.2421875,
    -0.171875,  0.484375,   0.328125,  -0.28125,   -0.4453125, -0.359375,  0.8046875,  -0.0234375,
    -0.1171875, -0.1484375, -0.125,    -0.203125,  0.7265625,  0.5546875,  0.6640625,  0.5703125,
    0.453125,   0.421875,   0.4921875, 0.375,      0.421875,   0.6640625,  0.0859375,  0.2578125,
    0.6875,     0.9765625,  1.09375,   1.34375,    0.78125,    0.2578125,  0.703125,   -0.2578125,
    0.4140625,  0.328125,   0.1171875, 0.2109375,  -0.8046875, -0.0546875, -0.9453125, 0.359375,
    0.46875,    -0.4453125, 0.4765625, -0.2109375, -0.5390625, -0.2421875, -0.6953125, -0.578125};
// shape [1, 6, 6, 8]
const std::vector<float> kConvTransposeExpected = {
    -0.59375,   -0.5,  -0.3828125, -0.5,  -0.0546875, -0.5,  -0.265625,  -0.5,  -0.3125,    -0.5,
    -0.0390625, -0.5,  -0.296875,  -0.5,  -0.1796875, -0.5,  -0.7578125, -0.5,  -0.7265625, -0.5,
    -0.3984375, -0.5,  -0.4453125, -0.5,  -0.34375,   -0.5,  -0.9453125, -0.5,  -0.8046875, -0.5,
    -0.390625,  -0.5,  -0.5234375, -0.5,  -0.2734375, -0.5,  -0.7421875, -0.5,  -0.7578125, -0.5,
    -0.3984375, -0.5,  -0.2109375, -0.5,  -0.5234375, -0.5,  -0.4765625, -0.5,  -0.59375,   -0.25,
    -0.6875,    -0.25, -0.5703125, -0.25, 0.03125,    -0.25, -0.1484375, -0.25, 0.1328125,  -0.25,
    0.0625,     -0.25, 0.171875,   -0.25, 0.0625,     -0.25, -0.203125,  -0.25, -0.0859375, -0.25,
    -0.140625,  -0.25, -0.1640625, -0.25, -0.7421875, -0.25, -0.546875,  -0.25, -0.15625,   -0.25,
    -0.609375,  -0.25, -0.6484375, -0.25, 0.265625,   -0.25, -0.578125,  -0.25, -0.1796875, -0.25,
    0.0234375,  -0.25, -0.328125,  -0.25, -0.296875,  -0.25, -0.390625,  0,     -0.484375,  0,
    -0.2734375, 0,     0.328125,   0,     0.015625,   0,     0.203125,   0,     0.015625,   0,
    -0.1875,    0,     0.2734375,  0,     0.015625,   0,     0.2265625,  0,     0.1640625,  0,
    0.015625,   0,     0.171875,   0,     0.1171875,  0,     0.1796875,  0,     -0.390625,  0,
    -0.4140625, 0,     0.4609375,  0,     -0.3984375, 0,     0.0390625,  0,     0.2578125,  0,
    -0.1328125, 0,     -0.1171875, 0,     0.3671875,  0.25,  0.3671875,  0.25,  0.171875,   0.25,
    0.34375,    0.25,  -0.2109375, 0.25,  -0.109375,  0.25,  0.8125,     0.25,  0.125,      0.25,
    0.1484375,  0.25,  -0.0859375, 0.25,  0.1171875,  0.25,  0.5078125,  0.25,  0.6640625,  0.25,
    0.3984375,  0.25,  -0.140625,  0.25,  0.15625,    0.25,  0.328125,   0.25,  0.390625,   0.25,
    0.4609375,  0.25,  0.2734375,  0.25,  -0.140625,  0.25,  0.7109375,  0.25,  0.125,      0.25,
    0.0625,     0.25,  0.6171875,  0.5,   0.6640625,  0.5,   0.4296875,  0.5,   0.5546875,  0.5,
    0.046875,   0.5,   -0.2578125, 0.5,   0.28125,    0.5,   0.9140625,  0.5,   0.40625,    0.5,
    0.2265625,  0.5,   0.390625,   0.5,   0.7265625,  0.5,   0.9375,     0.5,   0.9609375,  0.5,
    0.0390625,  0.5,   0.046875,   0.5,   0.59375,    0.5,   0.5859375,  0.5,   0.6171875,  0.5,
    0.5,        0.5,   0.125,      0.5,   0.296875,   0.5,   1.09375,    0.5,   0.796875,   0.5,
    -0.3828125, -0.5,  -0.2890625, -0.5,  -0.5625,    -0.5,  -0.484375,  -0.5,  -0.4375,    -0.5,
    -0.9453125, -0.5,  -0.7890625, -0.5,  -0.15625,   -0.5,  -0.5859375, -0.5,  -0.7109375, -0.5,
    -0.5859375, -0.5,  -0.3046875, -0.5,  -0.4453125, -0.5,  -0.7421875, -0.5,  -0.3203125, -0.5,
    -1.0078125, -0.5,  -0.390625,  -0.5,  -0.46875,   -0.5,  -0.4765625, -0.5,  -0.5234375, -0.5,
    -0.453125,  -0.5,  -0.65625,   -0.5,  -0.203125,  -0.5,  -0.2265625, -0.5};
// shape [1, 3, 4]
const std::vector<float> kDepthwise1dExpected = {-0.4296875, 0.1796875,  0.2734375, -0.6953125,
                                                 -0.0390625, -0.2109375, 0.1796875, -0.09375,
                                                 0.03125,    0.015625,   0.25,      -0.046875};
// shape [2, 3, 3, 2]
const std::vector<float> kMatMulBcastExpected = {
    0.234375,   -0.2578125, 0.1875,    0.1875,     -0.2578125, 0.234375,   -0.1484375, 0.0703125,
    0.1875,     0.1875,     0.125,     -0.09375,   -0.0234375, 0.1953125,  -0.5234375, -0.5234375,
    0.3046875,  0.0859375,  0.09375,   -0.1171875, -0.3515625, 0.1953125,  0.265625,   -0.421875,
    -0.0703125, 0.0234375,  0.265625,  0.40625,    -0.4609375, -0.5390625, 0.0703125,  0.1640625,
    -0.03125,   0.109375,   0.1328125, 0.0546875};
// shape [2, 3]
const std::vector<float> kMatMulVecExpected = {0.4296875, -0.3671875, -0.1484375,
                                               0.2109375, 0.4296875,  -0.3671875};

// shape [1, 2, 4, 4]
const std::vector<float> kAvgPoolCeilIncludePad = {-0.333333333,
                                                   -0.125,
                                                   0.375,
                                                   0.3125,
                                                   -0.375,
                                                   0,
                                                   0.277777778,
                                                   -0.145833333,
                                                   -0.208333333,
                                                   0.25,
                                                   0.0555555556,
                                                   -0.375,
                                                   -0.0625,
                                                   0.1875,
                                                   -0.145833333,
                                                   -0.15625,
                                                   0,
                                                   0.375,
                                                   -0.0694444444,
                                                   -0.145833333,
                                                   0.125,
                                                   0.277777778,
                                                   -0.388888889,
                                                   -0.125,
                                                   0.291666667,
                                                   0.0555555556,
                                                   -0.375,
                                                   0,
                                                   0.1875,
                                                   -0.145833333,
                                                   -0.125,
                                                   0.03125};
// shape [1, 2, 4, 4]
const std::vector<float> kAvgPoolCeilExcludePad = {
    -0.75,        -0.1875,      0.5625, 0.9375,       -0.5625,      0,       0.277777778,
    -0.291666667, -0.3125,      0.25,   0.0555555556, -0.75,        -0.1875, 0.375,
    -0.291666667, -0.625,       0,      0.5625,       -0.104166667, -0.4375, 0.1875,
    0.277777778,  -0.388888889, -0.25,  0.4375,       0.0555555556, -0.375,  0,
    0.5625,       -0.291666667, -0.25,  0.125};
// shape [1, 3, 3, 4, 3]
const std::vector<float> kConv3dExpected = {
    -1.015625,  -0.8359375, -0.625,     -0.265625,  -0.203125,  -0.5234375, -0.9765625, -0.765625,
    0.109375,   -0.1796875, 0.0234375,  -0.296875,  -0.5078125, 0.2109375,  -0.7109375, -0.4921875,
    -1.09375,   -0.5546875, -0.4765625, -0.40625,   -1.328125,  -0.8828125, -1.2890625, 0.0078125,
    -0.2265625, -1.515625,  -0.7890625, -0.1640625, -0.1328125, -0.203125,  -0.8984375, -0.7421875,
    -0.6796875, -0.1640625, 0,          -0.375,     0.1875,     0.359375,   -0.0546875, -0.796875,
    -0.75,      0.03125,    0.2109375,  0.3984375,  0.1171875,  -0.6953125, -0.6796875, -0.2734375,
    -0.1953125, -1.203125,  -0.3203125, -0.1953125, 0.3828125,  -0.7265625, -0.7265625, -1.21875,
    0.1953125,  0.171875,   0.6640625,  -0.5703125, -0.203125,  0.2421875,  0.34375,    -0.6796875,
    -0.6484375, -0.8125,    0.3046875,  0.453125,   -0.109375,  -0.6015625, -0.546875,  -0.1953125,
    -0.4375,    -0.375,     0.3125,     0.296875,   0.2265625,  0.3828125,  -0.4296875, -0.3671875,
    -0.078125,  0.0078125,  -0.0625,    0.2578125,  -0.0859375, 0.4296875,  -0.3359375, -0.1015625,
    -0.2734375, 0.421875,   0.546875,   1.015625,   -0.4140625, 0.109375,   -0.2265625, -0.4375,
    -0.28125,   0.0703125,  -0.453125,  0.4296875,  0.359375,   0.1015625,  -0.3203125, -0.28125,
    0.2578125,  0.078125,   -0.078125,  0.1875};

/// A graph under construction plus the runtime inputs to feed it.
struct Builder {
  ir::Graph g;
  std::map<std::string, Tensor> feeds;

  ir::Value *input(const std::string &name, Tensor t) {
    ir::Value *v = g.addValue(name, t.dtype(), t.shape());
    g.inputs.push_back(v);
    feeds[v->name] = std::move(t);
    return v;
  }
  ir::Value *constant(const std::string &name, Tensor t) {
    return g.addConstant(name, std::move(t));
  }
  ir::Value *ints(const std::string &name, std::vector<int64_t> v, Shape s = {}) {
    if (s.empty())
      s = {static_cast<int64_t>(v.size())};
    return constant(name, Tensor::fromInts(DType::I64, s, v));
  }
  ir::Node *node(OpKind k, const std::string &name, std::vector<ir::Value *> ins,
                 std::vector<std::pair<DType, Shape>> outs,
                 std::map<std::string, ir::Attribute> attrs = {}) {
    std::vector<ir::Value *> ov;
    for (size_t i = 0; i < outs.size(); ++i)
      ov.push_back(g.addValue(name + "_out" + std::to_string(i), outs[i].first, outs[i].second));
    ir::Node *n = g.addNode(k, name, std::move(ins), std::move(ov));
    n->attrs = std::move(attrs);
    return n;
  }
  ir::Value *out(ir::Node *n, size_t i = 0) { return n->outputs[i]; }
  /// Marks the outputs and runs; fails the test on error.
  std::map<std::string, Tensor> run(std::vector<ir::Value *> outputs) {
    g.outputs = std::move(outputs);
    auto r = interp::runGraph(g, feeds);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
    return r.ok() ? *r : std::map<std::string, Tensor>{};
  }
};

void expectFloats(const Tensor &t, const Shape &shape, const std::vector<float> &want,
                  double tol = 1e-5) {
  ASSERT_EQ(t.dtype(), DType::F32);
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(static_cast<size_t>(t.numElements()), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(t.data<float>()[i], want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
}

void expectInts(const Tensor &t, DType dt, const Shape &shape, const std::vector<int64_t> &want) {
  ASSERT_EQ(t.dtype(), dt);
  ASSERT_EQ(t.shape(), shape);
  EXPECT_EQ(t.toInts(), want);
}

TEST(InterpOps, ShapeComputationChainOnIntegers) {
  // x[2,4,5] -> Shape -> {Gather 0, Gather 1 * Gather -1} -> Concat -> Reshape x to [2,20].
  Builder b;
  ir::Value *x = b.input("x", fx({2, 4, 5}));
  ir::Value *s = b.out(b.node(OpKind::Shape, "shape", {x}, {{DType::I64, {3}}}));
  ir::Value *d0 = b.out(b.node(OpKind::Gather, "g0", {s, b.ints("i0", {0})}, {{DType::I64, {1}}}));
  ir::Value *d2 = b.out(b.node(OpKind::Gather, "g2",
                               {s, b.constant("i2", Tensor::fromInts(DType::I64, {}, {1}))},
                               {{DType::I64, {}}}, {{"axis", int64_t(0)}}));
  ir::Value *d3 = b.out(b.node(OpKind::Gather, "g3",
                               {s, b.constant("i3", Tensor::fromInts(DType::I64, {}, {-1}))},
                               {{DType::I64, {}}}));
  ir::Value *prod = b.out(b.node(OpKind::Mul, "mul", {d2, d3}, {{DType::I64, {}}}));
  ir::Value *prod1 =
      b.out(b.node(OpKind::Unsqueeze, "unsq", {prod, b.ints("ax0", {0})}, {{DType::I64, {1}}}));
  ir::Value *cat = b.out(
      b.node(OpKind::Concat, "cat", {d0, prod1}, {{DType::I64, {2}}}, {{"axis", int64_t(0)}}));
  ir::Value *y = b.out(b.node(OpKind::Reshape, "reshape", {x, cat}, {{DType::F32, {2, 20}}}));
  // Slice of the shape, Squeeze, Cast to i32 and integer Sub/Div/Max/Min.
  ir::Value *tail = b.out(b.node(OpKind::Slice, "slice", {s, b.ints("st", {1}), b.ints("en", {3})},
                                 {{DType::I64, {2}}}));
  ir::Value *t32 =
      b.out(b.node(OpKind::Cast, "cast", {tail}, {{DType::I32, {2}}}, {{"to", int64_t(6)}}));
  ir::Value *half = b.out(b.node(OpKind::Div, "div",
                                 {t32, b.constant("two", Tensor::fromInts(DType::I32, {}, {2}))},
                                 {{DType::I32, {2}}}));
  ir::Value *mx =
      b.out(b.node(OpKind::Max, "max", {tail, b.ints("m", {2, 5})}, {{DType::I64, {2}}}));
  ir::Value *mn = b.out(b.node(
      OpKind::Min, "min", {tail, b.ints("n", {2, 5}), b.ints("k", {4}, {1})}, {{DType::I64, {2}}}));
  ir::Value *sq = b.out(b.node(OpKind::Squeeze, "sq", {d0, b.ints("ax", {0})}, {{DType::I64, {}}}));
  ir::Value *sub = b.out(b.node(OpKind::Sub, "sub", {sq, tail}, {{DType::I64, {2}}}));
  ir::Value *cos = b.out(b.node(OpKind::ConstantOfShape, "cos", {tail}, {{DType::I64, {4, 5}}},
                                {{"value", Tensor::fromInts(DType::I64, {1}, {7})}}));
  auto r = b.run({y, s, cat, half, mx, mn, sub, cos});
  ASSERT_FALSE(r.empty());
  expectInts(r["shape_out0"], DType::I64, {3}, {2, 4, 5});
  expectInts(r["cat_out0"], DType::I64, {2}, {2, 20});
  EXPECT_EQ(r["reshape_out0"].shape(), (Shape{2, 20}));
  EXPECT_EQ(r["reshape_out0"].bytes(), b.feeds["x"].bytes());
  expectInts(r["div_out0"], DType::I32, {2}, {2, 2});
  expectInts(r["max_out0"], DType::I64, {2}, {4, 5});
  expectInts(r["min_out0"], DType::I64, {2}, {2, 4});
  expectInts(r["sub_out0"], DType::I64, {2}, {-2, -3});
  expectInts(r["cos_out0"], DType::I64, {4, 5}, std::vector<int64_t>(20, 7));
}

TEST(InterpOps, IntegerDivTruncatesTowardZero) {
  Builder b;
  ir::Value *a = b.input("a", Tensor::fromInts(DType::I32, {4}, {-7, 7, -7, 7}));
  ir::Value *d = b.input("d", Tensor::fromInts(DType::I32, {4}, {2, -2, -2, 2}));
  ir::Value *q = b.out(b.node(OpKind::Div, "div", {a, d}, {{DType::I32, {4}}}));
  ir::Value *a8 = b.input("a8", Tensor::fromInts(DType::U8, {2}, {250, 3}));
  ir::Value *b8 = b.input("b8", Tensor::fromInts(DType::U8, {1}, {10}));
  ir::Value *s8 = b.out(b.node(OpKind::Add, "add8", {a8, b8}, {{DType::U8, {2}}}));
  auto r = b.run({q, s8});
  expectInts(r["div_out0"], DType::I32, {4}, {-3, -3, 3, 3});
  expectInts(r["add8_out0"], DType::U8, {2}, {4, 13}); // wraps like numpy uint8
}

TEST(InterpOps, CastTruncatesAndConvertsBool) {
  Builder b;
  ir::Value *x = b.input("x", Tensor::fromFloats({5}, {-2.7f, -0.5f, 0.5f, 2.7f, 0.0f}));
  ir::Value *i =
      b.out(b.node(OpKind::Cast, "toi32", {x}, {{DType::I32, {5}}}, {{"to", int64_t(6)}}));
  ir::Value *bo =
      b.out(b.node(OpKind::Cast, "tobool", {x}, {{DType::Bool, {5}}}, {{"to", int64_t(9)}}));
  ir::Value *d =
      b.out(b.node(OpKind::Cast, "tof64", {i}, {{DType::F64, {5}}}, {{"to", int64_t(11)}}));
  auto r = b.run({i, bo, d});
  expectInts(r["toi32_out0"], DType::I32, {5}, {-2, 0, 0, 2, 0});
  expectInts(r["tobool_out0"], DType::Bool, {5}, {1, 1, 1, 1, 0});
  ASSERT_EQ(r["tof64_out0"].dtype(), DType::F64);
  EXPECT_EQ(r["tof64_out0"].getDouble(0), -2.0);
}

TEST(InterpOps, GroupedDilatedStridedConvWithAsymmetricPads) {
  Builder b;
  ir::Value *x = b.input("x", fx({1, 4, 7, 6}));
  ir::Node *n =
      b.node(OpKind::Conv, "conv", {x, b.constant("w", fw({6, 2, 3, 3})), b.constant("b", fb(6))},
             {{DType::F32, {1, 6, 4, 3}}},
             {{"group", int64_t(2)},
              {"kernel_shape", std::vector<int64_t>{3, 3}},
              {"strides", std::vector<int64_t>{2, 1}},
              {"dilations", std::vector<int64_t>{1, 2}},
              {"pads", std::vector<int64_t>{1, 0, 2, 1}}});
  auto r = b.run({b.out(n)});
  expectFloats(r["conv_out0"], {1, 6, 4, 3}, kConvGroupedExpected);
}

TEST(InterpOps, GroupedConvTransposeWithOutputPadding) {
  Builder b;
  ir::Value *x = b.input("x", fx({1, 4, 3, 3}));
  ir::Node *n = b.node(OpKind::ConvTranspose, "convt",
                       {x, b.constant("w", fw({4, 3, 3, 2})), b.constant("b", fb(6))},
                       {{DType::F32, {1, 6, 6, 8}}},
                       {{"group", int64_t(2)},
                        {"kernel_shape", std::vector<int64_t>{3, 2}},
                        {"strides", std::vector<int64_t>{2, 2}},
                        {"dilations", std::vector<int64_t>{1, 2}},
                        {"output_padding", std::vector<int64_t>{1, 1}},
                        {"pads", std::vector<int64_t>{1, 0, 1, 0}}});
  auto r = b.run({b.out(n)});
  expectFloats(r["convt_out0"], {1, 6, 6, 8}, kConvTransposeExpected);
}

TEST(InterpOps, DepthwiseConv1d) {
  Builder b;
  ir::Value *x = b.input("x", fx({1, 3, 8}));
  ir::Node *n =
      b.node(OpKind::Conv, "dw", {x, b.constant("w", fw({3, 1, 3}))}, {{DType::F32, {1, 3, 4}}},
             {{"group", int64_t(3)},
              {"kernel_shape", std::vector<int64_t>{3}},
              {"strides", std::vector<int64_t>{2}},
              {"pads", std::vector<int64_t>{1, 1}}});
  auto r = b.run({b.out(n)});
  expectFloats(r["dw_out0"], {1, 3, 4}, kDepthwise1dExpected);
}

TEST(InterpOps, MatMulBroadcastsBatchAndHandles1D) {
  Builder b;
  ir::Value *a = b.input("a", fx({2, 1, 3, 4}));
  ir::Value *m = b.out(b.node(OpKind::MatMul, "mm", {a, b.constant("b", fw({3, 4, 2}))},
                              {{DType::F32, {2, 3, 3, 2}}}));
  ir::Value *v = b.input("v", fx({4}));
  ir::Value *mv = b.out(
      b.node(OpKind::MatMul, "mv", {v, b.constant("b2", fw({2, 4, 3}))}, {{DType::F32, {2, 3}}}));
  auto r = b.run({m, mv});
  expectFloats(r["mm_out0"], {2, 3, 3, 2}, kMatMulBcastExpected);
  expectFloats(r["mv_out0"], {2, 3}, kMatMulVecExpected);
}

TEST(InterpOps, FusedActivationClampsConvGemmMatMulAdd) {
  Builder b;
  ir::Value *x = b.input("x", Tensor::fromFloats({1, 1, 1, 4}, {-3, -0.5f, 2, 9}));
  std::map<std::string, ir::Attribute> act = {{"act_min", 0.0f}, {"act_max", 6.0f}};
  auto conv = act;
  conv["kernel_shape"] = std::vector<int64_t>{1, 1};
  ir::Value *c = b.out(b.node(OpKind::Conv, "conv",
                              {x, b.constant("w", Tensor::fromFloats({1, 1, 1, 1}, {1}))},
                              {{DType::F32, {1, 1, 1, 4}}}, conv));
  ir::Value *x2 = b.input("x2", Tensor::fromFloats({1, 4}, {-3, -0.5f, 2, 9}));
  ir::Value *eye = b.constant(
      "eye", Tensor::fromFloats({4, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  ir::Value *gm = b.out(b.node(OpKind::Gemm, "gemm", {x2, eye}, {{DType::F32, {1, 4}}}, act));
  ir::Value *mm = b.out(b.node(OpKind::MatMul, "mm", {x2, eye}, {{DType::F32, {1, 4}}}, act));
  auto relu = std::map<std::string, ir::Attribute>{{"act_min", 0.0f}}; // min only (fused Relu)
  ir::Value *ad = b.out(b.node(OpKind::Add, "add", {x2, x2}, {{DType::F32, {1, 4}}}, relu));
  auto r = b.run({c, gm, mm, ad});
  expectFloats(r["conv_out0"], {1, 1, 1, 4}, {0, 0, 2, 6});
  expectFloats(r["gemm_out0"], {1, 4}, {0, 0, 2, 6});
  expectFloats(r["mm_out0"], {1, 4}, {0, 0, 2, 6});
  expectFloats(r["add_out0"], {1, 4}, {0, 0, 4, 18});
}

TEST(InterpOps, ResizeNearestModesOn1D) {
  // Upsample [1,2,3,4] x2 with asymmetric coordinates: x_orig = o / 2.
  struct Case {
    const char *mode;
    std::vector<float> want;
  } cases[] = {{"round_prefer_floor", {1, 1, 2, 2, 3, 3, 4, 4}},
               {"round_prefer_ceil", {1, 2, 2, 3, 3, 4, 4, 4}},
               {"floor", {1, 1, 2, 2, 3, 3, 4, 4}},
               {"ceil", {1, 2, 2, 3, 3, 4, 4, 4}}};
  for (const Case &c : cases) {
    Builder b;
    ir::Value *x = b.input("x", Tensor::fromFloats({4}, {1, 2, 3, 4}));
    ir::Node *n =
        b.node(OpKind::Resize, "rs", {x, nullptr, b.constant("sc", Tensor::fromFloats({1}, {2}))},
               {{DType::F32, {8}}},
               {{"mode", std::string("nearest")},
                {"coordinate_transformation_mode", std::string("asymmetric")},
                {"nearest_mode", std::string(c.mode)}});
    auto r = b.run({b.out(n)});
    expectFloats(r["rs_out0"], {8}, c.want);
  }
  // Linear half_pixel downsample by sizes: x_orig = (o + 0.5) * 2 - 0.5 = 0.5, 2.5.
  Builder b;
  ir::Value *x = b.input("x", Tensor::fromFloats({1, 4}, {1, 2, 3, 4}));
  ir::Node *n = b.node(OpKind::Resize, "lin", {x, nullptr, nullptr, b.ints("sz", {1, 2})},
                       {{DType::F32, {1, 2}}}, {{"mode", std::string("linear")}});
  auto r = b.run({b.out(n)});
  expectFloats(r["lin_out0"], {1, 2}, {1.5f, 3.5f});
}

TEST(InterpOps, SliceExtremeBoundsAndPadCropping) {
  Builder b;
  ir::Value *x = b.input("x", Tensor::fromInts(DType::I64, {5}, {0, 1, 2, 3, 4}));
  int64_t big = std::numeric_limits<int64_t>::max(), small = std::numeric_limits<int64_t>::min();
  ir::Value *rev = b.out(
      b.node(OpKind::Slice, "rev",
             {x, b.ints("s", {big}), b.ints("e", {small}), b.ints("a", {0}), b.ints("st", {-2})},
             {{DType::I64, {3}}}));
  ir::Value *pad = b.out(
      b.node(OpKind::Pad, "crop",
             {x, b.ints("p", {-1, 2}), b.constant("cv", Tensor::fromInts(DType::I64, {}, {9}))},
             {{DType::I64, {6}}}));
  ir::Value *refl = b.out(b.node(OpKind::Pad, "refl", {x, b.ints("p2", {2, 3})},
                                 {{DType::I64, {10}}}, {{"mode", std::string("reflect")}}));
  auto r = b.run({rev, pad, refl});
  expectInts(r["rev_out0"], DType::I64, {3}, {4, 2, 0});
  expectInts(r["crop_out0"], DType::I64, {6}, {1, 2, 3, 4, 9, 9});
  expectInts(r["refl_out0"], DType::I64, {10}, {2, 1, 0, 1, 2, 3, 4, 3, 2, 1});
}

TEST(InterpOps, SplitSizesAndDropoutMask) {
  Builder b;
  ir::Value *x = b.input("x", Tensor::fromInts(DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  ir::Node *sp = b.node(OpKind::Split, "split", {x, b.ints("sz", {1, 2})},
                        {{DType::I32, {2, 1}}, {DType::I32, {2, 2}}}, {{"axis", int64_t(-1)}});
  ir::Value *f = b.input("f", Tensor::fromFloats({2}, {1, 2}));
  ir::Node *dr = b.node(OpKind::Dropout, "drop", {f}, {{DType::F32, {2}}, {DType::Bool, {2}}});
  auto r = b.run({b.out(sp, 0), b.out(sp, 1), b.out(dr, 0), b.out(dr, 1)});
  expectInts(r["split_out0"], DType::I32, {2, 1}, {1, 4});
  expectInts(r["split_out1"], DType::I32, {2, 2}, {2, 3, 5, 6});
  expectFloats(r["drop_out0"], {2}, {1, 2});
  expectInts(r["drop_out1"], DType::Bool, {2}, {1, 1});
}

TEST(InterpOps, ErrorsNameTheNodeAndOp) {
  Builder b;
  ir::Value *x = b.input("x", fx({1, 1, 4, 4}));
  b.node(OpKind::Resize, "up_1",
         {x, nullptr, b.constant("sc", Tensor::fromFloats({4}, {1, 1, 2, 2}))},
         {{DType::F32, {1, 1, 8, 8}}}, {{"mode", std::string("area")}});
  b.g.outputs = {b.g.nodes().back()->outputs[0]};
  b.g.sourceFile = "m.onnx";
  auto r = interp::runGraph(b.g, b.feeds);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().node, "up_1");
  EXPECT_EQ(r.error().op, "Resize");
  EXPECT_EQ(r.error().file, "m.onnx");
  EXPECT_NE(r.error().message.find("area"), std::string::npos) << r.error().message;
  EXPECT_FALSE(interp::canEvaluate(*b.g.nodes().back()));

  // A missing graph input is reported, not crashed on.
  auto r2 = interp::runGraph(b.g, {});
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.error().message.find("'x'"), std::string::npos);

  // Out-of-range Gather index.
  Builder c;
  ir::Value *d = c.input("d", fx({3}));
  ir::Node *gn = c.node(OpKind::Gather, "gather_7", {d, c.ints("i", {3})}, {{DType::F32, {1}}});
  c.g.outputs = {gn->outputs[0]};
  auto r3 = interp::runGraph(c.g, c.feeds);
  ASSERT_FALSE(r3.ok());
  EXPECT_EQ(r3.error().node, "gather_7");
}

TEST(InterpOps, CanEvaluateChecksDtypesAndModes) {
  Builder b;
  ir::Value *xi = b.input("xi", Tensor::fromInts(DType::I8, {1, 1, 2, 2}, {1, 2, 3, 4}));
  ir::Value *xf = b.input("xf", fx({1, 1, 2, 2}));
  ir::Node *convI8 = b.node(OpKind::Conv, "c",
                            {xi, b.constant("w", Tensor::fromInts(DType::I8, {1, 1, 1, 1}, {1}))},
                            {{DType::I8, {1, 1, 2, 2}}});
  ir::Node *relu = b.node(OpKind::Relu, "r", {xi}, {{DType::I8, {1, 1, 2, 2}}});
  ir::Node *padWrap = b.node(OpKind::Pad, "p", {xf, b.ints("pp", {0, 0, 1, 1, 0, 0, 1, 1})},
                             {{DType::F32, {1, 1, 4, 4}}}, {{"mode", std::string("wrap")}});
  ir::Node *cubic = b.node(OpKind::Resize, "rc",
                           {xf, nullptr, b.constant("s", Tensor::fromFloats({4}, {1, 1, 2, 2}))},
                           {{DType::F32, {1, 1, 4, 4}}}, {{"mode", std::string("cubic")}});
  ir::Node *castF16 =
      b.node(OpKind::Cast, "h", {xf}, {{DType::F32, {1, 1, 2, 2}}}, {{"to", int64_t(10)}});
  ir::Node *badNearest = b.node(
      OpKind::Resize, "rn", {xf, nullptr, b.constant("s2", Tensor::fromFloats({4}, {1, 1, 2, 2}))},
      {{DType::F32, {1, 1, 4, 4}}}, {{"nearest_mode", std::string("stochastic")}});
  ir::Value *xb = b.input("xb", Tensor::fromInts(DType::Bool, {2}, {0, 1}));
  ir::Node *addBool = b.node(OpKind::Add, "ab", {xb, xb}, {{DType::Bool, {2}}});
  EXPECT_FALSE(interp::canEvaluate(*castF16));
  EXPECT_FALSE(interp::canEvaluate(*badNearest));
  EXPECT_FALSE(interp::canEvaluate(*addBool));
  EXPECT_FALSE(interp::canEvaluate(*convI8));
  EXPECT_TRUE(interp::canEvaluate(*relu));
  EXPECT_FALSE(interp::canEvaluate(*padWrap));
  EXPECT_TRUE(interp::canEvaluate(*cubic));
  // Integer Relu actually runs.
  b.g.outputs = {relu->outputs[0]};
  std::vector<const Tensor *> ins = {&b.feeds["xi"]};
  auto r = interp::evaluateNode(*relu, ins);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].toInts(), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(InterpOps, RunGraphReportsIntermediatesWhenAsked) {
  Builder b;
  ir::Value *x = b.input("x", Tensor::fromFloats({3}, {-1, 0, 2}));
  ir::Value *r1 = b.out(b.node(OpKind::Relu, "relu", {x}, {{DType::F32, {3}}}));
  ir::Value *s = b.out(b.node(
      OpKind::Mul, "mul", {r1, b.constant("k", Tensor::fromFloats({}, {3}))}, {{DType::F32, {3}}}));
  b.g.outputs = {s};
  std::map<std::string, Tensor> all;
  auto r = interp::runGraph(b.g, b.feeds, &all);
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_EQ(r->size(), 1u);
  expectFloats(r->at("mul_out0"), {3}, {0, 0, 6});
  ASSERT_TRUE(all.count("relu_out0"));
  expectFloats(all["relu_out0"], {3}, {0, 0, 2});
  EXPECT_TRUE(all.count("x"));
}

TEST(InterpOps, ReduceMeanAllAxesNoKeepdimsAndSoftmax) {
  Builder b;
  ir::Value *x = b.input("x", Tensor::fromFloats({2, 2}, {1, 2, 3, 6}));
  ir::Value *m =
      b.out(b.node(OpKind::ReduceMean, "rm", {x}, {{DType::F32, {}}}, {{"keepdims", int64_t(0)}}));
  ir::Value *sm =
      b.out(b.node(OpKind::Softmax, "sm", {x}, {{DType::F32, {2, 2}}}, {{"axis", int64_t(0)}}));
  auto r = b.run({m, sm});
  expectFloats(r["rm_out0"], {}, {3});
  float e = static_cast<float>(1.0 / (1.0 + std::exp(2.0))); // softmax of (1,3) along axis 0
  float f = static_cast<float>(1.0 / (1.0 + std::exp(4.0))); // softmax of (2,6)
  expectFloats(r["sm_out0"], {2, 2}, {e, f, 1 - e, 1 - f});
}

TEST(InterpOps, AveragePoolCeilModeCountIncludePad) {
  // 6x6, kernel 3, stride 2, pads 1, ceil_mode -> 4x4; the last window overhangs the padding.
  for (int include = 0; include < 2; ++include) {
    Builder b;
    ir::Value *x = b.input("x", fx({1, 2, 6, 6}));
    ir::Node *n = b.node(OpKind::AveragePool, "ap", {x}, {{DType::F32, {1, 2, 4, 4}}},
                         {{"kernel_shape", std::vector<int64_t>{3, 3}},
                          {"strides", std::vector<int64_t>{2, 2}},
                          {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                          {"ceil_mode", int64_t(1)},
                          {"count_include_pad", int64_t(include)}});
    auto r = b.run({b.out(n)});
    expectFloats(r["ap_out0"], {1, 2, 4, 4},
                 include ? kAvgPoolCeilIncludePad : kAvgPoolCeilExcludePad);
  }
}

TEST(InterpOps, Conv3dWithStridesAndAsymmetricPads) {
  Builder b;
  ir::Value *x = b.input("x", fx({1, 2, 4, 5, 3}));
  ir::Node *n =
      b.node(OpKind::Conv, "c3", {x, b.constant("w", fw({3, 2, 2, 3, 2})), b.constant("b", fb(3))},
             {{DType::F32, {1, 3, 3, 4, 3}}},
             {{"kernel_shape", std::vector<int64_t>{2, 3, 2}},
              {"strides", std::vector<int64_t>{2, 1, 1}},
              {"pads", std::vector<int64_t>{1, 0, 1, 1, 1, 0}}});
  auto r = b.run({b.out(n)});
  expectFloats(r["c3_out0"], {1, 3, 3, 4, 3}, kConv3dExpected);
}

TEST(InterpOps, QuantizeRoundsHalfToEvenAndSaturatesDequantizePerAxis) {
  Builder b;
  ir::Value *x = b.input("x", Tensor::fromFloats({6}, {0.5f, 1.5f, 2.5f, -0.5f, 300, -300}));
  ir::Value *q = b.out(b.node(OpKind::QuantizeLinear, "q",
                              {x, b.constant("s", Tensor::fromFloats({}, {1})),
                               b.constant("z", Tensor::fromInts(DType::I8, {}, {0}))},
                              {{DType::I8, {6}}}));
  ir::Value *qi = b.input("qi", Tensor::fromInts(DType::I8, {2, 2}, {1, 2, 3, 4}));
  ir::Value *dq = b.out(b.node(OpKind::DequantizeLinear, "dq",
                               {qi, b.constant("s2", Tensor::fromFloats({2}, {0.5f, 2})),
                                b.constant("z2", Tensor::fromInts(DType::I8, {2}, {1, 0}))},
                               {{DType::F32, {2, 2}}}, {{"axis", int64_t(0)}}));
  auto r = b.run({q, dq});
  expectInts(r["q_out0"], DType::I8, {6}, {0, 2, 2, 0, 127, -128});
  expectFloats(r["dq_out0"], {2, 2}, {0, 0.5f, 6, 8});
}

TEST(InterpOps, TypedQuantizedNodesGoToTheIntegerInterpreter) {
  Builder b;
  ir::Value *x = b.input("x", Tensor::fromInts(DType::I8, {4}, {-3, -1, 2, 5}));
  x->quant = ir::QuantParams{{0.5f}, {-1}, 0};
  ir::Node *relu = b.node(OpKind::Relu, "qrelu", {x}, {{DType::I8, {4}}});
  relu->outputs[0]->quant = x->quant;
  ir::Node *reshape =
      b.node(OpKind::Reshape, "qreshape", {x, b.ints("s", {2, 2})}, {{DType::I8, {2, 2}}});
  reshape->outputs[0]->quant = x->quant;
  // Relu of a quantized value clamps at the zero point, not at 0: constant
  // folding leaves it alone, and evaluateNode hands it to the integer interpreter.
  EXPECT_FALSE(interp::canEvaluate(*relu));
  std::vector<const Tensor *> ins = {&b.feeds["x"]};
  auto r = interp::evaluateNode(*relu, ins);
  ASSERT_TRUE(r.ok()) << r.error().str();
  expectInts((*r)[0], DType::I8, {4}, {-1, -1, 2, 5});
  // Byte moves keep their meaning whatever the quant params.
  EXPECT_TRUE(interp::canEvaluate(*reshape));
}

} // namespace
