//===- act_layout_test.cpp - Activation layouts and the "layout" key ------===//
//
// Issue 19, phase 6. The activation offsets of runtime/include/npucc_layout.h
// against a naive definition (each layout's bytes enumerated in storage
// order, padding counted), the "layout" key of a description (/compute and
// per operation: accepted forms, refusals with their JSON path), the C table
// (act_block only where a layout is blocked) and the scheduler's DMA for a
// blocked layer (one strided transfer per channel group, the pad
// zero-filled).
//
//===----------------------------------------------------------------------===//
#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"
#include "npucc_layout.h"

#include "NpuTestOps.h"
#include "TargetJsonEdit.h"
#include "TestTargets.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

using namespace npucc;
using Json = nlohmann::json;

namespace {

using Key = std::tuple<int64_t, int64_t, int64_t>; // y, x, c

/// Storage order counted: element -> its byte; pad bytes counted, not mapped.
std::map<Key, uint64_t> naive(npucc_alayout l, int64_t H, int64_t W, int64_t C, uint64_t &bytes) {
  std::map<Key, uint64_t> m;
  uint64_t n = 0;
  if (l.kind == NPUCC_AL_BLOCKED) {
    for (int64_t g = 0; g * l.block < C; ++g)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x)
          for (int64_t i = 0; i < l.block; ++i, ++n)
            if (g * l.block + i < C)
              m[Key{y, x, g * l.block + i}] = n;
  } else {
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x)
        for (int64_t c = 0; c < C; ++c, ++n)
          m[Key{y, x, c}] = n;
  }
  bytes = n;
  return m;
}

void expectLayout(npucc_alayout l, int64_t H, int64_t W, int64_t C) {
  uint64_t bytes = 0;
  std::map<Key, uint64_t> want = naive(l, H, W, C, bytes);
  EXPECT_EQ(npucc_alayout_bytes(l, H, W, C), bytes) << "block " << l.block << " C=" << C;
  for (const auto &[k, off] : want) {
    auto [y, x, c] = k;
    ASSERT_EQ(npucc_alayout_offset(l, H, W, C, y, x, c), off)
        << "kind " << int(l.kind) << " block " << l.block << " element (" << y << ", " << x
        << ", " << c << ") of " << H << "x" << W << "x" << C;
  }
}

Json defaultJson() {
  return Json::parse(
      test::readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
}

std::string errOf(const Json &j) {
  auto r = target::parseTargetJson(j.dump(2), "npu.json");
  return r.ok() ? std::string() : r.error().str();
}

const Json Blocked16 = {{"kind", "blocked"}, {"block", 16}};

} // namespace

TEST(ActLayout, OffsetsMatchTheStorageOrder) {
  for (auto [H, W, C] : {std::tuple{3, 4, 5}, std::tuple{1, 1, 1}, std::tuple{2, 3, 16},
                         std::tuple{2, 2, 33}, std::tuple{5, 1, 48}})
    for (uint16_t b : {1, 4, 16, 7}) {
      expectLayout({NPUCC_AL_NHWC, 1}, H, W, C);
      expectLayout({NPUCC_AL_BLOCKED, b}, H, W, C);
    }
}

TEST(ActLayout, OneBlockOfAllChannelsIsNhwc) {
  for (int64_t c = 0; c < 5; ++c)
    EXPECT_EQ(npucc_alayout_offset({NPUCC_AL_BLOCKED, 5}, 3, 2, 5, 2, 1, c),
              npucc_alayout_offset({NPUCC_AL_NHWC, 1}, 3, 2, 5, 2, 1, c));
}

TEST(ActLayout, KeyIsReadWithItsDefaultAndOverride) {
  Json j = defaultJson();
  j["compute"]["layout"] = Blocked16;
  j["compute"]["operations"]["pool"]["layout"] = "nhwc";
  j["compute"]["operations"]["depthwise"]["layout"] = {{"kind", "blocked"}, {"block", 8}};
  auto r = target::parseTargetJson(j.dump(2), "npu.json");
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->operation("conv")->actBlock, 16u);
  EXPECT_EQ(r->operation("depthwise")->actBlock, 8u);
  EXPECT_EQ(r->operation("pool")->actBlock, 1u);
  EXPECT_EQ(r->operation("matmul")->actBlock, 1u); // element sequences: never blocked
  EXPECT_EQ(r->operation("eltwise")->actBlock, 1u);
  auto d = target::loadTarget("npu-default");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->operation("conv")->actBlock, 1u);
}

