//===- MulShiftAdd.h - The batch-norm requantization form of an NPU -------===//
//
// Some NPUs requantize as floor(acc * mul / 2^shift) + add with mul, shift and
// add of stated widths (the K210 KPU: 24, 4 and 32 bits), the `mul_shift_add`
// stage of runtime/include/npucc_stages.h. This is the compiler's fit of such
// parameters to a layer's ratio M = s_x * s_w / s_y, shared by the legality
// check, the records writer and the integer interpreter (which evaluates an
// NPU node with the same parameters, so it models the NPU bit for bit).
// docs/target.md, "requant: mul_shift_add".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace npucc::quant {

/// Field widths of the form: mul is signed, shift unsigned, add signed.
struct MsaWidths {
  unsigned mulBits = 32, shiftBits = 6, addBits = 32;
  bool operator==(const MsaWidths &o) const {
    return mulBits == o.mulBits && shiftBits == o.shiftBits && addBits == o.addBits;
  }
};

/// One channel's parameters. `biasAdd` is added to the channel's int32 bias
/// (the records hold bias + biasAdd): floor's half-step rounding offset,
/// round(2^(shift-1) / mul) accumulator units. `worstSteps`: a bound on the
/// distance, in output steps, between (acc + biasAdd) * mul / 2^shift and
/// acc * M + 1/2 over every accumulator whose output is in the int8 range, so
/// the result is at most one step from the exact rounding when it is below 1.
struct MsaParams {
  int32_t mul = 0, shift = 0, add = 0, biasAdd = 0;
  double worstSteps = 0;
};

/// The parameters of ratio `ratio` (> 0) with output zero point `outZp`: the
/// largest shift whose rounded mul = round(ratio * 2^shift) fits the widths.
/// nullopt with `why` when the ratio is not positive and finite, too large for
/// mul at shift 0, or rounds to mul 0 at the largest shift, or `outZp` does
/// not fit add.
std::optional<MsaParams> fitMulShiftAdd(double ratio, int32_t outZp, const MsaWidths &w,
                                        std::string *why = nullptr);

/// The stage's result for accumulator `acc` (the bias included; the records
/// hold bias + biasAdd, so biasAdd is added here): npucc_stage_rq_msa of
/// runtime/include/npucc_stages.h, the simulator's function, before the clamp.
int32_t applyMsa(int64_t acc, const MsaParams &p);

/// The ratio the fit uses: double(sx) * double(sw) / double(sy).
double msaRatio(float sx, float sw, float sy);

/// The node attributes npu-partition sets on a node that runs on an NPU with
/// this stage: rq_stage="mul_shift_add", rq_bits=[mul, shift, add]. The
/// interpreter reads them back (nullopt: the node requantizes as its
/// `requant` attribute says).
void setMsaAttrs(ir::Node &n, const MsaWidths &w);
std::optional<MsaWidths> msaAttrs(const ir::Node &n);

} // namespace npucc::quant
