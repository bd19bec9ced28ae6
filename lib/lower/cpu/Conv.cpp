//===- Conv.cpp - CPU lowering of Conv and ConvTranspose -------------------===//
//
// Chooses the float32 kernel of runtime/kernels/npucc_conv.c for a node:
//   - depthwise (group > 1, C/group == 1, any multiplier):
//     npucc_depthwise_conv2d_f32 (runtime/kernels/npucc_dwconv.c), a direct
//     kernel whose scratch holds one zero-padded, stride-phase-split input
//     channel and one flat output plane (no scratch for large planes);
//   - otherwise npucc_conv2d_f32: an indirect convolution (8 x 8 register
//     tiles of output channels x pixels, weights read in place, each im2col
//     row segment read through a pointer: into per-chunk, zero-padded,
//     stride-phase-split windows of the kernel rows, into the image, or into
//     a per-tile gather). Its scratch is small and bounded whatever the model:
//     (min(K, 256) + 1) x 8 floats, at most 8 KiB (cpuConvScratchBytes). A
//     single-channel input with group 1 also goes here; pointwise ones with
//     K <= 256, one output channel or one pixel run the SGEMM's unpacked or
//     matrix-vector path inside the kernel (their scratch fits the same bound).
//   - ConvTranspose: npucc_conv_transpose2d_f32 (SGEMM + col2im scatter).
// 1-D convolutions are lowered as 2-D ones with H = 1; 3-D ones are
// rejected. An absent bias is passed as lir::BufferRef::null() (NULL in C).
// The fused activation (act_min/act_max) becomes the kernels' clamp bounds.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuLowering.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

