//===- kernels_elem_test.cpp - Element-wise, activation, softmax, reduce,
//    data-movement, resize and cast kernels and their CPU lowering ---------===//
//
// The kernel sources (C99 that is also valid C++) are compiled into this
// test. Kernels are checked against naive references written here; the
// lowerings are checked by executing their loop-IR calls on a test arena,
// against naive references and against the ONNX backend node test data
// (shape operands such as Slice starts or Resize scales are made constant).
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

// ---- executing lowered loop IR ------------------------------------------

/// Every value and scratch request gets its own slice of one byte arena.
class TestCtx : public lower::LowerContext {
public:
  std::vector<uint8_t> mem;
  std::map<const Value *, BufferRef> bufs;
  std::set<std::string> files;
  const Value *aliasOut = nullptr, *aliasIn = nullptr; // simulate in-place planning

  BufferRef alloc(int64_t bytes, DType t) {
    BufferRef b;
    b.offset = int64_t((mem.size() + 15) / 16 * 16);
    b.size = bytes;
    b.dtype = t;
    mem.resize(size_t(b.offset + bytes + 16));
    return b;
  }
  BufferRef buffer(const Value *v) override {
    if (!v)
      return BufferRef{lir::Region::Arena, 0, 0, 0, DType::F32};
    if (v == aliasOut && aliasIn)
      return buffer(aliasIn);
    auto it = bufs.find(v);
    if (it != bufs.end())
      return it->second;
    BufferRef b = alloc(int64_t(v->byteSize()), v->dtype);
    if (v->isConstant())
      std::memcpy(mem.data() + b.offset, v->constant->raw(), v->constant->byteSize());
    return bufs[v] = b;
  }
  BufferRef scratch(int64_t bytes) override { return alloc(bytes, DType::U8); }
  void useKernelFile(const std::string &p) override { files.insert(p); }
};

struct Args {
  std::vector<void *> p;
  std::vector<int64_t> i;
  std::vector<float> f;
  std::vector<std::vector<int32_t>> ia;
  std::vector<std::vector<float>> fa;
  template <typename T> T *P(size_t k) { return static_cast<T *>(p[k]); }
  int32_t I(size_t k) { return int32_t(i[k]); }
  const int32_t *IA(size_t k) { return ia[k].empty() ? nullptr : ia[k].data(); }
  const float *FA(size_t k) { return fa[k].empty() ? nullptr : fa[k].data(); }
};
using Table = std::map<std::string, std::function<void(Args &)>>;

template <typename T>
void regBinary(Table &t, const std::string &n, void (*f)(const T *, const T *, T *, int32_t),
               void (*rb)(const T *, const T *, T *, int32_t, int32_t, int32_t),
               void (*lb)(const T *, const T *, T *, int32_t, int32_t, int32_t),
               void (*nd)(const T *, const T *, T *, int32_t, const int32_t *, const int32_t *,
                          const int32_t *)) {
  t[n] = [f](Args &a) { f(a.P<T>(0), a.P<T>(1), a.P<T>(2), a.I(3)); };
  t[n + "_rb"] = [rb](Args &a) { rb(a.P<T>(0), a.P<T>(1), a.P<T>(2), a.I(3), a.I(4), a.I(5)); };
  t[n + "_lb"] = [lb](Args &a) { lb(a.P<T>(0), a.P<T>(1), a.P<T>(2), a.I(3), a.I(4), a.I(5)); };
  t[n + "_nd"] = [nd](Args &a) {
    nd(a.P<T>(0), a.P<T>(1), a.P<T>(2), a.I(3), a.IA(4), a.IA(5), a.IA(6));
  };
}

template <typename T>
void regClip(Table &t, const std::string &n,
             void (*f)(const T *, T *, int32_t, int64_t, int64_t, int32_t, int32_t)) {
  t[n] = [f](Args &a) { f(a.P<T>(0), a.P<T>(1), a.I(2), a.i[3], a.i[4], a.I(5), a.I(6)); };
}

template <typename T>
void regUnary(Table &t, const std::string &n, void (*f)(const T *, T *, int32_t)) {
  t[n] = [f](Args &a) { f(a.P<T>(0), a.P<T>(1), a.I(2)); };
}

