//===- ReportSimTrace.cpp - The report's schedule from a simulator run ----===//
//
// `npucc check --report DIR` (docs/output.md, "report.html"): the schedule of
// report.json and report.html taken from the simulator's trace of the first
// data set instead of the estimate. Each simulated command keeps its engine and
// its start and end cycles as the simulator ran it; its layer is that of the
// estimate's command at the same place in issue order (the estimate issues the
// program's commands in the order the program does), when both count the same
// commands. The simulator times no CPU work, so the CPU lane stays empty.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Report.h"

#include "npucc/lower/NpuTrace.h"

#include <algorithm>
#include <map>

namespace npucc::driver {

std::string applySimTrace(const CompileResult &r, CompileReport &rep,
                          const std::vector<SimCommand> &cmds, uint64_t simCycles) {
  std::vector<long> layerOf(cmds.size(), -1);
  std::string why;
  if (r.npu && r.program.usesNpu()) {
    std::vector<lower::NpuSpan> spans;
    lower::traceProgram(r.program, r.target, spans);
    std::vector<size_t> instrs; // the estimate's commands in issue order
    for (const lower::NpuSpan &s : spans)
      if (s.lane != lower::NpuSpan::CpuLane)
        instrs.push_back(s.instr);
    std::map<std::string, long> index;
    for (size_t i = 0; i < rep.layers.size(); ++i)
      index.emplace(rep.layers[i].name, long(i));
    if (instrs.size() == cmds.size()) {
      for (size_t k = 0; k < cmds.size(); ++k) {
        const std::string &c = r.program.body[instrs[k]].comment;
        size_t p = c.rfind(" (");
        auto it = index.find(p == std::string::npos ? c : c.substr(0, p));
        layerOf[k] = it == index.end() ? -1 : it->second;
      }
    } else {
      why = "the simulator ran " + std::to_string(cmds.size()) + " commands, the estimate " +
            std::to_string(instrs.size()) + ": no command is attributed to a layer";
    }
  }
  rep.schedule.clear();
  rep.scheduleCycles = simCycles;
  rep.scheduleSource = "simulator";
  rep.scheduleNote = why;
  long lastOnLane[3] = {-1, -1, -1}; // the simulator times no CPU lane
  for (size_t k = 0; k < cmds.size(); ++k) {
    const SimCommand &c = cmds[k];
    ScheduleSpan::Lane lane = c.engine == 0 ? ScheduleSpan::Dma : ScheduleSpan::Compute;
    rep.scheduleCycles = std::max(rep.scheduleCycles, c.end);
    addScheduleSpan(rep.schedule, lastOnLane, layerOf[k], lane, c.start, c.end);
  }
  return why;
}

} // namespace npucc::driver
