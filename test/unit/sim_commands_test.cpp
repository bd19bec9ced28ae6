//===- sim_commands_test.cpp - Every NPU command vs a C++ reference -------===//
//
// For each NPU description (the built-ins and the test-only ones, TestTargets.h)
// and each command it supports: data is placed in host system memory, moved
// into the scratchpad with the DMA command, computed by the NPU command,
// moved back with DMA, and compared with a straightforward C++ reference. All
// programming goes through the data-driven command layer (npucc_npu.c) and
// the HAL sim back end; nothing below knows a particular NPU.
//
//===----------------------------------------------------------------------===//
#include "RequantReference.h"
#include "SimRig.h"

#include "npucc_layout.h"

#include <algorithm>
#include <cstring>
#include <random>

using namespace npucc::target;
using namespace npucc::test;

namespace {

class SimCommands : public ::testing::TestWithParam<std::string> {};

TEST_P(SimCommands, Dma1D) {
  Rig r(GetParam());
  ASSERT_TRUE(r.ok());
  std::mt19937 g(1);
  I8 data = randI8(g, 1000);
  uint64_t spm = r.load(data);
  EXPECT_EQ(r.store(spm, data.size()), data);
  EXPECT_FALSE(npucc_sim_failed(r.Sim)) << npucc_sim_error(r.Sim);
  const npucc_sim_cmd_stats *st = npucc_sim_command(r.Sim, 0);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->sys_bytes_read, 1000u);
  // By hand: the slowest of the DMA's read and write rates and the source
  // window's read rate, plus setup, the window's latency and the overhead.
  const SystemRange *ram = nullptr;
  for (const SystemRange &w : r.T.system)
    if (w.base <= r.RamBase && r.RamBase < w.base + w.size)
      ram = &w;
  ASSERT_NE(ram, nullptr);
  uint64_t rate = std::min(r.T.dma.readBytesPerCycle, r.T.dma.writeBytesPerCycle);
  if (ram->readBytesPerCycle)
    rate = std::min<uint64_t>(rate, ram->readBytesPerCycle);
  uint64_t expect = r.T.dma.setupCycles + ram->latencyCycles + (1000 + rate - 1) / rate +
                    r.T.timing.commandOverheadCycles;
  EXPECT_EQ(st->cycles, expect);
  // The store is the next DMA (fence-based NPUs interleave fence commands).
  size_t store = 1;
  while (store < npucc_sim_num_commands(r.Sim) &&
         npucc_sim_command(r.Sim, store)->kind != NPUCC_KIND_DMA)
    ++store;
  ASSERT_LT(store, npucc_sim_num_commands(r.Sim));
  EXPECT_EQ(npucc_sim_command(r.Sim, store)->sys_bytes_written, 1000u);
}

