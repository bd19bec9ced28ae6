//===- CodeSize.h - Code bytes and stack of the runtime a program links ---===//
//
// The flash and stack side of the compile-time memory fit: per function of
// runtime/kernels and the NPU runtime, its .text bytes and own stack frame on
// the reference microcontrollers (Cortex-M4F, RV32IMAC; -Os and -O2) and its
// direct calls, measured by bench/code_size.py (lib/lower/cpu/CodeSize.def).
// A program's runtime code is the closure of the functions it calls (what
// --gc-sections keeps); its stack the deepest call path from a called
// function plus the generated run function's frame; the generated model
// file's code is a fitted per-call term. Error against linked images: docs/
// benchmarks.md, "Memory fit".
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npucc::lower {

/// The four measured configurations, in CodeSize.def's column order.
enum class McuConfig { CortexM4Os, CortexM4O2, Rv32Os, Rv32O2, Count };

/// "cortex-m4" (= -Os), "cortex-m4-O2", "rv32", "rv32-O2"; false for other names.
bool parseMcuConfig(const std::string &name, McuConfig &out);
const char *mcuConfigName(McuConfig c);

struct CodeEstimate {
  uint64_t runtimeText = 0;   // closure of the called runtime functions (.text)
  uint64_t runtimeRodata = 0; // read-only data of the files that closure touches
  uint64_t runtimeRam = 0;    // .data + .bss of those files (e.g. the stream player)
  uint64_t modelText = 0;     // the generated model file: per_call * calls
  uint64_t stack = 0;         // deepest path from a called function + the run frame
  size_t functions = 0;       // functions in the closure
  /// Called names the table does not hold (libc, libm, compiler helpers:
  /// memcpy, expf, __aeabi_*), not counted.
  std::vector<std::string> external;
};

/// Estimate for a program calling `entries` (kernel callees, memcpy, ...)
/// through `calls` call sites, linking every function of `wholeFiles`
/// (file names as in runtime/, e.g. "npucc_hal.c") besides.
CodeEstimate estimateCode(const std::vector<std::string> &entries, size_t calls,
                          const std::vector<std::string> &wholeFiles, McuConfig c);

/// Whether the table knows `file` (a runtime/kernels or runtime/hal .c file).
bool codeSizeKnowsFile(const std::string &file);

} // namespace npucc::lower
