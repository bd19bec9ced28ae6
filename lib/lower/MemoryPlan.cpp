//===- MemoryPlan.cpp - Arena planner and its lower bound ------------------===//
//
// planArena places buffers one at a time, in some order, each at the lowest
// aligned offset that does not collide with an already placed buffer whose
// lifetime [first, last] overlaps (placed buffers are looked up by first use,
// so chains plan in near-linear time). The first order is greedy by size
// (largest first; ties: earlier first use, then lower index). When that plan
// is above peakLiveBytes, the largest sum of aligned sizes live at one
// instruction (no plan can be smaller), more orders are tried: in time order
// with two-sided placement aimed at that bound, then first fit by the busiest
// instruction a buffer lives through (greedy by breadth) and by size x
// lifetime; then the best order is improved by promotion: the buffers whose
// tops are the arena's end move to the front of the order and it is placed
// again. The smallest plan wins (ties: the earlier one, so a greedy-by-size
// plan that reaches the bound is kept as it was); the search stops at the
// bound, on a repeated order, or when its placement budget is spent.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/MemoryPlan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_set>

namespace npucc::lower {

namespace {

/// Buffer placements allowed for the orders after the first one: enough for
/// the 256 rounds on a model-sized instance, a few dozen at 20,000 nodes
/// (a few tenths of a second at most on a 2-core x86 host).
constexpr int64_t kSearchPlacements = 1000000;
/// Promotion rounds at most (each places every buffer once).
constexpr int kMaxPromotions = 256;

int64_t alignUp(int64_t v, int64_t align) {
  if (align <= 1)
    return v;
  return (v + align - 1) / align * align;
}

std::vector<int64_t> alignedSizes(const std::vector<BufferLifetime> &buffers, int64_t align) {
  std::vector<int64_t> sizes(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i)
    sizes[i] = alignUp(std::max<int64_t>(buffers[i].size, 0), align);
  return sizes;
}

bool lifetimesOverlap(const BufferLifetime &a, const BufferLifetime &b) {
  return a.first <= b.last && b.first <= a.last;
}

/// The highest aligned offset at most `target - size` where `size` bytes fit
/// between the `busy` intervals (sorted by begin), or -1.
int64_t highestFit(const std::vector<std::pair<int64_t, int64_t>> &busy, int64_t size,
                   int64_t target, int64_t align) {
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto &iv : busy)
    if (!merged.empty() && iv.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, iv.second);
    else
      merged.push_back(iv);
  for (size_t k = merged.size() + 1; k-- > 0;) {
    int64_t lo = k == 0 ? 0 : alignUp(merged[k - 1].second, align);
    int64_t hi = k == merged.size() ? target : std::min(target, merged[k].first);
    if (hi - size >= lo)
      return (hi - size) / align * align;
  }
  return -1;
}

/// Places the buffers in `order`, each at the lowest aligned offset free for
/// its whole lifetime (first fit). `sizes` are the aligned sizes. With a
/// `target` (two-sided placement), a buffer whose largest conflicting placed
/// buffer lies in the lower half of [0, target) goes as high below `target`
/// as it fits instead: on a chain, consecutive buffers alternate between the
/// bottom and the top, and each step's scratch fits in the gap between.
ArenaPlan placeInOrder(const std::vector<BufferLifetime> &buffers,
                       const std::vector<int64_t> &sizes, const std::vector<size_t> &order,
                       int64_t align, int64_t target = 0) {
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  // Placed buffers by first use: a buffer overlapping [first, last] starts in
  // [first - longest placed lifetime, last], so only those are visited (near
  // linear for the short lifetimes of a chain; all of them at worst).
  std::multimap<int64_t, size_t> placed;
  int64_t longest = 0;
  std::vector<std::pair<int64_t, int64_t>> busy; // [begin, end) of conflicting buffers
  for (size_t idx : order) {
    if (sizes[idx] == 0)
      continue;
    busy.clear();
    const BufferLifetime &b = buffers[idx];
    size_t largest = buffers.size();
    auto from = placed.lower_bound(int64_t(b.first) - longest);
    for (auto it = from; it != placed.end() && it->first <= b.last; ++it)
      if (lifetimesOverlap(b, buffers[it->second])) {
        size_t j = it->second;
        busy.emplace_back(plan.offsets[j], plan.offsets[j] + sizes[j]);
        if (largest == buffers.size() || sizes[j] > sizes[largest] ||
            (sizes[j] == sizes[largest] && j < largest))
          largest = j;
      }
    std::sort(busy.begin(), busy.end());
    int64_t candidate = -1;
    if (target > 0 && largest != buffers.size() &&
        2 * plan.offsets[largest] + sizes[largest] < target)
      candidate = highestFit(busy, sizes[idx], target, align);
    if (candidate < 0) {
      candidate = 0;
      for (const auto &[begin, end] : busy) {
        if (candidate + sizes[idx] <= begin)
          break; // fits in the gap before this buffer
        candidate = std::max(candidate, alignUp(end, align));
      }
    }
    plan.offsets[idx] = candidate;
    plan.size = std::max(plan.size, candidate + sizes[idx]);
    placed.emplace(b.first, idx);
    longest = std::max<int64_t>(longest, int64_t(b.last) - b.first);
  }
  return plan;
}

/// 0..n-1 sorted by `less` (each order's comparator ends in the index, so the result
/// is deterministic).
template <typename Less> std::vector<size_t> indexOrder(size_t n, Less less) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), less);
  return order;
}

