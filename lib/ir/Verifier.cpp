//===- Verifier.cpp - Structural checks of a Graph ------------------------===//
#include "npucc/ir/Verifier.h"

#include <string>
#include <unordered_set>

namespace npucc::ir {

Status verifyGraph(const Graph &g) {
  std::unordered_set<const Value *> defined;
  std::unordered_set<std::string> names;
  for (auto &v : g.values()) {
    if (!names.insert(v->name).second)
      return error("duplicate value name '" + v->name + "'").inFile(g.sourceFile);
    for (int64_t d : v->shape)
      if (d < 0)
        return error("value '" + v->name + "' has an unknown or negative dimension (" +
                     shapeStr(v->shape) + "); bind it with --shape")
            .inFile(g.sourceFile);
    if (v->isConstant()) {
      if (v->constant->dtype() != v->dtype || v->constant->shape() != v->shape)
        return error("constant '" + v->name + "' data does not match its type")
            .inFile(g.sourceFile);
      defined.insert(v.get());
    }
    if (v->quant && v->quant->scale.size() != v->quant->zeroPoint.size())
      return error("value '" + v->name + "' has mismatched quantization scale/zero point")
          .inFile(g.sourceFile);
  }
  for (Value *v : g.inputs) {
    if (v->producer)
      return error("graph input '" + v->name + "' is produced by a node").inFile(g.sourceFile);
    defined.insert(v);
  }
  for (auto &np : g.nodes()) {
    const Node &n = *np;
    const OpInfo &info = n.info();
    int nin = static_cast<int>(n.inputs.size());
    int nout = static_cast<int>(n.outputs.size());
    if (nin < info.minInputs || (info.maxInputs >= 0 && nin > info.maxInputs))
      return nodeError(g, n,
                       "has " + std::to_string(nin) + " inputs, expected " +
                           std::to_string(info.minInputs) + ".." +
                           (info.maxInputs < 0 ? "n" : std::to_string(info.maxInputs)));
    if (nout < info.minOutputs || (info.maxOutputs >= 0 && nout > info.maxOutputs))
      return nodeError(g, n,
                       "has " + std::to_string(nout) + " outputs, expected " +
                           std::to_string(info.minOutputs) + ".." +
                           (info.maxOutputs < 0 ? "n" : std::to_string(info.maxOutputs)));
    // requant: the rounding of an integer Conv/Gemm/MatMul (docs/quantization.md).
    if (n.hasAttr("requant")) {
      std::string r = n.attrString("requant", "");
      bool product = n.kind == OpKind::Conv || n.kind == OpKind::Gemm || n.kind == OpKind::MatMul;
      if (!product || (r != "exact" && r != "fp32"))
        return nodeError(g, n,
                         "has attribute requant='" + r +
                             "': expected \"exact\" or \"fp32\" on Conv, Gemm or MatMul");
    }
    // rq_stage/rq_bits: an NPU's requantization form (quant::msaAttrs).
    if (n.hasAttr("rq_stage") || n.hasAttr("rq_bits")) {
      bool product = n.kind == OpKind::Conv || n.kind == OpKind::Gemm || n.kind == OpKind::MatMul;
      std::vector<int64_t> b = n.attrInts("rq_bits");
      bool widths = b.size() == 3 && b[0] >= 2 && b[0] <= 32 && b[1] >= 1 && b[1] <= 6 &&
                    b[2] >= 8 && b[2] <= 32;
      if (!product || n.attrString("rq_stage", "") != "mul_shift_add" || !widths)
        return nodeError(g, n,
                         "has attributes rq_stage/rq_bits: expected rq_stage=\"mul_shift_add\" "
                         "and rq_bits=[mul 2..32, shift 1..6, add 8..32] on Conv, Gemm or MatMul");
    }
    // pool_max: a max pool fused into an NPU conv/depthwise (quant/FusedPool.h).
    if (n.hasAttr("pool_max")) {
      int64_t k = n.attrInt("pool_max", 0);
      std::string npu = n.attrString("npu", "");
      if (n.kind != OpKind::Conv || (npu != "conv" && npu != "depthwise") || k < 2 || k > 31)
        return nodeError(g, n,
                         "has attribute pool_max=" + std::to_string(k) +
                             ": expected a window of 2..31 on a Conv the NPU runs "
                             "(npu=\"conv\" or \"depthwise\")");
    }
    for (const Value *in : n.inputs)
      if (in && !defined.count(in))
        return nodeError(g, n, "uses '" + in->name + "' before it is defined");
    for (const Value *out : n.outputs) {
      if (!out)
        return nodeError(g, n, "has a missing output");
      if (out->producer != &n)
        return nodeError(g, n, "output '" + out->name + "' has an inconsistent producer");
      if (defined.count(out))
        return nodeError(g, n, "redefines '" + out->name + "'");
      defined.insert(out);
    }
  }
  for (const Value *o : g.outputs)
    if (!defined.count(o))
      return error("graph output '" + o->name + "' is never defined").inFile(g.sourceFile);
  return success();
}

} // namespace npucc::ir
