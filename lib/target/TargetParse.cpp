//===- TargetParse.cpp - JSON target description parser and validator -----===//
//
// Every error names the JSON path of the offending value, e.g.
//   my_npu.json: error: /registers/3/fields/1: field 'stride' (bits 30..33) is
//   wider than its 32-bit register 'CONV_CFG'
// Parsing is strict: unknown keys are errors (they are usually typos).
//
//===----------------------------------------------------------------------===//
#include "npucc/target/Target.h"

#include "../../runtime/hal/npucc_params.h"

#include "JsonReader.h"

#include <set>

namespace npucc::target {
namespace {

using namespace json_reader;

bool isPow2(uint64_t v) { return v && !(v & (v - 1)); }

class Parser {
public:
  TargetDesc T;

  void parse(const json &root) {
    Obj o(root, "");
    T.name = o.str("name");
    T.description = o.str("description", "");
    parseMemories(Obj(o.req("memories"), "/memories"));
    parseDma(Obj(o.req("dma"), "/dma"));
    parseCompute(Obj(o.req("compute"), "/compute"));
    T.baseAddress = o.u32("base_address");
    parseRegisters(o.array("registers"), "/registers");
    parseCommands(Obj(o.req("commands"), "/commands"));
    T.completion = o.str("completion", "poll");
    if (T.completion != "poll" && T.completion != "fence")
      fail(o.at("completion"),
           "unknown completion mode '" + T.completion + "' (expected poll or fence)");
    if (T.completion == "fence" && !T.command("fence"))
      fail(o.at("completion"), "completion mode 'fence' needs a 'fence' command");
    parseStatus(Obj(o.req("status"), "/status"));
    T.concurrentDmaCompute = o.boolean("concurrent_dma_compute", false);
    parseTiming(Obj(o.req("timing"), "/timing"));
    o.done();
    crossCheck();
  }

private:
  void parseMemories(const Obj &o) {
    const json &sp = o.array("scratchpads");
    if (sp.empty())
      fail(o.at("scratchpads"), "at least one scratchpad is required");
    for (size_t i = 0; i < sp.size(); ++i) {
      Obj m(sp[i], o.at("scratchpads") + "/" + std::to_string(i));
      Scratchpad s;
      s.name = m.str("name");
      s.base = m.u32("base");
      s.size = m.u32("size");
      s.banks = m.u32("banks", 1);
      s.alignment = m.u32("alignment", 1);
      if (s.size == 0)
        fail(m.at("size"), "scratchpad '" + s.name + "' has size 0");
      if (s.banks == 0)
        fail(m.at("banks"), "scratchpad '" + s.name + "' has 0 banks");
      if (!isPow2(s.alignment))
        fail(m.at("alignment"),
             "alignment " + std::to_string(s.alignment) + " is not a power of two");
      if (uint64_t(s.base) + s.size > (uint64_t(1) << 32))
        fail(m.at("size"), "scratchpad '" + s.name + "' extends past the 32-bit address space");
      m.done();
      addRange(s.name, s.base, s.size, m.path());
      T.scratchpads.push_back(s);
    }
    const json &sys = o.array("system");
    for (size_t i = 0; i < sys.size(); ++i) {
      Obj m(sys[i], o.at("system") + "/" + std::to_string(i));
      SystemRange r;
      r.name = m.str("name");
      r.base = m.u32("base");
      r.size = m.u32("size");
      std::string acc = m.str("access", "rw");
      if (acc != "rw" && acc != "ro")
        fail(m.at("access"), "unknown access '" + acc + "' (expected rw or ro)");
      r.writable = acc == "rw";
      if (r.size == 0)
        fail(m.at("size"), "system memory '" + r.name + "' has size 0");
      if (uint64_t(r.base) + r.size > (uint64_t(1) << 32))
        fail(m.at("size"), "system memory '" + r.name + "' extends past the 32-bit address space");
      m.done();
      addRange(r.name, r.base, r.size, m.path());
      T.system.push_back(r);
    }
    o.done();
  }

