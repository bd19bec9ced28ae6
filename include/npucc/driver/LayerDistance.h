//===- LayerDistance.h - Per-layer distance of NPU to model arithmetic ----===//
//
// An NPU whose requantization cannot represent the model's exactly (a q31 NPU
// running a node imported with ONNX Runtime's float32 rounding, an fp32_scale
// NPU running a node with exact rounding) computes its own arithmetic; the C
// program, the simulator and the interpreter agree on it bit for bit, and the
// final outputs are compared with the golden data. This measures, per NPU
// layer, how far that arithmetic is from the model's own, in output steps
// (docs/design-issue19.md, phase 7f): the reference interpreter runs the graph
// before the target's rewrites twice, with the NPU's arithmetic and with the
// model's, and each NPU layer's output is compared
// - accumulated: the two runs' outputs of the layer (what the firmware sees);
// - own: the layer evaluated with the NPU's arithmetic on the inputs of the
//   model-arithmetic run (the layer's own contribution, upstream differences
//   removed).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/ir/Tensor.h"
#include "npucc/support/Result.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace npucc::driver {

struct LayerDistance {
  std::string node;       // node name in the graph before the target's rewrites
  std::string npuOp;      // its NPU operation ("conv", "matmul", ...)
  bool changed = false;   // its requantization differs from the model's
  int64_t ownSteps = 0;   // max |step difference| of the layer alone
  int64_t steps = 0;      // max |step difference| accumulated through the network
  int64_t mismatches = 0; // elements of the accumulated comparison that differ
  int64_t elements = 0;   // elements compared (all data sets)
};

/// Accumulates the distances of one data set into `layers` (created on the first call,
/// one entry per `npu` node, in graph order; later calls keep the largest figures).
/// `npuArith` and `modelArith` are clones of one graph (node k of one is node k of the
/// other); `npu` lists the NPU-placed nodes by index with their NPU operation. An NPU
/// layer whose output is not an integer tensor is skipped.
Status accumulateLayerDistances(const ir::Graph &npuArith, const ir::Graph &modelArith,
                                const std::vector<std::pair<size_t, std::string>> &npu,
                                const std::map<std::string, ir::Tensor> &inputs,
                                std::vector<LayerDistance> &layers);

/// Max |a_i - b_i| over integer tensors of one shape and the count of differing
/// elements (-1, 0 when the shapes or types differ).
std::pair<int64_t, int64_t> integerDistance(const ir::Tensor &a, const ir::Tensor &b);

/// The text report: a summary line, then one row per layer that changes the arithmetic
/// or differs (at most `maxRows`, then how many more). `changed` false: no NPU layer
/// changed the arithmetic (nothing was measured; one line says so).
std::string layerDistanceText(const std::vector<LayerDistance> &layers, size_t maxRows,
                              bool changed = true);

/// `npucc check --json`'s "layer_distance": {"rounding_changed", "layers": [{"node",
/// "npu_op", "requant_changed", "own_max_steps", "max_steps", "mismatches", "elements"}]}.
nlohmann::json layerDistanceJson(const std::vector<LayerDistance> &layers, bool changed);

} // namespace npucc::driver
