//===- NpuTrace.h - Where each NPU command of a program runs, estimated ---===//
//
// The schedule behind estimateProgram (NpuLowering.h), command by command:
// the same timeline (the simulator's cycle model, CPU register accesses and
// polls included), recording each command's engine and start / end cycle.
// With per-instruction CPU cycles, CPU kernel calls take that long on the
// CPU at their place in program order (the NPU's estimate alone counts them
// as free, as the simulator does). Used by the compile report's schedule
// (driver::buildReport, OUT/report.html).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/lower/NpuLowering.h"

#include <cstdint>
#include <vector>

namespace npucc::lower {

struct NpuSpan {
  enum Lane : int { DmaLane = 0, ComputeLane = 1, CpuLane = 3 };
  size_t instr = 0; // index into the program's body
  int lane = DmaLane;
  uint64_t start = 0, end = 0;
};

/// estimateProgram with the spans of every command (and, when `cpuCycles`
/// gives a body index's CPU cycles, of every CPU instruction), in body
/// order. Without `cpuCycles` the returned estimate equals estimateProgram's.
NpuEstimate traceProgram(const lir::Program &p, const target::TargetDesc &t,
                         std::vector<NpuSpan> &trace,
                         const std::vector<uint64_t> *cpuCycles = nullptr);

} // namespace npucc::lower
