//===- Softmax.cpp - CPU lowering of Softmax ------------------------------===//
//
// Opset-13 Softmax over one axis: the shape is viewed as [outer][axis][inner]
// and lowered to npucc_softmax_f32 (runtime/kernels/npucc_softmax.c).
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuLowering.h"

#include <limits>

namespace npucc::lower {

using ir::Node;
using ir::Value;

Status lowerSoftmaxFamily(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  auto err = [&](const std::string &m) { return error(m).atNode(n.name, n.opName()); };
  if (n.kind != ir::OpKind::Softmax)
    return err("not a Softmax op");
  const Value *x = n.input(0), *y = n.output(0);
  if (!x || !y)
    return err("missing input or output");
  if (x->dtype != ir::DType::F32 || y->dtype != ir::DType::F32)
    return err(std::string("element type ") + ir::dtypeName(x->dtype) + " not supported");
  const ir::Shape &s = x->shape;
  int64_t rank = int64_t(s.size());
  if (rank == 0)
    return err("Softmax of a scalar");
  int64_t axis = n.attrInt("axis", -1);
  if (axis < -rank || axis >= rank)
    return err("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k)
    outer *= s[k];
  for (int64_t k = axis + 1; k < rank; ++k)
    inner *= s[k];
  if (x->numElements() > std::numeric_limits<int32_t>::max())
    return err("tensor too large for the CPU kernels");
  ctx.useKernelFile("kernels/npucc_softmax.c");
  if (x->numElements() == 0)
    return success();
  lir::Instr in;
  in.opcode = "call";
  in.callee = "npucc_softmax_f32";
  in.args = {ctx.buffer(x), ctx.buffer(y), outer, s[axis], inner};
  in.comment = n.name + " (" + n.opName() + ")";
  out.push_back(in);
  return success();
}

} // namespace npucc::lower
