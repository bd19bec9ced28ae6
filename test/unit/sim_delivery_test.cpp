//===- sim_delivery_test.cpp - Commands delivered as frame words, run -----===//
//
// Issue 19, phase 4, in the command layer, the HAL and the simulator, on
// test/target/npu-fifo.json (the compute commands one frame of nine 64-bit
// words pushed into CMD_FIFO on a 32-bit bus): encode gives the words in
// frame order; the simulator collects them and starts the command named by
// the select field after the last word only; a word pushed while the FIFO
// still holds a running command's frame is an overrun; a frame whose select
// fields match no command is a protocol error; issuing costs words x bus
// accesses x reg_access_cycles. On test/target/npu-cmdbuf.json (every
// command a frame appended to a command buffer in memory): appending costs
// nothing, the kick (three register writes) starts the frames at once on
// their engines, a frame that does not fit waits and restarts the buffer;
// a kick of partial frames or words, of unmapped memory, for a busy engine,
// or of a frame matching no command fails with its code.
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

#include <memory>
#include <string>

using namespace npucc::target;

namespace {

struct FifoNpu : npucc::test::SimTarget {
  const Register *Fifo = nullptr;

  FifoNpu() : SimTarget(loadTarget(npucc::test::testTarget("npu-fifo.json"))) {
    if (!Sim)
      return;
    for (const Register &g : T.registers)
      if (g.name == "CMD_FIFO")
        Fifo = &g;
    std::vector<uint8_t> z(512, 1);
    EXPECT_EQ(npucc_sim_spm_write(Sim, 0, z.data(), z.size()), 0);
  }

  /// A 2x2x2 matmul in the first 512 scratchpad bytes (m x k x n = `m` x 2 x 2).
  static std::vector<int64_t> matmul(int64_t m = 2) {
    std::vector<int64_t> p(NPUCC_P_COUNT);
    npucc_npu_defaults(p.data());
    p[NPUCC_P_M] = m, p[NPUCC_P_K] = p[NPUCC_P_N] = 2;
    p[NPUCC_P_IN_ADDR] = 0, p[NPUCC_P_W_ADDR] = 64, p[NPUCC_P_BIAS_ADDR] = 128,
    p[NPUCC_P_OUT_ADDR] = 256;
    return p;
  }
  /// One word pushed as the HAL does: two 32-bit accesses, low half first.
  void push(uint64_t word) {
    npucc_sim_reg_write(Sim, Fifo->offset, word & 0xFFFFFFFFu, 32);
    npucc_sim_reg_write(Sim, Fifo->offset + 4, word >> 32, 32);
  }
  std::string err() const { return npucc_sim_error(Sim); }
};

TEST(SimDelivery, EncodeGivesTheFrameWordsInOrder) {
  FifoNpu n;
  ASSERT_NE(n.Fifo, nullptr);
  auto p = FifoNpu::matmul();
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int count = 0;
  ASSERT_EQ(npucc_npu_encode(n.D, NPUCC_KIND_MATMUL, p.data(), w, &count, nullptr), NPUCC_OK);
  ASSERT_EQ(n.D->num_frames, 1u);
  const npucc_frame_desc &f = n.D->frames[0];
  ASSERT_EQ(count, int(f.num_words));
  for (int k = 0; k < count; ++k) {
    EXPECT_EQ(w[k].reg, f.first_reg + k) << "word " << k;
    EXPECT_TRUE(n.D->regs[w[k].reg].flags & NPUCC_REG_WORD);
    EXPECT_EQ(w[k].mask, ~uint64_t(0)) << "a word is written whole";
  }
  // CTRL: int_en (bit 0) = 1, op (bits 4..6) = 2 (matmul); ELT_MULT untouched.
  EXPECT_EQ(w[0].value, 1u | (2u << 4));
  EXPECT_EQ(w[7].value, 0u);
}

TEST(SimDelivery, TheLastWordStartsTheSelectedCommand) {
  FifoNpu n;
  ASSERT_NE(n.Fifo, nullptr);
  auto p = FifoNpu::matmul();
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int count = 0;
  ASSERT_EQ(npucc_npu_encode(n.D, NPUCC_KIND_MATMUL, p.data(), w, &count, nullptr), NPUCC_OK);
  for (int k = 0; k + 1 < count; ++k)
    n.push(w[k].value);
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 0u) << "started before the last word";
  n.push(w[count - 1].value);
  ASSERT_EQ(npucc_sim_num_commands(n.Sim), 1u) << n.err();
  EXPECT_EQ(npucc_sim_command(n.Sim, 0)->kind, NPUCC_KIND_MATMUL);
  ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_OK) << n.err();
  // The same through the HAL, twice (the FIFO is empty again once it completed).
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_MATMUL, p.data(), nullptr), NPUCC_OK);
    ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_OK) << n.err();
  }
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 3u);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

