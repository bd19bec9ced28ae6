//===- QuantOps.cpp - int8 CPU lowering of the non-GEMM quantized ops -----===//
//
// Add/Mul (broadcast by strides), MaxPool/AveragePool/GlobalAveragePool,
// ReduceMean, Concat (requantizing inputs whose params differ), int8 data
// movement (delegated to the element-size-generic float lowering after a
// quant-param check; Pad's constant is the zero point), Relu/Clip (clamp, or
// a table when the params differ), Sigmoid/Tanh/HardSwish/HardSigmoid/
// LeakyRelu (256-entry tables), Softmax and the Quantize/DequantizeLinear
// boundaries. All tables and multipliers come from lib/quant/Multiplier.cpp.
//
//===----------------------------------------------------------------------===//
#include "QuantInternal.h"

#include "../../../runtime/include/npucc_requant.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace npucc::lower::qlower {
namespace {

#define QL_TRY_Q(var, expr)                                                                        \
  auto var##_r = (expr);                                                                           \
  if (!var##_r)                                                                                    \
    return std::move(var##_r.error());                                                             \
  const TensorQ var = *var##_r;

int64_t normAxis(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }

int64_t prod(const ir::Shape &s, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e && i < s.size(); ++i)
    p *= s[i];
  return p;
}

/// Broadcast strides of `in` against output shape `out` (right-aligned).
std::vector<int64_t> bcastStrides(const ir::Shape &in, const ir::Shape &out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t s = 1;
  for (size_t i = 0; i < in.size(); ++i) {
    size_t ii = in.size() - 1 - i, oi = out.size() - 1 - i;
    st[oi] = in[ii] == 1 && out[oi] != 1 ? 0 : s;
    s *= in[ii];
  }
  return st;
}

/// npucc_add_i8's rescaled input, npucc_mul_qmult(((v - zp) << left_shift), mult, shift),
/// for every int8 v (index v + 128): the tables of npucc_add_s8_fast.
std::vector<int64_t> addTable(int32_t zp, int32_t leftShift, quant::QuantMultiplier m) {
  std::vector<int64_t> t;
  for (int32_t v = -128; v <= 127; ++v) {
    int32_t s = npucc_sat_i32((int64_t(v) - zp) * (int64_t(1) << leftShift));
    t.push_back(npucc_mul_qmult(s, m.mult, m.shift));
  }
  return t;
}

int64_t maxAbs(const std::vector<int64_t> &t) {
  int64_t m = 0;
  for (int64_t v : t)
    m = std::max(m, v < 0 ? -v : v);
  return m;
}

} // namespace

Status lowerBinaryS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *a = n.input(0), *b = n.input(1), *y = n.output(0);
  QL_TRY_Q(qa, tensorQ(n, a));
  QL_TRY_Q(qb, tensorQ(n, b));
  QL_TRY_Q(qy, tensorQ(n, y));
  for (const ir::Value *v : {a, b, y})
    NPUCC_TRY(checkSize(n, v));
  if (a->shape.size() > y->shape.size() || b->shape.size() > y->shape.size())
    return nodeErr(n, "operand rank exceeds the output rank");
  std::vector<int64_t> as = bcastStrides(a->shape, y->shape), bs = bcastStrides(b->shape, y->shape);
  // Drop unit axes, then merge axes that are contiguous for both inputs.
  std::vector<int64_t> shape, sa, sb;
  for (size_t k = 0; k < y->shape.size(); ++k) {
    if (y->shape[k] == 1)
      continue;
    if (!shape.empty() && sa.back() == as[k] * y->shape[k] && sb.back() == bs[k] * y->shape[k]) {
      shape.back() *= y->shape[k];
      sa.back() = as[k];
      sb.back() = bs[k];
      continue;
    }
    shape.push_back(y->shape[k]);
    sa.push_back(as[k]);
    sb.push_back(bs[k]);
  }
  if (shape.empty()) {
    shape = {1};
    sa = {0};
    sb = {0};
  }
  if (shape.size() > 6)
    return nodeErr(n, "broadcast needs more than 6 axes");
  quant::ClampBounds cb = fusedBounds(n, qy);
  if (ctx.fastKernels()) {
    // npucc_add_s8_fast: each input's rescaling tabulated (|ta| + |tb| < 2^30, so that
    // the kernel's rounding cannot overflow; the output stage a right shift);
    // npucc_mul_s8_fast: requantization
    // words. Bit-exact with npucc_add_s8 / npucc_mul_s8.
    std::vector<lir::Arg> args = {ctx.buffer(a), ctx.buffer(b), ctx.buffer(y)};
    std::string callee;
    if (n.kind == ir::OpKind::Add) {
      quant::AddParams p = quant::addParams(qa.scale, qb.scale, qy.scale);
      std::vector<int64_t> ta = addTable(qa.zp, p.leftShift, p.a);
      std::vector<int64_t> tb = addTable(qb.zp, p.leftShift, p.b);
      if (p.out.shift >= 0 && p.out.shift <= 31 && maxAbs(ta) + maxAbs(tb) < (int64_t(1) << 30)) {
        callee = "npucc_add_s8_fast";
        args.push_back(ints(ta));
        args.push_back(ints(tb));
        args.push_back(int64_t(p.out.mult));
        args.push_back(int64_t(p.out.shift));
      }
    } else {
      quant::QuantMultiplier m = quant::quantizeMultiplier(qa.scale * qb.scale / qy.scale);
      auto w = quant::requantWords(m, quant::Rounding::Exact);
      callee = "npucc_mul_s8_fast";
      args.push_back(int64_t(qa.zp));
      args.push_back(int64_t(qb.zp));
      args.push_back(ints(std::vector<int64_t>(w.begin(), w.end())));
    }
    if (!callee.empty()) {
      for (int64_t v : {int64_t(qy.zp), int64_t(cb.lo), int64_t(cb.hi), int64_t(shape.size())})
        args.push_back(v);
      args.push_back(ints(shape));
      args.push_back(ints(sa));
      args.push_back(ints(sb));
      ctx.useKernelFile("kernels/npucc_eltwise_s8_fast.c");
      out.push_back(makeCall(n, callee, std::move(args)));
      return success();
    }
  }
  std::vector<lir::Arg> args = {ctx.buffer(a), ctx.buffer(b), ctx.buffer(y), int64_t(qa.zp),
                                int64_t(qb.zp)};
  std::string callee;
  if (n.kind == ir::OpKind::Add) {
    callee = "npucc_add_s8";
    quant::AddParams p = quant::addParams(qa.scale, qb.scale, qy.scale);
    for (int64_t v : {int64_t(p.leftShift), int64_t(p.a.mult), int64_t(p.a.shift),
                      int64_t(p.b.mult), int64_t(p.b.shift), int64_t(p.out.mult),
                      int64_t(p.out.shift)})
      args.push_back(v);
  } else {
    callee = "npucc_mul_s8";
    quant::QuantMultiplier m = quant::quantizeMultiplier(qa.scale * qb.scale / qy.scale);
    args.push_back(int64_t(m.mult));
    args.push_back(int64_t(m.shift));
  }
  for (int64_t v : {int64_t(qy.zp), int64_t(cb.lo), int64_t(cb.hi), int64_t(shape.size())})
    args.push_back(v);
  args.push_back(ints(shape));
  args.push_back(ints(sa));
  args.push_back(ints(sb));
  ctx.useKernelFile("kernels/npucc_eltwise_s8.c");
  out.push_back(makeCall(n, callee, std::move(args)));
  return success();
}