const Table &kernels() {
  static Table t = [] {
    Table t;
#define REG_BIN(OP, SUF, T)                                                                        \
  regBinary<T>(t, "npucc_" #OP "_" #SUF, npucc_##OP##_##SUF, npucc_##OP##_##SUF##_rb,              \
               npucc_##OP##_##SUF##_lb, npucc_##OP##_##SUF##_nd);
#define REG_BIN_TYPE(SUF, T)                                                                       \
  REG_BIN(add, SUF, T)                                                                             \
  REG_BIN(sub, SUF, T)                                                                             \
  REG_BIN(mul, SUF, T) REG_BIN(div, SUF, T) REG_BIN(maximum, SUF, T) REG_BIN(minimum, SUF, T)
    REG_BIN_TYPE(f32, float)
    REG_BIN_TYPE(f64, double)
    REG_BIN_TYPE(i8, int8_t) REG_BIN_TYPE(i16, int16_t) REG_BIN_TYPE(i32, int32_t) REG_BIN_TYPE(
        i64, int64_t) REG_BIN_TYPE(u8, uint8_t) REG_BIN_TYPE(u16, uint16_t)
        REG_BIN_TYPE(u32, uint32_t) REG_BIN_TYPE(u64, uint64_t) REG_BIN(prelu, f32, float)
            t["npucc_addc_f32"] = [](Args &a) {
              npucc_addc_f32(a.P<float>(0), a.P<float>(1), a.P<float>(2), a.I(3), a.f[4], a.f[5]);
            };
    t["npucc_addc_f32_rb"] = [](Args &a) {
      npucc_addc_f32_rb(a.P<float>(0), a.P<float>(1), a.P<float>(2), a.I(3), a.I(4), a.I(5), a.f[6],
                        a.f[7]);
    };
    t["npucc_addc_f32_lb"] = [](Args &a) {
      npucc_addc_f32_lb(a.P<float>(0), a.P<float>(1), a.P<float>(2), a.I(3), a.I(4), a.I(5), a.f[6],
                        a.f[7]);
    };
    t["npucc_addc_f32_nd"] = [](Args &a) {
      npucc_addc_f32_nd(a.P<float>(0), a.P<float>(1), a.P<float>(2), a.I(3), a.IA(4), a.IA(5),
                        a.IA(6), a.f[7], a.f[8]);
    };
    regUnary<float>(t, "npucc_relu_f32", npucc_relu_f32);
    regUnary<int8_t>(t, "npucc_relu_i8", npucc_relu_i8);
    regUnary<int16_t>(t, "npucc_relu_i16", npucc_relu_i16);
    regUnary<int32_t>(t, "npucc_relu_i32", npucc_relu_i32);
    regUnary<int64_t>(t, "npucc_relu_i64", npucc_relu_i64);
    regUnary<float>(t, "npucc_sigmoid_f32", npucc_sigmoid_f32);
    regUnary<float>(t, "npucc_hardswish_f32", npucc_hardswish_f32);
    regUnary<float>(t, "npucc_tanh_f32", npucc_tanh_f32);
    t["npucc_leakyrelu_f32"] = [](Args &a) {
      npucc_leakyrelu_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.f[3]);
    };
    t["npucc_clip_f32"] = [](Args &a) {
      npucc_clip_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.f[3], a.f[4]);
    };
    t["npucc_hardsigmoid_f32"] = [](Args &a) {
      npucc_hardsigmoid_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.f[3], a.f[4]);
    };
    regClip<int8_t>(t, "npucc_clip_i8", npucc_clip_i8);
    regClip<uint8_t>(t, "npucc_clip_u8", npucc_clip_u8);
    regClip<int16_t>(t, "npucc_clip_i16", npucc_clip_i16);
    regClip<uint16_t>(t, "npucc_clip_u16", npucc_clip_u16);
    regClip<int32_t>(t, "npucc_clip_i32", npucc_clip_i32);
    regClip<uint32_t>(t, "npucc_clip_u32", npucc_clip_u32);
    regClip<int64_t>(t, "npucc_clip_i64", npucc_clip_i64);
    regClip<uint64_t>(t, "npucc_clip_u64", npucc_clip_u64);
