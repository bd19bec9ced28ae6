//===- kernels_conv_test.cpp - float32 Conv/GEMM/Pool/Norm kernels vs naive loops ---===//
//
// Compiles the C kernels into this test (as C++ in an extern "C" block) and
// compares each one against a naive double-precision loop written here, over
// many shapes: odd sizes, groups, depthwise, dilation, padding, strides, 1x1,
// tiny and large K, M/N not multiples of the tile, several K/N blocks.
// Scratch buffers are sized exactly from the kernels' size functions and
// followed by a canary, so an overrun fails the test (and trips ASan).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "npucc/ir/Graph.h"
#include "npucc/lower/CpuLowering.h"

#include "ConvReference.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include "../../runtime/kernels/npucc_conv.h"
#include "../../runtime/kernels/npucc_dwconv.h"
#include "../../runtime/kernels/npucc_gemm.h"
#include "../../runtime/kernels/npucc_norm.h"
#include "../../runtime/kernels/npucc_pool.h"
}

namespace {

using npucc::test::ConvCase;
using npucc::test::convName;
using npucc::test::convOut;
using npucc::test::randomVec;

/// Fails unless max|got - ref| <= tol * max(1, max|ref|).
void expectClose(const std::vector<float> &got, const std::vector<double> &ref, double tol,
                 const std::string &what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double maxRef = 1.0, maxErr = 0.0;
  size_t worst = 0;
  for (size_t i = 0; i < ref.size(); i++) {
    maxRef = std::max(maxRef, std::fabs(ref[i]));
    double e = std::fabs(double(got[i]) - ref[i]);
    if (!(e <= maxErr)) { // also catches NaN
      maxErr = e;
      worst = i;
    }
  }
  EXPECT_LE(maxErr, tol * maxRef) << what << ": worst index " << worst << " got " << got[worst]
                                  << " want " << ref[worst];
}

/// A scratch buffer of exactly `floats` floats plus a canary tail.
struct Scratch {
  static constexpr size_t Canary = 16;
  std::vector<float> buf;
  explicit Scratch(size_t floats) : buf(floats + Canary, 12345.0f) {}
  float *data() { return buf.data(); }
  bool intact() const {
    for (size_t i = buf.size() - Canary; i < buf.size(); i++)
      if (buf[i] != 12345.0f)
        return false;
    return true;
  }
};

double clampD(double v, double lo, double hi) { return std::min(std::max(v, lo), hi); }

constexpr float NoMin = -FLT_MAX, NoMax = FLT_MAX;

// ----------------------------------------------------------------------------
// SGEMM core, Gemm, MatMul
// ----------------------------------------------------------------------------

struct CoreCase {
  int M, N, K;
};

TEST(KernelsGemm, CoreMatchesNaiveOverShapes) {
  std::mt19937 rng(1);
  const CoreCase cases[] = {{1, 1, 1},    {1, 17, 5},   {7, 1, 3},     {8, 8, 8},    {9, 9, 9},
                            {13, 31, 1},  {63, 65, 64}, {64, 64, 257}, {65, 300, 7}, {130, 20, 513},
                            {5, 600, 40}, {3, 2, 1000}, {5, 1, 77},    {1, 40, 300}};
  for (const CoreCase &c : cases) {
    for (int variant = 0; variant < 4; variant++) {
      bool transA = variant & 1, accumulate = variant & 2;
      auto A = randomVec(size_t(c.M) * c.K, rng), B = randomVec(size_t(c.K) * c.N, rng);
      auto bias = randomVec(c.M, rng);
      int ldc = c.N + 3; // C rows with padding that must not be touched
      auto Cv = randomVec(size_t(c.M) * ldc, rng);
      std::vector<float> C0 = Cv;
      float alpha = 0.75f, lo = -2.0f, hi = 2.5f;
      std::vector<double> ref(Cv.size());
      for (int i = 0; i < c.M; i++)
        for (int j = 0; j < ldc; j++) {
          if (j >= c.N) {
            ref[size_t(i) * ldc + j] = C0[size_t(i) * ldc + j];
            continue;
          }
          double s = 0;
          for (int k = 0; k < c.K; k++) {
            double a = transA ? A[size_t(k) * c.M + i] : A[size_t(i) * c.K + k];
            s += a * B[size_t(k) * c.N + j];
          }
          double v = alpha * s + bias[i] + (accumulate ? C0[size_t(i) * ldc + j] : 0.0);
          ref[size_t(i) * ldc + j] = clampD(v, lo, hi);
        }
      npucc_gemm_bsrc bs;
      memset(&bs, 0, sizeof(bs));
      bs.data = B.data();
      bs.rs = c.N;
      bs.cs = 1;
      Scratch s(npucc_sgemm_scratch_floats(c.M, c.N, c.K));
      npucc_sgemm_core_f32(c.M, c.N, c.K, alpha, A.data(), transA ? 1 : c.K, transA ? c.M : 1, &bs,
                           Cv.data(), ldc, accumulate, bias.data(), lo, hi, s.data());
      std::string what = "core M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) +
                         " K=" + std::to_string(c.K) + " variant " + std::to_string(variant);
      expectClose(Cv, ref, 1e-5, what);
      EXPECT_TRUE(s.intact()) << what;
    }
  }
}

TEST(KernelsGemm, GemmTransposesAndCBroadcasts) {
  std::mt19937 rng(2);
  const CoreCase cases[] = {{1, 10, 20}, {3, 5, 7}, {17, 33, 65}, {70, 9, 300}};
  for (const CoreCase &c : cases)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++)
        for (int cmode = 0; cmode <= 4; cmode++) {
          int M = c.M, N = c.N, K = c.K;
          auto A = randomVec(size_t(M) * K, rng), B = randomVec(size_t(K) * N, rng);
          size_t cn = cmode == 0 ? 0 : cmode == 1 ? 1 : cmode == 2 ? N : cmode == 3 ? M : M * N;
          auto C = randomVec(cn, rng);
          float alpha = 1.5f, beta = cmode == 4 ? 0.5f : 1.0f;
          bool fuse = cmode == 2;
          float lo = fuse ? 0.0f : NoMin, hi = fuse ? 6.0f : NoMax;
          std::vector<double> ref(size_t(M) * N);
          for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
              double s = 0;
              for (int k = 0; k < K; k++) {
                double a = ta ? A[size_t(k) * M + i] : A[size_t(i) * K + k];
                double b = tb ? B[size_t(j) * K + k] : B[size_t(k) * N + j];
                s += a * b;
              }
              double cv = cmode == 0   ? 0.0
                          : cmode == 1 ? C[0]
                          : cmode == 2 ? C[j]
                          : cmode == 3 ? C[i]
                                       : C[size_t(i) * N + j];
              ref[size_t(i) * N + j] = clampD(alpha * s + beta * cv, lo, hi);
            }
          std::vector<float> Y(size_t(M) * N, -777.0f);
          Scratch s(npucc_sgemm_scratch_floats(M, N, K));
          npucc_gemm_f32(A.data(), B.data(), cmode ? C.data() : nullptr, Y.data(), s.data(), M, N,
                         K, ta, tb, alpha, beta, cmode, lo, hi);
          std::string what = "gemm " + std::to_string(M) + "x" + std::to_string(N) + "x" +
                             std::to_string(K) + " ta=" + std::to_string(ta) +
                             " tb=" + std::to_string(tb) + " c=" + std::to_string(cmode);
          expectClose(Y, ref, 1e-5, what);
          EXPECT_TRUE(s.intact()) << what;
        }
}

