//===- TargetParse.cpp - Target description: hardware part of the parser --===//
//
// Memories (windows, banks, alignment, speed), DMA, compute operations with
// their limits and the timing model. Every error names the JSON path of the
// offending value, e.g.
//   my_npu.json: error: /dma/alignment: alignment 24 is not a power of two
// Parsing is strict: unknown keys are errors, with a suggestion when they look
// like a typo of a known key. Every number is range-checked against the type
// that carries it in the runtime's table (runtime/hal/npucc_desc.h).
//
//===----------------------------------------------------------------------===//
#include "TargetParser.h"

#include "npucc/target/CTable.h"

#include "../../runtime/hal/npucc_params.h"

#include <algorithm>
#include <set>

namespace npucc::target {

using namespace json_reader;

namespace {

bool isPow2(uint64_t v) { return v && !(v & (v - 1)); }

constexpr uint64_t U8 = 0xFF, U16 = 0xFFFF, U32 = 0xFFFFFFFFu;

uint64_t pow2(const Obj &o, const std::string &key, uint64_t def) {
  uint64_t v = o.range(key, def, 1, uint64_t(1) << 31);
  if (!isPow2(v))
    fail(o.at(key), "alignment " + std::to_string(v) + " is not a power of two");
  return v;
}

Operand operandByName(const json &j, const std::string &path) {
  std::string s = Obj::asString(j, path);
  const auto &n = operandNames();
  auto it = std::find(n.begin(), n.end(), s);
  if (it == n.end()) {
    std::string near = json_reader::closest(s, std::set<std::string>(n.begin(), n.end()));
    fail(path, "unknown operand " + shortQuote(s) +
                   (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                   " (expected in, in2, w, bias, rq, out or act)");
  }
  return Operand(it - n.begin());
}

} // namespace

void TargetParser::parse(const json &root) {
  Obj o(root, "");
  T.name = o.str("name");
  if (T.name.empty())
    fail(o.at("name"), "the name must not be empty");
  T.description = o.str("description", "");
  T.addressBits = unsigned(o.range("address_bits", 32, 32, 64));
  if (o.has("todo"))
    parseSkeleton(o);
  parseMemories(Obj(o.req("memories"), "/memories"));
  parseDma(Obj(o.req("dma"), "/dma"));
  parseCompute(Obj(o.req("compute"), "/compute"));
  T.baseAddress = o.u64("base_address");
  if (const json *b = o.opt("bus"))
    parseBus(Obj(*b, "/bus"));
  parseRegisters(o.array("registers"), "/registers");
  if (const json *f = o.opt("frames"))
    parseFrames(*f, "/frames");
  if (const json *q = o.opt("job_queue"))
    parseQueue(Obj(*q, "/job_queue"));
  parseCommands(Obj(o.req("commands"), "/commands"));
  T.completion = o.str("completion", "poll");
  if (T.completion != "poll" && T.completion != "fence")
    fail(o.at("completion"),
         "unknown completion mode " + shortQuote(T.completion) + " (expected poll or fence)");
  if (T.completion == "fence" && !T.command("fence"))
    fail(o.at("completion"), "completion mode 'fence' needs a 'fence' command");
  parseStatus(Obj(o.req("status"), "/status"));
  if (const json *in = o.opt("init"))
    parseInit(*in, "/init");
  T.concurrentDmaCompute = o.boolean("concurrent_dma_compute", false);
  T.registersPersist = o.boolean("registers_persist", false);
  parseTiming(Obj(o.req("timing"), "/timing"));
  o.done();
  crossCheck();
}

/// A skeleton from `npucc target import` (a top-level "todo": the sections still to
/// write): its registers are checked like any description's, then the list is the error.
void TargetParser::parseSkeleton(const Obj &o) {
  const json &todo = o.req("todo");
  if (!todo.is_array() || todo.empty())
    fail(o.at("todo"), "expected a non-empty array of the sections still to describe");
  std::string list;
  for (size_t i = 0; i < todo.size(); ++i)
    list += (i ? ", " : "") + Obj::asString(todo[i], o.at("todo") + "/" + std::to_string(i));
  T.baseAddress = o.u64("base_address");
  if (const json *b = o.opt("bus"))
    parseBus(Obj(*b, "/bus"));
  parseRegisters(o.array("registers"), "/registers");
  fail(o.at("todo"), "a skeleton written by `npucc target import` (its " +
                         std::to_string(T.registers.size()) +
                         " registers load); still to describe: " + list +
                         "; remove \"todo\" when they are written (docs/target.md, \"Starting "
                         "from a register file\")");
}

void TargetParser::checkAddressRange(const Obj &m, const std::string &what, uint64_t base,
                                     uint64_t size) const {
  uint64_t maxAddr = T.addressBits >= 64 ? ~uint64_t(0) : (uint64_t(1) << T.addressBits) - 1;
  std::string bits = std::to_string(T.addressBits) + "-bit address space (address_bits)";
  if (base > maxAddr)
    fail(m.at("base"), what + " starts at " + hexText(base) + ", outside the " + bits);
  if (size - 1 > maxAddr - base)
    fail(m.at("size"),
         what + " (" + hexText(base) + " + " + hexText(size) + " bytes) extends past the " + bits);
}

void TargetParser::addRange(const std::string &name, uint64_t base, uint64_t size,
                            const std::string &path) {
  if (name.empty())
    fail(path + "/name", "a memory name must not be empty");
  for (const Range &r : Ranges)
    if (macroPrefix(r.name) == macroPrefix(name))
      fail(path + "/name", "memory " + shortQuote(name) +
                               " gives the same C identifier as memory " + shortQuote(r.name));
  for (const Range &r : Ranges)
    if (base < r.hi && r.lo < base + size)
      fail(path, "memory " + shortQuote(name) + " overlaps memory " + shortQuote(r.name));
  Ranges.push_back({name, base, base + size});
}

void TargetParser::parseScratchpad(const Obj &m, Scratchpad &s) {
  s.name = m.str("name");
  s.base = m.u64("base");
  s.size = m.u64("size");
  if (s.size == 0)
    fail(m.at("size"), "scratchpad " + shortQuote(s.name) + " has size 0");
  if (s.size > U32)
    fail(m.at("size"), "scratchpad " + shortQuote(s.name) + " is larger than 4 GiB - 1");
  s.banks = unsigned(m.range("banks", 1, 1, U16));
  if (m.has("bank_size")) {
    s.bankSize = m.range("bank_size", 1, U32);
    if (s.bankSize * s.banks != s.size)
      fail(m.at("bank_size"), "banks x bank_size = " + std::to_string(s.banks) + " x " +
                                  std::to_string(s.bankSize) + " is not the size " +
                                  std::to_string(s.size));
  } else {
    if (s.size % s.banks)
      fail(m.at("banks"), "size " + std::to_string(s.size) + " is not a multiple of " +
                              std::to_string(s.banks) + " banks (give bank_size)");
    s.bankSize = s.size / s.banks;
  }
  s.alignment = unsigned(pow2(m, "alignment", 1));
  s.operandAlignment.fill(s.alignment);
  if (const json *oa = m.opt("operand_alignment")) {
    Obj a(*oa, m.at("operand_alignment"));
    for (int i = 0; i < NumOperands; ++i)
      s.operandAlignment[size_t(i)] = unsigned(pow2(a, operandNames()[size_t(i)], s.alignment));
    a.done();
  }
  if (const json *sep = m.opt("separate_banks")) {
    std::string p = m.at("separate_banks");
    if (!sep->is_array())
      fail(p, "expected an array of operand pairs, got " + typeName(*sep));
    if (s.banks < 2)
      fail(p, "separate_banks needs at least 2 banks");
    for (size_t i = 0; i < sep->size(); ++i) {
      std::string pp = p + "/" + std::to_string(i);
      const json &pair = (*sep)[i];
      if (!pair.is_array() || pair.size() != 2)
        fail(pp, "expected a pair of operand names, e.g. [\"in\", \"w\"]");
      Operand a = operandByName(pair[0], pp + "/0"), b = operandByName(pair[1], pp + "/1");
      if (a == b)
        fail(pp, "an operand cannot be separated from itself");
      s.separateBanks.push_back({a, b});
    }
  }
  std::string policy = m.str("bank_conflict", "error");
  if (policy != "error" && policy != "slowdown")
    fail(m.at("bank_conflict"),
         "unknown bank_conflict " + shortQuote(policy) + " (expected error or slowdown)");
  if (m.has("bank_conflict") && s.separateBanks.empty())
    fail(m.at("bank_conflict"), "bank_conflict needs separate_banks");
  s.conflictIsError = policy == "error";
  if (!s.conflictIsError)
    s.conflictSlowdown = unsigned(m.range("conflict_slowdown", 2, U16));
  else if (m.has("conflict_slowdown"))
    fail(m.at("conflict_slowdown"), "conflict_slowdown needs \"bank_conflict\": \"slowdown\"");
  checkAddressRange(m, "scratchpad " + shortQuote(s.name), s.base, s.size);
}

void TargetParser::parseMemories(const Obj &o) {
  const json &sp = o.array("scratchpads");
  if (sp.empty())
    fail(o.at("scratchpads"), "at least one scratchpad is required");
  for (size_t i = 0; i < sp.size(); ++i) {
    Obj m(sp[i], o.at("scratchpads") + "/" + std::to_string(i));
    Scratchpad s;
    parseScratchpad(m, s);
    m.done();
    addRange(s.name, s.base, s.size, m.path());
    T.scratchpads.push_back(s);
  }
  const json &sys = o.array("system");
  for (size_t i = 0; i < sys.size(); ++i) {
    Obj m(sys[i], o.at("system") + "/" + std::to_string(i));
    SystemRange r;
    r.name = m.str("name");
    r.base = m.u64("base");
    r.size = m.u64("size");
    if (r.size == 0)
      fail(m.at("size"), "system memory " + shortQuote(r.name) + " has size 0");
    std::string acc = m.str("access", "rw");
    if (acc != "rw" && acc != "ro")
      fail(m.at("access"), "unknown access " + shortQuote(acc) + " (expected rw or ro)");
    r.writable = acc == "rw";
    r.readBytesPerCycle = unsigned(m.range("read_bytes_per_cycle", 0, 0, U32));
    r.writeBytesPerCycle = unsigned(m.range("write_bytes_per_cycle", 0, 0, U32));
    if (!r.writable && m.has("write_bytes_per_cycle"))
      fail(m.at("write_bytes_per_cycle"), "window " + shortQuote(r.name) + " is read-only");
    r.latencyCycles = unsigned(m.range("latency_cycles", 0, 0, U32));
    checkAddressRange(m, "system memory " + shortQuote(r.name), r.base, r.size);
    m.done();
    addRange(r.name, r.base, r.size, m.path());
    T.system.push_back(r);
  }
  if (T.scratchpads.size() + T.system.size() > U16)
    fail(o.path(), "more than 65535 memories");
  o.done();
}

void TargetParser::parseDma(const Obj &o) {
  DmaDesc &d = T.dma;
  d.channels = unsigned(o.range("channels", 1, 1, U8));
  d.dims = unsigned(o.range("dims", 1, 3));
  d.bytesPerCycle = unsigned(o.range("bytes_per_cycle", 1, U32));
  d.readBytesPerCycle = unsigned(o.range("read_bytes_per_cycle", d.bytesPerCycle, 1, U32));
  d.writeBytesPerCycle = unsigned(o.range("write_bytes_per_cycle", d.bytesPerCycle, 1, U32));
  d.setupCycles = unsigned(o.range("setup_cycles", 0, 0, U32));
  d.alignment = unsigned(pow2(o, "alignment", 1));
  d.maxBurst = unsigned(o.range("max_burst", 0, 0, U32));
  d.zeroFill = o.boolean("zero_fill", false);
  // Explicit limits; checked against the command's fields in deriveDmaLimits.
  static const char *const Keys[] = {"max_length", "max_rows", "max_planes", "max_stride",
                                     "max_plane_stride"};
  // Counts are at least 1; a stride limit of 0 means the DMA cannot step
  // between rows (or planes): one row per command.
  for (size_t i = 0; i < 5; ++i)
    if (o.has(Keys[i]))
      ExplicitDma[i] = o.range(Keys[i], i < 3 ? 1 : 0, uint64_t(INT64_MAX));
    else
      o.opt(Keys[i]);
  if (ExplicitDma[1] && *ExplicitDma[1] > 1 && d.dims < 2)
    fail(o.at("max_rows"), "max_rows > 1 needs a DMA with dims >= 2");
  if (ExplicitDma[2] && *ExplicitDma[2] > 1 && d.dims < 3)
    fail(o.at("max_planes"), "max_planes > 1 needs a DMA with dims 3");
  parseDmaUnit(o);
  o.done();
}

OpLimits TargetParser::parseOperation(const std::string &name, const Obj &lo,
                                      const std::vector<std::string> &rq,
                                      const std::vector<std::string> &act) {
  OpLimits l;
  bool spatial = name == "conv" || name == "depthwise" || name == "pool";
  bool mac = name == "conv" || name == "depthwise" || name == "matmul";
  if (spatial) {
    std::vector<int> both = intList(lo, "kernel_sizes", {});
    l.kernelHeights = intList(lo, "kernel_heights", both);
    l.kernelWidths = intList(lo, "kernel_widths", both);
    if (!lo.has("kernel_heights"))
      l.kernelHeightsKey = "kernel_sizes";
    if (!lo.has("kernel_widths"))
      l.kernelWidthsKey = "kernel_sizes";
    if (l.kernelHeights.empty() || l.kernelWidths.empty()) {
      // Name the key that was probably meant, as a missing required field does.
      std::string typo;
      for (auto it = lo.raw().begin(); it != lo.raw().end() && typo.empty(); ++it)
        if (!lo.seen(it.key()))
          if (std::string near =
                  closest(it.key(), {"kernel_sizes", "kernel_heights", "kernel_widths"});
              !near.empty())
            typo = "; unknown field " + shortQuote(it.key()) + " (did you mean '" + near + "'?)";
      fail(lo.at("kernel_sizes"), "operation '" + name +
                                      "' needs kernel_sizes (or kernel_heights and kernel_widths)" +
                                      typo);
    }
    l.strides = intList(lo, "strides", {1});
    if (name != "pool")
      l.dilations = intList(lo, "dilations", {1});
    if (const json *mp = lo.opt("max_padding")) {
      if (mp->is_object()) {
        Obj po(*mp, lo.at("max_padding"));
        static const char *const Sides[] = {"top", "bottom", "left", "right"};
        for (size_t i = 0; i < 4; ++i)
          l.maxPad[i] = unsigned(po.range(Sides[i], 0, 0, U16));
        po.done();
      } else {
        l.maxPad.fill(unsigned(lo.range("max_padding", 0, 0, U16)));
      }
    }
    l.maxInH = unsigned(lo.range("max_in_h", 0, 0, U32));
    l.maxInW = unsigned(lo.range("max_in_w", 0, 0, U32));
    l.maxOutH = unsigned(lo.range("max_out_h", 0, 0, U32));
    l.maxOutW = unsigned(lo.range("max_out_w", 0, 0, U32));
    parseGeometry(name, lo, l);
  }
  if (name == "depthwise")
    l.depthMultipliers = intList(lo, "channel_multipliers", {1});
  if (name != "eltwise") {
    unsigned mult = unsigned(lo.range("channel_multiple", 1, 1, U32));
    unsigned maxc = unsigned(lo.range("max_channels", 0, 0, U32));
    l.inChannelMultiple = unsigned(lo.range("in_channel_multiple", mult, 1, U32));
    l.maxInChannels = unsigned(lo.range("max_in_channels", maxc, 0, U32));
    if (name != "pool") {
      l.outChannelMultiple = unsigned(lo.range("out_channel_multiple", mult, 1, U32));
      l.maxOutChannels = unsigned(lo.range("max_out_channels", maxc, 0, U32));
    }
  }
  if (name == "matmul") {
    l.maxM = unsigned(lo.range("max_m", 0, 0, U32));
    l.maxK = unsigned(lo.range("max_k", 0, 0, U32));
    l.maxN = unsigned(lo.range("max_n", 0, 0, U32));
  }
  if (name == "pool" || name == "eltwise") {
    l.kinds = strList(lo, "kinds",
                      name == "pool" ? std::set<std::string>{"max", "avg"}
                                     : std::set<std::string>{"add"});
    if (l.kinds.empty())
      fail(lo.at("kinds"), "operation '" + name + "' needs a non-empty 'kinds' list");
  }
  if (name == "pool" && lo.has("avg_rounding")) {
    static const char *const Modes[] = {"half_away_from_zero", "half_to_even", "truncate",
                                        "floor"}; // NPUCC_AVG_* order
    std::string m = lo.str("avg_rounding");
    auto it = std::find(std::begin(Modes), std::end(Modes), m);
    if (it == std::end(Modes))
      fail(lo.at("avg_rounding"), "unknown avg_rounding " + shortQuote(m) +
                                      " (expected half_away_from_zero, half_to_even, truncate "
                                      "or floor)");
    if (!l.allowsKind("avg"))
      fail(lo.at("avg_rounding"), "avg_rounding without \"avg\" in pool.kinds");
    l.avgRounding = unsigned(it - std::begin(Modes));
  }
  if (name == "conv" || name == "matmul")
    parseWeights(lo, l);
  if (name == "conv" || name == "depthwise" || name == "pool")
    l.actBlock = lo.has("layout") ? parseActLayout(*lo.opt("layout"), lo.at("layout"))
                                  : DefaultActBlock;
  else if (lo.has("layout"))
    fail(lo.at("layout"), "operation '" + name +
                              "' reads its operands as element sequences; only conv, "
                              "depthwise and pool take an activation layout");
  if (mac) {
    std::vector<std::string> own =
        lo.has("requant") ? strList(lo, "requant", {"per_channel", "per_tensor"}) : rq;
    if (lo.has("requant") && own.empty())
      fail(lo.at("requant"), "at least one requant mode is required");
    for (const std::string &r : own) {
      l.perChannelRequant |= r == "per_channel";
      l.perTensorRequant |= r == "per_tensor";
    }
  }
  std::vector<std::string> acts =
      lo.has("fused_activations") ? strList(lo, "fused_activations", {"clamp"}) : act;
  l.fusedClamp = std::find(acts.begin(), acts.end(), "clamp") != acts.end();
  if (const json *ar = lo.opt("arithmetic"))
    parseArithmetic(name, Obj(*ar, lo.at("arithmetic")), l);
  if (const json *ops = lo.opt("operands"))
    parseOperands(name, Obj(*ops, lo.at("operands")), l);
  // A key that another operation takes is not a typo: say where it belongs.
  static const std::set<std::string> OtherOps = {"kernel_sizes",
                                                 "kernel_heights",
                                                 "kernel_widths",
                                                 "strides",
                                                 "dilations",
                                                 "max_padding",
                                                 "max_in_h",
                                                 "max_in_w",
                                                 "max_out_h",
                                                 "max_out_w",
                                                 "channel_multipliers",
                                                 "channel_multiple",
                                                 "max_channels",
                                                 "in_channel_multiple",
                                                 "out_channel_multiple",
                                                 "max_in_channels",
                                                 "max_out_channels",
                                                 "max_m",
                                                 "max_k",
                                                 "max_n",
                                                 "kinds",
                                                 "requant"};
  static const std::set<std::string> LayoutKeys = {"min_in_h", "min_in_w", "square_kernels",
                                                   "implied_padding", "weights"};
  for (auto it = lo.raw().begin(); it != lo.raw().end(); ++it)
    if ((OtherOps.count(it.key()) || LayoutKeys.count(it.key())) && !lo.seen(it.key()))
      fail(lo.at(it.key()), "'" + it.key() + "' does not apply to operation '" + name + "'");
  return l;
}

/// "operands": {"w": {"memory": "system", "alignment": 16}, ...}. Only the
/// constant operands may be in system memory: activations stay in
/// scratchpad tiles the compiler moves, and w, bias and rq are one record
/// per output-channel block in the constant blob (lib/lower/npu/Records.cpp),
/// so they share one memory.
void TargetParser::parseOperands(const std::string &name, const Obj &oo, OpLimits &l) {
  bool mac = name == "conv" || name == "depthwise" || name == "matmul";
  std::vector<std::string> reads = {"in"};
  if (name == "eltwise")
    reads.push_back("in2");
  if (mac)
    reads.insert(reads.end(), {"w", "bias", "rq", "act"});
  reads.push_back("out");
  for (auto it = oo.raw().begin(); it != oo.raw().end(); ++it) {
    std::string p = oo.at(it.key());
    oo.opt(it.key());
    Operand op = operandByName(json(it.key()), p);
    if (std::find(reads.begin(), reads.end(), it.key()) == reads.end())
      fail(p, "operation '" + name + "' does not read operand '" + it.key() + "'");
    if (op == Operand::Act && l.stage(NPUCC_SLOT_ACTIVATION) != NPUCC_STAGE_ACT_LUT256 &&
        l.stage(NPUCC_SLOT_ACTIVATION) != NPUCC_STAGE_ACT_PWL)
      fail(p, "operand 'act' is the table of the lut256 activation stage; operation '" + name +
                  "' has the clamp stage");
    Obj e(it.value(), p);
    std::string mem = e.str("memory", "scratchpad");
    if (mem != "scratchpad" && mem != "system")
      fail(e.at("memory"),
           "unknown memory " + shortQuote(mem) + " (expected scratchpad or system)");
    bool sys = mem == "system";
    if (sys && (op == Operand::In || op == Operand::In2 || op == Operand::Out))
      fail(e.at("memory"), "operand '" + it.key() +
                               "' is an activation: npucc keeps activations in the scratchpad "
                               "(only w, bias, rq and act may be read from system memory)");
    if (e.has("alignment") && !sys)
      fail(e.at("alignment"), "an alignment applies to an operand in system memory; a "
                              "scratchpad operand's is /memories/scratchpads/N/operand_alignment");
    l.systemOperand[size_t(op)] = sys;
    l.systemAlignment[size_t(op)] = unsigned(pow2(e, "alignment", 1));
    e.done();
  }
  if (mac && (l.inSystem(Operand::W) != l.inSystem(Operand::Bias) ||
              l.inSystem(Operand::W) != l.inSystem(Operand::Rq)))
    fail(oo.path(), "operands w, bias and rq of operation '" + name +
                        "' are one record per output-channel block in the constant blob: give "
                        "them the same memory");
}

void TargetParser::parseCompute(const Obj &o) {
  ComputeDesc &c = T.compute;
  Obj mac(o.req("mac_array"), o.at("mac_array"));
  if (mac.u64("rows") == 0)
    fail(mac.at("rows"), "MAC array has 0 rows");
  if (mac.u64("cols") == 0)
    fail(mac.at("cols"), "MAC array has 0 columns");
  c.macRows = unsigned(mac.range("rows", 1, U16));
  c.macCols = unsigned(mac.range("cols", 1, U16));
  mac.done();
  c.accumulatorBits = unsigned(o.range("accumulator_bits", 32, 32, 32));
  bool hasDtypes = o.has("dtypes");
  c.dtypes = strList(o, "dtypes", {"int8"});
  if (!hasDtypes)
    c.dtypes = {"int8"};
  else if (c.dtypes.empty())
    fail(o.at("dtypes"), "at least one dtype is required");
  std::vector<std::string> rq = strList(o, "requant", {"per_channel", "per_tensor"});
  std::vector<std::string> act = strList(o, "fused_activations", {"clamp"});
  if (const json *lay = o.opt("layout"))
    DefaultActBlock = parseActLayout(*lay, o.at("layout"));
  Obj ops(o.req("operations"), o.at("operations"));
  for (auto it = ops.raw().begin(); it != ops.raw().end(); ++it) {
    const std::string &name = it.key();
    std::string p = ops.at(name);
    int kind = commandKindId(name);
    if (kind < 0 || kind == NPUCC_KIND_DMA || kind == NPUCC_KIND_FENCE)
      fail(p, "unknown operation " + shortQuote(name) +
                  " (expected conv, depthwise, matmul, pool or eltwise)");
    ops.opt(name);
    Obj lo(it.value(), p);
    OpLimits l = parseOperation(name, lo, rq, act);
    if ((name == "conv" || name == "depthwise" || name == "matmul") && !l.perChannelRequant &&
        !l.perTensorRequant)
      fail(o.has("requant") ? o.at("requant") : o.path(),
           "operation '" + name + "' has no requant mode (give /compute/requant)");
    lo.done();
    c.operations[name] = l;
  }
  o.done();
}

/// timing.operations.<op>.steps / .macs: an expression over the parameters
/// of the operation's command; addresses are refused (a cycle count must not
/// depend on where the firmware places a buffer).
std::optional<Expr> TargetParser::timingExpr(const Obj &to, const char *key,
                                             const std::string &op) const {
  const json *v = to.opt(key);
  if (!v)
    return std::nullopt;
  std::string p = to.at(key);
  if (!v->is_string())
    fail(p, "expected an expression over the command's parameters, e.g. \"out_h * out_w\"");
  ExprError err;
  std::optional<Expr> e = parseExpr(v->get<std::string>(), err);
  if (!e)
    fail(p, "column " + std::to_string(err.column) + ": " + err.message + " in " +
                shortQuote(v->get<std::string>()));
  int kind = commandKindId(op);
  for (int id : exprParams(*e)) {
    const std::string &name = paramNames()[size_t(id)];
    if (!paramAllowedFor(id, kind))
      fail(p, "parameter '" + name + "' does not apply to operation '" + op + "'");
    if (name.size() > 5 && name.compare(name.size() - 5, 5, "_addr") == 0)
      fail(p, "parameter '" + name +
                  "' is an address; a cycle count must not depend on where operands are placed");
  }
  return e;
}

void TargetParser::parseTiming(const Obj &o) {
  TimingDesc &t = T.timing;
  t.clockHz = o.range("clock_hz", 1, U32);
  t.commandOverheadCycles = unsigned(o.range("command_overhead_cycles", 0, 0, U32));
  t.vectorElementsPerCycle = unsigned(o.range("vector_elements_per_cycle", 1, 1, U32));
  t.regAccessCycles = unsigned(o.range("reg_access_cycles", 1, 0, U32));
  t.pollCycles = unsigned(o.range("poll_cycles", 1, 1, U32));
  if (const json *ops = o.opt("operations")) {
    Obj oo(*ops, o.at("operations"));
    for (auto it = ops->begin(); it != ops->end(); ++it) {
      std::string p = oo.at(it.key());
      oo.opt(it.key());
      auto op = T.compute.operations.find(it.key());
      if (op == T.compute.operations.end())
        fail(p, "timing for " + shortQuote(it.key()) + ", which is not in /compute/operations");
      Obj to(it.value(), p);
      OpTiming &ot = op->second.timing;
      ot.cyclesPerStep = unsigned(to.range("cycles_per_step", 1, 1, U16));
      ot.fillCycles = unsigned(to.range("fill_cycles", 0, 0, U32));
      ot.overheadCycles = unsigned(to.range("overhead_cycles", 0, 0, U32));
      ot.steps = timingExpr(to, "steps", it.key());
      ot.macs = timingExpr(to, "macs", it.key());
      to.done();
    }
  }
  o.done();
}

} // namespace npucc::target
