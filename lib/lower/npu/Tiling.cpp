//===- Tiling.cpp - Candidate tilings, feasibility, the cheapest ----------===//
//
// Candidates: output rows per tile (every distinct ceil(rows / k)), output
// channel blocks (the whole channel count, and multiples of the MAC array's
// rows that meet the out-channel multiple), both loop orders, weights
// resident or streamed (or read by the NPU from system memory, "operands").
// A candidate is feasible when every command of its
// tiles stays within the operation's limits and the fields' ranges, its
// buffers fit the scratchpads (allocateSpm) and its DMA transfers are legal.
// Feasible candidates are scheduled, given their waits and timed with the
// simulator's cycle model; the fewest cycles win (then the fewest
// system-memory bytes, then the least scratchpad).
// Along the rows axis of one (block, order, residency) group the search
// stops after two candidates slower than the group's best. npuTilingFits
// (the partition's question) stops at the first feasible candidate; when
// none is, the reason is the shortfall of the one needing the least scratchpad.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

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
    int64_t maxBlock =
        op.kind == NPUCC_KIND_MATMUL ? hiOf(t, "matmul", "n") : hiOf(t, "conv", "out_ch");
    if (tl.block > maxBlock || over(tl.block, lim.maxOutChannels) ||
        (op.kind == NPUCC_KIND_MATMUL && over(tl.block, lim.maxN)))
      return "output channels per command";
    if (lim.outChannelMultiple > 1 &&
        (tl.block % lim.outChannelMultiple || (l.OC % tl.block) % lim.outChannelMultiple))
      return "out_channel_multiple";
    npucc_alayout al = actLayoutOf(t, l);
    if (al.kind == NPUCC_AL_BLOCKED && tl.block < l.OC && tl.block % al.block)
      return "activation channel block";
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
    if (inH < int64_t(lim.minInH) && inH < l.H)
      return "input rows per command (min_in_h)";
    // The NPU pads every edge of what one command covers by the implied
    // padding: only a tile whose edges are the image's is right.
    if (!lim.impliedPadding.empty() && (r0 > 0 || r1 < l.OH))
      return "implied padding (one command covers the whole image)";
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
  // A channel-blocked output tile holds whole channel groups.
  unit = std::lcm<int64_t>(unit, std::max<int64_t>(1, actLayoutOf(t, l).block));
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

LayerIo placeholderIo() {
  LayerIo io;
  io.in = io.in2 = io.out = placeholder(lir::Region::Arena);
  io.blob = placeholder(lir::Region::Const);
  return io;
}

namespace {

/// The candidates, grouped: one group per (block, loop order, residency),
/// each with its row counts, largest first.
std::vector<std::vector<Tiling>> candidateGroups(const Layer &l, const target::TargetDesc &t,
                                                 const Handoff &h = Handoff()) {
  std::vector<std::vector<Tiling>> groups;
  if (l.op.kind == NPUCC_KIND_ELTWISE) {
    groups.emplace_back();
    for (int64_t c : chunkOptions(l))
      groups.back().push_back({c, 1, false, true});
    return groups;
  }
  // Records in system memory are neither resident nor streamed: one group.
  bool sys = recordsInSystem(l, t);
  for (int64_t b : blockOptions(l, t))
    for (bool outer : {false, true})
      for (bool resident : {true, false}) {
        // A kept output is written row by row, all channels at once.
        if (h.out && b != l.OC)
          continue;
        bool multi = ceilDiv(l.OC, b) > 1;
        if ((outer && !multi) || (!resident && !multi) || (!resident && !l.hasWeights()) ||
            (!resident && sys))
          continue;
        std::vector<Tiling> g;
        // A fused max pool: tiles of whole windows (multiples of PK rows).
        for (int64_t r : rowOptions(l.OH / l.PK))
          if (!(outer && ceilDiv(l.OH / l.PK, r) == 1))
            g.push_back({r * l.PK, b, outer, resident, sys});
        if (!g.empty())
          groups.push_back(std::move(g));
      }
  return groups;
}

/// Why a candidate is infeasible ("" if feasible), with the scratchpad
/// bytes its buffers need (0 when it failed on a limit).
struct Feasibility {
  std::string problem;
  uint64_t need = 0;
  Buffers buffers;
  std::vector<SpmPlace> spm;
};
Feasibility checkCandidate(const Layer &l, const target::TargetDesc &t, const Tiling &tl,
                           const Handoff &h = Handoff()) {
  Feasibility f;
  std::string p = tileProblem(l, t, tl);
  if (!p.empty()) {
    f.problem = "no tile meets the limits (" + p + ")";
    return f;
  }
  f.buffers = tilingBuffers(l, t, tl, h);
  for (const SpmRequest &r : f.buffers.requests)
    f.need += r.size;
  auto spm = allocateSpm(t, f.buffers.requests, l.op.kind, h.reserved());
  if (!spm) {
    f.problem = spm.error().message;
    return f;
  }
  f.spm = spm.take();
  return f;
}

/// The problem to report when nothing is feasible: the scratchpad shortfall
/// of the candidate that needs the least, else the first limit problem.
struct WorstCase {
  std::string problem;
  uint64_t need = 0;
  void note(const Feasibility &f) {
    if (f.problem.empty())
      return;
    bool spmProblem = f.need > 0;
    bool haveSpm = need > 0;
    if (problem.empty() || (spmProblem && (!haveSpm || f.need < need))) {
      problem = f.problem;
      need = spmProblem ? f.need : 0;
    }
  }
};

} // namespace

