//===- kernels_rq32_test.cpp - 32-bit requantization vs npucc_requant_i8_r -===//
//
// npucc_rq32_prep / npucc_rq32_i8 (runtime/include/npucc_requant.h, used by the
// fast CPU kernels) must give npucc_requant_i8_r's int8 bit for bit in both
// rounding modes: exhaustively over small accumulators and every shift, and
// over random multipliers, shifts, zero points, clamps and accumulators of
// every magnitude (fixed seed), with the int32 extremes and float32-tie cases.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

extern "C" {
#include "../../runtime/include/npucc_requant.h"
}

namespace {

struct Clamp {
  int32_t zp, lo, hi;
};

/// Counts disagreements of the two formulations over accumulators `accs`.
template <typename Accs>
int64_t mismatches(int32_t mult, int32_t shift, int32_t mode, Clamp c, const Accs &accs) {
  int32_t rq[NPUCC_RQ32_WORDS];
  npucc_rq32_prep(mult, shift, mode, rq);
  int64_t bad = 0;
  for (int32_t acc : accs) {
    int8_t want = npucc_requant_i8_r(acc, mult, shift, c.zp, c.lo, c.hi, mode);
    int8_t got = npucc_rq32_i8(acc, rq, mode, c.zp, c.lo, c.hi);
    if (want != got) {
      if (bad == 0)
        ADD_FAILURE() << "mode " << mode << " mult " << mult << " shift " << shift << " acc "
                      << acc << " zp " << c.zp << ": want " << int(want) << ", got " << int(got);
      ++bad;
    }
  }
  return bad;
}

std::vector<int32_t> smallRange(int32_t r) {
  std::vector<int32_t> v;
  for (int32_t a = -r; a <= r; ++a)
    v.push_back(a);
  return v;
}

TEST(Rq32, ExhaustiveSmallAccumulatorsEveryShift) {
  std::vector<int32_t> accs = smallRange(1 << 13);
  accs.push_back(INT32_MIN);
  accs.push_back(INT32_MAX);
  for (int32_t mode : {NPUCC_RQ_EXACT, NPUCC_RQ_FP32})
    for (int32_t shift = -33; shift <= 33; ++shift)
      for (int32_t mult : {1 << 30, (1 << 30) + (1 << 7), 0x5A827980, 0x7FFFFF80, 0}) {
        int32_t m = mode == NPUCC_RQ_FP32 ? mult & ~127 : mult;
        EXPECT_EQ(mismatches(m, shift, mode, {0, -128, 127}, accs), 0);
        EXPECT_EQ(mismatches(m, shift, mode, {-128, -128, 127}, accs), 0);
        EXPECT_EQ(mismatches(m, shift, mode, {127, -20, 90}, accs), 0);
      }
}

TEST(Rq32, RandomMultipliersAndAccumulators) {
  std::mt19937 rng(20251125);
  std::uniform_int_distribution<uint32_t> u32;
  int64_t checked = 0;
  for (int32_t mode : {NPUCC_RQ_EXACT, NPUCC_RQ_FP32}) {
    for (int t = 0; t < 4000; ++t) {
      int32_t mult = int32_t((1u << 30) + (u32(rng) & ((1u << 30) - 1)));
      if (t % 7 == 0)
        mult = int32_t(u32(rng) & 0x7FFFFFFF); // unnormalized
      if (mode == NPUCC_RQ_FP32)
        mult &= ~127; // a float32 multiplier
      int32_t shift = int32_t(u32(rng) % 70) - 35;
      Clamp c{int32_t(u32(rng) % 256) - 128, -128, 127};
      if (t % 3 == 0) {
        c.lo = int32_t(u32(rng) % 128) - 128;
        c.hi = c.lo + int32_t(u32(rng) % 128);
      }
      std::vector<int32_t> accs;
      for (int k = 0; k < 2000; ++k) {
        int32_t a = int32_t(u32(rng));
        accs.push_back(k < 1000 ? a >> (u32(rng) % 32) : a); // every magnitude
      }
      // Accumulators on and next to rounding ties of acc * M.
      for (int k = 0; k < 200; ++k) {
        int32_t e = 31 + (shift > 31 ? 31 : (shift < 0 ? 0 : shift));
        int64_t q = int64_t(u32(rng) % 600) - 300;
        if (mult != 0 && e < 62) {
          double tie = (double(q) + 0.5) * std::ldexp(1.0, e) / double(mult);
          for (int64_t d = -1; d <= 1; ++d)
            if (std::fabs(tie) < 2.0e9)
              accs.push_back(int32_t(int64_t(tie) + d));
        }
      }
      accs.push_back(INT32_MIN);
      accs.push_back(INT32_MAX);
      accs.push_back((1 << 24) - 1);
      accs.push_back(1 << 24);
      accs.push_back(-(1 << 24));
      checked += int64_t(accs.size());
      ASSERT_EQ(mismatches(mult, shift, mode, c, accs), 0);
    }
  }
  EXPECT_GT(checked, 16000000);
}

TEST(Rq32, PrepChoosesTheFastPathForTypicalMultipliers) {
  int32_t rq[NPUCC_RQ32_WORDS];
  // M ~ 0.003: exact and fp32 both take the 32-bit path.
  npucc_rq32_prep(0x6B5F2E80, 8, NPUCC_RQ_EXACT, rq);
  EXPECT_EQ(rq[1], 7);
  npucc_rq32_prep(0x6B5F2E80, 8, NPUCC_RQ_FP32, rq);
  EXPECT_EQ(rq[1], 32);
  EXPECT_EQ(rq[0], 0x6B5F2E80 >> 7);
  // M >= 0.5 (exact) and a non-float32 multiplier (fp32) use the generic path.
  npucc_rq32_prep(0x6B5F2E80, 0, NPUCC_RQ_EXACT, rq);
  EXPECT_EQ(rq[1], -1);
  npucc_rq32_prep(0x6B5F2E81, 8, NPUCC_RQ_FP32, rq);
  EXPECT_EQ(rq[1], -1);
  // Of the generic words, EXACT multipliers in [0.5, 2^30) with a normalized mult take the
  // 32-bit left path (npucc_rq32_exact_left); larger ones, unnormalized mults and fp32 do not.
  for (int32_t shift : {0, -1, -30}) {
    npucc_rq32_prep(0x6B5F2E80, shift, NPUCC_RQ_EXACT, rq);
    EXPECT_TRUE(npucc_rq32_is_left(rq, NPUCC_RQ_EXACT)) << shift;
  }
  npucc_rq32_prep(0x6B5F2E80, -31, NPUCC_RQ_EXACT, rq);
  EXPECT_FALSE(npucc_rq32_is_left(rq, NPUCC_RQ_EXACT));
  npucc_rq32_prep(0x3FFFFFFF, 0, NPUCC_RQ_EXACT, rq);
  EXPECT_FALSE(npucc_rq32_is_left(rq, NPUCC_RQ_EXACT));
  npucc_rq32_prep(0x6B5F2E81, 0, NPUCC_RQ_FP32, rq);
  EXPECT_FALSE(npucc_rq32_is_left(rq, NPUCC_RQ_FP32));
}

} // namespace
