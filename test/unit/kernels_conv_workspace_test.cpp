//===- kernels_conv_workspace_test.cpp - float Conv: indirect kernel, small workspace ---===//
//
// npucc_conv2d_f32 (runtime/kernels/npucc_conv.c) is an indirect convolution
// whose scratch is at most (NPUCC_CONV_KC + 1) x 8 floats whatever the model.
// Checked here:
//   - on random shapes (fixed seed: groups, odd channel counts, K above
//     NPUCC_CONV_KC, strides, dilations, asymmetric pads, 1x1, images
//     narrower than the tile, short wide images, batch 2), and on named
//     shapes of each path (windows over several chunks, stride phases, the
//     flattened plane of narrow outputs, the per-tile gather it falls back
//     to, two depth blocks), its output is bit-identical to the
//     packed SGEMM over the implicit im2col view (npucc_sgemm_core_f32, the
//     kernel it replaces, still in npucc_gemm.c): both sum each output over
//     k in order in blocks of 256 and add the bias after the first block.
//     It must also be within 1e-5 (relative to max(1, max|ref|), the
//     tolerance of kernels_conv_test) of a double-precision loop;
//   - the microcontroller build's 4 x 4 register tile (NPUCC_CONV_SMALL_TILE,
//     compiled a second time under other names by test/CMakeLists.txt) gives
//     the same bits as the host's 8 x 8 tile;
//   - its scratch, pre-filled with NaN, is sized exactly (a canary follows)
//     and bounded, and the lowering requests the same bytes for a Conv node
//     (so a larger workspace cannot come back unnoticed).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "npucc/ir/Graph.h"
#include "npucc/lower/CpuLowering.h"

#include "ConvReference.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "../../runtime/kernels/npucc_conv.h"
#include "../../runtime/kernels/npucc_gemm.h"
// runtime/kernels/npucc_conv.c built with -DNPUCC_CONV_SMALL_TILE=1 (test/CMakeLists.txt).
void npucc_conv2d_f32_small_tile(const float *X, const float *Wt, const float *bias, float *Y,
                                 float *scratch, int32_t N, int32_t C, int32_t H, int32_t W,
                                 int32_t M, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                                 int32_t SH, int32_t SW, int32_t DH, int32_t DW, int32_t PT,
                                 int32_t PL, int32_t group, float act_min, float act_max);
}

namespace npucc::lower {
int64_t cpuConvScratchBytes(int64_t K); // lib/lower/cpu/Conv.cpp
} // namespace npucc::lower

