//===- Multiplier.h - Compile-time helpers of integer-only inference -----===//
//
// The compiler-side half of docs/quantization.md: real multipliers as Q31
// integers, fused-activation clamp bounds, the 256-entry lookup tables of
// Sigmoid/Tanh/HardSwish/LeakyRelu and the Softmax exp table. The int8 CPU
// lowering and the integer reference interpreter both call these, so the
// kernels (runtime/kernels/npucc_*_s8.c) and the interpreter see the very
// same integers. Everything here is deterministic double arithmetic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace npucc::quant {

/// M = mult * 2^-31 * 2^-shift (see runtime/include/npucc_requant.h).
struct QuantMultiplier {
  int32_t mult = 0;  // Q31, in [2^30, 2^31) unless the multiplier is 0
  int32_t shift = 0; // right shift; negative = left shift (M >= 1)
};

/// Decomposes `real` with frexp: mult = round(frac * 2^31) (frac = 1 after
/// rounding gives mult = 2^30 and exponent + 1), shift = -exponent.
/// Edge cases: real <= 0 or NaN -> {0, 0}; a shift above 31 (M < 2^-32) is
/// brought to 31 by rounding mult right (it may become 0); M >= 2^31 is
/// clamped to {2^31 - 1, -31}.
QuantMultiplier quantizeMultiplier(double real);

/// The real number a QuantMultiplier represents (exact in double).
double multiplierValue(QuantMultiplier m);

/// How Conv/Gemm/MatMul requantize their int32 accumulators (docs/quantization.md):
/// Exact: one rounding of acc * M, M = s_x * s_w / s_y in double (npucc_mul_qmult_rne);
/// Fp32: ONNX Runtime's float32 arithmetic for QLinearConv/QLinearMatMul emulated in
/// integers (npucc_mul_qmult_fp32). The node attribute requant="fp32" selects Fp32.
enum class Rounding { Exact, Fp32 };
/// Value of the IR attribute `requant` ("exact" or "fp32") for a rounding, and back
/// (nullopt for any other string).
const char *roundingName(Rounding r);
std::optional<Rounding> parseRounding(const std::string &name);
/// The kernels' `rounding` argument (NPUCC_RQ_EXACT / NPUCC_RQ_FP32).
int32_t roundingCode(Rounding r);

/// Multiplier of a product op, M = sx * sw / sy. Exact: computed in double, then
/// quantizeMultiplier. Fp32: fl(fl(sx * sw) / sy) in float32 as ONNX Runtime computes
/// it (x_scale * w_scale / y_scale), which a Q31 mult holds exactly.
QuantMultiplier productMultiplier(float sx, float sw, float sy, Rounding r);
/// acc * M rounded as `r` says (npucc_mul_qmult_rne or npucc_mul_qmult_fp32).
int32_t applyMultiplier(int32_t acc, QuantMultiplier m, Rounding r);

/// The four words npucc_rq32_prep (runtime/include/npucc_requant.h) computes for M and
/// `r`: what the fast CPU kernels requantize with (precomputed at compile time).
std::array<int32_t, 4> requantWords(QuantMultiplier m, Rounding r);

/// Clamp bounds in the quantized domain for a real-valued clamp [lo, hi]:
/// max(-128, zp + lround(lo / scale)) and min(127, zp + lround(hi / scale)).
/// Infinite or huge bounds give -128 / 127; NaN bounds are ignored.
struct ClampBounds {
  int32_t lo = -128;
  int32_t hi = 127;
};
ClampBounds activationBounds(double lo, double hi, double outScale, int32_t outZp);

/// Saturating round(v) (half away from zero) + zp to int8.
int32_t quantizeToI8(double real, double scale, int32_t zp);

/// table[i + 128] = saturate(round(f(sx * (i - zx)) / sy) + zy) for i in -128..127.
using LutTable = std::array<int32_t, 256>;
LutTable buildLut(const std::function<double(double)> &f, double sx, int32_t zx, double sy,
                  int32_t zy);

/// Unary functions with a lookup-table int8 form.
enum class LutFunction { Sigmoid, Tanh, HardSwish, LeakyRelu, HardSigmoid, Relu };
/// The real function; `alpha`/`beta` are LeakyRelu's alpha and HardSigmoid's alpha/beta.
std::function<double(double)> lutFunction(LutFunction k, double alpha = 0.01, double beta = 0.5);
LutTable buildLut(LutFunction k, double sx, int32_t zx, double sy, int32_t zy,
                  double alpha = 0.01, double beta = 0.5);

/// The 256-byte table of an NPU's lut256 activation stage
/// (npucc_stage_act_lut256: out = (int8)lut[v + 128], v the requantized value):
/// the MAC node's fused clamp [lo, hi], then, when `next` is given, a following
/// int8 lookup-table activation (a buildLut table, npucc_lut_s8's indexing, its
/// entries saturated to int8 as that kernel does) on the clamped value. Exact:
/// entry i is what the CPU computes from the requantized value i - 128.
std::array<uint8_t, 256> actLut256(int32_t lo, int32_t hi, const LutTable *next = nullptr);

/// Softmax exp table: e[d] = round(2^16 * exp(-sx * d)) for d in 0..255 (e[0] = 65536).
std::array<int32_t, 256> softmaxExpTable(double sx);
/// round(2^16 / sy), the output scale of npucc_softmax_s8; 0 when it does not
/// fit in int32 (sy <= 2^-15) or sy is not positive.
int32_t softmaxInvScaleQ16(double sy);

/// Parameters of npucc_add_i8 (TFLite's scheme, left_shift = 20).
struct AddParams {
  int32_t leftShift = 20;
  QuantMultiplier a, b, out;
};
AddParams addParams(double sa, double sb, double sOut);

} // namespace npucc::quant
