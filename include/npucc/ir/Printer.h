//===- Printer.h - Deterministic textual form of the graph IR -------------===//
//
//   graph @main(%x: f32[1,3,8,8]) -> (%y) {
//     const @w: f32[4,3,3,3] = dense<[0.1, ...]>
//     %c = Conv(%x, @w) {pads=[1,1,1,1], strides=[1,1]} : f32[1,4,8,8] loc("conv0")
//     %y = Relu(%c) : f32[1,4,8,8] loc("relu0")
//     return %y
//   }
//
// Absent optional inputs print as `_`. Several results: `%a, %b = Split(...) : t1, t2`.
// Quantized types: `i8[1,4] q(0.5, -3)`, per-channel `i8[4,3] q<0>([0.1,0.2],[0,0])`.
// Constants larger than `elideAbove` elements print as `dense<elided>`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"

#include <ostream>
#include <string>

namespace npucc::ir {

struct PrintOptions {
  int64_t elideAbove = -1; // -1: never elide constant data
};

void printGraph(std::ostream &os, const Graph &g, const PrintOptions &opts = {});
std::string printGraph(const Graph &g, const PrintOptions &opts = {});
std::string typeStr(const Value &v); // "f32[1,3,8,8]" (+ " q(...)")

} // namespace npucc::ir
