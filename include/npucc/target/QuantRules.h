//===- QuantRules.h - What an NPU's requantizer needs from the quantizer ---===//
//
// quantRules() turns an NPU description into the quantizer's options
// (quant::QdqOptions), so that `--quantize int8` produces parameters the
// NPU's commands accept instead of a graph that falls back to the CPU:
//  - an operation (conv, depthwise, matmul) whose requantization is
//    per_tensor only gets its weights quantized per tensor (one scale);
//  - one whose Q31 multiplier is fixed (`"fixed": {"requant_mult": 2^k}`, a
//    shift-only requantizer) also gets power-of-two weight scales, and the
//    whole graph power-of-two activation scales, so that every ratio
//    s_in * s_w / s_out is a power of two the shift represents exactly.
// Weights are always symmetric (the NPU has no weight zero point) and int8.
// The rules apply to nodes whose command kind the NPU has; the driver relaxes
// them again for nodes the NPU rejects for other reasons (docs/quantization.md,
// "Quantizing for a target").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/quant/InsertQdq.h"
#include "npucc/target/Target.h"

namespace npucc::target {

/// The weight rule for one float node on NPU `t` (the default rule when the
/// NPU has no command for it or accepts per-channel requantization).
quant::WeightRule weightRuleFor(const ir::Node &n, const TargetDesc &t);

/// Options for quant::insertQdq on NPU `t` (a reference to `t` is kept).
quant::QdqOptions quantRules(const TargetDesc &t);

} // namespace npucc::target
