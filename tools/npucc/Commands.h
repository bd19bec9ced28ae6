//===- Commands.h - The npucc subcommands ---------------------------------===//
#pragma once

#include "npucc/driver/Driver.h"

#include <string>
#include <vector>

namespace npucc::tool {

/// Options shared by every command that compiles a model.
struct CommonCompileFlags {
  std::vector<std::string> shapes; // NAME=1x3x224x224
  std::string passes;
  std::vector<std::string> printAfter;
  bool printIr = false;
  bool printLir = false;
  std::string prefix = "model";
  std::string target = "npu-default"; // built-in name or JSON file; "list" lists built-ins
};

/// Fills driver options from the flags; errors for malformed --shape.
Result<driver::CompileOptions> makeCompileOptions(const std::string &model,
                                                  const CommonCompileFlags &f);

struct CompileFlags {
  std::string model;
  std::string outDir;
  bool emitTest = false;
  std::string dataDir;
  double tolerance = 1e-4;
  unsigned seed = 1;
};
int runCompile(const CommonCompileFlags &common, const CompileFlags &flags);

struct CheckFlags {
  std::string modelDir;
  double tolerance = 1e-4;
  std::string jsonPath;
  std::string cc = "cc";
  std::string cflags = "-O2";
  bool sanitize = false;
  std::string keepDir; // keep the build here instead of a temp dir
};
int runCheck(const CommonCompileFlags &common, const CheckFlags &flags);

struct OptFlags {
  std::string input;
  bool noElide = false;
};
int runOpt(const CommonCompileFlags &common, const OptFlags &flags);

/// `--emit-runtime DIR`: the no-OS NPU runtime of a target (+ simulator with `sim`).
int runEmitRuntime(const std::string &target, const std::string &dir, bool sim);

/// Prints the error (one line + notes) to stderr prefixed with "npucc: ".
int reportError(const Diagnostic &d);

} // namespace npucc::tool