TEST_P(SimCommands, Dma2DStridedAnd3D) {
  Rig r(GetParam());
  ASSERT_TRUE(r.ok());
  if (!r.dims(2)) {
    // A 1D-only DMA has no rows field: the command layer refuses 2D copies.
    auto p = r.params();
    p[NPUCC_P_LENGTH] = 8, p[NPUCC_P_ROWS] = 2, p[NPUCC_P_SRC_STRIDE] = 8;
    int bad = -1;
    EXPECT_EQ(npucc_npu_issue(r.D, NPUCC_KIND_DMA, p.data(), &bad), NPUCC_ERR_UNSUPPORTED);
    EXPECT_EQ(bad, NPUCC_P_ROWS);
    return;
  }
  std::mt19937 g(2);
  // Gather a 5x12 window out of a 9x40 system-memory image into a dense tile.
  const int H = 9, W = 40, th = 5, tw = 12, y0 = 2, x0 = 8;
  I8 img = randI8(g, H * W);
  uint64_t s = r.sysAlloc(img.size());
  std::memcpy(r.host(s), img.data(), img.size());
  uint64_t tile = r.spmAlloc(th * tw);
  auto p = r.params();
  p[NPUCC_P_SRC_ADDR] = int64_t(s + y0 * W + x0);
  p[NPUCC_P_DST_ADDR] = int64_t(tile);
  p[NPUCC_P_LENGTH] = tw;
  p[NPUCC_P_ROWS] = th;
  p[NPUCC_P_SRC_STRIDE] = W;
  p[NPUCC_P_DST_STRIDE] = tw;
  r.issue(NPUCC_KIND_DMA, p);
  r.wait(NPUCC_ENGINE_DMA);
  I8 got = r.store(tile, th * tw);
  for (int y = 0; y < th; ++y)
    for (int x = 0; x < tw; ++x)
      ASSERT_EQ(got[y * tw + x], img[(y0 + y) * W + x0 + x]) << y << "," << x;
  if (!r.dims(3))
    return;
  // 3D: two planes of 3 rows x 8 bytes, plane stride 64 in the source.
  I8 src = randI8(g, 128);
  uint64_t s3 = r.sysAlloc(128);
  std::memcpy(r.host(s3), src.data(), 128);
  uint64_t d3 = r.spmAlloc(64);
  p = r.params();
  p[NPUCC_P_SRC_ADDR] = int64_t(s3);
  p[NPUCC_P_DST_ADDR] = int64_t(d3);
  p[NPUCC_P_LENGTH] = 8;
  p[NPUCC_P_ROWS] = 3;
  p[NPUCC_P_SRC_STRIDE] = 16;
  p[NPUCC_P_DST_STRIDE] = 8;
  p[NPUCC_P_PLANES] = 2;
  p[NPUCC_P_SRC_PLANE_STRIDE] = 64;
  p[NPUCC_P_DST_PLANE_STRIDE] = 32;
  r.issue(NPUCC_KIND_DMA, p);
  r.wait(NPUCC_ENGINE_DMA);
  got = r.store(d3 + 32, 24);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 8; ++x)
      ASSERT_EQ(got[y * 8 + x], src[64 + y * 16 + x]);
  got = r.store(d3, 24);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 8; ++x)
      ASSERT_EQ(got[y * 8 + x], src[y * 16 + x]);
}

TEST_P(SimCommands, DmaZeroFill) {
  Rig r(GetParam());
  ASSERT_TRUE(r.ok());
  std::mt19937 g(3);
  uint64_t spm = r.load(randI8(g, 256));
  auto p = r.params();
  p[NPUCC_P_DST_ADDR] = int64_t(spm + 64);
  p[NPUCC_P_LENGTH] = 100;
  p[NPUCC_P_ZERO_FILL] = 1;
  int bad = -1;
  int rc = npucc_npu_issue(r.D, NPUCC_KIND_DMA, p.data(), &bad);
  if (!r.T.dma.zeroFill) {
    // The command layer refuses a parameter the NPU cannot take.
    EXPECT_EQ(rc, NPUCC_ERR_UNSUPPORTED);
    EXPECT_EQ(bad, NPUCC_P_ZERO_FILL);
    return;
  }
  ASSERT_EQ(rc, NPUCC_OK);
  r.wait(NPUCC_ENGINE_DMA);
  I8 got = r.store(spm, 256);
  for (int i = 64; i < 164; ++i)
    ASSERT_EQ(got[i], 0);
  EXPECT_NE(std::count(got.begin(), got.begin() + 64, 0), 64);
}

/// OHWI weights (O x KH x KW x I) re-laid as the description's operation
/// `kind` reads them (its "weights"; npucc_layout.h), padding zero.
I8 relaid(const npucc_target_desc *d, int kind, const I8 &w, int O, int KH, int KW, int I) {
  npucc_wlayout l;
  l.kind = d->weight_layout[kind];
  l.bo = d->weight_block_o[kind];
  l.bi = d->weight_block_i[kind];
  I8 out(npucc_wlayout_bytes(l, O, KH, KW, I), 0);
  for (int o = 0; o < O; ++o)
    for (int y = 0; y < KH; ++y)
      for (int x = 0; x < KW; ++x)
        for (int i = 0; i < I; ++i)
          out[npucc_wlayout_offset(l, O, KH, KW, I, o, y, x, i)] =
              w[size_t(((o * KH + y) * KW + x) * I + i)];
  return out;
}

