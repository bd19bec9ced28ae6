//===- ShapeHelper.cpp - Output shapes of canonical IR nodes --------------===//
//
// A compact shape inference over the canonical forms (opset-13 semantics)
// for every op in Ops.def. The importer uses it where onnx's own shape
// inference leaves a shape unknown (value-dependent shapes such as Reshape
// fed by Shape/Gather/Concat, or opsets newer than libonnx knows). Shape
// operands (Reshape shape, Slice starts, ...) must be constants.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <algorithm>
#include <cmath>

using namespace npucc::ir;

namespace npucc::onnx::detail {

namespace {

using Outs = Result<std::vector<OutType>>;

std::string dimsStr(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

Result<Shape> broadcast(const Shape &a, const Shape &b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      return error("incompatible shapes " + dimsStr(a) + " and " + dimsStr(b) +
                   " for broadcasting");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Result<int64_t> normAxis(int64_t axis, size_t rank, const char *what = "axis") {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    return error(std::string(what) + " " + std::to_string(axis) + " out of range for rank " +
                 std::to_string(r));
  return axis < 0 ? axis + r : axis;
}

/// Constant integer operand i, or an error when it is not constant.
Result<std::vector<int64_t>> constInts(const Node &n, size_t i, const char *what) {
  Value *v = n.input(i);
  if (!v || !v->isConstant())
    return error(std::string(what) + " operand " + (v ? "'" + v->name + "' " : "") +
                 "must be a constant for a static shape");
  return v->constant->toInts();
}

OutType same(const Value *v) { return OutType{v->dtype, v->shape}; }

Outs one(DType t, Shape s) { return std::vector<OutType>{OutType{t, std::move(s)}}; }

Outs convLike(const Node &n, bool transpose) {
  const Shape &x = n.input(0)->shape, &w = n.input(1)->shape;
  if (x.size() < 3 || w.size() != x.size())
    return error("input rank " + std::to_string(x.size()) + " and weight rank " +
                 std::to_string(w.size()) + " do not fit");
  size_t sp = x.size() - 2;
  auto k = n.attrInts("kernel_shape", Shape(w.begin() + 2, w.end()));
  auto s = n.attrInts("strides", std::vector<int64_t>(sp, 1));
  auto d = n.attrInts("dilations", std::vector<int64_t>(sp, 1));
  auto p = n.attrInts("pads", std::vector<int64_t>(2 * sp, 0));
  auto op = n.attrInts("output_padding", std::vector<int64_t>(sp, 0));
  int64_t group = n.attrInt("group", 1);
  if (k.size() != sp || s.size() != sp || d.size() != sp || p.size() != 2 * sp || op.size() != sp)
    return error("kernel_shape/strides/dilations/pads do not match " + std::to_string(sp) +
                 " spatial dims");
  Shape out{x[0], transpose ? w[1] * group : w[0]};
  for (size_t i = 0; i < sp; ++i) {
    int64_t ek = (k[i] - 1) * d[i] + 1, o;
    if (s[i] <= 0)
      return error("strides must be positive");
    if (transpose)
      o = s[i] * (x[i + 2] - 1) + op[i] + ek - p[i] - p[i + sp];
    else
      o = (x[i + 2] + p[i] + p[i + sp] - ek) / s[i] + 1;
    if (o <= 0 || (!transpose && x[i + 2] + p[i] + p[i + sp] < ek))
      return error("kernel larger than the padded input in spatial dim " + std::to_string(i));
    out.push_back(o);
  }
  return one(n.input(0)->dtype, out);
}

Outs pool(const Node &n) {
  const Shape &x = n.input(0)->shape;
  if (x.size() < 3)
    return error("input must have rank >= 3");
  size_t sp = x.size() - 2;
  auto k = n.attrInts("kernel_shape");
  auto s = n.attrInts("strides", std::vector<int64_t>(sp, 1));
  auto d = n.attrInts("dilations", std::vector<int64_t>(sp, 1));
  auto p = n.attrInts("pads", std::vector<int64_t>(2 * sp, 0));
  bool ceil = n.attrInt("ceil_mode", 0) != 0;
  if (k.size() != sp || s.size() != sp || d.size() != sp || p.size() != 2 * sp)
    return error("kernel_shape/strides/dilations/pads do not match " + std::to_string(sp) +
                 " spatial dims");
  Shape out{x[0], x[1]};
  for (size_t i = 0; i < sp; ++i) {
    int64_t ek = (k[i] - 1) * d[i] + 1, span = x[i + 2] + p[i] + p[i + sp] - ek;
    if (span < 0 || s[i] <= 0)
      return error("kernel larger than the padded input in spatial dim " + std::to_string(i));
    int64_t o = (ceil ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
    if (ceil && (o - 1) * s[i] >= x[i + 2] + p[i])
      --o; // the last window must start inside the input or left padding
    out.push_back(o);
  }
  std::vector<OutType> r{OutType{n.input(0)->dtype, out}};
  if (n.outputs.size() > 1)
    r.push_back(OutType{DType::I64, out});
  return r;
}

Outs reshape(const Node &n) {
  auto sh = constInts(n, 1, "shape");
  if (!sh)
    return sh.error();
  const Shape &x = n.input(0)->shape;
  bool allowZero = n.attrInt("allowzero", 0) != 0;
  Shape out = *sh;
  int64_t known = 1, neg = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowZero) {
      if (i >= x.size())
        return error("shape has 0 at position " + std::to_string(i) + " beyond the input rank");
      out[i] = x[i];
    }
    if (out[i] == -1) {
      if (neg >= 0)
        return error("shape has more than one -1");
      neg = static_cast<int64_t>(i);
    } else if (out[i] < 0) {
      return error("shape has a negative dimension");
    } else {
      // Bounded first: hostile dims overflowed the product (found by fuzz_onnx_import).
      if (out[i] > 0 && known > kMaxTensorBytes / out[i])
        return error("cannot reshape " + dimsStr(x) + " to " + dimsStr(*sh) +
                     ": too many elements");
      known *= out[i];
    }
  }
  int64_t total = numElements(x);
  if (neg >= 0) {
    if (known == 0 || total % known)
      return error("cannot reshape " + dimsStr(x) + " to " + dimsStr(*sh));
    out[neg] = total / known;
  }
  if (numElements(out) != total)
    return error("cannot reshape " + dimsStr(x) + " to " + dimsStr(*sh));
  return one(n.input(0)->dtype, out);
}

Outs squeezeLike(const Node &n, bool unsqueeze) {
  const Shape &x = n.input(0)->shape;
  std::vector<int64_t> axes;
  if (n.input(1)) {
    auto a = constInts(n, 1, "axes");
    if (!a)
      return a.error();
    axes = *a;
  } else if (unsqueeze) {
    return error("Unsqueeze needs axes");
  } else {
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i] == 1)
        axes.push_back(static_cast<int64_t>(i));
  }
  size_t outRank = unsqueeze ? x.size() + axes.size() : x.size();
  std::vector<bool> mark(unsqueeze ? outRank : x.size(), false);
  for (int64_t a : axes) {
    auto ax = normAxis(a, mark.size());
    if (!ax)
      return ax.error();
    if (mark[*ax])
      return error("repeated axis " + std::to_string(a));
    if (!unsqueeze && x[*ax] != 1)
      return error("cannot squeeze axis " + std::to_string(a) + " of size " +
                   std::to_string(x[*ax]));
    mark[*ax] = true;
  }
  Shape out;
  size_t j = 0;
  for (size_t i = 0; i < mark.size(); ++i) {
    if (unsqueeze)
      out.push_back(mark[i] ? 1 : x[j++]);
    else if (!mark[i])
      out.push_back(x[i]);
  }
  return one(n.input(0)->dtype, out);
}

Outs slice(const Node &n) {
  const Shape &x = n.input(0)->shape;
  auto st = constInts(n, 1, "starts"), en = constInts(n, 2, "ends");
  if (!st)
    return st.error();
  if (!en)
    return en.error();
  std::vector<int64_t> axes, steps(st->size(), 1);
  if (n.input(3)) {
    auto a = constInts(n, 3, "axes");
    if (!a)
      return a.error();
    axes = *a;
  } else {
    for (size_t i = 0; i < st->size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  }
  if (n.input(4)) {
    auto s = constInts(n, 4, "steps");
    if (!s)
      return s.error();
    steps = *s;
  }
  if (en->size() != st->size() || axes.size() != st->size() || steps.size() != st->size())
    return error("starts/ends/axes/steps lengths differ");
  Shape out = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = normAxis(axes[i], x.size());
    if (!ax)
      return ax.error();
    int64_t dim = x[*ax], step = steps[i], b = (*st)[i], e = (*en)[i];
    if (step == 0)
      return error("slice step 0");
    step = ir::boundedSliceStep(step, dim);
    if (b < 0)
      b += dim;
    if (e < 0)
      e += dim;
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      out[*ax] = e > b ? (e - b + step - 1) / step : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      out[*ax] = b > e ? (b - e - step - 1) / -step : 0;
    }
  }
  return one(n.input(0)->dtype, out);
}

