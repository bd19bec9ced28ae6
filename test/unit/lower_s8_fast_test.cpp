//===- lower_s8_fast_test.cpp - fast int8 Conv/Gemm kernels vs reference ---===//
//
// Property test over random shapes (fixed seed): each int8 Conv (group 1,
// depthwise, 1x1, 3x3, odd channel counts, strides 1-2, symmetric and
// asymmetric pads, dilations, tiny and larger planes) and Gemm/MatMul
// ([N][K] and [K][N] weights, 1..5 rows (one row: npucc_fc_s8_fast),
// per-tensor and per-channel scales) is
// lowered twice, with LowerContext::fastKernels() false (npucc_conv2d_s8 /
// npucc_gemm_s8, the reference) and true (npucc_*_s8_fast with the bias folded
// and npucc_rq32_prep words precomputed by the lowering), in both requantization
// roundings; the two int8 outputs must be identical. The kernels are the host
// C builds (npucc_kernels_host); their Arm DSP path is compared the same way
// under QEMU by the firmware tier.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "npucc/ir/Graph.h"
#include "npucc/lower/QuantLowering.h"

#include "HostRunS8.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

extern "C" {
#include "../../runtime/kernels/npucc_conv_s8.h"
#include "../../runtime/kernels/npucc_conv_s8_fast.h"
#include "../../runtime/kernels/npucc_eltwise_s8.h"
#include "../../runtime/kernels/npucc_eltwise_s8_fast.h"
#include "../../runtime/kernels/npucc_gemm_s8.h"
#include "../../runtime/kernels/npucc_fc_s8_fast.h"
#include "../../runtime/kernels/npucc_gemm_s8_fast.h"
#include "../../runtime/kernels/npucc_quantize.h"
}