TEST(KernelsGemm, BatchedMatMulWithBroadcastOffsets) {
  std::mt19937 rng(3);
  // A: [2,1,M,K] broadcast against B: [1,3,K,N] -> Y [2,3,M,N].
  const int M = 11, N = 19, K = 23;
  auto A = randomVec(2 * size_t(M) * K, rng), B = randomVec(3 * size_t(K) * N, rng);
  std::vector<int32_t> aOff, bOff;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      aOff.push_back(i * M * K);
      bOff.push_back(j * K * N);
    }
  std::vector<double> ref(6 * size_t(M) * N);
  for (int b = 0; b < 6; b++)
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double s = 0;
        for (int k = 0; k < K; k++)
          s += double(A[aOff[b] + size_t(i) * K + k]) * B[bOff[b] + size_t(k) * N + j];
        ref[(size_t(b) * M + i) * N + j] = clampD(s, -1.0, 1.0);
      }
  std::vector<float> Y(ref.size());
  Scratch s(npucc_sgemm_scratch_floats(M, N, K));
  npucc_matmul_f32(A.data(), B.data(), Y.data(), s.data(), 6, M, N, K, -1.0f, 1.0f, aOff.data(),
                   bOff.data());
  expectClose(Y, ref, 1e-5, "batched matmul");
  EXPECT_TRUE(s.intact());
}

// ----------------------------------------------------------------------------
// Convolutions
// ----------------------------------------------------------------------------

/// The reference, with the case's bias vector (if the case has one).
std::vector<double> naiveConv(const ConvCase &c, int OH, int OW, const std::vector<float> &X,
                              const std::vector<float> &Wt, const std::vector<float> &B, float lo,
                              float hi) {
  return npucc::test::naiveConv(c, OH, OW, X, Wt, c.bias ? B.data() : nullptr, lo, hi);
}

const ConvCase ConvCases[] = {
    // N C  H  W  M  KH KW SH SW DH DW PT PL PB PR G bias clamp
    {1, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false},
    {2, 4, 7, 7, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, true},     // pointwise
    {1, 16, 5, 6, 33, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, false, false}, // pointwise, odd M
    {1, 3, 13, 13, 7, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 1, true, false},  // stride 2, asym pads
    {1, 4, 10, 12, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, false, true},  // dilation
    {1, 6, 8, 8, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, true, false},    // groups
    {1, 8, 9, 9, 4, 2, 3, 2, 1, 1, 2, 0, 1, 1, 0, 2, true, true},     // mixed
    {1, 1, 1, 40, 3, 1, 5, 1, 2, 1, 1, 0, 2, 0, 2, 1, true, false},   // 1-D as H=1
    {1, 40, 6, 6, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, true},   // K=360 > KC
    {1, 2, 30, 30, 16, 5, 5, 3, 3, 1, 1, 2, 2, 2, 2, 1, true, false}, // big kernel
    {1, 3, 4, 4, 2, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1, false, false},   // kernel > image
    {1, 5, 23, 23, 12, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, true, false}, // 1x1 strided
    {1, 2, 1, 1, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, false},    // 1x1 image
    {2, 12, 17, 19, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, true, true},
    {1, 32, 24, 24, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false}, // N > NC
};

TEST(KernelsConv, GemmConvMatchesNaive) {
  std::mt19937 rng(4);
  for (const ConvCase &c : ConvCases) {
    int OH = convOut(c.H, c.KH, c.SH, c.DH, c.PT, c.PB),
        OW = convOut(c.W, c.KW, c.SW, c.DW, c.PL, c.PR);
    auto X = randomVec(size_t(c.N) * c.C * c.H * c.W, rng);
    auto Wt = randomVec(size_t(c.M) * (c.C / c.G) * c.KH * c.KW, rng);
    auto B = randomVec(c.M, rng);
    float lo = c.clamp ? -0.5f : NoMin, hi = c.clamp ? 0.8f : NoMax;
    auto ref = naiveConv(c, OH, OW, X, Wt, B, lo, hi);
    std::vector<float> Y(ref.size(), -999.0f);
    Scratch s(npucc_conv2d_scratch_floats(c.C, c.M, OH, OW, c.KH, c.KW, c.G));
    npucc_conv2d_f32(X.data(), Wt.data(), c.bias ? B.data() : nullptr, Y.data(), s.data(), c.N, c.C,
                     c.H, c.W, c.M, OH, OW, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW, c.PT, c.PL, c.G, lo,
                     hi);
    expectClose(Y, ref, 1e-5, convName(c));
    EXPECT_TRUE(s.intact()) << convName(c);
  }
}

