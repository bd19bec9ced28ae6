//===- Norm.cpp - CPU lowering of inference BatchNormalization -------------===//
//
// When scale, B, mean and var are constants (the usual case), the lowering
// folds them into per-channel a = scale / sqrt(var + eps), b = B - mean * a
// (float arithmetic, as ONNX Runtime does) and emits
// npucc_channel_affine_f32 with two constant arrays. Otherwise
// npucc_batchnorm_f32 folds them at run time. Training mode is rejected.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuLowering.h"

#include <cmath>
#include <string>

namespace npucc::lower {

namespace {

Diagnostic nodeErr(const ir::Node &n, const std::string &msg) {
  return error(msg).atNode(n.name, n.opName());
}

} // namespace

Status lowerNormFamily(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  if (n.kind != ir::OpKind::BatchNormalization)
    return nodeErr(n, "not a normalization op");
  if (n.attrInt("training_mode", 0) != 0 || n.output(1) || n.output(2))
    return nodeErr(n, "training-mode BatchNormalization is not supported");
  const ir::Value *x = n.input(0), *y = n.output(0);
  if (!x || !y || n.inputs.size() != 5)
    return nodeErr(n, "expected inputs X, scale, B, mean, var and output Y");
  for (const ir::Value *v : n.inputs)
    if (!v || v->dtype != ir::DType::F32)
      return nodeErr(n, "CPU kernels support float32 BatchNormalization only");
  if (y->dtype != ir::DType::F32 || y->shape != x->shape)
    return nodeErr(n, "output must be float32 with the input's shape");
  if (x->shape.size() < 2)
    return nodeErr(n, "expected an input of rank >= 2, got " + ir::shapeStr(x->shape));
  int64_t N = x->shape[0], C = x->shape[1];
  int64_t inner = N * C == 0 ? 0 : x->numElements() / (N * C);
  for (size_t i = 1; i < 5; i++)
    if (n.inputs[i]->numElements() != C)
      return nodeErr(n, "parameter '" + n.inputs[i]->name + "' must have " + std::to_string(C) +
                            " elements");
  if (x->numElements() > INT32_MAX)
    return nodeErr(n, "tensor too large for the 32-bit kernel parameters");
  float eps = n.attrFloat("epsilon", 1e-5f);

  lir::Instr in;
  in.opcode = "call";
  in.comment = n.name + " (" + n.opName() + ")";
  bool folded = true;
  for (size_t i = 1; i < 5; i++)
    folded = folded && n.inputs[i]->isConstant();
  if (folded) {
    const float *g = n.inputs[1]->constant->data<float>(),
                *b = n.inputs[2]->constant->data<float>();
    const float *m = n.inputs[3]->constant->data<float>(),
                *v = n.inputs[4]->constant->data<float>();
    lir::FloatArray scale, shift;
    for (int64_t c = 0; c < C; c++) {
      float invStd = 1.0f / std::sqrt(v[c] + eps);
      float a = g[c] * invStd;
      scale.values.push_back(a);
      shift.values.push_back(b[c] - m[c] * a);
    }
    in.callee = "npucc_channel_affine_f32";
    in.args = {ctx.buffer(x), ctx.buffer(y), N, C, inner, std::move(scale), std::move(shift)};
  } else {
    in.callee = "npucc_batchnorm_f32";
    in.args = {ctx.buffer(x)};
    for (size_t i = 1; i < 5; i++)
      in.args.push_back(ctx.buffer(n.inputs[i]));
    for (lir::Arg a :
         {lir::Arg(ctx.buffer(y)), lir::Arg(N), lir::Arg(C), lir::Arg(inner), lir::Arg(eps)})
      in.args.push_back(std::move(a));
  }
  ctx.useKernelFile("kernels/npucc_norm.c");
  out.push_back(std::move(in));
  return success();
}

} // namespace npucc::lower
