//===- Pool.cpp - CPU lowering of MaxPool, AveragePool and global pooling --===//
//
// Maps the pooling ops onto runtime/kernels/npucc_pool.c. 1-D pooling is
// lowered as 2-D with H = 1; 3-D pooling and MaxPool's Indices output are
// rejected. Output sizes come from the output value (so ceil_mode is already
// in them); auto_pad, if the importer left it, is resolved here.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuLowering.h"

#include <algorithm>
#include <string>

namespace npucc::lower {

namespace {

Diagnostic nodeErr(const ir::Node &n, const std::string &msg) {
  return error(msg).atNode(n.name, n.opName());
}

lir::Instr call(const ir::Node &n, const char *callee) {
  lir::Instr in;
  in.opcode = "call";
  in.callee = callee;
  in.comment = n.name + " (" + n.opName() + ")";
  return in;
}

Status lowerWindowPool(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *x = n.input(0), *y = n.output(0);
  bool isMax = n.kind == ir::OpKind::MaxPool;
  if (n.output(1))
    return nodeErr(n, "MaxPool's Indices output is not supported by the CPU kernels");
  size_t rank = x->shape.size();
  if (rank == 5)
    return nodeErr(n, "3-D pooling is not supported by the CPU kernels");
  if (rank != 3 && rank != 4)
    return nodeErr(n, "expected a rank-3 or rank-4 input, got " + ir::shapeStr(x->shape));
  if (y->shape.size() != rank || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1])
    return nodeErr(n, "output " + ir::shapeStr(y->shape) + " does not match input " +
                          ir::shapeStr(x->shape));
  size_t sp = rank - 2;
  std::vector<int64_t> ks = n.attrInts("kernel_shape");
  std::vector<int64_t> strides = n.attrInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> dil = n.attrInts("dilations", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> pads = n.attrInts("pads", std::vector<int64_t>(2 * sp, 0));
  if (ks.size() != sp || strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp)
    return nodeErr(n, "kernel_shape/strides/dilations/pads do not match the input rank");
  for (size_t i = 0; i < sp; i++)
    if (ks[i] < 1 || strides[i] < 1 || dil[i] < 1 || pads[i] < 0 || pads[i + sp] < 0)
      return nodeErr(n, "invalid kernel_shape/strides/dilations/pads");
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    std::fill(pads.begin(), pads.end(), 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < sp; i++) {
      int64_t eff = (ks[i] - 1) * dil[i] + 1;
      int64_t total =
          std::max<int64_t>(0, (y->shape[2 + i] - 1) * strides[i] + eff - x->shape[2 + i]);
      pads[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + sp] = total - pads[i];
    }
  }
  bool oneD = sp == 1;
  int64_t NC = x->shape[0] * x->shape[1];
  int64_t H = oneD ? 1 : x->shape[2], W = x->shape[rank - 1];
  int64_t OH = oneD ? 1 : y->shape[2], OW = y->shape[rank - 1];
  if (H < 1 || W < 1 || OH < 1 || OW < 1)
    return nodeErr(n, "empty spatial dimensions are not supported");
  if (x->numElements() > INT32_MAX || y->numElements() > INT32_MAX)
    return nodeErr(n, "tensor too large for the 32-bit kernel parameters");
  lir::Instr in = call(n, isMax ? "npucc_maxpool2d_f32" : "npucc_avgpool2d_f32");
  in.args = {ctx.buffer(x), ctx.buffer(y)};
  for (int64_t v :
       {NC, H, W, OH, OW, oneD ? 1 : ks[0], ks[sp - 1], oneD ? 1 : strides[0], strides[sp - 1],
        oneD ? 1 : dil[0], dil[sp - 1], oneD ? 0 : pads[0], pads[sp - 1]})
    in.args.push_back(v);
  if (!isMax) {
    in.args.push_back(oneD ? int64_t(0) : pads[sp]);
    in.args.push_back(pads[2 * sp - 1]);
    in.args.push_back(n.attrInt("count_include_pad", 0) != 0 ? int64_t(1) : int64_t(0));
  }
  ctx.useKernelFile("kernels/npucc_pool.c");
  out.push_back(std::move(in));
  return success();
}

} // namespace

Status lowerPoolFamily(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *x = n.input(0), *y = n.output(0);
  if (!x || !y)
    return nodeErr(n, "expected an input and an output");
  if (x->dtype != ir::DType::F32 || y->dtype != ir::DType::F32)
    return nodeErr(n,
                   std::string("CPU kernels support float32 only, got ") + ir::dtypeName(x->dtype));
  switch (n.kind) {
  case ir::OpKind::MaxPool:
  case ir::OpKind::AveragePool:
    return lowerWindowPool(n, ctx, out);
  case ir::OpKind::GlobalAveragePool:
  case ir::OpKind::GlobalMaxPool: {
    if (x->shape.size() < 2)
      return nodeErr(n, "expected an input of rank >= 2, got " + ir::shapeStr(x->shape));
    int64_t NC = x->shape[0] * x->shape[1];
    int64_t spatial = NC == 0 ? 0 : x->numElements() / NC;
    if (y->numElements() != NC)
      return nodeErr(n, "output " + ir::shapeStr(y->shape) + " is not one value per channel");
    if (x->numElements() > INT32_MAX)
      return nodeErr(n, "tensor too large for the 32-bit kernel parameters");
    lir::Instr in = call(n, n.kind == ir::OpKind::GlobalAveragePool ? "npucc_global_avgpool_f32"
                                                                    : "npucc_global_maxpool_f32");
    in.args = {ctx.buffer(x), ctx.buffer(y), NC, spatial};
    ctx.useKernelFile("kernels/npucc_pool.c");
    out.push_back(std::move(in));
    return success();
  }
  default:
    return nodeErr(n, "not a pooling op");
  }
}

} // namespace npucc::lower