namespace {

namespace ir = npucc::ir;
namespace lir = npucc::lir;

std::mt19937 &rng() {
  static std::mt19937 r(4711);
  return r;
}
int32_t rint_(int32_t lo, int32_t hi) {
  return std::uniform_int_distribution<int32_t>(lo, hi)(rng());
}

using npucc::test::HostContext;
using npucc::test::runS8;

ir::Value *qval(ir::Graph &g, const std::string &name, ir::Shape s, float scale, int32_t zp) {
  ir::Value *v = g.addValue(name, ir::DType::I8, std::move(s));
  v->quant = ir::QuantParams{{scale}, {zp}, 0};
  return v;
}

int32_t randZp() {
  int k = rint_(0, 3);
  return k == 0 ? -128 : (k == 1 ? 127 : rint_(-128, 127));
}

/// A random scale in [2^-12, 2^-2] (float32).
float randScale() { return float(std::ldexp(1.0 + rint_(0, 1000) / 1000.0, -rint_(2, 12))); }

/// Lowers `n` both ways, runs them on `fill`ed inputs, returns the fast callee (and the
/// reference one in `refCallee`); the int8 outputs must be identical.
template <typename Fill>
std::string compareElementwise(const ir::Node &n, const ir::Value *y, Fill fill,
                               std::string *refCallee = nullptr) {
  std::vector<int8_t> outs[2];
  std::string callee;
  for (int fast = 0; fast < 2; ++fast) {
    HostContext ctx(fast != 0);
    std::vector<lir::Instr> out;
    auto st = npucc::lower::lowerQuantizedNode(n, ctx, out);
    EXPECT_TRUE(bool(st)) << st.error().str();
    if (!st || out.size() != 1)
      return "";
    fill(ctx);
    runS8(ctx, out[0]);
    const int8_t *yp = ctx.ptr<int8_t>(y);
    outs[fast].assign(yp, yp + y->numElements());
    if (fast)
      callee = out[0].callee;
    else if (refCallee)
      *refCallee = out[0].callee;
  }
  EXPECT_EQ(outs[0], outs[1]) << n.name << " via " << callee;
  return callee;
}

/// Lowers node `n` of `g` in both modes, runs each on the same random input and compares.
/// Returns the fast mode's callee.
std::string compareModes(const ir::Node &n, const ir::Value *x, const ir::Value *y) {
  std::vector<int8_t> in(size_t(x->numElements()));
  for (auto &v : in)
    v = int8_t(rint_(-128, 127));
  std::string ref;
  std::string callee = compareElementwise(
      n, y, [&](HostContext &ctx) { std::copy(in.begin(), in.end(), ctx.ptr<int8_t>(x)); }, &ref);
  EXPECT_TRUE(ref == "npucc_conv2d_s8" || ref == "npucc_gemm_s8") << ref;
  return callee;
}

void setRounding(ir::Node *n, int r) {
  if (r)
    n->attrs["requant"] = std::string("fp32");
}

TEST(LowerS8Fast, ConvRandomShapesMatchReference) {
  int fastConv = 0, fastDw = 0, reference = 0;
  for (int t = 0; t < 400; ++t) {
    int kind = t % 5; // 0 general, 1 depthwise, 2 1x1, 3 3x3, 4 grouped or weight zero points
    int32_t C = rint_(1, 9), H = rint_(1, 11), W = rint_(1, 11), M = rint_(1, 9), G = 1;
    int32_t KH = rint_(1, 3), KW = rint_(1, 3), SH = rint_(1, 2), SW = rint_(1, 2);
    int32_t DH = rint_(1, 2), DW = rint_(1, 2);
    std::vector<int64_t> pads = {rint_(0, 2), rint_(0, 2), rint_(0, 2), rint_(0, 2)};
    bool wzp = false;
    if (kind == 1) {
      G = M = C = rint_(2, 9);
      if (t % 2) { // the 3x3 depthwise path; stride 1 without dilation runs in row bands
        KH = KW = 3;
        DW = 1;
        if (t % 4 == 1)
          SH = DH = 1;
        H = rint_(3, 24);
        W = rint_(1, 12);
      }
    }
    if (kind == 2) {
      KH = KW = 1;
      pads = {0, 0, 0, 0};
    }
    if (kind == 3)
      KH = KW = 3;
    if (kind == 4) {
      if (t % 2) {
        C = 2 * rint_(2, 4); // 4..8 input channels in 2 groups: not depthwise
        M = 2 * rint_(1, 4);
        G = 2;
      } else {
        wzp = true;
      }
    }
    if (t % 37 == 0) { // a larger plane (and more channels unless grouped)
      H = W = rint_(12, 20);
      if (kind != 1 && kind != 4) {
        C = rint_(8, 24);
        M = rint_(8, 24);
      }
    }
    int32_t OH = (H + int32_t(pads[0] + pads[2]) - ((KH - 1) * DH + 1)) / SH + 1;
    int32_t OW = (W + int32_t(pads[1] + pads[3]) - ((KW - 1) * DW + 1)) / SW + 1;
    if (OH < 1 || OW < 1)
      continue;
    ir::Graph g;
    ir::Value *x = qval(g, "x", {1, C, H, W}, randScale(), randZp());
    ir::Tensor wt(ir::DType::I8, {M, C / G, KH, KW}), bt(ir::DType::I32, {M});
    for (int64_t i = 0; i < wt.numElements(); ++i)
      wt.data<int8_t>()[i] = int8_t(rint_(-127, 127));
    if (kind != 1 && t % 4 == 2) { // channels with all-zero weights (all of them if t % 16 == 14)
      int64_t K = wt.numElements() / M;
      for (int32_t m = 0; m < M; ++m)
        if ((m + t) % 3 == 0 || t % 16 == 14)
          std::fill_n(wt.data<int8_t>() + m * K, K, int8_t(0));
    }
    for (int64_t i = 0; i < M; ++i)
      bt.data<int32_t>()[i] = rint_(-30000, 30000);
    ir::Value *w = g.addConstant("w", wt), *b = g.addConstant("b", bt);
    std::vector<float> sw;
    std::vector<int32_t> zw;
    for (int32_t m = 0; m < M; ++m) {
      sw.push_back(randScale());
      zw.push_back(wzp ? rint_(-3, 3) | 1 : 0);
    }
    w->quant = ir::QuantParams{sw, zw, 0};
    ir::Value *y = qval(g, "y", {1, M, OH, OW}, randScale() * 8, randZp());
    ir::Node *n = g.addNode(ir::OpKind::Conv, "conv" + std::to_string(t), {x, w, b}, {y});
    n->attrs["kernel_shape"] = std::vector<int64_t>{KH, KW};
    n->attrs["strides"] = std::vector<int64_t>{SH, SW};
    n->attrs["pads"] = pads;
    n->attrs["dilations"] = std::vector<int64_t>{DH, DW};
    n->attrs["group"] = int64_t(G);
    if (t % 3 == 0) {
      n->attrs["act_min"] = 0.0f;
      n->attrs["act_max"] = 6.0f;
    }
    setRounding(n, t % 2);
    std::string callee = compareModes(*n, x, y);
    if (kind == 4) {
      EXPECT_EQ(callee, "npucc_conv2d_s8") << "grouped / weight zero points stay on the reference";
      ++reference;
    } else if (kind == 1) {
      EXPECT_EQ(callee, "npucc_dwconv2d_s8_fast");
      ++fastDw;
    } else {
      EXPECT_EQ(callee, "npucc_conv2d_s8_fast");
      ++fastConv;
    }
  }
  EXPECT_GT(fastConv, 150);
  EXPECT_GT(fastDw, 50);
  EXPECT_GT(reference, 50);
}

// Channels whose weights are all zero output a constant: the lowering packs only the others
// and hands the kernel their output channels and the constants (chmap); the outputs match
// the reference in both roundings, also with a ReLU6 clamp and when every channel is zero.
TEST(LowerS8Fast, ConvConstantChannelsAreFilledNotComputed) {
  for (int t = 0; t < 6; ++t) {
    const int32_t C = 3, M = 7, H = 5, W = 4, K = C * 3 * 3;
    ir::Graph g;
    ir::Value *x = qval(g, "x", {1, C, H, W}, 0.05f, 3);
    ir::Tensor wt(ir::DType::I8, {M, C, 3, 3}), bt(ir::DType::I32, {M});
    for (int32_t m = 0; m < M; ++m) {
      bool zero = m == 1 || m == 4 || m == 5 || t >= 4;
      for (int32_t k = 0; k < K; ++k)
        wt.data<int8_t>()[m * K + k] = zero ? int8_t(0) : int8_t(rint_(-127, 127));
      bt.data<int32_t>()[m] = (m - 3) * 4000; // constants below, at and above the zero point
    }
    ir::Value *w = g.addConstant("w", wt), *b = g.addConstant("b", bt);
    w->quant = ir::QuantParams{std::vector<float>(size_t(M), 0.02f), {0}, 0};
    ir::Value *y = qval(g, "y", {1, M, H, W}, 0.4f, -5);
    ir::Node *n = g.addNode(ir::OpKind::Conv, "conv", {x, w, b}, {y});
    n->attrs["kernel_shape"] = std::vector<int64_t>{3, 3};
    n->attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
    if (t % 2) {
      n->attrs["act_min"] = 0.0f;
      n->attrs["act_max"] = 6.0f;
    }
    setRounding(n, t / 2 % 2);
    EXPECT_EQ(compareModes(*n, x, y), "npucc_conv2d_s8_fast");

    HostContext ctx(true);
    std::vector<lir::Instr> out;
    ASSERT_TRUE(bool(npucc::lower::lowerQuantizedNode(*n, ctx, out)));
    ASSERT_EQ(out.size(), 1u);
    const auto &chmap = std::get<lir::IntArray>(out[0].args.back()).values;
    std::vector<int64_t> live = t >= 4 ? std::vector<int64_t>{} : std::vector<int64_t>{0, 2, 3, 6};
    ASSERT_EQ(chmap.size(), 1 + live.size() + 2 * (M - live.size()));
    EXPECT_EQ(chmap[0], int64_t(live.size()));
    EXPECT_TRUE(std::equal(live.begin(), live.end(), chmap.begin() + 1));
    const auto &packed = std::get<lir::BufferRef>(out[0].args[1]);
    EXPECT_EQ(packed.size, int64_t(npucc_conv_s8_packed_bytes(int32_t(live.size()), K)));
    EXPECT_EQ(std::get<lir::IntArray>(out[0].args[2]).values.size(), live.size()); // bias_f
  }
}

TEST(LowerS8Fast, GemmAndMatMulRandomShapesMatchReference) {
  int oneRow = 0;
  for (int t = 0; t < 300; ++t) {
    bool gemm = t % 2 == 0, perChannel = t % 3 != 0;
    int32_t rows = rint_(1, 5), K = rint_(1, 70), N = rint_(1, 13);
    ir::Graph g;
    ir::Value *a = qval(g, "a", {rows, K}, randScale(), randZp());
    ir::Tensor bt(ir::DType::I8, gemm ? ir::Shape{N, K} : ir::Shape{K, N});
    for (int64_t i = 0; i < bt.numElements(); ++i)
      bt.data<int8_t>()[i] = int8_t(rint_(-127, 127));
    ir::Value *bw = g.addConstant("b", bt);
    std::vector<float> sw;
    for (int32_t j = 0; j < (perChannel ? N : 1); ++j)
      sw.push_back(randScale());
    bw->quant = ir::QuantParams{sw, std::vector<int32_t>(sw.size(), 0), gemm ? 0 : 1};
    ir::Value *y = qval(g, "y", {rows, N}, randScale() * 8, randZp());
    std::vector<ir::Value *> ins = {a, bw};
    if (gemm) {
      ir::Tensor ct(ir::DType::I32, {N});
      for (int64_t i = 0; i < N; ++i)
        ct.data<int32_t>()[i] = rint_(-30000, 30000);
      ins.push_back(g.addConstant("c", ct));
    }
    ir::Node *n = g.addNode(gemm ? ir::OpKind::Gemm : ir::OpKind::MatMul,
                            "mm" + std::to_string(t), ins, {y});
    if (gemm)
      n->attrs["transB"] = int64_t(1);
    setRounding(n, (t / 2) % 2);
    // One row (a fully connected layer): packed weights, A read in place.
    std::string callee = compareModes(*n, a, y);
    EXPECT_EQ(callee, rows == 1 ? "npucc_fc_s8_fast" : "npucc_gemm_s8_fast");
    oneRow += rows == 1;
  }
  EXPECT_GT(oneRow, 40);
}

/// Every (a, b) pair of int8 inputs through one Add and one Mul, for 24 random scale and
/// zero-point sets with output scales near the inputs' (so the outputs span int8 and most
/// rounding boundaries are met): a one-off error in the fast path's rescaling shows up
/// here even where random data of a few hundred elements would not hit it.
TEST(LowerS8Fast, AddMulEveryInputPairMatchesReference) {
  for (int t = 0; t < 56; ++t) {
    bool add = t % 2 == 0 || t >= 48;
    float sa = randScale() * 16, sb = randScale() * 16;
    float sy = (add ? std::max(sa, sb) : sa * sb * 64) *
               std::uniform_real_distribution<float>(0.5f, 2.0f)(rng());
    if (t >= 48) { // power-of-two scale ratios: exact ties in the output stage's rounding
      sa = 0.0625f;
      sb = t % 2 ? 0.125f : 0.0625f;
      sy = std::ldexp(0.0625f, (t - 48) / 2);
    }
    ir::Graph g;
    ir::Value *a = qval(g, "a", {256, 256}, sa, randZp());
    ir::Value *b = qval(g, "b", {256, 256}, sb, randZp());
    ir::Value *y = qval(g, "y", {256, 256}, sy, randZp());
    ir::Node *n = g.addNode(add ? ir::OpKind::Add : ir::OpKind::Mul, "all" + std::to_string(t),
                            {a, b}, {y});
    std::string callee = compareElementwise(*n, y, [&](HostContext &ctx) {
      int8_t *pa = ctx.ptr<int8_t>(a), *pb = ctx.ptr<int8_t>(b);
      for (int i = 0; i < 256 * 256; ++i) {
        pa[i] = int8_t(i / 256 - 128);
        pb[i] = int8_t(i % 256 - 128);
      }
    });
    EXPECT_EQ(callee, add ? "npucc_add_s8_fast" : "npucc_mul_s8_fast");
  }
}

TEST(LowerS8Fast, AddMulBroadcastMatchReference) {
  for (int t = 0; t < 300; ++t) {
    bool add = t % 2 == 0;
    int32_t d0 = rint_(1, 5), d1 = rint_(1, 9), d2 = rint_(1, 17);
    ir::Graph g;
    ir::Value *a = qval(g, "a", {d0, d1, d2}, randScale() * 16, randZp());
    ir::Shape bs = {d0, d1, d2};
    if (t % 3 == 1)
      bs = {d1, 1}; // broadcast along the last axis
    if (t % 3 == 2)
      bs = {d2};
    ir::Value *b = qval(g, "b", bs, randScale() * 16, randZp());
    ir::Value *y = qval(g, "y", {d0, d1, d2}, randScale() * 16, randZp());
    ir::Node *n = g.addNode(add ? ir::OpKind::Add : ir::OpKind::Mul, "e" + std::to_string(t),
                            {a, b}, {y});
    if (t % 4 == 1) {
      n->attrs["act_min"] = 0.0f;
      n->attrs["act_max"] = 6.0f;
    }
    std::vector<int8_t> va(size_t(a->numElements())), vb(size_t(b->numElements()));
    for (auto *vec : {&va, &vb})
      for (auto &v : *vec)
        v = int8_t(rint_(-128, 127));
    std::string callee = compareElementwise(*n, y, [&](HostContext &ctx) { // same data twice
      std::copy(va.begin(), va.end(), ctx.ptr<int8_t>(a));
      std::copy(vb.begin(), vb.end(), ctx.ptr<int8_t>(b));
    });
    EXPECT_EQ(callee, add ? "npucc_add_s8_fast" : "npucc_mul_s8_fast");
  }
}

TEST(LowerS8Fast, QuantizeLinearMatchesReferenceOnTiesAndExtremes) {
  for (int t = 0; t < 200; ++t) {
    ir::Graph g;
    int32_t len = rint_(1, 300);
    ir::Value *x = g.addValue("x", ir::DType::F32, {1, len});
    float s = randScale();
    ir::Value *y = qval(g, "y", {1, len}, s, randZp());
    ir::Node *n = g.addNode(ir::OpKind::QuantizeLinear, "q" + std::to_string(t), {x}, {y});
    std::vector<float> xs(static_cast<size_t>(len));
    for (auto &v : xs) {
      float half = (float(rint_(-600, 600)) + 0.5f) * s; // near a rounding tie
      switch (rint_(0, 5)) {
      case 0: v = half; break;
      case 1: v = std::nextafter(half, 0.0f); break;
      case 2: v = std::nextafter(half, 1e9f); break;
      case 3: v = float(rint_(-3, 3)) * 1e30f; break;
      default: v = float(rint_(-100000, 100000)) * s / 997.0f; break;
      }
    }
    xs[0] = std::numeric_limits<float>::quiet_NaN();
    if (len > 1)
      xs[1] = -std::numeric_limits<float>::infinity();
    std::string callee = compareElementwise(*n, y, [&](HostContext &ctx) { // same data twice
      std::copy(xs.begin(), xs.end(), ctx.ptr<float>(x));
    });
    EXPECT_EQ(callee, "npucc_quantize_f32_s8_fast");
  }
}

} // namespace
