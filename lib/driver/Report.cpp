//===- Report.cpp - Per-layer placement, cost and memory of a compile -----===//
#include "npucc/driver/Report.h"

#include "npucc/target/Legality.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace npucc::driver {

namespace {

std::string shapeText(const ir::Shape &s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "x" : "") + std::to_string(s[i]);
  return r.empty() ? "scalar" : r;
}

std::string fit(const std::string &s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

/// Layers the report lists: every node but the free view ops.
bool listed(const ir::Node &n) { return !(n.info().flags & ir::OPF_VIEW); }

int64_t elements(const ir::Value *v) {
  if (!v)
    return 0;
  int64_t e = 1;
  for (int64_t d : v->shape)
    e *= std::max<int64_t>(d, 0);
  return e;
}

/// Multiply-accumulates of a node wherever it runs, from its shapes alone:
/// Conv (either layout) = output elements x weight elements per output
/// channel; ConvTranspose = input elements x weights per input channel;
/// Gemm / MatMul = output elements x the reduced dimension.
uint64_t graphMacs(const ir::Node &n) {
  const ir::Value *w = n.input(1);
  switch (n.kind) {
  case ir::OpKind::Conv:
  case ir::OpKind::ConvTranspose: {
    if (!w || w->shape.empty() || w->shape[0] <= 0)
      return 0;
    int64_t perChannel = elements(w) / w->shape[0];
    return uint64_t((n.kind == ir::OpKind::Conv ? elements(n.output(0)) : elements(n.input(0))) *
                    perChannel);
  }
  case ir::OpKind::Gemm:
  case ir::OpKind::MatMul: {
    const ir::Value *a = n.input(0);
    if (!a || a->shape.empty())
      return 0;
    int64_t k =
        n.kind == ir::OpKind::Gemm && n.attrInt("transA", 0) ? a->shape[0] : a->shape.back();
    return uint64_t(elements(n.output(0)) * k);
  }
  default:
    return 0;
  }
}

/// The activation bytes the NPU must move at least once: values an NPU node
/// reads that no NPU node produced (graph inputs, CPU results) and values an
/// NPU node produces that a CPU node or the graph's outputs read.
std::pair<uint64_t, uint64_t> npuBoundaryBytes(const ir::Graph &g) {
  auto onNpu = [](const ir::Node *n) { return n && !n->attrString("npu", "").empty(); };
  std::set<const ir::Value *> in, out;
  std::set<const ir::Value *> graphOut(g.outputs.begin(), g.outputs.end());
  for (const auto &np : g.nodes()) {
    if (!onNpu(np.get()))
      continue;
    for (size_t i = 0; i < np->inputs.size(); ++i) {
      const ir::Value *v = np->input(i);
      if (v && !v->isConstant() && !onNpu(v->producer))
        in.insert(v);
    }
    for (size_t i = 0; i < np->outputs.size(); ++i) {
      const ir::Value *v = np->output(i);
      if (!v)
        continue;
      bool cpuUse = graphOut.count(v) > 0;
      for (const ir::Node *u : g.users(v))
        cpuUse = cpuUse || !onNpu(u);
      if (cpuUse)
        out.insert(v);
    }
  }
  uint64_t a = 0, b = 0;
  for (const ir::Value *v : in)
    a += ir::Tensor::byteSizeOf(v->dtype, v->shape);
  for (const ir::Value *v : out)
    b += ir::Tensor::byteSizeOf(v->dtype, v->shape);
  return {a, b};
}

/// A Conv's MACs without the output channels whose constant weights are all
/// zero (the fast kernels skip them: runtime/kernels/npucc_conv_s8_fast.h);
/// graphMacs for other nodes.
uint64_t computedMacs(const ir::Node &n) {
  uint64_t macs = graphMacs(n);
  const ir::Value *w = n.input(1);
  if (n.kind != ir::OpKind::Conv || !macs || !w || !w->isConstant() || w->shape.empty() ||
      w->shape[0] <= 0)
    return macs;
  const std::vector<uint8_t> &b = w->constant->bytes();
  size_t m = size_t(w->shape[0]), per = b.size() / m, live = 0;
  for (size_t c = 0; c < m; ++c)
    live += std::any_of(b.begin() + long(c * per), b.begin() + long((c + 1) * per),
                        [](uint8_t x) { return x != 0; });
  return macs / m * live;
}

/// The node a loop-IR instruction implements: its comment is "name (Op...)".
std::string commentNode(const std::string &comment) {
  size_t p = comment.rfind(" (");
  return p == std::string::npos ? comment : comment.substr(0, p);
}

/// A call of a patch plan's stripes (lib/lower/cpu/Patches.cpp) does part of its
/// node's work: ", share a/b" of it (returned: the call costs that part of the
/// node's estimate), or a copy of ", copies N bytes" (its work).
double patchShare(const std::string &comment, lower::KernelWork &w) {
  long long a = 0, b = 0;
  size_t p = comment.find(", share ");
  if (p != std::string::npos &&
      std::sscanf(comment.c_str() + p, ", share %lld/%lld", &a, &b) == 2 && a >= 0 && b > 0)
    return double(a) / double(b);
  p = comment.find(", copies ");
  if (p != std::string::npos && std::sscanf(comment.c_str() + p, ", copies %lld", &a) == 1 &&
      a >= 0)
    w = lower::KernelWork{0, uint64_t(a), 0, 0};
  return 1.0;
}

/// Every CPU kernel call, memcpy and memset of the program with the work of
/// the node it implements and its estimated cycles (lower::estimateCpuCall).
void costCpuCalls(const CompileResult &r, CompileReport &rep) {
  std::map<std::string, const ir::Node *> byName;
  if (r.graph)
    for (const auto &np : r.graph->nodes())
      byName.emplace(np->name, np.get());
  size_t index = 0;
  for (const lir::Instr &in : r.program.body) {
    if (in.opcode != "call" && in.opcode != "memcpy" && in.opcode != "memset")
      continue;
    CpuCallRow c;
    c.index = index++;
    c.kernel = in.opcode == "call" ? in.callee : in.opcode;
    c.layer = commentNode(in.comment);
    auto it = byName.find(c.layer);
    if (it != byName.end()) {
      c.work.macs = computedMacs(*it->second);
      c.work.outElems = uint64_t(elements(it->second->output(0)));
      c.work.inElems = uint64_t(elements(it->second->input(0)));
      const ir::Value *w = it->second->input(1);
      if (w && w->isConstant())
        c.work.constElems = uint64_t(elements(w));
    }
    double share = patchShare(in.comment, c.work);
    c.cost = lower::estimateCpuCall(in, c.work);
    if (share != 1.0)
      for (uint64_t &cycles : c.cost.cycles)
        cycles = uint64_t(double(cycles) * share + 0.5);
    rep.cpuCallsCalibrated += c.cost.calibrated;
    for (int k = 0; k < int(lower::CpuCore::Count); ++k)
      rep.cpuCycles[k] += c.cost.cycles[k];
    rep.cpuCalls.push_back(std::move(c));
  }
  std::map<std::string, LayerRow *> rows;
  for (LayerRow &l : rep.layers)
    rows.emplace(l.name, &l);
  for (const CpuCallRow &c : rep.cpuCalls) {
    auto it = rows.find(c.layer);
    if (it == rows.end())
      continue;
    for (int k = 0; k < int(lower::CpuCore::Count); ++k)
      it->second->cpuCycles[k] += c.cost.cycles[k];
    it->second->cpuCalibrated = it->second->cpuCalibrated && c.cost.calibrated;
  }
}

} // namespace

