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

/// What the fast int8 Conv/Gemm lowerings (QuantFast.cpp) need of a node.
struct ProductQ {
  int32_t xZp = 0, yZp = 0;
  quant::ClampBounds clamp;
  double sx = 1.0, sy = 1.0;
  std::vector<double> sw; // per output channel (or one, per tensor)
  bool anyWeightZp = false;
};
/// Geometry of an int8 Conv (2-D; 1-D as H = KH = 1), as npucc_conv2d_s8 takes it.
struct ConvGeom {
  int64_t N, C, H, W, M, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL, G;
};
/// The call of npucc_conv2d_s8_fast / npucc_dwconv2d_s8_fast for a Conv with constant
/// weights (and bias) and no weight zero points, group 1 or depthwise; false when
/// the fast kernels do not apply (the reference lowering is used then).
bool lowerConvS8Fast(const ir::Node &n, LowerContext &ctx, const ConvGeom &g, const ProductQ &q,
                     std::vector<lir::Instr> &out);
/// The call of npucc_gemm_s8_fast for a Gemm/MatMul with a constant 2-D B; false when
/// it does not apply. B(k, j) = B[k*bRs + j*bCs].
bool lowerMatMulS8Fast(const ir::Node &n, LowerContext &ctx, int64_t rows, int64_t N, int64_t K,
                       int64_t bRs, int64_t bCs, const ProductQ &q, std::vector<lir::Instr> &out);

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
