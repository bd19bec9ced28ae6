//===- FoldBatchNorm.cpp - Fold inference BatchNorm into weights ----------===//
//
// BatchNormalization (inference) computes per channel c
//   y = scale[c] * (x - mean[c]) / sqrt(var[c] + eps) + B[c] = a[c] * x + b[c]
// When x is the result of a Conv, ConvTranspose or Gemm used only by the BN,
// with constant float weights / bias and constant BN parameters, the affine
// map is folded into new constant weights and bias of the producer and the
// BN is removed (the producer then defines the BN's result, keeping its name).
//   Conv          W[m, ...] *= a[m];        bias[m] = bias[m]*a[m] + b[m]
//   ConvTranspose W[c, j, ...] *= a[o(c,j)] with o = (c / (C/g)) * (M/g) + j
//   Gemm          B[:, n] (or B[n, :] when transB) *= a[n];
//                 C'[n] = beta*C[n]*a[n] + b[n], beta := 1 (C of shape [], [1],
//                 [N] or [1,N]; other C shapes are not folded)
// A producer carrying a fused activation (act_min/act_max) is not folded.
// Standalone BNs stay. Statistics: fold-batchnorm.folded.
//
//===----------------------------------------------------------------------===//
#include "npucc/passes/Pass.h"

#include "PassUtils.h"

#include <cmath>

