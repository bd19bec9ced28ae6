//===- SimRig.h - One NPU description on the simulator, for command tests ---===//
//
// The fixture of the simulator command tests (sim_commands_test.cpp,
// sim_operands_test.cpp): a description on the host simulator with mapped
// system memory, scratchpad allocation, DMA in and out, and a random
// quantization set-up for the MAC operations with its C++ reference.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"
#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_requant.h"
#include "npucc_sim.h"
#include "npucc_stages.h"

#include <gtest/gtest.h>

#include "SimTarget.h"
#include "TestTargets.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace npucc::test {

using namespace npucc::target;

using I8 = std::vector<int8_t>;
using I32 = std::vector<int32_t>;

/// One NPU under test: description, C table, simulator, system memory.
struct Rig : npucc::test::SimTarget {
  std::vector<uint8_t> Ram;
  uint64_t RamBase = 0, RamNext = 0;
  std::vector<uint64_t> BankNext; // next free byte per bank of the first scratchpad
  size_t NextBank = 0;

  explicit Rig(const std::string &name) : SimTarget(loadTarget(name)) {
    if (!Sim)
      return;
    uint64_t size = 0;
    for (const SystemRange &s : T.system)
      if (s.writable) {
        RamBase = s.base;
        size = std::min<uint64_t>(s.size, 1u << 20);
        break;
      }
    Ram.assign(size, 0);
    EXPECT_EQ(npucc_sim_map(Sim, RamBase, Ram.data(), Ram.size()), 0);
    RamNext = RamBase;
    const Scratchpad &sp = T.scratchpads[0];
    for (unsigned b = 0; b < sp.banks; ++b)
      BankNext.push_back(sp.base + b * sp.bankSize);
  }

  bool ok() const { return Sim != nullptr; }
  bool dims(unsigned n) const { return T.dma.dims >= n; }

  uint64_t sysAlloc(size_t n) {
    uint64_t a = RamNext;
    RamNext += (n + 63) & ~size_t(63);
    return a;
  }
  /// Buffers go to the banks in turn, so that consecutive operands (input,
  /// weights) never share a bank on NPUs that require separate banks.
  uint64_t spmAlloc(size_t n) {
    const Scratchpad &sp = T.scratchpads[0];
    size_t b = NextBank++ % BankNext.size();
    uint64_t a = BankNext[b];
    BankNext[b] += (n + 63) & ~size_t(63);
    EXPECT_LE(BankNext[b], sp.base + (b + 1) * sp.bankSize);
    return a;
  }
  uint8_t *host(uint64_t sysAddr) { return Ram.data() + (sysAddr - RamBase); }

  std::vector<int64_t> params() {
    std::vector<int64_t> p(NPUCC_P_COUNT);
    npucc_npu_defaults(p.data());
    return p;
  }
  void issue(int kind, const std::vector<int64_t> &p) {
    int bad = -1;
    int rc = npucc_npu_issue(D, kind, p.data(), &bad);
    ASSERT_EQ(rc, NPUCC_OK) << "issue " << npucc_kind_name(kind) << " failed on parameter "
                            << npucc_param_name(bad);
  }
  void wait(int engine) {
    int rc = npucc_hal_wait(engine, 10000000);
    ASSERT_EQ(rc, NPUCC_OK) << npucc_sim_error(Sim);
  }
  void dma(uint64_t src, uint64_t dst, uint64_t len) {
    auto p = params();
    p[NPUCC_P_SRC_ADDR] = int64_t(src);
    p[NPUCC_P_DST_ADDR] = int64_t(dst);
    p[NPUCC_P_LENGTH] = int64_t(len);
    issue(NPUCC_KIND_DMA, p);
    wait(NPUCC_ENGINE_DMA);
  }
  /// Copies bytes to system memory, then DMAs them into a new scratchpad buffer.
  template <typename T> uint64_t load(const std::vector<T> &v) {
    size_t n = v.size() * sizeof(T);
    uint64_t s = sysAlloc(n), d = spmAlloc(n);
    std::memcpy(host(s), v.data(), n);
    dma(s, d, n);
    return d;
  }
  /// A constant operand of operation `op`: in system memory (aligned as the
  /// description asks) where the NPU reads it from there, else DMA'd into
  /// the scratchpad (load).
  template <typename T> uint64_t constant(const char *op, Operand o, const std::vector<T> &v) {
    const OpLimits *l = this->T.operation(op);
    if (!l || !l->inSystem(o))
      return load(v);
    size_t n = v.size() * sizeof(T);
    uint64_t a = l->systemAlignment[size_t(o)];
    RamNext = (RamNext + a - 1) / a * a;
    uint64_t s = sysAlloc(n);
    std::memcpy(host(s), v.data(), n);
    return s;
  }
  I8 store(uint64_t spm, size_t n) {
    uint64_t s = sysAlloc(n);
    dma(spm, s, n);
    return I8(host(s), host(s) + n);
  }
};

inline I8 randI8(std::mt19937 &g, size_t n) {
  std::uniform_int_distribution<int> d(-128, 127);
  I8 v(n);
  for (auto &x : v)
    x = int8_t(d(g));
  return v;
}
inline I32 randI32(std::mt19937 &g, size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  I32 v(n);
  for (auto &x : v)
    x = d(g);
  return v;
}

