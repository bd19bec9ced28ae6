//===- DataMovement.cpp - CPU lowering of copies that rearrange data ------===//
//
// Transpose, Concat, Slice, Split, Pad and Gather become calls into
// runtime/kernels/npucc_move.c, which are independent of the element type
// (elements are `esize` bytes). Everything shape-dependent is computed here:
//   Transpose / Slice  a strided view of the input: dense output shape plus
//                      per-axis source strides (Slice: start offset, negative
//                      steps), simplified by dropping size-1 axes and merging
//                      contiguous ones; pure 2-D (batched) transposes use
//                      npucc_transpose2d, plain copies a memcpy.
//   Concat / Split     one npucc_copy_rows per input / output.
//   Pad                per-axis source-index tables (-1 = pad value) for
//                      npucc_remap; constant, edge, reflect and wrap modes.
//   Gather             npucc_gather_idx64/32 on [outer][axis][inner bytes].
// Resize is lowered by lowerResizeCpu (Misc.cpp).
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuLowering.h"

#include <algorithm>
#include <limits>

namespace npucc::lower {

using ir::DType;
using ir::Node;
using ir::OpKind;
using ir::Shape;
using ir::Value;
using lir::BufferRef;

Status lowerResizeCpu(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);

namespace {

constexpr int64_t MaxRank = 6; // NPUCC_MOVE_MAX_RANK

Diagnostic nodeErr(const Node &n, const std::string &msg) {
  return error(msg).atNode(n.name, n.opName());
}

lir::Instr makeCall(const Node &n, const std::string &callee, std::vector<lir::Arg> args) {
  lir::Instr in;
  in.opcode = "call";
  in.callee = callee;
  in.args = std::move(args);
  in.comment = n.name + " (" + n.opName() + ")";
  return in;
}

lir::Instr makeCopy(const Node &n, BufferRef dst, BufferRef src) {
  lir::Instr in;
  in.opcode = "memcpy";
  in.args = {dst, src};
  in.comment = n.name + " (" + n.opName() + ")";
  return in;
}

std::vector<int64_t> denseStrides(const Shape &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t k = s.size(); k-- > 1;)
    st[k - 1] = st[k] * s[k];
  return st;
}

Status checkSize(const Node &n, const Value *v) {
  if (int64_t(v->byteSize()) > std::numeric_limits<int32_t>::max())
    return nodeErr(n, "tensor '" + v->name + "' too large for the CPU kernels");
  return success();
}

int64_t normAxis(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }

/// y (dense, `shape`) = x[base + sum(idx[k] * strides[k])]: simplify, then
/// pick memcpy / transpose2d / strided copy.
Status emitStrided(const Node &n, LowerContext &ctx, const Value *x, const Value *y, int64_t base,
                   const Shape &shape, const std::vector<int64_t> &strides,
                   std::vector<lir::Instr> &out) {
  int64_t esize = int64_t(ir::dtypeSize(y->dtype));
  std::vector<int64_t> dims, st;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1)
      continue;
    if (!dims.empty() && st.back() == strides[k] * shape[k]) {
      dims.back() *= shape[k];
      st.back() = strides[k];
      continue;
    }
    dims.push_back(shape[k]);
    st.push_back(strides[k]);
  }
  if (y->numElements() == 0)
    return success();
  if (dims.empty() || (dims.size() == 1 && st[0] == 1)) {
    if (base == 0 && x->byteSize() == y->byteSize()) {
      out.push_back(makeCopy(n, ctx.buffer(y), ctx.buffer(x)));
      return success();
    }
    if (dims.empty()) {
      dims = {1};
      st = {1};
    }
  }
  if (base == 0 && dims.size() == 2 && st[0] == 1 && st[1] == dims[0]) {
    // y[c][r] = x[r][c] with x: [dims[1]][dims[0]].
    out.push_back(makeCall(n, "npucc_transpose2d",
                           {ctx.buffer(x), ctx.buffer(y), esize, int64_t(1), dims[1], dims[0]}));
    return success();
  }
  if (base == 0 && dims.size() == 3 && st[0] == dims[1] * dims[2] && st[1] == 1 &&
      st[2] == dims[1]) {
    out.push_back(makeCall(n, "npucc_transpose2d",
                           {ctx.buffer(x), ctx.buffer(y), esize, dims[0], dims[2], dims[1]}));
    return success();
  }
  if (int64_t(dims.size()) > MaxRank)
    return nodeErr(n, "copy pattern needs rank " + std::to_string(dims.size()) + " > 6");
  out.push_back(makeCall(n, "npucc_strided_copy",
                         {ctx.buffer(x), ctx.buffer(y), esize, base, int64_t(dims.size()),
                          lir::IntArray{dims}, lir::IntArray{st}}));
  return success();
}

