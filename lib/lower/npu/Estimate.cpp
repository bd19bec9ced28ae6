//===- Estimate.cpp - The NPU timeline of a body, as the simulator runs it --===//
//
// The compiler's cost model is the simulator's: command cycles come from
// npucc_timing.h through CTable; the CPU spends reg_access_cycles per
// register the command layer writes (npucc_npu_encode on the same table) and
// poll_cycles per status read; a wait polls (the generated program sleeps
// until the next completion between polls, as npucc_sim_wfi_hook does) and
// clears a write-1-to-clear DONE; with fence completion every wait issues a
// fence. Addresses map to the windows the simulator's automatic mapping
// uses (regionBase), so slow windows and bank rules are timed as run.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"

#include "npucc_npu.h"
#include "npucc_timing.h"

#include <algorithm>
#include <map>
#include <set>

namespace npucc::lower::npu {

uint64_t regionBase(const target::TargetDesc &t, lir::Region r, uint64_t constBytes) {
  if (r == lir::Region::Const)
    for (const target::SystemRange &w : t.system)
      if (!w.writable && w.size >= constBytes)
        return w.base;
  for (const target::SystemRange &w : t.system)
    if (w.writable)
      return w.base;
  return t.system.empty() ? 0 : t.system[0].base;
}

namespace {

struct Timeline {
  const target::TargetDesc &T;
  const target::CTable &Table;
  const lir::Program *Prog;
  uint64_t ConstBytes = 0;
  uint64_t Cpu = 0;
  uint64_t End[3] = {0, 0, 0};
  std::vector<uint64_t> Queue[2]; // completion times of queued commands
  std::map<int, int> EngineOf;    // token -> engine
  NpuEstimate E;

  Timeline(const target::TargetDesc &t, const target::CTable &tab, const lir::Program *p)
      : T(t), Table(tab), Prog(p) {
    if (p)
      for (const lir::ConstBuffer &c : p->constants)
        ConstBytes += c.data.byteSize();
  }

  int64_t address(const lir::BufferRef &b) const {
    if (b.region == lir::Region::Spm)
      return int64_t(T.scratchpads[size_t(b.index)].base) + b.offset;
    return int64_t(regionBase(T, b.region, ConstBytes)) + b.offset;
  }

  std::vector<int64_t> params(const lir::Instr &in) const {
    std::vector<int64_t> p = target::CTable::defaultParams();
    for (const auto &kv : in.params) {
      int id = target::paramId(kv.first);
      if (id < 0)
        continue;
      if (const int64_t *v = std::get_if<int64_t>(&kv.second))
        p[size_t(id)] = *v;
      else if (const lir::BufferRef *b = std::get_if<lir::BufferRef>(&kv.second))
        p[size_t(id)] = address(*b);
    }
    return p;
  }

  void command(const lir::Instr &in) {
    int kind = target::commandKindId(in.callee);
    std::vector<int64_t> p = params(in);
    npucc_reg_write w[NPUCC_MAX_CMD_REGS];
    int n = 0;
    if (npucc_npu_encode(Table.get(), kind, p.data(), w, &n, nullptr) != NPUCC_OK)
      n = 0;
    int e = kind == NPUCC_KIND_DMA ? 0 : 1;
    if (T.queue.depth) {
      // Free-slot polls until the oldest queued command completes.
      auto &q = Queue[e];
      q.erase(std::remove_if(q.begin(), q.end(), [&](uint64_t t) { return t <= Cpu; }), q.end());
      Cpu += T.timing.pollCycles;
      if (q.size() >= T.queue.depth) {
        Cpu = std::max(Cpu, *std::min_element(q.begin(), q.end())) + T.timing.pollCycles;
        q.erase(std::min_element(q.begin(), q.end()));
      }
    }
    const target::StatusBit &done = T.engines[e].done;
    if (done.sticky && done.clearOnWrite1)
      Cpu += T.timing.regAccessCycles; // the stale DONE acknowledged at issue
    else if (done.sticky && done.clearOnRead)
      Cpu += T.timing.pollCycles;
    Cpu += uint64_t(n) * T.timing.regAccessCycles;
    uint64_t start = Cpu;
    if (T.queue.depth) {
      start = std::max(start, End[e]);
      if (!T.concurrentDmaCompute)
        start = std::max(start, End[1 - e]);
    }
    uint64_t macs = 0;
    uint64_t c = Table.commandCycles(kind, p, &macs);
    End[e] = start + c;
    if (T.queue.depth)
      Queue[e].push_back(End[e]);
    EngineOf[in.token] = e;
    (e == 0 ? E.dmaBusy : E.computeBusy) += c;
    E.macs += macs;
    E.commands++;
    if (kind == NPUCC_KIND_DMA) {
      uint64_t bytes = uint64_t(p[NPUCC_P_LENGTH] * p[NPUCC_P_ROWS] * p[NPUCC_P_PLANES]);
      auto sys = [&](const char *name) {
        const lir::Arg *a = paramArg(in, name);
        const lir::BufferRef *b = a ? std::get_if<lir::BufferRef>(a) : nullptr;
        return b && b->region != lir::Region::Spm;
      };
      if (!p[NPUCC_P_ZERO_FILL] && sys("src_addr"))
        E.sysRead += bytes;
      if (sys("dst_addr"))
        E.sysWrite += bytes;
    }
  }

