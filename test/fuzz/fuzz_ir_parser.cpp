//===- fuzz_ir_parser.cpp - libFuzzer target: textual graph IR ------------===//
//
// The input is textual graph IR (docs/ir.md), as `npucc opt FILE.ir` reads
// it: parsed, verified, run through the default pass pipeline and printed.
//
//===----------------------------------------------------------------------===//
#include "npucc/ir/Parser.h"
#include "npucc/ir/Printer.h"
#include "npucc/ir/Verifier.h"
#include "npucc/passes/Pass.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace npucc;
  std::string text(reinterpret_cast<const char *>(data), size);
  auto g = ir::parseGraph(text, "fuzz.ir");
  if (!g || !ir::verifyGraph(**g))
    return 0;
  passes::PassContext ctx;
  if (passes::runPipeline(**g, passes::defaultPipeline(), ctx))
    (void)ir::printGraph(**g);
  return 0;
}