  struct Range {
    std::string name;
    uint64_t lo, hi;
  };
  std::vector<Range> Ranges;
  void addRange(const std::string &name, uint64_t base, uint64_t size, const std::string &path) {
    for (const Range &r : Ranges)
      if (base < r.hi && r.lo < base + size)
        fail(path, "memory '" + name + "' overlaps memory '" + r.name + "'");
    Ranges.push_back({name, base, base + size});
  }

  void parseDma(const Obj &o) {
    DmaDesc &d = T.dma;
    d.channels = o.u32("channels", 1);
    d.dims = o.u32("dims");
    if (d.dims < 1 || d.dims > 3)
      fail(o.at("dims"), "DMA dims must be 1, 2 or 3, got " + std::to_string(d.dims));
    d.bytesPerCycle = o.u32("bytes_per_cycle");
    if (d.bytesPerCycle == 0)
      fail(o.at("bytes_per_cycle"), "bytes_per_cycle must be positive");
    d.setupCycles = o.u32("setup_cycles", 0);
    d.alignment = o.u32("alignment", 1);
    if (!isPow2(d.alignment))
      fail(o.at("alignment"),
           "alignment " + std::to_string(d.alignment) + " is not a power of two");
    d.maxBurst = o.u32("max_burst", 0);
    d.zeroFill = o.boolean("zero_fill", false);
    if (d.channels == 0)
      fail(o.at("channels"), "at least one DMA channel is required");
    o.done();
  }

  void parseCompute(const Obj &o) {
    ComputeDesc &c = T.compute;
    Obj mac(o.req("mac_array"), o.at("mac_array"));
    c.macRows = mac.u32("rows");
    c.macCols = mac.u32("cols");
    if (c.macRows == 0)
      fail(mac.at("rows"), "MAC array has 0 rows");
    if (c.macCols == 0)
      fail(mac.at("cols"), "MAC array has 0 columns");
    mac.done();
    c.accumulatorBits = o.u32("accumulator_bits", 32);
    if (c.accumulatorBits != 32)
      fail(o.at("accumulator_bits"), "only 32-bit accumulators are supported");
    bool hasDtypes = o.has("dtypes");
    c.dtypes = strList(o, "dtypes", {"int8"});
    if (!hasDtypes)
      c.dtypes = {"int8"};
    else if (c.dtypes.empty())
      fail(o.at("dtypes"), "at least one dtype is required");
    std::vector<std::string> rq = strList(o, "requant", {"per_channel", "per_tensor"});
    for (const std::string &r : rq) {
      c.perChannelRequant |= r == "per_channel";
      c.perTensorRequant |= r == "per_tensor";
    }
    c.fusedActivations = strList(o, "fused_activations", {"clamp"});
    Obj ops(o.req("operations"), o.at("operations"));
    for (auto it = ops.raw().begin(); it != ops.raw().end(); ++it) {
      const std::string &name = it.key();
      std::string p = ops.at(name);
      int kind = commandKindId(name);
      if (kind < 0 || kind == NPUCC_KIND_DMA || kind == NPUCC_KIND_FENCE)
        fail(p, "unknown operation '" + name +
                    "' (expected conv, depthwise, matmul, pool or eltwise)");
      ops.opt(name);
      Obj lo(it.value(), p);
      OpLimits l;
      bool spatial = name == "conv" || name == "depthwise" || name == "pool";
      l.kernelSizes =
          intList(lo, "kernel_sizes", spatial ? std::vector<int>{} : std::vector<int>{1});
      l.strides = intList(lo, "strides", {1});
      l.dilations = intList(lo, "dilations", {1});
      if (spatial && l.kernelSizes.empty())
        fail(lo.at("kernel_sizes"), "operation '" + name + "' needs kernel_sizes");
      l.maxPadding = int(lo.u32("max_padding", 0));
      l.channelMultiple = int(lo.u32("channel_multiple", 1));
      if (l.channelMultiple == 0)
        fail(lo.at("channel_multiple"), "channel_multiple must be positive");
      l.maxChannels = int(lo.u32("max_channels", 0));
      if (name == "pool")
        l.kinds = strList(lo, "kinds", {"max", "avg"});
      else if (name == "eltwise")
        l.kinds = strList(lo, "kinds", {"add"});
      if ((name == "pool" || name == "eltwise") && l.kinds.empty())
        fail(lo.at("kinds"), "operation '" + name + "' needs a non-empty 'kinds' list");
      lo.done();
      c.operations[name] = l;
    }
    o.done();
  }

