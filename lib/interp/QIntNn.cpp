//===- QIntNn.cpp - Integer Conv, MatMul, Gemm, pooling and mean ----------===//
//
// Reference loops of docs/quantization.md: acc = bias[c] + sum (x - zx)(w - zw[c])
// in int32, requantized with M[c] = sx * sw[c] / sy (an i32 output without
// quant params, as ConvInteger/MatMulInteger, returns the accumulator);
// average pools fold the tap count into the multiplier.
//
//===----------------------------------------------------------------------===//
#include "QIntCommon.h"

#include "npucc/quant/MulShiftAdd.h"

namespace npucc::interp::qint {

namespace {

/// Writes acc for output channel c: raw for an unquantized i32 output.
struct Requant {
  bool raw;
  std::vector<quant::QuantMultiplier> m; // per channel
  int32_t zp;
  Range r;
  quant::Rounding rounding;
  /// A node an NPU with the mul_shift_add stage runs (attributes rq_stage,
  /// rq_bits): each channel's fitted parameters, as the NPU's records hold them.
  std::vector<quant::MsaParams> msa;
  std::string error; // a channel the attributes' widths cannot fit
  Requant(const Node &n, double sx, const QuantParams &wq, int64_t channels) {
    raw = !n.output(0)->quant;
    QuantParams yq = outQ(n);
    zp = zpAt(yq, 0);
    r = outRange(n);
    rounding = quant::roundingOf(n);
    auto widths = raw ? std::nullopt : quant::msaAttrs(n);
    // Scales are float32 in the IR: the casts are exact.
    for (int64_t c = 0; c < channels; ++c) {
      m.push_back(quant::productMultiplier(float(sx), float(scaleAt(wq, c)), float(scaleAt(yq, 0)),
                                           rounding));
      if (widths) {
        // Legality placed the node only where every channel fits; a
        // hand-written node may not.
        double ratio = quant::msaRatio(float(sx), float(scaleAt(wq, c)), float(scaleAt(yq, 0)));
        std::string why;
        auto p = quant::fitMulShiftAdd(ratio, zp, *widths, &why);
        if (!p && error.empty())
          error = "rq_stage mul_shift_add, channel " + std::to_string(c) + ": " + why;
        msa.push_back(p.value_or(quant::MsaParams{}));
      }
    }
  }
  int64_t apply(int64_t acc, int64_t c) const {
    if (raw)
      return acc;
    if (!msa.empty()) {
      // The NPU's records hold bias + biasAdd (acc includes the bias here).
      const quant::MsaParams &p = msa[static_cast<size_t>(c)];
      return std::clamp<int64_t>(quant::applyMsa(acc, p), r.lo, r.hi);
    }
    return requant(npucc_sat_i32(acc), m[static_cast<size_t>(c)], zp, r, rounding);
  }
};

} // namespace

Outputs evalConv(const Node &n, const Inputs &in) {
  const Tensor &x = *in[0], &w = *in[1];
  const Tensor *b = in.size() > 2 ? in[2] : nullptr;
  if (x.shape().size() != 4 && x.shape().size() != 3)
    return qerr(n, "integer Conv supports 1-D and 2-D convolutions only");
  bool oneD = x.shape().size() == 3;
  Shape xs = x.shape(), ws = w.shape();
  Tensor y = outTensor(n);
  Shape ys = y.shape();
  if (oneD) {
    xs.insert(xs.begin() + 2, 1);
    ws.insert(ws.begin() + 2, 1);
    ys.insert(ys.begin() + 2, 1);
  }
  auto st = n.attrInts("strides"), dl = n.attrInts("dilations"), pd = n.attrInts("pads");
  if (oneD) {
    st.insert(st.begin(), 1);
    dl.insert(dl.begin(), 1);
    if (pd.size() == 2)
      pd = {0, pd[0], 0, pd[1]};
  }
  st.resize(2, 1);
  dl.resize(2, 1);
  pd.resize(4, 0);
  int64_t group = n.attrInt("group", 1);
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  int64_t M = ws[0], CG = ws[1], KH = ws[2], KW = ws[3];
  int64_t OH = ys[2], OW = ys[3];
  if (group <= 0 || C != CG * group || M % group)
    return qerr(n, "channels do not match group");
  QuantParams xq = inQ(n, 0), wq = inQ(n, 1);
  int32_t zx = zpAt(xq, 0);
  Requant rq(n, scaleAt(xq, 0), wq, M);
  if (!rq.error.empty())
    return qerr(n, rq.error);
  int64_t mPerG = M / group;
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t m = 0; m < M; ++m) {
      int64_t g = m / mPerG;
      int32_t zw = zpAt(wq, m);
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t acc = b ? b->getInt(m) : 0;
          for (int64_t cg = 0; cg < CG; ++cg) {
            int64_t c = g * CG + cg;
            for (int64_t kh = 0; kh < KH; ++kh) {
              int64_t ih = oh * st[0] - pd[0] + kh * dl[0];
              if (ih < 0 || ih >= H)
                continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t iw = ow * st[1] - pd[1] + kw * dl[1];
                if (iw < 0 || iw >= W)
                  continue;
                int64_t xv = x.getInt(((nn * C + c) * H + ih) * W + iw) - zx;
                int64_t wv = w.getInt(((m * CG + cg) * KH + kh) * KW + kw) - zw;
                acc += xv * wv;
              }
            }
          }
          y.setInt(((nn * M + m) * OH + oh) * OW + ow, rq.apply(acc, m));
        }
    }
  return std::vector<Tensor>{std::move(y)};
}

