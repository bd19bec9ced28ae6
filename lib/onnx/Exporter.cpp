//===- Exporter.cpp - npucc graph IR to a standard ONNX model -------------===//
//
// Writes a canonical-form graph as an ai.onnx ModelProto: graph inputs and
// outputs with their static types, constants as raw-data initializers (exact
// bytes), one NodeProto per IR node (fused act_min/act_max expanded into a
// Relu/Clip node), value_info for every intermediate value. The model is
// then validated with onnx::checker and strict onnx::shape_inference (which
// also cross-checks the declared shapes) and serialized deterministically.
// Files are written through replaceFileBytes (support/FileWrite.h).
//
//===----------------------------------------------------------------------===//
#include "npucc/onnx/Exporter.h"
#include "Internal.h"
#include "npucc/support/FileWrite.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

using namespace npucc::ir;
using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;
using ::onnx::ValueInfoProto;

namespace npucc::onnx {
namespace {

bool isTypedQuant(const Node &n);

/// Lowest ai.onnx opset at which `n` (in canonical form) can be written.
int requiredOpset(const Node &n) {
  if (n.kind == OpKind::HardSwish)
    return 14;
  if (n.kind == OpKind::Reshape && n.attrInt("allowzero", 0) != 0)
    return 14;
  // Opset 14 added the 8- and 16-bit integer types to these.
  DType t = n.outputs.empty() || !n.outputs[0] ? DType::F32 : n.outputs[0]->dtype;
  bool smallInt = t == DType::I8 || t == DType::U8 || t == DType::I16 || t == DType::U16;
  switch (n.kind) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
    return smallInt && !isTypedQuant(n) ? 14 : 0;
  case OpKind::Relu:
    return !isFloat(t) && !isTypedQuant(n) ? 14 : 0;
  default:
    return 0;
  }
}

/// Typed integer IR (after fold-qdq): a non-Q/DQ node touching a value that
/// carries quantization parameters, or a pre-quantized op kind.
bool isTypedQuant(const Node &n) {
  if (n.kind == OpKind::QuantizeLinear || n.kind == OpKind::DequantizeLinear)
    return false;
  if (n.info().flags & OPF_QUANT)
    return true;
  auto quantInt = [](const Value *v) { return v && v->quant && !isFloat(v->dtype); };
  for (const Value *v : n.inputs)
    if (quantInt(v))
      return true;
  for (const Value *v : n.outputs)
    if (quantInt(v))
      return true;
  return false;
}

void setType(ValueInfoProto &vi, const Value &v) {
  vi.set_name(v.name);
  auto *tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtypeToOnnx(v.dtype));
  auto *sh = tt->mutable_shape(); // present even for scalars (rank 0)
  for (int64_t d : v.shape)
    sh->add_dim()->set_dim_value(d);
}

void setAttr(AttributeProto &a, const std::string &name, const Attribute &v) {
  a.set_name(name);
  if (auto *i = std::get_if<int64_t>(&v)) {
    a.set_type(AttributeProto::INT);
    a.set_i(*i);
  } else if (auto *f = std::get_if<float>(&v)) {
    a.set_type(AttributeProto::FLOAT);
    a.set_f(*f);
  } else if (auto *s = std::get_if<std::string>(&v)) {
    a.set_type(AttributeProto::STRING);
    a.set_s(*s);
  } else if (auto *is = std::get_if<std::vector<int64_t>>(&v)) {
    a.set_type(AttributeProto::INTS);
    for (int64_t x : *is)
      a.add_ints(x);
  } else if (auto *fs = std::get_if<std::vector<float>>(&v)) {
    a.set_type(AttributeProto::FLOATS);
    for (float x : *fs)
      a.add_floats(x);
  } else if (auto *ss = std::get_if<std::vector<std::string>>(&v)) {
    a.set_type(AttributeProto::STRINGS);
    for (const std::string &x : *ss)
      a.add_strings(x);
  } else if (auto *t = std::get_if<Tensor>(&v)) {
    a.set_type(AttributeProto::TENSOR);
    detail::tensorToProto(*t, "", *a.mutable_t());
  }
}

/// Builds the ModelProto of one graph.
class ExportBuilder {
public:
  ExportBuilder(const Graph &graph, const ExportOptions &opts) : G(graph), O(opts) {}

