//===- target_delivery_test.cpp - Frames and command delivery, loaded -----===//
//
// Issue 19, phase 4, in the loader and the C table, on
// test/target/npu-fifo.json with one edit each: "frames" (ordered words
// with fields, word_bits 32/64) and a command's "frame" + "delivery"
// ({"mode": "fifo", "register", "depth_words"}) are accepted and carried
// into npucc_target_desc (words after the registers, NPUCC_REG_WORD; one
// delivery row per frame command); each rule refuses with its JSON path.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"

#include <gtest/gtest.h>

#include <map>

#include "TargetJsonEdit.h"

using namespace npucc;
using namespace npucc::target;
using npucc::test::json;

namespace {

json fifoJson() {
  return json::parse(test::readText(test::targetDir() + "npu-fifo.json"), nullptr, true, true);
}

Result<TargetDesc> edited(const std::function<void(json &)> &edit) {
  json j = fifoJson();
  edit(j);
  return parseTargetJson(j.dump(2), "fifo.json");
}

/// The diagnostic of the edited description, "" if it loads.
std::string errOf(const std::function<void(json &)> &edit) {
  auto r = edited(edit);
  return r ? std::string() : r.error().str();
}

/// Every compute command's value for key `key`.
void forCompute(json &j, const std::function<void(json &)> &f) {
  for (const char *k : {"conv", "depthwise", "matmul", "pool", "eltwise"})
    f(j["commands"][k]);
}

/// npu-fifo with 32-bit words: every 64-bit word W becomes W (bits 0..31)
/// and W_HI (bits 32..63), CMD_FIFO 32 bits wide, the FIFO 18 words deep.
void splitWords(json &j) {
  json words = json::array();
  std::map<std::string, std::string> moved; // "W.f" -> "W_HI.f"
  for (json &w : j["frames"][0]["words"]) {
    json lo = {{"name", w["name"]}, {"fields", json::array()}};
    json hi = {{"name", w["name"].get<std::string>() + "_HI"}, {"fields", json::array()}};
    for (json f : w["fields"]) {
      if (f["lsb"].get<int>() < 32) {
        lo["fields"].push_back(f);
        continue;
      }
      f["lsb"] = f["lsb"].get<int>() - 32;
      hi["fields"].push_back(f);
      moved[w["name"].get<std::string>() + "." + f["name"].get<std::string>()] =
          hi["name"].get<std::string>() + "." + f["name"].get<std::string>();
    }
    words.push_back(lo);
    words.push_back(hi);
  }
  j["frames"][0]["words"] = words;
  j["frames"][0]["word_bits"] = 32;
  j["registers"][6]["width"] = 32;
  forCompute(j, [&](json &c) {
    for (auto &kv : c["params"].items())
      if (moved.count(kv.value().get<std::string>()))
        kv.value() = moved[kv.value().get<std::string>()];
    c["delivery"]["depth_words"] = 18;
  });
}

TEST(TargetDelivery, FramesAndFifoDeliveryAreAccepted) {
  auto r = edited([](json &) {});
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_EQ(r->frames.size(), 1u);
  const Frame &f = r->frames[0];
  EXPECT_EQ(f.name, "job");
  EXPECT_EQ(f.wordBits, 64u);
  EXPECT_EQ(f.numWords, 9u);
  const Register &w0 = r->registers[size_t(f.firstReg)];
  EXPECT_EQ(w0.name, "CTRL");
  EXPECT_TRUE(w0.isWord());
  EXPECT_EQ(w0.width, 64u);
  EXPECT_EQ(r->registers[size_t(f.firstReg) + 8].offset, 8u) << "a word's position";
  const CommandDesc *c = r->command("conv");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->frame, 0);
  EXPECT_EQ(c->delivery.mode, DeliveryMode::Fifo);
  EXPECT_EQ(r->registers[size_t(c->delivery.reg)].name, "CMD_FIFO");
  EXPECT_EQ(c->delivery.depthWords, 9u);
  EXPECT_FALSE(c->doorbell.field.valid()) << "started by its last word";
  EXPECT_EQ(r->command("dma")->delivery.mode, DeliveryMode::Mmio);
  EXPECT_TRUE(r->isCommandRegister(c->delivery.reg));
  CTable t(*r);
  const npucc_target_desc *d = t.get();
  ASSERT_EQ(d->num_frames, 1u);
  EXPECT_EQ(d->frames[0].word_bits, 64u);
  EXPECT_EQ(d->frames[0].first_reg, uint16_t(f.firstReg));
  EXPECT_EQ(d->regs[f.firstReg].flags, NPUCC_REG_WORD);
  EXPECT_EQ(d->regs[f.firstReg - 1].flags, 0u) << "registers first, then the words";
  ASSERT_EQ(d->num_deliveries, 5u) << "the five compute commands";
  const npucc_delivery_desc *dl = npucc_desc_delivery(d, npucc_desc_find_cmd(d, NPUCC_KIND_CONV));
  ASSERT_NE(dl, nullptr);
  EXPECT_EQ(dl->mode, NPUCC_DELIVERY_FIFO);
  EXPECT_EQ(dl->reg, c->delivery.reg);
  EXPECT_EQ(dl->depth_words, 9u);
  EXPECT_EQ(npucc_desc_delivery(d, npucc_desc_find_cmd(d, NPUCC_KIND_DMA)), nullptr);
  // 32-bit words with a 32-bit FIFO register: each 64-bit word split in two.
  auto r32 = edited(splitWords);
  ASSERT_TRUE(r32.ok()) << r32.error().str();
  EXPECT_EQ(r32->frames[0].wordBits, 32u);
  EXPECT_EQ(r32->frames[0].numWords, 18u);
  EXPECT_EQ(r32->command("matmul")->delivery.depthWords, 18u);
}

