//===- npu_prefetch_bounds_test.cpp - npu-prefetch stays linear ------------===//
//
// A description whose DMA moves one byte per command (max_length 1,
// max_rows 1) turns every layer into thousands of loads and stores. The
// npu-prefetch pass used to consider every leading load at every position
// above its layer and time a window of two layers for each: cubic in the
// layer's size (tinycnn_int8 did not compile in 10 minutes, mlpt_kws_qdq not
// in 5). The pass now counts the instructions it times
// ("npu-prefetch.estimated-instructions"); this test schedules the same
// three layers at two sizes and requires that count per instruction of the
// program to stay below the pass's bound and not to grow with the program,
// and the program to stay correct (waits and scratchpad buffers verified).
//
//===----------------------------------------------------------------------===//
#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/lower/LirPass.h"
#include "npucc/target/Target.h"

#include "NpuTestOps.h"
#include "TargetJsonEdit.h"

#include <gtest/gtest.h>

using namespace npucc;
using namespace npucc::lower::npu;

namespace {

target::TargetDesc byteDma() {
  auto j = nlohmann::json::parse(
      test::readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
  j["dma"]["max_length"] = 1;
  j["dma"]["max_rows"] = 1;
  auto r = target::parseTargetJson(j.dump(), "bytes.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : target::TargetDesc{};
}

struct Counted {
  size_t instructions = 0;
  int64_t estimated = 0;
};

/// Three 1x1 convolutions h x 4 x 8 -> h x 4 x 8 in a row, one tile each,
/// through the loop-IR passes of a compile.
Counted prefetchThreeLayers(const target::TargetDesc &t, int64_t h) {
  lir::Program p;
  p.target = t.name;
  for (const target::Scratchpad &s : t.scratchpads)
    p.scratchpads.push_back({s.name, s.base, s.size});
  int token = 0;
  for (int layer = 0; layer < 3; ++layer) {
    Layer l = makeLayer(test::sameConv(h, 4, 8, 8, 1));
    Tiling tl{l.OH, l.OC, false, true};
    auto spm = allocateSpm(t, tilingBuffers(l, t, tl).requests, l.op.kind);
    EXPECT_TRUE(spm.ok());
    if (!spm.ok())
      return {};
    std::vector<SpmPlace> places = spm.take();
    if (layer % 2)
      if (auto m = mirrorSpm(t, tilingBuffers(l, t, tl).requests, places, l.op.kind))
        places = *m;
    LayerIo io;
    auto region = [](lir::Region r, int64_t off) {
      lir::BufferRef b;
      b.region = r;
      b.offset = off;
      b.dtype = ir::DType::I8;
      return b;
    };
    io.in = region(lir::Region::Arena, layer % 2 ? 4096 : 0);
    io.out = region(lir::Region::Arena, layer % 2 ? 0 : 4096);
    io.blob = region(lir::Region::Const, 0);
    io.recordsOffset = uint64_t(layer) * 1024;
    Status s = scheduleLayer(l, t, tl, places, io, token, "layer" + std::to_string(layer), p.body);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().str());
  }
  lower::LirPassContext ctx;
  ctx.target = &t;
  Status s = lower::runLirPipeline(p, "npu-prefetch,npu-waits,verify-waits,verify-spm", ctx);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().str());
  return {p.body.size(), ctx.stats["npu-prefetch.estimated-instructions"]};
}

TEST(NpuPrefetchBounds, WorkGrowsLinearlyWithOneByteTransfers) {
  target::TargetDesc t = byteDma();
  ASSERT_EQ(t.dma.maxLength, 1u);
  Counted small = prefetchThreeLayers(t, 1), large = prefetchThreeLayers(t, 3);
  ASSERT_GT(small.instructions, 500u);
  ASSERT_GT(10 * large.instructions, 15 * small.instructions);
  EXPECT_GT(small.estimated, 0) << "the pass times nothing: the test would prove nothing";
  // Each instruction lies in the windows of at most two layers' loads, each
  // layer times at most 16 loads at 65 positions (Prefetch.cpp's bounds):
  // the work per instruction of the program is bounded whatever its size.
  double perSmall = double(small.estimated) / double(small.instructions);
  double perLarge = double(large.estimated) / double(large.instructions);
  std::string figures = std::to_string(small.estimated) + " instructions timed for " +
                        std::to_string(small.instructions) + ", " +
                        std::to_string(large.estimated) + " for " +
                        std::to_string(large.instructions);
  EXPECT_LE(perSmall, 2 * 16 * 65) << figures;
  EXPECT_LE(perLarge, 2 * 16 * 65) << figures;
}

} // namespace