/// The activation layout of operation `kind` (its "layout"; npucc_layout.h).
npucc_alayout actLayout(const npucc_target_desc *d, int kind) {
  npucc_alayout l;
  l.block = d->act_block[kind];
  l.kind = uint8_t(l.block > 1 ? NPUCC_AL_BLOCKED : NPUCC_AL_NHWC);
  return l;
}

/// H x W x C NHWC data laid out as operation `kind` reads it, pad channels zero.
I8 toAct(const npucc_target_desc *d, int kind, const I8 &v, int H, int W, int C) {
  npucc_alayout l = actLayout(d, kind);
  I8 out(npucc_alayout_bytes(l, H, W, C), 0);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      for (int c = 0; c < C; ++c)
        out[npucc_alayout_offset(l, H, W, C, y, x, c)] = v[size_t((y * W + x) * C + c)];
  return out;
}

/// The NHWC view of an operand operation `kind` wrote in its layout.
I8 fromAct(const npucc_target_desc *d, int kind, const I8 &v, int H, int W, int C) {
  npucc_alayout l = actLayout(d, kind);
  I8 out(size_t(H) * W * C);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      for (int c = 0; c < C; ++c)
        out[size_t((y * W + x) * C + c)] = v[npucc_alayout_offset(l, H, W, C, y, x, c)];
  return out;
}

/// Reference conv / depthwise on HWC data with OHWI (or HWC) weights.
I8 refConv(const I8 &in, const I8 &w, const Quant &q, int H, int W, int C, int OH, int OW, int OC,
           int kh, int kw, int s, int dil, int pt, int pl, bool dw) {
  int mult = dw ? OC / C : 1; // depthwise channel multiplier
  I8 out(size_t(OH) * OW * OC);
  for (int oy = 0; oy < OH; ++oy)
    for (int ox = 0; ox < OW; ++ox)
      for (int oc = 0; oc < OC; ++oc) {
        int32_t acc = 0;
        for (int ky = 0; ky < kh; ++ky)
          for (int kx = 0; kx < kw; ++kx) {
            int iy = oy * s - pt + ky * dil, ix = ox * s - pl + kx * dil;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
              continue;
            if (dw) {
              acc += (q.x(in[(iy * W + ix) * C + oc / mult]) - q.inZp) *
                     q.w(w[(ky * kw + kx) * OC + oc]);
            } else {
              for (int c = 0; c < C; ++c)
                acc += (q.x(in[(iy * W + ix) * C + c]) - q.inZp) *
                       q.w(w[((oc * kh + ky) * kw + kx) * C + c]);
            }
          }
        out[(oy * OW + ox) * OC + oc] = q.apply(size_t(oc), acc);
      }
  return out; // int8 values: the caller applies the output stage (Quant::stored)
}

