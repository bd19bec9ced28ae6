//===- stage_ops_test.cpp - The NPU's pipeline stages against a reference -===//
//
// runtime/include/npucc_stages.h holds the arithmetic of each stage of the
// NPU pipeline (NPUCC_STAGE_LIST, runtime/hal/npucc_params.h), shared by the
// simulator and the interpreter. Each stage is checked here against a naive
// model written from its documentation: 128-bit integers for the integer
// stages, the host's IEEE binary32 arithmetic for the float ones; the lut256
// table the compiler writes (quant::actLut256) against the CPU's kernels.
//
//===----------------------------------------------------------------------===//
#include "RequantReference.h"

#include "../../runtime/include/npucc_stages.h"
#include "npucc/quant/Multiplier.h"
#include "npucc/quant/Pwl.h"

extern "C" {
#include "../../runtime/kernels/npucc_lut_s8.h"
}

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>

namespace {

using npucc::testref::I128;

struct Row {
  int id;
  std::string name;
  int slot;
  bool def;
};

std::vector<Row> stageRows() {
  return {
#define ROW(id, name, slot, def) {NPUCC_STAGE_##id, name, slot, def != 0},
      NPUCC_STAGE_LIST(ROW)
#undef ROW
  };
}

TEST(StageOps, TableHasOneDefaultPerSlotAndUniqueNames) {
  std::vector<Row> rows = stageRows();
  ASSERT_EQ(int(rows.size()), NPUCC_STAGE_COUNT);
  for (int slot = 0; slot < NPUCC_SLOT_COUNT; ++slot) {
    int defaults = 0;
    std::set<std::string> names;
    for (const Row &r : rows)
      if (r.slot == slot) {
        defaults += r.def;
        EXPECT_TRUE(names.insert(r.name).second) << r.name << " twice in slot " << slot;
        if (r.def) {
          EXPECT_EQ(npucc_stage_default(slot), r.id);
        }
      }
    EXPECT_EQ(defaults, 1) << "slot " << slot;
  }
  for (const Row &r : rows) {
    EXPECT_EQ(npucc_stage_slot(r.id), r.slot) << r.name;
    EXPECT_GE(r.slot, 0);
    EXPECT_LT(r.slot, NPUCC_SLOT_COUNT);
  }
  EXPECT_EQ(npucc_stage_slot(NPUCC_STAGE_COUNT), -1);
  EXPECT_EQ(npucc_stage_default(NPUCC_SLOT_COUNT), -1);
}

TEST(StageOps, PipelineTableLookup) {
  for (int k = 0; k < NPUCC_KIND_COUNT; ++k)
    for (int s = 0; s < NPUCC_SLOT_COUNT; ++s)
      EXPECT_EQ(npucc_stage_of(nullptr, k, s), npucc_stage_default(s));
  std::vector<uint8_t> t(NPUCC_KIND_COUNT * NPUCC_SLOT_COUNT, 0);
  for (size_t i = 0; i < t.size(); ++i)
    t[i] = uint8_t(i % 251);
  EXPECT_EQ(npucc_stage_of(t.data(), NPUCC_KIND_MATMUL, NPUCC_SLOT_REQUANT),
            int(t[NPUCC_KIND_MATMUL * NPUCC_SLOT_COUNT + NPUCC_SLOT_REQUANT]));
}

TEST(StageOps, InputOutputInt8) {
  for (int b = 0; b < 256; ++b) {
    int32_t x = npucc_stage_in_int8(uint8_t(b));
    EXPECT_EQ(x, b < 128 ? b : b - 256);
    EXPECT_EQ(npucc_stage_out_int8(x), uint8_t(b));
  }
  EXPECT_EQ(npucc_stage_out_int8(1000), uint8_t(127));
  EXPECT_EQ(npucc_stage_out_int8(-1000), uint8_t(0x80));
}

TEST(StageOps, SubtractZpAndMac) {
  std::mt19937 rng(7);
  for (int x = -128; x <= 127; ++x)
    for (int zp : {-128, -1, 0, 5, 127})
      for (int w : {-128, -3, 0, 1, 127})
        EXPECT_EQ(npucc_stage_subtract_zp(x, zp, w), int64_t(int64_t(x) - zp) * w);
  // A long MAC chain, in 64 bits, against a 128-bit sum.
  int64_t acc = 0;
  I128 ref = 0;
  for (int i = 0; i < 100000; ++i) {
    int32_t t = int32_t(rng() % 65281) - 32640;
    acc = npucc_stage_mac(acc, t);
    ref += t;
    ASSERT_EQ(I128(acc), ref);
  }
}

TEST(StageOps, AccumulatorWidth) {
  for (unsigned bits : {8u, 24u, 32u, 36u, 48u}) {
    int64_t lim = int64_t(1) << (bits - 1);
    EXPECT_TRUE(npucc_stage_acc_fits(lim - 1, bits)) << bits;
    EXPECT_TRUE(npucc_stage_acc_fits(-lim, bits)) << bits;
    EXPECT_FALSE(npucc_stage_acc_fits(lim, bits)) << bits;
    EXPECT_FALSE(npucc_stage_acc_fits(-lim - 1, bits)) << bits;
  }
}

/// acc * mult / 2^(31 + shift), one rounding to nearest even, + zp, saturated.
int32_t refQ31(int32_t acc, int32_t mult, int32_t shift, int32_t zp) {
  using namespace npucc::testref;
  I128 x = acc;
  if (shift < 0) {
    x = sat32(x * pow2(-shift));
    shift = 0;
  }
  return sat32(I128(sat32(roundDiv2(x * mult, 31 + shift, Tie::Even))) + zp);
}

TEST(StageOps, RequantQ31) {
  std::mt19937 rng(11);
  const int32_t edges[] = {0, 1, -1, 2, -2, INT32_MAX, INT32_MIN, 1 << 20, -(1 << 20), 12345};
  for (int i = 0; i < 200000; ++i) {
    int32_t acc = i < 10 ? edges[i] : int32_t(rng());
    if (i % 3 == 0)
      acc >>= rng() % 31;
    int32_t mult = int32_t((1u << 30) + (rng() & ((1u << 30) - 1)));
    int32_t shift = int32_t(rng() % 63) - 31;
    int32_t zp = int32_t(rng() % 256) - 128;
    ASSERT_EQ(npucc_stage_rq_q31(acc, mult, shift, zp), refQ31(acc, mult, shift, zp))
        << acc << " " << mult << " " << shift << " " << zp;
  }
  // Ties go to even: 3 * 2^30 / 2^31 = 1.5 -> 2; 5 * 2^30 / 2^31 = 2.5 -> 2.
  EXPECT_EQ(npucc_stage_rq_q31(3, 1 << 30, 0, 0), 2);
  EXPECT_EQ(npucc_stage_rq_q31(5, 1 << 30, 0, 0), 2);
  EXPECT_EQ(npucc_stage_rq_q31(-5, 1 << 30, 0, 0), -2);
}

/// acc / 2^s, one rounding to nearest even, + zp, saturated.
int32_t refShift(int32_t acc, int32_t s, int32_t zp) {
  using namespace npucc::testref;
  return sat32(roundDiv2(I128(acc), s, Tie::Even) + zp);
}

TEST(StageOps, RequantShift) {
  std::mt19937 rng(13);
  const int32_t edges[] = {0, 1, -1, 2, -2, 3, -3, INT32_MAX, INT32_MIN, 12345};
  for (int i = 0; i < 200000; ++i) {
    int32_t acc = i < 10 ? edges[i] : int32_t(rng());
    if (i % 3 == 0)
      acc >>= rng() % 31;
    int32_t s = int32_t(rng() % 32);
    int32_t zp = int32_t(rng() % 256) - 128;
    ASSERT_EQ(npucc_stage_rq_shift(acc, s, zp), refShift(acc, s, zp)) << acc << " " << s;
    // The q31 stage with the multiplier 2^-s (mult 2^30, shift s - 1); for s = 0 q31
    // saturates acc * 2 first, so the two agree once clamped to int8.
    if (s > 0) {
      ASSERT_EQ(npucc_stage_rq_shift(acc, s, zp), npucc_stage_rq_q31(acc, 1 << 30, s - 1, zp))
          << acc << " " << s;
    }
    ASSERT_EQ(npucc_stage_act_clamp(npucc_stage_rq_shift(acc, s, zp), -128, 127),
              npucc_stage_act_clamp(npucc_stage_rq_q31(acc, 1 << 30, s - 1, zp), -128, 127))
        << acc << " " << s;
  }
  // Ties to even: 6 / 4 = 1.5 -> 2, 10 / 4 = 2.5 -> 2, -10 / 4 -> -2, 14 / 4 = 3.5 -> 4.
  EXPECT_EQ(npucc_stage_rq_shift(6, 2, 0), 2);
  EXPECT_EQ(npucc_stage_rq_shift(10, 2, 0), 2);
  EXPECT_EQ(npucc_stage_rq_shift(-10, 2, 0), -2);
  EXPECT_EQ(npucc_stage_rq_shift(14, 2, 0), 4);
  EXPECT_EQ(npucc_stage_rq_shift(11, 2, 0), 3);
  EXPECT_EQ(npucc_stage_rq_shift(-11, 2, 0), -3);
  EXPECT_EQ(npucc_stage_rq_shift(INT32_MIN, 31, 0), -1);
  EXPECT_EQ(npucc_stage_rq_shift(INT32_MAX, 0, 5), INT32_MAX);
  EXPECT_EQ(npucc_stage_rq_shift(-7, 0, 5), -2);
}

TEST(StageOps, ActivationClamp) {
  for (int v = -300; v <= 300; ++v)
    for (int lo : {-200, -128, -5, 0})
      for (int hi : {0, 6, 127, 200}) {
        int ref = std::min(std::max(v, std::max(lo, -128)), std::min(hi, 127));
        if (lo <= hi) {
          EXPECT_EQ(npucc_stage_act_clamp(v, lo, hi), ref);
        }
      }
}

/// lut256: out = (int8)lut[v + 128] with v saturated to int8 first, the
/// indexing of the CPU's npucc_lut_s8 (table[x + 128]).
TEST(StageOps, ActivationLut256) {
  std::mt19937 rng(7);
  uint8_t lut[256];
  for (int round = 0; round < 8; ++round) {
    for (uint8_t &b : lut)
      b = uint8_t(rng());
    for (int v = -1000; v <= 1000; ++v) {
      int idx = v < -128 ? 0 : (v > 127 ? 255 : v + 128);
      ASSERT_EQ(npucc_stage_act_lut256(v, lut), int32_t(int8_t(lut[idx]))) << v;
    }
    for (int32_t v : {INT32_MIN, INT32_MAX}) {
      EXPECT_EQ(npucc_stage_act_lut256(v, lut), int32_t(int8_t(lut[v < 0 ? 0 : 255])));
    }
  }
  // Distinct entries tell the index: lut[i] = i - 128 is the identity.
  for (int i = 0; i < 256; ++i)
    lut[i] = uint8_t(int8_t(i - 128));
  for (int v = -128; v <= 127; ++v)
    EXPECT_EQ(npucc_stage_act_lut256(v, lut), v);
}

/// A table holding the fused clamp, lut[i] = clamp(i - 128, lo, hi), is the
/// clamp stage exactly: after the q31 requantization the two pipelines give
/// the same byte for every accumulator.
TEST(StageOps, Lut256OfTheClampEqualsTheClampStage) {
  std::mt19937 rng(11);
  uint8_t lut[256];
  for (int i = 0; i < 20000; ++i) {
    int32_t lo = int32_t(rng() % 256) - 128, hi = std::max(lo, int32_t(rng() % 256) - 128);
    for (int k = 0; k < 256; ++k)
      lut[k] = uint8_t(int8_t(std::min(std::max(k - 128, lo), hi)));
    int32_t acc = int32_t(rng()) >> (rng() % 24);
    int32_t mult = int32_t((1u << 30) + (rng() & ((1u << 30) - 1)));
    int32_t shift = int32_t(rng() % 40) - 8;
    int32_t zp = int32_t(rng() % 256) - 128;
    int32_t q = npucc_stage_rq_q31(acc, mult, shift, zp);
    ASSERT_EQ(npucc_stage_out_int8(npucc_stage_act_lut256(q, lut)),
              npucc_stage_out_int8(npucc_stage_act_clamp(q, lo, hi)))
        << acc << " " << lo << " " << hi;
  }
}

/// The compiler's table (quant::actLut256) after the q31 requantization is
/// the CPU's arithmetic of the fused clamp followed by a lookup-table
/// activation (npucc_requant_i8, then the kernel npucc_lut_s8 on a buildLut
/// table), bit for bit: the fusion of Sigmoid, Tanh, HardSwish, LeakyRelu
/// into the MAC layer is exact. Without `next` it is the clamp alone.
TEST(StageOps, Lut256TableFusesTheClampAndAFollowingActivation) {
  using npucc::quant::LutFunction;
  std::mt19937 rng(13);
  for (LutFunction k : {LutFunction::Sigmoid, LutFunction::Tanh, LutFunction::HardSwish,
                        LutFunction::LeakyRelu}) {
    for (int round = 0; round < 20; ++round) {
      double sx = 0.01 + 0.2 * double(rng() % 1000) / 1000.0;
      int32_t zx = int32_t(rng() % 256) - 128;
      double sy = k == LutFunction::Sigmoid ? 1.0 / 256 : 0.005 + 0.05 * double(rng() % 100) / 100;
      int32_t zy = k == LutFunction::Sigmoid ? -128 : int32_t(rng() % 64) - 32;
      npucc::quant::LutTable next = npucc::quant::buildLut(k, sx, zx, sy, zy);
      int32_t lo = int32_t(rng() % 256) - 128, hi = std::max(lo, int32_t(rng() % 256) - 128);
      if (round % 4 == 0)
        lo = -128, hi = 127;
      std::array<uint8_t, 256> lut = npucc::quant::actLut256(lo, hi, &next);
      std::array<uint8_t, 256> clampOnly = npucc::quant::actLut256(lo, hi);
      for (int i = 0; i < 2000; ++i) {
        int32_t acc = int32_t(rng()) >> (rng() % 24);
        int32_t mult = int32_t((1u << 30) + (rng() & ((1u << 30) - 1)));
        int32_t shift = int32_t(rng() % 40) - 8;
        int32_t q = npucc_stage_rq_q31(acc, mult, shift, zx);
        int8_t cpuIn = npucc_requant_i8(acc, mult, shift, zx, lo, hi), cpuOut = 0;
        npucc_lut_s8(&cpuIn, &cpuOut, 1, next.data());
        ASSERT_EQ(int8_t(npucc_stage_out_int8(npucc_stage_act_lut256(q, lut.data()))), cpuOut)
            << int(k) << " acc " << acc << " clamp " << lo << ".." << hi;
        ASSERT_EQ(int8_t(npucc_stage_out_int8(npucc_stage_act_lut256(q, clampOnly.data()))),
                  cpuIn);
      }
    }
  }
}

/// pwl, naively: the table's fields bit by bit (K210 record: shift 0..7,
/// mul 8..23 signed, start 24..59 signed; add bytes after the 16 records),
/// the segment by a scan from the top, the division in 128-bit integers.
int32_t pwlReference(int32_t y, const uint8_t *t) {
  auto field = [&](int rec, int lsb, int width, bool isSigned) {
    __int128 v = 0;
    for (int b = 0; b < width; ++b)
      if ((t[rec * 8 + (lsb + b) / 8] >> ((lsb + b) % 8)) & 1)
        v += __int128(1) << b;
    if (isSigned && (v >> (width - 1)) != 0)
      v -= __int128(1) << width;
    return v;
  };
  int k = 0;
  for (int i = 15; i >= 1; --i)
    if (field(i, 24, 36, true) <= y) {
      k = i;
      break;
    }
  __int128 p = (__int128(y) - field(k, 24, 36, true)) * field(k, 8, 16, true);
  int shift = int(field(k, 0, 8, false));
  __int128 q = p; // round_half_even(p / 2^shift)
  if (shift >= 100) {
    q = 0; // |p| < 2^53
  } else if (shift > 0) {
    __int128 d = __int128(1) << shift, fl = p >= 0 ? p / d : -((-p + d - 1) / d), r = p - fl * d;
    q = 2 * r > d || (2 * r == d && (fl % 2 != 0)) ? fl + 1 : fl;
  }
  q += int8_t(t[128 + k]);
  return int32_t(q < -128 ? -128 : q > 127 ? 127 : q);
}

/// pwl against the naive reference: random bytes (starts anywhere in 36
/// bits, any shift), and tables whose starts lie among the inputs (sorted or
/// not), on every int8 input and wide ones.
TEST(StageOps, ActivationPwl) {
  std::mt19937 rng(17);
  uint8_t t[NPUCC_PWL_TABLE_BYTES];
  std::vector<int32_t> ys;
  for (int32_t y = -400; y <= 400; ++y)
    ys.push_back(y);
  for (int i = 0; i < 400; ++i)
    ys.push_back(int32_t(rng()));
  for (int32_t y : {INT32_MIN, INT32_MIN + 1, INT32_MAX, INT32_MAX - 1})
    ys.push_back(y);
  for (int round = 0; round < 200; ++round) {
    for (uint8_t &b : t)
      b = uint8_t(rng());
    if (round % 2 == 1)
      for (int i = 0; i < 16; ++i) {
        int64_t start = int64_t(rng() % 801) - 400, mul = int64_t(rng() % 65536) - 32768;
        uint64_t r = uint64_t(rng() % 24) | (uint64_t(uint16_t(mul)) << 8) |
                     ((uint64_t(start) & ((uint64_t(1) << 36) - 1)) << 24) |
                     (uint64_t(rng() % 16) << 60); // the unused bits ignored
        for (int b = 0; b < 8; ++b)
          t[i * 8 + b] = uint8_t(r >> (8 * b));
      }
    for (int32_t y : ys)
      ASSERT_EQ(npucc_stage_act_pwl(y, t), pwlReference(y, t)) << "round " << round << " y " << y;
  }
}

/// The segments' helpers: pwlTable's records decode to the segments (the
/// unused ones repeat the last), and the identity segment is the identity.
TEST(StageOps, PwlTableRoundTrip) {
  std::vector<npucc::quant::PwlSegment> segs = {
      {-128, 0, 0, -100}, {-5, -32768, 17, 3}, {40, 32767, 255, -128}, {-34359738368, 1, 0, 127}};
  std::vector<uint8_t> t = npucc::quant::pwlTable(segs);
  ASSERT_EQ(t.size(), size_t(NPUCC_PWL_TABLE_BYTES));
  for (int i = 0; i < NPUCC_PWL_SEGMENTS; ++i) {
    npucc::quant::PwlSegment d;
    npucc_pwl_record(t.data(), i, &d.start, &d.mul, &d.shift, &d.add);
    EXPECT_EQ(d, segs[std::min<size_t>(size_t(i), segs.size() - 1)]) << i;
  }
  std::vector<uint8_t> id = npucc::quant::pwlTable({{-128, 1, 0, -128}});
  for (int32_t y = -128; y <= 127; ++y)
    EXPECT_EQ(npucc_stage_act_pwl(y, id.data()), y);
  EXPECT_EQ(npucc_stage_act_pwl(100000, id.data()), 127);
  EXPECT_EQ(npucc_stage_act_pwl(-100000, id.data()), -128);
}

/// pool max (phase 7e): every k x k, stride k window of random HWC tiles,
/// strided as the tile is stored, against a reference that scatters each
/// input element into its window's maximum (the rows and columns past the
/// last whole window belong to none); planted extremes at window corners.
TEST(StageOps, PoolMax) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    int h = 1 + int(rng() % 9), w = 1 + int(rng() % 9), c = 1 + int(rng() % 5);
    int k = 1 + int(rng() % 4);
    std::vector<int8_t> x(size_t(h * w * c));
    for (int8_t &v : x)
      v = int8_t(int(rng() % 256) - 128);
    if (round % 3 == 0)
      x[size_t(((h - 1) * w + (w - 1)) * c)] = 127; // the last corner: pooled only when whole
    int oh = h / k, ow = w / k;
    std::vector<int> ref(size_t(std::max(oh * ow * c, 1)), -1000);
    for (int y = 0; y < h; ++y)
      for (int xx = 0; xx < w; ++xx)
        for (int ch = 0; ch < c; ++ch)
          if (y / k < oh && xx / k < ow) {
            int &r = ref[size_t(((y / k) * ow + xx / k) * c + ch)];
            r = std::max(r, int(x[size_t((y * w + xx) * c + ch)]));
          }
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          const int8_t *base = &x[size_t(((oy * k) * w + ox * k) * c + ch)];
          ASSERT_EQ(npucc_stage_pool_max(base, long(w * c), long(c), k),
                    ref[size_t((oy * ow + ox) * c + ch)])
              << "round " << round << " h " << h << " w " << w << " k " << k << " at " << oy << ","
              << ox << "," << ch;
        }
  }
  const int8_t all[4] = {-128, -128, -128, -128};
  EXPECT_EQ(npucc_stage_pool_max(all, 2, 1, 2), -128);
  const int8_t last[4] = {-128, -7, 3, 126};
  EXPECT_EQ(npucc_stage_pool_max(last, 2, 1, 2), 126);
  EXPECT_EQ(npucc_stage_pool_max(last + 1, 2, 1, 1), -7);
}

