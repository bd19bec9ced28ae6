//===- sim_control_test.cpp - Clear registers and start bits, run ---------===//
//
// Issue 19, phase 2, in the HAL and the simulator: a sticky DONE cleared by
// writing a value into a field of a separate clear register (the HAL's wait
// clears it that way; the simulator clears it only for that value), and a
// busy bit that is the doorbell itself (reads as the doorbell value until
// the command completes; the opcode bits written beside it read back; the
// HAL polls it). Descriptions are test/target/good_minimal.json, edited.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_sim.h"

#include <gtest/gtest.h>

#include "SimTarget.h"

#include "TargetJsonEdit.h"

#include <memory>

using namespace npucc::target;
using namespace npucc::test;

namespace {

struct Npu : npucc::test::SimTarget {
  std::vector<uint8_t> Ram = std::vector<uint8_t>(4096, 5);

  explicit Npu(const std::function<void(json &)> &edit) : SimTarget(parseEdited(edit)) {
    if (!Sim)
      return;
    EXPECT_EQ(npucc_sim_map(Sim, 0x1000, Ram.data(), Ram.size()), 0);
  }

  std::vector<int64_t> dmaParams(uint64_t len) {
    std::vector<int64_t> p(NPUCC_P_COUNT);
    npucc_npu_defaults(p.data());
    p[NPUCC_P_SRC_ADDR] = 0x1000, p[NPUCC_P_DST_ADDR] = 0;
    p[NPUCC_P_LENGTH] = int64_t(len);
    return p;
  }
  int dma(uint64_t len) {
    auto p = dmaParams(len);
    return npucc_npu_issue(D, NPUCC_KIND_DMA, p.data(), nullptr);
  }
  /// The command's registers written directly (no acknowledgement first).
  void rawDma(uint64_t len) {
    auto p = dmaParams(len);
    npucc_reg_write w[NPUCC_MAX_CMD_REGS];
    int n = 0;
    ASSERT_EQ(npucc_npu_encode(D, NPUCC_KIND_DMA, p.data(), w, &n, nullptr), NPUCC_OK);
    for (int i = 0; i < n; ++i)
      npucc_sim_reg_write(Sim, D->regs[w[i].reg].offset, w[i].value, D->regs[w[i].reg].width);
  }
  uint64_t reg(const std::string &name) {
    for (const Register &r : T.registers)
      if (r.name == name)
        return npucc_sim_reg_read(Sim, r.offset, uint8_t(r.width));
    ADD_FAILURE() << "no register " << name;
    return 0;
  }
  void write(const std::string &name, uint64_t v) {
    for (const Register &r : T.registers)
      if (r.name == name)
        return npucc_sim_reg_write(Sim, r.offset, v, uint8_t(r.width));
    ADD_FAILURE() << "no register " << name;
  }
  std::string err() const { return npucc_sim_error(Sim); }
  /// The scratchpad bytes a small matmul reads, written.
  void fillSpm() {
    std::vector<uint8_t> z(512, 1);
    ASSERT_EQ(npucc_sim_spm_write(Sim, 0, z.data(), z.size()), 0);
  }
};

/// DMA DONE: IRQ.d, sticky, cleared by writing 2 into IRQ_CLR.d (2 bits at
/// bit 4), required before the next DMA; busy bits as in good_minimal.
void clearRegister(json &j) {
  j["registers"].push_back(
      {{"name", "IRQ"}, {"offset", 40}, {"fields", {{{"name", "d"}, {"lsb", 0}, {"width", 1}}}}});
  j["registers"].push_back({{"name", "IRQ_CLR"},
                            {"offset", 44},
                            {"fields", {{{"name", "d"}, {"lsb", 4}, {"width", 2}}}}});
  del(j, "/status/register");
  del(j, "/status/dma/busy");
  j["status"]["dma"]["done"] = {{"field", "IRQ.d"},
                                {"sticky", true},
                                {"require_clear", true},
                                {"clear", {{"field", "IRQ_CLR.d"}, {"value", 2}}}};
}

/// Both engines started through CTRL.go, which is their busy bit.
void startBit(json &j) {
  del(j, "/status/register");
  set(j, "/status/dma/busy", json{{"field", "CTRL.go"}, {"start_bit", true}});
  set(j, "/status/compute/busy", json{{"field", "CTRL.go"}, {"start_bit", true}});
}

} // namespace

