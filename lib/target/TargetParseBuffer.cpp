//===- TargetParseBuffer.cpp - Target description: command-buffer delivery -===//
//
// "delivery": {"mode": "buffer", "address", "length", "length_unit",
// "kick": {"field", "value"}, "capacity_words"}: a command's frame is
// appended to one command buffer in memory and started by a kick (the
// buffer's device address, its length in words or bytes, then the kick
// value), Ethos-U-like. Every buffer-delivered command shares the one buffer
// (TargetDesc::cmdbuf) and its frame, and is told apart by select fields.
// The checks across the description run in checkCommandBuffer: no command,
// status bit or init write touches the kick's registers, the address field
// reaches every writable system window, no fence completion.
//
//===----------------------------------------------------------------------===//
#include "TargetParser.h"

#include <set>

namespace npucc::target {

using namespace json_reader;

namespace {

bool sameRef(const FieldRef &a, const FieldRef &b) {
  return a.reg == b.reg && a.lsb == b.lsb && a.width == b.width;
}

uint64_t fieldMax(const FieldRef &f) {
  return f.width >= 64 ? ~uint64_t(0) : (uint64_t(1) << f.width) - 1;
}

} // namespace

void TargetParser::parseBufferDelivery(const Obj &d, CommandDesc &c) {
  const Frame &fr = T.frames[size_t(c.frame)];
  CommandBuffer b;
  b.frame = c.frame;
  b.path = d.path();
  auto regField = [&](const char *key) {
    FieldRef f = fieldRef(d.req(key), d.at(key));
    if (T.registers[size_t(f.reg)].isWord())
      fail(d.at(key),
           shortQuote(f.text) + " is a frame word; the kick writes memory-mapped registers");
    return f;
  };
  b.address = regField("address");
  b.length = regField("length");
  if (overlaps(b.address, b.length))
    fail(d.at("length"), "length field " + shortQuote(b.length.text) + " overlaps address field " +
                             shortQuote(b.address.text));
  std::string unit = d.str("length_unit", "words");
  if (unit != "words" && unit != "bytes")
    fail(d.at("length_unit"),
         "unknown length unit " + shortQuote(unit) + " (expected words or bytes)");
  b.lengthBytes = unit == "bytes";
  Obj ko(d.req("kick"), d.at("kick"));
  b.kick = fieldValue(ko, true);
  if (T.registers[size_t(b.kick.field.reg)].isWord())
    fail(ko.path(), shortQuote(b.kick.field.text) +
                        " is a frame word; the kick writes memory-mapped registers");
  if (b.kick.field.reg == b.address.reg || b.kick.field.reg == b.length.reg)
    fail(ko.at("field"), "kick field " + shortQuote(b.kick.field.text) +
                             " shares its register with the address or the length; the kick "
                             "starts the NPU, so it is written last, in a register of its own");
  b.capacityWords = unsigned(d.range("capacity_words", 1, 1u << 24));
  if (b.capacityWords < fr.numWords)
    fail(d.at("capacity_words"), "a command buffer of " + std::to_string(b.capacityWords) +
                                     " words cannot hold one frame " + shortQuote(fr.name) + " (" +
                                     std::to_string(fr.numWords) + " words)");
  uint64_t maxLength = uint64_t(b.capacityWords) * (b.lengthBytes ? fr.wordBits / 8 : 1);
  if (maxLength > fieldMax(b.length))
    fail(d.at("length"), "length field " + shortQuote(b.length.text) + " (" +
                             std::to_string(b.length.width) + " bits) cannot hold a full buffer (" +
                             std::to_string(maxLength) + " " + unit + ")");
  d.done();
  if (T.cmdbuf.capacityWords == 0) {
    T.cmdbuf = b;
    return;
  }
  // One buffer: every buffer command names the same one.
  const CommandBuffer &a = T.cmdbuf;
  auto differs = [&](const std::string &key, const std::string &what) {
    fail(d.at(key), "command '" + c.kind + "' names another " + what + " than " + a.path +
                        "; the commands delivered through the command buffer share it");
  };
  if (b.frame != a.frame)
    fail(d.path(), "command '" + c.kind + "' appends frame " + shortQuote(fr.name) + " but " +
                       a.path + " appends frame " + shortQuote(T.frames[size_t(a.frame)].name) +
                       "; the command buffer carries one frame");
  if (!sameRef(b.address, a.address))
    differs("address", "address field");
  if (!sameRef(b.length, a.length) || b.lengthBytes != a.lengthBytes)
    differs("length", "length field or unit");
  if (!sameRef(b.kick.field, a.kick.field) || b.kick.value != a.kick.value)
    differs("kick", "kick");
  if (b.capacityWords != a.capacityWords)
    differs("capacity_words", "capacity");
}

void TargetParser::checkCommandBuffer() const {
  const CommandBuffer &b = T.cmdbuf;
  if (b.capacityWords == 0)
    return;
  const std::set<int> regs = {b.address.reg, b.length.reg, b.kick.field.reg};
  auto regName = [&](int r) { return shortQuote(T.registers[size_t(r)].name); };
  if (T.completion == "fence")
    fail("/completion", "completion mode 'fence' cannot be combined with the command buffer (" +
                            b.path +
                            "): a fence is issued after the commands it covers have "
                            "been kicked; use status bits");
  const std::pair<const FieldRef *, const char *> kickFields[] = {
      {&b.address, "address"}, {&b.length, "length"}, {&b.kick.field, "kick"}};
  for (const auto &k : kickFields)
    if (T.isStatusRegister(k.first->reg))
      fail(b.path + "/" + k.second, shortQuote(k.first->text) + " is in register " +
                                        regName(k.first->reg) +
                                        ", which holds status bits; the kick writes registers "
                                        "of its own");
  for (const CommandDesc &c : T.commands)
    for (const FieldRef &f : writtenFields(c))
      if (regs.count(f.reg))
        fail("/commands/" + c.kind, "command '" + c.kind + "' writes register " + regName(f.reg) +
                                        ", which the command buffer's kick (" + b.path +
                                        ") writes");
  static const char *const Engines[] = {"dma", "compute", "fence"};
  for (int e = 0; e < 3; ++e) {
    const EngineStatus &s = T.engines[e];
    const std::pair<const StatusBit *, const char *> bits[] = {
        {&s.busy, "busy"}, {&s.done, "done"}, {&s.error, "error"}, {&s.freeSlots, "free_slots"}};
    for (const auto &bit : bits)
      for (const FieldRef *f : {&bit.first->field, &bit.first->clear.field})
        if (f->valid() && regs.count(f->reg))
          fail(std::string("/status/") + Engines[e] + "/" + bit.second,
               shortQuote(f->text) + " is in register " + regName(f->reg) +
                   ", which the command buffer's kick (" + b.path +
                   ") writes; status bits live in registers of their own");
  }
  for (size_t i = 0; i < T.init.size(); ++i)
    if (regs.count(T.init[i].field.reg))
      fail("/init/" + std::to_string(i), "init writes " + shortQuote(T.init[i].field.text) +
                                             ", in a register the command buffer's kick (" +
                                             b.path + ") writes");
  // The buffer lies in RAM: its device address must fit the address field
  // wherever a writable system window puts it.
  for (const SystemRange &w : T.system)
    if (w.writable && w.base + (w.size - 1) > fieldMax(b.address))
      fail(b.path + "/address",
           "address field " + shortQuote(b.address.text) + " (" + std::to_string(b.address.width) +
               " bits) cannot hold the addresses of writable window " + shortQuote(w.name) +
               " (up to " + hexText(w.base + (w.size - 1)) + ")");
  // After a kick the NPU tells the frames apart by their select fields.
  for (size_t x = 0; x < T.commands.size(); ++x)
    for (size_t y = 0; y < x; ++y) {
      const CommandDesc &p = T.commands[x], &q = T.commands[y];
      if (p.delivery.mode != DeliveryMode::Buffer || q.delivery.mode != DeliveryMode::Buffer)
        continue;
      bool distinct = false;
      for (const FieldValue &sp : p.select)
        for (const FieldValue &sq : q.select)
          distinct |= sameBits(sp.field, sq.field) && sp.value != sq.value;
      if (!distinct)
        fail("/commands/" + p.kind,
             "command '" + p.kind + "' is delivered exactly like command '" + q.kind +
                 "' (/commands/" + q.kind + "): both append frame " +
                 shortQuote(T.frames[size_t(b.frame)].name) +
                 " to the command buffer and no select field holds a different value for the two");
    }
}

} // namespace npucc::target