  void parseRegisters(const json &regs, const std::string &path) {
    for (size_t i = 0; i < regs.size(); ++i) {
      Obj o(regs[i], path + "/" + std::to_string(i));
      Register r;
      r.name = o.str("name");
      r.offset = o.u32("offset");
      r.width = o.u32("width", 32);
      r.doc = o.str("doc", "");
      if (r.width != 8 && r.width != 16 && r.width != 32)
        fail(o.at("width"),
             "register width must be 8, 16 or 32 bits, got " + std::to_string(r.width));
      if (r.offset % (r.width / 8))
        fail(o.at("offset"), "register '" + r.name + "' at offset " + std::to_string(r.offset) +
                                 " is not aligned to its width");
      for (size_t k = 0; k < T.registers.size(); ++k) {
        const Register &q = T.registers[k];
        if (q.name == r.name)
          fail(o.at("name"), "duplicate register name '" + r.name + "'");
        if (r.offset < q.offset + q.width / 8 && q.offset < r.offset + r.width / 8)
          fail(o.path(), "register '" + r.name + "' (offset " + std::to_string(r.offset) +
                             ") overlaps register '" + q.name + "' (offset " +
                             std::to_string(q.offset) + ")");
      }
      if (const json *fs = o.opt("fields")) {
        if (!fs->is_array())
          fail(o.at("fields"), "expected an array, got " + typeName(*fs));
        for (size_t k = 0; k < fs->size(); ++k) {
          Obj fo((*fs)[k], o.at("fields") + "/" + std::to_string(k));
          Field f;
          f.name = fo.str("name");
          f.lsb = fo.u32("lsb");
          f.width = fo.u32("width");
          f.doc = fo.str("doc", "");
          fo.done();
          if (f.width == 0)
            fail(fo.path(), "field '" + f.name + "' has width 0");
          if (f.lsb + f.width > r.width)
            fail(fo.path(), "field '" + f.name + "' (bits " + std::to_string(f.lsb) + ".." +
                                std::to_string(f.lsb + f.width - 1) + ") is wider than its " +
                                std::to_string(r.width) + "-bit register '" + r.name + "'");
          for (const Field &g : r.fields) {
            if (g.name == f.name)
              fail(fo.at("name"),
                   "duplicate field name '" + f.name + "' in register '" + r.name + "'");
            if (f.lsb < g.lsb + g.width && g.lsb < f.lsb + f.width)
              fail(fo.path(), "field '" + f.name + "' (bits " + std::to_string(f.lsb) + ".." +
                                  std::to_string(f.lsb + f.width - 1) + ") overlaps field '" +
                                  g.name + "' (bits " + std::to_string(g.lsb) + ".." +
                                  std::to_string(g.lsb + g.width - 1) + ") of register '" + r.name +
                                  "'");
          }
          r.fields.push_back(f);
        }
      }
      o.done();
      T.registers.push_back(r);
    }
  }

