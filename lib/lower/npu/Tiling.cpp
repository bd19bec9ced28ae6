//===- Tiling.cpp - Candidate tilings, feasibility, the cheapest ----------===//
//
// Candidates: output rows per tile (every distinct ceil(rows / k)), output
// channel blocks (the whole channel count, and multiples of the MAC array's
// rows that meet the out-channel multiple), both loop orders, weights
// resident or streamed. A candidate is feasible when every command of its
// tiles stays within the operation's limits and the fields' ranges, its
// buffers fit the scratchpads (allocateSpm) and its DMA transfers are legal.
// Each feasible candidate is scheduled, given its waits and timed with the
// simulator's cycle model; the fewest cycles win (then the least scratchpad).
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace npucc::lower::npu {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t hiOf(const target::TargetDesc &t, const std::string &kind, const char *param) {
  target::ParamRange r = t.paramRange(kind, param);
  return r.hi;
}

/// Per-command limits a tile must respect (the rows and channels of one command).
std::string tileProblem(const Layer &l, const target::TargetDesc &t, const Tiling &tl) {
  const target::NpuOp &op = l.op;
  const target::OpLimits &lim = *t.operation(op.kindName);
  auto over = [](int64_t v, unsigned max) { return max && v > int64_t(max); };
  if (op.kind == NPUCC_KIND_ELTWISE)
    return tl.rows > hiOf(t, op.kindName, "length") ? "length field" : "";
  if (l.blocks()) {
    int64_t maxBlock = op.kind == NPUCC_KIND_MATMUL ? hiOf(t, "matmul", "n") : hiOf(t, "conv", "out_ch");
    if (tl.block > maxBlock || over(tl.block, lim.maxOutChannels) ||
        (op.kind == NPUCC_KIND_MATMUL && over(tl.block, lim.maxN)))
      return "output channels per command";
    if (lim.outChannelMultiple > 1 && (tl.block % lim.outChannelMultiple ||
                                       (l.OC % tl.block) % lim.outChannelMultiple))
      return "out_channel_multiple";
  }
  if (op.kind == NPUCC_KIND_MATMUL)
    return tl.rows > hiOf(t, "matmul", "m") || over(tl.rows, lim.maxM) ? "m per command" : "";
  for (int64_t r0 = 0; r0 < l.OH; r0 += tl.rows) {
    int64_t r1 = std::min(l.OH, r0 + tl.rows);
    auto rows = l.inRows(r0, r1);
    int64_t inH = rows.second - rows.first, virt = r0 * op.strideH - op.padTop;
    int64_t top = rows.first - virt;
    int64_t bottom = (r1 - r0 - 1) * op.strideH + (op.kh - 1) * op.dilH + 1 - top - inH;
    if (inH > hiOf(t, op.kindName, "in_h") || over(inH, lim.maxInH))
      return "input rows per command";
    if (r1 - r0 > hiOf(t, op.kindName, "out_h") || over(r1 - r0, lim.maxOutH))
      return "output rows per command";
    if (top > int64_t(lim.maxPad[0]) || bottom > int64_t(lim.maxPad[1]) ||
        top > hiOf(t, op.kindName, "pad_top"))
      return "padding of a tile";
  }
  return "";
}

std::vector<int64_t> rowOptions(int64_t n) {
  std::set<int64_t> s;
  for (int64_t k = 1; k <= n; ++k)
    s.insert(ceilDiv(n, k));
  std::vector<int64_t> v(s.rbegin(), s.rend()); // largest first
  // At most 16 options, spread over the range.
  if (v.size() > 16) {
    std::vector<int64_t> r;
    for (size_t i = 0; i < 16; ++i)
      r.push_back(v[i * (v.size() - 1) / 15]);
    v = r;
  }
  return v;
}

std::vector<int64_t> blockOptions(const Layer &l, const target::TargetDesc &t) {
  if (!l.blocks())
    return {l.OC};
  const target::OpLimits &lim = *t.operation(l.op.kindName);
  int64_t unit = std::lcm<int64_t>(t.compute.macRows, std::max<int64_t>(1, lim.outChannelMultiple));
  std::vector<int64_t> v = {l.OC};
  for (int64_t b = unit; b < l.OC && v.size() < 10; b *= 2)
    v.push_back(b);
  return v;
}

std::vector<int64_t> chunkOptions(const Layer &l) {
  std::vector<int64_t> v;
  for (int64_t d = 1; d <= 1024; d *= 2) {
    int64_t c = (ceilDiv(l.op.length, d) + 15) / 16 * 16;
    if (c > 0 && (v.empty() || c != v.back()))
      v.push_back(std::min(c, l.op.length));
  }
  return v;
}

/// A placeholder system buffer of a region for timing-only schedules.
lir::BufferRef placeholder(lir::Region r) {
  lir::BufferRef b;
  b.region = r;
  b.index = 0;
  b.dtype = ir::DType::I8;
  return b;
}

} // namespace