TEST(KernelsConv, RandomGemmConvShapes) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> small(1, 4), dim(1, 14), ch(1, 5);
  for (int iter = 0; iter < 150; iter++) {
    ConvCase c;
    c.N = 1 + (iter % 5 == 0);
    c.G = small(rng);
    c.C = c.G * ch(rng);
    c.M = c.G * ch(rng);
    c.H = dim(rng);
    c.W = dim(rng);
    c.KH = small(rng);
    c.KW = small(rng);
    c.SH = small(rng) % 3 + 1;
    c.SW = small(rng) % 3 + 1;
    c.DH = small(rng) % 2 + 1;
    c.DW = small(rng) % 2 + 1;
    c.PT = small(rng) - 1;
    c.PL = small(rng) - 1;
    c.PB = small(rng) - 1;
    c.PR = small(rng) - 1;
    c.bias = iter % 2;
    c.clamp = iter % 3 == 0;
    int OH = convOut(c.H, c.KH, c.SH, c.DH, c.PT, c.PB),
        OW = convOut(c.W, c.KW, c.SW, c.DW, c.PL, c.PR);
    if (c.H + c.PT + c.PB < (c.KH - 1) * c.DH + 1 || c.W + c.PL + c.PR < (c.KW - 1) * c.DW + 1)
      continue;
    auto X = randomVec(size_t(c.N) * c.C * c.H * c.W, rng);
    auto Wt = randomVec(size_t(c.M) * (c.C / c.G) * c.KH * c.KW, rng);
    auto B = randomVec(c.M, rng);
    float lo = c.clamp ? 0.0f : NoMin, hi = c.clamp ? 1.0f : NoMax;
    auto ref = naiveConv(c, OH, OW, X, Wt, B, lo, hi);
    std::vector<float> Y(ref.size(), -999.0f);
    Scratch s(npucc_conv2d_scratch_floats(c.C, c.M, OH, OW, c.KH, c.KW, c.G));
    npucc_conv2d_f32(X.data(), Wt.data(), c.bias ? B.data() : nullptr, Y.data(), s.data(), c.N, c.C,
                     c.H, c.W, c.M, OH, OW, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW, c.PT, c.PL, c.G, lo,
                     hi);
    expectClose(Y, ref, 1e-5, convName(c));
    ASSERT_TRUE(s.intact()) << convName(c);
    if (c.C / c.G == 1) { // the direct depthwise kernel must agree too
      std::vector<float> Y2(ref.size(), -999.0f);
      Scratch s2(npucc_depthwise_conv2d_scratch_floats(OH, OW, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW));
      npucc_depthwise_conv2d_f32(X.data(), Wt.data(), c.bias ? B.data() : nullptr, Y2.data(),
                                 s2.data(), c.N, c.C, c.H, c.W, c.M, OH, OW, c.KH, c.KW, c.SH, c.SW,
                                 c.DH, c.DW, c.PT, c.PL, lo, hi);
      expectClose(Y2, ref, 1e-5, "depthwise " + convName(c));
      ASSERT_TRUE(s2.intact()) << "depthwise " << convName(c);
    }
  }
}

TEST(KernelsConv, DepthwiseMatchesNaive) {
  std::mt19937 rng(6);
  const ConvCase cases[] = {
      {1, 8, 14, 14, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, true, true},
      {1, 5, 15, 17, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 5, true, false},
      {2, 3, 11, 29, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, false, false}, // multiplier 2
      {1, 4, 12, 12, 4, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4, 4, true, false},  // dilated
      {1, 4, 9, 33, 4, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 4, true, true},
      {1, 2, 1, 50, 2, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 2, true, false}, // 1-D
      {1, 3, 6, 6, 3, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0, 3, false, false},
      {1, 1, 10, 10, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false}, // C=1, group 1
  };
  for (const ConvCase &c : cases) {
    int OH = convOut(c.H, c.KH, c.SH, c.DH, c.PT, c.PB),
        OW = convOut(c.W, c.KW, c.SW, c.DW, c.PL, c.PR);
    auto X = randomVec(size_t(c.N) * c.C * c.H * c.W, rng);
    auto Wt = randomVec(size_t(c.M) * c.KH * c.KW, rng);
    auto B = randomVec(c.M, rng);
    float lo = c.clamp ? 0.0f : NoMin, hi = c.clamp ? 6.0f : NoMax;
    auto ref = naiveConv(c, OH, OW, X, Wt, B, lo, hi);
    std::vector<float> Y(ref.size(), -999.0f);
    Scratch s(npucc_depthwise_conv2d_scratch_floats(OH, OW, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW));
    npucc_depthwise_conv2d_f32(X.data(), Wt.data(), c.bias ? B.data() : nullptr, Y.data(), s.data(),
                               c.N, c.C, c.H, c.W, c.M, OH, OW, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW,
                               c.PT, c.PL, lo, hi);
    expectClose(Y, ref, 1e-5, "depthwise " + convName(c));
    ASSERT_TRUE(s.intact()) << "depthwise " << convName(c);
  }
}

struct ConvTCase {
  int N, C, H, W, M, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR, OPH, OPW, G;
  bool bias;
};

std::vector<double> naiveConvT(const ConvTCase &c, int OH, int OW, const std::vector<float> &X,
                               const std::vector<float> &Wt, const std::vector<float> &B) {
  int cg = c.C / c.G, mg = c.M / c.G;
  std::vector<double> ref(size_t(c.N) * c.M * OH * OW, 0.0);
  for (int n = 0; n < c.N; n++)
    for (int m = 0; m < c.M; m++)
      for (int i = 0; i < OH * OW; i++)
        ref[(size_t(n) * c.M + m) * OH * OW + i] = c.bias ? B[m] : 0.0;
  for (int n = 0; n < c.N; n++)
    for (int ch = 0; ch < c.C; ch++) {
      int g = ch / cg;
      for (int iy = 0; iy < c.H; iy++)
        for (int ix = 0; ix < c.W; ix++)
          for (int mi = 0; mi < mg; mi++)
            for (int ky = 0; ky < c.KH; ky++)
              for (int kx = 0; kx < c.KW; kx++) {
                int oy = iy * c.SH - c.PT + ky * c.DH, ox = ix * c.SW - c.PL + kx * c.DW;
                if (oy < 0 || oy >= OH || ox < 0 || ox >= OW)
                  continue;
                int m = g * mg + mi;
                ref[((size_t(n) * c.M + m) * OH + oy) * OW + ox] +=
                    double(X[((size_t(n) * c.C + ch) * c.H + iy) * c.W + ix]) *
                    Wt[((size_t(ch) * mg + mi) * c.KH + ky) * c.KW + kx];
              }
    }
  return ref;
}

TEST(KernelsConv, ConvTransposeMatchesNaive) {
  std::mt19937 rng(7);
  const ConvTCase cases[] = {
      {1, 3, 4, 5, 2, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, true},
      {1, 4, 5, 5, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, true},
      {2, 6, 3, 7, 4, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 2, false},
      {1, 2, 6, 6, 3, 3, 2, 1, 3, 2, 1, 2, 0, 1, 0, 0, 2, 1, true},
      {1, 8, 17, 17, 8, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 8, true}, // depthwise-like
      {1, 5, 1, 30, 3, 1, 4, 1, 2, 1, 1, 0, 1, 0, 1, 0, 0, 1, true},  // 1-D, HW > chunk? no
      {1, 3, 20, 20, 2, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 1, true}, // HW 400 > 256 chunk
  };
  for (const ConvTCase &c : cases) {
    int OH = c.SH * (c.H - 1) + c.OPH + (c.KH - 1) * c.DH + 1 - c.PT - c.PB;
    int OW = c.SW * (c.W - 1) + c.OPW + (c.KW - 1) * c.DW + 1 - c.PL - c.PR;
    int mg = c.M / c.G;
    auto X = randomVec(size_t(c.N) * c.C * c.H * c.W, rng);
    auto Wt = randomVec(size_t(c.C) * mg * c.KH * c.KW, rng);
    auto B = randomVec(c.M, rng);
    auto ref = naiveConvT(c, OH, OW, X, Wt, B);
    std::vector<float> Y(ref.size(), -999.0f);
    Scratch s(npucc_conv_transpose2d_scratch_floats(c.C, c.H, c.W, c.M, c.KH, c.KW, c.G));
    npucc_conv_transpose2d_f32(X.data(), Wt.data(), c.bias ? B.data() : nullptr, Y.data(), s.data(),
                               c.N, c.C, c.H, c.W, c.M, OH, OW, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW,
                               c.PT, c.PL, c.G, NoMin, NoMax);
    std::string what = "convT C" + std::to_string(c.C) + " M" + std::to_string(c.M) + " " +
                       std::to_string(OH) + "x" + std::to_string(OW);
    expectClose(Y, ref, 1e-5, what);
    EXPECT_TRUE(s.intact()) << what;
  }
}