TEST(TargetDelivery, FrameRulesRefuseWithTheirPath) {
  EXPECT_EQ(
      errOf([](json &j) { j["frames"][0]["word_bits"] = 48; }),
      "fifo.json: error: /frames/0/word_bits: frame word width must be 32 or 64 bits, got 48");
  EXPECT_EQ(errOf([](json &j) { j["frames"][0]["words"] = json::array(); }),
            "fifo.json: error: /frames/0/words: a frame has 1 to 64 words, got 0");
  EXPECT_EQ(errOf([](json &j) { j["frames"][0]["words"][1]["name"] = "STATUS"; }),
            "fifo.json: error: /frames/0/words/1/name: word name 'STATUS' is already the name of "
            "a register; fields are named WORD.field, so names must be unique");
  EXPECT_EQ(errOf([](json &j) {
              j["frames"][0]["words"][8]["fields"][0] = {{"name", "x"}, {"lsb", 60}, {"width", 8}};
            }),
            "fifo.json: error: /frames/0/words/8/fields/0: field 'x' (bits 60..67) is wider than "
            "its 64-bit word 'ELT_CFG'");
  std::string e = errOf([](json &j) { j["frames"][0]["words"][0]["offset"] = 4; });
  EXPECT_NE(e.find("/frames/0/words/0"), std::string::npos) << e;
  EXPECT_NE(e.find("offset"), std::string::npos) << "a word has no address: " << e;
  EXPECT_EQ(errOf([](json &j) { j["frames"].push_back(j["frames"][0]); }),
            "fifo.json: error: /frames/1/name: duplicate frame name 'job'");
}