  FieldRef fieldRef(const json &j, const std::string &path) {
    std::string s = Obj::asString(j, path);
    FieldRef f;
    f.text = s;
    size_t dot = s.find('.');
    std::string reg = s.substr(0, dot);
    for (size_t i = 0; i < T.registers.size(); ++i)
      if (T.registers[i].name == reg)
        f.reg = int(i);
    if (f.reg < 0)
      fail(path, "unknown register '" + reg + "'");
    const Register &r = T.registers[size_t(f.reg)];
    if (dot == std::string::npos) {
      f.lsb = 0;
      f.width = r.width;
      return f;
    }
    std::string field = s.substr(dot + 1);
    for (size_t i = 0; i < r.fields.size(); ++i)
      if (r.fields[i].name == field) {
        f.field = int(i);
        f.lsb = r.fields[i].lsb;
        f.width = r.fields[i].width;
      }
    if (f.field < 0)
      fail(path, "unknown field '" + field + "' in register '" + reg + "'");
    return f;
  }

  FieldValue fieldValue(const Obj &o) {
    FieldValue v;
    bool hasField = o.has("field"), hasReg = o.has("register");
    if (hasField == hasReg)
      fail(o.path(), "exactly one of 'field' or 'register' is required");
    v.field = hasField ? fieldRef(o.req("field"), o.at("field"))
                       : fieldRef(o.req("register"), o.at("register"));
    if (hasReg && v.field.field >= 0)
      fail(o.at("register"), "'register' must name a register, not a field");
    v.value = o.u32("value");
    if (v.field.width < 32 && v.value >= (1u << v.field.width))
      fail(o.at("value"), "value " + std::to_string(v.value) + " does not fit in " +
                              std::to_string(v.field.width) + "-bit field '" + v.field.text + "'");
    o.done();
    return v;
  }

  static bool overlaps(const FieldRef &a, const FieldRef &b) {
    return a.reg == b.reg && a.lsb < b.lsb + b.width && b.lsb < a.lsb + a.width;
  }

