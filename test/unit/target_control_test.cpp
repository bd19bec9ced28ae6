//===- target_control_test.cpp - Control and status keys of the loader ----===//
//
// Issue 19, phase 2: a status bit cleared through a field of a separate clear
// register ("clear": {"field", "value"}), a busy bit that is the engine's
// doorbell ("start_bit"), write-enable fields ("write_enable"),
// read-modify-write registers ("write": "rmw"), init writes ("init"), and
// the rule for status fields in registers that commands write. Each key
// accepted, and refused with its JSON path. Starts from
// test/target/good_minimal.json.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"

#include <gtest/gtest.h>

#include "TargetJsonEdit.h"

using namespace npucc::target;
using namespace npucc::test;

namespace {

/// IRQ (sticky DONE bits d, c) and IRQ_CLR (their clear bits), ERR (codes).
void clearRegs(json &j, json dmaClear) {
  j["registers"].push_back(
      {{"name", "IRQ"},
       {"offset", 40},
       {"fields",
        {{{"name", "d"}, {"lsb", 0}, {"width", 1}}, {{"name", "c"}, {"lsb", 1}, {"width", 1}}}}});
  j["registers"].push_back(
      {{"name", "IRQ_CLR"},
       {"offset", 44},
       {"fields",
        {{{"name", "d"}, {"lsb", 0}, {"width", 1}}, {{"name", "c"}, {"lsb", 4}, {"width", 2}}}}});
  j["status"] = {{"dma", {{"done", {{"field", "IRQ.d"}, {"sticky", true}, {"clear", dmaClear}}}}},
                 {"compute",
                  {{"done",
                    {{"field", "IRQ.c"},
                     {"sticky", true},
                     {"clear", {{"field", "IRQ_CLR.c"}, {"value", 2}}}}}}}};
}

json clearD() { return {{"field", "IRQ_CLR.d"}, {"value", 1}}; }

/// Both engines started through CTRL.go, which reads as busy.
void startBits(json &j) {
  del(j, "/status/register");
  set(j, "/status/dma/busy", json{{"field", "CTRL.go"}, {"start_bit", true}});
  set(j, "/status/compute/busy", json{{"field", "CTRL.go"}, {"start_bit", true}});
}

} // namespace

TEST(TargetControl, ClearThroughAnotherRegisterIsAccepted) {
  auto r = parseEdited([](json &j) { clearRegs(j, clearD()); });
  ASSERT_TRUE(r.ok()) << r.error().str();
  const StatusBit &d = r->engines[0].done;
  EXPECT_TRUE(d.clear.field.valid());
  EXPECT_EQ(d.clear.field.text, "IRQ_CLR.d");
  EXPECT_EQ(d.clear.value, 1u);
  EXPECT_FALSE(d.clearOnWrite1 || d.clearOnRead);
  EXPECT_FALSE(r->isStatusRegister(10)); // IRQ_CLR
  CTable t(*r);
  const npucc_status_bit &b = t.get()->engines[1].done;
  EXPECT_EQ(b.flags, NPUCC_SB_STICKY | NPUCC_SB_CLEAR_FIELD);
  EXPECT_EQ(b.clear.field.reg, 10);
  EXPECT_EQ(b.clear.field.lsb, 4);
  EXPECT_EQ(b.clear.field.width, 2);
  EXPECT_EQ(b.clear.value, 2u);
  // The whole register as the clear field.
  auto w = parseEdited([](json &j) { clearRegs(j, {{"register", "IRQ_CLR"}, {"value", 1}}); });
  ASSERT_TRUE(w.ok()) << w.error().str();
  EXPECT_EQ(w->engines[0].done.clear.field.width, 32u);
  // The register header says how the bit clears.
  std::string h = emitRegisterHeader(*r);
  EXPECT_NE(h.find("done IRQ.d (sticky) (cleared by writing 1 to IRQ_CLR.d)"), std::string::npos)
      << h;
  // An error field may be cleared the same way.
  auto e = parseEdited([](json &j) {
    clearRegs(j, clearD());
    j["registers"].push_back({{"name", "ERR"}, {"offset", 48}});
    j["status"]["dma"]["error"] = {{"field", "ERR"},
                                   {"clear", {{"field", "IRQ_CLR.d"}, {"value", 1}}}};
  });
  ASSERT_TRUE(e.ok()) << e.error().str();
  EXPECT_TRUE(e->engines[0].error.clear.field.valid());
}

