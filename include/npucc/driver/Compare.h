//===- Compare.h - Output comparison against reference tensors ------------===//
#pragma once

#include "npucc/ir/Tensor.h"

#include <string>

namespace npucc::driver {

struct Comparison {
  std::string name;
  double maxAbsError = 0;  // max |got - ref|
  double maxAbsRef = 0;    // max |ref|
  double relError = 0;     // maxAbsError / maxAbsRef (maxAbsError when maxAbsRef == 0)
  int64_t firstMismatch = -1; // first index whose error exceeds the tolerance, -1 if none
  int64_t mismatches = 0;
  bool shapeMismatch = false;
  bool pass = false;
};

/// Float outputs pass when every |got-ref| <= relTol * max|ref| (an absolute
/// relTol when ref is all zeros); NaN matches NaN, inf matches the same inf.
/// Integer and bool outputs must be equal, except that `intTolerance` steps
/// are allowed (0 by default; 1 = one quantization step).
Comparison compareTensors(const ir::Tensor &got, const ir::Tensor &ref, double relTol,
                          int64_t intTolerance = 0);

} // namespace npucc::driver
