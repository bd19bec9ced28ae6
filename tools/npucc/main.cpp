//===- main.cpp - npucc command-line driver -------------------------------===//
//
//   npucc MODEL.onnx -o OUT/ [--prefix P] [--shape N=1x3x8x8] [--emit-test [--data DIR]]
//   npucc check MODEL_DIR [compile flags] [--tolerance REL] [--json FILE]
//               [--tolerance-steps N] [--interp-check auto|on|off]
//   npucc opt INPUT.ir|MODEL.onnx|PROGRAM.lir [--passes=a,b] [--print-after=p|all]
//   npucc --list-ops | --list-passes | --target list | --version | --help
//   npucc [--target T] --emit-runtime DIR [--with-sim]
//   npucc target import --svd FILE.svd|--ipxact FILE.xml [--peripheral NAME] -o DESC.json
//   npucc target export --svd FILE.svd [--target T]
//   npucc sweep MODEL... [--target BASE] --axis NAME=V1,V2 [--set /path=V1,V2] [-j N]
//               [--check [--check-every K]] [--csv F] [--json F] [--html F]
//   (every compiling command takes --target NAME|FILE.json, default npu-default)
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "npucc/driver/Sweep.h"
#include "npucc/ir/Op.h"
#include "npucc/lower/LirPass.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

using namespace npucc;