TEST(SimControl, DoneClearedThroughAnotherRegister) {
  Npu n(clearRegister);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(n.dma(64), NPUCC_OK);
    ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_DMA, 100000), NPUCC_OK) << n.err();
    EXPECT_EQ(n.reg("IRQ") & 1u, 0u) << "the wait must clear DONE through IRQ_CLR.d = 2";
  }
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
  // The simulator clears it only when the clear value is written there.
  n.rawDma(64);
  npucc_sim_advance_cpu(n.Sim, 100000);
  EXPECT_EQ(n.reg("IRQ") & 1u, 1u);
  n.write("IRQ_CLR", 1u << 4); // 1, not 2
  n.write("IRQ_CLR", 2u);      // 2, but outside the field
  EXPECT_EQ(n.reg("IRQ") & 1u, 1u);
  n.write("IRQ_CLR", 2u << 4);
  EXPECT_EQ(n.reg("IRQ") & 1u, 0u);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

TEST(SimControl, DoneNotClearedThroughTheClearRegisterFailsTheNextCommand) {
  Npu n(clearRegister);
  n.rawDma(64);
  npucc_sim_advance_cpu(n.Sim, 100000);
  n.write("IRQ_CLR", 3u << 4); // the wrong value clears nothing
  n.rawDma(64);
  EXPECT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_NE(n.err().find("sticky DONE bit of the DMA engine (set by command #0) was not cleared"),
            std::string::npos)
      << n.err();
}

TEST(SimControl, StartBitReadsAsBusyUntilTheCommandCompletes) {
  Npu n(startBit);
  n.rawDma(4096);
  const npucc_sim_cmd_stats *c = npucc_sim_command(n.Sim, 0);
  ASSERT_NE(c, nullptr);
  ASSERT_GT(c->end, npucc_sim_cpu_cycles(n.Sim) + 10);
  // GO (bit 0) reads 1 while the DMA runs; the opcode bits (1..2) read as written (0).
  EXPECT_EQ(n.reg("CTRL"), 1u);
  npucc_sim_advance_cpu(n.Sim, c->end - npucc_sim_cpu_cycles(n.Sim));
  EXPECT_EQ(n.reg("CTRL"), 0u);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
  // A command started while GO still reads 1 is a hazard, as for any busy engine.
  n.rawDma(4096);
  n.rawDma(16);
  EXPECT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_NE(n.err().find("started while the DMA engine is busy"), std::string::npos) << n.err();
}

TEST(SimControl, HalPollsTheStartBit) {
  Npu n(startBit);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(n.dma(4096), NPUCC_OK);
    ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_DMA, 100000), NPUCC_OK) << n.err();
    EXPECT_EQ(n.reg("CTRL") & 1u, 0u);
  }
  // The opcode written with the last command reads back beside GO.
  std::vector<int64_t> p(NPUCC_P_COUNT);
  npucc_npu_defaults(p.data());
  p[NPUCC_P_M] = p[NPUCC_P_K] = p[NPUCC_P_N] = 2;
  p[NPUCC_P_IN_ADDR] = 0, p[NPUCC_P_W_ADDR] = 64, p[NPUCC_P_BIAS_ADDR] = 128,
  p[NPUCC_P_OUT_ADDR] = 256;
  ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_MATMUL, p.data(), nullptr), NPUCC_OK);
  ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_OK) << n.err();
  EXPECT_EQ(n.reg("CTRL"), 1u << 1) << "op = 1 (matmul), GO idle";
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 4u);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

namespace {

/// MODE: x (bits 0..3, guarded by x_we, bit 8) and y (bits 4..7, guarded by
/// y_we, bit 9); matmul's k is bound to MODE.x.
void guardedMode(json &j) {
  j["registers"].push_back({{"name", "MODE"},
                            {"offset", 48},
                            {"fields",
                             {{{"name", "x"}, {"lsb", 0}, {"width", 4}, {"write_enable", "x_we"}},
                              {{"name", "y"}, {"lsb", 4}, {"width", 4}, {"write_enable", "y_we"}},
                              {{"name", "x_we"}, {"lsb", 8}, {"width", 1}},
                              {{"name", "y_we"}, {"lsb", 9}, {"width", 1}}}}});
  set(j, "/commands/matmul/params/k", "MODE.x");
}

std::vector<int64_t> matmulParams() {
  std::vector<int64_t> p(NPUCC_P_COUNT);
  npucc_npu_defaults(p.data());
  p[NPUCC_P_M] = p[NPUCC_P_K] = p[NPUCC_P_N] = 2;
  p[NPUCC_P_IN_ADDR] = 0, p[NPUCC_P_W_ADDR] = 64, p[NPUCC_P_BIAS_ADDR] = 128,
  p[NPUCC_P_OUT_ADDR] = 256;
  return p;
}

/// CTRL written read-modify-write, with a mode field (bits 8..11) that no
/// command writes.
void rmwCtrl(json &j) {
  j["registers"][0]["write"] = "rmw";
  j["registers"][0]["fields"].push_back({{"name", "mode"}, {"lsb", 8}, {"width", 4}});
}

} // namespace

