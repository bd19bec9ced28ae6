//===- Quant.cpp - Reference QuantizeLinear and DequantizeLinear ----------===//
//
// The float/integer boundaries of quantized graphs (docs/quantization.md):
//   QuantizeLinear:   y = saturate(rint(x / scale) + zero_point)
//                     (float32 division, rint = round half to even)
//   DequantizeLinear: y = (float)(x - zero_point) * scale   (float32)
// Per-tensor (scalar or 1-element scale) or per-axis (1-D scale along `axis`,
// default 1). A missing zero point is 0 and QuantizeLinear then yields uint8
// unless the output Value says otherwise.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace npucc::interp::detail {

namespace {

/// Index into scale/zero-point for element i: 0 per-tensor, else its coordinate along axis.
struct QuantAxis {
  bool perAxis = false;
  int64_t inner = 1, dim = 1;
  int64_t at(int64_t i) const { return perAxis ? (i / inner) % dim : 0; }
};

Result<QuantAxis> quantAxis(const ir::Node &n, const Tensor &x, const Tensor &scale,
                            const Tensor *zp) {
  QuantAxis q;
  if (zp && zp->numElements() != scale.numElements())
    return nodeErr(n, "scale and zero point differ in size");
  if (scale.numElements() == 1 && scale.shape().size() <= 1)
    return q;
  if (scale.shape().size() != 1)
    return nodeErr(n, "scale must be a scalar or 1-D, got " + ir::shapeStr(scale.shape()));
  int64_t axis = n.attrInt("axis", 1);
  if (!normalizeAxis(axis, static_cast<int64_t>(x.shape().size())))
    return nodeErr(n, "axis out of range");
  q.perAxis = true;
  q.dim = x.shape()[static_cast<size_t>(axis)];
  if (scale.numElements() != q.dim)
    return nodeErr(n, "per-axis scale has " + std::to_string(scale.numElements()) +
                          " entries for a dim of " + std::to_string(q.dim));
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.shape().size(); ++d)
    q.inner *= x.shape()[d];
  return q;
}

} // namespace

EvalResult evalQuantizeLinear(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0], &scale = *in[1];
  const Tensor *zp = in.size() > 2 ? in[2] : nullptr;
  if (x.dtype() != DType::F32 && x.dtype() != DType::I32)
    return nodeErr(n, std::string("unsupported input dtype ") + ir::dtypeName(x.dtype()));
  if (scale.dtype() != DType::F32)
    return nodeErr(n, "scale must be f32");
  DType outT = zp ? zp->dtype() : (n.output(0) ? n.output(0)->dtype : DType::U8);
  if (outT != DType::I8 && outT != DType::U8 && outT != DType::I16 && outT != DType::U16)
    return nodeErr(n, std::string("unsupported output dtype ") + ir::dtypeName(outT));
  auto qa = quantAxis(n, x, scale, zp);
  if (!qa)
    return qa.error();
  auto yr = allocOutput(n, 0, outT, x.shape());
  if (!yr)
    return yr.error();
  Tensor y = yr.take();
  dispatchType(outT, [&](auto tag) {
    using T = decltype(tag);
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest()),
                 hi = static_cast<double>(std::numeric_limits<T>::max());
    for (int64_t i = 0; i < x.numElements(); ++i) {
      int64_t c = qa->at(i);
      float xv = static_cast<float>(x.getDouble(i));
      float s = scale.data<float>()[c];
      double q = std::rint(xv / s) + (zp ? static_cast<double>(zp->getInt(c)) : 0.0);
      y.data<T>()[i] = static_cast<T>(std::clamp(q, lo, hi));
    }
  });
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

EvalResult evalDequantizeLinear(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0], &scale = *in[1];
  const Tensor *zp = in.size() > 2 ? in[2] : nullptr;
  if (!ir::isInteger(x.dtype()) || x.dtype() == DType::Bool)
    return nodeErr(n, std::string("unsupported input dtype ") + ir::dtypeName(x.dtype()));
  if (scale.dtype() != DType::F32)
    return nodeErr(n, "scale must be f32");
  auto qa = quantAxis(n, x, scale, zp);
  if (!qa)
    return qa.error();
  auto yr = allocOutput(n, 0, DType::F32, x.shape());
  if (!yr)
    return yr.error();
  Tensor y = yr.take();
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t c = qa->at(i);
    int64_t q = x.getInt(i) - (zp ? zp->getInt(c) : 0);
    y.data<float>()[i] = static_cast<float>(q) * scale.data<float>()[c];
  }
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

} // namespace npucc::interp::detail
