//===- InsertQdq.cpp - Float graph + calibrated ranges -> QDQ graph --------===//
//
// For each quantizable node (the ops fold-qdq turns into typed int8 ops, see
// docs/quantization.md) in topological order:
//  - its output %y is renamed away: the node now writes %y_f, followed by
//    %y_q = QuantizeLinear(%y_f) and %y = DequantizeLinear(%y_q), so every
//    consumer (and a graph output) keeps the name %y;
//  - each float activation input gets QuantizeLinear -> DequantizeLinear
//    (once per value) unless it already comes from such a pair;
//  - weights (Conv input 1, Gemm/MatMul constant input 1) become an int8
//    constant, symmetric per output channel (or per tensor, or at
//    power-of-two scales, as QdqOptions::weightRule says) + DequantizeLinear;
//    biases an int32 constant at scale s_x * s_w[c] + DequantizeLinear (a Conv's bias
//    first corrected for the mean shift the weight rounding causes, from the
//    input's calibrated channel means); other float constants int8 per tensor.
// Data movement ops (Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Identity, Slice, Gather, and every output of Split), MaxPool, Pad and
// Resize (nearest) reuse their input's parameters; Softmax (last axis only: the integer form's)
// outputs use scale 1/256, zero point -128.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/InsertQdq.h"
#include "npucc/quant/IntegerForms.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace npucc::quant {

using namespace ir;

QuantParams activationParams(const Range &r, bool powerOfTwo) {
  double lo = std::min(0.0, static_cast<double>(r.min));
  double hi = std::max(0.0, static_cast<double>(r.max));
  if (hi - lo < 1e-6) // all zeros in calibration: a unit range, not a huge multiplier
    hi = lo + 1.0;
  double scale = (hi - lo) / 255.0;
  if (powerOfTwo)
    scale = std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(scale))));
  float s = static_cast<float>(scale);
  long zp = std::lround(-128.0 - lo / s);
  QuantParams q;
  q.scale = {s};
  q.zeroPoint = {static_cast<int32_t>(std::clamp(zp, -128L, 127L))};
  return q;
}

namespace {

/// Data movement plus Pad and Resize: the output keeps the input's parameters.
bool keepsParams(OpKind k) { return isDataMovement(k) || k == OpKind::Pad || k == OpKind::Resize; }

bool isPlainF32(const Value *v) { return v && v->dtype == DType::F32 && !v->quant; }

/// Number of leading inputs that carry quantized data.
size_t dataInputs(const Node &n) {
  switch (n.kind) {
  case OpKind::Conv:
  case OpKind::Gemm:
  case OpKind::Concat:
    return n.inputs.size();
  case OpKind::MatMul:
  case OpKind::Add:
  case OpKind::Mul:
    return 2;
  default:
    return 1;
  }
}

bool softmaxOnLastAxis(const Node &n) {
  int64_t rank = n.input(0) ? static_cast<int64_t>(n.input(0)->shape.size()) : 0;
  int64_t axis = n.attrInt("axis", -1);
  return axis == -1 || axis == rank - 1;
}

/// True when the node has an integer form fold-qdq can produce.
bool quantizable(const Node &n) {
  if (n.kind == OpKind::Split) { // data movement with several outputs
    for (const Value *o : n.outputs)
      if (!isPlainF32(o))
        return false;
    return !n.outputs.empty();
  }
  if (n.outputs.size() != 1 || !isPlainF32(n.output(0)))
    return false;
  switch (n.kind) {
  case OpKind::Conv:
    return n.input(1) && n.input(1)->isConstant() && isPlainF32(n.input(1)) &&
           (!n.input(2) || (n.input(2)->isConstant() && n.input(2)->shape.size() == 1));
  case OpKind::Gemm: {
    if (n.attrInt("transA", 0) != 0 || n.attrFloat("alpha", 1.0f) != 1.0f ||
        n.attrFloat("beta", 1.0f) != 1.0f || !n.input(1) || !n.input(1)->isConstant() ||
        n.input(1)->shape.size() != 2)
      return false;
    const Value *c = n.input(2);
    int64_t outCh = n.input(1)->shape[n.attrInt("transB", 0) ? 0 : 1];
    return !c || (c->isConstant() && c->shape.size() == 1 && c->shape[0] == outCh);
  }
  case OpKind::MatMul:
  case OpKind::Add:
  case OpKind::Mul:
  case OpKind::AveragePool:
  case OpKind::GlobalAveragePool:
  case OpKind::ReduceMean:
  case OpKind::Concat:
    return true;
  case OpKind::Relu: // standalone (fuse-activation folds the others into their op)
    return true;
  case OpKind::Clip: // a clamp on the integers: constant bounds only
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] &&
          !(n.inputs[i]->isConstant() && n.inputs[i]->constant->numElements() == 1))
        return false;
    return true;
  case OpKind::Softmax: // the integer Softmax works along the last axis only
    return softmaxOnLastAxis(n);
  case OpKind::Pad:    // fold-qdq quantizes the pad value
  case OpKind::Resize: // nearest picks elements; linear would need a rescale
    return movesElementsExactly(n);
  default:
    return isDataMovement(n.kind) || hasLutForm(n.kind);
  }
}

