//===- Misc.cpp - Reference Constant, ConstantOfShape, Shape and Cast -----===//
//
// Shape sources and type conversion. Cast converts between every DType with
// C conversion semantics (float -> integer truncates toward zero; no
// saturation), except that any non-zero value becomes true for Bool.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <algorithm>
#include <type_traits>

namespace npucc::interp::detail {

EvalResult evalConstant(const ir::Node &n, const Inputs &) {
  Outputs out;
  if (const Tensor *t = n.attrTensor("value")) {
    out.push_back(*t);
  } else if (n.hasAttr("value_float")) {
    out.push_back(Tensor::scalar(DType::F32, n.attrFloat("value_float", 0.0f)));
  } else if (n.hasAttr("value_int")) {
    out.push_back(Tensor::fromInts(DType::I64, {}, {n.attrInt("value_int", 0)}));
  } else if (n.hasAttr("value_floats")) {
    std::vector<float> v = n.attrFloats("value_floats");
    out.push_back(Tensor::fromFloats({static_cast<int64_t>(v.size())}, v));
  } else if (n.hasAttr("value_ints")) {
    std::vector<int64_t> v = n.attrInts("value_ints");
    out.push_back(Tensor::fromInts(DType::I64, {static_cast<int64_t>(v.size())}, v));
  } else {
    return nodeErr(n, "no supported value attribute (value, value_float(s), value_int(s))");
  }
  return out;
}

EvalResult evalConstantOfShape(const ir::Node &n, const Inputs &in) {
  std::vector<int64_t> dims = in[0]->toInts();
  for (int64_t d : dims)
    if (d < 0)
      return nodeErr(n, "negative dim in the shape input");
  const Tensor *v = n.attrTensor("value");
  if (v && v->numElements() != 1)
    return nodeErr(n, "value must have exactly one element");
  DType t = v ? v->dtype() : DType::F32;
  NPUCC_TRY(checkShape(n, 0, Shape(dims.begin(), dims.end())));
  Tensor y(t, Shape(dims.begin(), dims.end()));
  if (v)
    for (int64_t i = 0; i < y.numElements(); ++i)
      std::memcpy(y.raw() + i * ir::dtypeSize(t), v->raw(), ir::dtypeSize(t));
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

EvalResult evalShape(const ir::Node &n, const Inputs &in) {
  const Shape &xs = in[0]->shape();
  int64_t rank = static_cast<int64_t>(xs.size());
  int64_t start = n.attrInt("start", 0), end = n.attrInt("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d)
    dims.push_back(xs[static_cast<size_t>(d)]);
  NPUCC_TRY(checkShape(n, 0, {static_cast<int64_t>(dims.size())}));
  Outputs out;
  out.push_back(Tensor::fromInts(DType::I64, {static_cast<int64_t>(dims.size())}, dims));
  return out;
}

EvalResult evalCast(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  int64_t to = n.attrInt("to", 0);
  auto dt = ir::dtypeFromOnnx(static_cast<int>(to));
  if (!dt)
    return nodeErr(n, "unsupported target type " + std::to_string(to));
  NPUCC_TRY(checkShape(n, 0, x.shape()));
  Tensor y(*dt, x.shape());
  dispatchType(x.dtype(), [&](auto srcTag) {
    using S = decltype(srcTag);
    dispatchType(*dt, [&](auto dstTag) {
      using D = decltype(dstTag);
      const S *sp = x.data<S>();
      D *dp = y.data<D>();
      bool toBool = *dt == DType::Bool;
      for (int64_t i = 0; i < x.numElements(); ++i)
        dp[i] = toBool ? static_cast<D>(sp[i] != S(0)) : static_cast<D>(sp[i]);
    });
  });
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

} // namespace npucc::interp::detail
