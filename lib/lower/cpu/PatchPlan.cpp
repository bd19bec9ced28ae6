//===- PatchPlan.cpp - Row ranges, leading chain and cost of CPU patches ---===//
//
// The geometry and the choice behind include/npucc/lower/Patches.h: which
// layers may run in stripes, the input rows of a stripe's output rows, and
// the estimated instructions of the recomputed halo rows and the copies.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuCost.h"
#include "npucc/lower/Patches.h"
#include "npucc/lower/QuantLowering.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace npucc::lower::patch {

using ir::Node;
using ir::OpKind;
using ir::Value;

RowSpan inputRows(const RowWindow &w, int64_t o0, int64_t o1) {
  RowSpan r;
  int64_t first = o0 * w.S - w.PT;                            // first window row
  int64_t last = (o1 - 1) * w.S - w.PT + (w.K - 1) * w.D + 1; // one past the last
  r.begin = std::clamp<int64_t>(first, 0, w.H);
  r.end = std::clamp<int64_t>(last, 0, w.H);
  if (r.end <= r.begin) {
    r.end = r.begin;
    return r;
  }
  r.padTop = r.begin - first;
  r.padBottom = last - r.end;
  return r;
}

bool PatchPlan::contains(const Node *n) const {
  for (const Layer &l : layers)
    if (l.node == n)
      return true;
  return false;
}

std::string PatchPlan::summary() const {
  std::ostringstream os;
  os << "patches: " << layers.size() << " layers " << layers.front().node->name << " .. "
     << last()->name << " in " << stripes.size() << " stripes of " << rows
     << " output rows, estimated +" << int64_t(extraCost) << " instructions = +";
  os.precision(3);
  os << (modelCost > 0 ? 100.0 * extraCost / modelCost : 0.0) << "% of the model's";
  return os.str();
}

namespace {

bool int8Act(const Value *v) {
  return v && v->dtype == ir::DType::I8 && v->quant && v->shape.size() == 4 && v->shape[0] == 1;
}

bool floatAct(const Value *v) {
  return v && v->dtype == ir::DType::F32 && v->shape.size() == 4 && v->shape[0] == 1;
}

/// A 2-D Conv, MaxPool or AveragePool, int8 (quantized) or float, whose stripes its
/// family lowering can run: explicit pads, floor rounding of the output size, a Conv's
/// weights (and bias) constant; the lowering chooses the kernel as for the whole layer.
bool stripeableWindow(const Node &n, Layer &l) {
  const Value *x = n.input(0), *w = n.input(1), *b = n.input(2), *y = n.output(0);
  bool conv = n.kind == OpKind::Conv;
  bool pool = n.kind == OpKind::MaxPool || n.kind == OpKind::AveragePool;
  bool q8 = int8Act(x) && int8Act(y), f32 = floatAct(x) && floatAct(y);
  if ((!conv && !pool) || n.hasAttr("npu") || n.hasAttr("rq_stage") || !(q8 || f32) ||
      n.outputs.size() != 1)
    return false;
  if (f32 && conv && (!w || w->dtype != ir::DType::F32))
    return false;
  if (conv && (!w || !w->isConstant() || w->shape.size() != 4 || (b && !b->isConstant())))
    return false;
  if (n.hasAttr("auto_pad") && n.attrString("auto_pad", "NOTSET") != "NOTSET")
    return false;
  if (pool && n.attrInt("ceil_mode", 0) != 0)
    return false;
  std::vector<int64_t> s = n.attrInts("strides", {1, 1}), d = n.attrInts("dilations", {1, 1}),
                       p = n.attrInts("pads", {0, 0, 0, 0});
  std::vector<int64_t> k =
      conv ? std::vector<int64_t>{w->shape[2], w->shape[3]} : n.attrInts("kernel_shape");
  if (s.size() != 2 || d.size() != 2 || p.size() != 4 || k.size() != 2)
    return false;
  l.node = &n;
  l.C = x->shape[1];
  l.W = x->shape[3];
  l.M = y->shape[1];
  l.OW = y->shape[3];
  l.win = RowWindow{k[0], s[0], d[0], p[0], x->shape[2], y->shape[2]};
  l.inSize = l.outSize = ir::dtypeSize(x->dtype);
  // The stripes' pads give exactly their rows only when the whole layer's do.
  const RowWindow &r = l.win;
  return r.K >= 1 && r.S >= 1 && r.D >= 1 && r.PT >= 0 && p[2] >= 0 &&
         (r.H + r.PT + p[2] - ((r.K - 1) * r.D + 1)) / r.S + 1 == r.OH;
}

/// The float input's per-tensor QuantizeLinear to int8.
bool stripeableQuantize(const Node &n, Layer &l) {
  const Value *x = n.input(0), *y = n.output(0);
  if (n.kind != OpKind::QuantizeLinear || n.hasAttr("npu") || !x || !int8Act(y) ||
      x->dtype != ir::DType::F32 || x->shape != y->shape || y->quant->perChannel())
    return false;
  l.node = &n;
  l.quantize = true;
  l.C = l.M = x->shape[1];
  l.W = l.OW = x->shape[3];
  l.win = RowWindow{1, 1, 1, 0, x->shape[2], x->shape[2]};
  l.inSize = 4;
  return true;
}

std::string lower(const char *s) {
  std::string r;
  for (; *s; ++s)
    r += char(std::tolower(static_cast<unsigned char>(*s)));
  return r;
}

/// Instructions assumed per kernel call beyond its work (argument set-up, loop
/// prologues; the fitted rows' constants are not per-call figures).
constexpr double kCallOverhead = 300;
/// At most this many calls in a plan's unrolled stripes (code size).
constexpr int64_t kMaxCalls = 400;

double callCost(const std::string &callee, const KernelWork &w) {
  lir::Instr in;
  in.opcode = "call";
  in.callee = callee;
  return double(estimateCpuCall(in, w).cycles[int(CpuCore::CortexM4)]);
}

} // namespace

