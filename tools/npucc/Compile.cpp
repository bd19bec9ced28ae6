//===- Compile.cpp - `npucc MODEL.onnx -o OUT/` ---------------------------===//
#include "Commands.h"

#include "npucc/codegen/BuildFragments.h"
#include "npucc/codegen/CEmitter.h"
#include "npucc/driver/Compare.h"
#include "npucc/driver/MemoryMap.h"
#include "npucc/driver/Report.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/onnx/Exporter.h"
#include "npucc/quant/Accuracy.h"
#include "npucc/support/FileWrite.h"
#include "npucc/target/CTable.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
#include <tuple>
#include <unistd.h>

namespace fs = std::filesystem;

namespace npucc::tool {

int reportError(const Diagnostic &d) {
  std::cerr << "npucc: " << d.str() << "\n";
  return 1;
}

void printNotes(const driver::CompileResult &cr) {
  for (const std::string &n : cr.notes)
    std::cerr << "npucc: note: " << n << "\n";
  for (const std::string &w : cr.warnings)
    std::cerr << "npucc: warning: " << w << "\n";
}

Status checkPassList(const std::string &list) {
  size_t start = 0;
  for (int k = 1;; ++k) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? comma : comma - start);
    if (item.find_first_not_of(" \t") == std::string::npos)
      return error("--passes='" + list + "': entry " + std::to_string(k) +
                   " is empty (give pass names separated by single commas, see --list-passes; "
                   "leave out --passes for the default pipeline " +
                   passes::defaultPipeline() + ")");
    if (comma == std::string::npos)
      return success();
    start = comma + 1;
  }
}

Result<uint64_t> parseSeed(const std::string &text) {
  auto bad = [&] {
    return error("--seed '" + text + "': expected a whole number from 0 to " +
                 std::to_string(UINT64_MAX) + " (decimal digits only)");
  };
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos)
    return bad();
  uint64_t v = 0;
  for (char c : text) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10)
      return bad();
    v = v * 10 + d;
  }
  return v;
}

Status writeQdq(const driver::CompileResult &cr, const std::string &path) {
  if (!cr.qdqGraph)
    return error("--emit-qdq '" + path + "': no quantized model to write");
  auto bytes = onnx::exportModelBytes(*cr.qdqGraph);
  if (!bytes)
    return std::move(bytes.error().note("the QDQ model '" + path + "' was not written"));
  return replaceFileBytes(path, *bytes, "the QDQ model (--emit-qdq)");
}

Result<driver::CompileOptions> makeCompileOptions(const std::string &model,
                                                  const CommonCompileFlags &f) {
  driver::CompileOptions o;
  o.modelPath = model;
  for (const std::string &s : f.shapes) {
    auto b = onnx::parseShapeBinding(s);
    if (!b)
      return std::move(b.error());
    auto [it, fresh] = o.import.shapes.emplace(b->first, b->second);
    if (!fresh && it->second != b->second)
      return error("--shape " + b->first + " given twice with different dimensions (" +
                   ir::shapeStr(it->second) + " and " + ir::shapeStr(b->second) + ")");
  }
  o.pipeline = f.passes;
  o.printAfter = f.printAfter;
  o.printIr = f.printIr;
  o.printLir = f.printLir;
  o.irOut = &std::cerr;
  o.prefix = f.prefix;
  o.target = f.target;
  o.quant.mode = f.quantize;
  o.quant.calibDir = f.calibDir;
  o.quant.method = f.calibMethod;
  o.quant.percentile = f.calibPercentile;
  o.quant.randomSamples = f.calibRandom;
  o.requant = f.requant;
  o.cpuKernels = f.cpuKernels;
  o.patches = f.patches;
  o.npuHandoff = f.npuHandoff == "on";
  o.arena = f.arena;
  o.io = f.io;
  o.quant.equalize = !f.noEqualize;
  o.quant.progress = &std::cerr;
  o.quant.progressTty = isatty(2) != 0;
  if (f.quantize.empty() && (!f.calibDir.empty() || f.calibRandom != 0 || !f.emitQdq.empty()))
    return error("--calib, --calib-random and --emit-qdq need --quantize int8");
  return o;
}

/// Sorted input_K.pb / output_K.pb files of a test_data_set folder.
std::vector<fs::path> numberedFiles(const fs::path &dir, const std::string &stem) {
  std::vector<std::pair<int, fs::path>> found;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind(stem + "_", 0) == 0 && e.path().extension() == ".pb")
      found.push_back({std::atoi(n.c_str() + stem.size() + 1), e.path()});
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> r;
  for (auto &p : found)
    r.push_back(p.second);
  return r;
}

