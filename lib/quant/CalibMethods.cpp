//===- CalibMethods.cpp - Ranges from statistics: minmax, percentile, KL ---===//
//
// minmax: [min, max]. percentile p: the values below which (100 - p)% and p%
// of the samples fall, read off the histogram (bin edges), within [min, max].
// entropy: TensorRT's KL-divergence threshold search on the |x| histogram:
// for each candidate threshold T (bin i), P = the histogram up to i with the
// clipped tail added to its last bin, Q = P's bins merged into L levels and
// spread back uniformly over P's non-empty bins; T minimizes KL(P || Q).
// L = 128 for signed data (one side of int8), 256 for data >= 0. The first
// |x| bin (the zeros) is left out. Values seen fewer than 4096 times (all
// samples together) use minmax whatever the method.
// mse: the range minimizing the squared int8 quantize-dequantize error of
// the histogram's values (clipping and rounding), found by coordinate
// descent over 128 candidates per end.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/Calibrate.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace npucc::quant {

std::optional<CalibMethod> parseCalibMethod(const std::string &name) {
  if (name == "minmax")
    return CalibMethod::MinMax;
  if (name == "percentile")
    return CalibMethod::Percentile;
  if (name == "entropy" || name == "kl")
    return CalibMethod::Entropy;
  if (name == "mse")
    return CalibMethod::Mse;
  return std::nullopt;
}

const char *calibMethodName(CalibMethod m) {
  switch (m) {
  case CalibMethod::MinMax:
    return "minmax";
  case CalibMethod::Percentile:
    return "percentile";
  case CalibMethod::Entropy:
    return "entropy";
  case CalibMethod::Mse:
    return "mse";
  }
  return "?";
}

namespace {

constexpr double MinHistogramValues = 4096;

/// Smallest x such that a fraction `q` of the histogram mass lies below x.
double quantile(const Histogram &h, double q, bool upper) {
  const auto &b = h.bins();
  double target = q * h.total(), acc = 0;
  for (int i = 0; i < Histogram::NumBins; ++i) {
    acc += b[i];
    if (acc >= target && acc > 0)
      return upper ? h.lowerEdge(i + 1) : h.lowerEdge(i);
  }
  return h.lowerEdge(Histogram::NumBins);
}

double klDivergence(const std::vector<double> &p, const std::vector<double> &q) {
  double sp = 0, sq = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    sp += p[i];
    sq += q[i];
  }
  if (sp <= 0 || sq <= 0)
    return std::numeric_limits<double>::infinity();
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0)
      continue;
    double pi = p[i] / sp, qi = q[i] / sq;
    if (qi <= 0)
      qi = 1e-12; // a level that lost all its mass: heavily penalized
    kl += pi * std::log(pi / qi);
  }
  return kl;
}

/// |x| threshold (TensorRT's entropy calibration).
double entropyThreshold(const Histogram &h, int levels) {
  const int half = Histogram::NumBins / 2;
  const auto &b = h.bins();
  std::vector<double> absHist(half, 0.0);
  for (int k = 0; k < half; ++k)
    absHist[k] = b[half + k] + b[half - 1 - k];
  // The bin holding the exact zeros (Relu outputs, padding) would dominate
  // both distributions; it is left out, as ncnn's calibrator skips zeros.
  absHist[0] = 0;
  int last = half;
  while (last > 0 && absHist[last - 1] == 0)
    --last;
  if (last <= levels)
    return h.limit() * last / half;
  double bestKl = std::numeric_limits<double>::infinity();
  int best = last;
  std::vector<double> p, q;
  for (int i = levels; i <= last; ++i) {
    p.assign(absHist.begin(), absHist.begin() + i);
    double tail = 0;
    for (int k = i; k < last; ++k)
      tail += absHist[k];
    p[i - 1] += tail;
    // Quantize the unclipped bins [0, i) into `levels` chunks.
    q.assign(static_cast<size_t>(i), 0.0);
    for (int j = 0; j < levels; ++j) {
      int s = static_cast<int>(static_cast<int64_t>(j) * i / levels);
      int e = static_cast<int>(static_cast<int64_t>(j + 1) * i / levels);
      double sum = 0;
      int nonZero = 0;
      for (int k = s; k < e; ++k) {
        sum += absHist[k];
        nonZero += absHist[k] != 0;
      }
      for (int k = s; k < e; ++k)
        if (absHist[k] != 0)
          q[k] = sum / nonZero;
    }
    double kl = klDivergence(p, q);
    if (kl < bestKl) {
      bestKl = kl;
      best = i;
    }
  }
  return h.limit() * best / half;
}

