//===- msa_test.cpp - The mul_shift_add requantization stage and its fit --===//
//
// Issue 19, phase 7c: floor(acc * mul / 2^shift) + add (npucc_stage_rq_msa,
// runtime/include/npucc_stages.h) against a 128-bit reference; the
// compiler's fit (quant::fitMulShiftAdd) against the exact rounding over
// every accumulator whose output is in the int8 range; the loader's
// widths and refusals with their JSON paths.
//
//===----------------------------------------------------------------------===//
#include "RequantReference.h"

#include "../../runtime/include/npucc_stages.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/quant/MulShiftAdd.h"
#include "npucc/quant/Multiplier.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include <gtest/gtest.h>

#include "TargetJsonEdit.h"
#include "TestTargets.h"

#include <cmath>
#include <cstdio>
#include <random>

namespace {

using npucc::testref::I128;
using namespace npucc::quant;

/// floor(acc * mul / 2^shift) + add saturated to int32, in 128 bits.
int32_t refMsa(int32_t acc, int32_t mul, int32_t shift, int32_t add) {
  I128 p = I128(acc) * I128(mul);
  I128 d = I128(1) << shift;
  I128 q = p / d;
  if (p % d != 0 && p < 0)
    --q; // C division truncates toward zero: floor needs one less for negatives
  q += add;
  if (q > INT32_MAX)
    return INT32_MAX;
  if (q < INT32_MIN)
    return INT32_MIN;
  return int32_t(q);
}

TEST(StageMsa, AgainstReference) {
  std::mt19937 rng(19);
  const int32_t edges[] = {0, 1, -1, 2, -2, 3, -3, INT32_MAX, INT32_MIN, -12345};
  for (int i = 0; i < 300000; ++i) {
    int32_t acc = i < 10 ? edges[i] : int32_t(rng());
    if (i % 3 == 0)
      acc >>= rng() % 31;
    int32_t mul = int32_t(rng());
    if (i % 2)
      mul >>= rng() % 31;
    int32_t shift = int32_t(rng() % 64);
    int32_t add = i % 5 ? int32_t(rng() % 256) - 128 : int32_t(rng());
    ASSERT_EQ(npucc_stage_rq_msa(acc, mul, shift, add), refMsa(acc, mul, shift, add))
        << acc << " " << mul << " " << shift << " " << add;
  }
  // Floor, not truncation or rounding: -3 / 2 = -1.5 -> -2; -1 / 4 -> -1; 5 / 4 -> 1.
  EXPECT_EQ(npucc_stage_rq_msa(-3, 1, 1, 0), -2);
  EXPECT_EQ(npucc_stage_rq_msa(-1, 1, 2, 0), -1);
  EXPECT_EQ(npucc_stage_rq_msa(5, 1, 2, 0), 1);
  EXPECT_EQ(npucc_stage_rq_msa(7, 3, 0, -4), 17);
  EXPECT_EQ(npucc_stage_rq_msa(INT32_MIN, INT32_MIN, 0, 0), INT32_MAX); // saturates
  EXPECT_EQ(npucc_stage_rq_msa(INT32_MIN, 1, 63, 0), -1);
}

/// The exact rounding of acc * ratio plus zp, clamped to int8 (the CPU's).
int32_t exactI8(int32_t acc, float sx, float sw, float sy, int32_t zp) {
  QuantMultiplier m = productMultiplier(sx, sw, sy, Rounding::Exact);
  int64_t v = int64_t(applyMultiplier(acc, m, Rounding::Exact)) + zp;
  return int32_t(std::min<int64_t>(127, std::max<int64_t>(-128, v)));
}

TEST(MsaFit, WithinOneStepOfTheExactRoundingWhereTheBoundSaysSo) {
  std::mt19937 rng(7);
  const MsaWidths widths[] = {{24, 6, 32}, {24, 4, 32}, {16, 6, 16}, {8, 6, 8}};
  int fitted = 0;
  int64_t perWidth[4][2] = {}; // accumulators checked, one step off
  for (int t = 0; t < 400; ++t) {
    const MsaWidths &w = widths[t % 4];
    // Typical conv ratios: 2^-14 .. 2^1.
    float sx = std::ldexp(1.0f + float(rng() % 1000) / 1000.0f, -int(rng() % 6) - 4);
    float sw = std::ldexp(1.0f + float(rng() % 1000) / 1000.0f, -int(rng() % 6) - 4);
    float sy = std::ldexp(1.0f + float(rng() % 1000) / 1000.0f, -int(rng() % 6) - 2);
    int32_t zp = int32_t(rng() % 256) - 128;
    double ratio = msaRatio(sx, sw, sy);
    std::string why;
    auto p = fitMulShiftAdd(ratio, zp, w, &why);
    if (!p) {
      EXPECT_FALSE(why.empty());
      continue;
    }
    // The largest shift whose mul fits: one more would overflow mul (or the shift field).
    int64_t mulMax = (int64_t(1) << (w.mulBits - 1)) - 1;
    ASSERT_LE(p->mul, mulMax);
    ASSERT_GT(p->mul, 0);
    if (p->shift + 1 < (1 << w.shiftBits)) {
      EXPECT_GT(std::llround(std::ldexp(ratio, p->shift + 1)), mulMax) << ratio;
    }
    EXPECT_EQ(p->add, zp);
    if (p->worstSteps >= 1)
      continue;
    ++fitted;
    // Every accumulator whose exact output is within the int8 range, and some beyond.
    int64_t reach = int64_t(300.0 / ratio) + 2;
    int64_t step = std::max<int64_t>(1, reach / 20000);
    int worst = 0;
    for (int64_t acc = -reach; acc <= reach; acc += step) {
      int32_t npu = int32_t(std::min<int64_t>(127, std::max<int64_t>(-128, applyMsa(acc, *p))));
      int d = std::abs(npu - exactI8(int32_t(acc), sx, sw, sy, zp));
      worst = std::max(worst, d);
      perWidth[t % 4][0]++;
      perWidth[t % 4][1] += d != 0;
    }
    ASSERT_LE(worst, 1) << "ratio " << ratio << " mul " << p->mul << " shift " << p->shift
                        << " bound " << p->worstSteps;
  }
  // Floor plus an integer offset is off by one only next to the exact
  // rounding's half-way points: a small fraction of the accumulators where
  // mul is wide (measured: 0.09% for 24/6/32, 0.1% for 16/6/16; 3.5% for
  // the K210's 24/4/32 and 8.5% for 8/6/8, whose ratios are coarse).
  EXPECT_GT(fitted, 250);
  for (int k : {0, 2})
    EXPECT_LT(double(perWidth[k][1]), 0.005 * double(perWidth[k][0])) << k;
  for (auto &pw : perWidth)
    std::printf("mul_shift_add fits: one step off for %lld of %lld accumulators\n",
                (long long)pw[1], (long long)pw[0]);
}

TEST(MsaFit, Refusals) {
  std::string why;
  EXPECT_FALSE(fitMulShiftAdd(0.0, 0, MsaWidths{}, &why));
  EXPECT_EQ(why, "requantization ratio 0 is not positive and finite");
  EXPECT_FALSE(fitMulShiftAdd(std::ldexp(1.0, -20), 0, MsaWidths{24, 4, 32}, &why));
  EXPECT_EQ(why, "requantization ratio 9.53674316e-07 is below the smallest mul/2^shift (2^-15)");
  EXPECT_FALSE(fitMulShiftAdd(40000.0, 0, MsaWidths{16, 6, 16}, &why));
  EXPECT_EQ(why, "requantization ratio 40000 exceeds the largest mul (32767, 16 bits) at shift 0");
  EXPECT_FALSE(fitMulShiftAdd(0.01, 200, MsaWidths{24, 6, 8}, &why));
  EXPECT_EQ(why, "output zero point 200 does not fit add (8 bits)");
  // 3 * 2^-10 with a 4-bit shift: the largest shift 15, mul 96 exactly.
  auto p = fitMulShiftAdd(std::ldexp(1.0, -10) * 3, -5, MsaWidths{24, 4, 32}, &why);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->mul, 96); // 3 * 2^-10 = 96 / 2^15
  EXPECT_EQ(p->shift, 15);
  EXPECT_EQ(p->add, -5);
  EXPECT_EQ(p->biasAdd, 171); // round(2^14 / 96)
  EXPECT_LT(p->worstSteps, 1.0);
}