static Result<std::vector<ir::Tensor>> readAll(const std::vector<fs::path> &files) {
  std::vector<ir::Tensor> r;
  for (const fs::path &p : files) {
    auto t = onnx::readTensorProto(p.string());
    if (!t)
      return std::move(t.error());
    r.push_back(t.take());
  }
  return r;
}

/// Inputs and expected outputs for --emit-test.
static Result<std::pair<std::vector<ir::Tensor>, std::vector<ir::Tensor>>>
testVectors(const driver::CompileResult &cr, const CompileFlags &flags) {
  std::vector<ir::Tensor> ins, outs;
  if (!flags.dataDir.empty()) {
    std::vector<fs::path> inFiles = numberedFiles(flags.dataDir, "input");
    std::vector<fs::path> outFiles = numberedFiles(flags.dataDir, "output");
    auto i = readAll(inFiles);
    if (!i)
      return std::move(i.error());
    auto o = readAll(outFiles);
    if (!o)
      return std::move(o.error());
    ins = i.take();
    outs = o.take();
    const lir::Program &p = cr.program;
    if (ins.size() != p.inputs.size() || outs.size() != p.outputs.size())
      return error("--data " + flags.dataDir + ": has " + std::to_string(ins.size()) +
                   " inputs and " + std::to_string(outs.size()) + " outputs, the model " +
                   std::to_string(p.inputs.size()) + " and " + std::to_string(p.outputs.size()));
    // --io int8: the float data set quantized as the removed edge QuantizeLinear would.
    for (size_t k = 0; k < ins.size() && k < cr.graph->inputs.size(); ++k)
      ins[k] = driver::toIoType(ins[k], *cr.graph->inputs[k]);
    for (size_t k = 0; k < outs.size() && k < cr.graph->outputs.size(); ++k)
      outs[k] = driver::toIoType(outs[k], *cr.graph->outputs[k]);
    // Another model's data set would give a test program that can only print FAIL.
    for (size_t k = 0; k < ins.size(); ++k)
      NPUCC_TRY(driver::checkDataMatches(ins[k], p.inputs[k], inFiles[k].string(), "input"));
    for (size_t k = 0; k < outs.size(); ++k)
      NPUCC_TRY(driver::checkDataMatches(outs[k], p.outputs[k], outFiles[k].string(), "output"));
    return std::make_pair(ins, outs);
  }
  // Seeded input, expected output from the reference interpreter. A seed
  // below 2^32 seeds the generator directly (the inputs of earlier releases);
  // a larger one through both of its 32-bit halves.
  std::mt19937 rng;
  if (flags.seed <= UINT32_MAX) {
    rng.seed(static_cast<uint32_t>(flags.seed));
  } else {
    std::seed_seq seq{static_cast<uint32_t>(flags.seed), static_cast<uint32_t>(flags.seed >> 32)};
    rng.seed(seq);
  }
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::map<std::string, ir::Tensor> feed;
  for (const ir::Value *v : cr.graph->inputs) {
    ir::Tensor t(v->dtype, v->shape);
    for (int64_t i = 0; i < t.numElements(); ++i) {
      if (ir::isFloat(v->dtype))
        t.setDouble(i, normal(rng));
      else
        t.setInt(i, static_cast<int64_t>(rng() % 16));
    }
    feed[v->name] = t;
    ins.push_back(t);
  }
  auto res = interp::runGraph(*cr.graph, feed);
  if (!res)
    return std::move(res.error());
  for (const ir::Value *v : cr.graph->outputs)
    outs.push_back(res->at(v->name));
  return std::make_pair(ins, outs);
}

/// The float-vs-int8 accuracy report of a quantized compile, over the --eval
/// samples or else the calibration samples (the report says which).
static Result<quant::AccuracyReport> accuracyReport(const driver::CompileResult &cr,
                                                    const CommonCompileFlags &common,
                                                    const CompileFlags &flags) {
  quant::AccuracyOptions ao;
  ao.perLayer = flags.reportLayers;
  ao.floatOps = cr.floatOps;
  std::vector<quant::Sample> samples;
  if (!flags.evalDir.empty()) {
    auto s = quant::loadSamples(flags.evalDir, *cr.floatGraph);
    if (!s)
      return std::move(s.error());
    samples = s.take();
    ao.samplesOrigin = "--eval " + flags.evalDir;
  } else if (!common.calibDir.empty()) {
    auto s = quant::loadSamples(common.calibDir, *cr.floatGraph);
    if (!s)
      return std::move(s.error());
    samples = s.take();
    ao.samplesOrigin = "the calibration samples (--calib " + common.calibDir +
                       "; no --eval given, so these figures are optimistic)";
  } else {
    samples = quant::randomSamples(*cr.floatGraph, common.calibRandom, 1);
    ao.samplesOrigin = "the --calib-random samples (random data: the figures say nothing about "
                       "accuracy on real inputs)";
  }
  auto rep = quant::measureAccuracy(*cr.floatGraph, *cr.graph, samples, ao);
  if (rep && cr.unconstrainedGraph) {
    quant::AccuracyOptions uo = ao;
    uo.perLayer = false;
    auto u = quant::measureAccuracy(*cr.floatGraph, *cr.unconstrainedGraph, samples, uo);
    if (!u)
      return std::move(u.error());
    rep->constrainedBy = cr.target.name;
    rep->constraints = cr.quantConstraints;
    rep->unconstrainedOutputs = u->outputs;
  }
  return rep;
}

