//===- Patches.h - Row-stripe (patch) execution of the leading CPU layers --===//
//
// MCUNetV2's patch-based inference, first version: the leading chain of a
// model (its float input's per-tensor QuantizeLinear, then int8 2-D Convs,
// MaxPools and AveragePools; or float ones from the float input; each value
// read by the next layer only) runs in
// stripes of output rows of the chain's last layer, top to bottom. For each
// stripe the rows every layer needs are computed backwards (inputRows:
// kernel, stride, dilation, top pad), each layer's kernel runs on its row
// range with the stripe's own pads (the top pad only where the range touches
// the tensor's top, the bottom one only at its bottom), and the intermediates
// live in small stripe buffers instead of whole tensors. A layer computes
// only rows no earlier stripe computed: the halo rows its consumer's window
// shares with the previous stripe are kept in a small per-layer halo buffer
// and copied back in front of the new rows (npucc_copy_rows), so nothing is
// recomputed and the extra work is those copies (MCUNetV2 recomputes the
// halo instead; its 2-D patches cannot keep it). The chain's input rows are
// copied into a stripe buffer or, for the QuantizeLinear, quantized plane by
// plane from the model input; the last layer's rows are copied into its
// whole tensor. Same kernels, same arithmetic: bit-exact.
//
// Buffers of the step (arena scratch): X, every layer's new output rows; Y,
// every layer's assembled input rows (halo + new); one halo buffer per layer
// after the first; S, the kernels' own scratch.
//
// The lowering (lib/lower/CpuLowering.cpp) tries chain lengths and stripe
// heights whose estimated extra instructions stay within
// CpuLowerOptions::patchBudget of the model's and keeps the program with the
// smallest arena (the whole-tensor program when nothing is smaller). The loop
// IR holds the unrolled stripes: every call's comment names its stripe.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/lir/Program.h"
#include "npucc/lower/CpuLowering.h"

#include <string>
#include <utility>
#include <vector>

namespace npucc::lower::patch {

/// A sliding window along H: kernel K, stride S, dilation D, top pad PT over
/// H input rows giving OH output rows.
struct RowWindow {
  int64_t K = 1, S = 1, D = 1, PT = 0, H = 1, OH = 1;
};

/// Input rows [begin, end) and the pads (rows of the window outside the tensor)
/// above and below them.
struct RowSpan {
  int64_t begin = 0, end = 0, padTop = 0, padBottom = 0;
};

/// The input rows that output rows [o0, o1) of `w` read; begin == end when the
/// window lies in the padding only.
RowSpan inputRows(const RowWindow &w, int64_t o0, int64_t o1);

/// One layer of a chain.
struct Layer {
  const ir::Node *node = nullptr;
  bool quantize = false; // float -> int8 QuantizeLinear (row for row)
  RowWindow win;
  int64_t C = 0, W = 0, M = 0, OW = 0;                  // input channels and width, output's
  size_t inSize = 1, outSize = 1;                       // bytes of an input and an output element
  int64_t inRow() const { return W * int64_t(inSize); } // bytes of an input row
  int64_t outRow() const { return OW * int64_t(outSize); } // bytes of an output row
};

/// One stripe, per layer: the output rows it computes (none: begin == end), the
/// input rows they read, how many of those (at the top) come from the halo
/// buffer, and how many of the last input rows go to the halo buffer for the
/// next stripe that computes this layer.
struct Stripe {
  std::vector<std::pair<int64_t, int64_t>> out;
  std::vector<RowSpan> in;
  std::vector<int64_t> kept, save;
};

struct PatchPlan {
  std::vector<Layer> layers;
  std::vector<Stripe> stripes;
  int64_t rows = 0;  // output rows of the last layer per stripe (the last may have fewer)
  int64_t calls = 0; // kernel calls and copies of the unrolled stripes
  // Estimated Cortex-M4 instructions: the chain layer by layer, the extra of the
  // stripes (the copies and each extra call's overhead), the whole model.
  double baseCost = 0, extraCost = 0, modelCost = 0;
  bool contains(const ir::Node *n) const;
  const ir::Node *last() const { return layers.back().node; }
  /// One line: layers, stripes, estimated extra instructions.
  std::string summary() const;
};

/// The leading chain of `g` that patches can run (empty when there is none).
std::vector<Layer> leadingChain(const ir::Graph &g);
/// Stripes of `rows` output rows over the first `n` layers of `chain`; false when a
/// stripe would read no input row.
bool makePlan(const std::vector<Layer> &chain, size_t n, int64_t rows, PatchPlan &plan);
/// Estimated Cortex-M4 instructions of a node run whole (CpuCost's model), and of
/// every node of the graph.
double nodeCost(const ir::Node &n);
double modelCost(const ir::Graph &g);
/// Fills plan.baseCost and plan.extraCost (plan.modelCost is the caller's).
void estimate(PatchPlan &plan);

/// The plans the lowering tries: every chain length from 2 layers, stripes of
/// ceil(OH / k) rows for k = 2, 3, 4, 6, 8, 12, ... 64, at most 400 calls, estimated
/// extra instructions within `budget` of the model's; fewest calls first.
std::vector<PatchPlan> candidatePlans(const ir::Graph &g, double budget);

/// The loop IR of the plan: stripe buffers from ctx.scratch (requested in the same
/// order and sizes in the planning and the lowering phase), chain input and output
/// through ctx.buffer.
Status lowerPatches(const PatchPlan &plan, LowerContext &ctx, std::vector<lir::Instr> &out);

} // namespace npucc::lower::patch
