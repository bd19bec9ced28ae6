//===- Layer.cpp - Layer geometry, record layouts, a tiling's buffers -----===//
//
// What a layer needs besides its commands: its row-tiled geometry
// (makeLayer, inRows), the byte layout of its weight records and activation
// table, the scratchpad buffers of a tiling (tilingBuffers, with or without
// a hand-off) and whether two layers can hand an intermediate over in the
// scratchpad (canHandOff).
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"

#include "../../../runtime/include/npucc_stages.h"

#include <algorithm>

namespace npucc::lower::npu {

namespace {

uint64_t alignUp(uint64_t v, uint64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The strictest alignment any scratchpad asks of an operand role.
uint64_t roleAlign(const target::TargetDesc &t, target::Operand o) {
  uint64_t a = std::max<uint64_t>(1, t.dma.alignment);
  for (const target::Scratchpad &s : t.scratchpads)
    a = std::max<uint64_t>(a, s.alignmentOf(o));
  return a;
}

/// The alignment of a record part: the scratchpads' (the record may be
/// DMA'd there), raised to the operation's own where the NPU reads the part
/// from system memory.
uint64_t recordRoleAlign(const target::TargetDesc &t, const Layer &l, target::Operand o) {
  uint64_t a = roleAlign(t, o);
  if (const target::OpLimits *lim = t.operation(l.op.kindName))
    if (lim->inSystem(o))
      a = std::max<uint64_t>(a, lim->systemAlignment[size_t(o)]);
  return a;
}

} // namespace

uint64_t recordAlign(const target::TargetDesc &t, const Layer &l) {
  return std::max<uint64_t>(16, recordRoleAlign(t, l, target::Operand::W));
}

bool hasActTable(const Layer &l, const target::TargetDesc &t) {
  const target::OpLimits *lim = t.operation(l.op.kindName);
  int st = lim ? lim->stage(NPUCC_SLOT_ACTIVATION) : -1;
  return l.op.actLut ||
         (l.hasWeights() && (st == NPUCC_STAGE_ACT_LUT256 || st == NPUCC_STAGE_ACT_PWL));
}

uint64_t actTableBytes(const Layer &l, const target::TargetDesc &t) {
  const target::OpLimits *lim = t.operation(l.op.kindName);
  return lim && lim->stage(NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_PWL ? NPUCC_PWL_TABLE_BYTES
                                                                         : ActTableBytes;
}

uint64_t actTableAlign(const target::TargetDesc &t, const Layer &l) {
  return hasActTable(l, t) ? recordRoleAlign(t, l, target::Operand::Act) : 1;
}

uint64_t actTableOffset(const Layer &l, const target::TargetDesc &t, int64_t block) {
  uint64_t off = 0;
  for (int64_t b = 0; l.hasWeights() && b < ceilDiv(l.OC, block); ++b)
    off += alignUp(recordLayout(l, t, std::min(block, l.OC - b * block)).size, recordAlign(t, l));
  return alignUp(off, actTableAlign(t, l));
}

bool actTableInSystem(const Layer &l, const target::TargetDesc &t) {
  const target::OpLimits *lim = t.operation(l.op.kindName);
  return hasActTable(l, t) && lim && lim->inSystem(target::Operand::Act);
}

bool recordsInSystem(const Layer &l, const target::TargetDesc &t) {
  const target::OpLimits *lim = t.operation(l.op.kindName);
  return l.hasWeights() && lim && lim->inSystem(target::Operand::W);
}

std::pair<int64_t, int64_t> Layer::inRows(int64_t r0, int64_t r1) const {
  if (op.kind == NPUCC_KIND_MATMUL)
    return {r0, r1};
  int64_t first = r0 * op.strideH - op.padTop;
  int64_t last = (r1 - 1) * op.strideH - op.padTop + (op.kh - 1) * op.dilH + 1;
  return {std::max<int64_t>(0, first), std::min(H, last)};
}

Layer makeLayer(const target::NpuOp &op) {
  Layer l;
  l.op = op;
  if (op.kind == NPUCC_KIND_MATMUL) {
    l.H = l.OH = op.m;
    l.W = l.OW = 1;
    l.C = op.k;
    l.OC = op.n;
  } else if (op.kind == NPUCC_KIND_ELTWISE) {
    l.H = l.OH = 1;
    l.W = l.OW = op.length;
    l.C = l.OC = 1;
  } else {
    l.H = op.inH, l.W = op.inW, l.C = op.inC;
    l.OH = op.outH, l.OW = op.outW;
    l.OC = op.kind == NPUCC_KIND_POOL ? op.inC : op.outC;
    l.PK = std::max<int64_t>(1, op.poolK);
  }
  return l;
}

std::string Tiling::text() const {
  return "rows " + std::to_string(rows) + ", out-ch block " + std::to_string(block) +
         (blocksOuter ? ", blocks outer" : "") +
         (system     ? ", weights in system memory"
          : resident ? ", weights resident"
                     : ", weights streamed");
}

RecordLayout recordLayout(const Layer &l, const target::TargetDesc &t, int64_t block) {
  RecordLayout r;
  if (!l.hasWeights())
    return r;
  const target::NpuOp &op = l.op;
  npucc_wlayout wl = weightLayoutOf(t, l);
  if (op.kind == NPUCC_KIND_CONV)
    r.wBytes = npucc_wlayout_bytes(wl, block, op.kh, op.kw, l.C);
  else if (op.kind == NPUCC_KIND_DEPTHWISE)
    r.wBytes = uint64_t(op.kh * op.kw * block);
  else
    r.wBytes = npucc_wlayout_bytes(wl, block, 1, 1, l.C);
  r.biasOff = alignUp(r.wBytes, recordRoleAlign(t, l, target::Operand::Bias));
  r.size = r.biasOff + uint64_t(block) * 4;
  if (op.perChannel) {
    r.rqOff = alignUp(r.size, recordRoleAlign(t, l, target::Operand::Rq));
    r.size = r.rqOff + uint64_t(block * rqBytesPerChannel(op));
  }
  return r;
}

Buffers tilingBuffers(const Layer &l, const target::TargetDesc &t, const Tiling &tl,
                      const Handoff &h) {
  Buffers b;
  using target::Operand;
  auto role = [](Operand o) { return 1u << unsigned(o); };
  if (l.op.kind == NPUCC_KIND_ELTWISE) {
    int64_t chunks = ceilDiv(l.op.length, tl.rows);
    int count = chunks > 1 ? 2 : 1;
    // A kept input (either operand) is read in place: no tiles for it.
    b.inCount = h.in && h.inOperand == 0 ? 0 : count;
    b.in2Count = h.in && h.inOperand == 1 ? 0 : count;
    b.outCount = count;
    b.inBytes = b.outBytes = uint64_t(tl.rows);
    for (int i = 0; i < b.inCount; ++i)
      b.requests.push_back({"input tile", b.inBytes, role(Operand::In), {}});
    for (int i = 0; i < b.in2Count; ++i)
      b.requests.push_back({"second input tile", b.inBytes, role(Operand::In2), {}});
    for (int i = 0; i < count; ++i)
      b.requests.push_back({"output tile", b.outBytes, role(Operand::Out), {}});
    return b;
  }
  int64_t rowTiles = ceilDiv(l.OH, tl.rows), blocks = ceilDiv(l.OC, tl.block);
  int64_t maxIn = 0;
  for (int64_t r0 = 0; r0 < l.OH; r0 += tl.rows) {
    auto rows = l.inRows(r0, std::min(l.OH, r0 + tl.rows));
    maxIn = std::max(maxIn, rows.second - rows.first);
  }
  npucc_alayout al = actLayoutOf(t, l);
  b.inBytes = npucc_alayout_bytes(al, maxIn, l.W, l.C);
  b.inCount = h.in ? 0 : (rowTiles > 1 || (tl.blocksOuter && blocks > 1)) ? 2 : 1;
  for (int i = 0; i < b.inCount; ++i)
    b.requests.push_back({"input tile", b.inBytes, role(Operand::In), {}});
  // Records the NPU reads from system memory take no scratchpad (and no DMA).
  if (l.hasWeights() && !recordsInSystem(l, t)) {
    RecordLayout rl = recordLayout(l, t, tl.block);
    std::vector<uint64_t> offs(target::NumOperands, 0);
    offs[size_t(Operand::W)] = rl.wOff;
    offs[size_t(Operand::Bias)] = rl.biasOff;
    offs[size_t(Operand::Rq)] = rl.rqOff;
    unsigned roles =
        role(Operand::W) | role(Operand::Bias) | (l.op.perChannel ? role(Operand::Rq) : 0);
    if (tl.resident) {
      uint64_t all = 0;
      for (int64_t blk = 0; blk < blocks; ++blk)
        all += alignUp(recordLayout(l, t, std::min(tl.block, l.OC - blk * tl.block)).size,
                       recordAlign(t, l));
      b.wCount = 1;
      b.wBytes = all;
    } else {
      b.wCount = blocks > 1 ? 2 : 1;
      b.wBytes = rl.size;
    }
    for (int i = 0; i < b.wCount; ++i)
      b.requests.push_back({"weights record", b.wBytes, roles, offs});
  }
  if (h.out) {
    b.outBytes = uint64_t(l.OH / l.PK * (l.OW / l.PK) * l.OC);
    b.outCount = 1;
    b.requests.push_back({"kept output", b.outBytes, role(Operand::Out), {}, true});
  } else {
    b.outBytes = npucc_alayout_bytes(al, tl.rows / l.PK, l.OW / l.PK, tl.block);
    b.outCount = rowTiles * blocks > 1 ? 2 : 1;
    for (int i = 0; i < b.outCount; ++i)
      b.requests.push_back({"output tile", b.outBytes, role(Operand::Out), {}});
  }
  // The lut256 table: loaded once, resident for all the layer's tiles.
  if (hasActTable(l, t) && !actTableInSystem(l, t)) {
    b.actCount = 1;
    b.requests.push_back({"activation table", actTableBytes(l, t), role(Operand::Act), {}});
  }
  return b;
}

bool canHandOff(const Layer &p, const Layer &c, const target::TargetDesc &t, int operand) {
  auto kindOk = [](int k) {
    return k == NPUCC_KIND_CONV || k == NPUCC_KIND_DEPTHWISE || k == NPUCC_KIND_POOL;
  };
  if (!kindOk(p.op.kind) || actLayoutOf(t, p).kind != NPUCC_AL_NHWC)
    return false;
  if (c.op.kind == NPUCC_KIND_ELTWISE) // either operand, as elements
    return (operand == 0 || operand == 1) && p.OH / p.PK * (p.OW / p.PK) * p.OC == c.op.length;
  return operand == 0 && kindOk(c.op.kind) && actLayoutOf(t, c).kind == NPUCC_AL_NHWC &&
         p.OH / p.PK == c.H && p.OW / p.PK == c.W && p.OC == c.C;
}

} // namespace npucc::lower::npu