Status lowerPoolS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *x = n.input(0), *y = n.output(0);
  QL_TRY_Q(qx, tensorQ(n, x));
  QL_TRY_Q(qy, tensorQ(n, y));
  NPUCC_TRY(checkSize(n, x));
  if (n.output(1))
    return nodeErr(n, "int8 MaxPool does not produce indices");
  size_t rank = x->shape.size();
  if (rank < 3 || y->shape.size() != rank)
    return nodeErr(n, "expected an [N][C][spatial...] input");
  ctx.useKernelFile("kernels/npucc_pool_s8.c");
  if (n.kind == ir::OpKind::GlobalAveragePool) {
    int64_t red = prod(x->shape, 2, rank);
    auto m = quant::quantizeMultiplier(qx.scale / (double(red) * qy.scale));
    out.push_back(makeCall(n, "npucc_reduce_mean_s8",
                           {ctx.buffer(x), ctx.buffer(y), x->shape[0] * x->shape[1], red,
                            int64_t(1), int64_t(qx.zp), int64_t(qy.zp), int64_t(m.mult),
                            int64_t(m.shift)}));
    return success();
  }
  if (rank > 4)
    return nodeErr(n, "int8 pooling supports 1-D and 2-D windows only");
  size_t sp = rank - 2;
  bool oneD = sp == 1;
  std::vector<int64_t> ks = n.attrInts("kernel_shape");
  std::vector<int64_t> st = n.attrInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> dil = n.attrInts("dilations", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> pads = n.attrInts("pads", std::vector<int64_t>(2 * sp, 0));
  if (ks.size() != sp || st.size() != sp || dil.size() != sp || pads.size() != 2 * sp)
    return nodeErr(n, "kernel_shape/strides/dilations/pads do not match the spatial rank");
  if (n.hasAttr("auto_pad") && n.attrString("auto_pad", "NOTSET") != "NOTSET")
    return nodeErr(n, "auto_pad must be resolved into pads before lowering");
  int64_t NC = x->shape[0] * x->shape[1];
  int64_t H = oneD ? 1 : x->shape[2], W = x->shape[rank - 1];
  int64_t OH = oneD ? 1 : y->shape[2], OW = y->shape[rank - 1];
  int64_t KH = oneD ? 1 : ks[0], KW = ks[sp - 1], SH = oneD ? 1 : st[0], SW = st[sp - 1];
  int64_t DH = oneD ? 1 : dil[0], DW = dil[sp - 1];
  int64_t PT = oneD ? 0 : pads[0], PL = pads[sp - 1], PB = oneD ? 0 : pads[sp],
          PR = pads[2 * sp - 1];
  for (int64_t v : {KH, KW, SH, SW, DH, DW})
    if (v < 1)
      return nodeErr(n, "kernel sizes, strides and dilations must be positive");
  if (n.kind == ir::OpKind::MaxPool) {
    if (!sameQ(x, y))
      return nodeErr(n, "int8 MaxPool needs equal input and output quantization");
    out.push_back(makeCall(n, "npucc_maxpool2d_s8",
                           {ctx.buffer(x), ctx.buffer(y), NC, H, W, OH, OW, KH, KW, SH, SW, DH,
                            DW, PT, PL}));
    return success();
  }
  if (DH != 1 || DW != 1)
    return nodeErr(n, "int8 AveragePool does not support dilations");
  std::vector<int64_t> mult(size_t(KH * KW + 1), 0), shift(size_t(KH * KW + 1), 0);
  for (int64_t c = 1; c <= KH * KW; ++c) {
    auto m = quant::quantizeMultiplier(qx.scale / (double(c) * qy.scale));
    mult[size_t(c)] = m.mult;
    shift[size_t(c)] = m.shift;
  }
  out.push_back(makeCall(n, "npucc_avgpool2d_s8",
                         {ctx.buffer(x), ctx.buffer(y), NC, H, W, OH, OW, KH, KW, SH, SW, PT, PL,
                          PB, PR, n.attrInt("count_include_pad", 0) != 0 ? int64_t(1) : int64_t(0),
                          int64_t(qx.zp), int64_t(qy.zp), ints(mult), ints(shift)}));
  return success();
}

