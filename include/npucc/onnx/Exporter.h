//===- Exporter.h - npucc graph IR to a standard ONNX model ---------------===//
//
// The reverse of Importer.h: writes a graph in the canonical IR forms (see
// docs/ir.md) as an ONNX ModelProto (ai.onnx opset 13), e.g. a QDQ graph for
// `--emit-qdq FILE.onnx`. Constants become initializers with their exact
// bytes; fused activations (act_min/act_max) are expanded back into a
// Relu/Clip node after the op; a typed integer node (after fold-qdq: an op
// whose i8/u8/i32 values carry quantization parameters) is written as
// DequantizeLinear -> float op -> QuantizeLinear (or refused, naming the
// node, when ExportOptions::expandTypedQuant is off). The result is checked with
// onnx::checker and onnx::shape_inference before it is returned or written.
// Output is deterministic: the same graph gives the same bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/support/Result.h"

#include <string>

namespace npucc::onnx {

struct ExportOptions {
  /// ModelProto.producer_name / producer_version.
  std::string producerName = "npucc";
  std::string producerVersion = "";
  /// GraphProto.name; empty means the graph's own name.
  std::string graphName;
  /// Minimum ai.onnx opset (13 is the canonical IR's); raised to 14 when the
  /// graph needs it (HardSwish, Reshape allowzero=1, 8/16-bit integer Add/Relu).
  int opset = 13;
  /// Typed integer IR: wrap each typed node in DequantizeLinear (inputs) and
  /// QuantizeLinear (outputs) using the values' QuantParams. When false such
  /// a node is an error naming it.
  bool expandTypedQuant = true;
  /// Run onnx::checker::check_model (full check, incl. strict shape
  /// inference) on the result; an error is returned if it fails.
  bool check = true;
};

/// Serializes `g` as an ONNX model (binary protobuf bytes).
Result<std::string> exportModelBytes(const ir::Graph &g, const ExportOptions &o = {});

/// Writes `g` to `path` through replaceFileBytes: a regular file atomically
/// (temp file in the same directory, then rename; on any error an existing
/// file there is left untouched), a device or FIFO in place; every failed
/// write is an error naming the file.
Status exportModel(const ir::Graph &g, const std::string &path, const ExportOptions &o = {});

} // namespace npucc::onnx