TEST(TargetDelivery, DeliveryRulesRefuseWithTheirPath) {
  EXPECT_EQ(errOf([](json &j) { j["commands"]["conv"]["frame"] = "jobs"; }),
            "fifo.json: error: /commands/conv/frame: unknown frame 'jobs' (did you mean 'job'?)");
  EXPECT_EQ(errOf([](json &j) { j["commands"]["conv"].erase("delivery"); }),
            "fifo.json: error: /commands/conv/frame: command 'conv' has a frame but no "
            "\"delivery\" saying how its words reach the NPU (e.g. {\"mode\": \"fifo\", "
            "\"register\": ..., \"depth_words\": ...})");
  EXPECT_EQ(errOf([](json &j) { j["commands"]["conv"]["delivery"]["mode"] = "dma"; }),
            "fifo.json: error: /commands/conv/delivery/mode: unknown delivery mode 'dma' "
            "(expected mmio, fifo, insn, buffer)");
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["conv"]["delivery"] = {{"mode", "mmio"}};
            }),
            "fifo.json: error: /commands/conv/delivery/mode: a frame's words have no addresses; "
            "deliver them through a FIFO register (\"mode\": \"fifo\")");
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["dma"]["delivery"] = {{"mode", "fifo"}, {"register", "CMD_FIFO"}};
            }),
            "fifo.json: error: /commands/dma/delivery/mode: delivery mode 'fifo' sends the words "
            "of a frame; name one with \"frame\"");
  EXPECT_EQ(
      errOf([](json &j) { forCompute(j, [](json &c) { c["delivery"]["register"] = "CTRL"; }); }),
      "fifo.json: error: /commands/conv/delivery/register: 'CTRL' is a frame word, not a "
      "register");
  EXPECT_EQ(
      errOf([](json &j) { forCompute(j, [](json &c) { c["delivery"]["register"] = "DMA_SRC"; }); }),
      "fifo.json: error: /commands/conv/delivery/register: FIFO register 'DMA_SRC' is 32 "
      "bits wide; the words of frame 'job' are 64");
  EXPECT_EQ(errOf([](json &j) { j["commands"]["conv"]["delivery"]["depth_words"] = 8; }),
            "fifo.json: error: /commands/conv/delivery/depth_words: a FIFO of 8 words cannot "
            "hold frame 'job' (9 words)");
  EXPECT_EQ(errOf([](json &j) { j["commands"]["conv"]["delivery"].erase("depth_words"); }),
            "fifo.json: error: /commands/conv/delivery: missing required field 'depth_words'");
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["conv"]["doorbell"] = {{"field", "DMA_CTRL.start"}, {"value", 1}};
            }),
            "fifo.json: error: /commands/conv/doorbell: command 'conv' is delivered as frame "
            "words and started by the last one; remove 'doorbell'");
}

TEST(TargetDelivery, CrossRulesRefuseWithTheirPath) {
  EXPECT_EQ(errOf([](json &j) { j["commands"]["conv"]["params"]["in_addr"] = "DMA_SRC"; }),
            "fifo.json: error: /commands/conv/params/in_addr: field 'DMA_SRC' is not a word of "
            "frame 'job'; a command delivered as a frame writes only its words");
  EXPECT_EQ(errOf([](json &j) { j["commands"]["dma"]["params"]["src_addr"] = "RQ.addr"; }),
            "fifo.json: error: /commands/dma/params/src_addr: field 'RQ.addr' is a word of frame "
            "'job'; only a command with \"frame\": 'job' writes it");
  EXPECT_EQ(errOf([](json &j) {
              j["registers"][6]["fields"] = {{{"name", "lo"}, {"lsb", 0}, {"width", 32}}};
              j["commands"]["dma"]["params"]["src_addr"] = "CMD_FIFO.lo";
            }),
            "fifo.json: error: /commands/dma/params/src_addr: register 'CMD_FIFO' is a FIFO: "
            "every write pushes a command word");
  EXPECT_EQ(errOf([](json &j) { j["commands"]["depthwise"]["select"][0]["value"] = 0; }),
            "fifo.json: error: /commands/depthwise: command 'depthwise' is delivered exactly like "
            "command 'conv' (/commands/conv): both push frame 'job' into 'CMD_FIFO' and no select "
            "field holds a different value for the two");
  EXPECT_EQ(errOf([](json &j) { j["commands"]["pool"]["delivery"]["depth_words"] = 18; }),
            "fifo.json: error: /commands/pool/delivery/depth_words: FIFO 'CMD_FIFO' holds 9 words "
            "for command 'conv' but 18 for 'pool'");
  EXPECT_EQ(errOf([](json &j) {
              j["init"] = {{{"register", "CMD_FIFO"}, {"value", 1}}};
            }),
            "fifo.json: error: /init/0: init writes 'CMD_FIFO', which is a FIFO register; init "
            "writes go to registers");
  EXPECT_EQ(errOf([](json &j) {
              j["status"].erase("register");
              j["status"]["compute"]["done"] = "CTRL.int_en";
            }),
            "fifo.json: error: /status/compute/done: 'CTRL.int_en' is a frame word; status bits "
            "and their clear fields live in registers the CPU reads and writes");
  EXPECT_EQ(
      errOf([](json &j) {
        j["job_queue"] = {{"depth", 2}, {"commit", {{"field", "DMA_CTRL.start"}, {"value", 1}}}};
        j["commands"]["dma"].erase("doorbell");
      }),
      "fifo.json: error: /commands/conv/frame: frames cannot be combined with a job queue "
      "(/job_queue)");
}

} // namespace

