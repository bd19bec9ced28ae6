//===- PassUtils.h - Small helpers shared by the graph passes -------------===//
//
// Private to lib/passes: use queries, constant scalars and the "move a
// result onto the producer" rewrite that fusions use to keep value names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"

#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace npucc::passes::util {

/// Uses of every value, built once per pass run: Graph::users and
/// Graph::numUses scan all nodes, so calling them per node makes a pass
/// quadratic in graph length. The pass keeps the index current with
/// dropNode / addUse when it rewires or erases nodes (UseIndex.cpp).
class UseIndex {
public:
  explicit UseIndex(const ir::Graph &g);
  /// Node operands reading `v` plus graph outputs naming it (Graph::numUses).
  size_t numUses(const ir::Value *v) const;
  /// Live nodes reading `v`, each once, in graph order at build time.
  std::vector<ir::Node *> users(const ir::Value *v) const;
  bool isGraphOutput(const ir::Value *v) const { return Outputs.count(v) != 0; }
  /// `v` is produced by a node, used exactly once and not a graph output.
  bool hasSingleUse(const ir::Value *v) const {
    return v && v->producer && !isGraphOutput(v) && numUses(v) == 1;
  }
  /// `n` is being erased: its operands lose one use each.
  void dropNode(const ir::Node *n);
  /// `n` now also reads `v` (one more operand).
  void addUse(ir::Node *n, const ir::Value *v);

private:
  std::unordered_map<const ir::Value *, std::vector<ir::Node *>> Users; // one entry per operand
  std::unordered_set<const ir::Value *> Outputs;
  std::unordered_map<const ir::Value *, size_t> OutputUses;
};

/// A plain float32 value (no quantization parameters).
inline bool isPlainF32(const ir::Value *v) {
  return v && v->dtype == ir::DType::F32 && !v->quant;
}

/// The value of a one-element constant, if `v` is one.
inline std::optional<double> scalarConstant(const ir::Value *v) {
  if (!v || !v->isConstant() || v->constant->numElements() != 1)
    return std::nullopt;
  return v->constant->getDouble(0);
}

/// The constant data of `v` or null.
inline const ir::Tensor *constantData(const ir::Value *v) {
  return v && v->isConstant() ? v->constant.get() : nullptr;
}

/// Makes `producer` define `result` (which must have the same type as the
/// producer's output `idx`) instead of its current output, and erases
/// `consumer`, the node that defined `result` until now. Used when
/// `consumer` is folded into `producer`: the surviving value keeps the name
/// of the consumer's result (which may be a graph output). The producer's
/// old output must have had `consumer` as its only user.
inline void absorbConsumer(ir::Graph &g, ir::Node *producer, size_t idx, ir::Node *consumer,
                           ir::Value *result) {
  g.eraseNode(consumer);
  producer->outputs[idx]->producer = nullptr;
  producer->outputs[idx] = result;
  result->producer = producer;
}

constexpr float Inf = std::numeric_limits<float>::infinity();

} // namespace npucc::passes::util
