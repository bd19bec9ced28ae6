//===- npu_waits_test.cpp - Waits tied to dependencies; the estimate vs the simulator ===//
//
// insertNpuWaits on small hand-built loop-IR bodies: a wait where a command
// needs what another engine's unfinished command writes (or overwrites what
// it reads), where the engine is busy (one command at a time) or its job queue
// full, where the CPU touches memory an NPU command uses, and at the end;
// none where nothing depends. Then whole scheduled layers replayed command by
// command through the HAL on the host simulator of each test NPU: the waits
// suffice (no hazard) and estimateProgram predicts the simulator's cycles
// exactly, on every NPU.
//
//===----------------------------------------------------------------------===//
#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_sim.h"

#include "NpuTestOps.h"
#include "SimBody.h"
#include "TestTargets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

using namespace npucc;
using npucc::target::TargetDesc;
using npucc::test::expectAsEstimated;
using npucc::test::runOnSim;
using npucc::test::SimRun;

namespace {

TargetDesc load(const std::string &name) {
  auto r = target::loadTarget(name);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : TargetDesc{};
}
TargetDesc queueNpu() { return load(test::testTarget("npu-queue.json")); }

lir::BufferRef buf(lir::Region r, int index, int64_t off, int64_t size) {
  lir::BufferRef b;
  b.region = r;
  b.index = index;
  b.offset = off;
  b.size = size;
  b.dtype = ir::DType::I8;
  return b;
}
lir::BufferRef spm(int64_t off, int64_t size, int index = 0) {
  return buf(lir::Region::Spm, index, off, size);
}
lir::BufferRef arena(int64_t off, int64_t size) { return buf(lir::Region::Arena, 0, off, size); }

/// Builds a body; tokens count up from 0.
struct Body {
  lir::Program p;
  int next = 0;

