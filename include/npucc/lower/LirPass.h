//===- LirPass.h - Passes on the loop IR and their pipeline runner ---------===//
//
// The loop-IR counterpart of passes/Pass.h: a table (LirPasses.def), lookup
// and a runner that prints the program after the requested passes. Loop-IR
// passes need the NPU description the program was scheduled for.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/lir/Program.h"
#include "npucc/support/Result.h"
#include "npucc/target/Target.h"

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace npucc::lower {

struct LirPassContext {
  const target::TargetDesc *target = nullptr; // required by the NPU passes
  std::vector<std::string> printAfter;        // pass names or "all"; unknown names are
                                              // the caller's to check (isPassName)
  std::ostream *printOut = nullptr;
  /// Counters the passes add to ("npu-prefetch.estimated-instructions": the
  /// instructions npu-prefetch timed, which its bounds keep linear in the
  /// program's length).
  std::map<std::string, int64_t> stats;
};

using LirPassFn = Status (*)(lir::Program &, LirPassContext &);

struct LirPassInfo {
  const char *name;
  const char *summary;
  LirPassFn run;
};

const std::vector<LirPassInfo> &allLirPasses();
const LirPassInfo *findLirPass(const std::string &name);

/// Runs a comma-separated list of loop-IR pass names; an unknown name is an
/// error listing the valid ones. Prints after the passes in ctx.printAfter.
Status runLirPipeline(lir::Program &p, const std::string &pipeline, LirPassContext &ctx);

} // namespace npucc::lower
