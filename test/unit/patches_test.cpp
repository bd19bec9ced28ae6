//===- patches_test.cpp - Row stripes of the leading CPU layers ------------===//
//
// lower::patch (include/npucc/lower/Patches.h): the input rows of a stripe
// against the naive definition (every tap of every output row reads a real
// row of the stripe exactly when it reads one of the whole tensor, and the
// stripe's pads give back its number of output rows), a plan computing every
// row of every layer once (the halo rows kept for the next stripe, not
// recomputed), and, on the shared MLPerf Tiny VWW
// model, the planner's arena shrinking under the budget with the choice
// visible in the loop IR and the report's CPU estimate charging each stripe's
// call its part of the layer. Bit-exactness of the generated C is the ctest
// `patches` (test/e2e/patches_test.sh).
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Driver.h"
#include "npucc/driver/Report.h"
#include "npucc/lir/Program.h"
#include "npucc/lower/Patches.h"

#include "CiSkip.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace npucc;
using lower::patch::inputRows;
using lower::patch::RowSpan;
using lower::patch::RowWindow;

TEST(PatchRows, MatchTheNaiveDefinition) {
  int checked = 0;
  for (int64_t K = 1; K <= 5; ++K)
    for (int64_t S = 1; S <= 3; ++S)
      for (int64_t D = 1; D <= 3; ++D)
        for (int64_t PT = 0; PT <= 3; ++PT)
          for (int64_t PB = 0; PB <= 3; ++PB)
            for (int64_t H = 1; H <= 11; ++H) {
              int64_t span = (K - 1) * D + 1;
              if (H + PT + PB < span)
                continue;
              int64_t OH = (H + PT + PB - span) / S + 1;
              RowWindow w{K, S, D, PT, H, OH};
              for (int64_t o0 = 0; o0 < OH; ++o0)
                for (int64_t o1 = o0 + 1; o1 <= OH; ++o1) {
                  RowSpan r = inputRows(w, o0, o1);
                  bool anyReal = false;
                  for (int64_t o = o0; o < o1; ++o)
                    for (int64_t k = 0; k < K; ++k) {
                      int64_t row = o * S - PT + k * D; // in the whole tensor
                      bool real = row >= 0 && row < H;
                      anyReal = anyReal || real;
                      // In the stripe: its rows [begin, end) with padTop above them.
                      int64_t local = (o - o0) * S - r.padTop + k * D;
                      bool realHere = local >= 0 && local < r.end - r.begin;
                      ASSERT_EQ(real, realHere)
                          << "K" << K << " S" << S << " D" << D << " PT" << PT << " H" << H
                          << " rows " << o0 << ".." << o1 << " o" << o << " k" << k;
                      if (real) {
                        ASSERT_EQ(r.begin + local, row);
                      }
                    }
                  if (r.end == r.begin) { // no row at all: only padding is read
                    EXPECT_FALSE(anyReal);
                    continue;
                  }
                  ASSERT_GE(r.begin, 0);
                  ASSERT_LE(r.end, H);
                  ASSERT_GE(r.padTop, 0);
                  ASSERT_GE(r.padBottom, 0);
                  // The kernel's output size formula on the stripe gives its rows.
                  EXPECT_EQ((r.end - r.begin + r.padTop + r.padBottom - span) / S + 1, o1 - o0);
                  // Pads only where the whole layer has them.
                  if (r.begin > 0) {
                    EXPECT_EQ(r.padTop, 0);
                  }
                  if (r.end < H) {
                    EXPECT_EQ(r.padBottom, 0);
                  }
                  ++checked;
                }
            }
  EXPECT_GT(checked, 10000);
}

TEST(PatchRows, ExamplesByHand) {
  // 3x3, stride 2, pad 1 over 96 rows (48 out): rows 0..11 read -1..22.
  RowSpan a = inputRows(RowWindow{3, 2, 1, 1, 96, 48}, 0, 12);
  EXPECT_EQ(a.begin, 0);
  EXPECT_EQ(a.end, 24);
  EXPECT_EQ(a.padTop, 1);
  EXPECT_EQ(a.padBottom, 0);
  // The last stripe, rows 36..47, read 71..95 and one pad row below.
  RowSpan b = inputRows(RowWindow{3, 2, 1, 1, 96, 48}, 36, 48);
  EXPECT_EQ(b.begin, 71);
  EXPECT_EQ(b.end, 96);
  EXPECT_EQ(b.padTop, 0);
  EXPECT_EQ(b.padBottom, 0); // pad bottom of the layer is 0 here: (96+1-3)/2+1 = 48
}

