//===- sweep_test.cpp - npucc sweep's axes, points and Pareto front -------===//
//
// driver/Sweep.h without running anything: the Pareto front on hand-made
// sets (dominated, equal and incomparable rows), per-model marking, named and
// generic axes with their errors, the point order and the JSON patch.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Sweep.h"

#include <gtest/gtest.h>

using namespace npucc;
using npucc::driver::paretoFront;

TEST(SweepPareto, KeepsExactlyTheNonDominated) {
  // (cycles, scratchpad, traffic)
  std::vector<std::vector<double>> o = {
      {100, 64, 10}, // front: fastest
      {200, 32, 10}, // front: smallest scratchpad
      {150, 64, 20}, // dominated by row 0
      {300, 32, 5},  // front: least traffic
      {300, 32, 6},  // dominated by row 3
      {100, 64, 10}, // equal to row 0: kept too
      {120, 48, 9},  // front: incomparable with every other
  };
  std::vector<bool> want = {true, true, false, true, false, true, true};
  EXPECT_EQ(paretoFront(o), want);
  EXPECT_EQ(paretoFront({}), std::vector<bool>{});
  EXPECT_EQ(paretoFront({{1, 2, 3}}), std::vector<bool>{true});
  // Better in one objective only and worse in none dominates.
  EXPECT_EQ(paretoFront({{5, 5, 5}, {5, 5, 4}}), (std::vector<bool>{false, true}));
}

TEST(SweepPareto, PerModelOverCompiledRowsOnly) {
  driver::SweepResult r;
  auto row = [](std::string model, std::string status, uint64_t c, uint64_t s, uint64_t d) {
    driver::SweepRow x;
    x.model = model;
    x.status = status;
    x.cycles = c;
    x.scratchpadBytes = s;
    x.dramBytes = d;
    return x;
  };
  r.rows = {row("a", "ok", 100, 10, 10),  row("a", "ok", 200, 20, 20),
            row("b", "ok", 300, 30, 30), // alone in its model: on the front
            row("a", "refused", 0, 0, 0), row("a", "failed", 0, 0, 0),
            row("a", "ok", 50, 10, 10)}; // fewer NPU cycles, but its CPU layers cost more
  r.rows[5].cpuCycles = 1000;
  driver::markPareto(r);
  EXPECT_TRUE(r.rows[0].pareto);
  EXPECT_FALSE(r.rows[1].pareto);
  EXPECT_TRUE(r.rows[2].pareto);
  EXPECT_FALSE(r.rows[3].pareto);
  EXPECT_FALSE(r.rows[4].pareto);
  EXPECT_FALSE(r.rows[5].pareto); // program cycles 1050 > 100: dominated by row 0
}

TEST(SweepAxes, NamedAxesMapToTheirPaths) {
  auto mac = driver::parseSweepAxis("mac=8x16,32");
  ASSERT_TRUE(mac) << mac.error().str();
  EXPECT_EQ(mac->paths,
            (std::vector<std::string>{"/compute/mac_array/rows", "/compute/mac_array/cols"}));
  EXPECT_EQ(mac->values[0], (std::vector<nlohmann::json>{8, 16}));
  EXPECT_EQ(mac->values[1], (std::vector<nlohmann::json>{32, 32}));
  auto spm = driver::parseSweepAxis("spm=64K,1M,4096");
  ASSERT_TRUE(spm);
  EXPECT_EQ(spm->values[0][0], 65536);
  EXPECT_EQ(spm->values[1][0], 1048576);
  EXPECT_EQ(spm->values[2][0], 4096);
  auto clk = driver::parseSweepAxis("clock=500M,1G");
  ASSERT_TRUE(clk);
  EXPECT_EQ(clk->values[0][0], 500000000);
  EXPECT_EQ(clk->values[1][0], 1000000000);
  auto conc = driver::parseSweepAxis("concurrent=on,off");
  ASSERT_TRUE(conc);
  EXPECT_EQ(conc->values[1][0], false);
  auto set = driver::parseSweepSet("/dma/setup_cycles=8,\"x\",abc");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->values[0][0], 8);
  EXPECT_EQ(set->values[1][0], "x");
  EXPECT_EQ(set->values[2][0], "abc");
  // Commas inside a JSON array, object or string do not separate values.
  auto arr = driver::parseSweepSet("/compute/operations/conv/kernel_sizes=[1,3],[1,3,5],\"a,b\"");
  ASSERT_TRUE(arr) << arr.error().str();
  ASSERT_EQ(arr->values.size(), 3u);
  EXPECT_EQ(arr->values[1][0], nlohmann::json({1, 3, 5}));
  EXPECT_EQ(arr->values[2][0], "a,b");
}

TEST(SweepAxes, ErrorsNameTheAxisAndValue) {
  auto msg = [](const Result<driver::SweepAxis> &r) { return r ? "" : r.error().str(); };
  EXPECT_NE(msg(driver::parseSweepAxis("warp=1,2")).find("unknown axis 'warp'"), std::string::npos);
  EXPECT_NE(msg(driver::parseSweepAxis("mac=8x")).find("value '8x'"), std::string::npos);
  EXPECT_NE(msg(driver::parseSweepAxis("spm=64Q")).find("value '64Q'"), std::string::npos);
  EXPECT_NE(msg(driver::parseSweepAxis("banks=1,,2")).find("empty value"), std::string::npos);
  EXPECT_NE(msg(driver::parseSweepAxis("banks=2,2")).find("'2' given twice"), std::string::npos);
  EXPECT_NE(msg(driver::parseSweepAxis("banks")).find("NAME=V1,V2"), std::string::npos);
  EXPECT_NE(msg(driver::parseSweepSet("dma/dims=1")).find("JSON pointer"), std::string::npos);
}

TEST(SweepPoints, FirstAxisSlowestAndPatchApplies) {
  auto a = driver::parseSweepAxis("banks=1,2");
  auto b = driver::parseSweepAxis("spm=1K,2K,4K");
  ASSERT_TRUE(a && b);
  std::vector<driver::SweepAxis> axes = {*a, *b};
  auto pts = driver::sweepPoints(axes);
  ASSERT_EQ(pts.size(), 6u);
  EXPECT_EQ(pts[1], (std::vector<size_t>{0, 1}));
  EXPECT_EQ(pts[3], (std::vector<size_t>{1, 0}));
  EXPECT_EQ(driver::sweepPoints({}).size(), 1u);
  nlohmann::json desc = {
      {"memories", {{"scratchpads", {{{"size", 1}, {"banks", 1}}, {{"size", 1}, {"banks", 1}}}}}}};
  ASSERT_TRUE(driver::applySweepPoint(desc, axes, pts[5]));
  for (const auto &s : desc["memories"]["scratchpads"]) { // "*": every scratchpad
    EXPECT_EQ(s["size"], 4096);
    EXPECT_EQ(s["banks"], 2);
  }
  auto dims = driver::parseSweepAxis("dma_dims=1");
  ASSERT_TRUE(dims);
  Status s = driver::applySweepPoint(desc, {*dims}, {0});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().str().find("has no /dma"), std::string::npos) << s.error().str();
}
