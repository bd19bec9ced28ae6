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

#include <fstream>
#include <iostream>
#include <sstream>

namespace npucc::tool {

int runOpt(const CommonCompileFlags &common, const OptFlags &flags) {
  if (flags.input.size() > 4 && flags.input.compare(flags.input.size() - 4, 4, ".lir") == 0)
    return runOptLir(common, flags);
  // The NPU of --target, for npu-partition (none with --target cpu).
  std::optional<target::TargetDesc> t;
  if (common.target != "cpu") {
    auto r = target::loadTarget(common.target);
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
    auto r = onnx::importModel(flags.input, opts->import);
    if (!r)
      return reportError(r.error());
    g = r.take();
  } else {
    std::ifstream in(flags.input, std::ios::binary);
    if (!in)
      return reportError(error("cannot open '" + flags.input + "'"));
    std::stringstream ss;
    ss << in.rdbuf();
    auto r = ir::parseGraph(ss.str(), flags.input);
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
