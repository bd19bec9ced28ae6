//===- kernels_pool_edges_test.cpp - Pool kernels at their edges ----------===//
//
// Issue 13: int8 AveragePool with count_include_pad=1 was only tested with
// equal pads, so swapping the bottom and right pads in the kernel survived.
// Here every combination of unequal top/left/bottom/right pads, strides,
// ceil-mode extra rows/columns and non-square images and kernels, and 1-D
// pools (H = 1 or W = 1), is compared with a tap-by-tap reference that counts
// the window's taps inside the padded image one at a time and requantizes
// with the 128-bit reference of RequantReference.h (not npucc_requant.h).
// The float AveragePool kernel gets the same treatment.
//
//===----------------------------------------------------------------------===//
#include "RequantReference.h"

#include <gtest/gtest.h>

#include "npucc/quant/Multiplier.h"

#include <cmath>
#include <random>
#include <sstream>
#include <vector>

extern "C" {
#include "../../runtime/kernels/npucc_pool.h"
#include "../../runtime/kernels/npucc_pool_s8.h"
}

namespace {

using npucc::quant::quantizeMultiplier;
namespace ref = npucc::testref;

struct PoolCase {
  int32_t H, W, KH, KW, SH, SW, PT, PL, PB, PR;
  bool ceil;
  std::string str() const {
    std::ostringstream s;
    s << "H=" << H << " W=" << W << " K=" << KH << "x" << KW << " S=" << SH << "x" << SW
      << " pads t/l/b/r=" << PT << "/" << PL << "/" << PB << "/" << PR << " ceil=" << ceil;
    return s.str();
  }
  // ONNX output size; with ceil_mode the last window must start inside the
  // image or the leading pad (as ONNX Runtime and PyTorch require).
  static int32_t outDim(int32_t in, int32_t k, int32_t s, int32_t p0, int32_t p1, bool ceil) {
    int32_t span = in + p0 + p1 - k;
    int32_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
    if (ceil && (o - 1) * s >= in + p0)
      --o;
    return o;
  }
  int32_t OH() const { return outDim(H, KH, SH, PT, PB, ceil); }
  int32_t OW() const { return outDim(W, KW, SW, PL, PR, ceil); }
};

/// Taps of the window at (oy, ox) inside the image and inside the padded image.
void countTaps(const PoolCase &c, int32_t oy, int32_t ox, int32_t &inImage, int32_t &inPadded) {
  inImage = inPadded = 0;
  for (int32_t ky = 0; ky < c.KH; ++ky)
    for (int32_t kx = 0; kx < c.KW; ++kx) {
      int32_t iy = oy * c.SH - c.PT + ky, ix = ox * c.SW - c.PL + kx;
      if (iy >= 0 && iy < c.H && ix >= 0 && ix < c.W)
        ++inImage;
      if (iy >= -c.PT && iy < c.H + c.PB && ix >= -c.PL && ix < c.W + c.PR)
        ++inPadded;
    }
}

std::vector<PoolCase> cases() {
  std::vector<PoolCase> v;
  // 2-D: every pad combination in 0..2 on a 5x6 image, 3x3 (and 2x3) windows, strides 1-2.
  for (int32_t pt = 0; pt <= 2; ++pt)
    for (int32_t pl = 0; pl <= 2; ++pl)
      for (int32_t pb = 0; pb <= 2; ++pb)
        for (int32_t pr = 0; pr <= 2; ++pr)
          for (int32_t s : {1, 2})
            for (bool ceil : {false, true}) {
              v.push_back({5, 6, 3, 3, s, s, pt, pl, pb, pr, ceil});
              v.push_back({6, 5, 2, 3, s, 3 - s, pt, pl, pb, pr, ceil});
            }
  // Windows as wide as the image (whole rows, one run: a global average at K = H x W) and
  // one narrower, with and without side pads.
  for (int32_t pl = 0; pl <= 1; ++pl)
    for (int32_t pr = 0; pr <= 1; ++pr)
      for (int32_t dk = 0; dk <= 1; ++dk) {
        v.push_back({4, 5, 4, 5 - dk, 1, 1, 0, pl, 0, pr, false});
        v.push_back({7, 9, 3, 9 - dk, 2, 1, 1, pl, 0, pr, false});
      }
  // 1-D along W (H = 1, KH = 1) and along H (W = 1, KW = 1), asymmetric pads.
  for (int32_t p0 = 0; p0 <= 2; ++p0)
    for (int32_t p1 = 0; p1 <= 2; ++p1)
      for (int32_t k : {2, 3})
        for (int32_t s : {1, 2, 3})
          for (bool ceil : {false, true}) {
            v.push_back({1, 9, 1, k, 1, s, 0, p0, 0, p1, ceil});
            v.push_back({8, 1, k, 1, s, 1, p0, 0, p1, 0, ceil});
          }
  return v;
}

std::mt19937 &rng() {
  static std::mt19937 r(1313);
  return r;
}

TEST(PoolEdges, AveragePoolS8AsymmetricPadsAnd1D) {
  int checked = 0, differing = 0; // windows where the two counts differ
  for (const PoolCase &c : cases()) {
    int32_t OH = c.OH(), OW = c.OW();
    if (OH <= 0 || OW <= 0)
      continue;
    const int32_t NC = 2;
    std::vector<int8_t> x(static_cast<size_t>(NC * c.H * c.W));
    for (auto &e : x)
      e = static_cast<int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng()));
    for (int32_t cip : {0, 1}) {
      int32_t zx = cip ? 17 : -128, zy = cip ? -5 : 127;
      std::vector<int32_t> mult(static_cast<size_t>(c.KH * c.KW + 1), 0), shift(mult.size(), 0);
      for (int32_t n = 1; n <= c.KH * c.KW; ++n) {
        auto q = quantizeMultiplier(0.7 / n);
        mult[static_cast<size_t>(n)] = q.mult;
        shift[static_cast<size_t>(n)] = q.shift;
      }
      std::vector<int8_t> got(static_cast<size_t>(NC * OH * OW), 99);
      npucc_avgpool2d_s8(x.data(), got.data(), NC, c.H, c.W, OH, OW, c.KH, c.KW, c.SH, c.SW,
                         c.PT, c.PL, c.PB, c.PR, cip, zx, zy, mult.data(), shift.data());
      for (int32_t p = 0; p < NC; ++p)
        for (int32_t oy = 0; oy < OH; ++oy)
          for (int32_t ox = 0; ox < OW; ++ox) {
            int32_t acc = 0, inImage, inPadded;
            countTaps(c, oy, ox, inImage, inPadded);
            for (int32_t ky = 0; ky < c.KH; ++ky)
              for (int32_t kx = 0; kx < c.KW; ++kx) {
                int32_t iy = oy * c.SH - c.PT + ky, ix = ox * c.SW - c.PL + kx;
                if (iy >= 0 && iy < c.H && ix >= 0 && ix < c.W)
                  acc += x[static_cast<size_t>((p * c.H + iy) * c.W + ix)] - zx;
              }
            int32_t cnt = cip ? inPadded : inImage;
            differing += cip && inPadded != inImage;
            int8_t want = cnt > 0 ? ref::requantI8(acc, mult[static_cast<size_t>(cnt)],
                                                   shift[static_cast<size_t>(cnt)], zy, -128, 127)
                                  : static_cast<int8_t>(ref::clampOut(zy, -128, 127));
            ASSERT_EQ(int(got[static_cast<size_t>((p * OH + oy) * OW + ox)]), int(want))
                << c.str() << " count_include_pad=" << cip << " at (" << oy << "," << ox
                << ") taps in image " << inImage << ", in padded image " << inPadded;
            ++checked;
          }
    }
  }
  EXPECT_GT(checked, 10000);
  EXPECT_GT(differing, 1000); // count_include_pad really changes the count in many windows
}