CompileReport buildReport(const CompileResult &r) {
  CompileReport rep;
  rep.arenaBytes = uint64_t(r.program.arenaSize);
  for (const lir::ConstBuffer &c : r.program.constants)
    rep.weightBytes += c.data.byteSize();
  rep.npuCommands = r.emitStats.npuCommands;
  rep.streamBytes = r.emitStats.npuStreamBytes;
  rep.scratchpadPeakBytes = uint64_t(r.program.spmPeak);
  if (r.npu)
    rep.target = r.target.name;
  uint64_t cpuCalls = 0;
  for (const lir::Instr &in : r.program.body)
    cpuCalls += in.opcode == "call";
  // Flash of the program beside its constants: the NPU stream tables and
  // roughly 40 bytes per kernel call site.
  rep.codeBytesEstimate = rep.streamBytes + 40 * cpuCalls;
  if (!r.graph)
    return rep;
  for (const auto &np : r.graph->nodes()) {
    const ir::Node &n = *np;
    if (n.kind == ir::OpKind::Transpose && n.name.find("_transpose") != std::string::npos &&
        r.stats.count("npu-partition.transposes"))
      ++rep.transposes;
    if (!listed(n))
      continue;
    LayerRow row;
    row.name = n.name;
    row.op = n.opName();
    if (n.output(0))
      row.outShape = n.output(0)->shape;
    std::string kind = n.attrString("npu", "");
    row.macs = graphMacs(n);
    if (r.npu) {
      target::LegalityOptions lo;
      lo.allowExactForFp32 = r.npuExactForFp32;
      lo.allowFp32ForExact = r.npuFp32ForExact;
      target::Placement p = target::placeNode(n, r.target, lo);
      if (p.op && !row.macs)
        row.macs = p.op->macs; // depthwise, pooling: as the NPU counts them
      if (!kind.empty() && r.npuLowering) {
        row.npu = true;
        row.placement = "npu:" + kind;
        if (const lower::NpuLayerPlan *plan = r.npuLowering->plan(n.name))
          row.plan = *plan;
        if (row.plan.macs)
          row.macs = row.plan.macs;
      } else {
        row.placement = "cpu";
        row.reasons = p.reasons;
        std::string why;
        if (p.onNpu() && !lower::npuTilingFits(*p.op, r.target, &why))
          row.reasons.push_back("no tiling fits: " + why);
        if (p.onNpu() && row.reasons.empty())
          row.reasons.push_back("not placed (compiled for the CPU)");
      }
    } else {
      row.placement = "cpu";
    }
    rep.macs += row.macs;
    if (row.npu) {
      rep.npuMacs += row.macs;
      rep.idealCycles += row.plan.idealCycles;
    }
    rep.layers.push_back(std::move(row));
  }
  costCpuCalls(r, rep);
  if (r.npu && r.program.usesNpu()) {
    lower::NpuEstimate e = lower::estimateProgram(r.program, r.target);
    rep.cycles = e.cycles;
    rep.dramBytes = e.sysRead + e.sysWrite;
    rep.registerWrites = e.regWrites;
    // Weights once (the NPU constant blob) and the NPU part's inputs and
    // outputs once.
    auto io = npuBoundaryBytes(*r.graph);
    uint64_t blob = 0, constBytes = 0;
    for (const lir::ConstBuffer &c : r.program.constants) {
      constBytes += c.data.byteSize();
      if (c.npu)
        blob += c.data.byteSize();
    }
    // The records each NPU layer needs (no alignment padding between them:
    // the blob's size would overstate what must move).
    uint64_t records = 0;
    for (const LayerRow &l : rep.layers)
      if (l.npu)
        records += l.plan.recordBytes;
    blob = std::min(blob, records);
    rep.minDramBytes = blob + io.first + io.second;
    uint64_t macsPerCycle = uint64_t(r.target.compute.macRows) * r.target.compute.macCols;
    rep.macsPerCycle = macsPerCycle;
    rep.rooflineCycles =
        std::max((rep.npuMacs + macsPerCycle - 1) / macsPerCycle,
                 lower::minDmaCycles(r.target, blob, io.first, io.second, constBytes));
    rep.clockHz = double(r.target.timing.clockHz);
  }
  buildSchedule(r, rep);
  return rep;
}

