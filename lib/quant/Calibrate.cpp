//===- Calibrate.cpp - Per-value statistics over calibration samples -------===//
//
// Runs the float graph once per sample (through the caller's evaluator) and
// accumulates min/max and a growing symmetric histogram for every f32
// non-constant value, and per-channel (axis 1) sums and largest magnitudes of
// values of rank >= 3. Draws a progress bar on the given stream.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/Calibrate.h"

#include <algorithm>
#include <cmath>

namespace npucc::quant {

using namespace ir;

void Histogram::grow(double absMax) {
  if (Limit <= 0) {
    Limit = absMax > 0 ? absMax * (1.0 + 1e-6) : 1e-12;
    Bins.assign(NumBins, 0.0);
    return;
  }
  while (absMax >= Limit) {
    // Old bin i covers [-L + i w, ...) = new bin (N/2 + i) / 2 at width 2w.
    std::vector<double> nb(NumBins, 0.0);
    for (int i = 0; i < NumBins; ++i)
      nb[(NumBins / 2 + i) / 2] += Bins[i];
    Bins.swap(nb);
    Limit *= 2;
  }
}

void Histogram::add(const float *x, int64_t n) {
  double amax = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(x[i]))
      amax = std::max(amax, std::fabs(static_cast<double>(x[i])));
  if (Limit <= 0 || amax >= Limit)
    grow(amax);
  double scale = NumBins / (2.0 * Limit);
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]))
      continue;
    int b = static_cast<int>(std::floor((x[i] + Limit) * scale));
    Bins[std::clamp(b, 0, NumBins - 1)] += 1.0;
    Total += 1.0;
  }
}

namespace {

void drawProgress(const CalibOptions &o, size_t done, size_t total) {
  if (!o.progress)
    return;
  std::ostream &os = *o.progress;
  if (o.progressTty) {
    const int width = 30;
    int fill = total ? static_cast<int>(width * done / total) : width;
    os << "\rcalibrating [" << std::string(static_cast<size_t>(fill), '#')
       << std::string(static_cast<size_t>(width - fill), '.') << "] " << done << "/" << total;
    if (done == total)
      os << "\n";
    os.flush();
    return;
  }
  // Plain lines: about every 10% and at the end.
  size_t step = std::max<size_t>(1, total / 10);
  if (done == total || done % step == 0)
    os << "calibrating: " << done << "/" << total << " samples\n";
}

} // namespace

Result<std::map<std::string, ValueStats>> collectStats(const Graph &g,
                                                       const std::vector<Sample> &samples,
                                                       const GraphEvaluator &eval,
                                                       const CalibOptions &o) {
  std::map<std::string, ValueStats> stats;
  std::vector<const Value *> tracked;
  for (const auto &v : g.values())
    if (v->dtype == DType::F32 && !v->isConstant())
      tracked.push_back(v.get());
  drawProgress(o, 0, samples.size());
  for (size_t si = 0; si < samples.size(); ++si) {
    std::map<std::string, Tensor> all;
    Status s = eval(g, samples[si].inputs, all);
    if (!s)
      return std::move(s.error().note("while calibrating on sample " + samples[si].origin));
    for (const auto &kv : samples[si].inputs)
      all.emplace(kv.first, kv.second);
    for (const Value *v : tracked) {
      auto it = all.find(v->name);
      if (it == all.end() || it->second.dtype() != DType::F32)
        continue;
      const Tensor &t = it->second;
      ValueStats &st = stats[v->name];
      const float *x = t.data<float>();
      for (int64_t i = 0; i < t.numElements(); ++i) {
        if (!std::isfinite(x[i]))
          continue;
        if (!st.seen) {
          st.min = st.max = x[i];
          st.seen = true;
        }
        st.min = std::min(st.min, static_cast<double>(x[i]));
        st.max = std::max(st.max, static_cast<double>(x[i]));
      }
      st.hist.add(x, t.numElements());
      const Shape &sh = t.shape();
      if (sh.size() >= 3 && sh[1] > 0) {
        int64_t ch = sh[1], inner = t.numElements() / (sh[0] * ch);
        st.channelSum.resize(static_cast<size_t>(ch), 0.0);
        st.channelAbsMax.resize(static_cast<size_t>(ch), 0.0);
        for (int64_t i = 0; i < t.numElements(); ++i)
          if (std::isfinite(x[i])) {
            size_t c = static_cast<size_t>((i / inner) % ch);
            st.channelSum[c] += x[i];
            st.channelAbsMax[c] = std::max(st.channelAbsMax[c], std::fabs(double(x[i])));
          }
        st.perChannel += static_cast<double>(sh[0] * inner);
      }
    }
    drawProgress(o, si + 1, samples.size());
  }
  for (auto it = stats.begin(); it != stats.end();)
    it = it->second.seen ? std::next(it) : stats.erase(it);
  return stats;
}

} // namespace npucc::quant
