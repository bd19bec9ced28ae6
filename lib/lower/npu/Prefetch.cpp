//===- Prefetch.cpp - The `npu-prefetch` loop-IR pass ----------------------===//
//
// Each layer's schedule starts by loading its first weights and input tile
// and cannot compute before they arrive: exposed DMA at every layer
// boundary. This pass moves such a load (a DMA into the scratchpad) of one
// layer above the end of the layer before it, so it runs while that layer's
// last command computes (Vela's weight prefetch across layers), when
//   - nothing it passes touches what it reads or writes (scratchpad or
//     memory ranges; NpuLowering alternates the layers' scratchpad halves so
//     that consecutive layers' buffers usually do not overlap),
//   - it passes at most MaxComputes (8) compute commands: a layer's
//     weights stream in while the last tiles of the layer before compute,
//     in the DMA's slack (the pass runs before npu-waits, so there are no
//     waits to pass),
//   - and the estimated cycles (waits inserted, Estimate.cpp's model) of the
//     window it changes (the layer or layers it passes and its own) go
//     down: of the positions allowed, the fastest; else the load stays
//     where it was. Estimating the window, not the whole program, and
//     bounding the loads, positions and window sizes considered keep the
//     pass linear in the program's length (npu_prefetch_bounds_test).
// The load's scratchpad buffer must be allocated before it: when the load
// goes above its `alloc`, the alloc moves along, and must not overlap a
// buffer still allocated there or allocated on the way. A layer
// is the run of instructions with one comment (the node). The program's
// `spm peak` is recomputed: two layers' buffers now overlap in time.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"
#include "npucc/lower/LirPass.h"

#include <algorithm>

