//===- sim_status_test.cpp - Completion, errors, queues and limits as described ===//
//
// The HAL's wait and the simulator implement the status bits a description
// states: sticky DONE bits cleared by writing 1 (and a run that never clears
// one fails when the description requires it), clear-on-read interrupt status
// that must not lose another engine's bit, active-low busy bits, error code
// fields (one shared by two engines keeps the DMA's error), job queues (full
// queue, in-order execution, back-to-back timing), opcode doorbells with a
// no-op value, bank rules, DMA and per-operation limits, and the timing of
// slow windows. Uses test/target/npu-fourth.json and npu-queue.json.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_sim.h"

#include <gtest/gtest.h>

#include "SimTarget.h"

#include "TestTargets.h"

#include <cstring>
#include <memory>

using namespace npucc::target;
using npucc::test::testTarget;

namespace {

struct Npu : npucc::test::SimTarget {
  std::vector<uint8_t> Ram = std::vector<uint8_t>(1 << 16, 5);
  uint64_t Sys = 0;

  explicit Npu(const std::string &file) : SimTarget(loadTarget(testTarget(file))) {
    if (!Sim)
      return;
    for (const SystemRange &s : T.system)
      if (s.writable && !Sys)
        Sys = s.base;
    EXPECT_EQ(npucc_sim_map(Sim, Sys, Ram.data(), Ram.size()), 0);
  }

  uint64_t spm(uint64_t offset) const { return T.scratchpads[0].base + offset; }
  uint64_t bank(unsigned b, uint64_t offset = 0) const {
    return spm(b * T.scratchpads[0].bankSize + offset);
  }
  std::vector<int64_t> params() {
    std::vector<int64_t> p(NPUCC_P_COUNT);
    npucc_npu_defaults(p.data());
    return p;
  }
  int issue(int kind, const std::vector<int64_t> &p) {
    return npucc_npu_issue(D, kind, p.data(), nullptr);
  }
  /// Writes a command's registers directly, as firmware that bypasses the HAL
  /// would (the HAL acknowledges a stale sticky DONE before it issues).
  void rawIssue(int kind, const std::vector<int64_t> &p) {
    npucc_reg_write w[NPUCC_MAX_CMD_REGS];
    int n = 0;
    ASSERT_EQ(npucc_npu_encode(D, kind, p.data(), w, &n, nullptr), NPUCC_OK);
    for (int i = 0; i < n; ++i)
      npucc_sim_reg_write(Sim, D->regs[w[i].reg].offset, w[i].value, D->regs[w[i].reg].width);
  }
  std::vector<int64_t> dmaParams(uint64_t src, uint64_t dst, uint64_t len) {
    auto p = params();
    p[NPUCC_P_SRC_ADDR] = int64_t(src), p[NPUCC_P_DST_ADDR] = int64_t(dst);
    p[NPUCC_P_LENGTH] = int64_t(len);
    return p;
  }
  int dma(uint64_t src, uint64_t dst, uint64_t len) {
    auto p = params();
    p[NPUCC_P_SRC_ADDR] = int64_t(src), p[NPUCC_P_DST_ADDR] = int64_t(dst);
    p[NPUCC_P_LENGTH] = int64_t(len);
    return issue(NPUCC_KIND_DMA, p);
  }
  int wait(int e, uint32_t polls = 10000000) { return npucc_hal_wait(e, polls); }
  /// A 1x1 conv 4x4x16 -> 4x4x16 with operands at the given addresses.
  std::vector<int64_t> conv(uint64_t in, uint64_t w, uint64_t bias, uint64_t rq, uint64_t out) {
    auto p = params();
    p[NPUCC_P_IN_ADDR] = int64_t(in), p[NPUCC_P_W_ADDR] = int64_t(w);
    p[NPUCC_P_BIAS_ADDR] = int64_t(bias), p[NPUCC_P_OUT_ADDR] = int64_t(out);
    if (T.operation("conv")->perChannelRequant)
      p[NPUCC_P_RQ_ADDR] = int64_t(rq), p[NPUCC_P_PER_CHANNEL] = 1;
    p[NPUCC_P_IN_H] = p[NPUCC_P_IN_W] = p[NPUCC_P_OUT_H] = p[NPUCC_P_OUT_W] = 4;
    p[NPUCC_P_IN_CH] = p[NPUCC_P_OUT_CH] = 16;
    return p;
  }
  /// Fills [addr, addr+len) of the scratchpad (bias and requant tables stay valid).
  void fill(uint64_t addr, uint32_t len) {
    std::vector<uint8_t> z(len, 0);
    for (uint32_t i = 0; i + 8 <= len; i += 8)
      z[i] = 1; // requant multiplier / shift words small and positive
    ASSERT_EQ(npucc_sim_spm_write(Sim, addr, z.data(), len), 0);
  }
  uint64_t readReg(const std::string &name) {
    for (const Register &r : T.registers)
      if (r.name == name)
        return npucc_sim_reg_read(Sim, r.offset, uint8_t(r.width));
    ADD_FAILURE() << "no register " << name;
    return 0;
  }
  void writeReg(const std::string &name, uint64_t v) {
    for (const Register &r : T.registers)
      if (r.name == name)
        return npucc_sim_reg_write(Sim, r.offset, v, uint8_t(r.width));
    ADD_FAILURE() << "no register " << name;
  }
  std::string err() const { return npucc_sim_error(Sim); }
};

// --- Sticky DONE, write 1 to clear, required before the next command -----------------------

TEST(SimStatus, StickyDoneClearedByTheWaitAllowsTheNextCommand) {
  Npu n("npu-fourth.json");
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(n.dma(n.Sys, n.spm(0), 64), NPUCC_OK);
    ASSERT_EQ(n.wait(NPUCC_ENGINE_DMA), NPUCC_OK) << n.err();
    EXPECT_EQ(n.readReg("IRQ") & 1u, 0u) << "the wait must clear DONE (write 1)";
  }
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

TEST(SimStatus, StickyDoneNeverClearedFailsTheRun) {
  Npu n("npu-fourth.json");
  ASSERT_EQ(n.dma(n.Sys, n.spm(0), 64), NPUCC_OK);
  // Poll DONE by hand, but never write 1 to clear it.
  for (int i = 0; i < 100000 && !(n.readReg("IRQ") & 1u); ++i)
    ;
  EXPECT_EQ(n.readReg("IRQ") & 1u, 1u) << "sticky: still set after reading";
  n.rawIssue(NPUCC_KIND_DMA, n.dmaParams(n.Sys, n.spm(64), 64));
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "command #1 (dma): started while the sticky DONE bit of the DMA engine (set "
                     "by command #0) was not cleared; the description requires clearing it "
                     "before the engine's next command");
  // The error reaches the firmware through the shared code field.
  EXPECT_EQ(n.wait(NPUCC_ENGINE_DMA), NPUCC_ERR_DEVICE);
  EXPECT_EQ(npucc_hal_last_error(nullptr), uint32_t(NPUCC_DEVERR_PROTOCOL));
}

