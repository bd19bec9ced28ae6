//===- npu_handoff_test.cpp - Intermediates handed over in the scratchpad --===//
//
// The hand-off (docs/npu.md, "Hand-off"): allocation around a kept buffer;
// two convolutions scheduled with and without it run on the simulator to
// the same bytes, the kept intermediate never touches system memory, and the
// estimate stays the simulator's; on mlpt_kws_qdq the compiler takes it.
//
//===----------------------------------------------------------------------===//
#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/driver/Driver.h"
#include "npucc/driver/Report.h"
#include "npucc/quant/Multiplier.h"
#include "npucc/target/Target.h"

#include "CiSkip.h"
#include "NpuTestOps.h"
#include "SimBody.h"
#include "TestTargets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <set>

using namespace npucc;
using namespace npucc::lower::npu;
using npucc::target::TargetDesc;

namespace {

TargetDesc load(const std::string &name) {
  auto r = target::loadTarget(name);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : TargetDesc{};
}

lir::BufferRef arenaAt(int64_t off, int64_t size) {
  lir::BufferRef b;
  b.region = lir::Region::Arena;
  b.offset = off;
  b.size = size;
  b.dtype = ir::DType::I8;
  return b;
}

TEST(HandoffAlloc, BuffersAvoidReservedRanges) {
  TargetDesc t = load("npu-default");
  std::vector<SpmRequest> reqs = {{"a", 100, 1u << unsigned(target::Operand::In), {}},
                                  {"b", 64, 1u << unsigned(target::Operand::Out), {}}};
  auto plain = allocateSpm(t, reqs, NPUCC_KIND_CONV);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)[0].offset, 0u);
  // A kept buffer at [0, 1000): both go above it, aligned (16 on npu-default).
  auto above = allocateSpm(t, reqs, NPUCC_KIND_CONV, {{0, 0, 1000}});
  ASSERT_TRUE(above.ok());
  EXPECT_EQ((*above)[0].offset, 1008u);
  EXPECT_EQ((*above)[1].offset, 1008u + 112u);
  // A gap below a reserved range that is too small for "a" is skipped; "b" is
  // placed after "a" (first fit in request order, never below the last).
  auto gap = allocateSpm(t, reqs, NPUCC_KIND_CONV, {{0, 64, 2000}});
  ASSERT_TRUE(gap.ok());
  EXPECT_EQ((*gap)[0].offset, 2000u);
  EXPECT_GE((*gap)[1].offset, 2100u);
  // The mirror gives up where it would land on the reserved range.
  uint64_t top = t.scratchpads[0].size;
  EXPECT_TRUE(mirrorSpm(t, reqs, *plain, NPUCC_KIND_CONV).has_value());
  EXPECT_FALSE(mirrorSpm(t, reqs, *plain, NPUCC_KIND_CONV, {{0, top - 50, top}}).has_value());
}

TEST(HandoffAlloc, KeptInputTakesPartInTheBankRules) {
  // npu-fourth keeps a command's input and weights in different banks (two
  // banks of 64 KiB): weights placed beside a kept input in bank 0 go to bank 1.
  TargetDesc t = load(test::testTarget("npu-fourth.json"));
  std::vector<SpmRequest> w = {{"weights record", 512, 1u << unsigned(target::Operand::W), {}}};
  SpmRange kept{0, 0, 4096, 1u << unsigned(target::Operand::In)};
  auto placed = allocateSpm(t, w, NPUCC_KIND_CONV, {kept});
  ASSERT_TRUE(placed.ok());
  EXPECT_GE((*placed)[0].offset, 65536u);
  // A range only to avoid (no operand of the layer) does not push it out of bank 0.
  kept.roles = 0;
  auto near = allocateSpm(t, w, NPUCC_KIND_CONV, {kept});
  ASSERT_TRUE(near.ok());
  EXPECT_EQ((*near)[0].offset, 4096u);
}

/// Two convolutions A -> B scheduled into one body, with or without the
/// hand-off; A's input at arena 0, A's output (B's input) at `mid`, B's
/// output at `end`; records at blob offsets 0 and `recB`.
struct TwoLayers {
  lir::Program p;
  uint64_t mid = 0, end = 0, outBytes = 0, recB = 0, constBytes = 0;
};

