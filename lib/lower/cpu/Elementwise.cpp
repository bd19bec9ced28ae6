//===- Elementwise.cpp - CPU lowering of broadcasting binary ops ----------===//
//
// Add, Sub, Mul, Div, Max, Min (variadic: a chain of binary calls) and PRelu
// become calls into runtime/kernels/npucc_eltwise.c. The broadcast pattern is
// classified at compile time:
//   same shape                       npucc_<op>_<t>(a, b, y, n)
//   b (or a) is a scalar or spans one contiguous run of y's axes
//                                    npucc_<op>_<t>_rb / _lb(outer, mid, inner)
//   anything else                    npucc_<op>_<t>_nd(rank, shape, sa, sb)
//                                    after dropping size-1 axes and merging
//                                    axes that are contiguous in both operands.
// Add with fused act_min/act_max (f32) uses npucc_addc_f32*.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuLowering.h"

#include <limits>

namespace npucc::lower {

using ir::DType;
using ir::Node;
using ir::OpKind;
using ir::Shape;
using ir::Value;
using lir::BufferRef;

namespace {

constexpr int MaxRank = 6; // NPUCC_EW_MAX_RANK

Diagnostic nodeErr(const Node &n, const std::string &msg) {
  return error(msg).atNode(n.name, n.opName());
}

lir::IntArray ints(const std::vector<int64_t> &v) { return lir::IntArray{v}; }

/// One operand of a binary call.
struct Operand {
  BufferRef buf;
  Shape shape;
};

Shape alignTo(const Shape &s, size_t rank) {
  Shape r(rank - s.size(), 1);
  r.insert(r.end(), s.begin(), s.end());
  return r;
}

/// Multidirectional broadcast of two shapes; false when incompatible.
bool broadcastShapes(const Shape &a, const Shape &b, Shape &out) {
  size_t r = std::max(a.size(), b.size());
  Shape x = alignTo(a, r), y = alignTo(b, r);
  out.assign(r, 1);
  for (size_t k = 0; k < r; ++k) {
    if (x[k] == y[k] || y[k] == 1)
      out[k] = x[k];
    else if (x[k] == 1)
      out[k] = y[k];
    else
      return false;
  }
  return true;
}

int64_t prod(const Shape &s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t k = from; k < to; ++k)
    p *= s[k];
  return p;
}

/// When `small` (aligned to `out`) is 1 everywhere except one contiguous run
/// of axes [p, q) where it equals `out`, returns true with outer/mid/inner.
bool runPattern(const Shape &small, const Shape &out, int64_t &outer, int64_t &mid,
                int64_t &inner) {
  size_t r = out.size(), p = r, q = r;
  for (size_t k = 0; k < r; ++k)
    if (small[k] != 1) {
      if (p == r)
        p = k;
      q = k + 1;
    }
  if (p == r) { // all ones: a scalar
    outer = 1;
    mid = 1;
    inner = prod(out, 0, r);
    return true;
  }
  for (size_t k = p; k < q; ++k)
    if (small[k] != out[k])
      return false;
  outer = prod(out, 0, p);
  mid = prod(out, p, q);
  inner = prod(out, q, r);
  return true;
}

/// Appends one binary call y = a op b. `base` is e.g. "npucc_add_f32".
Status emitBinary(const Node &n, const std::string &base, const Operand &a, const Operand &b,
                  const Operand &y, const std::vector<lir::Arg> &extra,
                  std::vector<lir::Instr> &out) {
  const Shape &so = y.shape;
  size_t r = so.size();
  if (a.shape.size() > r || b.shape.size() > r)
    return nodeErr(n, "operand rank exceeds the output rank");
  Shape sa = alignTo(a.shape, r), sb = alignTo(b.shape, r);
  int64_t total = prod(so, 0, r);
  lir::Instr in;
  in.opcode = "call";
  in.comment = n.name + " (" + n.opName() + ")";
  auto finish = [&](const std::string &callee, std::vector<lir::Arg> args) {
    in.callee = callee;
    in.args = {a.buf, b.buf, y.buf};
    in.args.insert(in.args.end(), args.begin(), args.end());
    in.args.insert(in.args.end(), extra.begin(), extra.end());
    out.push_back(in);
    return success();
  };
  if (total == 0)
    return success();
  if (total > std::numeric_limits<int32_t>::max())
    return nodeErr(n, "tensor too large for the CPU kernels");
  int64_t outer, mid, inner;
  if (sa == so && sb == so)
    return finish(base, {total});
  if (sa == so && runPattern(sb, so, outer, mid, inner))
    return finish(base + "_rb", {outer, mid, inner});
  if (sb == so && runPattern(sa, so, outer, mid, inner))
    return finish(base + "_lb", {outer, mid, inner});

  // General case: element strides (0 on broadcast axes), then simplify.
  auto strides = [&](const Shape &s) {
    std::vector<int64_t> st(r, 0);
    int64_t acc = 1;
    for (size_t k = r; k-- > 0;) {
      st[k] = s[k] == 1 ? 0 : acc;
      acc *= s[k];
    }
    return st;
  };
  std::vector<int64_t> ta = strides(sa), tb = strides(sb);
  std::vector<int64_t> shape, ma, mb;
  for (size_t k = 0; k < r; ++k) {
    if (so[k] == 1)
      continue;
    if (!shape.empty() && ma.back() == ta[k] * so[k] && mb.back() == tb[k] * so[k]) {
      shape.back() *= so[k];
      ma.back() = ta[k];
      mb.back() = tb[k];
      continue;
    }
    shape.push_back(so[k]);
    ma.push_back(ta[k]);
    mb.push_back(tb[k]);
  }
  if (shape.empty()) {
    shape = {1};
    ma = {0};
    mb = {0};
  }
  if (shape.size() > size_t(MaxRank))
    return nodeErr(n, "broadcast pattern needs rank " + std::to_string(shape.size()) + " > " +
                          std::to_string(MaxRank));
  return finish(base + "_nd", {int64_t(shape.size()), ints(shape), ints(ma), ints(mb)});
}

bool isArithType(DType t) {
  switch (t) {
  case DType::F32:
  case DType::F64:
  case DType::I8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
    return true;
  default:
    return false;
  }
}

} // namespace