  Body &dma(const lir::BufferRef &src, const lir::BufferRef &dst) {
    lir::Instr in;
    in.opcode = "npu";
    in.callee = "dma";
    in.token = next++;
    in.params = {{"src_addr", src}, {"dst_addr", dst}, {"length", int64_t(dst.size)}};
    p.body.push_back(in);
    return *this;
  }
  /// A 1x1 conv over 4x4x16 -> 4x4x16: input 256 bytes, weights 256, bias 64,
  /// output 256.
  Body &conv(int64_t in, int64_t w, int64_t bias, int64_t out, int index = 0) {
    lir::Instr c;
    c.opcode = "npu";
    c.callee = "conv";
    c.token = next++;
    c.params = {{"in_addr", spm(in, 256, index)}, {"w_addr", spm(w, 256, index)},
                {"bias_addr", spm(bias, 64, index)}, {"out_addr", spm(out, 256, index)},
                {"in_h", int64_t(4)}, {"in_w", int64_t(4)}, {"in_ch", int64_t(16)},
                {"out_h", int64_t(4)}, {"out_w", int64_t(4)}, {"out_ch", int64_t(16)},
                {"k_h", int64_t(1)}, {"k_w", int64_t(1)}};
    p.body.push_back(c);
    return *this;
  }
  Body &call(std::vector<lir::Arg> args) {
    lir::Instr c;
    c.opcode = "call";
    c.callee = "npucc_kernel";
    c.args = std::move(args);
    p.body.push_back(c);
    return *this;
  }
  Body &wait(std::vector<int> tokens) {
    lir::Instr w;
    w.opcode = "wait";
    w.tokens = std::move(tokens);
    p.body.push_back(w);
    return *this;
  }
};

/// "dma#0 | wait #0 | conv#1 | call | wait #1" after insertNpuWaits.
std::string withWaits(Body b, const TargetDesc &t) {
  Status s = lower::insertNpuWaits(b.p, t);
  EXPECT_TRUE(s.ok());
  std::string r;
  for (const lir::Instr &in : b.p.body) {
    if (!r.empty())
      r += " | ";
    if (in.opcode == "npu") {
      r += in.callee + "#" + std::to_string(in.token);
    } else if (in.opcode == "wait") {
      r += "wait";
      for (int tok : in.tokens)
        r += " #" + std::to_string(tok);
    } else {
      r += in.opcode;
    }
  }
  return r;
}

// --- Compute after DMA --------------------------------------------------------------------

TEST(NpuWaits, ComputeWaitsForTheDmaThatWroteItsInput) {
  for (const std::string &name : {std::string("npu-default"), test::testTarget("npu-queue.json")}) {
    TargetDesc t = load(name);
    Body b;
    b.dma(arena(0, 256), spm(0, 256)).conv(0, 1024, 2048, 4096);
    EXPECT_EQ(withWaits(b, t), "dma#0 | wait #0 | conv#1 | wait #1") << name;
  }
}

TEST(NpuWaits, DmaOverwritingWhatComputeStillReadsWaits) {
  // The next tile's load must not land in the buffer the command reads.
  Body b;
  b.conv(0, 1024, 2048, 4096).dma(arena(0, 256), spm(1024, 256));
  EXPECT_EQ(withWaits(b, queueNpu()), "conv#0 | wait #0 | dma#1 | wait #1");
  // Into the other buffer of a double-buffered pair: no wait.
  Body c;
  c.conv(0, 1024, 2048, 4096).dma(arena(0, 256), spm(512, 256));
  EXPECT_EQ(withWaits(c, queueNpu()), "conv#0 | dma#1 | wait #0 #1");
}

TEST(NpuWaits, DisjointComputeAndDmaOverlapOnlyWhereTheNpuAllows) {
  Body b;
  b.dma(arena(0, 256), spm(8192, 256)).conv(0, 1024, 2048, 4096);
  TargetDesc concurrent = load("npu-default"), serial = load("npu-small");
  ASSERT_TRUE(concurrent.concurrentDmaCompute);
  ASSERT_FALSE(serial.concurrentDmaCompute);
  EXPECT_EQ(withWaits(b, concurrent), "dma#0 | conv#1 | wait #0 #1");
  EXPECT_EQ(withWaits(b, serial), "dma#0 | wait #0 | conv#1 | wait #1");
}

TEST(NpuWaits, DifferentScratchpadsDoNotConflict) {
  // npu-third has two scratchpads: the same offsets in each are other bytes.
  TargetDesc t = load(test::testTarget("npu-third.json"));
  ASSERT_EQ(t.scratchpads.size(), 2u);
  Body b;
  b.dma(arena(0, 256), spm(0, 256, 1)).conv(0, 1024, 2048, 4096, 0);
  EXPECT_EQ(withWaits(b, t), "dma#0 | conv#1 | wait #0 #1");
  Body c;
  c.dma(arena(0, 256), spm(0, 256, 0)).conv(0, 1024, 2048, 4096, 0);
  EXPECT_EQ(withWaits(c, t), "dma#0 | wait #0 | conv#1 | wait #1");
}

// --- One engine: busy, or a job queue --------------------------------------------------------

TEST(NpuWaits, SameEngineWithoutQueueWaitsForTheBusyEngine) {
  Body b;
  b.dma(arena(0, 64), spm(0, 64)).dma(arena(64, 64), spm(4096, 64));
  EXPECT_EQ(withWaits(b, load("npu-default")), "dma#0 | wait #0 | dma#1 | wait #1");
}

TEST(NpuWaits, JobQueueNeedsNoWaitBetweenCommandsOfOneEngine) {
  TargetDesc t = queueNpu();
  ASSERT_EQ(t.queue.depth, 4u);
  Body disjoint;
  disjoint.dma(arena(0, 64), spm(0, 64)).dma(arena(64, 64), spm(4096, 64));
  EXPECT_EQ(withWaits(disjoint, t), "dma#0 | dma#1 | wait #0 #1");
  // Even the same bytes: the queue runs an engine's commands in order.
  Body same;
  same.dma(arena(0, 64), spm(0, 64)).dma(arena(64, 64), spm(0, 64)).dma(spm(0, 64), arena(128, 64));
  EXPECT_EQ(withWaits(same, t), "dma#0 | dma#1 | dma#2 | wait #0 #1 #2");
  // Four DMAs and four convs fill both queues without a wait.
  Body both;
  for (int i = 0; i < 4; ++i)
    both.dma(arena(64 * i, 64), spm(16384 + 64 * i, 64)).conv(0, 1024, 2048, 4096 + 256 * i);
  std::string s = withWaits(both, t);
  EXPECT_EQ(std::count(s.begin(), s.end(), 'w'), 1) << s; // only the final wait
}

TEST(NpuWaits, FullJobQueueWaits) {
  TargetDesc t = queueNpu();
  Body b;
  for (int i = 0; i < 6; ++i)
    b.dma(arena(64 * i, 64), spm(1024 * i, 64));
  // The fifth command finds four pending: it waits for the oldest (a wait
  // settles the whole engine, so the sixth has room again).
  EXPECT_EQ(withWaits(b, t), "dma#0 | dma#1 | dma#2 | dma#3 | wait #0 | dma#4 | dma#5 | wait #4 #5");
}

// --- The CPU --------------------------------------------------------------------------------

TEST(NpuWaits, CpuWaitsForCommandsUsingItsMemory) {
  TargetDesc t = load("npu-default");
  // Reading what a DMA writes.
  Body r;
  r.dma(spm(0, 64), arena(0, 64)).call({arena(0, 64), int64_t(64)});
  EXPECT_EQ(withWaits(r, t), "dma#0 | wait #0 | call");
  // Overwriting what a DMA still reads.
  Body w;
  w.dma(arena(0, 64), spm(0, 64)).call({arena(32, 64)});
  EXPECT_EQ(withWaits(w, t), "dma#0 | wait #0 | call");
  // Other memory: the CPU runs alongside, the wait comes at the end.
  Body d;
  d.dma(spm(0, 64), arena(0, 64)).call({arena(64, 64), arena(512, 16)});
  EXPECT_EQ(withWaits(d, t), "dma#0 | call | wait #0");
  // Constants are never written: a kernel reading the blob a DMA reads needs no wait.
  Body c;
  c.dma(buf(lir::Region::Const, 0, 0, 64), spm(0, 64)).call({buf(lir::Region::Const, 0, 0, 64), arena(64, 64)});
  EXPECT_EQ(withWaits(c, t), "dma#0 | call | wait #0");
}

TEST(NpuWaits, FinalWaitSettlesEverything) {
  TargetDesc t = queueNpu();
  Body b;
  b.dma(arena(0, 64), spm(0, 64)).conv(1024, 2048, 3072, 4096);
  EXPECT_EQ(withWaits(b, t), "dma#0 | conv#1 | wait #0 #1");
  Body none;
  none.call({arena(0, 16)});
  EXPECT_EQ(withWaits(none, t), "call"); // no NPU command, no wait
}

TEST(NpuWaits, ExistingWaitsAreReplaced) {
  TargetDesc t = queueNpu();
  Body b;
  b.dma(arena(0, 64), spm(0, 64)).wait({0}).dma(arena(64, 64), spm(4096, 64)).wait({0, 1}).wait({1});
  EXPECT_EQ(withWaits(b, t), "dma#0 | dma#1 | wait #0 #1");
}

TEST(NpuWaits, FenceCompletionSettlesBothEngines) {
  // conv#0 writes spm[4096..]; dma#1 is independent; dma#2 must wait for the
  // busy DMA engine. On a fence NPU that wait observes the conv too, so the
  // store of its output (dma#3) needs no second wait; with per-engine status
  // (npu-default) it does.
  Body b;
  b.conv(0, 1024, 2048, 4096).dma(arena(0, 64), spm(8192, 64)).dma(arena(64, 64), spm(12288, 64))
      .dma(spm(4096, 256), arena(1024, 256));
  TargetDesc fence = load(test::testTarget("npu-third.json"));
  ASSERT_EQ(fence.completion, "fence");
  EXPECT_EQ(withWaits(b, fence), "conv#0 | dma#1 | wait #1 | dma#2 | wait #2 | dma#3 | wait #3");
  EXPECT_EQ(withWaits(b, load("npu-default")),
            "conv#0 | dma#1 | wait #1 | dma#2 | wait #0 #2 | dma#3 | wait #3");
}

// --- Whole layers on the simulator ----------------------------------------------------------

/// One layer scheduled with its chosen tiling at arena offsets in/out, the
/// weight records read from a constant blob; waits inserted.
lir::Program scheduledLayer(const target::NpuOp &op, const TargetDesc &t, uint64_t &constBytes,
                            uint64_t &arenaBytes) {
  using namespace lower::npu;
  lir::Program p;
  Layer l = makeLayer(op);
  auto c = chooseTiling(l, t);
  EXPECT_TRUE(c.ok()) << t.name << ": " << (c.ok() ? "" : c.error().message);
  if (!c.ok())
    return p;
  uint64_t inBytes = uint64_t(l.H * l.W * l.C), outBytes = uint64_t(l.OH * l.OW * l.OC);
  uint64_t align = std::max<uint64_t>(64, t.dma.alignment);
  LayerIo io;
  io.in = buf(lir::Region::Arena, 0, 0, int64_t(inBytes));
  io.out = buf(lir::Region::Arena, 0, int64_t((inBytes + align - 1) / align * align), int64_t(outBytes));
  io.blob = buf(lir::Region::Const, 0, 0, 0);
  arenaBytes = uint64_t(io.out.offset) + outBytes;
  // The records of every block, as Schedule.cpp lays them out in the blob.
  constBytes = 0;
  for (int64_t b = 0; l.hasWeights() && b * c->tiling.block < l.OC; ++b) {
    RecordLayout rl = recordLayout(l, t, std::min(c->tiling.block, l.OC - b * c->tiling.block));
    constBytes += (rl.size + recordAlign(t, l) - 1) / recordAlign(t, l) * recordAlign(t, l);
  }
  if (hasActTable(l, t)) // the lut256 table after the records
    constBytes = actTableOffset(l, t, c->tiling.block) + actTableBytes(l, t);
  constBytes = std::max<uint64_t>(constBytes, 64);
  lir::ConstBuffer blob;
  blob.name = "npu_const";
  blob.data = ir::Tensor(ir::DType::U8, {int64_t(constBytes)});
  blob.npu = true;
  p.constants.push_back(std::move(blob));
  int tok = 0;
  EXPECT_TRUE(scheduleLayer(l, t, c->tiling, c->spm, io, tok, "", p.body).ok());
  EXPECT_TRUE(lower::insertNpuWaits(p, t).ok());
  return p;
}

class NpuWaitsOnSim : public ::testing::TestWithParam<std::string> {};

/// Fences the command stream issues for a body on a fence NPU: one per wait
/// instruction, whatever engines its tokens ran on (npucc_hal_wait_engines).
uint64_t fences(const lir::Program &p, const TargetDesc &t) {
  if (t.completion != "fence")
    return 0;
  uint64_t n = 0;
  for (const lir::Instr &in : p.body)
    n += in.opcode == "wait" && !in.tokens.empty();
  return n;
}

TEST(NpuWaitsEstimate, OneFencePerWaitOnAFenceNpu) {
  // A wait on a conv and a DMA on npu-third: one fence covers both engines,
  // in the simulator as in the estimate.
  TargetDesc t = load(test::testTarget("npu-third.json"));
  ASSERT_EQ(t.completion, "fence");
  // Input, weights and bias into scratchpad 0; the conv; an independent load
  // into scratchpad 1. The final wait covers the conv and that DMA.
  Body b;
  b.dma(arena(0, 256), spm(0, 256))
      .dma(buf(lir::Region::Const, 0, 0, 256), spm(1024, 256))
      .dma(buf(lir::Region::Const, 0, 256, 64), spm(2048, 64))
      .conv(0, 1024, 2048, 4096)
      .dma(arena(512, 64), spm(0, 64, 1));
  lir::ConstBuffer blob;
  blob.name = "npu_const";
  blob.data = ir::Tensor(ir::DType::U8, {320});
  b.p.constants.push_back(std::move(blob));
  ASSERT_TRUE(lower::insertNpuWaits(b.p, t).ok());
  EXPECT_EQ(withWaits(b, t), "dma#0 | wait #0 | dma#1 | wait #1 | dma#2 | wait #2 | conv#3 | "
                             "dma#4 | wait #3 #4");
  std::vector<uint8_t> arenaMem(1024, 5), constMem(320, 1);
  lower::NpuEstimate e = lower::estimateProgram(b.p, t);
  SimRun r = runOnSim(b.p, t, arenaMem, constMem);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.totals.commands, 5u + 4u); // five commands, one fence per wait
  EXPECT_EQ(r.totals.end_cycles, e.cycles);
}

