//===- Driver.h - The compile pipeline as a library call ------------------===//
//
// import (lib/onnx) -> passes (lib/passes) -> lowering (lib/lower) -> C
// emission (lib/codegen). The npucc tool and the tests both call this.
// The target description (lib/target) is loaded first, so a bad --target
// fails before any work; its register-map header is one of the files.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/codegen/CEmitter.h"
#include "npucc/ir/Graph.h"
#include "npucc/lir/Program.h"
#include "npucc/onnx/Importer.h"
#include "npucc/passes/Pass.h"
#include "npucc/support/Result.h"
#include "npucc/target/Target.h"

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace npucc::driver {

struct CompileOptions {
  std::string modelPath;
  onnx::ImportOptions import;
  std::string pipeline;                // empty: passes::defaultPipeline()
  std::vector<std::string> printAfter; // pass names or "all"
  std::ostream *irOut = nullptr;       // where --print-ir / --print-after write
  bool printIr = false;                // final graph IR
  bool printLir = false;               // loop IR
  std::string prefix = "model";
  std::string target = "npu-default"; // built-in name or JSON file (lib/target)
};

struct CompileResult {
  std::unique_ptr<ir::Graph> graph; // after the pass pipeline
  lir::Program program;
  std::vector<codegen::EmittedFile> files;
  std::map<std::string, int64_t> stats;
  target::TargetDesc target; // the loaded NPU description
};

/// Runs the whole pipeline up to emitted files (nothing is written to disk).
Result<CompileResult> compileModel(const CompileOptions &opts);

/// Valid C identifier prefix check for --prefix.
bool isValidPrefix(const std::string &p);

} // namespace npucc::driver