TEST(TargetControl, ClearThroughAnotherRegisterRefusals) {
  EXPECT_EQ(errOf([](json &j) {
              clearRegs(j, {{"field", "IRQ_CLR.d"}, {"value", 0}});
            }),
            "mini.json: error: /status/dma/done/clear/value: a clear value must not be 0 (every "
            "write of the register that leaves the field alone writes 0)");
  EXPECT_EQ(errOf([](json &j) {
              clearRegs(j, {{"field", "IRQ_CLR.d"}, {"value", 2}});
            }),
            "mini.json: error: /status/dma/done/clear/value: value 2 does not fit in 1-bit field "
            "'IRQ_CLR.d'");
  EXPECT_EQ(errOf([](json &j) {
              clearRegs(j, {{"field", "IRQ_CLR.x"}, {"value", 1}});
            }),
            "mini.json: error: /status/dma/done/clear/field: unknown field 'x' in register "
            "'IRQ_CLR' (did you mean 'c'?)");
  EXPECT_EQ(errOf([](json &j) {
              clearRegs(j, {{"value", 1}});
            }),
            "mini.json: error: /status/dma/done/clear: exactly one of 'field' or 'register' is "
            "required");
  EXPECT_EQ(errOf([](json &j) {
              clearRegs(j, {{"field", "IRQ_CLR.d"}, {"value", 1}, {"mask", 1}});
            }),
            "mini.json: error: /status/dma/done/clear/mask: unknown field 'mask'");
  EXPECT_EQ(errOf([](json &j) {
              clearRegs(j, {{"field", "IRQ.c"}, {"value", 1}});
            }),
            "mini.json: error: /status/dma/done/clear: clear field 'IRQ.c' is in a status "
            "register; use \"clear\": \"write1\" for a bit cleared through its own register");
  EXPECT_EQ(errOf([](json &j) {
              clearRegs(j, clearD());
              set(j, "/commands/dma/params/length", "IRQ_CLR");
            }),
            "mini.json: error: /status/dma/done/clear: clear field 'IRQ_CLR.d' is in register "
            "'IRQ_CLR', which command 'dma' writes; a clear register must be written only to "
            "clear");
  EXPECT_EQ(errOf([](json &j) {
              clearRegs(j, clearD());
              j["status"]["dma"]["done"].erase("sticky");
            }),
            "mini.json: error: /status/dma/done/clear: only a sticky done bit can be cleared");
  EXPECT_EQ(errOf([](json &j) {
              clearRegs(j, clearD());
              j["status"]["dma"]["busy"] = {{"field", "STATUS.busy"}, {"clear", clearD()}};
            }),
            "mini.json: error: /status/dma/busy/clear: a busy bit cannot be cleared");
}