// ----------------------------------------------------------------------------
// Pooling and BatchNormalization
// ----------------------------------------------------------------------------

struct PoolCase {
  int NC, H, W, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR;
  bool ceil;
};

int poolOut(int in, int k, int s, int d, int p0, int p1, bool ceilMode) {
  int span = in + p0 + p1 - ((k - 1) * d + 1);
  int o = (ceilMode ? (span + s - 1) / s : span / s) + 1;
  if (ceilMode && (o - 1) * s >= in + p0) // last window must start inside input or left pad
    o--;
  return o;
}

/// kind 0 = max, 1 = average, 2 = average with count_include_pad.
std::vector<double> naivePool(const PoolCase &c, int OH, int OW, const std::vector<float> &X,
                              int kind) {
  std::vector<double> ref(size_t(c.NC) * OH * OW);
  for (int p = 0; p < c.NC; p++)
    for (int oy = 0; oy < OH; oy++)
      for (int ox = 0; ox < OW; ox++) {
        double m = -FLT_MAX, s = 0;
        int inCount = 0, padCount = 0;
        for (int ky = 0; ky < c.KH; ky++)
          for (int kx = 0; kx < c.KW; kx++) {
            int iy = oy * c.SH - c.PT + ky * c.DH, ix = ox * c.SW - c.PL + kx * c.DW;
            if (iy >= -c.PT && iy < c.H + c.PB && ix >= -c.PL && ix < c.W + c.PR)
              padCount++;
            if (iy < 0 || iy >= c.H || ix < 0 || ix >= c.W)
              continue;
            double v = X[(size_t(p) * c.H + iy) * c.W + ix];
            m = std::max(m, v);
            s += v;
            inCount++;
          }
        ref[(size_t(p) * OH + oy) * OW + ox] = kind == 0 ? m : s / (kind == 1 ? inCount : padCount);
      }
  return ref;
}

TEST(KernelsPool, MaxAndAveragePoolMatchNaive) {
  std::mt19937 rng(8);
  const PoolCase cases[] = {
      {3, 8, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false},
      {2, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false},
      {2, 7, 9, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true},
      {1, 10, 10, 3, 2, 1, 3, 2, 1, 2, 0, 1, 1, false},
      {4, 1, 31, 1, 4, 1, 3, 1, 1, 0, 1, 0, 2, true},
      {1, 5, 5, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, false},
      {2, 6, 6, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, true},
      {1, 12, 11, 2, 3, 2, 2, 1, 1, 0, 1, 0, 1, true},
  };
  for (const PoolCase &c : cases) {
    int OH = poolOut(c.H, c.KH, c.SH, c.DH, c.PT, c.PB, c.ceil);
    int OW = poolOut(c.W, c.KW, c.SW, c.DW, c.PL, c.PR, c.ceil);
    auto X = randomVec(size_t(c.NC) * c.H * c.W, rng);
    for (int kind = 0; kind < 3; kind++) { // max, avg, avg count_include_pad
      auto ref = naivePool(c, OH, OW, X, kind);
      std::vector<float> Y(ref.size(), -999.0f);
      if (kind == 0)
        npucc_maxpool2d_f32(X.data(), Y.data(), c.NC, c.H, c.W, OH, OW, c.KH, c.KW, c.SH, c.SW,
                            c.DH, c.DW, c.PT, c.PL);
      else
        npucc_avgpool2d_f32(X.data(), Y.data(), c.NC, c.H, c.W, OH, OW, c.KH, c.KW, c.SH, c.SW,
                            c.DH, c.DW, c.PT, c.PL, c.PB, c.PR, kind == 2);
      expectClose(Y, ref, 1e-5,
                  "pool kind " + std::to_string(kind) + " " + std::to_string(c.H) + "x" +
                      std::to_string(c.W) + " k" + std::to_string(c.KH) + "x" +
                      std::to_string(c.KW) + " ceil " + std::to_string(c.ceil));
    }
  }
}

TEST(KernelsPool, GlobalPools) {
  std::mt19937 rng(9);
  for (int spatial : {1, 7, 8, 49, 1000}) {
    const int NC = 5;
    auto X = randomVec(size_t(NC) * spatial, rng, -3.0f, 2.0f);
    std::vector<double> refAvg(NC), refMax(NC);
    for (int p = 0; p < NC; p++) {
      double s = 0, m = -1e30;
      for (int i = 0; i < spatial; i++) {
        s += X[size_t(p) * spatial + i];
        m = std::max(m, double(X[size_t(p) * spatial + i]));
      }
      refAvg[p] = s / spatial;
      refMax[p] = m;
    }
    std::vector<float> Ya(NC), Ym(NC);
    npucc_global_avgpool_f32(X.data(), Ya.data(), NC, spatial);
    npucc_global_maxpool_f32(X.data(), Ym.data(), NC, spatial);
    expectClose(Ya, refAvg, 1e-5, "global avg " + std::to_string(spatial));
    expectClose(Ym, refMax, 0.0, "global max " + std::to_string(spatial));
  }
}

TEST(KernelsNorm, BatchNormBothForms) {
  std::mt19937 rng(10);
  const int N = 2, C = 6, inner = 37;
  const float eps = 1e-3f;
  auto X = randomVec(size_t(N) * C * inner, rng, -4.0f, 4.0f);
  auto gamma = randomVec(C, rng), beta = randomVec(C, rng), mean = randomVec(C, rng);
  auto var = randomVec(C, rng, 0.1f, 2.0f);
  std::vector<double> ref(X.size());
  std::vector<float> scale(C), shift(C);
  for (int c = 0; c < C; c++) {
    double a = gamma[c] / std::sqrt(double(var[c]) + eps);
    scale[c] = float(a);
    shift[c] = float(beta[c] - mean[c] * a);
    for (int n = 0; n < N; n++)
      for (int i = 0; i < inner; i++) {
        size_t idx = (size_t(n) * C + c) * inner + i;
        ref[idx] = (X[idx] - mean[c]) * a + beta[c];
      }
  }
  std::vector<float> Y1(X.size()), Y2(X.size());
  npucc_batchnorm_f32(X.data(), gamma.data(), beta.data(), mean.data(), var.data(), Y1.data(), N, C,
                      inner, eps);
  npucc_channel_affine_f32(X.data(), Y2.data(), N, C, inner, scale.data(), shift.data());
  expectClose(Y1, ref, 1e-5, "batchnorm");
  expectClose(Y2, ref, 1e-5, "channel affine");
}