  Result<ModelProto> run();

private:
  const Graph &G;
  const ExportOptions &O;
  int Opset = 13;
  std::set<std::string> Taken;     // value names in use in the ONNX graph
  std::set<const Value *> Emitted; // constants already written as initializers
  GraphProto *GP = nullptr;
  std::map<const Value *, std::string> Dequantized;

  Diagnostic nodeErr(const Node &n, std::string msg) const {
    return error(std::move(msg)).atNode(n.name, n.opName()).inFile(G.sourceFile);
  }
  std::string fresh(const std::string &base) {
    std::string c = base;
    for (int i = 1; Taken.count(c) || G.findValue(c); ++i)
      c = base + "_" + std::to_string(i);
    Taken.insert(c);
    return c;
  }
  void addInitializer(const Tensor &t, const std::string &name) {
    detail::tensorToProto(t, name, *GP->add_initializer());
  }
  std::string useConstant(const Value *v) {
    if (Emitted.insert(v).second)
      addInitializer(*v->constant, v->name);
    return v->name;
  }
  std::string scalarConst(const std::string &base, float x) {
    std::string name = fresh(base);
    addInitializer(Tensor::fromFloats({}, {x}), name);
    return name;
  }
  void addValueInfo(const std::string &name, DType t, const Shape &s);
  void addQdq(const char *op, const std::string &name, const std::string &in,
              const std::string &out, const QuantParams &q, DType intType);
  std::string dequantized(const Value *v);
  Status checkNode(const Node &n) const;
  Status emitNode(const Node &n);
  Status validate(ModelProto &m) const;
};

Status ExportBuilder::checkNode(const Node &n) const {
  if (*n.info().domain)
    return nodeErr(n, std::string("op of domain '") + n.info().domain +
                          "' cannot be exported to ai.onnx");
  bool qdq = n.kind == OpKind::QuantizeLinear || n.kind == OpKind::DequantizeLinear;
  if ((n.info().flags & OPF_QUANT) && !qdq)
    return nodeErr(n, "pre-quantized op kinds cannot be exported (only their typed or QDQ form)");
  if (isTypedQuant(n) && !O.expandTypedQuant)
    return nodeErr(n, "typed integer IR (quantization parameters without QuantizeLinear/"
                      "DequantizeLinear around the op) cannot be exported; export the QDQ graph "
                      "before fold-qdq");
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (!n.outputs[i])
      return nodeErr(n, "output " + std::to_string(i) + " is absent");
  for (const auto *vs : {&n.inputs, &n.outputs})
    for (const Value *v : *vs)
      if (v && v->quant && v->quant->scale.empty())
        return nodeErr(n, "value '" + v->name + "' has quantization parameters without a scale");
  for (const Value *v : n.outputs)
    if (v->isConstant())
      return nodeErr(n, "output '" + v->name + "' is also a constant");
  return success();
}

void ExportBuilder::addValueInfo(const std::string &name, DType t, const Shape &s) {
  ValueInfoProto *vi = GP->add_value_info();
  Value tmp;
  tmp.name = name;
  tmp.dtype = t;
  tmp.shape = s;
  setType(*vi, tmp);
}

void ExportBuilder::addQdq(const char *op, const std::string &name, const std::string &in,
                           const std::string &out, const QuantParams &q, DType intType) {
  // Scale f32 and zero point of the integer type: scalars when per-tensor.
  bool pc = q.perChannel();
  Shape s = pc ? Shape{static_cast<int64_t>(q.scale.size())} : Shape{};
  std::string sn = fresh(name + "_scale"), zn = fresh(name + "_zero_point");
  addInitializer(Tensor::fromFloats(s, q.scale), sn);
  std::vector<int64_t> zps(q.zeroPoint.begin(), q.zeroPoint.end());
  zps.resize(q.scale.size(), 0); // absent zero points are 0
  addInitializer(Tensor::fromInts(intType, s, zps), zn);
  NodeProto *np = GP->add_node();
  np->set_op_type(op);
  np->set_name(name);
  np->add_input(in);
  np->add_input(sn);
  np->add_input(zn);
  np->add_output(out);
  if (pc) {
    AttributeProto *a = np->add_attribute();
    a->set_name("axis");
    a->set_type(AttributeProto::INT);
    a->set_i(q.axis);
  }
}