Status lowerReduceMeanS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *x = n.input(0), *y = n.output(0);
  QL_TRY_Q(qx, tensorQ(n, x));
  QL_TRY_Q(qy, tensorQ(n, y));
  NPUCC_TRY(checkSize(n, x));
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> axes = n.attrInts("axes");
  if (axes.empty() && n.input(1) && n.input(1)->isConstant())
    axes = n.input(1)->constant->toInts();
  if (axes.empty())
    for (int64_t k = 0; k < rank; ++k)
      axes.push_back(k);
  for (int64_t &a : axes) {
    a = normAxis(a, rank);
    if (a < 0 || a >= rank)
      return nodeErr(n, "axis out of range");
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (axes.back() - axes.front() + 1 != int64_t(axes.size()))
    return nodeErr(n, "int8 ReduceMean needs a contiguous block of axes");
  int64_t outer = prod(x->shape, 0, size_t(axes.front()));
  int64_t red = prod(x->shape, size_t(axes.front()), size_t(axes.back() + 1));
  int64_t inner = prod(x->shape, size_t(axes.back() + 1), size_t(rank));
  if (red < 1)
    return nodeErr(n, "empty reduction");
  auto m = quant::quantizeMultiplier(qx.scale / (double(red) * qy.scale));
  ctx.useKernelFile("kernels/npucc_pool_s8.c");
  out.push_back(makeCall(n, "npucc_reduce_mean_s8",
                         {ctx.buffer(x), ctx.buffer(y), outer, red, inner, int64_t(qx.zp),
                          int64_t(qy.zp), int64_t(m.mult), int64_t(m.shift)}));
  return success();
}

