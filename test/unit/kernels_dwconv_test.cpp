//===- kernels_dwconv_test.cpp - depthwise Conv and unpacked SGEMM vs naive loops ---===//
//
// Checks runtime/kernels/npucc_dwconv.c (zero-padded stride-phase planes,
// flat 16-wide loop, several tap passes for kernels over NPUCC_DW_TAPS taps;
// the row kernel without scratch for planes over NPUCC_DW_FLAT_MAX)
// and the unpacked small-GEMM path of npucc_gemm.c (row-major A and B,
// K <= NPUCC_GEMM_KC, alpha 1) against double-precision loops written here,
// on the shapes of the benchmark models (W = 5, 6x6, 3x3, stride 2) and on
// edge cases. Scratch buffers are sized by the kernels' size functions,
// pre-filled with NaN (the kernels must not rely on their content) and
// followed by a canary; the lowering's scratch formula must agree.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "ConvReference.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "../../runtime/kernels/npucc_dwconv.h"
#include "../../runtime/kernels/npucc_gemm.h"
}

namespace npucc::lower {
// lib/lower/cpu/Conv.cpp
int64_t cpuDepthwiseScratchBytes(int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t SH,
                                 int64_t SW, int64_t DH, int64_t DW);
} // namespace npucc::lower

namespace {

using npucc::test::randomVec;

/// A NaN-filled scratch buffer of exactly `floats` floats plus a canary tail.
struct NanScratch {
  static constexpr size_t Canary = 16;
  std::vector<float> buf;
  explicit NanScratch(size_t floats) : buf(floats + Canary, 12345.0f) {
    std::fill(buf.begin(), buf.begin() + long(floats), std::numeric_limits<float>::quiet_NaN());
  }
  float *data() { return buf.data(); }
  bool intact() const {
    for (size_t i = buf.size() - Canary; i < buf.size(); i++)
      if (buf[i] != 12345.0f)
        return false;
    return true;
  }
};

/// max|got - ref| <= tol * max(1, max|ref|), NaN fails.
void expectClose(const std::vector<float> &got, const std::vector<double> &ref, double tol,
                 const std::string &what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double maxRef = 1.0, maxErr = 0.0;
  size_t worst = 0;
  for (size_t i = 0; i < ref.size(); i++) {
    maxRef = std::max(maxRef, std::fabs(ref[i]));
    double e = std::fabs(double(got[i]) - ref[i]);
    if (!(e <= maxErr)) {
      maxErr = e;
      worst = i;
    }
  }
  EXPECT_LE(maxErr, tol * maxRef) << what << ": worst index " << worst << " got " << got[worst]
                                  << " want " << ref[worst];
}

struct DwCase {
  int N, C, H, W, mult, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR;
  bool bias, clamp;
};

std::string name(const DwCase &c) {
  char b[200];
  snprintf(b, sizeof b, "N%d C%d %dx%d x%d k%dx%d s%dx%d d%dx%d p%d,%d,%d,%d", c.N, c.C, c.H, c.W,
           c.mult, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW, c.PT, c.PL, c.PB, c.PR);
  return b;
}

/// Runs the kernel on a random case and compares with a naive loop.
void checkCase(const DwCase &c, std::mt19937 &rng) {
  int M = c.C * c.mult;
  int OH = (c.H + c.PT + c.PB - ((c.KH - 1) * c.DH + 1)) / c.SH + 1;
  int OW = (c.W + c.PL + c.PR - ((c.KW - 1) * c.DW + 1)) / c.SW + 1;
  ASSERT_GE(OH, 1) << name(c);
  ASSERT_GE(OW, 1) << name(c);
  auto X = randomVec(size_t(c.N) * c.C * c.H * c.W, rng);
  auto Wt = randomVec(size_t(M) * c.KH * c.KW, rng), B = randomVec(size_t(M), rng);
  float lo = c.clamp ? -0.25f : -FLT_MAX, hi = c.clamp ? 0.5f : FLT_MAX;
  std::vector<double> ref(size_t(c.N) * M * OH * OW);
  for (int n = 0; n < c.N; n++)
    for (int m = 0; m < M; m++)
      for (int oy = 0; oy < OH; oy++)
        for (int ox = 0; ox < OW; ox++) {
          double s = c.bias ? B[size_t(m)] : 0.0;
          for (int ky = 0; ky < c.KH; ky++)
            for (int kx = 0; kx < c.KW; kx++) {
              int iy = oy * c.SH - c.PT + ky * c.DH, ix = ox * c.SW - c.PL + kx * c.DW;
              if (iy < 0 || iy >= c.H || ix < 0 || ix >= c.W)
                continue;
              s += double(Wt[(size_t(m) * c.KH + ky) * c.KW + kx]) *
                   X[((size_t(n) * c.C + m / c.mult) * c.H + iy) * c.W + ix];
            }
          ref[((size_t(n) * M + m) * OH + oy) * OW + ox] =
              std::min(std::max(s, double(lo)), double(hi));
        }
  size_t floats = npucc_depthwise_conv2d_scratch_floats(OH, OW, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW);
  EXPECT_EQ(int64_t(floats * sizeof(float)),
            npucc::lower::cpuDepthwiseScratchBytes(OH, OW, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW))
      << name(c);
  NanScratch s(floats);
  std::vector<float> Y(ref.size(), -999.0f);
  npucc_depthwise_conv2d_f32(X.data(), Wt.data(), c.bias ? B.data() : nullptr, Y.data(),
                             floats ? s.data() : nullptr, c.N, c.C, c.H, c.W, M, OH, OW, c.KH, c.KW,
                             c.SH, c.SW, c.DH, c.DW, c.PT, c.PL, lo, hi);
  expectClose(Y, ref, 1e-5, name(c));
  EXPECT_TRUE(s.intact()) << "scratch overrun: " << name(c);
}

TEST(KernelsDwConv, ModelShapesMatchNaive) {
  std::mt19937 rng(31);
  const DwCase cases[] = {
      {1, 32, 25, 5, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false},   // ali_kws_f32
      {1, 128, 6, 6, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true},    // mlpt_vww_f32
      {1, 32, 24, 24, 1, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, true, false},  // stride 2, pads 0,0,1,1
      {1, 48, 48, 48, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true},   // mobilenetv2
      {1, 336, 3, 3, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true},    // 3x3 planes
      {1, 192, 6, 6, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false},  // 6x6 -> 3x3
      {1, 16, 112, 112, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true}, // large plane
  };
  for (const DwCase &c : cases)
    checkCase(c, rng);
}

TEST(KernelsDwConv, EdgeGeometriesMatchNaive) {
  std::mt19937 rng(32);
  const DwCase cases[] = {
      {2, 3, 11, 29, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false},  // multiplier 2, batch 2
      {1, 4, 12, 12, 3, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4, true, false},   // dilated, multiplier 3
      {1, 2, 9, 33, 1, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, true, true},     // 49 taps: two passes
      {1, 2, 1, 80, 1, 1, 30, 1, 1, 1, 1, 0, 14, 0, 15, true, false}, // 1-D, 30 taps
      {1, 3, 13, 14, 1, 3, 3, 3, 2, 1, 1, 1, 0, 2, 1, true, false},   // strides 3x2, uneven pads
      {1, 2, 10, 9, 1, 3, 2, 2, 3, 2, 1, 0, 1, 0, 0, false, true},    // stride < dilation mixes
      {1, 5, 7, 7, 1, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0, true, false},     // 1x1 output
      {1, 3, 4, 4, 1, 3, 3, 1, 1, 1, 1, 3, 3, 3, 3, true, false},     // pads >= kernel
      {1, 3, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false},     // 1x1 image
      {1, 2, 8, 8, 1, 2, 2, 4, 4, 3, 3, 0, 0, 0, 0, true, false},     // stride > kernel extent
      {1, 2, 100, 100, 2, 5, 5, 2, 2, 2, 2, 3, 3, 3, 3, true, true},  // row kernel, strided
      {1, 2, 95, 97, 1, 3, 3, 1, 1, 1, 1, 0, 1, 2, 1, true, false},   // row kernel, stride 1
  };
  for (const DwCase &c : cases)
    checkCase(c, rng);
}

TEST(KernelsDwConv, RandomGeometriesMatchNaive) {
  std::mt19937 rng(33);
  std::uniform_int_distribution<int> dim(1, 19), k(1, 6), s(1, 3), d(1, 2), p(0, 3), m(1, 2);
  int done = 0;
  for (int iter = 0; iter < 400 && done < 150; iter++) {
    DwCase c{1 + iter % 2, 1 + iter % 5, dim(rng), dim(rng),      m(rng),       k(rng),
             k(rng),       s(rng),       s(rng),   d(rng),        d(rng),       p(rng),
             p(rng),       p(rng),       p(rng),   iter % 2 == 0, iter % 3 == 0};
    if (c.H + c.PT + c.PB < (c.KH - 1) * c.DH + 1 || c.W + c.PL + c.PR < (c.KW - 1) * c.DW + 1)
      continue;
    checkCase(c, rng);
    done++;
  }
  EXPECT_GE(done, 100);
}

// ----------------------------------------------------------------------------
// Unpacked SGEMM path (alpha 1, row-major A and B, K <= NPUCC_GEMM_KC)
// ----------------------------------------------------------------------------

TEST(KernelsGemmDirect, CoreMatchesNaiveOverSmallShapes) {
  std::mt19937 rng(34);
  int checked = 0;
  for (int M : {1, 3, 4, 5, 8, 13, 37})
    for (int N : {2, 7, 8, 9, 36, 125})
      for (int K : {1, 3, 32, 256, 257}) { // 257: the packed path, for contrast
        for (int variant = 0; variant < 4; variant++) {
          bool accumulate = variant & 1, withBias = variant & 2;
          int ldc = N + 5, rsb = N + 3; // padding in C (untouched) and between B rows
          auto A = randomVec(size_t(M) * K, rng), B = randomVec(size_t(K) * rsb, rng);
          auto bias = randomVec(size_t(M), rng), C = randomVec(size_t(M) * ldc, rng);
          float lo = variant == 3 ? -1.0f : -FLT_MAX, hi = variant == 3 ? 1.5f : FLT_MAX;
          std::vector<double> ref(C.size());
          for (int i = 0; i < M; i++)
            for (int j = 0; j < ldc; j++) {
              size_t o = size_t(i) * ldc + j;
              if (j >= N) {
                ref[o] = C[o];
                continue;
              }
              double sum = (accumulate ? C[o] : 0.0) + (withBias ? bias[size_t(i)] : 0.0);
              for (int kk = 0; kk < K; kk++)
                sum += double(A[size_t(i) * K + kk]) * B[size_t(kk) * rsb + j];
              ref[o] = std::min(std::max(sum, double(lo)), double(hi));
            }
          npucc_gemm_bsrc bs{};
          bs.data = B.data();
          bs.rs = rsb;
          bs.cs = 1;
          NanScratch s(npucc_sgemm_scratch_floats(M, N, K));
          npucc_sgemm_core_f32(M, N, K, 1.0f, A.data(), K, 1, &bs, C.data(), ldc, accumulate,
                               withBias ? bias.data() : nullptr, lo, hi, s.data());
          std::string what = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) +
                             " variant " + std::to_string(variant);
          expectClose(C, ref, 2e-5, what);
          EXPECT_TRUE(s.intact()) << what;
          checked++;
        }
      }
  EXPECT_EQ(checked, 7 * 6 * 5 * 4);
}

