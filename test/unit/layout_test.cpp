//===- layout_test.cpp - npucc_layout.h and the "weights" key -------------===//
//
// Issue 19, phase 6. The offsets of runtime/include/npucc_layout.h against a
// naive definition: each layout's elements enumerated in storage order, one
// byte after the other (padding included), so the closed formulas are
// checked by counting, not by restating them. Then the "weights" key of a
// description: accepted forms, refusals with their JSON path, and the C
// table (emitted only where a layout is not the default, so other
// descriptions' tables stay byte-identical).
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"
#include "npucc_layout.h"

#include "TargetJsonEdit.h"
#include "TestTargets.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <tuple>

using namespace npucc;
using Json = nlohmann::json;

namespace {

using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>; // o, ky, kx, i

/// Storage order of each layout, counted: element -> its byte; padding
/// bytes are counted but not mapped. Returns the total bytes in `bytes`.
std::map<Key, uint64_t> naive(npucc_wlayout l, int64_t O, int64_t KH, int64_t KW, int64_t I,
                              uint64_t &bytes) {
  std::map<Key, uint64_t> m;
  uint64_t n = 0;
  auto put = [&](int64_t o, int64_t y, int64_t x, int64_t i) {
    if (o < O && i < I)
      m[Key{o, y, x, i}] = n;
    ++n;
  };
  switch (l.kind) {
  case NPUCC_WL_OHWI:
    for (int64_t o = 0; o < O; ++o)
      for (int64_t y = 0; y < KH; ++y)
        for (int64_t x = 0; x < KW; ++x)
          for (int64_t i = 0; i < I; ++i)
            put(o, y, x, i);
    break;
  case NPUCC_WL_OIHW:
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < I; ++i)
        for (int64_t y = 0; y < KH; ++y)
          for (int64_t x = 0; x < KW; ++x)
            put(o, y, x, i);
    break;
  case NPUCC_WL_HWIO:
    for (int64_t y = 0; y < KH; ++y)
      for (int64_t x = 0; x < KW; ++x)
        for (int64_t i = 0; i < I; ++i)
          for (int64_t o = 0; o < O; ++o)
            put(o, y, x, i);
    break;
  default: // blocked: whole blocks, the last one padded
    for (int64_t ob = 0; ob * l.bo < O; ++ob)
      for (int64_t y = 0; y < KH; ++y)
        for (int64_t x = 0; x < KW; ++x)
          for (int64_t ib = 0; ib * l.bi < I; ++ib)
            for (int64_t oi = 0; oi < l.bo; ++oi)
              for (int64_t ii = 0; ii < l.bi; ++ii)
                put(ob * l.bo + oi, y, x, ib * l.bi + ii);
  }
  bytes = n;
  return m;
}

void expectLayout(npucc_wlayout l, int64_t O, int64_t KH, int64_t KW, int64_t I) {
  uint64_t bytes = 0;
  std::map<Key, uint64_t> want = naive(l, O, KH, KW, I, bytes);
  EXPECT_EQ(npucc_wlayout_bytes(l, O, KH, KW, I), bytes)
      << "kind " << int(l.kind) << " O=" << O << " I=" << I;
  for (const auto &[k, off] : want) {
    auto [o, y, x, i] = k;
    ASSERT_EQ(npucc_wlayout_offset(l, O, KH, KW, I, o, y, x, i), off)
        << "kind " << int(l.kind) << " bo=" << l.bo << " bi=" << l.bi << " element (" << o << ", "
        << y << ", " << x << ", " << i << ") of " << O << "x" << KH << "x" << KW << "x" << I;
  }
}

Result<target::TargetDesc> withWeights(const Json &w, const char *op = "conv") {
  Json j = Json::parse(
      test::readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
  j["compute"]["operations"][op]["weights"] = w;
  return target::parseTargetJson(j.dump(2), "npu.json");
}

std::string errOf(const Json &w, const char *op = "conv") {
  auto r = withWeights(w, op);
  return r.ok() ? std::string() : r.error().str();
}

std::string tableOf(const target::TargetDesc &t) {
  for (const auto &f : target::emitTargetFiles(t))
    if (f.first.size() > 9 && f.first.substr(f.first.size() - 9) == "_target.c")
      return f.second;
  return "";
}

} // namespace

TEST(Layout, WeightOffsetsMatchTheStorageOrder) {
  const npucc_wlayout plain[] = {
      {NPUCC_WL_OHWI, 1, 1}, {NPUCC_WL_OIHW, 1, 1}, {NPUCC_WL_HWIO, 1, 1}};
  for (npucc_wlayout l : plain)
    for (auto [O, KH, KW, I] : {std::tuple{5, 3, 3, 7}, std::tuple{16, 1, 1, 3},
                                std::tuple{1, 2, 5, 1}, std::tuple{11, 1, 1, 37}})
      expectLayout(l, O, KH, KW, I);
  // Blocked: exact multiples, padded output and input channels, blocks of 1.
  for (auto [bo, bi] : {std::pair{16, 4}, std::pair{4, 8}, std::pair{1, 1}, std::pair{3, 1}})
    for (auto [O, KH, KW, I] : {std::tuple{16, 3, 3, 8}, std::tuple{5, 3, 3, 7},
                                std::tuple{33, 1, 1, 3}, std::tuple{1, 2, 5, 9}})
      expectLayout({NPUCC_WL_BLOCKED, uint16_t(bo), uint16_t(bi)}, O, KH, KW, I);
}

