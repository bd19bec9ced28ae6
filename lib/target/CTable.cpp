//===- CTable.cpp - TargetDesc -> in-memory npucc_target_desc table -------===//
#include "npucc/target/CTable.h"

#include "../../runtime/hal/npucc_desc.h"
#include "../../runtime/hal/npucc_timing.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace npucc::target {

static_assert(int(DeliveryMode::Mmio) == NPUCC_DELIVERY_MMIO &&
                  int(DeliveryMode::Fifo) == NPUCC_DELIVERY_FIFO &&
                  int(DeliveryMode::Insn) == NPUCC_DELIVERY_INSN &&
                  int(DeliveryMode::Buffer) == NPUCC_DELIVERY_BUFFER,
              "DeliveryMode follows NPUCC_DELIVERY_LIST");

struct CTable::Impl {
  TargetDesc T;
  npucc_target_desc D{};
  std::vector<npucc_reg_desc> Regs;
  std::vector<npucc_field_desc> Fields;
  std::vector<npucc_cmd_desc> Cmds;
  std::vector<npucc_fieldref> Parts;
  std::vector<std::vector<npucc_binding>> Bindings;
  std::vector<std::vector<npucc_fixed>> Fixed;
  std::vector<std::vector<npucc_fieldval>> Select;
  std::vector<npucc_mem_desc> Mems;
  std::vector<npucc_fieldval> Init;
  std::vector<npucc_field_binding> FieldBindings;
  std::vector<npucc_expr_op> ExprOps;
  std::vector<npucc_expr_case> Cases;
  std::vector<npucc_fixed> CaseConds;
  std::vector<npucc_op_timing> OpTiming;
  std::vector<npucc_frame_desc> Frames;
  std::vector<npucc_delivery_desc> Deliveries;
  npucc_cmdbuf_desc Cmdbuf{};
  std::vector<uint64_t> CmdbufWords; // the buffer (64-bit slots hold either width)
  std::vector<uint8_t> Arith;        // NPUCC_KIND_COUNT x NPUCC_SLOT_COUNT stage ids
  std::vector<uint8_t> StageParams;  // NPUCC_KIND_COUNT x NPUCC_SP_COUNT widths
  // registers_persist: the HAL's record, as <id>_target.c's mutable arrays
  // (host tests run the HAL on this table).
  std::vector<uint64_t> ShadowValue;
  std::vector<uint8_t> ShadowKnown;
  npucc_reg_shadow Shadow{};
};

static npucc_fieldref toRef(const FieldRef &f) {
  npucc_fieldref r;
  r.reg = int16_t(f.reg);
  r.lsb = uint8_t(f.lsb);
  r.width = uint8_t(f.width);
  return r;
}

static npucc_status_bit toBit(const StatusBit &b) {
  npucc_status_bit r;
  r.f = toRef(b.field);
  r.flags = uint8_t(
      (b.activeLow ? NPUCC_SB_ACTIVE_LOW : 0) | (b.sticky ? NPUCC_SB_STICKY : 0) |
      (b.clearOnWrite1 ? NPUCC_SB_CLEAR_W1C : 0) | (b.clearOnRead ? NPUCC_SB_CLEAR_READ : 0) |
      (b.requireClear ? NPUCC_SB_REQUIRE_CLEAR : 0) |
      (b.clear.field.valid() ? NPUCC_SB_CLEAR_FIELD : 0) | (b.startBit ? NPUCC_SB_START_BIT : 0));
  r.clear.field = toRef(b.clear.field);
  r.clear.value = b.clear.value;
  return r;
}

static uint32_t maskOf(const std::vector<int> &v) {
  uint32_t m = 0;
  for (int x : v)
    if (x >= 1 && x <= 31)
      m |= 1u << x;
  return m;
}