TEST_P(NpuWaitsOnSim, ScheduledConvRunsWithoutHazardAndAsEstimated) {
  TargetDesc t = load(GetParam());
  const target::OpLimits *conv = t.operation("conv");
  ASSERT_TRUE(conv);
  // Big enough for several row tiles and channel blocks on every test NPU.
  // fp32_scale (npu-fp32lut) reads per-channel scales, as Legality.cpp decides.
  bool fp32 = conv->stage(NPUCC_SLOT_REQUANT) == NPUCC_STAGE_RQ_FP32;
  target::NpuOp op = test::sameConv(24, 16, 32, 64, 3, !conv->perTensorRequant || fp32);
  op.fp32Scale = fp32;
  uint64_t constBytes = 0, arenaBytes = 0;
  lir::Program p = scheduledLayer(op, t, constBytes, arenaBytes);
  ASSERT_FALSE(p.body.empty());
  std::vector<uint8_t> arenaMem(arenaBytes, 3), constMem(constBytes, 1);
  lower::NpuEstimate e = lower::estimateProgram(p, t);
  SimRun r = runOnSim(p, t, arenaMem, constMem);
  expectAsEstimated(r, e, t.name);
  EXPECT_EQ(r.totals.macs, op.macs);
  EXPECT_EQ(e.macs, op.macs);
  if (t.registersPersist) { // issue 21 step 1: fewer writes than with every register rewritten
    TargetDesc all = t;
    all.registersPersist = false;
    EXPECT_LT(e.regWrites, lower::estimateProgram(p, all).regWrites) << t.name;
  }
  // The weights come from system memory at least once, by DMA or read by the NPU itself
  // (npu-sysmem: counted since the NPU's own reads count as traffic).
  EXPECT_GE(r.totals.sys_bytes_read, uint64_t(op.outC * op.kh * op.kw * op.inC) + 24 * 16 * 32)
      << t.name;
}

