//===- Driver.cpp - The compile pipeline as a library call ----------------===//
#include "npucc/driver/Driver.h"

#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Printer.h"
#include "npucc/ir/Verifier.h"
#include "npucc/lower/CpuLowering.h"
#include "npucc/lower/LirPass.h"
#include "npucc/quant/Calibrate.h"
#include "npucc/quant/Equalize.h"
#include "npucc/quant/InsertQdq.h"
#include "npucc/quant/Rounding.h"
#include "npucc/quant/Samples.h"
#include "npucc/support/FileRead.h"
#include "npucc/target/CTable.h"
#include "npucc/target/Legality.h"
#include "npucc/target/QuantRules.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

namespace npucc::driver {

namespace {

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// True when `p`, ignoring case, is `ns` or begins with `ns_` (the generated
/// API uses P_NAME identifiers and P_NAME macros, files P.h, P_weights.c).
bool inNamespace(const std::string &p, const std::string &ns) {
  std::string l = lower(p), n = lower(ns);
  return l == n || l.rfind(n + "_", 0) == 0;
}

} // namespace

std::string prefixProblem(const std::string &p, const std::string &targetId) {
  if (p.empty())
    return "is empty; it must be a C identifier";
  if (std::isdigit(static_cast<unsigned char>(p[0])))
    return "is not a C identifier (it starts with a digit)";
  for (char c : p)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return std::string("is not a C identifier (it contains '") + c + "')";
  if (p[0] == '_')
    return "starts with '_': identifiers beginning with an underscore are reserved for the C "
           "implementation (C99 7.1.3)";
  static const char *const keywords[] = {
      "auto",    "break",  "case",     "char",   "const",    "continue", "default",
      "do",      "double", "else",     "enum",   "extern",   "float",    "for",
      "goto",    "if",     "inline",   "int",    "long",     "register", "restrict",
      "return",  "short",  "signed",   "sizeof", "static",   "struct",   "switch",
      "typedef", "union",  "unsigned", "void",   "volatile", "while"};
  for (const char *k : keywords)
    if (p == k)
      return "is a C keyword";
  if (inNamespace(p, "npucc"))
    return "is in the npucc_ namespace of the runtime (kernels, HAL, command layer, "
           "simulator, npucc check's harness: npucc_* files, functions and types, NPUCC_* "
           "macros), so the generated files or names would collide with them";
  if (!targetId.empty() && inNamespace(p, targetId))
    return "is in the namespace of the target '" + targetId + "' (its register map " + targetId +
           "_regs.h and description table " + targetId + "_target.c use " + targetId +
           "_* names and macros), so the generated files or names would collide "
           "with them";
  return "";
}

namespace {

Status evalAll(const ir::Graph &g, const std::map<std::string, ir::Tensor> &in,
               std::map<std::string, ir::Tensor> &all) {
  auto r = interp::runGraph(g, in, &all);
  if (!r)
    return std::move(r.error());
  return success();
}

/// QDQ graph and its folded int8 twin for one set of ranges.
struct Quantized {
  std::unique_ptr<ir::Graph> qdq, folded;
  std::vector<std::string> constrained; // quant::QdqStats::constrained
};

Result<Quantized> buildQuantized(const ir::Graph &floatGraph,
                                 const std::map<std::string, quant::Range> &ranges,
                                 const std::string &pipeline, passes::PassContext &ctx,
                                 const quant::QdqOptions &qopts = {}) {
  Quantized q;
  q.qdq = floatGraph.clone();
  auto st = quant::insertQdq(*q.qdq, ranges, qopts);
  if (!st)
    return std::move(st.error());
  q.constrained = st->constrained;
  NPUCC_TRY(ir::verifyGraph(*q.qdq));
  q.folded = q.qdq->clone();
  std::string pl =
      pipeline.find("fold-qdq") == std::string::npos ? "fold-qdq," + pipeline : pipeline;
  NPUCC_TRY(passes::runPipeline(*q.folded, pl, ctx));
  return q;
}

/// Float reference outputs of `fg` for each sample (for outputSnr).
using SampleOutputs = std::vector<std::map<std::string, ir::Tensor>>;
Result<SampleOutputs> floatOutputs(const ir::Graph &fg, const std::vector<quant::Sample> &samples) {
  SampleOutputs r;
  for (const quant::Sample &s : samples) {
    auto fr = interp::runGraph(fg, s.inputs);
    if (!fr)
      return std::move(fr.error());
    r.push_back(fr.take());
  }
  return r;
}

/// Output SNR (dB) of the quantized graph against the float outputs `ref` of `samples`.
Result<double> outputSnr(const SampleOutputs &ref, const ir::Graph &qg,
                         const std::vector<quant::Sample> &samples) {
  double ref2 = 0, err2 = 0;
  for (size_t k = 0; k < samples.size(); ++k) {
    auto qr = interp::runGraph(qg, samples[k].inputs);
    if (!qr)
      return std::move(qr.error());
    for (const auto &kv : ref[k]) {
      auto it = qr->find(kv.first);
      if (it == qr->end() || it->second.numElements() != kv.second.numElements())
        continue;
      for (int64_t i = 0; i < kv.second.numElements(); ++i) {
        double a = kv.second.getDouble(i), b = it->second.getDouble(i);
        ref2 += a * a;
        err2 += (a - b) * (a - b);
      }
    }
  }
  return err2 > 0 ? 10.0 * std::log10(ref2 / err2) : INFINITY;
}

/// What the calibration method is chosen on: the statistics, the candidate methods, the
/// float outputs of the evaluation samples (empty with one method).
struct MethodChoice {
  const std::map<std::string, quant::ValueStats> &stats;
  const std::vector<quant::CalibMethod> &methods;
  double percentile;
  const SampleOutputs &evalRef;
  const std::vector<quant::Sample> &evalSet;
  const std::string &pipeline;
};

struct Candidate {
  Quantized q;
  std::map<std::string, int64_t> stats; // pass statistics of this candidate
  std::map<std::string, quant::Range> ranges;
  quant::CalibMethod method = quant::CalibMethod::MinMax;
};

/// The graph quantized with `qopts` by the method of `mc` with the best output SNR on the
/// evaluation samples (the only method when there is one).
Result<Candidate> calibrateBest(const ir::Graph &g, const MethodChoice &mc,
                                const quant::QdqOptions &qopts, passes::PassContext &ctx) {
  Candidate best;
  double bestSnr = -INFINITY;
  for (quant::CalibMethod m : mc.methods) {
    auto ranges = quant::computeRanges(mc.stats, m, mc.percentile);
    passes::PassContext local = ctx;
    local.stats.clear();
    auto q = buildQuantized(g, ranges, mc.pipeline, local, qopts);
    if (!q)
      return std::move(q.error());
    double snr = 0;
    if (mc.methods.size() > 1) {
      auto s = outputSnr(mc.evalRef, *q->folded, mc.evalSet);
      if (!s)
        return std::move(s.error());
      snr = *s;
    }
    if (!best.q.folded || snr > bestSnr) {
      best.q = std::move(*q);
      best.stats = local.stats;
      best.ranges = std::move(ranges);
      best.method = m;
      bestSnr = snr;
    }
  }
  return best;
}

/// Nodes quantized by a target rule that the NPU still rejects (for a reason
/// other than their parameters: a kernel size, a channel count) get the
/// default parameters back, which cost no accuracy; then the graph quantized
/// without any rule is kept for the accuracy report's comparison.
Status applyTargetRules(CompileResult &r, Quantized &best, std::map<std::string, int64_t> &stats,
                        const std::map<std::string, quant::Range> &ranges,
                        const quant::QdqOptions &qopts, const MethodChoice &mc,
                        passes::PassContext &ctx) {
  const std::string &pipeline = mc.pipeline;
  std::map<std::string, const ir::Node *> floatNodes;
  for (const auto &fn : r.graph->nodes())
    floatNodes[fn->name] = fn.get();
  std::set<std::string> relax;
  for (const auto &n : best.folded->nodes()) {
    auto f = floatNodes.find(n->name);
    if (n->output(0) && n->output(0)->quant && f != floatNodes.end() &&
        !qopts.weightRule(*f->second).isDefault() && !target::placeNode(*n, r.target).onNpu())
      relax.insert(n->name);
  }
  if (!relax.empty()) {
    quant::QdqOptions relaxed = qopts;
    relaxed.weightRule = [&](const ir::Node &n) {
      return relax.count(n.name) ? quant::WeightRule() : qopts.weightRule(n);
    };
    passes::PassContext local = ctx;
    local.stats.clear();
    auto q = buildQuantized(*r.graph, ranges, pipeline, local, relaxed);
    if (!q)
      return std::move(q.error());
    best = std::move(*q);
    stats = local.stats;
  }
  r.quantConstraints = best.constrained;
  if (!best.constrained.empty() || qopts.powerOfTwoActivations) {
    // The comparison: the model calibrated as without the target's rules (its own choice
    // of method among the candidates, as on a target without constraints).
    passes::PassContext local = ctx;
    auto q = calibrateBest(*r.graph, mc, quant::QdqOptions(), local);
    if (!q)
      return std::move(q.error());
    r.unconstrainedGraph = std::move(q->q.folded);
    if (qopts.powerOfTwoActivations)
      r.quantConstraints.push_back("every activation: power-of-two scale (a shift-only "
                                   "requantizer needs power-of-two ratios)");
  }
  return success();
}

/// `--quantize int8`: calibrates r.graph (float, after the float passes) and
/// replaces it by its typed int8 form.
Status quantizeInt8(CompileResult &r, const CompileOptions &opts, const std::string &pipeline,
                    passes::PassContext &ctx) {
  const QuantOptions &qo = opts.quant;
  if (qo.mode != "int8")
    return error("--quantize " + qo.mode + ": only 'int8' is supported");
  if (qo.randomSamples < 0)
    return error("--calib-random " + std::to_string(qo.randomSamples) + ": must be positive");
  if (qo.calibDir.empty() && qo.randomSamples <= 0)
    return error("--quantize int8 needs calibration data: pass --calib DIR (a folder of sample "
                 "inputs: .npy or .pb files, or one sub-folder per sample such as ONNX "
                 "test_data_set_N; see docs/quantization.md), or --calib-random N for a smoke "
                 "test with random inputs");
  if (!qo.calibDir.empty() && qo.randomSamples > 0)
    return error("--calib and --calib-random are exclusive");
  if (qo.calibDir.empty()) {
    int64_t sampleBytes = 0;
    for (const ir::Value *v : r.graph->inputs)
      sampleBytes += static_cast<int64_t>(v->byteSize());
    if (qo.randomSamples > kMaxRandomSamples ||
        static_cast<int64_t>(qo.randomSamples) * sampleBytes > ir::kMaxTensorBytes)
      return error(
          "--calib-random " + std::to_string(qo.randomSamples) + ": at most " +
          std::to_string(std::min<int64_t>(
              kMaxRandomSamples, ir::kMaxTensorBytes / std::max<int64_t>(sampleBytes, 1))) +
          " samples for this model (random inputs are for smoke tests; calibrate on "
          "real inputs with --calib DIR)");
  }
  for (const auto &n : r.graph->nodes())
    if (n->kind == ir::OpKind::QuantizeLinear || n->kind == ir::OpKind::DequantizeLinear ||
        (n->output(0) && n->output(0)->quant))
      return error("--quantize int8: the model is already quantized (node '" + n->name + "' is " +
                   n->opName() + " or integer); compile it without --quantize");
  std::vector<quant::CalibMethod> methods;
  if (qo.method == "auto") {
    methods = {quant::CalibMethod::Entropy, quant::CalibMethod::Percentile,
               quant::CalibMethod::MinMax, quant::CalibMethod::Mse};
  } else {
    auto m = quant::parseCalibMethod(qo.method);
    if (!m)
      return error("--calib-method '" + qo.method +
                   "': expected minmax, percentile, entropy, mse or auto");
    methods = {*m};
  }
  if (!(qo.percentile > 50.0 && qo.percentile <= 100.0))
    return error("--calib-percentile must be in (50, 100]");
  std::vector<quant::Sample> samples;
  if (!qo.calibDir.empty()) {
    auto s = quant::loadSamples(qo.calibDir, *r.graph);
    if (!s)
      return std::move(s.error());
    samples = s.take();
  } else {
    samples = quant::randomSamples(*r.graph, qo.randomSamples, qo.randomSeed);
    r.warnings.push_back("--calib-random: calibrating on random N(0,1) inputs; the int8 "
                         "model's accuracy is meaningless (use --calib DIR with real inputs)");
  }
  quant::CalibOptions co;
  co.progress = qo.progress;
  co.progressTty = qo.progressTty;
  auto stats = quant::collectStats(*r.graph, samples, evalAll, co);
  if (!stats)
    return std::move(stats.error());
  if (qo.equalize) {
    // Equalize channel ranges (exact in float), then calibrate the rescaled graph.
    std::unique_ptr<ir::Graph> eq = r.graph->clone();
    r.equalized = quant::equalizeChannels(*eq, *stats);
    if (r.equalized > 0) {
      NPUCC_TRY(passes::runPipeline(*eq, "dce", ctx));
      r.graph = std::move(eq);
      stats = quant::collectStats(*r.graph, samples, evalAll, co);
      if (!stats)
        return std::move(stats.error());
    }
  }
  // auto: the method with the best output SNR on (up to 16 of) the samples.
  std::vector<quant::Sample> evalSet(
      samples.end() - static_cast<std::ptrdiff_t>(std::min<size_t>(16, samples.size())),
      samples.end());
  SampleOutputs evalRef;
  if (methods.size() > 1) {
    auto fr = floatOutputs(*r.graph, evalSet);
    if (!fr)
      return std::move(fr.error());
    evalRef = fr.take();
  }
  // On an NPU, the parameters its requantizer accepts (target::quantRules).
  quant::QdqOptions qopts;
  if (r.npu)
    qopts = target::quantRules(r.target);
  MethodChoice mc{*stats, methods, qo.percentile, evalRef, evalSet, pipeline};
  auto chosen = calibrateBest(*r.graph, mc, qopts, ctx);
  if (!chosen)
    return std::move(chosen.error());
  Quantized best = std::move(chosen->q);
  std::map<std::string, int64_t> bestStats = std::move(chosen->stats);
  std::map<std::string, quant::Range> bestRanges = std::move(chosen->ranges);
  r.calibMethod = quant::calibMethodName(chosen->method);
  if (!qopts.isDefault())
    NPUCC_TRY(applyTargetRules(r, best, bestStats, bestRanges, qopts, mc, ctx));
  for (const auto &kv : bestStats)
    ctx.stats[kv.first] += kv.second;
  r.floatGraph = std::move(r.graph);
  r.qdqGraph = std::move(best.qdq);
  r.graph = std::move(best.folded);
  r.floatOps = quant::floatOpsOf(*r.graph);
  return success();
}

/// npu-partition's deliberate arithmetic change, applied to the pre-target graph `pre`
/// (a clone made just before it, node for node in the order of `placed`, the original
/// nodes, which npu-partition keeps and may modify but never frees): a node that lost
/// requant="fp32" (it runs on an NPU that rounds exactly) loses it in `pre` too, and
/// one that gained it (an NPU whose requantization is fp32_scale) gains it there;
/// mul_shift_add's rq_stage/rq_bits are copied likewise.
/// Returns whether any node changed; `npu` receives the placed nodes' indices and NPU ops.
/// `erased`: nodes npu-partition erased (their pointers in `placed` are dangling).
/// A fused activation on a pwl NPU is approximated: its fitted segments
/// (act_pwl) go onto the activation node in `pre`, which joins `npu` with
/// its producer's NPU op, so the distance covers the fit.
bool syncRounding(ir::Graph &pre, const std::vector<const ir::Node *> &placed,
                  const std::vector<const ir::Node *> &erased,
                  std::vector<std::pair<size_t, std::string>> &npu) {
  const auto &nodes = pre.nodes();
  bool changed = false;
  for (size_t k = 0; k < nodes.size() && k < placed.size(); ++k) {
    // A node npu-partition folded into its producer (a fused activation) is
    // gone: its arithmetic is unchanged (the table is exact), nothing to sync.
    if (std::find(erased.begin(), erased.end(), placed[k]) != erased.end())
      continue;
    if (auto op = placed[k]->attrs.find("npu"); op != placed[k]->attrs.end())
      if (const auto *s = std::get_if<std::string>(&op->second))
        npu.emplace_back(k, *s);
    // mul_shift_add's attributes: the pre-target graph evaluates the NPU's
    // fitted requantization too.
    for (const char *key : {"rq_stage", "rq_bits"})
      if (auto a = placed[k]->attrs.find(key); a != placed[k]->attrs.end()) {
        auto old = nodes[k]->attrs.find(key);
        changed = changed || old == nodes[k]->attrs.end() || !(old->second == a->second);
        nodes[k]->attrs[key] = a->second;
      }
    if (auto pwl = placed[k]->attrs.find("act_pwl"); pwl != placed[k]->attrs.end())
      for (size_t j = 0; j < nodes.size() && j < placed.size(); ++j)
        if (std::find(erased.begin(), erased.end(), placed[j]) != erased.end() &&
            !nodes[j]->inputs.empty() && nodes[j]->input(0) == nodes[k]->output(0)) {
          nodes[j]->attrs["act_pwl"] = pwl->second;
          npu.emplace_back(j, placed[k]->attrString("npu", ""));
          changed = true;
        }
    auto it = placed[k]->attrs.find("requant");
    if (it == placed[k]->attrs.end()) {
      changed = nodes[k]->attrs.erase("requant") > 0 || changed;
    } else if (quant::requantizesProduct(*nodes[k])) {
      auto old = nodes[k]->attrs.find("requant");
      changed = changed || old == nodes[k]->attrs.end() || !(old->second == it->second);
      nodes[k]->attrs["requant"] = it->second;
    }
  }
  return changed;
}

/// Whether the comma-separated `pipeline` names `pass`.
bool listsPass(const std::string &pipeline, const std::string &pass) {
  size_t start = 0;
  for (;;) {
    size_t comma = pipeline.find(',', start);
    std::string item = pipeline.substr(start, comma == std::string::npos ? comma : comma - start);
    size_t b = item.find_first_not_of(" \t\n"), e = item.find_last_not_of(" \t\n");
    if (b != std::string::npos && item.substr(b, e - b + 1) == pass)
      return true;
    if (comma == std::string::npos)
      return false;
    start = comma + 1;
  }
}

} // namespace

Result<target::TargetDesc> loadTarget(const std::string &nameOrPath) {
  const std::vector<std::string> builtins = target::builtinTargets();
  std::error_code ec;
  bool builtin = std::find(builtins.begin(), builtins.end(), nameOrPath) != builtins.end();
  if (builtin || !std::filesystem::exists(nameOrPath, ec))
    return target::loadTarget(nameOrPath); // a built-in, or its "not a file" diagnostic
  auto text = readFileLimited(nameOrPath, kMaxTargetFileBytes, "target description");
  if (!text)
    return std::move(text.error());
  auto r = target::parseTargetJson(*text, nameOrPath);
  if (r)
    r->file = nameOrPath;
  return r;
}

Result<CompileResult> compileModel(const CompileOptions &opts) {
  auto badPrefix = [&](const std::string &why) {
    return error("--prefix '" + opts.prefix + "' " + why + "; choose another prefix");
  };
  if (std::string why = prefixProblem(opts.prefix, ""); !why.empty())
    return badPrefix(why);
  CompileResult r;
  r.npu = opts.target != "cpu";
  if (r.npu) {
    auto tgt = loadTarget(opts.target);
    if (!tgt)
      return std::move(tgt.error());
    r.target = tgt.take();
    std::string why = prefixProblem(opts.prefix, target::cIdentifier(r.target.name));
    if (!why.empty())
      return badPrefix(why);
  }
  onnx::ImportOptions io = opts.import;
  io.notes = &r.notes;
  auto g = onnx::importModel(opts.modelPath, io);
  if (!g)
    return std::move(g.error());
  r.graph = g.take();
  NPUCC_TRY(ir::verifyGraph(*r.graph));
  if (opts.keepStageGraphs && opts.quant.mode.empty())
    r.importedGraph = r.graph->clone();

  passes::PassContext ctx;
  ctx.printAfter = opts.printAfter;
  ctx.printOut = opts.irOut;
  for (const lower::LirPassInfo &lp : lower::allLirPasses())
    ctx.laterPassNames.push_back(lp.name);
  std::string pipeline = opts.pipeline.empty() ? passes::defaultPipeline() : opts.pipeline;
  // fold-qdq is a lowering prerequisite, not an optimization: the lowering
  // takes typed int8 ops, not QuantizeLinear/DequantizeLinear pairs (nor u8).
  // A --passes list without it runs it first (quantizeInt8 does the same).
  const bool addedFoldQdq = !listsPass(pipeline, "fold-qdq");
  if (addedFoldQdq)
    pipeline = "fold-qdq," + pipeline;
  Status s = passes::runPipeline(*r.graph, pipeline, ctx);
  if (!s)
    return std::move(s.error().inFile(opts.modelPath));
  if (addedFoldQdq) {
    int64_t changed = 0;
    for (const auto &kv : ctx.stats)
      changed += kv.first.rfind("fold-qdq.", 0) == 0 ? kv.second : 0;
    if (changed > 0)
      r.notes.push_back("--passes=" + opts.pipeline +
                        " leaves out fold-qdq, which the lowering needs on this quantized model "
                        "(typed int8 ops instead of its QuantizeLinear/DequantizeLinear pairs): "
                        "it ran first");
  }
  if (!opts.quant.mode.empty()) {
    Status qs = quantizeInt8(r, opts, pipeline, ctx);
    if (!qs)
      return std::move(qs.error().inFile(opts.modelPath));
  }
  if (opts.requant != "auto") {
    auto rd = quant::parseRounding(opts.requant);
    if (!rd)
      return error("--requant '" + opts.requant + "': expected auto, exact or fp32");
    quant::setRounding(*r.graph, *rd);
  }
  if (opts.io == "int8") {
    Status is = passes::runPipeline(*r.graph, "io-int8", ctx);
    if (!is)
      return std::move(is.error().inFile(opts.modelPath));
  } else if (opts.io != "float") {
    return error("--io '" + opts.io + "': expected float or int8");
  }
  std::unique_ptr<ir::Graph> beforeNpu; // for the CPU fallback
  if (r.npu) {
    beforeNpu = r.graph->clone();
    std::vector<const ir::Node *> placed; // the nodes npu-partition will see
    if (opts.keepStageGraphs) {
      r.preTargetGraph = r.graph->clone();
      for (const auto &n : r.graph->nodes())
        placed.push_back(n.get());
    }
    // Place what the NPU can run (lib/target/Legality.cpp) and give it NHWC.
    ctx.target = &r.target;
    ctx.npuExactForFp32 = opts.requant != "fp32";
    r.npuExactForFp32 = ctx.npuExactForFp32;
    ctx.npuFp32ForExact = opts.requant != "exact";
    r.npuFp32ForExact = ctx.npuFp32ForExact;
    Status ps = passes::runPipeline(*r.graph, "npu-partition", ctx);
    if (!ps)
      return std::move(ps.error().inFile(opts.modelPath));
    if (r.preTargetGraph && ctx.stats.count("npu-partition.npu")) {
      std::unique_ptr<ir::Graph> model = r.preTargetGraph->clone();
      if (syncRounding(*r.preTargetGraph, placed, ctx.erased, r.preTargetNpu))
        r.modelArithGraph = std::move(model);
    } else
      r.preTargetGraph.reset(); // nothing placed: the final graph is the pre-target graph
    for (const std::string &w : ctx.warnings)
      r.warnings.push_back(w);
    if (!ctx.stats.count("npu-partition.npu")) {
      bool integer = false;
      for (const auto &n : r.graph->nodes())
        integer = integer || (n->output(0) && n->output(0)->quant);
      r.warnings.push_back(
          integer ? "no op runs on the NPU '" + r.target.name +
                        "' (npucc --explain MODEL --target ... says why); every op runs on "
                        "the CPU kernels"
                  : "no op runs on the NPU '" + r.target.name +
                        "': the model is float; quantize it (--quantize int8 --calib DIR) or "
                        "compile a pre-quantized model to use the NPU, or pass --target cpu");
    }
  }
  quant::RoundingCounts rc = quant::countRoundings(*r.graph);
  r.requantExact = rc.exact;
  r.requantFp32 = rc.fp32;
  r.stats = ctx.stats;
  if (opts.printIr && opts.irOut)
    ir::printGraph(*opts.irOut, *r.graph, ir::PrintOptions{16});

  // When the NPU cannot reach the program's memory (the description's
  // windows are too small), the CPU kernels run it all, with a warning.
  auto fallBackToCpu = [&](const std::string &problem) {
    r.warnings.push_back(problem + " of '" + r.target.name + "'; every op runs on the CPU kernels");
    r.graph = std::move(beforeNpu);
    r.preTargetGraph.reset(); // the final graph is the pre-target graph now
    r.modelArithGraph.reset();
    r.preTargetNpu.clear();
    r.npuLowering.reset();
    r.stats.erase("npu-partition.npu");
    r.stats.erase("npu-partition.rounding-exact");
    r.stats.erase("npu-partition.rounding-fp32");
  };
  if (r.npu)
    if (std::string problem = lower::npuWeightsProblem(*r.graph, r.target); !problem.empty())
      fallBackToCpu(problem);
  lower::CpuLowerOptions lo;
  lo.fastKernels = opts.cpuKernels != "reference";
  lo.patches = opts.patches != "off" && !r.npu;
  lo.patchesAlways = opts.patches == "always";
  if (r.npu && beforeNpu) {
    lower::NpuLowerOptions no;
    no.handoff = opts.npuHandoff;
    r.npuLowering = std::make_unique<lower::NpuLowering>(r.target, no);
    lo.npu = r.npuLowering.get();
    lo.arenaAlign = std::max<int64_t>(16, r.target.dma.alignment);
  }
  auto prog = lower::lowerGraphToCpu(*r.graph, lo);
  if (!prog)
    return std::move(prog.error().inFile(opts.modelPath));
  if (r.npu && beforeNpu) {
    // The NPU's DMA must reach the arena, the constants and the I/O buffers.
    std::string problem = lower::memoryWindowProblem(*prog, r.target);
    if (!problem.empty()) {
      fallBackToCpu(problem);
      lo = lower::CpuLowerOptions();
      lo.fastKernels = opts.cpuKernels != "reference";
      prog = lower::lowerGraphToCpu(*r.graph, lo);
      if (!prog)
        return std::move(prog.error().inFile(opts.modelPath));
    }
  }
  r.program = prog.take();
  if (r.program.usesNpu()) {
    // The loop-IR passes: cross-layer prefetch, waits for every dependency,
    // then the checks of the waits and of the scratchpad buffers.
    lower::LirPassContext lctx;
    lctx.target = &r.target;
    lctx.printAfter = opts.printAfter;
    lctx.printOut = opts.irOut;
    Status ls =
        lower::runLirPipeline(r.program, "npu-prefetch,npu-waits,verify-waits,verify-spm", lctx);
    if (!ls)
      return std::move(ls.error().inFile(opts.modelPath));
  }
  if (opts.printLir && opts.irOut)
    lir::printProgram(*opts.irOut, r.program);

  codegen::EmitOptions eo;
  eo.prefix = opts.prefix;
  eo.externalArena = opts.arena == "external";
  eo.sections = opts.sections;
  auto files = codegen::emitC(r.program, eo, &r.emitStats);
  if (!files)
    return std::move(files.error().inFile(opts.modelPath));
  r.files = files.take();
  if (r.npu) {
    // The register map (for firmware engineers to read) and, when NPU commands
    // run, the description table the command layer uses.
    bool commands = r.program.usesNpu();
    for (const auto &f : target::emitTargetFiles(r.target))
      if (commands || f.first.find("_regs.h") != std::string::npos)
        r.files.push_back({f.first, f.second});
  }
  return r;
}

} // namespace npucc::driver
