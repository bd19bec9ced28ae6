//===- kernels_elem_test.cpp - Element-wise, activation, softmax, reduce,
//    data-movement, resize and cast kernels, called directly --------------===//
//
// The kernels (linked from npucc_kernels_host) are checked against naive
// references written here, and their sources must build as strict C99 under
// gcc and clang. Their CPU lowering is tested in elem_lowering_test.cpp.
//
//===----------------------------------------------------------------------===//
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../runtime/kernels/npucc_act.h"
#include "../../runtime/kernels/npucc_cast.h"
#include "../../runtime/kernels/npucc_eltwise.h"
#include "../../runtime/kernels/npucc_move.h"
#include "../../runtime/kernels/npucc_reduce.h"
#include "../../runtime/kernels/npucc_resize.h"
#include "../../runtime/kernels/npucc_softmax.h"

#include "npucc/ir/Graph.h"
#include "npucc/lower/CpuLowering.h"
#include "npucc/onnx/Importer.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>

using namespace npucc;
using ir::DType;
using ir::Graph;
using ir::Node;
using ir::OpKind;
using ir::Shape;
using ir::Tensor;
using ir::Value;
using lir::BufferRef;

namespace {

std::vector<float> randf(size_t n, unsigned seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

bool near(double a, double b, double tol = 1e-5) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= tol * (1.0 + std::fabs(b));
}

// ---- kernels, called directly -------------------------------------------

using BinF = void (*)(const float *, const float *, float *, int32_t);
struct BinCase {
  const char *name;
  BinF fn;
  float (*ref)(float, float);
};
const BinCase BinCases[] = {
    {"add", npucc_add_f32, [](float a, float b) { return a + b; }},
    {"sub", npucc_sub_f32, [](float a, float b) { return a - b; }},
    {"mul", npucc_mul_f32, [](float a, float b) { return a * b; }},
    {"div", npucc_div_f32, [](float a, float b) { return a / b; }},
    {"maximum", npucc_maximum_f32, [](float a, float b) { return a > b ? a : b; }},
    {"minimum", npucc_minimum_f32, [](float a, float b) { return a < b ? a : b; }},
    {"prelu", npucc_prelu_f32, [](float a, float b) { return a < 0 ? a * b : a; }},
};

TEST(ElemKernels, BinarySameShapeOutOfPlaceAndInPlace) {
  const int n = 37; // not a multiple of 8: exercises the tail loop
  for (const BinCase &c : BinCases) {
    std::vector<float> a = randf(n, 1), b = randf(n, 2), y(n);
    c.fn(a.data(), b.data(), y.data(), n);
    for (int i = 0; i < n; ++i)
      ASSERT_TRUE(near(y[i], c.ref(a[i], b[i]))) << c.name << " " << i;
    std::vector<float> ya = a; // y aliases a
    c.fn(ya.data(), b.data(), ya.data(), n);
    EXPECT_EQ(ya, y) << c.name << " y == a";
    std::vector<float> yb = b; // y aliases b
    c.fn(a.data(), yb.data(), yb.data(), n);
    EXPECT_EQ(yb, y) << c.name << " y == b";
    std::vector<float> yy = a; // y == a == b
    c.fn(yy.data(), yy.data(), yy.data(), n);
    for (int i = 0; i < n; ++i)
      ASSERT_TRUE(near(yy[i], c.ref(a[i], a[i]))) << c.name << " a op a " << i;
  }
}

TEST(ElemKernels, BroadcastVariantsMatchIndexing) {
  const int O = 2, M = 3, I = 5;
  std::vector<float> a = randf(O * M * I, 3), b = randf(M, 4), y(O * M * I);
  npucc_sub_f32_rb(a.data(), b.data(), y.data(), O, M, I);
  for (int i = 0; i < O * M * I; ++i)
    ASSERT_FLOAT_EQ(y[i], a[i] - b[(i / I) % M]);
  npucc_sub_f32_lb(b.data(), a.data(), y.data(), O, M, I);
  for (int i = 0; i < O * M * I; ++i)
    ASSERT_FLOAT_EQ(y[i], b[(i / I) % M] - a[i]);
  std::vector<float> ip = a; // per-channel, in place
  npucc_div_f32_rb(ip.data(), b.data(), ip.data(), O, M, I);
  for (int i = 0; i < O * M * I; ++i)
    ASSERT_FLOAT_EQ(ip[i], a[i] / b[(i / I) % M]);
  // N-D: a is [2,1,5] (strides 5,0,1), b is [3,1] (0,1,0), y is [2,3,5].
  std::vector<float> a2 = randf(10, 5);
  const int32_t shape[] = {2, 3, 5}, sa[] = {5, 0, 1}, sb[] = {0, 1, 0};
  npucc_mul_f32_nd(a2.data(), b.data(), y.data(), 3, shape, sa, sb);
  for (int o = 0; o < 2; ++o)
    for (int m = 0; m < 3; ++m)
      for (int i = 0; i < 5; ++i)
        ASSERT_FLOAT_EQ(y[(o * 3 + m) * 5 + i], a2[o * 5 + i] * b[m]);
  std::vector<float> c(4);
  const float lo = -0.5f, hi = 0.5f;
  npucc_addc_f32(a.data(), b.data(), c.data(), 3, lo, hi);
  for (int i = 0; i < 3; ++i)
    EXPECT_FLOAT_EQ(c[i], std::min(hi, std::max(lo, a[i] + b[i])));
}

TEST(ElemKernels, IntegerSemantics) {
  const int32_t a[] = {7, -7, 7, -7, 5, INT32_MIN}, b[] = {2, 2, -2, -2, 0, -1};
  int32_t y[6];
  npucc_div_i32(a, b, y, 6);
  const int32_t want[] = {3, -3, -3, 3, 0, INT32_MIN}; // trunc; x/0 -> 0; wraps
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(y[i], want[i]) << i;
  const uint8_t ua[] = {250, 3}, ub[] = {10, 5};
  uint8_t uy[2];
  npucc_add_u8(ua, ub, uy, 2);
  EXPECT_EQ(uy[0], 4);
  npucc_sub_u8(ua, ub, uy, 2);
  EXPECT_EQ(uy[1], 254);
  const int64_t la[] = {INT64_MAX, -3}, lb[] = {1, 4};
  int64_t ly[2];
  npucc_add_i64(la, lb, ly, 2);
  EXPECT_EQ(ly[0], INT64_MIN);
  npucc_maximum_i64(la, lb, ly, 2);
  EXPECT_EQ(ly[1], 4);
}

TEST(ElemKernels, ActivationsMatchReferenceInPlace) {
  const int n = 29;
  std::vector<float> x = randf(n, 7, -6.0f, 6.0f);
  struct Act {
    std::function<void(const float *, float *)> fn;
    std::function<float(float)> ref;
  } acts[] = {
      {[&](const float *p, float *q) { npucc_relu_f32(p, q, n); },
       [](float v) { return v > 0 ? v : 0.0f; }},
      {[&](const float *p, float *q) { npucc_leakyrelu_f32(p, q, n, 0.1f); },
       [](float v) { return v >= 0 ? v : 0.1f * v; }},
      {[&](const float *p, float *q) { npucc_clip_f32(p, q, n, -1.0f, 2.0f); },
       [](float v) { return std::min(2.0f, std::max(-1.0f, v)); }},
      {[&](const float *p, float *q) { npucc_sigmoid_f32(p, q, n); },
       [](float v) { return float(1.0 / (1.0 + std::exp(-double(v)))); }},
      {[&](const float *p, float *q) { npucc_hardsigmoid_f32(p, q, n, 0.2f, 0.5f); },
       [](float v) { return std::min(1.0f, std::max(0.0f, 0.2f * v + 0.5f)); }},
      {[&](const float *p, float *q) { npucc_hardswish_f32(p, q, n); },
       [](float v) { return v * std::min(1.0f, std::max(0.0f, v / 6.0f + 0.5f)); }},
      {[&](const float *p, float *q) { npucc_tanh_f32(p, q, n); },
       [](float v) { return float(std::tanh(double(v))); }},
  };
  for (size_t k = 0; k < sizeof(acts) / sizeof(acts[0]); ++k) {
    std::vector<float> y(n), ip = x;
    acts[k].fn(x.data(), y.data());
    acts[k].fn(ip.data(), ip.data());
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(near(y[i], acts[k].ref(x[i]))) << "act " << k << " at " << i;
      ASSERT_EQ(ip[i], y[i]) << "in-place act " << k;
    }
  }
  const int8_t xi[] = {-128, -5, 0, 5, 127};
  int8_t yi[5];
  npucc_clip_i8(xi, yi, 5, -10, 100, 1, 1);
  const int8_t want[] = {-10, -5, 0, 5, 100};
  EXPECT_EQ(0, memcmp(yi, want, 5));
  const int64_t xl[] = {INT64_MIN, 3};
  int64_t yl[2];
  npucc_clip_i64(xl, yl, 2, 0, 0, 0, 1); // max 0 only
  EXPECT_EQ(yl[0], INT64_MIN);
  EXPECT_EQ(yl[1], 0);
}