namespace npucc::passes {

namespace {

struct Affine {
  std::vector<double> a, b; // y = a*x + b per channel
};

std::optional<Affine> bnAffine(const ir::Node &bn, int64_t channels) {
  Affine r;
  const ir::Tensor *t[4];
  for (int i = 0; i < 4; ++i) {
    const ir::Value *v = bn.input(static_cast<size_t>(i + 1));
    t[i] = util::constantData(v);
    if (!t[i] || !ir::isFloat(v->dtype) || t[i]->numElements() != channels)
      return std::nullopt;
  }
  double eps = bn.attrFloat("epsilon", 1e-5f);
  for (int64_t c = 0; c < channels; ++c) {
    double var = t[3]->getDouble(c) + eps;
    if (!(var > 0))
      return std::nullopt;
    double a = t[0]->getDouble(c) / std::sqrt(var);
    r.a.push_back(a);
    r.b.push_back(t[1]->getDouble(c) - t[2]->getDouble(c) * a);
  }
  return r;
}

/// The constant float weights of `p` at input `i`, or null.
const ir::Tensor *floatWeights(const ir::Node &p, size_t i) {
  const ir::Value *w = p.input(i);
  return util::isPlainF32(w) ? util::constantData(w) : nullptr;
}

/// Per-channel bias of length `channels` from an optional constant input
/// (absent: zeros). Fails for non-constant or badly shaped bias.
std::optional<std::vector<double>> channelBias(const ir::Node &p, size_t i, int64_t channels) {
  const ir::Value *v = p.input(i);
  if (!v)
    return std::vector<double>(static_cast<size_t>(channels), 0.0);
  const ir::Tensor *t = util::isPlainF32(v) ? util::constantData(v) : nullptr;
  if (!t)
    return std::nullopt;
  const ir::Shape &s = t->shape();
  int64_t n = t->numElements();
  // Must broadcast along the last (channel) axis only.
  for (size_t d = 0; d + 1 < s.size(); ++d)
    if (s[d] != 1)
      return std::nullopt;
  if (n != 1 && n != channels)
    return std::nullopt;
  std::vector<double> r;
  for (int64_t c = 0; c < channels; ++c)
    r.push_back(t->getDouble(n == 1 ? 0 : c));
  return r;
}

/// Scales W in place: element with flat index e gets a[channelOf(e)].
template <typename F> ir::Tensor scaleWeights(const ir::Tensor &w, const Affine &bn, F channelOf) {
  ir::Tensor r = w;
  float *d = r.data<float>();
  for (int64_t e = 0; e < r.numElements(); ++e)
    d[e] = static_cast<float>(d[e] * bn.a[static_cast<size_t>(channelOf(e))]);
  return r;
}

bool foldInto(ir::Graph &g, ir::Node &p, const ir::Node &bn) {
  const ir::Value *x = p.output(0);
  if (!util::isPlainF32(x) || x->shape.size() < 2 || p.hasAttr("act_min") ||
      p.hasAttr("act_max"))
    return false;
  int64_t channels = x->shape[1];
  const ir::Tensor *w = floatWeights(p, 1);
  if (!w || w->shape().size() < 2)
    return false;
  std::optional<Affine> aff = bnAffine(bn, channels);
  if (!aff)
    return false;

  ir::Tensor newW;
  size_t biasIdx = 2;
  std::vector<double> bias;
  if (p.kind == ir::OpKind::Conv) {
    if (w->shape()[0] != channels)
      return false;
    int64_t per = w->numElements() / channels;
    newW = scaleWeights(*w, *aff, [&](int64_t e) { return e / per; });
  } else if (p.kind == ir::OpKind::ConvTranspose) {
    int64_t group = p.attrInt("group", 1);
    int64_t cin = w->shape()[0], mPerGroup = w->shape()[1];
    if (group <= 0 || cin % group != 0 || mPerGroup * group != channels)
      return false;
    int64_t spatial = w->numElements() / (cin * mPerGroup);
    int64_t cinPerGroup = cin / group;
    newW = scaleWeights(*w, *aff, [&](int64_t e) {
      int64_t c = e / (mPerGroup * spatial), j = (e / spatial) % mPerGroup;
      return (c / cinPerGroup) * mPerGroup + j;
    });
  } else if (p.kind == ir::OpKind::Gemm) {
    if (x->shape.size() != 2 || w->shape().size() != 2)
      return false;
    bool transB = p.attrInt("transB", 0) != 0;
    int64_t cols = w->shape()[1];
    if ((transB ? w->shape()[0] : cols) != channels)
      return false;
    newW = scaleWeights(*w, *aff, [&](int64_t e) { return transB ? e / cols : e % cols; });
  } else {
    return false;
  }
  auto oldBias = channelBias(p, biasIdx, channels);
  if (!oldBias)
    return false;
  double beta = p.kind == ir::OpKind::Gemm ? p.attrFloat("beta", 1.0f) : 1.0;
  std::vector<float> nb;
  for (int64_t c = 0; c < channels; ++c) {
    size_t i = static_cast<size_t>(c);
    nb.push_back(static_cast<float>(beta * (*oldBias)[i] * aff->a[i] + aff->b[i]));
  }

  const ir::Value *wv = p.inputs[1];
  const ir::Value *bv = p.input(biasIdx);
  ir::Value *newWv = g.addConstant(wv->name + "_bn", std::move(newW));
  ir::Value *newBv = g.addConstant((bv ? bv->name : wv->name + "_bias") + "_bn",
                                   ir::Tensor::fromFloats({channels}, nb));
  p.inputs[1] = newWv;
  if (p.inputs.size() <= biasIdx)
    p.inputs.resize(biasIdx + 1, nullptr);
  p.inputs[biasIdx] = newBv;
  if (p.kind == ir::OpKind::Gemm && p.hasAttr("beta"))
    p.attrs["beta"] = 1.0f;
  return true;
}

} // namespace

Status runFoldBatchNorm(ir::Graph &g, PassContext &ctx) {
  std::vector<ir::Node *> bns;
  for (auto &n : g.nodes())
    if (n->kind == ir::OpKind::BatchNormalization && n->outputs.size() == 1)
      bns.push_back(n.get());

  util::UseIndex uses(g);
  int64_t folded = 0;
  for (ir::Node *bn : bns) {
    ir::Value *x = bn->input(0);
    ir::Value *y = bn->output(0);
    if (!uses.hasSingleUse(x) || !y || y->shape != x->shape || !util::isPlainF32(y))
      continue;
    ir::Node *p = x->producer;
    if (p->outputs.size() != 1 || !foldInto(g, *p, *bn))
      continue;
    uses.dropNode(bn);
    util::absorbConsumer(g, p, 0, bn, y);
    ++folded;
  }
  if (folded) {
    g.removeUnusedValues();
    ctx.bump("fold-batchnorm.folded", folded);
  }
  return success();
}

} // namespace npucc::passes
