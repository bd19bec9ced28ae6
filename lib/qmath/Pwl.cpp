//===- Pwl.cpp - The pwl activation stage's segments: fit, table, attribute ===//
//
// fitPwl's greedy cover under a worst-error bound, the exact clamp, the
// K210 table format and the act_pwl attribute; see Pwl.h.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/Pwl.h"

#include "npucc/quant/FusedActivation.h"

#include "../../runtime/include/npucc_stages.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace npucc::quant {

namespace {

constexpr int64_t MulMin = -32768, MulMax = 32767;
constexpr int MaxCandidates = 512;

int32_t segValue(const PwlSegment &s, int32_t y) {
  return npucc_pwl_segment(y, s.start, s.mul, s.shift, s.add);
}

/// round_half_even((x - a) * mul / 2^shift), not clamped (the arithmetic of
/// npucc_pwl_segment before the add).
int64_t ramp(int32_t x, int32_t a, int64_t mul, unsigned shift) {
  int64_t p = int64_t(x - a) * mul, mag = std::llabs(p), q = mag;
  if (shift > 0) {
    int64_t rem = mag & ((int64_t(1) << shift) - 1), half = int64_t(1) << (shift - 1);
    q = mag >> shift;
    if (rem > half || (rem == half && (q & 1)))
      ++q;
  }
  return p < 0 ? -q : q;
}

struct Cover {
  const std::function<int32_t(int32_t)> &T;
  int32_t lo, hi;

  /// A segment over [a, b] within e of T, constant (or saturating) outside
  /// [lo, hi] where it covers that side.
  std::optional<PwlSegment> fit(int32_t a, int32_t b, int32_t e) const {
    bool first = a == lo, last = b == hi;
    auto ok = [&](const PwlSegment &s) {
      for (int32_t x = a; x <= b; ++x)
        if (std::abs(segValue(s, x) - T(x)) > e)
          return false;
      if (first && s.mul != 0 && segValue(s, lo) != (s.mul > 0 ? -128 : 127))
        return false;
      if (last && s.mul != 0 && segValue(s, hi) != (s.mul > 0 ? 127 : -128))
        return false;
      return true;
    };
    // Every point's required add given the ramp; the midpoint of the range.
    auto withAdd = [&](int64_t mul, unsigned shift) -> std::optional<PwlSegment> {
      int64_t dmin = INT64_MAX, dmax = INT64_MIN;
      for (int32_t x = a; x <= b; ++x) {
        int64_t d = int64_t(T(x)) - ramp(x, a, mul, shift);
        dmin = std::min(dmin, d), dmax = std::max(dmax, d);
        if (dmax - dmin > 2 * int64_t(e) + 2) // the int8 clamp may still help a little
          return std::nullopt;
      }
      int64_t add = std::clamp<int64_t>((dmin + dmax) / 2, -128, 127);
      PwlSegment s{a, int32_t(mul), shift, int32_t(add)};
      if (ok(s))
        return s;
      return std::nullopt;
    };
    if (auto s = withAdd(0, 0))
      return s;
    if (a == b)
      return std::nullopt;
    double len = double(b - a), dT = double(T(b)) - double(T(a));
    double slo = (dT - 2.0 * e - 1.0) / len, shi = (dT + 2.0 * e + 1.0) / len;
    double smax = std::max(std::fabs(slo), std::fabs(shi));
    unsigned shift = 0;
    for (unsigned sh = 30; sh > 0; --sh)
      if (smax * std::ldexp(1.0, int(sh)) <= double(MulMax) &&
          (shi - slo) * std::ldexp(1.0, int(sh)) <= MaxCandidates) {
        shift = sh;
        break;
      }
    int64_t m0 = std::max<int64_t>(MulMin, int64_t(std::floor(slo * std::ldexp(1.0, int(shift)))));
    int64_t m1 = std::min<int64_t>(MulMax, int64_t(std::ceil(shi * std::ldexp(1.0, int(shift)))));
    for (int64_t m = m0; m <= m1; ++m)
      if (m != 0)
        if (auto s = withAdd(m, shift))
          return s;
    return std::nullopt;
  }

  /// The greedy cover within e; empty when it needs more than `most` segments.
  std::vector<PwlSegment> cover(int32_t e, unsigned most) const {
    std::vector<PwlSegment> segs;
    for (int32_t a = lo; a <= hi;) {
      if (segs.size() == most)
        return {};
      std::optional<PwlSegment> best;
      int32_t end = a - 1;
      for (int32_t b = a; b <= hi; ++b) {
        auto s = fit(a, b, e);
        if (!s)
          break;
        best = s, end = b;
      }
      if (!best)
        return {}; // only when a single point cannot meet its end's rule (never: mul 0 fits)
      segs.push_back(*best);
      a = end + 1;
    }
    return segs;
  }
};

} // namespace

