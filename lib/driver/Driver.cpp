//===- Driver.cpp - The compile pipeline as a library call ----------------===//
#include "npucc/driver/Driver.h"

#include "npucc/ir/Printer.h"
#include "npucc/ir/Verifier.h"
#include "npucc/lower/CpuLowering.h"
#include "npucc/target/CTable.h"

#include <cctype>

namespace npucc::driver {

bool isValidPrefix(const std::string &p) {
  if (p.empty() || std::isdigit(static_cast<unsigned char>(p[0])))
    return false;
  for (char c : p)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

Result<CompileResult> compileModel(const CompileOptions &opts) {
  if (!isValidPrefix(opts.prefix))
    return error("--prefix '" + opts.prefix + "' is not a valid C identifier");
  CompileResult r;
  auto tgt = target::loadTarget(opts.target);
  if (!tgt)
    return std::move(tgt.error());
  r.target = tgt.take();
  auto g = onnx::importModel(opts.modelPath, opts.import);
  if (!g)
    return std::move(g.error());
  r.graph = g.take();
  NPUCC_TRY(ir::verifyGraph(*r.graph));

  passes::PassContext ctx;
  ctx.printAfter = opts.printAfter;
  ctx.printOut = opts.irOut;
  std::string pipeline = opts.pipeline.empty() ? passes::defaultPipeline() : opts.pipeline;
  Status s = passes::runPipeline(*r.graph, pipeline, ctx);
  if (!s)
    return std::move(s.error().inFile(opts.modelPath));
  r.stats = ctx.stats;
  if (opts.printIr && opts.irOut)
    ir::printGraph(*opts.irOut, *r.graph, ir::PrintOptions{16});

  auto prog = lower::lowerGraphToCpu(*r.graph);
  if (!prog)
    return std::move(prog.error().inFile(opts.modelPath));
  r.program = prog.take();
  if (opts.printLir && opts.irOut)
    lir::printProgram(*opts.irOut, r.program);

  codegen::EmitOptions eo;
  eo.prefix = opts.prefix;
  auto files = codegen::emitC(r.program, eo);
  if (!files)
    return std::move(files.error().inFile(opts.modelPath));
  r.files = files.take();
  // The register map of the target, for firmware engineers to read.
  r.files.push_back({target::cIdentifier(r.target.name) + "_regs.h",
                     target::emitRegisterHeader(r.target)});
  return r;
}

} // namespace npucc::driver
