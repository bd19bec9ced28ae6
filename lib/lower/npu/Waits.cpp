//===- Waits.cpp - Waits tied to dependencies, nothing more ---------------===//
//
// Walks a body in order, keeping the NPU commands the CPU has not yet seen
// complete. Before an `npu` command it waits for
//   - a command of the other engine that writes what this one reads or
//     writes, or reads what this one writes (scratchpad or memory ranges);
//   - the previous command of its own engine when the NPU runs one command
//     per engine at a time (no job queue), or the oldest one when the job
//     queue is full; an engine runs its commands in order, so data shared
//     with its own earlier commands needs no wait;
//   - the other engine's last command when DMA and compute cannot overlap;
// and before a CPU instruction, for any command using memory it touches. At
// the end everything is waited for. A wait on a token waits for its engine
// to become idle (or, with fence completion, for every engine), so it also
// settles every earlier command of that engine.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"
#include "npucc/lower/LirPass.h"

#include <algorithm>
#include <set>

namespace npucc::lower::npu {

namespace {

struct Pending {
  int token;
  int engine; // 0 dma, 1 compute
  std::vector<Access> fp;
};

bool conflict(const std::vector<Access> &a, const std::vector<Access> &b) {
  for (const Access &x : a)
    for (const Access &y : b)
      if ((x.write || y.write) && overlaps(x, y))
        return true;
  return false;
}

} // namespace

Status insertNpuWaits(lir::Program &p, const target::TargetDesc &t) {
  bool fence = t.completion == "fence";
  std::vector<Pending> pending; // issue order
  std::vector<lir::Instr> out;
  out.reserve(p.body.size() * 2 + 1); // at most one wait before each instruction, one at the end
  auto settle = [&](const std::set<int> &tokens, const std::string &comment) {
    if (tokens.empty())
      return;
    lir::Instr w;
    w.opcode = "wait";
    w.tokens.assign(tokens.begin(), tokens.end());
    w.comment = comment;
    out.push_back(std::move(w));
    std::set<int> engines;
    for (const Pending &q : pending)
      if (tokens.count(q.token))
        engines.insert(q.engine);
    pending.erase(std::remove_if(pending.begin(), pending.end(),
                                 [&](const Pending &q) { return fence || engines.count(q.engine); }),
                  pending.end());
  };
  for (lir::Instr &in : p.body) {
    if (in.opcode == "wait")
      continue;
    std::set<int> deps;
    if (in.opcode == "npu") {
      int engine = in.callee == "dma" ? 0 : 1;
      std::vector<Access> fp = npuFootprint(in);
      int mine = 0;
      for (const Pending &q : pending) {
        if (q.engine != engine && conflict(fp, q.fp))
          deps.insert(q.token);
        mine += q.engine == engine;
      }
      if (t.queue.depth == 0) {
        for (const Pending &q : pending)
          if (q.engine == engine || !t.concurrentDmaCompute)
            deps.insert(q.token);
      } else if (mine >= int(t.queue.depth)) {
        for (const Pending &q : pending)
          if (q.engine == engine) {
            deps.insert(q.token);
            break;
          }
      }
      settle(deps, in.comment);
      pending.push_back({in.token, engine, std::move(fp)});
    } else {
      std::vector<Access> fp = cpuFootprint(in);
      for (const Pending &q : pending)
        if (conflict(fp, q.fp))
          deps.insert(q.token);
      settle(deps, in.comment);
    }
    out.push_back(std::move(in));
  }
  std::set<int> last;
  for (const Pending &q : pending)
    last.insert(q.token);
  settle(last, "end of the program");
  p.body = std::move(out);
  return success();
}

} // namespace npucc::lower::npu

namespace npucc::lower {
Status insertNpuWaits(lir::Program &p, const target::TargetDesc &t) {
  return npu::insertNpuWaits(p, t);
}

/// The `npu-waits` loop-IR pass (LirPasses.def).
Status runNpuWaitsPass(lir::Program &p, LirPassContext &ctx) {
  if (!ctx.target)
    return error("npu-waits needs the NPU description (--target)");
  return npu::insertNpuWaits(p, *ctx.target);
}
} // namespace npucc::lower
