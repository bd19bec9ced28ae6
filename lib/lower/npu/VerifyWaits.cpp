//===- VerifyWaits.cpp - The `verify-waits` loop-IR pass -------------------===//
//
// Replays a body the way the CPU runs it and checks that its waits suffice,
// under the same rules insertNpuWaits (Waits.cpp) inserts them by: no command
// or CPU instruction may touch a scratchpad or memory range an unfinished
// command of another engine writes (or write one it reads); an engine that
// runs one command at a time must be idle before the next, a job queue must
// have a free slot, and without DMA/compute overlap the other engine must be
// idle; everything is finished at the end. A wait settles the engine of each
// token it names (every engine under fence completion). Tokens are defined
// once and waited for only after they are issued. The first violation is the
// error, naming the instruction (index and text), the token and the range.
// Runs after npu-waits in every compile; on hand-written loop IR through
// `npucc opt FILE.lir --passes=verify-waits`.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"
#include "npucc/lower/LirPass.h"

#include <algorithm>
#include <set>

namespace npucc::lower {

namespace {

struct InFlight {
  int token;
  int engine; // 0 dma, 1 compute
  size_t index;
  std::vector<npu::Access> fp;
};

std::string rangeText(const lir::Program &p, const npu::Access &a) {
  lir::BufferRef b{a.region, a.index, a.lo, a.hi - a.lo, ir::DType::I8};
  std::string s = lir::printBuffer(p, b);
  size_t colon = s.rfind(":i8");
  if (colon != std::string::npos && colon + 3 == s.size())
    s.erase(colon);
  return s;
}

const char *engineName(int e) { return e == 0 ? "DMA" : "compute"; }

} // namespace

Status runVerifyWaitsPass(lir::Program &p, LirPassContext &ctx) {
  if (!ctx.target)
    return error("verify-waits needs the NPU description (--target)");
  const target::TargetDesc &t = *ctx.target;
  bool fence = t.completion == "fence";
  std::vector<InFlight> pending;
  std::set<int> issued;
  for (size_t i = 0; i < p.body.size(); ++i) {
    const lir::Instr &in = p.body[i];
    auto fail = [&](const std::string &why) -> Status {
      return error("loop IR instruction " + std::to_string(i) + " `" + lir::printInstr(p, in) +
                   "`: " + why);
    };
    auto missing = [&](const InFlight &q, const std::string &why) -> Status {
      return fail(why + " (#" + std::to_string(q.token) + " is instruction " +
                  std::to_string(q.index) + "): a wait on #" + std::to_string(q.token) +
                  " is missing");
    };
    auto conflictText = [&](const std::vector<npu::Access> &mine, const InFlight &q) {
      for (const npu::Access &x : mine)
        for (const npu::Access &y : q.fp)
          if ((x.write || y.write) && npu::overlaps(x, y))
            return std::string(x.write ? "writes " : "reads ") + rangeText(p, x) +
                   ", which unfinished #" + std::to_string(q.token) +
                   (y.write ? " writes at " : " reads at ") + rangeText(p, y);
      return std::string();
    };
    if (in.opcode == "wait") {
      std::set<int> engines;
      for (int tok : in.tokens) {
        if (!issued.count(tok))
          return fail("waits for #" + std::to_string(tok) + ", which no earlier command issues");
        for (const InFlight &q : pending)
          if (q.token == tok)
            engines.insert(q.engine);
      }
      pending.erase(std::remove_if(pending.begin(), pending.end(),
                                   [&](const InFlight &q) {
                                     return fence || engines.count(q.engine);
                                   }),
                    pending.end());
      continue;
    }
    if (in.opcode == "npu") {
      if (in.token < 0)
        return fail("an NPU command without a token");
      if (!issued.insert(in.token).second)
        return fail("token #" + std::to_string(in.token) + " is issued twice");
      int engine = in.callee == "dma" ? 0 : 1;
      std::vector<npu::Access> fp = npu::npuFootprint(in);
      int mine = 0;
      for (const InFlight &q : pending) {
        if (q.engine != engine) {
          std::string c = conflictText(fp, q);
          if (!c.empty())
            return missing(q, c);
          if (!t.concurrentDmaCompute)
            return missing(q, std::string("the ") + engineName(q.engine) +
                                  " engine is still busy and '" + t.name +
                                  "' cannot overlap DMA and compute");
        } else {
          ++mine;
          if (t.queue.depth == 0)
            return missing(q, std::string("the ") + engineName(engine) +
                                  " engine is still busy and '" + t.name +
                                  "' runs one command per engine at a time");
        }
      }
      if (t.queue.depth > 0 && mine >= int(t.queue.depth)) {
        for (const InFlight &q : pending)
          if (q.engine == engine)
            return missing(q, "the job queue of '" + t.name + "' (" +
                                  std::to_string(t.queue.depth) + " entries) is full");
      }
      pending.push_back({in.token, engine, i, std::move(fp)});
      continue;
    }
    std::vector<npu::Access> fp = npu::cpuFootprint(in);
    for (const InFlight &q : pending) {
      std::string c = conflictText(fp, q);
      if (!c.empty())
        return missing(q, "the CPU " + c);
    }
  }
  if (!pending.empty()) {
    const InFlight &q = pending.front();
    return error("the loop IR ends with #" + std::to_string(q.token) + " (instruction " +
                 std::to_string(q.index) + ") unfinished: a final wait is missing");
  }
  return success();
}

} // namespace npucc::lower