#define REG_CLIP_DYN(SUF, T)                                                                       \
  t["npucc_clip_" #SUF "_dyn"] = [](Args &a) {                                                     \
    npucc_clip_##SUF##_dyn(a.P<T>(0), a.P<T>(1), a.P<T>(2), a.P<T>(3), a.I(4), a.I(5), a.I(6));    \
  };
    REG_CLIP_DYN(f32, float)
    REG_CLIP_DYN(i8, int8_t) REG_CLIP_DYN(u8, uint8_t) REG_CLIP_DYN(i16, int16_t)
        REG_CLIP_DYN(u16, uint16_t) REG_CLIP_DYN(i32, int32_t) REG_CLIP_DYN(u32, uint32_t)
            REG_CLIP_DYN(i64, int64_t) REG_CLIP_DYN(u64, uint64_t)
                t["npucc_softmax_f32"] = [](Args &a) {
                  npucc_softmax_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.I(3), a.I(4));
                };
    t["npucc_reduce_mean_f32"] = [](Args &a) {
      npucc_reduce_mean_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.I(3), a.I(4));
    };
    t["npucc_reduce_mean_f32_nd"] = [](Args &a) {
      npucc_reduce_mean_f32_nd(a.P<float>(0), a.P<float>(1), a.I(2), a.I(3), a.IA(4), a.IA(5),
                               a.I(6));
    };
    t["npucc_fill"] = [](Args &a) { npucc_fill(a.p[0], a.I(1), a.I(2), a.IA(3)); };
    t["npucc_strided_copy"] = [](Args &a) {
      npucc_strided_copy(a.p[0], a.p[1], a.I(2), a.I(3), a.I(4), a.IA(5), a.IA(6));
    };
    t["npucc_transpose2d"] = [](Args &a) {
      npucc_transpose2d(a.p[0], a.p[1], a.I(2), a.I(3), a.I(4), a.I(5));
    };
    t["npucc_copy_rows"] = [](Args &a) {
      npucc_copy_rows(a.p[0], a.p[1], a.I(2), a.I(3), a.I(4), a.I(5), a.I(6), a.I(7));
    };
    t["npucc_remap"] = [](Args &a) {
      npucc_remap(a.p[0], a.p[1], a.I(2), a.I(3), a.IA(4), a.IA(5), a.IA(6), a.IA(7), a.IA(8));
    };
    t["npucc_gather_idx64"] = [](Args &a) {
      npucc_gather_idx64(a.p[0], a.P<int64_t>(1), a.p[2], a.I(3), a.I(4), a.I(5), a.I(6));
    };
    t["npucc_gather_idx32"] = [](Args &a) {
      npucc_gather_idx32(a.p[0], a.P<int32_t>(1), a.p[2], a.I(3), a.I(4), a.I(5), a.I(6));
    };
    t["npucc_resize_bilinear_f32"] = [](Args &a) {
      npucc_resize_bilinear_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.I(3), a.I(4), a.I(5),
                                a.I(6), a.IA(7), a.FA(8), a.IA(9), a.FA(10));
    };
    t["npucc_resize_linear_f32_nd"] = [](Args &a) {
      npucc_resize_linear_f32_nd(a.P<float>(0), a.P<float>(1), a.I(2), a.IA(3), a.IA(4), a.IA(5),
                                 a.FA(6));
    };
    t["npucc_ints_to_i64"] = [](Args &a) { npucc_ints_to_i64(a.P<int64_t>(0), a.I(1), a.IA(2)); };
#define REG_CAST_ONE(FS, FT, FC, TS, TT, TC)                                                       \
  t["npucc_cast_" #FS "_" #TS] = [](Args &a) {                                                     \
    npucc_cast_##FS##_##TS(a.P<FT>(0), a.P<TT>(1), a.I(2));                                        \
  };
#define REG_CAST_FROM(FS, FT, FC) NPUCC_CAST_TO_LIST(REG_CAST_ONE, FS, FT, FC)
    NPUCC_CAST_FROM_LIST(REG_CAST_FROM)
    return t;
  }();
  return t;
}

