//===- Compare.cpp - Output comparison against reference tensors ----------===//
//
// compareTensors: float within a relative tolerance, integers in steps.
// classifyOutput/compareSteps: quantized outputs in quantization steps (see
// Compare.h and docs/quantization.md). compareWithInterpreter: the rules of
// `npucc check`'s interpreter comparisons.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Compare.h"

#include <algorithm>
#include <utility>
#include <vector>
#include <cmath>
#include <cstdio>

namespace npucc::driver {

Status checkDataMatches(const ir::Tensor &t, const lir::IOBuffer &io, const std::string &file,
                        const std::string &role) {
  if (t.dtype() == io.dtype && t.shape() == io.shape)
    return success();
  return error(std::string(ir::dtypeName(t.dtype())) + " [" + ir::shapeStr(t.shape()) +
               "] does not match the model's " + role + " '" + io.name + "' " +
               ir::dtypeName(io.dtype) + " [" + ir::shapeStr(io.shape) + "]")
      .inFile(file);
}

namespace {
bool int8Io(const ir::Value &v) {
  return v.dtype == ir::DType::I8 && v.quant && v.quant->scale.size() == 1 &&
         v.quant->zeroPoint.size() == 1;
}
} // namespace

ir::Tensor toIoType(const ir::Tensor &t, const ir::Value &v) {
  if (!int8Io(v) || t.dtype() != ir::DType::F32)
    return t;
  ir::Tensor q(ir::DType::I8, t.shape());
  const float s = v.quant->scale[0];
  const double zp = v.quant->zeroPoint[0];
  for (int64_t i = 0; i < t.numElements(); ++i) {
    // QuantizeLinear as the interpreter computes it (lib/interp/Quant.cpp): float division,
    // round half to even, + zp, saturated; NaN gives zp.
    float x = float(t.getDouble(i));
    double r = std::isnan(x) ? zp : std::rint(x / s) + zp;
    q.setInt(i, int64_t(std::min(127.0, std::max(-128.0, r))));
  }
  return q;
}

ir::Tensor dequantizeIo(const ir::Tensor &t, const ir::Value &v) {
  if (!int8Io(v) || t.dtype() != ir::DType::I8)
    return t;
  ir::Tensor f(ir::DType::F32, t.shape());
  const float s = v.quant->scale[0];
  const int32_t zp = v.quant->zeroPoint[0];
  for (int64_t i = 0; i < t.numElements(); ++i)
    f.setDouble(i, double(float(int32_t(t.getInt(i)) - zp) * s));
  return f;
}

OutputQuant ioOutputKind(const ir::Value &v) {
  OutputQuant q;
  if (int8Io(v)) {
    q.kind = OutputKind::Dequantized;
    q.scale = v.quant->scale[0];
    q.zeroPoint = v.quant->zeroPoint[0];
  }
  return q;
}

Comparison compareTensors(const ir::Tensor &got, const ir::Tensor &ref, double relTol,
                          int64_t intTolerance) {
  Comparison c;
  if (got.dtype() != ref.dtype() || got.shape() != ref.shape()) {
    c.shapeMismatch = true;
    c.firstMismatch = 0;
    return c;
  }
  int64_t n = ref.numElements();
  bool fl = ir::isFloat(ref.dtype());
  for (int64_t i = 0; i < n; ++i) {
    double r = ref.getDouble(i);
    if (std::isfinite(r))
      c.maxAbsRef = std::max(c.maxAbsRef, std::fabs(r));
  }
  double limit = fl ? relTol * (c.maxAbsRef > 0 ? c.maxAbsRef : 1.0)
                    : static_cast<double>(intTolerance);
  for (int64_t i = 0; i < n; ++i) {
    double r = fl ? ref.getDouble(i) : static_cast<double>(ref.getInt(i));
    double g = fl ? got.getDouble(i) : static_cast<double>(got.getInt(i));
    double err;
    if (std::isnan(r) || std::isnan(g))
      err = (std::isnan(r) && std::isnan(g)) ? 0 : INFINITY;
    else if (std::isinf(r) || std::isinf(g))
      err = (r == g) ? 0 : INFINITY;
    else
      err = std::fabs(g - r);
    c.maxAbsError = std::max(c.maxAbsError, err);
    if (!(err <= limit)) { // a NaN limit fails every element
      if (c.firstMismatch < 0)
        c.firstMismatch = i;
      ++c.mismatches;
    }
  }
  c.relError = c.maxAbsRef > 0 ? c.maxAbsError / c.maxAbsRef : c.maxAbsError;
  c.pass = c.mismatches == 0;
  return c;
}

namespace {

bool isPassThrough(ir::OpKind k) {
  switch (k) {
  case ir::OpKind::Reshape:
  case ir::OpKind::Flatten:
  case ir::OpKind::Squeeze:
  case ir::OpKind::Unsqueeze:
  case ir::OpKind::Identity:
  case ir::OpKind::Transpose:
    return true;
  default:
    return false;
  }
}

/// Per-tensor (scale, zp) of a DequantizeLinear node, else false.
bool dqParams(const ir::Node &n, OutputQuant &q) {
  const ir::Value *x = n.input(0), *s = n.input(1), *z = n.input(2);
  if (!x || ir::isFloat(x->dtype))
    return false;
  if (s && s->isConstant() && s->constant->numElements() == 1) {
    q.scale = s->constant->getDouble(0);
    q.zeroPoint = 0;
    if (z) {
      if (!z->isConstant() || z->constant->numElements() != 1)
        return false;
      q.zeroPoint = static_cast<int32_t>(z->constant->getInt(0));
    }
  } else if (!s && x->quant && x->quant->scale.size() == 1) {
    q.scale = x->quant->scale[0];
    q.zeroPoint = x->quant->zeroPoint.empty() ? 0 : x->quant->zeroPoint[0];
  } else {
    return false;
  }
  return q.scale > 0 && std::isfinite(q.scale);
}

/// The DequantizeLinear above `v` through pass-through ops, if any.
const ir::Node *dqAbove(const ir::Value *v) {
  while (v && v->producer) {
    const ir::Node *p = v->producer;
    if (p->kind == ir::OpKind::DequantizeLinear)
      return p;
    if (!isPassThrough(p->kind))
      return nullptr;
    v = p->input(0);
  }
  return nullptr;
}

double stepsDq(double g, double r, double s) {
  if (std::isnan(g) || std::isnan(r))
    return (std::isnan(g) && std::isnan(r)) ? 0 : INFINITY;
  return std::fabs(std::nearbyint(g / s) - std::nearbyint(r / s));
}

} // namespace

OutputQuant classifyOutput(const ir::Graph &g, const ir::Value &v) {
  (void)g;
  OutputQuant q;
  if (!ir::isFloat(v.dtype)) {
    if (v.dtype != ir::DType::Bool)
      q.kind = OutputKind::Integer;
    return q;
  }
  if (const ir::Node *dq = dqAbove(&v)) {
    if (dqParams(*dq, q))
      q.kind = OutputKind::Dequantized;
    return q;
  }
  const ir::Node *p = v.producer;
  if (p && p->kind == ir::OpKind::Softmax && p->input(0)) {
    const ir::Node *dq = p->input(0)->producer;
    if (dq && dq->kind == ir::OpKind::DequantizeLinear && dqParams(*dq, q)) {
      int64_t rank = static_cast<int64_t>(v.shape.size());
      int64_t axis = p->attrInt("axis", -1);
      if (axis < 0)
        axis += rank;
      if (axis >= 0 && axis < rank) {
        q.kind = OutputKind::SoftmaxOfDq;
        q.axis = axis;
        return q;
      }
    }
  }
  return OutputQuant{};
}

std::string describe(const OutputQuant &q) {
  char b[96];
  switch (q.kind) {
  case OutputKind::Float:
    return "float";
  case OutputKind::Integer:
    return "int";
  case OutputKind::Dequantized:
    std::snprintf(b, sizeof b, "dq(s=%.6g,zp=%d)", q.scale, q.zeroPoint);
    return b;
  case OutputKind::SoftmaxOfDq:
    std::snprintf(b, sizeof b, "softmax(dq s=%.6g)", q.scale);
    return b;
  }
  return "?";
}

Comparison compareSteps(const ir::Tensor &got, const ir::Tensor &ref, const OutputQuant &q,
                        double maxSteps) {
  // Absolute/relative errors as for a float comparison (informative).
  Comparison c = compareTensors(got, ref, 0.0, 0);
  if (c.shapeMismatch)
    return c;
  c.firstMismatch = -1;
  c.mismatches = 0;
  c.maxSteps = 0;
  int64_t n = ref.numElements();
  double limit = maxSteps + (q.kind == OutputKind::SoftmaxOfDq ? 1e-3 : 0.0);
  auto note = [&](int64_t i, double st) {
    c.maxSteps = std::max(c.maxSteps, st);
    if (!(st <= limit)) {
      if (c.firstMismatch < 0)
        c.firstMismatch = i;
      ++c.mismatches;
    }
  };
  if (q.kind == OutputKind::Integer || q.kind == OutputKind::Float) {
    for (int64_t i = 0; i < n; ++i)
      note(i, ir::isFloat(ref.dtype()) ? std::fabs(got.getDouble(i) - ref.getDouble(i))
                                       : std::fabs(double(got.getInt(i) - ref.getInt(i))));
  } else if (q.kind == OutputKind::Dequantized) {
    for (int64_t i = 0; i < n; ++i)
      note(i, stepsDq(got.getDouble(i), ref.getDouble(i), q.scale));
  } else {
    const ir::Shape &sh = ref.shape();
    int64_t outer = 1, len = 1, inner = 1;
    for (int64_t d = 0; d < static_cast<int64_t>(sh.size()); ++d)
      (d < q.axis ? outer : d == q.axis ? len : inner) *= sh[static_cast<size_t>(d)];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        double lo = INFINITY, hi = -INFINITY;
        int64_t bad = -1;
        std::vector<std::pair<double, int64_t>> ds; // (d, element index)
        for (int64_t j = 0; j < len; ++j) {
          int64_t i = (o * len + j) * inner + in;
          double gv = got.getDouble(i), rv = ref.getDouble(i);
          if (gv == 0 && rv == 0)
            continue;
          if (!(gv > 0) || !(rv > 0) || !std::isfinite(gv) || !std::isfinite(rv)) {
            bad = i;
            break;
          }
          double d = (std::log(gv) - std::log(rv)) / q.scale;
          lo = std::min(lo, d);
          hi = std::max(hi, d);
          ds.emplace_back(d, i);
        }
        if (bad >= 0) {
          note(bad, INFINITY);
          continue;
        }
        double rowSteps = hi >= lo ? (hi - lo) / 2 : 0.0;
        // A failing row names its element farthest from the row's median shift: the one
        // element that differs when the others agree (its row start otherwise said nothing).
        int64_t at = (o * len) * inner + in;
        if (!(rowSteps <= limit) && !ds.empty()) {
          std::vector<double> sorted;
          for (const auto &e : ds)
            sorted.push_back(e.first);
          std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
          double median = sorted[sorted.size() / 2], far = -1;
          for (const auto &e : ds)
            if (std::fabs(e.first - median) > far) {
              far = std::fabs(e.first - median);
              at = e.second;
            }
        }
        note(at, rowSteps);
      }
  }
  c.pass = c.mismatches == 0;
  return c;
}

