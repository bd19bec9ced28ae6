//===- Check.cpp - `npucc check MODEL_DIR`: build, run, compare -----------===//
//
// Compiles the model, writes the generated C plus a small file-driven main
// into a build folder, builds it with the system C compiler, runs it on every
// test_data_set_N and compares each output with output_K.pb.
//
// Quantized programs (docs/quantization.md, "Checking quantized programs"):
// outputs made by a DequantizeLinear (or a Softmax of one, or integer
// outputs) compare with the golden output in quantization steps
// (--tolerance-steps, default 1; driver::compareSteps defines the steps), and
// the C outputs must also be bit-exact with npucc's reference interpreter run
// on the compiled graph IR (--interp-check auto|on|off, auto = quantized).
// With the interpreter check, the C outputs are also compared with the
// interpreter run on earlier stages of the same compile, so that a wrong
// rewrite (which the interpreter of the final graph computes just as wrongly)
// shows: the graph before the target's rewrites (bit-exact) and the graph as
// imported (within the golden tolerance: float QDQ arithmetic).
//
//===----------------------------------------------------------------------===//
#include "CheckReport.h"
#include "Commands.h"

#include "npucc/codegen/EmbeddedRuntime.h"
#include "npucc/driver/Compare.h"
#include "npucc/driver/LayerDistance.h"
#include "npucc/driver/Report.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/support/FileWrite.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace npucc::tool {

std::vector<fs::path> numberedFiles(const fs::path &dir, const std::string &stem);

namespace {

Status writeFile(const fs::path &p, const std::string &data) {
  return writeFileBytes(p.string(), data, "the build file");
}

std::string readText(const fs::path &p) {
  std::ifstream i(p, std::ios::binary);
  std::stringstream s;
  s << i.rdbuf();
  return s.str();
}

/// Compiles, builds, runs and compares; 0 (pass) or 1 (mismatch) with the report in `j`,
/// or the error that stopped the check.
Result<int> checkModel(const CommonCompileFlags &common, const CheckFlags &flags,
                       nlohmann::json &j) {
  fs::path dir = flags.modelDir;
  fs::path model = dir / "model.onnx";
  if (!fs::is_regular_file(model))
    return error("'" + model.string() +
                 "' not found (expected the ONNX backend-test "
                 "layout: model.onnx and test_data_set_N/)");
  std::vector<fs::path> sets;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty())
    return error("no test_data_set_N folder in '" + dir.string() + "'");