TEST(PoolEdges, AveragePoolS8PadSwapChangesTheAnswer) {
  // The planted bug of issue 13 (bottom and right pads swapped) must change at
  // least one output of this case; a test that could not tell would be useless.
  PoolCase c{5, 6, 3, 3, 2, 2, 0, 1, 1, 0, true};
  int32_t OH = c.OH(), OW = c.OW();
  std::vector<int8_t> x(static_cast<size_t>(c.H * c.W), 100);
  std::vector<int32_t> mult(10), shift(10, 0);
  for (int32_t n = 1; n <= 9; ++n) {
    auto q = quantizeMultiplier(1.0 / n);
    mult[static_cast<size_t>(n)] = q.mult;
    shift[static_cast<size_t>(n)] = q.shift;
  }
  std::vector<int8_t> a(static_cast<size_t>(OH * OW)), b(a.size());
  npucc_avgpool2d_s8(x.data(), a.data(), 1, c.H, c.W, OH, OW, 3, 3, 2, 2, c.PT, c.PL, c.PB, c.PR,
                     1, 0, 0, mult.data(), shift.data());
  npucc_avgpool2d_s8(x.data(), b.data(), 1, c.H, c.W, OH, OW, 3, 3, 2, 2, c.PT, c.PL, c.PR, c.PB,
                     1, 0, 0, mult.data(), shift.data());
  EXPECT_NE(a, b);
  // Bottom-right window: rows 4..6 (pad row 5 counted, row 6 past it), cols 3..5:
  // 2 x 3 = 6 padded taps, 3 real ones of value 100 -> 50.
  EXPECT_EQ(int(a.back()), 50);
}

TEST(PoolEdges, AveragePoolF32AsymmetricPadsAnd1D) {
  for (const PoolCase &c : cases()) {
    int32_t OH = c.OH(), OW = c.OW();
    if (OH <= 0 || OW <= 0)
      continue;
    std::vector<float> x(static_cast<size_t>(c.H * c.W));
    for (auto &e : x)
      e = std::uniform_real_distribution<float>(-4.0f, 4.0f)(rng());
    for (int32_t cip : {0, 1}) {
      std::vector<float> got(static_cast<size_t>(OH * OW), -1e30f);
      npucc_avgpool2d_f32(x.data(), got.data(), 1, c.H, c.W, OH, OW, c.KH, c.KW, c.SH, c.SW, 1,
                          1, c.PT, c.PL, c.PB, c.PR, cip);
      for (int32_t oy = 0; oy < OH; ++oy)
        for (int32_t ox = 0; ox < OW; ++ox) {
          double sum = 0;
          int32_t inImage, inPadded;
          countTaps(c, oy, ox, inImage, inPadded);
          for (int32_t ky = 0; ky < c.KH; ++ky)
            for (int32_t kx = 0; kx < c.KW; ++kx) {
              int32_t iy = oy * c.SH - c.PT + ky, ix = ox * c.SW - c.PL + kx;
              if (iy >= 0 && iy < c.H && ix >= 0 && ix < c.W)
                sum += x[static_cast<size_t>(iy * c.W + ix)];
            }
          int32_t cnt = cip ? inPadded : inImage;
          double want = cnt > 0 ? sum / cnt : 0.0;
          ASSERT_NEAR(got[static_cast<size_t>(oy * OW + ox)], want, 1e-5)
              << c.str() << " count_include_pad=" << cip << " at (" << oy << "," << ox << ")";
        }
    }
  }
}

} // namespace