/// In time order: earlier first use first; ties: longer lifetime, larger
/// size, lower index.
std::vector<size_t> orderByFirstUse(const std::vector<BufferLifetime> &buffers,
                                    const std::vector<int64_t> &sizes) {
  return indexOrder(buffers.size(), [&](size_t a, size_t b) {
    if (buffers[a].first != buffers[b].first)
      return buffers[a].first < buffers[b].first;
    if (buffers[a].last != buffers[b].last)
      return buffers[a].last > buffers[b].last;
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    return a < b;
  });
}

std::vector<size_t> orderBySize(const std::vector<BufferLifetime> &buffers,
                                const std::vector<int64_t> &sizes) {
  return indexOrder(buffers.size(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    if (buffers[a].first != buffers[b].first)
      return buffers[a].first < buffers[b].first;
    return a < b;
  });
}

/// Greedy by breadth (Pisarchyk and Lee, 2020): instructions by decreasing
/// live bytes, each one's not yet ordered buffers largest first. A buffer is
/// first reached at the busiest instruction of its lifetime, so this is a
/// sort by (that instruction's live bytes, its index, size), with the range
/// maximum taken from a sparse table (O(n log n)).
std::vector<size_t> orderByBreadth(const std::vector<BufferLifetime> &buffers,
                                   const std::vector<int64_t> &sizes) {
  size_t n = buffers.size();
  int lo = 0, hi = -1;
  for (size_t i = 0; i < n; ++i)
    if (sizes[i] > 0) {
      lo = hi < lo ? buffers[i].first : std::min(lo, buffers[i].first);
      hi = std::max({hi, buffers[i].first, buffers[i].last});
    }
  size_t steps = hi >= lo ? size_t(hi - lo + 1) : 0;
  std::vector<int64_t> live(steps + 1, 0);
  for (size_t i = 0; i < n; ++i)
    if (sizes[i] > 0) {
      live[size_t(buffers[i].first - lo)] += sizes[i];
      live[size_t(std::max(buffers[i].first, buffers[i].last) - lo) + 1] -= sizes[i];
    }
  for (size_t s = 1; s <= steps; ++s)
    live[s] += live[s - 1];
  // table[k][s]: the busiest step in [s, s + 2^k), earliest on ties.
  auto better = [&](size_t a, size_t b) {
    return live[a] > live[b] || (live[a] == live[b] && a < b);
  };
  std::vector<std::vector<size_t>> table(1, std::vector<size_t>(steps));
  std::iota(table[0].begin(), table[0].end(), 0);
  for (size_t k = 1; (size_t(1) << k) <= steps; ++k) {
    const std::vector<size_t> &prev = table[k - 1];
    std::vector<size_t> cur(steps - (size_t(1) << k) + 1);
    for (size_t s = 0; s < cur.size(); ++s) {
      size_t a = prev[s], b = prev[s + (size_t(1) << (k - 1))];
      cur[s] = better(b, a) ? b : a;
    }
    table.push_back(std::move(cur));
  }
  std::vector<size_t> busiest(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (sizes[i] == 0)
      continue;
    size_t a = size_t(buffers[i].first - lo);
    size_t b = size_t(std::max(buffers[i].first, buffers[i].last) - lo) + 1;
    size_t k = 0;
    while ((size_t(2) << k) <= b - a)
      ++k;
    size_t x = table[k][a], y = table[k][b - (size_t(1) << k)];
    busiest[i] = better(y, x) ? y : x;
  }
  return indexOrder(n, [&](size_t a, size_t b) {
    bool za = sizes[a] == 0, zb = sizes[b] == 0;
    if (za != zb)
      return zb;
    if (!za && busiest[a] != busiest[b])
      return better(busiest[a], busiest[b]);
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    return a < b;
  });
}

