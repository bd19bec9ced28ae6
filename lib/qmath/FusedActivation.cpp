//===- FusedActivation.cpp - A lookup-table activation fused into a MAC node ===//
//
// The attributes npu-partition writes when it folds an int8 activation into
// an NPU MAC node on a lut256 NPU, and the two views every consumer takes of
// such a node: its MAC part (coreOf) and its table (fusedLut).
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/FusedActivation.h"

namespace npucc::quant {

namespace {

struct Row {
  ir::OpKind kind;
  const char *name;
  LutFunction fn;
};

constexpr Row Rows[] = {
    {ir::OpKind::Sigmoid, "Sigmoid", LutFunction::Sigmoid},
    {ir::OpKind::Tanh, "Tanh", LutFunction::Tanh},
    {ir::OpKind::HardSwish, "HardSwish", LutFunction::HardSwish},
    {ir::OpKind::LeakyRelu, "LeakyRelu", LutFunction::LeakyRelu},
    {ir::OpKind::HardSigmoid, "HardSigmoid", LutFunction::HardSigmoid},
};

bool isInt8(const ir::Value *v) {
  return v && v->dtype == ir::DType::I8 && v->quant && v->quant->scale.size() == 1;
}

} // namespace

std::optional<LutActivation> lutActivationOf(const ir::Node &n) {
  for (const Row &r : Rows)
    if (r.kind == n.kind) {
      LutActivation a;
      a.fn = r.fn;
      if (r.fn == LutFunction::LeakyRelu)
        a.alpha = n.attrFloat("alpha", 0.01f);
      if (r.fn == LutFunction::HardSigmoid) {
        a.alpha = n.attrFloat("alpha", 0.2f);
        a.beta = n.attrFloat("beta", 0.5f);
      }
      return a;
    }
  return std::nullopt;
}

bool hasFusedActivation(const ir::Node &n) { return n.hasAttr("act_fn"); }

bool fuseActivation(ir::Node &n, const ir::Node &act) {
  ir::Value *mid = n.output(0), *y = act.output(0);
  std::optional<LutActivation> a = lutActivationOf(act);
  if (!a || hasFusedActivation(n) || act.input(0) != mid || !isInt8(mid) || !isInt8(y))
    return false;
  const char *name = "";
  for (const Row &r : Rows)
    if (r.kind == act.kind)
      name = r.name;
  n.attrs["act_fn"] = std::string(name);
  if (act.hasAttr("alpha"))
    n.attrs["act_alpha"] = act.attrFloat("alpha", 0.0f);
  if (act.hasAttr("beta"))
    n.attrs["act_beta"] = act.attrFloat("beta", 0.0f);
  n.attrs["act_in_scale"] = mid->quant->scale[0];
  n.attrs["act_in_zp"] = int64_t(mid->quant->zeroPoint.empty() ? 0 : mid->quant->zeroPoint[0]);
  n.outputs[0] = y;
  y->producer = &n;
  return true;
}

std::unique_ptr<CoreNode> coreOf(const ir::Node &n) {
  if (!hasFusedActivation(n) || !n.output(0))
    return nullptr;
  auto c = std::make_unique<CoreNode>(CoreNode{n, *n.output(0)});
  for (const char *k : {"act_fn", "act_alpha", "act_beta", "act_in_scale", "act_in_zp", "act_pwl"})
    c->node.attrs.erase(k);
  c->mid.name = n.output(0)->name + ".act_in";
  c->mid.quant =
      ir::QuantParams{{n.attrFloat("act_in_scale", 1.0f)}, {int32_t(n.attrInt("act_in_zp", 0))}, 0};
  c->mid.producer = &c->node;
  c->node.outputs[0] = &c->mid;
  return c;
}

std::optional<LutTable> fusedLut(const ir::Node &n) {
  if (!hasFusedActivation(n))
    return std::nullopt;
  std::string fn = n.attrString("act_fn", "");
  const ir::Value *y = n.output(0);
  if (!isInt8(y))
    return std::nullopt;
  for (const Row &r : Rows)
    if (fn == r.name) {
      double alpha = r.fn == LutFunction::HardSigmoid ? 0.2 : 0.01, beta = 0.5;
      alpha = n.attrFloat("act_alpha", float(alpha));
      beta = n.attrFloat("act_beta", float(beta));
      return buildLut(r.fn, n.attrFloat("act_in_scale", 1.0f), int32_t(n.attrInt("act_in_zp", 0)),
                      y->quant->scale[0], y->quant->zeroPoint.empty() ? 0 : y->quant->zeroPoint[0],
                      alpha, beta);
    }
  return std::nullopt;
}

} // namespace npucc::quant
