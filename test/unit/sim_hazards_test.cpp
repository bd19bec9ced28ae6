//===- sim_hazards_test.cpp - The simulator catches bad command streams ---===//
//
// Races between DMA and compute, reads of never-written scratchpad bytes,
// DMA outside the allowed ranges, misaligned addresses, out-of-range field
// values and busy engines are each reported with the command index and fail
// the run; the engine's error bit makes the HAL wait return an error. Also
// checks the two-engine timeline (overlap vs. serialization) and statistics.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_sim.h"

#include <gtest/gtest.h>

#include "SimTarget.h"

#include <cstdio>
#include <cstring>
#include <memory>

#ifndef NPUCC_SOURCE_DIR
#define NPUCC_SOURCE_DIR "."
#endif

using namespace npucc::target;

namespace {

struct Hz : npucc::test::SimTarget {
  std::vector<uint8_t> Ram = std::vector<uint8_t>(1 << 16, 7);
  uint64_t Sys = 0, Spm = 0;

  explicit Hz(const std::string &name) : SimTarget(loadTarget(name)) {
    if (!Sim)
      return;
    for (const SystemRange &s : T.system)
      if (s.writable && !Sys)
        Sys = s.base;
    EXPECT_EQ(npucc_sim_map(Sim, Sys, Ram.data(), uint64_t(Ram.size())), 0);
    Spm = T.scratchpads[0].base;
  }

