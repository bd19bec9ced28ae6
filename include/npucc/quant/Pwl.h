//===- Pwl.h - The pwl activation stage's segments: fit, table, attribute --===//
//
// An NPU whose activation stage is pwl (npucc_stage_act_pwl, the K210 KPU's
// piecewise-linear activation) maps the requantized value y to
// round_half_even((y - start) * mul / 2^shift) + add of the last segment with
// start <= y. The compiler fits the segments to what the graph computes after
// the MAC: a fused clamp (exact) and a fused activation (quant::fusedLut, by a
// fit whose worst error is reported by `npucc check`'s per-layer distance).
// Every fit is constant outside the clamp's range [lo, hi], so the segments
// give the same output for y and for clamp(y, lo, hi): the interpreter, which
// sees the MAC part's clamped int8 value, computes what the NPU computes.
// docs/target.md, "activation: pwl".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace npucc::quant {

/// One segment; the widths are the K210 record's (start 36 bits signed, mul
/// 16 bits signed, shift 8 bits unsigned, add int8).
struct PwlSegment {
  int64_t start = 0;
  int32_t mul = 0;
  uint32_t shift = 0;
  int32_t add = 0;
  bool operator==(const PwlSegment &o) const {
    return start == o.start && mul == o.mul && shift == o.shift && add == o.add;
  }
};

struct PwlFit {
  std::vector<PwlSegment> segments; // 1..maxSegments, starts increasing
  int32_t maxError = 0;             // worst |f(x) - target(x)| over x in [lo, hi], in steps
};

/// The fewest segments (at most `maxSegments`, 1..16) whose worst error over
/// every integer x in [lo, hi] (within int8) against `target` is smallest:
/// the smallest bound e for which a greedy cover succeeds (each segment
/// starts at the first point not yet covered, is extended while some
/// (mul, shift, add) keeps every point within e, trying mul 0 first, then
/// every multiplier of the slopes the end points allow at the finest shift
/// with at most 512 candidates). The first segment is constant below lo and
/// the last above hi (mul 0, or a slope that saturates the int8 output there).
/// Deterministic.
PwlFit fitPwl(const std::function<int32_t(int32_t)> &target, int32_t lo, int32_t hi,
              unsigned maxSegments);

/// The fit of a MAC node's fused activation (quant::fusedLut after the MAC
/// part's fused clamp [lo, hi], in the value in between): target(x) =
/// lut[x + 128] over [lo, hi]. nullopt when `n` has no fused activation.
std::optional<PwlFit> fitFusedActivation(const ir::Node &n, unsigned maxSegments);

/// The clamp to [lo, hi] (within int8) exactly: at most three segments.
std::vector<PwlSegment> pwlClamp(int32_t lo, int32_t hi);

/// The segments' value at y, as the NPU computes it (npucc_stage_act_pwl).
int32_t pwlValue(const std::vector<PwlSegment> &segments, int32_t y);

/// The NPU's table (NPUCC_PWL_TABLE_BYTES): the segments' records, then
/// their add bytes; unused records repeat the last segment (same start, so
/// the same choice). Error-free for 1..16 segments within the widths.
std::vector<uint8_t> pwlTable(const std::vector<PwlSegment> &segments);

/// The attribute npu-partition writes on a node with a fused activation on a
/// pwl NPU: act_pwl = [start, mul, shift, add] per segment.
void setPwlAttr(ir::Node &n, const std::vector<PwlSegment> &segments);
/// The segments of attribute act_pwl; nullopt when `n` has none.
std::optional<std::vector<PwlSegment>> pwlOf(const ir::Node &n);

} // namespace npucc::quant
