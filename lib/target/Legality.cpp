//===- Legality.cpp - Which graph ops an NPU runs, and why not ------------===//
//
// One function per command kind checks a node against the description:
// the operation's capability table (kernel heights and widths, strides,
// dilations, padding per side, channel counts and multiples, spatial and
// m/k/n limits, channel multipliers, requantization modes, fused clamp) and
// what the command's register fields can carry (TargetDesc::paramRange).
// Limits that tiling can satisfy (output rows, output-channel blocks, m rows,
// eltwise chunks) are only checked for the smallest tile; the lowering then
// picks the tiles. Every failed constraint becomes one reason string.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/Legality.h"

#include "LegalityChecker.h"

#include "npucc/quant/FusedActivation.h"
#include "npucc/quant/FusedPool.h"
#include "npucc/quant/Multiplier.h"
#include "npucc/quant/Rounding.h"

#include "../../runtime/hal/npucc_params.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace npucc::target {

using legality::activationQ;
using legality::Checker;
using legality::checkRequant;

namespace {

std::string listText(const std::vector<int> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// The NCHW shape of a node's 4-D activation (npu-partition gives NPU
/// convolutions and pooling NHWC values, attribute layout="NHWC").
ir::Shape nchwShape(const ir::Node &n, const ir::Value *v) {
  ir::Shape s = v->shape;
  if (s.size() == 4 && n.attrString("layout", "") == "NHWC" && !v->isConstant())
    s = {s[0], s[3], s[1], s[2]};
  return s;
}

/// Kernel, strides, dilations, padding per side, widths and the smallest row
/// tile of a spatial op (conv, depthwise, pool).
void checkSpatial(Checker &c, const NpuOp &op, bool dilations) {
  const OpLimits &l = *c.limits();
  const std::string &k = op.kindName;
  if (!l.allowsKernel(int(op.kh), int(op.kw))) {
    if (std::find(l.kernelHeights.begin(), l.kernelHeights.end(), op.kh) == l.kernelHeights.end())
      c.fail("kernel " + std::to_string(op.kh) + "x" + std::to_string(op.kw) + " not in " + k +
             "." + l.kernelHeightsKey + " " + listText(l.kernelHeights));
    else
      c.fail("kernel " + std::to_string(op.kh) + "x" + std::to_string(op.kw) + " not in " + k +
             "." + l.kernelWidthsKey + " " + listText(l.kernelWidths));
  }
  for (int64_t s : {op.strideH, op.strideW})
    if (!l.allowsStride(int(s))) {
      c.fail("stride " + std::to_string(s) + " not in " + k + ".strides " + listText(l.strides));
      break;
    }
  if (dilations)
    for (int64_t d : {op.dilH, op.dilW})
      if (!l.allowsDilation(int(d))) {
        c.fail("dilation " + std::to_string(d) + " not in " + k + ".dilations " +
               listText(l.dilations));
        break;
      }
  static const char *const Side[] = {"top", "bottom", "left", "right"};
  int64_t pads[] = {op.padTop, op.padBottom, op.padLeft, op.padRight};
  for (int i = 0; i < 4; ++i)
    if (pads[i] > int64_t(l.maxPad[size_t(i)]))
      c.fail("padding " + std::string(Side[i]) + " " + std::to_string(pads[i]) + " exceeds " + k +
             ".max_padding " + Side[i] + " " + std::to_string(l.maxPad[size_t(i)]));
  c.atMost("input width", op.inW, l.maxInW, "max_in_w");
  c.atMost("output width", op.outW, l.maxOutW, "max_out_w");
  if (l.squareKernels && op.kh != op.kw)
    c.fail("kernel " + std::to_string(op.kh) + "x" + std::to_string(op.kw) + " is not square (" +
           k + ".square_kernels)");
  if (l.minInW && op.inW < int64_t(l.minInW))
    c.fail("input width " + std::to_string(op.inW) + " is below " + k + ".min_in_w " +
           std::to_string(l.minInW));
  if (l.minInH && op.inH < int64_t(l.minInH))
    c.fail("input height " + std::to_string(op.inH) + " is below " + k + ".min_in_h " +
           std::to_string(l.minInH));
  // Implied padding: the NPU pads every image edge by the padding of its
  // kernel size, so the model's padding must be that, and a command covers
  // the whole image (a row tile's edges would be padded too).
  bool implied = !l.impliedPadding.empty();
  for (int i = 0; implied && i < 4; ++i) {
    int64_t ks = i < 2 ? op.kh : op.kw;
    auto it = l.impliedPadding.find(int(ks));
    if (it == l.impliedPadding.end())
      continue; // a kernel size the operation does not take: reported above
    if (pads[i] != int64_t(it->second)) {
      c.fail("padding " + std::string(Side[i]) + " " + std::to_string(pads[i]) + " but " + k +
             ".implied_padding of kernel size " + std::to_string(ks) + " is " +
             std::to_string(it->second) + " (the NPU pads every image edge by it; " +
             (pads[i] < int64_t(it->second) ? "cropping the output" : "padding beyond it") +
             " is not supported)");
      break;
    }
  }
  // The smallest row tile: one output row and the input rows it reads (at
  // least min_in_h of them); with implied padding, the whole image.
  int64_t rows = (op.kh - 1) * op.dilH + 1;
  rows = std::min<int64_t>(std::max<int64_t>(rows, l.minInH), std::max<int64_t>(rows, op.inH));
  if (implied)
    rows = op.inH;
  c.atMost(implied ? "input rows of the image (implied padding)" : "input rows of one output row",
           rows, l.maxInH, "max_in_h");
  if (implied)
    c.atMost("output rows of the image (implied padding)", op.outH, l.maxOutH, "max_out_h");
  c.fits("in_w", op.inW);
  c.fits("out_w", op.outW);
  c.fits("in_h", rows);
  c.fits("out_h", implied ? op.outH : 1);
  c.fits("k_h", op.kh);
  c.fits("k_w", op.kw);
  c.fits("stride_h", op.strideH);
  c.fits("stride_w", op.strideW);
  if (dilations) {
    c.fits("dil_h", op.dilH);
    c.fits("dil_w", op.dilW);
  }
  c.fits("pad_top", op.padTop);
  c.fits("pad_left", op.padLeft);
}

/// Geometry of a 2-D Conv / pooling node in NCHW; false (with a reason) if not 2-D batch 1.
bool spatialGeometry(const ir::Node &n, const ir::Value *x, const ir::Value *y, NpuOp &op,
                     Checker &c) {
  if (!x || !y || x->shape.size() != 4 || y->shape.size() != 4) {
    c.fail("not a 2-D (NCHW) operation");
    return false;
  }
  ir::Shape xs = nchwShape(n, x), ys = nchwShape(n, y);
  if (xs[0] != 1) {
    c.fail("batch " + std::to_string(xs[0]) + " (the NPU runs batch 1)");
    return false;
  }
  std::vector<int64_t> k = n.attrInts("kernel_shape");
  if (n.kind == ir::OpKind::GlobalAveragePool) // one window over the whole image
    k = {xs[2], xs[3]};
  std::vector<int64_t> s = n.attrInts("strides", {1, 1}), d = n.attrInts("dilations", {1, 1});
  std::vector<int64_t> p = n.attrInts("pads", {0, 0, 0, 0});
  if (k.size() != 2 || s.size() != 2 || d.size() != 2 || p.size() != 4) {
    c.fail("not a 2-D (NCHW) operation");
    return false;
  }
  op.inC = xs[1], op.inH = xs[2], op.inW = xs[3];
  op.outC = ys[1], op.outH = ys[2], op.outW = ys[3];
  op.kh = k[0], op.kw = k[1], op.strideH = s[0], op.strideW = s[1];
  op.dilH = d[0], op.dilW = d[1];
  op.padTop = p[0], op.padLeft = p[1], op.padBottom = p[2], op.padRight = p[3];
  return true;
}

/// A max pool fused into the conv/depthwise (attribute pool_max = k): the
/// pool stage must be max with k among its kernels; the command computes the
/// whole windows, (outH * k) x (outW * k) of the convolution's rows and columns.
bool fusedPoolLegal(const ir::Node &n, int64_t pk, Checker &c, NpuOp &op) {
  const OpLimits &l = *c.limits();
  bool offered = false;
  for (unsigned v : l.poolKernels)
    offered = offered || int64_t(v) == pk;
  std::string win = std::to_string(pk) + "x" + std::to_string(pk);
  if (l.stage(NPUCC_SLOT_POOL) != NPUCC_STAGE_POOL_MAX || !offered) {
    c.fail("fused max pool " + win + " but the NPU's " + op.kindName + " pools " +
           (l.poolKernels.empty() ? std::string("nothing (pool stage none)")
                                  : "only " + listText(std::vector<int>(l.poolKernels.begin(),
                                                                        l.poolKernels.end()))));
    return false;
  }
  auto [ch, cw] = quant::convOutputHw(n);
  if (ch / pk != op.outH || cw / pk != op.outW || op.outH < 1 || op.outW < 1) {
    c.fail("fused max pool " + win + ": output " + std::to_string(op.outH) + "x" +
           std::to_string(op.outW) + " is not the pool of the convolution's " + std::to_string(ch) +
           "x" + std::to_string(cw));
    return false;
  }
  if (!l.impliedPadding.empty() && (ch % pk || cw % pk)) {
    c.fail("fused max pool " + win +
           " drops rows or columns, but the NPU's implied padding "
           "covers the whole image");
    return false;
  }
  op.poolK = pk;
  op.outH *= pk;
  op.outW *= pk;
  c.fits("pool_k", pk);
  c.fits("out_h", pk);
  return true;
}

void convLegal(const ir::Node &n, Checker &c, NpuOp &op, const LegalityOptions &opts) {
  const ir::Value *x = n.input(0), *w = n.input(1), *y = n.output(0);
  if (!spatialGeometry(n, x, y, op, c))
    return;
  if (!n.hasAttr("kernel_shape") && w && w->shape.size() == 4)
    op.kh = w->shape[2], op.kw = w->shape[3];
  const OpLimits &l = *c.limits();
  bool dw = op.kind == NPUCC_KIND_DEPTHWISE;
  if (int64_t pk = quant::fusedPoolOf(n); pk > 1 && !fusedPoolLegal(n, pk, c, op))
    return;
  // On failure the reason is recorded and op keeps the model's stride, so the
  // checks below name every other constraint too (LegalitySelect.cpp).
  legality::selectStrideLegal(c, op);
  checkRequant(n, w, n.input(2), op.outC, 0, c, op, opts);
  checkSpatial(c, op, true);
  c.multipleOf("input channels", op.inC, l.inChannelMultiple, "in_channel_multiple");
  c.atMost("input channels", op.inC, l.maxInChannels, "max_in_channels");
  c.fits("in_ch", op.inC);
  if (dw) {
    op.depthMult = op.outC / op.inC;
    if (!l.allowsDepthMultiplier(int(op.depthMult)))
      c.fail("channel multiplier " + std::to_string(op.depthMult) +
             " not in depthwise.channel_multipliers " + listText(l.depthMultipliers));
    c.fits("depth_mult", op.depthMult);
    op.macs = uint64_t(op.outH * op.outW * op.outC * op.kh * op.kw);
  } else {
    // Output channels are tiled in blocks; each block must be a multiple.
    c.multipleOf("output channels", op.outC, l.outChannelMultiple, "out_channel_multiple");
    int64_t block = l.maxOutChannels ? std::min<int64_t>(op.outC, l.maxOutChannels) : op.outC;
    c.fits("out_ch", std::min<int64_t>(block, std::max<int64_t>(l.outChannelMultiple, 1)));
    op.macs = uint64_t(op.outH * op.outW * op.outC * op.kh * op.kw * op.inC);
  }
}

void matmulLegal(const ir::Node &n, Checker &c, NpuOp &op, const LegalityOptions &opts) {
  const ir::Value *a = n.input(0), *b = n.input(1), *y = n.output(0);
  const ir::Value *bias = n.kind == ir::OpKind::Gemm ? n.input(2) : nullptr;
  if (!a || !b || !y || a->shape.size() < 2 || b->shape.size() != 2) {
    c.fail("not a matrix product of an activation and a 2-D weight matrix");
    return;
  }
  for (size_t i = 0; i + 2 < a->shape.size(); ++i)
    if (a->shape[i] != 1) {
      c.fail("batched matrix product (leading dimension " + std::to_string(a->shape[i]) + ")");
      return;
    }
  bool transB = false;
  if (n.kind == ir::OpKind::Gemm) {
    if (n.attrInt("transA", 0) != 0)
      c.fail("Gemm with transA");
    if (n.attrFloat("alpha", 1.0f) != 1.0f || (bias && n.attrFloat("beta", 1.0f) != 1.0f))
      c.fail("Gemm with alpha or beta other than 1");
    transB = n.attrInt("transB", 0) != 0;
  }
  op.m = a->shape[a->shape.size() - 2];
  op.k = a->shape.back();
  op.n = transB ? b->shape[0] : b->shape[1];
  const OpLimits &l = *c.limits();
  checkRequant(n, b, bias, op.n, transB ? 0 : 1, c, op, opts);
  c.atMost("k", op.k, l.maxK, "max_k");
  c.atMost("k (input channels)", op.k, l.maxInChannels, "max_in_channels");
  c.multipleOf("k", op.k, l.inChannelMultiple, "in_channel_multiple");
  c.multipleOf("n", op.n, l.outChannelMultiple, "out_channel_multiple");
  c.fits("k", op.k);
  c.fits("m", 1);
  c.fits("n", std::min<int64_t>(op.n, std::max<int64_t>(l.outChannelMultiple, 1)));
  op.macs = uint64_t(op.m * op.k * op.n);
}

/// The window counts of an average pooling without the padded positions (the NPU
/// divides by the pixels inside the image, as count_include_pad=0 does).
std::set<int64_t> windowCounts(const NpuOp &op) {
  std::set<int64_t> counts;
  auto inside = [](int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t size) {
    int64_t lo = o * stride - pad, hi = lo + k;
    return std::max<int64_t>(0, std::min(hi, size) - std::max<int64_t>(lo, 0));
  };
  for (int64_t oy = 0; oy < op.outH; ++oy)
    for (int64_t ox = 0; ox < op.outW; ++ox)
      counts.insert(inside(oy, op.strideH, op.padTop, op.kh, op.inH) *
                    inside(ox, op.strideW, op.padLeft, op.kw, op.inW));
  return counts;
}

/// Why the NPU's average (sum / count rounded by `mode`, NPUCC_AVG_*, of the raw int8 values)
/// differs from the graph's integer semantics (the sum of x - zp requantized by the Q31
/// multiplier of 1/count, ties to even, + zp), or "" when it equals them for every window:
/// an odd count never ties, and its multiplier's error (< 2^-30) cannot cross a half, so
/// both round to nearest alike; a power-of-two count is exact in Q31 and ties where ties to
/// even agree only with ties to even, and only with an even zero point (rounding x - zp
/// and adding zp back keeps the parity then); other even counts tie where the Q31 error
/// decides; truncate and floor agree only with a count of 1.
std::string averageMismatch(const std::set<int64_t> &counts, unsigned mode, int32_t zp) {
  static const char *const Names[] = {"half_away_from_zero", "half_to_even", "truncate", "floor"};
  std::string why;
  for (int64_t n : counts) {
    bool pow2 = n > 0 && (n & (n - 1)) == 0;
    if (n <= 1 || (n % 2 == 1 && mode <= NPUCC_AVG_HALF_EVEN) ||
        (pow2 && mode == NPUCC_AVG_HALF_EVEN && zp % 2 == 0))
      continue;
    why = "a window of " + std::to_string(n) + " pixels" +
          (pow2 && mode == NPUCC_AVG_HALF_EVEN ? " with the odd zero point " + std::to_string(zp)
                                               : std::string()) +
          ": the NPU's average rounds " + Names[mode < 4 ? mode : 0] +
          " (pool.avg_rounding), the int8 semantics requantize the sum by the Q31 multiplier "
          "of 1/count with ties to even";
    break;
  }
  return why;
}

/// The pixel counts the int8 average divides by: every window position of
/// the padded image with count_include_pad, else the pixels inside the image.
std::set<int64_t> divisorCounts(const ir::Node &n, const NpuOp &op) {
  if (n.attrInt("count_include_pad", 0) != 0)
    return {op.kh * op.kw};
  return windowCounts(op);
}

/// The requantizing average (the pool command binds in_zp, out_zp,
/// requant_mult, requant_shift): one multiplier per command, so exact where
/// every window of the layer divides by the same count (padded positions add
/// x - in_zp = 0 either way).
void poolRequantLegal(const ir::Node &n, Checker &c, NpuOp &op,
                      const std::pair<double, int32_t> &qx, const std::pair<double, int32_t> &qy) {
  std::set<int64_t> counts = divisorCounts(n, op);
  if (counts.size() != 1 || *counts.begin() <= 0) {
    std::string list;
    for (int64_t k : counts)
      list += (list.empty() ? "" : ", ") + std::to_string(k);
    c.fail("windows of " + list +
           " pixels: the NPU's requantizing average applies one multiplier per layer");
    return;
  }
  op.poolRequant = true;
  op.poolCount = *counts.begin();
  quant::QuantMultiplier m = poolMultiplier(qx.first, qy.first, op.poolCount);
  if (m.shift < -31 || m.shift > 31)
    c.fail("requantization shift " + std::to_string(m.shift) + " outside -31..31");
  c.fits("in_zp", qx.second);
  c.fits("out_zp", qy.second);
  c.fits("requant_mult", m.mult);
  c.fits("requant_shift", m.shift);
}

void poolLegal(const ir::Node &n, Checker &c, NpuOp &op) {
  const ir::Value *x = n.input(0), *y = n.output(0);
  const bool avg = n.kind != ir::OpKind::MaxPool;
  const char *what = avg ? "average pooling" : "MaxPool";
  if (n.outputs.size() > 1 && n.output(1))
    c.fail("MaxPool with an Indices output");
  if (n.attrInt("ceil_mode", 0) != 0)
    c.fail(std::string(what) + " with ceil_mode");
  if (!spatialGeometry(n, x, y, op, c))
    return;
  auto qx = activationQ(x, "input", c);
  auto qy = activationQ(y, "output", c);
  // A requantizing pool command requantizes averages; a max passes through
  // (the int8 MaxPool clamps the maximum without requantizing).
  const bool requant = avg && poolRequantizes(c.target());
  if (qx && qy && *qx != *qy && !requant)
    c.fail(avg ? "input and output quantization differ"
               : "input and output quantization differ (the int8 MaxPool passes the maximum "
                 "through unrequantized; the NPU runs a MaxPool only between equal "
                 "quantizations)");
  op.poolKind = avg ? NPUCC_POOL_AVG : NPUCC_POOL_MAX;
  const OpLimits &l = *c.limits();
  if (!l.allowsKind(avg ? "avg" : "max"))
    c.fail(std::string(avg ? "average" : "max") + " pooling not in pool.kinds");
  checkSpatial(c, op, false);
  if (requant && qx && qy && op.outH > 0 && op.outW > 0)
    poolRequantLegal(n, c, op, *qx, *qy);
  if (avg && !requant && n.attrInt("count_include_pad", 0) != 0 &&
      op.padTop + op.padBottom + op.padLeft + op.padRight > 0)
    c.fail("average pooling with count_include_pad over padding (the NPU divides by the "
           "pixels inside the image)");
  if (avg && !requant && qx && op.outH > 0 && op.outW > 0)
    if (std::string why = averageMismatch(windowCounts(op), l.avgRounding, qx->second);
        !why.empty())
      c.fail(why);
  c.multipleOf("channels", op.inC, l.inChannelMultiple, "in_channel_multiple");
  c.atMost("channels", op.inC, l.maxInChannels, "max_in_channels");
  c.fits("in_ch", op.inC);
  c.fits("pool_kind", op.poolKind);
}

void eltwiseLegal(const ir::Node &n, Checker &c, NpuOp &op) {
  const ir::Value *a = n.input(0), *b = n.input(1), *y = n.output(0);
  if (!a || !b || !y || a->shape != b->shape || a->shape != y->shape) {
    c.fail("broadcasting Add (the NPU adds equal shapes)");
    return;
  }
  if (b->isConstant() || a->isConstant())
    c.fail("Add of a constant");
  auto qa = activationQ(a, "input", c), qb = activationQ(b, "second input", c);
  auto qy = activationQ(y, "output", c);
  const OpLimits &l = *c.limits();
  if (!l.allowsKind("add"))
    c.fail("add not in eltwise.kinds");
  if ((n.hasAttr("act_min") || n.hasAttr("act_max")) && !l.fusedClamp)
    c.fail("fused clamp (act_min/act_max) but the NPU's eltwise has no fused activation");
  op.length = y->numElements();
  c.fits("length", 1);
  if (!qa || !qb || !qy)
    return;
  quant::AddParams p = quant::addParams(qa->first, qb->first, qy->first);
  c.fits("in_zp", qa->second);
  c.fits("in2_zp", qb->second);
  c.fits("out_zp", qy->second);
  c.fits("left_shift", p.leftShift);
  c.fits("in_mult", p.a.mult);
  c.fits("in_shift", p.a.shift);
  c.fits("in2_mult", p.b.mult);
  c.fits("in2_shift", p.b.shift);
  c.fits("requant_mult", p.out.mult);
  c.fits("requant_shift", p.out.shift);
}

/// The command kind that could run `n`, or "" when no NPU command fits its kind.
std::string candidateKind(const ir::Node &n) {
  switch (n.kind) {
  case ir::OpKind::Conv: {
    const ir::Value *x = n.input(0), *y = n.output(0);
    int64_t g = n.attrInt("group", 1);
    if (g == 1)
      return "conv";
    if (x && y && x->shape.size() == 4 && y->shape.size() == 4 && g == nchwShape(n, x)[1] &&
        nchwShape(n, y)[1] % g == 0)
      return "depthwise";
    return "";
  }
  case ir::OpKind::Gemm:
  case ir::OpKind::MatMul:
    return "matmul";
  case ir::OpKind::MaxPool:
  case ir::OpKind::AveragePool:
  case ir::OpKind::GlobalAveragePool:
    return "pool";
  case ir::OpKind::Add:
    return "eltwise";
  default:
    return "";
  }
}

} // namespace

bool poolRequantizes(const TargetDesc &t) {
  const CommandDesc *c = t.command("pool");
  return c && (c->binding("requant_mult") || c->fixedParam("requant_mult"));
}

quant::QuantMultiplier poolMultiplier(double inScale, double outScale, int64_t count) {
  return quant::quantizeMultiplier(inScale / (double(count) * outScale));
}

namespace {

Placement placeCore(const ir::Node &n, const TargetDesc &t, const LegalityOptions &o) {
  Placement p;
  p.candidate = candidateKind(n);
  if (p.candidate.empty()) {
    if (n.kind == ir::OpKind::Conv)
      p.reasons.push_back("grouped convolution (group " + std::to_string(n.attrInt("group", 1)) +
                          ") is neither a conv nor a depthwise convolution");
    else
      p.reasons.push_back(std::string("no NPU command runs ") + n.opName());
    return p;
  }
  if (!t.supports(p.candidate)) {
    p.reasons.push_back("the NPU has no " + p.candidate + " operation");
    return p;
  }
  for (const auto *vs : {&n.inputs, &n.outputs})
    for (const ir::Value *v : *vs)
      if (v && v->numElements() == 0) {
        p.reasons.push_back("'" + v->name + "' is empty (shape " + ir::shapeStr(v->shape) +
                            "): no NPU command runs on zero elements");
        return p;
      }
  NpuOp op;
  op.kindName = p.candidate;
  op.kind = commandKindId(p.candidate);
  Checker c(t, p.candidate, p.reasons);
  if (n.output(0) && n.output(0)->dtype == ir::DType::I32 && !n.output(0)->quant)
    c.fail("int32 accumulator output (ConvInteger / MatMulInteger): nothing to requantize");
  else if (op.kind == NPUCC_KIND_CONV || op.kind == NPUCC_KIND_DEPTHWISE)
    convLegal(n, c, op, o);
  else if (op.kind == NPUCC_KIND_MATMUL)
    matmulLegal(n, c, op, o);
  else if (op.kind == NPUCC_KIND_POOL)
    poolLegal(n, c, op);
  else
    eltwiseLegal(n, c, op);
  if (c.ok())
    p.op = op;
  return p;
}

} // namespace

Placement placeNode(const ir::Node &n, const TargetDesc &t, const LegalityOptions &o) {
  // A lookup-table activation fused into the node (npu-partition, quant::coreOf):
  // the MAC part decides, and only the lut256 stage (the table) or the pwl
  // stage (the segments npu-partition fitted, attribute act_pwl) holds it.
  if (auto core = quant::coreOf(n)) {
    Placement p = placeCore(core->node, t, o);
    const OpLimits *l = t.operation(p.candidate);
    int st = l ? l->stage(NPUCC_SLOT_ACTIVATION) : -1;
    if (p.onNpu() && st != NPUCC_STAGE_ACT_LUT256 && st != NPUCC_STAGE_ACT_PWL) {
      p.reasons.push_back("fused activation " + n.attrString("act_fn", "") + " but the NPU's " +
                          p.candidate + " has no lut256 or pwl activation stage");
      p.op.reset();
    } else if (p.onNpu() && st == NPUCC_STAGE_ACT_PWL && !n.hasAttr("act_pwl")) {
      p.reasons.push_back("fused activation " + n.attrString("act_fn", "") + " on the NPU's " +
                          p.candidate + " pwl stage without its segments (attribute act_pwl)");
      p.op.reset();
    }
    return p;
  }
  return placeCore(n, t, o);
}

std::string candidateKindOf(const ir::Node &n) { return candidateKind(n); }

} // namespace npucc::target