Status lowerElementwiseFamily(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const char *op = nullptr;
  switch (n.kind) {
  case OpKind::Add:
    op = "add";
    break;
  case OpKind::Sub:
    op = "sub";
    break;
  case OpKind::Mul:
    op = "mul";
    break;
  case OpKind::Div:
    op = "div";
    break;
  case OpKind::Max:
    op = "maximum";
    break;
  case OpKind::Min:
    op = "minimum";
    break;
  case OpKind::PRelu:
    op = "prelu";
    break;
  default:
    return nodeErr(n, "not an element-wise binary op");
  }
  const Value *y = n.output(0);
  if (!y || n.inputs.empty())
    return nodeErr(n, "missing input or output");
  for (const Value *v : n.inputs)
    if (!v)
      return nodeErr(n, "absent input");
  DType t = y->dtype;
  if (!isArithType(t) || (n.kind == OpKind::PRelu && t != DType::F32))
    return nodeErr(n, std::string("element type ") + ir::dtypeName(t) + " not supported");
  for (const Value *v : n.inputs)
    if (v->dtype != t)
      return nodeErr(n, "operand element types differ");

  std::vector<lir::Arg> extra;
  std::string name = op;
  bool fused = n.hasAttr("act_min") || n.hasAttr("act_max");
  if (fused) {
    if (n.kind != OpKind::Add || t != DType::F32)
      return nodeErr(n, "fused activation is only supported on f32 Add");
    name = "addc";
    extra = {n.attrFloat("act_min", -std::numeric_limits<float>::infinity()),
             n.attrFloat("act_max", std::numeric_limits<float>::infinity())};
  }
  std::string base = std::string("npucc_") + name + "_" + ir::dtypeName(t);
  ctx.useKernelFile("kernels/npucc_eltwise.c");

  Operand yo{ctx.buffer(y), y->shape};
  if (n.inputs.size() == 1) { // Max/Min of one input: a copy
    lir::Instr in;
    in.opcode = "memcpy";
    in.args = {yo.buf, ctx.buffer(n.inputs[0])};
    in.comment = n.name + " (" + n.opName() + ")";
    out.push_back(in);
    return success();
  }
  Operand acc{ctx.buffer(n.inputs[0]), n.inputs[0]->shape};
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    Operand rhs{ctx.buffer(n.inputs[i]), n.inputs[i]->shape};
    Shape rs;
    if (!broadcastShapes(acc.shape, rhs.shape, rs))
      return nodeErr(n, "shapes " + ir::shapeStr(acc.shape) + " and " + ir::shapeStr(rhs.shape) +
                            " do not broadcast");
    Operand dst = yo;
    if (i + 1 < n.inputs.size() && rs != y->shape) {
      // A partial result smaller than y lives in scratch.
      dst.buf = ctx.scratch(int64_t(ir::Tensor::byteSizeOf(t, rs)));
      dst.buf.dtype = t;
      dst.shape = rs;
    } else if (rs != y->shape && ir::numElements(rs) != y->numElements()) {
      return nodeErr(n, "result shape " + ir::shapeStr(rs) + " differs from the output shape " +
                            ir::shapeStr(y->shape));
    }
    if (i + 1 == n.inputs.size())
      dst.shape = y->shape.size() >= rs.size() ? y->shape : rs;
    NPUCC_TRY(emitBinary(n, base, acc, rhs, dst, extra, out));
    acc = dst;
  }
  return success();
}

} // namespace npucc::lower