Status lowerConcatS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *y = n.output(0);
  QL_TRY_Q(qy, tensorQ(n, y));
  NPUCC_TRY(checkSize(n, y));
  int64_t rank = int64_t(y->shape.size()), axis = normAxis(n.attrInt("axis", 0), rank);
  if (axis < 0 || axis >= rank)
    return nodeErr(n, "axis out of range");
  int64_t outer = prod(y->shape, 0, size_t(axis)), inner = prod(y->shape, size_t(axis) + 1, 99);
  int64_t wholeRow = y->shape[size_t(axis)] * inner, off = 0;
  ctx.useKernelFile("kernels/npucc_move.c");
  for (const ir::Value *p : n.inputs) {
    if (!p)
      continue;
    QL_TRY_Q(qp, tensorQ(n, p));
    if (p->shape.size() != size_t(rank))
      return nodeErr(n, "input '" + p->name + "' has a different rank");
    int64_t row = p->shape[size_t(axis)] * inner;
    if (row > 0 && outer > 0) {
      if (sameQ(p, y)) {
        out.push_back(makeCall(n, "npucc_copy_rows",
                               {ctx.buffer(p), ctx.buffer(y), outer, row, row, wholeRow,
                                int64_t(0), off}));
      } else {
        auto m = quant::quantizeMultiplier(qp.scale / qy.scale);
        ctx.useKernelFile("kernels/npucc_eltwise_s8.c");
        out.push_back(makeCall(n, "npucc_requant_rows_s8",
                               {ctx.buffer(p), ctx.buffer(y), outer, row, wholeRow, off,
                                int64_t(qp.zp), int64_t(m.mult), int64_t(m.shift),
                                int64_t(qy.zp)}));
      }
    }
    off += row;
  }
  if (off != wholeRow)
    return nodeErr(n, "inputs do not add up to the output along the axis");
  return success();
}

Status lowerMoveS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *x = n.input(0);
  QL_TRY_Q(qx, tensorQ(n, x));
  for (const ir::Value *o : n.outputs)
    if (o && !sameQ(x, o))
      return nodeErr(n, "int8 data movement needs equal input and output quantization ('" +
                            x->name + "' vs '" + o->name + "')");
  if (n.kind == ir::OpKind::Resize && n.attrString("mode", "nearest") != "nearest")
    return nodeErr(n, "int8 Resize supports nearest mode only");
  if (n.kind != ir::OpKind::Pad || n.attrString("mode", "constant") != "constant")
    return lowerDataMovementFamily(n, ctx, out);
  // Constant Pad: the pad value is the int8 constant_value quantized like the input
  // (fold-qdq writes Q(value)), or the zero point (real 0) when there is none.
  const ir::Value *cv = n.input(2);
  if (cv && !(cv->dtype == ir::DType::I8 && cv->isConstant() && sameQ(x, cv)))
    return nodeErr(n, "integer Pad needs its constant_value quantized like its input (or none)");
  if (cv)
    return lowerDataMovementFamily(n, ctx, out);
  ir::Value padValue;
  padValue.name = n.name + ".pad_value";
  padValue.dtype = ir::DType::I8;
  padValue.quant = x->quant;
  padValue.constant =
      std::make_shared<ir::Tensor>(ir::Tensor::scalar(ir::DType::I8, double(qx.zp)));
  ir::Node copy = n;
  copy.inputs.resize(std::max<size_t>(copy.inputs.size(), 3), nullptr);
  copy.inputs[2] = &padValue;
  return lowerDataMovementFamily(copy, ctx, out);
}

