//===- LegalityChecker.h - Legality's shared parts (internal) ------------===//
//
// The collector of failed constraints (Checker) and the requantization
// checks of the MAC-array commands, shared by Legality.cpp (the command
// kinds) and LegalityRequant.cpp (weights, bias, multipliers, rounding, the
// requantization stage's fit, fused clamp, zero points). Internal to
// lib/target.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/target/Legality.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace npucc::target::legality {

/// Collects the failed constraints of one node.
class Checker {
public:
  Checker(const TargetDesc &t, const std::string &kind, std::vector<std::string> &r)
      : T(t), Kind(kind), Reasons(r), Limits(t.operation(kind)) {}

  const OpLimits *limits() const { return Limits; }
  const TargetDesc &target() const { return T; }
  bool ok() const { return Reasons.empty(); }
  void fail(const std::string &why) { Reasons.push_back(why); }
  void require(bool cond, const std::string &why) {
    if (!cond)
      fail(why);
  }

  /// The value fits what the command's fields (or fixed value) can carry.
  void fits(const std::string &param, int64_t v) {
    const CommandDesc *c = T.command(Kind);
    if (!c)
      return;
    ParamRange r = T.paramRange(Kind, param);
    if (!r.bound) {
      if (v != r.lo)
        fail(param + " " + std::to_string(v) + " but the " + Kind + " command fixes " + param +
             " = " + std::to_string(r.lo));
      return;
    }
    if (!r.values.empty()) {
      if (!r.holds(v))
        fail(T.paramProblem(commandKindId(Kind), paramId(param), v));
      return;
    }
    if (v < r.lo || v > r.hi)
      fail(param + " " + std::to_string(v) + " outside what " + Kind + "'s field '" + r.field +
           "' holds (" + std::to_string(r.lo) + ".." + std::to_string(r.hi) + ")");
    else if (!r.holds(v))
      fail(param + " " + std::to_string(v) + " is not a multiple of " + std::to_string(r.step) +
           " as " + Kind + "'s field '" + r.field + "' needs");
  }
  /// A maximum of 0 means "no limit".
  void atMost(const std::string &what, int64_t v, unsigned max, const std::string &key) {
    if (max && v > int64_t(max))
      fail(what + " " + std::to_string(v) + " exceeds " + Kind + "." + key + " " +
           std::to_string(max));
  }
  void multipleOf(const std::string &what, int64_t v, unsigned m, const std::string &key) {
    if (m > 1 && v % int64_t(m))
      fail(what + " " + std::to_string(v) + " is not a multiple of " + Kind + "." + key + " " +
           std::to_string(m));
  }

private:
  const TargetDesc &T;
  std::string Kind;
  std::vector<std::string> &Reasons;
  const OpLimits *Limits;
};

/// Per-tensor int8 params of an activation, or a reason.
std::optional<std::pair<double, int32_t>> activationQ(const ir::Value *v, const std::string &role,
                                                      Checker &c);

/// Requantization of a MAC-array op (conv, depthwise, matmul): weight and bias
/// types, per-channel or per-tensor multipliers, rounding, the requantization
/// stage, fused clamp, zero points; fills op.perChannel / op.roundingChanged
/// and the stage flags.
void checkRequant(const ir::Node &n, const ir::Value *w, const ir::Value *b, int64_t channels,
                  int axis, Checker &c, NpuOp &op, const LegalityOptions &opts);

/// A conv/depthwise stride the operation does not offer natively but its
/// select pool stage does: `op` becomes the stride-1 command over the whole
/// windows (NpuOp::poolSelect, poolK, poolOffY/X, outH/outW times the
/// stride, padding); false with the reason recorded when it cannot (op
/// unchanged), true when it does or has nothing to do (LegalitySelect.cpp).
bool selectStrideLegal(Checker &c, NpuOp &op);

} // namespace npucc::target::legality
