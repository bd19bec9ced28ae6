//===- TargetParseStatus.cpp - Target description: status bits ------------===//
//
// The status bits that report completion and errors (polarity, sticky DONE,
// clearing by writing 1, by reading, or through a field of a clear
// register; start bits that read as busy), and the checks across them and
// the commands: overlapping status fields, start bits that are their
// engine's doorbell, clear fields no command writes, and status fields in
// registers that commands write.
//
//===----------------------------------------------------------------------===//
#include "TargetParser.h"

#include <string>
#include <vector>

namespace npucc::target {

using namespace json_reader;

StatusBit TargetParser::statusBit(const json &j, const std::string &path,
                                  const std::string &role) const {
  StatusBit b;
  if (j.is_string()) {
    b.field = fieldRef(j, path);
    return b;
  }
  Obj o(j, path);
  b.field = fieldRef(o.req("field"), o.at("field"));
  if (role == "free_slots") {
    o.done();
    return b;
  }
  b.activeLow = o.boolean("active_low", false);
  // "clear": a mode, or {"field"|"register", "value"}: a write into another
  // register's field clears the bit.
  std::string clear = "none";
  if (const json *cj = o.opt("clear"); cj && cj->is_object()) {
    Obj co(*cj, o.at("clear"));
    b.clear = fieldValue(co, false);
    if (b.clear.value == 0)
      fail(co.at("value"), "a clear value must not be 0 (every write of the register that "
                           "leaves the field alone writes 0)");
    clear = "field";
  } else if (cj) {
    clear = o.str("clear", "none");
    if (clear != "none" && clear != "write1" && clear != "read")
      fail(o.at("clear"), "unknown clear mode " + shortQuote(clear) +
                              " (expected none, write1, read or {\"field\", \"value\"})");
  }
  b.clearOnWrite1 = clear == "write1";
  b.clearOnRead = clear == "read";
  if (role == "busy")
    b.startBit = o.boolean("start_bit", false);
  if (b.startBit && b.activeLow)
    fail(o.at("start_bit"), "a start bit reads as its doorbell value while busy; it cannot be "
                            "active-low");
  if (role == "done") {
    b.sticky = o.boolean("sticky", false);
    b.requireClear = o.boolean("require_clear", false);
    if (b.sticky && clear == "none")
      fail(o.at("sticky"),
           "a sticky done bit needs a 'clear' mode (write1, read or {\"field\", \"value\"})");
    if (!b.sticky && clear != "none")
      fail(o.at("clear"), "only a sticky done bit can be cleared");
    if (b.requireClear && !b.sticky)
      fail(o.at("require_clear"), "require_clear needs a sticky done bit");
  } else if (role == "busy" && clear != "none") {
    fail(o.at("clear"), "a busy bit cannot be cleared");
  }
  if ((b.clearOnWrite1 || b.activeLow) && b.field.width != 1 && role != "error")
    fail(o.path(), "'" + role + "' must be a 1-bit field");
  if (role == "error" && b.activeLow && b.field.width != 1)
    fail(o.at("active_low"), "an error code field cannot be active-low");
  o.done();
  return b;
}

/// A status field a poll reads must lie within one bus access of its
/// register, so that one access reads it atomically.
void TargetParser::checkOneAccess(const FieldRef &f, const std::string &path) const {
  unsigned a = T.bus.accessBits;
  const Register &r = T.registers[size_t(f.reg)];
  if (r.width <= a)
    return;
  unsigned first = f.lsb / a, last = (f.lsb + f.width - 1) / a;
  if (first == last)
    return;
  static const char *const Count[] = {"",     "",    "two",   "three", "four",
                                      "five", "six", "seven", "eight"};
  fail(path, "status field " + shortQuote(f.text) + " (bits " + bitsText(f.lsb, f.width) +
                 ") spans " + Count[last - first + 1] + " " + std::to_string(a) +
                 "-bit accesses of register " + shortQuote(r.name) +
                 "; one poll must read it in one access");
}

void TargetParser::parseStatus(const Obj &o) {
  int onlyReg = -1;
  if (o.has("register")) {
    FieldRef r = fieldRef(o.req("register"), o.at("register"));
    if (r.field >= 0)
      fail(o.at("register"), "'register' must name a register, not a field");
    onlyReg = r.reg;
  }
  static const char *const Names[] = {"dma", "compute", "fence"};
  for (int e = 0; e < 3; ++e) {
    std::string ep = o.at(Names[e]);
    if (!o.has(Names[e])) {
      o.opt(Names[e]);
      if (e < 2 || T.completion == "fence")
        fail(o.path(), "missing required field '" + std::string(Names[e]) + "'");
      continue;
    }
    Obj eo(o.req(Names[e]), ep);
    EngineStatus &es = T.engines[e];
    for (const char *role : {"busy", "done", "error", "free_slots"}) {
      const json *j = eo.opt(role);
      if (!j)
        continue;
      StatusBit b = statusBit(*j, eo.at(role), role);
      checkOneAccess(b.field, eo.at(role));
      if (b.clearOnRead && T.registers[size_t(b.field.reg)].rmw)
        fail(eo.at(role) + "/clear",
             "a bit cleared by reading cannot be in read-modify-write register " +
                 shortQuote(T.registers[size_t(b.field.reg)].name) +
                 " (the read of every command that writes it would clear it)");
      if (onlyReg >= 0 && b.field.reg != onlyReg)
        fail(eo.at(role), "status bit " + shortQuote(b.field.text) +
                              " is not in the status register " +
                              shortQuote(T.registers[size_t(onlyReg)].name));
      std::string r = role;
      (r == "busy" ? es.busy : r == "done" ? es.done : r == "error" ? es.error : es.freeSlots) = b;
    }
    if (es.freeSlots.valid() && !T.queue.depth)
      fail(eo.at("free_slots"), "free_slots needs a job queue (/job_queue)");
    if (T.queue.depth && e < 2 && !es.freeSlots.valid())
      fail(ep, "with a job queue, the " + std::string(Names[e]) + " engine needs 'free_slots'");
    bool observed = T.completion == "poll" ? e < 2 : e == 2;
    if (observed && !es.busy.valid() && !es.done.valid())
      fail(ep, "the " + std::string(Names[e]) +
                   " engine needs a 'busy' or a 'done' bit to observe completion");
    eo.done();
  }
  o.done();
}

void TargetParser::checkStatusRegisters() const {
  struct Bit {
    const StatusBit *b;
    std::string path;
    int engine;
  };
  std::vector<Bit> bits;
  static const char *const Names[] = {"dma", "compute", "fence"};
  for (int e = 0; e < 3; ++e) {
    const EngineStatus &es = T.engines[e];
    std::string p = std::string("/status/") + Names[e] + "/";
    bits.push_back({&es.busy, p + "busy", e});
    bits.push_back({&es.done, p + "done", e});
    bits.push_back({&es.error, p + "error", e});
    bits.push_back({&es.freeSlots, p + "free_slots", e});
  }
  for (size_t i = 0; i < bits.size(); ++i) {
    if (!bits[i].b->valid())
      continue;
    for (size_t k = 0; k < i; ++k) {
      if (!bits[k].b->valid() || !overlaps(bits[i].b->field, bits[k].b->field))
        continue;
      bool same = sameBits(bits[i].b->field, bits[k].b->field);
      bool sharedError = bits[i].path.find("/error") != std::string::npos &&
                         bits[k].path.find("/error") != std::string::npos && same;
      // Engines started through one doorbell share its start bit.
      bool sharedStart = bits[i].b->startBit && bits[k].b->startBit && same;
      if (!sharedError && !sharedStart)
        fail(bits[i].path, "status field " + shortQuote(bits[i].b->field.text) + " overlaps " +
                               shortQuote(bits[k].b->field.text) + " (" + bits[k].path + ")");
    }
  }
  checkStartBits();
  checkClearFields();
  // A status field in a register a command writes is allowed only where it
  // is that command's start bit. A status bit in a register that starts or
  // selects a command (a doorbell, an opcode, the job queue's commit) is the
  // misplaced one: say so at the status bit. Checked before the bindings,
  // which name the command instead.
  // A status field a command does not disturb: its own start bit, a field
  // whose write enable the command leaves at 0, or any field it does not
  // write in a read-modify-write register.
  auto conflict = [&](const CommandDesc &c, int reg) -> const Bit * {
    const StatusBit &own = T.engines[int(c.engine)].busy;
    std::vector<FieldRef> written = writtenFields(c);
    for (const Bit &b : bits) {
      const FieldRef &f = b.b->field;
      if (!b.b->valid() || f.reg != reg)
        continue;
      if (b.b->startBit && own.startBit && sameBits(f, own.field) && sameBits(f, c.doorbell.field))
        continue;
      const Register &r = T.registers[size_t(reg)];
      bool touched = false, guardSet = false;
      int g = f.field >= 0 ? r.fields[size_t(f.field)].writeEnableField : -1;
      for (const FieldRef &w : written) {
        touched |= overlaps(w, f);
        if (g >= 0 && w.reg == reg)
          guardSet |= (w.field >= 0 && r.fields[size_t(w.field)].writeEnableField == g) ||
                      overlaps(w, fieldOf(reg, g));
      }
      if (g >= 0 && !guardSet)
        continue;
      if (r.rmw && !touched)
        continue;
      return &b;
    }
    return nullptr;
  };
  auto wayOut = [&](int reg) {
    return "; make it the doorbell's start_bit, guard it with a write_enable field, or mark " +
           shortQuote(T.registers[size_t(reg)].name) + " \"write\": \"rmw\"";
  };
  for (const CommandDesc &c : T.commands) {
    std::vector<std::pair<FieldRef, std::string>> control;
    for (const FieldValue &s : c.select)
      control.push_back({s.field, "/commands/" + c.kind + "/select"});
    if (c.doorbell.field.valid())
      control.push_back({c.doorbell.field, T.queue.depth ? std::string("/job_queue/commit")
                                                         : "/commands/" + c.kind + "/doorbell"});
    for (const auto &f : control)
      if (const Bit *b = conflict(c, f.first.reg))
        fail(b->path, "status bit " + shortQuote(b->b->field.text) + " is in register " +
                          shortQuote(T.registers[size_t(f.first.reg)].name) + ", which command '" +
                          c.kind + "' writes (" + f.second + ")" + wayOut(f.first.reg));
  }
  for (const CommandDesc &c : T.commands) {
    std::string p = "/commands/" + c.kind;
    for (const ParamBinding &pb : c.params)
      for (const FieldRef &f : pb.fields)
        if (const Bit *b = conflict(c, f.reg))
          fail(p + "/params/" + pb.param,
               "register " + shortQuote(T.registers[size_t(f.reg)].name) + " holds status bit " +
                   shortQuote(b->b->field.text) + " (" + b->path + "); command '" + c.kind +
                   "' cannot write it" + wayOut(f.reg));
  }
}

/// Every field a command writes: its bindings (every part), select fields
/// and doorbell.
std::vector<FieldRef> TargetParser::writtenFields(const CommandDesc &c) const {
  std::vector<FieldRef> w;
  for (const ParamBinding &pb : c.params)
    w.insert(w.end(), pb.fields.begin(), pb.fields.end());
  for (const FieldValue &s : c.select)
    w.push_back(s.field);
  for (const FieldBinding &b : c.fields)
    w.push_back(b.field);
  if (c.doorbell.field.valid())
    w.push_back(c.doorbell.field);
  if (c.delivery.reg >= 0) { // a FIFO register: every write pushes a word
    FieldRef f;
    f.reg = c.delivery.reg;
    f.width = T.registers[size_t(f.reg)].width;
    f.text = T.registers[size_t(f.reg)].name;
    w.push_back(f);
  }
  return w;
}

/// Field `field` of register `reg` as a reference.
FieldRef TargetParser::fieldOf(int reg, int field) const {
  const Register &r = T.registers[size_t(reg)];
  FieldRef f;
  f.reg = reg;
  f.field = field;
  f.lsb = r.fields[size_t(field)].lsb;
  f.width = r.fields[size_t(field)].width;
  f.text = r.name + "." + r.fields[size_t(field)].name;
  return f;
}

/// A start bit is the doorbell of every command of its engine and reads 0
/// when idle.
void TargetParser::checkStartBits() const {
  static const char *const Names[] = {"dma", "compute", "fence"};
  for (int e = 0; e < 3; ++e) {
    const StatusBit &b = T.engines[e].busy;
    if (!b.startBit)
      continue;
    std::string p = std::string("/status/") + Names[e] + "/busy";
    if (T.queue.depth)
      fail(p + "/start_bit", "a start bit cannot be used with a job queue (/job_queue)");
    if (nopOf(T, b.field) != 0)
      fail(p + "/start_bit", "start bit " + shortQuote(b.field.text) +
                                 " must idle at 0 (its nop is " +
                                 std::to_string(nopOf(T, b.field)) + ")");
    for (const CommandDesc &c : T.commands)
      if (int(c.engine) == e && c.frame >= 0)
        fail(p + "/start_bit", "command '" + c.kind +
                                   "' is delivered as frame words, without a doorbell; "
                                   "a start bit is the doorbell of every command of its engine");
      else if (int(c.engine) == e && !sameBits(c.doorbell.field, b.field))
        fail(p + "/start_bit", "start bit " + shortQuote(b.field.text) +
                                   " is not the doorbell of command '" + c.kind + "' (" +
                                   shortQuote(c.doorbell.field.text) + ", /commands/" + c.kind +
                                   "/doorbell)");
  }
}

/// A clear field lies outside the status registers, and no command writes it.
void TargetParser::checkClearFields() const {
  static const char *const Names[] = {"dma", "compute", "fence"};
  for (int e = 0; e < 3; ++e)
    for (const char *role : {"done", "error"}) {
      const StatusBit &b = std::string(role) == "done" ? T.engines[e].done : T.engines[e].error;
      if (!b.clear.field.valid())
        continue;
      std::string p = std::string("/status/") + Names[e] + "/" + role + "/clear";
      const FieldRef &f = b.clear.field;
      if (T.isStatusRegister(f.reg))
        fail(p, "clear field " + shortQuote(f.text) +
                    " is in a status register; use \"clear\": "
                    "\"write1\" for a bit cleared through its own register");
      for (const CommandDesc &c : T.commands)
        for (const FieldRef &w : writtenFields(c))
          if (w.reg == f.reg)
            fail(p, "clear field " + shortQuote(f.text) + " is in register " +
                        shortQuote(T.registers[size_t(f.reg)].name) + ", which command '" + c.kind +
                        "' writes; a clear register must be written only to clear");
    }
}

/// "init": [{"field"|"register", "value"}]: written in order by npucc_hal_init.
void TargetParser::parseInit(const json &j, const std::string &path) {
  if (!j.is_array())
    fail(path, "expected an array, got " + typeName(j));
  for (size_t i = 0; i < j.size(); ++i) {
    std::string p = path + "/" + std::to_string(i);
    FieldValue v = fieldValue(Obj(j[i], p), false);
    // Status fields are set by the NPU; a register holding only status
    // fields (no command writes it) is read-only but for clearing.
    bool statusField = false;
    for (const EngineStatus &e : T.engines)
      for (const StatusBit *b : {&e.busy, &e.done, &e.error, &e.freeSlots})
        statusField |= b->valid() && overlaps(b->field, v.field);
    if (statusField || (T.isStatusRegister(v.field.reg) && !T.isCommandRegister(v.field.reg)))
      fail(p, "init writes " + shortQuote(v.field.text) + " in status register " +
                  shortQuote(T.registers[size_t(v.field.reg)].name) +
                  "; status bits are set by the NPU");
    T.init.push_back(v);
  }
}

} // namespace npucc::target
