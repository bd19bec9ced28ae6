//===- Estimate.cpp - The NPU timeline of a body, as the simulator runs it --===//
//
// The compiler's cost model is the simulator's: command cycles come from
// npucc_timing.h through CTable; the CPU's side follows the HAL register
// access by register access (npucc_hal.c on the same table): reg_access_cycles
// per register write (the command's registers from npucc_npu_encode, a
// write-1-to-clear acknowledge), poll_cycles per status-register read
// (free job slots, a clear-on-read acknowledge, and per poll the completion
// register plus every other register holding an error field); between polls
// the generated program sleeps until the next completion, as
// npucc_sim_wfi_hook does. A loop-IR wait is one npucc_hal_wait_engines
// call: one fence with fence completion, else one wait per engine. Addresses
// map to the windows the simulator's automatic mapping uses (regionBase), so
// slow windows and bank rules are timed as run. A command delivered through
// the command buffer costs no register write at issue and starts at the
// next kick (every wait kicks first; a body ends with waits): the
// kick's register writes, then every frame appended since the previous one
// starts; a frame that does not fit kicks and waits for both engines first.
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

uint64_t slower(uint64_t rate, unsigned windowRate) {
  return windowRate && windowRate < rate ? windowRate : rate;
}

const target::SystemRange *windowAt(const target::TargetDesc &t, uint64_t base) {
  for (const target::SystemRange &w : t.system)
    if (w.base == base)
      return &w;
  return nullptr;
}

} // namespace

} // namespace npucc::lower::npu

namespace npucc::lower {

uint64_t minDmaCycles(const target::TargetDesc &t, uint64_t weightBytes, uint64_t inBytes,
                      uint64_t outBytes, uint64_t constBytes) {
  uint64_t dma = std::max<uint64_t>(1, std::min(t.dma.readBytesPerCycle, t.dma.writeBytesPerCycle));
  const target::SystemRange *cw =
      npu::windowAt(t, npu::regionBase(t, lir::Region::Const, constBytes));
  const target::SystemRange *aw = npu::windowAt(t, npu::regionBase(t, lir::Region::Arena, 0));
  auto cycles = [](uint64_t bytes, uint64_t rate) { return (bytes + rate - 1) / rate; };
  return cycles(weightBytes, npu::slower(dma, cw ? cw->readBytesPerCycle : 0)) +
         cycles(inBytes, npu::slower(dma, aw ? aw->readBytesPerCycle : 0)) +
         cycles(outBytes, npu::slower(dma, aw ? aw->writeBytesPerCycle : 0));
}

} // namespace npucc::lower

namespace npucc::lower::npu {

namespace {

struct Timeline {
  const target::TargetDesc &T;
  const target::CTable &Table;
  const npucc_target_desc *D; // the runtime's table: what the HAL reads
  const lir::Program *Prog;
  uint64_t ConstBytes = 0;
  uint64_t Cpu = 0;
  uint64_t End[NPUCC_ENGINE_COUNT] = {0, 0, 0}; // end of each engine's last command
  std::vector<uint64_t> Queue[2];               // completion times of queued commands
  std::map<int, int> EngineOf;                  // token -> engine
  NpuEstimate E;
  // Delivery "buffer": words appended since the buffer restarted and since
  // the last kick; the commands waiting for the kick.
  uint64_t BufUsed = 0, BufKicked = 0;
  struct Pending {
    int engine;
    uint64_t cycles;
    size_t instr;
  };
  std::vector<Pending> Unkicked;
  // traceProgram: where each command ran (null: not traced); the body index
  // of the instruction being timed.
  std::vector<NpuSpan> *Trace = nullptr;
  size_t CurInstr = 0;
  // registers_persist: what the HAL's record holds (npucc_npu_skip decides
  // for both).
  std::vector<uint64_t> ShadowValue;
  std::vector<uint8_t> ShadowKnown;
  npucc_reg_shadow Shadow{};

