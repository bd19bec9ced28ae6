//===- Compile.cpp - `npucc MODEL.onnx -o OUT/` ---------------------------===//
#include "Commands.h"

#include "npucc/codegen/CEmitter.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/target/CTable.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <random>

namespace fs = std::filesystem;

namespace npucc::tool {

int reportError(const Diagnostic &d) {
  std::cerr << "npucc: " << d.str() << "\n";
  return 1;
}

Result<driver::CompileOptions> makeCompileOptions(const std::string &model,
                                                  const CommonCompileFlags &f) {
  driver::CompileOptions o;
  o.modelPath = model;
  for (const std::string &s : f.shapes) {
    auto b = onnx::parseShapeBinding(s);
    if (!b)
      return std::move(b.error());
    o.import.shapes[b->first] = b->second;
  }
  o.pipeline = f.passes;
  o.printAfter = f.printAfter;
  o.printIr = f.printIr;
  o.printLir = f.printLir;
  o.irOut = &std::cerr;
  o.prefix = f.prefix;
  o.target = f.target;
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
    auto i = readAll(numberedFiles(flags.dataDir, "input"));
    if (!i)
      return std::move(i.error());
    auto o = readAll(numberedFiles(flags.dataDir, "output"));
    if (!o)
      return std::move(o.error());
    ins = i.take();
    outs = o.take();
    if (ins.size() != cr.graph->inputs.size() || outs.size() != cr.graph->outputs.size())
      return error("--data " + flags.dataDir + ": expected " +
                   std::to_string(cr.graph->inputs.size()) + " inputs and " +
                   std::to_string(cr.graph->outputs.size()) + " outputs");
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

int runCompile(const CommonCompileFlags &common, const CompileFlags &flags) {
  auto opts = makeCompileOptions(flags.model, common);
  if (!opts)
    return reportError(opts.error());
  auto cr = driver::compileModel(*opts);
  if (!cr)
    return reportError(cr.error());
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
  Status w = codegen::writeOutputDir(flags.outDir, files);
  if (!w)
    return reportError(w.error());
  int64_t weights = 0;
  for (const lir::ConstBuffer &c : cr->program.constants)
    weights += static_cast<int64_t>(c.data.byteSize());
  std::cout << "npucc: wrote " << files.size() << " files to " << flags.outDir << "\n"
            << "  nodes: " << cr->graph->nodes().size()
            << ", kernel calls: " << cr->program.body.size() << "\n"
            << "  weights: " << weights << " bytes\n"
            << "  arena: " << cr->program.arenaSize << " bytes\n"
            << "  target: " << cr->target.name << " (register map in "
            << target::cIdentifier(cr->target.name) << "_regs.h; every op runs on CPU kernels)\n";
  return 0;
}

} // namespace npucc::tool