TEST_P(NpuWaitsOnSim, HandBuiltBodyRunsAsEstimated) {
  // Load the input and one weight record (weights | bias | per-channel table),
  // one conv, store its output: the waits come from insertNpuWaits alone.
  TargetDesc t = load(GetParam());
  const target::Scratchpad &s = t.scratchpads[0];
  bool perChannel = !t.operation("conv")->perTensorRequant ||
                    t.operation("conv")->stage(NPUCC_SLOT_REQUANT) == NPUCC_STAGE_RQ_FP32;
  auto up = [](int64_t v, int64_t a) { return (v + a - 1) / a * a; };
  int64_t a = 64;
  for (unsigned x : s.operandAlignment)
    a = std::max<int64_t>(a, x);
  // Weights in another bank than the input where there are banks (npu-fourth
  // keeps in and w apart), the output in a third one where there is one
  // (npu-queue keeps w and out apart).
  int64_t w = s.banks > 1 ? int64_t(s.bankSize) : 4 * a;
  int64_t bias = up(w + 256, s.alignmentOf(target::Operand::Bias));
  int64_t rq = up(bias + 64, s.alignmentOf(target::Operand::Rq));
  int64_t end = perChannel ? rq + 128 : bias + 64;
  int64_t out = s.banks > 2 ? 2 * int64_t(s.bankSize) : up(end, a);
  // Where conv reads w, bias and rq from system memory ("operands",
  // npu-sysmem), they stay in the blob at the same offsets: no DMA.
  bool sys = t.operation("conv")->inSystem(target::Operand::W);
  auto record = [&](int64_t at, int64_t size) {
    return sys ? buf(lir::Region::Const, 0, at - w, size) : spm(at, size);
  };
  Body b;
  b.dma(arena(0, 256), spm(0, 256));
  if (!sys)
    b.dma(buf(lir::Region::Const, 0, 0, end - w), spm(w, end - w));
  b.conv(0, w, bias, out);
  b.p.body.back().params[1].second = record(w, 256);
  b.p.body.back().params[2].second = record(bias, 64);
  if (perChannel) {
    b.p.body.back().params.emplace_back("rq_addr", record(rq, 128));
    b.p.body.back().params.emplace_back("per_channel", int64_t(1));
  }
  b.dma(spm(out, 256), arena(512, 256));
  lir::ConstBuffer blob;
  blob.name = "npu_const";
  blob.data = ir::Tensor(ir::DType::U8, {end - w});
  b.p.constants.push_back(std::move(blob));
  ASSERT_TRUE(lower::insertNpuWaits(b.p, t).ok());
  std::vector<uint8_t> arenaMem(1024, 5), constMem(size_t(end - w), 1);
  lower::NpuEstimate e = lower::estimateProgram(b.p, t);
  SimRun r = runOnSim(b.p, t, arenaMem, constMem);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.totals.commands, e.commands + fences(b.p, t));
  EXPECT_EQ(r.totals.dma_busy_cycles, e.dmaBusy);
  EXPECT_EQ(r.totals.compute_busy_cycles, e.computeBusy);
  EXPECT_EQ(r.totals.macs, uint64_t(4 * 4 * 16 * 16));
  EXPECT_EQ(r.totals.end_cycles, e.cycles) << t.name;
  EXPECT_EQ(r.totals.reg_writes, e.regWrites) << t.name;
}