TEST(KernelsGemmDirect, MatMulAndGemmUseIt) {
  // MatMul (row-major, alpha 1) and Gemm without transposes reach the unpacked path.
  std::mt19937 rng(35);
  const int M = 10, N = 12, K = 20;
  auto A = randomVec(size_t(M) * K, rng), B = randomVec(size_t(K) * N, rng);
  auto Cb = randomVec(size_t(N), rng);
  std::vector<double> mm(size_t(M) * N), gm(size_t(M) * N);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double sum = 0;
      for (int kk = 0; kk < K; kk++)
        sum += double(A[size_t(i) * K + kk]) * B[size_t(kk) * N + j];
      mm[size_t(i) * N + j] = sum;
      gm[size_t(i) * N + j] = sum + 0.5 * Cb[size_t(j)];
    }
  NanScratch s(npucc_sgemm_scratch_floats(M, N, K));
  std::vector<float> Y(size_t(M) * N, -999.0f);
  int32_t off0 = 0;
  npucc_matmul_f32(A.data(), B.data(), Y.data(), s.data(), 1, M, N, K, -FLT_MAX, FLT_MAX, &off0,
                   &off0);
  expectClose(Y, mm, 2e-5, "matmul");
  std::fill(Y.begin(), Y.end(), -999.0f);
  npucc_gemm_f32(A.data(), B.data(), Cb.data(), Y.data(), s.data(), M, N, K, 0, 0, 1.0f, 0.5f, 2,
                 -FLT_MAX, FLT_MAX);
  expectClose(Y, gm, 2e-5, "gemm");
  EXPECT_TRUE(s.intact());
}

} // namespace
