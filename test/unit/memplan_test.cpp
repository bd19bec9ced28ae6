//===- memplan_test.cpp - Arena planner: validity, bounds, determinism ----===//
#include "npucc/lower/MemoryPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace npucc::lower;

namespace {

int64_t alignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// Every pair of buffers with overlapping lifetimes must have disjoint bytes,
// offsets must be aligned and every buffer must fit in the arena.
void expectValid(const std::vector<BufferLifetime> &bufs, const ArenaPlan &plan, int64_t align) {
  ASSERT_EQ(plan.offsets.size(), bufs.size());
  for (size_t i = 0; i < bufs.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % align, 0) << "buffer " << i;
    EXPECT_LE(plan.offsets[i] + bufs[i].size, plan.size) << "buffer " << i;
    for (size_t j = i + 1; j < bufs.size(); ++j) {
      bool timeOverlap = bufs[i].first <= bufs[j].last && bufs[j].first <= bufs[i].last;
      bool byteOverlap = plan.offsets[i] < plan.offsets[j] + bufs[j].size &&
                         plan.offsets[j] < plan.offsets[i] + bufs[i].size;
      if (bufs[i].size > 0 && bufs[j].size > 0) {
        EXPECT_FALSE(timeOverlap && byteOverlap) << "buffers " << i << " and " << j;
      }
    }
  }
}

std::vector<BufferLifetime> randomBuffers(std::mt19937 &rng, int n, int steps) {
  std::uniform_int_distribution<int> t(0, steps - 1), len(0, 6);
  std::uniform_int_distribution<int64_t> size(0, 5000);
  std::vector<BufferLifetime> v;
  for (int i = 0; i < n; ++i) {
    BufferLifetime b;
    b.size = size(rng);
    b.first = t(rng);
    b.last = std::min(steps - 1, b.first + len(rng));
    v.push_back(b);
  }
  return v;
}

TEST(MemoryPlan, RandomLifetimesAreValidAndBounded) {
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 300; ++iter) {
    int64_t align = int64_t(1) << (iter % 6); // 1..32
    auto bufs = randomBuffers(rng, 1 + iter % 40, 1 + iter % 25);
    ArenaPlan plan = planArena(bufs, align);
    expectValid(bufs, plan, align);
    int64_t sum = 0;
    for (const auto &b : bufs)
      sum += alignUp(b.size, align);
    int64_t peak = peakLiveBytes(bufs, align);
    EXPECT_GE(plan.size, peak);
    EXPECT_LE(plan.size, sum);
    // Deterministic.
    ArenaPlan again = planArena(bufs, align);
    EXPECT_EQ(plan.offsets, again.offsets);
    EXPECT_EQ(plan.size, again.size);
  }
}

TEST(MemoryPlan, KnownOptimumForAChain) {
  // A chain a->b->c->d: each buffer lives from its producer to its consumer.
  // Only neighbours overlap, so two slots suffice: optimum = 2 largest adjacent.
  std::vector<BufferLifetime> bufs = {{1000, 0, 1}, {2000, 1, 2}, {1000, 2, 3}, {500, 3, 4}};
  ArenaPlan plan = planArena(bufs, 16);
  expectValid(bufs, plan, 16);
  EXPECT_EQ(peakLiveBytes(bufs, 16), 1008 + 2000);
  EXPECT_EQ(plan.size, 1008 + 2000); // greedy reaches the lower bound here
  // The largest goes first, at offset 0; the 1000-byte neighbours go above it.
  EXPECT_EQ(plan.offsets[1], 0);
  EXPECT_EQ(plan.offsets[0], 2000);
  EXPECT_EQ(plan.offsets[2], 2000);
  EXPECT_EQ(plan.offsets[3], 0); // lives after b: reuses the bottom
}

TEST(MemoryPlan, DisjointLifetimesShareOffsetZero) {
  std::vector<BufferLifetime> bufs = {{100, 0, 0}, {300, 1, 1}, {200, 2, 2}};
  ArenaPlan plan = planArena(bufs, 8);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(plan.size, 304);
}

TEST(MemoryPlan, FillsGapsBetweenPlacedBuffers) {
  // Two large buffers live at step 0 and 2 with a hole between them at step 1.
  std::vector<BufferLifetime> bufs = {
      {400, 0, 2}, // placed first at 0
      {300, 0, 0}, // at 400
      {300, 2, 2}, // at 400 too (lifetime disjoint from the previous one)
      {100, 1, 1}, // fits at 400 (free at step 1)
  };
  ArenaPlan plan = planArena(bufs, 4);
  expectValid(bufs, plan, 4);
  EXPECT_EQ(plan.offsets[3], 400);
  EXPECT_EQ(plan.size, 700);
}

TEST(MemoryPlan, ZeroSizeAndEmpty) {
  EXPECT_EQ(planArena({}, 16).size, 0);
  EXPECT_EQ(peakLiveBytes({}, 16), 0);
  std::vector<BufferLifetime> bufs = {{0, 0, 5}, {16, 0, 5}};
  ArenaPlan plan = planArena(bufs, 16);
  EXPECT_EQ(plan.size, 16);
  EXPECT_EQ(peakLiveBytes(bufs, 16), 16);
}