namespace {

void addCommonFlags(CLI::App &app, tool::CommonCompileFlags &f) {
  app.add_option("--shape", f.shapes, "Bind a dynamic input shape: NAME=1x3x224x224")
      ->type_name("NAME=DIMS");
  app.add_option_function<std::string>(
         "--passes",
         [&f](const std::string &v) {
           f.passes = v;
           f.passesGiven = true;
         },
         "Comma-separated graph passes instead of the default pipeline (--list-passes); a "
         "compile runs fold-qdq first when the list leaves it out")
      ->type_name("a,b,c")
      ->expected(0, 1); // so that `--passes=` reaches checkPassList (an empty entry)
  app.add_option("--print-after", f.printAfter, "Print the IR after PASS (or 'all') to stderr")
      ->delimiter(',');
  app.add_flag("--print-ir", f.printIr, "Print the graph IR after the passes to stderr");
  app.add_flag("--print-lir", f.printLir, "Print the loop IR to stderr");
  app.add_option("--prefix", f.prefix, "C identifier prefix of the generated API")
      ->capture_default_str();
  app.add_option("--target", f.target,
                 "NPU description: a built-in name or a JSON file ('--target list' lists them)")
      ->capture_default_str();
  app.add_option("--quantize", f.quantize, "Quantize a float model: int8 (needs --calib DIR)")
      ->check(CLI::IsMember({"int8"}));
  app.add_option("--calib", f.calibDir,
                 "Calibration inputs: .npy/.pb files or one sub-folder per sample");
  app.add_option("--calib-method", f.calibMethod,
                 "minmax | percentile | entropy | mse | auto (best output SNR of the four)")
      ->capture_default_str();
  app.add_option("--calib-percentile", f.calibPercentile,
                 "Percentile for --calib-method percentile")
      ->capture_default_str();
  app.add_option("--calib-random", f.calibRandom,
                 "Calibrate on N seeded random N(0,1) inputs (smoke tests only)");
  app.add_option("--emit-qdq", f.emitQdq, "Also write the quantized model as a QDQ ONNX file");
  app.add_flag("--no-equalize", f.noEqualize,
               "With --quantize: no channel equalization before calibration");
  app.add_option("--requant", f.requant,
                 "Rounding of integer Conv/Gemm/MatMul: auto (fp32 for QLinearConv/"
                 "QLinearMatMul) | exact | fp32 (ONNX Runtime's float32 arithmetic)")
      ->check(CLI::IsMember({"auto", "exact", "fp32"}))
      ->capture_default_str();
  app.add_option("--cpu-kernels", f.cpuKernels,
                 "int8 Conv/Gemm/MatMul CPU kernels: fast (folded zero point, precomputed "
                 "requantization, register-blocked int8 dot products; bit-exact) | reference "
                 "(the straightforward kernels)")
      ->check(CLI::IsMember({"fast", "reference"}))
      ->capture_default_str();
  app.add_option("--patches", f.patches,
                 "CPU only: off | auto (the leading int8 layers run in row stripes when that "
                 "shrinks the arena by 2% or more within 10% more estimated instructions; "
                 "docs/kernels.md, \"Patches\") | always (also when it shrinks by less)")
      ->check(CLI::IsMember({"off", "auto", "always"}))
      ->capture_default_str();
  app.add_option("--npu-handoff", f.npuHandoff,
                 "NPU only: on (an NPU layer's output that only the next NPU layer reads "
                 "stays in the scratchpad when the cost model finds it faster; docs/npu.md, "
                 "\"Hand-off\") | off (every layer stores its output, the next loads it)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--arena", f.arena,
                 "static (an arena inside <prefix>.c) | external (the caller's: "
                 "<prefix>_init(ctx, arena, bytes), <prefix>_run(ctx, ...), section macros)")
      ->check(CLI::IsMember({"static", "external"}))
      ->capture_default_str();
  app.add_option("--io", f.io,
                 "Model inputs and outputs: float (as the ONNX model) | int8 (the quantized "
                 "tensors; the edge QuantizeLinear/DequantizeLinear removed, their scales and "
                 "zero points as macros in the header)")
      ->check(CLI::IsMember({"float", "int8"}))
      ->capture_default_str();
}

void listOps(const std::string &format) {
  size_t n = 0;
  const ir::OpInfo *ops = ir::allOps(n);
  if (format == "md") {
    std::cout << "# Supported ONNX operators\n\n"
              << "Generated by `npucc --list-ops=md` from `include/npucc/ir/Ops.def`.\n\n"
              << "| op | domain | opsets | inputs | outputs |\n|---|---|---|---|---|\n";
  }
  for (size_t i = 0; i < n; ++i) {
    const ir::OpInfo &o = ops[i];
    std::string dom = *o.domain ? o.domain : "ai.onnx";
    std::string ins = std::to_string(o.minInputs) + ".." +
                      (o.maxInputs < 0 ? std::string("n") : std::to_string(o.maxInputs));
    std::string outs = std::to_string(o.minOutputs) + ".." +
                       (o.maxOutputs < 0 ? std::string("n") : std::to_string(o.maxOutputs));
    if (format == "md")
      std::cout << "| " << o.name << " | " << dom << " | " << o.minOpset << "-" << o.maxOpset
                << " | " << ins << " | " << outs << " |\n";
    else
      std::printf("%-22s %-18s opset %d-%d\n", o.name, dom.c_str(), o.minOpset, o.maxOpset);
  }
}

/// --list-ops=npu: which ONNX ops each NPU runs and when (docs/SUPPORTED_OPS.md is the
/// output for every built-in target; with --target, that description only).
int listNpuOps(const std::vector<std::string> &targets) {
  size_t n = 0;
  const ir::OpInfo *ops = ir::allOps(n);
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i)
    names.push_back(ops[i].name);
  std::string out = "# ONNX operators on each NPU\n\nGenerated by `npucc --list-ops=npu` (every "
                    "built-in target; `--target DESC.json` for another) from the checks of "
                    "`lib/target/Legality.cpp`; the CPU runs every op of docs/ops.md.\n\n";
  for (const std::string &name : targets) {
    auto t = target::loadTarget(name);
    if (!t) {
      std::cerr << t.error().str() << "\n";
      return 1;
    }
    out += target::supportedOpsMarkdown(*t, names) + "\n";
  }
  out.pop_back();
  std::cout << out;
  return 0;
}

void listPasses() {
  for (const passes::PassInfo &p : passes::allPasses())
    std::printf("%-20s %s\n", p.name, p.summary);
  std::printf("\ndefault pipeline: %s\n", passes::defaultPipeline());
  std::printf("\nloop-IR passes (npucc opt FILE.lir --passes=...):\n");
  for (const lower::LirPassInfo &p : lower::allLirPasses())
    std::printf("%-20s %s\n", p.name, p.summary);
  std::printf("\nafter lowering for an NPU: npu-prefetch,npu-waits,verify-waits,verify-spm\n");
}

