//===- Activation.cpp - CPU lowering of unary activations -----------------===//
//
// Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish and Tanh become one
// call into runtime/kernels/npucc_act.c over all elements (the kernels accept
// y == x, so in-place planning is free). Clip's constant min/max are read
// here and passed as scalars; runtime bounds use npucc_clip_<t>_dyn, which
// reads them from their buffers.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuLowering.h"

#include <limits>

namespace npucc::lower {

using ir::DType;
using ir::Node;
using ir::OpKind;
using ir::Value;

namespace {

Diagnostic nodeErr(const Node &n, const std::string &msg) {
  return error(msg).atNode(n.name, n.opName());
}

bool isIntClipType(DType t) {
  switch (t) {
  case DType::I8:
  case DType::U8:
  case DType::I16:
  case DType::U16:
  case DType::I32:
  case DType::U32:
  case DType::I64:
  case DType::U64:
    return true;
  default:
    return false;
  }
}

/// Reads an optional constant scalar bound of Clip (input `idx`).
Status clipBound(const Node &n, size_t idx, const char *what, bool &present, double &f,
                 int64_t &i) {
  present = false;
  const Value *v = n.input(idx);
  if (!v)
    return success();
  if (!v->isConstant())
    return nodeErr(n, std::string("Clip ") + what + " must be a constant value");
  if (v->constant->numElements() != 1)
    return nodeErr(n, std::string("Clip ") + what + " must be a scalar");
  present = true;
  f = v->constant->getDouble(0);
  i = v->constant->getInt(0);
  if (v->dtype == DType::U64 &&
      v->constant->data<uint64_t>()[0] > uint64_t(std::numeric_limits<int64_t>::max()))
    return nodeErr(n, std::string("Clip ") + what + " does not fit int64");
  return success();
}

} // namespace

Status lowerActivationFamily(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!x || !y)
    return nodeErr(n, "missing input or output");
  if (x->dtype != y->dtype)
    return nodeErr(n, "input and output element types differ");
  DType t = y->dtype;
  std::string tn = ir::dtypeName(t);
  int64_t count = y->numElements();
  if (count > std::numeric_limits<int32_t>::max())
    return nodeErr(n, "tensor too large for the CPU kernels");
  lir::Instr in;
  in.opcode = "call";
  in.comment = n.name + " (" + n.opName() + ")";
  in.args = {ctx.buffer(x), ctx.buffer(y), count};
  auto f32Only = [&](const char *callee) -> Status {
    if (t != DType::F32)
      return nodeErr(n, "element type " + tn + " not supported");
    in.callee = callee;
    return success();
  };
  switch (n.kind) {
  case OpKind::Relu:
    if (t != DType::F32 && t != DType::I8 && t != DType::I16 && t != DType::I32 && t != DType::I64)
      return nodeErr(n, "element type " + tn + " not supported");
    in.callee = "npucc_relu_" + tn;
    break;
  case OpKind::LeakyRelu:
    NPUCC_TRY(f32Only("npucc_leakyrelu_f32"));
    in.args.push_back(n.attrFloat("alpha", 0.01f));
    break;
  case OpKind::Sigmoid:
    NPUCC_TRY(f32Only("npucc_sigmoid_f32"));
    break;
  case OpKind::HardSigmoid:
    NPUCC_TRY(f32Only("npucc_hardsigmoid_f32"));
    in.args.push_back(n.attrFloat("alpha", 0.2f));
    in.args.push_back(n.attrFloat("beta", 0.5f));
    break;
  case OpKind::HardSwish:
    NPUCC_TRY(f32Only("npucc_hardswish_f32"));
    break;
  case OpKind::Tanh:
    NPUCC_TRY(f32Only("npucc_tanh_f32"));
    break;
  case OpKind::Clip: {
    const Value *lo = n.input(1), *hi = n.input(2);
    if ((lo && !lo->isConstant()) || (hi && !hi->isConstant())) {
      for (const Value *b : {lo, hi})
        if (b && (b->dtype != t || b->numElements() != 1))
          return nodeErr(n, "Clip bounds must be scalars of the input type");
      if (t != DType::F32 && !isIntClipType(t))
        return nodeErr(n, "element type " + tn + " not supported");
      // An absent bound is never read; x's buffer stands in for it.
      in.callee = "npucc_clip_" + tn + "_dyn";
      in.args = {ctx.buffer(x), ctx.buffer(lo ? lo : x), ctx.buffer(hi ? hi : x), ctx.buffer(y),
                 count,         int64_t(lo != nullptr),  int64_t(hi != nullptr)};
      break;
    }
    bool hasLo = false, hasHi = false;
    double flo = 0, fhi = 0;
    int64_t ilo = 0, ihi = 0;
    NPUCC_TRY(clipBound(n, 1, "min", hasLo, flo, ilo));
    NPUCC_TRY(clipBound(n, 2, "max", hasHi, fhi, ihi));
    // Opset < 11 carries the bounds as attributes.
    if (!hasLo && n.hasAttr("min")) {
      hasLo = true;
      flo = n.attrFloat("min", 0.0f);
      ilo = int64_t(flo);
    }
    if (!hasHi && n.hasAttr("max")) {
      hasHi = true;
      fhi = n.attrFloat("max", 0.0f);
      ihi = int64_t(fhi);
    }
    if (t == DType::F32) {
      in.callee = "npucc_clip_f32";
      in.args.push_back(hasLo ? float(flo) : -std::numeric_limits<float>::infinity());
      in.args.push_back(hasHi ? float(fhi) : std::numeric_limits<float>::infinity());
    } else if (isIntClipType(t)) {
      in.callee = "npucc_clip_" + tn;
      in.args.push_back(ilo);
      in.args.push_back(ihi);
      in.args.push_back(int64_t(hasLo));
      in.args.push_back(int64_t(hasHi));
    } else {
      return nodeErr(n, "element type " + tn + " not supported");
    }
    break;
  }
  default:
    return nodeErr(n, "not an activation op");
  }
  ctx.useKernelFile("kernels/npucc_act.c");
  if (count > 0)
    out.push_back(in);
  return success();
}

} // namespace npucc::lower
