//===- u8_stages_test.cpp - uint8 data and the correction_terms stage ------===//
//
// Issue 19, phase 7b: the input and output stages `uint8` and the correction
// stage `correction_terms` (runtime/include/npucc_stages.h) against naive
// references (128-bit integers, floor division written out); the K210's
// parameters (corr_x = -zw, corr_w = -zx, corr_add = taps * zw * zx, shifts
// 0) on uint8 data (int8 + 128) give the int8 graph's accumulator exactly,
// padding included; the loader's acceptance and refusals (with JSON paths)
// and the C table's widths; the simulator's refusal of a correction
// parameter wider than the stage (npu-u8's matmul); legality keeping layers
// on the CPU with the reason until the compiler targets these stages.
//
//===----------------------------------------------------------------------===//
#include "RequantReference.h"
#include "SimRig.h"

#include "npucc/ir/Parser.h"
#include "npucc/target/CTable.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"
#include "npucc_stages.h"

#include <gtest/gtest.h>

#include "TargetJsonEdit.h"
#include "TestTargets.h"

#include <random>

using namespace npucc::target;
using namespace npucc::test;

namespace {

using npucc::testref::I128;

TEST(StageU8, InputAndOutputUint8) {
  for (int b = 0; b < 256; ++b)
    EXPECT_EQ(npucc_stage_in_uint8(uint8_t(b)), b);
  for (int v = -400; v <= 400; ++v) {
    int want = std::min(127, std::max(-128, v)) + 128;
    EXPECT_EQ(int(npucc_stage_out_uint8(v)), want) << v;
    // The uint8 tensor is the int8 one with its sign bit flipped (zero point + 128).
    EXPECT_EQ(npucc_stage_out_uint8(v), uint8_t(npucc_stage_out_int8(v) ^ 0x80u)) << v;
    if (v >= -128 && v <= 127) {
      EXPECT_EQ(npucc_stage_in_uint8(npucc_stage_out_uint8(v)) - 128, v);
    }
  }
}

/// floor(a / 2^s) with 128-bit integers and a division written out.
I128 floorShift(I128 a, int s) {
  I128 d = I128(1) << s, q = a / d;
  if (a % d != 0 && a < 0)
    --q;
  return q;
}

TEST(StageU8, CorrectionTermsAgainstNaiveReference) {
  std::mt19937_64 g(71);
  std::uniform_int_distribution<int64_t> acc(-(int64_t(1) << 40), int64_t(1) << 40),
      sum(-(int64_t(1) << 30), int64_t(1) << 30), add(-(int64_t(1) << 39), int64_t(1) << 39);
  std::uniform_int_distribution<int32_t> arg(-(1 << 23), (1 << 23) - 1), sh(0, 15), grp(1, 4096);
  for (int i = 0; i < 20000; ++i) {
    int64_t a = acc(g), sx = sum(g), sw = sum(g), ca = add(g), cg = grp(g);
    int32_t cx = arg(g), cw = arg(g), shx = i % 4 ? sh(g) : 0, shw = i % 3 ? sh(g) : 0;
    I128 want =
        I128(a) + floorShift(I128(cx) * sx, shx) + floorShift(I128(cw) * sw, shw) + I128(ca) * cg;
    int64_t got = npucc_stage_corr_terms(a, sx, sw, cx, shx, cw, shw, ca, cg);
    ASSERT_TRUE(I128(got) == want) << "acc " << a << " sum_x " << sx << " corr_x " << cx << " >> "
                                   << shx << " sum_w " << sw << " corr_w " << cw << " >> " << shw;
  }
  // Exact halves and the largest shift round toward minus infinity.
  EXPECT_EQ(npucc_stage_corr_terms(0, -3, 0, 1, 1, 0, 0, 0, 1), -2);
  EXPECT_EQ(npucc_stage_corr_terms(0, 3, 0, 1, 1, 0, 0, 0, 1), 1);
  EXPECT_EQ(npucc_stage_corr_terms(0, 0, -1, 1, 0, 1, 63, 0, 1), -1);
}

/// A conv window of taps x channels on int8 data (zero point zx, symmetric int8 weights):
/// the int8 graph's sum((x - zx) * w), padding taps holding zx, equals the uint8 NPU's
/// raw sum of (x + 128) * (w + 128), padding holding zx + 128, plus the K210's terms.
TEST(StageU8, K210ParametersGiveTheInt8AccumulatorExactly) {
  std::mt19937 g(72);
  std::uniform_int_distribution<int> i8(-128, 127), taps(1, 49), ch(1, 64), coin(0, 3);
  for (int t = 0; t < 3000; ++t) {
    int n = taps(g), c = ch(g), zx = i8(g);
    int64_t ref = 0, acc = 0, sumX = 0, sumW = 0;
    const int32_t ZX = zx + 128, ZW = 128;
    for (int k = 0; k < n; ++k) {
      bool pad = coin(g) == 0;
      for (int j = 0; j < c; ++j) {
        int x = pad ? zx : i8(g), w = i8(g);
        ref += int64_t(x - zx) * w;
        int32_t X = npucc_stage_in_uint8(uint8_t(x + 128)), W = w + 128;
        acc = npucc_stage_mac(acc, X * W);
        sumX += X, sumW += W;
      }
    }
    int64_t got = npucc_stage_corr_terms(acc, sumX, sumW, -ZW, 0, -ZX, 0, int64_t(n) * ZW * ZX, c);
    ASSERT_EQ(got, ref) << "taps " << n << " channels " << c << " zx " << zx;
  }
}

json defaultJson() {
  return json::parse(readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
}

std::string arithErr(const char *op, const json &a) {
  json j = defaultJson();
  j["compute"]["operations"][op]["arithmetic"] = a;
  auto r = parseTargetJson(j.dump(2), "npu.json");
  return r ? std::string() : r.error().str();
}

TEST(StageU8, LoaderRefusals) {
  EXPECT_EQ(arithErr("conv", {{"correction", "correction_term"}}),
            "npu.json: error: /compute/operations/conv/arithmetic/correction: unknown correction "
            "stage 'correction_term' (did you mean 'correction_terms'?) (expected subtract_zp, "
            "correction_terms)");
  EXPECT_EQ(arithErr("conv", {{"input", "unit8"}}),
            "npu.json: error: /compute/operations/conv/arithmetic/input: unknown input stage "
            "'unit8' (expected int8, uint8)");
  EXPECT_EQ(arithErr("matmul", {{"output", "uint16"}}),
            "npu.json: error: /compute/operations/matmul/arithmetic/output: unknown output stage "
            "'uint16' (did you mean 'uint8'?) (expected int8, uint8)");
  EXPECT_EQ(arithErr("depthwise", {{"correction", "correction_terms"}}),
            "npu.json: error: /compute/operations/depthwise/arithmetic/correction: correction "
            "stage correction_terms adds its zero point terms with parameter 'corr_x': bind it "
            "in /commands/depthwise/params");
  EXPECT_EQ(arithErr("conv", {{"correction", {{"stage", "correction_terms"}, {"shift_bits", 7}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/correction/shift_bits: value 7 "
            "out of range 1..6");
  EXPECT_EQ(arithErr("conv", {{"correction", {{"stage", "correction_terms"}, {"add_bits", 41}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/correction/add_bits: value 41 "
            "out of range 8..40");
  EXPECT_EQ(arithErr("conv", {{"correction", {{"stage", "correction_terms"}, {"x_bits", 33}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/correction/x_bits: value 33 "
            "out of range 2..32");
  EXPECT_EQ(arithErr("conv", {{"correction", {{"stage", "subtract_zp"}, {"x_bits", 24}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/correction/x_bits: unknown "
            "field 'x_bits'");
  // uint8 input and output alone need nothing more than npu-default has.
  EXPECT_EQ(arithErr("conv", {{"input", "uint8"}, {"output", "uint8"}}), "");
}

TEST(StageU8, NpuU8LoadsWithItsWidthsInTheCTable) {
  auto r = loadTarget(testTarget("npu-u8.json"));
  ASSERT_TRUE(r.ok()) << r.error().str();
  for (const char *op : {"conv", "depthwise", "matmul"}) {
    const OpLimits *l = r->operation(op);
    ASSERT_NE(l, nullptr) << op;
    EXPECT_EQ(l->stage(NPUCC_SLOT_INPUT), NPUCC_STAGE_IN_UINT8) << op;
    EXPECT_EQ(l->stage(NPUCC_SLOT_CORRECTION), NPUCC_STAGE_CORR_TERMS) << op;
    EXPECT_EQ(l->stage(NPUCC_SLOT_OUTPUT), NPUCC_STAGE_OUT_UINT8) << op;
    EXPECT_EQ(l->stage(NPUCC_SLOT_REQUANT), NPUCC_STAGE_RQ_Q31) << op;
  }
  EXPECT_EQ(r->operation("conv")->corrBits, (std::array<unsigned, 4>{24, 24, 4, 32}));
  EXPECT_EQ(r->operation("matmul")->corrBits, (std::array<unsigned, 4>{16, 16, 4, 32}));
  CTable t(*r);
  const uint8_t *sp = t.get()->stage_params;
  ASSERT_NE(sp, nullptr);
  const uint8_t *mm = sp + NPUCC_KIND_MATMUL * NPUCC_SP_COUNT;
  EXPECT_EQ(mm[NPUCC_SP_CORR_X_BITS], 16);
  EXPECT_EQ(mm[NPUCC_SP_CORR_W_BITS], 16);
  EXPECT_EQ(mm[NPUCC_SP_CORR_SHIFT_BITS], 4);
  EXPECT_EQ(mm[NPUCC_SP_CORR_ADD_BITS], 32);
  EXPECT_EQ(sp[NPUCC_KIND_CONV * NPUCC_SP_COUNT + NPUCC_SP_CORR_X_BITS], 24);
}

/// npu-u8's matmul: corr_w 16 bits (signed) in a 24-bit field. A value the field holds but
/// the stage does not is the simulator's limit error; a uint8 zero point below 0 too.
TEST(StageU8, SimulatorRefusesCorrectionParametersWiderThanTheStage) {
  for (int bad = 0; bad < 3; ++bad) {
    Rig r(testTarget("npu-u8.json"));
    ASSERT_TRUE(r.ok());
    std::mt19937 g(73);
    const int M = 2, K = 8, N = 4;
    I8 a = randI8(g, M * K), w = randI8(g, N * K);
    Quant q(g, *r.T.operation("matmul"), N);
    auto p = r.params();
    p[NPUCC_P_IN_ADDR] = int64_t(r.load(a));
    p[NPUCC_P_W_ADDR] = int64_t(r.constant("matmul", Operand::W, w));
    q.program(r, p, "matmul");
    p[NPUCC_P_OUT_ADDR] = int64_t(r.spmAlloc(M * N));
    p[NPUCC_P_M] = M, p[NPUCC_P_K] = K, p[NPUCC_P_N] = N;
    if (bad == 1)
      p[NPUCC_P_CORR_W] = -40000;
    if (bad == 2)
      p[NPUCC_P_IN_ZP] = -1;
    r.issue(NPUCC_KIND_MATMUL, p);
    int rc = npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 10000000);
    if (bad == 0) {
      EXPECT_EQ(rc, NPUCC_OK) << npucc_sim_error(r.Sim);
      EXPECT_FALSE(npucc_sim_failed(r.Sim));
      continue;
    }
    EXPECT_TRUE(npucc_sim_failed(r.Sim));
    EXPECT_NE(std::string(npucc_sim_error(r.Sim))
                  .find(bad == 1 ? "corr_w -40000 does not fit the correction stage's 16 signed "
                                   "bits"
                                 : "zero points -1/"),
              std::string::npos)
        << npucc_sim_error(r.Sim);
  }
}

/// The compiler side is not there yet: legality refuses the layers, naming the stage
/// (npucc --explain), where npu-default places the same conv.
TEST(StageU8, LegalityKeepsLayersOnTheCpuNamingTheStage) {
  const char *conv = "graph @main(%x: i8[1,2,8,8] q(0.05, 3)) -> (%y) {\n"
                     "  const @w: i8[2,2,1,1] q(0.02, 0) = dense<[1, -3, 7, 2]>\n"
                     "  %y = Conv(%x, @w) {kernel_shape=[1, 1]} : i8[1,2,8,8] q(0.1, -5)\n"
                     "  return %y\n}\n";
  auto g = npucc::ir::parseGraph(conv, "conv.ir").take();
  auto def = loadTarget("npu-default");
  ASSERT_TRUE(def.ok()) << def.error().str();
  Placement p = placeNode(*g->nodes()[0], *def);
  EXPECT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  auto u8 = loadTarget(testTarget("npu-u8.json"));
  ASSERT_TRUE(u8.ok()) << u8.error().str();
  Placement q = placeNode(*g->nodes()[0], *u8);
  EXPECT_FALSE(q.onNpu());
  ASSERT_FALSE(q.reasons.empty());
  EXPECT_EQ(q.reasons.back(), "the NPU's conv computes with the uint8 input stage, which the "
                              "compiler does not target yet");
}

} // namespace
