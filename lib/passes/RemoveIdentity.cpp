//===- RemoveIdentity.cpp - Bypass Identity and inference Dropout ---------===//
//
// `%y = Identity(%x)` and `%y = Dropout(%x, ...)` (inference: a copy) are
// removed and the users of %y read %x instead. When %y is a graph output the
// output keeps its name: the producer of %x is made to define %y directly.
// The node is kept when that is not possible: %x is a graph input (the
// input would become an output), a constant, or already a graph output (two
// outputs would alias). Dropout is kept when its mask result is used or its
// training_mode input is not a constant false.
// Statistics: remove-identity.removed.
//
//===----------------------------------------------------------------------===//
#include "npucc/passes/Pass.h"

#include "PassUtils.h"

#include <unordered_map>

namespace npucc::passes {

namespace {

bool isRemovable(const util::UseIndex &uses, const ir::Node &n) {
  if (n.kind != ir::OpKind::Identity && n.kind != ir::OpKind::Dropout)
    return false;
  const ir::Value *in = n.input(0);
  const ir::Value *out = n.output(0);
  if (!in || !out || in->dtype != out->dtype || in->shape != out->shape ||
      !(in->quant == out->quant))
    return false;
  if (n.kind == ir::OpKind::Dropout) {
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i] && uses.numUses(n.outputs[i]) != 0)
        return false;
    if (const ir::Value *training = n.input(2)) {
      auto v = util::scalarConstant(training);
      if (!v || *v != 0.0)
        return false;
    }
  }
  return true;
}

} // namespace

Status runRemoveIdentity(ir::Graph &g, PassContext &ctx) {
  util::UseIndex uses(g);
  std::vector<ir::Node *> candidates;
  for (auto &n : g.nodes())
    if (isRemovable(uses, *n))
      candidates.push_back(n.get());

  // Replacements are collected and applied in one sweep at the end
  // (Graph::replaceAllUsesWith per node would make a chain quadratic).
  std::unordered_map<ir::Value *, ir::Value *> repl;
  auto resolve = [&](ir::Value *v) {
    ir::Value *r = v;
    for (auto it = repl.find(r); it != repl.end(); it = repl.find(r))
      r = it->second;
    if (r != v)
      repl[v] = r; // path compression
    return r;
  };
  int64_t removed = 0;
  for (ir::Node *n : candidates) {
    ir::Value *in = resolve(n->inputs[0]);
    ir::Value *out = n->outputs[0];
    if (!uses.isGraphOutput(out)) {
      g.eraseNode(n);
      repl[out] = in;
      ++removed;
      continue;
    }
    // `out` is a graph output: keep its name by moving its definition.
    if (!in->producer || g.isGraphInput(in) || in->isConstant() || uses.isGraphOutput(in))
      continue;
    ir::Node *p = in->producer;
    size_t idx = 0;
    while (idx < p->outputs.size() && p->outputs[idx] != in)
      ++idx;
    if (idx == p->outputs.size())
      continue;
    g.eraseNode(n);
    repl[in] = out;
    p->outputs[idx] = out;
    out->producer = p;
    in->producer = nullptr;
    ++removed;
  }
  if (removed) {
    for (auto &n : g.nodes())
      for (ir::Value *&v : n->inputs)
        if (v)
          v = resolve(v);
    for (ir::Value *&v : g.outputs)
      v = resolve(v);
    g.removeUnusedValues();
    ctx.bump("remove-identity.removed", removed);
  }
  return success();
}

} // namespace npucc::passes
