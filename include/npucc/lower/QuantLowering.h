//===- QuantLowering.h - Typed quantized graph IR to int8 CPU kernel calls ===//
//
// The int8 counterpart of the per-family float lowerings in CpuLowering.h.
// A node is quantized when it computes on int8 values carrying quant params
// (docs/quantization.md "Typed graph IR"), or is a QuantizeLinear /
// DequantizeLinear boundary. lowerQuantizedNode chooses the
// runtime/kernels/npucc_*_s8.c kernel and computes every multiplier, clamp
// bound and lookup table at compile time (lib/quant/Multiplier.h), so the
// generated code of a quantized op uses no floating point.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/lir/Program.h"
#include "npucc/lower/CpuLowering.h"
#include "npucc/support/Result.h"

#include <vector>

namespace npucc::lower {

/// True for QuantizeLinear/DequantizeLinear and for non-view nodes with an
/// int8 input or output that carries quant params. View ops (Reshape,
/// Flatten, ...) are false: the memory planner aliases them whatever the type.
bool isQuantizedNode(const ir::Node &n);

/// Appends the int8 kernel calls of one quantized node to `out`.
Status lowerQuantizedNode(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);

} // namespace npucc::lower