Status lowerTranspose(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const Value *x = n.input(0), *y = n.output(0);
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> perm = n.attrInts("perm");
  if (perm.empty())
    for (int64_t k = rank - 1; k >= 0; --k)
      perm.push_back(k);
  if (int64_t(perm.size()) != rank)
    return nodeErr(n, "perm has " + std::to_string(perm.size()) + " entries for rank " +
                          std::to_string(rank));
  std::vector<int64_t> xs = denseStrides(x->shape), st;
  Shape so;
  std::vector<bool> used(size_t(rank), false);
  for (int64_t p : perm) {
    p = normAxis(p, rank);
    if (p < 0 || p >= rank || used[size_t(p)])
      return nodeErr(n, "perm is not a permutation");
    used[size_t(p)] = true;
    so.push_back(x->shape[size_t(p)]);
    st.push_back(xs[size_t(p)]);
  }
  if (so != y->shape)
    return nodeErr(n, "output shape " + ir::shapeStr(y->shape) + " does not match perm");
  return emitStrided(n, ctx, x, y, 0, so, st, out);
}

Status constInts(const Node &n, size_t idx, const char *what, std::vector<int64_t> &v,
                 bool &present) {
  const Value *c = n.input(idx);
  present = c != nullptr;
  if (!c)
    return success();
  if (!c->isConstant())
    return nodeErr(n, std::string(what) + " must be a constant value");
  v = c->constant->toInts();
  return success();
}

Status lowerSlice(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const Value *x = n.input(0), *y = n.output(0);
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  bool has = false;
  NPUCC_TRY(constInts(n, 1, "Slice starts", starts, has));
  if (!has) { // opset < 10: attributes
    starts = n.attrInts("starts");
    ends = n.attrInts("ends");
    axes = n.attrInts("axes");
  } else {
    NPUCC_TRY(constInts(n, 2, "Slice ends", ends, has));
    NPUCC_TRY(constInts(n, 3, "Slice axes", axes, has));
    NPUCC_TRY(constInts(n, 4, "Slice steps", steps, has));
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k)
      axes.push_back(int64_t(k));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return nodeErr(n, "starts, ends, axes and steps differ in length");
  std::vector<int64_t> begin(size_t(rank), 0), step(size_t(rank), 1);
  Shape so = x->shape;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = normAxis(axes[i], rank);
    if (a < 0 || a >= rank)
      return nodeErr(n, "axis " + std::to_string(axes[i]) + " out of range");
    int64_t dim = x->shape[size_t(a)], st = steps[i], s = starts[i], e = ends[i];
    if (st == 0)
      return nodeErr(n, "step 0");
    st = ir::boundedSliceStep(st, dim);
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    int64_t cnt;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      cnt = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      cnt = s > e ? (s - e + (-st) - 1) / (-st) : 0;
    }
    begin[size_t(a)] = s;
    step[size_t(a)] = st;
    so[size_t(a)] = cnt;
  }
  if (so != y->shape)
    return nodeErr(n, "computed slice shape " + ir::shapeStr(so) + " differs from the output " +
                          ir::shapeStr(y->shape));
  std::vector<int64_t> xs = denseStrides(x->shape);
  std::vector<int64_t> st(static_cast<size_t>(rank));
  int64_t base = 0;
  for (int64_t k = 0; k < rank; ++k) {
    if (so[size_t(k)] > 0)
      base += begin[size_t(k)] * xs[size_t(k)];
    st[size_t(k)] = step[size_t(k)] * xs[size_t(k)];
  }
  return emitStrided(n, ctx, x, y, base, so, st, out);
}