  /// One status poll loop until `until`, sleeping to the next completion.
  void poll(uint64_t until) {
    for (;;) {
      Cpu += T.timing.pollCycles;
      if (until <= Cpu)
        return;
      uint64_t next = until;
      for (uint64_t e : End)
        if (e > Cpu && e < next)
          next = e;
      Cpu = next;
    }
  }

  void wait(const lir::Instr &in) {
    if (T.completion == "fence") {
      // A fence command, then its busy/done bit.
      std::vector<int64_t> p = target::CTable::defaultParams();
      npucc_reg_write w[NPUCC_MAX_CMD_REGS];
      int n = 0;
      if (npucc_npu_encode(Table.get(), NPUCC_KIND_FENCE, p.data(), w, &n, nullptr) != NPUCC_OK)
        n = 0;
      Cpu += uint64_t(n) * T.timing.regAccessCycles;
      uint64_t end = std::max({Cpu, End[0], End[1]}) + T.timing.commandOverheadCycles;
      End[2] = end;
      poll(end);
      return;
    }
    std::set<int> engines;
    for (int tok : in.tokens) {
      auto it = EngineOf.find(tok);
      if (it != EngineOf.end())
        engines.insert(it->second);
    }
    for (int e : engines) {
      poll(End[e]);
      if (T.engines[e].done.clearOnWrite1)
        Cpu += T.timing.regAccessCycles;
    }
  }
};

} // namespace

NpuEstimate estimateBody(const std::vector<lir::Instr> &body, const lir::Program *prog,
                         const target::TargetDesc &t, const target::CTable &table) {
  Timeline tl(t, table, prog);
  for (const lir::Instr &in : body) {
    if (in.opcode == "npu")
      tl.command(in);
    else if (in.opcode == "wait")
      tl.wait(in);
  }
  tl.E.cycles = std::max({tl.Cpu, tl.End[0], tl.End[1], tl.End[2]});
  return tl.E;
}

} // namespace npucc::lower::npu

namespace npucc::lower {

std::string memoryWindowProblem(const lir::Program &p, const target::TargetDesc &t) {
  if (!p.usesNpu())
    return "";
  auto align = [](uint64_t v) { return (v + 63) / 64 * 64; };
  std::vector<uint64_t> used(t.system.size(), 0);
  auto place = [&](uint64_t bytes, bool writable, const std::string &what) -> std::string {
    for (int pass = writable ? 1 : 0; pass < 2; ++pass)
      for (size_t i = 0; i < t.system.size(); ++i) {
        const target::SystemRange &w = t.system[i];
        if ((pass == 0) == w.writable || used[i] + align(bytes) > w.size)
          continue;
        used[i] += align(bytes);
        return "";
      }
    uint64_t largest = 0;
    std::string name;
    for (size_t i = 0; i < t.system.size(); ++i)
      if (t.system[i].writable || !writable)
        if (t.system[i].size - used[i] > largest) {
          largest = t.system[i].size - used[i];
          name = t.system[i].name;
        }
    return what + " (" + std::to_string(bytes) + " bytes) does not fit the NPU's system memory" +
           (name.empty() ? std::string(" (no window)")
                         : ": the largest room left is " + std::to_string(largest) +
                               " bytes in window '" + name + "'");
  };
  for (const lir::ConstBuffer &c : p.constants)
    if (c.npu)
      if (std::string e = place(c.data.byteSize(), false, "the NPU constant data"); !e.empty())
        return e;
  if (std::string e = place(uint64_t(p.arenaSize), true, "the activation arena"); !e.empty())
    return e;
  for (const lir::IOBuffer &b : p.inputs)
    if (std::string e = place(ir::Tensor::byteSizeOf(b.dtype, b.shape), true,
                              "input '" + b.name + "'");
        !e.empty())
      return e;
  for (const lir::IOBuffer &b : p.outputs)
    if (std::string e = place(ir::Tensor::byteSizeOf(b.dtype, b.shape), true,
                              "output '" + b.name + "'");
        !e.empty())
      return e;
  return "";
}

NpuEstimate estimateProgram(const lir::Program &p, const target::TargetDesc &t) {
  target::CTable table(t);
  return npu::estimateBody(p.body, &p, t, table);
}
} // namespace npucc::lower
