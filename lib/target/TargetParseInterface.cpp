//===- TargetParseInterface.cpp - Target description: programming interface ===//
//
// Registers and fields, the commands (which fields hold which semantic
// parameter, possibly split over several fields; how a command is started:
// a doorbell or opcode field, or a job queue's commit), and the checks that
// need all of them: commands that would start identically, registers per
// command. Status bits: TargetParseStatus.cpp.
//
//===----------------------------------------------------------------------===//
#include "RegFileVocab.h"
#include "TargetParser.h"

#include "npucc/target/CTable.h"

#include "../../runtime/hal/npucc_params.h"

#include <algorithm>
#include <map>
#include <set>

namespace npucc::target {

using namespace json_reader;

namespace {

/// Parameters a pool command may bind beyond npucc_params.h's list: the four
/// conv requantizes with, for the requantizing average (all or none:
/// crossCheck; docs/target.md, "pool").
constexpr unsigned poolRequantKind(int id) {
  return id == NPUCC_P_IN_ZP || id == NPUCC_P_OUT_ZP || id == NPUCC_P_REQUANT_MULT ||
                 id == NPUCC_P_REQUANT_SHIFT
             ? NPUCC_KB_POOL
             : 0u;
}

const unsigned AllowedKinds[] = {
#define NPUCC_PARAM_ALLOWED(id, name, def, req, allowed, sgn)                                      \
  (allowed) | poolRequantKind(NPUCC_P_##id),
    NPUCC_PARAM_LIST(NPUCC_PARAM_ALLOWED)
#undef NPUCC_PARAM_ALLOWED
};
const unsigned RequiredKinds[] = {
#define NPUCC_PARAM_REQUIRED(id, name, def, req, allowed, sgn) req,
    NPUCC_PARAM_LIST(NPUCC_PARAM_REQUIRED)
#undef NPUCC_PARAM_REQUIRED
};

/// " (did you mean 'in_addr'?)" for a misspelt semantic parameter of a
/// command of kind `kind`, or "": the parameters of that kind first.
std::string suggestParam(const std::string &name, int kind) {
  std::set<std::string> mine, all(paramNames().begin(), paramNames().end());
  for (size_t id = 0; id < paramNames().size(); ++id)
    if (kind >= 0 && (AllowedKinds[id] & (1u << kind)))
      mine.insert(paramNames()[id]);
  std::string near = closest(name, mine);
  if (near.empty())
    near = closest(name, all);
  return near.empty() ? "" : " (did you mean '" + near + "'?)";
}

} // namespace

bool paramAllowedFor(int id, int kind) {
  return id >= 0 && size_t(id) < sizeof AllowedKinds / sizeof AllowedKinds[0] && kind >= 0 &&
         (AllowedKinds[id] & (1u << kind));
}

void TargetParser::parseBus(const Obj &o) {
  uint64_t bits = o.u64("access_bits", 32);
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    fail(o.at("access_bits"),
         "bus access width must be 8, 16, 32 or 64 bits, got " + std::to_string(bits));
  T.bus.accessBits = unsigned(bits);
  std::string order = o.str("order", "low_first");
  if (order != "low_first" && order != "high_first")
    fail(o.at("order"),
         "unknown access order " + shortQuote(order) + " (expected low_first or high_first)");
  T.bus.highFirst = order == "high_first";
  o.done();
}

/// A field's write-enable guard is another field of its register.
void TargetParser::resolveWriteEnables(Register &r, const std::string &path) const {
  for (size_t k = 0; k < r.fields.size(); ++k) {
    Field &f = r.fields[k];
    if (f.writeEnable.empty())
      continue;
    std::string p = path + "/" + std::to_string(k) + "/write_enable";
    for (size_t g = 0; g < r.fields.size(); ++g)
      if (r.fields[g].name == f.writeEnable)
        f.writeEnableField = int(g);
    if (f.writeEnableField < 0)
      fail(p, "write_enable field " + shortQuote(f.writeEnable) + " is not a field of register " +
                  shortQuote(r.name));
    if (f.writeEnableField == int(k))
      fail(p, "field " + shortQuote(f.name) + " cannot be its own write_enable field");
  }
}

namespace {

/// "access", "modified_write", "read_action", "reset" of a register or field (RegFileInfo).
RegFileInfo parseFileInfo(const Obj &o, unsigned width, bool withReset) {
  RegFileInfo f;
  auto oneOf = [&](const char *key, const regfile::Vocabulary &names) {
    std::string v = o.str(key, "");
    if (v.empty() && !o.has(key))
      return v;
    if (std::find(names.begin(), names.end(), v) != names.end())
      return v;
    fail(o.at(key), std::string("unknown ") + key + " " + shortQuote(v) + " (expected " +
                        regfile::joined(names) + ": CMSIS-SVD's terms)");
    return v;
  };
  f.access = oneOf("access", regfile::accessValues());
  f.modifiedWrite = oneOf("modified_write", regfile::modifiedWriteValues());
  f.readAction = oneOf("read_action", regfile::readActionValues());
  if (withReset && o.has("reset"))
    f.reset = o.range("reset", 0, width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1);
  return f;
}

} // namespace

/// A register's (or frame word's) "fields": bounds within its width, no
/// overlaps, C macro names unique across the description (`fieldNames`).
void TargetParser::parseFieldList(const Obj &o, Register &r,
                                  std::set<std::string> &fieldNames) const {
  std::string what = r.isWord() ? "word" : "register";
  const json *fs = o.opt("fields");
  if (!fs)
    return;
  if (!fs->is_array())
    fail(o.at("fields"), "expected an array, got " + typeName(*fs));
  for (size_t k = 0; k < fs->size(); ++k) {
    Obj fo((*fs)[k], o.at("fields") + "/" + std::to_string(k));
    Field f;
    f.name = fo.str("name");
    f.lsb = unsigned(fo.range("lsb", 0, 63));
    f.width = unsigned(fo.range("width", 1, 64));
    f.doc = fo.str("doc", "");
    if (f.lsb + f.width > r.width)
      fail(fo.path(), "field " + shortQuote(f.name) + " (bits " + bitsText(f.lsb, f.width) +
                          ") is wider than its " + std::to_string(r.width) + "-bit " + what + " " +
                          shortQuote(r.name));
    if (!r.isWord() && fo.has("nop"))
      f.nop = uint32_t(fo.range("nop", 0, f.width >= 32 ? 0xFFFFFFFFu : (1u << f.width) - 1));
    if (!r.isWord()) {
      f.writeEnable = fo.str("write_enable", "");
      f.file = parseFileInfo(fo, f.width, false); // SVD fields have no reset value
    }
    fo.done();
    if (!fieldNames.insert(macroPrefix(r.name) + "_" + macroPrefix(f.name)).second)
      fail(fo.at("name"), "field " + shortQuote(f.name) + " of " + what + " " + shortQuote(r.name) +
                              " gives the same C macro name as another field");
    for (const Field &g : r.fields) {
      if (g.name == f.name)
        fail(fo.at("name"), "duplicate field name " + shortQuote(f.name) + " in " + what + " " +
                                shortQuote(r.name));
      if (f.lsb < g.lsb + g.width && g.lsb < f.lsb + f.width)
        fail(fo.path(), "field " + shortQuote(f.name) + " (bits " + bitsText(f.lsb, f.width) +
                            ") overlaps field " + shortQuote(g.name) + " (bits " +
                            bitsText(g.lsb, g.width) + ") of " + what + " " + shortQuote(r.name));
    }
    r.fields.push_back(f);
  }
  resolveWriteEnables(r, o.at("fields"));
}

void TargetParser::parseRegisters(const json &regs, const std::string &path) {
  if (regs.size() > MaxRegisters)
    fail(path, std::to_string(regs.size()) + " registers; at most " + std::to_string(MaxRegisters) +
                   " are supported");
  std::set<std::string> cNames, fieldNames;
  size_t totalFields = 0;
  for (size_t i = 0; i < regs.size(); ++i) {
    Obj o(regs[i], path + "/" + std::to_string(i));
    Register r;
    r.name = o.str("name");
    uint64_t offset = o.u64("offset");
    if (offset > UINT32_MAX)
      fail(o.at("offset"), "offset " + hexText(offset) + " does not fit in 32 bits");
    r.offset = uint32_t(offset);
    uint64_t width = o.u64("width", 32);
    r.doc = o.str("doc", "");
    if (r.name.empty())
      fail(o.at("name"), "a register name must not be empty");
    if (width != 8 && width != 16 && width != 32 && width != 64)
      fail(o.at("width"),
           "register width must be 8, 16, 32 or 64 bits, got " + std::to_string(width));
    r.width = unsigned(width);
    if (r.offset % (r.width / 8))
      fail(o.at("offset"), "register " + shortQuote(r.name) + " at offset " + hexText(r.offset) +
                               " is not aligned to its width");
    if (!cNames.insert(macroPrefix(r.name)).second)
      fail(o.at("name"), "register name " + shortQuote(r.name) +
                             " gives the same C identifier as an earlier register");
    for (const Register &q : T.registers)
      if (r.offset < q.offset + q.width / 8 && q.offset < r.offset + r.width / 8)
        fail(o.path(), "register " + shortQuote(r.name) + " (offset " + hexText(r.offset) +
                           ") overlaps register " + shortQuote(q.name) + " (offset " +
                           hexText(q.offset) + ")");
    if (o.has("nop"))
      r.nop = uint32_t(o.range("nop", 0, r.width >= 32 ? 0xFFFFFFFFu : (1u << r.width) - 1));
    std::string write = o.str("write", "whole");
    if (write != "whole" && write != "rmw")
      fail(o.at("write"), "unknown write mode " + shortQuote(write) + " (expected whole or rmw)");
    r.rmw = write == "rmw";
    r.file = parseFileInfo(o, r.width, true);
    parseFieldList(o, r, fieldNames);
    totalFields += r.fields.size();
    if (totalFields > MaxRegisters)
      fail(o.at("fields"), "more than 65535 fields in all");
    o.done();
    T.registers.push_back(r);
  }
}

FieldRef TargetParser::fieldRef(const json &j, const std::string &path) const {
  std::string s = Obj::asString(j, path);
  FieldRef f;
  f.text = s;
  size_t dot = s.find('.');
  std::string reg = s.substr(0, dot);
  for (size_t i = 0; i < T.registers.size(); ++i)
    if (T.registers[i].name == reg)
      f.reg = int(i);
  if (f.reg < 0) {
    std::set<std::string> names;
    for (const Register &r : T.registers)
      names.insert(r.name);
    std::string near = closest(reg, names);
    fail(path, "unknown register " + shortQuote(reg) +
                   (near.empty() ? "" : " (did you mean '" + near + "'?)"));
  }
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
  if (f.field < 0) {
    std::set<std::string> names;
    for (const Field &x : r.fields)
      names.insert(x.name);
    std::string near = closest(field, names);
    fail(path, "unknown field " + shortQuote(field) + " in register " + shortQuote(reg) +
                   (near.empty() ? "" : " (did you mean '" + near + "'?)"));
  }
  return f;
}

std::string bitsText(unsigned lsb, unsigned width) {
  return std::to_string(lsb) + ".." + std::to_string(lsb + width - 1);
}

bool overlaps(const FieldRef &a, const FieldRef &b) {
  return a.reg == b.reg && a.lsb < b.lsb + b.width && b.lsb < a.lsb + a.width;
}

bool sameBits(const FieldRef &a, const FieldRef &b) {
  return a.reg == b.reg && a.lsb == b.lsb && a.width == b.width;
}

uint32_t nopOf(const TargetDesc &T, const FieldRef &f) {
  const Register &r = T.registers[size_t(f.reg)];
  std::optional<uint32_t> n = f.field >= 0 ? r.fields[size_t(f.field)].nop : r.nop;
  return n.value_or(0);
}

FieldValue TargetParser::fieldValue(const Obj &o, bool isDoorbell) const {
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
                            std::to_string(v.field.width) + "-bit field " +
                            shortQuote(v.field.text));
  if (isDoorbell && v.value == nopOf(T, v.field))
    fail(o.at("value"), "value " + std::to_string(v.value) + " is the no-op (idle) value of " +
                            shortQuote(v.field.text) + "; writing it starts nothing");
  o.done();
  return v;
}

ParamBinding TargetParser::parseBinding(const std::string &param, const json &j,
                                        const std::string &path) const {
  ParamBinding b;
  b.param = param;
  b.paramId = paramId(param);
  if (j.is_string()) {
    b.fields.push_back(fieldRef(j, path));
    return b;
  }
  Obj bo(j, path);
  if (bo.has("field") == bo.has("fields"))
    fail(path, "exactly one of 'field' or 'fields' is required");
  if (bo.has("field")) {
    b.fields.push_back(fieldRef(bo.req("field"), bo.at("field")));
  } else {
    const json &fs = bo.array("fields");
    if (fs.empty() || fs.size() > MaxBindingParts)
      fail(bo.at("fields"),
           "expected 1 to " + std::to_string(MaxBindingParts) + " fields, least significant first");
    for (size_t i = 0; i < fs.size(); ++i)
      b.fields.push_back(fieldRef(fs[i], bo.at("fields") + "/" + std::to_string(i)));
  }
  if (b.totalWidth() > 64)
    fail(path, "the fields of parameter '" + param + "' hold " + std::to_string(b.totalWidth()) +
                   " bits; at most 64");
  b.shift = unsigned(bo.range("shift", 0, 0, 31));
  b.minus = bo.has("minus") ? toI64(bo.req("minus"), bo.at("minus")) : (bo.opt("minus"), 0);
  bo.done();
  return b;
}

void TargetParser::parseQueue(const Obj &o) {
  T.queue.depth = unsigned(o.range("depth", 1, 255));
  T.queue.commit = fieldValue(Obj(o.req("commit"), o.at("commit")), true);
  o.done();
}

void TargetParser::parseCommands(const Obj &o) {
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
      fail(p, "unknown command kind " + shortQuote(kind) + " (expected one of " + list + ")");
    }
    Obj co(it.value(), p);
    std::string engine = co.str("engine", kind == "dma"     ? "dma"
                                          : kind == "fence" ? "fence"
                                                            : "compute");
    if (engine != "dma" && engine != "compute" && engine != "fence")
      fail(co.at("engine"),
           "unknown engine " + shortQuote(engine) + " (expected dma, compute or fence)");
    if ((engine == "fence") != (kind == "fence"))
      fail(co.at("engine"), "only the fence command runs on the fence engine");
    if ((engine == "dma") != (kind == "dma"))
      fail(co.at("engine"), "only the dma command runs on the dma engine");
    c.engine = engine == "dma" ? Engine::Dma : engine == "fence" ? Engine::Fence : Engine::Compute;
    c.doc = co.str("doc", "");
    parseDelivery(co, c);
    std::vector<FieldRef> used;
    auto claim = [&](const FieldRef &f, const std::string &path) {
      for (const FieldRef &u : used)
        if (overlaps(u, f))
          fail(path, "field " + shortQuote(f.text) + " overlaps " + shortQuote(u.text) +
                         ", already written by this command");
      used.push_back(f);
    };
    if (const json *ps = co.opt("params")) {
      Obj po(*ps, co.at("params"));
      for (auto pi = ps->begin(); pi != ps->end(); ++pi) {
        std::string pp = po.at(pi.key());
        po.opt(pi.key());
        int id = paramId(pi.key());
        if (id < 0)
          fail(pp, "unknown semantic parameter " + shortQuote(pi.key()) +
                       suggestParam(pi.key(), c.kindId));
        if (!(AllowedKinds[id] & (1u << c.kindId)))
          fail(pp, "parameter '" + pi.key() + "' does not apply to command '" + kind + "'");
        ParamBinding b = parseBinding(pi.key(), pi.value(), pp);
        for (const FieldRef &f : b.fields)
          claim(f, pp);
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
          fail(fp, "unknown semantic parameter " + shortQuote(f.param) +
                       suggestParam(f.param, c.kindId));
        if (!(AllowedKinds[f.paramId] & (1u << c.kindId)))
          fail(fp, "parameter '" + f.param + "' does not apply to command '" + kind + "'");
        if (c.binding(f.param))
          fail(fp, "parameter '" + f.param + "' is both fixed and bound to a field");
        f.value = toI64(fi.value(), fp);
        c.fixed.push_back(f);
      }
    }
    parseFields(co, c, claim);
    if (const json *sel = co.opt("select")) {
      if (!sel->is_array())
        fail(co.at("select"), "expected an array, got " + typeName(*sel));
      for (size_t i = 0; i < sel->size(); ++i) {
        std::string sp = co.at("select") + "/" + std::to_string(i);
        FieldValue v = fieldValue(Obj((*sel)[i], sp), false);
        claim(v.field, sp);
        c.select.push_back(v);
      }
    }
    if (c.frame >= 0) {
      // Started by the frame's last word: no doorbell (the frame's checks
      // are in TargetParseFrames.cpp).
      if (co.has("doorbell"))
        fail(co.at("doorbell"), "command '" + kind +
                                    "' is delivered as frame words and started by the last one; "
                                    "remove 'doorbell'");
    } else if (T.queue.depth) {
      if (co.has("doorbell"))
        fail(co.at("doorbell"), "with a job queue, commands are started by the queue's commit "
                                "(/job_queue/commit); remove 'doorbell'");
      c.doorbell = T.queue.commit;
      claim(c.doorbell.field, "/job_queue/commit");
    } else {
      c.doorbell = fieldValue(Obj(co.req("doorbell"), co.at("doorbell")), true);
      claim(c.doorbell.field, co.at("doorbell"));
    }
    c.doorbellNop = c.doorbell.field.valid() ? nopOf(T, c.doorbell.field) : 0;
    co.done();
    checkRecoverable(c, p);
    std::set<int> regs;
    for (const FieldRef &f : used)
      regs.insert(f.reg);
    if (regs.size() > MaxRegistersPerCommand)
      fail(p, "command '" + kind + "' writes " + std::to_string(regs.size()) +
                  " registers; the runtime supports at most " +
                  std::to_string(MaxRegistersPerCommand) + " per command");
    for (size_t id = 0; id < paramNames().size(); ++id)
      if ((RequiredKinds[id] & (1u << c.kindId)) && !c.binding(paramNames()[id]) &&
          !c.fixedParam(paramNames()[id]) && !c.decodingCases(int(id)))
        fail(co.at("params"),
             "command '" + kind + "' must bind parameter '" + paramNames()[id] + "'");
    T.commands.push_back(c);
  }
  if (!T.command("dma"))
    fail(o.path(), "missing required command 'dma'");
}