// --- One error field shared by two engines ---------------------------------------------------

TEST(SimStatus, SharedErrorFieldKeepsTheDmaError) {
  Npu n("npu-fourth.json");
  // A good compute command and a DMA into read-only flash: the compute engine's
  // "no error" must not hide the DMA's error in the shared field.
  n.fill(n.bank(0), 256), n.fill(n.bank(1), 256), n.fill(n.bank(0, 256), 256);
  ASSERT_EQ(n.issue(NPUCC_KIND_CONV,
                    n.conv(n.bank(0), n.bank(1), n.bank(0, 256), n.bank(0, 320), n.bank(1, 512))),
            NPUCC_OK);
  const SystemRange &flash = n.T.system[1];
  ASSERT_FALSE(flash.writable);
  std::vector<uint8_t> rom(256, 0);
  ASSERT_EQ(npucc_sim_map(n.Sim, flash.base, rom.data(), rom.size()), 0);
  ASSERT_EQ(n.dma(n.bank(0, 1024), flash.base, 16), NPUCC_OK);
  EXPECT_EQ(n.wait(NPUCC_ENGINE_COMPUTE), NPUCC_ERR_DEVICE);
  int engine = 0;
  EXPECT_EQ(npucc_hal_last_error(&engine), uint32_t(NPUCC_DEVERR_MEMORY));
  EXPECT_EQ(engine, -1) << "one field for both engines cannot say which one failed";
  EXPECT_NE(n.err().find("writes read-only system memory"), std::string::npos) << n.err();
  // Reported once, then cleared (write 1s) as the description says.
  EXPECT_EQ(n.readReg("ERR"), 0u);
}

// --- Clear-on-read interrupt status, active-low busy, job queue ------------------------------

