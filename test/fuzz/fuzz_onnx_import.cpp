//===- fuzz_onnx_import.cpp - libFuzzer target: ONNX bytes to C -----------===//
//
// The input is a serialized ModelProto. It goes through the whole importer
// (checker, version converter, shape inference), the verifier, the default
// pass pipeline, the CPU lowering and the C emitter, as `npucc MODEL -o OUT`
// does minus the disk. Errors are fine; crashes, hangs, leaks and undefined
// behaviour are not. External data is looked up in a folder that does not
// exist, so an input cannot read files.
//
//===----------------------------------------------------------------------===//
#include "npucc/codegen/CEmitter.h"
#include "npucc/ir/Verifier.h"
#include "npucc/lower/CpuLowering.h"
#include "npucc/onnx/Importer.h"
#include "npucc/passes/Pass.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace npucc;
  std::string bytes(reinterpret_cast<const char *>(data), size);
  auto g = onnx::importModelBytes(bytes, "/nonexistent-npucc-fuzz/model.onnx");
  if (!g || !ir::verifyGraph(**g))
    return 0;
  passes::PassContext ctx;
  if (!passes::runPipeline(**g, passes::defaultPipeline(), ctx))
    return 0;
  auto prog = lower::lowerGraphToCpu(**g);
  if (!prog)
    return 0;
  auto files = codegen::emitC(*prog, codegen::EmitOptions{});
  (void)files;
  return 0;
}