namespace {

std::filesystem::path sharedModel(const std::string &name) {
  return std::filesystem::path(NPUCC_SOURCE_DIR) / ".." / "shared" / "models" / name / "model.onnx";
}

} // namespace

TEST(Patches, EveryRowIsComputedOnceAndHalosAreKept) {
  // A 3x3 stride-2 convolution (20 -> 10 rows), then a 3x3 depthwise (10 -> 10).
  lower::patch::Layer conv;
  conv.win = RowWindow{3, 2, 1, 1, 20, 10};
  conv.C = 3;
  conv.W = 20;
  conv.M = 4;
  conv.OW = 10;
  lower::patch::Layer dw = conv;
  dw.win = RowWindow{3, 1, 1, 1, 10, 10};
  dw.C = dw.M = 4;
  dw.W = dw.OW = 10;
  lower::patch::PatchPlan p;
  ASSERT_TRUE(lower::patch::makePlan({conv, dw}, 2, 3, p));
  ASSERT_EQ(p.stripes.size(), 4u); // 3 + 3 + 3 + 1 rows
  int64_t next[2] = {0, 0};
  for (size_t si = 0; si < p.stripes.size(); ++si) {
    const auto &s = p.stripes[si];
    for (int i = 0; i < 2; ++i) { // each layer's rows, in order, once
      EXPECT_EQ(s.out[size_t(i)].first, next[i]) << "stripe " << si << " layer " << i;
      next[i] = std::max(next[i], s.out[size_t(i)].second);
    }
    // The depthwise input: the kept halo rows, then exactly the rows the convolution
    // just computed.
    EXPECT_EQ(s.in[1].begin + s.kept[1], s.out[0].first);
    EXPECT_EQ(s.in[1].end, s.out[0].second);
    if (si > 0) {
      EXPECT_EQ(p.stripes[si - 1].save[1], s.kept[1]);
    } else {
      EXPECT_EQ(s.kept[1], 0);
    }
  }
  EXPECT_EQ(next[0], 10);
  EXPECT_EQ(next[1], 10);
  // Stripe 2 (output rows 3..5) reads depthwise input rows 2..6: rows 2 and 3 kept.
  EXPECT_EQ(p.stripes[1].kept[1], 2);
  EXPECT_EQ(p.stripes[1].out[0], std::make_pair(int64_t(4), int64_t(7)));
  // The last stripe needs no new convolution row: the halo holds them.
  EXPECT_EQ(p.stripes[3].out[0].first, p.stripes[3].out[0].second);
}

TEST(Patches, VwwArenaShrinksWithinTheBudget) {
  std::filesystem::path model = sharedModel("mlpt_vww_qdq");
  if (!std::filesystem::exists(model))
    NPUCC_SKIP() << model << " not present";
  driver::CompileOptions o;
  o.modelPath = model.string();
  o.target = "cpu";
  auto whole = driver::compileModel(o);
  ASSERT_TRUE(whole.ok()) << whole.error().str();
  o.patches = "auto";
  auto patched = driver::compileModel(o);
  ASSERT_TRUE(patched.ok()) << patched.error().str();
  int64_t a = whole->program.arenaSize, b = patched->program.arenaSize;
  EXPECT_LT(b, a);
  std::string lir = lir::printProgram(patched->program);
  EXPECT_NE(lir.find("patch 1/"), std::string::npos);
  size_t at = lir.find("; patches: ");
  ASSERT_NE(at, std::string::npos);
  // The estimate stays within the budget the lowering was given (10%).
  size_t pct = lir.find("% of the model's", at);
  ASSERT_NE(pct, std::string::npos);
  size_t plus = lir.rfind('+', pct);
  EXPECT_LE(std::stod(lir.substr(plus + 1, pct - plus - 1)), 10.0);
  EXPECT_LT(whole->program.body.size(), patched->program.body.size());
  // The report gives each stripe's call its part of the layer's work: every row is
  // computed once, so the CPU estimate grows by the copies only (not by the stripes).
  driver::CompileReport ra = driver::buildReport(*whole), rb = driver::buildReport(*patched);
  uint64_t ca = ra.cpuCycles[int(lower::CpuCore::CortexM4)];
  uint64_t cb = rb.cpuCycles[int(lower::CpuCore::CortexM4)];
  EXPECT_GT(cb, ca);
  EXPECT_LT(double(cb), 1.10 * double(ca)) << ca << " layer by layer, " << cb << " in stripes";
  // Without --patches, nothing changes.
  EXPECT_EQ(lir::printProgram(whole->program).find("patch 1/"), std::string::npos);
}