/// pool select (phase 7e, second part): pixel (oy, ox) of every k x k, stride
/// k window of random HWC tiles, strided as the tile is stored, against the
/// naive reference: element (y * k + oy, x * k + ox) of the tile is output
/// (y, x), which is what a stride-k sampling of the tile from (oy, ox) gives.
TEST(StageOps, PoolSelect) {
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    int h = 1 + int(rng() % 9), w = 1 + int(rng() % 9), c = 1 + int(rng() % 5);
    int k = 1 + int(rng() % 4), offY = int(rng() % unsigned(k)), offX = int(rng() % unsigned(k));
    std::vector<int8_t> x(size_t(h * w * c));
    for (int8_t &v : x)
      v = int8_t(int(rng() % 256) - 128);
    int oh = h / k, ow = w / k;
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          int want = x[size_t(((oy * k + offY) * w + ox * k + offX) * c + ch)];
          const int8_t *base = &x[size_t(((oy * k) * w + ox * k) * c + ch)];
          ASSERT_EQ(npucc_stage_pool_select(base, long(w * c), long(c), offY, offX), want)
              << "round " << round << " h " << h << " w " << w << " k " << k << " offset " << offY
              << "," << offX << " at " << oy << "," << ox << "," << ch;
        }
  }
  // A 2x2 window [[a, b], [c, d]] (row pitch 2): each offset its own pixel.
  const int8_t win[4] = {-128, -7, 3, 126};
  EXPECT_EQ(npucc_stage_pool_select(win, 2, 1, 0, 0), -128);
  EXPECT_EQ(npucc_stage_pool_select(win, 2, 1, 0, 1), -7);
  EXPECT_EQ(npucc_stage_pool_select(win, 2, 1, 1, 0), 3);
  EXPECT_EQ(npucc_stage_pool_select(win, 2, 1, 1, 1), 126);
}