Status lowerConcatSplit(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  bool concat = n.kind == OpKind::Concat;
  const Value *whole = concat ? n.output(0) : n.input(0);
  int64_t rank = int64_t(whole->shape.size());
  int64_t axis = normAxis(n.attrInt("axis", concat ? 1 : 0), rank);
  if (concat && !n.hasAttr("axis"))
    return nodeErr(n, "Concat needs an axis attribute");
  if (axis < 0 || axis >= rank)
    return nodeErr(n, "axis out of range");
  int64_t esize = int64_t(ir::dtypeSize(whole->dtype));
  int64_t outer = 1, inner = esize;
  for (int64_t k = 0; k < axis; ++k)
    outer *= whole->shape[size_t(k)];
  for (int64_t k = axis + 1; k < rank; ++k)
    inner *= whole->shape[size_t(k)];
  int64_t wholeRow = whole->shape[size_t(axis)] * inner, off = 0;
  const std::vector<Value *> &parts = concat ? n.inputs : n.outputs;
  for (const Value *p : parts) {
    if (!p)
      continue;
    if (p->dtype != whole->dtype || p->shape.size() != size_t(rank))
      return nodeErr(n, "part '" + p->name + "' has another element type or rank");
    int64_t row = p->shape[size_t(axis)] * inner;
    if (row > 0 && outer > 0) {
      if (concat)
        out.push_back(makeCall(
            n, "npucc_copy_rows",
            {ctx.buffer(p), ctx.buffer(whole), outer, row, row, wholeRow, int64_t(0), off}));
      else
        out.push_back(makeCall(
            n, "npucc_copy_rows",
            {ctx.buffer(whole), ctx.buffer(p), outer, row, wholeRow, row, off, int64_t(0)}));
    }
    off += row;
  }
  if (off != wholeRow)
    return nodeErr(n, "parts do not add up to the whole along the axis");
  return success();
}