void TargetParser::checkAmbiguousCommands() const {
  for (size_t a = 0; a < T.commands.size(); ++a)
    for (size_t b = 0; b < a; ++b) {
      const CommandDesc &x = T.commands[a], &y = T.commands[b];
      if (x.frame >= 0 || y.frame >= 0)
        continue; // checkFrames
      if (!overlaps(x.doorbell.field, y.doorbell.field) || x.doorbell.value != y.doorbell.value)
        continue;
      bool distinct = false;
      for (const FieldValue &sx : x.select)
        for (const FieldValue &sy : y.select)
          distinct |= sameBits(sx.field, sy.field) && sx.value != sy.value;
      if (!distinct)
        fail("/commands/" + x.kind, "command '" + x.kind + "' starts exactly like command '" +
                                        y.kind + "' (/commands/" + y.kind +
                                        "): " + shortQuote(x.doorbell.field.text) + " = " +
                                        std::to_string(x.doorbell.value) +
                                        " and no select field holds a different value for the two");
    }
}

void TargetParser::crossCheck() {
  T.buildParamTable();
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
    const OpLimits *l = T.operation(c.kind);
    if (!l)
      continue;
    if (l->perChannelRequant && !c.binding("rq_addr"))
      fail(p + "/params", "per-channel requant needs parameter 'rq_addr' bound");
    // A fixed multiplier is a shift-only requantizer (the quantizer then
    // makes every ratio a power of two: target::quantRules).
    if (l->perTensorRequant && ((!c.binding("requant_mult") && !c.fixedParam("requant_mult")) ||
                                !c.binding("requant_shift")))
      fail(p + "/params", "per-tensor requant needs parameter 'requant_mult' bound (or fixed: "
                          "a shift-only requantizer) and 'requant_shift' bound");
    if (c.kindId == NPUCC_KIND_POOL) {
      // The requantizing average: all four parameters or none.
      std::string miss;
      int have = 0;
      for (const char *q : {"in_zp", "out_zp", "requant_mult", "requant_shift"}) {
        if (c.binding(q) || c.fixedParam(q))
          ++have;
        else
          miss += std::string(miss.empty() ? "'" : ", '") + q + "'";
      }
      if (have && !miss.empty())
        fail(p + "/params", "a requantizing pool binds 'in_zp', 'out_zp', 'requant_mult' and "
                            "'requant_shift' together; missing " +
                                miss);
    }
    // lut256 reads its table at act_addr (checked here, where the commands are known).
    if (l->stage(NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_LUT256 && !c.binding("act_addr"))
      fail("/compute/operations/" + c.kind + "/arithmetic/activation",
           "activation stage lut256 reads its 256-byte table at parameter 'act_addr': bind it "
           "in /commands/" +
               c.kind + "/params");
    if (l->stage(NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_PWL && !c.binding("act_addr"))
      fail("/compute/operations/" + c.kind + "/arithmetic/activation",
           "activation stage pwl reads its 144-byte segment table at parameter 'act_addr': bind "
           "it in /commands/" +
               c.kind + "/params");
    // correction_terms: its three terms' factors are command parameters (the shifts may
    // stay 0, their default).
    if (l->stage(NPUCC_SLOT_CORRECTION) == NPUCC_STAGE_CORR_TERMS)
      for (const char *q : {"corr_x", "corr_w", "corr_add"})
        if (!c.binding(q) && !c.fixedParam(q))
          fail("/compute/operations/" + c.kind + "/arithmetic/correction",
               std::string("correction stage correction_terms adds its zero point terms with "
                           "parameter '") +
                   q + "': bind it in /commands/" + c.kind + "/params");
    // max pooling: the window size is a command parameter.
    if (l->stage(NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_MAX && !c.binding("pool_k"))
      fail("/compute/operations/" + c.kind + "/arithmetic/pool",
           "pool stage max takes its window size from parameter 'pool_k': bind it in /commands/" +
               c.kind + "/params");
    // select: the window and every kept pixel the description offers are
    // command parameters (an offset row or column other than 0 needs its
    // parameter bound; 0 is the default).
    if (l->stage(NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_SELECT) {
      bool offY = false, offX = false;
      for (const auto &o : l->poolOffsets)
        offY = offY || o.first, offX = offX || o.second;
      const char *miss = !c.binding("pool_k")               ? "pool_k"
                         : offY && !c.binding("pool_off_y") ? "pool_off_y"
                         : offX && !c.binding("pool_off_x") ? "pool_off_x"
                                                            : nullptr;
      if (miss)
        fail("/compute/operations/" + c.kind + "/arithmetic/pool",
             std::string("pool stage select takes its window and kept pixel from parameters "
                         "'pool_k', 'pool_off_y', 'pool_off_x': bind '") +
                 miss + "' in /commands/" + c.kind + "/params");
    }
    if (l->fusedClamp && (!c.binding("act_min") || !c.binding("act_max")))
      fail(p + "/params", "a fused clamp needs parameters 'act_min' and 'act_max' bound");
    if (c.kind == "depthwise" && (l->depthMultipliers.size() != 1 || l->depthMultipliers[0] != 1) &&
        !c.binding("depth_mult"))
      fail(p + "/params", "channel multipliers other than 1 need parameter 'depth_mult' bound");
  }
  checkFrames();
  checkCommandBuffer();
  checkStatusRegisters();
  checkAmbiguousCommands();
  checkFieldBindings();
  checkCapabilitiesEncodable();
  foldAddressUnits();
  deriveDmaLimits();
  checkDmaReach();
}

} // namespace npucc::target