/// Symmetric int8 weights: one scale per channel along `axis`, or one for
/// the tensor; scales 2^k when the rule asks for powers of two.
struct WeightQ {
  Tensor q;
  std::vector<float> scales; // one per channel, or one
};

WeightQ quantizeWeights(const Tensor &w, int axis, const WeightRule &rule) {
  const Shape &s = w.shape();
  int64_t ch = s.empty() || !rule.perChannel ? 1 : s[static_cast<size_t>(axis)], inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; rule.perChannel && d < s.size(); ++d)
    inner *= s[d]; // per tensor: ch = 1, every element in channel 0
  std::vector<double> amax(static_cast<size_t>(ch), 0.0);
  int64_t n = w.numElements();
  for (int64_t i = 0; i < n; ++i) {
    size_t c = static_cast<size_t>((i / inner) % ch);
    amax[c] = std::max(amax[c], std::fabs(w.getDouble(i)));
  }
  WeightQ r{Tensor(DType::I8, s), {}};
  for (double a : amax) {
    double sc = a > 0 ? a / 127.0 : 1.0;
    if (rule.powerOfTwo)
      sc = std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(sc))));
    r.scales.push_back(static_cast<float>(sc));
  }
  for (int64_t i = 0; i < n; ++i) {
    double sc = r.scales[static_cast<size_t>((i / inner) % ch)];
    r.q.setInt(i, std::clamp<long>(std::lround(w.getDouble(i) / sc), -127, 127));
  }
  return r;
}

class Inserter {
public:
  Inserter(Graph &g, const std::map<std::string, Range> &ranges, const QdqOptions &o)
      : G(g), Ranges(ranges), Opts(o) {}

  Result<QdqStats> run() {
    std::vector<Node *> order;
    for (const auto &n : G.nodes())
      order.push_back(n.get());
    QdqStats st;
    for (Node *n : order) {
      if (!quantizable(*n) || !hasRanges(*n)) {
        st.floatOps.push_back(n->name + " (" + n->opName() + ")");
        continue;
      }
      WeightRule rule = Opts.weightRule ? Opts.weightRule(*n) : WeightRule();
      if (!rule.isDefault() && hasWeights(*n))
        st.constrained.push_back(n->name + " (" + n->opName() + "): " + ruleText(rule));
      rewrite(*n, rule);
      ++st.quantizedOps;
    }
    std::string err;
    if (!G.topoSort(&err))
      return error("insert-qdq: " + err);
    return st;
  }

private:
  Graph &G;
  const std::map<std::string, Range> &Ranges;
  const QdqOptions &Opts;
  std::map<const Value *, QuantParams> Params; // DQ outputs -> their parameters
  std::map<const Value *, Value *> Dq;         // float value -> its Q/DQ copy

  bool hasRanges(const Node &n) const {
    for (size_t i = 0; i < std::min(dataInputs(n), n.inputs.size()); ++i) {
      const Value *v = n.inputs[i];
      if (v && !v->isConstant() && !Params.count(v) && !Ranges.count(v->name))
        return false;
      if (v && !isPlainF32(v))
        return false;
    }
    return n.kind == OpKind::Softmax || n.kind == OpKind::Split || keepsParams(n.kind) ||
           Ranges.count(n.output(0)->name);
  }

  Value *scalarConst(const std::string &base, DType t, double v) {
    return G.addConstant(G.uniqueName(base), Tensor::scalar(t, v));
  }

