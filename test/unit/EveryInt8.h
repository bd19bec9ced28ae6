//===- EveryInt8.h - A graph input holding every int8 value once ----------===//
//
// i8[256, 1] with rows -128..127: the input of tests that check an integer
// layer exhaustively (layer_distance_test, lut_fusion_test).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Tensor.h"

#include <map>
#include <string>

namespace npucc::test {

/// {name: i8[256, 1] = -128, -127, ..., 127}.
inline std::map<std::string, ir::Tensor> everyInt8(const std::string &name = "x") {
  ir::Tensor x(ir::DType::I8, {256, 1});
  for (int i = 0; i < 256; ++i)
    x.setInt(i, i - 128);
  return {{name, x}};
}

} // namespace npucc::test
