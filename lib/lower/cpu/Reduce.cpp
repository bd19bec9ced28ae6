//===- Reduce.cpp - CPU lowering of ReduceMean ----------------------------===//
//
// The reduced axes (attribute `axes`, or a constant second input from opset
// 18) are normalized, size-1 axes dropped and neighbouring axes with the same
// role merged. One reduced run becomes npucc_reduce_mean_f32(outer, red,
// inner); several runs use npucc_reduce_mean_f32_nd with output strides that
// are 0 on reduced axes (runtime/kernels/npucc_reduce.c).
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuLowering.h"

#include <limits>

namespace npucc::lower {

using ir::Node;
using ir::Value;

Status lowerReduceFamily(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  auto err = [&](const std::string &m) { return error(m).atNode(n.name, n.opName()); };
  if (n.kind != ir::OpKind::ReduceMean)
    return err("not a ReduceMean op");
  const Value *x = n.input(0), *y = n.output(0);
  if (!x || !y)
    return err("missing input or output");
  if (x->dtype != ir::DType::F32 || y->dtype != ir::DType::F32)
    return err(std::string("element type ") + ir::dtypeName(x->dtype) + " not supported");
  const ir::Shape &s = x->shape;
  int64_t rank = int64_t(s.size());
  std::vector<int64_t> axes = n.attrInts("axes");
  if (const Value *a = n.input(1)) {
    if (!a->isConstant())
      return err("ReduceMean axes must be a constant value");
    axes = a->constant->toInts();
  }
  std::vector<bool> red(size_t(rank), false);
  if (axes.empty()) {
    if (n.attrInt("noop_with_empty_axes", 0) == 0)
      red.assign(size_t(rank), true);
  }
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      return err("axis " + std::to_string(a) + " out of range for rank " + std::to_string(rank));
    red[size_t(a < 0 ? a + rank : a)] = true;
  }
  if (x->numElements() > std::numeric_limits<int32_t>::max())
    return err("tensor too large for the CPU kernels");
  ctx.useKernelFile("kernels/npucc_reduce.c");
  lir::Instr in;
  in.opcode = "call";
  in.comment = n.name + " (" + n.opName() + ")";
  if (y->numElements() == 0)
    return success();

  // Merge: (size, reduced) runs without size-1 axes.
  std::vector<int64_t> dims;
  std::vector<bool> dred;
  for (int64_t k = 0; k < rank; ++k) {
    if (s[size_t(k)] == 1)
      continue;
    if (!dims.empty() && dred.back() == red[size_t(k)]) {
      dims.back() *= s[size_t(k)];
      continue;
    }
    dims.push_back(s[size_t(k)]);
    dred.push_back(red[size_t(k)]);
  }
  int64_t count = 1, nred = 0;
  for (size_t k = 0; k < dims.size(); ++k)
    if (dred[k]) {
      count *= dims[k];
      ++nred;
    }
  if (nred == 0 || x->numElements() == 0) {
    if (x->numElements() == 0)
      return err("mean over an empty tensor");
    // Nothing reduced: a copy.
    in.opcode = "memcpy";
    in.args = {ctx.buffer(y), ctx.buffer(x)};
    out.push_back(in);
    return success();
  }
  if (nred == 1) {
    int64_t outer = 1, inner = 1, r = 0;
    bool seen = false;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dred[k]) {
        r = dims[k];
        seen = true;
      } else if (seen) {
        inner *= dims[k];
      } else {
        outer *= dims[k];
      }
    }
    in.callee = "npucc_reduce_mean_f32";
    in.args = {ctx.buffer(x), ctx.buffer(y), outer, r, inner};
    out.push_back(in);
    return success();
  }
  if (dims.size() > 6)
    return err("reduction pattern needs rank > 6");
  std::vector<int64_t> ystr(dims.size(), 0);
  int64_t acc = 1;
  for (size_t k = dims.size(); k-- > 0;)
    if (!dred[k]) {
      ystr[k] = acc;
      acc *= dims[k];
    }
  in.callee = "npucc_reduce_mean_f32_nd";
  in.args = {ctx.buffer(x),
             ctx.buffer(y),
             y->numElements(),
             int64_t(dims.size()),
             lir::IntArray{dims},
             lir::IntArray{ystr},
             count};
  out.push_back(in);
  return success();
}

} // namespace npucc::lower
