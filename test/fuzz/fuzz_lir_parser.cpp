//===- fuzz_lir_parser.cpp - libFuzzer target: textual loop IR ------------===//
//
// The input is textual loop IR (what `npucc --print-lir` prints), parsed by
// lir::parseProgram; a program that parses is printed again.
//
//===----------------------------------------------------------------------===//
#include "npucc/lir/Program.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  auto p = npucc::lir::parseProgram(text, "fuzz.lir");
  if (p)
    (void)npucc::lir::printProgram(*p);
  return 0;
}
