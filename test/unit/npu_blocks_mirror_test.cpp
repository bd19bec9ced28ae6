//===- npu_blocks_mirror_test.cpp - Partial channel blocks, mirrored buffers ===//
//
// Two NPU-lowering bugs of issue 24 were caught only by the slowest tier
// (npu_models): the last, partial output-channel block stored at the wrong
// column (Schedule.cpp) and a mirrored scratchpad offset rounded up, past the
// scratchpad's end (SpmAlloc.cpp, mirrorSpm: odd layers use the top end).
// Here, in the unit tier:
//  - mirrorSpm on hand-sized buffers: the exact offsets (size - offset -
//    bytes, aligned down), every buffer inside the scratchpad;
//  - the store commands of a layer whose channel blocks are 16, 16 and 8:
//    columns 0, 16 and 32 of each output row, 8 bytes wide;
//  - bit-exact runs on the simulator: one int8 layer (conv, or MatMul) is
//    scheduled under forced tilings (partial last block, both loop orders,
//    weights resident or streamed, partial last row tile), at its allocated
//    and at its mirrored placement, with the real weight records
//    (buildRecords); each `npu` command goes through the command layer to the
//    simulator, one at a time; the output must equal the reference
//    interpreter's on the same typed graph, byte for byte.
//
//===----------------------------------------------------------------------===//
#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/quant/Multiplier.h"
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"
#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_sim.h"

#include "TestTargets.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace npucc;
using namespace npucc::lower::npu;
using npucc::target::TargetDesc;

namespace {

TargetDesc load(const std::string &name) {
  auto r = target::loadTarget(name);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : TargetDesc{};
}

uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// --- mirrorSpm on hand-sized buffers ---------------------------------------------------------

TEST(NpuMirror, OffsetsAreTheTopEndAlignedDown) {
  TargetDesc t = load("npu-default");
  const target::Scratchpad &s = t.scratchpads[0];
  ASSERT_EQ(s.size, 262144u);
  ASSERT_TRUE(s.separateBanks.empty()); // one bank for the allocator
  for (int role : {NPUCC_OPND_IN, NPUCC_OPND_W, NPUCC_OPND_OUT})
    ASSERT_EQ(s.operandAlignment[size_t(role)], 16u);
  std::vector<SpmRequest> reqs(3);
  reqs[0] = {"input tile", 100, 1u << NPUCC_OPND_IN, {}};
  reqs[1] = {"weights record", 200, 1u << NPUCC_OPND_W, {}};
  reqs[2] = {"output tile", 60, 1u << NPUCC_OPND_OUT, {}};
  auto p = allocateSpm(t, reqs);
  ASSERT_TRUE(p.ok()) << (p ? "" : p.error().str());
  // First fit from the bottom at multiples of 16: 0, 112 (100 up), 320 (312 up).
  ASSERT_EQ(p->size(), 3u);
  EXPECT_EQ((*p)[0].offset, 0u);
  EXPECT_EQ((*p)[1].offset, 112u);
  EXPECT_EQ((*p)[2].offset, 320u);
  auto m = mirrorSpm(t, reqs, *p);
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->size(), 3u);
  // Mirrored: size - offset - bytes, rounded down to 16:
  //   262144 - 0 - 100   = 262044 -> 262032 (ends at 262132)
  //   262144 - 112 - 200 = 261832 -> 261824 (ends at 262024)
  //   262144 - 320 - 60  = 261764 -> 261760 (ends at 261820)
  EXPECT_EQ((*m)[0].offset, 262032u);
  EXPECT_EQ((*m)[1].offset, 261824u);
  EXPECT_EQ((*m)[2].offset, 261760u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_LE((*m)[i].offset + reqs[i].size, s.size) << reqs[i].what << " past the end";
    EXPECT_EQ((*m)[i].offset % 16, 0u) << reqs[i].what;
    EXPECT_EQ((*m)[i].spm, 0);
  }
}

TEST(NpuMirror, ABufferOfAWholeMultipleEndsExactlyAtTheTop) {
  TargetDesc t = load("npu-small");
  const target::Scratchpad &s = t.scratchpads[0];
  ASSERT_EQ(s.size, 65536u);
  std::vector<SpmRequest> reqs = {{"input tile", 4096, 1u << NPUCC_OPND_IN, {}},
                                  {"output tile", 4095, 1u << NPUCC_OPND_OUT, {}}};
  auto p = allocateSpm(t, reqs);
  ASSERT_TRUE(p.ok()) << (p ? "" : p.error().str());
  EXPECT_EQ((*p)[1].offset, 4096u);
  auto m = mirrorSpm(t, reqs, *p);
  ASSERT_TRUE(m.has_value());
  // 65536 - 0 - 4096 = 61440 (aligned); 65536 - 4096 - 4095 = 57345 -> 57344.
  EXPECT_EQ((*m)[0].offset, 61440u);
  EXPECT_EQ((*m)[1].offset, 57344u);
}

