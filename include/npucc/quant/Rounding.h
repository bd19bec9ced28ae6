//===- Rounding.h - Requantization rounding of a typed int8 graph ----------===//
//
// Integer Conv/Gemm/MatMul nodes requantize their int32 accumulators either
// exactly (one rounding of acc * M, the default) or as ONNX Runtime's float32
// arithmetic does (attribute requant="fp32", set by the importer on
// QLinearConv/QLinearMatMul); docs/quantization.md gives both definitions.
// `npucc --requant exact|fp32` overrides the choice for a whole graph. Part of
// lib/qmath, so that the integer interpreter and the lowering read the
// attribute through the same function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/quant/Multiplier.h"

#include <cstdint>

namespace npucc::quant {

/// True for an integer Conv/Gemm/MatMul whose output is requantized (int8 with
/// quant params; not the int32 accumulator output of ConvInteger/MatMulInteger).
bool requantizesProduct(const ir::Node &n);

/// The rounding a node uses (its `requant` attribute; Exact when absent).
Rounding roundingOf(const ir::Node &n);

/// Sets the rounding of every node for which requantizesProduct holds: Fp32 sets
/// requant="fp32", Exact removes the attribute. Returns how many nodes it set.
int64_t setRounding(ir::Graph &g, Rounding r);

/// How many requantizing product nodes use each rounding.
struct RoundingCounts {
  int64_t exact = 0, fp32 = 0;
};
RoundingCounts countRoundings(const ir::Graph &g);

} // namespace npucc::quant