TEST(NpuWaitsEstimate, ScheduledPooledConvRunsAsEstimatedAndStoresThePool) {
  // npu-fpool's fused max pool (phase 7e): the conv computed at its resolution
  // in row tiles of whole windows, each stored pooled; the estimate predicts the
  // simulator's cycles and traffic; the stores write the pooled output only.
  TargetDesc t = load(test::testTarget("npu-fpool.json"));
  for (int64_t k : {2, 4}) {
    target::NpuOp op = test::sameConv(24, 16, 32, 64, 3, true);
    op.poolK = k;
    lower::npu::Layer l = lower::npu::makeLayer(op);
    auto c = lower::npu::chooseTiling(l, t);
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->tiling.rows % k, 0) << c->tiling.text();
    uint64_t constBytes = 0, arenaBytes = 0;
    lir::Program p = scheduledLayer(op, t, constBytes, arenaBytes);
    ASSERT_FALSE(p.body.empty());
    size_t pooled = 0;
    for (const lir::Instr &in : p.body)
      if (in.opcode == "npu" && in.callee == "conv") {
        EXPECT_EQ(lower::npu::paramValue(in, "pool_k"), k);
        EXPECT_EQ(lower::npu::paramValue(in, "out_h") % k, 0);
        ++pooled;
      }
    EXPECT_GT(pooled, 0u);
    std::vector<uint8_t> arenaMem(arenaBytes, 3), constMem(constBytes, 1);
    lower::NpuEstimate e = lower::estimateProgram(p, t);
    SimRun r = runOnSim(p, t, arenaMem, constMem);
    expectAsEstimated(r, e, "pool_k " + std::to_string(k));
    EXPECT_EQ(r.totals.macs, op.macs);
    EXPECT_EQ(e.macs, op.macs);
    EXPECT_EQ(r.totals.sys_bytes_written, uint64_t(24 / k * (16 / k) * 64)) << k;
  }
}

