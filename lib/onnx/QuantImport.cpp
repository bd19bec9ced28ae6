//===- QuantImport.cpp - Pre-quantized ONNX ops to typed integer IR -------===//
//
// QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger and the
// com.microsoft QLinearAdd/Mul/AveragePool/GlobalAveragePool/Concat carry
// their scales and zero points as operands. The importer turns each into the
// typed form of docs/quantization.md: the float twin (Conv, MatMul, Add, ...)
// whose integer operands carry QuantParams in their Value types. Scales and
// zero points must be constants. Integer types (u8/i8) are kept as declared.
// QLinearConv/QLinearMatMul also get requant="fp32" (ONNX Runtime's float32
// requantization, emulated in integers by the kernels).
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <cmath>
#include <cstdio>

using namespace npucc::ir;

namespace npucc::onnx::detail {

namespace {

} // namespace

std::string badScale(double s) {
  if (std::isnan(s))
    return "is NaN";
  if (std::isinf(s))
    return s > 0 ? "is infinite" : "is not positive (-inf)";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", s);
  if (!(s > 0))
    return std::string("is not positive (") + buf + ")";
  float f = static_cast<float>(s);
  if (!(f > 0) || std::isinf(f))
    return std::string("is not a positive finite float32 (") + buf + ")";
  return "";
}

Status checkScales(const Value *scale, const std::string &what) {
  if (!scale || !scale->isConstant())
    return success();
  for (int64_t i = 0, n = scale->constant->numElements(); i < n; ++i)
    if (std::string why = badScale(scale->constant->getDouble(i)); !why.empty())
      return error(what + (n > 1 ? "[" + std::to_string(i) + "]" : std::string()) + " " + why +
                   ": a quantization scale must be a positive finite number");
  return success();
}

namespace {

/// QuantParams from constant scale / zero-point operands (zp may be null).
Result<QuantParams> paramsOf(const Value *scale, const Value *zp, int axis,
                             const std::string &what) {
  if (!scale || !scale->isConstant())
    return error(what + " scale must be a constant");
  if (zp && !zp->isConstant())
    return error(what + " zero point must be a constant");
  QuantParams q;
  q.axis = axis;
  int64_t n = scale->constant->numElements();
  if (n < 1)
    return error(what + " scale is empty");
  NPUCC_TRY(checkScales(scale, what + " scale"));
  for (int64_t i = 0; i < n; ++i)
    q.scale.push_back(static_cast<float>(scale->constant->getDouble(i)));
  for (int64_t i = 0; i < n; ++i) {
    int64_t z = 0;
    if (zp) {
      int64_t m = zp->constant->numElements();
      if (m != 1 && m != n)
        return error(what + " zero point and scale sizes differ");
      z = zp->constant->getInt(m == 1 ? 0 : i);
    }
    q.zeroPoint.push_back(static_cast<int32_t>(z));
  }
  return q;
}

QuantParams unitParams(const Value *zp, int axis) {
  QuantParams q;
  q.axis = axis;
  int64_t n = zp && zp->isConstant() ? std::max<int64_t>(1, zp->constant->numElements()) : 1;
  for (int64_t i = 0; i < n; ++i) {
    q.scale.push_back(1.0f);
    q.zeroPoint.push_back(zp && zp->isConstant() && zp->constant->numElements()
                              ? static_cast<int32_t>(zp->constant->getInt(i))
                              : 0);
  }
  return q;
}

} // namespace

Status prepareQuantNode(Builder &b, const std::string &name, const std::string &op, OpKind k,
                        std::vector<Value *> &ins, std::map<std::string, Attribute> &attrs,
                        QuantRewrite &q) {
  auto in = [&](size_t i) -> Value * { return i < ins.size() ? ins[i] : nullptr; };
  auto err = [&](const std::string &m) { return b.nodeErr(name, op, m); };
  auto params = [&](size_t s, size_t z, int axis, const char *what) -> Result<QuantParams> {
    auto r = paramsOf(in(s), in(z), axis, what);
    if (!r)
      return err(r.error().message);
    return r;
  };
  auto zpType = [&](size_t z, DType dflt) { return in(z) ? in(z)->dtype : dflt; };
  for (Value *v : ins)
    if (v && v->shape.size() > 8)
      return err("operand rank too large");
  switch (k) {
  case OpKind::QLinearConv:
  case OpKind::QLinearMatMul: {
    bool conv = k == OpKind::QLinearConv;
    if (!in(0) || !in(3))
      return err("missing data operand");
    auto xq = params(1, 2, 0, "input");
    int wAxis = conv ? 0 : static_cast<int>(in(3)->shape.size()) - 1;
    auto wq = params(4, 5, wAxis, "weight");
    auto yq = params(6, 7, 0, "output");
    if (!xq || !wq || !yq)
      return !xq ? xq.error() : !wq ? wq.error() : yq.error();
    q.kind = conv ? OpKind::Conv : OpKind::MatMul;
    q.ins = {in(0), in(3)};
    q.inQuant = {{in(0), *xq}, {in(3), *wq}};
    if (conv && in(8)) {
      QuantParams bq;
      bq.axis = 0;
      for (float s : wq->scale) {
        bq.scale.push_back(xq->scale[0] * s);
        bq.zeroPoint.push_back(0);
      }
      q.ins.push_back(in(8));
      q.inQuant.push_back({in(8), bq});
    }
    q.outQuant = *yq;
    q.outType = zpType(7, DType::U8);
    // These ops are defined by their float scales and evaluated by ONNX Runtime in
    // float32 (acc * (x_scale * w_scale / y_scale), then rounded): keep that rounding.
    attrs["requant"] = std::string("fp32");
    return success();
  }
  case OpKind::ConvInteger:
  case OpKind::MatMulInteger: {
    bool conv = k == OpKind::ConvInteger;
    if (!in(1))
      return err("missing weight operand");
    int wAxis = conv ? 0 : static_cast<int>(in(1)->shape.size()) - 1;
    q.kind = conv ? OpKind::Conv : OpKind::MatMul;
    q.ins = {in(0), in(1)};
    q.inQuant = {{in(0), unitParams(in(2), 0)}, {in(1), unitParams(in(3), wAxis)}};
    if (in(2) && !in(2)->isConstant())
      return err("input zero point must be a constant");
    if (in(3) && !in(3)->isConstant())
      return err("weight zero point must be a constant");
    q.hasOutQuant = false;
    q.outType = DType::I32;
    return success();
  }
  case OpKind::QLinearAdd:
  case OpKind::QLinearMul: {
    auto aq = params(1, 2, 0, "A"), bq = params(4, 5, 0, "B"), cq = params(6, 7, 0, "C");
    if (!aq || !bq || !cq)
      return !aq ? aq.error() : !bq ? bq.error() : cq.error();
    if (!in(3))
      return err("missing B operand");
    q.kind = k == OpKind::QLinearAdd ? OpKind::Add : OpKind::Mul;
    q.ins = {in(0), in(3)};
    q.inQuant = {{in(0), *aq}, {in(3), *bq}};
    q.outQuant = *cq;
    q.outType = zpType(7, in(0)->dtype);
    return success();
  }
  case OpKind::QLinearAveragePool:
  case OpKind::QLinearGlobalAveragePool: {
    if (attrs.count("channels_last")) {
      auto *v = std::get_if<int64_t>(&attrs["channels_last"]);
      if (v && *v != 0)
        return err("channels_last = 1 is not supported");
      attrs.erase("channels_last");
    }
    auto xq = params(1, 2, 0, "input"), yq = params(3, 4, 0, "output");
    if (!xq || !yq)
      return !xq ? xq.error() : yq.error();
    q.kind = k == OpKind::QLinearAveragePool ? OpKind::AveragePool : OpKind::GlobalAveragePool;
    q.ins = {in(0)};
    q.inQuant = {{in(0), *xq}};
    q.outQuant = *yq;
    q.outType = zpType(4, in(0)->dtype);
    return success();
  }
  case OpKind::QLinearConcat: {
    auto yq = params(0, 1, 0, "output");
    if (!yq)
      return yq.error();
    if (ins.size() < 5 || (ins.size() - 2) % 3 != 0)
      return err("expects Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples");
    q.kind = OpKind::Concat;
    q.ins.clear();
    for (size_t i = 2; i + 2 < ins.size(); i += 3) {
      auto xq = params(i + 1, i + 2, 0, "input");
      if (!xq)
        return xq.error();
      if (!in(i))
        return err("missing Concat input");
      q.ins.push_back(in(i));
      q.inQuant.push_back({in(i), *xq});
    }
    q.outQuant = *yq;
    q.outType = zpType(1, DType::U8);
    return success();
  }
  default:
    return err("not a pre-quantized op");
  }
}

Status finishQuantNode(Builder &b, const std::string &name, const std::string &op,
                       const QuantRewrite &q, const std::vector<std::string> &outs) {
  for (const auto &iq : q.inQuant) {
    Value *v = iq.first;
    if (v->quant && !(*v->quant == iq.second) && !v->isConstant())
      return b.nodeErr(name, op, "value '" + v->name + "' is used with two different scales");
    v->quant = iq.second;
  }
  if (outs.empty())
    return b.nodeErr(name, op, "no output");
  auto it = b.values.find(outs[0]);
  if (it == b.values.end())
    return b.nodeErr(name, op, "output was not created");
  Value *y = it->second;
  y->dtype = q.outType;
  if (q.hasOutQuant)
    y->quant = q.outQuant;
  return success();
}

} // namespace npucc::onnx::detail