/// `npucc --target list`: each built-in target with a one-line summary.
int listTargets() {
  for (const std::string &name : target::builtinTargets()) {
    auto t = target::loadTarget(name);
    if (!t) {
      std::cerr << "npucc: " << t.error().str() << "\n";
      return 1;
    }
    uint64_t spad = 0;
    for (const target::Scratchpad &s : t->scratchpads)
      spad += s.size;
    std::printf("%-14s %ux%u MACs, %llu KiB scratchpad, %.0f MHz  %s\n", name.c_str(),
                t->compute.macRows, t->compute.macCols,
                static_cast<unsigned long long>(spad / 1024), t->timing.clockHz / 1e6,
                t->description.c_str());
  }
  std::printf("%-14s no NPU  The CPU alone: every op on the portable C99 kernels, no NPU "
              "runtime or register map.\n",
              "cpu");
  std::printf("\nor --target FILE.json (format: docs/target.md)\n");
  return 0;
}

/// `rc`, or 1 when the standard output could not be written: what npucc prints
/// is output too (a full disk behind `npucc opt ... > file` fails the run).
int checkedStdout(int rc) {
  const bool failedBefore = std::ferror(stdout) || !std::cout; // errno is long gone
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    std::cerr << "npucc: error: cannot write the standard output";
    if (!failedBefore && errno)
      std::cerr << ": " << std::strerror(errno);
    std::cerr << "\n";
    return rc ? rc : 1;
  }
  return rc;
}

/// Runs the command the parsed flags name; its exit status.
int run(CLI::App &app, tool::CommonCompileFlags &common, tool::CompileFlags &compile,
        tool::CheckFlags &check, tool::OptFlags &opt, CLI::App *checkCmd, CLI::App *optCmd,
        const std::string &listOpsFormat, const std::string &runtimeDir, bool runtimeSim,
        bool listPassesFlag) {
  if (app.count("--list-ops")) {
    if (listOpsFormat == "npu")
      return listNpuOps(app.count("--target") ? std::vector<std::string>{common.target}
                                              : target::builtinTargets());
    listOps(listOpsFormat == "md" ? "md" : "text");
    return 0;
  }
  if (common.target == "list") {
    return listTargets();
  }
  if (!runtimeDir.empty())
    return tool::runEmitRuntime(common.target, runtimeDir, runtimeSim);
  if (listPassesFlag) {
    listPasses();
    return 0;
  }
  if (*checkCmd)
    return tool::runCheck(common, check);
  if (*optCmd)
    return tool::runOpt(common, opt);
  if (compile.model.empty()) {
    std::cerr << app.help();
    return 2;
  }
  if (compile.explain)
    return tool::runExplain(common, compile);
  if (compile.outDir.empty()) {
    std::cerr << "npucc: error: missing -o OUT/ (output folder)\n";
    return 2;
  }
  return tool::runCompile(common, compile);
}

