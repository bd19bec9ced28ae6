//===- NpuPartition.cpp - Place ops on the NPU; NHWC layout for them ------===//
//
// For the NPU of PassContext::target (none: nothing to do):
//  1. Placement. Each node the description accepts (target::placeNode, the
//     one legality function per command kind) and for which a tiling fits
//     (lower::npuTilingFits) gets the attribute npu="conv|depthwise|matmul|
//     pool|eltwise". Nodes imported with fp32 requantization that go to the
//     NPU lose requant="fp32" (the NPU rounds exactly; statistic
//     npu-partition.rounding-exact).
//  1b. Fusion. On an NPU whose activation stage is lut256 or pwl, an int8
//     lookup-table activation that alone reads an NPU conv/depthwise/matmul
//     output joins the node's table (attributes act_fn, act_in_scale, ...:
//     quant/FusedActivation.h; statistic npu-partition.fused-activation);
//     on pwl with the fitted segments (act_pwl, quant/Pwl.h).
//  1c. Pool fusion. On an NPU whose conv/depthwise pool stage is max, an
//     int8 MaxPool (k x k, stride k, no padding) that alone reads such a node's
//     output joins it (attribute pool_max = k, quant/FusedPool.h; statistic
//     npu-partition.fused-pool).
//  2. Layout. NPU convolutions and pooling read and write HWC: their 4-D
//     activations become NHWC values (shape [N,H,W,C], attribute
//     layout="NHWC" on the node). Element-wise int8 ops whose operands are
//     all NHWC stay NHWC (same shapes, so the order of elements does not
//     matter to them); a 4-D constant operand is replaced by a copy with its
//     data permuted to NHWC, a one-element constant is kept, and a constant
//     of another rank keeps the op NCHW. Everything else, and the graph
//     outputs, see NCHW.
//     A Transpose is inserted only where a value crosses from one layout to
//     the other, once per value (statistic npu-partition.transposes).
// The graph stays executable by the reference interpreter, which evaluates
// layout="NHWC" nodes by transposing around the NCHW definition.
//
//===----------------------------------------------------------------------===//
#include "npucc/passes/Pass.h"

#include "npucc/lower/NpuLowering.h"
#include "npucc/quant/FusedActivation.h"
#include "npucc/quant/FusedPool.h"
#include "npucc/quant/Multiplier.h"
#include "npucc/quant/Pwl.h"
#include "npucc/target/Legality.h"

#include "../../runtime/hal/npucc_params.h"
#include "PassUtils.h"

#include <map>
#include <set>

namespace npucc::passes {

namespace {

using ir::Graph;
using ir::Node;
using ir::OpKind;
using ir::Value;

const std::vector<int64_t> ToNhwc = {0, 2, 3, 1}, ToNchw = {0, 3, 1, 2};

ir::Shape permute(const ir::Shape &s, const std::vector<int64_t> &perm) {
  ir::Shape r;
  for (int64_t p : perm)
    r.push_back(s[size_t(p)]);
  return r;
}

bool is4d(const Value *v) { return v && !v->isConstant() && v->shape.size() == 4; }

/// Element-wise int8 ops that may run on NHWC operands unchanged.
bool layoutAgnostic(const Node &n) {
  switch (n.kind) {
  case OpKind::Relu:
  case OpKind::Clip:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
  case OpKind::HardSwish:
  case OpKind::HardSigmoid:
  case OpKind::LeakyRelu:
    return n.output(0) && n.output(0)->dtype == ir::DType::I8;
  case OpKind::Add:
  case OpKind::Mul: {
    const Value *a = n.input(0), *b = n.input(1);
    return a && b && a->shape == b->shape && n.output(0) && n.output(0)->dtype == ir::DType::I8;
  }
  default:
    return false;
  }
}

class Partitioner {
public:
  Partitioner(Graph &g, PassContext &ctx) : G(g), Ctx(ctx) {}

