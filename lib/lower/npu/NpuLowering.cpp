//===- NpuLowering.cpp - One graph node on the NPU: tiling, records, commands ===//
//
// For a node marked npu="KIND": its command geometry (target::placeNode),
// the parameters fixed for the whole layer (zero points, requantization,
// clamp, the Add rescaling, pool kind, a requantizing average's multiplier)
// computed exactly as the integer interpreter and the CPU kernels compute them
// (lib/qmath), the cheapest
// tiling (Tiling.cpp), the weight records appended to the NPU constant
// blob, and the scheduled commands. The hand-off: when the next NPU layer
// alone reads this one's output, this layer may keep the output in the
// scratchpad for it (Handoff); taken when the two layers' estimated cycles
// (then system-memory bytes) go down. finish() completes the program: the
// blob's bytes and the target's scratchpads; the waits come from the
// npu-waits loop-IR pass (LirPasses.def) the driver runs next.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"

#include "npucc/lower/CpuLowering.h"
#include "npucc/quant/FusedActivation.h"
#include "npucc/quant/Multiplier.h"

#include <algorithm>
#include <cmath>

namespace npucc::lower {

using namespace npu;

struct NpuLowering::Impl {
  const target::TargetDesc &T;
  int BlobIndex = -1;
  std::vector<uint8_t> Blob;
  std::map<std::string, NpuLayerPlan> Plans;
  int NextToken = 0;
  int Layers = 0; // NPU layers lowered so far (odd ones use the scratchpad's top end)
  NpuLowerOptions Opts;
  /// The output the layer just lowered keeps in the scratchpad for the next.
  struct Kept {
    const ir::Value *value = nullptr;
    SpmPlace place;
    uint64_t bytes = 0;
  };
  std::optional<Kept> Held;
  /// The scratchpad the layer lowered last used (its buffers and the input
  /// it freed): a hand-off layer's buffers avoid it where they can, so that
  /// npu-prefetch can move the layer's first loads above that layer's end.
  std::vector<SpmRange> Prev;
  /// Tilings chosen so far, by node and hand-off (a consumer's are asked
  /// for by its producer's decision, then again when it is lowered).
  std::map<std::string, Choice> Chosen;
  Result<Choice> choose(const ir::Node &n, const Layer &l, const Handoff &h);
  Impl(const target::TargetDesc &t, NpuLowerOptions o) : T(t), Opts(o) {}
};

Result<Choice> NpuLowering::Impl::choose(const ir::Node &n, const Layer &l, const Handoff &h) {
  std::string key =
      n.name +
      (h.in ? "|in " + std::to_string(h.in->spm) + ":" + std::to_string(h.in->offset) + ":" +
                  std::to_string(h.inBytes) + ":" + std::to_string(h.inOperand)
            : "") +
      (h.out ? "|out" : "");
  if (auto it = Chosen.find(key); it != Chosen.end())
    return it->second;
  auto c = chooseTiling(l, T, h);
  if (c)
    Chosen[key] = *c;
  return c;
}

NpuLowering::NpuLowering(const target::TargetDesc &t, NpuLowerOptions o)
    : P(std::make_unique<Impl>(t, o)) {}
NpuLowering::~NpuLowering() = default;
const target::TargetDesc &NpuLowering::target() const { return P->T; }

const NpuLayerPlan *NpuLowering::plan(const std::string &nodeName) const {
  auto it = P->Plans.find(nodeName);
  return it == P->Plans.end() ? nullptr : &it->second;
}

namespace {

std::pair<double, int32_t> tensorQ(const ir::Value *v) {
  return {v->quant->scale[0], v->quant->zeroPoint.empty() ? 0 : v->quant->zeroPoint[0]};
}

/// The parameters every compute command of the layer carries (non-defaults only).
std::vector<std::pair<std::string, int64_t>> layerParams(const ir::Node &n,
                                                         const target::NpuOp &op) {
  std::vector<std::pair<std::string, int64_t>> r;
  auto put = [&](const char *name, int64_t v) {
    if (v != target::paramDefault(target::paramId(name)))
      r.emplace_back(name, v);
  };
  if (op.kind == NPUCC_KIND_POOL) {
    put("pool_kind", op.poolKind);
    if (op.poolRequant) { // the requantizing average (target::poolRequantizes)
      auto qx = tensorQ(n.input(0)), qy = tensorQ(n.output(0));
      quant::QuantMultiplier m = target::poolMultiplier(qx.first, qy.first, op.poolCount);
      put("in_zp", qx.second);
      put("out_zp", qy.second);
      put("requant_mult", m.mult);
      put("requant_shift", m.shift);
    }
    return r;
  }
  const ir::Value *x = n.input(0), *y = n.output(0);
  auto qx = tensorQ(x), qy = tensorQ(y);
  auto [lo, hi] = fusedClampOf(n);
  put("in_zp", qx.second);
  put("out_zp", qy.second);
  // lut256, pwl: the clamp is in the layer's table, not in act_min / act_max.
  if (!op.actLut) {
    put("act_min", lo);
    put("act_max", hi);
  }
  if (op.kind == NPUCC_KIND_ELTWISE) {
    auto qb = tensorQ(n.input(1));
    quant::AddParams p = quant::addParams(qx.first, qb.first, qy.first);
    put("in2_zp", qb.second);
    put("left_shift", p.leftShift);
    put("in_mult", p.a.mult);
    put("in_shift", p.a.shift);
    put("in2_mult", p.b.mult);
    put("in2_shift", p.b.shift);
    put("requant_mult", p.out.mult);
    put("requant_shift", p.out.shift);
    return r;
  }
  if (!op.perChannel) {
    const ir::Value *w = n.input(1);
    quant::QuantMultiplier m = quant::productMultiplier(float(qx.first), w->quant->scale[0],
                                                        float(qy.first), quant::Rounding::Exact);
    put("requant_mult", m.mult);
    put("requant_shift", m.shift);
  }
  return r;
}

uint64_t alignUp(uint64_t v, uint64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

/// The layer of a node placed on the NPU (a fused activation's MAC part
/// gives the parameters).
Result<Layer> layerOf(const ir::Node &n, const target::TargetDesc &t) {
  target::Placement pl = target::placeNode(n, t);
  if (!pl.onNpu()) {
    std::string why = pl.reasons.empty() ? "not an NPU operation" : pl.reasons.front();
    return error("marked for the NPU, but " + why);
  }
  auto core = quant::coreOf(n);
  Layer l = makeLayer(*pl.op);
  l.op.actLut = hasActTable(l, t);
  l.fixed = layerParams(core ? core->node : n, l.op);
  return l;
}

/// Cycles, then system-memory bytes.
std::pair<uint64_t, uint64_t> costOf(const Choice &c) {
  return {c.estimate.cycles, c.estimate.sysRead + c.estimate.sysWrite};
}
std::pair<uint64_t, uint64_t> operator+(std::pair<uint64_t, uint64_t> a,
                                        std::pair<uint64_t, uint64_t> b) {
  return {a.first + b.first, a.second + b.second};
}

/// The per-layer ideal's parts: one command over the whole layer with
/// unlimited scratchpad, its compute cycles and the bytes it moves once
/// (finish() turns them into cycles once the constants' window is known).
void idealParts(const Layer &l, const target::TargetDesc &t, const target::CTable &table,
                NpuLayerPlan &plan) {
  const target::NpuOp &op = l.op;
  std::vector<int64_t> p = target::CTable::defaultParams();
  auto set = [&](int id, int64_t v) { p[size_t(id)] = v; };
  set(NPUCC_P_IN_H, l.H), set(NPUCC_P_IN_W, l.W), set(NPUCC_P_IN_CH, l.C);
  set(NPUCC_P_OUT_H, l.OH), set(NPUCC_P_OUT_W, l.OW), set(NPUCC_P_OUT_CH, l.OC);
  set(NPUCC_P_K_H, op.kh), set(NPUCC_P_K_W, op.kw), set(NPUCC_P_DEPTH_MULT, op.depthMult);
  set(NPUCC_P_M, op.m), set(NPUCC_P_K, op.k), set(NPUCC_P_N, op.n), set(NPUCC_P_LENGTH, op.length);
  plan.idealComputeCycles = table.commandCycles(op.kind, p);
  if (op.kind == NPUCC_KIND_ELTWISE) {
    plan.inBytes = uint64_t(op.length) * 2;
    plan.outBytes = uint64_t(op.length);
  } else {
    plan.inBytes = uint64_t(l.H * l.W * l.C);
    plan.outBytes = uint64_t(l.OH / l.PK * (l.OW / l.PK) * l.OC); // pooled when fused
    // Records the NPU reads from system memory are never moved.
    plan.weightBytes = l.hasWeights() && !recordsInSystem(l, t) ? recordLayout(l, t, l.OC).size : 0;
    plan.recordBytes = (l.hasWeights() ? recordLayout(l, t, l.OC).size : 0) +
                       (hasActTable(l, t) ? actTableBytes(l, t) : 0);
  }
}

} // namespace

Status NpuLowering::lower(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  Impl &I = *P;
  if (I.BlobIndex < 0)
    I.BlobIndex = ctx.reserveConstant("npu_const");
  if (I.BlobIndex < 0)
    return error("the lowering context cannot hold NPU constants");
  if (ctx.planningScratch())
    return success();
  auto layer = layerOf(n, I.T);
  if (!layer)
    return std::move(layer.error());
  Layer l = layer.take();
  // A fused activation: the MAC part's parameters target the value in
  // between; the activation is in the layer's lut256 or pwl table.
  auto core = quant::coreOf(n);
  const ir::Node &mac = core ? core->node : n;
  std::optional<quant::LutTable> next = quant::fusedLut(n);
  std::optional<std::vector<quant::PwlSegment>> pwl = quant::pwlOf(n);
  // The input the layer before kept in the scratchpad.
  Handoff h;
  if (I.Held) {
    if (I.Held->value != n.input(0) && (n.inputs.size() < 2 || I.Held->value != n.input(1)))
      return error("the NPU layer before kept its output '" + I.Held->value->name +
                   "' in the scratchpad, but this layer does not read it");
    h.in = I.Held->place;
    h.inBytes = I.Held->bytes;
    h.inOperand = n.input(0) == I.Held->value ? 0 : 1;
    I.Held.reset();
  }
  auto choice = I.choose(n, l, h);
  if (!choice)
    return error("no tiling fits the NPU: " + choice.error().message);
  // Where a hand-off layer's buffers go: away from the layer before's where
  // they fit and the commands can address them, else as chosen.
  auto awayFromPrev = [&](const Choice &c, const Handoff &hh) {
    std::vector<SpmRange> avoid = hh.reserved();
    avoid.insert(avoid.end(), I.Prev.begin(), I.Prev.end());
    auto a = allocateSpm(I.T, tilingBuffers(l, I.T, c.tiling, hh).requests, l.op.kind, avoid);
    if (a) {
      std::vector<lir::Instr> trial;
      int tok = 0;
      if (scheduleLayer(l, I.T, c.tiling, *a, placeholderIo(), tok, "", trial, hh))
        return a.take();
    }
    return c.spm;
  };
  std::optional<std::vector<SpmPlace>> keptPlaces;
  // Keep the output for the next layer? Both layers' tilings with the
  // hand-off against both without it.
  if (const ir::Node *c = I.Opts.handoff ? ctx.nextNpuConsumer() : nullptr) {
    auto lc = layerOf(*c, I.T);
    Handoff hk = h;
    hk.out = true;
    int operand = c->input(0) == n.output(0) ? 0 : 1;
    if (lc && canHandOff(l, *lc, I.T, operand))
      if (auto kept = I.choose(n, l, hk)) {
        Buffers kb = tilingBuffers(l, I.T, kept->tiling, hk);
        size_t at = size_t(kb.inCount + kb.in2Count + kb.wCount);
        std::vector<SpmPlace> places = awayFromPrev(*kept, hk);
        Handoff hc;
        hc.in = places[at];
        hc.inOperand = operand;
        hc.inBytes = kb.outBytes;
        auto held = I.choose(*c, *lc, hc);
        auto plain = I.choose(*c, *lc, Handoff());
        if (held && plain && costOf(*kept) + costOf(*held) < costOf(*choice) + costOf(*plain)) {
          choice = std::move(kept);
          h.out = true;
          keptPlaces = std::move(places);
          I.Held = Impl::Kept{n.output(0), hc.in.value(), hc.inBytes};
        }
      }
  }
  LayerIo io;
  if (l.hasWeights()) {
    auto rec = buildRecords(mac, l, I.T, choice->tiling.block, next ? &*next : nullptr,
                            pwl ? &*pwl : nullptr);
    if (!rec)
      return std::move(rec.error());
    I.Blob.resize(alignUp(I.Blob.size(), std::max(recordAlign(I.T, l), actTableAlign(I.T, l))), 0);
    io.recordsOffset = I.Blob.size();
    I.Blob.insert(I.Blob.end(), rec->begin(), rec->end());
  }
  io.in = ctx.buffer(n.input(0));
  if (l.op.kind == NPUCC_KIND_ELTWISE)
    io.in2 = ctx.buffer(n.input(1));
  io.out = ctx.buffer(n.output(0));
  io.blob.region = lir::Region::Const;
  io.blob.index = I.BlobIndex;
  io.blob.dtype = ir::DType::U8;
  std::string comment = n.name + " (" + n.opName() + " on the NPU: " + l.op.kindName + ")";
  // Alternate ends of the scratchpad from layer to layer, so that the next
  // layer's first loads can overlap this one's last command (npu-prefetch).
  // The mirror keeps every rule (alignment, banks, the address fields'
  // reach); should its commands still not be provable, the layer keeps the
  // placement its tiling was chosen (and proven) with.
  // A kept output stays where its consumer's tiling was chosen with it.
  size_t first = out.size();
  int firstToken = I.NextToken;
  std::vector<std::vector<SpmPlace>> tries;
  if (keptPlaces)
    tries.push_back(*keptPlaces);
  else if (h.in)
    tries.push_back(awayFromPrev(*choice, h));
  if (I.Layers++ % 2 == 1 && !h.out)
    if (auto m = mirrorSpm(I.T, tilingBuffers(l, I.T, choice->tiling, h).requests, choice->spm,
                           l.op.kind, h.reserved()))
      tries.push_back(*m);
  if (!h.out)
    tries.push_back(choice->spm);
  Status scheduled = error("not scheduled");
  for (size_t i = 0; i < tries.size() && !scheduled; ++i) {
    scheduled = scheduleLayer(l, I.T, choice->tiling, tries[i], io, I.NextToken, comment, out, h);
    if (!scheduled && i + 1 < tries.size()) {
      out.resize(first);
      I.NextToken = firstToken;
    }
  }
  NPUCC_TRY(scheduled);
  I.Prev = h.reserved();
  for (size_t i = first; i < out.size(); ++i)
    if (out[i].opcode == "alloc")
      if (const auto *b = std::get_if<lir::BufferRef>(&out[i].args[0]))
        I.Prev.push_back({b->index, uint64_t(b->offset), uint64_t(b->offset + b->size)});

  target::CTable table(I.T);
  NpuLayerPlan &plan = I.Plans[n.name];
  const NpuEstimate &e = choice->estimate;
  plan.tiling = choice->tiling.text();
  plan.macs = l.op.macs;
  plan.cycles = e.cycles;
  plan.computeCycles = e.computeBusy;
  plan.dmaCycles = e.dmaBusy;
  plan.exposedDmaCycles = e.cycles > e.computeBusy ? e.cycles - e.computeBusy : 0;
  plan.dramRead = e.sysRead;
  plan.dramWrite = e.sysWrite;
  plan.scratchpadBytes = choice->spmBytes;
  idealParts(l, I.T, table, plan);
  for (const lir::Instr &in : out)
    plan.tiles += in.opcode == "npu" && in.callee != "dma";
  return success();
}

Status NpuLowering::finish(lir::Program &p) {
  Impl &I = *P;
  if (I.Held)
    return error("the NPU output '" + I.Held->value->name +
                 "' was kept in the scratchpad for a layer that was not lowered");
  if (I.BlobIndex >= 0) {
    if (I.Blob.empty())
      I.Blob.assign(16, 0); // C has no zero-length arrays
    ir::Tensor t(ir::DType::U8, {int64_t(I.Blob.size())});
    std::copy(I.Blob.begin(), I.Blob.end(), t.raw());
    p.constants[size_t(I.BlobIndex)].data = std::move(t);
    p.constants[size_t(I.BlobIndex)].npu = true;
    // The DMA reads the blob at offsets that are multiples of its alignment,
    // and an operation reading an operand from system memory at multiples of
    // that operand's: the blob must start at a multiple of the largest.
    uint64_t align = std::max<uint64_t>(1, I.T.dma.alignment);
    for (const auto &op : I.T.compute.operations)
      for (int o = 0; o < target::NumOperands; ++o)
        if (op.second.inSystem(target::Operand(o)))
          align = std::max<uint64_t>(align, op.second.systemAlignment[size_t(o)]);
    p.constants[size_t(I.BlobIndex)].align = align;
  }
  if (!p.usesNpu())
    return success();
  p.target = I.T.name;
  p.scratchpads.clear();
  for (const target::Scratchpad &s : I.T.scratchpads)
    p.scratchpads.push_back({s.name, s.base, s.size});
  p.spmPeak = scratchpadPeak(p.body);
  uint64_t constBytes = 0;
  for (const lir::ConstBuffer &c : p.constants)
    constBytes += c.data.byteSize();
  for (auto &kv : I.Plans) {
    NpuLayerPlan &pl = kv.second;
    uint64_t dma = minDmaCycles(I.T, pl.weightBytes, pl.inBytes, pl.outBytes, constBytes);
    pl.idealCycles = I.T.concurrentDmaCompute ? std::max(pl.idealComputeCycles, dma)
                                              : pl.idealComputeCycles + dma;
  }
  return success();
}

} // namespace npucc::lower
