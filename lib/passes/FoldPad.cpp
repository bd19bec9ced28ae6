//===- FoldPad.cpp - Fold a zero Pad into the consumer's pads -------------===//
//
//   %p = Pad(%x, @pads, @zero) {mode="constant"}
//   %y = Conv(%p, @w, ...) {pads=[...]}
// becomes Conv(%x, ...) with the Pad's spatial amounts added to its pads when
//   - the Pad is mode "constant" with a constant pad value of 0 (or absent),
//     constant non-negative pads, no `axes` input, and pads only the spatial
//     dimensions (not batch or channel);
//   - its result is plain f32, used only as input 0 of a Conv or of an
//     AveragePool with count_include_pad=1 and ceil_mode=0 (padded zeros are
//     then averaged exactly like the Pad's zeros) and is not a graph output;
//   - the consumer has no auto_pad other than NOTSET.
// MaxPool is never a target (its implicit padding is -inf, not 0).
// Statistics: fold-pad.folded.
//
//===----------------------------------------------------------------------===//
#include "npucc/passes/Pass.h"

#include "PassUtils.h"

namespace npucc::passes {

namespace {

/// The Pad's per-dimension amounts [b0, b1, ..., e0, e1, ...] if it is a
/// foldable zero pad, else empty.
std::vector<int64_t> zeroPadAmounts(const ir::Node &pad) {
  const ir::Value *x = pad.input(0);
  if (!util::isPlainF32(x) || pad.attrString("mode", "constant") != "constant" || pad.input(3))
    return {};
  if (const ir::Value *cv = pad.input(2)) {
    auto v = util::scalarConstant(cv);
    if (!v || *v != 0.0)
      return {};
  }
  const ir::Tensor *pads = util::constantData(pad.input(1));
  size_t rank = x->shape.size();
  if (!pads || rank < 3 || pads->numElements() != static_cast<int64_t>(2 * rank))
    return {};
  std::vector<int64_t> r = pads->toInts();
  for (int64_t p : r)
    if (p < 0)
      return {};
  if (r[0] || r[1] || r[rank] || r[rank + 1])
    return {};
  return r;
}

bool isTarget(const ir::Node &c) {
  if (c.attrString("auto_pad", "NOTSET") != "NOTSET")
    return false;
  if (c.kind == ir::OpKind::Conv)
    return true;
  if (c.kind == ir::OpKind::AveragePool)
    return c.attrInt("count_include_pad", 0) == 1 && c.attrInt("ceil_mode", 0) == 0;
  return false;
}

} // namespace

Status runFoldPad(ir::Graph &g, PassContext &ctx) {
  std::vector<ir::Node *> pads;
  for (auto &n : g.nodes())
    if (n->kind == ir::OpKind::Pad)
      pads.push_back(n.get());

  util::UseIndex uses(g);
  int64_t folded = 0;
  for (ir::Node *pad : pads) {
    ir::Value *out = pad->output(0);
    if (!out || uses.isGraphOutput(out) || uses.numUses(out) != 1)
      continue;
    std::vector<ir::Node *> users = uses.users(out);
    if (users.size() != 1)
      continue;
    ir::Node *c = users[0];
    if (!isTarget(*c) || c->input(0) != out)
      continue;
    std::vector<int64_t> amounts = zeroPadAmounts(*pad);
    if (amounts.empty())
      continue;
    size_t rank = amounts.size() / 2, spatial = rank - 2;
    std::vector<int64_t> cp = c->attrInts("pads", std::vector<int64_t>(2 * spatial, 0));
    if (cp.size() != 2 * spatial)
      continue;
    for (size_t i = 0; i < spatial; ++i) {
      cp[i] += amounts[2 + i];
      cp[spatial + i] += amounts[rank + 2 + i];
    }
    c->attrs["pads"] = cp;
    c->attrs.erase("auto_pad");
    c->inputs[0] = pad->inputs[0];
    uses.dropNode(pad);
    uses.addUse(c, c->inputs[0]);
    g.eraseNode(pad);
    ++folded;
  }
  if (folded) {
    g.removeUnusedValues();
    ctx.bump("fold-pad.folded", folded);
  }
  return success();
}

} // namespace npucc::passes
