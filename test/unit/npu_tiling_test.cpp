//===- npu_tiling_test.cpp - The tiling follows the NPU description --------===//
//
// Changing only the JSON of a description (runtime/targets/npu-default.json,
// edited) changes the tiling decisions and the figures accordingly:
//   scratchpad size  smaller -> smaller tiles, streamed weights; too small ->
//                    npuTilingFits false with the bytes in the reason;
//   MAC array        compute cycles scale with ceil(ch / rows|cols); output
//                    channel blocks are multiples of the rows;
//   DMA width        bytes_per_cycle -> DMA cycles; a slow DMA moves less;
//   overlap          concurrent_dma_compute false -> DMA and compute in
//                    series (estimate >= their sum), true -> they overlap;
//   alignment        scratchpad offsets multiples of the operand alignment;
//   banks            separate_banks keeps input and weights in other banks.
// The figures are recomputed here from the scheduled commands with the cycle
// formulas of runtime/hal/npucc_timing.h, independently of Estimate.cpp.
//
//===----------------------------------------------------------------------===//
#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/ir/Parser.h"
#include "npucc/passes/Pass.h"
#include "npucc/target/Target.h"

#include "NpuTestOps.h"
#include "TargetJsonEdit.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

using namespace npucc;
using namespace npucc::lower::npu;
using npucc::target::TargetDesc;
using Json = nlohmann::json;
using npucc::lower::NpuEstimate;