  Timeline(const target::TargetDesc &t, const target::CTable &tab, const lir::Program *p)
      : T(t), Table(tab), D(tab.get()), Prog(p), ShadowValue(D->num_regs),
        ShadowKnown(D->num_regs) {
    Shadow.value = ShadowValue.data();
    Shadow.known = ShadowKnown.data();
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

  // The CPU's register accesses, as the simulator charges them, per bus
  // access (a register wider than the bus is width / bus_access_bits of
  // them): every HAL read is of a register holding status bits
  // (poll_cycles), every write costs reg_access_cycles.
  unsigned accesses(int reg) const {
    unsigned w = D->regs[reg].width, a = D->bus_access_bits;
    return w > a ? w / a : 1;
  }
  void statusRead(int reg) { Cpu += accesses(reg) * uint64_t(D->poll_cycles); }
  void regWrite(int reg) {
    Cpu += accesses(reg) * uint64_t(D->reg_access_cycles);
    E.regWrites += accesses(reg);
  }
  /// The register a write clears a status bit through (its own, or its
  /// clear register's).
  static int clearReg(const npucc_status_bit &b) {
    return (b.flags & NPUCC_SB_CLEAR_FIELD) ? b.clear.field.reg : b.f.reg;
  }
  /// A command's (or init's) write: read first where the register is
  /// read-modify-write (a status register's read costs poll_cycles).
  void rmwWrite(int reg) {
    if (D->regs[reg].flags & NPUCC_REG_RMW)
      Cpu += accesses(reg) *
             uint64_t(Table.target().isStatusRegister(reg) ? D->poll_cycles : D->reg_access_cycles);
    regWrite(reg);
  }
  /// npucc_hal_init: the description's init writes.
  void init() {
    for (uint16_t i = 0; i < D->num_init; ++i)
      rmwWrite(D->init[i].field.reg);
  }

  /// The wait hook between polls (npucc_sim_wfi_hook): sleep until the next
  /// completion of any busy engine.
  void wfi() {
    uint64_t next = 0;
    for (uint64_t e : End)
      if (e > Cpu && (next == 0 || e < next))
        next = e;
    if (next > Cpu)
      Cpu = next;
  }

  /// Commands of engine e (DMA or compute) still in its job queue.
  size_t queued(int e) const {
    size_t n = 0;
    for (uint64_t t : Queue[e])
      n += t > Cpu;
    return n;
  }

  /// npucc_npu_issue up to the last register write: a free job slot, the
  /// stale sticky DONE acknowledged, then the command's registers.
  /// Returns true if the command went into the command buffer.
  bool issue(int kind, int e, const int64_t *p) {
    npucc_reg_write w[NPUCC_MAX_CMD_REGS];
    int n = 0;
    if (npucc_npu_encode(D, kind, p, w, &n, nullptr) != NPUCC_OK)
      n = 0;
    const npucc_engine_status &st = D->engines[e];
    if (D->queue_depth && st.free_slots.f.reg >= 0)
      for (;;) { // acquire_slot: read the free slots, sleep while there are none
        statusRead(st.free_slots.f.reg);
        if (e == NPUCC_ENGINE_FENCE || queued(e) < D->queue_depth)
          break; // fences are never queued
        wfi();
      }
    if (st.done.flags & NPUCC_SB_STICKY) {
      if (st.done.flags & (NPUCC_SB_CLEAR_W1C | NPUCC_SB_CLEAR_FIELD))
        regWrite(clearReg(st.done));
      else if (st.done.flags & NPUCC_SB_CLEAR_READ)
        statusRead(st.done.f.reg);
    }
    const npucc_delivery_desc *dl =
        D->num_deliveries ? npucc_desc_delivery(D, npucc_desc_find_cmd(D, kind)) : nullptr;
    if (dl && dl->mode == NPUCC_DELIVERY_BUFFER) {
      // npucc_npu_issue: a frame that does not fit kicks, waits for both
      // engines and restarts the buffer; appending writes memory, no register.
      if (BufUsed + uint64_t(n) > D->cmdbuf->capacity_words) {
        kick();
        halWait(NPUCC_ENGINE_DMA);
        halWait(NPUCC_ENGINE_COMPUTE);
        BufUsed = BufKicked = 0;
      }
      BufUsed += uint64_t(n);
      return true;
    }
    const npucc_cmd_desc *c = npucc_desc_find_cmd(D, kind);
    for (int i = 0; i < n; ++i) {
      if (!dl && c && npucc_npu_skip(D, c, &w[i], &Shadow))
        continue; // the register holds the value (registers_persist)
      rmwWrite(w[i].reg);
      npucc_npu_note(D, &Shadow, w[i].reg, w[i].value);
    }
    return false;
  }

  /// npucc_hal_kick: the address and length registers (one write if they
  /// share one), the kick register; then every appended command starts.
  void kick() {
    if (!D->cmdbuf || BufUsed == BufKicked)
      return;
    const npucc_cmdbuf_desc &b = *D->cmdbuf;
    rmwWrite(b.address.reg);
    if (b.length.reg != b.address.reg)
      rmwWrite(b.length.reg);
    rmwWrite(b.kick.field.reg);
    BufKicked = BufUsed;
    for (const Pending &u : Unkicked) {
      End[u.engine] = Cpu + u.cycles;
      if (Trace)
        Trace->push_back({u.instr, u.engine, Cpu, End[u.engine]});
    }
    Unkicked.clear();
  }

  void command(const lir::Instr &in) {
    int kind = target::commandKindId(in.callee);
    std::vector<int64_t> p = params(in);
    int e = kind == NPUCC_KIND_DMA ? 0 : 1;
    bool buffered = issue(kind, e, p.data());
    uint64_t start = Cpu;
    if (D->queue_depth) {
      start = std::max(start, End[e]);
      if (!T.concurrentDmaCompute)
        start = std::max(start, End[1 - e]);
    }
    uint64_t macs = 0;
    uint64_t c = Table.commandCycles(kind, p, &macs);
    if (buffered) { // appended to the command buffer: starts at the kick
      Unkicked.push_back({e, c, CurInstr});
    } else {
      End[e] = start + c;
      if (Trace)
        Trace->push_back({CurInstr, e, start, End[e]});
    }
    if (D->queue_depth) {
      auto &q = Queue[e];
      q.erase(std::remove_if(q.begin(), q.end(), [&](uint64_t t) { return t <= Cpu; }), q.end());
      q.push_back(End[e]);
    }
    EngineOf[in.token] = e;
    (e == 0 ? E.dmaBusy : E.computeBusy) += c;
    E.macs += macs;
    E.commands++;
    auto sys = [&](const char *name) -> const lir::BufferRef * {
      const lir::Arg *a = paramArg(in, name);
      const lir::BufferRef *b = a ? std::get_if<lir::BufferRef>(a) : nullptr;
      return b && b->region != lir::Region::Spm ? b : nullptr;
    };
    if (kind == NPUCC_KIND_DMA) {
      uint64_t bytes = uint64_t(p[NPUCC_P_LENGTH] * p[NPUCC_P_ROWS] * p[NPUCC_P_PLANES]);
      if (!p[NPUCC_P_ZERO_FILL] && sys("src_addr"))
        E.sysRead += bytes;
      if (sys("dst_addr"))
        E.sysWrite += bytes;
    } else {
      // Operands the NPU reads from system memory itself (the constant blob):
      // the record parts the schedule sized (Schedule.cpp), as the simulator
      // counts them.
      for (const char *name : {"w_addr", "bias_addr", "rq_addr", "act_addr"})
        if (const lir::BufferRef *b = sys(name))
          if (std::string(name) != "rq_addr" || p[NPUCC_P_PER_CHANNEL])
            E.sysRead += uint64_t(b->size);
    }
  }

  /// npucc_hal_wait(engine): with fence completion a fence command first,
  /// then polls until the engine is idle. Each poll reads the completion
  /// register (busy bit, else done bit), then every other register holding
  /// an error field, each once; between polls the CPU sleeps. A sticky DONE
  /// is acknowledged afterwards (a write, or the clearing read unless the
  /// polled register was that one).
  void halWait(int engine) {
    kick();
    if (D->completion == NPUCC_COMPLETION_FENCE) {
      std::vector<int64_t> p = target::CTable::defaultParams();
      issue(NPUCC_KIND_FENCE, NPUCC_ENGINE_FENCE, p.data());
      End[NPUCC_ENGINE_FENCE] =
          std::max({Cpu, End[0], End[1]}) + uint64_t(D->command_overhead_cycles);
      engine = NPUCC_ENGINE_FENCE;
    }
    const npucc_engine_status &st = D->engines[engine];
    npucc_status_bit use = st.busy.f.reg >= 0 ? st.busy : st.done;
    if (use.f.reg < 0)
      return; // NPUCC_ERR_UNSUPPORTED: the HAL reads nothing
    std::set<int> errRegs;
    for (const npucc_engine_status &o : D->engines)
      if (o.error.f.reg >= 0 && o.error.f.reg != use.f.reg)
        errRegs.insert(o.error.f.reg);
    // The completion register: the engine's state is read by the access
    // holding the polled bit (the status field lies within one access).
    unsigned n = accesses(use.f.reg), a = D->bus_access_bits;
    unsigned part = n > 1 ? unsigned(use.f.lsb) / a : 0;
    unsigned before = D->bus_order == NPUCC_BUS_HIGH_FIRST ? n - 1 - part : part;
    for (;;) {
      Cpu += (before + 1) * uint64_t(D->poll_cycles);
      bool done = End[engine] <= Cpu;
      Cpu += (n - before - 1) * uint64_t(D->poll_cycles);
      for (int r : errRegs)
        statusRead(r);
      if (done)
        break;
      wfi();
    }
    if (st.done.flags & (NPUCC_SB_CLEAR_W1C | NPUCC_SB_CLEAR_FIELD))
      regWrite(clearReg(st.done));
    else if ((st.done.flags & NPUCC_SB_CLEAR_READ) && use.f.reg != st.done.f.reg)
      statusRead(st.done.f.reg);
  }

  /// A loop-IR wait, as the command stream runs it (npucc_hal_wait_engines):
  /// one fence on a fence NPU, else one HAL wait per engine, DMA first.
  void wait(const lir::Instr &in) {
    std::set<int> engines;
    for (int tok : in.tokens) {
      auto it = EngineOf.find(tok);
      if (it != EngineOf.end())
        engines.insert(it->second);
    }
    if (engines.empty())
      return;
    if (D->completion == NPUCC_COMPLETION_FENCE) {
      halWait(NPUCC_ENGINE_FENCE);
      return;
    }
    for (int e : engines)
      halWait(e);
  }
};

} // namespace

NpuEstimate estimateBody(const std::vector<lir::Instr> &body, const lir::Program *prog,
                         const target::TargetDesc &t, const target::CTable &table,
                         std::vector<NpuSpan> *trace, const std::vector<uint64_t> *cpuCycles) {
  Timeline tl(t, table, prog);
  tl.Trace = trace;
  tl.init();
  for (size_t i = 0; i < body.size(); ++i) {
    const lir::Instr &in = body[i];
    tl.CurInstr = i;
    if (in.opcode == "npu") {
      tl.command(in);
    } else if (in.opcode == "wait") {
      tl.wait(in);
    } else if (cpuCycles && i < cpuCycles->size() && (*cpuCycles)[i]) {
      // traceProgram: a CPU kernel call runs on the CPU for its estimate.
      uint64_t start = tl.Cpu;
      tl.Cpu += (*cpuCycles)[i];
      if (trace)
        trace->push_back({i, NpuSpan::CpuLane, start, tl.Cpu});
    }
  }
  tl.kick(); // a partial body (Tiling, Prefetch) may end without a wait
  tl.E.cycles = std::max({tl.Cpu, tl.End[0], tl.End[1], tl.End[2]});
  return tl.E;
}

} // namespace npucc::lower::npu

namespace npucc::lower {

std::string memoryWindowProblem(const lir::Program &p, const target::TargetDesc &t) {
  if (!p.usesNpu())
    return "";
  // Buffers start at multiples of 64 bytes and of the DMA alignment (as the
  // simulator maps them).
  uint64_t a = std::max<uint64_t>(64, t.dma.alignment);
  auto align = [a](uint64_t v) { return (v + a - 1) / a * a; };
  std::vector<uint64_t> used; // from each window's first aligned address
  for (const target::SystemRange &w : t.system)
    used.push_back(std::min(w.size, (a - w.base % a) % a));
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
    if (std::string e =
            place(ir::Tensor::byteSizeOf(b.dtype, b.shape), true, "input '" + b.name + "'");
        !e.empty())
      return e;
  for (const lir::IOBuffer &b : p.outputs)
    if (std::string e =
            place(ir::Tensor::byteSizeOf(b.dtype, b.shape), true, "output '" + b.name + "'");
        !e.empty())
      return e;
  return "";
}

std::string npuWeightsProblem(const ir::Graph &g, const target::TargetDesc &t) {
  // A lower bound of the NPU constant data: the int8 weights of the layers
  // placed on the NPU (each constant once); the blob adds bias,
  // requantization records and alignment.
  std::set<const ir::Value *> seen;
  uint64_t bytes = 0;
  int layers = 0;
  for (const auto &n : g.nodes()) {
    if (n->attrString("npu", "").empty() || n->inputs.size() < 2 || !n->inputs[1] ||
        !n->inputs[1]->isConstant() || n->inputs[1]->dtype != ir::DType::I8)
      continue;
    ++layers;
    if (seen.insert(n->inputs[1]).second)
      bytes += n->inputs[1]->byteSize();
  }
  uint64_t largest = 0;
  std::string name;
  for (const target::SystemRange &w : t.system)
    if (w.size > largest) {
      largest = w.size;
      name = w.name;
    }
  if (layers == 0 || (bytes + 63) / 64 * 64 <= largest)
    return "";
  return "the NPU constant data (at least " + std::to_string(bytes) + " bytes: the weights of " +
         std::to_string(layers) + " layers placed on the NPU) does not fit the NPU's system " +
         "memory: the largest window is " + std::to_string(largest) + " bytes ('" + name + "')";
}

NpuEstimate estimateProgram(const lir::Program &p, const target::TargetDesc &t) {
  target::CTable table(t);
  return npu::estimateBody(p.body, &p, t, table);
}

NpuEstimate traceProgram(const lir::Program &p, const target::TargetDesc &t,
                         std::vector<NpuSpan> &trace, const std::vector<uint64_t> *cpuCycles) {
  target::CTable table(t);
  trace.clear();
  NpuEstimate e = npu::estimateBody(p.body, &p, t, table, &trace, cpuCycles);
  std::stable_sort(trace.begin(), trace.end(),
                   [](const NpuSpan &a, const NpuSpan &b) { return a.instr < b.instr; });
  return e;
}
} // namespace npucc::lower