/// Lowers node `n` with its family lowering and runs the calls. `inputs`
/// holds data for the node's non-constant inputs, in input order.
Status runNode(const Node &n, const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs,
               bool inPlace = false, std::vector<lir::Instr> *instrsOut = nullptr) {
  TestCtx ctx;
  if (inPlace) {
    ctx.aliasIn = n.input(0);
    ctx.aliasOut = n.output(0);
  }
  size_t k = 0;
  std::vector<std::pair<BufferRef, const Tensor *>> writes;
  for (const Value *v : n.inputs)
    if (v && !v->isConstant()) {
      if (k >= inputs.size())
        return error("test: missing input data");
      writes.push_back({ctx.buffer(v), &inputs[k++]});
    }
  lower::FamilyLowering fam = lower::familyFor(n.kind);
  if (!fam)
    return error("no family");
  std::vector<lir::Instr> body;
  NPUCC_TRY(fam(n, ctx, body));
  for (const Value *v : n.outputs)
    ctx.buffer(v);
  for (auto &[b, t] : writes)
    if (t->byteSize() > 0)
      std::memcpy(ctx.mem.data() + b.offset, t->raw(), t->byteSize());
  for (const lir::Instr &in : body) {
    Args a;
    size_t na = in.args.size();
    a.p.assign(na, nullptr);
    a.i.assign(na, 0);
    a.f.assign(na, 0.0f);
    a.ia.resize(na);
    a.fa.resize(na);
    for (size_t j = 0; j < na; ++j) {
      const lir::Arg &arg = in.args[j];
      if (auto *b = std::get_if<BufferRef>(&arg))
        a.p[j] = b->size ? ctx.mem.data() + b->offset : nullptr;
      else if (auto *i = std::get_if<int64_t>(&arg))
        a.i[j] = *i;
      else if (auto *f = std::get_if<float>(&arg))
        a.f[j] = *f;
      else if (auto *ia = std::get_if<lir::IntArray>(&arg))
        a.ia[j].assign(ia->values.begin(), ia->values.end());
      else if (auto *fa = std::get_if<lir::FloatArray>(&arg))
        a.fa[j] = fa->values;
    }
    if (in.opcode == "memcpy") {
      const BufferRef &d = std::get<BufferRef>(in.args[0]);
      std::memmove(a.p[0], a.p[1], size_t(d.size));
      continue;
    }
    auto it = kernels().find(in.callee);
    if (it == kernels().end())
      return error("test: no kernel " + in.callee);
    it->second(a);
  }
  outputs.clear();
  for (const Value *v : n.outputs) {
    Tensor t(v->dtype, v->shape);
    BufferRef b = ctx.buffer(v);
    if (t.byteSize() > 0)
      std::memcpy(t.raw(), ctx.mem.data() + b.offset, t.byteSize());
    outputs.push_back(std::move(t));
  }
  if (instrsOut)
    *instrsOut = body;
  return success();
}

::testing::AssertionResult sameTensor(const Tensor &got, const Tensor &want, double tol = 1e-5) {
  if (got.dtype() != want.dtype() || got.numElements() != want.numElements())
    return ::testing::AssertionFailure() << "dtype or size differs";
  for (int64_t i = 0; i < got.numElements(); ++i) {
    bool ok = ir::isFloat(got.dtype()) ? near(got.getDouble(i), want.getDouble(i), tol)
                                       : got.getInt(i) == want.getInt(i);
    if (!ok)
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got.getDouble(i) << " want " << want.getDouble(i);
  }
  return ::testing::AssertionSuccess();
}

Tensor randTensor(const Shape &s, unsigned seed) {
  return Tensor::fromFloats(s, randf(size_t(ir::numElements(s)), seed));
}

/// Reference multidirectional broadcast of a binary f32 op.
Tensor refBroadcast(const Tensor &a, const Tensor &b, const Shape &so,
                    const std::function<float(float, float)> &op) {
  Tensor y(DType::F32, so);
  size_t r = so.size();
  auto index = [&](const Shape &s, int64_t flat) {
    Shape al(r - s.size(), 1);
    al.insert(al.end(), s.begin(), s.end());
    int64_t off = 0, rem = flat, mul = 1;
    std::vector<int64_t> idx(r);
    for (size_t k = r; k-- > 0;) {
      idx[k] = rem % so[k];
      rem /= so[k];
    }
    for (size_t k = r; k-- > 0;) {
      off += (al[k] == 1 ? 0 : idx[k]) * mul;
      mul *= al[k];
    }
    return off;
  };
  for (int64_t i = 0; i < y.numElements(); ++i)
    y.data<float>()[i] =
        op(a.data<float>()[index(a.shape(), i)], b.data<float>()[index(b.shape(), i)]);
  return y;
}

} // namespace

// ---- lowering ------------------------------------------------------------

