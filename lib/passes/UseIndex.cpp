//===- UseIndex.cpp - Per-pass index of value uses (PassUtils.h) ----------===//
#include "PassUtils.h"

#include <algorithm>

namespace npucc::passes::util {

UseIndex::UseIndex(const ir::Graph &g) {
  for (const auto &n : g.nodes())
    for (const ir::Value *v : n->inputs)
      if (v)
        Users[v].push_back(n.get());
  for (const ir::Value *v : g.outputs) {
    Outputs.insert(v);
    ++OutputUses[v];
  }
}

size_t UseIndex::numUses(const ir::Value *v) const {
  size_t c = 0;
  auto u = Users.find(v);
  if (u != Users.end())
    c += u->second.size();
  auto o = OutputUses.find(v);
  if (o != OutputUses.end())
    c += o->second;
  return c;
}

std::vector<ir::Node *> UseIndex::users(const ir::Value *v) const {
  std::vector<ir::Node *> r;
  auto u = Users.find(v);
  if (u == Users.end())
    return r;
  for (ir::Node *n : u->second)
    if (std::find(r.begin(), r.end(), n) == r.end())
      r.push_back(n);
  return r;
}

void UseIndex::dropNode(const ir::Node *n) {
  for (const ir::Value *v : n->inputs) {
    if (!v)
      continue;
    auto u = Users.find(v);
    if (u == Users.end())
      continue;
    auto it = std::find(u->second.begin(), u->second.end(), n);
    if (it != u->second.end())
      u->second.erase(it);
  }
}

void UseIndex::addUse(ir::Node *n, const ir::Value *v) {
  if (v)
    Users[v].push_back(n);
}

} // namespace npucc::passes::util
