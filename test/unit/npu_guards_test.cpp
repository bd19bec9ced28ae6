//===- npu_guards_test.cpp - The NPU lowering's own guards, at their edges -===//
//
// Two survivors of scripts/mutate.sh (docs/testing.md): the tiler's padding
// check of a tile (Tiling.cpp) and the scratchpad allocator's "a buffer that
// fits in a bank stays inside one bank" rule (SpmAlloc.cpp). Legality refuses
// a layer whose padding exceeds max_padding first, so no model reaches the
// tiler's check; it is tested here directly, one row past the limit.
//
//===----------------------------------------------------------------------===//
#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/target/Target.h"

#include "npucc_desc.h"

#include "NpuTestOps.h"
#include "TestTargets.h"

#include <gtest/gtest.h>

using namespace npucc;
using namespace npucc::lower::npu;

namespace {

target::TargetDesc load(const std::string &name) {
  auto r = target::loadTarget(name);
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().str());
  return r.ok() ? r.take() : target::TargetDesc{};
}

TEST(NpuGuards, TileBottomPaddingOneRowPastTheLimitIsRefused) {
  target::TargetDesc t = load("npu-small");
  const unsigned maxBottom = t.operation("conv")->maxPad[1];
  ASSERT_GE(maxBottom, 1u);
  // 3x3 conv on 8x8, top pad 1, bottom pad maxBottom (legal) or maxBottom + 1.
  for (unsigned extra : {0u, 1u}) {
    // npu-small requantizes per channel only (what legality would give).
    target::NpuOp op = test::sameConv(8, 8, 16, 16, 3, /*perChannel=*/true);
    op.padTop = 1;
    op.padBottom = int64_t(maxBottom + extra);
    op.outH = op.inH + op.padTop + op.padBottom - op.kh + 1;
    op.macs = uint64_t(op.outH * op.outW * op.outC * 9 * op.inC);
    auto c = chooseTiling(makeLayer(op), t);
    if (extra == 0) {
      EXPECT_TRUE(c.ok()) << (c ? "" : c.error().str());
    } else {
      ASSERT_FALSE(c.ok()) << "bottom padding " << op.padBottom << " > max " << maxBottom
                           << " accepted with tiling " << c->tiling.text();
      EXPECT_NE(c.error().str().find("padding of a tile"), std::string::npos) << c.error().str();
    }
  }
}

TEST(NpuGuards, BufferThatFitsABankDoesNotStraddleTwo) {
  // npu-fourth: 128 KiB in 2 banks with separate_banks, so banks are real here.
  target::TargetDesc t = load(test::testTarget("npu-fourth.json"));
  const target::Scratchpad &s = t.scratchpads[0];
  ASSERT_FALSE(s.separateBanks.empty());
  ASSERT_GE(s.banks, 2u);
  const uint64_t bs = s.bankSize;
  std::vector<SpmRequest> reqs(2);
  reqs[0].what = "first";
  reqs[0].size = bs * 5 / 8;
  reqs[0].roles = 1u << NPUCC_OPND_OUT;
  reqs[1].what = "second"; // fits in a bank, not in what the first left of bank 0
  reqs[1].size = bs / 2;
  reqs[1].roles = 1u << NPUCC_OPND_OUT;
  auto p = allocateSpm(t, reqs);
  ASSERT_TRUE(p.ok()) << (p ? "" : p.error().str());
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].offset, 0u);
  EXPECT_EQ((*p)[1].offset, bs) << "the second buffer must start bank 1";
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ((*p)[i].offset / bs, ((*p)[i].offset + reqs[i].size - 1) / bs)
        << reqs[i].what << " straddles a bank border";
}

} // namespace
