//===- OrtResizeValues.h - ONNX node tests where npucc follows ONNX Runtime ===//
//
// Two Resize node tests whose data take the "resized length" as input size x
// scale, where ONNX Runtime and PyTorch (and so npucc, docs/ir.md "Resize")
// take the integer output size. The values here are ONNX Runtime's
// (onnxruntime-node 1.x, graph optimizations disabled), which the
// differential tier compares with; the tests that read these node tests
// check them instead of the test data (and that the data still differ).
//   4 -> 2 with align_corners: x = o * 3 / (2 - 1), not o * 3 / (2.4 - 1);
//   4x4 -> 3x3 cubic: x = 0, 1.5, 3, and cubic at 1.5 of 1..4 is 2.5.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <string>
#include <vector>

namespace npucc::test {

inline const std::map<std::string, std::vector<float>> &onnxRuntimeResizeValues() {
  static const std::map<std::string, std::vector<float>> m = {
      {"test_resize_downsample_scales_linear_align_corners", {1, 4}},
      {"test_resize_downsample_scales_cubic_align_corners", {1, 2.5, 4, 7, 8.5, 10, 13, 14.5, 16}},
  };
  return m;
}

} // namespace npucc::test