void runConv(Rig &r, bool dw, std::mt19937 &g) {
  const OpLimits *l = r.T.operation(dw ? "depthwise" : "conv");
  ASSERT_NE(l, nullptr);
  for (size_t ki = 0; ki < l->kernelHeights.size(); ++ki) {
    // Every allowed height, each with one of the allowed widths (non-square
    // kernels where the NPU has them).
    int kh = l->kernelHeights[ki], kw = l->kernelWidths[ki % l->kernelWidths.size()];
    int s = l->strides.back(), dil = dw ? 1 : l->dilations.back();
    int padT = std::min({int(l->maxPad[0]), int(l->maxPad[1]), (kh - 1) * dil / 2});
    int padL = std::min({int(l->maxPad[2]), int(l->maxPad[3]), (kw - 1) * dil / 2});
    int mult = dw ? l->depthMultipliers.back() : 1;
    int H = 7, W = 6, C = dw ? 5 : 3, OC = dw ? C * mult : 5;
    int spanH = H + 2 * padT - dil * (kh - 1) - 1, spanW = W + 2 * padL - dil * (kw - 1) - 1;
    if (spanH < 0 || spanW < 0)
      continue;
    int OH = spanH / s + 1, OW = spanW / s + 1;
    I8 in = randI8(g, size_t(H) * W * C);
    I8 w = randI8(g, size_t(kh) * kw * (dw ? OC : C * OC));
    Quant q(g, *l, size_t(OC));
    auto p = r.params();
    const int kind = dw ? NPUCC_KIND_DEPTHWISE : NPUCC_KIND_CONV;
    const size_t outBytes = npucc_alayout_bytes(actLayout(r.D, kind), OH, OW, OC);
    p[NPUCC_P_IN_ADDR] = int64_t(r.load(toAct(r.D, kind, in, H, W, C)));
    p[NPUCC_P_W_ADDR] =
        int64_t(r.constant(dw ? "depthwise" : "conv", Operand::W,
                           dw ? w : relaid(r.D, NPUCC_KIND_CONV, w, OC, kh, kw, C)));
    q.program(r, p, dw ? "depthwise" : "conv", kh * kw);
    uint64_t out = r.spmAlloc(outBytes);
    p[NPUCC_P_OUT_ADDR] = int64_t(out);
    p[NPUCC_P_IN_H] = H, p[NPUCC_P_IN_W] = W, p[NPUCC_P_IN_CH] = C;
    p[NPUCC_P_OUT_H] = OH, p[NPUCC_P_OUT_W] = OW;
    if (!dw)
      p[NPUCC_P_OUT_CH] = OC;
    else if (mult != 1)
      p[NPUCC_P_DEPTH_MULT] = mult;
    p[NPUCC_P_K_H] = kh, p[NPUCC_P_K_W] = kw;
    p[NPUCC_P_STRIDE_H] = s, p[NPUCC_P_STRIDE_W] = s;
    p[NPUCC_P_DIL_H] = dil, p[NPUCC_P_DIL_W] = dil;
    p[NPUCC_P_PAD_TOP] = padT, p[NPUCC_P_PAD_LEFT] = padL;
    size_t before = npucc_sim_num_commands(r.Sim);
    r.issue(dw ? NPUCC_KIND_DEPTHWISE : NPUCC_KIND_CONV, p);
    r.wait(NPUCC_ENGINE_COMPUTE);
    I8 got = fromAct(r.D, kind, r.store(out, outBytes), OH, OW, OC);
    EXPECT_EQ(got, q.stored(refConv(in, w, q, H, W, C, OH, OW, OC, kh, kw, s, dil, padT, padL, dw)))
        << "k=" << kh << "x" << kw << " s=" << s << " dil=" << dil << " pad=" << padT << "," << padL
        << " mult=" << mult;
    const npucc_sim_cmd_stats *st = npucc_sim_command(r.Sim, before);
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(st->macs, uint64_t(OH) * OW * OC * kh * kw * (dw ? 1 : C));
    // The compiler-side cost model agrees with the simulator.
    uint64_t macs = 0;
    EXPECT_EQ(st->cycles,
              r.Table->commandCycles(dw ? NPUCC_KIND_DEPTHWISE : NPUCC_KIND_CONV, p, &macs));
    EXPECT_EQ(macs, st->macs);
    if (!dw) { // conv cycles by hand: taps * input-channel blocks * output-channel blocks,
               // or the description's own steps expression (npu-expr)
      const OpTiming &t = l->timing;
      uint64_t steps = uint64_t(OH) * OW * kh * kw *
                       ((C + r.T.compute.macCols - 1) / r.T.compute.macCols) *
                       ((OC + r.T.compute.macRows - 1) / r.T.compute.macRows);
      if (t.steps) {
        std::optional<int64_t> v = evalExpr(*t.steps, p);
        ASSERT_TRUE(v.has_value());
        steps = uint64_t(*v);
      }
      EXPECT_EQ(st->cycles, steps * t.cyclesPerStep + t.fillCycles + t.overheadCycles +
                                r.T.timing.commandOverheadCycles);
    }
    EXPECT_GT(st->mac_utilisation, 0.0);
    EXPECT_LE(st->mac_utilisation, 1.0);
    // The max pool stage: the same conv computed over whole k x k windows only
    // (out_h/out_w the computed resolution, multiples of k), stored pooled; the
    // select stage: the same, keeping pixel (oy, ox) of each window, for every
    // offered offset.
    bool select = l->stage(NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_SELECT;
    std::vector<std::pair<unsigned, unsigned>> offsets = l->poolOffsets;
    if (!select)
      offsets = {{0u, 0u}};
    for (unsigned k : l->poolKernels)
      for (auto [offY, offX] : offsets) {
        int PH = OH / int(k), PW = OW / int(k);
        if (PH == 0 || PW == 0 || offY >= k || offX >= k)
          continue;
        I8 full = refConv(in, w, q, H, W, C, OH, OW, OC, kh, kw, s, dil, padT, padL, dw);
        I8 want(size_t(PH) * PW * OC, int8_t(-128));
        for (int y = 0; y < PH * int(k); ++y)
          for (int x = 0; x < PW * int(k); ++x)
            for (int oc = 0; oc < OC; ++oc) {
              int8_t &m = want[size_t(((y / int(k)) * PW + x / int(k)) * OC + oc)];
              int8_t v = full[size_t((y * OW + x) * OC + oc)];
              if (!select)
                m = std::max(m, v);
              else if (y % int(k) == int(offY) && x % int(k) == int(offX))
                m = v;
            }
        p[NPUCC_P_POOL_OFF_Y] = offY, p[NPUCC_P_POOL_OFF_X] = offX;
        const size_t pooledBytes = npucc_alayout_bytes(actLayout(r.D, kind), PH, PW, OC);
        uint64_t pout = r.spmAlloc(pooledBytes);
        p[NPUCC_P_OUT_ADDR] = int64_t(pout);
        p[NPUCC_P_OUT_H] = PH * int(k), p[NPUCC_P_OUT_W] = PW * int(k);
        p[NPUCC_P_POOL_K] = int64_t(k);
        size_t at = npucc_sim_num_commands(r.Sim);
        r.issue(kind, p);
        r.wait(NPUCC_ENGINE_COMPUTE);
        EXPECT_EQ(fromAct(r.D, kind, r.store(pout, pooledBytes), PH, PW, OC), q.stored(want))
            << "pool " << k << " offset " << offY << "," << offX << " after k=" << kh << "x" << kw;
        const npucc_sim_cmd_stats *pst = npucc_sim_command(r.Sim, at);
        ASSERT_NE(pst, nullptr);
        EXPECT_EQ(pst->macs, uint64_t(PH) * k * PW * k * OC * kh * kw * (dw ? 1 : C));
        EXPECT_EQ(pst->cycles, r.Table->commandCycles(kind, p, &macs));
        p[NPUCC_P_POOL_K] = 1;
        p[NPUCC_P_POOL_OFF_Y] = 0, p[NPUCC_P_POOL_OFF_X] = 0;
      }
  }
  EXPECT_FALSE(npucc_sim_failed(r.Sim)) << npucc_sim_error(r.Sim);
}

TEST_P(SimCommands, Conv) {
  Rig r(GetParam());
  ASSERT_TRUE(r.ok());
  std::mt19937 g(4);
  runConv(r, false, g);
}

TEST_P(SimCommands, Depthwise) {
  Rig r(GetParam());
  ASSERT_TRUE(r.ok());
  if (!r.T.supports("depthwise")) {
    auto p = r.params();
    EXPECT_EQ(npucc_npu_issue(r.D, NPUCC_KIND_DEPTHWISE, p.data(), nullptr), NPUCC_ERR_UNSUPPORTED);
    return;
  }
  std::mt19937 g(5);
  runConv(r, true, g);
}

TEST_P(SimCommands, Matmul) {
  Rig r(GetParam());
  ASSERT_TRUE(r.ok());
  std::mt19937 g(6);
  const int M = 5, K = 37, N = 11;
  I8 a = randI8(g, M * K), w = randI8(g, N * K);
  Quant q(g, *r.T.operation("matmul"), N);
  auto p = r.params();
  p[NPUCC_P_IN_ADDR] = int64_t(r.load(a));
  p[NPUCC_P_W_ADDR] =
      int64_t(r.constant("matmul", Operand::W, relaid(r.D, NPUCC_KIND_MATMUL, w, N, 1, 1, K)));
  q.program(r, p, "matmul");
  uint64_t out = r.spmAlloc(M * N);
  p[NPUCC_P_OUT_ADDR] = int64_t(out);
  p[NPUCC_P_M] = M, p[NPUCC_P_K] = K, p[NPUCC_P_N] = N;
  r.issue(NPUCC_KIND_MATMUL, p);
  r.wait(NPUCC_ENGINE_COMPUTE);
  EXPECT_EQ(r.store(out, M * N), matmulRef(a, w, M, K, N, q));
  EXPECT_FALSE(npucc_sim_failed(r.Sim)) << npucc_sim_error(r.Sim);
}

TEST_P(SimCommands, Pool) {
  Rig r(GetParam());
  ASSERT_TRUE(r.ok());
  const OpLimits *l = r.T.operation("pool");
  if (!l) {
    auto p = r.params();
    EXPECT_EQ(npucc_npu_issue(r.D, NPUCC_KIND_POOL, p.data(), nullptr), NPUCC_ERR_UNSUPPORTED);
    return;
  }
  std::mt19937 g(7);
  const int H = 7, W = 5, C = 6;
  I8 in = randI8(g, H * W * C);
  uint64_t inAddr = r.load(toAct(r.D, NPUCC_KIND_POOL, in, H, W, C));
  const npucc_alayout al = actLayout(r.D, NPUCC_KIND_POOL);
  // A pool command that binds the requantization (npu-default) averages as
  // requant(sum(x - in_zp)) + out_zp with the command's multiplier (about 1/6
  // here, whatever the window's count); else the raw sum / count.
  const CommandDesc *cmd = r.T.command("pool");
  const bool rq = cmd && cmd->binding("requant_mult");
  const int32_t zin = rq ? 3 : 0, zout = -5, mult = 1431655765, shift = 2;
  for (const std::string &kind : l->kinds)
    for (int k : l->kernelHeights) {
      if (!l->allowsKernel(k, k) || k > W)
        continue;
      int s = 1; // the largest allowed stride up to 2 (the image is 7x5)
      for (int st : l->strides)
        s = st <= 2 ? std::max(s, st) : s;
      int pad = std::min({int(l->maxPad[0]), int(l->maxPad[1]),
                                                 int(l->maxPad[2]), int(l->maxPad[3]), k / 2});
      int OH = (H + 2 * pad - k) / s + 1, OW = (W + 2 * pad - k) / s + 1;
      bool avg = kind == "avg";
      auto p = r.params();
      const size_t outBytes = npucc_alayout_bytes(al, OH, OW, C);
      uint64_t out = r.spmAlloc(outBytes);
      p[NPUCC_P_IN_ADDR] = int64_t(inAddr), p[NPUCC_P_OUT_ADDR] = int64_t(out);
      p[NPUCC_P_IN_H] = H, p[NPUCC_P_IN_W] = W, p[NPUCC_P_IN_CH] = C;
      p[NPUCC_P_OUT_H] = OH, p[NPUCC_P_OUT_W] = OW;
      p[NPUCC_P_K_H] = k, p[NPUCC_P_K_W] = k, p[NPUCC_P_STRIDE_H] = s, p[NPUCC_P_STRIDE_W] = s;
      p[NPUCC_P_PAD_TOP] = pad, p[NPUCC_P_PAD_LEFT] = pad;
      p[NPUCC_P_POOL_KIND] = avg ? NPUCC_POOL_AVG : NPUCC_POOL_MAX;
      p[NPUCC_P_ACT_MIN] = -90, p[NPUCC_P_ACT_MAX] = 100;
      if (rq && avg)
        p[NPUCC_P_IN_ZP] = zin, p[NPUCC_P_OUT_ZP] = zout, p[NPUCC_P_REQUANT_MULT] = mult,
        p[NPUCC_P_REQUANT_SHIFT] = shift;
      r.issue(NPUCC_KIND_POOL, p);
      r.wait(NPUCC_ENGINE_COMPUTE);
      I8 ref(OH * OW * C);
      for (int oy = 0; oy < OH; ++oy)
        for (int ox = 0; ox < OW; ++ox)
          for (int c = 0; c < C; ++c) {
            int best = -128, sum = 0, n = 0;
            for (int ky = 0; ky < k; ++ky)
              for (int kx = 0; kx < k; ++kx) {
                int iy = oy * s - pad + ky, ix = ox * s - pad + kx;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                  continue;
                int v = in[(iy * W + ix) * C + c];
                best = std::max(best, v), sum += v - (avg ? zin : 0), ++n;
              }
            // Average over the valid taps only, rounded as pool.avg_rounding says, or
            // requantized.
            int v = !avg ? best
                    : rq ? npucc::testref::requantI8(sum, mult, shift, zout, -128, 127)
                         : npucc::testref::averageOf(sum, n, r.D->pool_avg_rounding);
            ref[(oy * OW + ox) * C + c] = int8_t(std::clamp(v, -90, 100));
          }
      EXPECT_EQ(fromAct(r.D, NPUCC_KIND_POOL, r.store(out, outBytes), OH, OW, C), ref)
          << kind << " k=" << k;
    }
  EXPECT_FALSE(npucc_sim_failed(r.Sim)) << npucc_sim_error(r.Sim);
}

TEST_P(SimCommands, EltwiseAdd) {
  Rig r(GetParam());
  ASSERT_TRUE(r.ok());
  if (!r.T.supports("eltwise")) { // npu-u8: the command layer refuses it
    auto p = r.params();
    EXPECT_EQ(npucc_npu_issue(r.D, NPUCC_KIND_ELTWISE, p.data(), nullptr), NPUCC_ERR_UNSUPPORTED);
    return;
  }
  std::mt19937 g(8);
  const int N = 300;
  I8 a = randI8(g, N), b = randI8(g, N);
  const int32_t za = 3, zb = -7, zo = 5, ls = 20;
  const int32_t ma = 1518500250, sa = 1, mb = 1207959552, sb = 1, mo = 1431655765, so = 18;
  auto p = r.params();
  p[NPUCC_P_IN_ADDR] = int64_t(r.load(a));
  p[NPUCC_P_IN2_ADDR] = int64_t(r.load(b));
  uint64_t out = r.spmAlloc(N);
  p[NPUCC_P_OUT_ADDR] = int64_t(out);
  p[NPUCC_P_LENGTH] = N;
  p[NPUCC_P_IN_ZP] = za, p[NPUCC_P_IN2_ZP] = zb, p[NPUCC_P_OUT_ZP] = zo, p[NPUCC_P_LEFT_SHIFT] = ls;
  p[NPUCC_P_IN_MULT] = ma, p[NPUCC_P_IN_SHIFT] = sa, p[NPUCC_P_IN2_MULT] = mb;
  p[NPUCC_P_IN2_SHIFT] = sb, p[NPUCC_P_REQUANT_MULT] = mo, p[NPUCC_P_REQUANT_SHIFT] = so;
  p[NPUCC_P_ACT_MIN] = -120, p[NPUCC_P_ACT_MAX] = 120;
  r.issue(NPUCC_KIND_ELTWISE, p);
  r.wait(NPUCC_ENGINE_COMPUTE);
  I8 ref(N);
  for (int i = 0; i < N; ++i) {
    int32_t x = npucc_mul_qmult((a[i] - za) * (1 << ls), ma, sa);
    int32_t y = npucc_mul_qmult((b[i] - zb) * (1 << ls), mb, sb);
    int32_t o = npucc_mul_qmult(x + y, mo, so) + zo;
    ref[i] = int8_t(std::clamp(o, -120, 120));
  }
  EXPECT_EQ(r.store(out, N), ref);
  EXPECT_FALSE(npucc_sim_failed(r.Sim)) << npucc_sim_error(r.Sim);
}

INSTANTIATE_TEST_SUITE_P(AllTargets, SimCommands, ::testing::ValuesIn(npucc::test::allTargets()),
                         npucc::test::targetTestName);
// Descriptions whose requantization stage is not in allTargets() (the model-level
// tests there assume q31-like tables): every command with random mul_shift_add
// tables (SimRig.h Quant); npu-fpool's conv and depthwise also with their fused
// max pools, npu-select's with their select pools at every offered offset (runConv);
// npu-u8's uint8 data, uint8 weights and correction terms.
INSTANTIATE_TEST_SUITE_P(RequantStages, SimCommands,
                         ::testing::Values(npucc::test::testTarget("npu-msa.json"),
                                           npucc::test::testTarget("npu-fpool.json"),
                                           npucc::test::testTarget("npu-select.json"),
                                           npucc::test::testTarget("npu-u8.json")),
                         npucc::test::targetTestName);

} // namespace