int runCompile(const CommonCompileFlags &common, const CompileFlags &flags) {
  if (common.quantize.empty() && (!flags.evalDir.empty() || flags.reportLayers))
    return reportError(error("--eval and --report-layers need --quantize int8"));
  uint64_t flashLimit = 0, ramLimit = 0;
  for (auto [flag, text, out] : {std::tuple{"--flash", &flags.flash, &flashLimit},
                                 std::tuple{"--ram", &flags.ram, &ramLimit}})
    if (!text->empty() && !driver::parseByteSize(*text, *out))
      return reportError(error(std::string(flag) + " '" + *text +
                               "': expected a size in bytes above 0, e.g. 65536, 64K, 1M or "
                               "0x10000"));
  lower::McuConfig mcu = lower::McuConfig::CortexM4Os;
  if (!lower::parseMcuConfig(flags.mcu, mcu))
    return reportError(
        error("--mcu '" + flags.mcu + "': expected cortex-m4, cortex-m4-O2, rv32 or rv32-O2"));
  std::optional<driver::MemoryMap> memMap;
  if (!flags.memoryMap.empty()) {
    auto m = driver::parseMemoryMap(flags.memoryMap);
    if (!m)
      return reportError(m.error());
    memMap = m.take();
  }
  if (Status o = codegen::checkOutputDir(flags.outDir); !o) // before a long compile
    return reportError(o.error());
  auto opts = makeCompileOptions(flags.model, common);
  if (!opts)
    return reportError(opts.error());
  if (memMap)
    opts->sections = ".npucc." + common.prefix;
  auto cr = driver::compileModel(*opts);
  if (!cr)
    return reportError(cr.error());
  printNotes(*cr);
  driver::MemoryBudget budget = driver::estimateMemory(*cr, mcu);
  if (std::string why = driver::memoryFitProblem(budget, flashLimit, ramLimit); !why.empty())
    return reportError(error(why).inFile(flags.model)); // before OUT/: left untouched
  if (memMap)
    if (std::string why =
            driver::memoryMapProblem(*memMap, budget, cr->npu ? &cr->target : nullptr);
        !why.empty())
      return reportError(error(why).inFile(flags.model));
  std::vector<codegen::EmittedFile> files = cr->files;
  if (memMap)
    files.push_back(
        {common.prefix + "_sections.ld", driver::linkerFragment(*memMap, common.prefix)});
  if (flags.emitTest) {
    auto tv = testVectors(*cr, flags);
    if (!tv)
      return reportError(tv.error().inFile(flags.model));
    codegen::EmitOptions eo;
    eo.prefix = common.prefix;
    eo.externalArena = common.arena == "external";
    files.push_back(
        codegen::emitTestProgram(cr->program, eo, tv->first, tv->second, flags.tolerance));
  }
  std::string reportText;
  nlohmann::json accuracy; // null: no accuracy report
  if (!common.quantize.empty() && cr->floatGraph) {
    auto rep = accuracyReport(*cr, common, flags);
    if (!rep)
      return reportError(rep.error().inFile(flags.model));
    reportText = quant::formatReport(*rep);
    files.push_back({"accuracy_report.txt", reportText});
    files.push_back({"accuracy_report.json", quant::reportJson(*rep)});
    accuracy = nlohmann::json::parse(files.back().contents, nullptr, false);
    if (accuracy.is_discarded())
      accuracy = nullptr;
  }
  driver::CompileReport report = driver::buildReport(*cr);
  report.memory = budget;
  files.push_back({"report.json", driver::reportJson(report).dump(2) + "\n"});
  files.push_back({"report.html", driver::reportHtml(report, accuracy)}); // docs/output.md
  // OUT/ as a build component: CMake and Make fragments and a README (docs/output.md).
  codegen::FragmentOptions fo;
  fo.prefix = common.prefix;
  fo.version = NPUCC_VERSION;
  fo.target = cr->npu ? cr->target.name : "cpu";
  if (cr->npu)
    fo.regsHeader = target::cIdentifier(cr->target.name) + "_regs.h";
  fo.npuCommands = cr->emitStats.npuCommands;
  fo.npuStreamBytes = cr->emitStats.npuStreamBytes;
  fo.externalArena = common.arena == "external";
  for (codegen::EmittedFile &f : codegen::emitBuildFragments(cr->program, files, fo))
    files.push_back(std::move(f));
  if (!common.emitQdq.empty()) // before OUT/: a failure here leaves OUT/ untouched
    if (Status q = writeQdq(*cr, common.emitQdq); !q)
      return reportError(q.error());
  Status w = codegen::writeOutputDir(flags.outDir, files);
  if (!w)
    return reportError(w.error());
  int64_t weights = 0;
  for (const lir::ConstBuffer &c : cr->program.constants)
    weights += static_cast<int64_t>(c.data.byteSize());
  size_t calls = 0;
  for (const lir::Instr &in : cr->program.body)
    calls += in.opcode == "call";
  std::cout << "npucc: wrote " << files.size() << " files to " << flags.outDir << "\n"
            << "  nodes: " << cr->graph->nodes().size() << ", kernel calls: " << calls
            << ", NPU commands: " << cr->emitStats.npuCommands << "\n"
            << "  weights: " << weights << " bytes\n"
            << "  arena: " << cr->program.arenaSize << " bytes\n";
  for (const lir::Instr &in : cr->program.body) // --patches: the plan taken
    if (size_t at = in.comment.find("; patches: "); at != std::string::npos) {
      std::cout << "  " << in.comment.substr(at + 2) << "\n";
      break;
    }
  if (cr->npu)
    std::cout << "  target: " << cr->target.name << " (register map in "
              << target::cIdentifier(cr->target.name) << "_regs.h"
              << (cr->program.usesNpu() ? "" : "; every op runs on CPU kernels") << ")\n";
  else
    std::cout << "  target: cpu (every op runs on CPU kernels)\n";
  if (cr->program.usesNpu())
    std::cout << "\n" << driver::reportTable(report) << "(per layer in report.json)\n";
  if (cr->stats.count("npu-partition.rounding-exact"))
    std::cout << "  requantization: " << cr->stats.at("npu-partition.rounding-exact")
              << " nodes imported with ONNX Runtime's float32 requantization run on the NPU "
                 "with exact rounding (one step apart per layer; --requant fp32 keeps them on "
                 "the CPU kernels, bit-exact with ONNX Runtime)\n";
  if (cr->stats.count("npu-partition.rounding-fp32"))
    std::cout << "  requantization: " << cr->stats.at("npu-partition.rounding-fp32")
              << " nodes with exact requantization run on the NPU with its fp32_scale "
                 "(float32) rounding (one step apart per layer; --requant exact keeps them on "
                 "the CPU kernels)\n";
  if (!common.quantize.empty()) {
    std::cout << "  quantized: int8, calibration method " << cr->calibMethod << ", "
              << cr->equalized << " activations channel-equalized, " << cr->floatOps.size()
              << " ops left in float";
    for (size_t i = 0; i < cr->floatOps.size(); ++i)
      std::cout << (i ? ", " : ": ") << cr->floatOps[i];
    std::cout << "\n";
  }
  if (cr->requantFp32 > 0)
    std::cout << "  requantization: " << cr->requantFp32
              << " Conv/Gemm/MatMul with ONNX Runtime's float32 rounding (requant=fp32), "
              << cr->requantExact << " exact\n";
  if (!reportText.empty())
    std::cout << "\n" << reportText << "(also in accuracy_report.txt and accuracy_report.json)\n";
  return 0;
}

int runExplain(const CommonCompileFlags &common, const CompileFlags &flags) {
  auto opts = makeCompileOptions(flags.model, common);
  if (!opts)
    return reportError(opts.error());
  auto cr = driver::compileModel(*opts);
  if (!cr)
    return reportError(cr.error());
  for (const std::string &w : cr->warnings)
    std::cerr << "npucc: warning: " << w << "\n";
  driver::CompileReport report = driver::buildReport(*cr);
  std::cout << driver::explainText(report);
  size_t npu = 0;
  for (const driver::LayerRow &l : report.layers)
    npu += l.npu;
  std::cout << npu << " of " << report.layers.size() << " layers on "
            << (cr->npu ? "the NPU '" + cr->target.name + "'"
                        : std::string("no NPU (--target cpu)"))
            << " (" << report.npuMacs << " of " << report.macs << " MACs)\n";
  return 0;
}

} // namespace npucc::tool