/// Largest size x lifetime first (ties: size, then index).
std::vector<size_t> orderByArea(const std::vector<BufferLifetime> &buffers,
                                const std::vector<int64_t> &sizes) {
  auto area = [&](size_t i) {
    return double(sizes[i]) * double(int64_t(buffers[i].last) - buffers[i].first + 1);
  };
  return indexOrder(buffers.size(), [&](size_t a, size_t b) {
    if (area(a) != area(b))
      return area(a) > area(b);
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    return a < b;
  });
}

uint64_t hashOrder(const std::vector<size_t> &order) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (size_t i : order) {
    h ^= uint64_t(i);
    h *= 1099511628211ull;
  }
  return h;
}

} // namespace

ArenaPlan planArena(const std::vector<BufferLifetime> &buffers, int64_t align) {
  size_t n = buffers.size();
  std::vector<int64_t> sizes = alignedSizes(buffers, align);
  std::vector<size_t> bestOrder = orderBySize(buffers, sizes);
  ArenaPlan best = placeInOrder(buffers, sizes, bestOrder, align);
  int64_t bound = peakLiveBytes(buffers, align);
  if (best.size <= bound || n == 0)
    return best;

  int64_t budget = kSearchPlacements;
  // Seeds: two-sided in time order (aimed at the bound), then first fit by
  // breadth and by area.
  using OrderFn =
      std::vector<size_t> (*)(const std::vector<BufferLifetime> &, const std::vector<int64_t> &);
  const std::pair<OrderFn, int64_t> seeds[] = {
      {orderByFirstUse, bound}, {orderByBreadth, 0}, {orderByArea, 0}};
  for (const auto &[seed, target] : seeds) {
    if (best.size <= bound || budget < int64_t(n))
      break;
    budget -= int64_t(n);
    std::vector<size_t> order = seed(buffers, sizes);
    ArenaPlan plan = placeInOrder(buffers, sizes, order, align, target);
    if (plan.size < best.size) {
      best = std::move(plan);
      bestOrder = std::move(order);
    }
  }

  // Promotion: the buffers ending at the arena's end move to the front (in
  // their order; all at once, so that repeated blocks of a long graph improve
  // in the same round); the walk continues from the new order whether or not
  // it is better.
  std::vector<size_t> order = bestOrder;
  ArenaPlan current = best;
  std::unordered_set<uint64_t> seen{hashOrder(order)};
  for (int round = 0; round < kMaxPromotions && best.size > bound && budget >= int64_t(n);
       ++round) {
    auto atTop = [&](size_t i) {
      return sizes[i] > 0 && current.offsets[i] + sizes[i] == current.size;
    };
    std::stable_partition(order.begin(), order.end(), atTop);
    if (!seen.insert(hashOrder(order)).second)
      break; // the top buffers were in front already, or the walk cycles
    budget -= int64_t(n);
    current = placeInOrder(buffers, sizes, order, align);
    if (current.size < best.size)
      best = current;
  }
  return best;
}

ArenaPlan planArenaInOrder(const std::vector<BufferLifetime> &buffers,
                           const std::vector<size_t> &order, int64_t align) {
  return placeInOrder(buffers, alignedSizes(buffers, align), order, align);
}

std::vector<size_t> greedyBySizeOrder(const std::vector<BufferLifetime> &buffers, int64_t align) {
  return orderBySize(buffers, alignedSizes(buffers, align));
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
