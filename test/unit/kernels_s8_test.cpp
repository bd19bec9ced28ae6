//===- kernels_s8_test.cpp - int8 kernels vs naive integer references -----===//
//
// Compiles the int8 C kernels into this test (extern "C") and compares each
// with a straightforward loop written here that uses npucc_requant.h only for
// the final requantization step. Random data with extreme zero points (-128,
// 127), saturation, negative accumulators, per-channel scales and weight zero
// points; all comparisons are bit-exact. Their lowering is tested in
// lower_s8_test.cpp.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "npucc/ir/Graph.h"
#include "npucc/lower/QuantLowering.h"
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
I8 randI8(size_t n) {
  I8 v(n);
  for (auto &x : v)
    x = int8_t(rint_(-128, 127));
  return v;
}
int32_t randZp() {
  int k = rint_(0, 3);
  return k == 0 ? -128 : (k == 1 ? 127 : rint_(-128, 127));
}
/// A random multiplier in [2^-14, 4): small ones, near one and left shifts. With
/// NPUCC_RQ_FP32 a float32 value (the multipliers that rounding mode is given).
QuantMultiplier randMult(int32_t rounding = NPUCC_RQ_EXACT) {
  double m = std::pow(2.0, rint_(-1400, 200) / 100.0);
  return quantizeMultiplier(rounding == NPUCC_RQ_FP32 ? double(float(m)) : m);
}

struct ConvCase {
  int32_t N, C, H, W, M, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR, G;
};

void checkConv(const ConvCase &c, bool wzp, int32_t rounding) {
  int32_t OH = (c.H + c.PT + c.PB - ((c.KH - 1) * c.DH + 1)) / c.SH + 1;
  int32_t OW = (c.W + c.PL + c.PR - ((c.KW - 1) * c.DW + 1)) / c.SW + 1;
  int32_t cg = c.C / c.G, mg = c.M / c.G;
  I8 x = randI8(static_cast<size_t>(c.N * c.C * c.H * c.W)), w = randI8(static_cast<size_t>(c.M * cg * c.KH * c.KW));
  I32 bias(static_cast<size_t>(c.M)), zw(static_cast<size_t>(c.M), 0), mult(static_cast<size_t>(c.M)), shift(static_cast<size_t>(c.M));
  for (int32_t m = 0; m < c.M; ++m) {
    bias[static_cast<size_t>(m)] = rint_(-200000, 200000);
    zw[static_cast<size_t>(m)] = wzp ? randZp() : 0;
    QuantMultiplier q = randMult(rounding);
    mult[static_cast<size_t>(m)] = q.mult;
    shift[static_cast<size_t>(m)] = q.shift;
  }
  int32_t zx = randZp(), zy = randZp(), lo = rint_(-128, -20), hi = rint_(20, 127);
  I8 got(static_cast<size_t>(c.N * c.M * OH * OW)), want(got.size());
  I32 scratch(static_cast<size_t>(OH * OW) + 1, 0);
  scratch.back() = 0x5a5a5a5a;
  npucc_conv2d_s8(x.data(), w.data(), bias.data(), got.data(), scratch.data(), c.N, c.C, c.H, c.W,
                  c.M, OH, OW, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW, c.PT, c.PL, c.G, zx, zy, lo, hi,
                  wzp ? zw.data() : nullptr, mult.data(), shift.data(), rounding);
  EXPECT_EQ(scratch.back(), 0x5a5a5a5a);
  for (int32_t n = 0; n < c.N; ++n)
    for (int32_t m = 0; m < c.M; ++m)
      for (int32_t oy = 0; oy < OH; ++oy)
        for (int32_t ox = 0; ox < OW; ++ox) {
          int64_t acc = bias[static_cast<size_t>(m)];
          int32_t g = m / mg;
          for (int32_t ci = 0; ci < cg; ++ci)
            for (int32_t ky = 0; ky < c.KH; ++ky)
              for (int32_t kx = 0; kx < c.KW; ++kx) {
                int32_t iy = oy * c.SH - c.PT + ky * c.DH, ix = ox * c.SW - c.PL + kx * c.DW;
                if (iy < 0 || iy >= c.H || ix < 0 || ix >= c.W)
                  continue;
                int32_t xv = x[static_cast<size_t>(((n * c.C + g * cg + ci) * c.H + iy) * c.W + ix)];
                int32_t wv = w[static_cast<size_t>(((m * cg + ci) * c.KH + ky) * c.KW + kx)];
                acc += int64_t(xv - zx) * (wv - zw[static_cast<size_t>(m)]);
              }
          want[static_cast<size_t>(((n * c.M + m) * OH + oy) * OW + ox)] =
              npucc_requant_i8_r(int32_t(acc), mult[static_cast<size_t>(m)],
                                 shift[static_cast<size_t>(m)], zy, lo, hi, rounding);
        }
  ASSERT_EQ(got, want) << "C=" << c.C << " M=" << c.M << " G=" << c.G << " K=" << c.KH << "x"
                       << c.KW << " S=" << c.SH << " D=" << c.DH << " P=" << c.PT;
}