/// A's and B's tilings, B reading A's kept output as its input `operand`
/// when `handoff`; then both scheduled into `r.p` (blob of r.constBytes).
bool scheduleTwo(TwoLayers &r, const TargetDesc &t, const Layer &a, const Layer &b, bool handoff,
                 int operand, const LayerIo &ia, const LayerIo &ib) {
  Handoff ha, hb;
  ha.out = handoff;
  auto ca = chooseTiling(a, t, ha);
  EXPECT_TRUE(ca.ok()) << (ca.ok() ? "" : ca.error().message);
  if (!ca.ok())
    return false;
  if (handoff) {
    Buffers bufs = tilingBuffers(a, t, ca->tiling, ha);
    hb.in = ca->spm[size_t(bufs.inCount + bufs.in2Count + bufs.wCount)];
    hb.inBytes = bufs.outBytes;
    hb.inOperand = operand;
  }
  auto cb = chooseTiling(b, t, hb);
  EXPECT_TRUE(cb.ok()) << (cb.ok() ? "" : cb.error().message);
  if (!cb.ok())
    return false;
  EXPECT_EQ(ca->tiling.block, a.OC); // one block each: records at known offsets
  EXPECT_EQ(cb->tiling.block, b.OC);
  lir::ConstBuffer blob;
  blob.name = "npu_const";
  blob.data = ir::Tensor(ir::DType::U8, {int64_t(r.constBytes)});
  blob.npu = true;
  r.p.constants.push_back(std::move(blob));
  int tok = 0;
  EXPECT_TRUE(scheduleLayer(a, t, ca->tiling, ca->spm, ia, tok, "A", r.p.body, ha).ok());
  EXPECT_TRUE(scheduleLayer(b, t, cb->tiling, cb->spm, ib, tok, "B", r.p.body, hb).ok());
  EXPECT_TRUE(lower::insertNpuWaits(r.p, t).ok());
  return true;
}

TwoLayers schedule(const TargetDesc &t, const Layer &a, const Layer &b, bool handoff) {
  TwoLayers r;
  r.mid = 4096;
  r.end = r.mid + 4096;
  r.outBytes = uint64_t(b.OH * b.OW * b.OC);
  r.recB = 4096;
  r.constBytes = r.recB + recordLayout(b, t, b.OC).size;
  LayerIo ia, ib;
  ia.in = arenaAt(0, a.H * a.W * a.C);
  ia.out = ib.in = arenaAt(int64_t(r.mid), a.OH * a.OW * a.OC);
  ib.out = arenaAt(int64_t(r.end), int64_t(r.outBytes));
  ia.blob.region = ib.blob.region = lir::Region::Const;
  ib.recordsOffset = r.recB;
  if (!scheduleTwo(r, t, a, b, handoff, 0, ia, ib))
    r.p.body.clear();
  return r;
}

/// Runs both schedules on the simulator from the same memory: the hand-off's
/// run is as estimated, ends with the same (varied) output bytes, leaves the
/// intermediate's system memory [lo, hi) untouched, and writes `interBytes`
/// fewer bytes; the runs are returned for the caller's bounds on reads.
std::pair<test::SimRun, test::SimRun>
runBoth(const TwoLayers &on, const TwoLayers &off, const TargetDesc &t,
        const std::vector<uint8_t> &arena0, const std::vector<uint8_t> &consts, uint64_t lo,
        uint64_t hi, uint64_t interBytes, const std::string &what) {
  std::vector<uint8_t> memOn = arena0, memOff = arena0, cOn = consts, cOff = consts;
  test::SimRun rOn = test::runOnSim(on.p, t, memOn, cOn);
  test::SimRun rOff = test::runOnSim(off.p, t, memOff, cOff);
  EXPECT_TRUE(rOn.ok) << rOn.error;
  EXPECT_TRUE(rOff.ok) << rOff.error;
  if (!rOn.ok || !rOff.ok)
    return {rOn, rOff};
  test::expectAsEstimated(rOn, lower::estimateProgram(on.p, t), what);
  std::vector<uint8_t> outOn(memOn.begin() + long(on.end), memOn.end());
  std::vector<uint8_t> outOff(memOff.begin() + long(off.end), memOff.end());
  EXPECT_EQ(outOn, outOff) << what;
  EXPECT_GT(std::set<uint8_t>(outOn.begin(), outOn.end()).size(), 8u)
      << what << ": the outputs should vary";
  // The intermediate stayed in the scratchpad: its arena bytes are untouched.
  EXPECT_EQ(std::count(memOn.begin() + long(lo), memOn.begin() + long(hi), 0), long(hi - lo))
      << what << ": the intermediate's system memory was written";
  EXPECT_EQ(rOn.totals.sys_bytes_written + interBytes, rOff.totals.sys_bytes_written) << what;
  return {rOn, rOff};
}