TEST(SimDelivery, IssuingCostsEveryWordsAccesses) {
  FifoNpu n;
  ASSERT_NE(n.Fifo, nullptr);
  auto p = FifoNpu::matmul();
  uint64_t before = npucc_sim_cpu_cycles(n.Sim);
  ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_MATMUL, p.data(), nullptr), NPUCC_OK);
  // Nine 64-bit words on a 32-bit bus: 18 accesses.
  EXPECT_EQ(npucc_sim_cpu_cycles(n.Sim) - before, 18u * n.D->reg_access_cycles);
}

TEST(SimDelivery, AWordPushedWhileTheFifoHoldsARunningFrameIsAnOverrun) {
  FifoNpu n;
  ASSERT_NE(n.Fifo, nullptr);
  auto p = FifoNpu::matmul(4);
  ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_MATMUL, p.data(), nullptr), NPUCC_OK);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
  n.push(1u | (2u << 4)); // the next frame's first word, without waiting
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "FIFO register CMD_FIFO overrun: word 0 of frame 'job' pushed while it "
                     "holds 9 of its 9 words (command #0 still running)");
  EXPECT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_ERR_DEVICE);
}

TEST(SimDelivery, AFrameMatchingNoCommandIsAProtocolError) {
  FifoNpu n;
  ASSERT_NE(n.Fifo, nullptr);
  auto p = FifoNpu::matmul();
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int count = 0;
  ASSERT_EQ(npucc_npu_encode(n.D, NPUCC_KIND_MATMUL, p.data(), w, &count, nullptr), NPUCC_OK);
  w[0].value = 1u | (7u << 4); // op 7: no command
  for (int k = 0; k < count; ++k)
    n.push(w[k].value);
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "frame 'job' pushed into CMD_FIFO (first word 0x71) matches no command: "
                     "no command's select fields hold these values");
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 0u);
}

TEST(SimDelivery, AHandWrittenWordIsCheckedLikeAnyField) {
  // CTRL.int_en is a computed field (constant 1): a frame with it at 0 is
  // caught after the last word, as a field that disagrees.
  FifoNpu n;
  ASSERT_NE(n.Fifo, nullptr);
  auto p = FifoNpu::matmul();
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int count = 0;
  ASSERT_EQ(npucc_npu_encode(n.D, NPUCC_KIND_MATMUL, p.data(), w, &count, nullptr), NPUCC_OK);
  w[0].value &= ~uint64_t(1);
  for (int k = 0; k < count; ++k)
    n.push(w[k].value);
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "command #0 (matmul): field 'CTRL.int_en' holds 0, its expression gives 1");
}

} // namespace

namespace {

/// npu-insn: the same frame as two-word custom instructions.
struct InsnNpu : npucc::test::SimTarget {

