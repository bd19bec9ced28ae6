//===- InsertQdq.h - Float graph + ranges -> QDQ graph ----------------------===//
//
// Rewrites a float graph (after the float passes) into the standard QDQ form
// of a statically quantized model, following docs/quantization.md: every
// quantizable op gets DequantizeLinear on its data inputs and
// QuantizeLinear -> DequantizeLinear on its output; activations int8
// asymmetric per tensor (from the calibrated ranges), weights int8 symmetric
// per output channel, biases int32 with scale s_in * s_w[c]. Ops without an
// integer form keep float inputs and outputs. The fold-qdq pass then turns the
// result into typed int8 IR exactly as for a pre-quantized model; the QDQ
// graph itself is what `--emit-qdq` writes.
//
// QdqOptions carry what a target accepts (target::quantRules builds them from
// an NPU description): per node, weights per tensor instead of per output
// channel, and power-of-two scales (a shift-only requantizer); power-of-two
// activation scales for the whole graph.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/quant/Calibrate.h"
#include "npucc/support/Result.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace npucc::quant {

/// int8 asymmetric per-tensor parameters covering `r` (and 0); with
/// `powerOfTwo` the scale is the smallest power of two that covers it.
ir::QuantParams activationParams(const Range &r, bool powerOfTwo = false);

/// How the weights of one Conv/Gemm/MatMul are quantized (always int8,
/// symmetric: zero point 0).
struct WeightRule {
  bool perChannel = true;  // one scale per output channel, else one per tensor
  bool powerOfTwo = false; // scales 2^k (the largest that keeps |w| <= 127 * scale)
  /// Why the rule differs from the default, for the report ("" when it does not).
  std::string reason;
  bool isDefault() const { return perChannel && !powerOfTwo; }
};

struct QdqOptions {
  /// The rule for a node's weights; empty: the default rule for every node.
  std::function<WeightRule(const ir::Node &)> weightRule;
  /// Activation scales 2^k (needed when a requantizer shifts only).
  bool powerOfTwoActivations = false;
  bool isDefault() const { return !weightRule && !powerOfTwoActivations; }
};

struct QdqStats {
  int quantizedOps = 0;              // ops that got Q/DQ around them
  std::vector<std::string> floatOps; // "name (Op)" of the ops left float
  /// "name (Op): per-tensor weights (why)" for every node whose weights
  /// QdqOptions::weightRule quantized other than by default.
  std::vector<std::string> constrained;
};

/// In place. Values without a range (not in `ranges`) are not quantized.
Result<QdqStats> insertQdq(ir::Graph &g, const std::map<std::string, Range> &ranges,
                           const QdqOptions &opts = {});

/// Ops of a graph after fold-qdq that still compute in float (everything but
/// typed int8 ops and the Q/DQ boundaries), as "name (Op)".
std::vector<std::string> floatOpsOf(const ir::Graph &g);

} // namespace npucc::quant
