//===- Reduce.cpp - Reference ReduceMean ----------------------------------===//
//
// ReduceMean over the axes attribute (or the opset-18 axes input); empty axes
// reduce every dim (unless noop_with_empty_axes); keepdims keeps size-1 dims.
// Sums accumulate in double; integer means truncate toward zero.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

namespace npucc::interp::detail {

EvalResult evalReduceMean(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  const Tensor *axesIn = in.size() > 1 ? in[1] : nullptr;
  Tensor y = makeOutput(n, 0);
  if (x.dtype() == DType::Bool || y.dtype() != x.dtype())
    return nodeErr(n, std::string("unsupported dtype ") + ir::dtypeName(x.dtype()));
  const Shape &xs = x.shape();
  int64_t rank = static_cast<int64_t>(xs.size());
  std::vector<int64_t> axes = axesIn ? axesIn->toInts() : n.attrInts("axes");
  std::vector<bool> reduced(xs.size(), false);
  if (axes.empty()) {
    if (n.attrInt("noop_with_empty_axes", 0) != 0) {
      Tensor copy = x;
      copy.reshape(y.shape());
      Outputs out;
      out.push_back(std::move(copy));
      return out;
    }
    reduced.assign(xs.size(), true);
  }
  for (int64_t a : axes) {
    int64_t ax = a;
    if (!normalizeAxis(ax, rank))
      return nodeErr(n, "axis " + std::to_string(a) + " out of range for " + ir::shapeStr(xs));
    reduced[static_cast<size_t>(ax)] = true;
  }
  // The reduced shape with size-1 dims kept, which indexes the accumulators.
  Shape kept = xs;
  for (size_t d = 0; d < xs.size(); ++d)
    if (reduced[d])
      kept[d] = 1;
  if (ir::numElements(kept) != y.numElements())
    return nodeErr(n, "output shape " + ir::shapeStr(y.shape()) + " does not match reducing " +
                          ir::shapeStr(xs));
  std::vector<double> acc(static_cast<size_t>(ir::numElements(kept)), 0.0);
  std::vector<int64_t> keptStrides = stridesOf(kept), idx;
  for (int64_t i = 0; i < x.numElements(); ++i) {
    unravel(i, xs, idx);
    int64_t o = 0;
    for (size_t d = 0; d < xs.size(); ++d)
      o += reduced[d] ? 0 : idx[d] * keptStrides[d];
    acc[static_cast<size_t>(o)] += x.getDouble(i);
  }
  double count = ir::numElements(kept) ? static_cast<double>(x.numElements()) /
                                             static_cast<double>(ir::numElements(kept))
                                       : 1.0;
  for (size_t o = 0; o < acc.size(); ++o)
    y.setDouble(static_cast<int64_t>(o), acc[o] / count);
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

} // namespace npucc::interp::detail