std::vector<Layer> leadingChain(const ir::Graph &g) {
  std::map<const Value *, int> uses;
  for (const auto &np : g.nodes())
    for (const Value *in : np->inputs)
      if (in)
        ++uses[in];
  std::map<const Value *, const Node *> consumer;
  for (const auto &np : g.nodes())
    for (const Value *in : np->inputs)
      if (in && uses[in] == 1)
        consumer[in] = np.get();
  auto isOutput = [&](const Value *v) {
    return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
  };
  std::vector<Layer> chain;
  if (g.inputs.size() != 1 || !consumer.count(g.inputs[0]))
    return chain;
  const Node *n = consumer[g.inputs[0]];
  Layer l;
  if (stripeableQuantize(*n, l) || (stripeableWindow(*n, l) && n->input(0) == g.inputs[0]))
    chain.push_back(l);
  while (!chain.empty()) {
    const Value *y = chain.back().node->output(0);
    if (isOutput(y) || !consumer.count(y))
      break;
    const Node *next = consumer[y];
    Layer c;
    if (next->input(0) != y || !stripeableWindow(*next, c))
      break;
    chain.push_back(c);
  }
  if (!chain.empty() && chain.back().quantize)
    chain.pop_back(); // a lone QuantizeLinear gains nothing
  return chain;
}

bool makePlan(const std::vector<Layer> &chain, size_t n, int64_t rows, PatchPlan &plan) {
  if (n == 0 || n > chain.size() || rows < 1)
    return false;
  plan = PatchPlan();
  plan.layers.assign(chain.begin(), chain.begin() + int64_t(n));
  plan.rows = rows;
  int64_t OH = plan.layers.back().win.OH;
  std::vector<int64_t> avail(n, 0); // input rows of each layer computed so far
  std::vector<int64_t> lastComputed(n, -1);
  for (int64_t o0 = 0; o0 < OH; o0 += rows) {
    Stripe s;
    s.out.resize(n);
    s.in.resize(n);
    s.kept.assign(n, 0);
    s.save.assign(n, 0);
    std::pair<int64_t, int64_t> want{o0, std::min(OH, o0 + rows)};
    for (size_t i = n; i-- > 0;) {
      s.out[i] = want;
      if (want.second <= want.first) { // nothing new below: the layers above neither
        want = {0, 0};
        continue;
      }
      RowSpan in = inputRows(plan.layers[i].win, want.first, want.second);
      if (in.end <= in.begin)
        return false;
      s.in[i] = in;
      if (i > 0) {
        // Rows computed by an earlier stripe come from the halo buffer, which the last
        // stripe computing this layer filled with the tail of its input rows.
        int64_t kept = std::max<int64_t>(0, avail[i] - in.begin);
        s.kept[i] = kept;
        if (kept > 0) {
          Stripe &prev = plan.stripes[size_t(lastComputed[i])];
          if (prev.in[i].end != avail[i] || prev.in[i].end - prev.in[i].begin < kept)
            return false;
          prev.save[i] = kept;
        }
      }
      lastComputed[i] = int64_t(plan.stripes.size());
      int64_t newBegin = std::max(avail[i], in.begin);
      want = {newBegin, std::max(newBegin, in.end)};
      avail[i] = std::max(avail[i], in.end);
    }
    plan.stripes.push_back(std::move(s));
  }
  // Calls: per computing layer its kernel(s) and up to three copies, one copy out.
  for (const Stripe &s : plan.stripes) {
    for (size_t i = 0; i < n; ++i)
      if (s.out[i].second > s.out[i].first)
        plan.calls += (plan.layers[i].quantize ? plan.layers[i].C : 1) + (i > 0 ? 1 : 0) +
                      (s.kept[i] > 0) + (s.save[i] > 0) + (i == 0 && !plan.layers[i].quantize);
    ++plan.calls;
  }
  return true;
}

