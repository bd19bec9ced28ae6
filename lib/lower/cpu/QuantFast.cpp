//===- QuantFast.cpp - int8 Conv/Gemm/MatMul onto the fast CPU kernels ----===//
//
// With CpuLowerOptions::fastKernels (npucc --cpu-kernels=fast), an int8 Conv or
// Gemm/MatMul with constant weights, a constant (or no) bias and zero weight zero
// points calls runtime/kernels/npucc_conv_s8_fast.c or npucc_gemm_s8_fast.c. The
// compiler does the per-channel work once: the input zero point is folded into
// the bias (bias_f[m] = bias[m] - x_zp * sum_k w[m][k]) and each channel's
// multiplier becomes the four npucc_rq32_prep words (quant::requantWords). Both
// are int32 arrays in the generated C. Group-1 convolution weights are re-laid
// at compile time into the kernel's blocks of four output channels
// (npucc_conv_s8_pack, the runtime header's own definition of the layout), with
// a panel of 4 bytes per k for two pixels' input patches; Gemm weights keep their
// layout. Depthwise convolutions keep the ONNX weights and a small scratch of
// padded int16 input rows and their int32 sums (npucc_dwconv_s8_fast_scratch).
// Anything else (grouped non-depthwise, weight zero points, a bias_f outside
// int32, activations as B) keeps the reference lowering in Quantized.cpp.
//
//===----------------------------------------------------------------------===//
#include "QuantInternal.h"

#include "npucc/quant/Rounding.h"

#include <algorithm>
#include <limits>

extern "C" {
#include "../../../runtime/include/npucc_requant.h"
#include "../../../runtime/kernels/npucc_conv_s8_fast.h"
#include "../../../runtime/kernels/npucc_fc_s8_fast.h"
}

