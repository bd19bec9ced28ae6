//===- BuildFragments.h - OUT/ as a build component -----------------------===//
//
// The files that make OUT/ a component of a firmware build: a CMake fragment
// (<prefix>.cmake: a STATIC library target named after the prefix, and the
// shared npucc_runtime library), a Make fragment (<prefix>.mk: <PREFIX>_SRCS,
// <PREFIX>_CFLAGS, <PREFIX>_LDLIBS, NPUCC_RUNTIME_SRCS) and a
// generated README.md (API, memory use, section macros, flags, how to build
// and how to run on the simulator and on silicon). They depend only on their
// inputs: re-runs give byte-identical files.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/codegen/CEmitter.h"

#include <cstdint>
#include <string>
#include <vector>

namespace npucc::codegen {

struct FragmentOptions {
  std::string prefix = "model";
  std::string version;    // npucc's version, named in the files' headers
  std::string target;     // "cpu" or the NPU description's name
  std::string regsHeader; // "<id>_regs.h" when OUT/ has the register map, else ""
  uint64_t npuCommands = 0;
  uint64_t npuStreamBytes = 0;
  bool externalArena = false; // --arena external: the init/run API with a context
};

/// OUT/<prefix>.cmake, OUT/<prefix>.mk and OUT/README.md for the program `p`
/// whose files (as written to OUT/) are `files`. The model's sources are
/// <prefix>.c and <prefix>_weights.c; every other .c/.h except the test
/// program <prefix>_test.c (it has a main, named separately) is a shared
/// runtime file (docs/output.md, "Several models in one image").
std::vector<EmittedFile> emitBuildFragments(const lir::Program &p,
                                            const std::vector<EmittedFile> &files,
                                            const FragmentOptions &opts);

} // namespace npucc::codegen
