//===- FuseActivation.cpp - Fuse clamps into the producing op -------------===//
//
// A clamping activation of the result of a Conv, ConvTranspose, Gemm, MatMul
// or Add that has no other use is folded into the producer as the float
// attributes act_min / act_max (output clamped to [act_min, act_max]):
//   Relu(x)              -> [0, +inf]
//   Clip(x, @lo?, @hi?)  -> [lo, hi]  (constant scalar bounds, absent = open)
//   Max(x, @c), Max(@c, x) -> [c, +inf]     Min(x, @c), Min(@c, x) -> [-inf, c]
// (so Relu6 exports - Clip(0, 6) or Min(Relu(x), 6) - fuse completely: the
// sweep runs in topological order and a fused producer can absorb the next
// clamp). Bounds intersect with ones already present; only finite bounds are
// written as attributes. The producer then defines the activation's result.
// Only plain f32 values are rewritten. Statistics: fuse-activation.fused.
//
//===----------------------------------------------------------------------===//
#include "npucc/passes/Pass.h"

#include "PassUtils.h"

#include <algorithm>
#include <cmath>

namespace npucc::passes {

namespace {

struct Clamp {
  ir::Value *x = nullptr; // the clamped (non-constant) operand
  float lo = -util::Inf, hi = util::Inf;
};

bool isProducerKind(ir::OpKind k) {
  return k == ir::OpKind::Conv || k == ir::OpKind::ConvTranspose || k == ir::OpKind::Gemm ||
         k == ir::OpKind::MatMul || k == ir::OpKind::Add;
}

/// A bound given by an optional constant scalar input (absent: `dflt`).
bool bound(const ir::Value *v, float dflt, float &out) {
  if (!v) {
    out = dflt;
    return true;
  }
  auto c = util::scalarConstant(v);
  if (!c || std::isnan(*c))
    return false;
  out = static_cast<float>(*c);
  return true;
}

/// The clamp an activation node applies, if it is one.
std::optional<Clamp> asClamp(const ir::Node &n) {
  Clamp c;
  switch (n.kind) {
  case ir::OpKind::Relu:
    c.x = n.input(0);
    c.lo = 0.0f;
    break;
  case ir::OpKind::Clip:
    c.x = n.input(0);
    if (n.inputs.size() > 1) {
      if (!bound(n.input(1), -util::Inf, c.lo) || !bound(n.input(2), util::Inf, c.hi))
        return std::nullopt;
    } else {
      c.lo = n.attrFloat("min", -util::Inf); // pre-opset-11 attribute form
      c.hi = n.attrFloat("max", util::Inf);
    }
    break;
  case ir::OpKind::Max:
  case ir::OpKind::Min: {
    if (n.inputs.size() != 2 || !n.inputs[0] || !n.inputs[1])
      return std::nullopt;
    int k = n.inputs[0]->isConstant() ? 0 : 1; // index of the constant operand
    if (!n.inputs[static_cast<size_t>(k)]->isConstant() ||
        n.inputs[static_cast<size_t>(1 - k)]->isConstant())
      return std::nullopt;
    c.x = n.inputs[static_cast<size_t>(1 - k)];
    float v;
    if (!bound(n.inputs[static_cast<size_t>(k)], 0.0f, v))
      return std::nullopt;
    (n.kind == ir::OpKind::Max ? c.lo : c.hi) = v;
    break;
  }
  default:
    return std::nullopt;
  }
  if (!c.x || std::isnan(c.lo) || std::isnan(c.hi))
    return std::nullopt;
  return c;
}

} // namespace

Status runFuseActivation(ir::Graph &g, PassContext &ctx) {
  std::vector<ir::Node *> order;
  for (auto &n : g.nodes())
    order.push_back(n.get());

  util::UseIndex uses(g);
  int64_t fused = 0;
  for (ir::Node *act : order) {
    std::optional<Clamp> c = asClamp(*act);
    if (!c)
      continue;
    ir::Value *x = c->x;
    ir::Value *y = act->output(0);
    if (act->outputs.size() != 1 || !uses.hasSingleUse(x) || !util::isPlainF32(x) ||
        !util::isPlainF32(y) || x->shape != y->shape)
      continue;
    ir::Node *p = x->producer;
    if (!isProducerKind(p->kind) || p->outputs.size() != 1)
      continue;
    float lo = std::max(p->attrFloat("act_min", -util::Inf), c->lo);
    float hi = std::min(p->attrFloat("act_max", util::Inf), c->hi);
    if (lo > hi)
      continue;
    if (lo > -util::Inf)
      p->attrs["act_min"] = lo;
    if (hi < util::Inf)
      p->attrs["act_max"] = hi;
    uses.dropNode(act);
    util::absorbConsumer(g, p, 0, act, y);
    ++fused;
  }
  if (fused) {
    g.removeUnusedValues();
    ctx.bump("fuse-activation.fused", fused);
  }
  return success();
}

} // namespace npucc::passes
