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

namespace npucc::passes::util {

/// True when `v` is produced by a node, is used exactly once and is not a
/// graph output (so the producer may be rewritten for that one user).
inline bool hasSingleUse(const ir::Graph &g, const ir::Value *v) {
  return v && v->producer && !g.isGraphOutput(v) && g.numUses(v) == 1;
}

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
