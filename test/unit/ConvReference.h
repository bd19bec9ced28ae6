//===- ConvReference.h - Shared float Conv test helpers ---------*- C++ -*-===//
//
// For the float convolution tests (kernels_conv_test.cpp,
// kernels_conv_workspace_test.cpp, kernels_dwconv_test.cpp): random data, a
// convolution case (NCHW, groups, strides, dilations, asymmetric pads), its
// output size, a readable name, and the double-precision reference.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace npucc::test {

/// n floats uniform in [lo, hi) from rng.
inline std::vector<float> randomVec(size_t n, std::mt19937 &rng, float lo = -1.0f,
                                    float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

struct ConvCase {
  int N, C, H, W, M, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR, G;
  bool bias, clamp;
};

inline int convOut(int in, int k, int s, int d, int p0, int p1) {
  return (in + p0 + p1 - ((k - 1) * d + 1)) / s + 1;
}

inline std::string convName(const ConvCase &c) {
  char buf[256];
  snprintf(buf, sizeof buf, "N%d C%d %dx%d M%d k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d g%d b%d c%d", c.N,
           c.C, c.H, c.W, c.M, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW, c.PT, c.PL, c.PB, c.PR, c.G,
           c.bias, c.clamp);
  return buf;
}

/// The convolution in double precision: bias (may be null) plus the taps inside the
/// image, clamped to [lo, hi].
inline std::vector<double> naiveConv(const ConvCase &c, int OH, int OW, const std::vector<float> &X,
                                     const std::vector<float> &Wt, const float *bias, float lo,
                                     float hi) {
  int cg = c.C / c.G, mg = c.M / c.G;
  std::vector<double> Y(size_t(c.N) * c.M * OH * OW);
  for (int n = 0; n < c.N; n++)
    for (int m = 0; m < c.M; m++)
      for (int oy = 0; oy < OH; oy++)
        for (int ox = 0; ox < OW; ox++) {
          double s = bias ? bias[m] : 0.0;
          for (int ci = 0; ci < cg; ci++)
            for (int ky = 0; ky < c.KH; ky++)
              for (int kx = 0; kx < c.KW; kx++) {
                int iy = oy * c.SH - c.PT + ky * c.DH, ix = ox * c.SW - c.PL + kx * c.DW;
                if (iy < 0 || iy >= c.H || ix < 0 || ix >= c.W)
                  continue;
                int ch = m / mg * cg + ci;
                s += double(X[((size_t(n) * c.C + ch) * c.H + iy) * c.W + ix]) *
                     Wt[((size_t(m) * cg + ci) * c.KH + ky) * c.KW + kx];
              }
          Y[((size_t(n) * c.M + m) * OH + oy) * OW + ox] =
              std::min(std::max(s, double(lo)), double(hi));
        }
  return Y;
}

} // namespace npucc::test