TEST(TargetControl, StartBitIsAccepted) {
  auto r = parseEdited(startBits);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_TRUE(r->engines[0].busy.startBit && r->engines[1].busy.startBit);
  EXPECT_TRUE(r->isStatusRegister(0) && r->isCommandRegister(0));
  CTable t(*r);
  EXPECT_EQ(t.get()->engines[0].busy.flags, NPUCC_SB_START_BIT);
  std::string h = emitRegisterHeader(*r);
  EXPECT_NE(h.find("CTRL: 32-bit register at offset 0x00u (holds status bits, which the NPU sets; "
                   "commands write the others)"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("busy CTRL.go (start bit: reads as the doorbell value until the command "
                   "completes)"),
            std::string::npos)
      << h;
}

TEST(TargetControl, StartBitRefusals) {
  // Only the DMA's busy bit is the start bit: matmul rings the same doorbell.
  EXPECT_EQ(errOf([](json &j) {
              startBits(j);
              set(j, "/status/compute/busy", "STATUS.cbusy");
            }),
            "mini.json: error: /status/dma/busy: status bit 'CTRL.go' is in register 'CTRL', "
            "which command 'matmul' writes (/commands/matmul/select); make it the doorbell's "
            "start_bit, guard it with a write_enable field, or mark 'CTRL' \"write\": \"rmw\"");
  // A busy bit in CTRL that is not the start bit.
  EXPECT_EQ(errOf([](json &j) {
              del(j, "/status/register");
              set(j, "/status/dma/busy", "CTRL.go");
            }),
            "mini.json: error: /status/dma/busy: status bit 'CTRL.go' is in register 'CTRL', "
            "which command 'dma' writes (/commands/dma/select); make it the doorbell's "
            "start_bit, guard it with a write_enable field, or mark 'CTRL' \"write\": \"rmw\"");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/status/dma/busy", json{{"field", "STATUS.busy"}, {"start_bit", true}});
            }),
            "mini.json: error: /status/dma/busy/start_bit: start bit 'STATUS.busy' is not the "
            "doorbell of command 'dma' ('CTRL.go', /commands/dma/doorbell)");
  EXPECT_EQ(errOf([](json &j) {
              startBits(j);
              set(j, "/status/dma/busy/active_low", true);
            }),
            "mini.json: error: /status/dma/busy/start_bit: a start bit reads as its doorbell "
            "value while busy; it cannot be active-low");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/status/dma/done", json{{"field", "STATUS.done"}, {"start_bit", true}});
            }),
            "mini.json: error: /status/dma/done/start_bit: unknown field 'start_bit'");
  // The opcode field of CTRL cannot be a start bit: it is not the doorbell.
  EXPECT_EQ(errOf([](json &j) {
              startBits(j);
              set(j, "/status/compute/busy/field", "CTRL.op");
            }),
            "mini.json: error: /status/compute/busy/start_bit: start bit 'CTRL.op' is not the "
            "doorbell of command 'matmul' ('CTRL.go', /commands/matmul/doorbell)");
  // With a job queue, the commit starts a queued job, not the engine: no start bit.
  EXPECT_EQ(errOf([](json &j) {
              startBits(j);
              j["registers"].push_back({{"name", "Q"},
                                        {"offset", 40},
                                        {"fields",
                                         {{{"name", "d"}, {"lsb", 0}, {"width", 3}},
                                          {{"name", "c"}, {"lsb", 4}, {"width", 3}}}}});
              j["job_queue"] = {{"depth", 4}, {"commit", {{"field", "CTRL.go"}, {"value", 1}}}};
              del(j, "/commands/dma/doorbell");
              del(j, "/commands/matmul/doorbell");
              j["status"]["dma"]["free_slots"] = "Q.d";
              j["status"]["compute"]["free_slots"] = "Q.c";
            }),
            "mini.json: error: /status/dma/busy/start_bit: a start bit cannot be used with a job "
            "queue (/job_queue)");
  // A start bit reads 0 when idle: its idle (nop) value must be 0.
  EXPECT_EQ(errOf([](json &j) {
              startBits(j);
              set(j, "/registers/0/fields/0/nop", 1);
              set(j, "/commands/dma/doorbell/value", 0);
              set(j, "/commands/matmul/doorbell/value", 0);
            }),
            "mini.json: error: /status/dma/busy/start_bit: start bit 'CTRL.go' must idle at 0 "
            "(its nop is 1)");
}

namespace {

/// CTRL gains a busy bit (bit 5) guarded by busy_we (bit 6); the DMA's busy
/// bit moves there.
void guardedBusy(json &j) {
  j["registers"][0]["fields"].push_back(
      {{"name", "busy"}, {"lsb", 5}, {"width", 1}, {"write_enable", "busy_we"}});
  j["registers"][0]["fields"].push_back({{"name", "busy_we"}, {"lsb", 6}, {"width", 1}});
  del(j, "/status/register");
  set(j, "/status/dma/busy", "CTRL.busy");
}

/// CTRL written read-modify-write, with the DMA's busy bit at bit 5.
void rmwBusy(json &j) {
  j["registers"][0]["write"] = "rmw";
  j["registers"][0]["fields"].push_back({{"name", "busy"}, {"lsb", 5}, {"width", 1}});
  del(j, "/status/register");
  set(j, "/status/dma/busy", "CTRL.busy");
}

} // namespace

TEST(TargetControl, WriteEnableIsAccepted) {
  auto r = parseEdited(guardedBusy);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->registers[0].fields[2].writeEnableField, 3);
  CTable t(*r);
  EXPECT_EQ(t.get()->fields[2].we, 3);
  EXPECT_EQ(t.get()->fields[0].we, -1);
  std::string h = emitRegisterHeader(*r);
  EXPECT_NE(h.find("bits 5..5 (a write changes it only with busy_we all ones)"), std::string::npos)
      << h;
}

