//===- Equalize.h - Channel equalization before int8 quantization ----------===//
//
// A per-tensor int8 activation gives every channel the same step, so a channel
// whose values are 50x smaller than its neighbours' keeps only a few levels.
// For a float Conv P whose output v feeds only one float Conv C (through
// nothing but P's fused Relu, act_min = 0, or no activation), output channel
// k of P can be multiplied by t_k > 0 and input channel k of C divided by it
// without changing C's output (Relu commutes with a positive scale; zero
// padding stays zero). P's weights are quantized per output channel, so its
// int8 values do not change (but for float rounding of an exact .5 tie); only
// v's quantization and C's weights do.
//
// With R_k the calibrated max |v_k| and w_k the largest weight of C reading
// channel k: t_k = sqrt(w_k / R_k) (then scaled so that max t = 1, and at
// least 1 / maxScale) leaves channel k with range sqrt(R_k w_k) in v and in
// C's weights alike, the balance of Nagel et al., "Data-Free Quantization"
// (ICCV 2019). For a depthwise C (weights quantized per channel: any scale is
// free there) w_k = 1, i.e. t_k proportional to 1/sqrt(R_k): halfway to equal
// channel ranges, which keeps headroom for channels whose calibrated maximum
// underestimates their real one (full equalization, t_k = R / R_k, clipped
// such channels and lost 1-2 dB, docs/quantization.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/quant/Calibrate.h"

#include <map>
#include <string>

namespace npucc::quant {

struct EqualizeOptions {
  double maxScale = 64.0; // spread limit: t_k >= max t / maxScale
};

/// Rescales every eligible (P, C) pair of the float graph `g` in place, from
/// the channel maxima in `stats` (collectStats of the same graph). Returns how
/// many activations were rescaled; their statistics are stale afterwards. The
/// graph computes the same function (up to float rounding).
int equalizeChannels(ir::Graph &g, const std::map<std::string, ValueStats> &stats,
                     const EqualizeOptions &o = {});

} // namespace npucc::quant