TEST(KernelsS8, ConvShapes) {
  std::vector<ConvCase> cases = {
      {1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   // regular 3x3 same
      {2, 4, 7, 9, 6, 3, 2, 2, 1, 1, 2, 0, 1, 2, 0, 2},   // grouped, asymmetric
      {1, 8, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8},   // depthwise 3x3
      {1, 8, 10, 10, 8, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 8}, // depthwise stride 2
      {1, 4, 6, 6, 8, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 4},   // depthwise x2, dilated
      {1, 16, 5, 7, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, // pointwise
      {1, 6, 5, 5, 3, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},   // strided 1x1
      {1, 2, 1, 17, 3, 1, 5, 1, 3, 1, 1, 0, 2, 0, 2, 1},  // 1-D
      {1, 3, 4, 4, 2, 5, 5, 1, 1, 1, 1, 3, 3, 3, 3, 1},   // kernel larger than image
  };
  for (const auto &c : cases)
    for (bool wzp : {false, true})
      for (int32_t rounding : {NPUCC_RQ_EXACT, NPUCC_RQ_FP32})
        checkConv(c, wzp, rounding);
}

TEST(KernelsS8, ConvSaturatesAndClamps) {
  // All inputs at -128 with zx = 127: large negative accumulators saturate.
  I8 x(16, -128), w(9 * 2, 127), y(2 * 16);
  I32 bias = {0, -5}, mult(2), shift(2), scratch(16);
  QuantMultiplier q = quantizeMultiplier(0.5);
  for (int i = 0; i < 2; ++i) {
    mult[static_cast<size_t>(i)] = q.mult;
    shift[static_cast<size_t>(i)] = q.shift;
  }
  npucc_conv2d_s8(x.data(), w.data(), bias.data(), y.data(), scratch.data(), 1, 1, 4, 4, 2, 4, 4, 3,
                  3, 1, 1, 1, 1, 1, 1, 1, 127, 0, -100, 100, nullptr, mult.data(), shift.data(),
                  NPUCC_RQ_EXACT);
  for (int8_t v : y)
    EXPECT_EQ(v, -100);
}

void checkGemm(int32_t batch, int32_t M, int32_t N, int32_t K, bool transB, bool perCh,
               bool batchedB, int32_t rounding = NPUCC_RQ_EXACT) {
  I8 a = randI8(static_cast<size_t>(batch * M * K)), b = randI8(static_cast<size_t>((batchedB ? batch : 1) * K * N));
  int32_t per = perCh ? N : 1;
  I32 bias(static_cast<size_t>(N)), zb(static_cast<size_t>(per)), mult(zb.size()), shift(zb.size());
  for (auto &v : bias)
    v = rint_(-100000, 100000);
  for (int32_t j = 0; j < per; ++j) {
    zb[static_cast<size_t>(j)] = randZp();
    QuantMultiplier q = randMult(rounding);
    mult[static_cast<size_t>(j)] = q.mult;
    shift[static_cast<size_t>(j)] = q.shift;
  }
  int32_t za = randZp(), zy = randZp();
  int32_t bBs = batchedB ? K * N : 0, bRs = transB ? 1 : N, bCs = transB ? K : 1;
  I8 got(static_cast<size_t>(batch * M * N)), want(got.size());
  I32 scratch(static_cast<size_t>(N));
  npucc_gemm_s8(a.data(), b.data(), bias.data(), got.data(), scratch.data(), batch, M, N, K, bBs,
                bRs, bCs, za, zy, -128, 127, per, zb.data(), mult.data(), shift.data(), rounding);
  for (int32_t t = 0; t < batch; ++t)
    for (int32_t i = 0; i < M; ++i)
      for (int32_t j = 0; j < N; ++j) {
        int32_t c = perCh ? j : 0;
        int64_t acc = bias[static_cast<size_t>(j)];
        for (int32_t k = 0; k < K; ++k) {
          int32_t bv = transB ? b[static_cast<size_t>(t * bBs + j * K + k)] : b[static_cast<size_t>(t * bBs + k * N + j)];
          acc += int64_t(a[static_cast<size_t>((t * M + i) * K + k)] - za) * (bv - zb[static_cast<size_t>(c)]);
        }
        want[static_cast<size_t>((t * M + i) * N + j)] =
            npucc_requant_i8_r(int32_t(acc), mult[static_cast<size_t>(c)],
                               shift[static_cast<size_t>(c)], zy, -128, 127, rounding);
      }
  ASSERT_EQ(got, want) << "M=" << M << " N=" << N << " K=" << K << " transB=" << transB;
}

TEST(KernelsS8, Gemm) {
  for (bool tb : {false, true})
    for (bool pc : {false, true}) {
      checkGemm(1, 5, 7, 13, tb, pc, false);
      checkGemm(1, 1, 33, 64, tb, pc, false);
      checkGemm(3, 4, 5, 6, tb, pc, true);
      checkGemm(2, 3, 9, 40, tb, pc, true, NPUCC_RQ_FP32);
    }
}

/// Reference broadcasting: output index -> input offsets via their own shapes.
template <typename F>
void checkBinary(const std::vector<int32_t> &ya, const std::vector<int32_t> &sa,
                 const std::vector<int32_t> &sb, bool add, F) {
  size_t rank = ya.size();
  auto count = [](const std::vector<int32_t> &s) {
    size_t n = 1;
    for (int32_t d : s)
      n *= static_cast<size_t>(d);
    return n;
  };
  I8 a = randI8(count(sa)), b = randI8(count(sb)), got(count(ya)), want(got.size());
  I32 astr(rank), bstr(rank);
  int32_t as = 1, bs = 1;
  for (size_t k = rank; k-- > 0;) {
    astr[k] = sa[k] == 1 ? 0 : as;
    bstr[k] = sb[k] == 1 ? 0 : bs;
    as *= sa[k];
    bs *= sb[k];
  }
  int32_t za = randZp(), zb = randZp(), zy = randZp(), lo = rint_(-128, -60), hi = rint_(60, 127);
  npucc::quant::AddParams p = npucc::quant::addParams(0.01 * rint_(1, 50), 0.01 * rint_(1, 50),
                                                      0.002 * rint_(1, 50));
  QuantMultiplier mm = randMult();
  if (add)
    npucc_add_s8(a.data(), b.data(), got.data(), za, zb, p.leftShift, p.a.mult, p.a.shift,
                 p.b.mult, p.b.shift, p.out.mult, p.out.shift, zy, lo, hi, int32_t(rank),
                 ya.data(), astr.data(), bstr.data());
  else
    npucc_mul_s8(a.data(), b.data(), got.data(), za, zb, mm.mult, mm.shift, zy, lo, hi,
                 int32_t(rank), ya.data(), astr.data(), bstr.data());
  for (size_t o = 0; o < got.size(); ++o) {
    size_t rem = o, ia = 0, ib = 0, ma = 1, mb = 1;
    for (size_t k = rank; k-- > 0;) {
      size_t idx = rem % static_cast<size_t>(ya[k]);
      rem /= static_cast<size_t>(ya[k]);
      ia += (sa[k] == 1 ? 0 : idx) * ma;
      ib += (sb[k] == 1 ? 0 : idx) * mb;
      ma *= static_cast<size_t>(sa[k]);
      mb *= static_cast<size_t>(sb[k]);
    }
    want[o] = add ? npucc_add_i8(a[ia], b[ib], za, zb, p.leftShift, p.a.mult, p.a.shift, p.b.mult,
                                 p.b.shift, p.out.mult, p.out.shift, zy, lo, hi)
                  : npucc_requant_i8((a[ia] - za) * (b[ib] - zb), mm.mult, mm.shift, zy, lo, hi);
  }
  ASSERT_EQ(got, want) << (add ? "Add" : "Mul") << " rank " << rank;
}

TEST(KernelsS8, AddMulBroadcast) {
  for (bool add : {true, false}) {
    for (int rep = 0; rep < 3; ++rep) {
      checkBinary({2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}, add, 0);  // same shape
      checkBinary({2, 3, 4, 5}, {2, 3, 4, 5}, {1, 3, 1, 1}, add, 0);  // per channel
      checkBinary({2, 3, 4, 5}, {1, 1, 1, 1}, {2, 3, 4, 5}, add, 0);  // scalar first
      checkBinary({3, 1, 5}, {3, 1, 1}, {1, 1, 5}, add, 0);           // outer product
      checkBinary({2, 3, 4, 5, 2, 3}, {2, 1, 4, 1, 2, 1}, {1, 3, 1, 5, 1, 3}, add, 0);
    }
  }
}

TEST(KernelsS8, RequantRows) {
  I8 x = randI8(3 * 4), y(3 * 10, 7), want = y;
  QuantMultiplier q = randMult();
  int32_t zx = randZp(), zy = randZp();
  npucc_requant_rows_s8(x.data(), y.data(), 3, 4, 10, 5, zx, q.mult, q.shift, zy);
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 4; ++j)
      want[static_cast<size_t>(5 + r * 10 + j)] =
          npucc_requant_i8(x[static_cast<size_t>(r * 4 + j)] - zx, q.mult, q.shift, zy, -128, 127);
  EXPECT_EQ(y, want);
}

TEST(KernelsS8, MaxPool) {
  const int32_t NC = 3, H = 7, W = 6, KH = 3, KW = 2, SH = 2, SW = 2, DH = 1, DW = 2, PT = 1, PL = 1;
  int32_t OH = (H + 2 * PT - ((KH - 1) * DH + 1)) / SH + 1, OW = (W + 2 * PL - 3) / SW + 1;
  I8 x = randI8(static_cast<size_t>(NC * H * W)), got(static_cast<size_t>(NC * OH * OW)), want(got.size());
  npucc_maxpool2d_s8(x.data(), got.data(), NC, H, W, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL);
  for (int32_t p = 0; p < NC; ++p)
    for (int32_t oy = 0; oy < OH; ++oy)
      for (int32_t ox = 0; ox < OW; ++ox) {
        int32_t m = -999;
        for (int32_t ky = 0; ky < KH; ++ky)
          for (int32_t kx = 0; kx < KW; ++kx) {
            int32_t iy = oy * SH - PT + ky * DH, ix = ox * SW - PL + kx * DW;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
              m = std::max<int32_t>(m, x[static_cast<size_t>((p * H + iy) * W + ix)]);
          }
        want[static_cast<size_t>((p * OH + oy) * OW + ox)] = int8_t(m);
      }
  EXPECT_EQ(got, want);
}

TEST(KernelsS8, AveragePoolCountFoldedIntoMultiplier) {
  const int32_t NC = 2, H = 6, W = 7, KH = 3, KW = 3, SH = 2, SW = 2, PT = 1, PL = 1, PB = 1,
                PR = 1;
  int32_t OH = (H + PT + PB - KH) / SH + 1 + 1, OW = (W + PL + PR - KW) / SW + 1; // ceil_mode row
  for (int32_t cip : {0, 1}) {
    double sx = 0.03, sy = 0.02;
    int32_t zx = randZp(), zy = randZp();
    I32 mult(static_cast<size_t>(KH * KW + 1), 0), shift(mult.size(), 0);
    for (int32_t c = 1; c <= KH * KW; ++c) {
      QuantMultiplier q = quantizeMultiplier(sx / (c * sy));
      mult[static_cast<size_t>(c)] = q.mult;
      shift[static_cast<size_t>(c)] = q.shift;
    }
    I8 x = randI8(static_cast<size_t>(NC * H * W)), got(static_cast<size_t>(NC * OH * OW)), want(got.size());
    npucc_avgpool2d_s8(x.data(), got.data(), NC, H, W, OH, OW, KH, KW, SH, SW, PT, PL, PB, PR,
                       cip, zx, zy, mult.data(), shift.data());
    for (int32_t p = 0; p < NC; ++p)
      for (int32_t oy = 0; oy < OH; ++oy)
        for (int32_t ox = 0; ox < OW; ++ox) {
          int32_t acc = 0, cnt = 0;
          for (int32_t ky = 0; ky < KH; ++ky)
            for (int32_t kx = 0; kx < KW; ++kx) {
              int32_t iy = oy * SH - PT + ky, ix = ox * SW - PL + kx;
              bool in = iy >= 0 && iy < H && ix >= 0 && ix < W;
              bool inPadded = iy >= -PT && iy < H + PB && ix >= -PL && ix < W + PR;
              if (in)
                acc += x[static_cast<size_t>((p * H + iy) * W + ix)] - zx;
              if (cip ? inPadded : in)
                cnt++;
            }
          want[static_cast<size_t>((p * OH + oy) * OW + ox)] =
              npucc_requant_i8(acc, mult[static_cast<size_t>(cnt)], shift[static_cast<size_t>(cnt)], zy, -128, 127);
        }
    ASSERT_EQ(got, want) << "count_include_pad=" << cip;
  }
}

TEST(KernelsS8, ReduceMean) {
  for (int32_t inner : {1, 5}) {
    const int32_t outer = 3, red = 49;
    I8 x = randI8(static_cast<size_t>(outer * red * inner)), got(static_cast<size_t>(outer * inner)), want(got.size());
    int32_t zx = randZp(), zy = randZp();
    QuantMultiplier q = quantizeMultiplier(0.05 / (red * 0.01));
    npucc_reduce_mean_s8(x.data(), got.data(), outer, red, inner, zx, zy, q.mult, q.shift);
    for (int32_t o = 0; o < outer; ++o)
      for (int32_t i = 0; i < inner; ++i) {
        int32_t acc = 0;
        for (int32_t r = 0; r < red; ++r)
          acc += x[static_cast<size_t>((o * red + r) * inner + i)] - zx;
        want[static_cast<size_t>(o * inner + i)] = npucc_requant_i8(acc, q.mult, q.shift, zy, -128, 127);
      }
    ASSERT_EQ(got, want);
  }
}

TEST(KernelsS8, LutAndClamp) {
  I8 x = randI8(1000), y(x.size()), c(x.size());
  x[0] = -128;
  x[1] = 127;
  npucc::quant::LutTable t = npucc::quant::buildLut(npucc::quant::LutFunction::Tanh, 0.04, 3,
                                                    1.0 / 128, 0);
  npucc_lut_s8(x.data(), y.data(), int32_t(x.size()), t.data());
  npucc_clamp_s8(x.data(), c.data(), int32_t(x.size()), -7, 42);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(y[i], t[static_cast<size_t>(x[i] + 128)]);
    ASSERT_EQ(c[i], std::min(std::max<int>(x[i], -7), 42));
  }
  npucc_lut_s8(x.data(), x.data(), int32_t(x.size()), t.data()); // in place
  EXPECT_EQ(x, y);
}