static npucc_op_limits opLimits(const OpLimits &o) {
  npucc_op_limits l{};
  l.supported = 1;
  l.kh_mask = maskOf(o.kernelHeights);
  l.kw_mask = maskOf(o.kernelWidths);
  l.stride_mask = maskOf(o.strides);
  l.dilation_mask = maskOf(o.dilations);
  l.depth_mult_mask = maskOf(o.depthMultipliers);
  for (size_t i = 0; i < 4; ++i)
    l.max_pad[i] = o.maxPad[i];
  l.in_ch_multiple = o.inChannelMultiple;
  l.out_ch_multiple = o.outChannelMultiple;
  l.max_in_ch = o.maxInChannels;
  l.max_out_ch = o.maxOutChannels;
  l.max_in_h = o.maxInH;
  l.max_in_w = o.maxInW;
  l.max_out_h = o.maxOutH;
  l.max_out_w = o.maxOutW;
  l.max_m = o.maxM;
  l.max_k = o.maxK;
  l.max_n = o.maxN;
  for (const std::string &kind : o.kinds) {
    if (kind == "max")
      l.kinds_mask |= 1u << NPUCC_POOL_MAX;
    else if (kind == "avg")
      l.kinds_mask |= 1u << NPUCC_POOL_AVG;
    else if (kind == "add")
      l.kinds_mask |= 1u << NPUCC_ELTWISE_ADD;
  }
  l.requant = uint8_t((o.perChannelRequant ? NPUCC_RQ_PER_CHANNEL : 0) |
                      (o.perTensorRequant ? NPUCC_RQ_PER_TENSOR : 0));
  l.fused_clamp = o.fusedClamp ? 1 : 0;
  l.cycles_per_step = o.timing.cyclesPerStep;
  l.fill_cycles = o.timing.fillCycles;
  l.overhead_cycles = o.timing.overheadCycles;
  for (int i = 0; i < NumOperands; ++i)
    if (o.systemOperand[size_t(i)]) {
      l.operand_mem = uint8_t(l.operand_mem | (1u << i));
      l.operand_align_log2[i] = uint8_t(__builtin_ctz(o.systemAlignment[size_t(i)]));
    }
  return l;
}

static npucc_mem_desc scratchpadDesc(const Scratchpad &s) {
  npucc_mem_desc m{};
  m.name = s.name.c_str();
  m.base = s.base;
  m.size = s.size;
  m.kind = NPUCC_MEM_SCRATCHPAD;
  m.writable = 1;
  m.banks = s.banks;
  m.bank_size = uint32_t(s.bankSize);
  m.alignment = s.alignment;
  for (int i = 0; i < NumOperands; ++i)
    m.operand_alignment[i] = s.operandAlignment[size_t(i)];
  for (const auto &pr : s.separateBanks) {
    m.separate[int(pr.first)] |= uint8_t(1u << int(pr.second));
    m.separate[int(pr.second)] |= uint8_t(1u << int(pr.first));
  }
  m.bank_conflict = s.conflictIsError ? NPUCC_BANK_CONFLICT_ERROR : NPUCC_BANK_CONFLICT_SLOWDOWN;
  m.conflict_slowdown = s.conflictSlowdown;
  return m;
}

static npucc_mem_desc systemDesc(const SystemRange &s) {
  npucc_mem_desc m{};
  m.name = s.name.c_str();
  m.base = s.base;
  m.size = s.size;
  m.kind = NPUCC_MEM_SYSTEM;
  m.writable = s.writable ? 1 : 0;
  m.banks = 1;
  m.bank_size = 0;
  m.alignment = 1;
  m.read_bytes_per_cycle = s.readBytesPerCycle;
  m.write_bytes_per_cycle = s.writeBytesPerCycle;
  m.latency_cycles = s.latencyCycles;
  return m;
}

