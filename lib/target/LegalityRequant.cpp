//===- LegalityRequant.cpp - The requantization checks of the MAC commands ===//
//
// See LegalityChecker.h: whether an NPU's requantization stage (q31,
// fp32_scale, shift, mul_shift_add) and activation stage can compute a
// conv's, depthwise's or matmul's int8 output as the graph does, or how far
// apart (mul_shift_add's fit, at most one step), and why not.
//
//===----------------------------------------------------------------------===//
#include "LegalityChecker.h"

#include "npucc/quant/MulShiftAdd.h"
#include "npucc/quant/Multiplier.h"
#include "npucc/quant/Rounding.h"

#include "../../runtime/hal/npucc_params.h"

#include <algorithm>
#include <cstdio>
#include <functional>

namespace npucc::target::legality {

/// Per-tensor int8 params of an activation, or a reason.
std::optional<std::pair<double, int32_t>> activationQ(const ir::Value *v, const std::string &role,
                                                      Checker &c) {
  if (!v || v->dtype != ir::DType::I8 || !v->quant || v->quant->scale.empty()) {
    c.fail(role + " '" + (v ? v->name : std::string("?")) + "' is " +
           (v ? ir::dtypeName(v->dtype) : "absent") +
           ", not int8 (quantize the model, e.g. --quantize int8, to run it on the NPU)");
    return std::nullopt;
  }
  if (v->quant->perChannel()) {
    c.fail(role + " '" + v->name + "' is quantized per channel");
    return std::nullopt;
  }
  return std::make_pair(double(v->quant->scale[0]),
                        v->quant->zeroPoint.empty() ? 0 : v->quant->zeroPoint[0]);
}

namespace {

/// mul_shift_add: channel `i`'s fit within the widths, at most one step from
/// the exact rounding, and its bias plus the rounding offset within int32.
bool checkMsa(Checker &c, const NpuOp &op, float sx, float sw, float sy, int32_t zy,
              const ir::Value *b, size_t i, bool perTensor) {
  std::string why;
  double ratio = quant::msaRatio(sx, sw, sy);
  auto p = quant::fitMulShiftAdd(ratio, zy, op.msa, &why);
  std::string form = " (the NPU's " + op.kindName + " requantizes with mul_shift_add, mul " +
                     std::to_string(op.msa.mulBits) + " bits, shift 0.." +
                     std::to_string((1u << op.msa.shiftBits) - 1) + ")";
  if (!p) {
    c.fail(why + " of channel " + std::to_string(i) + form);
    return false;
  }
  if (p->worstSteps >= 1) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.9g is %d/2^%d, up to %.2f", ratio, p->mul, p->shift,
                  p->worstSteps);
    c.fail("requantization ratio " + std::string(buf) +
           " steps from the exact rounding in channel " + std::to_string(i) + form);
    return false;
  }
  // The channels this scale covers: all of them for per-tensor weights.
  size_t end = perTensor && b ? size_t(b->numElements()) : i + 1;
  for (size_t k = i; k < end && b && b->isConstant() && b->dtype == ir::DType::I32; ++k) {
    int64_t bias = b->constant->data<int32_t>()[k];
    if (bias + p->biasAdd > INT32_MAX) {
      c.fail("bias " + std::to_string(bias) + " of channel " + std::to_string(k) +
             " plus the rounding offset " + std::to_string(p->biasAdd) + " exceeds int32" + form);
      return false;
    }
  }
  return true;
}

} // namespace

