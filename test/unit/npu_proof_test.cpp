//===- npu_proof_test.cpp - Scheduled commands fit their fields, or the layer falls back ===//
//
// Every address and length a scheduled command writes is proven to fit its
// field at compile time (lib/lower/npu/Proof.cpp), the scratchpad allocator
// honours every alignment and the reach of the compute address fields, and
// a layer that cannot be placed falls back naming command, parameter and
// field. Found by differential testing (issue 23): a DMA alignment of 64
// failed compiles (the mirrored placement of odd layers kept only the
// operand alignment), and compute address fields narrower than the
// scratchpad compiled and failed at run time (the mirror put operands where
// the field does not reach).
//
//===----------------------------------------------------------------------===//
#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/target/Target.h"

#include "npucc_desc.h"

#include "NpuTestOps.h"
#include "TargetJsonEdit.h"
#include "TestTargets.h"

#include <gtest/gtest.h>

using namespace npucc;
using namespace npucc::lower::npu;
using npucc::test::json;

namespace {

target::TargetDesc described(const std::string &file, const std::function<void(json &)> &edit) {
  json j = json::parse(test::readText(file));
  if (edit)
    edit(j);
  auto r = target::parseTargetJson(j.dump(2), "edited.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : target::TargetDesc{};
}
const std::string DefaultJson = std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json";

/// npu-default whose conv takes in_addr from a 12-bit field in 16-byte units
/// (0..0xfff0 of the 256 KiB scratchpad), from `minus` on.
target::TargetDesc narrowConvInput(const char *minus = "0x0") {
  return described(DefaultJson, [&](json &j) {
    j["registers"].push_back({{"name", "IN12"},
                              {"offset", "0x200"},
                              {"fields", {{{"name", "a"}, {"lsb", 0}, {"width", 12}}}}});
    j["commands"]["conv"]["params"]["in_addr"] = {
        {"field", "IN12.a"}, {"shift", 4}, {"minus", minus}};
  });
}

lir::BufferRef region(lir::Region r, int64_t off) {
  lir::BufferRef b;
  b.region = r;
  b.offset = off;
  b.dtype = ir::DType::I8;
  return b;
}

/// Schedules `l` with `tl` at `spm` (arena offsets as a compile gives them).
Status schedule(const Layer &l, const target::TargetDesc &t, const Tiling &tl,
                const std::vector<SpmPlace> &spm, std::vector<lir::Instr> &out) {
  LayerIo io;
  io.in = region(lir::Region::Arena, 0);
  io.in2 = region(lir::Region::Arena, 1 << 16);
  io.out = region(lir::Region::Arena, 1 << 17);
  io.blob = region(lir::Region::Const, 0);
  int tok = 0;
  return scheduleLayer(l, t, tl, spm, io, tok, "layer", out);
}

int64_t addr(const target::TargetDesc &t, const lir::Instr &in, const char *param) {
  const lir::Arg *a = paramArg(in, param);
  const lir::BufferRef *b = a ? std::get_if<lir::BufferRef>(a) : nullptr;
  if (!b)
    return -1;
  return b->region == lir::Region::Spm ? int64_t(t.scratchpads[size_t(b->index)].base) + b->offset
                                       : b->offset;
}

TEST(NpuProof, ComputeAddressFieldsNarrowerThanTheScratchpad) {
  target::TargetDesc t = narrowConvInput();
  Layer l = makeLayer(test::sameConv(16, 16, 16, 16, 3));
  auto c = chooseTiling(l, t);
  ASSERT_TRUE(c.ok()) << c.error().str();
  std::vector<lir::Instr> body;
  ASSERT_TRUE(schedule(l, t, c->tiling, c->spm, body).ok());
  for (const lir::Instr &in : body) {
    if (in.opcode == "npu" && in.callee == "conv") {
      EXPECT_LE(addr(t, in, "in_addr"), 0xfff0) << lir::printInstr(lir::Program(), in);
    }
  }
  // The mirror at the top end of the scratchpad (every second layer) would put
  // the input where the field does not reach: refused, the layer keeps its
  // placement. (Before: the program compiled and failed when run, -2.)
  EXPECT_FALSE(mirrorSpm(t, tilingBuffers(l, t, c->tiling).requests, c->spm, l.op.kind));
  // A field that reaches no scratchpad byte: the layer falls back, and says why.
  target::TargetDesc none = narrowConvInput("0x100000");
  std::string why;
  EXPECT_FALSE(lower::npuTilingFits(l.op, none, &why));
  EXPECT_EQ(why, "command 'conv' parameter 'in_addr' cannot address the input tile in scratchpad "
                 "'spm': its field 'IN12.a' holds 0x100000..0x10fff0");
}

TEST(NpuProof, EveryAlignmentIsHonouredByAllocation) {
  // test/target/npu-align.json: DMA 64, weights 32, bias 64, tables 256.
  auto r = target::loadTarget(test::testTarget("npu-align.json"));
  ASSERT_TRUE(r.ok()) << r.error().str();
  const target::TargetDesc &t = *r;
  ASSERT_EQ(t.dma.alignment, 64u);
  // Every scratchpad buffer is moved by DMA: it starts at a multiple of the
  // DMA alignment, not only of its operand's (16 here), at either end.
  // (Before: the output tile at 48, mirrored input at 262096; a DMA of 64
  // then failed the compile: "a DMA address is not a multiple of the DMA
  // alignment 64".)
  std::vector<SpmRequest> reqs = {{"input tile", 40, 1u << NPUCC_OPND_IN, {}},
                                  {"output tile", 10, 1u << NPUCC_OPND_OUT, {}}};
  auto placed = allocateSpm(t, reqs, NPUCC_KIND_MATMUL);
  ASSERT_TRUE(placed.ok()) << placed.error().str();
  auto top = mirrorSpm(t, reqs, *placed, NPUCC_KIND_MATMUL);
  ASSERT_TRUE(top);
  for (const auto &ps : {*placed, *top})
    for (const SpmPlace &p : ps)
      EXPECT_EQ(p.offset % 64, 0u) << p.offset;
  target::NpuOp fc; // a Gemm like torch_ptq_qdq's /fc/Gemm: k 40, n 10
  fc.kind = NPUCC_KIND_MATMUL, fc.kindName = "matmul", fc.m = 1, fc.k = 40, fc.n = 10;
  fc.perChannel = true;
  for (const target::NpuOp &op : {fc, test::sameConv(6, 6, 8, 24, 3, true)}) {
    Layer l = makeLayer(op);
    auto c = chooseTiling(l, t);
    ASSERT_TRUE(c.ok()) << c.error().str();
    std::vector<std::vector<SpmPlace>> placements = {c->spm};
    if (auto m = mirrorSpm(t, tilingBuffers(l, t, c->tiling).requests, c->spm, l.op.kind))
      placements.push_back(*m);
    for (const std::vector<SpmPlace> &places : placements) {
      std::vector<lir::Instr> body;
      Status s = schedule(l, t, c->tiling, places, body);
      ASSERT_TRUE(s.ok()) << s.error().str(); // before: "a DMA address is not a multiple of ..."
      for (const lir::Instr &in : body) {
        if (in.opcode != "npu")
          continue;
        std::string text = lir::printInstr(lir::Program(), in);
        if (in.callee == "dma") {
          EXPECT_EQ(addr(t, in, "src_addr") % 64, 0) << text;
          EXPECT_EQ(addr(t, in, "dst_addr") % 64, 0) << text;
          continue;
        }
        EXPECT_EQ(addr(t, in, "w_addr") % 32, 0) << text;
        EXPECT_EQ(addr(t, in, "bias_addr") % 64, 0) << text;
        EXPECT_EQ(addr(t, in, "rq_addr") % 256, 0) << text;
      }
    }
  }
}

TEST(NpuProof, UnprovableCommandsNameCommandParameterAndField) {
  auto r = target::loadTarget("npu-small");
  ASSERT_TRUE(r.ok()) << r.error().str();
  const target::TargetDesc &t = *r;
  lir::Instr dma;
  dma.opcode = "npu", dma.callee = "dma", dma.token = 0;
  lir::BufferRef spm = region(lir::Region::Spm, 0);
  spm.size = 16;
  dma.params = {
      {"src_addr", region(lir::Region::Arena, 0)}, {"dst_addr", spm}, {"length", int64_t(2000000)}};
  Status s = proveCommand(dma, t);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().str(), "error: command 'dma' parameter 'length' = 2000000 does not fit its "
                             "field 'A2.len' (0..1048575)");
  lir::Instr conv;
  conv.opcode = "npu", conv.callee = "conv", conv.token = 1;
  lir::BufferRef odd = spm;
  odd.offset = 8;
  conv.params = {{"in_addr", odd},  {"w_addr", spm},  {"bias_addr", spm},
                 {"out_addr", spm}, {"rq_addr", spm}, {"per_channel", int64_t(1)}};
  s = proveCommand(conv, t);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().str(), "error: command 'conv' parameter 'in_addr' = 0x10000008 does not fit "
                             "its field 'A0.x' (0x10000000..0x1000fff0 in units of 16)");
}