/// The error loading npu-default whose conv has "arithmetic": `a` ("" if it loads).
std::string convArithErr(const npucc::test::json &a) {
  npucc::test::json j = npucc::test::json::parse(
      npucc::test::readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
  j["compute"]["operations"]["conv"]["arithmetic"] = a;
  auto r = npucc::target::parseTargetJson(j.dump(2), "npu.json");
  return r ? std::string() : r.error().str();
}

TEST(MsaLoader, WidthsAndRefusals) {
  using npucc::test::json;
  EXPECT_EQ(convArithErr({{"requant", "mul_shift_add"}}), "");
  EXPECT_EQ(convArithErr({{"requant", {{"stage", "mul_shift_add"}, {"mul_bits", 33}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/requant/mul_bits: value 33 out "
            "of range 2..32");
  EXPECT_EQ(convArithErr({{"requant", {{"stage", "mul_shift_add"}, {"shift_bit", 4}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/requant/shift_bit: unknown "
            "field 'shift_bit' (did you mean 'shift_bits'?)");
  EXPECT_EQ(convArithErr({{"requant", {{"stage", "q31"}, {"mul_bits", 24}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/requant/mul_bits: unknown "
            "field 'mul_bits'");
  EXPECT_EQ(convArithErr({{"requant", {{"mul_bits", 24}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/requant: missing required "
            "field 'stage'");
  auto r = npucc::target::loadTarget(npucc::test::testTarget("npu-msa.json"));
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->operation("conv")->stage(NPUCC_SLOT_REQUANT), NPUCC_STAGE_RQ_MUL_SHIFT_ADD);
  EXPECT_EQ(r->operation("depthwise")->msaBits, (std::array<unsigned, 3>{24, 4, 32}));
  EXPECT_EQ(r->operation("matmul")->msaBits, (std::array<unsigned, 3>{16, 6, 16}));
  EXPECT_EQ(r->operation("conv")->msaBits, (std::array<unsigned, 3>{24, 6, 32}));
}

} // namespace

namespace {

using namespace npucc;

/// x -> a 3x3 depthwise conv of ratio sx * sw / sy -> y.
std::string depthwiseGraph(const char *sx, const char *sw, const char *sy) {
  return std::string("graph @main(%x: i8[1,2,16,16] q(") + sx +
         ", 0)) -> (%y) {\n"
         "  const @w: i8[2,1,3,3] q(" +
         sw +
         ", 0) = dense<[1, -3, 7, 2, 5, -8, 9, 1, 0, 4, 4, -2, 6, 1, -1, 3, 2, 7]>\n"
         "  %y = Conv(%x, @w) {group=2, kernel_shape=[3, 3], pads=[1, 1, 1, 1]} "
         ": i8[1,2,16,16] q(" +
         sy + ", 5) loc(\"dw\")\n  return %y\n}\n";
}

TEST(MsaLegality, PlacedWithTheDescriptionsWidthsOrRefusedNamingTheChannel) {
  auto t = target::loadTarget(test::testTarget("npu-msa.json"));
  ASSERT_TRUE(t.ok()) << t.error().str();
  // Ratio 0.05 * 0.02 / 0.1 = 0.01: fine with 24 bits and shifts to 15.
  auto g = ir::parseGraph(depthwiseGraph("0.05", "0.02", "0.1"), "dw.ir").take();
  target::Placement p = target::placeNode(*g->nodes()[0], *t);
  ASSERT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  EXPECT_TRUE(p.op->rqMsa);
  EXPECT_TRUE(p.op->perChannel);
  EXPECT_EQ(p.op->msa, (quant::MsaWidths{24, 4, 32}));
  // Ratio 0.01 * 0.002 / 0.08 = 2.5e-4: mul 8 at shift 15 is 2.4e-4, 4% off.
  auto h = ir::parseGraph(depthwiseGraph("0.01", "0.002", "0.08"), "dw.ir").take();
  target::Placement q = target::placeNode(*h->nodes()[0], *t);
  EXPECT_FALSE(q.onNpu());
  ASSERT_FALSE(q.reasons.empty());
  EXPECT_EQ(q.reasons.back(),
            "requantization ratio 0.000250000012 is 8/2^15, up to 5.98 steps from the exact "
            "rounding in channel 0 (the NPU's depthwise requantizes with mul_shift_add, mul 24 "
            "bits, shift 0..15)");
}

TEST(MsaInterpreter, ANodeWithTheAttributesComputesTheFittedStage) {
  // A depthwise conv (ratio 0.01) evaluated with a coarse form (mul 6 bits:
  // 20/2^11 = 0.00977), checked against the stage applied by hand.
  auto g = ir::parseGraph(depthwiseGraph("0.05", "0.02", "0.1"), "dw.ir").take();
  std::map<std::string, ir::Tensor> in;
  in.emplace("x", ir::Tensor(ir::DType::I8, {1, 2, 16, 16}));
  ir::Tensor &x = in.at("x");
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.setInt(i, (i * 37) % 256 - 128);
  auto exact = interp::runGraph(*g, in);
  ASSERT_TRUE(exact.ok()) << exact.error().str();
  quant::setMsaAttrs(*g->nodes()[0], quant::MsaWidths{6, 4, 32});
  EXPECT_TRUE(quant::msaAttrs(*g->nodes()[0]).has_value());
  auto npu = interp::runGraph(*g, in);
  ASSERT_TRUE(npu.ok()) << npu.error().str();
  auto p = quant::fitMulShiftAdd(quant::msaRatio(0.05f, 0.02f, 0.1f), 5, {6, 4, 32});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->mul, 20);
  EXPECT_EQ(p->shift, 11);
  const int w[2][9] = {{1, -3, 7, 2, 5, -8, 9, 1, 0}, {4, 4, -2, 6, 1, -1, 3, 2, 7}};
  int differ = 0;
  for (int c = 0; c < 2; ++c)
    for (int oy = 0; oy < 16; ++oy)
      for (int ox = 0; ox < 16; ++ox) {
        int64_t acc = 0;
        for (int k = 0; k < 9; ++k) {
          int iy = oy + k / 3 - 1, ix = ox + k % 3 - 1;
          if (iy >= 0 && iy < 16 && ix >= 0 && ix < 16)
            acc += x.getInt((c * 16 + iy) * 16 + ix) * w[c][k];
        }
        int64_t want = std::clamp<int64_t>(quant::applyMsa(acc, *p), -128, 127);
        int64_t i = (c * 16 + oy) * 16 + ox;
        ASSERT_EQ(npu->at("y").getInt(i), want) << i;
        differ += want != exact->at("y").getInt(i);
      }
  EXPECT_GT(differ, 50); // the coarse form shows against the exact rounding
}

} // namespace

namespace {

TEST(MsaInterpreter, WidthsThatCannotFitAreAnErrorNamingTheChannel) {
  // Ratio 2.5e-4 with a 2-bit mul and shifts to 1: mul rounds to 0.
  auto g = npucc::ir::parseGraph(depthwiseGraph("0.01", "0.002", "0.08"), "dw.ir").take();
  npucc::quant::setMsaAttrs(*g->nodes()[0], npucc::quant::MsaWidths{2, 1, 32});
  std::map<std::string, npucc::ir::Tensor> in;
  in.emplace("x", npucc::ir::Tensor(npucc::ir::DType::I8, {1, 2, 16, 16}));
  auto r = npucc::interp::runGraph(*g, in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().str().find("rq_stage mul_shift_add, channel 0: requantization ratio "
                                 "0.000250000012 is below the smallest mul/2^shift (2^-1)"),
            std::string::npos)
      << r.error().str();
}

} // namespace
