//===- MemoryPlan.h - Offsets in one arena for buffers with lifetimes -----===//
//
// TFLM-style planner interface: add buffers with a size and the first and
// last instruction index that touch them; ask for offsets and the total.
// Buffers whose lifetimes do not overlap may share bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <vector>

namespace npucc::lower {

struct BufferLifetime {
  int64_t size = 0; // bytes
  int first = 0;    // first instruction using it (inclusive)
  int last = 0;     // last instruction using it (inclusive)
};

struct ArenaPlan {
  std::vector<int64_t> offsets; // one per buffer, aligned
  int64_t size = 0;             // total arena bytes
};

/// Greedy by size: largest first, each at the lowest aligned offset that does
/// not collide with an already placed buffer whose lifetime overlaps.
ArenaPlan planArena(const std::vector<BufferLifetime> &buffers, int64_t align);

/// Lower bound: the largest total size of simultaneously live buffers.
int64_t peakLiveBytes(const std::vector<BufferLifetime> &buffers, int64_t align);

} // namespace npucc::lower