// ----------------------------------------------------------------------------
// Lowering (lib/lower/cpu/{Conv,MatMul,Pool,Norm}.cpp): lower one node with a
// context that backs every buffer with host memory, run the chosen kernel
// with the emitted arguments, and compare with the naive references above.
// ----------------------------------------------------------------------------

using npucc::ir::DType;
using npucc::ir::Graph;
using npucc::ir::Node;
using npucc::ir::OpKind;
using npucc::ir::Shape;
using npucc::ir::Value;
namespace lir = npucc::lir;

struct RunCtx : npucc::lower::LowerContext {
  std::map<const Value *, int> ids;
  std::vector<std::vector<float>> store; // indexed by BufferRef::index
  std::vector<int64_t> scratchBytes;
  std::vector<size_t> scratchIdx;
  std::set<std::string> files;

  lir::BufferRef buffer(const Value *v) override {
    auto it = ids.find(v);
    if (it == ids.end()) {
      it = ids.emplace(v, int(store.size())).first;
      store.emplace_back(size_t(v->numElements()), 0.0f);
      if (v->isConstant())
        memcpy(store.back().data(), v->constant->raw(), v->constant->byteSize());
    }
    lir::BufferRef r;
    r.region = lir::Region::Input;
    r.index = it->second;
    r.size = int64_t(v->byteSize());
    return r;
  }
  lir::BufferRef scratch(int64_t bytes) override {
    scratchBytes.push_back(bytes);
    store.emplace_back(size_t(bytes) / 4 + Scratch::Canary, 12345.0f);
    scratchIdx.push_back(store.size() - 1);
    lir::BufferRef r;
    r.region = lir::Region::Input;
    r.index = int(store.size()) - 1;
    r.size = bytes;
    return r;
  }
  void useKernelFile(const std::string &p) override { files.insert(p); }

  std::vector<float> &data(const Value *v) { return store[size_t(buffer(v).index)]; }
  float *ptr(const lir::Arg &a) {
    const auto &b = std::get<lir::BufferRef>(a);
    return b.isNull() ? nullptr : store[size_t(b.index)].data();
  }
};

/// Calls the kernel named by `in` with its arguments.
void runInstr(const lir::Instr &in, RunCtx &c) {
  const auto &a = in.args;
  auto P = [&](size_t i) { return c.ptr(a.at(i)); };
  auto I = [&](size_t i) { return int32_t(std::get<int64_t>(a.at(i))); };
  auto F = [&](size_t i) { return std::get<float>(a.at(i)); };
  auto IA = [&](size_t i) {
    const auto &v = std::get<lir::IntArray>(a.at(i)).values;
    return std::vector<int32_t>(v.begin(), v.end());
  };
  auto FA = [&](size_t i) { return std::get<lir::FloatArray>(a.at(i)).values.data(); };
  const std::string &f = in.callee;
  ASSERT_EQ(in.opcode, "call");
  if (f == "npucc_conv2d_f32" || f == "npucc_conv_transpose2d_f32") {
    ASSERT_EQ(a.size(), 23u);
    auto *fn = f == "npucc_conv2d_f32" ? npucc_conv2d_f32 : npucc_conv_transpose2d_f32;
    fn(P(0), P(1), P(2), P(3), P(4), I(5), I(6), I(7), I(8), I(9), I(10), I(11), I(12), I(13),
       I(14), I(15), I(16), I(17), I(18), I(19), I(20), F(21), F(22));
  } else if (f == "npucc_depthwise_conv2d_f32") {
    ASSERT_EQ(a.size(), 22u);
    npucc_depthwise_conv2d_f32(P(0), P(1), P(2), P(3), P(4), I(5), I(6), I(7), I(8), I(9), I(10),
                               I(11), I(12), I(13), I(14), I(15), I(16), I(17), I(18), I(19), F(20),
                               F(21));
  } else if (f == "npucc_gemm_f32") {
    ASSERT_EQ(a.size(), 15u);
    npucc_gemm_f32(P(0), P(1), P(2), P(3), P(4), I(5), I(6), I(7), I(8), I(9), F(10), F(11), I(12),
                   F(13), F(14));
  } else if (f == "npucc_matmul_f32") {
    ASSERT_EQ(a.size(), 12u);
    auto ao = IA(10), bo = IA(11);
    ASSERT_EQ(ao.size(), size_t(I(4)));
    ASSERT_EQ(bo.size(), size_t(I(4)));
    npucc_matmul_f32(P(0), P(1), P(2), P(3), I(4), I(5), I(6), I(7), F(8), F(9), ao.data(),
                     bo.data());
  } else if (f == "npucc_maxpool2d_f32") {
    ASSERT_EQ(a.size(), 15u);
    npucc_maxpool2d_f32(P(0), P(1), I(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10), I(11),
                        I(12), I(13), I(14));
  } else if (f == "npucc_avgpool2d_f32") {
    ASSERT_EQ(a.size(), 18u);
    npucc_avgpool2d_f32(P(0), P(1), I(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10), I(11),
                        I(12), I(13), I(14), I(15), I(16), I(17));
  } else if (f == "npucc_global_avgpool_f32" || f == "npucc_global_maxpool_f32") {
    ASSERT_EQ(a.size(), 4u);
    (f == "npucc_global_avgpool_f32" ? npucc_global_avgpool_f32
                                     : npucc_global_maxpool_f32)(P(0), P(1), I(2), I(3));
  } else if (f == "npucc_channel_affine_f32") {
    ASSERT_EQ(a.size(), 7u);
    npucc_channel_affine_f32(P(0), P(1), I(2), I(3), I(4), FA(5), FA(6));
  } else if (f == "npucc_batchnorm_f32") {
    ASSERT_EQ(a.size(), 10u);
    npucc_batchnorm_f32(P(0), P(1), P(2), P(3), P(4), P(5), I(6), I(7), I(8), F(9));
  } else {
    FAIL() << "unknown kernel " << f;
  }
}

npucc::ir::Tensor tensorOf(const Shape &s, const std::vector<float> &v) {
  return npucc::ir::Tensor::fromFloats(s, v);
}

using LowerFn = npucc::Status (*)(const Node &, npucc::lower::LowerContext &,
                                  std::vector<lir::Instr> &);

