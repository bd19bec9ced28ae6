//===- QuantInterpreter.h - Integer reference interpreter of typed ops ----===//
//
// Evaluates the typed integer form of docs/quantization.md: ops whose integer
// operands carry QuantParams (Conv, Gemm, MatMul, Add, Mul, pools, Concat,
// Softmax, data movement, ...) plus QuantizeLinear/DequantizeLinear, with
// int32 accumulators and the requantization of runtime/include/npucc_requant.h
// (multipliers from npucc::quant). i8 and u8 operands are both accepted.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/support/Result.h"

#include <vector>

namespace npucc::interp {

/// True when `n` is a typed integer node (or a Q/DQ boundary) this
/// interpreter evaluates.
bool canEvaluateQuantized(const ir::Node &n);

/// Evaluates one typed node; inputs in node order (null = absent optional).
Result<std::vector<ir::Tensor>> evaluateQuantizedNode(const ir::Node &n,
                                                      const std::vector<const ir::Tensor *> &in);

} // namespace npucc::interp