TEST(NpuWaitsEstimate, ScheduledSelectConvRunsAsEstimatedAndStoresTheSelection) {
  // npu-select's select stage (phase 7e, second part): a stride-2 conv run at
  // stride 1 over the whole windows (24 x 16 computed), each row tile keeping
  // pixel (0, 1) of every 2x2 window; the estimate predicts the simulator's
  // cycles and traffic (MACs at the computed resolution); the stores write the
  // 12 x 8 selection only.
  TargetDesc t = load(test::testTarget("npu-select.json"));
  target::NpuOp op = test::sameConv(24, 16, 32, 64, 3, true);
  op.poolK = 2, op.poolSelect = true, op.poolOffX = 1;
  lower::npu::Layer l = lower::npu::makeLayer(op);
  auto c = lower::npu::chooseTiling(l, t);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->tiling.rows % 2, 0) << c->tiling.text();
  uint64_t constBytes = 0, arenaBytes = 0;
  lir::Program p = scheduledLayer(op, t, constBytes, arenaBytes);
  ASSERT_FALSE(p.body.empty());
  size_t selected = 0;
  for (const lir::Instr &in : p.body)
    if (in.opcode == "npu" && in.callee == "conv") {
      EXPECT_EQ(lower::npu::paramValue(in, "pool_k"), 2);
      EXPECT_EQ(lower::npu::paramValue(in, "pool_off_x"), 1);
      EXPECT_EQ(lower::npu::paramValue(in, "stride_h"), 1);
      EXPECT_EQ(lower::npu::paramValue(in, "out_h") % 2, 0);
      ++selected;
    }
  EXPECT_GT(selected, 0u);
  std::vector<uint8_t> arenaMem(arenaBytes, 3), constMem(constBytes, 1);
  lower::NpuEstimate e = lower::estimateProgram(p, t);
  SimRun r = runOnSim(p, t, arenaMem, constMem);
  expectAsEstimated(r, e, "select 2 at [0, 1]");
  EXPECT_EQ(r.totals.macs, op.macs);
  EXPECT_EQ(e.macs, op.macs);
  EXPECT_EQ(r.totals.sys_bytes_written, uint64_t(12 * 8 * 64));
}

INSTANTIATE_TEST_SUITE_P(AllTargets, NpuWaitsOnSim, ::testing::ValuesIn(test::allTargets()),
                         test::targetTestName);

} // namespace
