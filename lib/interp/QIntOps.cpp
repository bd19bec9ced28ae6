//===- QIntOps.cpp - Dispatch, boundaries and elementwise integer ops -----===//
//
// canEvaluateQuantized / evaluateQuantizedNode, QuantizeLinear and
// DequantizeLinear (float32 per ONNX), Add (TFLite scheme), Mul, Relu/Clip,
// LUT ops, Softmax (npucc_softmax_s8's integer formula), Concat and the data
// movement ops (bytes move, quant params are shared; Pad pads with its int8
// constant_value or the zero point, Resize nearest picks elements).
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "QIntCommon.h"

#include <cstring>

namespace npucc::interp {

namespace qint {

namespace {

/// Per-axis index of element i (0 when per-tensor).
int64_t axisIndex(const Tensor &scale, const Shape &xs, int64_t axis, int64_t i) {
  if (scale.numElements() <= 1)
    return 0;
  int64_t r = static_cast<int64_t>(xs.size());
  if (axis < 0)
    axis += r;
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < r; ++d)
    inner *= xs[static_cast<size_t>(d)];
  return (i / inner) % xs[static_cast<size_t>(axis)];
}

} // namespace

Outputs evalQuantize(const Node &n, const Inputs &in) {
  const Tensor &x = *in[0], &s = *in[1];
  const Tensor *z = in.size() > 2 ? in[2] : nullptr;
  DType t = z ? z->dtype() : n.output(0)->dtype;
  Tensor y(t, x.shape());
  Range r = rangeOf(t);
  int64_t axis = n.attrInt("axis", 1);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t c = axisIndex(s, x.shape(), axis, i);
    float q = static_cast<float>(x.getDouble(i)) / static_cast<float>(s.getDouble(c));
    double v = static_cast<double>(std::nearbyint(q)) + (z ? z->getInt(c) : 0);
    y.setInt(i, static_cast<int64_t>(std::clamp<double>(v, static_cast<double>(r.lo),
                                                        static_cast<double>(r.hi))));
  }
  return std::vector<Tensor>{std::move(y)};
}

Outputs evalDequantize(const Node &n, const Inputs &in) {
  const Tensor &x = *in[0], &s = *in[1];
  const Tensor *z = in.size() > 2 ? in[2] : nullptr;
  Tensor y(DType::F32, x.shape());
  int64_t axis = n.attrInt("axis", 1);
  float *o = y.data<float>();
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t c = axisIndex(s, x.shape(), axis, i);
    int64_t d = x.getInt(i) - (z ? z->getInt(c) : 0);
    o[i] = static_cast<float>(d) * static_cast<float>(s.getDouble(c));
  }
  return std::vector<Tensor>{std::move(y)};
}