TEST(Handoff, TwoConvsRunToTheSameBytesWithoutTheIntermediateInMemory) {
  TargetDesc t = load("npu-default");
  Layer a = makeLayer(test::sameConv(12, 10, 8, 16, 3));
  Layer b = makeLayer(test::sameConv(12, 10, 16, 8, 3));
  a.fixed = {{"requant_shift", 4}};
  b.fixed = {{"requant_shift", 6}};
  ASSERT_TRUE(canHandOff(a, b, t));
  TwoLayers on = schedule(t, a, b, true), off = schedule(t, a, b, false);
  ASSERT_FALSE(on.p.body.empty());
  ASSERT_FALSE(off.p.body.empty());
  // Random input and weights, zero biases (their records' bias parts).
  std::mt19937 rng(7);
  std::vector<uint8_t> arena0(on.end + on.outBytes, 0), consts(on.constBytes, 0);
  for (uint64_t i = 0; i < uint64_t(a.H * a.W * a.C); ++i)
    arena0[i] = uint8_t(rng());
  for (auto [rec, l] : {std::pair<uint64_t, const Layer *>{0, &a}, {on.recB, &b}}) {
    RecordLayout rl = recordLayout(*l, t, l->OC);
    for (uint64_t i = 0; i < rl.wBytes; ++i)
      consts[rec + rl.wOff + i] = uint8_t(int8_t(int(rng() % 15) - 7));
  }
  // No DMA touches the intermediate's system memory with the hand-off.
  for (const lir::Instr &in : on.p.body)
    if (in.opcode == "npu" && in.callee == "dma")
      for (const char *side : {"src_addr", "dst_addr"})
        if (const auto *ref = std::get_if<lir::BufferRef>(paramArg(in, side))) {
          EXPECT_FALSE(ref->region == lir::Region::Arena && uint64_t(ref->offset) >= on.mid &&
                       uint64_t(ref->offset) < on.end)
              << lir::printInstr(on.p, in);
        }
  uint64_t interBytes = uint64_t(a.OH * a.OW * a.OC);
  auto [rOn, rOff] = runBoth(on, off, t, arena0, consts, on.mid, on.end, interBytes, "hand-off");
  ASSERT_TRUE(rOn.ok && rOff.ok);
  // (Without it, B's input tiles re-read their halo rows.)
  EXPECT_GE(rOff.totals.sys_bytes_read, rOn.totals.sys_bytes_read + interBytes);
  EXPECT_LT(rOn.totals.end_cycles, rOff.totals.end_cycles);
}

/// A conv whose output is an eltwise add's second operand (the first from
/// the arena at `mid2`): with or without the hand-off, in one body.
TwoLayers convIntoAdd(const TargetDesc &t, const Layer &a, const Layer &add, bool handoff,
                      uint64_t mid2) {
  TwoLayers r;
  uint64_t bytes = uint64_t(add.op.length);
  r.mid = 4096;
  r.end = mid2 + 4096;
  r.outBytes = bytes;
  r.constBytes = recordLayout(a, t, a.OC).size;
  LayerIo ia, ib;
  ia.in = arenaAt(0, a.H * a.W * a.C);
  ia.out = ib.in2 = arenaAt(int64_t(r.mid), int64_t(bytes));
  ib.in = arenaAt(int64_t(mid2), int64_t(bytes));
  ib.out = arenaAt(int64_t(r.end), int64_t(bytes));
  ia.blob.region = ib.blob.region = lir::Region::Const;
  if (!scheduleTwo(r, t, a, add, handoff, 1, ia, ib))
    r.p.body.clear();
  return r;
}