namespace {

Result<TargetDesc> insnEdited(const std::function<void(json &)> &edit) {
  json j = json::parse(test::readText(test::targetDir() + "npu-insn.json"), nullptr, true, true);
  edit(j);
  return parseTargetJson(j.dump(2), "insn.json");
}
std::string insnErr(const std::function<void(json &)> &edit) {
  auto r = insnEdited(edit);
  return r ? std::string() : r.error().str();
}

TEST(TargetDelivery, InsnDeliveryIsAcceptedAndRefusedWithItsPath) {
  auto r = insnEdited([](json &) {});
  ASSERT_TRUE(r.ok()) << r.error().str();
  const CommandDesc *c = r->command("pool");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->delivery.mode, DeliveryMode::Insn);
  EXPECT_EQ(c->delivery.opcode, 0x0Bu) << "custom0";
  EXPECT_EQ(c->delivery.funct3, 0u);
  EXPECT_EQ(c->delivery.funct7, 3u);
  CTable t(*r);
  const npucc_delivery_desc *dl =
      npucc_desc_delivery(t.get(), npucc_desc_find_cmd(t.get(), NPUCC_KIND_POOL));
  ASSERT_NE(dl, nullptr);
  EXPECT_EQ(dl->mode, NPUCC_DELIVERY_INSN);
  EXPECT_EQ(dl->funct7, 3u);
  auto r3 = insnEdited([](json &j) { j["commands"]["conv"]["delivery"]["opcode"] = "custom3"; });
  ASSERT_TRUE(r3.ok()) << r3.error().str();
  EXPECT_EQ(r3->command("conv")->delivery.opcode, 0x7Bu);

  EXPECT_EQ(insnErr([](json &j) { j["commands"]["conv"]["delivery"]["opcode"] = "custom4"; }),
            "insn.json: error: /commands/conv/delivery/opcode: unknown opcode 'custom4' "
            "(expected custom0, custom1, custom2 or custom3)");
  std::string e = insnErr([](json &j) { j["commands"]["conv"]["delivery"]["funct3"] = 8; });
  EXPECT_NE(e.find("insn.json: error: /commands/conv/delivery/funct3: "), std::string::npos) << e;
  e = insnErr([](json &j) { j["commands"]["conv"]["delivery"]["funct7"] = 128; });
  EXPECT_NE(e.find("insn.json: error: /commands/conv/delivery/funct7: "), std::string::npos) << e;
  EXPECT_EQ(insnErr([](json &j) { j["commands"]["pool"]["delivery"]["funct7"] = 0; }),
            "insn.json: error: /commands/pool/delivery/funct7: command 'pool' uses funct3 0 and "
            "funct7 0 like command 'conv'; instructions tell the commands apart by them");
  EXPECT_EQ(insnErr([](json &j) {
              j["commands"]["dma"]["delivery"] = {
                  {"mode", "insn"}, {"opcode", "custom0"}, {"funct3", 1}, {"funct7", 0}};
            }),
            "insn.json: error: /commands/dma/delivery/mode: delivery mode 'insn' sends the words "
            "of a frame; name one with \"frame\"");
  e = insnErr([](json &j) { j["commands"]["conv"]["delivery"]["register"] = "DMA_SRC"; });
  EXPECT_NE(e.find("insn.json: error: /commands/conv/delivery"), std::string::npos) << e;
  EXPECT_NE(e.find("register"), std::string::npos) << "no FIFO register for insn: " << e;
}

} // namespace

