//===- Canonicalize.cpp - One ONNX node to canonical IR nodes -------------===//
//
// Normalizes every supported op, whatever its opset version, to the
// canonical IR forms of docs/ir.md (opset-13 semantics): attributes that
// later versions turned into inputs become constant inputs (and vice versa
// for ReduceMean v18), auto_pad is resolved into explicit pads, defaults
// are filled in, training-only outputs are refused when used.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <algorithm>
#include <cmath>

using namespace npucc::ir;
using ::onnx::AttributeProto;
using ::onnx::NodeProto;

namespace npucc::onnx::detail {

Result<Attribute> convertAttr(const AttributeProto &a, const std::string &baseDir) {
  switch (a.type()) {
  case AttributeProto::INT:
    return Attribute(static_cast<int64_t>(a.i()));
  case AttributeProto::FLOAT:
    return Attribute(a.f());
  case AttributeProto::STRING:
    return Attribute(a.s());
  case AttributeProto::INTS:
    return Attribute(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  case AttributeProto::FLOATS:
    return Attribute(std::vector<float>(a.floats().begin(), a.floats().end()));
  case AttributeProto::STRINGS:
    return Attribute(std::vector<std::string>(a.strings().begin(), a.strings().end()));
  case AttributeProto::TENSOR: {
    auto t = tensorFromProto(a.t(), baseDir, "tensor attribute '" + a.name() + "'");
    if (!t)
      return t.error();
    return Attribute(t.take());
  }
  default:
    return error("attribute '" + a.name() +
                 "' has a kind npucc does not support (graph, "
                 "sparse tensor or type)");
  }
}

namespace {

using Attrs = std::map<std::string, Attribute>;

int64_t getInt(const Attrs &a, const std::string &k, int64_t d) {
  auto it = a.find(k);
  if (it == a.end())
    return d;
  if (auto *p = std::get_if<int64_t>(&it->second))
    return *p;
  if (auto *f = std::get_if<float>(&it->second))
    return static_cast<int64_t>(*f);
  return d;
}
float getFloat(const Attrs &a, const std::string &k, float d) {
  auto it = a.find(k);
  if (it == a.end())
    return d;
  if (auto *p = std::get_if<float>(&it->second))
    return *p;
  if (auto *i = std::get_if<int64_t>(&it->second))
    return static_cast<float>(*i);
  return d;
}
std::string getStr(const Attrs &a, const std::string &k, const std::string &d) {
  auto it = a.find(k);
  if (it == a.end())
    return d;
  if (auto *p = std::get_if<std::string>(&it->second))
    return *p;
  return d;
}
std::vector<int64_t> getInts(const Attrs &a, const std::string &k, std::vector<int64_t> d = {}) {
  auto it = a.find(k);
  if (it == a.end())
    return d;
  if (auto *p = std::get_if<std::vector<int64_t>>(&it->second))
    return *p;
  if (auto *i = std::get_if<int64_t>(&it->second))
    return {*i};
  return d;
}
template <typename T> void fill(Attrs &a, const std::string &k, T v) {
  if (!a.count(k))
    a[k] = Attribute(std::move(v));
}

/// State for translating one node.
struct NodeCtx {
  Builder &b;
  const NodeProto &np;
  std::string name, op;
  std::vector<Value *> ins;
  Attrs attrs;
  std::vector<std::string> outs;
  int ver;

  Diagnostic err(std::string msg) const { return b.nodeErr(name, op, std::move(msg)); }
  Value *in(size_t i) const { return i < ins.size() ? ins[i] : nullptr; }
  void setIn(size_t i, Value *v) {
    if (ins.size() <= i)
      ins.resize(i + 1, nullptr);
    ins[i] = v;
  }
  bool used(size_t outIdx) const {
    return outIdx < outs.size() && !outs[outIdx].empty() && b.isUsed(outs[outIdx]);
  }
  /// Constant integer input i (error when not constant).
  Result<std::vector<int64_t>> constIn(size_t i, const char *what) const {
    Value *v = in(i);
    if (!v || !v->isConstant())
      return err(std::string(what) + " operand " + (v ? "'" + v->name + "' " : "") +
                 "is a runtime value; npucc needs it to be a constant");
    return v->constant->toInts();
  }
  Value *ints(const char *suffix, const std::vector<int64_t> &v) {
    return b.constInts(name + "_" + suffix, v);
  }
  Status emit(OpKind k) {
    auto r = b.emit(k, name, ins, outs, attrs);
    if (!r)
      return r.error();
    return success();
  }
};

Status convLike(NodeCtx &c, bool transpose) {
  Value *x = c.in(0), *w = c.in(1);
  if (x->shape.size() < 3 || w->shape.size() != x->shape.size())
    return c.err("input " + shapeStr(x->shape) + " and weight " + shapeStr(w->shape) +
                 " ranks do not fit a convolution");
  size_t sp = x->shape.size() - 2;
  Shape spatial(x->shape.begin() + 2, x->shape.end());
  fill(c.attrs, "kernel_shape", std::vector<int64_t>(w->shape.begin() + 2, w->shape.end()));
  fill(c.attrs, "strides", std::vector<int64_t>(sp, 1));
  fill(c.attrs, "dilations", std::vector<int64_t>(sp, 1));
  fill(c.attrs, "group", int64_t(1));
  auto k = getInts(c.attrs, "kernel_shape"), s = getInts(c.attrs, "strides"),
       d = getInts(c.attrs, "dilations");
  if (k.size() != sp || s.size() != sp || d.size() != sp)
    return c.err("kernel_shape/strides/dilations do not match " + std::to_string(sp) +
                 " spatial dims");
  for (size_t i = 0; i < sp; ++i)
    if (s[i] <= 0 || d[i] <= 0)
      return c.err("strides and dilations must be positive");
  std::string autoPad = getStr(c.attrs, "auto_pad", "NOTSET");
  c.attrs.erase("auto_pad");
  if (!transpose) {
    if (autoPad != "NOTSET")
      c.attrs["pads"] = autoPads(autoPad, spatial, k, s, d);
    fill(c.attrs, "pads", std::vector<int64_t>(2 * sp, 0));
    return c.emit(OpKind::Conv);
  }
  fill(c.attrs, "output_padding", std::vector<int64_t>(sp, 0));
  auto op = getInts(c.attrs, "output_padding");
  auto outShape = getInts(c.attrs, "output_shape");
  c.attrs.erase("output_shape");
  if (outShape.size() > sp) // may include N and C
    outShape.erase(outShape.begin(), outShape.end() - sp);
  if (!outShape.empty() || (autoPad != "NOTSET" && autoPad != "VALID")) {
    std::vector<int64_t> pads(2 * sp, 0);
    for (size_t i = 0; i < sp; ++i) {
      int64_t want = outShape.empty() ? spatial[i] * s[i] : outShape[i];
      int64_t total = s[i] * (spatial[i] - 1) + op[i] + (k[i] - 1) * d[i] + 1 - want;
      if (total < 0) { // grow the output through output_padding
        op[i] -= total;
        total = 0;
      }
      int64_t half = total / 2;
      pads[i] = autoPad == "SAME_UPPER" ? half : total - half;
      pads[i + sp] = total - pads[i];
    }
    c.attrs["pads"] = pads;
    c.attrs["output_padding"] = op;
  }
  fill(c.attrs, "pads", std::vector<int64_t>(2 * sp, 0));
  return c.emit(OpKind::ConvTranspose);
}

Status pool(NodeCtx &c, OpKind k) {
  Value *x = c.in(0);
  if (x->shape.size() < 3)
    return c.err("pooling input must have rank >= 3, got " + shapeStr(x->shape));
  size_t sp = x->shape.size() - 2;
  if (!c.attrs.count("kernel_shape"))
    return c.err("missing kernel_shape");
  fill(c.attrs, "strides", std::vector<int64_t>(sp, 1));
  fill(c.attrs, "ceil_mode", int64_t(0));
  if (k == OpKind::MaxPool) {
    fill(c.attrs, "dilations", std::vector<int64_t>(sp, 1));
    fill(c.attrs, "storage_order", int64_t(0));
  } else {
    fill(c.attrs, "count_include_pad", int64_t(0));
  }
  auto ks = getInts(c.attrs, "kernel_shape"), s = getInts(c.attrs, "strides");
  auto d = getInts(c.attrs, "dilations", std::vector<int64_t>(sp, 1));
  if (ks.size() != sp || s.size() != sp || d.size() != sp)
    return c.err("kernel_shape/strides/dilations do not match " + std::to_string(sp) +
                 " spatial dims");
  std::string autoPad = getStr(c.attrs, "auto_pad", "NOTSET");
  c.attrs.erase("auto_pad");
  if (autoPad != "NOTSET")
    c.attrs["pads"] = autoPads(autoPad, Shape(x->shape.begin() + 2, x->shape.end()), ks, s, d);
  fill(c.attrs, "pads", std::vector<int64_t>(2 * sp, 0));
  if (k == OpKind::MaxPool && !c.used(1))
    c.outs.resize(1);
  return c.emit(k);
}

Status softmax(NodeCtx &c) {
  Value *x = c.in(0);
  int64_t r = static_cast<int64_t>(x->shape.size());
  if (c.ver >= 13) {
    fill(c.attrs, "axis", int64_t(-1));
    return c.emit(OpKind::Softmax);
  }
  int64_t axis = getInt(c.attrs, "axis", 1);
  if (axis < 0)
    axis += r;
  if (axis < 0 || axis > r)
    return c.err("axis out of range for rank " + std::to_string(r));
  if (axis >= r - 1) {
    c.attrs["axis"] = int64_t(-1);
    return c.emit(OpKind::Softmax);
  }
  // Old semantics: coerce to 2-D [prod(<axis), prod(>=axis)], softmax rows.
  int64_t a = 1, bsz = 1;
  for (int64_t i = 0; i < r; ++i)
    (i < axis ? a : bsz) *= x->shape[i];
  auto flat = c.b.emit(OpKind::Reshape, c.name + "_flatten", {x, c.ints("shape2d", {a, bsz})},
                       {"\x01" + c.name + "_2d"}, {{"allowzero", int64_t(0)}});
  if (!flat)
    return flat.error();
  auto sm = c.b.emit(OpKind::Softmax, c.name, {(*flat)[0]}, {"\x01" + c.name + "_rows"},
                     {{"axis", int64_t(-1)}});
  if (!sm)
    return sm.error();
  auto back = c.b.emit(OpKind::Reshape, c.name + "_unflatten",
                       {(*sm)[0], c.ints("shape", x->shape)}, c.outs, {{"allowzero", int64_t(0)}});
  if (!back)
    return back.error();
  return success();
}

/// Moves attribute `attr` into constant input `idx` (i64).
void attrToInput(NodeCtx &c, const char *attr, size_t idx) {
  if (!c.attrs.count(attr))
    return;
  c.setIn(idx, c.ints(attr, getInts(c.attrs, attr)));
  c.attrs.erase(attr);
}

Status pad(NodeCtx &c) {
  Value *x = c.in(0);
  size_t r = x->shape.size();
  fill(c.attrs, "mode", std::string("constant"));
  if (c.ver < 11) {
    auto p = getInts(c.attrs, c.ver < 2 ? "paddings" : "pads");
    float value = getFloat(c.attrs, "value", 0.0f);
    c.attrs.erase("paddings");
    c.attrs.erase("pads");
    c.attrs.erase("value");
    c.setIn(1, c.ints("pads", p));
    if (value != 0.0f) {
      Tensor t(x->dtype, {});
      t.setDouble(0, value);
      c.setIn(2, c.b.constTensor(c.name + "_value", t));
    }
  } else if (c.in(3)) { // opset 18 axes: expand pads to every dim
    auto axes = c.constIn(3, "axes");
    auto p = c.constIn(1, "pads");
    if (!axes)
      return axes.error();
    if (!p)
      return p.error();
    if (p->size() != 2 * axes->size())
      return c.err("pads length does not match axes");
    std::vector<int64_t> full(2 * r, 0);
    for (size_t i = 0; i < axes->size(); ++i) {
      int64_t a = (*axes)[i] < 0 ? (*axes)[i] + static_cast<int64_t>(r) : (*axes)[i];
      if (a < 0 || a >= static_cast<int64_t>(r))
        return c.err("axis out of range");
      full[a] = (*p)[i];
      full[a + r] = (*p)[i + axes->size()];
    }
    c.ins.resize(3);
    c.ins[1] = c.ints("pads", full);
  }
  if (c.in(2) && c.in(2)->numElements() == 0)
    c.ins[2] = nullptr;
  return c.emit(OpKind::Pad);
}

Status resize(NodeCtx &c) {
  if (c.ver < 11) { // (X, scales) with Upsample-like semantics
    Value *scales = c.in(1);
    c.ins = {c.in(0), nullptr, scales};
    fill(c.attrs, "mode", std::string("nearest"));
    c.attrs["coordinate_transformation_mode"] = std::string("asymmetric");
    c.attrs["nearest_mode"] = std::string("floor");
  }
  if (getInt(c.attrs, "antialias", 0) != 0)
    return c.err("antialias is not supported");
  if (c.attrs.count("axes"))
    return c.err("the axes attribute (opset 18) is not supported");
  if (getStr(c.attrs, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return c.err("keep_aspect_ratio_policy other than 'stretch' is not supported");
  for (const char *k : {"antialias", "keep_aspect_ratio_policy"})
    c.attrs.erase(k);
  for (size_t i = 1; i < 4; ++i)
    if (c.in(i) && c.in(i)->isConstant() && c.in(i)->numElements() == 0)
      c.ins[i] = nullptr;
  fill(c.attrs, "coordinate_transformation_mode", std::string("half_pixel"));
  fill(c.attrs, "cubic_coeff_a", -0.75f);
  fill(c.attrs, "exclude_outside", int64_t(0));
  fill(c.attrs, "extrapolation_value", 0.0f);
  fill(c.attrs, "mode", std::string("nearest"));
  fill(c.attrs, "nearest_mode", std::string("round_prefer_floor"));
  return c.emit(OpKind::Resize);
}

Status split(NodeCtx &c) {
  fill(c.attrs, "axis", int64_t(0));
  if (c.ver < 13)
    attrToInput(c, "split", 1);
  int64_t numOut = getInt(c.attrs, "num_outputs", 0);
  c.attrs.erase("num_outputs");
  Value *x = c.in(0);
  if (!c.in(1) && numOut > 0) { // opset 18: last chunk may be smaller
    int64_t axis = getInt(c.attrs, "axis", 0), r = static_cast<int64_t>(x->shape.size());
    if (axis < -r || axis >= r)
      return c.err("axis out of range");
    int64_t dim = x->shape[axis < 0 ? axis + r : axis], each = (dim + numOut - 1) / numOut;
    std::vector<int64_t> parts;
    for (int64_t i = 0; i < numOut; ++i)
      parts.push_back(std::max<int64_t>(0, std::min(each, dim - each * i)));
    c.setIn(1, c.ints("split", parts));
  }
  return c.emit(OpKind::Split);
}

int castTarget(const Attribute &a) {
  if (auto *i = std::get_if<int64_t>(&a))
    return static_cast<int>(*i);
  if (auto *s = std::get_if<std::string>(&a)) { // Cast-1 used type names
    static const std::map<std::string, int> names = {
        {"FLOAT", 1},   {"UINT8", 2},   {"INT8", 3},    {"UINT16", 4},   {"INT16", 5},
        {"INT32", 6},   {"INT64", 7},   {"STRING", 8},  {"BOOL", 9},     {"FLOAT16", 10},
        {"DOUBLE", 11}, {"UINT32", 12}, {"UINT64", 13}, {"BFLOAT16", 16}};
    auto it = names.find(*s);
    return it == names.end() ? 0 : it->second;
  }
  return 0;
}

} // namespace

Status translateNode(Builder &b, const NodeProto &np, OpKind k, const std::string &name) {
  NodeCtx c{b, np, name, np.op_type(), {}, {}, {}, b.opset};
  for (const std::string &in : np.input()) {
    auto v = b.lookup(in);
    if (!v)
      return std::move(v.error().atNode(name, c.op));
    c.ins.push_back(*v);
  }
  for (const auto &a : np.attribute()) {
    auto r = convertAttr(a, b.baseDir);
    if (!r)
      return c.err(r.error().message);
    c.attrs[a.name()] = r.take();
  }
  c.outs.assign(np.output().begin(), np.output().end());
  while (!c.outs.empty() && c.outs.back().empty())
    c.outs.pop_back();
  if (c.ins.empty() || !c.ins[0])
    return c.err("missing first input");
  c.attrs.erase("consumed_inputs"); // opset < 6 legacy memory hint

  switch (k) {
  case OpKind::QLinearConv:
  case OpKind::QLinearMatMul:
  case OpKind::ConvInteger:
  case OpKind::MatMulInteger:
  case OpKind::QLinearAdd:
  case OpKind::QLinearMul:
  case OpKind::QLinearAveragePool:
  case OpKind::QLinearGlobalAveragePool:
  case OpKind::QLinearConcat: {
    QuantRewrite q;
    NPUCC_TRY(prepareQuantNode(b, name, c.op, k, c.ins, c.attrs, q));
    c.ins = q.ins;
    Status s = q.kind == OpKind::Conv          ? convLike(c, false)
               : q.kind == OpKind::AveragePool ? pool(c, q.kind)
                                               : c.emit(q.kind);
    NPUCC_TRY(s);
    return finishQuantNode(b, name, c.op, q, c.outs);
  }
  case OpKind::QuantizeLinear:
  case OpKind::DequantizeLinear:
    if (Status s = checkScales(c.in(1), k == OpKind::QuantizeLinear ? "y_scale" : "x_scale"); !s)
      return c.err(s.error().message);
    return c.emit(k);
  case OpKind::Conv:
    return convLike(c, false);
  case OpKind::ConvTranspose:
    return convLike(c, true);
  case OpKind::Gemm:
    c.attrs.erase("broadcast");
    fill(c.attrs, "alpha", 1.0f);
    fill(c.attrs, "beta", 1.0f);
    fill(c.attrs, "transA", int64_t(0));
    fill(c.attrs, "transB", int64_t(0));
    for (const char *t : {"transA", "transB"})
      if (int64_t v = getInt(c.attrs, t, 0); v != 0 && v != 1)
        return c.err(std::string(t) + "=" + std::to_string(v) + ": expected 0 or 1");
    for (const char *a : {"alpha", "beta"})
      if (!std::isfinite(getFloat(c.attrs, a, 1.0f)))
        return c.err(std::string(a) + " is not a finite number");
    return c.emit(k);
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div: {
    if (c.ver < 7 && getInt(c.attrs, "broadcast", 0) != 0 && c.in(1)) {
      // Legacy broadcasting: B's dims align with A's starting at `axis`.
      Value *a = c.in(0), *bv = c.in(1);
      int64_t ra = static_cast<int64_t>(a->shape.size()),
              rb = static_cast<int64_t>(bv->shape.size());
      int64_t axis = getInt(c.attrs, "axis", ra - rb);
      if (axis < 0)
        axis += ra;
      if (axis < 0 || axis + rb > ra)
        return c.err("legacy broadcast axis out of range");
      Shape s = bv->shape;
      s.resize(static_cast<size_t>(ra - axis), 1);
      auto r = b.emit(OpKind::Reshape, name + "_bcast", {bv, c.ints("bcast_shape", s)},
                      {"\x01" + bv->name + "_bcast"}, {{"allowzero", int64_t(0)}});
      if (!r)
        return r.error();
      c.ins[1] = (*r)[0];
    }
    c.attrs.erase("broadcast");
    c.attrs.erase("axis");
    return c.emit(k);
  }
  case OpKind::LeakyRelu:
    fill(c.attrs, "alpha", 0.01f);
    return c.emit(k);
  case OpKind::HardSigmoid:
    fill(c.attrs, "alpha", 0.2f);
    fill(c.attrs, "beta", 0.5f);
    return c.emit(k);
  case OpKind::Clip:
    if (c.ver < 11) {
      Value *x = c.in(0);
      for (const char *m : {"min", "max"}) {
        if (!c.attrs.count(m))
          continue;
        Tensor t(x->dtype, {});
        t.setDouble(0, getFloat(c.attrs, m, 0.0f));
        c.setIn(m[1] == 'i' ? 1 : 2, b.constTensor(name + "_" + m, t));
        c.attrs.erase(m);
      }
    }
    return c.emit(k);
  case OpKind::Softmax:
    return softmax(c);
  case OpKind::MaxPool:
  case OpKind::AveragePool:
    return pool(c, k);
  case OpKind::ReduceMean: {
    if (c.ins.size() > 1) { // opset 18: axes input
      if (c.in(1)) {
        auto axes = c.constIn(1, "axes");
        if (!axes)
          return axes.error();
        if (!axes->empty())
          c.attrs["axes"] = *axes;
      }
      c.ins.resize(1);
      if (!c.attrs.count("axes") && getInt(c.attrs, "noop_with_empty_axes", 0) != 0) {
        c.attrs.clear();
        return c.emit(OpKind::Identity);
      }
    }
    c.attrs.erase("noop_with_empty_axes");
    fill(c.attrs, "keepdims", int64_t(1));
    return c.emit(k);
  }
  case OpKind::BatchNormalization:
    if (getInt(c.attrs, "training_mode", 0) != 0 || c.used(1) || c.used(2) || c.used(3) ||
        c.used(4))
      return c.err("training-mode BatchNormalization (running statistics outputs) is not "
                   "supported; npucc compiles inference only");
    if (getInt(c.attrs, "spatial", 1) == 0)
      return c.err("BatchNormalization with spatial=0 is not supported");
    if (c.ins.size() != 5)
      return c.err("BatchNormalization needs 5 inputs");
    fill(c.attrs, "epsilon", 1e-5f);
    for (const char *a : {"momentum", "spatial", "is_test", "training_mode"})
      c.attrs.erase(a);
    c.outs.resize(1);
    return c.emit(k);
  case OpKind::Flatten:
    fill(c.attrs, "axis", int64_t(1));
    return c.emit(k);
  case OpKind::Reshape:
    if (c.ver < 5)
      attrToInput(c, "shape", 1);
    fill(c.attrs, "allowzero", int64_t(0));
    return c.emit(k);
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
    if (c.ver < 13)
      attrToInput(c, "axes", 1);
    return c.emit(k);
  case OpKind::Dropout: {
    if (c.in(2)) {
      auto tm = c.constIn(2, "training_mode");
      if (!tm)
        return tm.error();
      if (!tm->empty() && (*tm)[0] != 0)
        return c.err("training_mode is true; npucc compiles inference only");
    }
    // Inference: the output is the input and the mask (if used) all true.
    std::string mask = c.used(1) ? c.outs[1] : "";
    c.ins.resize(1);
    c.outs.resize(1);
    c.attrs.clear();
    NPUCC_TRY(c.emit(k));
    if (!mask.empty()) {
      Value *y = b.values[c.outs[0]];
      Tensor ones(DType::Bool, y->shape);
      std::fill(ones.bytes().begin(), ones.bytes().end(), uint8_t(1));
      b.values[mask] = b.g.addConstant(mask, std::move(ones));
    }
    return success();
  }
  case OpKind::Transpose: {
    std::vector<int64_t> perm;
    for (size_t i = c.in(0)->shape.size(); i-- > 0;)
      perm.push_back(static_cast<int64_t>(i));
    fill(c.attrs, "perm", perm);
    return c.emit(k);
  }
  case OpKind::Concat:
    fill(c.attrs, "axis", int64_t(c.ver < 4 ? 1 : 0));
    return c.emit(k);
  case OpKind::Slice:
    if (c.ver < 10) {
      attrToInput(c, "starts", 1);
      attrToInput(c, "ends", 2);
      attrToInput(c, "axes", 3);
    }
    return c.emit(k);
  case OpKind::Split:
    return split(c);
  case OpKind::Pad:
    return pad(c);
  case OpKind::Resize:
    return resize(c);
  case OpKind::Gather:
    fill(c.attrs, "axis", int64_t(0));
    return c.emit(k);
  case OpKind::ConstantOfShape:
    fill(c.attrs, "value", Tensor(DType::F32, {1}));
    return c.emit(k);
  case OpKind::Cast: {
    if (!c.attrs.count("to"))
      return c.err("missing attribute 'to'");
    int to = castTarget(c.attrs["to"]);
    auto t = mapElemType(to, "Cast target of output '" + (c.outs.empty() ? "" : c.outs[0]) + "'");
    if (!t)
      return c.err(t.error().message);
    c.attrs["to"] = int64_t(to);
    c.attrs.erase("saturate");
    return c.emit(k);
  }
  default:
    return c.emit(k);
  }
}

} // namespace npucc::onnx::detail
