//===- CheckReport.h - What `npucc check` compares and reports ----------===//
//
// The per-data-set figures and per-output comparisons of `npucc check`
// (Check.cpp), and the small helpers that fill and word them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/driver/Compare.h"
#include "npucc/ir/Graph.h"
#include "npucc/ir/Tensor.h"

#include <string>
#include <vector>

namespace npucc::tool {

/// What the simulator measured for one data set.
struct SimFigures {
  unsigned long long cycles = 0, dramRead = 0, dramWrite = 0, commands = 0, macs = 0, regWrites = 0;
  double utilisation = 0;
  int hazards = 0;
  std::string error;
};

/// The C output vs the interpreter on an earlier stage of the compile.
struct StageReport {
  std::string stage; // "pre-target", "imported"
  std::string rule;  // "bit-exact", "steps<=N", "rel<=T"
  driver::Comparison cmp;
  bool bitExact = false;
  bool pass = false;
};

struct OutputReport {
  int dataset;
  driver::Comparison cmp; // vs the golden output
  driver::OutputQuant kind;
  bool stepMode = false;      // cmp is a step comparison
  bool interpChecked = false; // vs the reference interpreter
  driver::Comparison interp;  // steps (quantized kinds) or exact float/int
  bool interpBitExact = false;
  std::string interpRule;          // "bit-exact", "steps<=N" or "rel<=T"
  std::vector<StageReport> stages; // vs the interpreter on earlier stages
  bool pass = false;
};

/// A graph of the compile the interpreter runs for the C outputs to match.
struct InterpStage {
  const char *name;  // in the report and --json
  const char *title; // for the text report
  const ir::Graph *graph;
  bool exact; // bit-exact like the compiled graph; else the golden tolerance
};

void compareWithInterp(OutputReport &r, const ir::Tensor &got, const ir::Tensor &want,
                       bool quantized, double relTol);
StageReport compareStage(const InterpStage &st, const OutputReport &r, const ir::Tensor &got,
                         const ir::Tensor &want, bool quantized, double relTol, double steps);
/// How a C output compares with the interpreter, in words shared by the text and --json:
/// "exact" (identical bytes), "int-exact" (the bit-exact rule passed without identical
/// bytes: a softmax(dq) output whose logits are identical and whose float softmax rounds
/// differently), "within" (within the rule's tolerance) or "differs".
const char *exactness(bool bitExact, const std::string &rule, bool pass);
/// A step count for the text report ("inf" when infinite).
std::string stepsText(double st);

} // namespace npucc::tool
