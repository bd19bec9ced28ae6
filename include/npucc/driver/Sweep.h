//===- Sweep.h - Design-space sweeps over target descriptions --------------===//
//
// `npucc sweep` (docs/sweep.md): a base description, axes that each set one or
// more JSON paths of it to a list of values, and the cartesian product of the
// axes as the sweep's points. Each point's description goes through the real
// loader and each model through the real compiler (tools/npucc/Sweep.cpp runs
// them in parallel processes); this file holds what does not run anything:
// the axes, the patching, the Pareto front and the table, CSV, JSON and HTML
// outputs, all deterministic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/support/Result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace npucc::driver {

/// One axis: `name` sets every path in `paths` (JSON pointers; a "*" step
/// stands for every element of an array) to values[k][p] at its k-th value,
/// which `labels[k]` names in tables.
struct SweepAxis {
  std::string name;
  std::vector<std::string> paths;
  std::vector<std::string> labels;
  std::vector<std::vector<nlohmann::json>> values;
};

/// The named axes `--axis NAME=V1,V2,...` knows, with their JSON paths and
/// value syntax, one line each (for --help and docs/sweep.md).
std::string sweepAxisHelp();

/// `--axis NAME=V1,V2,...`: a named axis (sweepAxisHelp). Errors name the axis and value.
Result<SweepAxis> parseSweepAxis(const std::string &spec);
/// `--set /json/path=V1,V2,...`: a generic axis; each value is JSON (a number,
/// true, false, a quoted string, an array) or else taken as a string.
Result<SweepAxis> parseSweepSet(const std::string &spec);

/// The points of the sweep: index tuples into each axis's values, the first axis
/// varying slowest. No axes: one point (the base description).
std::vector<std::vector<size_t>> sweepPoints(const std::vector<SweepAxis> &axes);

/// Sets the point's values in `desc`. A path whose parent is missing is an
/// error naming the axis and the path (a missing last key is created).
Status applySweepPoint(nlohmann::json &desc, const std::vector<SweepAxis> &axes,
                       const std::vector<size_t> &point);

/// Minimising every objective: true for the rows no other row dominates (no
/// worse in every objective and better in one). Equal rows are all kept.
std::vector<bool> paretoFront(const std::vector<std::vector<double>> &objectives);

/// One model at one point.
struct SweepRow {
  size_t point = 0;                // index into the points
  std::string model;               // as given on the command line
  std::vector<std::string> labels; // each axis's value label
  std::string status;              // "ok", "refused" (the loader), "failed" (the compile)
  std::string reason;              // refused / failed: the first error line
  uint64_t cycles = 0;             // the compiler's estimate of the NPU timeline
  double clockHz = 0;
  uint64_t scratchpadBytes = 0; // the description's scratchpads, summed
  uint64_t scratchpadPeak = 0;  // what the program uses at most
  uint64_t dramBytes = 0;       // system memory the NPU's DMA moves
  uint64_t arenaBytes = 0;
  uint64_t npuLayers = 0, layers = 0;
  uint64_t cpuCycles = 0; // CPU layers on the Cortex-M4 estimate
  /// The whole program: the NPU timeline plus the CPU layers (report.json's
  /// program_cycles_cortex_m4). A layer that falls back to the CPU (a scratchpad too
  /// small for any tiling) leaves the NPU timeline and lands here.
  uint64_t programCycles() const { return cycles + cpuCycles; }
  bool checked = false; // run on the simulator (--check)
  std::string check;    // "pass", "mismatch", "error"
  std::string checkError;
  uint64_t simCycles = 0;
  bool pareto = false; // on its model's Pareto front (program cycles, scratchpad, traffic)
};

struct SweepResult {
  std::string base; // the base description's name or file
  std::vector<std::string> axisNames;
  std::vector<std::string> models;
  std::vector<SweepRow> rows; // by point, then model
};

/// Marks each row's `pareto`: per model, over its "ok" rows, minimising
/// (programCycles(), scratchpadBytes, dramBytes).
void markPareto(SweepResult &r);

std::string sweepTable(const SweepResult &r);
std::string sweepCsv(const SweepResult &r);
nlohmann::json sweepJson(const SweepResult &r);
/// A self-contained page (inline SVG, no script or network): per model, program
/// cycles against scratchpad bytes and against system traffic with the Pareto front
/// marked, then the rows; sweepJson embedded as data. lib/driver/SweepHtml.cpp.
std::string sweepHtml(const SweepResult &r);

} // namespace npucc::driver