  /// Q(src) -> DQ with parameters p; returns (q value, dq value) with dq = `dst` when given.
  Value *addQdq(Value *src, const QuantParams &p, Value *dst, const std::string &base) {
    Value *sc = scalarConst(base + "_scale", DType::F32, p.scale[0]);
    Value *zp = scalarConst(base + "_zero_point", DType::I8, p.zeroPoint[0]);
    Value *q = G.addValue(G.uniqueName(base + "_quantized"), DType::I8, src->shape);
    G.addNode(OpKind::QuantizeLinear, G.uniqueName(base + "_QuantizeLinear"), {src, sc, zp}, {q});
    if (!dst)
      dst = G.addValue(G.uniqueName(base + "_dequantized"), DType::F32, src->shape);
    G.addNode(OpKind::DequantizeLinear, G.uniqueName(base + "_DequantizeLinear"), {q, sc, zp},
              {dst});
    Params[dst] = p;
    return dst;
  }

  /// DQ'd activation for input value v.
  Value *activation(Value *v) {
    if (Params.count(v))
      return v;
    auto it = Dq.find(v);
    if (it != Dq.end())
      return it->second;
    Value *d = addQdq(v, activationParams(Ranges.at(v->name), Opts.powerOfTwoActivations),
                      nullptr, v->name);
    Dq[v] = d;
    return d;
  }

  /// DQ(int8 constant): weights (symmetric, by `rule`) or any other
  /// constant (asymmetric per tensor).
  Value *constantInput(Value *c, int axis, const WeightRule *rule, QuantParams *out) {
    std::string base = c->name;
    if (!rule) {
      double lo = 0, hi = 0;
      for (int64_t i = 0; i < c->constant->numElements(); ++i) {
        lo = std::min(lo, c->constant->getDouble(i));
        hi = std::max(hi, c->constant->getDouble(i));
      }
      QuantParams p = activationParams({static_cast<float>(lo), static_cast<float>(hi)});
      Tensor q(DType::I8, c->shape);
      for (int64_t i = 0; i < q.numElements(); ++i)
        q.setInt(i, std::clamp<long>(std::lround(c->constant->getDouble(i) / p.scale[0]) +
                                         p.zeroPoint[0],
                                     -128, 127));
      Value *qc = G.addConstant(G.uniqueName(base + "_quantized"), std::move(q));
      Value *sc = scalarConst(base + "_scale", DType::F32, p.scale[0]);
      Value *zp = scalarConst(base + "_zero_point", DType::I8, p.zeroPoint[0]);
      Value *d = G.addValue(G.uniqueName(base + "_dequantized"), DType::F32, c->shape);
      G.addNode(OpKind::DequantizeLinear, G.uniqueName(base + "_DequantizeLinear"), {qc, sc, zp},
                {d});
      if (out)
        *out = p;
      return d;
    }
    WeightQ w = quantizeWeights(*c->constant, axis, *rule);
    int64_t ch = static_cast<int64_t>(w.scales.size());
    Value *qc = G.addConstant(G.uniqueName(base + "_quantized"), std::move(w.q));
    Value *sc, *zp;
    if (rule->perChannel) {
      sc = G.addConstant(G.uniqueName(base + "_scale"), Tensor::fromFloats({ch}, w.scales));
      zp = G.addConstant(G.uniqueName(base + "_zero_point"), Tensor(DType::I8, {ch}));
    } else {
      sc = scalarConst(base + "_scale", DType::F32, w.scales[0]);
      zp = scalarConst(base + "_zero_point", DType::I8, 0);
    }
    Value *d = G.addValue(G.uniqueName(base + "_dequantized"), DType::F32, c->shape);
    Node *dq = G.addNode(OpKind::DequantizeLinear, G.uniqueName(base + "_DequantizeLinear"),
                         {qc, sc, zp}, {d});
    if (rule->perChannel)
      dq->attrs["axis"] = static_cast<int64_t>(axis);
    if (out) {
      out->scale = w.scales;
      out->zeroPoint.assign(w.scales.size(), 0);
      out->axis = rule->perChannel ? axis : 0;
    }
    return d;
  }