namespace npucc::lower {

namespace {

bool conflicts(const std::vector<npu::Access> &a, const std::vector<npu::Access> &b) {
  for (const npu::Access &x : a)
    for (const npu::Access &y : b)
      if ((x.write || y.write) && npu::overlaps(x, y))
        return true;
  return false;
}

bool isSpmLoad(const lir::Instr &in) {
  if (in.opcode != "npu" || in.callee != "dma")
    return false;
  const lir::Arg *d = npu::paramArg(in, "dst_addr");
  const lir::BufferRef *b = d ? std::get_if<lir::BufferRef>(d) : nullptr;
  return b && b->region == lir::Region::Spm;
}

const lir::BufferRef *bufferOf(const lir::Instr &in) {
  return npu::isBufferMarker(in) && !in.args.empty() ? std::get_if<lir::BufferRef>(&in.args[0])
                                                     : nullptr;
}

bool sameBuffer(const lir::BufferRef &a, const lir::BufferRef &b) {
  return a.index == b.index && a.offset == b.offset && a.size == b.size;
}

bool overlapBuffers(const lir::BufferRef &a, const lir::BufferRef &b) {
  return a.index == b.index && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

/// The scratchpad buffers allocated and not yet freed, as the pass walks.
struct LiveSet {
  std::vector<lir::BufferRef> bufs;
  /// Applies marker `in` forward (alloc adds, free removes) or undoes it.
  void apply(const lir::Instr &in, bool undo) {
    const lir::BufferRef *r = bufferOf(in);
    if (!r)
      return;
    if ((in.opcode == "alloc") != undo) {
      bufs.push_back(*r);
      return;
    }
    for (size_t y = 0; y < bufs.size(); ++y)
      if (sameBuffer(bufs[y], *r)) {
        bufs.erase(bufs.begin() + long(y));
        return;
      }
  }
  bool overlaps(const lir::BufferRef &b) const {
    for (const lir::BufferRef &r : bufs)
      if (overlapBuffers(r, b))
        return true;
    return false;
  }
};

/// Moves instruction `i` (and the alloc at `alloc` < i, unless it is
/// body.size()) to position `j` < both, the alloc first. Only body[j, i]
/// moves.
void moveUp(std::vector<lir::Instr> &body, size_t i, size_t alloc, size_t j) {
  auto at = [&](size_t x) { return body.begin() + long(x); };
  std::rotate(at(j), at(i), at(i + 1)); // the load at j, body[j, i) one down
  if (alloc < i)
    std::rotate(at(j), at(alloc + 1), at(alloc + 2)); // the alloc (now at alloc + 1) at j
}

/// Estimated cycles of body[from, to) on its own (engines idle at its start,
/// waits inserted, drained at its end), with instruction `i` moved to `j`
/// (and the alloc at `alloc`, unless it is body.size()) when i < body.size().
/// A move changes the timeline of the two layers around it; estimating only
/// that window keeps the pass linear in the program's length.
uint64_t windowCycles(const lir::Program &p, const std::vector<lir::Instr> &body, size_t from,
                      size_t to, size_t i, size_t alloc, size_t j, const target::TargetDesc &t,
                      const target::CTable &table) {
  lir::Program tmp;
  tmp.body.assign(body.begin() + long(from), body.begin() + long(to));
  if (i < body.size())
    moveUp(tmp.body, i - from, alloc < body.size() ? alloc - from : tmp.body.size(), j - from);
  (void)npu::insertNpuWaits(tmp, t);
  return npu::estimateBody(tmp.body, &p, t, table).cycles;
}

} // namespace

Status runNpuPrefetchPass(lir::Program &p, LirPassContext &ctx) {
  if (!ctx.target)
    return error("npu-prefetch needs the NPU description (--target)");
  const target::TargetDesc &t = *ctx.target;
  target::CTable table(t);
  std::vector<lir::Instr> &body = p.body;
  for (const lir::Instr &in : body)
    if (in.opcode == "wait")
      return error("npu-prefetch runs before npu-waits (the program has waits)");
  // The pass's work is bounded whatever the program (a description with
  // tiny DMA limits turns a layer into thousands of one-byte loads): per
  // layer the first MaxLoads leading loads, per load at most MaxPositions
  // positions, windows of at most MaxWindow instructions (a load whose
  // window is larger stays). The shared int8 models on the five
  // descriptions stay far below these (at most about 10 loads, 30 positions,
  // 393 instructions), so they decide nothing there; they keep the pass
  // linear in the program's length.
  constexpr size_t MaxLoads = 16, MaxPositions = 64, MaxWindow = 4096;
  // A load may pass up to this many compute commands of the layers above
  // (the weights of a layer streamed while the last tiles of the layer
  // before compute, in the DMA's slack); the estimate picks the position.
  constexpr int MaxComputes = 8;
  int64_t estimated = 0, considered = 0;
  size_t k = 0;          // start of the layer (run of one comment) holding i
  bool computed = false; // a compute command of that layer before i
  size_t loadsSeen = 0;  // leading loads of that layer seen so far
  LiveSet live;          // scratchpad buffers allocated in body[0, i)
  for (size_t i = 0; i < body.size(); ++i) {
    if (i == 0 || body[i].comment != body[i - 1].comment)
      k = i, computed = false, loadsSeen = 0;
    bool moved = false;
    // Only the loads before the first compute command of their layer.
    if (k > 0 && !computed && isSpmLoad(body[i]) && loadsSeen++ < MaxLoads) {
      ++considered;
      std::vector<npu::Access> fp = npu::npuFootprint(body[i]);
      // How far up it may go: not past a conflict, past at most
      // MaxComputes compute commands, nor further than MaxPositions above
      // its layer.
      size_t bound = i;
      int passed = 0;
      while (bound > 0 && !(bound <= k && k - bound >= MaxPositions)) {
        const lir::Instr &x = body[bound - 1];
        std::vector<npu::Access> fx =
            x.opcode == "npu" ? npu::npuFootprint(x) : npu::cpuFootprint(x);
        bool compute = x.opcode == "npu" && x.callee != "dma";
        if (conflicts(fp, fx) || (compute && passed == MaxComputes))
          break;
        passed += compute;
        --bound;
      }
      // Its destination buffer's alloc: the last marker before it that
      // covers its destination (an earlier load of the same buffer may have
      // moved it out of the layer already). It moves along when the load
      // goes above it.
      // A moved alloc sits at most MaxComputes compute commands above the
      // layer, so the search ends at the next one.
      const lir::BufferRef *dst = std::get_if<lir::BufferRef>(npu::paramArg(body[i], "dst_addr"));
      size_t alloc = body.size();
      int computes = 0;
      for (size_t a = i; a-- > 0 && dst;) {
        if (body[a].opcode == "npu" && body[a].callee != "dma" && ++computes == MaxComputes + 1)
          break;
        if (const lir::BufferRef *b = bufferOf(body[a]))
          if (b->index == dst->index && b->offset <= dst->offset &&
              dst->offset < b->offset + b->size) {
            if (body[a].opcode == "alloc")
              alloc = a;
            break;
          }
      }
      // The window the move changes: from the start of the layer (or
      // layers) it may pass to the end of its own.
      size_t from = bound;
      while (from > 0 && (body[from - 1].comment == body[bound > 0 ? bound - 1 : 0].comment ||
                          body[from - 1].comment == body[i].comment))
        --from;
      size_t to = i + 1;
      while (to < body.size() && body[to].comment == body[i].comment)
        ++to;
      if (bound < k && to - from <= MaxWindow) {
        // A position j is blocked when the alloc, moved up to j, would
        // overlap a buffer still allocated at j or allocated on the way:
        // the live set walked back from i, one instruction at a time.
        std::vector<bool> blocked(k - bound, false);
        if (alloc < body.size()) {
          const lir::BufferRef &b = *bufferOf(body[alloc]);
          LiveSet at = live;
          bool onTheWay = false;
          for (size_t x = i; x-- > bound;) {
            at.apply(body[x], /*undo=*/true); // now the buffers of body[0, x)
            if (x < alloc && body[x].opcode == "alloc" && overlapBuffers(*bufferOf(body[x]), b))
              onTheWay = true;
            if (x < k && x <= alloc)
              blocked[x - bound] = onTheWay || at.overlaps(b);
          }
        }
        // The best position above its layer, if it beats staying.
        size_t bestPos = i;
        estimated += int64_t(to - from);
        uint64_t bestCycles =
            windowCycles(p, body, from, to, body.size(), body.size(), 0, t, table);
        for (size_t j = bound; j < k; ++j) {
          if (blocked[j - bound])
            continue;
          size_t m = alloc < body.size() && alloc >= j ? alloc : body.size();
          estimated += int64_t(to - from);
          uint64_t c = windowCycles(p, body, from, to, i, m, j, t, table);
          if (c < bestCycles)
            bestCycles = c, bestPos = j;
        }
        if (bestPos != i) {
          bool allocAlong = alloc < body.size() && alloc >= bestPos;
          moveUp(body, i, allocAlong ? alloc : body.size(), bestPos);
          // body[0, i] now holds what body[0, i) held, plus the load; the
          // layer starts later by what moved above its start.
          k += 1 + (allocAlong && alloc >= k ? 1 : 0);
          moved = true;
        }
      }
    }
    if (!moved) {
      live.apply(body[i], /*undo=*/false);
      computed = computed || (i >= k && body[i].opcode == "npu" && body[i].callee != "dma");
    }
  }
  ctx.stats["npu-prefetch.loads"] += considered;
  ctx.stats["npu-prefetch.estimated-instructions"] += estimated;
  p.spmPeak = npu::scratchpadPeak(body);
  return success();
}

} // namespace npucc::lower
