//===- Interpreter.h - Reference interpreter over the graph IR ------------===//
//
// A straightforward, independent (naive loops) implementation of every op in
// Ops.def, used to produce expected outputs (--emit-test), to fold constants,
// and to check that passes preserve results. Float ops compute in float32
// unless stated otherwise (accumulations may use double).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/support/Result.h"

#include <map>
#include <string>
#include <vector>

namespace npucc::interp {

/// Evaluates one node. `inputs[i]` is null for an absent optional input.
/// Output tensors get the dtype/shape of the node's output Values.
Result<std::vector<ir::Tensor>> evaluateNode(const ir::Node &n,
                                             const std::vector<const ir::Tensor *> &inputs);

/// True when evaluateNode supports this node (op kind and dtypes).
bool canEvaluate(const ir::Node &n);

/// Most bytes of results that constant folding (the importer's and the
/// constant-fold pass's) creates for one graph: beyond it nodes stay runtime
/// nodes, so a chain of large folded tensors cannot exhaust memory.
inline constexpr int64_t kMaxFoldedBytes = int64_t(256) << 20;
/// Bytes of the results of `n` (from its output Values' types).
int64_t resultBytes(const ir::Node &n);

/// Runs the whole graph. `inputs` is keyed by graph input name; the result is
/// keyed by graph output name. When `all` is non-null it receives every
/// intermediate value by name (for per-layer comparisons).
Result<std::map<std::string, ir::Tensor>>
runGraph(const ir::Graph &g, const std::map<std::string, ir::Tensor> &inputs,
         std::map<std::string, ir::Tensor> *all = nullptr);

} // namespace npucc::interp
