//===- IoInt8.cpp - Model inputs and outputs as int8 (--io int8) ----------===//
//
// A quantized model takes and returns float: its first node quantizes each
// input (`%q = QuantizeLinear(%x, scale, zp) : i8 q(s, z)`) and its last
// dequantizes each output. With `--io int8` the caller feeds and reads the
// int8 tensors directly (as TFLite Micro users do) and these edge nodes go:
// the graph input %x becomes i8 with %q's quantization and replaces %q; a
// graph output `%y = DequantizeLinear(%r)` becomes %r's producer's result,
// i8 with %r's quantization, keeping the name %y. Data movement between the
// edge and its Q/DQ (Reshape, Transpose, Flatten, Squeeze, Unsqueeze, each
// value used once: TensorFlow exports put a Transpose or Reshape first)
// commutes with per-tensor quantization and moves to the int8 side. Every
// input and output must be such an edge, else the pass fails naming it and
// why (the ONNX model decides; nothing is requantized).
// Not in the default pipeline: the driver runs it for --io int8, after the
// quantization, before the target's rewrites.
// Statistics: io-int8.inputs, io-int8.outputs.
//
//===----------------------------------------------------------------------===//
#include "npucc/passes/Pass.h"

#include "PassUtils.h"

namespace npucc::passes {

namespace {

std::string why(const std::string &what, const std::string &name, const std::string &reason) {
  return "--io int8: " + what + " '" + name + "' " + reason +
         " (--io int8 needs every model input quantized by one QuantizeLinear and every output "
         "dequantized by one DequantizeLinear, per tensor)";
}

bool isMovement(const ir::Node *n) {
  using K = ir::OpKind;
  return n && (n->kind == K::Reshape || n->kind == K::Transpose || n->kind == K::Flatten ||
               n->kind == K::Squeeze || n->kind == K::Unsqueeze);
}

bool perTensorInt8(const ir::Value *v) {
  return v && v->dtype == ir::DType::I8 && v->quant && !v->quant->perChannel() &&
         v->quant->scale.size() == 1 && v->quant->zeroPoint.size() == 1;
}

} // namespace

Status runIoInt8(ir::Graph &g, PassContext &ctx) {
  // Check everything first: a refusal leaves the graph as it was.
  std::vector<ir::Node *> quantizers, dequantizers;
  std::vector<std::vector<ir::Node *>> inMoves, outMoves; // movement between edge and Q/DQ
  for (ir::Value *in : g.inputs) {
    inMoves.emplace_back();
    if (in->dtype == ir::DType::I8 && in->quant) {
      quantizers.push_back(nullptr); // already int8
      continue;
    }
    ir::Value *v = in;
    std::vector<ir::Node *> users = g.users(v);
    while (users.size() == 1 && isMovement(users[0]) && users[0]->input(0) == v &&
           !g.isGraphOutput(v)) {
      inMoves.back().push_back(users[0]);
      v = users[0]->output(0);
      users = g.users(v);
    }
    if (users.size() != 1 || users[0]->kind != ir::OpKind::QuantizeLinear ||
        users[0]->input(0) != v || g.isGraphOutput(v)) {
      std::string through;
      for (const ir::Node *m : inMoves.back())
        through += (through.empty() ? " through " : ", ") + std::string(m->opName()) + " '" +
                   m->name + "'";
      return error(why("input", in->name,
                       users.empty() ? "is unused" + through
                       : users[0]->kind != ir::OpKind::QuantizeLinear
                           ? "feeds " + std::string(users[0]->opName()) + " '" + users[0]->name +
                                 "' as " + ir::dtypeName(in->dtype) + through
                           : "has more than one use" + through));
    }
    if (!perTensorInt8(users[0]->output(0)))
      return error(why("input", in->name,
                       "is quantized by QuantizeLinear '" + users[0]->name +
                           "' to something other than per-tensor int8"));
    quantizers.push_back(users[0]);
  }
  for (ir::Value *out : g.outputs) {
    outMoves.emplace_back();
    if (out->dtype == ir::DType::I8 && out->quant) {
      dequantizers.push_back(nullptr);
      continue;
    }
    ir::Node *dq = out->producer;
    while (isMovement(dq) && dq->input(0) && dq->input(0)->producer &&
           g.numUses(dq->input(0)) == 1) {
      outMoves.back().insert(outMoves.back().begin(), dq);
      dq = dq->input(0)->producer;
    }
    if (!dq || dq->kind != ir::OpKind::DequantizeLinear)
      return error(why("output", out->name,
                       dq ? "is produced by " + std::string(dq->opName()) + " '" + dq->name + "'"
                          : "is not computed by the model"));
    ir::Value *r = dq->input(0);
    if (!perTensorInt8(r) || !r->producer || g.isGraphOutput(r))
      return error(why("output", out->name,
                       "is dequantized by DequantizeLinear '" + dq->name +
                           "' from something other than a computed per-tensor int8 value"));
    for (const ir::Value *o : g.outputs)
      if (o != out && o->producer == dq)
        return error(why("output", out->name, "is listed twice"));
    dequantizers.push_back(dq);
  }
  int64_t ins = 0, outs = 0;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    ir::Node *q = quantizers[i];
    if (!q)
      continue;
    ir::Value *in = g.inputs[i], *qv = q->outputs[0], *last = in;
    in->dtype = ir::DType::I8;
    in->quant = qv->quant;
    for (ir::Node *m : inMoves[i]) {
      last = m->outputs[0];
      last->dtype = ir::DType::I8;
      last->quant = qv->quant;
    }
    g.eraseNode(q);
    g.replaceAllUsesWith(qv, last);
    ++ins;
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    ir::Node *dq = dequantizers[i];
    if (!dq)
      continue;
    ir::Value *out = g.outputs[i], *r = dq->inputs[0];
    if (!outMoves[i].empty()) {
      // r -> movement -> ... -> out, all int8 with r's quantization.
      outMoves[i].front()->inputs[0] = r;
      for (ir::Node *m : outMoves[i]) {
        m->outputs[0]->dtype = ir::DType::I8;
        m->outputs[0]->quant = r->quant;
      }
      g.eraseNode(dq);
      ++outs;
      continue;
    }
    ir::Node *p = r->producer;
    g.eraseNode(dq);
    // `out` keeps its name: it becomes p's result in r's place.
    for (ir::Value *&o : p->outputs)
      if (o == r)
        o = out;
    out->producer = p;
    out->dtype = ir::DType::I8;
    out->quant = r->quant;
    r->producer = nullptr;
    g.replaceAllUsesWith(r, out);
    ++outs;
  }
  g.removeUnusedValues();
  if (ins)
    ctx.bump("io-int8.inputs", ins);
  if (outs)
    ctx.bump("io-int8.outputs", outs);
  return success();
}

} // namespace npucc::passes
