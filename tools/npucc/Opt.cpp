//===- Opt.cpp - `npucc opt`: passes on textual IR, IR out ----------------===//
//
// Graph IR (.ir) or an ONNX model: the graph passes of --passes (npu-partition
// with the NPU of --target); loop IR (.lir): OptLir.cpp.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "npucc/ir/Parser.h"
#include "npucc/ir/Printer.h"
#include "npucc/ir/Verifier.h"
#include "npucc/target/Target.h"
#include "npucc/support/FileRead.h"

#include <iostream>

namespace npucc::tool {

int runOpt(const CommonCompileFlags &common, const OptFlags &flags) {
  if (flags.input.size() > 4 && flags.input.compare(flags.input.size() - 4, 4, ".lir") == 0)
    return runOptLir(common, flags);
  // The NPU of --target, for npu-partition (none with --target cpu).
  std::optional<target::TargetDesc> t;
  if (common.target != "cpu") {
    auto r = driver::loadTarget(common.target);
    if (!r)
      return reportError(r.error());
    t = r.take();
  }
  std::unique_ptr<ir::Graph> g;
  bool isOnnx = flags.input.size() > 5 &&
                flags.input.compare(flags.input.size() - 5, 5, ".onnx") == 0;
  if (isOnnx) {
    auto opts = makeCompileOptions(flags.input, common);
    if (!opts)
      return reportError(opts.error());
    std::vector<std::string> notes;
    opts->import.notes = &notes;
    auto r = onnx::importModel(flags.input, opts->import);
    if (!r)
      return reportError(r.error());
    for (const std::string &n : notes)
      std::cerr << "npucc: note: " << n << "\n";
    g = r.take();
  } else {
    auto text = readFileLimited(flags.input, kMaxTextFileBytes, "textual IR");
    if (!text)
      return reportError(text.error());
    auto r = ir::parseGraph(*text, flags.input);
    if (!r)
      return reportError(r.error());
    g = r.take();
  }
  if (Status s = ir::verifyGraph(*g); !s)
    return reportError(s.error().inFile(flags.input));
  passes::PassContext ctx;
  ctx.target = t ? &*t : nullptr;
  ctx.printAfter = common.printAfter;
  ctx.printOut = &std::cout;
  if (!common.passes.empty())
    if (Status s = passes::runPipeline(*g, common.passes, ctx); !s)
      return reportError(s.error().inFile(flags.input));
  ir::PrintOptions po;
  po.elideAbove = flags.noElide ? -1 : 16;
  ir::printGraph(std::cout, *g, po);
  return 0;
}

} // namespace npucc::tool