/// The value of `--json FILE` or `--json=FILE` in argv (the last one), for a check
/// whose flags did not parse; "" when there is none.
std::string jsonFlag(int argc, char **argv) {
  std::string path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      path = argv[++i];
    else if (a.rfind("--json=", 0) == 0)
      path = a.substr(7);
  }
  return path;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"npucc: compile an ONNX model into static C99 for a CPU or an NPU"};
  app.set_version_flag("--version", std::string("npucc ") + NPUCC_VERSION);
  std::string listOpsFormat;
  bool listPassesFlag = false;
  app.add_option("--list-ops", listOpsFormat,
                 "List supported ONNX ops and opset ranges (--list-ops=md for Markdown; "
                 "--list-ops=npu: which ops each built-in NPU, or --target, runs and when)")
      ->expected(0, 1)
      ->default_str("text")
      ->check(CLI::IsMember({"text", "md", "npu"}));
  app.add_flag("--list-passes", listPassesFlag, "List the graph and loop-IR passes");
  std::string runtimeDir;
  bool runtimeSim = false;
  app.add_option("--emit-runtime", runtimeDir,
                 "Write the no-OS NPU runtime of --target (HAL, command layer, tables) to DIR");
  app.add_flag("--with-sim", runtimeSim, "With --emit-runtime: also the host simulator");

  tool::CommonCompileFlags common;
  tool::CompileFlags compile;
  app.add_option("model", compile.model, "ONNX model to compile");
  app.add_option("-o,--output", compile.outDir, "Output folder for the generated C");
  app.add_flag("--emit-test", compile.emitTest,
               "Also write <prefix>_test.c, a self-contained test program");
  app.add_option("--data", compile.dataDir,
                 "test_data_set folder with input_K.pb/output_K.pb for --emit-test");
  std::string seedText;
  app.add_option("--seed", seedText,
                 "Seed of the --emit-test input (without --data): 0 to 18446744073709551615")
      ->type_name("UINT");
  app.add_option("--eval", compile.evalDir,
                 "With --quantize: samples for the accuracy report (default: the calibration "
                 "samples)");
  app.add_flag("--report-layers", compile.reportLayers,
               "With --quantize: the accuracy report also compares every layer");
  app.add_flag("--explain", compile.explain,
               "Print where each op runs (NPU command or CPU kernel) and, for CPU ops, the "
               "constraints of the target description that failed; writes nothing");
  app.add_option("--flash", compile.flash,
                 "Refuse a program needing more flash than SIZE (bytes, or with K/M: 256K), "
                 "with the breakdown; OUT/ is left untouched")
      ->type_name("SIZE");
  app.add_option("--ram", compile.ram,
                 "Refuse a program needing more RAM (arena, runtime data, stack) than SIZE")
      ->type_name("SIZE");
  app.add_option("--memory-map", compile.memoryMap,
                 "JSON regions of the microcontroller and what each holds: refuse a program "
                 "that overflows one, write OUT/<prefix>_sections.ld placing npucc's sections")
      ->type_name("FILE");
  app.add_option("--mcu", compile.mcu,
                 "Microcontroller of the flash/RAM estimate: cortex-m4 (-Os, default), "
                 "cortex-m4-O2, rv32, rv32-O2")
      ->check(CLI::IsMember({"cortex-m4", "cortex-m4-O2", "rv32", "rv32-O2"}));
  addCommonFlags(app, common);

  tool::CheckFlags check;
  CLI::App *checkCmd = app.add_subcommand(
      "check", "Compile, build and run a model folder (ONNX backend-test layout); compare outputs");
  checkCmd->add_option("model_dir", check.modelDir, "Folder with model.onnx and test_data_set_N")
      ->required();
  checkCmd
      ->add_option("--tolerance", check.tolerance,
                   "Max error relative to max |reference| (float outputs)")
      ->capture_default_str();
  checkCmd->add_option("--json", check.jsonPath,
                       "Also write the report as JSON (always, with \"status\": pass, mismatch "
                       "or error; exit 0, 1 or 2)");
  checkCmd->add_option("--cc", check.cc, "C compiler command")->capture_default_str();
  checkCmd->add_option("--cflags", check.cflags, "C compiler flags")->capture_default_str();
  checkCmd->add_flag("--sanitize", check.sanitize,
                     "Build with -fsanitize=address,undefined and fail on any report");
  checkCmd->add_option("--keep", check.keepDir, "Keep the generated build in this folder");
  checkCmd
      ->add_option("--tolerance-steps", check.toleranceSteps,
                   "Quantized outputs (DequantizeLinear, Softmax of one, integer): max error "
                   "vs the golden output in quantization steps")
      ->capture_default_str();
  checkCmd
      ->add_option("--interp-check", check.interpCheck,
                   "Also require bit-exact outputs vs npucc's reference interpreter on the "
                   "compiled graph: auto (quantized programs) | on | off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  checkCmd
      ->add_option("--progress", check.progress,
                   "Progress lines on stderr (build, each data set): auto (when stderr is a "
                   "terminal) | on | off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  checkCmd
      ->add_option("--report", check.reportDir,
                   "Write report.json and report.html to DIR, their schedule the simulator's "
                   "trace of test_data_set_0 (NPU programs)")
      ->type_name("DIR");
  addCommonFlags(*checkCmd, common);

  tool::OptFlags opt;
  CLI::App *optCmd =
      app.add_subcommand("opt", "Run graph passes on textual IR or an ONNX model, or loop-IR "
                                "passes on loop IR (.lir); print the result");
  optCmd->add_option("input", opt.input, "Textual IR (.ir), ONNX model or loop IR (.lir)")
      ->required();
  optCmd->add_flag("--no-elide", opt.noElide, "Print all constant data");
  addCommonFlags(*optCmd, common);

  tool::TargetImportFlags timport;
  tool::TargetExportFlags texport;
  CLI::App *targetCmd = app.add_subcommand(
      "target", "Target descriptions and register files (docs/target.md, \"Starting from a "
                "register file\")");
  CLI::App *importCmd = targetCmd->add_subcommand(
      "import", "Start a description from a CMSIS-SVD or IP-XACT register file: registers "
                "filled in, the rest listed in \"todo\"");
  CLI::Option *svdOpt =
      importCmd->add_option("--svd", timport.svd, "The CMSIS-SVD file")->type_name("FILE");
  importCmd->add_option("--ipxact", timport.ipxact, "The IP-XACT component file (IEEE 1685)")
      ->type_name("FILE")
      ->excludes(svdOpt);
  importCmd->add_option("--peripheral", timport.peripheral,
                        "The NPU's peripheral (SVD) or address block (IP-XACT) when the file "
                        "has several");
  importCmd->add_option("-o", timport.out, "The description skeleton to write")
      ->required()
      ->type_name("DESC.json");
  CLI::App *exportCmd = targetCmd->add_subcommand(
      "export", "Write the registers of a description (--target) as a CMSIS-SVD file");
  exportCmd->add_option("--svd", texport.svd, "The CMSIS-SVD file to write")
      ->required()
      ->type_name("FILE");
  exportCmd->add_option("--target", common.target, "Built-in name or description JSON")
      ->capture_default_str();
  targetCmd->require_subcommand(1, 1);

  tool::SweepFlags sweep;
  CLI::App *sweepCmd = app.add_subcommand(
      "sweep", "Compile models for every point of a design space around a description "
               "(docs/sweep.md); table, CSV, JSON and an HTML chart with the Pareto front");
  sweepCmd->footer("Named axes (--axis NAME=V1,V2,...):\n" + driver::sweepAxisHelp());
  sweepCmd->add_option("models", sweep.models, "ONNX files or model folders (model.onnx)")
      ->required();
  sweepCmd->add_option("--axis", sweep.axes, "A named axis, e.g. mac=8x8,16x16 (list below)")
      ->type_name("NAME=V1,V2");
  sweepCmd
      ->add_option("--set", sweep.sets,
                   "A generic axis: a JSON pointer into the description and its values")
      ->type_name("/PATH=V1,V2");
  sweepCmd->add_option("-j,--jobs", sweep.jobs, "Processes run at once")->capture_default_str();
  sweepCmd->add_flag("--check", sweep.check,
                     "Also run each point on the simulator (npucc check; needs model folders)");
  sweepCmd
      ->add_option("--check-every", sweep.checkEvery,
                   "With --check: check points 0, K, 2K, ... only")
      ->capture_default_str();
  sweepCmd->add_option("--csv", sweep.csv, "Write the rows as CSV")->type_name("FILE");
  sweepCmd->add_option("--json", sweep.json, "Write the rows as JSON")->type_name("FILE");
  sweepCmd->add_option("--html", sweep.html, "Write the chart (self-contained HTML)")
      ->type_name("FILE");
  sweepCmd
      ->add_option("--work", sweep.workDir, "Keep each point's description, output and logs in DIR")
      ->type_name("DIR");
  sweepCmd
      ->add_option("--progress", sweep.progress,
                   "A line per finished point on stderr: auto (a terminal) | on | off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  sweepCmd->add_option("--target", common.target, "The base description (built-in or JSON)")
      ->capture_default_str();
  sweepCmd->add_option("--shape", common.shapes, "Bind a dynamic input shape: NAME=1x3x224x224")
      ->type_name("NAME=DIMS");

  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);              // --help and --version print too
    if (rc != 0 && checkCmd->parsed()) // check's bad flags: exit 2, --json still written
      rc = tool::checkFlagError(std::string("error: ") + e.what(), jsonFlag(argc, argv));
    return checkedStdout(rc);
  }
  if (common.passesGiven)
    if (Status s = tool::checkPassList(common.passes); !s)
      return tool::reportError(s.error());
  if (app.count("--seed")) {
    auto seed = tool::parseSeed(seedText);
    if (!seed)
      return tool::reportError(seed.error());
    compile.seed = *seed;
  }
  if (*importCmd)
    return checkedStdout(tool::runTargetImport(timport));
  if (*exportCmd)
    return checkedStdout(tool::runTargetExport(texport, common.target));
  if (*sweepCmd)
    return checkedStdout(tool::runSweep(common, sweep));
  return checkedStdout(run(app, common, compile, check, opt, checkCmd, optCmd, listOpsFormat,
                           runtimeDir, runtimeSim, listPassesFlag));
}