  /// int32 bias at scale sx * sw[c] + DequantizeLinear.
  Value *biasInput(Value *b, double sx, const QuantParams &wq,
                   const std::vector<double> &correction = {}) {
    int64_t n = b->constant->numElements();
    Tensor q(DType::I32, b->shape);
    std::vector<float> scales;
    for (int64_t c = 0; c < n; ++c) {
      double s = sx * wq.scale[wq.scale.size() == 1 ? 0 : static_cast<size_t>(c)];
      scales.push_back(static_cast<float>(s));
      double real = b->constant->getDouble(c);
      if (static_cast<size_t>(c) < correction.size())
        real -= correction[static_cast<size_t>(c)];
      double v = std::round(real / static_cast<double>(scales.back()));
      q.setInt(c, static_cast<int64_t>(std::clamp(v, -2147483647.0, 2147483647.0)));
    }
    Value *qc = G.addConstant(G.uniqueName(b->name + "_quantized"), std::move(q));
    Value *sc = G.addConstant(G.uniqueName(b->name + "_scale"), Tensor::fromFloats({n}, scales));
    Value *zp = G.addConstant(G.uniqueName(b->name + "_zero_point"), Tensor(DType::I32, {n}));
    Value *d = G.addValue(G.uniqueName(b->name + "_dequantized"), DType::F32, b->shape);
    Node *dq = G.addNode(OpKind::DequantizeLinear, G.uniqueName(b->name + "_DequantizeLinear"),
                         {qc, sc, zp}, {d});
    dq->attrs["axis"] = static_cast<int64_t>(0);
    return d;
  }

  /// Bias correction of a Conv (Nagel et al., data-free quantization): the
  /// expected output shift sum_{i,k} (Wq - W)[o,i,k] * E[x_i] that the weight
  /// rounding causes, from the input's calibrated per-channel means (padding
  /// ignored). Empty when the means are unknown.
  std::vector<double> convBiasCorrection(const Node &n, const Value *x, const Value *w,
                                         const WeightRule &rule) {
    auto it = Ranges.find(x->name);
    if (n.kind != OpKind::Conv || it == Ranges.end() || !w->constant || w->shape.size() < 3 ||
        x->shape.size() < 3)
      return {};
    const std::vector<float> &mean = it->second.channelMean;
    int64_t outCh = w->shape[0], inPerGroup = w->shape[1], group = n.attrInt("group", 1);
    if (group <= 0 || static_cast<int64_t>(mean.size()) != inPerGroup * group || outCh % group)
      return {};
    WeightQ q = quantizeWeights(*w->constant, 0, rule);
    int64_t k = w->constant->numElements() / (outCh * inPerGroup), outPerGroup = outCh / group;
    std::vector<double> inside = tapInsideFraction(n, x->shape, w->shape, k);
    std::vector<double> corr(static_cast<size_t>(outCh), 0.0);
    for (int64_t o = 0; o < outCh; ++o)
      for (int64_t i = 0; i < inPerGroup; ++i) {
        double m = mean[static_cast<size_t>((o / outPerGroup) * inPerGroup + i)];
        for (int64_t j = 0; j < k; ++j) {
          int64_t idx = (o * inPerGroup + i) * k + j;
          double dq = static_cast<double>(q.q.getInt(idx)) *
                      q.scales[q.scales.size() == 1 ? 0 : static_cast<size_t>(o)];
          corr[static_cast<size_t>(o)] +=
              (dq - w->constant->getDouble(idx)) * m * inside[static_cast<size_t>(j)];
        }
      }
    return corr;
  }

  /// For each kernel tap (row-major over the spatial kernel dims), the fraction
  /// of output positions where it reads the input rather than the zero padding.
  static std::vector<double> tapInsideFraction(const Node &n, const Shape &xs, const Shape &ws,
                                               int64_t taps) {
    std::vector<double> r(static_cast<size_t>(taps), 1.0);
    size_t sp = xs.size() - 2;
    const Value *y = n.output(0);
    if (ws.size() != xs.size() || !y || y->shape.size() != xs.size())
      return r;
    std::vector<int64_t> st = n.attrInts("strides", std::vector<int64_t>(sp, 1));
    std::vector<int64_t> dl = n.attrInts("dilations", std::vector<int64_t>(sp, 1));
    std::vector<int64_t> pd = n.attrInts("pads", std::vector<int64_t>(2 * sp, 0));
    if (st.size() != sp || dl.size() != sp || pd.size() != 2 * sp)
      return r;
    // Per spatial dim d and kernel offset kd: fraction of outputs reading inside.
    std::vector<std::vector<double>> frac(sp);
    for (size_t d = 0; d < sp; ++d) {
      int64_t in = xs[d + 2], out = y->shape[d + 2], kk = ws[d + 2];
      for (int64_t kd = 0; kd < kk; ++kd) {
        int64_t ok = 0;
        for (int64_t o = 0; o < out; ++o) {
          int64_t ix = o * st[d] - pd[d] + kd * dl[d];
          ok += ix >= 0 && ix < in;
        }
        frac[d].push_back(out > 0 ? static_cast<double>(ok) / static_cast<double>(out) : 1.0);
      }
    }
    for (int64_t j = 0; j < taps; ++j) {
      int64_t rem = j;
      double f = 1.0;
      for (size_t d = sp; d-- > 0;) {
        int64_t kk = ws[d + 2];
        f *= frac[d][static_cast<size_t>(rem % kk)];
        rem /= kk;
      }
      r[static_cast<size_t>(j)] = f;
    }
    return r;
  }