/// The default pipeline is today's npucc_requant_i8 (the simulator's
/// arithmetic before the stages).
TEST(StageOps, DefaultPipelineEqualsRequantI8) {
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; ++i) {
    int32_t acc = int32_t(rng()) >> (rng() % 24);
    int32_t mult = int32_t((1u << 30) + (rng() & ((1u << 30) - 1)));
    int32_t shift = int32_t(rng() % 63) - 31;
    int32_t zp = int32_t(rng() % 256) - 128;
    int32_t lo = int32_t(rng() % 256) - 128, hi = std::max(lo, int32_t(rng() % 256) - 128);
    int32_t v = npucc_stage_act_clamp(npucc_stage_rq_q31(acc, mult, shift, zp), lo, hi);
    ASSERT_EQ(int8_t(npucc_stage_out_int8(v)), npucc_requant_i8(acc, mult, shift, zp, lo, hi));
  }
}

/// The float32 reference: the host's binary32 arithmetic (SSE on x86-64,
/// round to nearest even), then rounded to an integer, ties to even.
int32_t refFp32(int32_t acc, float scale, int32_t zp) {
  volatile float x = float(acc);             // one rounding to 24 significant bits
  volatile float p = x * scale;              // the float32 product
  double r = std::nearbyint(double(p)) + zp; // finite here: the scales below are small
  return int32_t(std::clamp(r, -2147483648.0, 2147483647.0));
}

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

