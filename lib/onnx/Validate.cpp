//===- Validate.cpp - Checks of a ModelProto before libonnx sees it -------===//
//
// libonnx's version converter and shape inference trust their input: a graph
// output that no node produces or a tensor whose data is shorter than its
// dims crash them. validateModel runs before either and checks, without
// allocating anything in proportion to the dims: every tensor (initializers,
// tensor attributes such as Constant's value) has as much data as its type
// and dims need and fits kMaxTensorBytes; convolution and pooling windows
// have strides, dilations and kernel sizes >= 1; graph outputs are produced by a
// node or are graph inputs or initializers; graph inputs and outputs have a
// defined element type and static dims within kMaxTensorBytes.
// pinKernelShapes then writes the kernel_shape that Conv-like nodes would
// take from their weight's dims as an attribute, so that shape inference
// checks it against the input's rank instead of indexing past the shorter of
// the two (libonnx's convPoolShapeInference, found by fuzz_onnx_import).
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <algorithm>
#include <map>
#include <set>

using ::onnx::TensorProto;

namespace npucc::onnx::detail {

namespace {

/// Bytes per element of an ONNX element type, 0 for string/undefined/unknown.
int64_t onnxElemSize(int t) {
  switch (t) {
  case TensorProto::UINT8:
  case TensorProto::INT8:
  case TensorProto::BOOL:
    return 1;
  case TensorProto::UINT16:
  case TensorProto::INT16:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return 2;
  case TensorProto::FLOAT:
  case TensorProto::INT32:
  case TensorProto::UINT32:
    return 4;
  case TensorProto::INT64:
  case TensorProto::DOUBLE:
  case TensorProto::UINT64:
  case TensorProto::COMPLEX64:
    return 8;
  case TensorProto::COMPLEX128:
    return 16;
  default:
    return 0;
  }
}

std::string limitText() { return std::to_string(ir::kMaxTensorBytes >> 30) + " GiB"; }

/// Element count of `dims` (dims checked non-negative and within the limit
/// for `elemSize`-byte elements).
Result<int64_t> elementCount(const ir::Shape &dims, int64_t elemSize, const std::string &what) {
  for (int64_t d : dims)
    if (d < 0)
      return error(what + " has a negative dimension (" + std::to_string(d) + ")");
  // U8 stands for any one-byte type; the limit is then applied per element size.
  auto bytes = ir::checkedByteSize(ir::DType::U8, dims);
  if (!bytes || *bytes > ir::kMaxTensorBytes / std::max<int64_t>(elemSize, 1))
    return error(what + " has shape [" + ir::shapeStr(dims) + "], larger than npucc's limit of " +
                 limitText() + " for one tensor");
  return *bytes;
}

/// Number of elements of data the tensor holds in its typed field.
int64_t typedFieldCount(const TensorProto &tp) {
  switch (tp.data_type()) {
  case TensorProto::FLOAT:
    return tp.float_data_size();
  case TensorProto::COMPLEX64:
    return tp.float_data_size() / 2;
  case TensorProto::DOUBLE:
    return tp.double_data_size();
  case TensorProto::COMPLEX128:
    return tp.double_data_size() / 2;
  case TensorProto::INT64:
    return tp.int64_data_size();
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    return tp.uint64_data_size();
  case TensorProto::STRING:
    return tp.string_data_size();
  default:
    return tp.int32_data_size();
  }
}

/// Convolution and pooling windows: strides, dilations and kernel sizes of at
/// least 1 (libonnx's convPoolShapeInference divides by strides: SIGFPE on a
/// stride of 0, found by fuzz_onnx_import).
Status checkWindowAttributes(const ::onnx::NodeProto &n, const std::string &name) {
  static const std::set<std::string> windowed = {
      "Conv",    "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool",
      "AveragePool", "LpPool",    "MaxUnpool",   "QLinearAveragePool"};
  if (!windowed.count(n.op_type()))
    return success();
  for (const auto &a : n.attribute()) {
    if (a.name() != "strides" && a.name() != "dilations" && a.name() != "kernel_shape")
      continue;
    for (int64_t v : a.ints())
      if (v < 1)
        return error("attribute '" + a.name() + "' has " + std::to_string(v) +
                     "; every value must be at least 1")
            .atNode(name, n.op_type());
  }
  return success();
}

} // namespace

Status checkTensorData(const TensorProto &tp, const std::string &what) {
  ir::Shape dims(tp.dims().begin(), tp.dims().end());
  int64_t elemSize = onnxElemSize(tp.data_type());
  auto n = elementCount(dims, elemSize, what);
  if (!n)
    return n.error();
  if (tp.data_location() == TensorProto::EXTERNAL)
    return success(); // sized against its file when read (tensorFromProto)
  if (tp.has_raw_data()) {
    if (elemSize == 0)
      return error(what + " has raw data of element type " + onnxTypeName(tp.data_type()));
    if (static_cast<int64_t>(tp.raw_data().size()) != *n * elemSize)
      return error(what + " has " + std::to_string(tp.raw_data().size()) +
                   " bytes of raw data, its type and shape [" + ir::shapeStr(dims) + "] need " +
                   std::to_string(*n * elemSize));
    return success();
  }
  int64_t have = typedFieldCount(tp);
  if (have != *n)
    return error(what + " has " + std::to_string(have) + " elements of data, its shape [" +
                 ir::shapeStr(dims) + "] needs " + std::to_string(*n));
  return success();
}

Status validateModel(const ::onnx::ModelProto &m, const std::vector<std::string> &names) {
  const ::onnx::GraphProto &g = m.graph();
  if (g.output_size() == 0)
    return error("the graph has no outputs: there is nothing to compute");
  std::set<std::string> defined;
  for (const TensorProto &t : g.initializer()) {
    NPUCC_TRY(checkTensorData(t, "initializer '" + t.name() + "'"));
    defined.insert(t.name());
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const ::onnx::NodeProto &n = g.node(i);
    NPUCC_TRY(checkWindowAttributes(n, names[i]));
    for (const auto &a : n.attribute()) {
      std::string what = "attribute '" + a.name() + "'";
      if (a.has_t())
        if (Status s = checkTensorData(a.t(), what); !s)
          return std::move(s.error().atNode(names[i], n.op_type()));
      for (const TensorProto &t : a.tensors())
        if (Status s = checkTensorData(t, what); !s)
          return std::move(s.error().atNode(names[i], n.op_type()));
    }
    for (const std::string &o : n.output())
      defined.insert(o);
  }
  auto checkIo = [&](const ::onnx::ValueInfoProto &vi, const std::string &kind) -> Status {
    std::string what = kind + " '" + vi.name() + "'";
    if (!vi.type().has_tensor_type())
      return success(); // reported where it matters (bindInputs)
    const auto &tt = vi.type().tensor_type();
    if (tt.elem_type() == TensorProto::UNDEFINED)
      return error(what + " has element type 0 (undefined)");
    ir::Shape dims;
    for (const auto &d : tt.shape().dim())
      if (d.has_dim_value() && d.dim_value() >= 0) // negative: dynamic (bindInputs)
        dims.push_back(d.dim_value());
    auto c = elementCount(dims, std::max<int64_t>(onnxElemSize(tt.elem_type()), 1), what);
    return c ? success() : Status(c.error());
  };
  for (const auto &vi : g.input()) {
    NPUCC_TRY(checkIo(vi, "graph input"));
    defined.insert(vi.name());
  }
  for (const auto &vi : g.output()) {
    NPUCC_TRY(checkIo(vi, "graph output"));
    if (vi.name().empty())
      return error("a graph output has an empty name");
    if (!defined.count(vi.name()))
      return error("graph output '" + vi.name() +
                   "' is not produced by any node and is neither a graph input nor an "
                   "initializer");
  }
  return success();
}

void pinKernelShapes(::onnx::ModelProto &m) {
  // Dims known before shape inference (-1: unknown dim).
  std::map<std::string, std::vector<int64_t>> known;
  ::onnx::GraphProto *g = m.mutable_graph();
  for (const TensorProto &t : g->initializer())
    known[t.name()].assign(t.dims().begin(), t.dims().end());
  for (const auto &vi : g->input()) {
    if (!vi.type().tensor_type().has_shape() || known.count(vi.name()))
      continue;
    std::vector<int64_t> &d = known[vi.name()];
    for (const auto &dim : vi.type().tensor_type().shape().dim())
      d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  }
  for (::onnx::NodeProto &n : *g->mutable_node()) {
    const std::string &op = n.op_type();
    if (op == "Constant" && n.output_size() == 1) {
      for (const auto &a : n.attribute())
        if (a.name() == "value" && a.has_t())
          known[n.output(0)].assign(a.t().dims().begin(), a.t().dims().end());
      continue;
    }
    if ((op == "DequantizeLinear" || op == "Identity" || op == "Cast") && n.input_size() > 0 &&
        n.output_size() > 0 && known.count(n.input(0))) {
      known[n.output(0)] = known[n.input(0)];
      continue;
    }
    int w = op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" ? 1
            : op == "QLinearConv"                                           ? 3
                                                                            : -1;
    if (w < 0 || n.input_size() <= w || !known.count(n.input(w)) || !n.domain().empty())
      continue;
    bool has = false;
    for (const auto &a : n.attribute())
      has |= a.name() == "kernel_shape";
    const std::vector<int64_t> &dims = known[n.input(w)];
    std::vector<int64_t> kernel(dims.size() > 2 ? dims.begin() + 2 : dims.end(), dims.end());
    if (has || std::any_of(kernel.begin(), kernel.end(), [](int64_t d) { return d < 0; }))
      continue;
    auto *a = n.add_attribute();
    a->set_name("kernel_shape");
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t d : kernel)
      a->add_ints(d);
  }
}

} // namespace npucc::onnx::detail