  void place() {
    target::LegalityOptions lo;
    lo.allowExactForFp32 = Ctx.npuExactForFp32;
    lo.allowFp32ForExact = Ctx.npuFp32ForExact;
    for (const auto &n : G.nodes()) {
      target::Placement p = target::placeNode(*n, *Ctx.target, lo);
      if (!p.onNpu()) {
        if (!p.candidate.empty())
          Ctx.bump("npu-partition.cpu");
        continue;
      }
      std::string why;
      if (!lower::npuTilingFits(*p.op, *Ctx.target, &why)) {
        Ctx.bump("npu-partition.no-tiling");
        Ctx.warnings.push_back("node '" + n->name + "' (" + n->opName() +
                               ") runs on the CPU kernels: no tiling fits the NPU '" +
                               Ctx.target->name + "': " + why);
        continue;
      }
      n->attrs["npu"] = p.op->kindName;
      // The node takes the NPU's rounding, so that the interpreter (which
      // reads the attribute) computes what the NPU computes.
      if (p.op->rqMsa) {
        // mul_shift_add: the interpreter fits the same parameters from the
        // node's scales and these widths (quant::fitMulShiftAdd).
        quant::setMsaAttrs(*n, p.op->msa);
        Ctx.bump("npu-partition.rounding-mul-shift-add");
      } else if (p.op->roundingChanged && p.op->fp32Scale) {
        n->attrs["requant"] = std::string(quant::roundingName(quant::Rounding::Fp32));
        Ctx.bump("npu-partition.rounding-fp32");
      } else if (p.op->roundingChanged) {
        n->attrs.erase("requant");
        Ctx.bump("npu-partition.rounding-exact");
      }
      Ctx.bump("npu-partition.npu");
    }
  }