static std::string memoryLine(const CompileReport &rep);

/// The last column: the full layer name; a CPU layer adds why no NPU command
/// runs it (the legality reasons of report.json's "reasons").
static std::string layerCell(const LayerRow &l) {
  std::string s = l.name;
  if (!l.npu && !l.reasons.empty()) {
    s += "  [cpu: ";
    for (size_t i = 0; i < l.reasons.size(); ++i)
      s += (i ? "; " : "") + l.reasons[i];
    s += "]";
  }
  return s;
}

std::string reportTable(const CompileReport &rep) {
  std::string s;
  char line[512];
  // Fixed columns first, the full layer name (and a CPU layer's reasons) last:
  // names are never cut; `#` is the layer's index in report.json's "layers".
  std::snprintf(line, sizeof line, "%3s %-18s %-13s %-14s %10s %9s %9s %9s %8s %5s %8s %9s  %s\n",
                "#", "op", "placement", "output", "MACs", "cycles", "compute", "dma", "exp.dma",
                "util", "spm KiB", "dram KiB", "layer");
  s += line;
  for (size_t i = 0; i < rep.layers.size(); ++i) {
    const LayerRow &l = rep.layers[i];
    if (l.npu) {
      char util[16] = "-";
      if (l.plan.computeCycles && l.macs)
        std::snprintf(util, sizeof util, "%.0f%%",
                      100.0 * double(l.macs) / double(l.plan.computeCycles * rep.macsPerCycle));
      std::snprintf(line, sizeof line,
                    "%3zu %-18s %-13s %-14s %10llu %9llu %9llu %9llu %8llu %5s %8.1f %9.1f  ", i,
                    fit(l.op, 18).c_str(), l.placement.c_str(),
                    fit(shapeText(l.outShape), 14).c_str(), (unsigned long long)l.macs,
                    (unsigned long long)l.plan.cycles, (unsigned long long)l.plan.computeCycles,
                    (unsigned long long)l.plan.dmaCycles,
                    (unsigned long long)l.plan.exposedDmaCycles, util,
                    l.plan.scratchpadBytes / 1024.0, (l.plan.dramRead + l.plan.dramWrite) / 1024.0);
    } else {
      // The CPU's estimate on the Cortex-M4 reference core, "~" when a call
      // had no fitted row.
      char cyc[24];
      std::snprintf(cyc, sizeof cyc, "%s%llu", l.cpuCalibrated ? "" : "~",
                    (unsigned long long)l.cpuCycles[int(lower::CpuCore::CortexM4)]);
      std::snprintf(
          line, sizeof line, "%3zu %-18s %-13s %-14s %10llu %9s %9s %9s %8s %5s %8s %9s  ", i,
          fit(l.op, 18).c_str(), l.placement.c_str(), fit(shapeText(l.outShape), 14).c_str(),
          (unsigned long long)l.macs, cyc, "-", "-", "-", "", "-", "-");
    }
    s += line + layerCell(l) + "\n";
  }
  if (!rep.cpuCalls.empty()) {
    uint64_t m4 = rep.cpuCycles[int(lower::CpuCore::CortexM4)];
    std::snprintf(line, sizeof line,
                  "cpu: %zu kernel calls, about %llu cycles on a Cortex-M4 (%llu on an RV32), "
                  "%zu of them calibrated (docs/benchmarks.md, \"CPU cost model\")%s\n",
                  rep.cpuCalls.size(), (unsigned long long)m4,
                  (unsigned long long)rep.cpuCycles[int(lower::CpuCore::Rv32)],
                  rep.cpuCallsCalibrated,
                  rep.cycles ? "; whole program NPU + CPU (Cortex-M4) at one clock:" : "");
    s += line;
    if (rep.cycles) {
      std::snprintf(line, sizeof line, "       about %llu cycles\n",
                    (unsigned long long)(rep.cycles + m4));
      s += line;
    }
  }
  if (rep.target.empty())
    return s + memoryLine(rep);
  double frac = rep.macs ? 100.0 * double(rep.npuMacs) / double(rep.macs) : 0.0;
  size_t npuLayers = 0;
  for (const LayerRow &l : rep.layers)
    npuLayers += l.npu;
  std::snprintf(line, sizeof line,
                "total: %zu of %zu layers on the NPU '%s' (%.1f%% of %llu MACs), %llu NPU "
                "commands (stream tables %llu bytes), %llu layout transposes\n",
                npuLayers, rep.layers.size(), rep.target.c_str(), frac,
                (unsigned long long)rep.macs, (unsigned long long)rep.npuCommands,
                (unsigned long long)rep.streamBytes, (unsigned long long)rep.transposes);
  s += line;
  if (rep.cycles) {
    std::snprintf(line, sizeof line,
                  "       estimated %llu NPU cycles (%.3f ms at %.0f MHz); per-layer ideal %llu "
                  "(%.2fx), roofline %llu (%.2fx); system memory %llu bytes (minimum %llu); "
                  "%llu register writes\n",
                  (unsigned long long)rep.cycles, 1e3 * double(rep.cycles) / rep.clockHz,
                  rep.clockHz / 1e6, (unsigned long long)rep.idealCycles,
                  rep.idealCycles ? double(rep.cycles) / double(rep.idealCycles) : 0.0,
                  (unsigned long long)rep.rooflineCycles,
                  rep.rooflineCycles ? double(rep.cycles) / double(rep.rooflineCycles) : 0.0,
                  (unsigned long long)rep.dramBytes, (unsigned long long)rep.minDramBytes,
                  (unsigned long long)rep.registerWrites);
    s += line;
  }
  std::snprintf(line, sizeof line,
                "       arena %llu bytes, scratchpad peak %llu bytes, weights %llu bytes, code "
                "about %llu bytes\n",
                (unsigned long long)rep.arenaBytes, (unsigned long long)rep.scratchpadPeakBytes,
                (unsigned long long)rep.weightBytes, (unsigned long long)rep.codeBytesEstimate);
  s += line;
  return s + memoryLine(rep);
}