namespace {
/// Real value of an optional Clip bound input.
Result<double> clipBound(const ir::Node &n, size_t i, double dflt) {
  const ir::Value *v = n.input(i);
  if (!v)
    return dflt;
  if (!v->isConstant() || v->constant->numElements() < 1)
    return nodeErr(n, "int8 Clip needs constant min/max");
  double r = v->constant->getDouble(0);
  if (v->dtype == ir::DType::I8 && v->quant && !v->quant->scale.empty())
    r = v->quant->scale[0] *
        (r - (v->quant->zeroPoint.empty() ? 0.0 : double(v->quant->zeroPoint[0])));
  return r;
}
} // namespace

Status lowerUnaryS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *x = n.input(0), *y = n.output(0);
  QL_TRY_Q(qx, tensorQ(n, x));
  QL_TRY_Q(qy, tensorQ(n, y));
  NPUCC_TRY(checkSize(n, x));
  if (x->numElements() != y->numElements())
    return nodeErr(n, "input and output sizes differ");
  ctx.useKernelFile("kernels/npucc_lut_s8.c");
  std::function<double(double)> f;
  using K = ir::OpKind;
  if (n.kind == K::Relu || n.kind == K::Clip) {
    double lo = 0.0, hi = INFINITY;
    if (n.kind == K::Clip) {
      auto l = clipBound(n, 1, -INFINITY);
      if (!l)
        return std::move(l.error());
      auto h = clipBound(n, 2, INFINITY);
      if (!h)
        return std::move(h.error());
      lo = *l;
      hi = *h;
    }
    if (sameQ(x, y)) {
      quant::ClampBounds b = quant::activationBounds(lo, hi, qy.scale, qy.zp);
      out.push_back(makeCall(n, "npucc_clamp_s8",
                             {ctx.buffer(x), ctx.buffer(y), x->numElements(), int64_t(b.lo),
                              int64_t(b.hi)}));
      return success();
    }
    f = [lo, hi](double v) { return std::min(std::max(v, lo), hi); };
  } else if (n.kind == K::Sigmoid) {
    f = quant::lutFunction(quant::LutFunction::Sigmoid);
  } else if (n.kind == K::Tanh) {
    f = quant::lutFunction(quant::LutFunction::Tanh);
  } else if (n.kind == K::HardSwish) {
    f = quant::lutFunction(quant::LutFunction::HardSwish);
  } else if (n.kind == K::HardSigmoid) {
    f = quant::lutFunction(quant::LutFunction::HardSigmoid, n.attrFloat("alpha", 0.2f),
                           n.attrFloat("beta", 0.5f));
  } else if (n.kind == K::LeakyRelu) {
    f = quant::lutFunction(quant::LutFunction::LeakyRelu, n.attrFloat("alpha", 0.01f));
  } else {
    return nodeErr(n, "no int8 table form");
  }
  quant::LutTable t = quant::buildLut(f, qx.scale, qx.zp, qy.scale, qy.zp);
  out.push_back(makeCall(n, "npucc_lut_s8",
                         {ctx.buffer(x), ctx.buffer(y), x->numElements(),
                          ints(std::vector<int64_t>(t.begin(), t.end()))}));
  return success();
}

Status lowerSoftmaxS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *x = n.input(0), *y = n.output(0);
  QL_TRY_Q(qx, tensorQ(n, x));
  QL_TRY_Q(qy, tensorQ(n, y));
  NPUCC_TRY(checkSize(n, x));
  int64_t rank = int64_t(x->shape.size()), axis = normAxis(n.attrInt("axis", -1), rank);
  if (rank == 0 || axis < 0 || axis >= rank)
    return nodeErr(n, "axis out of range");
  int32_t inv = quant::softmaxInvScaleQ16(qy.scale);
  if (inv == 0)
    return nodeErr(n, "Softmax output scale is too small for the int8 kernel (needs > 2^-15)");
  auto table = quant::softmaxExpTable(qx.scale);
  ctx.useKernelFile("kernels/npucc_softmax_s8.c");
  out.push_back(makeCall(n, "npucc_softmax_s8",
                         {ctx.buffer(x), ctx.buffer(y), prod(x->shape, 0, size_t(axis)),
                          x->shape[size_t(axis)], prod(x->shape, size_t(axis) + 1, size_t(rank)),
                          int64_t(qy.zp), int64_t(inv),
                          ints(std::vector<int64_t>(table.begin(), table.end()))}));
  return success();
}