  // A NaN or negative tolerance would let every comparison pass (or none).
  for (auto [name, v] : {std::pair<const char *, double>{"--tolerance", flags.tolerance},
                         {"--tolerance-steps", flags.toleranceSteps}})
    if (!(v >= 0) || std::isinf(v)) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", v);
      return error(std::string(name) + " " + text + ": must be a finite number >= 0");
    }

  auto opts = makeCompileOptions(model.string(), common);
  if (!opts)
    return opts.error();
  // Dynamic dims not bound by --shape take the first data set's input shapes.
  for (const fs::path &p : numberedFiles(sets[0], "input")) {
    auto t = onnx::readTensorProto(p.string());
    if (!t)
      return t.error();
    opts->import.dataShapes.push_back(t->shape());
  }
  opts->keepStageGraphs = flags.interpCheck != "off";
  // Long checks (a large model, many data sets) say where they are on a terminal.
  const bool showProgress =
      flags.progress == "on" || (flags.progress == "auto" && isatty(fileno(stderr)));
  auto progress = [&](const std::string &what) {
    if (showProgress)
      std::fprintf(stderr, "npucc check: %s\n", what.c_str());
  };
  progress("compiling " + model.string());
  auto cr = driver::compileModel(*opts);
  if (!cr)
    return cr.error();
  printNotes(*cr);
  if (!common.emitQdq.empty())
    if (Status q = writeQdq(*cr, common.emitQdq); !q)
      return q.error();
  const bool quantized = cr->graph && driver::isQuantizedGraph(*cr->graph);
  const bool interpOn =
      cr->graph && (flags.interpCheck == "on" || (flags.interpCheck == "auto" && quantized));
  // The interpreter on earlier stages of this compile (CompileResult::preTargetGraph and
  // importedGraph): a rewrite bug shows as a disagreement there.
  std::vector<InterpStage> stages;
  const double stageSteps = std::max(1.0, flags.toleranceSteps);
  if (interpOn && cr->preTargetGraph)
    stages.push_back({"pre-target", "the graph before the target's rewrites (npu-partition)",
                      cr->preTargetGraph.get(), true});
  if (interpOn && cr->importedGraph)
    stages.push_back(
        {"imported", "the graph as imported (before any pass)", cr->importedGraph.get(), false});

  // Build folder.
  fs::path build;
  bool temp = flags.keepDir.empty();
  if (temp) {
    std::string tmpl = (fs::temp_directory_path() / "npucc-check-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      return error("cannot create a temporary folder");
    build = tmpl;
  } else {
    fs::create_directories(flags.keepDir, ec);
    build = fs::absolute(flags.keepDir); // commands run after `cd build`
  }
  struct Cleanup { // the temporary build folder goes on every return
    const fs::path &dir;
    bool temp;
    ~Cleanup() {
      std::error_code e;
      if (temp)
        fs::remove_all(dir, e);
    }
  } cleanup{build, temp};
  for (const codegen::EmittedFile &f : cr->files)
    if (Status s = writeFile(build / f.path, f.contents); !s)
      return s.error();
  const bool sim = cr->program.usesNpu();
  if (Status s = writeFile(build / "npucc_check_main.c",
                           checkHarnessSource(common.prefix, sim, common.arena == "external"));
      !s)
    return s.error();
  if (sim)
    for (const char *f :
         {"sim/npucc_sim.c", "sim/npucc_sim.h", "sim/npucc_sim_internal.h", "sim/npucc_sim_ops.c",
          "sim/npucc_sim_mac.c", "sim/npucc_sim_mem.c", "sim/npucc_sim_status.c",
          "sim/npucc_sim_delivery.c", "sim/npucc_sim_tables.c", "hal/npucc_timing.h",
          "include/npucc_requant.h", "include/npucc_layout.h", "include/npucc_stages.h"}) {
      const std::string *text = codegen::findRuntimeFile(f);
      std::string base = fs::path(f).filename().string();
      if (!text)
        return error(std::string("the simulator source ") + f + " is not embedded in npucc");
      if (Status s = writeFile(build / base, *text); !s)
        return s.error();
    }
  // Built without a shell: --cc and --cflags are split at whitespace.
  // The sanitizer flags come before --cflags, so that the user's flags win (e.g. "-O1 -g1").
  std::vector<std::string> cmd = splitArgs(flags.cc);
  cmd.push_back("-std=c99");
  if (flags.sanitize)
    for (const char *a : {"-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                          "-fno-omit-frame-pointer"})
      cmd.push_back(a);
  for (const std::string &a : splitArgs(flags.cflags))
    cmd.push_back(a);
  if (sim)
    cmd.push_back("-DNPUCC_HAL_SIM");
  cmd.push_back("-I.");
  std::vector<std::string> sources;
  for (const auto &e : fs::directory_iterator(build, ec))
    if (e.path().extension() == ".c")
      sources.push_back(e.path().filename().string());
  std::sort(sources.begin(), sources.end());
  cmd.insert(cmd.end(), sources.begin(), sources.end());
  for (const char *a : {"-o", "model_check", "-lm"})
    cmd.push_back(a);
  progress("building the program with " + flags.cc + (sim ? " (NPU simulator)" : ""));
  if (runProcess(cmd, build.string(), (build / "build.log").string()) != 0) {
    std::string log = readText(build / "build.log");
    return error("building the generated C failed:\n" + log);
  }

  std::vector<OutputReport> reports;
  std::vector<SimFigures> simFigures;           // per data set, NPU programs
  std::vector<driver::SimCommand> simTrace;     // test_data_set_0's commands (--report)
  std::vector<driver::LayerDistance> layerDist; // NPU arithmetic vs the model's, per layer
  bool allPass = true;
  size_t nIn = cr->program.inputs.size(), nOut = cr->program.outputs.size();
  for (size_t si = 0; si < sets.size(); ++si) {
    std::vector<fs::path> inFiles = numberedFiles(sets[si], "input");
    std::vector<fs::path> outFiles = numberedFiles(sets[si], "output");
    if (inFiles.size() != nIn || outFiles.size() != nOut)
      return error(sets[si].string() + ": has " + std::to_string(inFiles.size()) + " inputs and " +
                   std::to_string(outFiles.size()) + " outputs, the model " + std::to_string(nIn) +
                   " and " + std::to_string(nOut));
    progress(sets[si].filename().string() + " (" + std::to_string(si + 1) + " of " +
             std::to_string(sets.size()) + ")");
    std::vector<std::string> run = {"./model_check"};
    std::map<std::string, ir::Tensor> interpIn, floatIn; // floatIn: --io int8's float data
    for (size_t i = 0; i < nIn; ++i) {
      auto t = onnx::readTensorProto(inFiles[i].string());
      if (!t)
        return t.error();
      const lir::IOBuffer &io = cr->program.inputs[i];
      // --io int8: the program takes the int8 tensor; graphs with a float input (the
      // imported stage) keep the data set's values.
      ir::Tensor data =
          i < cr->graph->inputs.size() ? driver::toIoType(*t, *cr->graph->inputs[i]) : *t;
      if (Status m = driver::checkDataMatches(data, io, inFiles[i].string(), "input"); !m)
        return m.error();
      fs::path raw = build / ("in_" + std::to_string(i) + ".bin");
      std::string bytes(reinterpret_cast<const char *>(data.raw()), data.byteSize());
      if (Status s = writeFile(raw, bytes); !s)
        return s.error();
      run.push_back(raw.string());
      if (interpOn) {
        std::string name = i < cr->graph->inputs.size() ? cr->graph->inputs[i]->name : io.name;
        if (data.dtype() != t->dtype())
          floatIn.emplace(name, std::move(*t));
        interpIn.emplace(name, std::move(data));
      }
    }
    for (size_t i = 0; i < nOut; ++i)
      run.push_back((build / ("out_" + std::to_string(i) + ".bin")).string());
    if (int rc = runProcess(run, build.string(), (build / "run.log").string()); rc != 0) {
      std::string log = readText(build / "run.log");
      return error("running the generated program failed on " + sets[si].filename().string() +
                   " (" + exitText(rc) + ")" +
                   (log.empty() ? std::string(", no output") : ":\n" + log));
    }
    if (sim) {
      SimFigures f;
      std::istringstream in(readText(build / "sim.txt"));
      in >> f.cycles >> f.utilisation >> f.dramRead >> f.dramWrite >> f.hazards >> f.commands >>
          f.macs >> f.regWrites;
      std::getline(in, f.error);
      std::getline(in, f.error);
      simFigures.push_back(f);
      if (si == 0 && !flags.reportDir.empty()) {
        std::istringstream tr(readText(build / "sim_trace.txt"));
        driver::SimCommand c;
        while (tr >> c.engine >> c.start >> c.end)
          simTrace.push_back(c);
      }
    }
    // Per stage, its outputs by index (stage graphs keep the graph's inputs and outputs in
    // order; their names may differ).
    auto inputsFor = [&](const ir::Graph &sg) {
      std::map<std::string, ir::Tensor> in;
      for (size_t i = 0; i < nIn && i < sg.inputs.size() && i < cr->graph->inputs.size(); ++i)
        if (auto it = interpIn.find(cr->graph->inputs[i]->name); it != interpIn.end()) {
          auto f = floatIn.find(it->first);
          bool useFloat = f != floatIn.end() && sg.inputs[i]->dtype == f->second.dtype();
          in.emplace(sg.inputs[i]->name, useFloat ? f->second : it->second);
        }
      return in;
    };
    std::vector<std::vector<ir::Tensor>> stageOut(stages.size());
    for (size_t k = 0; k < stages.size(); ++k) {
      const ir::Graph &sg = *stages[k].graph;
      auto r = interp::runGraph(sg, inputsFor(sg));
      if (!r) {
        Diagnostic d = r.error();
        d.notes.push_back(std::string("while running the reference interpreter on ") +
                          stages[k].title + " (" + sets[si].filename().string() + ")");
        return d;
      }
      for (const ir::Value *o : sg.outputs) {
        auto it = r->find(o->name);
        stageOut[k].push_back(it != r->end() ? std::move(it->second) : ir::Tensor());
      }
    }
    if (interpOn && cr->preTargetGraph && cr->modelArithGraph)
      if (Status ls = driver::accumulateLayerDistances(*cr->preTargetGraph, *cr->modelArithGraph,
                                                       cr->preTargetNpu,
                                                       inputsFor(*cr->preTargetGraph), layerDist);
          !ls) {
        Diagnostic d = ls.error();
        d.notes.push_back("while measuring the per-layer distance to the model's arithmetic (" +
                          sets[si].filename().string() + ")");
        return d;
      }
    std::map<std::string, ir::Tensor> interpOut;
    if (interpOn) {
      auto r = interp::runGraph(*cr->graph, interpIn);
      if (!r) {
        Diagnostic d = r.error();
        d.notes.push_back("while running the reference interpreter on the compiled graph for "
                          "--interp-check (" +
                          sets[si].filename().string() + ")");
        return d;
      }
      interpOut = std::move(*r);
    }
    for (size_t i = 0; i < nOut; ++i) {
      auto ref = onnx::readTensorProto(outFiles[i].string());
      if (!ref)
        return ref.error();
      const lir::IOBuffer &io = cr->program.outputs[i];
      ir::Tensor got(io.dtype, io.shape);
      std::string bytes = readText(build / ("out_" + std::to_string(i) + ".bin"));
      std::memcpy(got.raw(), bytes.data(), std::min(bytes.size(), got.byteSize()));
      OutputReport rep;
      rep.dataset = static_cast<int>(si);
      const ir::Value *ov = i < cr->graph->outputs.size() ? cr->graph->outputs[i] : nullptr;
      if (quantized && ov)
        rep.kind = driver::classifyOutput(*cr->graph, *ov);
      // --io int8: an int8 output against float golden data compares as its dequantized
      // value in steps of its scale (as the DequantizeLinear it replaced).
      ir::Tensor gotF = got;
      if (ov && got.dtype() != ref->dtype()) {
        rep.kind = driver::ioOutputKind(*ov);
        gotF = driver::dequantizeIo(got, *ov);
      }
      rep.stepMode = quantized && rep.kind.kind != driver::OutputKind::Float;
      rep.cmp = rep.stepMode ? driver::compareSteps(gotF, *ref, rep.kind, flags.toleranceSteps)
                             : driver::compareTensors(gotF, *ref, flags.tolerance);
      rep.cmp.name = io.name;
      rep.pass = rep.cmp.pass;
      if (interpOn) {
        auto it = interpOut.find(ov ? ov->name : io.name);
        if (it == interpOut.end())
          return error("the reference interpreter produced no output '" + io.name + "'");
        compareWithInterp(rep, got, it->second, quantized, flags.tolerance);
        rep.pass = rep.pass && rep.interp.pass;
      }
      for (size_t k = 0; k < stages.size(); ++k) {
        if (i >= stageOut[k].size())
          return error(std::string("the reference interpreter on ") + stages[k].title +
                       " produced no output " + std::to_string(i));
        const ir::Tensor &g = stageOut[k][i].dtype() == got.dtype() ? got : gotF;
        rep.stages.push_back(compareStage(stages[k], rep, g, stageOut[k][i], quantized,
                                          flags.tolerance, stageSteps));
        rep.pass = rep.pass && rep.stages.back().pass;
      }
      allPass = allPass && rep.pass;
      reports.push_back(std::move(rep));
    }
  }

  // Where each layer ran (and why a layer is on the CPU), as the compile prints it.
  const driver::CompileReport placement = driver::buildReport(*cr);
  std::printf("%s\n", driver::reportTable(placement).c_str());
  if (!flags.reportDir.empty()) { // the compile's report, its schedule the simulator's
    driver::CompileReport rep = placement;
    if (sim && !simFigures.empty())
      if (std::string why = driver::applySimTrace(*cr, rep, simTrace, simFigures[0].cycles);
          !why.empty())
        std::fprintf(stderr, "npucc: note: --report: %s\n", why.c_str());
    fs::create_directories(flags.reportDir, ec);
    for (const auto &[name, text] : {std::pair<const char *, std::string>{
                                         "report.json", driver::reportJson(rep).dump(2) + "\n"},
                                     {"report.html", driver::reportHtml(rep, nlohmann::json())}})
      if (Status s = replaceFileBytes((fs::path(flags.reportDir) / name).string(), text,
                                      "the check report (--report)");
          !s)
        return s.error();
  }
  if (cr->stats.count("npu-partition.rounding-exact"))
    std::printf("note: %lld Conv/Gemm/MatMul imported with ONNX Runtime's float32 "
                "requantization (QLinearConv/QLinearMatMul) run on the NPU with exact rounding: "
                "a step apart per layer where the two roundings differ, and more after many "
                "layers; --requant fp32 keeps them on the CPU kernels, bit-exact with ONNX "
                "Runtime\n",
                static_cast<long long>(cr->stats.at("npu-partition.rounding-exact")));
  if (cr->stats.count("npu-partition.rounding-fp32"))
    std::printf("note: %lld Conv/Gemm/MatMul with exact requantization run on the NPU with its "
                "fp32_scale requantization (float32 rounding): a step apart per layer where the "
                "two roundings differ; --requant exact keeps them on the CPU kernels\n",
                static_cast<long long>(cr->stats.at("npu-partition.rounding-fp32")));
  if (quantized)
    std::printf("quantized program: dq outputs compare |round(got/s) - round(ref/s)| in steps of "
                "their DequantizeLinear scale s, softmax(dq) outputs their logits in steps up to "
                "a per-row shift, int outputs |got - ref|; golden tolerance %g step(s)%s\n",
                flags.toleranceSteps, interpOn ? "; interpreter: C outputs must be bit-exact" : "");
  for (const InterpStage &st : stages)
    std::printf("also compared with the reference interpreter on %s: %s\n", st.title,
                st.exact ? (quantized ? "bit-exact (npu-partition's change of rounding to "
                                        "the NPU's applied)"
                                      : "float outputs within --tolerance")
                         : (quantized ? "quantized outputs within max(1, --tolerance-steps) "
                                        "steps, float outputs within --tolerance"
                                      : "within --tolerance"));
  std::printf("%-15s %-22s %-24s %11s %10s %8s %9s %10s %s\n", "data set", "output", "kind",
              "max abs err", "rel err", "steps", "interp", "first bad", "result");
  j["model"] = model.string();
  j["tolerance"] = flags.tolerance;
  j["tolerance_steps"] = flags.toleranceSteps;
  j["quantized"] = quantized;
  j["interp_check"] = interpOn;
  j["interp_stages"] = nlohmann::json::array();
  for (const InterpStage &st : stages)
    j["interp_stages"].push_back(st.name);
  j["arena_bytes"] = cr->program.arenaSize;
  {
    const driver::CompileReport &rep = placement;
    j["target"] = rep.target.empty() ? "cpu" : rep.target;
    j["macs"] = rep.macs;
    j["npu_macs"] = rep.npuMacs;
    j["estimated_cycles"] = rep.cycles;
    j["ideal_cycles"] = rep.idealCycles;
    j["roofline_cycles"] = rep.rooflineCycles;
    auto stat = [&](const char *k) { return cr->stats.count(k) ? cr->stats.at(k) : 0; };
    j["rounding_changed"] =
        stat("npu-partition.rounding-exact") + stat("npu-partition.rounding-fp32");
  }
  for (const OutputReport &r : reports) {
    std::string interpText = "-";
    const char *interpWord = exactness(r.interpBitExact, r.interpRule, r.interp.pass);
    if (r.interpChecked)
      interpText = r.interp.pass ? interpWord : "DIFF(" + std::to_string(r.interp.mismatches) + ")";
    const char *result = r.pass                              ? "PASS"
                         : r.cmp.shapeMismatch               ? "FAIL (type/shape)"
                         : !r.cmp.pass                       ? "FAIL"
                         : r.interpChecked && !r.interp.pass ? "FAIL (interp)"
                                                             : "FAIL (interp stage)";
    std::printf("%-15s %-22s %-24s %11.4g %10.4g %8s %9s %10lld %s\n",
                ("test_data_set_" + std::to_string(r.dataset)).c_str(), r.cmp.name.c_str(),
                driver::describe(r.kind).c_str(), r.cmp.maxAbsError, r.cmp.relError,
                r.stepMode ? stepsText(r.cmp.maxSteps).c_str() : "-", interpText.c_str(),
                static_cast<long long>(r.cmp.firstMismatch), result);
    nlohmann::json o = {{"data_set", r.dataset},
                        {"output", r.cmp.name},
                        {"kind", driver::describe(r.kind)},
                        {"max_abs_error", r.cmp.maxAbsError},
                        {"max_abs_reference", r.cmp.maxAbsRef},
                        {"rel_error", r.cmp.relError},
                        {"first_mismatch", r.cmp.firstMismatch},
                        {"mismatches", r.cmp.mismatches},
                        {"golden_pass", r.cmp.pass},
                        {"pass", r.pass}};
    if (r.stepMode) {
      o["scale"] = r.kind.scale;
      o["zero_point"] = r.kind.zeroPoint;
      o["max_steps"] = std::isinf(r.cmp.maxSteps) ? -1.0 : r.cmp.maxSteps;
    }
    if (r.interpChecked)
      o["interp"] = {{"bit_exact", r.interpBitExact},
                     {"exactness", interpWord},
                     {"rule", r.interpRule},
                     {"max_abs_diff", r.interp.maxAbsError},
                     {"max_steps", r.interp.maxSteps < 0 || std::isinf(r.interp.maxSteps)
                                       ? -1.0
                                       : r.interp.maxSteps},
                     {"mismatches", r.interp.mismatches},
                     {"pass", r.interp.pass}};
    for (const StageReport &st : r.stages) {
      const char *word = exactness(st.bitExact, st.rule, st.pass);
      std::string text = st.bitExact ? "exact"
                         : st.cmp.maxSteps >= 0 && !std::isinf(st.cmp.maxSteps)
                             ? stepsText(st.cmp.maxSteps) + " steps"
                             : "max abs diff " + stepsText(st.cmp.maxAbsError);
      if (!st.bitExact && st.pass)
        text = std::string(word) + ", " + text;
      std::printf("%-15s %-22s vs interpreter, %-10s (%s): %s, %s\n",
                  ("test_data_set_" + std::to_string(r.dataset)).c_str(), r.cmp.name.c_str(),
                  st.stage.c_str(), st.rule.c_str(), text.c_str(),
                  st.pass ? "PASS"
                          : ("FAIL (" + std::to_string(st.cmp.mismatches) + " elements)").c_str());
      o["stages"].push_back(
          {{"stage", st.stage},
           {"rule", st.rule},
           {"bit_exact", st.bitExact},
           {"exactness", word},
           {"max_abs_diff", st.cmp.maxAbsError},
           {"max_steps",
            st.cmp.maxSteps < 0 || std::isinf(st.cmp.maxSteps) ? -1.0 : st.cmp.maxSteps},
           {"mismatches", st.cmp.mismatches},
           {"pass", st.pass}});
    }
    j["outputs"].push_back(o);
  }
  for (size_t si = 0; si < simFigures.size(); ++si) {
    const SimFigures &f = simFigures[si];
    std::printf("test_data_set_%zu  simulator (%s): %llu cycles, %llu commands, %llu register "
                "writes, MAC utilisation %.1f%%, system memory read %llu / written %llu bytes, "
                "hazards %d%s%s\n",
                si, cr->target.name.c_str(), f.cycles, f.commands, f.regWrites,
                100.0 * f.utilisation, f.dramRead, f.dramWrite, f.hazards,
                f.error.empty() ? "" : ": ", f.error.c_str());
    j["data_sets"][si]["sim"] = {{"cycles", f.cycles},
                                 {"commands", f.commands},
                                 {"register_writes", f.regWrites},
                                 {"macs", f.macs},
                                 {"mac_utilization", f.utilisation},
                                 {"dram_read_bytes", f.dramRead},
                                 {"dram_write_bytes", f.dramWrite},
                                 {"hazards", f.hazards}};
    allPass = allPass && f.hazards == 0;
  }
  if (interpOn && cr->preTargetGraph) { // phase 7f: the NPU's arithmetic vs the model's
    std::printf("%s",
                driver::layerDistanceText(layerDist, 20, cr->modelArithGraph != nullptr).c_str());
    j["layer_distance"] = driver::layerDistanceJson(layerDist, cr->modelArithGraph != nullptr);
  }
  std::printf("%s: %s\n", dir.filename().string().c_str(), allPass ? "PASS" : "FAIL");
  return allPass ? 0 : 1;
}

/// Writes the --json report (when asked for); false after printing the error.
bool writeReport(const std::string &path, const nlohmann::json &j) {
  if (path.empty())
    return true;
  if (Status s = replaceFileBytes(path, j.dump(2) + "\n", "the check report (--json)"); !s) {
    reportError(s.error());
    return false;
  }
  return true;
}

} // namespace

int runCheck(const CommonCompileFlags &common, const CheckFlags &flags) {
  nlohmann::json j;
  Result<int> r = checkModel(common, flags, j);
  j["npucc_version"] = NPUCC_VERSION;
  j["model"] = (fs::path(flags.modelDir) / "model.onnx").string();
  if (!r) {
    reportError(r.error());
    j["status"] = "error";
    j["error"] = r.error().str();
    j["pass"] = false;
    writeReport(flags.jsonPath, j);
    return kCheckError;
  }
  j["status"] = *r == 0 ? "pass" : "mismatch";
  j["pass"] = *r == 0;
  if (!writeReport(flags.jsonPath, j))
    return kCheckError;
  return *r;
}

int checkFlagError(const std::string &message, const std::string &jsonPath) {
  nlohmann::json j = {
      {"status", "error"}, {"error", message}, {"npucc_version", NPUCC_VERSION}, {"pass", false}};
  writeReport(jsonPath, j);
  return kCheckError;
}

} // namespace npucc::tool
