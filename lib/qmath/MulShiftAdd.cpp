//===- MulShiftAdd.cpp - The batch-norm requantization form of an NPU -----===//
//
// See include/npucc/quant/MulShiftAdd.h. Deterministic double arithmetic:
// ldexp and llround are exact or correctly rounded on every host.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/MulShiftAdd.h"

#include "../../runtime/include/npucc_stages.h"

#include <cmath>
#include <cstdio>

namespace npucc::quant {

namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

bool fail(std::string *why, const std::string &text) {
  if (why)
    *why = text;
  return false;
}

} // namespace

double msaRatio(float sx, float sw, float sy) { return double(sx) * double(sw) / double(sy); }

std::optional<MsaParams> fitMulShiftAdd(double ratio, int32_t outZp, const MsaWidths &w,
                                        std::string *why) {
  if (!(ratio > 0) || !std::isfinite(ratio)) {
    fail(why, "requantization ratio " + num(ratio) + " is not positive and finite");
    return std::nullopt;
  }
  unsigned shiftBits = w.shiftBits > 6 ? 6 : w.shiftBits;
  unsigned mulBits = w.mulBits > 32 ? 32 : w.mulBits;
  int maxShift = int((1u << shiftBits) - 1);
  int64_t mulMax = (int64_t(1) << (mulBits - 1)) - 1;
  MsaParams p;
  int64_t mul = 0;
  int s = maxShift;
  for (; s >= 0; --s) {
    double scaled = std::ldexp(ratio, s);
    if (scaled >= double(mulMax) + 0.5)
      continue; // (and llround of a value beyond int64 is undefined)
    mul = std::llround(scaled);
    break;
  }
  if (s < 0) {
    fail(why, "requantization ratio " + num(ratio) + " exceeds the largest mul (" +
                  std::to_string(mulMax) + ", " + std::to_string(mulBits) + " bits) at shift 0");
    return std::nullopt;
  }
  if (mul == 0) {
    fail(why, "requantization ratio " + num(ratio) + " is below the smallest mul/2^shift (2^-" +
                  std::to_string(maxShift) + ")");
    return std::nullopt;
  }
  int64_t addMax = (int64_t(1) << (w.addBits - 1)) - 1;
  if (outZp > addMax || outZp < -addMax - 1) {
    fail(why, "output zero point " + std::to_string(outZp) + " does not fit add (" +
                  std::to_string(w.addBits) + " bits)");
    return std::nullopt;
  }
  p.mul = int32_t(mul);
  p.shift = s;
  p.add = outZp;
  // floor((acc + b) * mul / 2^s) rounds acc * mul / 2^s to nearest when
  // b * mul = 2^(s-1); b is the nearest integer (0 when s is 0: mul is then
  // an integer ratio and the product exact).
  p.biasAdd = s > 0 ? int32_t(std::llround(std::ldexp(1.0, s - 1) / double(mul))) : 0;
  double real = std::ldexp(double(mul), -s);
  // Accumulators whose output lands in the int8 range: |acc * M| <= 255.
  double accMax = 255.0 / ratio;
  double offsetErr = s > 0 ? std::fabs(double(p.biasAdd) * real - 0.5) : 0.5;
  p.worstSteps = accMax * std::fabs(real - ratio) + offsetErr;
  return p;
}

int32_t applyMsa(int64_t acc, const MsaParams &p) {
  return npucc_stage_rq_msa(npucc_sat_i32(acc + p.biasAdd), p.mul, p.shift, p.add);
}

void setMsaAttrs(ir::Node &n, const MsaWidths &w) {
  n.attrs["rq_stage"] = std::string("mul_shift_add");
  n.attrs["rq_bits"] = std::vector<int64_t>{w.mulBits, w.shiftBits, w.addBits};
}

std::optional<MsaWidths> msaAttrs(const ir::Node &n) {
  if (n.attrString("rq_stage", "") != "mul_shift_add")
    return std::nullopt;
  std::vector<int64_t> b = n.attrInts("rq_bits");
  if (b.size() != 3)
    return std::nullopt;
  MsaWidths w;
  w.mulBits = unsigned(b[0]);
  w.shiftBits = unsigned(b[1]);
  w.addBits = unsigned(b[2]);
  return w;
}

} // namespace npucc::quant