namespace {

Outputs evalAddMul(const Node &n, const Inputs &in) {
  const Tensor &a = *in[0], &b = *in[1];
  Tensor y = outTensor(n);
  QuantParams aq = inQ(n, 0), bq = inQ(n, 1), yq = outQ(n);
  int32_t za = zpAt(aq, 0), zb = zpAt(bq, 0), zy = zpAt(yq, 0);
  Range r = outRange(n);
  bool add = n.kind == ir::OpKind::Add;
  quant::AddParams ap = quant::addParams(scaleAt(aq, 0), scaleAt(bq, 0), scaleAt(yq, 0));
  auto mm = quant::quantizeMultiplier(scaleAt(aq, 0) * scaleAt(bq, 0) / scaleAt(yq, 0));
  for (int64_t i = 0; i < y.numElements(); ++i) {
    int64_t av = a.getInt(bcastIndex(i, y.shape(), a.shape())) - za;
    int64_t bv = b.getInt(bcastIndex(i, y.shape(), b.shape())) - zb;
    if (add) {
      int32_t sa = npucc_sat_i32(av * (int64_t(1) << ap.leftShift));
      int32_t sb = npucc_sat_i32(bv * (int64_t(1) << ap.leftShift));
      int64_t ra = npucc_mul_qmult(sa, ap.a.mult, ap.a.shift);
      int64_t rb = npucc_mul_qmult(sb, ap.b.mult, ap.b.shift);
      y.setInt(i, requantTwoStep(npucc_sat_i32(ra + rb), ap.out, zy, r));
    } else {
      y.setInt(i, requant(npucc_sat_i32(av * bv), mm, zy, r));
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

/// Relu / Clip: a clamp in the quantized domain (output params = input params
/// unless the output carries its own, then requantized first).
Outputs evalClamp(const Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor y = outTensor(n);
  QuantParams xq = inQ(n, 0), yq = outQ(n);
  double sy = scaleAt(yq, 0);
  int32_t zy = zpAt(yq, 0), zx = zpAt(xq, 0);
  double lo = -INFINITY, hi = INFINITY;
  if (n.kind == ir::OpKind::Relu)
    lo = 0;
  if (n.kind == ir::OpKind::Clip) {
    if (in.size() > 1 && in[1])
      lo = in[1]->getDouble(0);
    if (in.size() > 2 && in[2])
      hi = in[2]->getDouble(0);
  }
  // The bounds saturate to the output's range, and the clamp is min(max(v, lo), hi) as
  // ONNX's Clip: [lo, hi] outside the range (even lo > hi) gives a constant, never an
  // empty range.
  Range r = rangeOf(y.dtype());
  auto bound = [&](double b, int64_t dflt) {
    if (!std::isfinite(b))
      return dflt;
    double q = std::clamp(std::round(b / sy) + zy, double(r.lo), double(r.hi));
    return static_cast<int64_t>(q);
  };
  int64_t qlo = bound(lo, r.lo), qhi = bound(hi, r.hi);
  bool same = xq == yq;
  auto m = quant::quantizeMultiplier(scaleAt(xq, 0) / sy);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t v = x.getInt(i);
    if (!same)
      v = requant(static_cast<int32_t>(v - zx), m, zy, r);
    y.setInt(i, std::min(std::max(v, qlo), qhi));
  }
  return std::vector<Tensor>{std::move(y)};
}

Outputs evalLut(const Node &n, const Inputs &in) {
  quant::LutFunction f = quant::LutFunction::Sigmoid;
  double alpha = 0.01, beta = 0.5;
  switch (n.kind) {
  case ir::OpKind::Tanh:
    f = quant::LutFunction::Tanh;
    break;
  case ir::OpKind::HardSwish:
    f = quant::LutFunction::HardSwish;
    break;
  case ir::OpKind::LeakyRelu:
    f = quant::LutFunction::LeakyRelu;
    alpha = n.attrFloat("alpha", 0.01f);
    break;
  case ir::OpKind::HardSigmoid:
    f = quant::LutFunction::HardSigmoid;
    alpha = n.attrFloat("alpha", 0.2f);
    beta = n.attrFloat("beta", 0.5f);
    break;
  default:
    break;
  }
  const Tensor &x = *in[0];
  if (x.dtype() != DType::I8 || n.output(0)->dtype != DType::I8)
    return qerr(n, "LUT ops need i8 operands");
  QuantParams xq = inQ(n, 0), yq = outQ(n);
  auto t = quant::buildLut(f, scaleAt(xq, 0), zpAt(xq, 0), scaleAt(yq, 0), zpAt(yq, 0), alpha,
                           beta);
  Tensor y = outTensor(n);
  for (int64_t i = 0; i < x.numElements(); ++i)
    y.setInt(i, t[static_cast<size_t>(x.getInt(i) + 128)]);
  return std::vector<Tensor>{std::move(y)};
}

Outputs evalSoftmax(const Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor y = outTensor(n);
  int64_t r = static_cast<int64_t>(x.shape().size());
  int64_t axis = n.attrInt("axis", -1);
  if (axis < 0)
    axis += r;
  if (axis != r - 1)
    return qerr(n, "integer Softmax supports the last axis only");
  QuantParams xq = inQ(n, 0), yq = outQ(n);
  auto e = quant::softmaxExpTable(scaleAt(xq, 0));
  int64_t R = quant::softmaxInvScaleQ16(scaleAt(yq, 0));
  if (R == 0)
    return qerr(n, "Softmax output scale too small");
  int64_t zy = zpAt(yq, 0);
  Range rg = rangeOf(y.dtype());
  int64_t len = x.shape().back(), rows = len ? x.numElements() / len : 0;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t mx = INT64_MIN, S = 0;
    for (int64_t j = 0; j < len; ++j)
      mx = std::max(mx, x.getInt(row * len + j));
    for (int64_t j = 0; j < len; ++j)
      S += e[static_cast<size_t>(std::min<int64_t>(255, mx - x.getInt(row * len + j)))];
    for (int64_t j = 0; j < len; ++j) {
      int64_t ei = e[static_cast<size_t>(std::min<int64_t>(255, mx - x.getInt(row * len + j)))];
      int64_t num = 2 * ei * R + (int64_t(1) << 16) * S, den = (int64_t(1) << 17) * S;
      int64_t q = num / den; // non-negative: floor
      y.setInt(row * len + j, std::clamp(zy + q, rg.lo, rg.hi));
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

Outputs evalConcat(const Node &n, const Inputs &in) {
  Tensor y = outTensor(n);
  int64_t r = static_cast<int64_t>(y.shape().size());
  int64_t axis = n.attrInt("axis", 0);
  if (axis < 0)
    axis += r;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= y.shape()[static_cast<size_t>(d)];
  int64_t yRow = y.numElements() / std::max<int64_t>(1, outer);
  QuantParams yq = outQ(n);
  Range rg = rangeOf(y.dtype());
  int64_t off = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const Tensor &x = *in[k];
    QuantParams xq = inQ(n, k);
    bool same = xq == yq;
    auto m = quant::quantizeMultiplier(scaleAt(xq, 0) / scaleAt(yq, 0));
    int64_t row = x.numElements() / std::max<int64_t>(1, outer);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < row; ++j) {
        int64_t v = x.getInt(o * row + j);
        y.setInt(o * yRow + off + j,
                 same ? v : requant(static_cast<int32_t>(v - zpAt(xq, 0)), m, zpAt(yq, 0), rg));
      }
    off += row;
  }
  return std::vector<Tensor>{std::move(y)};
}

Outputs evalTranspose(const Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor y = outTensor(n);
  size_t r = x.shape().size();
  std::vector<int64_t> perm = n.attrInts("perm");
  if (perm.empty())
    for (size_t i = 0; i < r; ++i)
      perm.push_back(static_cast<int64_t>(r - 1 - i));
  auto xst = stridesOf(x.shape());
  size_t es = ir::dtypeSize(x.dtype());
  for (int64_t o = 0; o < y.numElements(); ++o) {
    int64_t rem = o, src = 0;
    for (size_t d = r; d-- > 0;) {
      int64_t c = rem % y.shape()[d];
      rem /= y.shape()[d];
      src += c * xst[static_cast<size_t>(perm[d])];
    }
    std::memcpy(y.raw() + o * es, x.raw() + src * es, es);
  }
  return std::vector<Tensor>{std::move(y)};
}

/// Typed Pad (docs/quantization.md): the bytes of the float Pad, padding with the
/// int8 constant_value (fold-qdq writes Q(value) with the input's parameters) or,
/// without one, the zero point (real 0).
Outputs evalPadQ(const Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  const ir::Value *cv = n.input(2);
  Tensor zp = Tensor::scalar(x.dtype(), double(zpAt(inQ(n, 0), 0)));
  Inputs args = in;
  args.resize(std::max<size_t>(args.size(), 3), nullptr);
  if (!cv)
    args[2] = &zp;
  else if (cv->dtype != x.dtype() || !cv->quant || !(*cv->quant == inQ(n, 0)))
    return qerr(n, "integer Pad needs its constant_value quantized like its input (or none)");
  return detail::evalPad(n, args);
}

} // namespace

} // namespace qint

using namespace qint;

bool canEvaluateQuantized(const Node &n) {
  using K = ir::OpKind;
  if (n.kind == K::QuantizeLinear || n.kind == K::DequantizeLinear || isRawQuantOp(n.kind))
    return true;
  const ir::Value *x = n.input(0), *y = n.output(0);
  // Integer data in and out, with quant params on at least one side.
  bool typed = x && y && !ir::isFloat(x->dtype) && !ir::isFloat(y->dtype) &&
               (x->quant || y->quant);
  if (!typed)
    return false;
  switch (n.kind) {
  case K::Conv: case K::MatMul: case K::Gemm: case K::Add: case K::Mul: case K::MaxPool:
  case K::AveragePool: case K::GlobalAveragePool: case K::ReduceMean: case K::Concat:
  case K::Reshape: case K::Flatten: case K::Squeeze: case K::Unsqueeze: case K::Identity:
  case K::Dropout: case K::Transpose: case K::Relu: case K::Clip: case K::Softmax:
  case K::Sigmoid: case K::Tanh: case K::HardSwish: case K::LeakyRelu: case K::HardSigmoid:
  case K::Pad:
    return true;
  case K::Resize: // nearest picks input elements; other modes have no integer form
    return n.attrString("mode", "nearest") == "nearest";
  default:
    return false;
  }
}

Result<std::vector<Tensor>> evaluateQuantizedNode(const Node &n, const Inputs &in) {
  using K = ir::OpKind;
  if (!canEvaluateQuantized(n))
    return qerr(n, "not a typed integer node");
  if (in.empty() || !in[0] || !n.output(0))
    return qerr(n, "missing first input or output");
  for (size_t i = 0; i < in.size() && i < n.inputs.size(); ++i)
    if (in[i] && n.inputs[i] && in[i]->numElements() != n.inputs[i]->numElements())
      return qerr(n, "input " + std::to_string(i) + " does not match its value's shape");
  if (isRawQuantOp(n.kind))
    return evalRaw(n, in);
  switch (n.kind) {
  case K::QuantizeLinear:
    return evalQuantize(n, in);
  case K::DequantizeLinear:
    return evalDequantize(n, in);
  case K::Conv:
    return evalConv(n, in);
  case K::MatMul:
    return evalMatMul(n, in);
  case K::Gemm:
    return evalGemm(n, in);
  case K::Add:
  case K::Mul:
    return evalAddMul(n, in);
  case K::MaxPool:
  case K::AveragePool:
  case K::GlobalAveragePool:
    return evalPool(n, in);
  case K::ReduceMean:
    return evalMean(n, in);
  case K::Concat:
    return evalConcat(n, in);
  case K::Transpose:
    return evalTranspose(n, in);
  case K::Relu:
  case K::Clip:
    return evalClamp(n, in);
  case K::Softmax:
    return evalSoftmax(n, in);
  case K::Sigmoid:
  case K::Tanh:
  case K::HardSwish:
  case K::LeakyRelu:
  case K::HardSigmoid:
    return evalLut(n, in);
  case K::Pad:
    return qint::evalPadQ(n, in);
  case K::Resize: // nearest (canEvaluateQuantized): the float Resize moves the integers
    return detail::evalResize(n, in);
  default: { // data movement: same bytes, new shape
    Tensor y = outTensor(n);
    if (y.byteSize() != in[0]->byteSize())
      return qerr(n, "data movement changes the byte size");
    std::memcpy(y.raw(), in[0]->raw(), y.byteSize());
    std::vector<Tensor> r;
    r.push_back(std::move(y));
    for (size_t i = 1; i < n.outputs.size(); ++i) // Dropout mask
      r.emplace_back(n.output(i)->dtype, n.output(i)->shape);
    return r;
  }
  }
}

} // namespace npucc::interp
