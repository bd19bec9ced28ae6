//===- Compile.cpp - `npucc MODEL.onnx -o OUT/` ---------------------------===//
#include "Commands.h"

#include "npucc/codegen/CEmitter.h"
#include "npucc/driver/Report.h"
#include "npucc/driver/Compare.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/quant/Accuracy.h"
#include "npucc/target/CTable.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <random>
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
  o.quant.emitQdq = f.emitQdq;
  o.requant = f.requant;
  o.cpuKernels = f.cpuKernels;
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
    // Another model's data set would give a test program that can only print FAIL.
    for (size_t k = 0; k < ins.size(); ++k)
      NPUCC_TRY(driver::checkDataMatches(ins[k], p.inputs[k], inFiles[k].string(), "input"));
    for (size_t k = 0; k < outs.size(); ++k)
      NPUCC_TRY(driver::checkDataMatches(outs[k], p.outputs[k], outFiles[k].string(), "output"));
    return std::make_pair(ins, outs);
  }
  // Seeded input, expected output from the reference interpreter.
  std::mt19937 rng(flags.seed);
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
  if (Status o = codegen::checkOutputDir(flags.outDir); !o) // before a long compile
    return reportError(o.error());
  auto opts = makeCompileOptions(flags.model, common);
  if (!opts)
    return reportError(opts.error());
  auto cr = driver::compileModel(*opts);
  if (!cr)
    return reportError(cr.error());
  printNotes(*cr);
  std::vector<codegen::EmittedFile> files = cr->files;
  if (flags.emitTest) {
    auto tv = testVectors(*cr, flags);
    if (!tv)
      return reportError(tv.error().inFile(flags.model));
    codegen::EmitOptions eo;
    eo.prefix = common.prefix;
    files.push_back(codegen::emitTestProgram(cr->program, eo, tv->first, tv->second,
                                             flags.tolerance));
  }
  std::string reportText;
  if (!common.quantize.empty() && cr->floatGraph) {
    auto rep = accuracyReport(*cr, common, flags);
    if (!rep)
      return reportError(rep.error().inFile(flags.model));
    reportText = quant::formatReport(*rep);
    files.push_back({"accuracy_report.txt", reportText});
    files.push_back({"accuracy_report.json", quant::reportJson(*rep)});
  }
  driver::CompileReport report = driver::buildReport(*cr);
  files.push_back({"report.json", driver::reportJson(report).dump(2) + "\n"});
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
            << (cr->npu ? "the NPU '" + cr->target.name + "'" : std::string("no NPU (--target cpu)"))
            << " (" << report.npuMacs << " of " << report.macs << " MACs)\n";
  return 0;
}

} // namespace npucc::tool
