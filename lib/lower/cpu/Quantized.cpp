//===- Quantized.cpp - int8 CPU lowering: dispatch, Conv, Gemm/MatMul -----===//
//
// isQuantizedNode / lowerQuantizedNode (include/npucc/lower/QuantLowering.h),
// the shared helpers of lib/lower/cpu/Quant*.cpp, and the int8 Conv (regular,
// grouped, depthwise; per-channel weight scales and zero points) and
// Gemm/MatMul lowerings. Multipliers M[c] = s_x * s_w[c] / s_y become the
// mult[]/shift[] IntArray arguments; the int32 bias is the constant buffer.
//
//===----------------------------------------------------------------------===//
#include "QuantInternal.h"

#include "npucc/quant/Rounding.h"

#include <algorithm>
#include <cmath>

namespace npucc::lower {
namespace qlower {

Diagnostic nodeErr(const ir::Node &n, const std::string &msg) {
  return error(msg).atNode(n.name, n.opName());
}

Result<TensorQ> tensorQ(const ir::Node &n, const ir::Value *v) {
  if (!v)
    return nodeErr(n, "missing operand");
  if (v->dtype != ir::DType::I8 || !v->quant || v->quant->scale.empty() ||
      v->quant->zeroPoint.empty())
    return nodeErr(n, "'" + v->name + "' must be int8 with quantization parameters (got " +
                          ir::dtypeName(v->dtype) + ")");
  if (v->quant->perChannel())
    return nodeErr(n, "'" + v->name + "' must be quantized per tensor");
  TensorQ q{v->quant->scale[0], v->quant->zeroPoint[0]};
  if (!(q.scale > 0.0) || !std::isfinite(q.scale))
    return nodeErr(n, "'" + v->name + "' has a non-positive scale");
  if (q.zp < -128 || q.zp > 127)
    return nodeErr(n, "'" + v->name + "' has a zero point outside int8");
  return q;
}

bool sameQ(const ir::Value *a, const ir::Value *b) {
  return a && b && a->quant && b->quant && a->quant->scale == b->quant->scale &&
         a->quant->zeroPoint == b->quant->zeroPoint;
}

lir::Instr makeCall(const ir::Node &n, const std::string &callee, std::vector<lir::Arg> args) {
  lir::Instr in;
  in.opcode = "call";
  in.callee = callee;
  in.args = std::move(args);
  in.comment = n.name + " (" + n.opName() + ")";
  return in;
}

lir::IntArray ints(const std::vector<int64_t> &v) { return lir::IntArray{v}; }

quant::ClampBounds fusedBounds(const ir::Node &n, const TensorQ &out) {
  double lo = n.hasAttr("act_min") ? double(n.attrFloat("act_min", 0.0f)) : -INFINITY;
  double hi = n.hasAttr("act_max") ? double(n.attrFloat("act_max", 0.0f)) : INFINITY;
  return quant::activationBounds(lo, hi, out.scale, out.zp);
}

Status checkSize(const ir::Node &n, const ir::Value *v) {
  if (v && v->numElements() > INT32_MAX)
    return nodeErr(n, "'" + v->name + "' is too large for the 32-bit kernel parameters");
  return success();
}

namespace {

/// Per-channel (or broadcast per-tensor) weight scales and zero points.
struct WeightQ {
  std::vector<double> scale;
  std::vector<int64_t> zp;
  bool anyZp = false;
};

Result<WeightQ> weightQ(const ir::Node &n, const ir::Value *w, int64_t channels, int axis) {
  if (w->dtype != ir::DType::I8 || !w->quant || w->quant->scale.empty())
    return nodeErr(n, "weights '" + w->name + "' must be int8 with quantization parameters");
  const ir::QuantParams &q = *w->quant;
  size_t k = q.scale.size();
  if (k != 1 && (int64_t(k) != channels || q.axis != axis))
    return nodeErr(n, "weights '" + w->name + "' must be quantized per tensor or per channel " +
                          "along axis " + std::to_string(axis) + " (" +
                          std::to_string(channels) + " channels)");
  if (q.zeroPoint.size() != k && q.zeroPoint.size() > 1)
    return nodeErr(n, "weights '" + w->name + "' have mismatched scale/zero-point counts");
  WeightQ r;
  for (int64_t c = 0; c < channels; ++c) {
    size_t i = k == 1 ? 0 : size_t(c);
    r.scale.push_back(q.scale[i]);
    int64_t z = q.zeroPoint.empty() ? 0 : q.zeroPoint[q.zeroPoint.size() == 1 ? 0 : i];
    if (z < -128 || z > 127)
      return nodeErr(n, "weights '" + w->name + "' have a zero point outside int8");
    r.zp.push_back(z);
    r.anyZp = r.anyZp || z != 0;
  }
  return r;
}

Status checkBias(const ir::Node &n, const ir::Value *b, int64_t channels) {
  if (!b)
    return success();
  if (b->dtype != ir::DType::I32)
    return nodeErr(n, "bias '" + b->name + "' must be int32 (scale s_x * s_w[c]), got " +
                          ir::dtypeName(b->dtype));
  if (b->numElements() != channels)
    return nodeErr(n, "bias '" + b->name + "' must have " + std::to_string(channels) +
                          " elements");
  return success();
}

/// A scratch buffer of `count` int32 accumulators (typed so the C is int32_t *).
lir::BufferRef scratchI32(LowerContext &ctx, int64_t count) {
  lir::BufferRef b = ctx.scratch(count * 4);
  b.dtype = ir::DType::I32;
  return b;
}

/// mult[]/shift[] IntArrays for M[c] = sx * sw[c] / sy, then the kernels' rounding
/// argument, from the node's requant attribute (the verifier checked its value).
void pushMultipliers(lir::Instr &in, const ir::Node &n, double sx, const std::vector<double> &sw,
                     double sy) {
  quant::Rounding r = quant::roundingOf(n);
  std::vector<int64_t> m, s;
  for (double w : sw) {
    // Scales are float32 in the IR: the casts are exact.
    quant::QuantMultiplier q = quant::productMultiplier(float(sx), float(w), float(sy), r);
    m.push_back(q.mult);
    s.push_back(q.shift);
  }
  in.args.push_back(ints(m));
  in.args.push_back(ints(s));
  in.args.push_back(int64_t(quant::roundingCode(r)));
}

} // namespace

Status lowerConvS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *x = n.input(0), *w = n.input(1), *b = n.input(2), *y = n.output(0);
  if (!x || !w || !y)
    return nodeErr(n, "expected inputs X, W and output Y");
  auto qx = tensorQ(n, x);
  if (!qx)
    return std::move(qx.error());
  // ConvInteger: the int32 accumulators are the output (no quant params, no requant).
  const bool acc32 = y->dtype == ir::DType::I32 && !y->quant;
  auto qy = acc32 ? Result<TensorQ>(TensorQ{1.0, 0}) : tensorQ(n, y);
  if (!qy)
    return std::move(qy.error());
  if (acc32 && (n.hasAttr("act_min") || n.hasAttr("act_max")))
    return nodeErr(n, "an int32 (ConvInteger) output cannot carry a fused activation");
  size_t rank = x->shape.size();
  if ((rank != 3 && rank != 4) || w->shape.size() != rank || y->shape.size() != rank)
    return nodeErr(n, "int8 Conv supports 1-D and 2-D convolutions only");
  size_t sp = rank - 2;
  bool oneD = sp == 1;
  std::vector<int64_t> strides = n.attrInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> dil = n.attrInts("dilations", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> pads = n.attrInts("pads", std::vector<int64_t>(2 * sp, 0));
  if (strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp)
    return nodeErr(n, "strides/dilations/pads do not match the spatial rank");
  if (n.hasAttr("auto_pad") && n.attrString("auto_pad", "NOTSET") != "NOTSET")
    return nodeErr(n, "auto_pad must be resolved into pads before lowering");
  int64_t G = n.attrInt("group", 1), N = x->shape[0], C = x->shape[1], M = y->shape[1];
  if (G < 1 || C % G != 0 || M % G != 0 || w->shape[0] != M || w->shape[1] * G != C)
    return nodeErr(n, "weights " + ir::shapeStr(w->shape) + " do not fit input " +
                          ir::shapeStr(x->shape) + " with group " + std::to_string(G));
  for (size_t i = 0; i < sp; ++i)
    if (strides[i] < 1 || dil[i] < 1 || pads[i] < 0 || pads[i + sp] < 0)
      return nodeErr(n, "strides/dilations must be positive and pads non-negative");
  int64_t H = oneD ? 1 : x->shape[2], W = x->shape[rank - 1];
  int64_t OH = oneD ? 1 : y->shape[2], OW = y->shape[rank - 1];
  int64_t KH = oneD ? 1 : w->shape[2], KW = w->shape[rank - 1];
  int64_t SH = oneD ? 1 : strides[0], SW = strides[sp - 1];
  int64_t DH = oneD ? 1 : dil[0], DW = dil[sp - 1];
  int64_t PT = oneD ? 0 : pads[0], PL = pads[sp - 1];
  int64_t PB = oneD ? 0 : pads[sp], PR = pads[2 * sp - 1];
  if ((H + PT + PB - ((KH - 1) * DH + 1)) / SH + 1 != OH ||
      (W + PL + PR - ((KW - 1) * DW + 1)) / SW + 1 != OW)
    return nodeErr(n, "output " + ir::shapeStr(y->shape) + " does not match the attributes");
  for (const ir::Value *v : {x, w, y})
    NPUCC_TRY(checkSize(n, v));
  auto qw = weightQ(n, w, M, 0);
  if (!qw)
    return std::move(qw.error());
  NPUCC_TRY(checkBias(n, b, M));
  quant::ClampBounds cb = fusedBounds(n, *qy);
  if (!acc32 && ctx.fastKernels() &&
      lowerConvS8Fast(n, ctx, ConvGeom{N, C, H, W, M, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL, G},
                      ProductQ{qx->zp, qy->zp, cb, qx->scale, qy->scale, qw->scale, qw->anyZp},
                      out))
    return success();

  lir::Instr in = makeCall(n, acc32 ? "npucc_conv2d_s8_acc32" : "npucc_conv2d_s8",
                           {ctx.buffer(x), ctx.buffer(w),
                            b ? ctx.buffer(b) : lir::BufferRef::null(ir::DType::I32),
                            ctx.buffer(y), scratchI32(ctx, OH * OW)});
  for (int64_t v : {N, C, H, W, M, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL, G})
    in.args.push_back(v);
  if (acc32) {
    in.args.push_back(int64_t(qx->zp));
    in.args.push_back(ints(qw->anyZp ? qw->zp : std::vector<int64_t>{}));
    ctx.useKernelFile("kernels/npucc_conv_s8.c");
    out.push_back(std::move(in));
    return success();
  }
  for (int64_t v : {int64_t(qx->zp), int64_t(qy->zp), int64_t(cb.lo), int64_t(cb.hi)})
    in.args.push_back(v);
  in.args.push_back(ints(qw->anyZp ? qw->zp : std::vector<int64_t>{}));
  pushMultipliers(in, n, qx->scale, qw->scale, qy->scale);
  ctx.useKernelFile("kernels/npucc_conv_s8.c");
  out.push_back(std::move(in));
  return success();
}

Status lowerMatMulS8(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *a = n.input(0), *b = n.input(1), *y = n.output(0);
  const ir::Value *bias = n.kind == ir::OpKind::Gemm ? n.input(2) : nullptr;
  if (!a || !b || !y)
    return nodeErr(n, "expected inputs A, B and output Y");
  auto qa = tensorQ(n, a);
  if (!qa)
    return std::move(qa.error());
  // MatMulInteger: the int32 sums are the output (no quant params, no requant).
  const bool acc32 = y->dtype == ir::DType::I32 && !y->quant;
  auto qy = acc32 ? Result<TensorQ>(TensorQ{1.0, 0}) : tensorQ(n, y);
  if (!qy)
    return std::move(qy.error());
  if (acc32 && (n.hasAttr("act_min") || n.hasAttr("act_max") || n.kind == ir::OpKind::Gemm))
    return nodeErr(n, "an int32 output needs a MatMul without a fused activation");
  for (const ir::Value *v : {a, b, y})
    NPUCC_TRY(checkSize(n, v));
  bool transB = false;
  if (n.kind == ir::OpKind::Gemm) {
    if (n.attrInt("transA", 0) != 0)
      return nodeErr(n, "int8 Gemm does not support transA");
    if (n.attrFloat("alpha", 1.0f) != 1.0f || (bias && n.attrFloat("beta", 1.0f) != 1.0f))
      return nodeErr(n, "int8 Gemm needs alpha = beta = 1 (fold them into the scales)");
    transB = n.attrInt("transB", 0) != 0;
    if (a->shape.size() != 2 || b->shape.size() != 2)
      return nodeErr(n, "Gemm operands must be 2-D");
  }
  if (a->shape.size() < 2 || b->shape.size() < 2)
    return nodeErr(n, "int8 MatMul needs operands of rank >= 2");
  int64_t K = a->shape.back(), M = a->shape[a->shape.size() - 2];
  int64_t bk = transB ? b->shape[1] : b->shape[b->shape.size() - 2];
  int64_t N = transB ? b->shape[0] : b->shape.back();
  if (bk != K || y->shape.back() != N)
    return nodeErr(n, "shapes " + ir::shapeStr(a->shape) + " x " + ir::shapeStr(b->shape) +
                          " -> " + ir::shapeStr(y->shape) + " do not match");
  // Batch: A's leading dims; B either 2-D (shared) or with the same leading dims.
  int64_t batch = a->numElements() / (M * K), bBs = 0;
  if (b->shape.size() > 2) {
    if (b->shape.size() != a->shape.size() || b->numElements() / (K * N) != batch ||
        !std::equal(b->shape.begin(), b->shape.end() - 2, a->shape.begin()))
      return nodeErr(n, "int8 MatMul supports a 2-D B or a B with A's batch dimensions");
    bBs = K * N;
  } else if (b->shape.size() == 2) {
    // 2-D B shared by all rows: fold the batch into M.
    M *= batch;
    batch = 1;
  }
  if (y->numElements() != batch * M * N)
    return nodeErr(n, "output " + ir::shapeStr(y->shape) + " does not match the operands");
  // Output-feature axis of the weights: N, i.e. axis 0 of [N][K], last axis of [..][K][N].
  int wAxis = transB ? 0 : int(b->shape.size()) - 1;
  std::vector<double> sw;
  std::vector<int64_t> zw;
  bool anyZp = false;
  if (b->quant && b->quant->perChannel()) {
    if (!b->isConstant())
      return nodeErr(n, "per-channel quantization needs constant weights");
    auto qw = weightQ(n, b, N, wAxis);
    if (!qw)
      return std::move(qw.error());
    sw = qw->scale;
    zw = qw->zp;
    anyZp = qw->anyZp;
  } else {
    auto qb = tensorQ(n, b);
    if (!qb)
      return std::move(qb.error());
    sw = {qb->scale};
    zw = {qb->zp};
    anyZp = qb->zp != 0;
  }
  NPUCC_TRY(checkBias(n, bias, N));
  quant::ClampBounds cb = fusedBounds(n, *qy);
  int64_t bRs = transB ? 1 : N, bCs = transB ? K : 1;
  if (!acc32 && ctx.fastKernels() && batch == 1 && bBs == 0 &&
      lowerMatMulS8Fast(n, ctx, M, N, K, bRs, bCs,
                        ProductQ{qa->zp, qy->zp, cb, qa->scale, qy->scale, sw, anyZp}, out))
    return success();
  lir::Instr in = makeCall(n, acc32 ? "npucc_gemm_s8_acc32" : "npucc_gemm_s8",
                           {ctx.buffer(a), ctx.buffer(b),
                            bias ? ctx.buffer(bias) : lir::BufferRef::null(ir::DType::I32),
                            ctx.buffer(y), scratchI32(ctx, N)});
  if (acc32) {
    for (int64_t v : {batch, M, N, K, bBs, bRs, bCs, int64_t(qa->zp), int64_t(sw.size())})
      in.args.push_back(v);
    in.args.push_back(ints(anyZp ? zw : std::vector<int64_t>{}));
    ctx.useKernelFile("kernels/npucc_gemm_s8.c");
    out.push_back(std::move(in));
    return success();
  }
  for (int64_t v : {batch, M, N, K, bBs, bRs, bCs, int64_t(qa->zp), int64_t(qy->zp),
                    int64_t(cb.lo), int64_t(cb.hi), int64_t(sw.size())})
    in.args.push_back(v);
  in.args.push_back(ints(anyZp ? zw : std::vector<int64_t>{}));
  pushMultipliers(in, n, qa->scale, sw, qy->scale);
  ctx.useKernelFile("kernels/npucc_gemm_s8.c");
  out.push_back(std::move(in));
  return success();
}

} // namespace qlower

bool isQuantizedNode(const ir::Node &n) {
  if (n.kind == ir::OpKind::QuantizeLinear || n.kind == ir::OpKind::DequantizeLinear)
    return true;
  if (n.info().flags & ir::OPF_VIEW)
    return false;
  auto q8 = [](const ir::Value *v) { return v && v->dtype == ir::DType::I8 && v->quant; };
  for (const ir::Value *v : n.inputs)
    if (q8(v))
      return true;
  for (const ir::Value *v : n.outputs)
    if (q8(v))
      return true;
  return false;
}

Status lowerQuantizedNode(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  using K = ir::OpKind;
  using namespace qlower;
  switch (n.kind) {
  case K::Conv:
    return lowerConvS8(n, ctx, out);
  case K::Gemm:
  case K::MatMul:
    return lowerMatMulS8(n, ctx, out);
  case K::Add:
  case K::Mul:
    return lowerBinaryS8(n, ctx, out);
  case K::MaxPool:
  case K::AveragePool:
  case K::GlobalAveragePool:
    return lowerPoolS8(n, ctx, out);
  case K::ReduceMean:
    return lowerReduceMeanS8(n, ctx, out);
  case K::Concat:
    return lowerConcatS8(n, ctx, out);
  case K::Transpose:
  case K::Slice:
  case K::Split:
  case K::Pad:
  case K::Gather:
  case K::Resize:
    return lowerMoveS8(n, ctx, out);
  case K::Relu:
  case K::Clip:
  case K::Sigmoid:
  case K::Tanh:
  case K::HardSwish:
  case K::HardSigmoid:
  case K::LeakyRelu:
    return lowerUnaryS8(n, ctx, out);
  case K::Softmax:
    return lowerSoftmaxS8(n, ctx, out);
  case K::QuantizeLinear:
  case K::DequantizeLinear:
    return lowerQuantizeBoundary(n, ctx, out);
  default:
    break;
  }
  return nodeErr(n, std::string("no int8 CPU kernel for ") + n.opName() +
                        " (keep it float between DequantizeLinear/QuantizeLinear)");
}

} // namespace npucc::lower
