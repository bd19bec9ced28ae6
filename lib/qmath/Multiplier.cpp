//===- Multiplier.cpp - Q31 multipliers, clamp bounds, LUTs, exp tables ---===//
//
// See include/npucc/quant/Multiplier.h and docs/quantization.md.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/Multiplier.h"

#include <algorithm>
#include <cmath>

#include "../../runtime/include/npucc_requant.h"

namespace npucc::quant {

QuantMultiplier quantizeMultiplier(double real) {
  QuantMultiplier q;
  if (!(real > 0.0))
    return q; // zero, negative or NaN
  if (std::isinf(real))
    return QuantMultiplier{INT32_MAX, -31};
  int exp = 0;
  double frac = std::frexp(real, &exp); // real = frac * 2^exp, frac in [0.5, 1)
  int64_t mult = static_cast<int64_t>(std::llround(frac * 2147483648.0));
  if (mult == (int64_t(1) << 31)) {
    mult = int64_t(1) << 30;
    ++exp;
  }
  int64_t shift = -exp;
  if (shift < -31)
    return QuantMultiplier{INT32_MAX, -31};
  if (shift > 31) {
    // Fold the excess right shift into mult (round half away from zero).
    int64_t extra = shift - 31;
    mult = extra >= 63 ? 0 : (mult + (int64_t(1) << (extra - 1))) >> extra;
    shift = 31;
  }
  q.mult = static_cast<int32_t>(mult);
  q.shift = static_cast<int32_t>(shift);
  return q;
}

double multiplierValue(QuantMultiplier m) {
  return std::ldexp(static_cast<double>(m.mult), -31 - m.shift);
}

const char *roundingName(Rounding r) { return r == Rounding::Fp32 ? "fp32" : "exact"; }

std::optional<Rounding> parseRounding(const std::string &name) {
  if (name == "exact")
    return Rounding::Exact;
  if (name == "fp32")
    return Rounding::Fp32;
  return std::nullopt;
}

int32_t roundingCode(Rounding r) { return r == Rounding::Fp32 ? NPUCC_RQ_FP32 : NPUCC_RQ_EXACT; }

QuantMultiplier productMultiplier(float sx, float sw, float sy, Rounding r) {
  if (r == Rounding::Exact)
    return quantizeMultiplier(double(sx) * double(sw) / double(sy));
  // Two float32 operations, each rounded to float32 (volatile: no excess precision).
  volatile float prod = sx * sw;
  volatile float m = prod / sy;
  return quantizeMultiplier(double(m));
}

int32_t applyMultiplier(int32_t acc, QuantMultiplier m, Rounding r) {
  return r == Rounding::Fp32 ? npucc_mul_qmult_fp32(acc, m.mult, m.shift)
                             : npucc_mul_qmult_rne(acc, m.mult, m.shift);
}

std::array<int32_t, 4> requantWords(QuantMultiplier m, Rounding r) {
  static_assert(NPUCC_RQ32_WORDS == 4, "requantWords returns NPUCC_RQ32_WORDS words");
  std::array<int32_t, 4> w{};
  npucc_rq32_prep(m.mult, m.shift, roundingCode(r), w.data());
  return w;
}

int32_t quantizeToI8(double real, double scale, int32_t zp) {
  if (std::isnan(real) || !(scale > 0.0))
    return std::clamp<int32_t>(zp, -128, 127);
  double q = real / scale;
  if (q > 1e6)
    return 127;
  if (q < -1e6)
    return -128;
  int64_t v = static_cast<int64_t>(std::lround(q)) + zp;
  return static_cast<int32_t>(std::clamp<int64_t>(v, -128, 127));
}

ClampBounds activationBounds(double lo, double hi, double outScale, int32_t outZp) {
  ClampBounds b;
  if (!std::isnan(lo))
    b.lo = std::max<int32_t>(-128, quantizeToI8(lo, outScale, outZp));
  if (!std::isnan(hi))
    b.hi = std::min<int32_t>(127, quantizeToI8(hi, outScale, outZp));
  return b;
}

LutTable buildLut(const std::function<double(double)> &f, double sx, int32_t zx, double sy,
                  int32_t zy) {
  LutTable t{};
  for (int i = -128; i <= 127; ++i)
    t[size_t(i + 128)] = quantizeToI8(f(sx * double(i - zx)), sy, zy);
  return t;
}

std::function<double(double)> lutFunction(LutFunction k, double alpha, double beta) {
  switch (k) {
  case LutFunction::Sigmoid:
    return [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  case LutFunction::Tanh:
    return [](double v) { return std::tanh(v); };
  case LutFunction::HardSwish:
    return [](double v) { return v * std::clamp(v + 3.0, 0.0, 6.0) / 6.0; };
  case LutFunction::LeakyRelu:
    return [alpha](double v) { return v >= 0.0 ? v : alpha * v; };
  case LutFunction::HardSigmoid:
    return [alpha, beta](double v) { return std::clamp(alpha * v + beta, 0.0, 1.0); };
  case LutFunction::Relu:
    break;
  }
  return [](double v) { return v > 0.0 ? v : 0.0; };
}

LutTable buildLut(LutFunction k, double sx, int32_t zx, double sy, int32_t zy, double alpha,
                  double beta) {
  return buildLut(lutFunction(k, alpha, beta), sx, zx, sy, zy);
}

std::array<uint8_t, 256> actLut256(int32_t lo, int32_t hi, const LutTable *next) {
  std::array<uint8_t, 256> t{};
  lo = std::max<int32_t>(lo, -128);
  hi = std::min<int32_t>(hi, 127);
  for (int i = 0; i < 256; ++i) {
    int32_t v = std::clamp<int32_t>(i - 128, lo, std::max(lo, hi));
    if (next)
      v = std::clamp<int32_t>((*next)[size_t(v + 128)], -128, 127);
    t[size_t(i)] = uint8_t(int8_t(v));
  }
  return t;
}

std::array<int32_t, 256> softmaxExpTable(double sx) {
  std::array<int32_t, 256> t{};
  for (int d = 0; d < 256; ++d)
    t[size_t(d)] = static_cast<int32_t>(std::lround(65536.0 * std::exp(-sx * double(d))));
  return t;
}

int32_t softmaxInvScaleQ16(double sy) {
  if (!(sy > 0.0))
    return 0;
  double v = std::round(65536.0 / sy);
  if (!(v < 2147483647.0))
    return 0;
  return static_cast<int32_t>(v);
}

AddParams addParams(double sa, double sb, double sOut) {
  AddParams p;
  double twiceMax = 2.0 * std::max(sa, sb);
  p.a = quantizeMultiplier(sa / twiceMax);
  p.b = quantizeMultiplier(sb / twiceMax);
  p.out = quantizeMultiplier(twiceMax / (double(1 << p.leftShift) * sOut));
  return p;
}

} // namespace npucc::quant
