//===- Importer.h - ONNX model to npucc graph IR --------------------------===//
//
// Built on libonnx: the model is checked (onnx::checker), converted to one
// opset where the version converter can (best effort, never fatal), shape-
// inferred (onnx::shape_inference) after dynamic dims are bound, and then
// translated into the canonical IR forms (see docs/ir.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/support/Result.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace npucc::onnx {

struct ImportOptions {
  /// --shape NAME=1x3x224x224: binds a graph input's dynamic dims.
  std::map<std::string, ir::Shape> shapes;
  /// Shapes of the graph inputs in order (`npucc check`: the first data
  /// set's), binding the dynamic dims of inputs that `shapes` does not name.
  std::vector<ir::Shape> dataShapes;
  /// Without either, a dynamic leading dim of an input of rank >= 2 whose
  /// other dims are static (a batch dim: "N", "batch_size") becomes 1. Each
  /// such default and each binding from dataShapes is described here.
  std::vector<std::string> *notes = nullptr;
  /// Opset the version converter tries to reach (up only; best effort).
  /// 0 disables the converter (the importer's own canonicalization of old
  /// opsets then does all the work).
  int targetOpset = 13;
};

/// Imports an .onnx file. Every error names the model file, and the node and
/// op where there is one. Unsupported ops are reported all at once.
Result<std::unique_ptr<ir::Graph>> importModel(const std::string &path,
                                               const ImportOptions &opts = {});

/// Imports a serialized model held in memory; `path` names it in diagnostics
/// and its folder is where external data is looked up (the fuzzers use this).
Result<std::unique_ptr<ir::Graph>> importModelBytes(const std::string &bytes,
                                                    const std::string &path,
                                                    const ImportOptions &opts = {});

/// Reads a serialized onnx.TensorProto (.pb) file.
Result<ir::Tensor> readTensorProto(const std::string &path, std::string *name = nullptr);
/// Writes one.
Status writeTensorProto(const std::string &path, const ir::Tensor &t, const std::string &name);

/// Parses "NAME=1x3x224x224" (as given to --shape).
Result<std::pair<std::string, ir::Shape>> parseShapeBinding(const std::string &text);

} // namespace npucc::onnx
