//===- Builder.cpp - The importer's graph builder (Internal.h) ------------===//
//
// Builder looks up ONNX values by name (initializers converted on first use),
// appends canonical IR nodes, gives every output a dtype and a static shape
// (onnx's inferred facts, else ShapeHelper's rules; the rules win for ceil_mode
// pools, where onnx 1.12 infers a window too many) within kMaxTensorBytes,
// and folds nodes whose inputs are all constants.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"
#include "npucc/interp/Interpreter.h"

#include <algorithm>

using namespace npucc::ir;

namespace npucc::onnx::detail {

namespace {
/// A MaxPool/AveragePool with ceil_mode=1: onnx 1.12 infers one output more than
/// the ONNX semantics when the last window would start in the end padding.
bool ceilModePool(const Node &n) {
  return (n.kind == OpKind::MaxPool || n.kind == OpKind::AveragePool) &&
         n.attrInt("ceil_mode", 0) != 0;
}
} // namespace

std::string Builder::freshName(const std::string &base) const {
  std::string c = base;
  for (int i = 1; reserved.count(c) || g.findValue(c); ++i)
    c = base + "_" + std::to_string(i);
  return c;
}

Result<Value *> Builder::lookup(const std::string &name) {
  if (name.empty())
    return static_cast<Value *>(nullptr);
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto init = initializers.find(name);
  if (init == initializers.end())
    return error("input '" + name +
                 "' is not produced by an earlier node, a graph input or an initializer")
        .inFile(file);
  auto t = tensorFromProto(*init->second, baseDir, "initializer '" + name + "'");
  if (!t)
    return std::move(t.error().inFile(file));
  Value *v = g.addConstant(name, t.take());
  values[name] = v;
  return v;
}

Value *Builder::constInts(const std::string &base, const std::vector<int64_t> &v, bool scalar) {
  Shape s;
  if (!scalar)
    s.push_back(static_cast<int64_t>(v.size()));
  return g.addConstant(freshName(base), Tensor::fromInts(DType::I64, s, v));
}

Value *Builder::constTensor(const std::string &base, Tensor t) {
  return g.addConstant(freshName(base), std::move(t));
}

Result<std::vector<Value *>> Builder::emit(OpKind k, const std::string &nodeName,
                                           std::vector<Value *> ins,
                                           const std::vector<std::string> &outNames,
                                           std::map<std::string, Attribute> attrs) {
  while (!ins.empty() && !ins.back())
    ins.pop_back();
  const char *op = opName(k);
  // Operands that determine shapes must be constants (after folding).
  std::vector<size_t> shapeOperands;
  switch (k) {
  case OpKind::Reshape:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::Split:
  case OpKind::Pad:
    shapeOperands = {1};
    break;
  case OpKind::Slice:
    shapeOperands = {1, 2, 3, 4};
    break;
  case OpKind::Resize:
    shapeOperands = {1, 2, 3};
    break;
  case OpKind::ConstantOfShape:
    shapeOperands = {0};
    break;
  default:
    break;
  }
  for (size_t i : shapeOperands)
    if (i < ins.size() && ins[i] && !ins[i]->isConstant())
      return nodeErr(nodeName, op,
                     std::string(op) + " operand " + std::to_string(i) + " ('" + ins[i]->name +
                         "') is a runtime value; npucc needs shape operands to be constant");
  std::vector<Value *> outs;
  for (const std::string &o : outNames) {
    bool internal = !o.empty() && o[0] == '\x01';
    Value *v = g.addValue(internal ? freshName(o.substr(1)) : o, DType::F32, {});
    if (!internal)
      values[o] = v;
    outs.push_back(v);
  }
  Node *n = g.addNode(k, nodeName, ins, outs);
  n->attrs = std::move(attrs);
  auto inferred = inferOutputs(*n);
  bool staleIn = std::any_of(ins.begin(), ins.end(),
                             [&](const Value *in) { return in && staleShapes.count(in); });
  for (size_t i = 0; i < outs.size(); ++i) {
    Value *v = outs[i];
    auto f = facts.find(v->name);
    bool haveFact = f != facts.end() && f->second.elemType != 0 && outNames[i][0] != '\x01';
    if (haveFact) {
      auto dt = mapElemType(f->second.elemType, "value '" + v->name + "'");
      if (!dt)
        return nodeErr(nodeName, op, dt.error().message);
      v->dtype = *dt;
    } else if (inferred && i < inferred->size()) {
      v->dtype = (*inferred)[i].dtype;
    }
    bool ownShape = inferred && i < inferred->size();
    // onnx 1.12's shape inference keeps a ceil_mode pool's last window when it would start
    // in the end padding; the ONNX semantics (onnx >= 1.16, ONNX Runtime, PyTorch) drop it.
    // npucc's rule wins there, and downstream of a value it changed.
    bool ownRuleWins = ownShape && (ceilModePool(*n) || staleIn);
    bool factShape = haveFact && f->second.staticShape && !ownRuleWins;
    if (ownRuleWins && (staleIn || (haveFact && f->second.staticShape &&
                                    f->second.shape != (*inferred)[i].shape)))
      staleShapes.insert(v);
    if (!onnxInferred && !inferred && inferred.error().message != kNoShapeRule)
      return nodeErr(nodeName, op,
                     "cannot give output '" + v->name +
                         "' a static shape: " + inferred.error().message);
    if (ownShape && factShape && !onnxInferred && f->second.shape != (*inferred)[i].shape) {
      return nodeErr(nodeName, op,
                     "the model declares shape [" + shapeStr(f->second.shape) + "] for '" +
                         v->name + "' but its inputs give [" + shapeStr((*inferred)[i].shape) +
                         "]");
    } else if (factShape) {
      v->shape = f->second.shape;
    } else if (ownShape) {
      v->shape = (*inferred)[i].shape;
    } else {
      std::string why = inferred ? "output count mismatch" : inferred.error().message;
      return nodeErr(nodeName, op, "cannot give output '" + v->name + "' a static shape: " + why);
    }
  }
  for (const Value *v : outs)
    if (!checkedByteSize(v->dtype, v->shape))
      return nodeErr(nodeName, op,
                     "output '" + v->name + "' would have shape [" + shapeStr(v->shape) +
                         "], larger than npucc's limit of " +
                         std::to_string(kMaxTensorBytes >> 30) + " GiB for one tensor");
  // Constant propagation: Shape only needs its input's static shape.
  if (k == OpKind::Shape && inferred) {
    const Shape &s = ins[0]->shape;
    int64_t r = static_cast<int64_t>(s.size());
    int64_t st = n->attrInt("start", 0), en = n->attrInt("end", r);
    st = std::clamp<int64_t>(st < 0 ? st + r : st, 0, r);
    en = std::clamp<int64_t>(en < 0 ? en + r : en, 0, r);
    std::vector<int64_t> dims;
    for (int64_t i = st; i < en; ++i)
      dims.push_back(s[static_cast<size_t>(i)]);
    g.eraseNode(n);
    outs[0]->constant = std::make_shared<Tensor>(
        Tensor::fromInts(DType::I64, {static_cast<int64_t>(dims.size())}, dims));
    return outs;
  }
  bool allConst = true;
  std::vector<const Tensor *> args;
  for (Value *v : ins) {
    if (v && !v->isConstant())
      allConst = false;
    args.push_back(v ? v->constant.get() : nullptr);
  }
  // DequantizeLinear of constant integer weights is kept so that fold-qdq
  // can use the integers (constant-fold folds it later in float pipelines).
  if (allConst && !ins.empty() && k != OpKind::DequantizeLinear && interp::canEvaluate(*n) &&
      foldedBytes + interp::resultBytes(*n) <= interp::kMaxFoldedBytes) {
    foldedBytes += interp::resultBytes(*n);
    auto r = interp::evaluateNode(*n, args);
    bool fits = r && r->size() == outs.size();
    for (size_t i = 0; fits && i < outs.size(); ++i)
      fits = (*r)[i].dtype() == outs[i]->dtype && (*r)[i].shape() == outs[i]->shape;
    if (fits) {
      g.eraseNode(n);
      for (size_t i = 0; i < outs.size(); ++i)
        outs[i]->constant = std::make_shared<Tensor>(std::move((*r)[i]));
    }
  }
  return outs;
}

} // namespace npucc::onnx::detail