  InsnNpu() : SimTarget(loadTarget(npucc::test::testTarget("npu-insn.json"))) {
    if (!Sim)
      return;
    std::vector<uint8_t> z(512, 1);
    EXPECT_EQ(npucc_sim_spm_write(Sim, 0, z.data(), z.size()), 0);
  }
  std::string err() const { return npucc_sim_error(Sim); }
};

TEST(SimDelivery, InsnWordsStartTheCommandAfterTheLastInstruction) {
  InsnNpu n;
  ASSERT_NE(n.D, nullptr);
  auto p = FifoNpu::matmul();
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int count = 0;
  ASSERT_EQ(npucc_npu_encode(n.D, NPUCC_KIND_MATMUL, p.data(), w, &count, nullptr), NPUCC_OK);
  ASSERT_EQ(count, 9);
  // funct7 2 is matmul; four instructions carry words 0..7, the fifth word 8 and 0.
  uint64_t before = npucc_sim_cpu_cycles(n.Sim);
  for (int k = 0; k < 8; k += 2)
    npucc_sim_insn(n.Sim, 0, 2, w[k].value, w[k + 1].value);
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 0u) << "started before the last word";
  npucc_sim_insn(n.Sim, 0, 2, w[8].value, 0);
  ASSERT_EQ(npucc_sim_num_commands(n.Sim), 1u) << n.err();
  EXPECT_EQ(npucc_sim_command(n.Sim, 0)->kind, NPUCC_KIND_MATMUL);
  // Each 64-bit word costs as a 64-bit register write on the 32-bit bus.
  EXPECT_EQ(npucc_sim_cpu_cycles(n.Sim) - before, 18u * n.D->reg_access_cycles);
  ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_OK) << n.err();
  // The same through the HAL (NPUCC_HAL_INSN is the simulator call here).
  ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_MATMUL, p.data(), nullptr), NPUCC_OK);
  ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_OK) << n.err();
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 2u);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

TEST(SimDelivery, AnUnknownFunct7IsAProtocolError) {
  InsnNpu n;
  ASSERT_NE(n.D, nullptr);
  npucc_sim_insn(n.Sim, 0, 9, 1, 2);
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "custom instruction funct3 0 funct7 9 starts no command");
}

TEST(SimDelivery, AnotherCommandsInstructionInsideAFrameIsAProtocolError) {
  InsnNpu n;
  ASSERT_NE(n.D, nullptr);
  npucc_sim_insn(n.Sim, 0, 2, 1u | (2u << 4), 0); // matmul's first two words
  npucc_sim_insn(n.Sim, 0, 3, 1u | (3u << 4), 0); // then a pool instruction
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "custom instruction funct3 0 funct7 3 arrived after 2 of the 9 words of "
                     "command 'matmul' (funct7 2)");
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 0u);
}

} // namespace

