//===- Graph.h - npucc's graph IR: values, nodes, graph -------------------===//
//
// A Graph owns Values and Nodes. Nodes are kept in topological order.
// A Value is an SSA tensor with a dtype, a static shape and optional
// quantization parameters; a constant Value ("@name" in text) carries data.
// An absent optional node input is a null Value pointer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/DType.h"
#include "npucc/ir/Op.h"
#include "npucc/ir/Tensor.h"
#include "npucc/support/Diagnostic.h"

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace npucc::ir {

/// Affine quantization: real = scale * (q - zeroPoint). Per-tensor when
/// scale.size() == 1, otherwise per-channel along `axis`.
struct QuantParams {
  std::vector<float> scale;
  std::vector<int32_t> zeroPoint;
  int axis = 0;
  bool perChannel() const { return scale.size() > 1; }
  bool operator==(const QuantParams &o) const {
    return scale == o.scale && zeroPoint == o.zeroPoint && axis == o.axis;
  }
};

/// Node attribute. Sorted by name when printed.
using Attribute = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, Tensor>;

class Node;

class Value {
public:
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  std::optional<QuantParams> quant;
  std::shared_ptr<Tensor> constant; // non-null for constants ("@name")
  Node *producer = nullptr;         // null for graph inputs and constants

  bool isConstant() const { return constant != nullptr; }
  int64_t numElements() const { return ir::numElements(shape); }
  size_t byteSize() const { return static_cast<size_t>(numElements()) * dtypeSize(dtype); }
};

class Node {
public:
  OpKind kind;
  std::string name; // ONNX node name (used in diagnostics)
  std::vector<Value *> inputs;
  std::vector<Value *> outputs;
  std::map<std::string, Attribute> attrs;

  const OpInfo &info() const { return opInfo(kind); }
  const char *opName() const { return ir::opName(kind); }
  Value *input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Value *output(size_t i) const { return i < outputs.size() ? outputs[i] : nullptr; }

  bool hasAttr(const std::string &n) const { return attrs.count(n) != 0; }
  int64_t attrInt(const std::string &n, int64_t dflt) const;
  float attrFloat(const std::string &n, float dflt) const;
  std::string attrString(const std::string &n, const std::string &dflt) const;
  std::vector<int64_t> attrInts(const std::string &n, std::vector<int64_t> dflt = {}) const;
  std::vector<float> attrFloats(const std::string &n, std::vector<float> dflt = {}) const;
  const Tensor *attrTensor(const std::string &n) const;

private:
  friend class Graph;
  bool Erased = false; // erased, dropped from the node list at the next nodes()
};

class Graph {
public:
  Graph() = default;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  Graph(Graph &&) = default;
  Graph &operator=(Graph &&) = default;

  std::string name = "main";
  std::string sourceFile; // model path for diagnostics
  std::vector<Value *> inputs;
  std::vector<Value *> outputs;

  // Creation. Names are made unique by appending a suffix when taken.
  Value *addValue(const std::string &name, DType t, Shape s);
  Value *addConstant(const std::string &name, Tensor data);
  /// Appends a node at the end (callers keep topological order) and sets
  /// producer of its outputs.
  Node *addNode(OpKind k, const std::string &name, std::vector<Value *> ins,
                std::vector<Value *> outs);
  /// Inserts a node before `pos` (which must be in the graph).
  Node *insertNodeBefore(const Node *pos, OpKind k, const std::string &name,
                         std::vector<Value *> ins, std::vector<Value *> outs);

  // Mutation.
  void replaceAllUsesWith(Value *from, Value *to); // also in graph outputs
  /// Outputs get producer=null. O(1): the node is dropped from the list (and
  /// freed) at the next nodes() or mutation, so a pass may erase many nodes
  /// in linear time; erased nodes are invisible to every query.
  void eraseNode(Node *n);
  /// Drops values that are neither used, produced, graph inputs nor outputs.
  size_t removeUnusedValues();
  /// Re-sorts nodes topologically (stable); error text if there is a cycle.
  bool topoSort(std::string *err = nullptr);

  // Queries.
  const std::vector<std::unique_ptr<Node>> &nodes() const {
    compact();
    return Nodes;
  }
  const std::vector<std::unique_ptr<Value>> &values() const { return Values; }
  std::vector<Node *> users(const Value *v) const;
  size_t numUses(const Value *v) const; // counts graph outputs as uses
  bool isGraphOutput(const Value *v) const;
  bool isGraphInput(const Value *v) const;
  Value *findValue(const std::string &name) const;
  std::string uniqueName(const std::string &base) const;

  std::unique_ptr<Graph> clone() const;

private:
  void compact() const; // drops erased nodes
  std::vector<std::unique_ptr<Value>> Values;
  mutable std::vector<std::unique_ptr<Node>> Nodes;
  mutable size_t NumErased = 0;
  std::unordered_map<std::string, Value *> ByName; // lookups only (no iteration)
};

/// Diagnostic anchored at a node of a graph.
Diagnostic nodeError(const Graph &g, const Node &n, std::string msg);

} // namespace npucc::ir