TEST(ElemKernels, SoftmaxAndReduceMean) {
  const int O = 2, A = 5, I = 3;
  std::vector<float> x = randf(O * A * I, 9, -50.0f, 50.0f), y(O * A * I);
  npucc_softmax_f32(x.data(), y.data(), O, A, I);
  for (int o = 0; o < O; ++o)
    for (int i = 0; i < I; ++i) {
      double mx = -1e30, s = 0;
      for (int a = 0; a < A; ++a)
        mx = std::max(mx, double(x[(o * A + a) * I + i]));
      for (int a = 0; a < A; ++a)
        s += std::exp(double(x[(o * A + a) * I + i]) - mx);
      for (int a = 0; a < A; ++a)
        ASSERT_TRUE(near(y[(o * A + a) * I + i], std::exp(x[(o * A + a) * I + i] - mx) / s));
    }
  std::vector<float> m(O * I), m1(O);
  npucc_reduce_mean_f32(x.data(), m.data(), O, A, I);
  npucc_reduce_mean_f32(x.data(), m1.data(), O, A * I, 1);
  for (int o = 0; o < O; ++o) {
    double all = 0;
    for (int i = 0; i < I; ++i) {
      double s = 0;
      for (int a = 0; a < A; ++a)
        s += x[(o * A + a) * I + i];
      all += s;
      ASSERT_TRUE(near(m[o * I + i], s / A, 1e-4));
    }
    ASSERT_TRUE(near(m1[o], all / (A * I), 1e-4));
  }
  // N-D: reduce axes 0 and 2 of [2,5,3] -> [5].
  std::vector<float> r(A);
  const int32_t shape[] = {O, A, I}, ys[] = {0, 1, 0};
  npucc_reduce_mean_f32_nd(x.data(), r.data(), A, 3, shape, ys, O * I);
  for (int a = 0; a < A; ++a) {
    double s = 0;
    for (int o = 0; o < O; ++o)
      for (int i = 0; i < I; ++i)
        s += x[(o * A + a) * I + i];
    ASSERT_TRUE(near(r[a], s / (O * I), 1e-4));
  }
}

