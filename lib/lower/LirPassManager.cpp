//===- LirPassManager.cpp - Loop-IR pass table, lookup and pipeline --------===//
//
// allLirPasses() is generated from LirPasses.def. runLirPipeline checks every
// name first, then runs the passes in order and prints the program after the
// requested ones (the same `// -----// ... //----- //` banner as graph passes).
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/LirPass.h"

#include <algorithm>

namespace npucc::lower {

#define NPUCC_LIR_PASS(NAME, SUMMARY, FN) Status FN(lir::Program &, LirPassContext &);
#include "npucc/lower/LirPasses.def"

const std::vector<LirPassInfo> &allLirPasses() {
  static const std::vector<LirPassInfo> Table = {
#define NPUCC_LIR_PASS(NAME, SUMMARY, FN) {NAME, SUMMARY, &FN},
#include "npucc/lower/LirPasses.def"
  };
  return Table;
}

const LirPassInfo *findLirPass(const std::string &name) {
  for (const LirPassInfo &p : allLirPasses())
    if (name == p.name)
      return &p;
  return nullptr;
}

Status runLirPipeline(lir::Program &p, const std::string &pipeline, LirPassContext &ctx) {
  std::vector<const LirPassInfo *> passes;
  size_t start = 0;
  while (start <= pipeline.size()) {
    size_t comma = pipeline.find(',', start);
    std::string name = pipeline.substr(start, comma == std::string::npos ? std::string::npos
                                                                         : comma - start);
    name.erase(0, name.find_first_not_of(" \t\n"));
    name.erase(name.find_last_not_of(" \t\n") + 1);
    if (!name.empty()) {
      const LirPassInfo *info = findLirPass(name);
      if (!info) {
        std::string valid;
        for (const LirPassInfo &q : allLirPasses())
          valid += (valid.empty() ? "" : ", ") + std::string(q.name);
        return error("unknown loop-IR pass '" + name + "' (valid loop-IR passes: " + valid + ")");
      }
      passes.push_back(info);
    }
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  for (const LirPassInfo *info : passes) {
    if (Status s = info->run(p, ctx); !s) {
      Diagnostic d = s.error();
      d.note(std::string("while running loop-IR pass '") + info->name + "'");
      return d;
    }
    bool print = std::find(ctx.printAfter.begin(), ctx.printAfter.end(), "all") !=
                     ctx.printAfter.end() ||
                 std::find(ctx.printAfter.begin(), ctx.printAfter.end(), info->name) !=
                     ctx.printAfter.end();
    if (print && ctx.printOut) {
      *ctx.printOut << "// -----// loop IR after " << info->name << " //----- //\n";
      lir::printProgram(*ctx.printOut, p);
    }
  }
  return success();
}

} // namespace npucc::lower