namespace {

json cmdbufJson() {
  return json::parse(test::readText(test::targetDir() + "npu-cmdbuf.json"), nullptr, true, true);
}

Result<TargetDesc> cmdbufEdited(const std::function<void(json &)> &edit) {
  json j = cmdbufJson();
  edit(j);
  return parseTargetJson(j.dump(2), "cmdbuf.json");
}

std::string cmdbufErr(const std::function<void(json &)> &edit) {
  auto r = cmdbufEdited(edit);
  return r ? std::string() : r.error().str();
}

/// The same edit on every command's delivery (they share the buffer).
std::function<void(json &)> everyDelivery(const std::function<void(json &)> &f) {
  return [f](json &j) {
    for (auto &kv : j["commands"].items())
      f(kv.value()["delivery"]);
  };
}

TEST(TargetDelivery, BufferDeliveryIsAccepted) {
  auto r = cmdbufEdited([](json &) {});
  ASSERT_TRUE(r.ok()) << r.error().str();
  const CommandBuffer &b = r->cmdbuf;
  EXPECT_EQ(b.capacityWords, 64u);
  EXPECT_EQ(b.frame, 0);
  EXPECT_EQ(b.address.text, "CMDBUF_BASE");
  EXPECT_EQ(b.length.text, "CMDBUF_SIZE.bytes");
  EXPECT_TRUE(b.lengthBytes);
  EXPECT_EQ(b.kick.field.text, "CMD.go");
  EXPECT_EQ(b.kick.value, 1u);
  for (const CommandDesc &c : r->commands) {
    EXPECT_EQ(c.delivery.mode, DeliveryMode::Buffer) << c.kind;
    EXPECT_EQ(c.frame, 0) << c.kind;
    EXPECT_FALSE(c.doorbell.field.valid()) << c.kind;
  }
  CTable t(*r);
  const npucc_target_desc *d = t.get();
  ASSERT_NE(d->cmdbuf, nullptr);
  EXPECT_NE(d->cmdbuf->words, nullptr);
  EXPECT_EQ(d->cmdbuf->capacity_words, 64u);
  EXPECT_EQ(d->cmdbuf->word_bits, 64u);
  EXPECT_EQ(d->cmdbuf->length_bytes, 1u);
  EXPECT_EQ(d->cmdbuf->kick.value, 1u);
  EXPECT_EQ(d->cmdbuf->address.reg, int16_t(b.address.reg));
  EXPECT_EQ(d->cmdbuf->length.width, 16u);
  ASSERT_EQ(d->num_deliveries, 6u) << "every command, DMA too";
  const npucc_delivery_desc *dl = npucc_desc_delivery(d, npucc_desc_find_cmd(d, NPUCC_KIND_DMA));
  ASSERT_NE(dl, nullptr);
  EXPECT_EQ(dl->mode, NPUCC_DELIVERY_BUFFER);
  EXPECT_EQ(dl->depth_words, 64u) << "the buffer's capacity";
  // Length in words (the default unit).
  auto rw = cmdbufEdited(everyDelivery([](json &d) { d.erase("length_unit"); }));
  ASSERT_TRUE(rw.ok()) << rw.error().str();
  EXPECT_FALSE(rw->cmdbuf.lengthBytes);
  // A description without buffer delivery has no command buffer.
  auto f = edited([](json &) {});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->cmdbuf.capacityWords, 0u);
  EXPECT_EQ(CTable(*f).get()->cmdbuf, nullptr);
}

TEST(TargetDelivery, BufferRulesRefuseWithTheirPath) {
  EXPECT_EQ(cmdbufErr([](json &j) { j["commands"]["conv"]["delivery"]["capacity_words"] = 9; }),
            "cmdbuf.json: error: /commands/conv/delivery/capacity_words: a command buffer of 9 "
            "words cannot hold one frame 'job' (10 words)");
  std::string e = cmdbufErr([](json &j) { j["commands"]["conv"]["delivery"]["depth_words"] = 64; });
  EXPECT_NE(e.find("cmdbuf.json: error: /commands/conv/delivery"), std::string::npos) << e;
  EXPECT_NE(e.find("depth_words"), std::string::npos) << "an unknown key is named: " << e;
  EXPECT_EQ(cmdbufErr([](json &j) { j["commands"]["conv"]["delivery"].erase("kick"); }),
            "cmdbuf.json: error: /commands/conv/delivery: missing required field 'kick'");
  EXPECT_EQ(cmdbufErr([](json &j) { j["commands"]["conv"]["delivery"]["length_unit"] = "dwords"; }),
            "cmdbuf.json: error: /commands/conv/delivery/length_unit: unknown length unit "
            "'dwords' (expected words or bytes)");
  EXPECT_EQ(cmdbufErr([](json &j) { j["commands"]["conv"]["delivery"]["address"] = "RQ.addr"; }),
            "cmdbuf.json: error: /commands/conv/delivery/address: 'RQ.addr' is a frame word; the "
            "kick writes memory-mapped registers");
  EXPECT_EQ(cmdbufErr([](json &j) { j["commands"]["conv"]["delivery"]["kick"]["value"] = 0; }),
            "cmdbuf.json: error: /commands/conv/delivery/kick/value: value 0 is the no-op (idle) "
            "value of 'CMD.go'; writing it starts nothing");
  EXPECT_EQ(cmdbufErr([](json &j) {
              j["registers"][2]["fields"].push_back({{"name", "go"}, {"lsb", 31}, {"width", 1}});
              j["commands"]["conv"]["delivery"]["kick"]["field"] = "CMDBUF_SIZE.go";
            }),
            "cmdbuf.json: error: /commands/conv/delivery/kick/field: kick field 'CMDBUF_SIZE.go' "
            "shares its register with the address or the length; the kick starts the NPU, so it "
            "is written last, in a register of its own");
  EXPECT_EQ(cmdbufErr([](json &j) { j["registers"][2]["fields"][0]["width"] = 8; }),
            "cmdbuf.json: error: /commands/conv/delivery/length: length field "
            "'CMDBUF_SIZE.bytes' (8 bits) cannot hold a full buffer (512 bytes)");
  EXPECT_EQ(cmdbufErr([](json &j) { j["commands"]["pool"]["delivery"]["capacity_words"] = 32; }),
            "cmdbuf.json: error: /commands/pool/delivery/capacity_words: command 'pool' names "
            "another capacity than /commands/conv/delivery; the commands delivered through the "
            "command buffer share it");
  EXPECT_EQ(cmdbufErr([](json &j) { j["commands"]["dma"]["delivery"]["length_unit"] = "words"; }),
            "cmdbuf.json: error: /commands/dma/delivery/length: command 'dma' names another "
            "length field or unit than /commands/conv/delivery; the commands delivered through "
            "the command buffer share it");
}

