//===- QIntRaw.cpp - QLinear*/ConvInteger/MatMulInteger as ONNX nodes -----===//
//
// The importer turns pre-quantized ONNX ops into typed nodes; graphs built
// straight from an ONNX model (tests) may still hold the raw ops, whose scales
// and zero points are runtime tensors. Each is evaluated by building the
// equivalent typed node in a scratch graph (the importer's mapping) and
// running it through the integer interpreter.
//
//===----------------------------------------------------------------------===//
#include "QIntCommon.h"

namespace npucc::interp::qint {

namespace {

QuantParams paramsOf(const Tensor *s, const Tensor *z, int axis) {
  QuantParams q;
  q.axis = axis;
  int64_t n = s ? std::max<int64_t>(1, s->numElements()) : (z ? z->numElements() : 1);
  for (int64_t i = 0; i < std::max<int64_t>(1, n); ++i) {
    q.scale.push_back(s ? static_cast<float>(s->getDouble(i)) : 1.0f);
    int64_t zn = z ? z->numElements() : 0;
    q.zeroPoint.push_back(zn ? static_cast<int32_t>(z->getInt(zn == 1 ? 0 : i)) : 0);
  }
  return q;
}

} // namespace

bool isRawQuantOp(ir::OpKind k) {
  using K = ir::OpKind;
  return k == K::QLinearConv || k == K::QLinearMatMul || k == K::ConvInteger ||
         k == K::MatMulInteger || k == K::QLinearAdd || k == K::QLinearMul ||
         k == K::QLinearAveragePool || k == K::QLinearGlobalAveragePool ||
         k == K::QLinearConcat;
}

Outputs evalRaw(const Node &n, const Inputs &in) {
  using K = ir::OpKind;
  auto at = [&](size_t i) -> const Tensor * { return i < in.size() ? in[i] : nullptr; };
  ir::Graph g;
  std::vector<ir::Value *> vins;
  std::vector<const Tensor *> tins;
  auto add = [&](size_t i, std::optional<QuantParams> q) {
    const Tensor *t = at(i);
    ir::Value *v = g.addValue("in" + std::to_string(i), t->dtype(), t->shape());
    v->quant = q;
    vins.push_back(v);
    tins.push_back(t);
  };
  std::optional<QuantParams> yq;
  K kind = K::Conv;
  switch (n.kind) {
  case K::QLinearConv:
  case K::QLinearMatMul: {
    if (!at(0) || !at(3) || !at(1) || !at(4) || !at(6))
      return qerr(n, "missing operand");
    bool conv = n.kind == K::QLinearConv;
    kind = conv ? K::Conv : K::MatMul;
    QuantParams xq = paramsOf(at(1), at(2), 0);
    QuantParams wq = paramsOf(at(4), at(5), conv ? 0 : static_cast<int>(at(3)->shape().size()) - 1);
    add(0, xq);
    add(3, wq);
    if (conv && at(8)) {
      QuantParams bq;
      for (float s : wq.scale) {
        bq.scale.push_back(xq.scale[0] * s);
        bq.zeroPoint.push_back(0);
      }
      add(8, bq);
    }
    yq = paramsOf(at(6), at(7), 0);
    break;
  }
  case K::ConvInteger:
  case K::MatMulInteger: {
    if (!at(0) || !at(1))
      return qerr(n, "missing operand");
    bool conv = n.kind == K::ConvInteger;
    kind = conv ? K::Conv : K::MatMul;
    add(0, paramsOf(nullptr, at(2), 0));
    add(1, paramsOf(nullptr, at(3), conv ? 0 : static_cast<int>(at(1)->shape().size()) - 1));
    break;
  }
  case K::QLinearAdd:
  case K::QLinearMul:
    if (!at(0) || !at(3) || !at(1) || !at(4) || !at(6))
      return qerr(n, "missing operand");
    kind = n.kind == K::QLinearAdd ? K::Add : K::Mul;
    add(0, paramsOf(at(1), at(2), 0));
    add(3, paramsOf(at(4), at(5), 0));
    yq = paramsOf(at(6), at(7), 0);
    break;
  case K::QLinearAveragePool:
  case K::QLinearGlobalAveragePool:
    if (!at(0) || !at(1) || !at(3))
      return qerr(n, "missing operand");
    if (n.attrInt("channels_last", 0) != 0)
      return qerr(n, "channels_last = 1 is not supported");
    kind = n.kind == K::QLinearAveragePool ? K::AveragePool : K::GlobalAveragePool;
    add(0, paramsOf(at(1), at(2), 0));
    yq = paramsOf(at(3), at(4), 0);
    break;
  case K::QLinearConcat:
    if (!at(0))
      return qerr(n, "missing operand");
    kind = K::Concat;
    for (size_t i = 2; i + 2 < in.size(); i += 3) {
      if (!at(i) || !at(i + 1))
        return qerr(n, "missing operand");
      add(i, paramsOf(at(i + 1), at(i + 2), 0));
    }
    yq = paramsOf(at(0), at(1), 0);
    break;
  default:
    return qerr(n, "not a pre-quantized op");
  }
  const ir::Value *o = n.output(0);
  ir::Value *y = g.addValue("y", o->dtype, o->shape);
  y->quant = yq;
  ir::Node *t = g.addNode(kind, n.name, vins, {y});
  t->attrs = n.attrs;
  t->attrs.erase("channels_last");
  if (t->attrString("auto_pad", "NOTSET") != "NOTSET")
    return qerr(n, "auto_pad is not supported on raw quantized nodes");
  t->attrs.erase("auto_pad");
  return evaluateQuantizedNode(*t, tins);
}

} // namespace npucc::interp::qint
