//===- Graph.cpp - Graph construction, mutation and queries ---------------===//
#include "npucc/ir/Graph.h"

#include <algorithm>
#include <set>

namespace npucc::ir {

// ---- Node attribute accessors ----------------------------------------------

int64_t Node::attrInt(const std::string &n, int64_t dflt) const {
  auto it = attrs.find(n);
  if (it == attrs.end())
    return dflt;
  if (auto *v = std::get_if<int64_t>(&it->second))
    return *v;
  if (auto *f = std::get_if<float>(&it->second))
    return static_cast<int64_t>(*f);
  return dflt;
}

float Node::attrFloat(const std::string &n, float dflt) const {
  auto it = attrs.find(n);
  if (it == attrs.end())
    return dflt;
  if (auto *v = std::get_if<float>(&it->second))
    return *v;
  if (auto *i = std::get_if<int64_t>(&it->second))
    return static_cast<float>(*i);
  return dflt;
}

std::string Node::attrString(const std::string &n, const std::string &dflt) const {
  auto it = attrs.find(n);
  if (it == attrs.end())
    return dflt;
  if (auto *v = std::get_if<std::string>(&it->second))
    return *v;
  return dflt;
}

std::vector<int64_t> Node::attrInts(const std::string &n, std::vector<int64_t> dflt) const {
  auto it = attrs.find(n);
  if (it == attrs.end())
    return dflt;
  if (auto *v = std::get_if<std::vector<int64_t>>(&it->second))
    return *v;
  if (auto *i = std::get_if<int64_t>(&it->second))
    return {*i};
  return dflt;
}

std::vector<float> Node::attrFloats(const std::string &n, std::vector<float> dflt) const {
  auto it = attrs.find(n);
  if (it == attrs.end())
    return dflt;
  if (auto *v = std::get_if<std::vector<float>>(&it->second))
    return *v;
  if (auto *f = std::get_if<float>(&it->second))
    return {*f};
  return dflt;
}

const Tensor *Node::attrTensor(const std::string &n) const {
  auto it = attrs.find(n);
  if (it == attrs.end())
    return nullptr;
  return std::get_if<Tensor>(&it->second);
}

// ---- Graph -------------------------------------------------------------------

std::string Graph::uniqueName(const std::string &base) const {
  std::string b = base.empty() ? "v" : base;
  if (!ByName.count(b))
    return b;
  for (int i = 1;; ++i) {
    std::string c = b + "_" + std::to_string(i);
    if (!ByName.count(c))
      return c;
  }
}

Value *Graph::addValue(const std::string &name, DType t, Shape s) {
  auto v = std::make_unique<Value>();
  v->name = uniqueName(name);
  v->dtype = t;
  v->shape = std::move(s);
  Value *p = v.get();
  ByName[p->name] = p;
  Values.push_back(std::move(v));
  return p;
}

Value *Graph::addConstant(const std::string &name, Tensor data) {
  Value *v = addValue(name, data.dtype(), data.shape());
  v->constant = std::make_shared<Tensor>(std::move(data));
  return v;
}

static std::unique_ptr<Node> makeNode(OpKind k, const std::string &name, std::vector<Value *> ins,
                                      std::vector<Value *> outs) {
  auto n = std::make_unique<Node>();
  n->kind = k;
  n->name = name;
  n->inputs = std::move(ins);
  n->outputs = std::move(outs);
  for (Value *o : n->outputs)
    if (o)
      o->producer = n.get();
  return n;
}

Node *Graph::addNode(OpKind k, const std::string &name, std::vector<Value *> ins,
                     std::vector<Value *> outs) {
  Nodes.push_back(makeNode(k, name, std::move(ins), std::move(outs)));
  return Nodes.back().get();
}

Node *Graph::insertNodeBefore(const Node *pos, OpKind k, const std::string &name,
                              std::vector<Value *> ins, std::vector<Value *> outs) {
  compact();
  auto it = std::find_if(Nodes.begin(), Nodes.end(),
                         [&](const std::unique_ptr<Node> &n) { return n.get() == pos; });
  auto n = makeNode(k, name, std::move(ins), std::move(outs));
  Node *p = n.get();
  Nodes.insert(it, std::move(n));
  return p;
}

void Graph::replaceAllUsesWith(Value *from, Value *to) {
  for (auto &n : Nodes)
    for (Value *&in : n->inputs)
      if (in == from)
        in = to;
  for (Value *&o : outputs)
    if (o == from)
      o = to;
}

void Graph::eraseNode(Node *n) {
  if (n->Erased)
    return;
  for (Value *o : n->outputs)
    if (o && o->producer == n)
      o->producer = nullptr;
  n->Erased = true;
  ++NumErased;
}

void Graph::compact() const {
  if (!NumErased)
    return;
  Nodes.erase(std::remove_if(Nodes.begin(), Nodes.end(),
                             [](const std::unique_ptr<Node> &p) { return p->Erased; }),
              Nodes.end());
  NumErased = 0;
}

size_t Graph::removeUnusedValues() {
  compact();
  std::set<const Value *> live(inputs.begin(), inputs.end());
  live.insert(outputs.begin(), outputs.end());
  for (auto &n : Nodes) {
    live.insert(n->inputs.begin(), n->inputs.end());
    live.insert(n->outputs.begin(), n->outputs.end());
  }
  size_t before = Values.size();
  for (auto &v : Values)
    if (!live.count(v.get()))
      ByName.erase(v->name);
  Values.erase(std::remove_if(Values.begin(), Values.end(),
                              [&](const std::unique_ptr<Value> &v) { return !live.count(v.get()); }),
               Values.end());
  return before - Values.size();
}

bool Graph::topoSort(std::string *err) {
  compact();
  std::set<const Value *> ready;
  for (auto &v : Values)
    if (!v->producer)
      ready.insert(v.get());
  std::vector<std::unique_ptr<Node>> sorted;
  std::vector<std::unique_ptr<Node>> pending = std::move(Nodes);
  while (!pending.empty()) {
    bool progress = false;
    for (auto &n : pending) {
      if (!n)
        continue;
      bool ok = std::all_of(n->inputs.begin(), n->inputs.end(),
                            [&](const Value *v) { return !v || ready.count(v); });
      if (!ok)
        continue;
      ready.insert(n->outputs.begin(), n->outputs.end());
      sorted.push_back(std::move(n));
      progress = true;
    }
    pending.erase(std::remove(pending.begin(), pending.end(), nullptr), pending.end());
    if (!progress) {
      if (err)
        *err = "graph has a cycle or an undefined input at node '" + pending.front()->name + "'";
      for (auto &n : pending)
        sorted.push_back(std::move(n));
      Nodes = std::move(sorted);
      return false;
    }
  }
  Nodes = std::move(sorted);
  return true;
}

std::vector<Node *> Graph::users(const Value *v) const {
  std::vector<Node *> r;
  for (auto &n : Nodes)
    if (!n->Erased && std::find(n->inputs.begin(), n->inputs.end(), v) != n->inputs.end())
      r.push_back(n.get());
  return r;
}

size_t Graph::numUses(const Value *v) const {
  size_t c = 0;
  for (auto &n : Nodes)
    if (!n->Erased)
      c += static_cast<size_t>(std::count(n->inputs.begin(), n->inputs.end(), v));
  c += static_cast<size_t>(std::count(outputs.begin(), outputs.end(), v));
  return c;
}

bool Graph::isGraphOutput(const Value *v) const {
  return std::find(outputs.begin(), outputs.end(), v) != outputs.end();
}
bool Graph::isGraphInput(const Value *v) const {
  return std::find(inputs.begin(), inputs.end(), v) != inputs.end();
}

Value *Graph::findValue(const std::string &name) const {
  auto it = ByName.find(name);
  return it == ByName.end() ? nullptr : it->second;
}

std::unique_ptr<Graph> Graph::clone() const {
  compact();
  auto g = std::make_unique<Graph>();
  g->name = name;
  g->sourceFile = sourceFile;
  std::map<const Value *, Value *> map;
  for (auto &v : Values) {
    auto c = std::make_unique<Value>(*v);
    c->producer = nullptr;
    map[v.get()] = c.get();
    g->ByName[c->name] = c.get();
    g->Values.push_back(std::move(c));
  }
  auto mapV = [&](Value *v) { return v ? map.at(v) : nullptr; };
  for (auto &n : Nodes) {
    std::vector<Value *> ins, outs;
    for (Value *v : n->inputs)
      ins.push_back(mapV(v));
    for (Value *v : n->outputs)
      outs.push_back(mapV(v));
    Node *c = g->addNode(n->kind, n->name, ins, outs);
    c->attrs = n->attrs;
  }
  for (Value *v : inputs)
    g->inputs.push_back(mapV(v));
  for (Value *v : outputs)
    g->outputs.push_back(mapV(v));
  return g;
}

Diagnostic nodeError(const Graph &g, const Node &n, std::string msg) {
  Diagnostic d(std::move(msg));
  d.inFile(g.sourceFile).atNode(n.name, n.opName());
  return d;
}

} // namespace npucc::ir