TEST(KernelsS8, Softmax) {
  const int32_t outer = 4, axis = 10, inner = 3;
  double sx = 0.1, sy = 1.0 / 256;
  int32_t zy = -128, inv = npucc::quant::softmaxInvScaleQ16(sy);
  auto table = npucc::quant::softmaxExpTable(sx);
  I8 x = randI8(static_cast<size_t>(outer * axis * inner)), got(x.size()), want(x.size());
  for (int32_t j = 0; j < axis; ++j)
    x[static_cast<size_t>(j * inner)] = 127; // a row of equal maxima
  npucc_softmax_s8(x.data(), got.data(), outer, axis, inner, zy, inv, table.data());
  for (int32_t o = 0; o < outer; ++o)
    for (int32_t i = 0; i < inner; ++i) {
      auto at = [&](int32_t j) { return static_cast<size_t>((o * axis + j) * inner + i); };
      int32_t mx = -128;
      for (int32_t j = 0; j < axis; ++j)
        mx = std::max<int32_t>(mx, x[at(j)]);
      int64_t s = 0;
      double fs = 0;
      for (int32_t j = 0; j < axis; ++j) {
        s += table[static_cast<size_t>(mx - x[at(j)])];
        fs += std::exp(sx * (x[at(j)] - mx));
      }
      for (int32_t j = 0; j < axis; ++j) {
        int64_t num = int64_t(table[static_cast<size_t>(mx - x[at(j)])]) * inv;
        int64_t den = s << 16;
        int64_t q = num / den + ((num % den) * 2 >= den ? 1 : 0) + zy; // round half up
        want[at(j)] = int8_t(std::min<int64_t>(127, std::max<int64_t>(-128, q)));
        // And the integer result is within one step of the real softmax.
        double real = std::exp(sx * (x[at(j)] - mx)) / fs / sy + zy;
        EXPECT_NEAR(double(got[at(j)]), std::min(127.0, real), 1.0);
      }
    }
  EXPECT_EQ(got, want);
  EXPECT_EQ(got[0], -128 + 26); // ten equal maxima: 0.1 / (1/256) = 25.6 -> 26
}

