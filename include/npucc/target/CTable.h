//===- CTable.h - C forms of a target description -------------------------===//
//
// From a TargetDesc the compiler produces
//  - an in-memory `npucc_target_desc` table (runtime/hal/npucc_desc.h) for
//    host-side use (tests, the simulator driven from C++);
//  - C99 source text defining the same table, which firmware and the
//    simulator consume (emitCTableSource);
//  - a register-map header for firmware engineers (emitRegisterHeader):
//      #define NPU_DEFAULT_REG_DMA_SRC_OFFSET 0x08u
//      #define NPU_DEFAULT_DMA_SIZE_LENGTH_SHIFT 0u ... _MASK / _WIDTH
//    with doc comments saying which field each command writes.
// Nothing here knows a particular NPU: names are derived from the target name.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/target/Target.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct npucc_target_desc;

namespace npucc::target {

/// An owning in-memory npucc_target_desc built from a TargetDesc.
class CTable {
public:
  explicit CTable(const TargetDesc &t);
  ~CTable();
  CTable(const CTable &) = delete;
  CTable &operator=(const CTable &) = delete;

  const npucc_target_desc *get() const;
  const TargetDesc &target() const;

  /// Parameter vector (indexed by paramId()) holding every default.
  static std::vector<int64_t> defaultParams();
  /// Cycles the simulator charges for one command of kind `kind`
  /// (commandKindId) with these parameters (runtime/hal/npucc_timing.h);
  /// *macs receives the multiply-accumulates.
  uint64_t commandCycles(int kind, const std::vector<int64_t> &params,
                         uint64_t *macs = nullptr) const;

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

/// Bytes of the const tables <id>_target.c holds for `d` (host struct layout:
/// an upper bound of a 32-bit microcontroller's; lib/target/CTableSize.cpp).
uint64_t descTableBytes(const npucc_target_desc &d);

/// "npu-default" -> "npu_default" (C identifier, lower case).
std::string cIdentifier(const std::string &name);
/// "npu-default" -> "NPU_DEFAULT" (macro prefix).
std::string macroPrefix(const std::string &name);

/// The files a program for this NPU links besides the runtime sources:
/// <id>_target.c/.h (the description table), npucc_target.h (NPUCC_TARGET,
/// the table under a fixed name) and <id>_regs.h (the register map).
std::vector<std::pair<std::string, std::string>> emitTargetFiles(const TargetDesc &t);

/// The register-map header text. Includes a guard and only <stdint.h>-free
/// macros, so it compiles as C99 on its own.
std::string emitRegisterHeader(const TargetDesc &t);
/// C99 source defining `const npucc_target_desc npucc_target_<id>` (includes
/// "npucc_desc.h"). With `declOnly`, the matching header text instead.
std::string emitCTableSource(const TargetDesc &t);
std::string emitCTableHeader(const TargetDesc &t);

} // namespace npucc::target