namespace {

/// npu-cmdbuf: every command a frame of ten 64-bit words appended to a
/// 64-word command buffer; CMDBUF_BASE (0x04), CMDBUF_SIZE.bytes (0x08) and
/// CMD.go (0x0C) kick it.
struct CmdbufNpu : npucc::test::SimTarget {
  CmdbufNpu() : SimTarget(loadTarget(npucc::test::testTarget("npu-cmdbuf.json"))) {
    if (!Sim)
      return;
    std::vector<uint8_t> z(512, 1);
    EXPECT_EQ(npucc_sim_spm_write(Sim, 0, z.data(), z.size()), 0);
  }
  std::string err() const { return npucc_sim_error(Sim); }
  /// A kick written by hand: address, length in bytes, go.
  void kick(uint64_t addr, uint64_t bytes) {
    npucc_sim_reg_write(Sim, 0x04, addr, 32);
    npucc_sim_reg_write(Sim, 0x08, bytes, 32);
    npucc_sim_reg_write(Sim, 0x0C, 1, 32);
  }
  /// The words of a matmul frame in a host buffer mapped into system memory.
  uint64_t mapFrames(std::vector<uint64_t> &buf, int frames, int64_t m = 2) {
    auto p = FifoNpu::matmul(m);
    npucc_reg_write w[NPUCC_MAX_CMD_REGS];
    int count = 0;
    EXPECT_EQ(npucc_npu_encode(D, NPUCC_KIND_MATMUL, p.data(), w, &count, nullptr), NPUCC_OK);
    EXPECT_EQ(count, 10);
    buf.assign(size_t(frames) * 10 + 1, 0);
    for (int f = 0; f < frames; ++f)
      for (int k = 0; k < count; ++k)
        buf[size_t(f * count + k)] = w[k].value;
    return npucc_sim_device_addr(Sim, buf.data(), buf.size() * 8, 1);
  }
};

std::vector<int64_t> dmaCopy() {
  std::vector<int64_t> p(NPUCC_P_COUNT);
  npucc_npu_defaults(p.data());
  p[NPUCC_P_SRC_ADDR] = 0, p[NPUCC_P_DST_ADDR] = 1024, p[NPUCC_P_LENGTH] = 64, p[NPUCC_P_ROWS] = 1;
  return p;
}

TEST(SimDelivery, BufferedCommandsStartAtTheKick) {
  CmdbufNpu n;
  ASSERT_NE(n.D, nullptr);
  auto mm = FifoNpu::matmul();
  auto dma = dmaCopy();
  uint64_t before = npucc_sim_cpu_cycles(n.Sim);
  ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_MATMUL, mm.data(), nullptr), NPUCC_OK);
  ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_DMA, dma.data(), nullptr), NPUCC_OK);
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 0u) << "appended, not started";
  EXPECT_EQ(npucc_sim_cpu_cycles(n.Sim), before) << "appending writes memory, no register";
  const uint64_t *words = static_cast<const uint64_t *>(n.D->cmdbuf->words);
  EXPECT_EQ(words[0], 1u | (2u << 4)) << "matmul's CTRL first";
  EXPECT_EQ(words[10] & 0x70u, 5u << 4) << "then the DMA's frame";
  ASSERT_EQ(npucc_hal_kick(), NPUCC_OK);
  // Three 32-bit register writes: address, length, kick.
  EXPECT_EQ(npucc_sim_cpu_cycles(n.Sim) - before, 3u * n.D->reg_access_cycles);
  ASSERT_EQ(npucc_sim_num_commands(n.Sim), 2u) << n.err();
  EXPECT_EQ(npucc_sim_command(n.Sim, 0)->kind, NPUCC_KIND_MATMUL);
  EXPECT_EQ(npucc_sim_command(n.Sim, 1)->kind, NPUCC_KIND_DMA);
  EXPECT_EQ(npucc_sim_command(n.Sim, 0)->start, npucc_sim_cpu_cycles(n.Sim));
  EXPECT_EQ(npucc_sim_command(n.Sim, 1)->start, npucc_sim_cpu_cycles(n.Sim))
      << "both engines start at the kick";
  EXPECT_EQ(npucc_sim_reg_read(n.Sim, 0x08, 32), 160u) << "two frames of 80 bytes";
  EXPECT_EQ(npucc_hal_kick(), NPUCC_OK) << "nothing new: no kick";
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 2u);
  ASSERT_EQ(npucc_hal_wait_all(100000), NPUCC_OK) << n.err();
  // A wait kicks first.
  ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_MATMUL, mm.data(), nullptr), NPUCC_OK);
  ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_OK) << n.err();
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 3u);
  EXPECT_EQ(npucc_sim_reg_read(n.Sim, 0x04, 32),
            npucc_hal_device_addr(n.D->cmdbuf->words, 64 * 8, 1) + 160u)
      << "the third frame's words follow the first two";
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

