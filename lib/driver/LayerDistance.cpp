//===- LayerDistance.cpp - Per-layer distance of NPU to model arithmetic --===//
//
// Two reference-interpreter runs of the graph before the target's rewrites
// (the NPU's arithmetic and the model's) compared layer by layer; see
// LayerDistance.h.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/LayerDistance.h"

#include "npucc/interp/Interpreter.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace npucc::driver {

std::pair<int64_t, int64_t> integerDistance(const ir::Tensor &a, const ir::Tensor &b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape() || !ir::isInteger(a.dtype()))
    return {-1, 0};
  int64_t worst = 0, differ = 0;
  for (int64_t i = 0, n = a.numElements(); i < n; ++i) {
    int64_t d = std::llabs(a.getInt(i) - b.getInt(i));
    worst = std::max(worst, d);
    differ += d != 0;
  }
  return {worst, differ};
}

namespace {

/// The node's inputs looked up in one run's values (constants from the graph).
std::vector<const ir::Tensor *> inputsOf(const ir::Node &n,
                                         const std::map<std::string, ir::Tensor> &values) {
  std::vector<const ir::Tensor *> in;
  for (const ir::Value *v : n.inputs) {
    if (!v) {
      in.push_back(nullptr);
    } else if (v->isConstant()) {
      in.push_back(v->constant.get());
    } else {
      auto it = values.find(v->name);
      in.push_back(it == values.end() ? nullptr : &it->second);
    }
  }
  return in;
}

} // namespace

Status accumulateLayerDistances(const ir::Graph &npuArith, const ir::Graph &modelArith,
                                const std::vector<std::pair<size_t, std::string>> &npu,
                                const std::map<std::string, ir::Tensor> &inputs,
                                std::vector<LayerDistance> &layers) {
  std::map<std::string, ir::Tensor> npuAll, modelAll;
  if (auto r = interp::runGraph(npuArith, inputs, &npuAll); !r)
    return std::move(r.error());
  if (auto r = interp::runGraph(modelArith, inputs, &modelAll); !r)
    return std::move(r.error());
  const auto &nNodes = npuArith.nodes();
  const auto &mNodes = modelArith.nodes();
  if (nNodes.size() != mNodes.size())
    return error("internal: the two graphs of the per-layer distance differ in their nodes (" +
                 std::to_string(nNodes.size()) + " vs " + std::to_string(mNodes.size()) + ")");
  const bool first = layers.empty();
  size_t slot = 0;
  for (const auto &[k, op] : npu) {
    if (k >= nNodes.size())
      return error("internal: NPU node index " + std::to_string(k) + " out of range");
    const ir::Node &nn = *nNodes[k], &mn = *mNodes[k];
    const ir::Value *out = nn.output(0);
    if (!out || !ir::isInteger(out->dtype))
      continue;
    if (first)
      layers.push_back(LayerDistance{nn.name, op, nn.attrs != mn.attrs});
    if (slot >= layers.size())
      return error("internal: per-layer distance slots changed between data sets");
    LayerDistance &ld = layers[slot++];
    auto a = npuAll.find(out->name), b = modelAll.find(out->name);
    if (a == npuAll.end() || b == modelAll.end())
      return error("internal: the interpreter kept no value '" + out->name + "' for layer '" +
                   nn.name + "'");
    auto [steps, differ] = integerDistance(a->second, b->second);
    ld.steps = std::max(ld.steps, steps);
    ld.mismatches += differ;
    ld.elements += a->second.numElements();
    if (!ld.changed)
      continue; // the same arithmetic on the same inputs: no own distance
    // The layer alone: the NPU's arithmetic on the model-arithmetic run's inputs.
    auto own = interp::evaluateNode(nn, inputsOf(mn, modelAll));
    if (!own)
      return std::move(own.error());
    if (own->empty())
      return error("internal: layer '" + nn.name + "' evaluated to no output");
    ld.ownSteps = std::max(ld.ownSteps, integerDistance((*own)[0], b->second).first);
  }
  return success();
}

std::string layerDistanceText(const std::vector<LayerDistance> &layers, size_t maxRows,
                              bool anyChanged) {
  if (!anyChanged)
    return "per-layer distance of the NPU's arithmetic to the model's: every NPU layer computes "
           "the model's own requantization (0 steps)\n";
  size_t changed = 0;
  int64_t own = 0, acc = 0;
  const LayerDistance *worst = nullptr;
  for (const LayerDistance &l : layers) {
    changed += l.changed;
    own = std::max(own, l.ownSteps);
    if (!worst || l.steps > worst->steps)
      worst = &l;
  }
  acc = worst ? worst->steps : 0;
  std::string s = "per-layer distance of the NPU's arithmetic to the model's (reference "
                  "interpreter, output steps): " +
                  std::to_string(changed) + " of " + std::to_string(layers.size()) +
                  " NPU layers requantize differently; own distance at most " +
                  std::to_string(own) + " step(s), accumulated at most " + std::to_string(acc) +
                  " step(s)" + (worst && acc > 0 ? " (at '" + worst->node + "')" : "") + "\n";
  size_t rows = 0, more = 0;
  for (const LayerDistance &l : layers) {
    if (!l.changed && l.steps == 0)
      continue;
    if (rows == maxRows) {
      ++more;
      continue;
    }
    if (rows++ == 0) {
      char h[160];
      std::snprintf(h, sizeof h, "  %-32s %-10s %-9s %5s %11s %19s\n", "layer", "npu op", "requant",
                    "own", "accumulated", "differing");
      s += h;
    }
    char b[256];
    std::snprintf(b, sizeof b, "  %-32s %-10s %-9s %5lld %11lld %9lld/%-9lld\n", l.node.c_str(),
                  l.npuOp.c_str(), l.changed ? "changed" : "same",
                  static_cast<long long>(l.ownSteps), static_cast<long long>(l.steps),
                  static_cast<long long>(l.mismatches), static_cast<long long>(l.elements));
    s += b;
  }
  if (more)
    s += "  ... " + std::to_string(more) + " more layer(s) (all in --json's layer_distance)\n";
  return s;
}

nlohmann::json layerDistanceJson(const std::vector<LayerDistance> &layers, bool changed) {
  nlohmann::json ld = {{"rounding_changed", changed}, {"layers", nlohmann::json::array()}};
  for (const LayerDistance &l : layers)
    ld["layers"].push_back({{"node", l.node},
                            {"npu_op", l.npuOp},
                            {"requant_changed", l.changed},
                            {"own_max_steps", l.ownSteps},
                            {"max_steps", l.steps},
                            {"mismatches", l.mismatches},
                            {"elements", l.elements}});
  return ld;
}

} // namespace npucc::driver