/// acc * scale in the host's binary32 arithmetic, rounded to nearest even
/// (the fp32_scale stage's definition), + zp, saturated to int32.
inline int32_t hostFp32(int32_t acc, float scale, int32_t zp) {
  volatile float x = float(acc);
  volatile float prod = x * scale;
  return int32_t(std::clamp(std::nearbyint(double(prod)) + zp, -2147483648.0, 2147483647.0));
}

/// Quantization setup shared by conv / depthwise / matmul: the operation's
/// requantization stage (q31: mult and shift; fp32_scale: one binary32 scale
/// per channel in the rq table; mul_shift_add: mul, shift and add per
/// channel) with random values; where the activation stage
/// is lut256, a random 256-byte table at act_addr instead of the clamp; where
/// it is pwl, a random 144-byte segment table (starts among the requantized
/// values, which it takes before any clamp).
struct Quant {
  bool perChannel = false, fp32 = false, msa = false;
  I32 mult, shift, bias;
  I32 msaMul, msaShift, msaAdd; // mul_shift_add: per channel, in the rq table
  I8 lut;                       // lut256: out = lut[v + 128] (empty: the clamp stage)
  I8 pwl;                       // pwl: npucc_stage_act_pwl's table (empty: not the pwl stage)
  std::vector<float> scale;
  int32_t inZp = 0, outZp = 0, actMin = -128, actMax = 127;
  /// uint8 input (bytes 0..255, inZp 0..255), uint8 output (stored value + 128), and the
  /// correction_terms stage (uint8 weights with zero point wZp; corr_x = -wZp, corr_w = -inZp,
  /// corr_add = taps * wZp * inZp, shifts 0).
  bool u8In = false, u8Out = false, corr = false;
  int32_t wZp = 0;

