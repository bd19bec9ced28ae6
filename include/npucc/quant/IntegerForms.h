//===- IntegerForms.h - Which float ops have an exact integer form ---------===//
//
// Shared by insert-qdq (lib/quant: which ops get Q/DQ around them) and fold-qdq
// (lib/passes: which DQ -> op -> Q patterns become typed int8 ops), so that
// the two never disagree about an op: an op that insert-qdq wraps but fold-qdq
// does not fold would silently stay float.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"

namespace npucc::quant {

/// Ops whose integer form moves bytes with the input's parameters: Reshape,
/// Flatten, Squeeze, Unsqueeze, Transpose, MaxPool, Identity, Slice, Gather.
bool isDataMovement(ir::OpKind k);

/// Unary ops with a 256-entry lookup-table int8 form.
bool hasLutForm(ir::OpKind k);

/// Pad (any mode) and Resize in nearest mode whose operands other than the data
/// are constants, and a Pad value, if any, a single element: their integer form
/// moves the input's elements (plus a quantized pad value), so it is exact when
/// input and output share their quantization parameters.
bool movesElementsExactly(const ir::Node &n);

} // namespace npucc::quant