TEST(ActLayout, KeyIsRefusedWithItsPath) {
  Json j = defaultJson();
  j["compute"]["layout"] = "nchw";
  EXPECT_EQ(errOf(j), "npu.json: error: /compute/layout: unknown activation layout 'nchw' "
                      "(expected nhwc or {\"kind\": \"blocked\", \"block\": N})");
  j = defaultJson();
  j["compute"]["operations"]["conv"]["layout"] = {{"kind", "tiled"}};
  EXPECT_EQ(errOf(j), "npu.json: error: /compute/operations/conv/layout/kind: unknown activation "
                      "layout kind 'tiled' (expected blocked; nhwc is a string)");
  j = defaultJson();
  j["compute"]["layout"] = {{"kind", "planar"}, {"row_pitches", {16, 32}}, {"line_bytes", 64}};
  EXPECT_EQ(errOf(j), "npu.json: error: /compute/layout/kind: the planar activation layout is "
                      "not supported yet (nhwc or blocked)");
  j = defaultJson();
  j["compute"]["layout"] = {{"kind", "blocked"}, {"block", 1}};
  EXPECT_EQ(errOf(j), "npu.json: error: /compute/layout/block: value 1 out of range 2..65535");
  j = defaultJson();
  j["compute"]["layout"] = {{"kind", "blocked"}, {"block", 16}, {"blk", 2}};
  EXPECT_NE(errOf(j).find("/compute/layout/blk: unknown field 'blk'"), std::string::npos)
      << errOf(j);
  j = defaultJson();
  j["compute"]["operations"]["matmul"]["layout"] = Blocked16;
  EXPECT_EQ(errOf(j), "npu.json: error: /compute/operations/matmul/layout: operation 'matmul' "
                      "reads its operands as element sequences; only conv, depthwise and pool "
                      "take an activation layout");
  j = defaultJson();
  j["compute"]["layout"] = Blocked16;
  j["dma"]["zero_fill"] = false;
  EXPECT_EQ(errOf(j), "npu.json: error: /compute/layout: a blocked layout pads channels to a "
                      "multiple of 16; the compiler writes the pad with the DMA's zero fill, "
                      "which /dma does not have (\"zero_fill\": true)");
}

TEST(ActLayout, TheCTableCarriesOnlyBlockedLayouts) {
  auto d = target::loadTarget("npu-default");
  ASSERT_TRUE(d.ok());
  target::CTable plain(*d);
  for (int k = 0; k < NPUCC_KIND_COUNT; ++k)
    EXPECT_EQ(plain.get()->act_block[k], 0);
  bool any = false;
  for (const auto &f : target::emitTargetFiles(*d))
    any |= f.second.find("act_block") != std::string::npos;
  EXPECT_FALSE(any);
  auto b = target::loadTarget(test::testTarget("npu-blocked.json"));
  ASSERT_TRUE(b.ok()) << b.error().str();
  std::string c;
  for (const auto &f : target::emitTargetFiles(*b))
    if (f.first.size() > 9 && f.first.substr(f.first.size() - 9) == "_target.c")
      c = f.second;
  EXPECT_NE(c.find("    .act_block = {[NPUCC_KIND_CONV] = 16, [NPUCC_KIND_DEPTHWISE] = 16, "
                   "[NPUCC_KIND_POOL] = 16},\n"),
            std::string::npos)
      << c;
  target::CTable table(*b);
  EXPECT_EQ(table.get()->act_block[NPUCC_KIND_CONV], 16);
  EXPECT_EQ(table.get()->act_block[NPUCC_KIND_MATMUL], 0);
}

TEST(ActLayout, TheDmaMakesTheBlockedLayout) {
  using namespace npucc::lower::npu;
  auto t = target::loadTarget(test::testTarget("npu-blocked.json"));
  ASSERT_TRUE(t.ok()) << t.error().str();
  // 20 input channels: groups of 16 and 4 (12 pad); 24 output channels.
  Layer l = makeLayer(test::sameConv(8, 8, 20, 24, 3));
  auto c = chooseTiling(l, *t);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->tiling.block == 24 || c->tiling.block % 16 == 0) << c->tiling.text();
  LayerIo io;
  io.in.region = io.in2.region = io.out.region = lir::Region::Arena;
  io.blob.region = lir::Region::Const;
  std::vector<lir::Instr> body;
  int tok = 0;
  ASSERT_TRUE(scheduleLayer(l, *t, c->tiling, c->spm, io, tok, "", body).ok());
  int groupsIn = 0, fills = 0, groupsOut = 0, computes = 0;
  for (const lir::Instr &in : body) {
    if (in.opcode != "npu")
      continue;
    auto ref = [&](const char *n) { return std::get<lir::BufferRef>(*paramArg(in, n)); };
    if (in.callee == "conv") {
      ++computes;
      int64_t inH = paramValue(in, "in_h"), oh = paramValue(in, "out_h");
      EXPECT_EQ(ref("in_addr").size, inH * 8 * 32); // 20 channels padded to 32
      EXPECT_EQ(ref("out_addr").size,
                oh * 8 * ((paramValue(in, "out_ch") + 15) / 16 * 16));
      continue;
    }
    if (paramValue(in, "zero_fill")) {
      ++fills;
      EXPECT_EQ(paramValue(in, "length"), 12);
      EXPECT_EQ(paramValue(in, "dst_stride"), 16);
      continue;
    }
    if (ref("src_addr").region == lir::Region::Arena) { // input group
      ++groupsIn;
      EXPECT_EQ(paramValue(in, "src_stride"), 20);
      EXPECT_EQ(paramValue(in, "dst_stride"), 16);
      EXPECT_TRUE(paramValue(in, "length") == 16 || paramValue(in, "length") == 4);
    } else if (ref("dst_addr").region == lir::Region::Arena) { // output group
      ++groupsOut;
      EXPECT_EQ(paramValue(in, "src_stride"), 16);
      EXPECT_EQ(paramValue(in, "dst_stride"), 24);
      EXPECT_LE(paramValue(in, "length"), 16);
    }
  }
  EXPECT_GT(computes, 0);
  EXPECT_GE(groupsIn, 2);
  EXPECT_GE(fills, 1);
  EXPECT_GE(groupsOut, 2);
}
