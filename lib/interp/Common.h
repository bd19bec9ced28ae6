//===- Common.h - Shared helpers of the reference interpreter -------------===//
//
// Private to lib/interp: the per-op-family evaluation functions, the dtype
// dispatcher, the (one) multidirectional broadcasting helper, attribute and
// axis helpers, and the fused-activation clamp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/interp/Interpreter.h"

#include <cstdint>
#include <string>
#include <vector>

namespace npucc::interp::detail {

using ir::DType;
using ir::Shape;
using ir::Tensor;
using Inputs = std::vector<const Tensor *>;
using Outputs = std::vector<Tensor>;
using EvalResult = Result<Outputs>;

/// Diagnostic naming the node and its op.
Diagnostic nodeErr(const ir::Node &n, const std::string &msg);

/// An empty tensor with the dtype and shape of the node's i-th output Value.
Tensor makeOutput(const ir::Node &n, size_t i);

/// Checks a computed output shape against the node's i-th output Value (a
/// scalar Value shape is accepted as "not inferred") and its dtype, and
/// allocates the output with the computed shape.
Status checkShape(const ir::Node &n, size_t i, const Shape &computed);
Result<Tensor> allocOutput(const ir::Node &n, size_t i, DType t, const Shape &s);

/// Row-major strides of a shape.
std::vector<int64_t> stridesOf(const Shape &s);

/// Normalizes a possibly negative axis against `rank`; false when out of range.
bool normalizeAxis(int64_t &axis, int64_t rank);

/// Multidirectional (numpy) broadcast of two shapes; false if incompatible.
bool broadcastShapes(const Shape &a, const Shape &b, Shape &out);

/// For every element of `out` (row-major), the linear index of the element of
/// an input of shape `in` that broadcasts to it. `in` must broadcast to `out`.
std::vector<int64_t> broadcastIndex(const Shape &in, const Shape &out);

/// Clamps a float output to the fused activation range [act_min, act_max]
/// when the node carries those attributes.
void applyFusedActivation(const ir::Node &n, Tensor &t);

/// Calls f(T{}) with T the C type of dtype t (Bool is uint8_t).
template <typename F> auto dispatchType(DType t, F &&f) {
  switch (t) {
  case DType::F32:
    return f(float{});
  case DType::F64:
    return f(double{});
  case DType::U8:
  case DType::Bool:
    return f(uint8_t{});
  case DType::I8:
    return f(int8_t{});
  case DType::U16:
    return f(uint16_t{});
  case DType::I16:
    return f(int16_t{});
  case DType::I32:
    return f(int32_t{});
  case DType::I64:
    return f(int64_t{});
  case DType::U32:
    return f(uint32_t{});
  case DType::U64:
    return f(uint64_t{});
  }
  return f(float{});
}

/// Calls f(T{}) for T float or double; returns false for other dtypes.
template <typename F> bool dispatchFloat(DType t, F &&f) {
  if (t == DType::F32) {
    f(float{});
    return true;
  }
  if (t == DType::F64) {
    f(double{});
    return true;
  }
  return false;
}

// ---- Per op-family evaluation (one .cpp each) --------------------------------
// Conv.cpp
EvalResult evalConv(const ir::Node &n, const Inputs &in);
EvalResult evalConvTranspose(const ir::Node &n, const Inputs &in);
// MatMul.cpp
EvalResult evalGemm(const ir::Node &n, const Inputs &in);
EvalResult evalMatMul(const ir::Node &n, const Inputs &in);
// Elementwise.cpp
EvalResult evalBinary(const ir::Node &n, const Inputs &in); // Add Sub Mul Div
EvalResult evalMaxMin(const ir::Node &n, const Inputs &in);
EvalResult evalPRelu(const ir::Node &n, const Inputs &in);
// Activation.cpp
EvalResult evalUnary(const ir::Node &n, const Inputs &in); // Relu ... Tanh
EvalResult evalClip(const ir::Node &n, const Inputs &in);
EvalResult evalSoftmax(const ir::Node &n, const Inputs &in);
// Pool.cpp
EvalResult evalMaxPool(const ir::Node &n, const Inputs &in);
EvalResult evalAveragePool(const ir::Node &n, const Inputs &in);
EvalResult evalGlobalPool(const ir::Node &n, const Inputs &in);
// Reduce.cpp
EvalResult evalReduceMean(const ir::Node &n, const Inputs &in);
// Norm.cpp
EvalResult evalBatchNorm(const ir::Node &n, const Inputs &in);
// DataMovement.cpp
EvalResult evalView(const ir::Node &n, const Inputs &in); // Flatten Reshape Squeeze ...
EvalResult evalDropout(const ir::Node &n, const Inputs &in);
EvalResult evalTranspose(const ir::Node &n, const Inputs &in);
EvalResult evalConcat(const ir::Node &n, const Inputs &in);
EvalResult evalSlice(const ir::Node &n, const Inputs &in);
EvalResult evalSplit(const ir::Node &n, const Inputs &in);
EvalResult evalPad(const ir::Node &n, const Inputs &in);
EvalResult evalGather(const ir::Node &n, const Inputs &in);
// Resize.cpp
EvalResult evalResize(const ir::Node &n, const Inputs &in);
// Misc.cpp
EvalResult evalConstant(const ir::Node &n, const Inputs &in);
EvalResult evalConstantOfShape(const ir::Node &n, const Inputs &in);
EvalResult evalShape(const ir::Node &n, const Inputs &in);
EvalResult evalCast(const ir::Node &n, const Inputs &in);
// Quant.cpp
EvalResult evalQuantizeLinear(const ir::Node &n, const Inputs &in);
EvalResult evalDequantizeLinear(const ir::Node &n, const Inputs &in);

} // namespace npucc::interp::detail

namespace npucc::interp::detail {

/// Sliding-window geometry of Conv/ConvTranspose/pools over `rank` spatial dims.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, padBegin, padEnd;
};

/// Reads kernel_shape (default `kernelDefault`), strides, dilations and pads,
/// resolving a leftover auto_pad (SAME_UPPER/SAME_LOWER/VALID) from the input
/// and output spatial sizes. `transposed` selects ConvTranspose's formula.
Result<Window> resolveWindow(const ir::Node &n, const Shape &inSpatial, const Shape &outSpatial,
                             const std::vector<int64_t> &kernelDefault, bool transposed = false);

/// Decomposes a row-major linear index into a multi-index over `shape`.
void unravel(int64_t lin, const Shape &shape, std::vector<int64_t> &idx);

} // namespace npucc::interp::detail

namespace npucc::interp::detail {
/// Every multi-index of `shape` in row-major order, flattened (rank per entry).
std::vector<int64_t> allCoords(const Shape &shape);
} // namespace npucc::interp::detail