Result<Choice> chooseTiling(const Layer &l, const target::TargetDesc &t, const Handoff &h) {
  target::CTable table(t);
  LayerIo io = placeholderIo();
  std::vector<Choice> all;
  std::optional<Choice> best;
  WorstCase worst;
  for (const std::vector<Tiling> &group : candidateGroups(l, t, h)) {
    // Along the rows axis the cost falls, then rises (fewer, larger tiles
    // against less exposed prologue): stop after two candidates worse than
    // the best of the group.
    std::optional<uint64_t> groupBest;
    int worse = 0;
    for (const Tiling &tl : group) {
      if (worse >= 2)
        break;
      Feasibility f = checkCandidate(l, t, tl, h);
      if (!f.problem.empty()) {
        worst.note(f);
        continue;
      }
      lir::Program prog;
      int tok = 0;
      Status s = scheduleLayer(l, t, tl, f.spm, io, tok, "", prog.body, h);
      if (!s) {
        worst.note({s.error().message, 0, {}, {}});
        continue;
      }
      NPUCC_TRY(insertNpuWaits(prog, t));
      Choice c;
      c.tiling = tl;
      c.spm = std::move(f.spm);
      c.spmBytes = f.need;
      c.estimate = estimateBody(prog.body, nullptr, t, table);
      if (!groupBest || c.estimate.cycles < *groupBest) {
        groupBest = c.estimate.cycles;
        worse = 0;
      } else {
        ++worse;
      }
      all.push_back(std::move(c));
    }
  }
  // The fewest cycles, then the fewest system-memory bytes (weights kept
  // resident rather than reloaded per tile), then the least scratchpad.
  auto key = [](const Choice &c) {
    return std::make_tuple(c.estimate.cycles, c.estimate.sysRead + c.estimate.sysWrite, c.spmBytes);
  };
  for (Choice &c : all)
    if (!best || key(c) < key(*best))
      best = std::move(c);
  if (!best)
    return error(worst.problem.empty() ? "no tiling" : worst.problem);
  return std::move(*best);
}

} // namespace npucc::lower::npu

namespace npucc::lower {

bool npuTilingFits(const target::NpuOp &op, const target::TargetDesc &t, std::string *why) {
  // Feasibility only: the first candidate that fits and schedules.
  npu::Layer l = npu::makeLayer(op);
  npu::WorstCase worst;
  npu::LayerIo io = npu::placeholderIo();
  for (const auto &group : npu::candidateGroups(l, t))
    for (const npu::Tiling &tl : group) {
      npu::Feasibility f = npu::checkCandidate(l, t, tl);
      if (f.problem.empty()) {
        std::vector<lir::Instr> body;
        int tok = 0;
        Status s = npu::scheduleLayer(l, t, tl, f.spm, io, tok, "", body);
        if (s)
          return true;
        f.problem = s.error().message;
        f.need = 0;
      }
      worst.note(f);
    }
  if (why)
    *why = worst.problem.empty() ? "no tiling" : worst.problem;
  return false;
}

} // namespace npucc::lower
