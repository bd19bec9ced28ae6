//===- MemoryPlan.h - Offsets in one arena for buffers with lifetimes -----===//
//
// TFLM-style planner interface: add buffers with a size and the first and
// last instruction index that touch them; ask for offsets and the total.
// Buffers whose lifetimes do not overlap may share bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
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

/// The smallest plan found among several placement orders (greedy by size
/// first; then two-sided in time order, by breadth, by size x lifetime, and
/// promotions of the buffers that end highest; lib/lower/MemoryPlan.cpp),
/// stopping at peakLiveBytes or when a fixed placement budget is spent. Never
/// larger than greedy by size; equal to it when that reaches the bound.
ArenaPlan planArena(const std::vector<BufferLifetime> &buffers, int64_t align);

/// One placement in the given order (a permutation of the buffer indices):
/// each buffer at the lowest aligned offset that does not collide with an
/// already placed buffer whose lifetime overlaps.
ArenaPlan planArenaInOrder(const std::vector<BufferLifetime> &buffers,
                           const std::vector<size_t> &order, int64_t align);

/// The greedy-by-size order: largest aligned size first; ties: earlier first
/// use, then lower index.
std::vector<size_t> greedyBySizeOrder(const std::vector<BufferLifetime> &buffers, int64_t align);

/// Lower bound: the largest total size of simultaneously live buffers.
int64_t peakLiveBytes(const std::vector<BufferLifetime> &buffers, int64_t align);

} // namespace npucc::lower