TEST(SimDelivery, AFullBufferWaitsAndRestartsFromItsFirstWord) {
  CmdbufNpu n;
  ASSERT_NE(n.D, nullptr);
  auto mm = FifoNpu::matmul();
  uint64_t base = npucc_hal_device_addr(n.D->cmdbuf->words, 64 * 8, 1);
  // Six frames fill 60 of the 64 words; the seventh restarts the buffer.
  for (int i = 0; i < 7; ++i) {
    ASSERT_EQ(npucc_npu_issue(n.D, NPUCC_KIND_MATMUL, mm.data(), nullptr), NPUCC_OK) << i;
    ASSERT_EQ(npucc_hal_kick(), NPUCC_OK);
    EXPECT_EQ(npucc_sim_reg_read(n.Sim, 0x04, 32), base + uint64_t(i % 6) * 80u) << i;
    if (i < 5) {
      ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_OK) << n.err();
    }
  }
  // Frame 6 was kicked while frame 5 ran: the restart waited for it first,
  // so no kick found the compute engine busy.
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 7u);
  EXPECT_GE(npucc_sim_command(n.Sim, 6)->start, npucc_sim_command(n.Sim, 5)->end);
  ASSERT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_OK) << n.err();
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
}

TEST(SimDelivery, AKickOfPartialFramesIsAProtocolError) {
  CmdbufNpu n;
  ASSERT_NE(n.D, nullptr);
  std::vector<uint64_t> buf;
  uint64_t a = n.mapFrames(buf, 1);
  n.kick(a, 72); // nine of the ten words
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "command buffer kicked with 9 words: not a whole number of frames 'job' (10 "
                     "words each)");
  EXPECT_EQ(npucc_sim_num_commands(n.Sim), 0u);
  EXPECT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_ERR_DEVICE);
}

TEST(SimDelivery, AKickOfPartialWordsIsAProtocolError) {
  CmdbufNpu n;
  ASSERT_NE(n.D, nullptr);
  std::vector<uint64_t> buf;
  uint64_t a = n.mapFrames(buf, 1);
  n.kick(a, 84);
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "command buffer kicked with a length of 84 bytes: not a whole number of "
                     "8-byte words");
}

TEST(SimDelivery, AKickOfUnmappedMemoryIsAMemoryError) {
  CmdbufNpu n;
  ASSERT_NE(n.D, nullptr);
  n.kick(0x20800000, 80);
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_EQ(n.err(), "command buffer 0x20800000..0x20800050 is outside the scratchpad and the "
                     "mapped system memory ranges");
  EXPECT_EQ(npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 100000), NPUCC_ERR_DEVICE);
}

TEST(SimDelivery, AKickForABusyEngineIsAHazard) {
  CmdbufNpu n;
  ASSERT_NE(n.D, nullptr);
  std::vector<uint64_t> buf;
  uint64_t a = n.mapFrames(buf, 2, 8);
  n.kick(a, 80);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << n.err();
  n.kick(a + 80, 80); // the second matmul while the first still runs
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_NE(n.err().find("started while the compute engine is busy with command #0"),
            std::string::npos)
      << n.err();
  // Two frames of one engine in one kick: the second finds it busy too.
  CmdbufNpu m;
  ASSERT_NE(m.D, nullptr);
  uint64_t b = m.mapFrames(buf, 2);
  m.kick(b, 160);
  ASSERT_TRUE(npucc_sim_failed(m.Sim));
  EXPECT_NE(m.err().find("started while the compute engine is busy"), std::string::npos) << m.err();
}

TEST(SimDelivery, ABufferedFrameMatchingNoCommandIsAProtocolError) {
  CmdbufNpu n;
  ASSERT_NE(n.D, nullptr);
  std::vector<uint64_t> buf;
  uint64_t a = n.mapFrames(buf, 1);
  buf[0] = 1u | (7u << 4); // op 7: no command
  n.kick(a, 80);
  ASSERT_TRUE(npucc_sim_failed(n.Sim));
  EXPECT_NE(n.err().find("frame 0 of the command buffer kicked at"), std::string::npos) << n.err();
  EXPECT_NE(n.err().find("(first word 0x71) matches no command"), std::string::npos) << n.err();
}

} // namespace