namespace {

/// y[b, i, j] = sum_k (a[b,i,k] - za)(w[b,k,j] - zw[j]) (+ bias[j]) with
/// numpy batch broadcasting; transposes for Gemm.
Outputs matmulCore(const Node &n, const Tensor &a, const Tensor &w, const Tensor *bias, bool ta,
                   bool tb) {
  Tensor y = outTensor(n);
  const Shape &as = a.shape(), &bs = w.shape(), &ys = y.shape();
  if (as.size() < 2 || bs.size() < 2 || ys.size() < 2)
    return qerr(n, "integer MatMul needs operands of rank >= 2");
  int64_t I = ys[ys.size() - 2], J = ys.back();
  int64_t K = ta ? as[as.size() - 2] : as.back();
  Shape batch(ys.begin(), ys.end() - 2);
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  int64_t nb = ir::numElements(batch);
  QuantParams aq = inQ(n, 0), wq = inQ(n, 1);
  int32_t za = zpAt(aq, 0);
  Requant rq(n, scaleAt(aq, 0), wq, J);
  if (!rq.error.empty())
    return qerr(n, rq.error);
  int64_t aRows = as[as.size() - 2], aCols = as.back();
  int64_t bRows = bs[bs.size() - 2], bCols = bs.back();
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t ao = (batch.empty() ? 0 : bcastIndex(bi, batch, ab)) * aRows * aCols;
    int64_t bo = (batch.empty() ? 0 : bcastIndex(bi, batch, bb)) * bRows * bCols;
    for (int64_t i = 0; i < I; ++i)
      for (int64_t j = 0; j < J; ++j) {
        int64_t acc = bias ? bias->getInt(bias->numElements() == 1 ? 0 : j) : 0;
        int32_t zw = zpAt(wq, j);
        for (int64_t k = 0; k < K; ++k) {
          int64_t av = a.getInt(ao + (ta ? k * aCols + i : i * aCols + k)) - za;
          int64_t wv = w.getInt(bo + (tb ? j * bCols + k : k * bCols + j)) - zw;
          acc += av * wv;
        }
        y.setInt((bi * I + i) * J + j, rq.apply(acc, j));
      }
  }
  return std::vector<Tensor>{std::move(y)};
}

} // namespace

Outputs evalMatMul(const Node &n, const Inputs &in) {
  if (in[0]->shape().size() < 2 || in[1]->shape().size() < 2)
    return qerr(n, "1-D integer MatMul operands are not supported");
  return matmulCore(n, *in[0], *in[1], nullptr, false, false);
}

Outputs evalGemm(const Node &n, const Inputs &in) {
  if (n.attrFloat("alpha", 1.0f) != 1.0f || n.attrFloat("beta", 1.0f) != 1.0f)
    return qerr(n, "integer Gemm needs alpha = beta = 1");
  const Tensor *c = in.size() > 2 ? in[2] : nullptr;
  if (c && c->shape().size() > 1 && c->shape()[0] != 1)
    return qerr(n, "integer Gemm bias must be 1-D");
  return matmulCore(n, *in[0], *in[1], c, n.attrInt("transA", 0) != 0, n.attrInt("transB", 0) != 0);
}

