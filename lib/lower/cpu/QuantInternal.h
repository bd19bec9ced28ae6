//===- QuantInternal.h - Shared helpers of the int8 CPU lowering ----------===//
//
// Private to lib/lower/cpu/Quant*.cpp: quant-param access with diagnostics,
// kernel-call construction and the per-op-group entry points.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/lower/QuantLowering.h"
#include "npucc/quant/Multiplier.h"

#include <string>
#include <vector>

namespace npucc::lower::qlower {

Diagnostic nodeErr(const ir::Node &n, const std::string &msg);

/// Per-tensor params of an int8 activation value.
struct TensorQ {
  double scale = 1.0;
  int32_t zp = 0;
};
Result<TensorQ> tensorQ(const ir::Node &n, const ir::Value *v);
/// Same scale and zero point (data movement, MaxPool, clamp).
bool sameQ(const ir::Value *a, const ir::Value *b);

/// A call instruction to `callee` with the node as comment.
lir::Instr makeCall(const ir::Node &n, const std::string &callee, std::vector<lir::Arg> args);
lir::IntArray ints(const std::vector<int64_t> &v);

/// Clamp bounds from the node's optional act_min/act_max attributes.
quant::ClampBounds fusedBounds(const ir::Node &n, const TensorQ &out);

/// Checks that a value fits the 32-bit kernel parameters.
Status checkSize(const ir::Node &n, const ir::Value *v);

Status lowerConvS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);
Status lowerMatMulS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);
Status lowerBinaryS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);
Status lowerPoolS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);
Status lowerReduceMeanS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);
Status lowerConcatS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);
Status lowerMoveS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);
Status lowerUnaryS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);
Status lowerSoftmaxS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);
Status lowerQuantizeBoundary(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);

} // namespace npucc::lower::qlower