  void parseCommands(const Obj &o) {
    static const unsigned Allowed[] = {
#define NPUCC_PARAM_ALLOWED(id, name, def, req, allowed, sgn) allowed,
        NPUCC_PARAM_LIST(NPUCC_PARAM_ALLOWED)
#undef NPUCC_PARAM_ALLOWED
    };
    static const unsigned Required[] = {
#define NPUCC_PARAM_REQUIRED(id, name, def, req, allowed, sgn) req,
        NPUCC_PARAM_LIST(NPUCC_PARAM_REQUIRED)
#undef NPUCC_PARAM_REQUIRED
    };
    for (auto it = o.raw().begin(); it != o.raw().end(); ++it) {
      const std::string &kind = it.key();
      std::string p = o.at(kind);
      o.opt(kind);
      CommandDesc c;
      c.kind = kind;
      c.kindId = commandKindId(kind);
      if (c.kindId < 0) {
        std::string list;
        for (const std::string &n : commandKindNames())
          list += (list.empty() ? "" : ", ") + n;
        fail(p, "unknown command kind '" + kind + "' (expected one of " + list + ")");
      }
      Obj co(it.value(), p);
      std::string engine = co.str("engine", kind == "dma"     ? "dma"
                                            : kind == "fence" ? "fence"
                                                              : "compute");
      if (engine != "dma" && engine != "compute" && engine != "fence")
        fail(co.at("engine"), "unknown engine '" + engine + "' (expected dma, compute or fence)");
      if ((engine == "fence") != (kind == "fence"))
        fail(co.at("engine"), "only the fence command runs on the fence engine");
      c.engine = engine == "dma"     ? Engine::Dma
                 : engine == "fence" ? Engine::Fence
                                     : Engine::Compute;
      c.doc = co.str("doc", "");
      std::vector<FieldRef> used;
      auto claim = [&](const FieldRef &f, const std::string &path) {
        for (const FieldRef &u : used)
          if (overlaps(u, f))
            fail(path, "field '" + f.text + "' overlaps '" + u.text +
                           "', already written by this command");
        used.push_back(f);
      };
      if (const json *ps = co.opt("params")) {
        Obj po(*ps, co.at("params"));
        for (auto pi = ps->begin(); pi != ps->end(); ++pi) {
          std::string pp = po.at(pi.key());
          po.opt(pi.key());
          ParamBinding b;
          b.param = pi.key();
          b.paramId = paramId(b.param);
          if (b.paramId < 0)
            fail(pp, "unknown semantic parameter '" + b.param + "'");
          if (!(Allowed[b.paramId] & (1u << c.kindId)))
            fail(pp, "parameter '" + b.param + "' does not apply to command '" + kind + "'");
          if (pi.value().is_string()) {
            b.field = fieldRef(pi.value(), pp);
          } else {
            Obj bo(pi.value(), pp);
            b.field = fieldRef(bo.req("field"), bo.at("field"));
            b.shift = bo.u32("shift", 0);
            b.minus = toI64(bo.opt("minus") ? bo.req("minus") : json(0), bo.at("minus"));
            if (b.shift > 31)
              fail(bo.at("shift"), "shift must be at most 31");
            bo.done();
          }
          claim(b.field, pp);
          c.params.push_back(b);
        }
      }
      if (const json *fx = co.opt("fixed")) {
        Obj fo(*fx, co.at("fixed"));
        for (auto fi = fx->begin(); fi != fx->end(); ++fi) {
          std::string fp = fo.at(fi.key());
          fo.opt(fi.key());
          FixedParam f;
          f.param = fi.key();
          f.paramId = paramId(f.param);
          if (f.paramId < 0)
            fail(fp, "unknown semantic parameter '" + f.param + "'");
          if (!(Allowed[f.paramId] & (1u << c.kindId)))
            fail(fp, "parameter '" + f.param + "' does not apply to command '" + kind + "'");
          if (c.binding(f.param))
            fail(fp, "parameter '" + f.param + "' is both fixed and bound to a field");
          f.value = toI64(fi.value(), fp);
          if (f.value < INT32_MIN || f.value > INT32_MAX)
            fail(fp, "value " + std::to_string(f.value) + " does not fit in 32 bits");
          c.fixed.push_back(f);
        }
      }
      if (const json *sel = co.opt("select")) {
        if (!sel->is_array())
          fail(co.at("select"), "expected an array, got " + typeName(*sel));
        for (size_t i = 0; i < sel->size(); ++i) {
          std::string sp = co.at("select") + "/" + std::to_string(i);
          FieldValue v = fieldValue(Obj((*sel)[i], sp));
          claim(v.field, sp);
          c.select.push_back(v);
        }
      }
      c.doorbell = fieldValue(Obj(co.req("doorbell"), co.at("doorbell")));
      claim(c.doorbell.field, co.at("doorbell"));
      co.done();
      for (size_t id = 0; id < paramNames().size(); ++id) {
        if (!(Required[id] & (1u << c.kindId)))
          continue;
        bool fixed = false;
        for (const FixedParam &f : c.fixed)
          fixed |= f.paramId == int(id);
        if (!c.binding(paramNames()[id]) && !fixed)
          fail(co.at("params"),
               "command '" + kind + "' must bind parameter '" + paramNames()[id] + "'");
      }
      T.commands.push_back(c);
    }
    if (!T.command("dma"))
      fail(o.path(), "missing required command 'dma'");
  }

  /// busy/done are optional when completion is observed through fences.
  void parseEngineStatus(const Obj &o, EngineStatus &e, bool required) {
    if (required || o.has("busy"))
      e.busy = fieldRef(o.req("busy"), o.at("busy"));
    if (required || o.has("done"))
      e.done = fieldRef(o.req("done"), o.at("done"));
    if (const json *er = o.opt("error"))
      e.error = fieldRef(*er, o.at("error"));
    for (const FieldRef *f : {&e.busy, &e.done, &e.error})
      if (f->valid() && f->reg != T.statusRegister)
        fail(o.path(), "status bit '" + f->text + "' is not in the status register '" +
                           T.registers[size_t(T.statusRegister)].name + "'");
    o.done();
  }

