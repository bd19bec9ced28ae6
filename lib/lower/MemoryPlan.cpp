//===- MemoryPlan.cpp - Greedy-by-size arena planner and its lower bound --===//
//
// planArena places buffers largest first (ties: earlier first use, then lower
// index) at the lowest aligned offset that does not collide with any already
// placed buffer whose lifetime [first, last] overlaps (placed buffers are
// looked up by first use, so chains plan in near-linear time). peakLiveBytes
// is the largest sum of aligned sizes live at one instruction: no plan can
// be smaller than that.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/MemoryPlan.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace npucc::lower {

namespace {

int64_t alignUp(int64_t v, int64_t align) {
  if (align <= 1)
    return v;
  return (v + align - 1) / align * align;
}

bool lifetimesOverlap(const BufferLifetime &a, const BufferLifetime &b) {
  return a.first <= b.last && b.first <= a.last;
}

} // namespace

ArenaPlan planArena(const std::vector<BufferLifetime> &buffers, int64_t align) {
  ArenaPlan plan;
  size_t n = buffers.size();
  plan.offsets.assign(n, 0);
  std::vector<int64_t> sizes(n);
  for (size_t i = 0; i < n; ++i)
    sizes[i] = alignUp(std::max<int64_t>(buffers[i].size, 0), align);

  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    if (buffers[a].first != buffers[b].first)
      return buffers[a].first < buffers[b].first;
    return a < b;
  });

  // Placed buffers by first use: a buffer overlapping [first, last] starts in
  // [first - longest placed lifetime, last], so only those are visited (near
  // linear for the short lifetimes of a chain; all of them at worst).
  std::multimap<int64_t, size_t> placed;
  int64_t longest = 0;
  std::vector<std::pair<int64_t, int64_t>> busy; // [begin, end) of conflicting buffers
  for (size_t idx : order) {
    if (sizes[idx] == 0) {
      plan.offsets[idx] = 0;
      continue;
    }
    busy.clear();
    const BufferLifetime &b = buffers[idx];
    auto from = placed.lower_bound(int64_t(b.first) - longest);
    for (auto it = from; it != placed.end() && it->first <= b.last; ++it)
      if (lifetimesOverlap(b, buffers[it->second]))
        busy.emplace_back(plan.offsets[it->second], plan.offsets[it->second] + sizes[it->second]);
    std::sort(busy.begin(), busy.end());
    int64_t candidate = 0;
    for (const auto &[begin, end] : busy) {
      if (candidate + sizes[idx] <= begin)
        break; // fits in the gap before this buffer
      candidate = std::max(candidate, alignUp(end, align));
    }
    plan.offsets[idx] = candidate;
    plan.size = std::max(plan.size, candidate + sizes[idx]);
    placed.emplace(b.first, idx);
    longest = std::max<int64_t>(longest, int64_t(b.last) - b.first);
  }
  return plan;
}

int64_t peakLiveBytes(const std::vector<BufferLifetime> &buffers, int64_t align) {
  // Sweep: +size at `first`, -size after `last`.
  std::vector<std::pair<int64_t, int64_t>> events; // (time*2 [+1 for end], delta)
  events.reserve(buffers.size() * 2);
  for (const BufferLifetime &b : buffers) {
    int64_t s = alignUp(std::max<int64_t>(b.size, 0), align);
    if (s == 0)
      continue;
    events.emplace_back(int64_t(b.first) * 2, s);
    events.emplace_back(int64_t(b.last) * 2 + 1, -s);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (const auto &e : events) {
    live += e.second;
    peak = std::max(peak, live);
  }
  return peak;
}

} // namespace npucc::lower