  std::vector<int64_t> params() {
    std::vector<int64_t> p(NPUCC_P_COUNT);
    npucc_npu_defaults(p.data());
    return p;
  }
  int dma(uint64_t src, uint64_t dst, uint64_t len) {
    auto p = params();
    p[NPUCC_P_SRC_ADDR] = int64_t(src), p[NPUCC_P_DST_ADDR] = int64_t(dst);
    p[NPUCC_P_LENGTH] = int64_t(len);
    return npucc_npu_issue(D, NPUCC_KIND_DMA, p.data(), nullptr);
  }
  int wait(int e) { return npucc_hal_wait(e, 10000000); }
  /// A 1x1 conv, 4x4x16 -> 4x4x16 with per-channel or per-tensor requant.
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
  /// Loads conv operands (in @0, w @256, bias @512, rq @640) with waits; out @1024.
  void loadConvOperands() {
    ASSERT_EQ(dma(Sys, Spm, 768), NPUCC_OK);
    ASSERT_EQ(wait(NPUCC_ENGINE_DMA), NPUCC_OK);
  }
  std::vector<int64_t> stdConv() { return conv(Spm, Spm + 256, Spm + 512, Spm + 640, Spm + 1024); }
  int issue(int kind, const std::vector<int64_t> &p, int *bad = nullptr) {
    return npucc_npu_issue(D, kind, p.data(), bad);
  }
  std::string err() const { return npucc_sim_error(Sim); }
};

const char *Default = "npu-default";
const char *Small = "npu-small";

TEST(SimHazards, CorrectSequenceHasNoError) {
  for (const char *n : {Default, Small}) {
    Hz h(n);
    h.loadConvOperands();
    ASSERT_EQ(h.issue(NPUCC_KIND_CONV, h.stdConv()), NPUCC_OK);
    EXPECT_EQ(h.wait(NPUCC_ENGINE_COMPUTE), NPUCC_OK) << h.err();
    EXPECT_FALSE(npucc_sim_failed(h.Sim)) << h.err();
    EXPECT_EQ(npucc_sim_error_command(h.Sim), -1);
  }
}

TEST(SimHazards, ComputeBeforeDmaWasWaitedForIsARace) {
  Hz h(Default);
  ASSERT_EQ(h.dma(h.Sys, h.Spm, 768), NPUCC_OK);              // command #0, not waited for
  ASSERT_EQ(h.issue(NPUCC_KIND_CONV, h.stdConv()), NPUCC_OK); // command #1
  EXPECT_TRUE(npucc_sim_failed(h.Sim));
  EXPECT_EQ(npucc_sim_error_command(h.Sim), 1);
  EXPECT_NE(h.err().find("command #1 (conv): race"), std::string::npos) << h.err();
  EXPECT_NE(h.err().find("command #0 (dma)"), std::string::npos) << h.err();
  EXPECT_EQ(h.wait(NPUCC_ENGINE_COMPUTE), NPUCC_ERR_DEVICE);
}

TEST(SimHazards, RaceEvenIfTheDmaHappenedToFinishButWasNotObserved) {
  Hz h(Default);
  ASSERT_EQ(h.dma(h.Sys, h.Spm, 768), NPUCC_OK);
  // Burn CPU time on non-status registers until the DMA is long done.
  for (int i = 0; i < 2000; ++i)
    (void)npucc_hal_read(h.D->regs[1].offset, h.D->regs[1].width);
  ASSERT_GT(npucc_sim_cpu_cycles(h.Sim), npucc_sim_command(h.Sim, 0)->end);
  ASSERT_EQ(h.issue(NPUCC_KIND_CONV, h.stdConv()), NPUCC_OK);
  EXPECT_TRUE(npucc_sim_failed(h.Sim));
  EXPECT_NE(h.err().find("race"), std::string::npos) << h.err();
}

TEST(SimHazards, NonConcurrentNpuRejectsComputeWhileDmaBusy) {
  Hz h(Small);
  ASSERT_FALSE(h.T.concurrentDmaCompute);
  h.loadConvOperands();
  ASSERT_EQ(h.dma(h.Sys, h.Spm + 4096, 2048), NPUCC_OK);      // #1 unrelated DMA, still running
  ASSERT_EQ(h.issue(NPUCC_KIND_CONV, h.stdConv()), NPUCC_OK); // #2
  EXPECT_EQ(npucc_sim_error_command(h.Sim), 2);
  EXPECT_NE(h.err().find("DMA engine is busy with command #1"), std::string::npos) << h.err();
}

TEST(SimHazards, OverlapOnConcurrentNpu) {
  Hz h(Default);
  h.loadConvOperands();
  ASSERT_EQ(h.issue(NPUCC_KIND_CONV, h.stdConv()), NPUCC_OK);   // #1 compute
  ASSERT_EQ(h.dma(h.Sys + 4096, h.Spm + 8192, 4096), NPUCC_OK); // #2 overlaps
  ASSERT_EQ(npucc_hal_wait_all(10000000), NPUCC_OK) << h.err();
  const npucc_sim_cmd_stats *c = npucc_sim_command(h.Sim, 1), *d = npucc_sim_command(h.Sim, 2);
  EXPECT_LT(d->start, c->end); // really ran in parallel
  npucc_sim_totals t;
  npucc_sim_get_totals(h.Sim, &t);
  EXPECT_EQ(t.commands, 3u);
  EXPECT_EQ(t.sys_bytes_read, 768u + 4096u);
  EXPECT_EQ(t.macs, 4u * 4u * 16u * 16u);
  EXPECT_GE(t.end_cycles, d->end);
  EXPECT_FALSE(npucc_sim_failed(h.Sim)) << h.err();
}

TEST(SimHazards, ReportListsTotalsCommandsAndError) {
  Hz h(Default);
  h.loadConvOperands();
  npucc_sim_advance_cpu(h.Sim, 1000);
  uint64_t cpu = npucc_sim_cpu_cycles(h.Sim);
  // The command starts after the CPU wrote its registers (one access each).
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int n = 0;
  auto conv = h.stdConv();
  ASSERT_EQ(npucc_npu_encode(h.D, NPUCC_KIND_CONV, conv.data(), w, &n, nullptr), NPUCC_OK);
  ASSERT_EQ(h.issue(NPUCC_KIND_CONV, conv), NPUCC_OK);
  EXPECT_EQ(npucc_sim_command(h.Sim, 1)->start, cpu + uint64_t(n) * h.T.timing.regAccessCycles);
  ASSERT_EQ(h.wait(NPUCC_ENGINE_COMPUTE), NPUCC_OK);
  ASSERT_EQ(h.dma(0x30000000u, h.Spm, 16), NPUCC_OK); // bad: outside every memory
  char buf[4096] = {0};
  FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
  ASSERT_NE(f, nullptr);
  npucc_sim_print_report(h.Sim, f);
  std::fclose(f);
  std::string r = buf;
  EXPECT_NE(r.find("npucc-sim: target npu-default at 500000000 Hz"), std::string::npos) << r;
  EXPECT_NE(r.find("commands 3,"), std::string::npos) << r;
  EXPECT_NE(r.find("#1    conv"), std::string::npos) << r;
  EXPECT_NE(r.find("macs 4096"), std::string::npos) << r;
  EXPECT_NE(r.find("system memory: read 768 bytes"), std::string::npos) << r;
  EXPECT_NE(r.find("error: command #2 (dma)"), std::string::npos) << r;
}

TEST(SimHazards, DmaOverwritingInputOfRunningComputeIsARace) {
  Hz h(Default);
  h.loadConvOperands();
  ASSERT_EQ(h.issue(NPUCC_KIND_CONV, h.stdConv()), NPUCC_OK); // #1 reads Spm..Spm+256
  ASSERT_EQ(h.dma(h.Sys, h.Spm, 64), NPUCC_OK);               // #2 overwrites its input
  EXPECT_EQ(npucc_sim_error_command(h.Sim), 2);
  EXPECT_NE(h.err().find("still in use by command #1 (conv)"), std::string::npos) << h.err();
}

// Issue 13: write-after-write. A DMA into the output of a compute command that
// has not been waited for is a race (the DMA's bytes may be overwritten by the
// compute, or the reverse): the conv only writes Spm+1024.., so only the
// writer check can catch this. After the wait the same DMA is fine.
TEST(SimHazards, DmaOverwritingOutputOfRunningComputeIsARace) {
  for (const char *n : {Default, "npu-queue"}) {
    std::string name = std::string(n) == "npu-queue"
                           ? std::string(NPUCC_SOURCE_DIR) + "/test/target/npu-queue.json"
                           : std::string(n);
    Hz h(name);
    ASSERT_TRUE(h.T.concurrentDmaCompute) << n;
    h.loadConvOperands();
    ASSERT_EQ(h.issue(NPUCC_KIND_CONV, h.stdConv()), NPUCC_OK); // #1 writes Spm+1024..+1280
    ASSERT_FALSE(npucc_sim_failed(h.Sim)) << h.err();
    ASSERT_EQ(h.dma(h.Sys + 4096, h.Spm + 1024 + 128, 16), NPUCC_OK); // #2 into its output
    EXPECT_EQ(npucc_sim_error_command(h.Sim), 2) << n << ": " << h.err();
    EXPECT_NE(h.err().find("dma"), std::string::npos) << h.err();
    EXPECT_NE(h.err().find("still in use by command #1 (conv)"), std::string::npos) << h.err();
  }
  Hz ok(Default);
  ok.loadConvOperands();
  ASSERT_EQ(ok.issue(NPUCC_KIND_CONV, ok.stdConv()), NPUCC_OK);
  ASSERT_EQ(ok.wait(NPUCC_ENGINE_COMPUTE), NPUCC_OK) << ok.err();
  ASSERT_EQ(ok.dma(ok.Sys + 4096, ok.Spm + 1024 + 128, 16), NPUCC_OK);
  EXPECT_EQ(ok.wait(NPUCC_ENGINE_DMA), NPUCC_OK) << ok.err();
  EXPECT_FALSE(npucc_sim_failed(ok.Sim)) << ok.err();
}

// Write-after-write between two DMAs on a job-queue NPU is ordered by the queue
// (same engine), so it is not a race; the compute engine's output is.
TEST(SimHazards, SameEngineWritesOnAJobQueueAreOrdered) {
  Hz h(std::string(NPUCC_SOURCE_DIR) + "/test/target/npu-queue.json");
  ASSERT_GT(h.T.queue.depth, 0u);
  ASSERT_EQ(h.dma(h.Sys, h.Spm, 64), NPUCC_OK);
  ASSERT_EQ(h.dma(h.Sys + 64, h.Spm, 64), NPUCC_OK); // same bytes, queued behind #0
  EXPECT_EQ(npucc_sim_error_command(h.Sim), -1) << h.err();
  EXPECT_EQ(h.wait(NPUCC_ENGINE_DMA), NPUCC_OK) << h.err();
  EXPECT_FALSE(npucc_sim_failed(h.Sim)) << h.err();
}

TEST(SimHazards, ReadingNeverWrittenScratchpad) {
  Hz h(Default);
  ASSERT_EQ(h.issue(NPUCC_KIND_CONV, h.stdConv()), NPUCC_OK);
  EXPECT_EQ(npucc_sim_error_command(h.Sim), 0);
  EXPECT_NE(h.err().find("never written"), std::string::npos) << h.err();
}

TEST(SimHazards, DmaOutsideAllowedRanges) {
  {
    Hz h(Default);
    // 0x30000000 is in no memory of the description.
    ASSERT_EQ(h.dma(0x30000000u, h.Spm, 16), NPUCC_OK);
    EXPECT_EQ(npucc_sim_error_command(h.Sim), 0);
    EXPECT_NE(h.err().find("outside the scratchpad"), std::string::npos) << h.err();
  }
  {
    Hz h(Default);
    // Inside the RAM range of the description but past the mapped host buffer.
    ASSERT_EQ(h.dma(h.Sys + uint64_t(h.Ram.size()) - 8, h.Spm, 16), NPUCC_OK);
    EXPECT_NE(h.err().find("outside"), std::string::npos) << h.err();
  }
  {
    Hz h(Default);
    std::vector<uint8_t> rom(256, 1);
    uint32_t flash = 0;
    for (const SystemRange &s : h.T.system)
      if (!s.writable)
        flash = s.base;
    ASSERT_EQ(npucc_sim_map(h.Sim, flash, rom.data(), 256), 0);
    h.loadConvOperands();
    ASSERT_EQ(h.dma(h.Spm, flash, 16), NPUCC_OK); // store into read-only flash
    EXPECT_NE(h.err().find("read-only"), std::string::npos) << h.err();
  }
  {
    Hz h(Default);
    std::vector<uint8_t> buf(16);
    EXPECT_EQ(npucc_sim_map(h.Sim, 0x30000000u, buf.data(), 16), -1); // not a system range
  }
}

TEST(SimHazards, MisalignedAddresses) {
  {
    Hz h(Default);
    h.loadConvOperands();
    auto p = h.conv(h.Spm + 8, h.Spm + 256, h.Spm + 512, h.Spm + 640, h.Spm + 1024);
    ASSERT_EQ(h.issue(NPUCC_KIND_CONV, p), NPUCC_OK);
    EXPECT_NE(h.err().find("in_addr 0x00000008 is not aligned to 16 bytes"), std::string::npos)
        << h.err();
  }
  {
    Hz h(std::string(NPUCC_SOURCE_DIR) + "/test/target/npu-third.json");
    ASSERT_EQ(h.T.dma.alignment, 4u);
    ASSERT_EQ(h.dma(h.Sys + 2, h.Spm, 16), NPUCC_OK);
    EXPECT_NE(h.err().find("misaligned DMA address"), std::string::npos) << h.err();
  }
  {
    // npu-small stores scratchpad addresses in 16-byte units: the command
    // layer refuses an address that is not a multiple of 16.
    Hz h(Small);
    auto p = h.conv(h.Spm + 8, h.Spm + 256, h.Spm + 512, h.Spm + 640, h.Spm + 1024);
    int bad = -1;
    EXPECT_EQ(h.issue(NPUCC_KIND_CONV, p, &bad), NPUCC_ERR_ALIGN);
    EXPECT_EQ(bad, NPUCC_P_IN_ADDR);
  }
}

TEST(SimHazards, FieldValuesOutOfRange) {
  {
    // Too wide for its field: rejected by the command layer.
    Hz h(Default);
    auto p = h.stdConv();
    p[NPUCC_P_IN_H] = 5000;
    int bad = -1;
    EXPECT_EQ(h.issue(NPUCC_KIND_CONV, p, &bad), NPUCC_ERR_RANGE);
    EXPECT_EQ(bad, NPUCC_P_IN_H);
  }
  {
    // Fits the field but not the NPU's limits: caught by the simulator.
    Hz h(Default);
    h.loadConvOperands();
    auto p = h.stdConv();
    p[NPUCC_P_K_H] = p[NPUCC_P_K_W] = 4; // kernel 4 is not in kernel_sizes
    ASSERT_EQ(h.issue(NPUCC_KIND_CONV, p), NPUCC_OK);
    EXPECT_NE(h.err().find("command #1 (conv): field value out of range: kernel 4x4"),
              std::string::npos)
        << h.err();
  }
  {
    // A parameter the NPU fixes (npu-small has no dilation field).
    Hz h(Small);
    auto p = h.stdConv();
    p[NPUCC_P_DIL_H] = 2;
    int bad = -1;
    EXPECT_EQ(h.issue(NPUCC_KIND_CONV, p, &bad), NPUCC_ERR_PARAM);
    EXPECT_EQ(bad, NPUCC_P_DIL_H);
  }
}

TEST(SimHazards, StartingABusyEngine) {
  Hz h(Default);
  ASSERT_EQ(h.dma(h.Sys, h.Spm, 4096), NPUCC_OK);
  ASSERT_EQ(h.dma(h.Sys, h.Spm + 8192, 16), NPUCC_OK);
  EXPECT_EQ(npucc_sim_error_command(h.Sim), 1);
  EXPECT_NE(h.err().find("DMA engine is busy with command #0"), std::string::npos) << h.err();
}

TEST(SimHazards, WfiHookJumpsToCompletion) {
  Hz a(Default);
  ASSERT_EQ(a.dma(a.Sys, a.Spm, 8192), NPUCC_OK);
  ASSERT_EQ(a.wait(NPUCC_ENGINE_DMA), NPUCC_OK);
  uint64_t polled = npucc_sim_cpu_cycles(a.Sim);
  Hz b(Default);
  npucc_hal_set_wait_hook(npucc_sim_wfi_hook, b.Sim);
  ASSERT_EQ(b.dma(b.Sys, b.Spm, 8192), NPUCC_OK);
  ASSERT_EQ(b.wait(NPUCC_ENGINE_DMA), NPUCC_OK);
  uint64_t end = npucc_sim_command(b.Sim, 0)->end;
  EXPECT_GE(npucc_sim_cpu_cycles(b.Sim), end);
  EXPECT_LE(npucc_sim_cpu_cycles(b.Sim), end + 2 * b.T.timing.pollCycles);
  EXPECT_GE(polled, end);
  npucc_hal_set_wait_hook(nullptr, nullptr);
}

std::string third() { return std::string(NPUCC_SOURCE_DIR) + "/test/target/npu-third.json"; }

TEST(SimHazards, FenceCompletionMode) {
  Hz h(third());
  ASSERT_EQ(h.T.completion, "fence");
  h.loadConvOperands(); // DMA #0, then the HAL wait issues fence #1 and polls it
  ASSERT_EQ(npucc_sim_num_commands(h.Sim), 2u);
  EXPECT_EQ(npucc_sim_command(h.Sim, 1)->kind, NPUCC_KIND_FENCE);
  EXPECT_GE(npucc_sim_command(h.Sim, 1)->end, npucc_sim_command(h.Sim, 0)->end);
  ASSERT_EQ(h.issue(NPUCC_KIND_CONV, h.stdConv()), NPUCC_OK);
  EXPECT_EQ(h.wait(NPUCC_ENGINE_COMPUTE), NPUCC_OK) << h.err();
  EXPECT_FALSE(npucc_sim_failed(h.Sim)) << h.err();
}

TEST(SimHazards, FenceNotWaitedForIsStillARace) {
  Hz h(third());
  ASSERT_EQ(h.dma(h.Sys, h.Spm, 768), NPUCC_OK); // #0
  auto p = h.params();
  ASSERT_EQ(h.issue(NPUCC_KIND_FENCE, p), NPUCC_OK); // #1, never polled
  for (int i = 0; i < 500; ++i) // time passes, but the CPU never looks at the status
    (void)npucc_hal_read(h.D->regs[7].offset, h.D->regs[7].width);
  ASSERT_EQ(h.issue(NPUCC_KIND_CONV, h.stdConv()), NPUCC_OK); // #2
  EXPECT_EQ(npucc_sim_error_command(h.Sim), 2);
  EXPECT_NE(h.err().find("race"), std::string::npos) << h.err();
}

TEST(SimHazards, TimeoutWhenPollBudgetTooSmall) {
  Hz h(Default);
  ASSERT_EQ(h.dma(h.Sys, h.Spm, 8192), NPUCC_OK);
  EXPECT_EQ(npucc_hal_wait(NPUCC_ENGINE_DMA, 3), NPUCC_ERR_TIMEOUT);
  EXPECT_EQ(h.wait(NPUCC_ENGINE_DMA), NPUCC_OK);
}

} // namespace