namespace {

Json defaultJson() {
  return Json::parse(test::readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
}

/// npu-default with `edit` applied to its JSON.
TargetDesc described(const std::function<void(Json &)> &edit = {}) {
  Json j = defaultJson();
  if (edit)
    edit(j);
  auto r = target::parseTargetJson(j.dump(2), "edited.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : TargetDesc{};
}

Json &spm0(Json &j) { return j["memories"]["scratchpads"][0]; }

/// A same-padded convolution H x W x C -> H x W x OC with a k x k kernel.
target::NpuOp conv(int64_t h, int64_t w, int64_t c, int64_t oc, int64_t k) {
  return test::sameConv(h, w, c, oc, k);
}

target::NpuOp matmul(int64_t m, int64_t k, int64_t n) {
  target::NpuOp o;
  o.kind = NPUCC_KIND_MATMUL;
  o.kindName = "matmul";
  o.m = m, o.k = k, o.n = n;
  o.macs = uint64_t(m * k * n);
  return o;
}

/// The chosen tiling and its commands (scheduled as chooseTiling times them,
/// with waits).
struct Plan {
  Choice choice;
  Buffers buffers;
  std::vector<lir::Instr> body;
  std::vector<const lir::Instr *> dmas, computes;
};

Plan plan(const target::NpuOp &op, const TargetDesc &t) {
  Plan p;
  Layer l = makeLayer(op);
  auto c = chooseTiling(l, t);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  if (!c.ok())
    return p;
  p.choice = c.take();
  p.buffers = tilingBuffers(l, t, p.choice.tiling);
  LayerIo io;
  io.in.region = io.in2.region = io.out.region = lir::Region::Arena;
  io.blob.region = lir::Region::Const;
  lir::Program prog;
  int tok = 0;
  Status s = scheduleLayer(l, t, p.choice.tiling, p.choice.spm, io, tok, "", prog.body);
  EXPECT_TRUE(s.ok());
  EXPECT_TRUE(lower::insertNpuWaits(prog, t).ok());
  p.body = std::move(prog.body);
  for (const lir::Instr &in : p.body)
    if (in.opcode == "npu")
      (in.callee == "dma" ? p.dmas : p.computes).push_back(&in);
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// npucc_timing.h's DMA formula (npu-default's windows add no latency and no
/// rate of their own), plus the command overhead.
uint64_t dmaCycles(const lir::Instr &in, const TargetDesc &t) {
  int64_t rate = std::min(t.dma.readBytesPerCycle, t.dma.writeBytesPerCycle);
  return t.dma.setupCycles + uint64_t(paramValue(in, "rows") * paramValue(in, "planes") *
                                      ceilDiv(paramValue(in, "length"), rate)) +
         t.timing.commandOverheadCycles;
}

/// npucc_timing.h's conv formula (npu-default has no per-operation timing).
uint64_t convCycles(const lir::Instr &in, const TargetDesc &t) {
  auto v = [&](const char *n) { return paramValue(in, n); };
  return uint64_t(v("out_h") * v("out_w") * v("k_h") * v("k_w") *
                  ceilDiv(v("in_ch"), t.compute.macCols) * ceilDiv(v("out_ch"), t.compute.macRows)) +
         t.timing.commandOverheadCycles;
}

uint64_t sum(const std::vector<const lir::Instr *> &v, const TargetDesc &t,
             uint64_t (*f)(const lir::Instr &, const TargetDesc &)) {
  uint64_t s = 0;
  for (const lir::Instr *in : v)
    s += f(*in, t);
  return s;
}

/// Every placed buffer lies inside its scratchpad.
void expectInside(const Plan &p, const TargetDesc &t) {
  ASSERT_EQ(p.choice.spm.size(), p.buffers.requests.size());
  for (size_t i = 0; i < p.choice.spm.size(); ++i)
    EXPECT_LE(p.choice.spm[i].offset + p.buffers.requests[i].size,
              t.scratchpads[size_t(p.choice.spm[i].spm)].size)
        << p.buffers.requests[i].what;
}

const lir::BufferRef &addr(const lir::Instr &in, const char *name) {
  static const lir::BufferRef none;
  const lir::Arg *a = paramArg(in, name);
  const lir::BufferRef *b = a ? std::get_if<lir::BufferRef>(a) : nullptr;
  EXPECT_TRUE(b) << name;
  return b ? *b : none;
}

// --- Scratchpad size ----------------------------------------------------------------------

TEST(NpuTiling, SmallerScratchpadGivesSmallerTiles) {
  target::NpuOp op = conv(32, 32, 32, 64, 3);
  TargetDesc big = described();
  TargetDesc small = described([](Json &j) { spm0(j)["size"] = 24576; });
  Plan a = plan(op, big), b = plan(op, small);
  expectInside(a, big);
  expectInside(b, small);
  EXPECT_LE(b.choice.spmBytes, 24576u);
  EXPECT_LT(b.choice.tiling.rows, a.choice.tiling.rows);
  EXPECT_GT(b.computes.size(), a.computes.size());
  // Same MACs either way, more DMA work for the small tiles (halo rows).
  EXPECT_EQ(a.choice.estimate.macs, op.macs);
  EXPECT_EQ(b.choice.estimate.macs, op.macs);
  EXPECT_GT(b.choice.estimate.dmaBusy, a.choice.estimate.dmaBusy);
}

TEST(NpuTiling, ScratchpadDecidesBetweenOneCommandAndStreamedWeights) {
  // Without DMA/compute overlap nothing hides the transfers: a scratchpad that
  // holds the whole layer runs it as one command; smaller ones need row tiles,
  // and one too small for all weight records streams them block by block.
  target::NpuOp op = conv(32, 32, 32, 64, 3);
  auto serial = [](uint64_t size) {
    return described([&](Json &j) {
      j["concurrent_dma_compute"] = false;
      spm0(j)["size"] = size;
    });
  };
  TargetDesc t256 = serial(262144), t32 = serial(32768), t24 = serial(24576);
  Plan whole = plan(op, t256), tiles = plan(op, t32), streamed = plan(op, t24);
  EXPECT_EQ(whole.computes.size(), 1u);
  EXPECT_EQ(whole.choice.tiling.rows, 32);
  EXPECT_EQ(whole.choice.tiling.block, 64);
  EXPECT_TRUE(whole.choice.tiling.resident);
  EXPECT_GT(tiles.computes.size(), 1u);
  EXPECT_TRUE(tiles.choice.tiling.resident);
  EXPECT_FALSE(streamed.choice.tiling.resident);
  // The same tiles with all weight records resident do not fit.
  Tiling resident = streamed.choice.tiling;
  resident.resident = true;
  EXPECT_FALSE(allocateSpm(t24, tilingBuffers(makeLayer(op), t24, resident).requests).ok());
  for (const Plan *p : {&whole, &tiles, &streamed})
    EXPECT_EQ(p->choice.estimate.macs, op.macs);
}

TEST(NpuTiling, TooSmallScratchpadIsRefusedWithTheBytes) {
  target::NpuOp op = conv(32, 32, 32, 64, 3);
  TargetDesc t = described([](Json &j) { spm0(j)["size"] = 2048; });
  std::string why;
  EXPECT_FALSE(lower::npuTilingFits(op, t, &why));
  EXPECT_NE(why.find("does not fit"), std::string::npos) << why;
  EXPECT_NE(why.find("for 2048 bytes of scratchpad"), std::string::npos) << why;
  // The reason names what is needed: a byte count larger than what is there.
  size_t at = why.find(" bytes of buffers");
  ASSERT_NE(at, std::string::npos) << why;
  size_t start = why.rfind(' ', at - 1) + 1;
  EXPECT_GT(std::stoull(why.substr(start, at - start)), 2048u) << why;
  // The same layer fits the unedited description.
  EXPECT_TRUE(lower::npuTilingFits(op, described(), &why)) << why;
}

TEST(NpuTiling, RefusalNamesTheSmallestTilingsNeed) {
  // The reason is the shortfall of the candidate needing the least: one
  // output row, the smallest channel block (the MAC rows), weights streamed.
  target::NpuOp op = conv(32, 32, 32, 64, 3);
  TargetDesc t = described([](Json &j) { spm0(j)["size"] = 2048; });
  std::string why;
  ASSERT_FALSE(lower::npuTilingFits(op, t, &why));
  size_t at = why.find(" bytes of buffers");
  ASSERT_NE(at, std::string::npos) << why;
  size_t start = why.rfind(' ', at - 1) + 1;
  uint64_t reported = std::stoull(why.substr(start, at - start));
  Tiling smallest;
  smallest.rows = 1;
  smallest.block = t.compute.macRows;
  smallest.resident = false;
  uint64_t need = 0;
  for (const SpmRequest &r : tilingBuffers(makeLayer(op), t, smallest).requests)
    need += r.size;
  EXPECT_EQ(reported, need) << why;
  EXPECT_LT(need, 20000u); // far below the whole-layer tiling's 116992
}

TEST(NpuTiling, BanksWithoutSeparationRulesDoNotSplitBuffers) {
  // 16 KiB in 4 banks, no separate_banks: a 28 KiB weights record cannot be
  // resident, but streamed blocks fit when buffers may cross bank borders;
  // they could not if each had to start in an empty bank.
  target::NpuOp op = conv(8, 8, 32, 96, 3);
  TargetDesc t = described([](Json &j) {
    spm0(j)["size"] = 16384;
    spm0(j)["banks"] = 4;
    spm0(j).erase("separate_banks");
    spm0(j).erase("bank_conflict");
    spm0(j).erase("conflict_slowdown");
  });
  std::string why;
  EXPECT_TRUE(lower::npuTilingFits(op, t, &why)) << why;
  TargetDesc one = described([](Json &j) {
    spm0(j)["size"] = 16384;
    spm0(j)["banks"] = 1;
    spm0(j).erase("separate_banks");
    spm0(j).erase("bank_conflict");
    spm0(j).erase("conflict_slowdown");
  });
  auto a = plan(op, t), b = plan(op, one);
  EXPECT_EQ(a.choice.tiling.text(), b.choice.tiling.text());
  EXPECT_EQ(a.choice.estimate.cycles, b.choice.estimate.cycles);
}

TEST(NpuTiling, PartitionKeepsAnUntileableConvOnTheCpu) {
  const char *ir = R"(graph @main(%x: i8[1,32,32,32] q(0.5, 0)) -> (%y) {
  const @w: i8[64,32,3,3] q(0.05, 0) = dense<elided>
  const @b: i32[64] = dense<elided>
  %y = Conv(%x, @w, @b) {kernel_shape=[3, 3], pads=[1, 1, 1, 1]} : i8[1,64,32,32] q(0.25, 0) loc("c")
  return %y
}
)";
  for (uint64_t size : {262144u, 2048u}) {
    TargetDesc t = described([&](Json &j) { spm0(j)["size"] = size; });
    auto g = ir::parseGraph(ir, "t.ir");
    ASSERT_TRUE(g.ok());
    passes::PassContext ctx;
    ctx.target = &t;
    ASSERT_TRUE(passes::runPipeline(**g, "npu-partition", ctx).ok());
    std::string npu;
    for (const auto &n : (*g)->nodes())
      if (n->name == "c")
        npu = n->attrString("npu", "");
    EXPECT_EQ(npu, size == 2048 ? "" : "conv") << size;
    EXPECT_EQ(ctx.stats["npu-partition.no-tiling"], size == 2048 ? 1 : 0) << size;
  }
}

// --- MAC array shape ----------------------------------------------------------------------

TEST(NpuTiling, ComputeCyclesFollowTheMacArray) {
  // 64 input and 96 output channels: ceil(64 / cols) x ceil(block / rows) steps
  // per output pixel and kernel tap.
  target::NpuOp op = conv(32, 32, 64, 96, 3);
  std::map<std::string, uint64_t> compute;
  for (auto rc : std::vector<std::pair<int, int>>{{8, 16}, {16, 16}, {16, 8}}) {
    TargetDesc t = described([&](Json &j) {
      j["compute"]["mac_array"]["rows"] = rc.first;
      j["compute"]["mac_array"]["cols"] = rc.second;
    });
    Plan p = plan(op, t);
    std::string key = std::to_string(rc.first) + "x" + std::to_string(rc.second);
    compute[key] = p.choice.estimate.computeBusy;
    // The estimate is the timing formula over the scheduled commands.
    EXPECT_EQ(p.choice.estimate.computeBusy, sum(p.computes, t, convCycles)) << key;
    EXPECT_EQ(p.choice.estimate.macs, op.macs) << key;
  }
  // Half the rows (or columns) of the MAC array: about twice the cycles.
  EXPECT_GT(compute["8x16"], compute["16x16"] * 19 / 10);
  EXPECT_GT(compute["16x8"], compute["16x16"] * 19 / 10);
  EXPECT_LE(compute["8x16"], compute["16x16"] * 2);
}

TEST(NpuTiling, OutputChannelBlocksAreMultiplesOfTheMacRows) {
  target::NpuOp op = conv(32, 32, 64, 96, 3);
  std::set<int64_t> blocks;
  for (int rows : {8, 16, 24, 32}) {
    TargetDesc t = described([&](Json &j) { j["compute"]["mac_array"]["rows"] = rows; });
    Plan p = plan(op, t);
    int64_t b = p.choice.tiling.block;
    blocks.insert(b);
    EXPECT_TRUE(b == op.outC || b % rows == 0) << "rows " << rows << ": block " << b;
    for (const lir::Instr *in : p.computes) {
      int64_t oc = paramValue(*in, "out_ch");
      EXPECT_TRUE(oc == b || oc == op.outC % b) << "rows " << rows << ": out_ch " << oc;
      EXPECT_EQ(oc % rows, 0) << "rows " << rows << ": out_ch " << oc;
    }
  }
  EXPECT_GT(blocks.size(), 1u); // the MAC array changes the decision
}

// --- DMA width ----------------------------------------------------------------------------

TEST(NpuTiling, DmaCyclesFollowBytesPerCycle) {
  target::NpuOp op = conv(32, 32, 32, 64, 3);
  Tiling fixed{6, 16, false, true};
  std::vector<uint64_t> cycles;
  for (int bpc : {4, 8, 16}) {
    TargetDesc t = described([&](Json &j) { j["dma"]["bytes_per_cycle"] = bpc; });
    // The chosen tiling: its DMA time is the formula over its transfers.
    Plan p = plan(op, t);
    EXPECT_EQ(p.choice.estimate.dmaBusy, sum(p.dmas, t, dmaCycles)) << bpc;
    // One fixed tiling: the same transfers at another rate.
    Layer l = makeLayer(op);
    auto spm = allocateSpm(t, tilingBuffers(l, t, fixed).requests);
    ASSERT_TRUE(spm.ok());
    LayerIo io;
    io.blob.region = lir::Region::Const;
    lir::Program prog;
    int tok = 0;
    ASSERT_TRUE(scheduleLayer(l, t, fixed, *spm, io, tok, "", prog.body).ok());
    ASSERT_TRUE(lower::insertNpuWaits(prog, t).ok());
    NpuEstimate e = lower::estimateProgram(prog, t);
    uint64_t expect = 0, bytes = 0;
    for (const lir::Instr &in : prog.body)
      if (in.opcode == "npu" && in.callee == "dma") {
        expect += dmaCycles(in, t);
        bytes += uint64_t(paramValue(in, "length") * paramValue(in, "rows"));
      }
    EXPECT_EQ(e.dmaBusy, expect) << bpc;
    EXPECT_GT(e.dmaBusy, bytes / uint64_t(bpc)) << bpc;
    cycles.push_back(e.dmaBusy);
  }
  EXPECT_GT(cycles[0], cycles[1]);
  EXPECT_GT(cycles[1], cycles[2]);
}

TEST(NpuTiling, SlowDmaMovesFewerBytes) {
  // When transfers dominate, the tiler picks the tiling that moves the least
  // system memory (weights resident instead of reloaded per row tile).
  target::NpuOp op = conv(32, 32, 32, 64, 3);
  TargetDesc slow = described([](Json &j) { j["dma"]["bytes_per_cycle"] = 2; });
  TargetDesc fast = described([](Json &j) { j["dma"]["bytes_per_cycle"] = 16; });
  Plan s = plan(op, slow), f = plan(op, fast);
  EXPECT_NE(s.choice.tiling.text(), f.choice.tiling.text());
  EXPECT_LT(s.choice.estimate.sysRead, f.choice.estimate.sysRead);
  // Inputs (32 KiB) and weights (18 KiB + bias) at least once.
  EXPECT_GE(s.choice.estimate.sysRead, uint64_t(32 * 32 * 32 + 64 * 9 * 32 + 64 * 4));
  EXPECT_EQ(s.choice.estimate.sysWrite, uint64_t(32 * 32 * 64));
}

// --- DMA / compute overlap ----------------------------------------------------------------

/// No command starts while one of the other engine (or its own) is pending,
/// per the waits the schedule carries.
bool neverOverlaps(const std::vector<lir::Instr> &body) {
  std::map<int, int> engineOf;
  std::set<int> pending; // engines with an unsettled command
  for (const lir::Instr &in : body) {
    if (in.opcode == "wait") {
      for (int t : in.tokens)
        pending.erase(engineOf[t]);
    } else if (in.opcode == "npu") {
      if (!pending.empty())
        return false;
      int e = in.callee == "dma" ? 0 : 1;
      engineOf[in.token] = e;
      pending.insert(e);
    }
  }
  return true;
}

TEST(NpuTiling, OverlapOfDmaAndComputeFollowsTheDescription) {
  target::NpuOp op = conv(32, 32, 32, 64, 3);
  TargetDesc on = described(), off = described([](Json &j) { j["concurrent_dma_compute"] = false; });
  ASSERT_TRUE(on.concurrentDmaCompute);
  Plan a = plan(op, on), b = plan(op, off);
  const NpuEstimate &ea = a.choice.estimate, &eb = b.choice.estimate;
  // Serial: the time is at least DMA plus compute.
  EXPECT_TRUE(neverOverlaps(b.body));
  EXPECT_GE(eb.cycles, eb.computeBusy + eb.dmaBusy);
  // Concurrent: transfers hide behind compute.
  EXPECT_FALSE(neverOverlaps(a.body));
  EXPECT_LT(ea.cycles, ea.computeBusy + ea.dmaBusy);
  EXPECT_GE(ea.cycles, std::max(ea.computeBusy, ea.dmaBusy));
  EXPECT_LT(ea.cycles, eb.cycles);
  // The same tiling scheduled for the serial NPU costs the sum there.
  Layer l = makeLayer(op);
  auto spm = allocateSpm(off, a.buffers.requests);
  ASSERT_TRUE(spm.ok());
  LayerIo io;
  io.blob.region = lir::Region::Const;
  lir::Program prog;
  int tok = 0;
  ASSERT_TRUE(scheduleLayer(l, off, a.choice.tiling, *spm, io, tok, "", prog.body).ok());
  ASSERT_TRUE(lower::insertNpuWaits(prog, off).ok());
  EXPECT_TRUE(neverOverlaps(prog.body));
  NpuEstimate same = lower::estimateProgram(prog, off);
  EXPECT_EQ(same.computeBusy, ea.computeBusy);
  EXPECT_EQ(same.dmaBusy, ea.dmaBusy);
  EXPECT_GE(same.cycles, same.computeBusy + same.dmaBusy);
}

// --- Alignment ----------------------------------------------------------------------------

TEST(NpuTiling, ScratchpadOffsetsFollowOperandAlignment) {
  target::NpuOp op = conv(32, 32, 32, 64, 3);
  const std::map<std::string, unsigned> want = {{"in", 256}, {"w", 128}, {"bias", 64}, {"out", 512}};
  auto misaligned = [&](const Plan &p) {
    int bad = 0;
    for (const lir::Instr *in : p.computes)
      for (const auto &kv : want)
        bad += addr(*in, (kv.first + "_addr").c_str()).offset % kv.second != 0;
    return bad;
  };
  // Unedited (alignment 16), the same layer has offsets that break these.
  Plan before = plan(op, described());
  EXPECT_GT(misaligned(before), 0);
  TargetDesc t = described([&](Json &j) {
    for (const auto &kv : want)
      spm0(j)["operand_alignment"][kv.first] = kv.second;
  });
  Plan p = plan(op, t);
  expectInside(p, t);
  EXPECT_EQ(misaligned(p), 0);
  // The buffers themselves start at the strictest alignment of their roles.
  for (size_t i = 0; i < p.choice.spm.size(); ++i) {
    unsigned roles = p.buffers.requests[i].roles, a = 1;
    for (int r = 0; r < target::NumOperands; ++r)
      if (roles & (1u << r))
        a = std::max(a, t.scratchpads[0].alignmentOf(target::Operand(r)));
    EXPECT_EQ(p.choice.spm[i].offset % a, 0u) << p.buffers.requests[i].what;
  }
}

// --- Banks --------------------------------------------------------------------------------

/// Conv commands whose input and weights start in the same bank.
int sameBank(const Plan &p, const TargetDesc &t) {
  int n = 0;
  for (const lir::Instr *in : p.computes) {
    const lir::BufferRef &x = addr(*in, "in_addr"), &w = addr(*in, "w_addr");
    const target::Scratchpad &s = t.scratchpads[size_t(x.index)];
    n += x.index == w.index && uint64_t(x.offset) / s.bankSize == uint64_t(w.offset) / s.bankSize;
  }
  return n;
}

TEST(NpuTiling, SeparateBanksKeepInputAndWeightsApart) {
  target::NpuOp op = conv(32, 32, 32, 64, 3);
  TargetDesc plain = described();
  ASSERT_EQ(plain.scratchpads[0].banks, 4u);
  Plan before = plan(op, plain);
  EXPECT_GT(sameBank(before, plain), 0); // nothing keeps them apart
  TargetDesc t = described([](Json &j) { spm0(j)["separate_banks"] = Json::array({Json::array({"in", "w"})}); });
  Plan p = plan(op, t);
  expectInside(p, t);
  EXPECT_EQ(sameBank(p, t), 0);
  // Every input buffer against every weight buffer, as allocated.
  const target::Scratchpad &s = t.scratchpads[0];
  for (size_t i = 0; i < p.choice.spm.size(); ++i)
    for (size_t k = 0; k < p.choice.spm.size(); ++k) {
      const SpmRequest &a = p.buffers.requests[i], &b = p.buffers.requests[k];
      if ((a.roles & (1u << unsigned(target::Operand::In))) &&
          (b.roles & (1u << unsigned(target::Operand::W)))) {
        EXPECT_NE(p.choice.spm[i].offset / s.bankSize, p.choice.spm[k].offset / s.bankSize)
            << a.what << " @" << p.choice.spm[i].offset << ", " << b.what << " @"
            << p.choice.spm[k].offset;
      }
    }
}

TEST(NpuTiling, MatmulFollowsTheScratchpadToo) {
  // A 512 x 256 weight matrix (128 KiB) never fits a 64 KiB scratchpad whole:
  // the weights stream in blocks of output channels, multiples of the rows.
  target::NpuOp op = matmul(1, 512, 256);
  TargetDesc t = described([](Json &j) { spm0(j)["size"] = 65536; });
  Plan p = plan(op, t);
  expectInside(p, t);
  EXPECT_LT(p.choice.tiling.block, 256);
  EXPECT_EQ(p.choice.tiling.block % 16, 0);
  EXPECT_EQ(p.computes.size(), size_t(256 / p.choice.tiling.block));
  EXPECT_EQ(p.choice.estimate.macs, op.macs);
  // Every weight byte crosses the DMA once.
  EXPECT_GE(p.choice.estimate.sysRead, uint64_t(512 * 256));
  EXPECT_LT(p.choice.estimate.sysRead, uint64_t(512 * 256 + 256 * 4 + 512 * 4 + 4096));
}

/// npu-default whose conv, depthwise and matmul read w, bias and rq from
/// system memory themselves (issue 19 phase 5, test/target/npu-sysmem.json).
TargetDesc systemOperands(unsigned wAlign = 64) {
  return described([&](Json &j) {
    for (const char *op : {"conv", "depthwise", "matmul"})
      j["compute"]["operations"][op]["operands"] = {
          {"w", {{"memory", "system"}, {"alignment", wAlign}}},
          {"bias", {{"memory", "system"}}},
          {"rq", {{"memory", "system"}, {"alignment", 8}}}};
  });
}

TEST(NpuTiling, SystemOperandsTakeNoScratchpadAndNoDma) {
  // The 128 KiB matmul above, its weights read by the NPU from the constant
  // blob: one command, no weights record in the scratchpad, no DMA of
  // weights (only the input in and the output out; the NPU reads the record
  // itself, which counts as system traffic), and every w/bias/rq
  // address an aligned offset of the blob.
  target::NpuOp op = matmul(1, 512, 256);
  op.perChannel = true;
  TargetDesc t = systemOperands();
  t.scratchpads[0].size = 65536, t.scratchpads[0].bankSize = 65536 / t.scratchpads[0].banks;
  Plan p = plan(op, t);
  expectInside(p, t);
  EXPECT_EQ(p.buffers.wCount, 0);
  for (const SpmRequest &r : p.buffers.requests)
    EXPECT_EQ(r.roles & (1u << unsigned(target::Operand::W)), 0u) << r.what;
  EXPECT_EQ(p.choice.tiling.block, 256);
  ASSERT_EQ(p.computes.size(), size_t(1));
  EXPECT_EQ(p.dmas.size(), size_t(2));
  // No DMA of weights, but the NPU's own reads of the record count as traffic: the input
  // row, 128 KiB of weights, 256 int32 biases and 256 (mult, shift) pairs.
  EXPECT_EQ(p.choice.estimate.sysRead, uint64_t(512 + 512 * 256 + 256 * 4 + 256 * 8));
  EXPECT_NE(p.choice.tiling.text().find("weights in system memory"), std::string::npos);
  for (const char *param : {"w_addr", "bias_addr", "rq_addr"}) {
    const lir::Arg *a = paramArg(*p.computes[0], param);
    const lir::BufferRef *b = a ? std::get_if<lir::BufferRef>(a) : nullptr;
    ASSERT_TRUE(b) << param;
    EXPECT_EQ(b->region, lir::Region::Const) << param;
    EXPECT_EQ(b->offset % (std::string(param) == "w_addr" ? 64 : 8), 0) << param;
  }
  // The same layer on npu-default DMAs its 128 KiB of weights.
  EXPECT_GE(plan(op, described([](Json &j) { spm0(j)["size"] = 65536; })).choice.estimate.sysRead,
            uint64_t(512 * 256));
}

TEST(NpuTiling, SystemOperandAlignmentPlacesTheRecords) {
  // Conv blocks of 16 channels: each record starts at a multiple of the
  // weights' system alignment (256) in the blob, bias and rq after it at
  // theirs.
  TargetDesc t = systemOperands(256);
  Layer l = makeLayer(conv(8, 8, 8, 48, 3));
  EXPECT_EQ(recordAlign(t, l), 256u);
  RecordLayout rl = recordLayout(l, t, 16);
  EXPECT_EQ(rl.rqOff % 8, 0u);
  TargetDesc d = described();
  EXPECT_EQ(recordAlign(d, l), 16u);
}

} // namespace