Status lowerPad(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const Value *x = n.input(0), *y = n.output(0);
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> pads, axes;
  bool has = false;
  NPUCC_TRY(constInts(n, 1, "Pad pads", pads, has));
  if (!has)
    pads = n.attrInts("pads");
  NPUCC_TRY(constInts(n, 3, "Pad axes", axes, has));
  if (axes.empty())
    for (int64_t k = 0; k < rank; ++k)
      axes.push_back(k);
  if (pads.size() != 2 * axes.size())
    return nodeErr(n, "pads has " + std::to_string(pads.size()) + " entries for " +
                          std::to_string(axes.size()) + " axes");
  std::vector<int64_t> before(size_t(rank), 0), after(size_t(rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = normAxis(axes[i], rank);
    if (a < 0 || a >= rank)
      return nodeErr(n, "axis out of range");
    before[size_t(a)] = pads[i];
    after[size_t(a)] = pads[i + axes.size()];
  }
  std::string mode = n.attrString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
    return nodeErr(n, "pad mode '" + mode + "' not supported");
  std::vector<int64_t> padBytes;
  if (const Value *cv = n.input(2)) {
    if (!cv->isConstant())
      return nodeErr(n, "Pad constant_value must be a constant value");
    if (cv->dtype != x->dtype || cv->constant->numElements() < 1)
      return nodeErr(n, "Pad constant_value must be one element of the data type");
    for (size_t b = 0; b < ir::dtypeSize(x->dtype); ++b)
      padBytes.push_back(cv->constant->raw()[b]);
  } else if (n.hasAttr("value") && x->dtype == DType::F32) {
    ir::Tensor t = ir::Tensor::fromFloats({}, {n.attrFloat("value", 0.0f)});
    for (size_t b = 0; b < 4; ++b)
      padBytes.push_back(t.raw()[b]);
  }
  std::vector<int64_t> mapOff, maps;
  for (int64_t k = 0; k < rank; ++k) {
    int64_t in = x->shape[size_t(k)], b = before[size_t(k)];
    int64_t o = in + b + after[size_t(k)];
    if (o != y->shape[size_t(k)])
      return nodeErr(n, "padded shape differs from the output " + ir::shapeStr(y->shape));
    if (b == 0 && after[size_t(k)] == 0) {
      mapOff.push_back(-1);
      continue;
    }
    if (in == 0 && mode != "constant")
      return nodeErr(n, "cannot " + mode + "-pad an empty axis");
    mapOff.push_back(int64_t(maps.size()));
    for (int64_t j = 0; j < o; ++j) {
      int64_t i = j - b;
      if (i < 0 || i >= in) {
        if (mode == "constant") {
          i = -1;
        } else if (mode == "edge") {
          i = std::clamp<int64_t>(i, 0, in - 1);
        } else if (mode == "wrap") {
          i = ((i % in) + in) % in;
        } else if (in == 1) {
          i = 0;
        } else { // reflect: period 2 * (in - 1)
          int64_t p = 2 * (in - 1);
          i = ((i % p) + p) % p;
          if (i >= in)
            i = p - i;
        }
      }
      maps.push_back(i);
    }
  }
  if (rank > MaxRank)
    return nodeErr(n, "rank > 6");
  if (y->numElements() == 0)
    return success();
  if (maps.empty()) {
    out.push_back(makeCopy(n, ctx.buffer(y), ctx.buffer(x)));
    return success();
  }
  out.push_back(makeCall(n, "npucc_remap",
                         {ctx.buffer(x), ctx.buffer(y), int64_t(ir::dtypeSize(x->dtype)), rank,
                          lir::IntArray{x->shape}, lir::IntArray{y->shape}, lir::IntArray{mapOff},
                          lir::IntArray{maps}, lir::IntArray{padBytes}}));
  return success();
}

Status lowerGather(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const Value *x = n.input(0), *idx = n.input(1), *y = n.output(0);
  if (!idx)
    return nodeErr(n, "missing indices");
  int64_t rank = int64_t(x->shape.size());
  int64_t axis = normAxis(n.attrInt("axis", 0), rank);
  if (axis < 0 || axis >= rank)
    return nodeErr(n, "axis out of range");
  const char *callee = nullptr;
  if (idx->dtype == DType::I64)
    callee = "npucc_gather_idx64";
  else if (idx->dtype == DType::I32)
    callee = "npucc_gather_idx32";
  else
    return nodeErr(n, std::string("index type ") + ir::dtypeName(idx->dtype) + " not supported");
  int64_t outer = 1, inner = int64_t(ir::dtypeSize(x->dtype));
  for (int64_t k = 0; k < axis; ++k)
    outer *= x->shape[size_t(k)];
  for (int64_t k = axis + 1; k < rank; ++k)
    inner *= x->shape[size_t(k)];
  if (y->numElements() == 0)
    return success();
  out.push_back(makeCall(n, callee,
                         {ctx.buffer(x), ctx.buffer(idx), ctx.buffer(y), outer,
                          x->shape[size_t(axis)], idx->numElements(), inner}));
  return success();
}

} // namespace

Status lowerDataMovementFamily(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  if (n.kind == OpKind::Resize)
    return lowerResizeCpu(n, ctx, out);
  const Value *x = n.input(0), *y = n.output(0);
  if (!x || !y)
    return nodeErr(n, "missing input or output");
  for (const Value *v : n.inputs)
    if (v)
      NPUCC_TRY(checkSize(n, v));
  for (const Value *v : n.outputs)
    if (v)
      NPUCC_TRY(checkSize(n, v));
  if (n.kind != OpKind::Gather && n.kind != OpKind::Concat && x->dtype != y->dtype)
    return nodeErr(n, "input and output element types differ");
  ctx.useKernelFile("kernels/npucc_move.c");
  switch (n.kind) {
  case OpKind::Transpose:
    return lowerTranspose(n, ctx, out);
  case OpKind::Slice:
    return lowerSlice(n, ctx, out);
  case OpKind::Concat:
  case OpKind::Split:
    return lowerConcatSplit(n, ctx, out);
  case OpKind::Pad:
    return lowerPad(n, ctx, out);
  case OpKind::Gather:
    return lowerGather(n, ctx, out);
  default:
    return nodeErr(n, "not a data movement op");
  }
}

} // namespace npucc::lower