TEST(SimControl, GuardedWriteLeavesTheSiblingUnchanged) {
  Npu n(guardedMode);
  // The command layer sets x's write enable, not y's.
  auto p = matmulParams();
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int cnt = 0;
  ASSERT_EQ(npucc_npu_encode(n.D, NPUCC_KIND_MATMUL, p.data(), w, &cnt, nullptr), NPUCC_OK);
  bool seen = false;
  for (int i = 0; i < cnt; ++i)
    if (w[i].reg == 9) { // MODE
      seen = true;
      EXPECT_EQ(w[i].value, 0x102u) << "x = 2 with x_we = 1, y_we = 0";
      EXPECT_EQ(w[i].mask, 0x10Fu);
    }
  EXPECT_TRUE(seen);
  n.write("MODE", 0x250u); // y = 5 (y_we = 1)
  EXPECT_EQ(n.reg("MODE") & 0xF0u, 0x50u);
  n.write("MODE", 0x103u); // x = 3, y = 0 without y_we: y stays 5
  EXPECT_EQ(n.reg("MODE") & 0xFFu, 0x53u);
  n.write("MODE", 0x0A0u); // no write enable at all: nothing changes
  EXPECT_EQ(n.reg("MODE") & 0xFFu, 0x53u);
  n.fillSpm();
  ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_MATMUL, p.data(), nullptr), NPUCC_OK);
  ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_OK) << n.err();
  EXPECT_EQ(n.reg("MODE") & 0xFFu, 0x52u) << "the matmul wrote x = 2; y kept 5";
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

TEST(SimControl, ReadModifyWriteKeepsForeignBits) {
  Npu n(rmwCtrl);
  n.write("CTRL", 9u << 8); // mode = 9; GO idle starts nothing
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(n.dma(64), NPUCC_OK);
    ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_DMA, 100000), NPUCC_OK) << n.err();
    EXPECT_EQ(n.reg("CTRL"), 9u << 8) << "the DMA (op 0) must keep mode = 9";
  }
  auto p = matmulParams();
  n.fillSpm();
  ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_MATMUL, p.data(), nullptr), NPUCC_OK);
  ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_OK) << n.err();
  EXPECT_EQ(n.reg("CTRL"), (9u << 8) | (1u << 1)) << "op = 1 replaced, mode kept";
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 3u);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

TEST(SimControl, InitWritesInOrderBeforeTheFirstCommand) {
  auto edit = [](json &j) {
    rmwCtrl(j);
    j["init"] = {{{"field", "CTRL.mode"}, {"value", 1}},
                 {{"register", "MULT"}, {"value", 0x1234}},
                 {{"field", "CTRL.mode"}, {"value", 6}}};
  };
  {
    Npu n(edit); // attaching runs npucc_hal_init
    EXPECT_EQ(n.reg("CTRL"), 6u << 8) << "the last init write to CTRL.mode wins";
    EXPECT_EQ(n.reg("MULT"), 0x1234u);
    ASSERT_EQ(n.dma(64), NPUCC_OK);
    ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_DMA, 100000), NPUCC_OK) << n.err();
    EXPECT_EQ(n.reg("CTRL"), 6u << 8);
    EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
  }
  {
    // Firmware that skips npucc_hal_init (or does the writes out of order).
    Npu n(edit);
    npucc_sim_destroy(n.Sim);
    n.Sim = npucc_sim_create(n.D); // not attached: no npucc_hal_init
    n.write("MULT", 0x1234u);
    n.write("CTRL", 1u << 8);
    EXPECT_FALSE(npucc_sim_failed(n.Sim));
    n.rawDma(64);
    EXPECT_TRUE(npucc_sim_failed(n.Sim));
    // MULT first is out of order: only the first write (CTRL.mode = 1) counts.
    EXPECT_NE(n.err().find("started before the description's init writes (1 of 3 done; "
                           "npucc_hal_init performs them)"),
              std::string::npos)
        << n.err();
  }
}

TEST(SimControl, ClearingAWrite1BitOfAReadModifyWriteRegisterKeepsItsOtherBits) {
  Npu n([](json &j) {
    rmwCtrl(j);
    j["registers"][0]["fields"].push_back({{"name", "err"}, {"lsb", 4}, {"width", 1}});
    del(j, "/status/register");
    set(j, "/status/dma/error", json{{"field", "CTRL.err"}, {"clear", "write1"}});
  });
  n.write("CTRL", 9u << 8); // mode = 9
  auto p = n.dmaParams(64);
  p[NPUCC_P_DST_ADDR] = 0x100000; // outside every memory: the DMA fails
  ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_DMA, p.data(), nullptr), NPUCC_OK);
  EXPECT_EQ(npucc_hal_wait(NPUCC_ENGINE_DMA, 100000), NPUCC_ERR_DEVICE);
  EXPECT_EQ(n.reg("CTRL") & ~(1u << 4), 9u << 8) << "clearing err must keep mode = 9";
}
