//===- CTable.cpp - TargetDesc -> in-memory npucc_target_desc table -------===//
#include "npucc/target/CTable.h"

#include "../../runtime/hal/npucc_desc.h"
#include "../../runtime/hal/npucc_timing.h"

#include <cctype>
#include <vector>

namespace npucc::target {

struct CTable::Impl {
  TargetDesc T;
  npucc_target_desc D{};
  std::vector<npucc_reg_desc> Regs;
  std::vector<npucc_field_desc> Fields;
  std::vector<npucc_cmd_desc> Cmds;
  std::vector<std::vector<npucc_binding>> Bindings;
  std::vector<std::vector<npucc_fixed>> Fixed;
  std::vector<std::vector<npucc_fieldval>> Select;
  std::vector<npucc_mem_desc> Mems;
};

static npucc_fieldref toRef(const FieldRef &f) {
  npucc_fieldref r;
  r.reg = int16_t(f.reg);
  r.lsb = uint8_t(f.lsb);
  r.width = uint8_t(f.width);
  return r;
}

static uint32_t maskOf(const std::vector<int> &v) {
  uint32_t m = 0;
  for (int x : v)
    if (x >= 1 && x <= 31)
      m |= 1u << x;
  return m;
}

CTable::CTable(const TargetDesc &t) : P(std::make_unique<Impl>()) {
  Impl &I = *P;
  I.T = t;
  const TargetDesc &T = I.T;
  npucc_target_desc &D = I.D;
  D.name = T.name.c_str();
  D.base_address = T.baseAddress;
  for (const Register &r : T.registers) {
    npucc_reg_desc rd;
    rd.name = r.name.c_str();
    rd.offset = r.offset;
    rd.width = uint8_t(r.width);
    rd.first_field = uint16_t(I.Fields.size());
    rd.num_fields = uint16_t(r.fields.size());
    for (const Field &f : r.fields)
      I.Fields.push_back({f.name.c_str(), uint8_t(f.lsb), uint8_t(f.width)});
    I.Regs.push_back(rd);
  }
  for (const CommandDesc &c : T.commands) {
    std::vector<npucc_binding> b;
    for (const ParamBinding &pb : c.params) {
      npucc_binding x;
      x.param = uint16_t(pb.paramId);
      x.field = toRef(pb.field);
      x.shift = uint8_t(pb.shift);
      x.minus = pb.minus;
      b.push_back(x);
    }
    std::vector<npucc_fixed> f;
    for (const FixedParam &fp : c.fixed)
      f.push_back({uint16_t(fp.paramId), int32_t(fp.value)});
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
    I.Cmds.push_back(cd);
  }
  for (const Scratchpad &s : T.scratchpads)
    I.Mems.push_back({s.name.c_str(), s.base, s.size, NPUCC_MEM_SCRATCHPAD, 1, uint16_t(s.banks),
                      uint16_t(s.alignment)});
  for (const SystemRange &s : T.system)
    I.Mems.push_back(
        {s.name.c_str(), s.base, s.size, NPUCC_MEM_SYSTEM, uint8_t(s.writable ? 1 : 0), 1, 1});
  D.regs = I.Regs.data();
  D.num_regs = uint16_t(I.Regs.size());
  D.fields = I.Fields.data();
  D.num_fields = uint16_t(I.Fields.size());
  D.cmds = I.Cmds.data();
  D.num_cmds = uint16_t(I.Cmds.size());
  D.status_reg = int16_t(T.statusRegister);
  for (int e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    D.engines[e].busy = toRef(T.engines[e].busy);
    D.engines[e].done = toRef(T.engines[e].done);
    D.engines[e].error = toRef(T.engines[e].error);
  }
  D.concurrent = T.concurrentDmaCompute ? 1 : 0;
  D.completion = T.completion == "fence" ? NPUCC_COMPLETION_FENCE : NPUCC_COMPLETION_POLL;
  D.mems = I.Mems.data();
  D.num_mems = uint16_t(I.Mems.size());
  D.dma_channels = uint8_t(T.dma.channels);
  D.dma_dims = uint8_t(T.dma.dims);
  D.dma_bytes_per_cycle = uint16_t(T.dma.bytesPerCycle);
  D.dma_setup_cycles = T.dma.setupCycles;
  D.dma_alignment = uint16_t(T.dma.alignment);
  D.dma_max_burst = T.dma.maxBurst;
  D.dma_zero_fill = T.dma.zeroFill ? 1 : 0;
  D.mac_rows = uint16_t(T.compute.macRows);
  D.mac_cols = uint16_t(T.compute.macCols);
  D.acc_bits = uint8_t(T.compute.accumulatorBits);
  D.per_channel_requant = T.compute.perChannelRequant ? 1 : 0;
  D.per_tensor_requant = T.compute.perTensorRequant ? 1 : 0;
  D.fused_clamp = 0;
  for (const std::string &a : T.compute.fusedActivations)
    D.fused_clamp |= a == "clamp";
  for (const auto &op : T.compute.operations) {
    int k = commandKindId(op.first);
    if (k < 0)
      continue;
    npucc_op_limits &l = D.ops[k];
    const OpLimits &o = op.second;
    l.supported = 1;
    l.kernel_mask = maskOf(o.kernelSizes);
    l.stride_mask = maskOf(o.strides);
    l.dilation_mask = maskOf(o.dilations);
    l.max_pad = uint16_t(o.maxPadding);
    l.channel_multiple = uint16_t(o.channelMultiple);
    l.max_channels = uint32_t(o.maxChannels);
    for (const std::string &kind : o.kinds) {
      if (kind == "max")
        l.kinds_mask |= 1u << NPUCC_POOL_MAX;
      else if (kind == "avg")
        l.kinds_mask |= 1u << NPUCC_POOL_AVG;
      else if (kind == "add")
        l.kinds_mask |= 1u << NPUCC_ELTWISE_ADD;
    }
  }
  D.clock_hz = uint32_t(T.timing.clockHz);
  D.command_overhead_cycles = T.timing.commandOverheadCycles;
  D.vector_elems_per_cycle = T.timing.vectorElementsPerCycle;
  D.reg_access_cycles = T.timing.regAccessCycles;
  D.poll_cycles = T.timing.pollCycles;
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
