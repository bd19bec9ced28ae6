//===- Pass.h - Graph passes and the pass manager -------------------------===//
//
// A pass is a function `Status run(Graph&, PassContext&)` declared once in
// Passes.def (name, summary, factory). The table drives the pass factory,
// `--passes=`, `--print-after=` and `--list-passes`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/support/Result.h"

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace npucc::target {
struct TargetDesc;
}

namespace npucc::passes {

struct PassContext {
  std::map<std::string, int64_t> stats; // "pass.statistic" -> count
  std::ostream *printOut = nullptr;     // where --print-after writes
  std::vector<std::string> printAfter;  // pass names, or "all"
  bool verifyEach = true;
  /// The NPU the graph is compiled for (npu-partition); null: CPU only.
  const target::TargetDesc *target = nullptr;
  /// npu-partition: nodes imported with fp32 requantization may run on the
  /// NPU with exact rounding (false with an explicit --requant fp32).
  bool npuExactForFp32 = true;
  /// npu-partition: nodes with exact rounding may run on an NPU whose
  /// requantization is fp32_scale (false with an explicit --requant exact).
  bool npuFp32ForExact = true;
  /// Names also accepted in printAfter: passes of a later stage (the loop-IR
  /// passes) that print there.
  std::vector<std::string> laterPassNames;
  /// Lines a pass wants the user to see (the driver prints them as warnings).
  std::vector<std::string> warnings;
  /// Nodes a pass erased by folding them into another (npu-partition's fused
  /// activations): pointers a caller kept to them are dangling; compare, never read.
  std::vector<const ir::Node *> erased;
  void bump(const std::string &stat, int64_t n = 1) { stats[stat] += n; }
};

using PassFn = Status (*)(ir::Graph &, PassContext &);

struct PassInfo {
  const char *name;    // "constant-fold"
  const char *summary; // one line for --list-passes
  PassFn run;
};

/// All passes of Passes.def, in table order.
const std::vector<PassInfo> &allPasses();
const PassInfo *findPass(const std::string &name);

/// The default float pipeline (comma-separated names).
const char *defaultPipeline();

/// Runs a comma-separated list of pass names, verifying after each when
/// ctx.verifyEach, printing after the ones named in ctx.printAfter.
Status runPipeline(ir::Graph &g, const std::string &pipeline, PassContext &ctx);

} // namespace npucc::passes
