//===- QIntCommon.h - Shared helpers of the integer reference interpreter -===//
//
// Private to lib/interp/QInt*.cpp: quant params of a node's values, int8/uint8
// ranges, requantization through npucc_requant.h, broadcasting indices.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/interp/QuantInterpreter.h"
#include "npucc/quant/Multiplier.h"
#include "npucc/quant/Rounding.h"
#include "../../runtime/include/npucc_requant.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace npucc::interp::qint {

using ir::DType;
using ir::Node;
using ir::QuantParams;
using ir::Shape;
using ir::Tensor;
using Inputs = std::vector<const Tensor *>;
using Outputs = Result<std::vector<Tensor>>;

inline Diagnostic qerr(const Node &n, const std::string &m) {
  return error(m).atNode(n.name, n.opName());
}

/// Value range of an integer dtype (i8/u8/i32...).
struct Range {
  int64_t lo, hi;
};
inline Range rangeOf(DType t) {
  switch (t) {
  case DType::U8:
    return {0, 255};
  case DType::I8:
    return {-128, 127};
  case DType::U16:
    return {0, 65535};
  case DType::I16:
    return {-32768, 32767};
  default:
    return {INT32_MIN, INT32_MAX};
  }
}

/// Quant params of input i / output i (per-tensor scale 1, zp 0 when absent).
inline QuantParams inQ(const Node &n, size_t i) {
  const ir::Value *v = n.input(i);
  if (v && v->quant)
    return *v->quant;
  return QuantParams{{1.0f}, {0}, 0};
}
inline QuantParams outQ(const Node &n) {
  const ir::Value *v = n.output(0);
  if (v && v->quant)
    return *v->quant;
  return QuantParams{{1.0f}, {0}, 0};
}
inline int32_t zpAt(const QuantParams &q, int64_t c) {
  return q.zeroPoint.empty() ? 0 : q.zeroPoint[q.zeroPoint.size() == 1 ? 0 : c];
}
inline double scaleAt(const QuantParams &q, int64_t c) {
  return q.scale.empty() ? 1.0 : q.scale[q.scale.size() == 1 ? 0 : c];
}

/// Clamp range of the output: dtype range narrowed by act_min/act_max.
inline Range outRange(const Node &n) {
  Range r = rangeOf(n.output(0)->dtype);
  QuantParams q = outQ(n);
  double s = scaleAt(q, 0);
  int64_t zp = zpAt(q, 0);
  if (n.hasAttr("act_min"))
    r.lo = std::max<int64_t>(r.lo, zp + std::lround(n.attrFloat("act_min", 0) / s));
  if (n.hasAttr("act_max"))
    r.hi = std::min<int64_t>(r.hi, zp + std::lround(n.attrFloat("act_max", 0) / s));
  return r;
}

/// npucc_requant_i8_r generalized to the output range (identical for i8): acc * M
/// rounded as `rd` says (Exact: one rounding, ties to even, npucc_mul_qmult_rne).
inline int64_t requant(int32_t acc, quant::QuantMultiplier m, int32_t zp, Range r,
                       quant::Rounding rd = quant::Rounding::Exact) {
  int64_t v = static_cast<int64_t>(quant::applyMultiplier(acc, m, rd)) + zp;
  return std::clamp<int64_t>(v, r.lo, r.hi);
}

/// The output stage of npucc_add_i8 (TFLite's add keeps the two-rounding
/// npucc_mul_qmult) generalized to the output range.
inline int64_t requantTwoStep(int32_t acc, quant::QuantMultiplier m, int32_t zp, Range r) {
  int64_t v = static_cast<int64_t>(npucc_mul_qmult(acc, m.mult, m.shift)) + zp;
  return std::clamp<int64_t>(v, r.lo, r.hi);
}

/// Output tensor shaped like output 0 of the node.
inline Tensor outTensor(const Node &n) { return Tensor(n.output(0)->dtype, n.output(0)->shape); }

/// Row-major strides.
inline std::vector<int64_t> stridesOf(const Shape &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;)
    st[i - 1] = st[i] * s[i];
  return st;
}

/// Flat index into an input of shape `in` broadcast to `out` for the output
/// coordinates of flat index `o`.
inline int64_t bcastIndex(int64_t o, const Shape &out, const Shape &in) {
  int64_t idx = 0, mul = 1;
  size_t off = out.size() - in.size();
  for (size_t d = out.size(); d-- > 0;) {
    int64_t c = o % out[d];
    o /= out[d];
    if (d >= off) {
      int64_t dim = in[d - off];
      idx += (dim == 1 ? 0 : c) * mul;
      mul *= dim;
    }
  }
  return idx;
}

// QIntOps.cpp / QIntNn.cpp
Outputs evalQuantize(const Node &n, const Inputs &in);
Outputs evalDequantize(const Node &n, const Inputs &in);
Outputs evalConv(const Node &n, const Inputs &in);
Outputs evalMatMul(const Node &n, const Inputs &in);
Outputs evalGemm(const Node &n, const Inputs &in);
Outputs evalPool(const Node &n, const Inputs &in);
Outputs evalMean(const Node &n, const Inputs &in);
// QIntRaw.cpp: QLinearConv & co. with runtime scale/zero-point operands.
bool isRawQuantOp(ir::OpKind k);
Outputs evalRaw(const Node &n, const Inputs &in);

} // namespace npucc::interp::qint
