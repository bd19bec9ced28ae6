//===- ConstantFold.cpp - Evaluate constant subgraphs at compile time -----===//
//
// The rule (one sweep in topological order, so chains fold completely):
//   1. A node whose inputs are all constants (or absent) is evaluated with
//      the reference interpreter (when interp::canEvaluate accepts it),
//      whatever the size of its results (the runtime would compute the same
//      data, and the lowering then never sees these ops), up to
//      interp::kMaxFoldedBytes of results per run against hostile models.
//   2. A node whose result depends only on static shapes - a Shape of a value
//      with a fully static shape - is computed from the shape, as long as the
//      result has at most MaxShapeFoldElements elements.
// Folding turns the node's result Values into constants in place (they keep
// their names, so `%s` becomes `@s`) and erases the node. This collapses the
// Shape/Gather/Unsqueeze/Concat chains exported around Reshape/Flatten and
// ConstantOfShape(@shape).
// Statistics: constant-fold.folded (nodes), constant-fold.shape-folded (of
// which computed from static shapes).
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"
#include "npucc/passes/Pass.h"

#include <algorithm>
#include <memory>
#include <optional>

namespace npucc::passes {

namespace {

constexpr int64_t MaxShapeFoldElements = int64_t(1) << 20;

bool allInputsConstant(const ir::Node &n) {
  return std::all_of(n.inputs.begin(), n.inputs.end(),
                     [](const ir::Value *v) { return !v || v->isConstant(); });
}

bool isStatic(const ir::Shape &s) {
  return std::all_of(s.begin(), s.end(), [](int64_t d) { return d >= 0; });
}

/// Shape(x) for a static x, honouring the opset-15 start/end attributes.
std::optional<ir::Tensor> foldShape(const ir::Node &n) {
  const ir::Value *x = n.input(0);
  const ir::Value *out = n.output(0);
  if (!x || !out || !isStatic(x->shape) || !ir::isInteger(out->dtype))
    return std::nullopt;
  int64_t rank = static_cast<int64_t>(x->shape.size());
  auto clampAxis = [&](int64_t a) {
    if (a < 0)
      a += rank;
    return std::clamp<int64_t>(a, 0, rank);
  };
  int64_t start = clampAxis(n.attrInt("start", 0));
  int64_t end = clampAxis(n.attrInt("end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back(x->shape[static_cast<size_t>(i)]);
  ir::Shape shape{static_cast<int64_t>(dims.size())};
  if (out->shape != shape || static_cast<int64_t>(dims.size()) > MaxShapeFoldElements)
    return std::nullopt;
  return ir::Tensor::fromInts(out->dtype, shape, dims);
}

/// Turns the results of `n` into constants holding `data` and erases `n`.
void replaceWithConstants(ir::Graph &g, ir::Node *n, std::vector<ir::Tensor> data) {
  std::vector<ir::Value *> outs = n->outputs;
  g.eraseNode(n);
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i]->producer = nullptr;
    outs[i]->constant = std::make_shared<ir::Tensor>(std::move(data[i]));
  }
}

} // namespace

Status runConstantFold(ir::Graph &g, PassContext &ctx) {
  std::vector<ir::Node *> order;
  for (auto &n : g.nodes())
    order.push_back(n.get());

  int64_t folded = 0, shapeFolded = 0, foldedBytes = 0;
  for (ir::Node *n : order) {
    if (std::any_of(n->outputs.begin(), n->outputs.end(),
                    [](const ir::Value *v) { return v == nullptr; }))
      continue;
    if (!allInputsConstant(*n)) {
      if (n->kind != ir::OpKind::Shape)
        continue;
      std::optional<ir::Tensor> t = foldShape(*n);
      if (!t)
        continue;
      std::vector<ir::Tensor> data;
      data.push_back(std::move(*t));
      replaceWithConstants(g, n, std::move(data));
      ++folded;
      ++shapeFolded;
      continue;
    }
    if (!interp::canEvaluate(*n) || foldedBytes + interp::resultBytes(*n) > interp::kMaxFoldedBytes)
      continue;
    foldedBytes += interp::resultBytes(*n);
    std::vector<const ir::Tensor *> ins;
    for (const ir::Value *v : n->inputs)
      ins.push_back(v ? v->constant.get() : nullptr);
    auto r = interp::evaluateNode(*n, ins);
    if (!r) {
      Diagnostic d = r.error();
      d.atNode(n->name, n->opName());
      d.note("while folding a node whose inputs are all constants");
      return d;
    }
    std::vector<ir::Tensor> data = r.take();
    if (data.size() != n->outputs.size())
      return ir::nodeError(g, *n, "constant folding produced " + std::to_string(data.size()) +
                                      " results, expected " +
                                      std::to_string(n->outputs.size()));
    for (size_t i = 0; i < data.size(); ++i)
      if (data[i].dtype() != n->outputs[i]->dtype || data[i].shape() != n->outputs[i]->shape)
        return ir::nodeError(g, *n,
                             "constant folding produced " +
                                 std::string(ir::dtypeName(data[i].dtype())) + "[" +
                                 ir::shapeStr(data[i].shape()) + "] for result '" +
                                 n->outputs[i]->name + "' of type " +
                                 ir::dtypeName(n->outputs[i]->dtype) + "[" +
                                 ir::shapeStr(n->outputs[i]->shape) + "]");
    replaceWithConstants(g, n, std::move(data));
    ++folded;
  }
  if (folded) {
    g.removeUnusedValues();
    ctx.bump("constant-fold.folded", folded);
  }
  if (shapeFolded)
    ctx.bump("constant-fold.shape-folded", shapeFolded);
  return success();
}

} // namespace npucc::passes
