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
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/quant/Calibrate.h"
#include "npucc/support/Result.h"

#include <map>
#include <string>
#include <vector>

namespace npucc::quant {

/// int8 asymmetric per-tensor parameters covering `r` (and 0).
ir::QuantParams activationParams(const Range &r);

struct QdqStats {
  int quantizedOps = 0;              // ops that got Q/DQ around them
  std::vector<std::string> floatOps; // "name (Op)" of the ops left float
};

/// In place. Values without a range (not in `ranges`) are not quantized.
Result<QdqStats> insertQdq(ir::Graph &g, const std::map<std::string, Range> &ranges);

/// Ops of a graph after fold-qdq that still compute in float (everything but
/// typed int8 ops and the Q/DQ boundaries), as "name (Op)".
std::vector<std::string> floatOpsOf(const ir::Graph &g);

} // namespace npucc::quant