TEST(ElemLowering, BroadcastPatternsAllOps) {
  struct Pat {
    Shape a, b, y;
    const char *suffix;
  } pats[] = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}, ""},
      {{2, 3, 4, 5}, {3, 1, 1}, {2, 3, 4, 5}, "_rb"},
      {{2, 3, 4, 5}, {5}, {2, 3, 4, 5}, "_rb"},
      {{2, 3, 4, 5}, {1}, {2, 3, 4, 5}, "_rb"},
      {{3, 1, 1}, {2, 3, 4, 5}, {2, 3, 4, 5}, "_lb"},
      {{2, 1, 4, 1}, {3, 1, 5}, {2, 3, 4, 5}, "_nd"},
      {{4, 1}, {1, 5}, {4, 5}, "_nd"},
      {{}, {2, 3}, {2, 3}, "_lb"},
  };
  struct Op {
    OpKind k;
    std::function<float(float, float)> ref;
  } ops[] = {{OpKind::Add, [](float a, float b) { return a + b; }},
             {OpKind::Sub, [](float a, float b) { return a - b; }},
             {OpKind::Mul, [](float a, float b) { return a * b; }},
             {OpKind::Div, [](float a, float b) { return a / b; }},
             {OpKind::Max, [](float a, float b) { return std::max(a, b); }},
             {OpKind::Min, [](float a, float b) { return std::min(a, b); }},
             {OpKind::PRelu, [](float a, float b) { return a < 0 ? a * b : a; }}};
  unsigned seed = 100;
  for (const Pat &p : pats)
    for (const Op &op : ops)
      for (bool inPlace : {false, true}) {
        if (op.k == OpKind::PRelu && p.a != p.y)
          continue; // PRelu broadcasts the slope only
        if (inPlace && p.a != p.y)
          continue;
        Graph g;
        Value *a = g.addValue("a", DType::F32, p.a), *b = g.addValue("b", DType::F32, p.b);
        Value *y = g.addValue("y", DType::F32, p.y);
        Node *n = g.addNode(op.k, "n0", {a, b}, {y});
        Tensor ta = randTensor(p.a, seed++), tb = randTensor(p.b, seed++);
        std::vector<Tensor> outs;
        std::vector<lir::Instr> body;
        Status s = runNode(*n, {ta, tb}, outs, inPlace, &body);
        ASSERT_TRUE(s) << s.error().str();
        ASSERT_EQ(body.size(), 1u);
        EXPECT_TRUE(body[0].callee.size() >= 3 &&
                    body[0].callee.compare(body[0].callee.size() - std::strlen(p.suffix),
                                           std::string::npos, p.suffix) == 0)
            << body[0].callee;
        EXPECT_TRUE(sameTensor(outs[0], refBroadcast(ta, tb, p.y, op.ref)))
            << opName(op.k) << " " << ir::shapeStr(p.a) << " , " << ir::shapeStr(p.b)
            << (inPlace ? " in place" : "");
      }
}

TEST(ElemLowering, VariadicMaxAndFusedClamp) {
  for (Shape s2 : {Shape{1, 4}, Shape{4}}) {
    Graph g;
    Value *a = g.addValue("a", DType::F32, {1}), *b = g.addValue("b", DType::F32, s2);
    Value *c = g.addValue("c", DType::F32, {3, 4}), *y = g.addValue("y", DType::F32, {3, 4});
    Node *n = g.addNode(OpKind::Max, "max3", {a, b, c}, {y});
    Tensor ta = randTensor({1}, 1), tb = randTensor(s2, 2), tc = randTensor({3, 4}, 3);
    std::vector<Tensor> outs;
    ASSERT_TRUE(runNode(*n, {ta, tb, tc}, outs));
    auto mx = [](float p, float q) { return std::max(p, q); };
    Tensor ab = refBroadcast(ta, tb, s2, mx);
    EXPECT_TRUE(sameTensor(outs[0], refBroadcast(ab, tc, {3, 4}, mx)));
  }
  Graph g;
  Value *a = g.addValue("a", DType::F32, {2, 8}), *b = g.addValue("b", DType::F32, {8});
  Value *y = g.addValue("y", DType::F32, {2, 8});
  Node *n = g.addNode(OpKind::Add, "add_relu6", {a, b}, {y});
  n->attrs["act_min"] = 0.0f;
  n->attrs["act_max"] = 6.0f;
  Tensor ta = Tensor::fromFloats({2, 8}, randf(16, 4, -8, 8)), tb = randTensor({8}, 5);
  std::vector<Tensor> outs;
  ASSERT_TRUE(runNode(*n, {ta, tb}, outs, true));
  EXPECT_TRUE(sameTensor(outs[0], refBroadcast(ta, tb, {2, 8}, [](float p, float q) {
                           return std::min(6.0f, std::max(0.0f, p + q));
                         })));
}