/// Lowers `n` (must succeed into one call), runs it, returns the output data.
std::vector<float> lowerAndRun(const Node &n, RunCtx &ctx, LowerFn fn, std::string *callee) {
  std::vector<lir::Instr> body;
  npucc::Status st = fn(n, ctx, body);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().str());
  if (!st.ok() || body.size() != 1)
    return {};
  if (callee)
    *callee = body[0].callee;
  runInstr(body[0], ctx);
  for (size_t i : ctx.scratchIdx)
    for (size_t k = ctx.store[i].size() - Scratch::Canary; k < ctx.store[i].size(); k++)
      if (ctx.store[i][k] != 12345.0f) {
        ADD_FAILURE() << "scratch overrun in " << n.name;
        break;
      }
  return ctx.data(n.output(0));
}

std::vector<int64_t> i64(std::initializer_list<int> v) {
  return std::vector<int64_t>(v.begin(), v.end());
}

TEST(LowerConv, ConvVariantsRunAndMatchNaive) {
  std::mt19937 rng(20);
  const ConvCase cases[] = {ConvCases[0],
                            ConvCases[1],
                            ConvCases[4],
                            ConvCases[5],
                            ConvCases[7],
                            ConvCases[13],
                            {1, 6, 9, 9, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6, true, true}};
  for (const ConvCase &c : cases) {
    bool oneD = c.H == 1 && c.KH == 1;
    int OH = convOut(c.H, c.KH, c.SH, c.DH, c.PT, c.PB),
        OW = convOut(c.W, c.KW, c.SW, c.DW, c.PL, c.PR);
    Graph g;
    Shape xs = oneD ? Shape{c.N, c.C, c.W} : Shape{c.N, c.C, c.H, c.W};
    Shape ws = oneD ? Shape{c.M, c.C / c.G, c.KW} : Shape{c.M, c.C / c.G, c.KH, c.KW};
    Shape ys = oneD ? Shape{c.N, c.M, OW} : Shape{c.N, c.M, OH, OW};
    auto Wt = randomVec(size_t(npucc::ir::numElements(ws)), rng), B = randomVec(c.M, rng);
    Value *x = g.addValue("x", DType::F32, xs);
    Value *w = g.addConstant("w", tensorOf(ws, Wt));
    Value *b = c.bias ? g.addConstant("b", tensorOf({c.M}, B)) : nullptr;
    Value *y = g.addValue("y", DType::F32, ys);
    Node *n = g.addNode(OpKind::Conv, "conv0", {x, w, b}, {y});
    n->attrs["kernel_shape"] = oneD ? i64({c.KW}) : i64({c.KH, c.KW});
    n->attrs["strides"] = oneD ? i64({c.SW}) : i64({c.SH, c.SW});
    n->attrs["dilations"] = oneD ? i64({c.DW}) : i64({c.DH, c.DW});
    n->attrs["pads"] = oneD ? i64({c.PL, c.PR}) : i64({c.PT, c.PL, c.PB, c.PR});
    n->attrs["group"] = int64_t(c.G);
    float lo = c.clamp ? 0.0f : NoMin, hi = c.clamp ? 0.5f : NoMax;
    if (c.clamp) {
      n->attrs["act_min"] = lo;
      n->attrs["act_max"] = hi;
    }
    RunCtx ctx;
    auto X = randomVec(size_t(x->numElements()), rng);
    ctx.data(x) = X;
    std::string callee;
    auto Y = lowerAndRun(*n, ctx, npucc::lower::lowerConvFamily, &callee);
    EXPECT_EQ(callee,
              c.C / c.G == 1 && c.G > 1 ? "npucc_depthwise_conv2d_f32" : "npucc_conv2d_f32");
    EXPECT_TRUE(ctx.files.count(c.C / c.G == 1 && c.G > 1 ? "kernels/npucc_dwconv.c"
                                                          : "kernels/npucc_conv.c"));
    expectClose(Y, naiveConv(c, OH, OW, X, Wt, B, lo, hi), 1e-5, "lowered " + convName(c));
  }
}

TEST(LowerConv, ConvTransposeWithPadsOrOutputShape) {
  std::mt19937 rng(21);
  for (int variant = 0; variant < 2; variant++) {
    // Variant 0: explicit pads + output_padding. Variant 1: output_shape attribute only.
    ConvTCase c = variant == 0
                      ? ConvTCase{1, 4, 5, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2, true}
                      : ConvTCase{2, 3, 4, 4, 2, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 1, false};
    int OH = c.SH * (c.H - 1) + c.OPH + (c.KH - 1) * c.DH + 1 - c.PT - c.PB;
    int OW = c.SW * (c.W - 1) + c.OPW + (c.KW - 1) * c.DW + 1 - c.PL - c.PR;
    Graph g;
    Shape ws{c.C, c.M / c.G, c.KH, c.KW};
    auto Wt = randomVec(size_t(npucc::ir::numElements(ws)), rng), B = randomVec(c.M, rng);
    Value *x = g.addValue("x", DType::F32, {c.N, c.C, c.H, c.W});
    Value *w = g.addConstant("w", tensorOf(ws, Wt));
    Value *b = c.bias ? g.addConstant("b", tensorOf({c.M}, B)) : nullptr;
    Value *y = g.addValue("y", DType::F32, {c.N, c.M, OH, OW});
    Node *n = g.addNode(OpKind::ConvTranspose, "deconv", {x, w, b}, {y});
    n->attrs["kernel_shape"] = i64({c.KH, c.KW});
    n->attrs["strides"] = i64({c.SH, c.SW});
    n->attrs["group"] = int64_t(c.G);
    if (variant == 0) {
      n->attrs["pads"] = i64({c.PT, c.PL, c.PB, c.PR});
      n->attrs["output_padding"] = i64({c.OPH, c.OPW});
    } else {
      n->attrs["output_shape"] = i64({OH, OW}); // total padding 1: begin 1 (ONNX "else" rule)
    }
    RunCtx ctx;
    auto X = randomVec(size_t(x->numElements()), rng);
    ctx.data(x) = X;
    std::string callee;
    auto Y = lowerAndRun(*n, ctx, npucc::lower::lowerConvFamily, &callee);
    EXPECT_EQ(callee, "npucc_conv_transpose2d_f32");
    expectClose(Y, naiveConvT(c, OH, OW, X, Wt, B), 1e-5,
                "lowered convT " + std::to_string(variant));
  }
}

