//===- CpuCost.h - Instructions of the CPU kernel calls of a program -------===//
//
// The controller CPU's share of a program: every kernel call, memcpy and
// memset of the loop IR gets an estimate of the instructions it executes,
// from a per-kernel linear model `base + a * MACs + b * output elements +
// c * input elements + d * weight elements` (of the node the call
// implements: its second input's elements when constant; MACs of output
// channels whose weights are all zero excluded, as the fast kernels skip
// them) whose non-negative coefficients were fitted to
// bench/mcu_bench.sh's per-call QEMU instruction counts (-O2, default
// kernels) on two reference cores, Cortex-M4F and RV32IMAC
// (lib/lower/cpu/CpuCost.def; bench/cpu_cost_fit.py; error stated in
// docs/benchmarks.md, "CPU cost model"). A kernel without a fitted row gets
// its family's fallback row and is marked uncalibrated. Instructions are
// reported as cycles (one instruction per cycle: the reference cores are
// single-issue; wait states and stalls are not modelled).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/lir/Program.h"

#include <cstdint>
#include <string>

namespace npucc::lower {

enum class CpuCore { CortexM4, Rv32, Count };

/// "cortex-m4", "rv32".
const char *cpuCoreName(CpuCore c);

/// What a call's cost scales with, taken from the graph node it implements.
struct KernelWork {
  uint64_t macs = 0;       // the node's multiply-accumulates of channels with a
                           // non-zero weight (0 for non-MAC ops)
  uint64_t outElems = 0;   // elements of the node's first output
  uint64_t inElems = 0;    // elements of the node's first input
  uint64_t constElems = 0; // elements of its second input when constant (weights)
};

struct CallCost {
  uint64_t cycles[int(CpuCore::Count)] = {0, 0};
  bool calibrated = false; // a fitted row of CpuCost.def (not a family fallback)
};

/// The estimate of one loop-IR instruction ("call", "memcpy" or "memset";
/// anything else costs nothing on the CPU).
CallCost estimateCpuCall(const lir::Instr &in, const KernelWork &w);

} // namespace npucc::lower