TEST(SimStatus, ClearOnReadDoesNotLoseTheOtherEnginesDone) {
  Npu n("npu-queue.json");
  n.fill(n.bank(0), 1024), n.fill(n.bank(1), 1024), n.fill(n.bank(2), 1024);
  // A short compute command, then a long DMA; wait for the DMA first. Its
  // acknowledging read of IRQ also clears the compute engine's DONE, which the
  // HAL must remember: the compute wait then needs no DONE from the hardware.
  ASSERT_EQ(n.issue(NPUCC_KIND_CONV, n.conv(n.bank(0), n.bank(1), n.bank(2), 0, n.bank(2, 512))),
            NPUCC_OK);
  ASSERT_EQ(n.dma(n.Sys, n.bank(0, 4096), 4000), NPUCC_OK);
  ASSERT_EQ(n.wait(NPUCC_ENGINE_DMA), NPUCC_OK) << n.err();
  EXPECT_EQ(n.readReg("IRQ"), 0u) << "read again: cleared by the HAL's read";
  EXPECT_EQ(n.wait(NPUCC_ENGINE_COMPUTE, 3), NPUCC_OK) << n.err();
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

TEST(SimStatus, StaleStickyDoneMisleadsTheWaitAndTheRaceIsCaught) {
  Npu n("npu-queue.json");
  n.fill(n.bank(0), 2048), n.fill(n.bank(1), 2048), n.fill(n.bank(2), 2048);
  auto a = n.conv(n.bank(0), n.bank(1), n.bank(2), 0, n.bank(2, 512));
  ASSERT_EQ(n.issue(NPUCC_KIND_CONV, a), NPUCC_OK);
  npucc_sim_advance_cpu(n.Sim, 100000); // A is done; nobody reads IRQ (its DONE stays set)
  auto b = a;
  b[NPUCC_P_IN_H] = b[NPUCC_P_IN_W] = b[NPUCC_P_OUT_H] = b[NPUCC_P_OUT_W] = 8;
  b[NPUCC_P_OUT_ADDR] = int64_t(n.bank(2, 1024));
  n.rawIssue(NPUCC_KIND_CONV, b);
  // B runs, but the interrupt status still shows A's DONE ...
  EXPECT_EQ(n.readReg("IRQ") & 2u, 2u);
  // ... which that read cleared; the firmware that trusts it reads B's output too early.
  ASSERT_EQ(n.dma(n.bank(2, 1024), n.Sys, 64), NPUCC_OK);
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_NE(n.err().find("race: DMA source reads scratchpad byte"), std::string::npos) << n.err();
}

TEST(SimStatus, TheHalAcknowledgesAStaleDoneBeforeIssuing) {
  // The same sequence through the command layer: the wait for B is not misled.
  Npu n("npu-queue.json");
  n.fill(n.bank(0), 2048), n.fill(n.bank(1), 2048), n.fill(n.bank(2), 2048);
  auto a = n.conv(n.bank(0), n.bank(1), n.bank(2), 0, n.bank(2, 512));
  ASSERT_EQ(n.issue(NPUCC_KIND_CONV, a), NPUCC_OK);
  npucc_sim_advance_cpu(n.Sim, 100000);
  auto b = a;
  b[NPUCC_P_IN_H] = b[NPUCC_P_IN_W] = b[NPUCC_P_OUT_H] = b[NPUCC_P_OUT_W] = 8;
  b[NPUCC_P_OUT_ADDR] = int64_t(n.bank(2, 1024));
  ASSERT_EQ(n.issue(NPUCC_KIND_CONV, b), NPUCC_OK);
  ASSERT_EQ(n.wait(NPUCC_ENGINE_COMPUTE), NPUCC_OK);
  ASSERT_EQ(n.dma(n.bank(2, 1024), n.Sys, 64), NPUCC_OK);
  ASSERT_EQ(n.wait(NPUCC_ENGINE_DMA), NPUCC_OK);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

TEST(SimStatus, ActiveLowBusyBit) {
  Npu n("npu-queue.json");
  ASSERT_EQ(n.readReg("STS") & 1u, 1u) << "idle: dma_idle reads 1";
  ASSERT_EQ(n.dma(n.Sys, n.bank(0), 4000), NPUCC_OK);
  EXPECT_EQ(n.readReg("STS") & 1u, 0u) << "busy: dma_idle reads 0";
  ASSERT_EQ(n.wait(NPUCC_ENGINE_DMA), NPUCC_OK);
  EXPECT_EQ(n.readReg("STS") & 1u, 1u);
}

TEST(SimStatus, JobQueueRunsInOrderBackToBack) {
  Npu n("npu-queue.json");
  // Four DMAs committed without waiting: system -> scratchpad -> system, each
  // reading what the previous one wrote. In-order execution makes that legal.
  for (int i = 0; i < 1024; ++i)
    n.Ram[size_t(i)] = uint8_t(i * 3);
  ASSERT_EQ(n.dma(n.Sys, n.bank(0), 1024), NPUCC_OK);
  ASSERT_EQ(n.dma(n.bank(0), n.bank(1), 1024), NPUCC_OK);
  ASSERT_EQ(n.dma(n.bank(1), n.bank(2), 1024), NPUCC_OK);
  ASSERT_EQ(n.dma(n.bank(2), n.Sys + 8192, 1024), NPUCC_OK);
  EXPECT_EQ(n.readReg("QS") & 0xFu, 0u) << "four jobs: no free DMA slot";
  ASSERT_EQ(n.wait(NPUCC_ENGINE_DMA), NPUCC_OK) << n.err();
  EXPECT_EQ(std::memcmp(n.Ram.data(), n.Ram.data() + 8192, 1024), 0);
  for (size_t i = 1; i < 4; ++i)
    EXPECT_EQ(npucc_sim_command(n.Sim, i)->start, npucc_sim_command(n.Sim, i - 1)->end) << i;
  EXPECT_EQ(n.readReg("QS") & 0xFu, 4u);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

TEST(SimStatus, CommitToAFullQueueFails) {
  Npu n("npu-queue.json");
  auto p = n.params();
  p[NPUCC_P_SRC_ADDR] = int64_t(n.Sys), p[NPUCC_P_DST_ADDR] = int64_t(n.bank(0));
  p[NPUCC_P_LENGTH] = 4000;
  // Write the jobs straight to the registers, without acquiring a slot.
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int k = 0;
  ASSERT_EQ(npucc_npu_encode(n.D, NPUCC_KIND_DMA, p.data(), w, &k, nullptr), NPUCC_OK);
  for (int job = 0; job < 5; ++job)
    for (int i = 0; i < k; ++i)
      npucc_sim_reg_write(n.Sim, n.D->regs[w[i].reg].offset, w[i].value, n.D->regs[w[i].reg].width);
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "command #4 (dma): committed while the DMA engine's job queue is full (4 "
                     "commands)");
  // Through the command layer the CPU waits for a slot instead.
  Npu m("npu-queue.json");
  for (int job = 0; job < 6; ++job)
    ASSERT_EQ(m.dma(m.Sys, m.bank(0, uint64_t(job) * 16), 16), NPUCC_OK);
  ASSERT_EQ(m.wait(NPUCC_ENGINE_DMA), NPUCC_OK);
  EXPECT_FALSE(npucc_sim_failed(m.Sim)) << m.err();
}

TEST(SimStatus, QueueDoesNotOrderAcrossEngines) {
  Npu n("npu-queue.json");
  n.fill(n.bank(1), 1024), n.fill(n.bank(2), 1024);
  ASSERT_EQ(n.dma(n.Sys, n.bank(0), 256), NPUCC_OK);
  // The conv reads what the DMA writes, on another engine, without a wait.
  ASSERT_EQ(n.issue(NPUCC_KIND_CONV, n.conv(n.bank(0), n.bank(1), n.bank(2), 0, n.bank(2, 512))),
            NPUCC_OK);
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_NE(n.err().find("race: input reads scratchpad byte"), std::string::npos) << n.err();
}

// --- Opcode doorbells ------------------------------------------------------------------------

TEST(SimStatus, OpcodeNoOpAndUnknownOpcode) {
  Npu n("npu-fourth.json");
  n.writeReg("CMD", 0x10); // op = 0 (no-op) with a mode bit: starts nothing
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 0u);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
  n.writeReg("CMD", 9); // no command has opcode 9
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "register CMD written with 0x9: doorbell/opcode field value 9 starts no "
                     "command (its idle value is 0)");
  EXPECT_EQ(n.wait(NPUCC_ENGINE_DMA), NPUCC_ERR_DEVICE) << "the firmware must not wait forever";
}

