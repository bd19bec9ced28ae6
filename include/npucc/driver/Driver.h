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
#include "npucc/lower/NpuLowering.h"
#include "npucc/onnx/Importer.h"
#include "npucc/passes/Pass.h"
#include "npucc/support/Result.h"
#include "npucc/target/Target.h"

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace npucc::driver {

/// Most samples --calib-random may ask for (also bounded to 2 GiB of inputs).
inline constexpr int kMaxRandomSamples = 1000;

/// `--quantize int8 --calib DIR ...` (docs/quantization.md, "Calibration").
struct QuantOptions {
  std::string mode;            // "" (float model as given) or "int8"
  std::string calibDir;        // --calib DIR: sample inputs (quant/Samples.h)
  std::string method = "auto"; // minmax | percentile | entropy | mse | auto (best SNR)
  double percentile = 99.99;   // --calib-percentile
  int randomSamples = 0;       // --calib-random N: N seeded N(0,1) samples (smoke tests)
  unsigned randomSeed = 1;
  bool equalize = true;             // channel equalization (quant/Equalize.h); --no-equalize
  std::ostream *progress = nullptr; // calibration progress bar (stderr)
  bool progressTty = false;         // '\r'-updated bar instead of plain lines
};

struct CompileOptions {
  std::string modelPath;
  onnx::ImportOptions import;
  std::string pipeline;                // empty: passes::defaultPipeline()
  std::vector<std::string> printAfter; // pass names or "all"
  std::ostream *irOut = nullptr;       // where --print-ir / --print-after write
  bool printIr = false;                // final graph IR
  bool printLir = false;               // loop IR
  std::string prefix = "model";
  std::string target = "npu-default"; // built-in name, JSON file (lib/target) or "cpu"
  QuantOptions quant;
  // Requantization rounding of integer Conv/Gemm/MatMul (quant/Rounding.h): "auto" keeps
  // what the importer chose (fp32 for QLinearConv/QLinearMatMul), "exact" or "fp32"
  // sets it for every such node.
  std::string requant = "auto";
  // int8 CPU kernels (lower::CpuLowerOptions::fastKernels): "fast" or "reference".
  std::string cpuKernels = "fast";
  // Patch-based execution of the leading int8 or float layers on the CPU
  // (lower::CpuLowerOptions::patches; docs/kernels.md, "Patches"): "off", "auto"
  // (row stripes where the cost model finds a smaller arena within the budget) or
  // "always" (also when the arena shrinks by less than 2%).
  std::string patches = "off";
  // Intermediates handed from one NPU layer to the next in the scratchpad
  // (lower::NpuLowerOptions::handoff; docs/npu.md, "Hand-off"): --npu-handoff on|off.
  bool npuHandoff = true;
  // "static" (an arena inside <prefix>.c) or "external" (the caller's: codegen::EmitOptions).
  std::string arena = "static";
  // --memory-map: the section name prefix of the emitted section macros (".npucc.<prefix>";
  // codegen::EmitOptions::sections), "" without a map.
  std::string sections;
  // "float" (the model's inputs and outputs) or "int8" (passes: io-int8).
  std::string io = "float";
  // Keep CompileResult::importedGraph and preTargetGraph (npucc check's interpreter
  // comparisons at earlier stages of the pipeline).
  bool keepStageGraphs = false;
};

struct CompileResult {
  std::unique_ptr<ir::Graph> graph; // after the pass pipeline
  lir::Program program;
  std::vector<codegen::EmittedFile> files;
  std::map<std::string, int64_t> stats;
  target::TargetDesc target;   // the loaded NPU description
  bool npu = false;            // compiled for target (false: --target cpu)
  bool npuExactForFp32 = true; // false with --requant fp32 (target::LegalityOptions)
  bool npuFp32ForExact = true; // false with --requant exact
  std::unique_ptr<lower::NpuLowering> npuLowering; // its per-layer plans
  codegen::EmitStats emitStats;
  // Quantized compiles (quant.mode == "int8"): `graph` is the typed int8 graph.
  std::unique_ptr<ir::Graph> floatGraph; // float graph after the float passes
  std::unique_ptr<ir::Graph> qdqGraph;   // the QDQ form (the tool's --emit-qdq writes it)
  std::vector<std::string> floatOps;     // ops left in float, "name (Op)"
  std::string calibMethod;               // the method used (auto resolved)
  /// --quantize on an NPU whose requantizer constrains the parameters
  /// (target::quantRules): "node (Op): per-tensor weights (why)" per node the
  /// constraints changed, and the graph quantized without them (same ranges),
  /// for the accuracy report's comparison. Both empty when nothing changed.
  std::vector<std::string> quantConstraints;
  std::unique_ptr<ir::Graph> unconstrainedGraph;
  int equalized = 0;                         // activations rescaled by channel equalization
  std::vector<std::string> warnings;         // e.g. --calib-random accuracy warning
  std::vector<std::string> notes;            // e.g. a batch dim defaulted to 1 (ImportOptions)
  int64_t requantExact = 0, requantFp32 = 0; // integer Conv/Gemm/MatMul per rounding
  // With CompileOptions::keepStageGraphs (else null):
  // - importedGraph: the graph as imported, before any pass (null with --quantize: the
  //   imported graph is the float model);
  // - preTargetGraph: after the graph passes (and the quantization), before the target's
  //   rewrites (npu-partition: placement, NHWC layout, permuted constants), with
  //   npu-partition's one deliberate arithmetic change applied (a node imported with fp32
  //   requantization that runs on the NPU rounds exactly), so that it computes bit for bit
  //   what the final graph computes unless a rewrite is wrong. Null for --target cpu and
  //   when the CPU fallback leaves the graph as it was (it equals `graph` then).
  // - modelArithGraph: preTargetGraph without that change (every node with the model's own
  //   requantization), for npucc check's per-layer distance (LayerDistance.h); null when
  //   the change touched no node or preTargetGraph is null.
  // - preTargetNpu: preTargetGraph's nodes (by index) that npu-partition placed on the NPU,
  //   with their NPU operation ("conv", "matmul", ...).
  std::unique_ptr<ir::Graph> importedGraph;
  std::unique_ptr<ir::Graph> preTargetGraph;
  std::unique_ptr<ir::Graph> modelArithGraph;
  std::vector<std::pair<size_t, std::string>> preTargetNpu;
};

/// Loads `--target NAME|FILE.json` like target::loadTarget, but reads a file
/// through readFileLimited (kMaxTargetFileBytes), so `--target /dev/zero`
/// fails at once. Every command that takes --target (compile, check, opt,
/// --emit-runtime) loads it through here.
Result<target::TargetDesc> loadTarget(const std::string &nameOrPath);

/// Runs the whole pipeline up to emitted files (nothing is written to disk).
Result<CompileResult> compileModel(const CompileOptions &opts);

/// Why `p` cannot be the --prefix of the generated API, or "" when it can: it
/// must be a C identifier, not a keyword, not reserved (leading underscore),
/// and outside the names the runtime uses (npucc_*, NPUCC_*, any case) and,
/// when `targetId` is given (target::cIdentifier of the NPU's name), outside
/// that target's register-map and table names (<id>, <id>_*, any case).
std::string prefixProblem(const std::string &p, const std::string &targetId);

} // namespace npucc::driver