// The cycle model as data (issue 19, phase 8): a steps expression that fails for a command's
// parameters makes the command unprovable (the simulator would refuse it), so the layer falls
// back and says why; one that evaluates everywhere leaves the tiling alone.
TEST(NpuProof, TimingExpressionsMustEvaluateForEveryCommand) {
  Layer l = makeLayer(test::sameConv(16, 16, 16, 16, 3));
  target::TargetDesc fine = described(DefaultJson, [](json &j) {
    j["timing"]["operations"]["conv"]["steps"] = "out_h * out_w * cdiv(out_ch, 16)";
  });
  std::string why;
  EXPECT_TRUE(lower::npuTilingFits(l.op, fine, &why)) << why;
  target::TargetDesc bad = described(DefaultJson, [](json &j) {
    j["timing"]["operations"]["conv"]["steps"] = "out_h * out_w / (in_ch - 16)";
  });
  EXPECT_FALSE(lower::npuTilingFits(l.op, bad, &why));
  EXPECT_NE(why.find("command 'conv': timing.operations.conv.steps = out_h * out_w / (in_ch - 16) "
                     "fails for these parameters"),
            std::string::npos)
      << why;
}

TEST(NpuProof, DmaLengthsAreMultiplesOfTheLengthUnit) {
  // The loader refuses a unit it cannot honour; the proof still checks every
  // length against the unit of the description it is given.
  auto r = target::loadTarget("npu-default");
  ASSERT_TRUE(r.ok()) << r.error().str();
  target::TargetDesc t = *r;
  t.dma.lengthUnit = 8;
  lir::Instr dma;
  dma.opcode = "npu", dma.callee = "dma", dma.token = 0;
  lir::BufferRef spm = region(lir::Region::Spm, 0);
  spm.size = 64;
  dma.params = {
      {"src_addr", region(lir::Region::Arena, 0)}, {"dst_addr", spm}, {"length", int64_t(24)}};
  EXPECT_TRUE(proveCommand(dma, t).ok());
  dma.params[2].second = int64_t(20);
  Status s = proveCommand(dma, t);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().str(), "error: command 'dma' parameter 'length' = 20 is not a multiple of "
                             "the DMA length unit (dma.length_unit 8)");
  t.dma.lengthUnit = 1;
  EXPECT_TRUE(proveCommand(dma, t).ok());
}