TEST(StageOps, RequantFp32ScaleAgainstHostFloat) {
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  for (int i = 0; i < 400000; ++i) {
    int32_t acc = int32_t(rng()) >> (rng() % 32);
    float scale = std::ldexp(mant(rng), int(rng() % 40) - 30); // 2^-30 .. 2^10
    if (i % 5 == 0)
      scale = -scale;
    int32_t zp = int32_t(rng() % 256) - 128;
    ASSERT_EQ(npucc_stage_rq_fp32(acc, bitsOf(scale), zp), refFp32(acc, scale, zp))
        << acc << " * " << scale << " + " << zp;
  }
  // Ties in the final rounding go to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -2.5 -> -2.
  EXPECT_EQ(npucc_stage_rq_fp32(1, bitsOf(0.5f), 0), 0);
  EXPECT_EQ(npucc_stage_rq_fp32(3, bitsOf(0.5f), 0), 2);
  EXPECT_EQ(npucc_stage_rq_fp32(5, bitsOf(0.5f), 0), 2);
  EXPECT_EQ(npucc_stage_rq_fp32(-5, bitsOf(0.5f), 0), -2);
  // acc beyond 2^24 is rounded to 24 bits first: 2^24 + 1 -> 2^24.
  EXPECT_EQ(npucc_stage_rq_fp32((1 << 24) + 1, bitsOf(1.0f), 0), 1 << 24);
  // Subnormal, zero and huge scales; saturation; NaN gives the zero point.
  EXPECT_EQ(npucc_stage_rq_fp32(INT32_MAX, 1u, 3), 3);
  EXPECT_EQ(npucc_stage_rq_fp32(1000, bitsOf(0.0f), -7), -7);
  EXPECT_EQ(npucc_stage_rq_fp32(1000, bitsOf(1e30f), 0), INT32_MAX);
  EXPECT_EQ(npucc_stage_rq_fp32(-1000, bitsOf(1e30f), 0), INT32_MIN);
  EXPECT_EQ(npucc_stage_rq_fp32(5, 0x7F800000u, 0), INT32_MAX);
  EXPECT_EQ(npucc_stage_rq_fp32(5, 0x7FC00000u, 9), 9);
  EXPECT_FALSE(npucc_stage_fp32_finite(0x7F800000u));
  EXPECT_TRUE(npucc_stage_fp32_finite(bitsOf(3.0e38f)));
}