// --- Banks ------------------------------------------------------------------------------------

TEST(SimStatus, OperandsThatMustBeInDifferentBanks) {
  Npu n("npu-fourth.json");
  n.fill(n.bank(0), 4096);
  // Input and weights both in bank 0.
  ASSERT_EQ(n.issue(NPUCC_KIND_CONV,
                    n.conv(n.bank(0), n.bank(0, 512), n.bank(0, 1024), n.bank(0, 1152), n.bank(1))),
            NPUCC_OK);
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "command #0 (conv): bank conflict: operands in and w are both in bank 0 of "
                     "scratchpad 'sram', which must keep them in different banks");
}

TEST(SimStatus, BankConflictSlowdown) {
  uint64_t cycles[2];
  for (int conflict = 0; conflict < 2; ++conflict) {
    Npu n("npu-queue.json");
    n.fill(n.bank(0), 2048), n.fill(n.bank(1), 2048), n.fill(n.bank(2), 2048);
    // Weights and output share bank 1 in the second run.
    uint64_t out = conflict ? n.bank(1, 1024) : n.bank(2, 1024);
    ASSERT_EQ(n.issue(NPUCC_KIND_CONV, n.conv(n.bank(0), n.bank(1), n.bank(2), 0, out)), NPUCC_OK);
    ASSERT_EQ(n.wait(NPUCC_ENGINE_COMPUTE), NPUCC_OK) << n.err();
    cycles[conflict] = npucc_sim_command(n.Sim, 0)->cycles;
  }
  uint64_t overhead = 6; // command_overhead_cycles
  EXPECT_EQ(cycles[1] - overhead, 3 * (cycles[0] - overhead));
}