PwlFit fitPwl(const std::function<int32_t(int32_t)> &target, int32_t lo, int32_t hi,
              unsigned maxSegments) {
  lo = std::clamp(lo, -128, 127), hi = std::clamp(hi, lo, 127);
  maxSegments = std::clamp(maxSegments, 1u, unsigned(NPUCC_PWL_SEGMENTS));
  Cover c{target, lo, hi};
  // The bound: the smallest e the greedy cover meets (binary search; 255
  // always succeeds with one constant segment when maxSegments is 1).
  int32_t good = 255, bad = -1;
  std::vector<PwlSegment> best = c.cover(255, maxSegments);
  while (good - bad > 1) {
    int32_t mid = (good + bad) / 2;
    auto s = c.cover(mid, maxSegments);
    if (s.empty()) {
      bad = mid;
    } else {
      good = mid, best = std::move(s);
    }
  }
  PwlFit f{best, 0};
  for (int32_t x = lo; x <= hi; ++x)
    f.maxError = std::max(f.maxError, std::abs(pwlValue(best, x) - target(x)));
  return f;
}

std::optional<PwlFit> fitFusedActivation(const ir::Node &n, unsigned maxSegments) {
  auto core = coreOf(n);
  std::optional<LutTable> lut = fusedLut(n);
  if (!core || !lut)
    return std::nullopt;
  const ir::Node &c = core->node;
  const ir::Value *mid = c.output(0);
  double lo = c.hasAttr("act_min") ? double(c.attrFloat("act_min", 0.0f)) : -INFINITY;
  double hi = c.hasAttr("act_max") ? double(c.attrFloat("act_max", 0.0f)) : INFINITY;
  ClampBounds cb = activationBounds(lo, hi, mid->quant->scale[0],
                                    mid->quant->zeroPoint.empty() ? 0 : mid->quant->zeroPoint[0]);
  const LutTable &t = *lut;
  return fitPwl([&](int32_t x) { return std::clamp(t[size_t(x + 128)], -128, 127); }, cb.lo, cb.hi,
                maxSegments);
}

std::vector<PwlSegment> pwlClamp(int32_t lo, int32_t hi) {
  return fitPwl([&](int32_t x) { return std::clamp(x, lo, hi); }, lo, hi, 3).segments;
}

int32_t pwlValue(const std::vector<PwlSegment> &segments, int32_t y) {
  std::vector<uint8_t> t = pwlTable(segments);
  return npucc_stage_act_pwl(y, t.data());
}

std::vector<uint8_t> pwlTable(const std::vector<PwlSegment> &segments) {
  std::vector<uint8_t> t(NPUCC_PWL_TABLE_BYTES, 0);
  for (size_t i = 0; i < size_t(NPUCC_PWL_SEGMENTS) && !segments.empty(); ++i) {
    const PwlSegment &s = segments[std::min(i, segments.size() - 1)];
    uint64_t r = uint64_t(s.shift & 0xFFu) | (uint64_t(uint16_t(int16_t(s.mul))) << 8) |
                 ((uint64_t(s.start) & ((uint64_t(1) << 36) - 1)) << 24);
    for (size_t b = 0; b < 8; ++b)
      t[i * 8 + b] = uint8_t(r >> (8 * b));
    t[size_t(NPUCC_PWL_SEGMENTS) * 8 + i] = uint8_t(int8_t(s.add));
  }
  return t;
}

void setPwlAttr(ir::Node &n, const std::vector<PwlSegment> &segments) {
  std::vector<int64_t> v;
  for (const PwlSegment &s : segments)
    v.insert(v.end(), {s.start, s.mul, int64_t(s.shift), s.add});
  n.attrs["act_pwl"] = v;
}

std::optional<std::vector<PwlSegment>> pwlOf(const ir::Node &n) {
  if (!n.hasAttr("act_pwl"))
    return std::nullopt;
  std::vector<int64_t> v = n.attrInts("act_pwl");
  std::vector<PwlSegment> s;
  for (size_t i = 0; i + 3 < v.size(); i += 4)
    s.push_back({v[i], int32_t(v[i + 1]), uint32_t(v[i + 2]), int32_t(v[i + 3])});
  return s;
}

} // namespace npucc::quant
