//===- NpuLowering.h - Graph nodes placed on the NPU -> scheduled loop IR --===//
//
// Nodes that npu-partition marked npu="KIND" are lowered here, inside the
// CPU lowering's storage and arena plan (their activations live in the arena
// like any other value):
//   1. Tiling, chosen by cost: candidate tiles (output rows, output-channel
//      blocks in multiples of the MAC array rows, loop order, weights resident
//      or streamed) whose double-buffered scratchpad buffers fit the
//      description's scratchpads (alignment, banks) and whose transfers fit the
//      DMA; each is scheduled and timed with the description's own cycle model
//      (runtime/hal/npucc_timing.h), the fastest wins.
//   2. Scheduling: per tile DMA loads, the NPU command, DMA stores, the next
//      tile's loads overlapping the current command; weights of a block are
//      packed at compile time into one record (OHWI weights, bias, per-channel
//      requantization table) in the NPU constant blob.
//   3. Waits (insertNpuWaits, the npu-waits loop-IR pass the driver runs
//      after lowering): each NPU command gets a token; a wait is
//      inserted only for a dependency: a scratchpad or memory range another
//      engine's unfinished command reads or writes, the engine itself being
//      busy (one command at a time, or a full job queue), or the CPU touching
//      memory an unfinished command uses.
// The decisions are recorded in the loop IR (`npu` and `wait` instructions);
// the C emitter prints them as a command stream.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/lir/Program.h"
#include "npucc/support/Result.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include <memory>
#include <string>
#include <vector>

namespace npucc::lower {

class LowerContext;

/// The figures of one lowered layer (compiler estimates, from the cycle model).
struct NpuLayerPlan {
  std::string tiling; // e.g. "rows 4, out-ch blocks 32, weights resident"
  int64_t tiles = 0;  // NPU compute commands
  uint64_t macs = 0;
  uint64_t cycles = 0; // estimated, layer alone
  uint64_t computeCycles = 0, dmaCycles = 0, exposedDmaCycles = 0;
  uint64_t dramRead = 0, dramWrite = 0; // system-memory bytes moved by the DMA
  uint64_t scratchpadBytes = 0;         // scratchpad in use by the layer
  uint64_t idealCycles = 0;             // one command, unlimited scratchpad (per-layer ideal)
  uint64_t idealComputeCycles = 0;      // that one command's compute
  uint64_t weightBytes = 0, inBytes = 0, outBytes = 0; // what it must move at least once
  /// The layer's weight records (one block of all channels) and activation
  /// table: what the NPU must read from system memory at least once,
  /// whether by DMA or itself (the report's minimum traffic).
  uint64_t recordBytes = 0;
};

/// The fewest DMA cycles that move weights (from the constants' window) and
/// activations (read from and written to the arena's window) once each, at
/// the rate npucc_timing.h gives a transfer: the slowest of the DMA's read
/// and write rates and the window's own rate. `constBytes` is the size of
/// the program's constants (which window holds them).
uint64_t minDmaCycles(const target::TargetDesc &t, uint64_t weightBytes, uint64_t inBytes,
                      uint64_t outBytes, uint64_t constBytes);

/// Is there a tiling of `op` that fits the NPU? `why` gets the reason if not
/// (e.g. "needs 300000 bytes of scratchpad for one row, has 262144").
bool npuTilingFits(const target::NpuOp &op, const target::TargetDesc &t,
                   std::string *why = nullptr);

struct NpuLowerOptions {
  /// Hand-off: a layer whose output only the next NPU layer reads may keep
  /// it in the scratchpad (no store, no load), when the two layers' estimated
  /// cycles go down (docs/npu.md, "Hand-off").
  bool handoff = true;
};

/// Lowers the nodes marked npu="KIND" (used through CpuLowerOptions::npu).
class NpuLowering {
public:
  explicit NpuLowering(const target::TargetDesc &t, NpuLowerOptions o = {});
  ~NpuLowering();
  NpuLowering(const NpuLowering &) = delete;
  NpuLowering &operator=(const NpuLowering &) = delete;

  /// Emits the NPU commands of node `n` (its operands through ctx.buffer()).
  Status lower(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);
  /// Adds the NPU constant blob and target information to the program.
  /// Called once after all nodes; the waits are npu-waits' (LirPasses.def).
  Status finish(lir::Program &p);
  /// The plan of a lowered node (null if the node was not lowered here).
  const NpuLayerPlan *plan(const std::string &nodeName) const;
  const target::TargetDesc &target() const;

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

/// Inserts `wait` instructions into a program's body for every dependency of
/// its NPU commands (see above); removes existing waits first. `t` gives the
/// engines, job-queue depth and DMA/compute concurrency.
Status insertNpuWaits(lir::Program &p, const target::TargetDesc &t);

/// Can the NPU's DMA reach the program's memory? The NPU constants go to the
/// first read-only system window with room (else a writable one), the arena,
/// inputs and outputs to the first writable window, as the simulator maps them
/// and as firmware must place them. Returns "" when everything fits, else what
/// does not fit with the numbers.
std::string memoryWindowProblem(const lir::Program &p, const target::TargetDesc &t);

/// The same question before lowering, for the one part known then: do the
/// int8 weights of the layers placed on the NPU (npu-partition's `npu`
/// attribute) fit the largest system window? A lower bound of the NPU
/// constant data; "" when they fit or nothing is placed, else the numbers.
/// Spares the tiling search of a model that will fall back to the CPU.
std::string npuWeightsProblem(const ir::Graph &g, const target::TargetDesc &t);

/// Estimated NPU timeline of a program's body: the same cycle model as the
/// simulator, CPU register accesses and status polls included; CPU kernels
/// cost nothing (the simulator does not time them either).
struct NpuEstimate {
  uint64_t cycles = 0; // end of the last command or wait
  uint64_t dmaBusy = 0, computeBusy = 0, macs = 0;
  uint64_t sysRead = 0, sysWrite = 0;
  uint64_t commands = 0;
  uint64_t regWrites = 0; // the CPU's bus writes to NPU registers (npucc_sim_totals.reg_writes)
};
NpuEstimate estimateProgram(const lir::Program &p, const target::TargetDesc &t);

} // namespace npucc::lower