// --- Operands read from system memory (issue 19, phase 5) -----------------------------------

json systemWeights() {
  return {{"w", {{"memory", "system"}, {"alignment", 64}}},
          {"bias", {{"memory", "system"}}},
          {"rq", {{"memory", "system"}}}};
}

TEST(NpuProof, SystemOperandAddressFieldMustReachEveryWindow) {
  // conv's w_addr in a 16-bit field of 16-byte units reaches 0x0..0xffff0:
  // the scratchpad, but not the flash or RAM windows the constants may be in.
  json j = json::parse(test::readText(DefaultJson));
  j["registers"].push_back({{"name", "W16"},
                            {"offset", "0x200"},
                            {"fields", {{{"name", "a"}, {"lsb", 0}, {"width", 16}}}}});
  j["commands"]["conv"]["params"]["w_addr"] = {{"field", "W16.a"}, {"shift", 4}};
  ASSERT_TRUE(target::parseTargetJson(j.dump(2), "npu.json").ok()); // scratchpad operands: fine
  j["compute"]["operations"]["conv"]["operands"] = systemWeights();
  auto r = target::parseTargetJson(j.dump(2), "npu.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().str(),
            "npu.json: error: /compute/operations/conv/operands/w: operand 'w' is read from "
            "system memory, but system memory 'flash' (0x8000000..0x83fffff) is beyond the conv "
            "command's 'w_addr': its field 'W16.a' holds 0x0..0xffff0; the NPU could not read "
            "the constants there");
}

TEST(NpuProof, SystemOperandsAreAlignedOffsetsOfTheConstants) {
  target::TargetDesc t = described(DefaultJson, [](json &j) {
    j["compute"]["operations"]["conv"]["operands"] = systemWeights();
  });
  lir::BufferRef spm = region(lir::Region::Spm, 0);
  lir::Instr conv;
  conv.opcode = "npu", conv.callee = "conv", conv.token = 0;
  conv.params = {{"in_addr", spm},
                 {"w_addr", region(lir::Region::Const, 128)},
                 {"bias_addr", region(lir::Region::Const, 256)},
                 {"out_addr", spm}};
  EXPECT_TRUE(proveCommand(conv, t).ok());
  conv.params[1].second = region(lir::Region::Const, 72);
  Status s = proveCommand(conv, t);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().str(), "error: command 'conv' parameter 'w_addr' (offset 72 in the NPU "
                             "constants) is not a multiple of the operand's system-memory "
                             "alignment 64");
  conv.params[1].second = region(lir::Region::Arena, 128);
  s = proveCommand(conv, t);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().str(), "error: command 'conv' parameter 'w_addr' points into the arena; an "
                             "operand read from system memory must be in the NPU constants");
  // The input is a scratchpad operand; so is everything on npu-default.
  conv.params[1].second = region(lir::Region::Const, 128);
  conv.params[0].second = region(lir::Region::Const, 0);
  s = proveCommand(conv, t);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().str(), "error: command 'conv' parameter 'in_addr' points into the NPU "
                             "constants; the operation reads this operand from the scratchpad");
}

} // namespace