Status lowerQuantizeBoundary(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  bool isQ = n.kind == ir::OpKind::QuantizeLinear;
  const ir::Value *x = n.input(0), *y = n.output(0);
  if (!x || !y)
    return nodeErr(n, "expected an input and an output");
  const ir::Value *qv = isQ ? y : x, *fv = isQ ? x : y;
  // u8 only at graph inputs/outputs (fold-qdq converts the rest to i8).
  const bool u8 = qv->dtype == ir::DType::U8;
  if (fv->dtype != ir::DType::F32 || (qv->dtype != ir::DType::I8 && !u8))
    return nodeErr(n, std::string("expected ") + (isQ ? "f32 -> i8/u8" : "i8/u8 -> f32") +
                          ", got " + ir::dtypeName(x->dtype) + " -> " + ir::dtypeName(y->dtype));
  NPUCC_TRY(checkSize(n, x));
  ir::QuantParams q;
  if (qv->quant) {
    q = *qv->quant;
  } else {
    const ir::Value *s = n.input(1), *z = n.input(2);
    if (!s || !s->isConstant() || (z && !z->isConstant()))
      return nodeErr(n, "scale and zero point must be constants");
    for (int64_t i = 0; i < s->constant->numElements(); ++i) {
      q.scale.push_back(float(s->constant->getDouble(i)));
      q.zeroPoint.push_back(z ? int32_t(z->constant->getInt(i)) : 0);
    }
    q.axis = int(n.attrInt("axis", 1));
  }
  if (q.scale.empty())
    return nodeErr(n, "missing scale");
  if (q.zeroPoint.empty())
    q.zeroPoint.assign(q.scale.size(), 0);
  int64_t rank = int64_t(x->shape.size()), outer = x->numElements(), chans = 1, inner = 1;
  if (q.perChannel()) {
    int64_t axis = normAxis(q.axis, rank);
    if (axis < 0 || axis >= rank || x->shape[size_t(axis)] != int64_t(q.scale.size()) ||
        q.zeroPoint.size() != q.scale.size())
      return nodeErr(n, "per-axis parameters do not match the shape");
    outer = prod(x->shape, 0, size_t(axis));
    chans = x->shape[size_t(axis)];
    inner = prod(x->shape, size_t(axis) + 1, size_t(rank));
  } else {
    q.zeroPoint.resize(1);
  }
  for (int32_t z : q.zeroPoint)
    if (u8 ? (z < 0 || z > 255) : (z < -128 || z > 127))
      return nodeErr(n, u8 ? "zero point outside uint8" : "zero point outside int8");
  if (isQ && !u8 && !q.perChannel() && ctx.fastKernels()) {
    // Per-tensor float -> int8: the rounding by float arithmetic (no libm rintf call).
    ctx.useKernelFile("kernels/npucc_eltwise_s8_fast.c");
    out.push_back(makeCall(n, "npucc_quantize_f32_s8_fast",
                           {ctx.buffer(x), ctx.buffer(y), x->numElements(),
                            lir::FloatArray{q.scale}, int64_t(q.zeroPoint[0])}));
    return success();
  }
  ctx.useKernelFile(u8 ? "kernels/npucc_boundary_s8.c" : "kernels/npucc_quantize.c");
  const char *fn = isQ ? (u8 ? "npucc_quantize_f32_u8" : "npucc_quantize_f32_s8")
                       : (u8 ? "npucc_dequantize_u8_f32" : "npucc_dequantize_s8_f32");
  out.push_back(makeCall(n, fn,
                         {ctx.buffer(x), ctx.buffer(y), outer, chans, inner,
                          lir::FloatArray{q.scale},
                          ints(std::vector<int64_t>(q.zeroPoint.begin(), q.zeroPoint.end()))}));
  return success();
}

} // namespace npucc::lower::qlower
