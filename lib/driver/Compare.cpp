//===- Compare.cpp - Output comparison against reference tensors ----------===//
#include "npucc/driver/Compare.h"

#include <cmath>

namespace npucc::driver {

Comparison compareTensors(const ir::Tensor &got, const ir::Tensor &ref, double relTol,
                          int64_t intTolerance) {
  Comparison c;
  if (got.dtype() != ref.dtype() || got.numElements() != ref.numElements()) {
    c.shapeMismatch = true;
    c.firstMismatch = 0;
    return c;
  }
  int64_t n = ref.numElements();
  bool fl = ir::isFloat(ref.dtype());
  for (int64_t i = 0; i < n; ++i) {
    double r = ref.getDouble(i);
    if (std::isfinite(r))
      c.maxAbsRef = std::max(c.maxAbsRef, std::fabs(r));
  }
  double limit = fl ? relTol * (c.maxAbsRef > 0 ? c.maxAbsRef : 1.0)
                    : static_cast<double>(intTolerance);
  for (int64_t i = 0; i < n; ++i) {
    double r = fl ? ref.getDouble(i) : static_cast<double>(ref.getInt(i));
    double g = fl ? got.getDouble(i) : static_cast<double>(got.getInt(i));
    double err;
    if (std::isnan(r) || std::isnan(g))
      err = (std::isnan(r) && std::isnan(g)) ? 0 : INFINITY;
    else if (std::isinf(r) || std::isinf(g))
      err = (r == g) ? 0 : INFINITY;
    else
      err = std::fabs(g - r);
    c.maxAbsError = std::max(c.maxAbsError, err);
    if (err > limit) {
      if (c.firstMismatch < 0)
        c.firstMismatch = i;
      ++c.mismatches;
    }
  }
  c.relError = c.maxAbsRef > 0 ? c.maxAbsError / c.maxAbsRef : c.maxAbsError;
  c.pass = c.mismatches == 0;
  return c;
}

} // namespace npucc::driver