TEST(MemoryPlan, TieBreakByFirstUseThenIndex) {
  std::vector<BufferLifetime> bufs = {{64, 3, 4}, {64, 0, 4}, {64, 0, 4}};
  ArenaPlan plan = planArena(bufs, 16);
  // Order: buffer 1 (first=0), buffer 2 (first=0, higher index), buffer 0.
  EXPECT_EQ(plan.offsets[1], 0);
  EXPECT_EQ(plan.offsets[2], 64);
  EXPECT_EQ(plan.offsets[0], 128);
}

// The lifetimes of models/tinycnn_int8 with the default CPU kernels (--target
// cpu; sizes before alignment): greedy by size puts the two 8192-byte buffers
// at 0 and the 4096-byte one above the second, which leaves the 2048-byte
// buffer living next to both no room below 12288.
std::vector<BufferLifetime> tinycnnInt8() {
  return {{3072, 0, 1}, {8192, 1, 2}, {2048, 2, 3}, {4096, 3, 4}, {8192, 4, 5},
          {32, 5, 6},   {10, 6, 7},   {54, 1, 1},   {144, 3, 3},  {288, 4, 4}};
}

TEST(MemoryPlan, ReachesTheBoundWhereGreedyBySizeDoesNot) {
  auto bufs = tinycnnInt8();
  ArenaPlan greedy = planArenaInOrder(bufs, greedyBySizeOrder(bufs, 16), 16);
  expectValid(bufs, greedy, 16);
  EXPECT_EQ(greedy.size, 14336);
  EXPECT_EQ(greedy.offsets[2], 12288);
  EXPECT_EQ(peakLiveBytes(bufs, 16), 4096 + 8192 + 288); // at step 4
  ArenaPlan plan = planArena(bufs, 16);
  expectValid(bufs, plan, 16);
  EXPECT_EQ(plan.size, 12576);
}

TEST(MemoryPlan, ReachesTheBoundOnTheVwwHead) {
  // The first layers of mlpt_vww_qdq (--target cpu): greedy by size gives
  // 64512 (the second 18432-byte buffer goes above the 36864 one and the
  // first 18432 one); the bound is 18432 + 36864 + 16 at step 3.
  std::vector<BufferLifetime> bufs = {{27648, 0, 1}, {18432, 1, 2}, {18432, 2, 3},
                                      {36864, 3, 4}, {9216, 4, 5},  {54, 1, 1},
                                      {150, 2, 2},   {16, 3, 3},    {147, 4, 4}};
  EXPECT_EQ(planArenaInOrder(bufs, greedyBySizeOrder(bufs, 16), 16).size, 64512);
  ArenaPlan plan = planArena(bufs, 16);
  expectValid(bufs, plan, 16);
  EXPECT_EQ(peakLiveBytes(bufs, 16), 55312);
  EXPECT_EQ(plan.size, 55312);
}

TEST(MemoryPlan, InOrderPlacementIsFirstFit) {
  std::vector<BufferLifetime> bufs = {{100, 0, 1}, {50, 1, 2}, {100, 2, 3}};
  ArenaPlan plan = planArenaInOrder(bufs, {1, 0, 2}, 1);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{50, 0, 50}));
  EXPECT_EQ(plan.size, 150);
  EXPECT_EQ(greedyBySizeOrder(bufs, 1), (std::vector<size_t>{0, 2, 1}));
}

// Lifetimes of a random graph: a chain with skip connections (a value read
// again up to `reach` steps later) and per-step scratch, like the lowering's.
std::vector<BufferLifetime> randomGraph(std::mt19937 &rng, int steps, int reach) {
  std::uniform_int_distribution<int64_t> act(1, 64), scratch(0, 300);
  std::uniform_int_distribution<int> skip(0, 3), extra(1, std::max(1, reach));
  std::vector<BufferLifetime> v;
  for (int s = 0; s < steps; ++s) {
    int last = std::min(steps - 1, s + 1 + (skip(rng) == 0 ? extra(rng) : 0));
    v.push_back({act(rng) * 128, s, last});
    if (int64_t k = scratch(rng); k > 150)
      v.push_back({k, s, s});
  }
  return v;
}