namespace npucc::lower {

/// Bytes of scratch npucc_sgemm_core_f32 needs (defined in MatMul.cpp,
/// mirrors npucc_sgemm_scratch_floats in runtime/kernels/npucc_gemm.c).
int64_t cpuSgemmScratchBytes(int64_t M, int64_t N, int64_t K);

/// Bytes of scratch npucc_conv2d_f32 needs for K = C/group*KH*KW im2col rows;
/// mirrors npucc_conv2d_scratch_floats in runtime/kernels/npucc_conv.c (256 =
/// NPUCC_CONV_KC, 8 = the tile width; kernels_conv_test checks they agree):
/// one gathered 8-value row per im2col row of a depth block, and 8 zeros.
int64_t cpuConvScratchBytes(int64_t K) { return (std::min<int64_t>(K, 256) + 1) * 8 * 4; }

/// Bytes of scratch npucc_depthwise_conv2d_f32 needs; mirrors
/// npucc_depthwise_conv2d_scratch_floats in runtime/kernels/npucc_dwconv.c
/// (16 = NPUCC_DW_CHUNK, 8192 = NPUCC_DW_FLAT_MAX; kernels_dwconv_test checks
/// they agree).
int64_t cpuDepthwiseScratchBytes(int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t SH,
                                 int64_t SW, int64_t DH, int64_t DW) {
  const int64_t chunk = 16, flatMax = 8192;
  int64_t hp = (OH - 1) * SH + (KH - 1) * DH + 1, wp = (OW - 1) * SW + (KW - 1) * DW + 1;
  int64_t hq = (hp + SH - 1) / SH, wq = (wp + SW - 1) / SW;
  int64_t flat = ((OH - 1) * wq + OW + chunk - 1) / chunk * chunk;
  if (SH * SW * hq * wq > flatMax)
    return 0;
  return (SH * SW * hq * wq + chunk + flat) * 4;
}

namespace {

Diagnostic nodeErr(const ir::Node &n, const std::string &msg) {
  return error(msg).atNode(n.name, n.opName());
}

float boundAttr(const ir::Node &n, const char *name, float dflt) {
  float v = n.attrFloat(name, dflt);
  if (std::isnan(v))
    return dflt;
  return v < -FLT_MAX ? -FLT_MAX : (v > FLT_MAX ? FLT_MAX : v);
}

/// Convolution geometry in 2-D form (1-D convs have H = KH = 1).
struct ConvGeom {
  int64_t N, C, H, W, M, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR, G;
};

std::string dims(const ir::Shape &s) { return ir::shapeStr(s); }

/// Reads and checks the attributes and shapes of Conv (transpose = false)
/// or ConvTranspose (transpose = true).
Result<ConvGeom> convGeometry(const ir::Node &n, bool transpose) {
  const ir::Value *x = n.input(0), *w = n.input(1), *b = n.input(2), *y = n.output(0);
  if (!x || !w || !y)
    return nodeErr(n, "expected inputs X, W and output Y");
  for (const ir::Value *v : {x, w, b, y})
    if (v && v->dtype != ir::DType::F32)
      return nodeErr(n, std::string("CPU kernels support float32 only, got ") +
                            ir::dtypeName(v->dtype) + " for '" + v->name + "'");
  size_t rank = x->shape.size();
  if (rank == 5)
    return nodeErr(n, "3-D convolution is not supported by the CPU kernels");
  if (rank != 3 && rank != 4)
    return nodeErr(n, "expected a rank-3 or rank-4 input, got " + dims(x->shape));
  size_t sp = rank - 2;
  if (w->shape.size() != rank || y->shape.size() != rank)
    return nodeErr(n, "weights " + dims(w->shape) + " / output " + dims(y->shape) +
                          " do not match input rank " + std::to_string(rank));
  std::vector<int64_t> ks(w->shape.begin() + 2, w->shape.end());
  std::vector<int64_t> kAttr = n.attrInts("kernel_shape", ks);
  if (kAttr != ks)
    return nodeErr(n, "kernel_shape attribute does not match the weights " + dims(w->shape));
  std::vector<int64_t> strides = n.attrInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> dil = n.attrInts("dilations", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> outPad = n.attrInts("output_padding", std::vector<int64_t>(sp, 0));
  if (strides.size() != sp || dil.size() != sp || outPad.size() != sp)
    return nodeErr(n, "strides/dilations/output_padding must have one value per spatial axis");
  for (size_t i = 0; i < sp; i++)
    if (strides[i] < 1 || dil[i] < 1 || ks[i] < 1)
      return nodeErr(n, "kernel sizes, strides and dilations must be positive");

  // Pads: explicit, or derived from auto_pad / output_shape when still present.
  std::vector<int64_t> pads = n.attrInts("pads", std::vector<int64_t>(2 * sp, 0));
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  std::vector<int64_t> outShapeAttr = n.attrInts("output_shape");
  if (pads.size() != 2 * sp)
    return nodeErr(n, "pads must have two values per spatial axis");
  bool derive = autoPad != "NOTSET" || (transpose && !outShapeAttr.empty() && !n.hasAttr("pads"));
  if (derive) {
    for (size_t i = 0; i < sp; i++) {
      int64_t in = x->shape[2 + i], out = y->shape[2 + i];
      int64_t eff = (ks[i] - 1) * dil[i] + 1, total = 0;
      if (autoPad == "VALID") {
        total = 0;
      } else if (transpose) {
        total = strides[i] * (in - 1) + outPad[i] + eff - out;
      } else {
        total = std::max<int64_t>(0, (out - 1) * strides[i] + eff - in);
      }
      bool upperSmall = transpose ? autoPad == "SAME_UPPER" : autoPad != "SAME_LOWER";
      int64_t begin = upperSmall ? total / 2 : total - total / 2;
      pads[i] = begin;
      pads[i + sp] = total - begin;
    }
  }

  ConvGeom g{};
  g.G = n.attrInt("group", 1);
  g.N = x->shape[0];
  g.C = x->shape[1];
  g.M = y->shape[1];
  if (g.G < 1 || g.C % g.G != 0 || g.M % g.G != 0)
    return nodeErr(n, "group " + std::to_string(g.G) + " does not divide channels " +
                          std::to_string(g.C) + " -> " + std::to_string(g.M));
  int64_t wOut = transpose ? w->shape[1] * g.G : w->shape[0];
  int64_t wIn = transpose ? w->shape[0] : w->shape[1] * g.G;
  if (wOut != g.M || wIn != g.C || y->shape[0] != g.N)
    return nodeErr(n, "weights " + dims(w->shape) + " do not fit input " + dims(x->shape) +
                          " and output " + dims(y->shape));
  if (b && b->numElements() != g.M)
    return nodeErr(n, "bias must have " + std::to_string(g.M) + " elements, got " + dims(b->shape));
  bool oneD = sp == 1;
  g.H = oneD ? 1 : x->shape[2];
  g.W = x->shape[rank - 1];
  g.OH = oneD ? 1 : y->shape[2];
  g.OW = y->shape[rank - 1];
  g.KH = oneD ? 1 : ks[0];
  g.KW = ks[sp - 1];
  g.SH = oneD ? 1 : strides[0];
  g.SW = strides[sp - 1];
  g.DH = oneD ? 1 : dil[0];
  g.DW = dil[sp - 1];
  g.PT = oneD ? 0 : pads[0];
  g.PL = pads[sp - 1];
  g.PB = oneD ? 0 : pads[sp];
  g.PR = pads[2 * sp - 1];
  for (int64_t p : pads)
    if (p < 0)
      return nodeErr(n, "negative pads are not supported");

  // The kernels take OH/OW from the output; check them against the attributes.
  auto expected = [&](int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1,
                      int64_t op) {
    int64_t eff = (k - 1) * d + 1;
    return transpose ? s * (in - 1) + op + eff - p0 - p1 : (in + p0 + p1 - eff) / s + 1;
  };
  int64_t eh = expected(g.H, g.KH, g.SH, g.DH, g.PT, g.PB, oneD ? 0 : outPad[0]);
  int64_t ew = expected(g.W, g.KW, g.SW, g.DW, g.PL, g.PR, outPad[sp - 1]);
  if (eh != g.OH || ew != g.OW)
    return nodeErr(n, "output " + dims(y->shape) + " does not match the attributes (expected " +
                          "spatial size " + std::to_string(eh) + "x" + std::to_string(ew) + ")");
  if (g.OH < 1 || g.OW < 1 || g.H < 1 || g.W < 1)
    return nodeErr(n, "empty spatial dimensions are not supported");
  for (int64_t v : {g.N * g.C * g.H * g.W, g.N * g.M * g.OH * g.OW, g.C * g.M * g.KH * g.KW})
    if (v > INT32_MAX)
      return nodeErr(n, "tensor too large for the 32-bit kernel parameters");
  return g;
}

void pushGeom(lir::Instr &in, const ConvGeom &g, bool withGroup) {
  for (int64_t v :
       {g.N, g.C, g.H, g.W, g.M, g.OH, g.OW, g.KH, g.KW, g.SH, g.SW, g.DH, g.DW, g.PT, g.PL})
    in.args.push_back(v);
  if (withGroup)
    in.args.push_back(g.G);
}

} // namespace

Status lowerConvFamily(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  bool transpose = n.kind == ir::OpKind::ConvTranspose;
  if (n.kind != ir::OpKind::Conv && !transpose)
    return nodeErr(n, "not a convolution");
  auto geom = convGeometry(n, transpose);
  if (!geom)
    return std::move(geom.error());
  const ConvGeom &g = *geom;
  const ir::Value *bias = n.input(2);
  float lo = boundAttr(n, "act_min", -FLT_MAX), hi = boundAttr(n, "act_max", FLT_MAX);

  lir::Instr in;
  in.opcode = "call";
  in.comment = n.name + " (" + n.opName() + ")";
  in.args = {ctx.buffer(n.input(0)), ctx.buffer(n.input(1)),
             bias ? ctx.buffer(bias) : lir::BufferRef::null(), ctx.buffer(n.output(0))};
  int64_t scratchBytes = 0;
  if (transpose) {
    in.callee = "npucc_conv_transpose2d_f32";
    // 256 = NPUCC_CONVT_NC, the columns per pass of the kernel (npucc_conv.h).
    int64_t rows = g.M / g.G * g.KH * g.KW, cols = std::min<int64_t>(g.H * g.W, 256);
    scratchBytes = rows * cols * 4 + cpuSgemmScratchBytes(rows, cols, g.C / g.G);
  } else if (g.C / g.G == 1 && g.G > 1) {
    in.callee = "npucc_depthwise_conv2d_f32";
    scratchBytes = cpuDepthwiseScratchBytes(g.OH, g.OW, g.KH, g.KW, g.SH, g.SW, g.DH, g.DW);
  } else {
    in.callee = "npucc_conv2d_f32";
    scratchBytes = cpuConvScratchBytes(g.C / g.G * g.KH * g.KW);
  }
  if (in.callee == "npucc_depthwise_conv2d_f32") {
    ctx.useKernelFile("kernels/npucc_dwconv.c");
  } else {
    ctx.useKernelFile("kernels/npucc_conv.c");
    ctx.useKernelFile("kernels/npucc_gemm.c");
  }
  in.args.push_back(scratchBytes > 0 ? ctx.scratch(scratchBytes) : lir::BufferRef::null());
  pushGeom(in, g, in.callee != "npucc_depthwise_conv2d_f32");
  in.args.push_back(lo);
  in.args.push_back(hi);
  out.push_back(std::move(in));
  return success();
}

} // namespace npucc::lower
