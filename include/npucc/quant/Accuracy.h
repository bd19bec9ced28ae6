//===- Accuracy.h - Float vs int8 accuracy report --------------------------===//
//
// Runs a float graph and its quantized twin over the same samples with the
// reference interpreters (interp::runGraph: typed int8 nodes are evaluated by
// the integer interpreter) and compares them, per graph output and, when
// asked, per layer (every value a node of the quantized graph produces whose
// name, or for the quantizer's "<name>_quantized" whose <name>, is a
// computed value of the float graph; int8 values are dequantized with their
// quant params first). Metrics, over all samples together
// (docs/quantization.md, "Accuracy report"):
//   SNR dB  = 10 log10(sum ref^2 / sum (ref - q)^2)   (+inf when no error)
//   cosine  = sum ref q / (|ref| |q|)
//   max abs = max |ref - q|
//   top-1   = fraction of rows whose argmax over the last axis agrees, for
//             classifier-like values (rank 2, [N, C] with C >= 2).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/quant/Samples.h"
#include "npucc/support/Result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace npucc::quant {

struct AccuracyOptions {
  bool perLayer = false;     // --report-layers
  std::string samplesOrigin; // "calibration samples (no --eval given)", "--eval DIR", ...
  std::vector<std::string> floatOps; // ops left in float, as "name (Op)"
};

/// Running float-vs-quantized statistics of one tensor over many samples.
class MetricAccumulator {
public:
  /// Adds one sample: `ref` (float) and `q` (dequantized) of equal size.
  /// `rowLen` > 0 marks a classifier value: argmax is taken per row of
  /// `rowLen` contiguous elements (the last axis). Ties: first maximum.
  void add(const std::vector<double> &ref, const std::vector<double> &q, int64_t rowLen = 0);

  /// 10 log10(sum ref^2 / sum err^2); +inf when the error is 0 (even when
  /// the reference is 0 too), -inf when the reference is 0 but not the error.
  double snrDb() const;
  /// sum ref q / sqrt(sum ref^2 sum q^2); 1 when both are all zero, 0 when
  /// only one of them is.
  double cosine() const;
  double maxAbsError() const { return MaxAbs; }
  int64_t elements() const { return Count; }
  int64_t rows() const { return Rows; }           // classifier rows compared
  int64_t rowsAgreeing() const { return Agree; } // rows whose argmax agrees

private:
  double SumRef2 = 0, SumQ2 = 0, SumErr2 = 0, Dot = 0, MaxAbs = 0;
  int64_t Count = 0, Rows = 0, Agree = 0;
};

/// One row of the report.
struct TensorAccuracy {
  std::string name;     // value name in the float graph
  std::string op;       // producing op in the quantized graph ("input" for graph inputs)
  std::string qtype;    // dtype of the value in the quantized graph ("i8", "f32", ...)
  ir::Shape shape;
  int64_t elements = 0; // compared elements, all samples
  double snrDb = 0;
  double cosine = 0;
  double maxAbsError = 0;
  bool classifier = false; // top-1 is meaningful
  int64_t top1Rows = 0;    // rows compared (N per sample x samples)
  int64_t top1Agree = 0;
  double top1() const { return top1Rows ? double(top1Agree) / double(top1Rows) : 0.0; }
};

struct AccuracyReport {
  std::string samplesOrigin;
  std::vector<std::string> sampleNames; // Sample::origin of each sample, in order
  std::vector<TensorAccuracy> outputs;
  bool perLayer = false;
  std::vector<TensorAccuracy> layers;  // in the quantized graph's node order
  std::vector<std::string> skipped;    // "name: why" for same-name values not compared
  std::vector<std::string> floatOps;
  /// Quantized for a target whose requantizer constrains the parameters:
  /// what the constraints changed ("node (Op): per-tensor weights (why)")
  /// and the outputs' accuracy with the same calibration but without them.
  std::string constrainedBy; // the target's name ("" when unconstrained)
  std::vector<std::string> constraints;
  std::vector<TensorAccuracy> unconstrainedOutputs;
};

/// Classifier rule: rank 2, [N, C] with C >= 2.
bool isClassifierShape(const ir::Shape &s);

/// Quant params that give `v` its real value: v->quant, else (for an integer
/// value) those of the QuantizeLinear producing it, looking through
/// same-dtype Cast and Identity nodes (the QDQ form of pre-quantized models).
std::optional<ir::QuantParams> realValueParams(const ir::Value &v);

/// The real values of `t`: floats as they are, integers as
/// scale[c] * (q - zp[c]) (c along q->axis when per channel). Integers
/// without params are an error.
Result<std::vector<double>> dequantize(const ir::Tensor &t, const ir::QuantParams *q);

/// Compares `quantGraph` against `floatGraph` over `samples` (inputs by graph
/// input name; a float sample feeding an integer quantized-graph input is
/// quantized with that input's params).
Result<AccuracyReport> measureAccuracy(const ir::Graph &floatGraph, const ir::Graph &quantGraph,
                                       const std::vector<Sample> &samples,
                                       const AccuracyOptions &opts);

/// "name (Op)" of each node of a quantized graph that computes in float
/// (a float output, not a typed integer node, not Quantize/DequantizeLinear).
std::vector<std::string> listFloatOps(const ir::Graph &quantGraph);

/// Fixed-width text table (deterministic), ending in a newline.
std::string formatReport(const AccuracyReport &r);

/// The report as JSON text (non-finite SNRs as the strings "inf"/"-inf").
std::string reportJson(const AccuracyReport &r);

} // namespace npucc::quant