Outputs evalPool(const Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor y = outTensor(n);
  bool global = n.kind == ir::OpKind::GlobalAveragePool;
  bool isMax = n.kind == ir::OpKind::MaxPool;
  Shape xs = x.shape(), ys = y.shape();
  if (xs.size() == 3) {
    xs.insert(xs.begin() + 2, 1);
    ys.insert(ys.begin() + 2, 1);
  }
  if (xs.size() != 4)
    return qerr(n, "integer pooling supports 1-D and 2-D inputs only");
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], OH = ys[2], OW = ys[3];
  if (ys[0] != N || ys[1] != C || y.numElements() != N * C * OH * OW)
    return qerr(n, "pooling output shape " + ir::shapeStr(y.shape()) +
                       " does not match the input's batch and channels " + ir::shapeStr(x.shape()));
  std::vector<int64_t> k = global ? std::vector<int64_t>{H, W} : n.attrInts("kernel_shape"),
                       st = global ? std::vector<int64_t>{1, 1} : n.attrInts("strides"),
                       pd = global ? std::vector<int64_t>{} : n.attrInts("pads"),
                       dl = n.attrInts("dilations");
  if (x.shape().size() == 3 && !global) {
    k.insert(k.begin(), 1);
    st.insert(st.begin(), 1);
    if (pd.size() == 2)
      pd = {0, pd[0], 0, pd[1]};
    if (!dl.empty())
      dl.insert(dl.begin(), 1);
  }
  k.resize(2, 1);
  st.resize(2, 1);
  pd.resize(4, 0);
  dl.resize(2, 1);
  bool includePad = n.attrInt("count_include_pad", 0) != 0;
  QuantParams xq = inQ(n, 0), yq = outQ(n);
  int32_t zx = zpAt(xq, 0), zy = zpAt(yq, 0);
  Range r = outRange(n);
  std::vector<quant::QuantMultiplier> mc;
  for (int64_t cnt = 0; cnt <= k[0] * k[1]; ++cnt)
    mc.push_back(cnt ? quant::quantizeMultiplier(scaleAt(xq, 0) / (cnt * scaleAt(yq, 0)))
                     : quant::QuantMultiplier{});
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t acc = 0, cnt = 0, best = INT64_MIN;
        for (int64_t a = 0; a < k[0]; ++a)
          for (int64_t bq = 0; bq < k[1]; ++bq) {
            int64_t ih = oh * st[0] - pd[0] + a * dl[0], iw = ow * st[1] - pd[1] + bq * dl[1];
            bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
            if (!inside) {
              if (includePad && ih >= -pd[0] && ih < H + pd[2] && iw >= -pd[1] && iw < W + pd[3])
                ++cnt;
              continue;
            }
            int64_t v = x.getInt((nc * H + ih) * W + iw);
            best = std::max(best, v);
            acc += v - zx;
            ++cnt;
          }
        int64_t o = (nc * OH + oh) * OW + ow;
        if (isMax)
          y.setInt(o, best == INT64_MIN ? zy : std::clamp(best, r.lo, r.hi));
        else
          y.setInt(o, cnt ? requant(npucc_sat_i32(acc), mc[static_cast<size_t>(cnt)], zy, r) : zy);
      }
  return std::vector<Tensor>{std::move(y)};
}

Outputs evalMean(const Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor y = outTensor(n);
  const Shape &xs = x.shape();
  int64_t r = static_cast<int64_t>(xs.size());
  std::vector<int64_t> axes = n.attrInts("axes");
  if (axes.empty())
    for (int64_t i = 0; i < r; ++i)
      axes.push_back(i);
  for (auto &a : axes)
    a = a < 0 ? a + r : a;
  std::sort(axes.begin(), axes.end());
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1)
      return qerr(n, "integer ReduceMean needs a contiguous block of axes");
  int64_t outer = 1, red = 1, inner = 1;
  for (int64_t d = 0; d < r; ++d)
    (d < axes.front() ? outer : d > axes.back() ? inner : red) *= xs[static_cast<size_t>(d)];
  QuantParams xq = inQ(n, 0), yq = outQ(n);
  auto m = quant::quantizeMultiplier(scaleAt(xq, 0) / (red * scaleAt(yq, 0)));
  int32_t zx = zpAt(xq, 0), zy = zpAt(yq, 0);
  Range rg = outRange(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t acc = 0;
      for (int64_t k = 0; k < red; ++k)
        acc += x.getInt((o * red + k) * inner + i) - zx;
      y.setInt(o * inner + i, requant(npucc_sat_i32(acc), m, zy, rg));
    }
  return std::vector<Tensor>{std::move(y)};
}

} // namespace npucc::interp::qint
