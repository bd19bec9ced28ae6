//===- FusedActivation.h - A lookup-table activation fused into a MAC node --===//
//
// On an NPU whose activation stage is lut256, npu-partition folds an int8
// Sigmoid / Tanh / HardSwish / LeakyRelu / HardSigmoid that follows an NPU
// conv, depthwise or matmul into it: the MAC node takes the activation's
// output value and records the activation in attributes
//     act_fn = "Sigmoid" | "Tanh" | "HardSwish" | "LeakyRelu" | "HardSigmoid"
//     act_alpha, act_beta  (LeakyRelu's alpha, HardSigmoid's alpha and beta)
//     act_in_scale, act_in_zp  (the quantization of the value in between)
// The MAC node's own arithmetic (requantization, fused clamp) targets the
// value in between; the table then maps it to the output (quant::actLut256
// with the activation's buildLut table, so nothing is approximated). The
// legality check, the lowering and the interpreter all see the node through
// coreOf() plus fusedLut(); docs/target.md, "activation: lut256".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/quant/Multiplier.h"

#include <memory>
#include <optional>
#include <string>

namespace npucc::quant {

/// The lookup-table function of an int8 activation node (Sigmoid, Tanh,
/// HardSwish, LeakyRelu, HardSigmoid) with its parameters; nullopt for other ops.
struct LutActivation {
  LutFunction fn = LutFunction::Sigmoid;
  double alpha = 0.01, beta = 0.5;
};
std::optional<LutActivation> lutActivationOf(const ir::Node &n);

/// True when `n` carries a fused activation (attribute act_fn).
bool hasFusedActivation(const ir::Node &n);

/// Folds the int8 activation node `act` (which reads n's only output) into
/// the MAC node `n`: the attributes above, n's output becomes act's. The
/// caller erases `act`. False (nothing changed) when `act` is not a
/// lookup-table activation or n already carries one.
bool fuseActivation(ir::Node &n, const ir::Node &act);

/// A MAC node with a fused activation seen without it: a copy whose output is
/// the value in between (its quantization from act_in_scale / act_in_zp).
struct CoreNode {
  ir::Node node;
  ir::Value mid;
};
/// nullptr when `n` has no fused activation.
std::unique_ptr<CoreNode> coreOf(const ir::Node &n);

/// The fused activation's table from the value in between to n's output
/// (buildLut); nullopt when `n` has none.
std::optional<LutTable> fusedLut(const ir::Node &n);

} // namespace npucc::quant