  /// lut256: an int8 lookup-table activation (Sigmoid, Tanh, HardSwish,
  /// LeakyRelu, HardSigmoid) that alone reads an NPU MAC node's output goes
  /// into the node's table (quant::fuseActivation); the node keeps the
  /// activation's output value and name.
  void fuseActivations() {
    util::UseIndex uses(G);
    for (const auto &np : G.nodes()) {
      Node *n = np.get();
      std::string kind = n->attrString("npu", "");
      const target::OpLimits *l = Ctx.target->operation(kind);
      if ((kind != "conv" && kind != "depthwise" && kind != "matmul") || !l ||
          (l->stage(NPUCC_SLOT_ACTIVATION) != NPUCC_STAGE_ACT_LUT256 &&
           l->stage(NPUCC_SLOT_ACTIVATION) != NPUCC_STAGE_ACT_PWL) ||
          !uses.hasSingleUse(n->output(0)))
        continue;
      Node *act = uses.users(n->output(0)).front();
      Value *mid = n->output(0);
      if (act->hasAttr("npu") || !quant::fuseActivation(*n, *act))
        continue;
      // pwl: the fitted segments go with the node (the interpreter and the
      // lowering read them; npucc check reports the fit's distance).
      if (l->stage(NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_PWL) {
        std::optional<quant::PwlFit> f = quant::fitFusedActivation(*n, l->pwlSegments);
        if (f)
          quant::setPwlAttr(*n, f->segments);
        Ctx.bump("npu-partition.fused-activation-pwl");
      }
      mid->producer = nullptr;
      uses.dropNode(act);
      G.eraseNode(act);
      Ctx.erased.push_back(act);
      Ctx.bump("npu-partition.fused-activation");
    }
  }

  /// pool max: an int8 MaxPool (k x k, stride k, no padding, k among the
  /// stage's kernels) that alone reads an NPU conv's or depthwise's output
  /// (after any fused activation) folds into it (quant::fusePool); the node
  /// keeps the pool's output value and name.
  void fusePools() {
    util::UseIndex uses(G);
    for (const auto &np : G.nodes()) {
      Node *n = np.get();
      std::string kind = n->attrString("npu", "");
      const target::OpLimits *l = Ctx.target->operation(kind);
      if ((kind != "conv" && kind != "depthwise") || !l ||
          l->stage(NPUCC_SLOT_POOL) != NPUCC_STAGE_POOL_MAX || !uses.hasSingleUse(n->output(0)))
        continue;
      Node *pool = uses.users(n->output(0)).front();
      if (pool->hasAttr("npu") && pool->attrString("npu", "") != "pool")
        continue;
      int64_t k = quant::fusablePool(*n, *pool, l->poolKernels);
      if (k < 2)
        continue;
      // The fused node must still be one the NPU runs (its rows and columns
      // at the pool's resolution times k, pool_k programmable).
      Value *mid = n->output(0);
      quant::fusePool(*n, *pool, k);
      target::LegalityOptions lo;
      lo.allowExactForFp32 = Ctx.npuExactForFp32;
      lo.allowFp32ForExact = Ctx.npuFp32ForExact;
      target::Placement p = target::placeNode(*n, *Ctx.target, lo);
      if (!p.onNpu() || !lower::npuTilingFits(*p.op, *Ctx.target)) {
        n->attrs.erase("pool_max");
        n->outputs[0] = mid;
        pool->outputs[0]->producer = pool;
        continue;
      }
      mid->producer = nullptr;
      uses.dropNode(pool);
      G.eraseNode(pool);
      Ctx.erased.push_back(pool);
      Ctx.bump("npu-partition.fused-pool");
    }
  }

  void layout() {
    std::vector<Node *> order;
    for (const auto &n : G.nodes())
      order.push_back(n.get());
    for (Node *n : order) {
      std::string npu = n->attrString("npu", "");
      bool spatial = npu == "conv" || npu == "depthwise" || npu == "pool";
      if (spatial) {
        n->inputs[0] = nhwc(n->inputs[0], n);
        makeNhwcOutput(n);
        continue;
      }
      if (npu == "eltwise" || layoutAgnostic(*n)) {
        bool all = true, any = false;
        for (const Value *v : n->inputs)
          if (is4d(v)) {
            all = all && Native.count(v);
            any = true;
          } else if (v && v->isConstant() && !followsLayout(v)) {
            all = false; // a broadcast constant of lower rank: NCHW only
          }
        if (any && all && is4d(n->output(0))) {
          for (Value *&v : n->inputs)
            if (is4d(v))
              v = Native[v];
            else if (v && v->isConstant() && v->shape.size() == 4)
              v = nhwcConstant(v);
          makeNhwcOutput(n);
          continue;
        }
      }
      for (Value *&v : n->inputs)
        if (v && Native.count(v))
          v = nchw(v, n);
    }
    for (Value *&v : G.outputs)
      if (Native.count(v))
        v = nchw(v, nullptr);
  }

private:
  /// The node now produces the NHWC twin of its 4-D output; the original
  /// (NCHW) value is produced by a Transpose only if something needs it.
  void makeNhwcOutput(Node *n) {
    Value *y = n->outputs[0];
    Value *t = G.addValue(y->name + "_nhwc", y->dtype, permute(y->shape, ToNhwc));
    t->quant = y->quant;
    t->producer = n;
    n->outputs[0] = t;
    y->producer = nullptr;
    n->attrs["layout"] = std::string("NHWC");
    Native[y] = t;
  }

  /// The NHWC form of `v` for consumer `at` (inserting a Transpose before it).
  Value *nhwc(Value *v, Node *at) {
    if (Native.count(v))
      return Native[v];
    auto it = ToNhwcCache.find(v);
    if (it != ToNhwcCache.end())
      return it->second;
    Value *t = G.addValue(v->name + "_nhwc", v->dtype, permute(v->shape, ToNhwc));
    t->quant = v->quant;
    insertTranspose(v, t, ToNhwc, at);
    ToNhwcCache[v] = t;
    return t;
  }

  /// A constant operand can follow its node into NHWC: one element (the same
  /// in every layout), or 4-D with per-tensor quantization (its data is
  /// permuted by nhwcConstant).
  static bool followsLayout(const Value *c) {
    return c->numElements() == 1 || (c->shape.size() == 4 && !(c->quant && c->quant->perChannel()));
  }

  /// The NHWC copy of the 4-D constant `c` (its data permuted, made once).
  Value *nhwcConstant(Value *c) {
    auto it = ToNhwcCache.find(c);
    if (it != ToNhwcCache.end())
      return it->second;
    static const int Perm[4] = {0, 2, 3, 1};
    Value *t = G.addConstant(c->name + "_nhwc", ir::permute4(*c->constant, Perm));
    t->quant = c->quant;
    ToNhwcCache[c] = t;
    Ctx.bump("npu-partition.constants-permuted");
    return t;
  }

  /// The NCHW value `v` whose producer writes NHWC: materialize it once.
  Value *nchw(Value *v, Node *at) {
    if (!Materialized.count(v)) {
      insertTranspose(Native[v], v, ToNchw, at);
      Materialized.insert(v);
    }
    return v;
  }

  void insertTranspose(Value *from, Value *to, const std::vector<int64_t> &perm, Node *at) {
    std::string name = G.uniqueName(to->name + "_transpose");
    Node *t = at ? G.insertNodeBefore(at, OpKind::Transpose, name, {from}, {to})
                 : G.addNode(OpKind::Transpose, name, {from}, {to});
    t->attrs["perm"] = perm;
    Ctx.bump("npu-partition.transposes");
  }

  Graph &G;
  PassContext &Ctx;
  std::map<const Value *, Value *> Native;      // NCHW value -> NHWC twin its producer writes
  std::map<const Value *, Value *> ToNhwcCache; // NCHW value -> inserted NHWC copy
  std::set<const Value *> Materialized;         // NCHW values given a Transpose back
};

} // namespace

Status runNpuPartition(Graph &g, PassContext &ctx) {
  if (!ctx.target)
    return success();
  Partitioner p(g, ctx);
  p.place();
  p.fuseActivations();
  p.fusePools();
  p.layout();
  g.removeUnusedValues();
  return success();
}

} // namespace npucc::passes