TEST(LowerMatMul, GemmWithTransposesBiasAndActivation) {
  std::mt19937 rng(22);
  const int M = 5, N = 13, K = 19;
  for (int variant = 0; variant < 2; variant++) {
    bool ta = variant == 1, tb = variant == 0;
    Shape cs = variant == 0 ? Shape{N} : Shape{M, 1};
    Graph g;
    Value *a = g.addValue("a", DType::F32, ta ? Shape{K, M} : Shape{M, K});
    auto Bv = randomVec(size_t(K) * N, rng),
         Cv = randomVec(size_t(npucc::ir::numElements(cs)), rng);
    Value *b = g.addConstant("b", tensorOf(tb ? Shape{N, K} : Shape{K, N}, Bv));
    Value *c = g.addConstant("c", tensorOf(cs, Cv));
    Value *y = g.addValue("y", DType::F32, {M, N});
    Node *n = g.addNode(OpKind::Gemm, "fc", {a, b, c}, {y});
    n->attrs["transA"] = int64_t(ta);
    n->attrs["transB"] = int64_t(tb);
    n->attrs["alpha"] = 0.5f;
    n->attrs["beta"] = 2.0f;
    n->attrs["act_min"] = 0.0f;
    RunCtx ctx;
    auto A = randomVec(size_t(M) * K, rng);
    ctx.data(a) = A;
    std::string callee;
    auto Y = lowerAndRun(*n, ctx, npucc::lower::lowerMatMulFamily, &callee);
    EXPECT_EQ(callee, "npucc_gemm_f32");
    std::vector<double> ref(size_t(M) * N);
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double acc = 0;
        for (int k = 0; k < K; k++)
          acc += double(ta ? A[size_t(k) * M + i] : A[size_t(i) * K + k]) *
                 (tb ? Bv[size_t(j) * K + k] : Bv[size_t(k) * N + j]);
        double cv = variant == 0 ? Cv[j] : Cv[i];
        ref[size_t(i) * N + j] = std::max(0.0, 0.5 * acc + 2.0 * cv);
      }
    expectClose(Y, ref, 1e-5, "lowered gemm " + std::to_string(variant));
  }
}

TEST(LowerMatMul, BroadcastBatchAndVectorOperands) {
  std::mt19937 rng(23);
  struct Case {
    Shape a, b, y;
  };
  const Case cases[] = {{{2, 1, 5, 7}, {3, 7, 4}, {2, 3, 5, 4}},
                        {{3, 5, 7}, {7, 4}, {3, 5, 4}},
                        {{7}, {3, 7, 4}, {3, 4}},
                        {{2, 5, 7}, {7}, {2, 5}},
                        {{6}, {6}, {}},
                        {{1, 9, 70}, {2, 1, 70, 33}, {2, 1, 9, 33}}};
  for (const Case &c : cases) {
    Graph g;
    Value *a = g.addValue("a", DType::F32, c.a);
    Value *b = g.addValue("b", DType::F32, c.b);
    Value *y = g.addValue("y", DType::F32, c.y);
    Node *n = g.addNode(OpKind::MatMul, "mm", {a, b}, {y});
    RunCtx ctx;
    auto A = randomVec(size_t(a->numElements()), rng), B = randomVec(size_t(b->numElements()), rng);
    ctx.data(a) = A;
    ctx.data(b) = B;
    auto Y = lowerAndRun(*n, ctx, npucc::lower::lowerMatMulFamily, nullptr);
    // numpy semantics: 1-D operands get a unit dim; batch dims broadcast.
    Shape sa = c.a.size() == 1 ? Shape{1, c.a[0]} : c.a,
          sb = c.b.size() == 1 ? Shape{c.b[0], 1} : c.b;
    int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
    size_t r = std::max(sa.size(), sb.size());
    sa.insert(sa.begin(), r - sa.size(), 1);
    sb.insert(sb.begin(), r - sb.size(), 1);
    std::vector<double> ref;
    std::vector<int64_t> idx(r - 2, 0);
    int64_t batch = 1;
    for (size_t i = 0; i + 2 < r; i++)
      batch *= std::max(sa[i], sb[i]);
    for (int64_t t = 0; t < batch; t++) {
      int64_t oa = 0, ob = 0;
      for (size_t i = 0; i + 2 < r; i++) {
        oa = oa * sa[i] + (sa[i] == 1 ? 0 : idx[i]);
        ob = ob * sb[i] + (sb[i] == 1 ? 0 : idx[i]);
      }
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
          double acc = 0;
          for (int64_t k = 0; k < K; k++)
            acc += double(A[size_t((oa * M + i) * K + k)]) * B[size_t((ob * K + k) * N + j)];
          ref.push_back(acc);
        }
      for (size_t i = r - 2; i-- > 0;) {
        if (++idx[i] < std::max(sa[i], sb[i]))
          break;
        idx[i] = 0;
      }
    }
    expectClose(Y, ref, 1e-5,
                "lowered matmul " + npucc::ir::shapeStr(c.a) + " x " + npucc::ir::shapeStr(c.b));
  }
}

TEST(LowerPool, WindowAndGlobalPools) {
  std::mt19937 rng(24);
  // {NC,H,W,KH,KW,SH,SW,DH,DW,PT,PL,PB,PR,ceil}; H == 1 with KH == 1 is lowered as 1-D.
  const PoolCase cases[] = {{6, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true},
                            {6, 10, 10, 3, 2, 1, 3, 2, 1, 2, 0, 1, 1, false},
                            {4, 1, 31, 1, 4, 1, 3, 1, 1, 0, 1, 0, 2, true}};
  for (const PoolCase &c : cases)
    for (int kind = 0; kind < 3; kind++) {
      bool oneD = c.H == 1;
      int OH = poolOut(c.H, c.KH, c.SH, c.DH, c.PT, c.PB, c.ceil);
      int OW = poolOut(c.W, c.KW, c.SW, c.DW, c.PL, c.PR, c.ceil);
      Graph g;
      Value *x = g.addValue("x", DType::F32,
                            oneD ? Shape{2, c.NC / 2, c.W} : Shape{2, c.NC / 2, c.H, c.W});
      Value *y =
          g.addValue("y", DType::F32, oneD ? Shape{2, c.NC / 2, OW} : Shape{2, c.NC / 2, OH, OW});
      Node *n = g.addNode(kind == 0 ? OpKind::MaxPool : OpKind::AveragePool, "pool", {x}, {y});
      n->attrs["kernel_shape"] = oneD ? i64({c.KW}) : i64({c.KH, c.KW});
      n->attrs["strides"] = oneD ? i64({c.SW}) : i64({c.SH, c.SW});
      n->attrs["pads"] = oneD ? i64({c.PL, c.PR}) : i64({c.PT, c.PL, c.PB, c.PR});
      n->attrs["ceil_mode"] = int64_t(c.ceil);
      if (kind == 0)
        n->attrs["dilations"] = oneD ? i64({c.DW}) : i64({c.DH, c.DW});
      else if (c.DH != 1 || c.DW != 1)
        continue; // AveragePool dilations only from opset 19; covered by the kernel test
      if (kind == 2)
        n->attrs["count_include_pad"] = int64_t(1);
      RunCtx ctx;
      auto X = randomVec(size_t(x->numElements()), rng);
      ctx.data(x) = X;
      auto Y = lowerAndRun(*n, ctx, npucc::lower::lowerPoolFamily, nullptr);
      expectClose(Y, naivePool(c, OH, OW, X, kind), 1e-5,
                  "lowered pool kind " + std::to_string(kind));
    }
  for (OpKind k : {OpKind::GlobalAveragePool, OpKind::GlobalMaxPool}) {
    Graph g;
    Value *x = g.addValue("x", DType::F32, {2, 3, 5, 7});
    Value *y = g.addValue("y", DType::F32, {2, 3, 1, 1});
    Node *n = g.addNode(k, "gp", {x}, {y});
    RunCtx ctx;
    auto X = randomVec(size_t(x->numElements()), rng);
    ctx.data(x) = X;
    auto Y = lowerAndRun(*n, ctx, npucc::lower::lowerPoolFamily, nullptr);
    std::vector<double> ref(6);
    for (int p = 0; p < 6; p++) {
      double s = 0, m = -1e30;
      for (int i = 0; i < 35; i++) {
        s += X[size_t(p) * 35 + i];
        m = std::max(m, double(X[size_t(p) * 35 + i]));
      }
      ref[size_t(p)] = k == OpKind::GlobalAveragePool ? s / 35 : m;
    }
    expectClose(Y, ref, 1e-6, "lowered global pool");
  }
}

