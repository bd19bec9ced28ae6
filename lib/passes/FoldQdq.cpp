//===- FoldQdq.cpp - DequantizeLinear -> op -> QuantizeLinear to typed IR --===//
//
// Turns the QDQ form of pre-quantized models into the typed integer form of
// docs/quantization.md, keeping the model's own scales and zero points:
//   %a = DequantizeLinear(%xq, @sx, @zx)  %w = DequantizeLinear(@wq, @sw, @zw)
//   %y = Conv(%a, %w, %b) ; [Relu|Clip] ; %yq = QuantizeLinear(%y, @sy, @zy)
// becomes %yq = Conv(%xq, @wq, @bq) {act_min, act_max} with q(...) types on
// %xq, @wq, @bq (i32, scale sx*sw[c]) and %yq. Handled ops: Conv, Gemm, MatMul,
// Add, Mul, AveragePool, GlobalAveragePool, ReduceMean, Concat, Softmax (last
// axis), a standalone Relu/Clip (constant bounds), LUT activations and, when
// input and output share their parameters, MaxPool and the data movement ops
// (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Identity, Slice, Gather,
// Pad with its value quantized, Resize in nearest mode; Split when every
// output has its QuantizeLinear). Whatever does not match
// stays float with its Q/DQ nodes. A DequantizeLinear feeding a data
// movement op that is not followed by a QuantizeLinear (a flatten before a
// Gemm) is moved after it. Identity Casts (torch exports Cast(u8 -> u8)) are
// bypassed first; afterwards u8 activations and weights are converted exactly to i8
// (q - 128, zp - 128) except at graph inputs and outputs, where a
// DequantizeLinear/QuantizeLinear pair converts u8 read or written by a typed
// integer node (exact; the float boundary kernels take u8). A no-op on graphs
// without DequantizeLinear. Statistics: fold-qdq.folded, fold-qdq.u8-to-i8,
// fold-qdq.u8-boundary.
//
//===----------------------------------------------------------------------===//
#include "npucc/passes/Pass.h"

#include "PassUtils.h"
#include "npucc/quant/IntegerForms.h"

#include <algorithm>
#include <cmath>