TEST(KernelsS8, QuantizeDequantize) {
  std::vector<float> x = {0.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 1000.0f, -1000.0f, NAN, 0.26f,
                          -3.0e38f, 0.74f};
  float s = 1.0f;
  int32_t zp = 0;
  I8 q(x.size());
  npucc_quantize_f32_s8(x.data(), q.data(), 1, 1, int32_t(x.size()), &s, &zp);
  I8 want = {0, 0, 2, 2, 0, -2, 127, -128, 0, 0, -128, 1}; // ties to even, saturation, NaN
  EXPECT_EQ(q, want);
  // Per-channel with extreme zero points, then back to float.
  std::vector<float> xs(2 * 3 * 4), back(xs.size()), scales = {0.1f, 0.02f, 0.5f};
  I32 zps = {-128, 127, 5};
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = float(rint_(-3000, 3000)) / 1000.0f;
  I8 qs(xs.size());
  npucc_quantize_f32_s8(xs.data(), qs.data(), 2, 3, 4, scales.data(), zps.data());
  npucc_dequantize_s8_f32(qs.data(), back.data(), 2, 3, 4, scales.data(), zps.data());
  for (size_t i = 0; i < xs.size(); ++i) {
    size_t c = (i / 4) % 3;
    float r = std::nearbyint(xs[i] / scales[c]) + float(zps[c]);
    int8_t e = int8_t(std::min(127.0f, std::max(-128.0f, r)));
    ASSERT_EQ(qs[i], e) << i;
    ASSERT_EQ(back[i], float(int32_t(e) - zps[c]) * scales[c]);
  }
}

} // namespace
