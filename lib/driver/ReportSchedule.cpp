//===- ReportSchedule.cpp - The report's schedule and live bytes per layer ===//
//
// The estimated schedule of a compile, per layer and lane: the NPU's DMA and
// compute commands as lower::traceProgram times them (the estimate's own
// timeline) and the CPU's kernel calls at their Cortex-M4 estimate; and the
// activation bytes live at each layer (what report.html draws as the arena's
// occupancy beside the layer's scratchpad bytes).
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Report.h"

#include "npucc/lower/NpuTrace.h"

#include <algorithm>
#include <map>

namespace npucc::driver {

namespace {

/// The node a loop-IR instruction implements: its comment is "name (Op...)".
std::string instrLayer(const std::string &comment) {
  size_t p = comment.rfind(" (");
  return p == std::string::npos ? comment : comment.substr(0, p);
}

/// Live activation bytes per listed layer, in node order: a value is live
/// from its producer to its last reader; a view's readers read the value it
/// views. Graph inputs and outputs have buffers of their own.
void liveBytes(const ir::Graph &g, CompileReport &rep) {
  const auto &nodes = g.nodes();
  std::map<const ir::Value *, size_t> born, last; // root value -> node positions
  std::map<const ir::Value *, const ir::Value *> root;
  auto rootOf = [&](const ir::Value *v) {
    auto it = root.find(v);
    return it == root.end() ? v : it->second;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node &n = *nodes[i];
    for (const ir::Value *v : n.inputs)
      if (v && born.count(rootOf(v)))
        last[rootOf(v)] = i;
    bool view = n.info().flags & ir::OPF_VIEW;
    for (const ir::Value *v : n.outputs) {
      if (!v)
        continue;
      if (view && n.input(0)) {
        root[v] = rootOf(n.input(0));
        continue;
      }
      born[v] = i;
      last[v] = i;
    }
  }
  for (const ir::Value *v : g.outputs)
    born.erase(rootOf(v));
  std::vector<int64_t> delta(nodes.size() + 1, 0);
  for (const auto &b : born) {
    int64_t bytes = int64_t(ir::Tensor::byteSizeOf(b.first->dtype, b.first->shape));
    delta[b.second] += bytes;
    delta[last[b.first] + 1] -= bytes;
  }
  std::map<std::string, LayerRow *> rows;
  for (LayerRow &l : rep.layers)
    rows.emplace(l.name, &l);
  int64_t live = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    live += delta[i];
    auto it = rows.find(nodes[i]->name);
    if (it != rows.end())
      it->second->liveBytes = uint64_t(live);
  }
}

} // namespace

void buildSchedule(const CompileResult &r, CompileReport &rep) {
  if (r.graph)
    liveBytes(*r.graph, rep);
  const std::vector<lir::Instr> &body = r.program.body;
  // Each CPU instruction's Cortex-M4 estimate, by body index (costCpuCalls
  // numbered the calls, memcpys and memsets in body order).
  std::vector<uint64_t> cpu(body.size(), 0);
  size_t call = 0;
  for (size_t i = 0; i < body.size() && call < rep.cpuCalls.size(); ++i)
    if (body[i].opcode == "call" || body[i].opcode == "memcpy" || body[i].opcode == "memset")
      cpu[i] = rep.cpuCalls[call++].cost.cycles[int(lower::CpuCore::CortexM4)];
  std::vector<lower::NpuSpan> spans;
  if (r.npu && r.program.usesNpu()) {
    rep.scheduleCycles = lower::traceProgram(r.program, r.target, spans, &cpu).cycles;
  } else {
    uint64_t t = 0;
    for (size_t i = 0; i < body.size(); ++i)
      if (cpu[i]) {
        spans.push_back({i, lower::NpuSpan::CpuLane, t, t + cpu[i]});
        t += cpu[i];
      }
    rep.scheduleCycles = t;
  }
  std::map<std::string, long> index;
  for (size_t i = 0; i < rep.layers.size(); ++i)
    index.emplace(rep.layers[i].name, long(i));
  // A layer's spans on one lane merge until another layer's span comes on
  // that lane (a layer met again later starts a new span).
  long lastOnLane[3] = {-1, -1, -1}; // index into rep.schedule
  for (const lower::NpuSpan &s : spans) {
    auto it = index.find(instrLayer(body[s.instr].comment));
    long layer = it == index.end() ? -1 : it->second;
    ScheduleSpan::Lane lane = s.lane == lower::NpuSpan::CpuLane   ? ScheduleSpan::Cpu
                              : s.lane == lower::NpuSpan::DmaLane ? ScheduleSpan::Dma
                                                                  : ScheduleSpan::Compute;
    addScheduleSpan(rep.schedule, lastOnLane, layer, lane, s.start, s.end);
  }
}

void addScheduleSpan(std::vector<ScheduleSpan> &schedule, long (&lastOnLane)[3], long layer,
                     ScheduleSpan::Lane lane, uint64_t start, uint64_t end) {
  long &last = lastOnLane[lane];
  if (last >= 0 && schedule[size_t(last)].layer == layer) {
    ScheduleSpan &m = schedule[size_t(last)];
    m.start = std::min(m.start, start);
    m.end = std::max(m.end, end);
    m.busy += end - start;
    ++m.commands;
    return;
  }
  last = long(schedule.size());
  schedule.push_back({layer, lane, start, end, end - start, 1});
}

} // namespace npucc::driver
