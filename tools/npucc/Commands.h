//===- Commands.h - The npucc subcommands ---------------------------------===//
#pragma once

#include "npucc/driver/Driver.h"

#include <cstdint>
#include <string>
#include <vector>

namespace npucc::tool {

/// Options shared by every command that compiles a model.
struct CommonCompileFlags {
  std::vector<std::string> shapes; // NAME=1x3x224x224
  std::string passes;
  bool passesGiven = false; // --passes given (even empty)
  std::vector<std::string> printAfter;
  bool printIr = false;
  bool printLir = false;
  std::string prefix = "model";
  std::string target = "npu-default"; // built-in name or JSON file; "list" lists built-ins
  // Post-training quantization (docs/quantization.md, "Calibration").
  std::string quantize;             // --quantize int8
  std::string calibDir;             // --calib DIR
  std::string calibMethod = "auto"; // --calib-method minmax|percentile|entropy|auto
  double calibPercentile = 99.99;   // --calib-percentile
  int calibRandom = 0;              // --calib-random N
  std::string emitQdq;              // --emit-qdq FILE.onnx
  std::string requant = "auto";     // --requant auto|exact|fp32
  std::string cpuKernels = "fast";  // --cpu-kernels fast|reference
  std::string patches = "off";      // --patches off|auto|always
  std::string npuHandoff = "on";    // --npu-handoff on|off
  std::string io = "float";         // --io float|int8
  bool noEqualize = false;          // --no-equalize
  std::string arena = "static";     // --arena static|external
};

/// `--passes=LIST`: every comma-separated entry must be a name (an empty
/// entry, e.g. `--passes=a,,b` or `--passes=`, is an error naming it).
Status checkPassList(const std::string &list);
/// `--seed TEXT`: a decimal integer from 0 to 2^64-1 (no sign, no junk).
Result<uint64_t> parseSeed(const std::string &text);

/// Fills driver options from the flags; errors for malformed --shape.
Result<driver::CompileOptions> makeCompileOptions(const std::string &model,
                                                  const CommonCompileFlags &f);

struct CompileFlags {
  std::string model;
  std::string outDir;
  bool emitTest = false;
  std::string dataDir;
  double tolerance = 1e-4;
  uint64_t seed = 1;
  std::string evalDir;       // --eval DIR: samples for the accuracy report
  bool reportLayers = false; // --report-layers
  bool explain = false;      // --explain: placement and reasons, no files
  // The compile-time memory fit (docs/output.md, "Memory fit"): --flash/--ram limits
  // ("" = none), the microcontroller configuration of the estimate.
  std::string flash, ram;
  std::string mcu = "cortex-m4";
  std::string memoryMap; // --memory-map FILE.json (driver/MemoryMap.h)
};
int runCompile(const CommonCompileFlags &common, const CompileFlags &flags);
/// `npucc MODEL --explain`: placement per op, reasons for CPU ops.
int runExplain(const CommonCompileFlags &common, const CompileFlags &flags);

struct CheckFlags {
  std::string modelDir;
  double tolerance = 1e-4;
  std::string jsonPath;
  std::string cc = "cc";
  std::string cflags = "-O2";
  bool sanitize = false;
  std::string keepDir; // keep the build here instead of a temp dir
  // Quantized programs (docs/quantization.md, "Checking quantized programs").
  double toleranceSteps = 1;        // quantized outputs vs golden, in steps
  std::string interpCheck = "auto"; // C vs integer interpreter: auto|on|off
  std::string progress = "auto";    // progress lines on stderr: auto (a terminal) | on | off
  std::string reportDir; // --report DIR: report.json and report.html with the simulator's trace
};
/// `npucc check`'s exit status: 0 every output passed, 1 an output (or the simulator's hazard
/// check) disagreed, kCheckError nothing could be compared (bad flags, a missing or bad
/// model or data set, a failed build or run). --json is written in every case, with
/// "status": "pass" | "mismatch" | "error".
int runCheck(const CommonCompileFlags &common, const CheckFlags &flags);
constexpr int kCheckError = 2;
/// A flag `npucc check` could not parse (already printed): writes the --json error report
/// when `jsonPath` is known; kCheckError.
int checkFlagError(const std::string &message, const std::string &jsonPath);
/// A host-only main: `prog in_0.bin ... out_0.bin ...` (counts from the header).
/// With `sim`, the program's NPU commands run on the host simulator of the
/// target (npucc_sim.h, sleeping until the next completion between status
/// polls), whose figures go to sim.txt: cycles, MAC utilisation, system-memory
/// bytes read and written, hazards (1 when the simulator failed the run) and
/// its error.
std::string checkHarnessSource(const std::string &prefix, bool sim, bool externalArena = false);

struct OptFlags {
  std::string input;
  bool noElide = false;
};
int runOpt(const CommonCompileFlags &common, const OptFlags &flags);
/// `npucc opt FILE.lir`: loop-IR passes on textual loop IR.
int runOptLir(const CommonCompileFlags &common, const OptFlags &flags);

/// `npucc sweep MODEL... [--target BASE] --axis NAME=V1,V2 --set /path=V1,V2 [-j N]
/// [--check [--check-every K]] [--csv F] [--json F] [--html F]` (Sweep.cpp, docs/sweep.md).
struct SweepFlags {
  std::vector<std::string> models; // ONNX files or model folders
  std::vector<std::string> axes;   // --axis NAME=V1,V2,...
  std::vector<std::string> sets;   // --set /json/path=V1,V2,...
  int jobs = 1;
  bool check = false;
  int checkEvery = 1; // with --check: every K-th point
  std::string csv, json, html;
  std::string workDir;           // --work DIR: keep the points' files here
  std::string progress = "auto"; // auto (a terminal) | on | off
};
/// 0: every point ran (refused and failed points are results); 1: a checked point did not
/// pass its check; 2: the sweep could not run (bad flags, base description or model).
int runSweep(const CommonCompileFlags &common, const SweepFlags &flags);

/// `--emit-runtime DIR`: the no-OS NPU runtime of a target (+ simulator with `sim`).
int runEmitRuntime(const std::string &target, const std::string &dir, bool sim);

/// `npucc target import --svd|--ipxact FILE [--peripheral NAME] -o DESC.json` and
/// `npucc target export --svd FILE [--target T]` (TargetCmd.cpp).
struct TargetImportFlags {
  std::string svd, ipxact, peripheral, out;
};
struct TargetExportFlags {
  std::string svd;
};
int runTargetImport(const TargetImportFlags &f);
int runTargetExport(const TargetExportFlags &f, const std::string &targetName);

/// Prints the error (one line + notes) to stderr prefixed with "npucc: ".
int reportError(const Diagnostic &d);
/// `--cc`/`--cflags` text split at whitespace (no shell quoting).
std::vector<std::string> splitArgs(const std::string &text);
/// Runs argv[0] (PATH search) in `cwd` with stdout and stderr to `logPath`,
/// without a shell; the exit status, 128+signal, or 127 if it cannot run.
int runProcess(const std::vector<std::string> &argv, const std::string &cwd,
               const std::string &logPath);
/// runProcess's status in words: "exit status 3", "killed by signal 11 (SIGSEGV)".
std::string exitText(int status);

/// `--emit-qdq FILE`: writes the QDQ form of a quantized compile (support/
/// FileWrite.h: every failed write is an error naming the file).
Status writeQdq(const driver::CompileResult &cr, const std::string &path);

/// Prints a compile's notes and warnings to stderr ("npucc: note: ...").
void printNotes(const driver::CompileResult &cr);

} // namespace npucc::tool