Outs split(const Node &n) {
  const Shape &x = n.input(0)->shape;
  auto ax = normAxis(n.attrInt("axis", 0), x.size());
  if (!ax)
    return ax.error();
  std::vector<int64_t> parts;
  size_t k = n.outputs.size();
  if (n.input(1)) {
    auto s = constInts(n, 1, "split");
    if (!s)
      return s.error();
    parts = *s;
  } else {
    int64_t each = (x[*ax] + static_cast<int64_t>(k) - 1) / static_cast<int64_t>(k);
    for (size_t i = 0; i < k; ++i)
      parts.push_back(std::min(each, x[*ax] - each * static_cast<int64_t>(i)));
  }
  int64_t sum = 0;
  for (int64_t p : parts)
    sum += p;
  if (parts.size() != k || sum != x[*ax])
    return error("split sizes do not add up to dimension " + std::to_string(x[*ax]));
  std::vector<OutType> r;
  for (int64_t p : parts) {
    Shape s = x;
    s[*ax] = p;
    r.push_back(OutType{n.input(0)->dtype, s});
  }
  return r;
}

Outs resize(const Node &n) {
  const Shape &x = n.input(0)->shape;
  Shape out = x;
  if (n.input(3)) {
    auto s = constInts(n, 3, "sizes");
    if (!s)
      return s.error();
    if (s->size() != x.size())
      return error("sizes length differs from the input rank");
    out = *s;
  } else if (n.input(2)) {
    Value *sc = n.input(2);
    if (!sc->isConstant())
      return error("scales operand '" + sc->name + "' must be a constant for a static shape");
    if (static_cast<size_t>(sc->constant->numElements()) != x.size())
      return error("scales length differs from the input rank");
    for (size_t i = 0; i < x.size(); ++i)
      out[i] = static_cast<int64_t>(
          std::floor(static_cast<double>(x[i]) * sc->constant->getDouble(static_cast<int64_t>(i))));
  } else {
    return error("Resize needs scales or sizes");
  }
  return one(n.input(0)->dtype, out);
}

