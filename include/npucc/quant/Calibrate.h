//===- Calibrate.h - Activation statistics and ranges for int8 quantization -===//
//
// collectStats runs a float graph over calibration samples (through an
// evaluator the caller passes, normally interp::runGraph: lib/quant does not
// link the interpreter) and records, for every float activation value, its
// min/max, a histogram and (rank >= 3) per-channel means. computeRange turns
// those statistics into a quantization range with one of the calibration
// methods (computeRanges also copies the channel means into each Range):
//  - minmax:     [min, max] seen;
//  - percentile: the p-th and (100-p)-th percentiles (outliers clipped);
//  - entropy:    the |x| threshold minimizing KL(P || Q) between the clipped
//                histogram and its 128-level (256 for x >= 0) quantization
//                (TensorRT's method);
//  - mse:        the range minimizing the expected squared int8 error
//                (clipping + rounding) estimated from the histogram.
// See docs/quantization.md, "Calibration".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/quant/Samples.h"
#include "npucc/support/Result.h"

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace npucc::quant {

enum class CalibMethod { MinMax, Percentile, Entropy, Mse };

std::optional<CalibMethod> parseCalibMethod(const std::string &name); // "minmax", ...
const char *calibMethodName(CalibMethod m);

/// Symmetric histogram over [-limit, limit) with a fixed number of bins; the
/// limit doubles (adjacent bins merge) when a larger |x| arrives.
class Histogram {
public:
  static constexpr int NumBins = 4096;
  void add(const float *x, int64_t n);
  double limit() const { return Limit; }
  const std::vector<double> &bins() const { return Bins; }
  double total() const { return Total; }
  /// Bin i covers [lowerEdge(i), lowerEdge(i + 1)).
  double lowerEdge(int i) const { return -Limit + 2.0 * Limit * i / NumBins; }

private:
  void grow(double absMax);
  std::vector<double> Bins;
  double Limit = 0;
  double Total = 0;
};

struct ValueStats {
  double min = 0, max = 0;
  bool seen = false;
  Histogram hist;
  /// Per-channel (axis 1) sums of values of rank >= 3 (NCHW activations) and
  /// the number of values each sum holds; for bias correction.
  std::vector<double> channelSum;
  double perChannel = 0;
  /// Per-channel (axis 1) max |x| of values of rank >= 3; for channel equalization.
  std::vector<double> channelAbsMax;
};

/// Quantization range of one value (real numbers; 0 need not be inside).
struct Range {
  Range() = default;
  Range(float lo, float hi) : min(lo), max(hi) {}
  float min = 0, max = 0;
  std::vector<float> channelMean; // per axis-1 channel (rank >= 3 values), else empty
};

/// Runs a graph: fills `all` with every value (inputs, intermediates, outputs) by name.
using GraphEvaluator =
    std::function<Status(const ir::Graph &, const std::map<std::string, ir::Tensor> &,
                         std::map<std::string, ir::Tensor> &all)>;

struct CalibOptions {
  std::ostream *progress = nullptr; // progress bar (stderr), or none
  bool progressTty = false;         // '\r'-updated bar instead of plain lines
};

/// Statistics of every f32 non-constant value of `g` over the samples.
Result<std::map<std::string, ValueStats>> collectStats(const ir::Graph &g,
                                                       const std::vector<Sample> &samples,
                                                       const GraphEvaluator &eval,
                                                       const CalibOptions &o = {});

/// Range of one value. `percentile` (e.g. 99.99) is used by Percentile only.
Range computeRange(const ValueStats &s, CalibMethod m, double percentile = 99.99);

std::map<std::string, Range> computeRanges(const std::map<std::string, ValueStats> &stats,
                                           CalibMethod m, double percentile = 99.99);

} // namespace npucc::quant
