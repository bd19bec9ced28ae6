//===- Report.h - Per-layer placement, cost and memory of a compile --------===//
//
// What the terminal summary prints after a compile, what `--explain` prints
// and what OUT/report.json holds (schema: docs/npu.md, "report.json"): per
// layer the placement (NPU command kind or CPU kernel, with the reasons an
// NPU candidate was refused), output shape, MACs and, for NPU layers, the
// compiler's estimate (cycles split into compute / DMA / exposed DMA,
// system-memory bytes, scratchpad bytes, tiles); then totals against the
// hardware roofline and the per-layer ideal. Estimates come from the
// description's cycle model, the one the simulator runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/driver/Driver.h"
#include "npucc/driver/MemoryFit.h"
#include "npucc/lower/CpuCost.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace npucc::driver {

struct LayerRow {
  std::string name, op;
  std::string placement; // "npu:conv", ..., or "cpu"
  ir::Shape outShape;
  uint64_t macs = 0;
  bool npu = false;
  lower::NpuLayerPlan plan;         // NPU layers
  std::vector<std::string> reasons; // CPU layers: why not on the NPU
  /// CPU layers: the estimated cycles of their kernel calls on each reference
  /// core (lower::estimateCpuCall); calibrated unless a call used a fallback row.
  uint64_t cpuCycles[int(lower::CpuCore::Count)] = {0, 0};
  bool cpuCalibrated = true;
  /// Activation bytes live while the layer runs (values produced by then and
  /// read by it or later, graph inputs and outputs aside): what the arena
  /// must hold at this point of the schedule.
  uint64_t liveBytes = 0;
};

/// One layer's work on one lane of the estimated schedule (buildSchedule):
/// from its first command's start to its last command's end, `busy` cycles
/// of them spent in its `commands` commands.
struct ScheduleSpan {
  enum Lane : int { Dma = 0, Compute = 1, Cpu = 2 };
  long layer = -1; // index into CompileReport::layers, -1: no listed layer
  Lane lane = Dma;
  uint64_t start = 0, end = 0, busy = 0, commands = 0;
};

/// Adds one command's [start, end) of `layer` on `lane` to `schedule`: it joins
/// the lane's last span when that span is the same layer's, else starts a new
/// one (a layer met again later on a lane gets a new span). `lastOnLane`: per
/// lane, the index of its last span in `schedule` (-1: none yet).
void addScheduleSpan(std::vector<ScheduleSpan> &schedule, long (&lastOnLane)[3], long layer,
                     ScheduleSpan::Lane lane, uint64_t start, uint64_t end);

/// One CPU kernel call, memcpy or memset of the program (index = its
/// NPUCC_LAYER_HOOK index in the generated run function).
struct CpuCallRow {
  size_t index = 0;
  std::string kernel, layer;
  lower::KernelWork work;
  lower::CallCost cost;
};

struct CompileReport {
  std::string target; // "" for --target cpu
  std::vector<LayerRow> layers;
  uint64_t macs = 0, npuMacs = 0;
  uint64_t cycles = 0;         // estimated NPU timeline of the whole program
  uint64_t idealCycles = 0;    // sum of the per-layer ideals
  uint64_t rooflineCycles = 0; // max(NPU MACs / MACs per cycle, minDmaCycles of the minimum)
  /// dramBytes: what the NPU's DMA moves; minDramBytes: weights once and the NPU
  /// part's inputs and outputs (values crossing from / to the CPU) once.
  uint64_t dramBytes = 0, minDramBytes = 0;
  /// The CPU's bus writes to NPU registers per inference (the estimate;
  /// registers_persist leaves out unchanged ones).
  uint64_t registerWrites = 0;
  uint64_t arenaBytes = 0, scratchpadPeakBytes = 0, weightBytes = 0;
  uint64_t npuCommands = 0, streamBytes = 0, codeBytesEstimate = 0;
  uint64_t transposes = 0; // layout conversions (NPU/CPU boundaries)
  double clockHz = 0;
  uint64_t macsPerCycle = 1; // MAC array rows x cols
  std::vector<CpuCallRow> cpuCalls;
  uint64_t cpuCycles[int(lower::CpuCore::Count)] = {0, 0};
  size_t cpuCallsCalibrated = 0;
  /// Flash and RAM on one microcontroller configuration (driver::estimateMemory;
  /// set by the tool for --mcu; empty mcu: not estimated).
  MemoryBudget memory;
  /// The estimated schedule (lower::traceProgram): NPU commands as the
  /// estimate times them, CPU kernel calls taking their Cortex-M4 estimate at
  /// their place in program order; it ends at scheduleCycles.
  std::vector<ScheduleSpan> schedule;
  uint64_t scheduleCycles = 0;
  /// "estimate" (buildSchedule) or "simulator" (applySimTrace); scheduleNote: why the
  /// simulator's commands could not be attributed to layers ("" when they were).
  std::string scheduleSource = "estimate", scheduleNote;
};

/// Builds the report of a finished compile (reasons are computed for CPU
/// layers that had an NPU candidate).
CompileReport buildReport(const CompileResult &r);
/// The compact terminal table, totals last.
std::string reportTable(const CompileReport &rep);
/// One line per layer: placement, and for CPU layers every failed constraint.
std::string explainText(const CompileReport &rep);
nlohmann::json reportJson(const CompileReport &rep);

/// Fills each layer's liveBytes and the report's schedule (called by
/// buildReport; lib/driver/ReportSchedule.cpp).
void buildSchedule(const CompileResult &r, CompileReport &rep);

/// One NPU command as the simulator ran it (the check harness's sim_trace.txt).
struct SimCommand {
  int engine = 0; // NPUCC_ENGINE_*
  uint64_t start = 0, end = 0;
};
/// Replaces rep's schedule with the simulator's trace of one run (`simCycles`: its end),
/// each command on its engine's lane at its simulated cycles, attributed to the layer of
/// the estimate's command at the same place in issue order (lib/driver/ReportSimTrace.cpp).
/// Returns "" or why no command could be attributed (also in rep.scheduleNote).
std::string applySimTrace(const CompileResult &r, CompileReport &rep,
                          const std::vector<SimCommand> &cmds, uint64_t simCycles);

/// OUT/report.html: one self-contained page (inline CSS, SVG and script, no
/// network) rendering reportJson(rep) embedded in it, plus `accuracy` (the
/// accuracy_report.json of a quantized compile; null: none) for per-layer
/// accuracy. Deterministic. lib/driver/ReportHtml.cpp.
std::string reportHtml(const CompileReport &rep, const nlohmann::json &accuracy);

} // namespace npucc::driver
