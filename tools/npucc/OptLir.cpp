//===- OptLir.cpp - `npucc opt FILE.lir`: loop-IR passes on text -----------===//
//
// Parses a loop-IR program (the text of --print-lir / --print-after), runs
// the loop-IR passes of --passes (LirPasses.def) with the NPU description of
// --target, and prints the program. The program's `target "NAME"` line must
// name that description: waits and checks depend on its engines and queue.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "npucc/lower/LirPass.h"
#include "npucc/support/FileRead.h"
#include "npucc/target/Target.h"

#include <iostream>

namespace npucc::tool {

int runOptLir(const CommonCompileFlags &common, const OptFlags &flags) {
  auto text = readFileLimited(flags.input, kMaxTextFileBytes, "loop IR");
  if (!text)
    return reportError(text.error());
  auto prog = lir::parseProgram(*text, flags.input);
  if (!prog)
    return reportError(prog.error());
  std::optional<target::TargetDesc> t;
  if (common.target != "cpu") {
    auto r = driver::loadTarget(common.target);
    if (!r)
      return reportError(r.error());
    t = r.take();
  }
  if (!prog->target.empty() && (!t || t->name != prog->target))
    return reportError(error("the loop IR was scheduled for the NPU '" + prog->target +
                             "' but --target is '" + (t ? t->name : common.target) +
                             "'; pass --target " + prog->target + " (or its JSON file)")
                           .inFile(flags.input));
  lower::LirPassContext ctx;
  ctx.target = t ? &*t : nullptr;
  ctx.printAfter = common.printAfter;
  ctx.printOut = &std::cout;
  for (const std::string &name : common.printAfter)
    if (name != "all" && !lower::findLirPass(name))
      return reportError(error("unknown loop-IR pass '" + name + "' in --print-after"));
  if (Status s = lower::runLirPipeline(*prog, common.passes, ctx); !s)
    return reportError(s.error().inFile(flags.input));
  lir::printProgram(std::cout, *prog);
  return 0;
}

} // namespace npucc::tool
