//===- NpuLowering.cpp - One graph node on the NPU: tiling, records, commands ===//
//
// For a node marked npu="KIND": its command geometry (target::placeNode),
// the parameters fixed for the whole layer (zero points, requantization,
// clamp, the Add rescaling, pool kind, a requantizing average's multiplier)
// computed exactly as the integer interpreter and the CPU kernels compute them
// (lib/qmath), the cheapest
// tiling (Tiling.cpp), the weight records appended to the NPU constant
// blob, and the scheduled commands. finish() completes the program: the
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
  explicit Impl(const target::TargetDesc &t) : T(t) {}
};

NpuLowering::NpuLowering(const target::TargetDesc &t) : P(std::make_unique<Impl>(t)) {}
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
  target::Placement pl = target::placeNode(n, I.T);
  if (!pl.onNpu()) {
    std::string why = pl.reasons.empty() ? "not an NPU operation" : pl.reasons.front();
    return error("marked for the NPU, but " + why);
  }
  // A fused activation: the MAC part's parameters target the value in
  // between; the activation is in the layer's lut256 or pwl table.
  auto core = quant::coreOf(n);
  const ir::Node &mac = core ? core->node : n;
  std::optional<quant::LutTable> next = quant::fusedLut(n);
  std::optional<std::vector<quant::PwlSegment>> pwl = quant::pwlOf(n);
  Layer l = makeLayer(*pl.op);
  l.op.actLut = hasActTable(l, I.T);
  l.fixed = layerParams(mac, l.op);
  auto choice = chooseTiling(l, I.T);
  if (!choice)
    return error("no tiling fits the NPU: " + choice.error().message);
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
  size_t first = out.size();
  int firstToken = I.NextToken;
  Status scheduled = error("not scheduled");
  if (I.Layers++ % 2 == 1)
    if (auto m = mirrorSpm(I.T, tilingBuffers(l, I.T, choice->tiling).requests, choice->spm,
                           l.op.kind)) {
      scheduled = scheduleLayer(l, I.T, choice->tiling, *m, io, I.NextToken, comment, out);
      if (!scheduled) {
        out.resize(first);
        I.NextToken = firstToken;
      }
    }
  if (!scheduled)
    NPUCC_TRY(scheduleLayer(l, I.T, choice->tiling, choice->spm, io, I.NextToken, comment, out));

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