TEST(ElemLowering, ClipConstantAndRuntimeBounds) {
  Graph g;
  Value *x = g.addValue("x", DType::F32, {10});
  Value *lo = g.addConstant("lo", Tensor::fromFloats({}, {-0.5f}));
  Value *y = g.addValue("y", DType::F32, {10});
  Node *n = g.addNode(OpKind::Clip, "clip0", {x, lo, nullptr}, {y});
  Tensor tx = randTensor({10}, 6);
  std::vector<Tensor> outs;
  ASSERT_TRUE(runNode(*n, {tx}, outs, true));
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(outs[0].data<float>()[i], std::max(-0.5f, tx.data<float>()[i]));
  // A runtime max (second runtime input of the node).
  Value *hi = g.addValue("hi", DType::F32, {});
  Value *y2 = g.addValue("y2", DType::F32, {10});
  Node *n2 = g.addNode(OpKind::Clip, "clip_dyn", {x, nullptr, hi}, {y2});
  std::vector<lir::Instr> body;
  ASSERT_TRUE(runNode(*n2, {tx, Tensor::fromFloats({}, {0.25f})}, outs, false, &body));
  EXPECT_EQ(body[0].callee, "npucc_clip_f32_dyn");
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(outs[0].data<float>()[i], std::min(0.25f, tx.data<float>()[i]));
  // A bound of another type is a node-named error.
  Value *bad = g.addValue("bad", DType::I64, {});
  Value *y3 = g.addValue("y3", DType::F32, {10});
  Node *n3 = g.addNode(OpKind::Clip, "clip_bad", {x, bad}, {y3});
  TestCtx ctx;
  Status s = lower::lowerActivationFamily(*n3, ctx, body);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().node, "clip_bad");
}

