//===- Accuracy.cpp - Float vs int8 metrics over samples -------------------===//
//
// measureAccuracy runs both graphs with interp::runGraph on every sample,
// dequantizes integer values with their quant params and accumulates SNR,
// cosine similarity, max abs error and top-1 agreement per graph output and
// (opts.perLayer) per value present in both graphs by name. Formatting lives
// in AccuracyFormat.cpp.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/Accuracy.h"

#include "npucc/interp/Interpreter.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>

namespace npucc::quant {

using ir::DType;

//===----------------------------------------------------------------------===//
// Metrics
//===----------------------------------------------------------------------===//

namespace {

int64_t argmax(const std::vector<double> &v, size_t begin, size_t len) {
  size_t best = begin;
  for (size_t i = begin + 1; i < begin + len; ++i)
    if (v[i] > v[best])
      best = i;
  return static_cast<int64_t>(best - begin);
}

} // namespace

void MetricAccumulator::add(const std::vector<double> &ref, const std::vector<double> &q,
                            int64_t rowLen) {
  size_t n = std::min(ref.size(), q.size());
  for (size_t i = 0; i < n; ++i) {
    double e = ref[i] - q[i];
    SumRef2 += ref[i] * ref[i];
    SumQ2 += q[i] * q[i];
    SumErr2 += e * e;
    Dot += ref[i] * q[i];
    MaxAbs = std::max(MaxAbs, std::fabs(e));
  }
  Count += static_cast<int64_t>(n);
  if (rowLen <= 0)
    return;
  size_t len = static_cast<size_t>(rowLen);
  for (size_t b = 0; b + len <= n; b += len) {
    ++Rows;
    Agree += argmax(ref, b, len) == argmax(q, b, len);
  }
}

double MetricAccumulator::snrDb() const {
  if (SumErr2 == 0)
    return std::numeric_limits<double>::infinity();
  if (SumRef2 == 0)
    return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(SumRef2 / SumErr2);
}

double MetricAccumulator::cosine() const {
  if (SumRef2 == 0 && SumQ2 == 0)
    return 1.0;
  if (SumRef2 == 0 || SumQ2 == 0)
    return 0.0;
  return Dot / std::sqrt(SumRef2 * SumQ2);
}

bool isClassifierShape(const ir::Shape &s) { return s.size() == 2 && s[1] >= 2; }

//===----------------------------------------------------------------------===//
// Dequantization
//===----------------------------------------------------------------------===//

std::optional<ir::QuantParams> realValueParams(const ir::Value &v) {
  if (v.quant)
    return v.quant;
  if (ir::isFloat(v.dtype))
    return std::nullopt;
  const ir::Value *cur = &v;
  for (int depth = 0; depth < 16 && cur && cur->producer; ++depth) {
    const ir::Node &p = *cur->producer;
    if (cur->quant)
      return cur->quant;
    bool passThrough = (p.kind == ir::OpKind::Cast || p.kind == ir::OpKind::Identity) &&
                       p.input(0) && p.input(0)->dtype == cur->dtype;
    if (passThrough) {
      cur = p.input(0);
      continue;
    }
    if (p.kind != ir::OpKind::QuantizeLinear)
      return std::nullopt;
    const ir::Value *s = p.input(1), *z = p.input(2);
    if (!s || !s->isConstant() || (z && !z->isConstant()))
      return std::nullopt;
    int64_t cnt = s->constant->numElements();
    if (cnt < 1 || (z && z->constant->numElements() != cnt))
      return std::nullopt;
    ir::QuantParams qp;
    int64_t rank = static_cast<int64_t>(cur->shape.size());
    int64_t axis = p.attrInt("axis", 1);
    qp.axis = static_cast<int>(cnt > 1 ? (axis < 0 ? axis + rank : axis) : 0);
    for (int64_t i = 0; i < cnt; ++i) {
      qp.scale.push_back(static_cast<float>(s->constant->getDouble(i)));
      qp.zeroPoint.push_back(z ? static_cast<int32_t>(z->constant->getInt(i)) : 0);
    }
    return qp;
  }
  return std::nullopt;
}

Result<std::vector<double>> dequantize(const ir::Tensor &t, const ir::QuantParams *q) {
  int64_t n = t.numElements();
  std::vector<double> out(static_cast<size_t>(n));
  if (ir::isFloat(t.dtype())) {
    for (int64_t i = 0; i < n; ++i)
      out[static_cast<size_t>(i)] = t.getDouble(i);
    return out;
  }
  if (!q || q->scale.empty() || q->scale.size() != q->zeroPoint.size())
    return error(std::string("integer tensor (") + ir::dtypeName(t.dtype()) +
                 ") without quantization parameters");
  const ir::Shape &s = t.shape();
  int64_t inner = 1, channels = 1;
  if (q->perChannel()) {
    if (q->axis < 0 || static_cast<size_t>(q->axis) >= s.size() ||
        s[static_cast<size_t>(q->axis)] != static_cast<int64_t>(q->scale.size()))
      return error("per-channel parameters do not match the shape " + ir::shapeStr(s));
    channels = s[static_cast<size_t>(q->axis)];
    for (size_t d = static_cast<size_t>(q->axis) + 1; d < s.size(); ++d)
      inner *= s[d];
  }
  for (int64_t i = 0; i < n; ++i) {
    size_t c = q->perChannel() ? static_cast<size_t>((i / inner) % channels) : 0;
    // real = scale * (q - zp), computed like DequantizeLinear (float32).
    float v = static_cast<float>(t.getInt(i) - q->zeroPoint[c]) * q->scale[c];
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Measurement
//===----------------------------------------------------------------------===//

namespace {

/// A float sample for an integer input of the quantized graph is quantized
/// like QuantizeLinear: saturate(rint(x / scale) + zp).
Result<ir::Tensor> adaptInput(const ir::Value &in, const ir::Tensor &t) {
  if (t.dtype() == in.dtype || !ir::isFloat(t.dtype()) || !in.quant || in.quant->perChannel())
    return t;
  if (in.dtype != DType::I8 && in.dtype != DType::U8)
    return t;
  ir::Tensor out(in.dtype, t.shape());
  float sc = in.quant->scale[0];
  int64_t zp = in.quant->zeroPoint[0];
  int64_t lo = in.dtype == DType::I8 ? -128 : 0, hi = in.dtype == DType::I8 ? 127 : 255;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    float x = static_cast<float>(t.getDouble(i)) / sc;
    int64_t v = static_cast<int64_t>(std::nearbyint(x)) + zp;
    out.setInt(i, std::clamp(v, lo, hi));
  }
  return out;
}

struct Slot {
  TensorAccuracy row;
  MetricAccumulator acc;
  const ir::Value *fv = nullptr;
  const ir::Value *qv = nullptr;
};

std::string producerOp(const ir::Graph &g, const ir::Value &v) {
  if (v.producer)
    return v.producer->opName();
  return g.isGraphInput(&v) ? "input" : "";
}

/// Prepares a row comparing `fv` (float graph) and `qv` (quantized graph);
/// false with `why` when they cannot be compared.
bool makeSlot(const ir::Graph &fg, const ir::Graph &qg, const ir::Value *fv,
              const ir::Value *qv, Slot &slot, std::string &why) {
  if (fv->numElements() != qv->numElements() || fv->shape != qv->shape) {
    why = "shapes differ (" + ir::shapeStr(fv->shape) + " vs " + ir::shapeStr(qv->shape) + ")";
    return false;
  }
  for (auto [g, v] : {std::pair{&fg, fv}, std::pair{&qg, qv}})
    if (!ir::isFloat(v->dtype) && !realValueParams(*v)) {
      why = std::string("integer value without quantization parameters in the ") +
            (g == &fg ? "float" : "quantized") + " graph";
      return false;
    }
  slot.fv = fv;
  slot.qv = qv;
  slot.row.name = fv->name; // the layer as the float model names it
  slot.row.op = producerOp(qg, *qv);
  slot.row.qtype = ir::dtypeName(qv->dtype);
  slot.row.shape = qv->shape;
  slot.row.classifier = isClassifierShape(qv->shape);
  return true;
}

const ir::Tensor *find(const std::map<std::string, ir::Tensor> &m, const std::string &name) {
  auto it = m.find(name);
  return it == m.end() ? nullptr : &it->second;
}

Status accumulate(Slot &slot, const ir::Tensor *ft, const ir::Tensor *qt,
                  const std::string &sample) {
  if (!ft || !qt)
    return error("value '" + slot.row.name + "' was not computed for sample " + sample);
  auto fp = realValueParams(*slot.fv), qp = realValueParams(*slot.qv);
  auto ref = dequantize(*ft, fp ? &*fp : nullptr);
  auto q = dequantize(*qt, qp ? &*qp : nullptr);
  if (!ref || !q) {
    Diagnostic d = !ref ? ref.error() : q.error();
    d.message = "value '" + slot.row.name + "': " + d.message;
    return d;
  }
  if (ref->size() != q->size())
    return error("value '" + slot.row.name + "' has " + std::to_string(ref->size()) +
                 " elements in the float graph but " + std::to_string(q->size()) +
                 " in the quantized graph");
  int64_t rowLen = slot.row.classifier ? slot.row.shape.back() : 0;
  slot.acc.add(*ref, *q, rowLen);
  return success();
}

void finish(Slot &s) {
  s.row.elements = s.acc.elements();
  s.row.snrDb = s.acc.snrDb();
  s.row.cosine = s.acc.cosine();
  s.row.maxAbsError = s.acc.maxAbsError();
  s.row.top1Rows = s.acc.rows();
  s.row.top1Agree = s.acc.rowsAgreeing();
}

} // namespace

std::vector<std::string> listFloatOps(const ir::Graph &quantGraph) {
  std::vector<std::string> out;
  for (const auto &n : quantGraph.nodes()) {
    if (n->kind == ir::OpKind::QuantizeLinear || n->kind == ir::OpKind::DequantizeLinear)
      continue;
    bool typed = false, floatOut = false;
    for (const ir::Value *v : n->inputs)
      typed |= v && v->quant && !ir::isFloat(v->dtype);
    for (const ir::Value *v : n->outputs) {
      typed |= v && v->quant && !ir::isFloat(v->dtype);
      floatOut |= v && ir::isFloat(v->dtype);
    }
    if (floatOut && !typed)
      out.push_back((n->name.empty() ? n->outputs[0]->name : n->name) + " (" + n->opName() + ")");
  }
  return out;
}

Result<AccuracyReport> measureAccuracy(const ir::Graph &floatGraph, const ir::Graph &quantGraph,
                                       const std::vector<Sample> &samples,
                                       const AccuracyOptions &opts) {
  auto fail = [&](std::string msg) {
    return Diagnostic("accuracy report: " + std::move(msg)).inFile(quantGraph.sourceFile);
  };
  if (samples.empty())
    return fail("no samples to evaluate");
  AccuracyReport rep;
  rep.samplesOrigin = opts.samplesOrigin;
  rep.perLayer = opts.perLayer;
  rep.floatOps = opts.floatOps;

  // Outputs: by name, else by position when both graphs have as many.
  std::vector<Slot> outs;
  for (size_t i = 0; i < quantGraph.outputs.size(); ++i) {
    const ir::Value *qv = quantGraph.outputs[i];
    const ir::Value *fv = floatGraph.findValue(qv->name);
    if (!fv || !floatGraph.isGraphOutput(fv))
      fv = floatGraph.outputs.size() == quantGraph.outputs.size() ? floatGraph.outputs[i] : nullptr;
    if (!fv)
      return fail("quantized graph output '" + qv->name + "' has no float counterpart");
    Slot s;
    std::string why;
    if (!makeSlot(floatGraph, quantGraph, fv, qv, s, why))
      return fail("graph output '" + qv->name + "': " + why);
    outs.push_back(std::move(s));
  }

  // Layers: values produced by nodes of the quantized graph whose name (or,
  // for the quantizer's "<name>_quantized", <name>) is a non-constant,
  // non-input value of the float graph; each float value once, first match
  // in the quantized graph's node order.
  std::vector<Slot> layers;
  std::set<const ir::Value *> matched;
  auto counterpart = [&](const ir::Value *qv) -> const ir::Value * {
    static const std::string kSuffix = "_quantized";
    const ir::Value *fv = floatGraph.findValue(qv->name);
    const std::string &nm = qv->name;
    if (!fv && nm.size() > kSuffix.size() &&
        nm.compare(nm.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
      fv = floatGraph.findValue(nm.substr(0, nm.size() - kSuffix.size()));
    if (!fv || fv->isConstant() || floatGraph.isGraphInput(fv) || matched.count(fv))
      return nullptr;
    return fv;
  };
  if (opts.perLayer)
    for (const auto &n : quantGraph.nodes())
      for (const ir::Value *qv : n->outputs) {
        if (!qv || qv->isConstant())
          continue;
        const ir::Value *fv = counterpart(qv);
        if (!fv)
          continue;
        matched.insert(fv);
        Slot s;
        std::string why;
        if (makeSlot(floatGraph, quantGraph, fv, qv, s, why))
          layers.push_back(std::move(s));
        else
          rep.skipped.push_back(qv->name + ": " + why);
      }

  for (size_t si = 0; si < samples.size(); ++si) {
    const Sample &smp = samples[si];
    std::string sname = smp.origin.empty() ? "#" + std::to_string(si) : smp.origin;
    rep.sampleNames.push_back(sname);
    std::map<std::string, ir::Tensor> qin;
    for (const ir::Value *in : quantGraph.inputs) {
      auto it = smp.inputs.find(in->name);
      if (it == smp.inputs.end())
        continue; // runGraph reports the missing input
      auto t = adaptInput(*in, it->second);
      if (!t)
        return fail("sample " + sname + ": " + t.error().message);
      qin[in->name] = t.take();
    }
    std::map<std::string, ir::Tensor> fAll, qAll;
    std::map<std::string, ir::Tensor> *fp = opts.perLayer ? &fAll : nullptr;
    std::map<std::string, ir::Tensor> *qp = opts.perLayer ? &qAll : nullptr;
    auto fr = interp::runGraph(floatGraph, smp.inputs, fp);
    if (!fr)
      return std::move(fr.error().note("while running the float graph on sample " + sname));
    auto qr = interp::runGraph(quantGraph, qin, qp);
    if (!qr)
      return std::move(qr.error().note("while running the quantized graph on sample " + sname));
    for (Slot &s : outs)
      NPUCC_TRY(accumulate(s, find(*fr, s.fv->name), find(*qr, s.qv->name), sname));
    for (Slot &s : layers)
      NPUCC_TRY(accumulate(s, find(fAll, s.fv->name), find(qAll, s.qv->name), sname));
  }
  for (Slot &s : outs) {
    finish(s);
    rep.outputs.push_back(s.row);
  }
  for (Slot &s : layers) {
    finish(s);
    rep.layers.push_back(s.row);
  }
  return rep;
}

} // namespace npucc::quant
