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
//   - it passes at most one compute command (the pass runs before
//     npu-waits, so there are no waits to pass),
//   - and the estimated cycles (waits inserted, Estimate.cpp's model) of the
//     window it changes (the layer or layers it passes and its own) go
//     down: of the positions allowed, the fastest; else the load stays
//     where it was. Estimating the window, not the whole program, keeps
//     the pass linear in the program's length.
// The load's scratchpad buffer must be allocated before it: when the load
// goes above its `alloc`, the alloc moves along, and must not overlap a
// buffer still allocated there or allocated on the way. A layer
// is the run of instructions with one comment (the node). The program's
// `spm peak` is recomputed: two layers' buffers now overlap in time.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"
#include "npucc/lower/LirPass.h"

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

/// Would moving the alloc of `b` from `from` up to `j` overlap another
/// scratchpad buffer: one still allocated at `j`, or one allocated in
/// between (which `b` would now share bytes with)?
bool overlapsAllocated(const std::vector<lir::Instr> &body, size_t j, size_t from,
                       const lir::BufferRef &b) {
  auto overlap = [&](const lir::BufferRef &r) {
    return r.index == b.index && r.offset < b.offset + b.size && b.offset < r.offset + r.size;
  };
  std::vector<lir::BufferRef> live;
  for (size_t x = 0; x < j; ++x)
    if (const lir::BufferRef *r = bufferOf(body[x])) {
      if (body[x].opcode == "alloc") {
        live.push_back(*r);
      } else {
        for (size_t y = 0; y < live.size(); ++y)
          if (live[y].index == r->index && live[y].offset == r->offset &&
              live[y].size == r->size) {
            live.erase(live.begin() + long(y));
            break;
          }
      }
    }
  for (const lir::BufferRef &r : live)
    if (overlap(r))
      return true;
  for (size_t x = j; x < from; ++x)
    if (const lir::BufferRef *r = bufferOf(body[x]))
      if (body[x].opcode == "alloc" && overlap(*r))
        return true;
  return false;
}

/// Moves instruction `i` (and the alloc at `alloc` < i, unless it is
/// body.size()) to position `j` < both, the alloc first.
void moveUp(std::vector<lir::Instr> &body, size_t i, size_t alloc, size_t j) {
  lir::Instr load = body[i];
  body.erase(body.begin() + long(i));
  if (alloc < i) {
    lir::Instr a = body[alloc];
    body.erase(body.begin() + long(alloc));
    body.insert(body.begin() + long(j), a);
    ++j;
  }
  body.insert(body.begin() + long(j), load);
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
  for (size_t i = 1; i < body.size(); ++i) {
    if (!isSpmLoad(body[i]))
      continue;
    // Only the loads before the first compute command of their layer.
    bool leading = true;
    size_t k = i;
    while (k > 0 && body[k - 1].comment == body[i].comment) {
      --k;
      if (body[k].opcode == "npu" && body[k].callee != "dma")
        leading = false;
    }
    if (!leading || k == 0)
      continue;
    std::vector<npu::Access> fp = npu::npuFootprint(body[i]);
    // How far up it may go: not past a conflict, and past at most one
    // compute command (the last of the layer before).
    size_t bound = i;
    while (bound > 0) {
      const lir::Instr &x = body[bound - 1];
      std::vector<npu::Access> fx =
          x.opcode == "npu" ? npu::npuFootprint(x) : npu::cpuFootprint(x);
      if (conflicts(fp, fx))
        break;
      --bound;
      if (x.opcode == "npu" && x.callee != "dma")
        break;
    }
    // Its destination buffer's alloc: the last marker before it that covers
    // its destination (an earlier load of the same buffer may have moved it
    // out of the layer already). It moves along when the load goes above it.
    const lir::BufferRef *dst = std::get_if<lir::BufferRef>(npu::paramArg(body[i], "dst_addr"));
    size_t alloc = body.size();
    for (size_t a = i; a-- > 0 && dst;)
      if (const lir::BufferRef *b = bufferOf(body[a]))
        if (b->index == dst->index && b->offset <= dst->offset &&
            dst->offset < b->offset + b->size) {
          if (body[a].opcode == "alloc")
            alloc = a;
          break;
        }
    // The window the move changes: from the start of the layer (or layers)
    // it may pass to the end of its own.
    size_t from = bound;
    while (from > 0 && (body[from - 1].comment == body[bound > 0 ? bound - 1 : 0].comment ||
                        body[from - 1].comment == body[i].comment))
      --from;
    size_t to = i + 1;
    while (to < body.size() && body[to].comment == body[i].comment)
      ++to;
    // The best position above its layer, if it beats staying.
    size_t bestPos = i;
    uint64_t bestCycles = windowCycles(p, body, from, to, body.size(), body.size(), 0, t, table);
    for (size_t j = bound; j < k; ++j) {
      size_t moved = alloc < body.size() && alloc >= j ? alloc : body.size();
      if (moved < body.size() && overlapsAllocated(body, j, moved, *bufferOf(body[moved])))
        continue;
      uint64_t c = windowCycles(p, body, from, to, i, moved, j, t, table);
      if (c < bestCycles)
        bestCycles = c, bestPos = j;
    }
    if (bestPos != i) {
      moveUp(body, i, alloc < body.size() && alloc >= bestPos ? alloc : body.size(), bestPos);
    }
  }
  p.spmPeak = npu::scratchpadPeak(body);
  return success();
}

} // namespace npucc::lower