TEST(TargetDelivery, BufferCrossRulesRefuseWithTheirPath) {
  EXPECT_EQ(cmdbufErr(everyDelivery([](json &d) { d["kick"]["field"] = "STATUS.dma_done"; })),
            "cmdbuf.json: error: /commands/conv/delivery/kick: 'STATUS.dma_done' is in register "
            "'STATUS', which holds status bits; the kick writes registers of its own");
  EXPECT_EQ(cmdbufErr([](json &j) {
              j["init"] = {{{"field", "CMD.go"}, {"value", 1}}};
            }),
            "cmdbuf.json: error: /init/0: init writes 'CMD.go', in a register the command "
            "buffer's kick (/commands/conv/delivery) writes");
  EXPECT_EQ(cmdbufErr([](json &j) {
              j["registers"][1]["fields"] = {{{"name", "a"}, {"lsb", 0}, {"width", 24}}};
              for (auto &kv : j["commands"].items())
                kv.value()["delivery"]["address"] = "CMDBUF_BASE.a";
            }),
            "cmdbuf.json: error: /commands/conv/delivery/address: address field "
            "'CMDBUF_BASE.a' (24 bits) cannot hold the addresses of writable window 'ram' (up "
            "to 0x20ffffff)");
  EXPECT_EQ(cmdbufErr([](json &j) { j["commands"]["depthwise"]["select"][0]["value"] = 0; }),
            "cmdbuf.json: error: /commands/depthwise: command 'depthwise' is delivered exactly "
            "like command 'conv' (/commands/conv): both append frame 'job' to the command buffer "
            "and no select field holds a different value for the two");
  // npu-fifo with its compute commands moved to a command buffer whose
  // address register the memory-mapped DMA writes.
  EXPECT_EQ(errOf([](json &j) {
              j["registers"].push_back({{"name", "KICK"}, {"offset", "0x40"}});
              forCompute(j, [](json &c) {
                c["delivery"] = {{"mode", "buffer"},
                                 {"address", "DMA_SRC"},
                                 {"length", "DMA_DST"},
                                 {"kick", {{"register", "KICK"}, {"value", 1}}},
                                 {"capacity_words", 18}};
              });
            }),
            "fifo.json: error: /commands/dma: command 'dma' writes register 'DMA_DST', which the "
            "command buffer's kick (/commands/conv/delivery) writes");
  auto mixed = edited([](json &j) {
    j["registers"].push_back({{"name", "KICK"}, {"offset", "0x40"}});
    j["registers"].push_back({{"name", "QBASE"}, {"offset", "0x44"}});
    j["registers"].push_back({{"name", "QLEN"}, {"offset", "0x48"}});
    forCompute(j, [](json &c) {
      c["delivery"] = {{"mode", "buffer"},
                       {"address", "QBASE"},
                       {"length", "QLEN"},
                       {"kick", {{"register", "KICK"}, {"value", 1}}},
                       {"capacity_words", 18}};
    });
  });
  EXPECT_TRUE(mixed.ok()) << "memory-mapped DMA, buffered compute: " << mixed.error().str();
}

} // namespace