Result<Choice> chooseTiling(const Layer &l, const target::TargetDesc &t) {
  target::CTable table(t);
  std::vector<Tiling> cands;
  if (l.op.kind == NPUCC_KIND_ELTWISE) {
    for (int64_t c : chunkOptions(l))
      cands.push_back({c, 1, false, true});
  } else {
    for (int64_t b : blockOptions(l, t))
      for (int64_t r : rowOptions(l.OH))
        for (bool outer : {false, true})
          for (bool resident : {true, false}) {
            bool multi = ceilDiv(l.OC, b) > 1;
            if ((outer && (!multi || ceilDiv(l.OH, r) == 1)) || (!resident && !multi) ||
                (!resident && !l.hasWeights()))
              continue;
            cands.push_back({r, b, outer, resident});
          }
  }
  LayerIo io;
  io.in = placeholder(lir::Region::Arena);
  io.in2 = placeholder(lir::Region::Arena);
  io.out = placeholder(lir::Region::Arena);
  io.blob = placeholder(lir::Region::Const);
  std::optional<Choice> best;
  std::string firstProblem;
  for (const Tiling &tl : cands) {
    std::string p = tileProblem(l, t, tl);
    if (!p.empty()) {
      if (firstProblem.empty())
        firstProblem = "no tile meets the limits (" + p + ")";
      continue;
    }
    Buffers b = tilingBuffers(l, t, tl);
    auto spm = allocateSpm(t, b.requests);
    if (!spm) {
      if (firstProblem.empty() || firstProblem.rfind("no tile", 0) == 0)
        firstProblem = spm.error().message;
      continue;
    }
    lir::Program prog;
    int tok = 0;
    Status s = scheduleLayer(l, t, tl, *spm, io, tok, "", prog.body);
    if (!s) {
      if (firstProblem.empty())
        firstProblem = s.error().message;
      continue;
    }
    NPUCC_TRY(insertNpuWaits(prog, t));
    Choice c;
    c.tiling = tl;
    c.spm = spm.take();
    for (const SpmRequest &r : b.requests)
      c.spmBytes += r.size;
    c.estimate = estimateBody(prog.body, nullptr, t, table);
    if (!best || c.estimate.cycles < best->estimate.cycles ||
        (c.estimate.cycles == best->estimate.cycles && c.spmBytes < best->spmBytes))
      best = std::move(c);
  }
  if (!best)
    return error(firstProblem.empty() ? "no tiling" : firstProblem);
  return std::move(*best);
}

} // namespace npucc::lower::npu

namespace npucc::lower {

bool npuTilingFits(const target::NpuOp &op, const target::TargetDesc &t, std::string *why) {
  auto c = npu::chooseTiling(npu::makeLayer(op), t);
  if (!c && why)
    *why = c.error().message;
  return bool(c);
}

} // namespace npucc::lower
