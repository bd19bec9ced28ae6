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

} // namespace

Range computeRange(const ValueStats &s, CalibMethod m, double percentile) {
  Range r{static_cast<float>(s.min), static_cast<float>(s.max)};
  // Too few values for a histogram method (e.g. the logits of a classifier
  // over a few dozen samples): min/max.
  if (m == CalibMethod::MinMax || s.hist.total() < MinHistogramValues)
    return r;
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
  for (const auto &kv : stats)
    r[kv.first] = computeRange(kv.second, m, percentile);
  return r;
}

} // namespace npucc::quant
