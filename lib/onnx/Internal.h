//===- Internal.h - Shared pieces of the ONNX importer (private) ----------===//
//
// TensorIO.cpp converts TensorProtos (incl. external data), ShapeHelper.cpp
// computes output shapes of canonical IR nodes, Canonicalize.cpp turns one
// ONNX NodeProto into canonical IR nodes through the Builder, and
// Importer.cpp drives the whole import.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/support/Result.h"

#include <onnx/onnx_pb.h>

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace npucc::onnx::detail {

//===--- TensorIO ---------------------------------------------------------===//

/// Human name of an ONNX element type ("float16", "string", ...).
std::string onnxTypeName(int elemType);
/// Maps an ONNX element type; the error names `what` (e.g. "value 'x'").
Result<ir::DType> mapElemType(int elemType, const std::string &what);
/// Converts a TensorProto. External data is read relative to `baseDir` and
/// must stay inside it. `what` names the tensor in errors.
Result<ir::Tensor> tensorFromProto(const ::onnx::TensorProto &tp, const std::string &baseDir,
                                   const std::string &what);
void tensorToProto(const ir::Tensor &t, const std::string &name, ::onnx::TensorProto &tp);

//===--- Validate ---------------------------------------------------------===//

/// The tensor's data has the size its type and dims need and fits
/// ir::kMaxTensorBytes; nothing is allocated. External data is sized later.
Status checkTensorData(const ::onnx::TensorProto &tp, const std::string &what);
/// What libonnx's converter and shape inference assume (Validate.cpp):
/// tensor data sizes, graph outputs defined, graph I/O types and sizes.
/// `names` are the node names (nameNodes).
Status validateModel(const ::onnx::ModelProto &m, const std::vector<std::string> &names);
/// Adds kernel_shape = W's spatial dims to Conv, ConvTranspose, ConvInteger and
/// QLinearConv nodes that lack it when W's dims are known before inference
/// (initializer, Constant, graph input, or their DequantizeLinear/Identity/Cast).
/// The same value the op takes by default; libonnx then checks its length.
void pinKernelShapes(::onnx::ModelProto &m);

//===--- ShapeHelper ------------------------------------------------------===//

struct OutType {
  ir::DType dtype = ir::DType::F32;
  ir::Shape shape;
};
/// Error text of inferOutputs for an op it has no rule for.
inline constexpr const char *kNoShapeRule = "no shape rule for this op";
/// Output dtypes/shapes of a canonical IR node whose inputs all have static
/// shapes (shape operands must be constants). Error text without context.
Result<std::vector<OutType>> inferOutputs(const ir::Node &n);

/// ONNX auto_pad resolution: pads [b0,b1,...,e0,e1,...] for spatial dims.
std::vector<int64_t> autoPads(const std::string &autoPad, const ir::Shape &in, // spatial only
                              const std::vector<int64_t> &kernel,
                              const std::vector<int64_t> &strides,
                              const std::vector<int64_t> &dilations);

//===--- Builder ----------------------------------------------------------===//

/// Shape/type facts from the (inferred) ONNX model for one value name.
struct ValueFacts {
  int elemType = 0;
  bool staticShape = false;
  ir::Shape shape;
};

/// Builds the IR graph node by node: looks up values by ONNX name, creates
/// constants and canonical nodes, gives every output a static shape and
/// folds nodes whose inputs are all constants.
class Builder {
public:
  ir::Graph &g;
  std::string file;    // model path, for diagnostics
  std::string baseDir; // model folder, for external data
  int opset = 13;      // default-domain opset of the model
  /// onnx's shape inference ran (else declared shapes are cross-checked).
  bool onnxInferred = true;
  /// Bytes of results folded so far (bounded by interp::kMaxFoldedBytes).
  int64_t foldedBytes = 0;
  /// Values whose shape npucc's rules gave against onnx's inferred one (a ceil_mode pool)
  /// and the values computed from them: onnx's facts downstream are stale too.
  std::set<const ir::Value *> staleShapes;

  Builder(ir::Graph &graph, std::string f, std::string dir, int ops)
      : g(graph), file(std::move(f)), baseDir(std::move(dir)), opset(ops) {}

  std::unordered_map<std::string, ir::Value *> values;
  std::unordered_map<std::string, const ::onnx::TensorProto *> initializers;
  std::unordered_map<std::string, ValueFacts> facts;
  /// Uses of each ONNX value name (node inputs and graph outputs).
  std::unordered_map<std::string, int> useCount;
  /// Every ONNX value name of the model (internal names avoid them).
  std::set<std::string> reserved;

  bool isUsed(const std::string &n) const { return useCount.count(n) != 0; }
  /// A value name not used by the model nor the graph, derived from `base`.
  std::string freshName(const std::string &base) const;

  /// ONNX value by name; "" gives null (absent optional input). Initializers
  /// are converted on first use.
  Result<ir::Value *> lookup(const std::string &name);
  /// New i64 / f32 constants (unique names derived from `base`).
  ir::Value *constInts(const std::string &base, const std::vector<int64_t> &v, bool scalar = false);
  ir::Value *constTensor(const std::string &base, ir::Tensor t);

  /// Appends a node. `outNames` are ONNX names (registered for lookup) or
  /// internal names (prefix '\x01' → a fresh unique name, not registered).
  /// Gives every output a dtype/static shape and folds constant nodes.
  Result<std::vector<ir::Value *>> emit(ir::OpKind k, const std::string &nodeName,
                                        std::vector<ir::Value *> ins,
                                        const std::vector<std::string> &outNames,
                                        std::map<std::string, ir::Attribute> attrs = {});

  Diagnostic nodeErr(const std::string &node, const std::string &op, std::string msg) const {
    return error(std::move(msg)).atNode(node, op).inFile(file);
  }
};

/// Translates one ONNX node (not Constant) of a supported op into canonical
/// IR nodes. `name` is the node's (possibly generated) name.
Status translateNode(Builder &b, const ::onnx::NodeProto &np, ir::OpKind k,
                     const std::string &name);

/// How a pre-quantized ONNX op (QLinearConv, ConvInteger, com.microsoft
/// QLinearAdd, ...) becomes a typed integer node (QuantImport.cpp).
struct QuantRewrite {
  ir::OpKind kind = ir::OpKind::Conv;  // the float twin
  std::vector<ir::Value *> ins;        // its operands
  std::vector<std::pair<ir::Value *, ir::QuantParams>> inQuant;
  bool hasOutQuant = true;
  ir::QuantParams outQuant;
  ir::DType outType = ir::DType::I8;
};
/// Fills `q` from the node's operands; may edit `attrs` (channels_last).
/// Why `s` cannot be a quantization scale ("is NaN", "is infinite", "is not
/// positive (-1)", "is not a positive float32 (1e-50)"), or "" when it can.
std::string badScale(double s);

/// Every element of the constant scale operand `scale` (if constant) is a
/// valid scale; else an error naming `what` ("y_scale") and the element.
Status checkScales(const ir::Value *scale, const std::string &what);

Status prepareQuantNode(Builder &b, const std::string &name, const std::string &op, ir::OpKind k,
                        std::vector<ir::Value *> &ins, std::map<std::string, ir::Attribute> &attrs,
                        QuantRewrite &q);
/// After the twin was emitted: sets operand/output QuantParams and the output type.
Status finishQuantNode(Builder &b, const std::string &name, const std::string &op,
                       const QuantRewrite &q, const std::vector<std::string> &outs);

/// Converts an ONNX attribute; error text when its kind is not supported.
Result<ir::Attribute> convertAttr(const ::onnx::AttributeProto &a, const std::string &baseDir);

} // namespace npucc::onnx::detail
