//===- CEmitter.h - Print a loop-IR Program as a static C99 program -------===//
#pragma once

#include "npucc/ir/Tensor.h"
#include "npucc/lir/Program.h"
#include "npucc/support/Result.h"

#include <map>
#include <string>
#include <vector>

namespace npucc::codegen {

struct EmittedFile {
  std::string path; // relative to OUT/
  std::string contents;
};

struct EmitOptions {
  std::string prefix = "model"; // C identifier prefix: model.h, model_run()
  /// Extra headers #included by <prefix>.c after the kernel headers (e.g. a
  /// header declaring callees that are not runtime kernels; used by tests).
  std::vector<std::string> extraIncludes;
  /// `--arena external`: no static arena; <prefix>_init(ctx, arena, bytes),
  /// <prefix>_run(ctx, ...), <prefix>_last_error and a section macro on every
  /// constant table (docs/output.md, "Caller-owned memory").
  bool externalArena = false;
  /// `--memory-map`: every constant table, stream table and the static arena
  /// get their section macro, defaulting to the section `<sections>.<class>`
  /// (e.g. ".npucc.kws.const") that OUT/<prefix>_sections.ld places
  /// (driver/MemoryMap.h). Empty: the macros default to nothing.
  std::string sections;
};

/// What the emission cost, for the compile summary.
struct EmitStats {
  uint64_t npuCommands = 0;
  uint64_t npuStreamBytes = 0; // flash of the NPU command stream tables
  uint64_t tableBytes = 0;     // kernel parameter and requantization tables (<prefix>_ia*, _fa*)
};

/// Header (API), source (run function), weights, and the used runtime files.
Result<std::vector<EmittedFile>> emitC(const lir::Program &p, const EmitOptions &opts,
                                       EmitStats *stats = nullptr);

/// A self-contained test program `<prefix>_test.c` embedding inputs and
/// expected outputs; exits non-zero when an output differs by more than
/// `relTol` * max|expected|.
EmittedFile emitTestProgram(const lir::Program &p, const EmitOptions &opts,
                            const std::vector<ir::Tensor> &inputs,
                            const std::vector<ir::Tensor> &expected, double relTol);

/// C statements (a block) that print, to `stream` (a FILE * expression), where the
/// NPU command stream of a failed run stopped: the op of the failing layer's
/// stream, its command, the refused parameter with its value and register
/// field, or the engine's device error code (npucc_stream_last_fault). Needs
/// npucc_stream.h and npucc_target.h; prints nothing when no stream failed.
std::string npuFaultReport(const std::string &stream);

/// Whether `dir` may be written: its parent exists, and it does not exist,
/// is empty, or holds exactly the files an earlier npucc run listed in its
/// manifest (`.npucc-files`). A folder npucc did not write is never replaced.
Status checkOutputDir(const std::string &dir);

/// Writes files (and the manifest) into a temporary sibling of `dir`, then
/// renames it over `dir`: a failure never leaves a half-written directory.
/// Refuses what checkOutputDir refuses.
Status writeOutputDir(const std::string &dir, const std::vector<EmittedFile> &files);

} // namespace npucc::codegen