TEST(Layout, BlockedOfOneIsOhwi) {
  // A blocked layout of 1 x 1 is OHWI itself.
  for (int64_t o = 0; o < 4; ++o)
    for (int64_t i = 0; i < 5; ++i)
      EXPECT_EQ(npucc_wlayout_offset({NPUCC_WL_BLOCKED, 1, 1}, 4, 3, 2, 5, o, 2, 1, i),
                npucc_wlayout_offset({NPUCC_WL_OHWI, 1, 1}, 4, 3, 2, 5, o, 2, 1, i));
}

TEST(Layout, WeightsKeyIsReadAndRefusedWithItsPath) {
  auto r = withWeights("oihw");
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->operation("conv")->weightLayout, unsigned(NPUCC_WL_OIHW));
  r = withWeights("hwio", "matmul");
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->operation("matmul")->weightLayout, unsigned(NPUCC_WL_HWIO));
  r = withWeights({{"kind", "blocked"}, {"o", 16}, {"i", 4}});
  ASSERT_TRUE(r.ok()) << r.error().str();
  const target::OpLimits &l = *r->operation("conv");
  EXPECT_EQ(l.weightLayout, unsigned(NPUCC_WL_BLOCKED));
  EXPECT_EQ(l.weightBlockO, 16u);
  EXPECT_EQ(l.weightBlockI, 4u);
  r = withWeights("ohwi");
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->operation("conv")->weightLayout, unsigned(NPUCC_WL_OHWI));

  EXPECT_EQ(errOf("ihwo"), "npu.json: error: /compute/operations/conv/weights: unknown weight "
                           "layout 'ihwo' (expected ohwi, oihw, hwio or {\"kind\": \"blocked\", "
                           "\"o\": N, \"i\": M})");
  EXPECT_EQ(errOf({{"kind", "planar"}}),
            "npu.json: error: /compute/operations/conv/weights/kind: unknown weight layout kind "
            "'planar' (expected blocked; the others are strings: ohwi, oihw, hwio)");
  EXPECT_EQ(errOf({{"kind", "blocked"}, {"o", 0}, {"i", 4}}),
            "npu.json: error: /compute/operations/conv/weights/o: value 0 out of range 1..65535");
  EXPECT_EQ(errOf({{"kind", "blocked"}, {"o", 16}}),
            "npu.json: error: /compute/operations/conv/weights: missing required field 'i'");
  EXPECT_EQ(errOf({{"kind", "blocked"}, {"o", 16}, {"i", 4}, {"io", 2}}),
            "npu.json: error: /compute/operations/conv/weights/io: unknown field 'io' (did you "
            "mean 'i'?)");
  EXPECT_EQ(errOf("oihw", "depthwise"),
            "npu.json: error: /compute/operations/depthwise/weights: 'weights' does not apply to "
            "operation 'depthwise'");
}

TEST(Layout, TheCTableCarriesOnlyLayoutsOtherThanTheDefault) {
  auto d = target::loadTarget("npu-default");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(tableOf(*d).find("weight_"), std::string::npos);
  auto w = target::loadTarget(test::testTarget("npu-weights.json"));
  ASSERT_TRUE(w.ok()) << w.error().str();
  std::string c = tableOf(*w);
  EXPECT_NE(c.find("    .weight_layout = {[NPUCC_KIND_CONV] = 3, [NPUCC_KIND_MATMUL] = 2},\n"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("    .weight_block_o = {[NPUCC_KIND_CONV] = 16},\n"), std::string::npos);
  EXPECT_NE(c.find("    .weight_block_i = {[NPUCC_KIND_CONV] = 4},\n"), std::string::npos);
  // The in-memory table the simulator tests use says the same.
  target::CTable table(*w);
  EXPECT_EQ(table.get()->weight_layout[NPUCC_KIND_CONV], NPUCC_WL_BLOCKED);
  EXPECT_EQ(table.get()->weight_block_o[NPUCC_KIND_CONV], 16);
  EXPECT_EQ(table.get()->weight_block_i[NPUCC_KIND_CONV], 4);
  EXPECT_EQ(table.get()->weight_layout[NPUCC_KIND_MATMUL], NPUCC_WL_HWIO);
  EXPECT_EQ(table.get()->weight_layout[NPUCC_KIND_DEPTHWISE], NPUCC_WL_OHWI);
}