Outs reduce(const Node &n) {
  const Shape &x = n.input(0)->shape;
  bool keep = n.attrInt("keepdims", 1) != 0;
  std::vector<bool> mark(x.size(), !n.hasAttr("axes"));
  for (int64_t a : n.attrInts("axes")) {
    auto ax = normAxis(a, x.size());
    if (!ax)
      return ax.error();
    mark[*ax] = true;
  }
  Shape out;
  for (size_t i = 0; i < x.size(); ++i)
    if (!mark[i])
      out.push_back(x[i]);
    else if (keep)
      out.push_back(1);
  return one(n.input(0)->dtype, out);
}

Outs matmul(const Node &n) {
  Shape a = n.input(0)->shape, b = n.input(1)->shape;
  if (a.empty() || b.empty())
    return error("MatMul operands must not be scalars");
  bool va = a.size() == 1, vb = b.size() == 1;
  if (va)
    a.insert(a.begin(), 1);
  if (vb)
    b.push_back(1);
  if (a.back() != b[b.size() - 2])
    return error("inner dimensions differ: " + dimsStr(n.input(0)->shape) + " x " +
                 dimsStr(n.input(1)->shape));
  auto batch = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!batch)
    return batch.error();
  Shape out = *batch;
  if (!va)
    out.push_back(a[a.size() - 2]);
  if (!vb)
    out.push_back(b.back());
  return one(n.input(0)->dtype, out);
}

} // namespace

