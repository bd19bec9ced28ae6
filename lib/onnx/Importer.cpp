//===- Importer.cpp - ONNX model file to canonical IR graph ---------------===//
//
// Driver of the import: parse the protobuf, report all unsupported ops at
// once, validate what libonnx trusts (Validate.cpp), run onnx's checker, lift old opsets with onnx's version converter
// (best effort), bind dynamic input dims (--shape), run onnx's shape
// inference, then build the graph node by node through the Builder, which
// gives every value a static shape (own shape rules where onnx left a shape
// unknown) and folds nodes whose inputs are all constants (Builder.cpp).
//
//===----------------------------------------------------------------------===//
#include "npucc/onnx/Importer.h"
#include "Internal.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Verifier.h"
#include "npucc/support/FileRead.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <filesystem>

namespace fs = std::filesystem;
using namespace npucc::ir;
using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

namespace npucc::onnx {

namespace {

using namespace detail;

std::string firstLine(const std::string &s) {
  std::string r = s.substr(0, s.find('\n'));
  const std::string tag = "[ShapeInferenceError] ";
  for (size_t p; (p = r.find(tag)) != std::string::npos;)
    r.erase(p, tag.size());
  return r;
}

int maxKnownOpset() {
  const auto &m = ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = m.find("");
  return it == m.end() ? 17 : it->second.second;
}

std::string domainOf(const std::string &d) { return d == "ai.onnx" ? "" : d; }

/// Names unnamed nodes "<OpType>_<index>" (unique) in place; returns all names.
std::vector<std::string> nameNodes(::onnx::GraphProto &gp) {
  std::set<std::string> taken;
  for (const NodeProto &n : gp.node())
    taken.insert(n.name());
  std::vector<std::string> r;
  for (int i = 0; i < gp.node_size(); ++i) {
    NodeProto *n = gp.mutable_node(i);
    if (n->name().empty()) {
      std::string base = n->op_type() + "_" + std::to_string(i), c = base;
      for (int k = 1; taken.count(c); ++k)
        c = base + "_" + std::to_string(k);
      taken.insert(c);
      n->set_name(c);
    }
    r.push_back(n->name());
  }
  return r;
}

Status checkSupported(const ModelProto &m, const std::map<std::string, int> &opsets,
                      const std::vector<std::string> &names) {
  const size_t kMaxNotes = 40;
  Diagnostic d;
  int count = 0;
  std::set<std::string> opTypes;
  for (int i = 0; i < m.graph().node_size(); ++i) {
    const NodeProto &n = m.graph().node(i);
    std::string dom = domainOf(n.domain());
    std::string where =
        "node '" + names[i] + "' (" + (dom.empty() ? "" : dom + ".") + n.op_type() + "): ";
    auto k = opFromName(n.op_type(), dom);
    auto ver = opsets.find(dom);
    if (!k || ver == opsets.end() || ver->second < opInfo(*k).minOpset ||
        ver->second > opInfo(*k).maxOpset)
      opTypes.insert((dom.empty() ? "" : dom + ".") + n.op_type());
    if (!k) {
      d.note(where + "not supported");
      ++count;
    } else if (ver == opsets.end()) {
      d.note(where + "the model imports no opset for domain '" + dom + "'");
      ++count;
    } else if (ver->second < opInfo(*k).minOpset || ver->second > opInfo(*k).maxOpset) {
      d.note(where + "not supported at opset " + std::to_string(ver->second) +
             " (npucc supports opsets " + std::to_string(opInfo(*k).minOpset) + "-" +
             std::to_string(opInfo(*k).maxOpset) + ")");
      ++count;
    }
  }
  if (!count)
    return success();
  std::string kinds;
  for (const std::string &k : opTypes)
    kinds += (kinds.empty() ? "" : ", ") + k;
  if (d.notes.size() > kMaxNotes) {
    size_t more = d.notes.size() - kMaxNotes;
    d.notes.resize(kMaxNotes);
    d.note("... and " + std::to_string(more) + " more");
  }
  d.message = std::to_string(count) + " unsupported operation" + (count > 1 ? "s" : "") + " (" +
              kinds + ")";
  return d;
}

std::string dimsText(const ::onnx::TensorShapeProto &s) {
  std::string r = "[";
  for (int i = 0; i < s.dim_size(); ++i) {
    const auto &d = s.dim(i);
    r += (i ? "," : "") + (d.has_dim_value() ? std::to_string(d.dim_value())
                                             : (d.dim_param().empty() ? "?" : d.dim_param()));
  }
  return r + "]";
}

/// The shape an input without --shape gets: from `dataShapes` (npucc check),
/// or 1 for a dynamic leading (batch) dim when every other dim is static.
/// Empty when neither applies; `how` says which did.
Shape implicitBinding(const ::onnx::TypeProto_Tensor &tt, size_t index, const ImportOptions &o,
                      std::string &how) {
  if (index < o.dataShapes.size()) {
    how = "from the first data set";
    return o.dataShapes[index];
  }
  int rank = tt.shape().dim_size();
  if (!tt.has_shape() || rank < 2)
    return {};
  Shape s;
  for (int i = 0; i < rank; ++i) {
    const auto &d = tt.shape().dim(i);
    bool dyn = !d.has_dim_value() || d.dim_value() < 0;
    if (dyn != (i == 0))
      return {};
    s.push_back(dyn ? 1 : d.dim_value());
  }
  how = "by default: a leading dynamic dimension is taken as a batch of 1; pass --shape " +
        std::string("for another size");
  return s;
}

/// Binds dynamic dims of graph inputs (in place) from --shape bindings, the
/// data set's shapes (npucc check) or the batch-of-1 default.
Status bindInputs(ModelProto &m, const std::set<std::string> &inits, const ImportOptions &o) {
  std::set<std::string> inputNames;
  Diagnostic unbound;
  std::string example; // a --shape suggestion (dynamic dims set to 1)
  size_t index = 0;
  for (auto &vi : *m.mutable_graph()->mutable_input()) {
    if (inits.count(vi.name()))
      continue;
    inputNames.insert(vi.name());
    if (!vi.type().has_tensor_type())
      return error("graph input '" + vi.name() +
                   "' is not a tensor (sequence, map or optional "
                   "types are not supported)");
    auto *tt = vi.mutable_type()->mutable_tensor_type();
    auto bind = o.shapes.find(vi.name());
    bool dynamic = !tt->has_shape();
    for (const auto &d : tt->shape().dim())
      dynamic |= !d.has_dim_value() || d.dim_value() < 0;
    std::string dims = tt->has_shape() ? dimsText(tt->shape()) : "(unknown rank)";
    std::string how;
    Shape implicit = bind == o.shapes.end() && dynamic ? implicitBinding(*tt, index, o, how)
                                                       : Shape{};
    ++index;
    if (bind == o.shapes.end() && implicit.empty()) {
      if (dynamic)
        unbound.note("input '" + vi.name() + "' " + dims);
      if (dynamic && example.empty() && tt->has_shape()) {
        Shape ex;
        for (const auto &d : tt->shape().dim())
          ex.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : 1);
        example = vi.name() + "=" + shapeStr(ex);
      }
      continue;
    }
    const Shape &s = bind != o.shapes.end() ? bind->second : implicit;
    std::string source = bind != o.shapes.end() ? "--shape " + vi.name() + "=" + shapeStr(s)
                                                 : "the first data set's shape " + shapeStr(s);
    if (tt->has_shape() && tt->shape().dim_size() != static_cast<int>(s.size()))
      return error(source + " has rank " + std::to_string(s.size()) + " but input '" +
                   vi.name() + "' is " + dims + " (rank " +
                   std::to_string(tt->shape().dim_size()) + ")");
    for (size_t i = 0; tt->has_shape() && i < s.size(); ++i) {
      const auto &d = tt->shape().dim(static_cast<int>(i));
      if (d.has_dim_value() && d.dim_value() >= 0 && d.dim_value() != s[i])
        return error(source + " conflicts with input '" + vi.name() + "' " + dims +
                     " at axis " + std::to_string(i));
    }
    if (!how.empty() && o.notes)
      o.notes->push_back("input '" + vi.name() + "' " + dims + " bound to " + shapeStr(s) + " " +
                         how);
    auto *shp = tt->mutable_shape();
    shp->clear_dim();
    for (int64_t v : s)
      shp->add_dim()->set_dim_value(v);
  }
  for (const auto &kv : o.shapes)
    if (!inputNames.count(kv.first))
      return error("--shape names '" + kv.first + "', which is not a graph input of the model");
  if (!unbound.notes.empty()) {
    unbound.message = "graph input" + std::string(unbound.notes.size() > 1 ? "s have" : " has") +
                      " dynamic dimensions; bind them with --shape NAME=DIMS" +
                      (example.empty() ? "" : " (e.g. --shape " + example + ")");
    return unbound;
  }
  return success();
}

/// Reads external initializer data into raw_data (checked to stay inside
/// the model's folder) so that onnx's converter and inference see it.
Status inlineExternalData(ModelProto &m, const std::string &dir) {
  for (TensorProto &tp : *m.mutable_graph()->mutable_initializer()) {
    if (tp.data_location() != TensorProto::EXTERNAL)
      continue;
    auto t = tensorFromProto(tp, dir, "initializer '" + tp.name() + "'");
    if (!t)
      return t.error();
    tp.clear_external_data();
    tp.set_data_location(TensorProto::DEFAULT);
    tp.set_raw_data(std::string(reinterpret_cast<const char *>(t->raw()), t->byteSize()));
  }
  return success();
}

/// The shape onnx knows for a value, as text ("[2,3]" or "unknown").
std::string knownShape(const ::onnx::GraphProto &g, const std::string &name) {
  for (const auto &t : g.initializer())
    if (t.name() == name) {
      std::string r = "[";
      for (int i = 0; i < t.dims_size(); ++i)
        r += (i ? "," : "") + std::to_string(t.dims(i));
      return r + "]";
    }
  for (const auto *list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto &vi : *list)
      if (vi.name() == name && vi.type().tensor_type().has_shape())
        return dimsText(vi.type().tensor_type().shape());
  return "unknown shape";
}

Status runShapeInference(ModelProto &m, const std::vector<std::string> &names) {
  try {
    ::onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*error_mode=*/1,
                                       /*enable_data_propagation=*/true);
    ::onnx::shape_inference::InferShapes(m, ::onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception &e) {
    std::string msg = e.what(), node, op;
    size_t p = msg.find("op_type:");
    if (p != std::string::npos)
      op = msg.substr(p + 8, msg.find_first_of(",)", p) - p - 8);
    size_t q = msg.find("node name: ");
    if (q != std::string::npos)
      node = msg.substr(q + 11, msg.find("):", q) - q - 11);
    std::string detail = firstLine(msg);
    size_t c = detail.rfind("): ");
    if (c != std::string::npos)
      detail = detail.substr(c + 3);
    Diagnostic d = error("shape inference failed: " + detail);
    if (!op.empty())
      d.atNode(node, op);
    for (int i = 0; i < m.graph().node_size(); ++i) {
      if (names[i] != node)
        continue;
      for (const std::string &in : m.graph().node(i).input())
        if (!in.empty())
          d.note("input '" + in + "': " + knownShape(m.graph(), in));
      break;
    }
    return d;
  }
  return success();
}

void collectFacts(const ModelProto &m, Builder &b) {
  auto add = [&](const ::onnx::ValueInfoProto &vi) {
    if (!vi.type().has_tensor_type())
      return;
    const auto &tt = vi.type().tensor_type();
    ValueFacts f;
    f.elemType = tt.elem_type();
    f.staticShape = tt.has_shape();
    for (const auto &d : tt.shape().dim()) {
      f.staticShape &= d.has_dim_value() && d.dim_value() >= 0;
      f.shape.push_back(d.dim_value());
    }
    b.facts[vi.name()] = f;
  };
  for (const auto &vi : m.graph().input())
    add(vi);
  for (const auto &vi : m.graph().value_info())
    add(vi);
  for (const auto &vi : m.graph().output())
    add(vi);
}

Result<Tensor> constantValue(const NodeProto &n, const std::string &dir) {
  for (const auto &a : n.attribute()) {
    const std::string &k = a.name();
    if (k == "value")
      return tensorFromProto(a.t(), dir, "Constant value");
    if (k == "value_float")
      return Tensor::fromFloats({}, {a.f()});
    if (k == "value_floats")
      return Tensor::fromFloats({a.floats_size()},
                                std::vector<float>(a.floats().begin(), a.floats().end()));
    if (k == "value_int")
      return Tensor::fromInts(DType::I64, {}, {a.i()});
    if (k == "value_ints")
      return Tensor::fromInts(DType::I64, {a.ints_size()},
                              std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    if (k == "sparse_value" || k == "value_string" || k == "value_strings")
      return error("Constant '" + k + "' is not supported");
  }
  return error("Constant node has no value");
}

Result<std::unique_ptr<Graph>> importProto(ModelProto &m, const std::string &path,
                                           const ImportOptions &opts) {
  std::string dir = fs::path(path).parent_path().string();
  if (!m.has_graph())
    return error("not a valid ONNX model (no graph)");
  std::map<std::string, int> opsets;
  for (const auto &o : m.opset_import())
    opsets[domainOf(o.domain())] = static_cast<int>(o.version());
  std::vector<std::string> names = nameNodes(*m.mutable_graph());
  NPUCC_TRY(checkSupported(m, opsets, names));
  if (!opsets.count(""))
    return error("the model imports no opset of the default ONNX domain");
  NPUCC_TRY(validateModel(m, names)); // before libonnx: it trusts what it is given
  NPUCC_TRY(inlineExternalData(m, dir));
  pinKernelShapes(m);

  // onnx's checker, converter and shape inference do not know contrib
  // domains (com.microsoft QLinearAdd, ...): such models rely on ShapeHelper.
  bool foreign = false;
  for (const auto &n : m.graph().node())
    foreign |= !domainOf(n.domain()).empty();
  const int known = foreign ? -1 : maxKnownOpset();
  if (opsets[""] <= known) {
    try {
      ::onnx::checker::check_model(m);
    } catch (const std::exception &e) {
      return error("invalid ONNX model: " + firstLine(e.what()));
    }
  }
  int target = std::min(opts.targetOpset, foreign ? opsets[""] : known);
  ModelProto original; // kept while a converted model is being tried
  std::map<std::string, int> originalOpsets = opsets;
  bool converted = false;
  if (opsets[""] < target) {
    try { // best effort: keep the original model when an adapter is missing
      ModelProto conv = ::onnx::version_conversion::ConvertVersion(m, target);
      if (conv.has_graph()) {
        original = std::move(m);
        m = std::move(conv);
        converted = true;
        names = nameNodes(*m.mutable_graph());
        for (const auto &o : m.opset_import())
          opsets[domainOf(o.domain())] = static_cast<int>(o.version());
      }
    } catch (...) {
    }
  }

  std::set<std::string> inits;
  auto prepare = [&]() -> Status {
    inits.clear();
    for (const auto &t : m.graph().initializer())
      inits.insert(t.name());
    NPUCC_TRY(bindInputs(m, inits, opts));
    if (opsets[""] <= known)
      NPUCC_TRY(runShapeInference(m, names));
    return success();
  };
  Status prepared = prepare();
  if (!prepared && converted) { // the converter's output may be at fault
    m = std::move(original);
    opsets = originalOpsets;
    names = nameNodes(*m.mutable_graph());
    prepared = prepare();
  }
  NPUCC_TRY(prepared);
  bool onnxInferred = opsets[""] <= known;

  auto g = std::make_unique<Graph>();
  g->name = m.graph().name().empty() ? "main" : m.graph().name();
  g->sourceFile = path;
  Builder b(*g, path, dir, opsets[""]);
  b.onnxInferred = onnxInferred;
  collectFacts(m, b);
  for (const auto &t : m.graph().initializer()) {
    b.initializers[t.name()] = &t;
    b.reserved.insert(t.name());
  }
  for (const auto &n : m.graph().node()) {
    for (const auto &i : n.input())
      ++b.useCount[i];
    for (const auto &o : n.output())
      b.reserved.insert(o);
  }
  for (const auto &o : m.graph().output())
    ++b.useCount[o.name()];
  for (const auto &vi : m.graph().input()) {
    b.reserved.insert(vi.name());
    if (inits.count(vi.name()))
      continue; // initializer listed as input: a constant
    const auto &tt = vi.type().tensor_type();
    auto dt = mapElemType(tt.elem_type(), "graph input '" + vi.name() + "'");
    if (!dt)
      return dt.error();
    Shape s;
    for (const auto &d : tt.shape().dim())
      s.push_back(d.dim_value());
    Value *v = g->addValue(vi.name(), *dt, s);
    g->inputs.push_back(v);
    b.values[vi.name()] = v;
  }
  for (int i = 0; i < m.graph().node_size(); ++i) {
    const NodeProto &n = m.graph().node(i);
    auto k = opFromName(n.op_type(), domainOf(n.domain()));
    if (*k == OpKind::Constant) {
      auto t = constantValue(n, dir);
      if (!t)
        return std::move(t.error().atNode(names[i], "Constant"));
      if (n.output_size() != 1)
        return error("Constant must have one output").atNode(names[i], "Constant");
      b.values[n.output(0)] = g->addConstant(n.output(0), t.take());
      continue;
    }
    NPUCC_TRY(translateNode(b, n, *k, names[i]));
  }
  for (const auto &o : m.graph().output()) {
    auto v = b.lookup(o.name());
    if (!v)
      return v.error();
    if (!*v)
      return error("graph output with an empty name");
    g->outputs.push_back(*v);
  }
  g->removeUnusedValues();
  auto ok = verifyGraph(*g);
  if (!ok)
    return std::move(ok.error().note("the imported graph failed verification (importer bug)"));
  return g;
}

} // namespace

Result<std::unique_ptr<Graph>> importModel(const std::string &path, const ImportOptions &opts) {
  auto bytes = readFileLimited(path, kMaxModelFileBytes, "model");
  if (!bytes)
    return std::move(bytes.error());
  return importModelBytes(*bytes, path, opts);
}

/// Where the protobuf wire format of `b` stops inside a field, as in a
/// truncated file: the byte offset that field would end at, or 0.
static uint64_t truncatedFieldEnd(const std::string &b) {
  size_t i = 0, n = b.size();
  auto varint = [&](uint64_t &v) {
    v = 0;
    for (int s = 0; s < 64; s += 7) {
      if (i >= n)
        return false;
      uint8_t c = uint8_t(b[i++]);
      v |= uint64_t(c & 0x7f) << s;
      if (!(c & 0x80))
        break;
    }
    return true;
  };
  while (i < n) {
    uint64_t key = 0, v = 0;
    if (!varint(key))
      return n + 1;
    switch (key & 7) {
    case 0:
      if (!varint(v))
        return n + 1;
      break;
    case 1:
    case 5: {
      size_t w = (key & 7) == 1 ? 8 : 4;
      if (n - i < w)
        return i + w;
      i += w;
      break;
    }
    case 2:
      if (!varint(v))
        return n + 1;
      if (v > n - i)
        return i + v;
      i += size_t(v);
      break;
    default:
      return 0; // groups or garbage: not a plain truncation
    }
  }
  return 0;
}

Result<std::unique_ptr<Graph>> importModelBytes(const std::string &bytes, const std::string &path,
                                                const ImportOptions &opts) {
  ModelProto m;
  try {
    if (!m.ParseFromString(bytes)) {
      if (uint64_t end = truncatedFieldEnd(bytes))
        return error(
                   "not a valid ONNX model (failed to parse protobuf): the file ends early: its " +
                   std::to_string(bytes.size()) +
                   " bytes stop inside a field that needs at least " + std::to_string(end) +
                   " (truncated?)")
            .inFile(path);
      return error("not a valid ONNX model (failed to parse protobuf)").inFile(path);
    }
    auto r = importProto(m, path, opts);
    if (!r)
      return std::move(r.error().inFile(path));
    return r;
  } catch (const std::bad_alloc &) {
    return error("import failed: out of memory").inFile(path);
  } catch (const std::exception &e) {
    return error(std::string("import failed: ") + firstLine(e.what())).inFile(path);
  }
}

} // namespace npucc::onnx
