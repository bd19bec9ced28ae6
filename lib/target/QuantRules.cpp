//===- QuantRules.cpp - What an NPU's requantizer needs from the quantizer -===//
//
// See QuantRules.h. The command kind of a node is the legality check's
// (candidateKindOf), so the quantizer and the placement agree on which
// description entry governs a node.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/QuantRules.h"

#include "npucc/target/Legality.h"

#include "../../runtime/hal/npucc_params.h"

namespace npucc::target {

namespace {

/// A shift-only requantizer: the multiplier is fixed at a power of two.
bool shiftOnly(const TargetDesc &t, const std::string &kind) {
  ParamRange m = t.paramRange(kind, "requant_mult");
  return !m.bound && m.lo > 0 && (m.lo & (m.lo - 1)) == 0;
}

/// The requantization stage is `shift` (a rounding right shift per channel):
/// only power-of-two ratios run on the NPU.
bool shiftStage(const TargetDesc &t, const std::string &kind) {
  const OpLimits *l = t.supports(kind) ? t.operation(kind) : nullptr;
  return l && l->stage(NPUCC_SLOT_REQUANT) == NPUCC_STAGE_RQ_SHIFT;
}

} // namespace

quant::WeightRule weightRuleFor(const ir::Node &n, const TargetDesc &t) {
  quant::WeightRule r;
  std::string kind = candidateKindOf(n);
  if (kind != "conv" && kind != "depthwise" && kind != "matmul")
    return r;
  if (!t.supports(kind))
    return r;
  if (shiftStage(t, kind)) {
    r.powerOfTwo = true;
    r.reason = "the NPU's " + kind + " requantizes by a rounding right shift (requant stage shift)";
    return r;
  }
  const OpLimits *l = t.operation(kind);
  if (!l || l->perChannelRequant || !l->perTensorRequant)
    return r;
  r.perChannel = false;
  r.reason = "the NPU's " + kind + " requantizes per tensor only";
  if (shiftOnly(t, kind)) {
    r.powerOfTwo = true;
    int64_t m = t.paramRange(kind, "requant_mult").lo;
    int bits = 0;
    while ((int64_t(1) << bits) < m)
      ++bits;
    r.reason = "the NPU's " + kind + " requantizes per tensor by a shift only: requant_mult is "
               "fixed at 2^" + std::to_string(bits);
  }
  return r;
}

quant::QdqOptions quantRules(const TargetDesc &t) {
  quant::QdqOptions o;
  bool any = false;
  for (const char *kind : {"conv", "depthwise", "matmul"}) {
    if (shiftStage(t, kind)) {
      any = true;
      o.powerOfTwoActivations = true;
      continue;
    }
    const OpLimits *l = t.supports(kind) ? t.operation(kind) : nullptr;
    if (!l || l->perChannelRequant || !l->perTensorRequant)
      continue;
    any = true;
    o.powerOfTwoActivations = o.powerOfTwoActivations || shiftOnly(t, kind);
  }
  if (any)
    o.weightRule = [&t](const ir::Node &n) { return weightRuleFor(n, t); };
  return o;
}

} // namespace npucc::target
