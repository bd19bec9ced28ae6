//===- MemoryFit.h - Does the compiled program fit the microcontroller? ---===//
//
// The compile-time memory fit (`--flash SIZE --ram SIZE`, `--mcu NAME`):
// flash = constants (weights, requantization and other tables; exact) + NPU
// command stream tables (exact) + the description's tables (upper bound) +
// runtime code and read-only data (the closure of the called functions,
// lower::estimateCode) + the generated model file's code (fitted per call);
// RAM = arena (exact) + the runtime's .data/.bss + a stack estimate. A
// budget over a limit is refused with this breakdown before anything is
// written. libc, libm and compiler helpers are named, not counted. Error of
// the estimates against linked images: docs/benchmarks.md, "Memory fit".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/driver/Driver.h"
#include "npucc/lower/CodeSize.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace npucc::driver {

struct MemoryItem {
  std::string what;
  uint64_t bytes = 0;
  bool estimate = false; // false: counted exactly from the emitted program
  /// What it is, for a memory map's `place` (driver/MemoryMap.h): code, const,
  /// npu_const, arena, data or stack.
  std::string cls;
};

struct MemoryBudget {
  std::string mcu; // lower::mcuConfigName
  std::vector<MemoryItem> flash, ram;
  std::vector<std::string> external; // called, not counted (memcpy, expf, ...)
  uint64_t flashBytes() const;
  uint64_t ramBytes() const;
};

MemoryBudget estimateMemory(const CompileResult &r, lower::McuConfig c);

/// "" when the budget fits both limits (0 = no limit); else the reason with
/// the whole breakdown.
std::string memoryFitProblem(const MemoryBudget &b, uint64_t flashLimit, uint64_t ramLimit);

/// The breakdown, one line per item (report table, refusals).
std::string budgetText(const MemoryBudget &b);
nlohmann::json budgetJson(const MemoryBudget &b);

/// "65536", "64K", "64k", "1M", "0x10000" -> bytes (K = 1024); false on
/// anything else (zero, overflow, junk).
bool parseByteSize(const std::string &s, uint64_t &out);

} // namespace npucc::driver