TEST(TargetControl, WriteEnableRefusals) {
  EXPECT_EQ(errOf([](json &j) {
              guardedBusy(j);
              set(j, "/registers/0/fields/2/write_enable", "busy_en");
            }),
            "mini.json: error: /registers/0/fields/2/write_enable: write_enable field 'busy_en' "
            "is not a field of register 'CTRL'");
  EXPECT_EQ(errOf([](json &j) {
              guardedBusy(j);
              set(j, "/registers/0/fields/2/write_enable", "busy");
            }),
            "mini.json: error: /registers/0/fields/2/write_enable: field 'busy' cannot be its "
            "own write_enable field");
  // The commands set the guard (they write the opcode it also guards).
  EXPECT_EQ(errOf([](json &j) {
              guardedBusy(j);
              set(j, "/registers/0/fields/1/write_enable", "busy_we");
            }),
            "mini.json: error: /status/dma/busy: status bit 'CTRL.busy' is in register 'CTRL', "
            "which command 'dma' writes (/commands/dma/select); make it the doorbell's "
            "start_bit, guard it with a write_enable field, or mark 'CTRL' \"write\": \"rmw\"");
}

TEST(TargetControl, ReadModifyWriteIsAccepted) {
  auto r = parseEdited(rmwBusy);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_TRUE(r->registers[0].rmw);
  EXPECT_FALSE(r->registers[1].rmw);
  CTable t(*r);
  EXPECT_EQ(t.get()->regs[0].flags, NPUCC_REG_RMW);
  EXPECT_EQ(t.get()->regs[1].flags, 0);
  EXPECT_NE(emitRegisterHeader(*r).find("(written read-modify-write: a command changes only its "
                                        "fields)"),
            std::string::npos);
  EXPECT_NE(emitCTableSource(*r).find("{\"CTRL\", 0x00u, 32, 0, 3, NPUCC_REG_RMW}"),
            std::string::npos)
      << emitCTableSource(*r);
}

TEST(TargetControl, ReadModifyWriteRefusals) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/0/write", "partial"); }),
            "mini.json: error: /registers/0/write: unknown write mode 'partial' (expected whole "
            "or rmw)");
  // The commands write the status field itself.
  EXPECT_EQ(errOf([](json &j) {
              rmwBusy(j);
              set(j, "/status/dma/busy", "CTRL.op");
            }),
            "mini.json: error: /status/dma/busy: status bit 'CTRL.op' is in register 'CTRL', "
            "which command 'dma' writes (/commands/dma/select); make it the doorbell's "
            "start_bit, guard it with a write_enable field, or mark 'CTRL' \"write\": \"rmw\"");
  EXPECT_EQ(errOf([](json &j) {
              rmwBusy(j);
              set(j, "/status/dma/done",
                  json{{"field", "CTRL.busy"}, {"sticky", true}, {"clear", "read"}});
              del(j, "/status/dma/busy");
            }),
            "mini.json: error: /status/dma/done/clear: a bit cleared by reading cannot be in "
            "read-modify-write register 'CTRL' (the read of every command that writes it would "
            "clear it)");
}

TEST(TargetControl, InitIsAccepted) {
  auto r = parseEdited([](json &j) {
    j["init"] = {{{"field", "DIMS.k"}, {"value", 2}}, {{"register", "MULT"}, {"value", 7}}};
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_EQ(r->init.size(), 2u);
  EXPECT_EQ(r->init[1].field.text, "MULT");
  CTable t(*r);
  EXPECT_EQ(t.get()->num_init, 2);
  EXPECT_EQ(t.get()->init[0].value, 2u);
  std::string c = emitCTableSource(*r);
  EXPECT_NE(c.find("    .init = mini_init,\n    .num_init = 2,\n"), std::string::npos) << c;
  EXPECT_NE(emitRegisterHeader(*r).find(
                "/* Init (npucc_hal_init writes these, in order): DIMS.k = 2; MULT = 7; */"),
            std::string::npos);
  // Without init the table has no init entry (as before).
  auto plain = parseEdited([](json &) {});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(emitCTableSource(*plain).find(".init"), std::string::npos);
}

TEST(TargetControl, InitRefusals) {
  EXPECT_EQ(errOf([](json &j) { j["init"] = json::object(); }),
            "mini.json: error: /init: expected an array, got object");
  EXPECT_EQ(errOf([](json &j) {
              j["init"] = {{{"field", "STATUS.busy"}, {"value", 1}}};
            }),
            "mini.json: error: /init/0: init writes 'STATUS.busy' in status register 'STATUS'; "
            "status bits are set by the NPU");
  EXPECT_EQ(errOf([](json &j) {
              j["init"] = {{{"field", "CTRL.op"}, {"value", 4}}};
            }),
            "mini.json: error: /init/0/value: value 4 does not fit in 2-bit field 'CTRL.op'");
  EXPECT_EQ(errOf([](json &j) {
              j["init"] = {{{"field", "CTRL.op"}}};
            }),
            "mini.json: error: /init/0: missing required field 'value'");
}