TEST(ElemKernels, MoveKernels) {
  std::vector<float> x = randf(2 * 3 * 4, 11), y(24);
  npucc_transpose2d(x.data(), y.data(), 4, 2, 3, 4); // [2][3][4] -> [2][4][3]
  for (int b = 0; b < 2; ++b)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c)
        ASSERT_EQ(y[(b * 4 + c) * 3 + r], x[(b * 3 + r) * 4 + c]);
  // Reverse the last axis with a negative stride.
  const int32_t shape[] = {6, 4}, st[] = {4, -1};
  npucc_strided_copy(x.data(), y.data(), 4, 3, 2, shape, st);
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 4; ++c)
      ASSERT_EQ(y[r * 4 + c], x[r * 4 + 3 - c]);
  const int64_t idx[] = {-1, 0, 2};
  std::vector<float> g(2 * 3 * 4);
  npucc_gather_idx64(x.data(), idx, g.data(), 2, 3, 3, 16); // axis 1 of [2,3,4]
  for (int o = 0; o < 2; ++o)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 4; ++i)
        ASSERT_EQ(g[(o * 3 + j) * 4 + i], x[(o * 3 + (j == 0 ? 2 : idx[j])) * 4 + i]);
  const int32_t pat[] = {0x00, 0x00, 0x80, 0x3f}; // 1.0f little-endian
  npucc_fill(y.data(), 5, 4, pat);
  EXPECT_EQ(y[4], 1.0f);
}

TEST(ElemKernels, CastSaturatesAndBools) {
  const float f[] = {1.9f, -1.9f, 300.0f, -300.0f, NAN, 0.0f};
  int8_t i8[6];
  npucc_cast_f32_i8(f, i8, 6);
  const int8_t want[] = {1, -1, 127, -128, 0, 0};
  EXPECT_EQ(0, memcmp(i8, want, 6));
  uint8_t bl[6];
  npucc_cast_f32_bool(f, bl, 6);
  const uint8_t wantb[] = {1, 1, 1, 1, 1, 0};
  EXPECT_EQ(0, memcmp(bl, wantb, 6));
  const int64_t l[] = {-1, 258};
  uint8_t u8[2];
  npucc_cast_i64_u8(l, u8, 2);
  EXPECT_EQ(u8[0], 255);
  EXPECT_EQ(u8[1], 2);
  double d[2];
  npucc_cast_u8_f64(u8, d, 2);
  EXPECT_EQ(d[0], 255.0);
}

} // namespace

// ---- the C files build as strict C99 ------------------------------------

TEST(ElemKernels, CompileAsStrictC99) {
  const char *files[] = {"npucc_eltwise.c", "npucc_act.c",    "npucc_softmax.c", "npucc_reduce.c",
                         "npucc_move.c",    "npucc_resize.c", "npucc_cast.c"};
  for (const char *cc : {"gcc", "clang"}) {
    if (std::system((std::string("command -v ") + cc + " >/dev/null 2>&1").c_str()) != 0)
      continue;
    for (const char *f : files) {
      // -fsyntax-only keeps this fast; the -O2 object build is part of the
      // generated-code tests.
      std::string cmd = std::string(cc) +
                        " -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only " +
                        NPUCC_SOURCE_DIR + "/runtime/kernels/" + f;
      EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
  }
}