/// Expected squared int8 error of the histogram's values (taken at their bin
/// centres) under the parameters of the range [lo, hi] (lo <= 0 <= hi):
/// round to the grid of step s = (hi - lo) / 255, clamp to the 256 levels.
/// The exact rounding error matters: most values of an activation often lie
/// within one step of zero, where the uniform s^2 / 12 model is far off.
double expectedMse(const Histogram &h, double lo, double hi) {
  double s = (hi - lo) / 255.0;
  double zp = std::clamp(std::round(-128.0 - lo / s), -128.0, 127.0);
  double w = 2.0 * h.limit() / Histogram::NumBins, e = 0;
  const auto &b = h.bins();
  for (int i = 0; i < Histogram::NumBins; ++i) {
    if (b[i] == 0)
      continue;
    double x = h.lowerEdge(i) + 0.5 * w;
    double q = std::clamp(std::round(x / s) + zp, -128.0, 127.0);
    double d = x - s * (q - zp);
    e += b[i] * d * d;
  }
  return e;
}

/// Range minimizing expectedMse: lo and hi optimized in turn (coordinate
/// descent from [min, max]), each over 128 candidates between 0 and the
/// observed min / max.
Range mseRange(const ValueStats &st) {
  double lo0 = std::min(0.0, st.min), hi0 = std::max(0.0, st.max);
  if (hi0 - lo0 <= 0 || st.hist.total() <= 0)
    return {static_cast<float>(st.min), static_cast<float>(st.max)};
  const int steps = 128;
  double fa = 1.0, fc = 1.0; // lo = lo0 * fa, hi = hi0 * fc
  double best = expectedMse(st.hist, lo0, hi0);
  for (int iter = 0; iter < 4; ++iter) {
    bool moved = false;
    for (int side = 0; side < 2; ++side) {
      double &f = side == 0 ? fc : fa;
      if ((side == 0 ? hi0 : lo0) == 0)
        continue;
      for (int k = 1; k <= steps; ++k) {
        double t = static_cast<double>(k) / steps;
        double lo = lo0 * (side == 1 ? t : fa), hi = hi0 * (side == 0 ? t : fc);
        if (hi - lo <= 0)
          continue;
        double e = expectedMse(st.hist, lo, hi);
        if (e < best * (1 - 1e-12)) {
          best = e;
          moved |= f != t;
          f = t;
        }
      }
    }
    if (!moved)
      break;
  }
  return {static_cast<float>(st.min < 0 ? lo0 * fa : st.min),
          static_cast<float>(st.max > 0 ? hi0 * fc : st.max)};
}

} // namespace

Range computeRange(const ValueStats &s, CalibMethod m, double percentile) {
  Range r{static_cast<float>(s.min), static_cast<float>(s.max)};
  // Too few values for a histogram method (e.g. the logits of a classifier
  // over a few dozen samples): min/max.
  if (m == CalibMethod::MinMax || s.hist.total() < MinHistogramValues)
    return r;
  if (m == CalibMethod::Mse)
    return mseRange(s);
  if (m == CalibMethod::Percentile) {
    double p = std::clamp(percentile, 50.0, 100.0) / 100.0;
    double lo = quantile(s.hist, 1.0 - p, false), hi = quantile(s.hist, p, true);
    r.min = static_cast<float>(std::clamp(lo, s.min, s.max));
    r.max = static_cast<float>(std::clamp(hi, s.min, s.max));
    return r;
  }
  bool nonNeg = s.min >= 0;
  double t = entropyThreshold(s.hist, nonNeg ? 256 : 128);
  r.min = static_cast<float>(std::max(s.min, -t));
  r.max = static_cast<float>(std::min(s.max, t));
  return r;
}

std::map<std::string, Range> computeRanges(const std::map<std::string, ValueStats> &stats,
                                           CalibMethod m, double percentile) {
  std::map<std::string, Range> r;
  for (const auto &kv : stats) {
    Range &x = r[kv.first] = computeRange(kv.second, m, percentile);
    if (kv.second.perChannel > 0)
      for (double sum : kv.second.channelSum)
        x.channelMean.push_back(static_cast<float>(sum / kv.second.perChannel));
  }
  return r;
}

} // namespace npucc::quant