InterpComparison compareWithInterpreter(const ir::Tensor &got, const ir::Tensor &want,
                                        const OutputQuant &kind, bool quantizedProgram, bool exact,
                                        double relTol, double steps) {
  InterpComparison r;
  r.bitExact = got.dtype() == want.dtype() && got.byteSize() == want.byteSize() &&
               std::equal(got.bytes().begin(), got.bytes().end(), want.bytes().begin());
  const bool isFloat = kind.kind == OutputKind::Float;
  char rule[48];
  if (exact && quantizedProgram) {
    std::snprintf(rule, sizeof rule, "bit-exact");
    r.cmp = isFloat ? compareTensors(got, want, 0.0, 0) : compareSteps(got, want, kind, 0);
    if (isFloat || kind.kind != OutputKind::SoftmaxOfDq)
      r.cmp.pass = r.cmp.pass && r.bitExact;
  } else if (!exact && !isFloat) {
    std::snprintf(rule, sizeof rule, "steps<=%g", steps);
    r.cmp = compareSteps(got, want, kind, steps);
  } else {
    std::snprintf(rule, sizeof rule, "rel<=%g", relTol);
    r.cmp = compareTensors(got, want, relTol, 0);
  }
  r.rule = rule;
  r.pass = r.cmp.pass;
  return r;
}

bool isQuantizedGraph(const ir::Graph &g) {
  for (const auto &n : g.nodes())
    if (n->kind == ir::OpKind::QuantizeLinear || n->kind == ir::OpKind::DequantizeLinear)
      return true;
  for (const auto &v : g.values())
    if (v->quant && !ir::isFloat(v->dtype) && !v->isConstant())
      return true;
  return false;
}

} // namespace npucc::driver