namespace npucc::passes {

namespace {

using namespace ir;

/// Quant params of a Q/DQ node (constant scale / zero point), else nullopt.
std::optional<QuantParams> qdqParams(const Node &n) {
  const Value *s = n.input(1), *z = n.input(2);
  if (!s || !s->isConstant() || (z && !z->isConstant()))
    return std::nullopt;
  QuantParams q;
  int64_t cnt = s->constant->numElements();
  if (cnt < 1 || (z && z->constant->numElements() != cnt))
    return std::nullopt;
  int64_t axis = n.attrInt("axis", 1);
  int64_t rank = static_cast<int64_t>(n.input(0)->shape.size());
  q.axis = static_cast<int>(cnt > 1 ? (axis < 0 ? axis + rank : axis) : 0);
  for (int64_t i = 0; i < cnt; ++i) {
    float sc = static_cast<float>(s->constant->getDouble(i));
    if (!(sc > 0))
      return std::nullopt;
    q.scale.push_back(sc);
    q.zeroPoint.push_back(z ? static_cast<int32_t>(z->constant->getInt(i)) : 0);
  }
  return q;
}

bool isIntQ(DType t) { return t == DType::I8 || t == DType::U8; }

/// How many leading inputs are quantized data (the rest: shape operands etc.).
size_t dataInputs(const Node &n) {
  switch (n.kind) {
  case OpKind::Conv: case OpKind::Gemm:
    return n.inputs.size(); // x, w, bias
  case OpKind::MatMul: case OpKind::Add: case OpKind::Mul:
    return 2;
  case OpKind::Concat:
    return n.inputs.size();
  default:
    return 1;
  }
}

bool foldable(OpKind k) {
  switch (k) {
  case OpKind::Conv: case OpKind::Gemm: case OpKind::MatMul: case OpKind::Add: case OpKind::Mul:
  case OpKind::AveragePool: case OpKind::GlobalAveragePool: case OpKind::ReduceMean:
  case OpKind::Concat: case OpKind::Softmax:
  case OpKind::Relu: case OpKind::Clip: // standalone (not after a fusing op)
  case OpKind::Pad:
  case OpKind::Resize: // data movement; Resize nearest only (tryFold)
    return true;
  default:
    return quant::isDataMovement(k) || quant::hasLutForm(k);
  }
}

/// The DequantizeLinear feeding `v`, if any.
const Node *dqOf(const Value *v) {
  return v && v->producer && v->producer->kind == OpKind::DequantizeLinear ? v->producer
                                                                           : nullptr;
}

/// Re-expresses an i32 bias constant of scale sb[c] at scale sx*sw[c] (exact when equal).
Value *rescaleBias(Graph &g, const Value *b, const QuantParams &bq, double sx,
                   const QuantParams &wq) {
  int64_t n = b->constant->numElements();
  Tensor t(DType::I32, b->shape);
  QuantParams q;
  q.axis = 0;
  for (int64_t c = 0; c < n; ++c) {
    double sw = wq.scale[wq.scale.size() == 1 ? 0 : static_cast<size_t>(c)];
    double sb = bq.scale[bq.scale.size() == 1 ? 0 : static_cast<size_t>(c)];
    int64_t zb = bq.zeroPoint[bq.zeroPoint.size() == 1 ? 0 : static_cast<size_t>(c)];
    double real = sb * static_cast<double>(b->constant->getInt(c) - zb);
    t.setInt(c, static_cast<int64_t>(std::llround(real / (sx * sw))));
    q.scale.push_back(static_cast<float>(sx * sw));
    q.zeroPoint.push_back(0);
  }
  Value *v = g.addConstant(g.uniqueName(b->name + "_i32"), std::move(t));
  v->quant = q;
  return v;
}

/// Q(v) with per-tensor parameters p (QuantizeLinear: float32 division, ties to even,
/// saturated) as a constant of dtype t carrying p.
Value *quantizedScalar(Graph &g, const Value *v, const QuantParams &p, DType t) {
  float q = static_cast<float>(*util::scalarConstant(v)) / p.scale[0];
  int64_t lo = t == DType::U8 ? 0 : -128, hi = t == DType::U8 ? 255 : 127;
  double z = std::nearbyint(q) + p.zeroPoint[0];
  Value *c = g.addConstant(g.uniqueName(v->name + "_q"),
                           Tensor::scalar(t, std::clamp<double>(z, double(lo), double(hi))));
  c->quant = p;
  return c;
}

/// Tries to fold node n; true when it was rewritten.
bool tryFold(Graph &g, Node *n, PassContext &ctx) {
  if (!foldable(n->kind) || n->outputs.size() != 1 || !util::isPlainF32(n->output(0)))
    return false;
  bool moves = quant::movesElementsExactly(*n);
  if ((n->kind == OpKind::Pad || n->kind == OpKind::Resize) && !moves)
    return false;
  if (n->kind == OpKind::Clip) // integer Clip: constant bounds
    for (size_t i = 1; i < n->inputs.size(); ++i)
      if (n->inputs[i] && !util::scalarConstant(n->inputs[i]))
        return false;
  if (n->kind == OpKind::Softmax && n->input(0)) { // integer Softmax: last axis only
    int64_t rank = static_cast<int64_t>(n->input(0)->shape.size());
    int64_t axis = n->attrInt("axis", -1);
    if (axis != -1 && axis != rank - 1)
      return false;
  }
  // Optional Relu/Clip between the op and its QuantizeLinear.
  Node *act = nullptr;
  Value *y = n->output(0);
  std::vector<Node *> us = g.users(y);
  if (us.size() != 1 || g.isGraphOutput(y))
    return false;
  bool fusesAct = n->kind == OpKind::Conv || n->kind == OpKind::Gemm ||
                  n->kind == OpKind::MatMul || n->kind == OpKind::Add;
  double lo = -INFINITY, hi = INFINITY;
  if (fusesAct && (us[0]->kind == OpKind::Relu || us[0]->kind == OpKind::Clip)) {
    act = us[0];
    if (act->kind == OpKind::Relu)
      lo = 0;
    for (size_t i = 1; i < act->inputs.size(); ++i) {
      if (!act->inputs[i])
        continue;
      auto v = util::scalarConstant(act->inputs[i]);
      if (!v)
        return false;
      (i == 1 ? lo : hi) = *v;
    }
    y = act->output(0);
    us = g.users(y);
    if (us.size() != 1 || g.isGraphOutput(y))
      return false;
  }
  Node *q = us[0];
  if (q->kind != OpKind::QuantizeLinear || q->input(0) != y)
    return false;
  auto yq = qdqParams(*q);
  if (!yq || yq->perChannel() || !isIntQ(q->output(0)->dtype))
    return false;
  // Operands.
  size_t nd = std::min(dataInputs(*n), n->inputs.size());
  std::vector<Value *> newIns = n->inputs;
  std::vector<std::pair<Value *, QuantParams>> params;
  bool matmulLike = n->kind == OpKind::Conv || n->kind == OpKind::Gemm ||
                    n->kind == OpKind::MatMul;
  for (size_t i = 0; i < nd; ++i) {
    Value *v = n->inputs[i];
    if (!v)
      continue;
    const Node *dq = dqOf(v);
    bool isBias = matmulLike && i == 2;
    if (!dq)
      return false;
    auto p = qdqParams(*dq);
    Value *iv = dq->input(0);
    if (!p || !(isBias ? iv->dtype == DType::I32 && iv->isConstant() : isIntQ(iv->dtype)))
      return false;
    bool weight = matmulLike && i == 1;
    if (p->perChannel()) {
      int wantAxis = n->kind == OpKind::Conv ? 0
                     : n->kind == OpKind::Gemm && n->attrInt("transB", 0) ? 0
                                                                          : static_cast<int>(iv->shape.size()) - 1;
      if (!(weight || isBias) || (weight && p->axis != wantAxis))
        return false;
    }
    if (iv->quant && !(*iv->quant == *p))
      return false;
    params.push_back({iv, *p});
    newIns[i] = iv;
  }
  if (params.empty())
    return false;
  // Data movement keeps the parameters.
  if ((quant::isDataMovement(n->kind) || moves) && !(params[0].second == *yq))
    return false;
  // The pad value on the integers: Q(Pad(DQ(x), v)) = Pad(x, Q(v)) as Q(DQ(x)) = x.
  if (n->kind == OpKind::Pad && n->input(2))
    newIns[2] = quantizedScalar(g, n->input(2), params[0].second, params[0].first->dtype);
  if (matmulLike && n->kind != OpKind::Conv && params.size() > 1 && n->inputs.size() > 2 &&
      n->input(2) && n->input(2)->shape.size() > 1)
    return false;
  if (matmulLike && params[0].second.perChannel())
    return false;
  if (matmulLike && n->inputs.size() > 2 && n->input(2)) {
    double sx = params[0].second.scale[0];
    newIns[2] = rescaleBias(g, params[2].first, params[2].second, sx, params[1].second);
    params.erase(params.begin() + 2);
  }
  for (auto &p : params)
    p.first->quant = p.second;
  n->inputs = newIns;
  Value *out = q->output(0);
  out->quant = *yq;
  if (act) {
    if (std::isfinite(lo))
      n->attrs["act_min"] = static_cast<float>(lo);
    if (std::isfinite(hi))
      n->attrs["act_max"] = static_cast<float>(hi);
  }
  Value *oldOut = n->output(0);
  g.eraseNode(q);
  if (act)
    g.eraseNode(act);
  oldOut->producer = nullptr;
  n->outputs[0] = out;
  out->producer = n;
  ctx.bump("fold-qdq.folded");
  return true;
}

/// Split between a DequantizeLinear and one QuantizeLinear per output, all
/// with the same per-tensor parameters: int8 data movement. True when rewritten.
bool tryFoldSplit(Graph &g, Node *n, PassContext &ctx) {
  if (n->kind != OpKind::Split || n->outputs.empty())
    return false;
  const Node *dq = dqOf(n->input(0));
  if (!dq)
    return false;
  auto p = qdqParams(*dq);
  Value *iv = dq->input(0);
  if (!p || p->perChannel() || !isIntQ(iv->dtype) || (iv->quant && !(*iv->quant == *p)))
    return false;
  std::vector<Node *> qs;
  for (Value *o : n->outputs) {
    if (!o || !util::isPlainF32(o) || g.isGraphOutput(o))
      return false;
    std::vector<Node *> us = g.users(o);
    if (us.size() != 1 || us[0]->kind != OpKind::QuantizeLinear || us[0]->input(0) != o)
      return false;
    auto yq = qdqParams(*us[0]);
    if (!yq || !(*yq == *p) || us[0]->output(0)->dtype != iv->dtype)
      return false;
    qs.push_back(us[0]);
  }
  iv->quant = *p;
  n->inputs[0] = iv;
  for (size_t k = 0; k < qs.size(); ++k) {
    Value *out = qs[k]->output(0), *old = n->outputs[k];
    out->quant = *p;
    g.eraseNode(qs[k]);
    old->producer = nullptr;
    n->outputs[k] = out;
    out->producer = n;
  }
  ctx.bump("fold-qdq.folded");
  return true;
}

/// DQ -> data movement (no QuantizeLinear after it, e.g. a flatten before a
/// Gemm) becomes data movement on the integers -> DQ, so that the consumer
/// sees a DequantizeLinear. True when a node was moved.
bool sinkDequantize(Graph &g, Node *m, PassContext &ctx) {
  if (!quant::isDataMovement(m->kind) || m->kind == OpKind::Identity || m->outputs.size() != 1 ||
      !util::isPlainF32(m->output(0)))
    return false;
  const Node *dq = dqOf(m->input(0));
  if (!dq)
    return false;
  auto p = qdqParams(*dq);
  Value *iv = dq->input(0);
  if (!p || p->perChannel() || !isIntQ(iv->dtype))
    return false;
  std::vector<Node *> us = g.users(m->output(0));
  if (us.size() == 1 && us[0]->kind == OpKind::QuantizeLinear)
    return false; // the ordinary DQ -> op -> Q pattern
  if (iv->quant && !(*iv->quant == *p))
    return false;
  iv->quant = *p;
  Value *out = m->output(0);
  Value *mid = g.addValue(g.uniqueName(out->name + "_q"), iv->dtype, out->shape);
  mid->quant = *p;
  std::vector<Value *> dqIns = {mid, dq->input(1)};
  if (dq->input(2))
    dqIns.push_back(dq->input(2));
  std::map<std::string, Attribute> attrs = dq->attrs;
  m->inputs[0] = iv;
  out->producer = nullptr;
  m->outputs[0] = mid;
  mid->producer = m;
  Node *nd = g.addNode(OpKind::DequantizeLinear, m->name + "_dq", dqIns, {out});
  nd->attrs = attrs;
  ctx.bump("fold-qdq.sunk");
  return true;
}

/// Bypasses Cast nodes whose target type equals their input type.
void dropIdentityCasts(Graph &g) {
  std::vector<Node *> casts;
  for (const auto &n : g.nodes())
    if (n->kind == OpKind::Cast && n->input(0) && n->output(0) &&
        n->input(0)->dtype == n->output(0)->dtype && !g.isGraphOutput(n->output(0)))
      casts.push_back(n.get());
  for (Node *c : casts) {
    Value *in = c->input(0), *out = c->output(0);
    g.replaceAllUsesWith(out, in);
    g.eraseNode(c);
  }
}

/// New i8 constant with the values of u8 constant `v` minus 128.
Value *shiftedConstant(Graph &g, const Value *v) {
  Tensor t(DType::I8, v->shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setInt(i, v->constant->getInt(i) - 128);
  Value *r = g.addConstant(g.uniqueName(v->name + "_i8"), std::move(t));
  if (v->quant) {
    r->quant = v->quant;
    for (auto &z : r->quant->zeroPoint)
      z -= 128;
  }
  return r;
}

bool isQdq(const Node *n) {
  return n->kind == OpKind::QuantizeLinear || n->kind == OpKind::DequantizeLinear;
}

/// Per-tensor quant params of a non-constant u8 value, else null.
const QuantParams *perTensorU8(const Value *v) {
  if (v->dtype != DType::U8 || !v->quant || v->isConstant() || v->quant->scale.size() != 1)
    return nullptr;
  return &*v->quant;
}

/// DequantizeLinear(from) -> QuantizeLinear -> `to`, an exact u8 <-> i8 change of the zero
/// point through float32 ((q - zp) * s is exact, rint(x / s) recovers it). The float
/// boundary kernels are the only ones that take u8 (docs/quantization.md "uint8 models").
void addBoundary(Graph &g, const Node *before, Value *from, Value *to, const std::string &base) {
  const QuantParams &qf = *from->quant, &qt = *to->quant;
  Value *f = g.addValue(g.uniqueName(base + "_f32"), DType::F32, from->shape);
  Value *s1 = g.addConstant(g.uniqueName(base + "_scale"), Tensor::scalar(DType::F32, qf.scale[0]));
  Value *z1 = g.addConstant(g.uniqueName(base + "_zp_in"), Tensor::scalar(from->dtype, qf.zeroPoint[0]));
  Value *s2 = g.addConstant(g.uniqueName(base + "_scale_out"), Tensor::scalar(DType::F32, qt.scale[0]));
  Value *z2 = g.addConstant(g.uniqueName(base + "_zp_out"), Tensor::scalar(to->dtype, qt.zeroPoint[0]));
  if (before) {
    g.insertNodeBefore(before, OpKind::DequantizeLinear, base + "_dq", {from, s1, z1}, {f});
    g.insertNodeBefore(before, OpKind::QuantizeLinear, base + "_q", {f, s2, z2}, {to});
  } else {
    g.addNode(OpKind::DequantizeLinear, base + "_dq", {from, s1, z1}, {f});
    g.addNode(OpKind::QuantizeLinear, base + "_q", {f, s2, z2}, {to});
  }
}

/// u8 graph inputs read by typed integer nodes get an i8 copy (u8 -> i8 boundary) and u8
/// graph outputs written by them are written as i8 and converted (i8 -> u8) at the end.
void convertU8Boundaries(Graph &g, PassContext &ctx) {
  for (Value *v : std::vector<Value *>(g.inputs)) {
    if (!perTensorU8(v))
      continue;
    std::vector<Node *> typedUsers;
    for (Node *u : g.users(v))
      if (!isQdq(u))
        typedUsers.push_back(u);
    if (typedUsers.empty() || g.nodes().empty())
      continue;
    Value *v8 = g.addValue(g.uniqueName(v->name + "_i8"), DType::I8, v->shape);
    v8->quant = v->quant;
    for (auto &z : v8->quant->zeroPoint)
      z -= 128;
    addBoundary(g, g.nodes().front().get(), v, v8, v->name + "_to_i8");
    for (Node *u : typedUsers)
      for (auto &in : u->inputs)
        if (in == v)
          in = v8;
    ctx.bump("fold-qdq.u8-boundary");
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    Value *v = g.outputs[i];
    if (!perTensorU8(v) || !v->producer || isQdq(v->producer) || g.isGraphInput(v))
      continue;
    Node *p = v->producer;
    Value *v8 = g.addValue(g.uniqueName(v->name + "_i8"), DType::I8, v->shape);
    v8->quant = v->quant;
    for (auto &z : v8->quant->zeroPoint)
      z -= 128;
    for (auto &o : p->outputs)
      if (o == v)
        o = v8;
    v8->producer = p;
    // Other readers of the value read the i8 copy.
    for (Node *u : g.users(v))
      for (auto &in : u->inputs)
        if (in == v)
          in = v8;
    v->producer = nullptr;
    addBoundary(g, nullptr, v8, v, v->name + "_to_u8");
    ctx.bump("fold-qdq.u8-boundary");
  }
}

/// u8 -> i8 (docs/quantization.md "uint8 models") for typed values that are
/// neither graph inputs nor outputs.
void convertU8(Graph &g, PassContext &ctx) {
  convertU8Boundaries(g, ctx);
  std::vector<Value *> vals;
  for (const auto &v : g.values())
    if (v->dtype == DType::U8 && v->quant && !g.isGraphInput(v.get()) &&
        !g.isGraphOutput(v.get()))
      vals.push_back(v.get());
  for (Value *v : vals) {
    if (v->isConstant()) {
      Value *r = shiftedConstant(g, v);
      g.replaceAllUsesWith(v, r);
    } else {
      v->dtype = DType::I8;
      for (auto &z : v->quant->zeroPoint)
        z -= 128;
    }
    ctx.bump("fold-qdq.u8-to-i8");
  }
  // Zero points of the Q/DQ nodes on converted values.
  for (const auto &n : g.nodes()) {
    bool q = n->kind == OpKind::QuantizeLinear, dq = n->kind == OpKind::DequantizeLinear;
    if (!q && !dq)
      continue;
    Value *iv = q ? n->output(0) : n->input(0);
    Value *z = n->input(2);
    if (iv && iv->dtype == DType::I8 && z && z->isConstant() && z->dtype == DType::U8)
      n->inputs[2] = shiftedConstant(g, z);
  }
}

} // namespace

Status runFoldQdq(Graph &g, PassContext &ctx) {
  bool any = false;
  for (const auto &n : g.nodes())
    any |= n->kind == OpKind::DequantizeLinear || n->kind == OpKind::QuantizeLinear ||
           (n->output(0) && n->output(0)->quant) ||
           (n->input(0) && n->input(0)->quant && isIntQ(n->input(0)->dtype)); // ConvInteger
  if (!any)
    return success();
  dropIdentityCasts(g);
  // One rewrite at a time: a rewrite erases nodes, so the scan starts again, a few nodes
  // before the rewritten one (a fold changes the folded op, its activation and its
  // QuantizeLinear, which come after the op's producers; the list shrinks by the nodes
  // erased before it). A fold cannot make an earlier op foldable (its output would have
  // to lose a user, and no folded op reads a float op's output), but the loop still ends
  // only after a scan from the first node finds nothing. A chain of N foldable ops costs
  // O(N) scanned nodes instead of O(N^2).
  const size_t back = 8;
  size_t start = 0;
  auto rewriteOnce = [&]() -> Result<bool> {
    const auto &nodes = g.nodes();
    for (size_t i = std::min(start, nodes.size()); i < nodes.size(); ++i)
      if (tryFold(g, nodes[i].get(), ctx) || tryFoldSplit(g, nodes[i].get(), ctx)) {
        start = i > back ? i - back : 0;
        return true;
      }
    if (start > 0) { // then once more from the first node
      start = 0;
      return true;
    }
    for (const auto &n : g.nodes())
      if (sinkDequantize(g, n.get(), ctx)) {
        if (!g.topoSort())
          return error("fold-qdq: cycle after moving a DequantizeLinear");
        return true;
      }
    return false;
  };
  for (;;) {
    auto r = rewriteOnce();
    if (!r)
      return r.error();
    if (!*r)
      break;
  }
  // Remove Q/DQ nodes left without users.
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<Node *> dead;
    util::UseIndex uses(g);
    for (const auto &n : g.nodes())
      if ((n->kind == OpKind::DequantizeLinear || n->kind == OpKind::QuantizeLinear) &&
          uses.numUses(n->output(0)) == 0)
        dead.push_back(n.get());
    for (Node *n : dead)
      g.eraseNode(n);
    changed = !dead.empty();
  }
  convertU8(g, ctx);
  g.removeUnusedValues();
  return success();
}

} // namespace npucc::passes
