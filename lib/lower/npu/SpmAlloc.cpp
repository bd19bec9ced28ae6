//===- SpmAlloc.cpp - Scratchpad placement: alignment and bank rules ------===//
//
// The buffers of one layer are placed in request order, first fit over the
// scratchpads and their banks: a buffer starts at an address that is a
// multiple of the strictest alignment of the operands it holds and of the
// DMA's, where the layer's command can address each of its operands (the
// range of its address field), stays inside one bank when it fits in a
// bank (else spans whole banks from an empty one), and never starts an
// operand in the bank of an operand that the scratchpad's separate_banks
// rules keep apart (the simulator would fail the command, or slow it down).
// Banks only matter through separate_banks (the simulator checks nothing
// else about them), so a scratchpad without such rules is one bank here.
// Each layer starts from an empty scratchpad (layers run one after another)
// but for reserved ranges: a hand-off's kept input, live through the layer.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"

#include "../../../runtime/hal/npucc_desc.h"

#include <algorithm>
#include <cstdio>

namespace npucc::lower::npu {

namespace {

uint64_t alignUp(uint64_t v, uint64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

std::string hex(int64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

struct Placed {
  int spm;
  uint64_t offset;
  const SpmRequest *req;
};

/// The bank of each operand role that the buffer at `off` holds.
uint64_t roleBank(const target::Scratchpad &s, uint64_t off, const SpmRequest &r, int role) {
  uint64_t inner = size_t(role) < r.roleOffsets.size() ? r.roleOffsets[size_t(role)] : 0;
  return (off + inner) / s.bankSize;
}

bool separated(const target::Scratchpad &s, int spm, uint64_t off, const SpmRequest &r,
               const std::vector<Placed> &placed) {
  for (const auto &rule : s.separateBanks)
    for (int pass = 0; pass < 2; ++pass) {
      int a = int(pass ? rule.second : rule.first), b = int(pass ? rule.first : rule.second);
      if (!(r.roles & (1u << a)))
        continue;
      uint64_t bankA = roleBank(s, off, r, a);
      for (const Placed &p : placed)
        if (p.spm == spm && (p.req->roles & (1u << b)) && roleBank(s, p.offset, *p.req, b) == bankA)
          return false;
      // Two roles of this very buffer.
      if ((r.roles & (1u << b)) && a != b && roleBank(s, off, r, b) == bankA)
        return false;
    }
  return true;
}

/// The alignment of a buffer's start: its operands' and the DMA's (every
/// scratchpad buffer is moved by DMA).
uint64_t bufferAlign(const target::TargetDesc &t, const target::Scratchpad &s,
                     const SpmRequest &r) {
  uint64_t align = std::max<uint64_t>(1, t.dma.alignment);
  for (int role = 0; role < target::NumOperands; ++role)
    if (r.roles & (1u << role))
      align = std::max<uint64_t>(align, s.operandAlignment[size_t(role)]);
  return align;
}

/// The offsets (from the scratchpad's base) where the buffer may start so
/// that each of its operands lies where command `kind`'s address field of
/// that operand reaches: [lo, hi], empty when lo > hi; `role` then names the
/// operand that cannot be placed.
struct Reach {
  int64_t lo = 0, hi = 0;
  int role = -1;
};
Reach reach(const target::TargetDesc &t, const target::Scratchpad &s, const SpmRequest &r,
            int kind) {
  Reach x{0, int64_t(s.size), -1};
  if (kind < 0)
    return x;
  for (int role = 0; role < target::NumOperands; ++role) {
    if (!(r.roles & (1u << role)))
      continue;
    const target::ParamRange &b = t.paramBounds(kind, npucc_operand_addr_param(role));
    if (!b.bound)
      continue; // a fixed address: the proof of the scheduled command says so
    int64_t inner = size_t(role) < r.roleOffsets.size() ? int64_t(r.roleOffsets[size_t(role)]) : 0;
    int64_t base = int64_t(s.base) + inner; // scratchpads lie below 2^63 (loader)
    x.lo = std::max(x.lo, b.lo > base ? b.lo - base : 0);
    x.hi = std::min(x.hi, b.hi < base ? -1 : (b.hi - base > x.hi ? x.hi : b.hi - base));
    if (x.lo > x.hi && x.role < 0)
      x.role = role;
  }
  return x;
}

} // namespace

/// The reserved ranges that hold operands of the layer, as placed buffers
/// (`held` keeps their requests).
static void heldBuffers(const std::vector<SpmRange> &reserved, std::vector<SpmRequest> &held,
                        std::vector<Placed> &placed) {
  held.reserve(reserved.size());
  for (const SpmRange &r : reserved)
    if (r.roles) {
      held.push_back({"kept buffer", r.hi - r.lo, r.roles, {}});
      placed.push_back({r.spm, r.lo, &held.back()});
    }
}

/// The first offset at or above `off` (aligned to `align`, absolute) where
/// `size` bytes of scratchpad `si` overlap no reserved range.
static uint64_t pastReserved(const target::Scratchpad &s, int si, uint64_t off, uint64_t size,
                             uint64_t align, const std::vector<SpmRange> &reserved) {
  for (bool moved = true; moved;) {
    moved = false;
    for (const SpmRange &r : reserved)
      if (r.spm == si && off < r.hi && r.lo < off + size) {
        off = alignUp(s.base + r.hi, align) - s.base;
        moved = true;
      }
  }
  return off;
}

Result<std::vector<SpmPlace>> allocateSpm(const target::TargetDesc &t,
                                          const std::vector<SpmRequest> &reqs, int kind,
                                          const std::vector<SpmRange> &reserved) {
  // Next free byte of each bank of each scratchpad (offsets from its base).
  std::vector<std::vector<uint64_t>> next;
  std::vector<unsigned> bankCount;
  std::vector<uint64_t> bankBytes;
  for (const target::Scratchpad &s : t.scratchpads) {
    bool ruled = !s.separateBanks.empty();
    bankCount.push_back(ruled ? s.banks : 1);
    bankBytes.push_back(ruled ? s.bankSize : s.size);
    std::vector<uint64_t> banks;
    for (unsigned b = 0; b < bankCount.back(); ++b)
      banks.push_back(b * bankBytes.back());
    next.push_back(banks);
  }
  std::vector<Placed> placed;
  // Reserved ranges the layer reads take part in the bank rules.
  std::vector<SpmRequest> held;
  heldBuffers(reserved, held, placed);
  std::vector<SpmPlace> out;
  for (const SpmRequest &r : reqs) {
    bool done = false;
    std::string unreachable; // why the layer's command cannot address a scratchpad
    for (size_t si = 0; si < t.scratchpads.size() && !done; ++si) {
      const target::Scratchpad &s = t.scratchpads[si];
      uint64_t align = bufferAlign(t, s, r);
      Reach within = reach(t, s, r, kind);
      if (within.lo > within.hi) {
        // Say which field cannot reach this scratchpad (if no other one takes it).
        const target::ParamRange &b = t.paramBounds(kind, npucc_operand_addr_param(within.role));
        unreachable = "command '" + target::commandKindNames()[size_t(kind)] + "' parameter '" +
                      target::paramNames()[size_t(npucc_operand_addr_param(within.role))] +
                      "' cannot address the " + r.what + " in scratchpad '" + s.name +
                      "': its field '" + b.field + "' holds " + hex(b.lo) + ".." + hex(b.hi);
        continue;
      }
      const unsigned nb = bankCount[si];
      const uint64_t bs = bankBytes[si];
      for (unsigned b = 0; b < nb && !done; ++b) {
        uint64_t bankEnd = uint64_t(b + 1) * bs;
        uint64_t from = std::max<uint64_t>(next[si][b], uint64_t(within.lo));
        uint64_t off = alignUp(s.base + from, align) - s.base; // absolute alignment
        off = pastReserved(s, int(si), off, r.size, align, reserved);
        if (off > uint64_t(within.hi))
          continue;
        // Inside this bank, or spanning whole banks from an empty one.
        uint64_t end = off + r.size;
        if (end > bankEnd) {
          if (next[si][b] != b * bs || end > s.size)
            continue;
          bool free = true;
          for (unsigned k = b + 1; k < nb && uint64_t(k) * bs < end; ++k)
            free = free && next[si][k] == k * bs;
          if (!free)
            continue;
        }
        if (!separated(s, int(si), off, r, placed))
          continue;
        for (unsigned k = b; k < nb && uint64_t(k) * bs < end; ++k)
          next[si][k] = std::max(next[si][k], std::min<uint64_t>(end, uint64_t(k + 1) * bs));
        placed.push_back({int(si), off, &r});
        out.push_back({int(si), off});
        done = true;
      }
    }
    if (!done && !unreachable.empty())
      return error(unreachable);
    if (!done) {
      uint64_t total = 0, cap = 0;
      for (const SpmRequest &q : reqs)
        total += q.size;
      for (const target::Scratchpad &s : t.scratchpads)
        cap += s.size;
      return error("the " + r.what + " (" + std::to_string(r.size) + " bytes) does not fit: " +
                   std::to_string(total) + " bytes of buffers (with double buffering) for " +
                   std::to_string(cap) + " bytes of scratchpad");
    }
  }
  return out;
}

std::optional<std::vector<SpmPlace>> mirrorSpm(const target::TargetDesc &t,
                                               const std::vector<SpmRequest> &reqs,
                                               const std::vector<SpmPlace> &places, int kind,
                                               const std::vector<SpmRange> &reserved) {
  std::vector<SpmPlace> out;
  std::vector<Placed> placed;
  std::vector<SpmRequest> held;
  heldBuffers(reserved, held, placed);
  for (size_t i = 0; i < reqs.size() && i < places.size(); ++i) {
    const SpmRequest &r = reqs[i];
    const target::Scratchpad &s = t.scratchpads[size_t(places[i].spm)];
    uint64_t align = bufferAlign(t, s, r);
    uint64_t top = s.base + (s.size - places[i].offset - r.size); // absolute, aligned down
    top = top / align * align;
    if (top < s.base)
      return std::nullopt;
    uint64_t off = top - s.base;
    Reach within = reach(t, s, r, kind);
    if (int64_t(off) < within.lo || int64_t(off) > within.hi)
      return std::nullopt;
    for (const Placed &q : placed)
      if (q.spm == places[i].spm && off < q.offset + q.req->size && q.offset < off + r.size)
        return std::nullopt;
    for (const SpmRange &q : reserved)
      if (q.spm == places[i].spm && off < q.hi && q.lo < off + r.size)
        return std::nullopt;
    if (!s.separateBanks.empty() && !separated(s, places[i].spm, off, r, placed))
      return std::nullopt;
    placed.push_back({places[i].spm, off, &r});
    out.push_back({places[i].spm, off});
  }
  return out;
}

} // namespace npucc::lower::npu