double nodeCost(const Node &n) {
  const Value *x = n.input(0), *w = n.input(1), *y = n.output(0);
  KernelWork k;
  if (y)
    k.outElems = uint64_t(y->numElements());
  if (x)
    k.inElems = uint64_t(x->numElements());
  if (w && w->isConstant())
    k.constElems = uint64_t(w->numElements());
  std::string callee = std::string("npucc_") + lower(n.opName()) + "_s8";
  if (n.kind == OpKind::QuantizeLinear)
    callee = "npucc_quantize_f32_s8_fast";
  if (n.kind == OpKind::Conv && x && y && w && w->isConstant() && y->shape.size() == 4 &&
      (w->dtype == ir::DType::I8 || w->dtype == ir::DType::F32)) {
    int64_t G = n.attrInt("group", 1), M = y->shape[1];
    int64_t K = w->numElements() / std::max<int64_t>(M, 1);
    bool dw = G > 1 && G == x->shape[1] && G == M, f32 = w->dtype == ir::DType::F32;
    callee = f32      ? (dw ? "npucc_depthwise_conv2d_f32" : "npucc_conv2d_f32")
             : dw     ? "npucc_dwconv2d_s8_fast"
             : G == 1 ? "npucc_conv2d_s8_fast"
                      : "npucc_conv2d_s8";
    int64_t live = M; // channels with a non-zero weight (the fast kernel skips the others)
    if (!f32) {
      const int8_t *wd = w->constant->data<int8_t>();
      live = 0;
      for (int64_t m = 0; m < M; ++m)
        live += std::any_of(wd + m * K, wd + (m + 1) * K, [](int8_t v) { return v != 0; });
    }
    k.macs = uint64_t(live * K * y->shape[2] * y->shape[3]);
  }
  return callCost(callee, k);
}

double modelCost(const ir::Graph &g) {
  double c = 0;
  for (const auto &np : g.nodes())
    if (!(np->info().flags & ir::OPF_VIEW))
      c += nodeCost(*np);
  return c;
}

void estimate(PatchPlan &plan) {
  plan.baseCost = plan.extraCost = 0;
  for (const Layer &l : plan.layers)
    plan.baseCost += nodeCost(*l.node);
  int64_t wholeCalls = int64_t(plan.layers.size());
  // Every row is computed once: the extra is the copies (bytes at the fitted copy
  // rate) and each call's overhead beyond the layer-by-layer program's calls.
  uint64_t copied = 0;
  for (const Stripe &s : plan.stripes) {
    for (size_t i = 0; i < plan.layers.size(); ++i) {
      const Layer &l = plan.layers[i];
      if (s.out[i].second <= s.out[i].first)
        continue;
      int64_t inRows = s.in[i].end - s.in[i].begin;
      if (i == 0 && !l.quantize)
        copied += uint64_t(l.C * l.inRow() * inRows);
      if (i > 0)
        copied += uint64_t(l.C * l.inRow() * (inRows + s.save[i]));
    }
    const Layer &last = plan.layers.back();
    copied += uint64_t(last.M * last.outRow() * (s.out.back().second - s.out.back().first));
  }
  KernelWork k;
  k.outElems = copied;
  plan.extraCost = callCost("npucc_copy_rows", k) + kCallOverhead * double(plan.calls - wholeCalls);
}

std::vector<PatchPlan> candidatePlans(const ir::Graph &g, double budget) {
  std::vector<Layer> chain = leadingChain(g);
  double model = modelCost(g);
  std::vector<PatchPlan> plans;
  for (size_t n = 2; n <= chain.size(); ++n) {
    int64_t OH = chain[n - 1].win.OH, lastRows = 0;
    for (int64_t k : {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}) {
      int64_t rows = (OH + k - 1) / k;
      if (k > OH || rows == lastRows)
        continue;
      lastRows = rows;
      PatchPlan plan;
      if (!makePlan(chain, n, rows, plan) || plan.calls > kMaxCalls)
        continue;
      plan.modelCost = model;
      estimate(plan);
      if (plan.extraCost <= budget * model)
        plans.push_back(std::move(plan));
    }
  }
  std::stable_sort(plans.begin(), plans.end(),
                   [](const PatchPlan &a, const PatchPlan &b) { return a.calls < b.calls; });
  return plans;
}

} // namespace npucc::lower::patch