/// fp32_scale with the float32 scale of a Q31 multiplier whose mult is a
/// multiple of 2^7 (a float32 value), followed by the clamp to int8, is
/// npucc_requant_i8_r with NPUCC_RQ_FP32, the integer emulation the
/// interpreter and the CPU kernels use for requant="fp32". (Beyond int32
/// the two saturate at different points: the stage after adding the zero
/// point, npucc_mul_qmult_fp32 before; the int8 results agree.)
TEST(StageOps, RequantFp32ScaleEqualsQmultFp32) {
  std::mt19937 rng(23);
  for (int i = 0; i < 200000; ++i) {
    int32_t acc = int32_t(rng()) >> (rng() % 32);
    int32_t mult = int32_t((1u << 30) + ((rng() & ((1u << 30) - 1)) & ~127u));
    int32_t shift = int32_t(rng() % 63) - 31;
    float scale = float(std::ldexp(double(mult), -31 - shift));
    ASSERT_EQ(double(scale), std::ldexp(double(mult), -31 - shift)); // exact
    int32_t zp = int32_t(rng() % 256) - 128;
    int32_t lo = -128, hi = 127;
    ASSERT_EQ(npucc_stage_act_clamp(npucc_stage_rq_fp32(acc, bitsOf(scale), zp), lo, hi),
              npucc_requant_i8_r(acc, mult, shift, zp, lo, hi, NPUCC_RQ_FP32))
        << acc << " " << mult << " " << shift;
    if (std::fabs(double(acc) * double(scale)) < 2e9) {
      ASSERT_EQ(npucc_stage_rq_fp32(acc, bitsOf(scale), zp),
                npucc_sat_i32(int64_t(npucc_mul_qmult_fp32(acc, mult, shift)) + zp))
          << acc << " " << mult << " " << shift;
    }
  }
}

} // namespace