/// Float name of an integer value with quant params (a DequantizeLinear
/// node, made once per value).
std::string ExportBuilder::dequantized(const Value *v) {
  auto it = Dequantized.find(v);
  if (it != Dequantized.end())
    return it->second;
  std::string in = v->isConstant() ? useConstant(v) : v->name;
  std::string out = fresh(v->name + "_dq");
  addQdq("DequantizeLinear", out, in, out, *v->quant, v->dtype);
  addValueInfo(out, DType::F32, v->shape);
  Dequantized[v] = out;
  return out;
}

Status ExportBuilder::emitNode(const Node &n) {
  const ::onnx::OpSchema *schema = ::onnx::OpSchemaRegistry::Schema(n.opName(), Opset, "");
  if (!schema)
    return nodeErr(n, "no ai.onnx schema for " + std::string(n.opName()) + " at opset " +
                          std::to_string(Opset));
  bool typed = isTypedQuant(n);
  auto quantInt = [](const Value *v) { return v && v->quant && !isFloat(v->dtype); };
  bool hasMin = n.hasAttr("act_min"), hasMax = n.hasAttr("act_max");
  float lo = n.attrFloat("act_min", -INFINITY), hi = n.attrFloat("act_max", INFINITY);
  bool fused = (hasMin && lo > -INFINITY) || (hasMax && hi < INFINITY);

  // Inputs: absent optionals are "", trailing ones dropped; typed operands
  // go through a DequantizeLinear.
  std::vector<std::string> ins;
  size_t nIn = n.inputs.size();
  while (nIn > 0 && !n.inputs[nIn - 1])
    --nIn;
  for (size_t i = 0; i < nIn; ++i) {
    const Value *v = n.inputs[i];
    if (!v)
      ins.push_back("");
    else if (typed && quantInt(v))
      ins.push_back(dequantized(v));
    else
      ins.push_back(v->isConstant() ? useConstant(v) : v->name);
  }
  // Outputs: op -> [act clamp] -> [QuantizeLinear] -> the IR value's name.
  std::vector<std::string> outs;
  std::string floatOut; // name of output 0 after the op and its clamp
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const Value *v = n.outputs[i];
    std::string name = v->name;
    if (typed && quantInt(v)) {
      name = fresh(v->name + "_f");
      addValueInfo(name, DType::F32, v->shape);
    }
    if (i == 0)
      floatOut = name;
    if (i == 0 && fused) {
      name = fresh(v->name + "_preact");
      addValueInfo(name, DType::F32, v->shape);
    }
    outs.push_back(name);
  }
  NodeProto *np = GP->add_node();
  np->set_op_type(n.opName());
  np->set_name(n.name);
  for (const std::string &s : ins)
    np->add_input(s);
  for (const std::string &s : outs)
    np->add_output(s);
  for (const auto &kv : n.attrs) {
    const std::string &name = kv.first;
    if (name == "act_min" || name == "act_max") {
      if (!std::holds_alternative<float>(kv.second))
        return nodeErr(n, "attribute '" + name + "' is not a float");
      continue;
    }
    if (name == "requant")
      continue; // the integer rounding of a typed node: QDQ form has no equivalent
    if (n.kind == OpKind::Reshape && name == "allowzero" && Opset < 14)
      continue; // 0 (requiredOpset raised the opset otherwise): the opset-13 meaning
    if (!schema->attributes().count(name))
      return nodeErr(n, "attribute '" + name + "' has no ONNX equivalent for " +
                            std::string(n.opName()) + " at opset " + std::to_string(Opset));
    setAttr(*np->add_attribute(), name, kv.second);
  }
  if (fused) {
    if (n.outputs.size() != 1 || (!typed && n.outputs[0]->dtype != DType::F32))
      return nodeErr(n, "fused activation (act_min/act_max) on a node that does not have one "
                        "f32 output");
    // The clamp after the op: Relu for [0, +inf), else Clip(x, min?, max?).
    NodeProto *act = GP->add_node();
    act->set_name(n.name + "_act");
    act->add_input(outs[0]);
    if (lo == 0.0f && !(hi < INFINITY)) {
      act->set_op_type("Relu");
    } else {
      act->set_op_type("Clip");
      act->add_input(lo > -INFINITY ? scalarConst(n.name + "_act_min", lo) : std::string());
      if (hi < INFINITY)
        act->add_input(scalarConst(n.name + "_act_max", hi));
    }
    act->add_output(floatOut);
  }
  if (typed)
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const Value *v = n.outputs[i];
      if (quantInt(v))
        addQdq("QuantizeLinear", fresh(n.name + "_q" + std::to_string(i)),
               i == 0 ? floatOut : outs[i], v->name, *v->quant, v->dtype);
    }
  return success();
}

