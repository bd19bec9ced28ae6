//===- DeadCodeElim.cpp - Remove unused nodes and values ------------------===//
//
// A node is dead when none of its results is used by another node or is a
// graph output (no op in Ops.def has side effects). Nodes are visited in
// reverse order with live use counts, so whole dead chains go in one sweep.
// Afterwards values nothing refers to are dropped (Graph::removeUnusedValues).
// Statistics: dce.nodes-removed, dce.values-removed.
//
//===----------------------------------------------------------------------===//
#include "npucc/passes/Pass.h"

#include <unordered_map>

namespace npucc::passes {

Status runDce(ir::Graph &g, PassContext &ctx) {
  std::unordered_map<const ir::Value *, size_t> uses;
  for (auto &n : g.nodes())
    for (const ir::Value *v : n->inputs)
      if (v)
        ++uses[v];
  for (const ir::Value *v : g.outputs)
    ++uses[v];

  std::vector<ir::Node *> order;
  for (auto &n : g.nodes())
    order.push_back(n.get());
  int64_t removed = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    ir::Node *n = *it;
    bool dead = true;
    for (const ir::Value *o : n->outputs)
      if (o && uses[o] != 0)
        dead = false;
    if (!dead)
      continue;
    for (const ir::Value *v : n->inputs)
      if (v)
        --uses[v];
    g.eraseNode(n);
    ++removed;
  }
  size_t values = g.removeUnusedValues();
  if (removed)
    ctx.bump("dce.nodes-removed", removed);
  if (values)
    ctx.bump("dce.values-removed", static_cast<int64_t>(values));
  return success();
}

} // namespace npucc::passes