/// Requantization of a MAC-array op (conv, depthwise, matmul): weight and bias
/// types, per-channel or per-tensor multipliers, rounding, fused clamp, zero
/// points; fills op.perChannel / op.roundingChanged.
void checkRequant(const ir::Node &n, const ir::Value *w, const ir::Value *b, int64_t channels,
                  int axis, Checker &c, NpuOp &op, const LegalityOptions &opts) {
  const OpLimits &l = *c.limits();
  auto qx = activationQ(n.input(0), "input", c);
  auto qy = activationQ(n.output(0), "output", c);
  // uint8 data and correction_terms (issue 19, phase 7b): the stages, the
  // simulator and the command tests exist, the compiler's side (uint8 values
  // and the conversions at the NPU's boundaries) does not yet.
  for (size_t slot :
       {size_t(NPUCC_SLOT_INPUT), size_t(NPUCC_SLOT_CORRECTION), size_t(NPUCC_SLOT_OUTPUT)})
    if (l.stage(slot) != npucc_stage_default(int(slot))) {
      c.fail(std::string("the NPU's ") + op.kindName + " computes with the " +
             (slot == NPUCC_SLOT_INPUT    ? "uint8 input"
              : slot == NPUCC_SLOT_OUTPUT ? "uint8 output"
                                          : "correction_terms correction") +
             " stage, which the compiler does not target yet");
      return;
    }
  if (!w || !w->isConstant() || w->dtype != ir::DType::I8 || !w->quant) {
    c.fail("weights are not a constant int8 tensor");
    return;
  }
  const ir::QuantParams &q = *w->quant;
  if (q.scale.size() != 1 && (int64_t(q.scale.size()) != channels || q.axis != axis)) {
    c.fail("weights are not quantized per tensor or per output channel");
    return;
  }
  for (int32_t z : q.zeroPoint)
    if (z != 0) {
      c.fail("weights have zero point " + std::to_string(z) +
             " (the NPU has no weight zero "
             "point)");
      break;
    }
  if (b && (!b->isConstant() || b->dtype != ir::DType::I32 || b->numElements() != channels))
    c.fail("bias is not a constant int32 tensor of " + std::to_string(channels) + " elements");
  bool differ = std::adjacent_find(q.scale.begin(), q.scale.end(), std::not_equal_to<float>()) !=
                q.scale.end();
  // fp32_scale reads a binary32 scale per channel from the rq table (the
  // loader requires per_channel): a per-tensor scale is a table of equal ones.
  op.fp32Scale = l.stage(NPUCC_SLOT_REQUANT) == NPUCC_STAGE_RQ_FP32;
  // shift likewise reads one right shift per channel (the loader requires
  // per_channel) and rounds exactly, as q31 does.
  op.rqShift = l.stage(NPUCC_SLOT_REQUANT) == NPUCC_STAGE_RQ_SHIFT;
  // mul_shift_add likewise reads mul, shift and add per channel.
  op.rqMsa = l.stage(NPUCC_SLOT_REQUANT) == NPUCC_STAGE_RQ_MUL_SHIFT_ADD;
  op.msa = quant::MsaWidths{l.msaBits[0], l.msaBits[1], l.msaBits[2]};
  op.perChannel = differ || !l.perTensorRequant || op.fp32Scale || op.rqShift || op.rqMsa;
  if (op.perChannel && !l.perChannelRequant)
    c.fail("per-channel requantization but the NPU's " + op.kindName + " has only per_tensor");
  // The NPU's rounding: q31 is the exact one, fp32_scale ONNX Runtime's
  // float32 arithmetic (requant="fp32"); a node of the other rounding runs
  // with the NPU's (at most one step apart) unless --requant keeps it.
  quant::Rounding npuRounding = op.fp32Scale ? quant::Rounding::Fp32 : quant::Rounding::Exact;
  // mul_shift_add approximates either rounding with its fitted parameters
  // (below), so the node's own rounding does not decide.
  if (!op.rqMsa && quant::roundingOf(n) != npuRounding) {
    if (op.fp32Scale ? opts.allowFp32ForExact : opts.allowExactForFp32)
      op.roundingChanged = true;
    else if (op.fp32Scale)
      c.fail("requantization rounding exact (kept by --requant exact); the NPU's " + op.kindName +
             " requantizes with fp32_scale (float32 rounding)");
    else
      c.fail("requantization rounding fp32 (ONNX Runtime's float32 arithmetic, kept by "
             "--requant fp32); the NPU rounds exactly");
  }
  // lut256, pwl: the fused clamp is in the layer's table (quant::actLut256,
  // quant::pwlClamp: exact).
  op.actLut = l.stage(NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_LUT256 ||
              l.stage(NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_PWL;
  bool clamp = n.hasAttr("act_min") || n.hasAttr("act_max");
  if (clamp && !l.fusedClamp && !op.actLut)
    c.fail("fused clamp (act_min/act_max) but the NPU's " + op.kindName +
           " has no fused activation");
  if (!qx || !qy)
    return;
  c.fits("in_zp", qx->second);
  c.fits("out_zp", qy->second);
  if (!op.perChannel) {
    quant::QuantMultiplier m = quant::productMultiplier(float(qx->first), q.scale[0],
                                                        float(qy->first), quant::Rounding::Exact);
    c.fits("requant_mult", m.mult);
    c.fits("requant_shift", m.shift);
  } else {
    for (size_t i = 0; i < q.scale.size(); ++i) {
      quant::QuantMultiplier m =
          quant::productMultiplier(float(qx->first), q.scale[i], float(qy->first), npuRounding);
      if (m.shift < -31 || m.shift > 31) {
        c.fail("requantization shift " + std::to_string(m.shift) + " of channel " +
               std::to_string(i) + " outside -31..31");
        break;
      }
      if (op.rqMsa && !checkMsa(c, op, float(qx->first), q.scale[i], float(qy->first), qy->second,
                                b, i, q.scale.size() == 1))
        break;
      // shift: the Q31 multiplier the CPU would use must be 2^-s exactly
      // (mult 2^30), s in 0..31, so the rounding right shift is the same.
      double ratio = double(qx->first) * double(q.scale[i]) / double(qy->first);
      if (op.rqShift && (m.mult != (int32_t(1) << 30) || m.shift < -1 || m.shift > 30 ||
                         quant::multiplierValue(m) != ratio)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", ratio);
        c.fail("requantization ratio " + std::string(buf) + " of channel " + std::to_string(i) +
               " is not 2^-s with s in 0..31 (the NPU's " + op.kindName +
               " requantizes with a rounding right shift)");
        break;
      }
    }
  }
}

} // namespace npucc::target::legality
