//===- fuzz_target_json.cpp - libFuzzer target: NPU description loader ----===//
//
// The input is the text of a target description (docs/target.md), parsed
// and validated by the public npucc::target::parseTargetJson; a description
// that loads is also turned into its register-map header.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  auto t = npucc::target::parseTargetJson(text, "fuzz.json");
  if (t)
    (void)npucc::target::emitRegisterHeader(*t);
  return 0;
}
