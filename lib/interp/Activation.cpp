//===- Activation.cpp - Reference unary activations, Clip and Softmax -----===//
//
// Relu, LeakyRelu (alpha 0.01), Sigmoid, HardSigmoid (alpha 0.2, beta 0.5),
// HardSwish, Tanh; Clip with optional min/max inputs; Softmax over one axis
// (opset-13 semantics, default -1). Transcendentals are evaluated in double
// and rounded to the element type.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace npucc::interp::detail {

using ir::OpKind;

EvalResult evalUnary(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  auto yr = allocOutput(n, 0, x.dtype(), x.shape());
  if (!yr)
    return yr.error();
  Tensor y = yr.take();
  bool intOk = n.kind == OpKind::Relu || n.kind == OpKind::LeakyRelu;
  if (!ir::isFloat(x.dtype()) && (!intOk || x.dtype() == DType::Bool))
    return nodeErr(n, std::string("unsupported dtype ") + ir::dtypeName(x.dtype()));
  double alpha = n.attrFloat("alpha", n.kind == OpKind::LeakyRelu ? 0.01f : 0.2f);
  double beta = n.attrFloat("beta", 0.5f);
  int64_t count = x.numElements();
  dispatchType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *xp = x.data<T>();
    T *yp = y.data<T>();
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (!std::is_floating_point_v<T>) {
        // Integer Relu/LeakyRelu.
        bool neg = false;
        if constexpr (std::is_signed_v<T>)
          neg = xp[i] < 0;
        if (!neg)
          yp[i] = xp[i];
        else
          yp[i] = n.kind == OpKind::Relu ? T(0) : static_cast<T>(alpha * xp[i]);
        continue;
      } else {
        double v = xp[i], r = 0.0;
        switch (n.kind) {
        case OpKind::Relu:
          r = v > 0 ? v : 0.0;
          break;
        case OpKind::LeakyRelu:
          r = v >= 0 ? v : alpha * v;
          break;
        case OpKind::Sigmoid:
          r = 1.0 / (1.0 + std::exp(-v));
          break;
        case OpKind::HardSigmoid:
          r = std::max(0.0, std::min(1.0, alpha * v + beta));
          break;
        case OpKind::HardSwish: // x * max(0, min(1, x/6 + 1/2))
          r = v * std::max(0.0, std::min(1.0, v / 6.0 + 0.5));
          break;
        case OpKind::Tanh:
          r = std::tanh(v);
          break;
        default:
          break;
        }
        // Keep NaN inputs NaN (the comparisons above would drop them).
        yp[i] = std::isnan(v) ? xp[i] : static_cast<T>(r);
      }
    }
  });
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

EvalResult evalClip(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  const Tensor *mn = in.size() > 1 ? in[1] : nullptr;
  const Tensor *mx = in.size() > 2 ? in[2] : nullptr;
  auto yr = allocOutput(n, 0, x.dtype(), x.shape());
  if (!yr)
    return yr.error();
  Tensor y = yr.take();
  if ((mn && mn->numElements() != 1) || (mx && mx->numElements() != 1))
    return nodeErr(n, "min and max must be scalars");
  dispatchType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    // Opset < 11 carries min/max as attributes.
    if (mn)
      lo = static_cast<T>(mn->getDouble(0));
    else if (n.hasAttr("min"))
      lo = static_cast<T>(n.attrFloat("min", 0.0f));
    if (mx)
      hi = static_cast<T>(mx->getDouble(0));
    else if (n.hasAttr("max"))
      hi = static_cast<T>(n.attrFloat("max", 0.0f));
    const T *xp = x.data<T>();
    T *yp = y.data<T>();
    for (int64_t i = 0; i < x.numElements(); ++i) {
      T v = xp[i];
      if (v < lo)
        v = lo;
      if (v > hi)
        v = hi;
      yp[i] = v;
    }
  });
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

EvalResult evalSoftmax(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  if (!ir::isFloat(x.dtype()))
    return nodeErr(n, std::string("unsupported dtype ") + ir::dtypeName(x.dtype()));
  auto yr = allocOutput(n, 0, x.dtype(), x.shape());
  if (!yr)
    return yr.error();
  Tensor y = yr.take();
  const Shape &s = x.shape();
  int64_t axis = n.attrInt("axis", -1);
  if (!normalizeAxis(axis, static_cast<int64_t>(s.size())))
    return nodeErr(n, "axis " + std::to_string(n.attrInt("axis", -1)) + " out of range for " +
                          ir::shapeStr(s));
  int64_t outer = 1, inner = 1, len = s[static_cast<size_t>(axis)];
  for (int64_t i = 0; i < axis; ++i)
    outer *= s[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < s.size(); ++i)
    inner *= s[i];
  dispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *xp = x.data<T>();
    T *yp = y.data<T>();
    std::vector<double> e(static_cast<size_t>(len));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T *xs = xp + o * len * inner + i;
        T *ys = yp + o * len * inner + i;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < len; ++k)
          mx = std::max(mx, static_cast<double>(xs[k * inner]));
        double sum = 0.0;
        for (int64_t k = 0; k < len; ++k) {
          e[static_cast<size_t>(k)] = std::exp(static_cast<double>(xs[k * inner]) - mx);
          sum += e[static_cast<size_t>(k)];
        }
        for (int64_t k = 0; k < len; ++k)
          ys[k * inner] = static_cast<T>(e[static_cast<size_t>(k)] / sum);
      }
  });
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

} // namespace npucc::interp::detail