CTable::CTable(const TargetDesc &t) : P(std::make_unique<Impl>()) {
  Impl &I = *P;
  I.T = t;
  const TargetDesc &T = I.T;
  npucc_target_desc &D = I.D;
  D.name = T.name.c_str();
  D.address_bits = uint8_t(T.addressBits);
  D.base_address = T.baseAddress;
  D.bus_access_bits = uint8_t(T.bus.accessBits);
  D.bus_order = T.bus.highFirst ? NPUCC_BUS_HIGH_FIRST : NPUCC_BUS_LOW_FIRST;
  for (const Register &r : T.registers) {
    npucc_reg_desc rd;
    rd.name = r.name.c_str();
    rd.offset = r.offset;
    rd.width = uint8_t(r.width);
    rd.first_field = uint16_t(I.Fields.size());
    rd.num_fields = uint16_t(r.fields.size());
    rd.flags = uint8_t((r.rmw ? NPUCC_REG_RMW : 0) | (r.isWord() ? NPUCC_REG_WORD : 0) |
                       (T.registerPersists(int(I.Regs.size())) ? NPUCC_REG_PERSIST : 0));
    for (const Field &f : r.fields)
      I.Fields.push_back(
          {f.name.c_str(), uint8_t(f.lsb), uint8_t(f.width),
           int16_t(f.writeEnableField < 0 ? -1 : int(rd.first_field) + f.writeEnableField)});
    I.Regs.push_back(rd);
  }
  for (const CommandDesc &c : T.commands) {
    std::vector<npucc_binding> b;
    for (const ParamBinding &pb : c.params) {
      npucc_binding x{};
      x.param = uint16_t(pb.paramId);
      x.field = toRef(pb.field());
      x.shift = uint8_t(pb.shift);
      x.num_parts = uint8_t(pb.fields.size());
      x.more = uint16_t(I.Parts.size());
      for (size_t k = 1; k < pb.fields.size(); ++k)
        I.Parts.push_back(toRef(pb.fields[k]));
      x.minus = pb.minus;
      b.push_back(x);
    }
    std::vector<npucc_fixed> f;
    for (const FixedParam &fp : c.fixed)
      f.push_back({uint16_t(fp.paramId), fp.value});
    std::vector<npucc_fieldval> s;
    for (const FieldValue &fv : c.select)
      s.push_back({toRef(fv.field), fv.value});
    I.Bindings.push_back(std::move(b));
    I.Fixed.push_back(std::move(f));
    I.Select.push_back(std::move(s));
  }
  for (size_t i = 0; i < T.commands.size(); ++i) {
    const CommandDesc &c = T.commands[i];
    npucc_cmd_desc cd{};
    cd.kind = uint8_t(c.kindId);
    cd.engine = uint8_t(c.engine == Engine::Dma     ? NPUCC_ENGINE_DMA
                        : c.engine == Engine::Fence ? NPUCC_ENGINE_FENCE
                                                    : NPUCC_ENGINE_COMPUTE);
    cd.bindings = I.Bindings[i].data();
    cd.num_bindings = uint16_t(I.Bindings[i].size());
    cd.fixed = I.Fixed[i].data();
    cd.num_fixed = uint16_t(I.Fixed[i].size());
    cd.select = I.Select[i].data();
    cd.num_select = uint16_t(I.Select[i].size());
    cd.doorbell = {toRef(c.doorbell.field), c.doorbell.value};
    cd.doorbell_nop = c.doorbellNop;
    I.Cmds.push_back(cd);
  }
  for (size_t i = 0; i < T.commands.size(); ++i)
    for (const FieldBinding &b : T.commands[i].fields) {
      npucc_field_binding fb{};
      fb.cmd = uint16_t(i);
      fb.field = toRef(b.field);
      std::vector<int> ps = b.params();
      fb.param = int16_t(ps.empty() ? -1 : ps.front());
      if (b.isCases) {
        fb.kind = NPUCC_FB_CASES;
        fb.decodes = b.decodes ? 1 : 0;
        fb.first = uint16_t(I.Cases.size());
        fb.count = uint16_t(b.cases.size());
        for (const FieldCase &c : b.cases) {
          I.Cases.push_back({c.value, uint16_t(I.CaseConds.size()), uint16_t(c.when.size())});
          for (const auto &w : c.when)
            I.CaseConds.push_back({uint16_t(w.first), w.second});
        }
      } else {
        fb.kind = NPUCC_FB_EXPR;
        fb.first = uint16_t(I.ExprOps.size());
        for (const auto &o : exprPostfix(b.expr))
          I.ExprOps.push_back({o.first, o.second});
        fb.count = uint16_t(I.ExprOps.size() - fb.first);
      }
      I.FieldBindings.push_back(fb);
    }
  // Timing expressions after the fields' (their ops append to the same table).
  for (const auto &op : T.compute.operations) {
    const OpTiming &t = op.second.timing;
    if (!t.steps && !t.macs)
      continue;
    npucc_op_timing r{};
    r.kind = uint8_t(commandKindId(op.first));
    auto put = [&](const std::optional<Expr> &e, uint16_t &first, uint16_t &count) {
      if (!e)
        return;
      first = uint16_t(I.ExprOps.size());
      for (const auto &o : exprPostfix(*e))
        I.ExprOps.push_back({o.first, o.second});
      count = uint16_t(I.ExprOps.size() - first);
    };
    put(t.steps, r.steps_first, r.steps_count);
    put(t.macs, r.macs_first, r.macs_count);
    I.OpTiming.push_back(r);
  }
  for (const Frame &f : T.frames)
    I.Frames.push_back(
        {f.name.c_str(), uint8_t(f.wordBits), uint16_t(f.firstReg), uint16_t(f.numWords)});
  for (size_t i = 0; i < T.commands.size(); ++i) {
    const CommandDesc &c = T.commands[i];
    if (c.delivery.mode == DeliveryMode::Mmio)
      continue;
    npucc_delivery_desc dl{};
    dl.cmd = uint16_t(i);
    dl.mode = uint8_t(c.delivery.mode);
    dl.frame = uint16_t(c.frame);
    dl.reg = int16_t(c.delivery.reg);
    dl.depth_words =
        c.delivery.mode == DeliveryMode::Buffer ? T.cmdbuf.capacityWords : c.delivery.depthWords;
    dl.opcode = uint8_t(c.delivery.opcode);
    dl.funct3 = uint8_t(c.delivery.funct3);
    dl.funct7 = uint8_t(c.delivery.funct7);
    I.Deliveries.push_back(dl);
  }
  for (const Scratchpad &s : T.scratchpads)
    I.Mems.push_back(scratchpadDesc(s));
  for (const SystemRange &s : T.system)
    I.Mems.push_back(systemDesc(s));
  D.regs = I.Regs.data();
  D.num_regs = uint16_t(I.Regs.size());
  D.fields = I.Fields.data();
  D.num_fields = uint16_t(I.Fields.size());
  D.cmds = I.Cmds.data();
  D.num_cmds = uint16_t(I.Cmds.size());
  D.parts = I.Parts.data();
  D.num_parts = uint16_t(I.Parts.size());
  for (int e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    D.engines[e].busy = toBit(T.engines[e].busy);
    D.engines[e].done = toBit(T.engines[e].done);
    D.engines[e].error = toBit(T.engines[e].error);
    D.engines[e].free_slots = toBit(T.engines[e].freeSlots);
  }
  D.concurrent = T.concurrentDmaCompute ? 1 : 0;
  D.completion = T.completion == "fence" ? NPUCC_COMPLETION_FENCE : NPUCC_COMPLETION_POLL;
  D.queue_depth = uint16_t(T.queue.depth);
  D.mems = I.Mems.data();
  D.num_mems = uint16_t(I.Mems.size());
  D.dma_channels = uint8_t(T.dma.channels);
  D.dma_dims = uint8_t(T.dma.dims);
  D.dma_zero_fill = T.dma.zeroFill ? 1 : 0;
  D.dma_bytes_per_cycle = T.dma.bytesPerCycle;
  D.dma_read_bytes_per_cycle = T.dma.readBytesPerCycle;
  D.dma_write_bytes_per_cycle = T.dma.writeBytesPerCycle;
  D.dma_setup_cycles = T.dma.setupCycles;
  D.dma_alignment = T.dma.alignment;
  D.dma_max_burst = T.dma.maxBurst;
  D.dma_max_length = T.dma.maxLength;
  D.dma_max_rows = T.dma.maxRows;
  D.dma_max_planes = T.dma.maxPlanes;
  D.dma_max_stride = T.dma.maxStride;
  D.dma_max_plane_stride = T.dma.maxPlaneStride;
  D.mac_rows = T.compute.macRows;
  D.mac_cols = T.compute.macCols;
  D.acc_bits = uint8_t(T.compute.accumulatorBits);
  for (const auto &op : T.compute.operations) {
    int k = commandKindId(op.first);
    if (k >= 0) {
      D.ops[k] = opLimits(op.second);
      D.weight_layout[k] = uint8_t(op.second.weightLayout);
      D.weight_block_o[k] = uint16_t(op.second.weightBlockO);
      D.weight_block_i[k] = uint16_t(op.second.weightBlockI);
      D.act_block[k] = uint16_t(op.second.actBlock > 1 ? op.second.actBlock : 0);
      if (k == NPUCC_KIND_POOL)
        D.pool_avg_rounding = uint8_t(op.second.avgRounding);
    }
  }
  D.clock_hz = uint32_t(T.timing.clockHz);
  D.command_overhead_cycles = T.timing.commandOverheadCycles;
  D.vector_elems_per_cycle = T.timing.vectorElementsPerCycle;
  D.reg_access_cycles = T.timing.regAccessCycles;
  D.poll_cycles = T.timing.pollCycles;
  for (const FieldValue &v : T.init)
    I.Init.push_back({toRef(v.field), v.value});
  D.init = I.Init.empty() ? nullptr : I.Init.data();
  D.num_init = uint16_t(I.Init.size());
  auto data = [](auto &v) { return v.empty() ? nullptr : v.data(); };
  D.field_bindings = data(I.FieldBindings);
  D.num_field_bindings = uint16_t(I.FieldBindings.size());
  D.expr_ops = data(I.ExprOps);
  D.num_expr_ops = uint16_t(I.ExprOps.size());
  D.cases = data(I.Cases);
  D.num_cases = uint16_t(I.Cases.size());
  D.case_conds = data(I.CaseConds);
  D.num_case_conds = uint16_t(I.CaseConds.size());
  D.op_timing = data(I.OpTiming);
  D.num_op_timing = uint16_t(I.OpTiming.size());
  D.frames = data(I.Frames);
  D.num_frames = uint16_t(I.Frames.size());
  D.deliveries = data(I.Deliveries);
  D.num_deliveries = uint16_t(I.Deliveries.size());
  if (T.cmdbuf.capacityWords) {
    const CommandBuffer &b = T.cmdbuf;
    I.CmdbufWords.assign(b.capacityWords, 0);
    I.Cmdbuf.words = I.CmdbufWords.data();
    I.Cmdbuf.capacity_words = b.capacityWords;
    I.Cmdbuf.word_bits = uint8_t(T.frames[size_t(b.frame)].wordBits);
    I.Cmdbuf.frame = uint16_t(b.frame);
    I.Cmdbuf.address = toRef(b.address);
    I.Cmdbuf.length = toRef(b.length);
    I.Cmdbuf.length_bytes = b.lengthBytes ? 1 : 0;
    I.Cmdbuf.kick = {toRef(b.kick.field), b.kick.value};
    D.cmdbuf = &I.Cmdbuf;
  }
  // The pipeline table only when some operation leaves the defaults, so the
  // tables of descriptions without "arithmetic" stay as they were.
  bool custom = false;
  for (const auto &op : T.compute.operations)
    custom = custom || !op.second.defaultArithmetic();
  if (custom) {
    I.Arith.assign(size_t(NPUCC_KIND_COUNT) * NPUCC_SLOT_COUNT, 0);
    for (int k = 0; k < NPUCC_KIND_COUNT; ++k) {
      auto op = std::find_if(T.compute.operations.begin(), T.compute.operations.end(),
                             [&](const auto &o) { return commandKindId(o.first) == k; });
      OpLimits def;
      const OpLimits &l = op == T.compute.operations.end() ? def : op->second;
      for (size_t s = 0; s < NumStageSlots; ++s)
        I.Arith[size_t(k) * NPUCC_SLOT_COUNT + s] = uint8_t(l.stage(s));
    }
    D.arith = I.Arith.data();
    // The widths only when some operation uses a stage that has them, so
    // the other descriptions' tables stay as they were.
    // The pool rows (NPUCC_SPP_*) only where some operation has a max or
    // select pool stage.
    bool widths = false, pool = false;
    for (const auto &op : T.compute.operations) {
      widths = widths || op.second.stage(NPUCC_SLOT_REQUANT) == NPUCC_STAGE_RQ_MUL_SHIFT_ADD ||
               op.second.stage(NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_PWL ||
               op.second.stage(NPUCC_SLOT_CORRECTION) == NPUCC_STAGE_CORR_TERMS;
      pool = pool || op.second.stage(NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_MAX ||
             op.second.stage(NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_SELECT;
    }
    if (widths || pool) {
      I.StageParams.assign(
          size_t(NPUCC_KIND_COUNT) * (NPUCC_SP_COUNT + (pool ? NPUCC_SPP_COUNT : 0)), 0);
      for (const auto &op : T.compute.operations) {
        int k = commandKindId(op.first);
        if (k < 0)
          continue;
        uint8_t *row = &I.StageParams[size_t(k) * NPUCC_SP_COUNT];
        row[NPUCC_SP_MSA_MUL_BITS] = uint8_t(op.second.msaBits[0]);
        row[NPUCC_SP_MSA_SHIFT_BITS] = uint8_t(op.second.msaBits[1]);
        row[NPUCC_SP_MSA_ADD_BITS] = uint8_t(op.second.msaBits[2]);
        row[NPUCC_SP_PWL_SEGMENTS] = uint8_t(op.second.pwlSegments);
        for (size_t i = 0; i < 4; ++i)
          row[NPUCC_SP_CORR_X_BITS + i] = uint8_t(op.second.corrBits[i]);
        if (!pool)
          continue;
        uint8_t *pr = &I.StageParams[NPUCC_SPP_BASE + size_t(k) * NPUCC_SPP_COUNT];
        for (unsigned w : op.second.poolKernels)
          pr[NPUCC_SPP_KERNELS + w / 8] |= uint8_t(1u << (w % 8));
        for (const auto &o : op.second.poolOffsets)
          pr[NPUCC_SPP_OFFSETS + o.first] |= uint8_t(1u << o.second);
      }
      D.stage_params = I.StageParams.data();
    }
  }
  bool persist = false;
  for (const npucc_reg_desc &r : I.Regs)
    persist |= (r.flags & NPUCC_REG_PERSIST) != 0;
  if (persist) {
    I.ShadowValue.assign(I.Regs.size(), 0);
    I.ShadowKnown.assign(I.Regs.size(), 0);
    I.Shadow.value = I.ShadowValue.data();
    I.Shadow.known = I.ShadowKnown.data();
    D.shadow = &I.Shadow;
  }
}

CTable::~CTable() = default;

const npucc_target_desc *CTable::get() const { return &P->D; }

std::vector<int64_t> CTable::defaultParams() {
  return {
#define NPUCC_PARAM_DEFAULT(id, name, def, req, allowed, sgn) int64_t(def),
      NPUCC_PARAM_LIST(NPUCC_PARAM_DEFAULT)
#undef NPUCC_PARAM_DEFAULT
  };
}

uint64_t CTable::commandCycles(int kind, const std::vector<int64_t> &params, uint64_t *macs) const {
  std::vector<int64_t> p = defaultParams();
  for (size_t i = 0; i < p.size() && i < params.size(); ++i)
    p[i] = params[i];
  return npucc_command_cycles(&P->D, kind, p.data(), macs);
}
const TargetDesc &CTable::target() const { return P->T; }

std::string cIdentifier(const std::string &name) {
  std::string s;
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c))
             ? char(std::tolower(static_cast<unsigned char>(c)))
             : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    s = "t_" + s;
  return s;
}

std::string macroPrefix(const std::string &name) {
  std::string s = cIdentifier(name);
  for (char &c : s)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

} // namespace npucc::target
