//===- Elementwise.cpp - Reference broadcasting binary ops ----------------===//
//
// Add, Sub, Mul, Div (multidirectional broadcasting; float and integer types,
// integer arithmetic wraps, integer Div truncates toward zero), variadic
// Max/Min, and PRelu (slope broadcast to X).
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace npucc::interp::detail {

namespace {

using ir::OpKind;

template <typename T> T binaryOp(OpKind k, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (k) {
    case OpKind::Add:
      return a + b;
    case OpKind::Sub:
      return a - b;
    case OpKind::Mul:
      return a * b;
    default:
      return a / b;
    }
  } else {
    // Wrapping arithmetic through uint64_t avoids signed-overflow UB.
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    switch (k) {
    case OpKind::Add:
      return static_cast<T>(ua + ub);
    case OpKind::Sub:
      return static_cast<T>(ua - ub);
    case OpKind::Mul:
      return static_cast<T>(ua * ub);
    default:
      if (b == 0)
        return 0; // undefined in ONNX; a defined value instead of a trap
      if constexpr (std::is_signed_v<T>)
        if (a == std::numeric_limits<T>::min() && b == static_cast<T>(-1))
          return a;
      return static_cast<T>(a / b); // C++ division truncates toward zero
    }
  }
}

template <typename T> T maxMin(bool isMax, T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
  return isMax ? (a < b ? b : a) : (b < a ? b : a);
}

/// The broadcast shape of every present input; all must share one dtype.
/// Allocates the output with it (checked against the output Value).
Result<Tensor> broadcastOutput(const ir::Node &n, const Inputs &in) {
  Shape out;
  const Tensor *first = nullptr;
  for (const Tensor *t : in) {
    if (!t)
      continue;
    if (!first) {
      first = t;
      out = t->shape();
      continue;
    }
    if (t->dtype() != first->dtype())
      return nodeErr(n, std::string("input dtypes differ: ") + ir::dtypeName(first->dtype()) +
                            " and " + ir::dtypeName(t->dtype()));
    Shape bs;
    if (!broadcastShapes(out, t->shape(), bs))
      return nodeErr(n, "input shapes " + ir::shapeStr(out) + " and " + ir::shapeStr(t->shape()) +
                            " do not broadcast");
    out = bs;
  }
  if (!first)
    return nodeErr(n, "needs at least one input");
  return allocOutput(n, 0, first->dtype(), out);
}

} // namespace

EvalResult evalBinary(const ir::Node &n, const Inputs &in) {
  const Tensor &a = *in[0], &b = *in[1];
  auto yr = broadcastOutput(n, in);
  if (!yr)
    return yr.error();
  Tensor y = yr.take();
  if (y.dtype() == DType::Bool)
    return nodeErr(n, "bool operands are not supported");
  std::vector<int64_t> ia = broadcastIndex(a.shape(), y.shape());
  std::vector<int64_t> ib = broadcastIndex(b.shape(), y.shape());
  dispatchType(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *ap = a.data<T>(), *bp = b.data<T>();
    T *yp = y.data<T>();
    for (size_t i = 0; i < ia.size(); ++i)
      yp[i] = binaryOp<T>(n.kind, ap[ia[i]], bp[ib[i]]);
  });
  if (n.kind == OpKind::Add)
    applyFusedActivation(n, y);
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

EvalResult evalMaxMin(const ir::Node &n, const Inputs &in) {
  auto yr = broadcastOutput(n, in);
  if (!yr)
    return yr.error();
  Tensor y = yr.take();
  bool isMax = n.kind == OpKind::Max;
  bool first = true;
  for (const Tensor *t : in) {
    if (!t)
      continue;
    std::vector<int64_t> it = broadcastIndex(t->shape(), y.shape());
    dispatchType(y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T *tp = t->data<T>();
      T *yp = y.data<T>();
      for (size_t i = 0; i < it.size(); ++i)
        yp[i] = first ? tp[it[i]] : maxMin<T>(isMax, yp[i], tp[it[i]]);
    });
    first = false;
  }
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

EvalResult evalPRelu(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0], &slope = *in[1];
  auto yr = broadcastOutput(n, in);
  if (!yr)
    return yr.error();
  Tensor y = yr.take();
  if (x.shape() != y.shape())
    return nodeErr(n, "slope " + ir::shapeStr(slope.shape()) + " does not broadcast to X " +
                          ir::shapeStr(x.shape()));
  std::vector<int64_t> is = broadcastIndex(slope.shape(), y.shape());
  dispatchType(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *xp = x.data<T>(), *sp = slope.data<T>();
    T *yp = y.data<T>();
    for (size_t i = 0; i < is.size(); ++i) {
      if constexpr (std::is_signed_v<T>)
        yp[i] = xp[i] < 0 ? static_cast<T>(xp[i] * sp[is[i]]) : xp[i];
      else
        yp[i] = xp[i]; // unsigned values are never negative
    }
  });
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

} // namespace npucc::interp::detail