namespace {

using npucc::test::convName;
using npucc::test::convOut;
using npucc::test::naiveConv;
using npucc::test::randomVec;
using npucc::test::ConvCase;

/// The previous float Conv: the packed SGEMM over the implicit im2col view
/// (a pointwise conv reads the image as the K x N matrix), per image and group.
std::vector<float> sgemmConv(const ConvCase &c, int OH, int OW, const std::vector<float> &X,
                             const std::vector<float> &Wt, const float *bias, float lo, float hi) {
  int cg = c.C / c.G, mg = c.M / c.G, kdim = cg * c.KH * c.KW;
  bool pointwise = c.KH == 1 && c.KW == 1 && c.SH == 1 && c.SW == 1 && c.PT == 0 && c.PL == 0 &&
                   OH == c.H && OW == c.W;
  npucc_gemm_bsrc bs;
  memset(&bs, 0, sizeof(bs));
  if (pointwise) {
    bs.rs = c.H * c.W;
    bs.cs = 1;
  } else {
    bs.is_conv = 1;
    bs.in_h = c.H;
    bs.in_w = c.W;
    bs.k_h = c.KH;
    bs.k_w = c.KW;
    bs.stride_h = c.SH;
    bs.stride_w = c.SW;
    bs.dil_h = c.DH;
    bs.dil_w = c.DW;
    bs.pad_t = c.PT;
    bs.pad_l = c.PL;
    bs.out_w = OW;
  }
  std::vector<float> Y(size_t(c.N) * c.M * OH * OW);
  std::vector<float> s(npucc_sgemm_scratch_floats(mg, OH * OW, kdim) + 1);
  for (int n = 0; n < c.N; n++)
    for (int g = 0; g < c.G; g++) {
      bs.data = X.data() + (size_t(n) * c.C + size_t(g) * cg) * c.H * c.W;
      npucc_sgemm_core_f32(mg, OH * OW, kdim, 1.0f, Wt.data() + size_t(g) * mg * kdim, kdim, 1, &bs,
                           Y.data() + (size_t(n) * c.M + size_t(g) * mg) * OH * OW, OH * OW, 0,
                           bias ? bias + size_t(g) * mg : nullptr, lo, hi, s.data());
    }
  return Y;
}

/// Runs npucc_conv2d_f32 with exactly sized NaN-filled scratch and a canary.
std::vector<float> indirectConv(const ConvCase &c, int OH, int OW, const std::vector<float> &X,
                                const std::vector<float> &Wt, const float *bias, float lo, float hi,
                                bool &canaryOk) {
  size_t floats = npucc_conv2d_scratch_floats(c.C, c.M, OH, OW, c.KH, c.KW, c.G);
  std::vector<float> s(floats + 16, std::numeric_limits<float>::quiet_NaN());
  for (size_t i = floats; i < s.size(); i++)
    s[i] = 12345.0f;
  std::vector<float> Y(size_t(c.N) * c.M * OH * OW, -999.0f);
  npucc_conv2d_f32(X.data(), Wt.data(), bias, Y.data(), s.data(), c.N, c.C, c.H, c.W, c.M, OH, OW,
                   c.KH, c.KW, c.SH, c.SW, c.DH, c.DW, c.PT, c.PL, c.G, lo, hi);
  canaryOk = true;
  for (size_t i = floats; i < s.size(); i++)
    canaryOk = canaryOk && s[i] == 12345.0f;
  return Y;
}

/// Checks one case: the indirect kernel stays inside its scratch, is within
/// 1e-5 of the double-precision loop, bit-identical to the packed SGEMM, and
/// the 4 x 4 tile gives the same bits.
void checkConv(const ConvCase &c, std::mt19937 &rng) {
  int OH = convOut(c.H, c.KH, c.SH, c.DH, c.PT, c.PB);
  int OW = convOut(c.W, c.KW, c.SW, c.DW, c.PL, c.PR);
  auto X = randomVec(size_t(c.N) * c.C * c.H * c.W, rng);
  auto Wt = randomVec(size_t(c.M) * (c.C / c.G) * c.KH * c.KW, rng);
  auto B = randomVec(c.M, rng);
  const float *bias = c.bias ? B.data() : nullptr;
  float lo = c.clamp ? -0.25f : -FLT_MAX, hi = c.clamp ? 0.5f : FLT_MAX;
  bool canaryOk = false;
  auto got = indirectConv(c, OH, OW, X, Wt, bias, lo, hi, canaryOk);
  ASSERT_TRUE(canaryOk) << "scratch overrun: " << convName(c);
  auto ref = naiveConv(c, OH, OW, X, Wt, bias, lo, hi);
  double maxRef = 1.0, maxErr = 0.0;
  for (size_t i = 0; i < ref.size(); i++) {
    maxRef = std::max(maxRef, std::fabs(ref[i]));
    double e = std::fabs(double(got[i]) - ref[i]);
    maxErr = e <= maxErr ? maxErr : e; // NaN makes maxErr NaN and fails below
  }
  ASSERT_LE(maxErr, 1e-5 * maxRef) << convName(c);
  auto old = sgemmConv(c, OH, OW, X, Wt, bias, lo, hi);
  ASSERT_EQ(0, memcmp(got.data(), old.data(), got.size() * sizeof(float)))
      << "not bit-identical to the packed SGEMM: " << convName(c);
  // The microcontroller tile (4 x 4) must give the same bits, in the same scratch.
  size_t floats = npucc_conv2d_scratch_floats(c.C, c.M, OH, OW, c.KH, c.KW, c.G);
  std::vector<float> s(floats + 16, std::numeric_limits<float>::quiet_NaN());
  for (size_t i = floats; i < s.size(); i++)
    s[i] = 12345.0f;
  std::vector<float> small(got.size(), -999.0f);
  npucc_conv2d_f32_small_tile(X.data(), Wt.data(), bias, small.data(), s.data(), c.N, c.C, c.H,
                              c.W, c.M, OH, OW, c.KH, c.KW, c.SH, c.SW, c.DH, c.DW, c.PT, c.PL,
                              c.G, lo, hi);
  for (size_t i = floats; i < s.size(); i++)
    ASSERT_EQ(s[i], 12345.0f) << "small-tile scratch overrun: " << convName(c);
  ASSERT_EQ(0, memcmp(got.data(), small.data(), got.size() * sizeof(float)))
      << "the 4 x 4 tile differs from the 8 x 8 one: " << convName(c);
}

TEST(KernelsConvIndirect, BitIdenticalToPackedSgemmAndCloseToNaive) {
  std::mt19937 rng(77);
  std::uniform_int_distribution<int> u(0, 1 << 30);
  auto pick = [&](int lo, int hi) { return lo + u(rng) % (hi - lo + 1); };
  int ran = 0, deep = 0, pointwise = 0, wide = 0;
  for (int iter = 0; iter < 400; iter++) {
    ConvCase c;
    c.N = iter % 7 == 0 ? 2 : 1;
    c.G = iter % 5 == 0 ? pick(2, 3) : 1;
    c.C = c.G * (iter % 4 == 0 ? pick(20, 45) : pick(1, 9));
    c.M = c.G * pick(1, 19);
    // Every third case is a short, wide image: output rows that take several
    // chunks of the window path.
    bool isWide = iter % 3 == 1;
    c.H = isWide ? pick(1, 6) : pick(1, 20);
    c.W = isWide ? pick(24, 90) : pick(1, 23);
    bool pw = iter % 6 == 0;
    c.KH = pw ? 1 : pick(1, 5);
    c.KW = pw ? 1 : pick(1, 5);
    c.SH = pw ? 1 : pick(1, 3);
    c.SW = pw ? 1 : pick(1, 3);
    c.DH = pw ? 1 : pick(1, 2);
    c.DW = pw ? 1 : pick(1, 2);
    c.PT = pw ? 0 : pick(0, 3);
    c.PL = pw ? 0 : pick(0, 3);
    c.PB = pw ? 0 : pick(0, 3);
    c.PR = pw ? 0 : pick(0, 3);
    c.bias = iter % 2 == 0;
    c.clamp = iter % 3 == 0;
    if (c.H + c.PT + c.PB < (c.KH - 1) * c.DH + 1 || c.W + c.PL + c.PR < (c.KW - 1) * c.DW + 1)
      continue;
    checkConv(c, rng);
    if (HasFatalFailure())
      return;
    ran++;
    deep += (c.C / c.G) * c.KH * c.KW > NPUCC_CONV_KC;
    pointwise += c.KH == 1 && c.KW == 1 && c.SH == 1 && c.SW == 1 && c.PT == 0 && c.PL == 0 &&
                 c.PB == 0 && c.PR == 0;
    wide += isWide && convOut(c.W, c.KW, c.SW, c.DW, c.PL, c.PR) > 32;
  }
  EXPECT_GT(ran, 300);
  EXPECT_GT(deep, 10); // K above one depth block
  EXPECT_GT(pointwise, 20);
  EXPECT_GT(wide, 40);
}

TEST(KernelsConvIndirect, WindowChunksStridesAndFallbacks) {
  // Shapes of the window path (kernel rows copied once per chunk of an
  // output row, zero-padded and split into stride phases) and of the per-tile
  // gather it falls back to; all bit-identical to the packed SGEMM.
  std::mt19937 rng(5);
  //        N  C   H    W   M  KH KW SH SW DH DW PT PL PB PR G  bias clamp
  const ConvCase cases[] = {
      {1, 1, 28, 28, 8, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1, true, true},    // mnist8 first conv
      {1, 8, 14, 14, 16, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1, true, true},   // mnist8 second conv
      {1, 1, 5, 100, 8, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1, true, false},   // 4 chunks, last partial
      {1, 1, 49, 10, 32, 10, 4, 2, 2, 1, 1, 4, 1, 5, 1, 1, true, true},  // ali_kws: 5 wide, flat
      {1, 3, 7, 95, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, false},    // stride 2, many chunks
      {1, 3, 20, 64, 24, 5, 5, 2, 2, 1, 1, 1, 1, 2, 2, 1, false, true},  // blazeface-like
      {1, 2, 6, 77, 9, 4, 4, 3, 3, 2, 2, 2, 3, 1, 0, 1, true, false},    // stride 3, dilation 2
      {1, 12, 5, 40, 10, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1, true, true},   // K = 300: 2 blocks
      {2, 4, 6, 50, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, true, false},    // groups, batch 2
      {1, 4, 1, 200, 7, 1, 7, 1, 1, 1, 1, 0, 3, 0, 3, 1, true, false},   // 1-D
      {1, 5, 9, 40, 6, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, true, false},    // KW = 1: per-tile gather
      {1, 20, 5, 5, 12, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, false},   // rows of one tile: in place
      {1, 1, 14, 14, 20, 5, 5, 2, 2, 1, 1, 0, 0, 0, 0, 1, true, false},  // 5 wide, stride 2: flat
      {1, 5, 9, 40, 6, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, true, false},    // 1x1 stride 2: gather
      {1, 1, 4, 90, 3, 2, 3, 1, 1, 1, 20, 0, 1, 0, 1, 1, false, false},  // dilation 20: gather
      {1, 300, 3, 3, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, false},   // pointwise, K = 300
  };
  for (const ConvCase &c : cases) {
    checkConv(c, rng);
    if (HasFatalFailure())
      return;
  }
}

TEST(KernelsConvIndirect, WorkspaceIsSmallBoundedAndMatchesTheLowering) {
  // Scratch depends on K = C/group*KH*KW only: one gathered 8-float row per
  // im2col row of a depth block (at most NPUCC_CONV_KC) and 8 zeros.
  const size_t bound = (NPUCC_CONV_KC + 1) * 8;
  struct {
    int C, M, OH, OW, KH, KW, G;
    size_t floats;
  } cases[] = {
      {1, 8, 28, 28, 5, 5, 1, 26 * 8},    // mnist8 Convolution28
      {8, 16, 14, 14, 5, 5, 1, 201 * 8},  // mnist8 Convolution110
      {64, 128, 56, 56, 3, 3, 1, bound},  // K = 576
      {512, 512, 7, 7, 3, 3, 1, bound},   // K = 4608
      {256, 1280, 7, 7, 1, 1, 1, bound},  // pointwise, K = 256
      {24, 144, 56, 56, 1, 1, 1, 25 * 8}, // pointwise, K = 24
      {6, 9, 8, 8, 3, 3, 3, 19 * 8},      // groups
  };
  for (const auto &c : cases) {
    size_t f = npucc_conv2d_scratch_floats(c.C, c.M, c.OH, c.OW, c.KH, c.KW, c.G);
    EXPECT_EQ(f, c.floats) << c.C << "->" << c.M << " k" << c.KH;
    EXPECT_LE(f, bound);
    EXPECT_EQ(npucc::lower::cpuConvScratchBytes(int64_t(c.C) / c.G * c.KH * c.KW),
              int64_t(f * sizeof(float)));
  }
}

/// Records the scratch a lowering requests.
struct ScratchCtx : npucc::lower::LowerContext {
  std::vector<int64_t> scratchBytes;
  int next = 0;
  npucc::lir::BufferRef buffer(const npucc::ir::Value *v) override {
    npucc::lir::BufferRef r;
    r.region = npucc::lir::Region::Input;
    r.index = next++;
    r.size = int64_t(v->byteSize());
    return r;
  }
  npucc::lir::BufferRef scratch(int64_t bytes) override {
    scratchBytes.push_back(bytes);
    npucc::lir::BufferRef r;
    r.region = npucc::lir::Region::Input;
    r.index = next++;
    r.size = bytes;
    return r;
  }
  void useKernelFile(const std::string &) override {}
};

TEST(LowerConvWorkspace, MnistConvRequestsAtMostOneSmallBlock) {
  using namespace npucc::ir;
  // mnist8's second convolution: 8 -> 16 channels, 5x5, 14x14, pads 2 (the
  // packed SGEMM needed 172,800 bytes of scratch for it).
  Graph g;
  Value *x = g.addValue("x", DType::F32, Shape{1, 8, 14, 14});
  Value *w = g.addConstant(
      "w", Tensor::fromFloats(Shape{16, 8, 5, 5}, std::vector<float>(16 * 8 * 5 * 5, 0.5f)));
  Value *y = g.addValue("y", DType::F32, Shape{1, 16, 14, 14});
  Node *n = g.addNode(OpKind::Conv, "conv", {x, w}, {y});
  n->attrs["kernel_shape"] = std::vector<int64_t>{5, 5};
  n->attrs["pads"] = std::vector<int64_t>{2, 2, 2, 2};
  ScratchCtx ctx;
  std::vector<npucc::lir::Instr> body;
  ASSERT_TRUE(npucc::lower::lowerConvFamily(*n, ctx, body).ok());
  ASSERT_EQ(body.size(), 1u);
  EXPECT_EQ(body[0].callee, "npucc_conv2d_f32");
  ASSERT_EQ(ctx.scratchBytes.size(), 1u);
  EXPECT_EQ(ctx.scratchBytes[0], 201 * 8 * 4);
}

} // namespace