namespace npucc::lower::qlower {
namespace {

/// Weight value k of output channel m as int8 (a constant int8 tensor).
int64_t weightAt(const ir::Value *w, int64_t idx) { return w->constant->data<int8_t>()[idx]; }

/// bias[m] - zp * colsum[m] for every channel; false if one leaves int32.
bool foldBias(const ir::Value *b, int32_t zp, const std::vector<int64_t> &sums,
              std::vector<int64_t> &out) {
  out.clear();
  for (size_t m = 0; m < sums.size(); ++m) {
    int64_t bias = b ? int64_t(b->constant->data<int32_t>()[m]) : 0;
    int64_t v = bias - int64_t(zp) * sums[m];
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      return false;
    out.push_back(v);
  }
  return true;
}

/// The npucc_rq32_prep words of every output channel (or the one per-tensor one).
std::vector<int64_t> requantWordsOf(const ir::Node &n, const ProductQ &q) {
  quant::Rounding r = quant::roundingOf(n);
  std::vector<int64_t> words;
  for (double w : q.sw) {
    // Scales are float32 in the IR: the casts are exact (as in pushMultipliers).
    quant::QuantMultiplier m = quant::productMultiplier(float(q.sx), float(w), float(q.sy), r);
    for (int32_t v : quant::requantWords(m, r))
      words.push_back(v);
  }
  return words;
}

bool constantOperands(const ir::Value *w, const ir::Value *b) {
  return w && w->isConstant() && w->dtype == ir::DType::I8 && (!b || b->isConstant());
}

/// The chmap of npucc_conv2d_s8_fast (npucc_conv_s8_fast.h) when some of the M channels of
/// w [M][K] have all-zero weights, else empty. Such a channel's output is its bias_f
/// requantized (npucc_rq32_i8, the kernels' own requantization of the same words); the
/// others' weights go to `live`, and their words and bias_f stay, in order, in `words`
/// and `biasF`.
std::vector<int64_t> constantChannels(const int8_t *w, int64_t M, int64_t K, const ProductQ &q,
                                      int32_t rounding, std::vector<int64_t> &words,
                                      std::vector<int64_t> &biasF, std::vector<int8_t> &live) {
  std::vector<int64_t> liveCh, constant, keptWords, keptBias;
  int32_t lo = std::max<int32_t>(q.clamp.lo, -128), hi = std::min<int32_t>(q.clamp.hi, 127);
  for (int64_t m = 0; m < M; ++m) {
    const int8_t *row = w + m * K;
    if (std::any_of(row, row + K, [](int8_t v) { return v != 0; })) {
      liveCh.push_back(m);
      live.insert(live.end(), row, row + K);
      keptWords.insert(keptWords.end(), words.begin() + 4 * m, words.begin() + 4 * m + 4);
      keptBias.push_back(biasF[size_t(m)]);
      continue;
    }
    int32_t rq[NPUCC_RQ32_WORDS];
    for (int i = 0; i < NPUCC_RQ32_WORDS; ++i)
      rq[i] = int32_t(words[size_t(4 * m + i)]);
    constant.push_back(m);
    constant.push_back(npucc_rq32_i8(int32_t(biasF[size_t(m)]), rq, rounding, q.yZp, lo, hi));
  }
  if (constant.empty())
    return {};
  std::vector<int64_t> chmap = {int64_t(liveCh.size())};
  chmap.insert(chmap.end(), liveCh.begin(), liveCh.end());
  chmap.insert(chmap.end(), constant.begin(), constant.end());
  words = std::move(keptWords);
  biasF = std::move(keptBias);
  return chmap;
}

/// The arguments after a fast Gemm/MatMul call's buffers: `dims`, the output zero point
/// and clamp, the number of word sets, the words and the rounding; then the call.
bool finishMatMul(const ir::Node &n, LowerContext &ctx, const ProductQ &q, lir::Instr in,
                  const std::vector<int64_t> &dims, const char *file,
                  std::vector<lir::Instr> &out) {
  for (int64_t v : dims)
    in.args.push_back(v);
  for (int64_t v : {int64_t(q.yZp), int64_t(q.clamp.lo), int64_t(q.clamp.hi),
                    int64_t(q.sw.size())})
    in.args.push_back(v);
  in.args.push_back(ints(requantWordsOf(n, q)));
  in.args.push_back(int64_t(quant::roundingCode(quant::roundingOf(n))));
  ctx.useKernelFile(file);
  out.push_back(std::move(in));
  return true;
}

} // namespace

bool lowerConvS8Fast(const ir::Node &n, LowerContext &ctx, const ConvGeom &g, const ProductQ &q,
                     std::vector<lir::Instr> &out) {
  const ir::Value *x = n.input(0), *w = n.input(1), *b = n.input(2), *y = n.output(0);
  bool depthwise = g.G == g.C && g.M == g.C && g.G > 1;
  if (q.anyWeightZp || !constantOperands(w, b) || (g.G != 1 && !depthwise))
    return false;
  int64_t K = g.C / g.G * g.KH * g.KW;
  std::vector<int64_t> sums(size_t(g.M), 0), biasF;
  for (int64_t m = 0; m < g.M; ++m)
    for (int64_t k = 0; k < K; ++k)
      sums[size_t(m)] += weightAt(w, m * K + k);
  if (!foldBias(b, q.xZp, sums, biasF))
    return false;
  std::vector<int64_t> words = requantWordsOf(n, q), chmap;
  lir::BufferRef wt, panel;
  if (depthwise) {
    wt = ctx.buffer(w);
    int64_t bytes = int64_t(npucc_dwconv_s8_fast_scratch(
        int32_t(g.OH), int32_t(g.OW), int32_t(g.KH), int32_t(g.KW), int32_t(g.SH), int32_t(g.SW),
        int32_t(g.DH), int32_t(g.DW)));
    panel = ctx.scratch(bytes);
    panel.dtype = ir::DType::I32; // int32 sums, then the padded rows
  } else {
    // Channels with all-zero weights output a constant: the kernel fills their planes
    // (chmap) and computes only the others, whose weights, bias_f and words it takes.
    std::vector<int8_t> live;
    const int8_t *wd = w->constant->data<int8_t>();
    chmap = constantChannels(wd, g.M, K, q, quant::roundingCode(quant::roundingOf(n)), words,
                             biasF, live);
    int32_t L = chmap.empty() ? int32_t(g.M) : int32_t(chmap[0]);
    if (L == 0) { // every channel constant: no weights (a C array cannot be empty)
      wt = lir::BufferRef::null(ir::DType::I8);
    } else { // weights in the kernel's packed blocks
      ir::Tensor packed(ir::DType::I8, {int64_t(npucc_conv_s8_packed_bytes(L, int32_t(K)))});
      npucc_conv_s8_pack(chmap.empty() ? wd : live.data(), L, int32_t(K), packed.data<int8_t>());
      wt = ctx.constant(w->name + "_packed", std::move(packed));
      if (wt.isNull())
        return false;
    }
    // Two pixels' patches as the panel.
    panel = ctx.scratch(2 * 2 * int64_t(npucc_conv_s8_kpad(int32_t(K))));
    panel.dtype = ir::DType::I16;
  }
  std::vector<lir::Arg> args = {ctx.buffer(x), wt, ints(biasF), ctx.buffer(y), panel};
  lir::Instr in =
      makeCall(n, depthwise ? "npucc_dwconv2d_s8_fast" : "npucc_conv2d_s8_fast", std::move(args));
  std::vector<int64_t> dims = {g.N, g.C, g.H, g.W, g.M, g.OH, g.OW, g.KH, g.KW,
                               g.SH, g.SW, g.DH, g.DW, g.PT, g.PL};
  if (depthwise)
    dims.erase(dims.begin() + 4); // no M (= C)
  for (int64_t v : dims)
    in.args.push_back(v);
  for (int64_t v : {int64_t(q.xZp), int64_t(q.yZp), int64_t(q.clamp.lo), int64_t(q.clamp.hi)})
    in.args.push_back(v);
  in.args.push_back(ints(words));
  in.args.push_back(int64_t(quant::roundingCode(quant::roundingOf(n))));
  if (!depthwise)
    in.args.push_back(ints(chmap));
  ctx.useKernelFile(depthwise ? "kernels/npucc_dwconv_s8_fast.c" : "kernels/npucc_conv_s8_fast.c");
  out.push_back(std::move(in));
  return true;
}

bool lowerMatMulS8Fast(const ir::Node &n, LowerContext &ctx, int64_t rows, int64_t N, int64_t K,
                       int64_t bRs, int64_t bCs, const ProductQ &q, std::vector<lir::Instr> &out) {
  const ir::Value *a = n.input(0), *bw = n.input(1), *y = n.output(0);
  const ir::Value *bias = n.kind == ir::OpKind::Gemm ? n.input(2) : nullptr;
  if (q.anyWeightZp || !constantOperands(bw, bias) || bw->shape.size() != 2)
    return false;
  std::vector<int64_t> sums(size_t(N), 0), biasF;
  for (int64_t j = 0; j < N; ++j)
    for (int64_t k = 0; k < K; ++k)
      sums[size_t(j)] += weightAt(bw, k * bRs + j * bCs);
  if (!foldBias(bias, q.xZp, sums, biasF))
    return false;
  if (rows == 1) {
    // One row (a fully connected layer): the weights transposed to [N][K] and packed
    // (npucc_fc_s8_pack), A read in place.
    std::vector<int8_t> wt(size_t(N * K));
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        wt[size_t(j * K + k)] = int8_t(weightAt(bw, k * bRs + j * bCs));
    ir::Tensor packed(ir::DType::I8, {int64_t(npucc_fc_s8_packed_bytes(int32_t(N), int32_t(K)))});
    npucc_fc_s8_pack(wt.data(), int32_t(N), int32_t(K), packed.data<int8_t>());
    lir::BufferRef wp = ctx.constant(bw->name + "_packed", std::move(packed));
    if (wp.isNull())
      return false;
    lir::Instr in =
        makeCall(n, "npucc_fc_s8_fast", {ctx.buffer(a), wp, ints(biasF), ctx.buffer(y)});
    std::vector<int64_t> dims = {rows, N, K};
    return finishMatMul(n, ctx, q, std::move(in), dims, "kernels/npucc_fc_s8_fast.c", out);
  }
  lir::Instr in = makeCall(n, "npucc_gemm_s8_fast",
                           {ctx.buffer(a), ctx.buffer(bw), ints(biasF), ctx.buffer(y)});
  std::vector<int64_t> dims = {rows, N, K, bRs, bCs};
  return finishMatMul(n, ctx, q, std::move(in), dims, "kernels/npucc_gemm_s8_fast.c", out);
}

} // namespace npucc::lower::qlower
