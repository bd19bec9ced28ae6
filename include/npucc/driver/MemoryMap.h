//===- MemoryMap.h - The microcontroller's memory regions (--memory-map) --===//
//
// A memory map names the regions of the microcontroller and what each holds:
//
//   {"regions": [{"name": "FLASH", "origin": "0x08000000", "length": "1M"},
//                {"name": "SRAM",  "origin": "0x20000000", "length": "128K"}],
//    "place": {"code": "FLASH", "const": "FLASH", "npu_const": "FLASH",
//              "arena": "SRAM", "data": "SRAM", "stack": "SRAM"}}
//
// `place` assigns each class of the memory budget (driver::MemoryItem::cls)
// to a region (`npu_const` defaults to `const`'s region). npucc refuses a
// program whose items overflow a region (with the breakdown per region),
// and for an NPU program an arena or NPU constants region the description's
// system-memory windows do not cover (the NPU sees the CPU's addresses), and
// writes OUT/<prefix>_sections.ld, a linker-script fragment placing npucc's
// sections (.npucc.<prefix>.const/.table/.stream/.npu_const/.arena) in their
// regions. Errors name the file and the JSON path.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/driver/MemoryFit.h"
#include "npucc/support/Result.h"
#include "npucc/target/Target.h"

#include <string>
#include <vector>

namespace npucc::driver {

struct MemoryRegion {
  std::string name;
  uint64_t origin = 0, length = 0;
};

struct MemoryMap {
  std::string file;
  std::vector<MemoryRegion> regions;
  /// Class -> index into regions: code, const, npu_const, arena, data, stack.
  std::vector<std::pair<std::string, size_t>> place;
  const MemoryRegion *regionOf(const std::string &cls) const;
};

/// The classes `place` may name, in the order the fragment places them.
const std::vector<std::string> &memoryClasses();

Result<MemoryMap> parseMemoryMap(const std::string &path);

/// "" when every region holds what is placed in it and, for an NPU program
/// (`npu` non-null), the arena and NPU constants regions lie in system
/// windows of the description (the arena's in a writable one); else the
/// reason with the breakdown per region.
std::string memoryMapProblem(const MemoryMap &m, const MemoryBudget &b,
                             const target::TargetDesc *npu);

/// The linker-script fragment OUT/<prefix>_sections.ld (INCLUDE it inside the
/// firmware's SECTIONS, or pass it to the linker beside the main script).
std::string linkerFragment(const MemoryMap &m, const std::string &prefix);

} // namespace npucc::driver