  void parseStatus(const Obj &o) {
    FieldRef r = fieldRef(o.req("register"), o.at("register"));
    if (r.field >= 0)
      fail(o.at("register"), "'register' must name a register, not a field");
    T.statusRegister = r.reg;
    bool poll = T.completion == "poll";
    parseEngineStatus(Obj(o.req("dma"), o.at("dma")), T.engines[0], poll);
    parseEngineStatus(Obj(o.req("compute"), o.at("compute")), T.engines[1], poll);
    if (!poll || o.has("fence"))
      parseEngineStatus(Obj(o.req("fence"), o.at("fence")), T.engines[2], true);
    o.done();
  }

  void parseTiming(const Obj &o) {
    TimingDesc &t = T.timing;
    t.clockHz = o.u64("clock_hz");
    if (t.clockHz == 0 || t.clockHz > UINT32_MAX)
      fail(o.at("clock_hz"), "clock_hz must be in 1..4294967295");
    t.commandOverheadCycles = o.u32("command_overhead_cycles", 0);
    t.vectorElementsPerCycle = o.u32("vector_elements_per_cycle", 1);
    if (t.vectorElementsPerCycle == 0)
      fail(o.at("vector_elements_per_cycle"), "vector_elements_per_cycle must be positive");
    t.regAccessCycles = o.u32("reg_access_cycles", 1);
    t.pollCycles = o.u32("poll_cycles", 1);
    if (t.pollCycles == 0)
      fail(o.at("poll_cycles"), "poll_cycles must be positive");
    o.done();
  }

  /// Operations and commands must agree; requant modes must be programmable.
  void crossCheck() {
    for (const auto &op : T.compute.operations)
      if (!T.command(op.first))
        fail("/compute/operations/" + op.first,
             "operation '" + op.first + "' has no command in /commands");
    for (const CommandDesc &c : T.commands) {
      std::string p = "/commands/" + c.kind;
      if (c.kind != "dma" && c.kind != "fence" && !T.operation(c.kind))
        fail(p, "command '" + c.kind + "' has no entry in /compute/operations");
      if (c.kindId == NPUCC_KIND_DMA && c.engine != Engine::Dma)
        fail(p + "/engine", "the dma command must run on the dma engine");
      bool rq = c.kindId == NPUCC_KIND_CONV || c.kindId == NPUCC_KIND_DEPTHWISE ||
                c.kindId == NPUCC_KIND_MATMUL;
      if (rq && T.compute.perChannelRequant && !c.binding("rq_addr"))
        fail(p + "/params", "per-channel requant needs parameter 'rq_addr' bound");
      if (rq && T.compute.perTensorRequant &&
          (!c.binding("requant_mult") || !c.binding("requant_shift")))
        fail(p + "/params",
             "per-tensor requant needs parameters 'requant_mult' and 'requant_shift' bound");
      if (rq && !T.compute.perChannelRequant && !T.compute.perTensorRequant)
        fail("/compute/requant", "at least one requant mode is required");
    }
  }
};

} // namespace

Result<TargetDesc> parseTargetJson(const std::string &text, const std::string &name) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (root.is_discarded()) {
    // Re-parse to get the position of the syntax error.
    std::string what = "invalid JSON";
    try {
      json again = json::parse(text, nullptr, true, true);
      (void)again;
    } catch (const json::exception &e) {
      what = e.what();
    }
    return std::move(error("/: " + what).inFile(name));
  }
  Parser p;
  try {
    p.parse(root);
  } catch (const ParseError &e) {
    return std::move(error(e.path + ": " + e.message).inFile(name));
  } catch (const json::exception &e) {
    return std::move(error(std::string("/: ") + e.what()).inFile(name));
  }
  return std::move(p.T);
}

} // namespace npucc::target