TEST(LowerNorm, BatchNormFoldsConstantsOrRunsAtRuntime) {
  std::mt19937 rng(25);
  const int C = 4;
  for (int constant = 0; constant < 2; constant++) {
    Graph g;
    auto G = randomVec(C, rng), Bt = randomVec(C, rng), Mn = randomVec(C, rng);
    auto V = randomVec(C, rng, 0.2f, 3.0f);
    Value *x = g.addValue("x", DType::F32, {2, C, 3, 5});
    Value *gv = g.addConstant("g", tensorOf({C}, G)), *bv = g.addConstant("bt", tensorOf({C}, Bt));
    Value *mv = constant ? g.addConstant("m", tensorOf({C}, Mn)) : g.addValue("m", DType::F32, {C});
    Value *vv = g.addConstant("v", tensorOf({C}, V));
    Value *y = g.addValue("y", DType::F32, {2, C, 3, 5});
    Node *n = g.addNode(OpKind::BatchNormalization, "bn", {x, gv, bv, mv, vv}, {y});
    n->attrs["epsilon"] = 0.01f;
    RunCtx ctx;
    auto X = randomVec(size_t(x->numElements()), rng);
    ctx.data(x) = X;
    if (!constant)
      ctx.data(mv) = Mn;
    std::string callee;
    auto Y = lowerAndRun(*n, ctx, npucc::lower::lowerNormFamily, &callee);
    EXPECT_EQ(callee, constant ? "npucc_channel_affine_f32" : "npucc_batchnorm_f32");
    std::vector<double> ref(X.size());
    for (size_t i = 0; i < X.size(); i++) {
      size_t c = (i / 15) % C;
      ref[i] = (X[i] - Mn[c]) / std::sqrt(double(V[c]) + 0.01) * G[c] + Bt[c];
    }
    expectClose(Y, ref, 1e-5, "lowered batchnorm");
  }
}

TEST(LowerErrors, UnsupportedFormsNameTheNode) {
  Graph g;
  Value *x5 = g.addValue("x5", DType::F32, {1, 2, 4, 4, 4});
  Value *w5 = g.addConstant("w5", npucc::ir::Tensor(DType::F32, {3, 2, 1, 1, 1}));
  Value *y5 = g.addValue("y5", DType::F32, {1, 3, 4, 4, 4});
  Node *conv3d = g.addNode(OpKind::Conv, "conv3d_node", {x5, w5}, {y5});
  Value *x = g.addValue("x", DType::F32, {1, 2, 4, 4});
  Value *y = g.addValue("y", DType::F32, {1, 2, 2, 2});
  Value *idx = g.addValue("idx", DType::I64, {1, 2, 2, 2});
  Node *mp = g.addNode(OpKind::MaxPool, "pool_idx", {x}, {y, idx});
  mp->attrs["kernel_shape"] = i64({2, 2});
  mp->attrs["strides"] = i64({2, 2});
  Value *xi = g.addValue("xi", DType::I8, {1, 2, 4, 4});
  Value *wi = g.addConstant("wi", npucc::ir::Tensor(DType::I8, {2, 2, 1, 1}));
  Value *yi = g.addValue("yi", DType::I8, {1, 2, 4, 4});
  Node *convI8 = g.addNode(OpKind::Conv, "conv_i8", {xi, wi}, {yi});
  Value *yBad = g.addValue("ybad", DType::F32, {1, 3, 5, 4});
  Node *badShape =
      g.addNode(OpKind::Conv, "conv_bad",
                {x, g.addConstant("w3", npucc::ir::Tensor(DType::F32, {3, 2, 1, 1}))}, {yBad});
  struct Expect {
    Node *n;
    LowerFn fn;
    const char *text;
  };
  for (const Expect &e : {Expect{conv3d, npucc::lower::lowerConvFamily, "3-D"},
                          Expect{mp, npucc::lower::lowerPoolFamily, "Indices"},
                          Expect{convI8, npucc::lower::lowerConvFamily, "float32"},
                          Expect{badShape, npucc::lower::lowerConvFamily, "does not match"}}) {
    RunCtx ctx;
    std::vector<lir::Instr> body;
    npucc::Status st = e.fn(*e.n, ctx, body);
    ASSERT_FALSE(st.ok()) << e.n->name;
    EXPECT_EQ(st.error().node, e.n->name);
    EXPECT_EQ(st.error().op, e.n->opName());
    EXPECT_NE(st.error().message.find(e.text), std::string::npos) << st.error().str();
  }
}

} // namespace

namespace npucc::lower {
int64_t cpuSgemmScratchBytes(int64_t M, int64_t N, int64_t K); // lib/lower/cpu/MatMul.cpp
}

namespace {

TEST(LowerMatMul, ScratchFormulaMatchesKernel) {
  for (int M : {1, 7, 8, 9, 64, 65, 200})
    for (int N : {1, 8, 13, 256, 257, 3000})
      for (int K : {1, 27, 256, 257, 1000})
        EXPECT_EQ(npucc::lower::cpuSgemmScratchBytes(M, N, K),
                  int64_t(npucc_sgemm_scratch_floats(M, N, K) * sizeof(float)))
            << M << "x" << N << "x" << K;
}

} // namespace