  static bool hasWeights(const Node &n) {
    return (n.kind == OpKind::Conv || n.kind == OpKind::Gemm || n.kind == OpKind::MatMul) &&
           n.input(1) && n.input(1)->isConstant() && !n.input(1)->shape.empty();
  }

  static std::string ruleText(const WeightRule &r) {
    std::string s = r.perChannel ? "per-channel" : "per-tensor";
    if (r.powerOfTwo)
      s += ", power-of-two";
    s += " weights";
    if (!r.reason.empty())
      s += " (" + r.reason + ")";
    return s;
  }

  void rewrite(Node &n, const WeightRule &rule) {
    std::vector<double> correction;
    if (n.kind == OpKind::Conv && n.input(0) && n.input(1) && n.input(1)->isConstant() &&
        n.input(2))
      correction = convBiasCorrection(n, n.input(0), n.input(1), rule);
    bool matmulLike = n.kind == OpKind::Conv || n.kind == OpKind::Gemm || n.kind == OpKind::MatMul;
    size_t nd = std::min(dataInputs(n), n.inputs.size());
    QuantParams inParams, wParams;
    for (size_t i = 0; i < nd; ++i) {
      Value *v = n.inputs[i];
      if (!v || (matmulLike && i == 2))
        continue;
      if (v->isConstant()) {
        bool weight = matmulLike && i == 1;
        int axis = 0;
        if (n.kind == OpKind::Gemm)
          axis = n.attrInt("transB", 0) ? 0 : 1;
        else if (n.kind == OpKind::MatMul)
          axis = static_cast<int>(v->shape.size()) - 1;
        n.inputs[i] = constantInput(v, axis, weight && !v->shape.empty() ? &rule : nullptr,
                                    weight ? &wParams : (i == 0 ? &inParams : nullptr));
      } else {
        n.inputs[i] = activation(v);
        if (i == 0)
          inParams = Params.at(n.inputs[i]);
      }
    }
    if (matmulLike && nd > 2 && n.input(2))
      n.inputs[2] = biasInput(n.inputs[2], inParams.scale[0], wParams, correction);
    if (n.kind == OpKind::Split) { // every output keeps the input's parameters
      for (Value *&y : n.outputs) {
        Value *orig = y;
        Value *yf = G.addValue(G.uniqueName(orig->name + "_float"), DType::F32, orig->shape);
        y = yf;
        yf->producer = &n;
        orig->producer = nullptr;
        addQdq(yf, inParams, orig, orig->name);
      }
      return;
    }
    // Output parameters.
    Value *y = n.output(0);
    QuantParams outP;
    if (keepsParams(n.kind))
      outP = inParams;
    else if (n.kind == OpKind::Softmax)
      outP = QuantParams{{1.0f / 256.0f}, {-128}, 0};
    else
      outP = activationParams(Ranges.at(y->name), Opts.powerOfTwoActivations);
    Value *yf = G.addValue(G.uniqueName(y->name + "_float"), DType::F32, y->shape);
    n.outputs[0] = yf;
    yf->producer = &n;
    y->producer = nullptr;
    addQdq(yf, outP, y, y->name);
  }
};

} // namespace

Result<QdqStats> insertQdq(Graph &g, const std::map<std::string, Range> &ranges,
                           const QdqOptions &opts) {
  Inserter ins(g, ranges, opts);
  return ins.run();
}

std::vector<std::string> floatOpsOf(const Graph &g) {
  std::vector<std::string> r;
  for (const auto &n : g.nodes()) {
    if (n->kind == OpKind::QuantizeLinear || n->kind == OpKind::DequantizeLinear)
      continue;
    bool typed = false;
    for (const Value *o : n->outputs)
      typed |= o && o->quant.has_value();
    bool anyFloat = false;
    for (const Value *o : n->outputs)
      anyFloat |= o && isFloat(o->dtype);
    if (!typed && anyFloat)
      r.push_back(n->name + " (" + n->opName() + ")");
  }
  return r;
}

} // namespace npucc::quant