  Quant(std::mt19937 &g, const OpLimits &op, size_t ch) {
    fp32 = op.stage(NPUCC_SLOT_REQUANT) == NPUCC_STAGE_RQ_FP32;
    msa = op.stage(NPUCC_SLOT_REQUANT) == NPUCC_STAGE_RQ_MUL_SHIFT_ADD;
    perChannel = op.perChannelRequant;
    size_t n = perChannel ? ch : 1;
    mult = randI32(g, n, 1 << 30, INT32_MAX);
    shift = randI32(g, n, 7, 11);
    for (size_t i = 0; i < n; ++i)
      scale.push_back(float(std::ldexp(double(mult[i]), -31 - shift[i])));
    bias = randI32(g, ch, -3000, 3000);
    if (msa) { // mul / 2^shift about 2^-8 .. 2^-12 as the q31 multipliers; add in place of out_zp
      // Within the operation's widths (the simulator refuses others): the shift up to 24 or
      // the largest the field holds, the mul scaled to it and below its signed limit.
      int32_t hi = int32_t(std::min<uint64_t>(24, (uint64_t(1) << op.msaBits[1]) - 1));
      int32_t mulMax =
          int32_t(std::min<uint64_t>(INT32_MAX, (uint64_t(1) << (op.msaBits[0] - 1)) - 1));
      msaShift = randI32(g, ch, std::max(0, hi - 4), hi);
      for (size_t i = 0; i < ch; ++i) {
        int32_t s = msaShift[i];
        int32_t lo = std::max(1, s >= 12 ? 1 << (s - 12) : 1),
                top = std::max(lo, s >= 8 ? 1 << (s - 8) : 1);
        msaMul.push_back(std::min(mulMax, randI32(g, 1, lo, top)[0]));
      }
      msaAdd = randI32(g, ch, -10, 10);
    }
    u8In = op.stage(NPUCC_SLOT_INPUT) == NPUCC_STAGE_IN_UINT8;
    u8Out = op.stage(NPUCC_SLOT_OUTPUT) == NPUCC_STAGE_OUT_UINT8;
    corr = op.stage(NPUCC_SLOT_CORRECTION) == NPUCC_STAGE_CORR_TERMS;
    inZp = u8In ? randI32(g, 1, 60, 200)[0] : randI32(g, 1, -20, 20)[0];
    wZp = corr ? randI32(g, 1, 0, 255)[0] : 0;
    outZp = randI32(g, 1, -10, 10)[0];
    actMin = -100;
    actMax = 110;
    if (op.stage(NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_LUT256) {
      lut = randI8(g, 256);
      actMin = -128;
      actMax = 127;
    }
    if (op.stage(NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_PWL) {
      pwl = randI8(g, NPUCC_PWL_TABLE_BYTES); // the add bytes stay random
      I32 starts = randI32(g, NPUCC_PWL_SEGMENTS, -150, 150), muls = randI32(g, 16, -600, 600),
          shifts = randI32(g, 16, 0, 9);
      // The operation's segments; the records after them repeat the last (as the simulator
      // requires).
      size_t used = std::min<size_t>(op.pwlSegments, NPUCC_PWL_SEGMENTS);
      for (size_t i = 0; i < size_t(NPUCC_PWL_SEGMENTS); ++i) {
        size_t j = std::min(i, used - 1);
        uint64_t rec = uint64_t(shifts[j]) | (uint64_t(uint16_t(int16_t(muls[j]))) << 8) |
                       ((uint64_t(int64_t(starts[j])) & ((uint64_t(1) << 36) - 1)) << 24);
        for (size_t b = 0; b < 8; ++b)
          pwl[i * 8 + b] = int8_t(uint8_t(rec >> (8 * b)));
        pwl[size_t(NPUCC_PWL_SEGMENTS) * 8 + i] = pwl[size_t(NPUCC_PWL_SEGMENTS) * 8 + j];
      }
      actMin = -128;
      actMax = 127;
    }
  }
  /// The requantization stage's value before the activation.
  int32_t requantized(size_t ch, int32_t acc) const {
    size_t i = perChannel ? ch : 0;
    if (msa)
      return npucc_stage_rq_msa(npucc_sat_i32(int64_t(acc) + bias[ch]), msaMul[ch], msaShift[ch],
                                msaAdd[ch]);
    if (fp32)
      return hostFp32(acc + bias[ch], scale[i], outZp);
    return npucc_stage_rq_q31(acc + bias[ch], mult[i], shift[i], outZp);
  }
  int8_t apply(size_t ch, int32_t acc) const {
    int32_t v = requantized(ch, acc);
    if (!pwl.empty()) // the value before any clamp, then the segments
      return int8_t(npucc_stage_act_pwl(v, reinterpret_cast<const uint8_t *>(pwl.data())));
    int8_t c = int8_t(std::clamp(v, actMin, actMax));
    return lut.empty() ? c : lut[size_t(c + 128)];
  }
  /// The input stage's value of a stored byte, the weight minus its zero point, the stored
  /// bytes of activated values.
  int32_t x(int8_t b) const { return u8In ? int32_t(uint8_t(b)) : int32_t(b); }
  int32_t w(int8_t b) const { return corr ? int32_t(uint8_t(b)) - wZp : int32_t(b); }
  I8 stored(I8 v) const {
    if (u8Out)
      for (int8_t &b : v)
        b = int8_t(uint8_t(int(b) + 128));
    return v;
  }
  /// Loads bias (and the per-channel table) and sets the parameters; taps: the
  /// kernel's k_h * k_w (corr_add).
  void program(Rig &r, std::vector<int64_t> &p, const char *op, int taps = 1) const {
    if (corr) {
      p[NPUCC_P_CORR_X] = -wZp;
      p[NPUCC_P_CORR_W] = -inZp;
      p[NPUCC_P_CORR_ADD] = int64_t(taps) * wZp * inZp;
    }
    p[NPUCC_P_BIAS_ADDR] = int64_t(r.constant(op, Operand::Bias, bias));
    if (msa) {
      I32 table = msaMul;
      table.insert(table.end(), msaShift.begin(), msaShift.end());
      table.insert(table.end(), msaAdd.begin(), msaAdd.end());
      p[NPUCC_P_RQ_ADDR] = int64_t(r.constant(op, Operand::Rq, table));
      p[NPUCC_P_PER_CHANNEL] = 1;
    } else if (fp32) {
      I32 table(scale.size());
      std::memcpy(table.data(), scale.data(), 4 * scale.size());
      p[NPUCC_P_RQ_ADDR] = int64_t(r.constant(op, Operand::Rq, table));
      p[NPUCC_P_PER_CHANNEL] = 1;
    } else if (perChannel) {
      I32 table = mult;
      table.insert(table.end(), shift.begin(), shift.end());
      p[NPUCC_P_RQ_ADDR] = int64_t(r.constant(op, Operand::Rq, table));
      p[NPUCC_P_PER_CHANNEL] = 1;
    } else {
      p[NPUCC_P_REQUANT_MULT] = mult[0];
      p[NPUCC_P_REQUANT_SHIFT] = shift[0];
      p[NPUCC_P_PER_CHANNEL] = 0;
    }
    p[NPUCC_P_IN_ZP] = inZp;
    p[NPUCC_P_OUT_ZP] = outZp;
    p[NPUCC_P_ACT_MIN] = actMin;
    p[NPUCC_P_ACT_MAX] = actMax;
    if (!lut.empty())
      p[NPUCC_P_ACT_ADDR] = int64_t(r.constant(op, Operand::Act, lut));
    if (!pwl.empty())
      p[NPUCC_P_ACT_ADDR] = int64_t(r.constant(op, Operand::Act, pwl));
  }
};

/// The matmul the NPU computes: a (M x K) times w^T (w: N x K), requantized by q.
inline I8 matmulRef(const I8 &a, const I8 &w, int M, int K, int N, const Quant &q) {
  I8 ref(size_t(M) * size_t(N));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      int32_t acc = 0;
      for (int c = 0; c < K; ++c)
        acc += (q.x(a[i * K + c]) - q.inZp) * q.w(w[j * K + c]);
      ref[i * N + j] = q.apply(size_t(j), acc);
    }
  return q.stored(ref);
}

} // namespace npucc::test