Status ExportBuilder::validate(ModelProto &m) const {
  std::string what;
  try {
    what = "onnx checker";
    ::onnx::checker::check_model(m);
    what = "onnx shape inference";
    ModelProto copy = m;
    ::onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*strict_mode=*/1,
                                       /*data_prop=*/false);
    ::onnx::shape_inference::InferShapes(copy, ::onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception &e) {
    std::string msg = e.what();
    msg = msg.substr(0, msg.find('\n'));
    return error("exported model fails the " + what + ": " + msg).inFile(G.sourceFile);
  }
  return success();
}

Result<ModelProto> ExportBuilder::run() {
  for (const auto &n : G.nodes()) {
    NPUCC_TRY(checkNode(*n));
    Opset = std::max(Opset, requiredOpset(*n));
  }
  Opset = std::max(Opset, O.opset);

  ModelProto m;
  // IR version 7 is the one of opset 13 (8 from opset 14 on).
  m.set_ir_version(Opset >= 14 ? 8 : 7);
  m.set_producer_name(O.producerName);
  if (!O.producerVersion.empty())
    m.set_producer_version(O.producerVersion);
  auto *imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(Opset);
  GP = m.mutable_graph();
  GP->set_name(O.graphName.empty() ? (G.name.empty() ? "main" : G.name) : O.graphName);

  for (const auto &v : G.values())
    Taken.insert(v->name);
  for (const Value *v : G.inputs) {
    if (!v || v->isConstant())
      return error("graph input '" + std::string(v ? v->name : "") + "' is a constant")
          .inFile(G.sourceFile);
    setType(*GP->add_input(), *v);
  }
  for (const auto &n : G.nodes())
    NPUCC_TRY(emitNode(*n));
  // Graph outputs. A constant output is produced by an Identity from its
  // initializer (ONNX graph outputs must be node results or inputs).
  std::set<std::string> outNames;
  for (const Value *v : G.outputs) {
    if (!v)
      return error("graph has an absent output").inFile(G.sourceFile);
    if (!outNames.insert(v->name).second)
      return error("graph output '" + v->name + "' is listed twice").inFile(G.sourceFile);
    if (v->isConstant()) {
      std::string init = fresh(v->name + "_const");
      addInitializer(*v->constant, init);
      NodeProto *id = GP->add_node();
      id->set_op_type("Identity");
      id->set_name(v->name + "_output");
      id->add_input(init);
      id->add_output(v->name);
    } else if (!v->producer && !G.isGraphInput(v)) {
      return error("graph output '" + v->name + "' is neither produced nor an input")
          .inFile(G.sourceFile);
    }
    setType(*GP->add_output(), *v);
  }
  // value_info for every intermediate node result (node order): shape
  // inference cross-checks them against its own.
  for (const auto &n : G.nodes())
    for (const Value *v : n->outputs)
      if (!outNames.count(v->name))
        setType(*GP->add_value_info(), *v);
  if (O.check)
    NPUCC_TRY(validate(m));
  return m;
}

} // namespace

Result<std::string> exportModelBytes(const Graph &g, const ExportOptions &o) {
  ExportBuilder b(g, o);
  auto m = b.run();
  if (!m)
    return m.error();
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream sos(&bytes);
    google::protobuf::io::CodedOutputStream cos(&sos);
    cos.SetSerializationDeterministic(true);
    if (!m->SerializeToCodedStream(&cos))
      return error("cannot serialize the exported model (is it over 2 GiB?)").inFile(g.sourceFile);
  }
  return bytes;
}

Status exportModel(const Graph &g, const std::string &path, const ExportOptions &o) {
  auto bytes = exportModelBytes(g, o);
  if (!bytes)
    return std::move(
        bytes.error().inFile(path).note("the ONNX model '" + path + "' was not written"));
  return replaceFileBytes(path, *bytes, "the exported ONNX model");
}

} // namespace npucc::onnx