// --- DMA and per-operation limits, window timing -------------------------------------------

TEST(SimStatus, ExplicitLimitsBelowWhatFieldsHold) {
  Npu n("npu-fourth.json");
  // DMA_LEN.length holds 65535, the description says 16384.
  ASSERT_EQ(n.dma(n.Sys, n.spm(0), 20000), NPUCC_OK);
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_NE(n.err().find("exceed the DMA's limits 16384/"), std::string::npos) << n.err();
}

TEST(SimStatus, PerOperationCapabilities) {
  struct Case {
    const char *what;
    std::function<void(std::vector<int64_t> &)> edit;
    const char *message;
  } cases[] = {
      {"per-tensor conv", [](auto &p) { p[NPUCC_P_PER_CHANNEL] = 0; },
       "per-tensor requant not supported"},
      {"bottom padding 2 > 1",
       [](auto &p) {
         p[NPUCC_P_K_H] = 3, p[NPUCC_P_PAD_TOP] = 0, p[NPUCC_P_OUT_H] = 2, p[NPUCC_P_IN_H] = 2;
       },
       "padding top 0 bottom 2 left 0 right 0 exceeds 1/1/2/2"},
      {"kernel 5x3 (heights 1, 3)", [](auto &p) { p[NPUCC_P_K_H] = 5, p[NPUCC_P_K_W] = 3; },
       "kernel 5x3 not supported"},
      {"input height 600 > 512", [](auto &p) { p[NPUCC_P_IN_H] = 600; },
       "input 600x4 or output 4x4 exceeds the operation's limits"},
  };
  for (const Case &c : cases) {
    Npu n("npu-fourth.json");
    n.fill(n.bank(0), 4096), n.fill(n.bank(1), 4096);
    auto p = n.conv(n.bank(0), n.bank(1), n.bank(0, 1024), n.bank(0, 1152), n.bank(0, 2048));
    c.edit(p);
    ASSERT_EQ(n.issue(NPUCC_KIND_CONV, p), NPUCC_OK) << c.what;
    EXPECT_NE(n.err().find(c.message), std::string::npos) << c.what << ": " << n.err();
  }
  // A depthwise channel multiplier the NPU does not have (1 and 2 only).
  Npu n("npu-fourth.json");
  auto p = n.params();
  p[NPUCC_P_DEPTH_MULT] = 3;
  ASSERT_EQ(n.issue(NPUCC_KIND_DEPTHWISE, p), NPUCC_OK);
  EXPECT_NE(n.err().find("channel multiplier 3"), std::string::npos) << n.err();
}

TEST(SimStatus, SlowWindowLatencyAndRate) {
  Npu n("npu-fourth.json");
  std::vector<uint8_t> rom(4096, 9);
  const SystemRange &flash = n.T.system[1];
  ASSERT_EQ(npucc_sim_map(n.Sim, flash.base, rom.data(), rom.size()), 0);
  ASSERT_EQ(n.dma(flash.base, n.spm(0), 1000), NPUCC_OK);
  ASSERT_EQ(n.wait(NPUCC_ENGINE_DMA), NPUCC_OK) << n.err();
  // setup 10 + flash latency 40 + 1000 bytes at the flash's 2 bytes/cycle + overhead 8.
  EXPECT_EQ(npucc_sim_command(n.Sim, 0)->cycles, 10u + 40 + 500 + 8);
  // Into DRAM the DMA's write rate (8) limits: 1000 / 8 = 125.
  ASSERT_EQ(n.dma(n.spm(0), n.Sys, 1000), NPUCC_OK);
  ASSERT_EQ(n.wait(NPUCC_ENGINE_DMA), NPUCC_OK) << n.err();
  EXPECT_EQ(npucc_sim_command(n.Sim, 1)->cycles, 10u + 125 + 8);
}

} // namespace