TEST(ElemLowering, TransposeAllPermutations) {
  Shape s = {2, 3, 4, 5};
  std::vector<int64_t> perm = {0, 1, 2, 3};
  Tensor tx = randTensor(s, 7);
  do {
    Graph g;
    Shape so;
    for (int64_t p : perm)
      so.push_back(s[size_t(p)]);
    Value *x = g.addValue("x", DType::F32, s), *y = g.addValue("y", DType::F32, so);
    Node *n = g.addNode(OpKind::Transpose, "tr", {x}, {y});
    n->attrs["perm"] = perm;
    std::vector<Tensor> outs;
    std::vector<lir::Instr> body;
    ASSERT_TRUE(runNode(*n, {tx}, outs, false, &body));
    if (perm == std::vector<int64_t>{0, 2, 3, 1}) {
      EXPECT_EQ(body[0].callee, "npucc_transpose2d"); // NCHW -> NHWC
    }
    for (int64_t i = 0; i < outs[0].numElements(); ++i) {
      int64_t rem = i, src = 0;
      int64_t o[4];
      for (int k = 3; k >= 0; --k) {
        o[k] = rem % so[size_t(k)];
        rem /= so[size_t(k)];
      }
      int64_t xi[4];
      for (int k = 0; k < 4; ++k)
        xi[perm[size_t(k)]] = o[k];
      src = ((xi[0] * 3 + xi[1]) * 4 + xi[2]) * 5 + xi[3];
      ASSERT_EQ(outs[0].data<float>()[i], tx.data<float>()[src]);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
}

/// numpy.pad reference: bounce / wrap / clamp step by step.
int64_t refPadIndex(int64_t i, int64_t n, const std::string &mode) {
  if (i >= 0 && i < n)
    return i;
  if (mode == "constant")
    return -1;
  if (mode == "edge")
    return i < 0 ? 0 : n - 1;
  if (mode == "wrap") {
    while (i < 0)
      i += n;
    return i % n;
  }
  if (n == 1)
    return 0;
  while (i < 0 || i >= n)
    i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

TEST(ElemLowering, PadAllModes) {
  Shape s = {2, 3, 4};
  std::vector<int64_t> pads = {0, 2, 5, 1, 3, -1}; // begins, ends (a negative end crops)
  Tensor tx = randTensor(s, 8);
  for (std::string mode : {"constant", "edge", "reflect", "wrap"}) {
    Graph g;
    Shape so = {2 + 0 + 1, 3 + 2 + 3, 4 + 5 - 1};
    Value *x = g.addValue("x", DType::F32, s), *y = g.addValue("y", DType::F32, so);
    Value *p = g.addConstant("pads", Tensor::fromInts(DType::I64, {6}, pads));
    Value *cv = g.addConstant("cv", Tensor::fromFloats({}, {1.5f}));
    Node *n = g.addNode(OpKind::Pad, "pad", {x, p, cv}, {y});
    n->attrs["mode"] = mode;
    std::vector<Tensor> outs;
    Status st = runNode(*n, {tx}, outs);
    ASSERT_TRUE(st) << st.error().str();
    for (int64_t a = 0; a < so[0]; ++a)
      for (int64_t b = 0; b < so[1]; ++b)
        for (int64_t c = 0; c < so[2]; ++c) {
          int64_t i = refPadIndex(a - 0, 2, mode), j = refPadIndex(b - 2, 3, mode),
                  k = refPadIndex(c - 5, 4, mode);
          float want = (i < 0 || j < 0 || k < 0) ? 1.5f : tx.data<float>()[(i * 3 + j) * 4 + k];
          ASSERT_EQ(outs[0].data<float>()[(a * so[1] + b) * so[2] + c], want)
              << mode << " at " << a << "," << b << "," << c;
        }
  }
}

TEST(ElemLowering, ReduceMeanPatterns) {
  Shape s = {2, 3, 4, 5};
  Tensor tx = randTensor(s, 9);
  for (std::vector<int64_t> axes : {std::vector<int64_t>{1, 3}, {2, 3}, {-1}, {0}, {}, {0, 2, 3}}) {
    for (int64_t keep : {0, 1}) {
      Shape so;
      std::vector<bool> red(4, axes.empty());
      for (int64_t a : axes)
        red[size_t(a < 0 ? a + 4 : a)] = true;
      for (size_t k = 0; k < 4; ++k) {
        if (!red[k])
          so.push_back(s[k]);
        else if (keep)
          so.push_back(1);
      }
      Graph g;
      Value *x = g.addValue("x", DType::F32, s), *y = g.addValue("y", DType::F32, so);
      Node *n = g.addNode(OpKind::ReduceMean, "rm", {x}, {y});
      if (!axes.empty())
        n->attrs["axes"] = axes;
      n->attrs["keepdims"] = keep;
      std::vector<Tensor> outs;
      ASSERT_TRUE(runNode(*n, {tx}, outs));
      std::vector<double> sum(size_t(outs[0].numElements()), 0.0);
      int64_t cnt = tx.numElements() / outs[0].numElements();
      for (int64_t i = 0; i < tx.numElements(); ++i) {
        int64_t rem = i, o = 0;
        int64_t idx[4];
        for (int k = 3; k >= 0; --k) {
          idx[k] = rem % s[size_t(k)];
          rem /= s[size_t(k)];
        }
        for (int k = 0; k < 4; ++k)
          if (!red[size_t(k)])
            o = o * s[size_t(k)] + idx[k];
        sum[size_t(o)] += tx.data<float>()[i];
      }
      for (size_t o = 0; o < sum.size(); ++o)
        ASSERT_TRUE(near(outs[0].data<float>()[o], sum[o] / double(cnt), 1e-4));
    }
  }
}

// ---- ONNX backend node tests ---------------------------------------------

const char *NodeDir = "/usr/share/libonnx-testdata/data/node/";

ir::Attribute convertAttr(const ::onnx::AttributeProto &a) {
  switch (a.type()) {
  case ::onnx::AttributeProto::INT:
    return int64_t(a.i());
  case ::onnx::AttributeProto::FLOAT:
    return a.f();
  case ::onnx::AttributeProto::STRING:
    return a.s();
  case ::onnx::AttributeProto::INTS:
    return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  case ::onnx::AttributeProto::FLOATS:
    return std::vector<float>(a.floats().begin(), a.floats().end());
  default:
    return std::string("<unsupported>");
  }
}

/// Builds the one-node graph of a node test; every input but the first is a
/// constant. Returns false (with a reason) when the case does not apply.
bool runOnnxCase(const std::string &name, std::string &why) {
  std::string dir = std::string(NodeDir) + name;
  ::onnx::ModelProto m;
  std::ifstream f(dir + "/model.onnx", std::ios::binary);
  if (!f || !m.ParseFromIstream(&f) || m.graph().node_size() < 1) {
    why = "cannot read the model";
    return false;
  }
  const ::onnx::NodeProto &np = m.graph().node(m.graph().node_size() - 1);
  auto kind = ir::opFromName(np.op_type(), np.domain());
  if (!kind) {
    why = "unknown op";
    return false;
  }
  Graph g;
  std::map<std::string, Value *> vals;
  std::vector<Tensor> runtime;
  for (int i = 0; i < m.graph().input_size(); ++i) {
    auto t =
        npucc::onnx::readTensorProto(dir + "/test_data_set_0/input_" + std::to_string(i) + ".pb");
    if (!t) {
      why = "input: " + t.error().str();
      return false;
    }
    const std::string &vn = m.graph().input(i).name();
    if (i == 0) {
      vals[vn] = g.addValue(vn, t->dtype(), t->shape());
      runtime.push_back(*t);
    } else {
      vals[vn] = g.addConstant(vn, *t);
    }
  }
  for (int i = 0; i + 1 < m.graph().node_size(); ++i) { // leading Constant nodes
    const ::onnx::NodeProto &c = m.graph().node(i);
    if (c.op_type() != "Constant" || c.attribute_size() != 1 || !c.attribute(0).has_t()) {
      why = "not a one-node model";
      return false;
    }
    std::string tmp = ::testing::TempDir() + "/kelem_const.pb";
    std::ofstream(tmp, std::ios::binary) << c.attribute(0).t().SerializeAsString();
    auto t = npucc::onnx::readTensorProto(tmp);
    if (!t) {
      why = "constant: " + t.error().str();
      return false;
    }
    vals[c.output(0)] = g.addConstant(c.output(0), *t);
  }
  std::vector<Value *> ins, outs;
  for (const std::string &in : np.input())
    ins.push_back(in.empty() ? nullptr : vals.at(in));
  std::vector<Tensor> expected;
  for (int i = 0; i < np.output_size(); ++i) {
    auto t =
        npucc::onnx::readTensorProto(dir + "/test_data_set_0/output_" + std::to_string(i) + ".pb");
    if (!t) {
      why = "output: " + t.error().str();
      return false;
    }
    outs.push_back(g.addValue(np.output(i), t->dtype(), t->shape()));
    expected.push_back(*t);
  }
  Node *n = g.addNode(*kind, name, ins, outs);
  for (const auto &a : np.attribute())
    n->attrs[a.name()] = convertAttr(a);
  std::vector<Tensor> got;
  Status s = runNode(*n, runtime, got);
  if (!s) {
    why = s.error().str();
    return false;
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    auto r = sameTensor(got[i], expected[i], 1e-4);
    EXPECT_TRUE(r) << name << " output " << i;
  }
  return true;
}

TEST(ElemLowering, OnnxNodeTests) {
  if (!std::filesystem::exists(NodeDir))
    GTEST_SKIP() << "no ONNX node test data";
  // Cases that are expected to be rejected by the lowering (with a diagnostic).
  const std::set<std::string> unsupported = {"test_resize_tf_crop_and_resize",
                                             "test_reduce_mean_empty_set",
                                             "test_softmax_example_expanded"};
  const char *prefixes[] = {
      "test_add",          "test_sub",         "test_mul",         "test_div",       "test_max_",
      "test_min_",         "test_prelu",       "test_relu",        "test_leakyrelu", "test_clip",
      "test_sigmoid",      "test_hardsigmoid", "test_hardswish",   "test_tanh",      "test_softmax",
      "test_reduce_mean",  "test_transpose",   "test_concat",      "test_slice",     "test_split",
      "test_constant_pad", "test_edge_pad",    "test_reflect_pad", "test_gather_",   "test_resize",
      "test_cast_",        "test_shape"};
  std::set<std::string> ran;
  std::vector<std::string> rejected;
  for (const auto &e : std::filesystem::directory_iterator(NodeDir)) {
    std::string name = e.path().filename().string();
    bool match = false;
    for (const char *p : prefixes)
      match = match || name.rfind(p, 0) == 0;
    if (!match || name.find("expanded") != std::string::npos ||
        name.find("cubic") != std::string::npos || name.find("FLOAT16") != std::string::npos ||
        name.find("float16") != std::string::npos || name.find("elements") != std::string::npos ||
        name.find("STRING") != std::string::npos || name.find("FLOAT8") != std::string::npos ||
        name.find("INT4") != std::string::npos || name.find("BFLOAT") != std::string::npos)
      continue;
    std::string why;
    if (runOnnxCase(name, why))
      ran.insert(name);
    else if (!unsupported.count(name))
      rejected.push_back(name + ": " + why);
  }
  EXPECT_GT(ran.size(), 140u);
  for (const char *must :
       {"test_slice_neg_steps", "test_slice_end_out_of_bounds", "test_edge_pad", "test_reflect_pad",
        "test_constant_pad", "test_split_variable_parts_2d",
        "test_resize_upsample_sizes_nearest_ceil_half_pixel",
        "test_resize_downsample_scales_linear_align_corners",
        "test_resize_downsample_sizes_linear_pytorch_half_pixel", "test_gather_negative_indices",
        "test_cast_FLOAT_to_DOUBLE", "test_max_uint64", "test_add_uint8", "test_prelu_broadcast"})
    EXPECT_TRUE(ran.count(must)) << must << " did not run";
  for (const std::string &r : rejected)
    ADD_FAILURE() << r;
}

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