// --- One layer: typed graph, forced tiling, commands ------------------------------------------

std::string ints(int64_t n, std::mt19937 &g, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::string s;
  for (int64_t i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(d(g));
  return s;
}

// clang-format off
/// A typed int8 Conv (NCHW, same padding, per-tensor weights) as textual IR.
std::string convText(int64_t h, int64_t w, int64_t c, int64_t oc, int64_t k, unsigned seed) {
  std::mt19937 g(seed);
  std::string ks = std::to_string(k), p = std::to_string(k / 2);
  std::string x = "1," + std::to_string(c) + "," + std::to_string(h) + "," + std::to_string(w);
  std::string y = "1," + std::to_string(oc) + "," + std::to_string(h) + "," + std::to_string(w);
  return "graph @main(%x: i8[" + x + "] q(0.5, 3)) -> (%y) {\n"
         "  const @w: i8[" + std::to_string(oc) + "," + std::to_string(c) + "," + ks + "," + ks +
         "] q(0.02, 0) = dense<[" + ints(oc * c * k * k, g, -127, 127) + "]>\n"
         "  const @b: i32[" + std::to_string(oc) + "] = dense<[" + ints(oc, g, -2000, 2000) +
         "]>\n"
         "  %y = Conv(%x, @w, @b) {kernel_shape=[" + ks + ", " + ks + "], pads=[" + p + ", " + p +
         ", " + p + ", " + p + "]} : i8[" + y + "] q(0.25, -3) loc(\"n\")\n"
         "  return %y\n}\n";
}

/// A typed int8 MatMul [m, k] x [k, n].
std::string matmulText(int64_t m, int64_t k, int64_t n, unsigned seed) {
  std::mt19937 g(seed);
  return "graph @main(%x: i8[" + std::to_string(m) + "," + std::to_string(k) +
         "] q(0.5, -2)) -> (%y) {\n"
         "  const @w: i8[" + std::to_string(k) + "," + std::to_string(n) + "] q(0.02, 0) = dense<[" +
         ints(k * n, g, -127, 127) + "]>\n"
         "  %y = MatMul(%x, @w) : i8[" + std::to_string(m) + "," + std::to_string(n) +
         "] q(0.125, 5) loc(\"n\")\n"
         "  return %y\n}\n";
}
// clang-format on

/// The graph, its node "n" placed on `t`, and the layer with the parameters
/// every command carries (as the lowering computes them: NpuLowering.cpp).
struct LayerCase {
  std::unique_ptr<ir::Graph> g;
  const ir::Node *n = nullptr;
  Layer l;
};

LayerCase makeCase(const std::string &text, const TargetDesc &t) {
  LayerCase c;
  auto r = ir::parseGraph(text, "layer.ir");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  if (!r.ok())
    return c;
  c.g = r.take();
  for (const auto &n : c.g->nodes())
    if (n->name == "n")
      c.n = n.get();
  if (!c.n)
    return c;
  target::Placement p = target::placeNode(*c.n, t);
  EXPECT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  if (!p.onNpu()) {
    c.n = nullptr;
    return c;
  }
  c.l = makeLayer(*p.op);
  const ir::Value *x = c.n->input(0), *w = c.n->input(1), *y = c.n->output(0);
  quant::QuantMultiplier m = quant::productMultiplier(x->quant->scale[0], w->quant->scale[0],
                                                      y->quant->scale[0], quant::Rounding::Exact);
  c.l.fixed = {{"in_zp", x->quant->zeroPoint[0]},
               {"out_zp", y->quant->zeroPoint[0]},
               {"act_min", -128},
               {"act_max", 127}};
  if (!c.l.op.perChannel) // else the records carry the multipliers (npu-small: per channel only)
    c.l.fixed.insert(c.l.fixed.end(), {{"requant_mult", m.mult}, {"requant_shift", m.shift}});
  return c;
}

/// The layer's system-memory operands: input at 0, output and the record blob
/// after it (64-byte aligned), all in one host buffer the simulator maps.
struct Memory {
  uint64_t outOff = 0, blobOff = 0, size = 0;
  LayerIo io;
  Memory(const Layer &l, uint64_t blobBytes) {
    uint64_t inBytes = uint64_t(l.H * l.W * l.C), outBytes = uint64_t(l.OH * l.OW * l.OC);
    outOff = alignUp(inBytes, 64);
    blobOff = alignUp(outOff + outBytes, 64);
    size = alignUp(blobOff + blobBytes, 64);
    io.in.region = io.out.region = lir::Region::Arena;
    io.in.size = int64_t(inBytes);
    io.out.offset = int64_t(outOff);
    io.out.size = int64_t(outBytes);
    io.blob.region = lir::Region::Const;
    io.blob.dtype = ir::DType::U8;
    io.blob.size = int64_t(blobBytes);
  }
};

/// Runs the `npu` commands of `body` on the simulator of `t`, one at a time
/// (each waited for), with `mem` mapped at the first writable window.
/// Returns the output bytes, or sets `err`.
std::vector<int8_t> runOnSim(const TargetDesc &t, const std::vector<lir::Instr> &body,
                             const Memory &mem, const std::vector<int8_t> &in,
                             const std::vector<uint8_t> &blob, std::string &err) {
  target::CTable table(t);
  const npucc_target_desc *d = table.get();
  npucc_sim *sim = npucc_sim_create(d);
  if (!sim) {
    err = "no simulator";
    return {};
  }
  npucc_sim_attach(sim);
  npucc_hal_set_wait_hook(nullptr, nullptr);
  uint64_t ramBase = 0;
  for (const target::SystemRange &s : t.system)
    if (s.writable) {
      ramBase = s.base;
      break;
    }
  std::vector<uint8_t> ram(mem.size, 0);
  std::memcpy(ram.data(), in.data(), in.size());
  std::memcpy(ram.data() + mem.blobOff, blob.data(), blob.size());
  EXPECT_EQ(npucc_sim_map(sim, ramBase, ram.data(), ram.size()), 0);
  auto address = [&](const lir::BufferRef &b) -> int64_t {
    if (b.region == lir::Region::Spm)
      return int64_t(t.scratchpads[size_t(b.index)].base) + b.offset;
    if (b.region == lir::Region::Const)
      return int64_t(ramBase + mem.blobOff) + b.offset;
    return int64_t(ramBase) + b.offset;
  };
  for (const lir::Instr &ins : body) {
    if (ins.opcode != "npu")
      continue;
    std::vector<int64_t> p(NPUCC_P_COUNT);
    npucc_npu_defaults(p.data());
    for (const auto &kv : ins.params) {
      int id = target::paramId(kv.first);
      if (id < 0) {
        err = "unknown parameter " + kv.first;
        break;
      }
      if (const int64_t *v = std::get_if<int64_t>(&kv.second))
        p[size_t(id)] = *v;
      else if (const lir::BufferRef *b = std::get_if<lir::BufferRef>(&kv.second))
        p[size_t(id)] = address(*b);
    }
    int bad = -1;
    int kind = target::commandKindId(ins.callee);
    if (err.empty() && npucc_npu_issue(d, kind, p.data(), &bad) != NPUCC_OK)
      err = "command " + ins.callee + " #" + std::to_string(ins.token) + " refused (parameter " +
            (bad >= 0 ? npucc_param_name(bad) : "?") + ")";
    if (err.empty() && npucc_hal_wait(ins.callee == "dma" ? NPUCC_ENGINE_DMA : NPUCC_ENGINE_COMPUTE,
                                      10000000) != NPUCC_OK)
      err = "waiting for " + ins.callee + " #" + std::to_string(ins.token) + " failed";
    if (err.empty() && npucc_sim_failed(sim))
      err = std::string("the simulator failed ") + ins.callee + " #" + std::to_string(ins.token) +
            ": " + npucc_sim_error(sim);
    if (!err.empty())
      break;
  }
  std::vector<int8_t> out(size_t(mem.io.out.size));
  std::memcpy(out.data(), ram.data() + mem.outOff, out.size());
  npucc_sim_destroy(sim);
  return out;
}

/// The reference interpreter's output of the case's graph, in the NPU's layout (NHWC).
std::vector<int8_t> reference(const LayerCase &c, const std::vector<int8_t> &nchwIn) {
  const ir::Value *x = c.g->inputs[0];
  ir::Tensor t(ir::DType::I8, x->shape);
  std::memcpy(t.raw(), nchwIn.data(), nchwIn.size());
  auto r = interp::runGraph(*c.g, {{x->name, t}});
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  if (!r.ok())
    return {};
  const ir::Tensor &y = r->at(c.g->outputs[0]->name);
  const int8_t *yd = y.data<int8_t>();
  if (y.shape().size() != 4)
    return std::vector<int8_t>(yd, yd + y.numElements());
  int64_t C = y.shape()[1], H = y.shape()[2], W = y.shape()[3];
  std::vector<int8_t> out(size_t(y.numElements()));
  for (int64_t ch = 0; ch < C; ++ch)
    for (int64_t i = 0; i < H * W; ++i)
      out[size_t(i * C + ch)] = yd[ch * H * W + i];
  return out;
}

/// NCHW -> NHWC of a 4-D input (2-D inputs are left as they are).
std::vector<int8_t> toNhwc(const std::vector<int8_t> &v, const ir::Shape &s) {
  if (s.size() != 4)
    return v;
  int64_t C = s[1], HW = s[2] * s[3];
  std::vector<int8_t> out(v.size());
  for (int64_t ch = 0; ch < C; ++ch)
    for (int64_t i = 0; i < HW; ++i)
      out[size_t(i * C + ch)] = v[size_t(ch * HW + i)];
  return out;
}

std::string text(const Tiling &tl) {
  return "rows " + std::to_string(tl.rows) + ", block " + std::to_string(tl.block) +
         (tl.blocksOuter ? ", blocks outer" : "") + (tl.resident ? ", resident" : ", streamed");
}

/// Schedules the case under `tl` at the allocated and at the mirrored
/// placement and runs both on the simulator against the interpreter.
void expectBitExact(const LayerCase &c, const TargetDesc &t, const Tiling &tl, bool wantMirror,
                    unsigned seed) {
  ASSERT_TRUE(c.n);
  SCOPED_TRACE(t.name + ": " + text(tl));
  Buffers b = tilingBuffers(c.l, t, tl);
  auto spm = allocateSpm(t, b.requests);
  ASSERT_TRUE(spm.ok()) << spm.error().str();
  auto rec = buildRecords(*c.n, c.l, t, tl.block);
  ASSERT_TRUE(rec.ok()) << rec.error().str();
  Memory mem(c.l, rec->size());
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> nchw(size_t(mem.io.in.size));
  for (int8_t &v : nchw)
    v = int8_t(d(g));
  std::vector<int8_t> in = toNhwc(nchw, c.g->inputs[0]->shape);
  std::vector<int8_t> want = reference(c, nchw);
  std::vector<std::pair<std::string, std::vector<SpmPlace>>> placements = {{"allocated", *spm}};
  auto mirrored = mirrorSpm(t, b.requests, *spm);
  if (wantMirror) {
    EXPECT_TRUE(mirrored.has_value()) << "no mirrored placement";
  }
  if (mirrored)
    placements.push_back({"mirrored", *mirrored});
  for (const auto &pl : placements) {
    SCOPED_TRACE(pl.first + " placement");
    for (size_t i = 0; i < pl.second.size(); ++i) {
      const target::Scratchpad &s = t.scratchpads[size_t(pl.second[i].spm)];
      EXPECT_LE(pl.second[i].offset + b.requests[i].size, s.size) << b.requests[i].what;
    }
    std::vector<lir::Instr> body;
    int tok = 0;
    Status st = scheduleLayer(c.l, t, tl, pl.second, mem.io, tok, "", body);
    ASSERT_TRUE(st.ok()) << st.error().str();
    std::string err;
    std::vector<int8_t> got = runOnSim(t, body, mem, in, *rec, err);
    ASSERT_EQ(err, "");
    ASSERT_EQ(got.size(), want.size());
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
      bad += got[i] != want[i];
    EXPECT_EQ(bad, 0u) << "bytes differing from the interpreter, of " << got.size()
                       << " (output channels " << c.l.OC << ")";
  }
}

// Tiling{rows, block, blocksOuter, resident}
TEST(NpuPartialBlocks, ConvLastBlockOfEightOnNpuDefault) {
  TargetDesc t = load("npu-default");
  ASSERT_EQ(t.compute.macRows, 16u);
  // 40 output channels in blocks of 16: 16, 16 and a partial block of 8.
  LayerCase c = makeCase(convText(6, 6, 8, 40, 3, 1), t);
  for (Tiling tl :
       {Tiling{6, 16, false, true}, Tiling{2, 16, false, false}, Tiling{2, 16, true, true},
        Tiling{4, 16, true, false}, Tiling{4, 40, false, true}})
    expectBitExact(c, t, tl, false, 11);
}

TEST(NpuPartialBlocks, ConvLastBlockOfFourOnNpuSmall) {
  TargetDesc t = load("npu-small");
  ASSERT_EQ(t.compute.macRows, 8u);
  // 20 output channels in blocks of 8: 8, 8 and 4.
  LayerCase c = makeCase(convText(5, 7, 4, 20, 3, 2), t);
  for (Tiling tl : {Tiling{5, 8, false, true}, Tiling{2, 8, true, false}})
    expectBitExact(c, t, tl, false, 12);
}

TEST(NpuPartialBlocks, MatMulLastBlockOfEight) {
  TargetDesc t = load("npu-default");
  // n = 40: blocks 16, 16, 8; m = 3 rows, tiles of 2 rows leave a last tile of 1.
  LayerCase c = makeCase(matmulText(3, 32, 40, 3), t);
  for (Tiling tl :
       {Tiling{3, 16, false, true}, Tiling{2, 16, false, false}, Tiling{1, 16, true, true}})
    expectBitExact(c, t, tl, false, 13);
}

TEST(NpuPartialBlocks, StoresOfTheLastBlockStartAtItsColumn) {
  // The commands themselves: with 40 channels in blocks of 16, the store of
  // each (row tile, block) writes rows of OC = 40 bytes from column 16 * block,
  // `nb` bytes each (16, 16, 8), for the tile's pixels.
  TargetDesc t = load("npu-default");
  LayerCase c = makeCase(convText(6, 6, 8, 40, 3, 1), t);
  ASSERT_TRUE(c.n);
  Tiling tl{3, 16, false, true}; // 2 row tiles x 3 blocks, blocks inner
  Buffers b = tilingBuffers(c.l, t, tl);
  auto spm = allocateSpm(t, b.requests);
  ASSERT_TRUE(spm.ok());
  Memory mem(c.l, 4096);
  std::vector<lir::Instr> body;
  int tok = 0;
  ASSERT_TRUE(scheduleLayer(c.l, t, tl, *spm, mem.io, tok, "", body).ok());
  std::vector<std::pair<int64_t, int64_t>> stores; // (offset in the output, length)
  for (const lir::Instr &in : body) {
    if (in.opcode != "npu" || in.callee != "dma")
      continue;
    const lir::BufferRef &dst = std::get<lir::BufferRef>(*paramArg(in, "dst_addr"));
    if (dst.region != lir::Region::Arena || dst.offset < int64_t(mem.outOff))
      continue;
    stores.push_back({dst.offset - int64_t(mem.outOff), paramValue(in, "length")});
    EXPECT_EQ(paramValue(in, "rows"), 3 * 6) << "pixels of a 3-row tile";
    EXPECT_EQ(paramValue(in, "dst_stride"), 40);
  }
  // Row tile r (3 rows of 6 pixels: 18 pixels of 40 bytes, 720 bytes) and block k:
  // offset 720 r + 16 k.
  std::vector<std::pair<int64_t, int64_t>> want = {{0, 16},   {16, 16},  {32, 8},
                                                   {720, 16}, {736, 16}, {752, 8}};
  EXPECT_EQ(stores, want);
}

TEST(NpuMirror, MirroredLayerWithOddSizedBuffersRunsBitExact) {
  // 3 input channels, 5 columns: input tiles of 15 bytes a row, weight
  // records of 20 * 27 + 80 = 624 bytes: the mirrored input tile's top
  // (size - bytes) is not a multiple of the alignment.
  for (const char *name : {"npu-default", "npu-small"}) {
    TargetDesc t = load(name);
    LayerCase c = makeCase(convText(5, 5, 3, 24, 3, 4), t);
    int64_t unit = t.compute.macRows;
    for (Tiling tl :
         {Tiling{5, 24, false, true}, Tiling{2, unit, false, false}, Tiling{3, unit, true, true}}) {
      Buffers b = tilingBuffers(c.l, t, tl);
      ASSERT_NE(b.inBytes % 16, 0u) << "the input tile should not be a multiple of 16";
      expectBitExact(c, t, tl, true, 14);
    }
  }
}

} // namespace