/// "memory on cortex-m4: flash about F bytes, RAM about R bytes (...)".
static std::string memoryLine(const CompileReport &rep) {
  if (rep.memory.mcu.empty())
    return "";
  char line[256];
  std::snprintf(line, sizeof line,
                "memory on %s: flash about %llu bytes, RAM about %llu bytes (breakdown in "
                "report.json \"memory\"; --flash/--ram refuse a program over them)\n",
                rep.memory.mcu.c_str(), (unsigned long long)rep.memory.flashBytes(),
                (unsigned long long)rep.memory.ramBytes());
  return line;
}

std::string explainText(const CompileReport &rep) {
  std::string s;
  for (const LayerRow &l : rep.layers) {
    s += l.name + " (" + l.op +
         "): " + (l.npu ? "NPU " + l.placement.substr(4) + " command" : std::string("CPU kernel")) +
         "\n";
    for (const std::string &r : l.reasons)
      s += "    " + r + "\n";
  }
  return s;
}

nlohmann::json reportJson(const CompileReport &rep) {
  nlohmann::json j;
  j["target"] = rep.target.empty() ? "cpu" : rep.target;
  j["layers"] = nlohmann::json::array();
  for (const LayerRow &l : rep.layers) {
    nlohmann::json o = {{"name", l.name},           {"op", l.op},
                        {"placement", l.placement}, {"output_shape", l.outShape},
                        {"macs", l.macs},           {"live_bytes", l.liveBytes}};
    if (l.npu) {
      o["cycles"] = l.plan.cycles;
      o["compute_cycles"] = l.plan.computeCycles;
      o["dma_cycles"] = l.plan.dmaCycles;
      o["exposed_dma_cycles"] = l.plan.exposedDmaCycles;
      o["ideal_cycles"] = l.plan.idealCycles;
      o["dram_read_bytes"] = l.plan.dramRead;
      o["dram_write_bytes"] = l.plan.dramWrite;
      o["scratchpad_bytes"] = l.plan.scratchpadBytes;
      o["tiles"] = l.plan.tiles;
      o["tiling"] = l.plan.tiling;
    } else {
      o["reasons"] = l.reasons;
      o["cpu_cycles"] = {{"cortex-m4", l.cpuCycles[int(lower::CpuCore::CortexM4)]},
                         {"rv32", l.cpuCycles[int(lower::CpuCore::Rv32)]},
                         {"calibrated", l.cpuCalibrated}};
    }
    j["layers"].push_back(o);
  }
  j["cpu_calls"] = nlohmann::json::array();
  for (const CpuCallRow &c : rep.cpuCalls)
    j["cpu_calls"].push_back({{"index", c.index},
                              {"kernel", c.kernel},
                              {"layer", c.layer},
                              {"macs", c.work.macs},
                              {"out_elements", c.work.outElems},
                              {"in_elements", c.work.inElems},
                              {"weight_elements", c.work.constElems},
                              {"cortex-m4", c.cost.cycles[int(lower::CpuCore::CortexM4)]},
                              {"rv32", c.cost.cycles[int(lower::CpuCore::Rv32)]},
                              {"calibrated", c.cost.calibrated}});
  j["totals"] = {
      {"macs", rep.macs},
      {"npu_macs", rep.npuMacs},
      {"cycles", rep.cycles},
      {"ideal_cycles", rep.idealCycles},
      {"roofline_cycles", rep.rooflineCycles},
      {"dram_bytes", rep.dramBytes},
      {"min_dram_bytes", rep.minDramBytes},
      {"register_writes", rep.registerWrites},
      {"arena_bytes", rep.arenaBytes},
      {"scratchpad_peak_bytes", rep.scratchpadPeakBytes},
      {"weight_bytes", rep.weightBytes},
      {"code_bytes_estimate", rep.codeBytesEstimate},
      {"npu_commands", rep.npuCommands},
      {"stream_bytes", rep.streamBytes},
      {"transposes", rep.transposes},
      {"macs_per_cycle", rep.macsPerCycle},
      {"clock_hz", uint64_t(rep.clockHz)},
      {"cpu_cycles",
       {{"cortex-m4", rep.cpuCycles[int(lower::CpuCore::CortexM4)]},
        {"rv32", rep.cpuCycles[int(lower::CpuCore::Rv32)]},
        {"calls", rep.cpuCalls.size()},
        {"calibrated_calls", rep.cpuCallsCalibrated}}},
      {"program_cycles_cortex_m4", rep.cycles + rep.cpuCycles[int(lower::CpuCore::CortexM4)]}};
  if (!rep.memory.mcu.empty())
    j["memory"] = budgetJson(rep.memory);
  static const char *const lanes[] = {"dma", "compute", "cpu"};
  nlohmann::json spans = nlohmann::json::array();
  for (const ScheduleSpan &s : rep.schedule)
    spans.push_back({{"layer", s.layer},
                     {"lane", lanes[s.lane]},
                     {"start", s.start},
                     {"end", s.end},
                     {"busy", s.busy},
                     {"commands", s.commands}});
  j["schedule"] = {
      {"source", rep.scheduleSource}, {"cycles", rep.scheduleCycles}, {"spans", spans}};
  if (!rep.scheduleNote.empty())
    j["schedule"]["note"] = rep.scheduleNote;
  return j;
}

} // namespace npucc::driver