std::vector<int64_t> autoPads(const std::string &autoPad, const Shape &in,
                              const std::vector<int64_t> &kernel,
                              const std::vector<int64_t> &strides,
                              const std::vector<int64_t> &dilations) {
  size_t sp = in.size();
  std::vector<int64_t> pads(2 * sp, 0);
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return pads; // VALID / NOTSET
  for (size_t i = 0; i < sp; ++i) {
    int64_t out = (in[i] + strides[i] - 1) / strides[i];
    int64_t ek = (kernel[i] - 1) * dilations[i] + 1;
    int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + ek - in[i]);
    int64_t small = total / 2, big = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : big;
    pads[i + sp] = autoPad == "SAME_UPPER" ? big : small;
  }
  return pads;
}

Result<std::vector<OutType>> inferOutputs(const Node &n) {
  for (Value *v : n.inputs)
    if (v && v->shape.size() > 16)
      return error("input '" + v->name + "' has an unreasonable rank");
  const Value *x = n.input(0);
  switch (n.kind) {
  case OpKind::Conv:
    return convLike(n, false);
  case OpKind::ConvTranspose:
    return convLike(n, true);
  case OpKind::Gemm: {
    const Shape &a = x->shape, &b = n.input(1)->shape;
    if (a.size() != 2 || b.size() != 2)
      return error("Gemm operands must be 2-D, got " + dimsStr(a) + " and " + dimsStr(b));
    bool ta = n.attrInt("transA", 0), tb = n.attrInt("transB", 0);
    if ((ta ? a[0] : a[1]) != (tb ? b[1] : b[0]))
      return error("inner dimensions differ: " + dimsStr(a) + " and " + dimsStr(b));
    return one(x->dtype, {ta ? a[1] : a[0], tb ? b[0] : b[1]});
  }
  case OpKind::MatMul:
    return matmul(n);
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::PRelu: {
    Shape s = x->shape;
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      auto b = broadcast(s, n.inputs[i]->shape);
      if (!b)
        return b.error();
      s = *b;
    }
    return one(x->dtype, s);
  }
  case OpKind::Relu:
  case OpKind::LeakyRelu:
  case OpKind::Clip:
  case OpKind::Sigmoid:
  case OpKind::HardSigmoid:
  case OpKind::HardSwish:
  case OpKind::Tanh:
  case OpKind::Softmax:
  case OpKind::BatchNormalization:
  case OpKind::Identity:
  case OpKind::Dropout:
    return std::vector<OutType>{same(x)};
  case OpKind::MaxPool:
  case OpKind::AveragePool:
    return pool(n);
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool: {
    Shape s = x->shape;
    if (s.size() < 3)
      return error("input must have rank >= 3");
    std::fill(s.begin() + 2, s.end(), 1);
    return one(x->dtype, s);
  }
  case OpKind::ReduceMean:
    return reduce(n);
  case OpKind::Flatten: {
    int64_t axis = n.attrInt("axis", 1), r = static_cast<int64_t>(x->shape.size());
    if (axis < 0)
      axis += r;
    if (axis < 0 || axis > r)
      return error("axis out of range");
    int64_t a = 1, b = 1;
    for (int64_t i = 0; i < r; ++i)
      (i < axis ? a : b) *= x->shape[i];
    return one(x->dtype, {a, b});
  }
  case OpKind::Reshape:
    return reshape(n);
  case OpKind::Squeeze:
    return squeezeLike(n, false);
  case OpKind::Unsqueeze:
    return squeezeLike(n, true);
  case OpKind::Transpose: {
    std::vector<int64_t> perm = n.attrInts("perm");
    if (perm.empty())
      for (size_t i = x->shape.size(); i-- > 0;)
        perm.push_back(static_cast<int64_t>(i));
    if (perm.size() != x->shape.size())
      return error("perm length differs from the input rank");
    Shape s;
    for (int64_t p : perm) {
      auto ax = normAxis(p, x->shape.size(), "perm entry");
      if (!ax)
        return ax.error();
      s.push_back(x->shape[*ax]);
    }
    return one(x->dtype, s);
  }
  case OpKind::Concat: {
    auto ax = normAxis(n.attrInt("axis", 0), x->shape.size());
    if (!ax)
      return ax.error();
    Shape s = x->shape;
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      const Shape &o = n.inputs[i]->shape;
      if (o.size() != s.size())
        return error("inputs have different ranks");
      for (size_t d = 0; d < s.size(); ++d)
        if (static_cast<int64_t>(d) != *ax && o[d] != s[d])
          return error("input shapes " + dimsStr(x->shape) + " and " + dimsStr(o) +
                       " differ outside axis " + std::to_string(*ax));
      s[*ax] += o[*ax];
    }
    return one(x->dtype, s);
  }
  case OpKind::Slice:
    return slice(n);
  case OpKind::Split:
    return split(n);
  case OpKind::Pad: {
    auto p = constInts(n, 1, "pads");
    if (!p)
      return p.error();
    size_t r = x->shape.size();
    if (p->size() != 2 * r)
      return error("pads length " + std::to_string(p->size()) + " is not twice the rank " +
                   std::to_string(r));
    Shape s = x->shape;
    for (size_t i = 0; i < r; ++i) {
      // Bounded first: the sum of hostile pads would overflow (found by fuzz_onnx_import).
      for (int64_t v : {(*p)[i], (*p)[i + r]})
        if (v > ir::kMaxTensorBytes || v < -ir::kMaxTensorBytes)
          return error("pad " + std::to_string(v) + " is out of range");
      s[i] += (*p)[i] + (*p)[i + r];
      if (s[i] < 0)
        return error("pads make dimension " + std::to_string(i) + " negative");
    }
    return one(x->dtype, s);
  }
  case OpKind::Resize:
    return resize(n);
  case OpKind::Gather: {
    auto ax = normAxis(n.attrInt("axis", 0), x->shape.size());
    if (!ax)
      return ax.error();
    Shape s(x->shape.begin(), x->shape.begin() + *ax);
    const Shape &idx = n.input(1)->shape;
    s.insert(s.end(), idx.begin(), idx.end());
    s.insert(s.end(), x->shape.begin() + *ax + 1, x->shape.end());
    return one(x->dtype, s);
  }
  case OpKind::ConstantOfShape: {
    auto s = constInts(n, 0, "shape");
    if (!s)
      return s.error();
    const Tensor *v = n.attrTensor("value");
    return one(v ? v->dtype() : DType::F32, *s);
  }
  case OpKind::Shape: {
    int64_t r = static_cast<int64_t>(x->shape.size());
    int64_t st = n.attrInt("start", 0), en = n.attrInt("end", r);
    st = std::clamp<int64_t>(st < 0 ? st + r : st, 0, r);
    en = std::clamp<int64_t>(en < 0 ? en + r : en, 0, r);
    return one(DType::I64, {std::max<int64_t>(0, en - st)});
  }
  case OpKind::Cast: {
    auto t = dtypeFromOnnx(static_cast<int>(n.attrInt("to", 1)));
    if (!t)
      return error("Cast to an unsupported type");
    return one(*t, x->shape);
  }
  case OpKind::QuantizeLinear: // element type of the zero point (uint8 without one)
    return one(n.input(2) ? n.input(2)->dtype : DType::U8, x->shape);
  case OpKind::DequantizeLinear:
    return one(DType::F32, x->shape);
  case OpKind::Constant:
    return error("Constant nodes are folded by the importer");
  default:
    break;
  }
  return error(kNoShapeRule);
}

} // namespace npucc::onnx::detail