TEST(MemoryPlan, RandomGraphsAreValidAndNeverWorseThanGreedy) {
  std::mt19937 rng(99);
  int improved = 0, reached = 0, missed = 0;
  for (int iter = 0; iter < 400; ++iter) {
    int64_t align = int64_t(1) << (iter % 5);
    auto bufs = iter % 2 ? randomGraph(rng, 2 + iter % 50, 1 + iter % 7)
                         : randomBuffers(rng, 1 + iter % 60, 1 + iter % 30);
    ArenaPlan plan = planArena(bufs, align);
    expectValid(bufs, plan, align);
    int64_t greedy = planArenaInOrder(bufs, greedyBySizeOrder(bufs, align), align).size;
    int64_t peak = peakLiveBytes(bufs, align);
    EXPECT_GE(plan.size, peak);
    EXPECT_LE(plan.size, greedy);
    improved += plan.size < greedy;
    reached += plan.size == peak;
    missed += greedy > peak;
    ArenaPlan again = planArena(bufs, align);
    EXPECT_EQ(plan.offsets, again.offsets);
  }
  // The search must matter: with this seed it fixes 183 of the 191 instances
  // greedy by size leaves above the bound, and 359 of 400 reach it.
  EXPECT_GT(missed, 20);
  EXPECT_GT(improved * 10, missed * 9) << improved << " of " << missed << " improved";
  EXPECT_GT(reached, 350);
}

// Valid for many buffers with short lifetimes: per step, the live buffers
// sorted by offset must not overlap.
void expectValidByStep(const std::vector<BufferLifetime> &bufs, const ArenaPlan &plan) {
  std::vector<std::vector<size_t>> live;
  for (size_t i = 0; i < bufs.size(); ++i)
    for (int t = bufs[i].first; t <= bufs[i].last; ++t) {
      if (live.size() <= size_t(t))
        live.resize(size_t(t) + 1);
      if (bufs[i].size > 0)
        live[size_t(t)].push_back(i);
    }
  int bad = 0;
  for (auto &l : live) {
    std::sort(l.begin(), l.end(),
              [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; });
    for (size_t k = 0; k + 1 < l.size(); ++k)
      bad += plan.offsets[l[k]] + bufs[l[k]].size > plan.offsets[l[k + 1]];
    for (size_t i : l)
      bad += plan.offsets[i] + bufs[i].size > plan.size;
  }
  EXPECT_EQ(bad, 0);
}

TEST(MemoryPlan, RepeatedBlocksOfALongGraphAllReachTheBound) {
  // 2,000 copies of tinycnn_int8 one after the other (20,000 buffers): the
  // search's budget does not depend on the number of copies, so each copy
  // must be fixed in the same placement (two-sided placement does it; so
  // would promotion, which moves every buffer ending at the top at once).
  std::vector<BufferLifetime> bufs;
  for (int k = 0; k < 2000; ++k)
    for (BufferLifetime b : tinycnnInt8()) {
      b.first += 8 * k;
      b.last += 8 * k;
      bufs.push_back(b);
    }
  EXPECT_EQ(planArenaInOrder(bufs, greedyBySizeOrder(bufs, 16), 16).size, 14336);
  ArenaPlan plan = planArena(bufs, 16);
  expectValidByStep(bufs, plan);
  EXPECT_EQ(plan.size, 12576);
}

TEST(MemoryPlan, ContinuousChainReachesTheBound) {
  // 2,000 buffers in a chain whose sizes cycle like tinycnn_int8's, a small
  // scratch at every step: greedy by size leaves each 512-byte buffer above a
  // 2048 and a 1024 one; two-sided placement alternates bottom and top.
  const int64_t cycle[] = {768, 2048, 512, 1024, 2048};
  std::vector<BufferLifetime> bufs;
  for (int s = 0; s < 2000; ++s) {
    bufs.push_back({cycle[s % 5], s, s + 1});
    bufs.push_back({16, s, s});
  }
  EXPECT_EQ(planArenaInOrder(bufs, greedyBySizeOrder(bufs, 16), 16).size, 3584);
  EXPECT_EQ(peakLiveBytes(bufs, 16), 1024 + 2048 + 16);
  ArenaPlan plan = planArena(bufs, 16);
  expectValidByStep(bufs, plan);
  EXPECT_EQ(plan.size, 1024 + 2048 + 16);
}

TEST(MemoryPlan, TheBoundIsNotAlwaysReachable) {
  // Peak 6 at steps 0, 1, 3 and 4, yet no plan fits in 6: at step 0 f goes
  // to one end (say [0,2), the other case is the mirror image); step 1 is
  // then full with d and e in [2,6) in one of two ways, step 3 must be full
  // with c, d and g, and step 4 puts g at 0 or 4. d at [2,5) leaves c at 5,
  // where e is at step 2; d at [3,6) leaves c at 2, where e is. First fit in
  // the order of any plan's offsets gives offsets no higher, so the best of
  // all 5040 orders is the optimum: 7, which planArena finds.
  std::vector<BufferLifetime> bufs = {{4, 4, 4}, {4, 0, 0}, {1, 2, 3}, {3, 1, 3},
                                      {1, 1, 2}, {2, 0, 1}, {2, 3, 4}};
  EXPECT_EQ(peakLiveBytes(bufs, 1), 6);
  std::vector<size_t> order = {0, 1, 2, 3, 4, 5, 6};
  int64_t optimum = INT64_MAX;
  do
    optimum = std::min(optimum, planArenaInOrder(bufs, order, 1).size);
  while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(optimum, 7);
  ArenaPlan plan = planArena(bufs, 1);
  expectValid(bufs, plan, 1);
  EXPECT_EQ(plan.size, 7);
}

} // namespace