TEST(Handoff, ConvIntoAnEltwiseAddsSecondOperand) {
  TargetDesc t = load("npu-default");
  Layer a = makeLayer(test::sameConv(8, 8, 8, 16, 3));
  a.fixed = {{"requant_shift", 4}};
  target::NpuOp op;
  op.kind = NPUCC_KIND_ELTWISE;
  op.kindName = "eltwise";
  op.length = 8 * 8 * 16;
  Layer add = makeLayer(op);
  quant::AddParams ap = quant::addParams(0.1, 0.05, 0.12);
  add.fixed = {{"left_shift", ap.leftShift},   {"in_mult", ap.a.mult},
               {"in_shift", ap.a.shift},       {"in2_mult", ap.b.mult},
               {"in2_shift", ap.b.shift},      {"requant_mult", ap.out.mult},
               {"requant_shift", ap.out.shift}};
  EXPECT_TRUE(canHandOff(a, add, t, 1));
  EXPECT_TRUE(canHandOff(a, add, t, 0));
  EXPECT_FALSE(canHandOff(a, makeLayer(test::sameConv(8, 8, 16, 8, 3)), t, 1));
  uint64_t mid2 = 8192;
  TwoLayers on = convIntoAdd(t, a, add, true, mid2), off = convIntoAdd(t, a, add, false, mid2);
  ASSERT_FALSE(on.p.body.empty());
  ASSERT_FALSE(off.p.body.empty());
  std::mt19937 rng(11);
  std::vector<uint8_t> arena0(on.end + on.outBytes, 0), consts(on.constBytes, 0);
  for (uint64_t i = 0; i < uint64_t(a.H * a.W * a.C); ++i)
    arena0[i] = uint8_t(rng());
  for (uint64_t i = 0; i < on.outBytes; ++i) // the add's first operand
    arena0[mid2 + i] = uint8_t(rng());
  RecordLayout rl = recordLayout(a, t, a.OC);
  for (uint64_t i = 0; i < rl.wBytes; ++i)
    consts[rl.wOff + i] = uint8_t(int8_t(int(rng() % 15) - 7));
  auto [rOn, rOff] = runBoth(on, off, t, arena0, consts, on.mid, on.mid + on.outBytes, on.outBytes,
                             "conv into add");
  ASSERT_TRUE(rOn.ok && rOff.ok);
  // (The two schedules may tile the conv differently: its halo re-reads differ.)
  EXPECT_GE(rOff.totals.sys_bytes_read, rOn.totals.sys_bytes_read + on.outBytes);
}

TEST(Handoff, ConsumerMustMatchTheKeptShape) {
  TargetDesc t = load("npu-default");
  Layer a = makeLayer(test::sameConv(12, 10, 8, 16, 3));
  EXPECT_FALSE(canHandOff(a, makeLayer(test::sameConv(12, 10, 8, 8, 3)), t));  // channels
  EXPECT_FALSE(canHandOff(a, makeLayer(test::sameConv(10, 12, 16, 8, 3)), t)); // rows, cols
  target::NpuOp mm;
  mm.kind = NPUCC_KIND_MATMUL;
  mm.kindName = "matmul";
  mm.m = 120, mm.k = 16, mm.n = 4;
  EXPECT_FALSE(canHandOff(a, makeLayer(mm), t)); // not a row-tiled image layer
}

std::string kwsModel() {
  return std::string(NPUCC_SOURCE_DIR) + "/../shared/models/mlpt_kws_qdq/model.onnx";
}

TEST(Handoff, KwsKeepsItsIntermediatesOnNpuDefault) {
  if (!std::filesystem::exists(kwsModel()))
    NPUCC_SKIP() << kwsModel() << " not present";
  driver::CompileOptions o;
  o.modelPath = kwsModel();
  o.target = "npu-default";
  auto on = driver::compileModel(o);
  o.npuHandoff = false;
  auto off = driver::compileModel(o);
  ASSERT_TRUE(on.ok()) << on.error().str();
  ASSERT_TRUE(off.ok()) << off.error().str();
  driver::CompileReport rOn = driver::buildReport(*on), rOff = driver::buildReport(*off);
  // The eight depthwise/pointwise layers hand over to each other: only the
  // first reads the arena, only the last writes it (system memory: the
  // weights once, the NPU part's input and outputs).
  EXPECT_LE(double(rOn.dramBytes), 1.05 * double(rOn.minDramBytes));
  EXPECT_GT(double(rOff.dramBytes), 3.0 * double(rOff.minDramBytes));
  EXPECT_LT(rOn.cycles, rOff.cycles);
  EXPECT_LT(rOn.cycles, rOn.idealCycles) << "the hand-off beats the per-layer ideal";
  // Seven kept outputs: allocated by one layer, freed by the next.
  int kept = 0;
  std::map<std::string, std::string> allocBy;
  for (const lir::Instr &in : on->program.body)
    if (in.opcode == "alloc" || in.opcode == "free") {
      std::string key = lir::printBuffer(on->program, std::get<lir::BufferRef>(in.args[0]));
      if (in.opcode == "alloc")
        allocBy[key] = in.comment;
      else if (allocBy[key] != in.comment)
        ++kept;
    }
  EXPECT_EQ(kept, 7);
}

} // namespace
