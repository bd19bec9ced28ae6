//===- TargetParseFrames.cpp - Target description: frames and delivery ----===//
//
// "frames": ordered command words laid out like registers but without an
// address (appended to TargetDesc::registers after the memory-mapped ones,
// Register::frame set), and a command's "frame" + "delivery": how its words
// reach the NPU ("fifo": every word, in frame order, written into one
// register; "insn": pairs of words as custom CPU instructions; the last
// word starts the command; "buffer": TargetParseBuffer.cpp). The checks across them:
// a frame command writes only its frame's words, nothing else writes them,
// no status bit, clear field or init write lives in a word or a FIFO
// register, commands sharing a FIFO share its frame and are told apart by
// select fields.
//
//===----------------------------------------------------------------------===//
#include "TargetParser.h"

#include "npucc/target/CTable.h"

#include "../../runtime/hal/npucc_desc.h"

#include <set>

namespace npucc::target {

using namespace json_reader;

namespace {

/// The delivery modes of npucc_desc.h (NPUCC_DELIVERY_LIST), in id order.
const char *const DeliveryNames[] = {
#define NPUCC_DELIVERY_NAME(id, name) name,
    NPUCC_DELIVERY_LIST(NPUCC_DELIVERY_NAME)
#undef NPUCC_DELIVERY_NAME
};

} // namespace

void TargetParser::parseFrames(const json &frames, const std::string &path) {
  if (!frames.is_array())
    fail(path, "expected an array, got " + typeName(frames));
  std::set<std::string> cNames, fieldNames;
  size_t totalFields = 0;
  for (const Register &r : T.registers) {
    cNames.insert(macroPrefix(r.name));
    for (const Field &f : r.fields)
      fieldNames.insert(macroPrefix(r.name) + "_" + macroPrefix(f.name));
    totalFields += r.fields.size();
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    Obj o(frames[i], path + "/" + std::to_string(i));
    Frame fr;
    fr.name = o.str("name");
    if (fr.name.empty())
      fail(o.at("name"), "a frame name must not be empty");
    for (const Frame &g : T.frames)
      if (g.name == fr.name)
        fail(o.at("name"), "duplicate frame name " + shortQuote(fr.name));
    uint64_t bits = o.u64("word_bits", 32);
    if (bits != 32 && bits != 64)
      fail(o.at("word_bits"),
           "frame word width must be 32 or 64 bits, got " + std::to_string(bits));
    fr.wordBits = unsigned(bits);
    const json &words = o.array("words");
    if (words.empty() || words.size() > MaxRegistersPerCommand)
      fail(o.at("words"), "a frame has 1 to " + std::to_string(MaxRegistersPerCommand) +
                              " words, got " + std::to_string(words.size()));
    fr.firstReg = int(T.registers.size());
    fr.numWords = unsigned(words.size());
    for (size_t k = 0; k < words.size(); ++k) {
      Obj wo(words[k], o.at("words") + "/" + std::to_string(k));
      Register w;
      w.name = wo.str("name");
      w.doc = wo.str("doc", "");
      w.width = fr.wordBits;
      w.offset = uint32_t(k);
      w.frame = int(T.frames.size());
      if (w.name.empty())
        fail(wo.at("name"), "a word name must not be empty");
      for (const Register &r : T.registers)
        if (r.name == w.name)
          fail(wo.at("name"), "word name " + shortQuote(w.name) + " is already the name of " +
                                  (r.isWord() ? "a word" : "a register") +
                                  "; fields are named WORD.field, so names must be unique");
      if (!cNames.insert(macroPrefix(w.name)).second)
        fail(wo.at("name"), "word name " + shortQuote(w.name) +
                                " gives the same C identifier as a register or an earlier word");
      parseFieldList(wo, w, fieldNames);
      totalFields += w.fields.size();
      if (totalFields > MaxRegisters)
        fail(wo.at("fields"), "more than 65535 fields in all");
      wo.done();
      T.registers.push_back(w);
      if (T.registers.size() > MaxRegisters)
        fail(wo.path(), "more than " + std::to_string(MaxRegisters) + " registers and words");
    }
    o.done();
    T.frames.push_back(fr);
  }
}

/// A command's "frame" and "delivery" (default: mmio, no frame).
void TargetParser::parseDelivery(const Obj &co, CommandDesc &c) {
  if (co.has("frame")) {
    std::string name = co.str("frame");
    std::set<std::string> names;
    for (size_t i = 0; i < T.frames.size(); ++i) {
      names.insert(T.frames[i].name);
      if (T.frames[i].name == name)
        c.frame = int(i);
    }
    if (c.frame < 0) {
      std::string near = closest(name, names);
      fail(co.at("frame"),
           "unknown frame " + shortQuote(name) +
               (near.empty() ? " (no \"frames\" declares it)" : " (did you mean '" + near + "'?)"));
    }
    if (T.queue.depth)
      fail(co.at("frame"), "frames cannot be combined with a job queue (/job_queue)");
  }
  const json *dj = co.opt("delivery");
  if (!dj) {
    if (c.frame >= 0)
      fail(co.at("frame"), "command '" + c.kind +
                               "' has a frame but no \"delivery\" saying how "
                               "its words reach the NPU (e.g. {\"mode\": \"fifo\", \"register\": "
                               "..., \"depth_words\": ...})");
    return;
  }
  Obj d(*dj, co.at("delivery"));
  std::string mode = d.str("mode", "mmio");
  int id = -1;
  std::string list;
  for (size_t i = 0; i < sizeof DeliveryNames / sizeof DeliveryNames[0]; ++i) {
    list += std::string(i ? ", " : "") + DeliveryNames[i];
    if (mode == DeliveryNames[i])
      id = int(i);
  }
  if (id < 0)
    fail(d.at("mode"), "unknown delivery mode " + shortQuote(mode) + " (expected " + list + ")");
  c.delivery.mode = DeliveryMode(id);
  if (c.delivery.mode == DeliveryMode::Mmio) {
    if (c.frame >= 0)
      fail(d.at("mode"), "a frame's words have no addresses; deliver them through a FIFO "
                         "register (\"mode\": \"fifo\")");
    d.done();
    return;
  }
  if (c.frame < 0)
    fail(d.at("mode"), "delivery mode " + shortQuote(mode) +
                           " sends the words of a frame; "
                           "name one with \"frame\"");
  const Frame &fr = T.frames[size_t(c.frame)];
  if (c.delivery.mode == DeliveryMode::Buffer) {
    parseBufferDelivery(d, c); // TargetParseBuffer.cpp
    return;
  }
  if (c.delivery.mode == DeliveryMode::Insn) {
    static const char *const Opcodes[] = {"custom0", "custom1", "custom2", "custom3"};
    static const unsigned Values[] = {0x0B, 0x2B, 0x5B, 0x7B};
    std::string op = d.str("opcode");
    bool found = false;
    for (int i = 0; i < 4; ++i)
      if (op == Opcodes[i]) {
        c.delivery.opcode = Values[i];
        found = true;
      }
    if (!found)
      fail(d.at("opcode"),
           "unknown opcode " + shortQuote(op) + " (expected custom0, custom1, custom2 or custom3)");
    c.delivery.funct3 = unsigned(d.range("funct3", 0, 7));
    c.delivery.funct7 = unsigned(d.range("funct7", 0, 127));
    d.done();
    return;
  }
  // fifo
  FieldRef f = fieldRef(d.req("register"), d.at("register"));
  const Register &r = T.registers[size_t(f.reg)];
  if (f.field >= 0)
    fail(d.at("register"), "'register' must name a register, not a field");
  if (r.isWord())
    fail(d.at("register"), shortQuote(r.name) + " is a frame word, not a register");
  if (r.width != fr.wordBits)
    fail(d.at("register"), "FIFO register " + shortQuote(r.name) + " is " +
                               std::to_string(r.width) + " bits wide; the words of frame " +
                               shortQuote(fr.name) + " are " + std::to_string(fr.wordBits));
  if (r.rmw)
    fail(d.at("register"), "FIFO register " + shortQuote(r.name) +
                               " cannot be written read-modify-write: every write pushes a word");
  c.delivery.reg = f.reg;
  c.delivery.depthWords = unsigned(d.range("depth_words", 1, 65535));
  if (c.delivery.depthWords < fr.numWords)
    fail(d.at("depth_words"), "a FIFO of " + std::to_string(c.delivery.depthWords) +
                                  " words cannot hold frame " + shortQuote(fr.name) + " (" +
                                  std::to_string(fr.numWords) + " words)");
  d.done();
}

void TargetParser::checkFrames() const {
  auto isWord = [&](const FieldRef &f) { return f.valid() && T.registers[size_t(f.reg)].isWord(); };
  auto frameOf = [&](const FieldRef &f) { return T.registers[size_t(f.reg)].frame; };
  std::set<int> fifoRegs;
  for (const CommandDesc &c : T.commands)
    if (c.delivery.mode == DeliveryMode::Fifo)
      fifoRegs.insert(c.delivery.reg);
  for (const CommandDesc &c : T.commands) {
    std::string p = "/commands/" + c.kind;
    std::vector<std::pair<FieldRef, std::string>> written;
    for (const ParamBinding &b : c.params)
      for (const FieldRef &f : b.fields)
        written.push_back({f, p + "/params/" + b.param});
    for (const FieldBinding &b : c.fields)
      written.push_back({b.field, b.path});
    for (size_t i = 0; i < c.select.size(); ++i)
      written.push_back({c.select[i].field, p + "/select/" + std::to_string(i)});
    for (const auto &w : written) {
      if (c.frame >= 0 && (!isWord(w.first) || frameOf(w.first) != c.frame))
        fail(w.second, "field " + shortQuote(w.first.text) + " is not a word of frame " +
                           shortQuote(T.frames[size_t(c.frame)].name) +
                           "; a command delivered as a frame writes only its words");
      if (c.frame < 0 && isWord(w.first))
        fail(w.second, "field " + shortQuote(w.first.text) + " is a word of frame " +
                           shortQuote(T.frames[size_t(frameOf(w.first))].name) +
                           "; only a command with \"frame\": " +
                           shortQuote(T.frames[size_t(frameOf(w.first))].name) + " writes it");
      if (fifoRegs.count(w.first.reg))
        fail(w.second, "register " + shortQuote(T.registers[size_t(w.first.reg)].name) +
                           " is a FIFO: every write pushes a command word");
    }
    if (c.doorbell.field.valid() && fifoRegs.count(c.doorbell.field.reg))
      fail(p + "/doorbell", "register " +
                                shortQuote(T.registers[size_t(c.doorbell.field.reg)].name) +
                                " is a FIFO: every write pushes a command word");
  }
  // Commands pushing into one FIFO share its frame; after the last word the
  // NPU (and the simulator) tells them apart by their select fields.
  for (size_t a = 0; a < T.commands.size(); ++a)
    for (size_t b = 0; b < a; ++b) {
      const CommandDesc &x = T.commands[a], &y = T.commands[b];
      if (x.delivery.mode != DeliveryMode::Fifo || y.delivery.mode != DeliveryMode::Fifo ||
          x.delivery.reg != y.delivery.reg)
        continue;
      std::string reg = shortQuote(T.registers[size_t(x.delivery.reg)].name);
      if (x.frame != y.frame)
        fail("/commands/" + x.kind + "/frame",
             "commands '" + y.kind + "' and '" + x.kind + "' push into FIFO " + reg +
                 " but have different frames; one FIFO carries one frame");
      if (x.delivery.depthWords != y.delivery.depthWords)
        fail("/commands/" + x.kind + "/delivery/depth_words",
             "FIFO " + reg + " holds " + std::to_string(y.delivery.depthWords) +
                 " words for command '" + y.kind + "' but " +
                 std::to_string(x.delivery.depthWords) + " for '" + x.kind + "'");
      bool distinct = false;
      for (const FieldValue &sx : x.select)
        for (const FieldValue &sy : y.select)
          distinct |= sameBits(sx.field, sy.field) && sx.value != sy.value;
      if (!distinct)
        fail("/commands/" + x.kind, "command '" + x.kind + "' is delivered exactly like command '" +
                                        y.kind + "' (/commands/" + y.kind + "): both push frame " +
                                        shortQuote(T.frames[size_t(x.frame)].name) + " into " +
                                        reg +
                                        " and no select field holds a different value for the two");
    }
  // The NPU (and the simulator) tells insn commands apart by funct3/funct7.
  for (size_t a = 0; a < T.commands.size(); ++a)
    for (size_t b = 0; b < a; ++b) {
      const CommandDesc &x = T.commands[a], &y = T.commands[b];
      if (x.delivery.mode == DeliveryMode::Insn && y.delivery.mode == DeliveryMode::Insn &&
          x.delivery.funct3 == y.delivery.funct3 && x.delivery.funct7 == y.delivery.funct7)
        fail("/commands/" + x.kind + "/delivery/funct7",
             "command '" + x.kind + "' uses funct3 " + std::to_string(x.delivery.funct3) +
                 " and funct7 " + std::to_string(x.delivery.funct7) + " like command '" + y.kind +
                 "'; instructions tell the commands apart by them");
    }
  // Words and FIFO registers hold no status bits, clear fields or init writes.
  static const char *const Engines[] = {"dma", "compute", "fence"};
  for (int e = 0; e < 3; ++e) {
    const EngineStatus &s = T.engines[e];
    const std::pair<const StatusBit *, const char *> bits[] = {
        {&s.busy, "busy"}, {&s.done, "done"}, {&s.error, "error"}, {&s.freeSlots, "free_slots"}};
    for (const auto &b : bits) {
      std::string p = std::string("/status/") + Engines[e] + "/" + b.second;
      for (const FieldRef *f : {&b.first->field, &b.first->clear.field})
        if (f->valid() && (isWord(*f) || fifoRegs.count(f->reg)))
          fail(p, shortQuote(f->text) + (isWord(*f) ? " is a frame word" : " is a FIFO register") +
                      "; status bits and their clear fields live in registers the CPU reads "
                      "and writes");
    }
  }
  for (size_t i = 0; i < T.init.size(); ++i)
    if (isWord(T.init[i].field) || fifoRegs.count(T.init[i].field.reg))
      fail("/init/" + std::to_string(i),
           "init writes " + shortQuote(T.init[i].field.text) + ", which is " +
               (isWord(T.init[i].field) ? "a frame word" : "a FIFO register") +
               "; init writes go to registers");
  if (T.queue.depth && isWord(T.queue.commit.field))
    fail("/job_queue/commit", shortQuote(T.queue.commit.field.text) + " is a frame word");
}

} // namespace npucc::target
