//===- Equalize.cpp - Channel equalization before int8 quantization -------===//
//
// See include/npucc/quant/Equalize.h. For each eligible pair the weight
// constants (and P's bias) are replaced by rescaled copies, so constants that
// other nodes share are never modified.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/Equalize.h"

#include <algorithm>
#include <cmath>

namespace npucc::quant {

using namespace ir;

namespace {

bool isF32Constant(const Value *v) { return v && v->isConstant() && v->dtype == DType::F32; }

/// P: a float Conv with constant weights (and bias) whose fused activation is
/// absent or a Relu (act_min = 0, no act_max): positive scales commute with it.
bool scalableProducer(const Node &p) {
  if (p.kind != OpKind::Conv || p.outputs.size() != 1 || !isF32Constant(p.input(1)))
    return false;
  if (p.input(2) && !isF32Constant(p.input(2)))
    return false;
  if (p.hasAttr("act_max"))
    return false;
  return !p.hasAttr("act_min") || p.attrFloat("act_min", 1.0f) == 0.0f;
}

/// C reads `v` as the data input of a float Conv with constant 4-D weights that is
/// depthwise (group = channels, one input channel per filter) or dense (group 1).
enum class Consumer { None, Depthwise, Dense };
Consumer consumerKind(const Node &c, const Value *v) {
  if (c.kind != OpKind::Conv || c.input(0) != v || !isF32Constant(c.input(1)) ||
      v->shape.size() != 4 || c.input(1)->shape.size() != 4)
    return Consumer::None;
  int64_t ch = v->shape[1], group = c.attrInt("group", 1);
  const Shape &ws = c.input(1)->shape;
  if (group == ch && ws[1] == 1 && ws[0] % ch == 0)
    return Consumer::Depthwise;
  if (group == 1 && ws[1] == ch)
    return Consumer::Dense;
  return Consumer::None;
}

/// Per input channel k of C's weights [O][I][kh][kw], max |w| over filters and taps.
std::vector<double> inputChannelRanges(const Value *w) {
  int64_t ch = w->shape[1], taps = w->shape[2] * w->shape[3];
  std::vector<double> r(size_t(ch), 0.0);
  const Tensor &t = *w->constant;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    size_t k = size_t((i / taps) % ch);
    r[k] = std::max(r[k], std::fabs(t.getDouble(i)));
  }
  return r;
}

/// A copy of constant `w` with element i multiplied by f(i).
template <typename F> Value *scaledCopy(Graph &g, const Value *w, F f) {
  Tensor t = *w->constant;
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, t.getDouble(i) * f(i));
  return g.addConstant(g.uniqueName(w->name + "_eq"), std::move(t));
}

} // namespace

int equalizeChannels(Graph &g, const std::map<std::string, ValueStats> &stats,
                     const EqualizeOptions &o) {
  int count = 0;
  std::vector<Node *> nodes;
  for (const auto &n : g.nodes())
    nodes.push_back(n.get());
  for (Node *p : nodes) {
    if (!scalableProducer(*p))
      continue;
    Value *v = p->output(0);
    std::vector<Node *> us = g.users(v);
    if (us.size() != 1 || g.isGraphOutput(v))
      continue;
    Node *c = us[0];
    Consumer kind = consumerKind(*c, v);
    auto it = stats.find(v->name);
    if (kind == Consumer::None || it == stats.end() ||
        it->second.channelAbsMax.size() != size_t(v->shape[1]))
      continue;
    const std::vector<double> &r = it->second.channelAbsMax;
    std::vector<double> w = kind == Consumer::Dense ? inputChannelRanges(c->input(1))
                                                    : std::vector<double>(r.size(), 1.0);
    // t_k = sqrt(w_k / R_k), scaled so that the largest is 1; channels that are
    // never non-zero (in the data or in C's weights) keep t_k = 1.
    std::vector<double> t(r.size(), 0.0);
    double tmax = 0;
    for (size_t k = 0; k < t.size(); ++k)
      if (r[k] > 0 && w[k] > 0)
        tmax = std::max(tmax, t[k] = std::sqrt(w[k] / r[k]));
    if (!(tmax > 0))
      continue;
    bool changes = false;
    for (double &x : t) {
      x = x > 0 ? std::max(x / tmax, 1.0 / o.maxScale) : 1.0;
      changes = changes || x != 1.0;
    }
    if (!changes)
      continue;
    int64_t ch = v->shape[1];
    const Value *wp = p->input(1);
    int64_t perOut = wp->constant->numElements() / wp->shape[0];
    p->inputs[1] = scaledCopy(g, wp, [&](int64_t i) { return t[size_t(i / perOut)]; });
    if (p->input(2))
      p->inputs[2] = scaledCopy(g, p->input(2), [&](int64_t i) { return t[size_t(i)]; });
    const Value *wc = c->input(1);
    if (kind == Consumer::Depthwise) {
      // Filter f reads input channel f / multiplier.
      int64_t perFilter = wc->constant->numElements() / wc->shape[0], mult = wc->shape[0] / ch;
      c->inputs[1] =
          scaledCopy(g, wc, [&](int64_t i) { return 1.0 / t[size_t(i / perFilter / mult)]; });
    } else {
      int64_t taps = wc->shape[2] * wc->shape[3];
      c->inputs[1] = scaledCopy(g, wc, [&](int64_t i) { return 1.0 / t[size_t((i / taps) % ch)]; });
    }
    ++count;
  }
  return count;
}

} // namespace npucc::quant
