//===- sim_operands_test.cpp - Operands in system memory; arithmetic stages ---===//
//
// The simulator resolves operands the NPU reads from system memory itself
// (issue 19, phase 5: npu-sysmem's matmul reads its weights in place; an
// unmapped, misaligned or scratchpad address is an error) and checks the
// arithmetic stages' own limits (phase 7: fp32_scale needs its per-channel
// table and finite scales; shift needs its table and shifts in 0..31 and
// rounds ties to even; an accumulator wider than acc_bits is a limit error;
// mul_shift_add's and pwl's tables within the description's widths; the max
// pool stage's window checks).
//
//===----------------------------------------------------------------------===//
#include "SimRig.h"

extern "C" {
#include "npucc_sim_internal.h"
}

using namespace npucc::test;
using namespace npucc::target;

namespace {

// --- Operands the NPU reads from system memory (issue 19, phase 5) ---------------------------

/// npu-sysmem's matmul, its weights, bias and requantization table in
/// system memory: `wAt` is where the weights are (a mapped address, or not).
std::string matmulReading(uint64_t (*wAt)(Rig &, uint64_t mapped)) {
  Rig r(npucc::test::testTarget("npu-sysmem.json"));
  EXPECT_TRUE(r.ok());
  if (!r.ok())
    return "no simulator";
  std::mt19937 g(9);
  const int M = 3, K = 20, N = 4;
  I8 a = randI8(g, M * K), w = randI8(g, N * K);
  Quant q(g, *r.T.operation("matmul"), N);
  auto p = r.params();
  p[NPUCC_P_IN_ADDR] = int64_t(r.load(a));
  p[NPUCC_P_W_ADDR] = int64_t(wAt(r, r.constant("matmul", Operand::W, w)));
  q.program(r, p, "matmul");
  uint64_t out = r.spmAlloc(M * N);
  p[NPUCC_P_OUT_ADDR] = int64_t(out);
  p[NPUCC_P_M] = M, p[NPUCC_P_K] = K, p[NPUCC_P_N] = N;
  int bad = -1;
  EXPECT_EQ(npucc_npu_issue(r.D, NPUCC_KIND_MATMUL, p.data(), &bad), NPUCC_OK);
  if (npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 10000000) != NPUCC_OK)
    return npucc_sim_error(r.Sim);
  EXPECT_EQ(r.store(out, M * N), matmulRef(a, w, M, K, N, q));
  return npucc_sim_failed(r.Sim) ? npucc_sim_error(r.Sim) : "";
}

TEST(SimSystemOperands, ComputeReadsMappedSystemMemory) {
  // The weights where the Rig mapped them (the RAM window): read in place.
  EXPECT_EQ(matmulReading([](Rig &, uint64_t mapped) { return mapped; }), "");
}

TEST(SimSystemOperands, UnmappedOrMisalignedReadsFail) {
  // The flash window (0x08000000) is in the description but nothing is mapped there.
  std::string e = matmulReading([](Rig &, uint64_t) { return uint64_t(0x08000000); });
  EXPECT_NE(e.find("w_addr 0x08000000..0x08000050 is outside the scratchpad and the mapped "
                   "system memory ranges"),
            std::string::npos)
      << e;
  // 64-byte alignment asked of the weights.
  e = matmulReading([](Rig &, uint64_t mapped) { return mapped + 8; });
  EXPECT_NE(e.find("(system memory) is not aligned to 64 bytes"), std::string::npos) << e;
  // A scratchpad address for an operand read from system memory.
  e = matmulReading([](Rig &r, uint64_t) { return r.spmAlloc(80); });
  EXPECT_NE(e.find("is in a scratchpad, but matmul reads it from system memory"), std::string::npos)
      << e;
}

// --- Arithmetic stages (issue 19, phase 7) ---------------------------------------------------

/// The rig's simulator replaced by one of `alt` (an edited copy of its table).
void runOn(Rig &r, const npucc_target_desc *alt) {
  npucc_sim_destroy(r.Sim);
  r.D = alt;
  r.Sim = npucc_sim_create(alt);
  npucc_sim_attach(r.Sim);
  EXPECT_EQ(npucc_sim_map(r.Sim, r.RamBase, r.Ram.data(), r.Ram.size()), 0);
}

/// A 1 x K x 1 matmul on `name` (its simulator replaced by one of `alt` when given) with the
/// rq table `table` and per_channel `perChannel`: the simulator's error ("" if none).
std::string matmulStages(const std::string &name, const npucc_target_desc *alt, const I32 &table,
                         int perChannel, int8_t x = 1, int8_t wv = 1, int K = 4,
                         int8_t *result = nullptr) {
  Rig r(name);
  EXPECT_TRUE(r.ok());
  if (!r.ok())
    return "no simulator";
  if (alt)
    runOn(r, alt);
  auto p = r.params();
  p[NPUCC_P_IN_ADDR] = int64_t(r.load(I8(size_t(K), x)));
  p[NPUCC_P_W_ADDR] = int64_t(r.load(I8(size_t(K), wv)));
  p[NPUCC_P_BIAS_ADDR] = int64_t(r.load(I32{0}));
  p[NPUCC_P_RQ_ADDR] = int64_t(r.load(table));
  p[NPUCC_P_PER_CHANNEL] = perChannel;
  // lut256 (npu-fp32lut's matmul): the identity table, so the stages before it show.
  if (const OpLimits *l = r.T.operation("matmul");
      l && l->stage(NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_LUT256) {
    I8 identity(256);
    for (int i = 0; i < 256; ++i)
      identity[size_t(i)] = int8_t(i - 128);
    p[NPUCC_P_ACT_ADDR] = int64_t(r.constant("matmul", Operand::Act, identity));
  }
  uint64_t out = r.spmAlloc(16);
  p[NPUCC_P_OUT_ADDR] = int64_t(out);
  p[NPUCC_P_M] = 1, p[NPUCC_P_K] = K, p[NPUCC_P_N] = 1;
  int bad = -1;
  EXPECT_EQ(npucc_npu_issue(r.D, NPUCC_KIND_MATMUL, p.data(), &bad), NPUCC_OK);
  if (npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 10000000) != NPUCC_OK || npucc_sim_failed(r.Sim))
    return npucc_sim_error(r.Sim);
  if (result)
    *result = r.store(out, 1)[0];
  return "";
}

int32_t floatBits(float f) {
  int32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

TEST(SimArithmetic, Fp32ScaleNeedsTheTableAndFiniteScales) {
  const std::string t = npucc::test::testTarget("npu-fp32lut.json");
  EXPECT_EQ(matmulStages(t, nullptr, {floatBits(0.5f)}, 1), "");
  std::string e = matmulStages(t, nullptr, {floatBits(0.5f)}, 0);
  EXPECT_NE(e.find("fp32_scale reads its scales from the rq table (per_channel 0)"),
            std::string::npos)
      << e;
  e = matmulStages(t, nullptr, {int32_t(0x7FC00000)}, 1);
  EXPECT_NE(e.find("requant table: scale of channel 0 is not finite"), std::string::npos) << e;
}

TEST(SimArithmetic, ShiftStageRoundsToEvenAndNeedsItsTable) {
  const std::string t = npucc::test::testTarget("npu-shift.json");
  // acc = K * x * w: 4 * 3 * 5 = 60; 60 / 8 = 7.5 -> 8; 60 / 16 = 3.75 -> 4; 60 / 32 -> 2;
  // -60 / 8 -> -8; 36 / 8 = 4.5 -> 4 (ties to even); 60 / 1 -> 60.
  struct Case {
    int8_t x, w;
    int K;
    int32_t s;
    int8_t want;
  } cases[] = {{3, 5, 4, 3, 8},   {3, 5, 4, 4, 4}, {3, 5, 4, 5, 2},
               {-3, 5, 4, 3, -8}, {3, 3, 4, 3, 4}, {3, 5, 4, 0, 60}};
  for (const Case &c : cases) {
    int8_t got = 0;
    EXPECT_EQ(matmulStages(t, nullptr, {c.s}, 1, c.x, c.w, c.K, &got), "") << c.s;
    EXPECT_EQ(got, c.want) << int(c.x) << " " << int(c.w) << " " << c.s;
  }
  std::string e = matmulStages(t, nullptr, {3}, 0);
  EXPECT_NE(e.find("shift reads its shifts from the rq table (per_channel 0)"), std::string::npos)
      << e;
  e = matmulStages(t, nullptr, {32}, 1);
  EXPECT_NE(e.find("requant table: shift 32 of channel 0 outside 0..31"), std::string::npos) << e;
  e = matmulStages(t, nullptr, {-1}, 1);
  EXPECT_NE(e.find("requant table: shift -1 of channel 0 outside 0..31"), std::string::npos) << e;
}

TEST(SimArithmetic, AccumulatorOverflowIsALimitError) {
  // npu-default with a 16-bit accumulator: 8 terms of (-128) * (-128) = 131072 overflow it.
  auto t = loadTarget("npu-default");
  ASSERT_TRUE(t.ok());
  CTable table(*t);
  npucc_target_desc d = *table.get();
  d.acc_bits = 16;
  I32 rq = {1 << 30, 0};
  EXPECT_EQ(matmulStages("npu-default", &d, rq, 1, -128, -128, 1), "");
  std::string e = matmulStages("npu-default", &d, rq, 1, -128, -128, 8);
  EXPECT_NE(e.find("accumulator overflow: 131072 does not fit 16 bits"), std::string::npos) << e;
}

TEST(SimArithmetic, MulShiftAddTablesMustFitTheOperationsWidths) {
  // npu-msa's matmul: mul 16 bits (signed), shift 6 bits, add 16 bits (signed).
  const std::string t = npucc::test::testTarget("npu-msa.json");
  int8_t got = 0;
  // acc = 4 * 3 * 5 = 60; floor(60 * 3 / 2) + 5 = 95.
  EXPECT_EQ(matmulStages(t, nullptr, {3, 1, 5}, 1, 3, 5, 4, &got), "");
  EXPECT_EQ(got, 95);
  EXPECT_EQ(matmulStages(t, nullptr, {-32768, 0, 32767}, 1), "");
  std::string e = matmulStages(t, nullptr, {32768, 0, 0}, 1);
  EXPECT_NE(e.find("requant table: mul 32768 of channel 0 does not fit the operation's 16 signed "
                   "bits"),
            std::string::npos)
      << e;
  e = matmulStages(t, nullptr, {1, 0, -32769}, 1);
  EXPECT_NE(e.find("requant table: add -32769 of channel 0 does not fit the operation's 16 signed "
                   "bits"),
            std::string::npos)
      << e;
}

TEST(SimArithmetic, PwlTablesUseAtMostTheOperationsSegments) {
  // npu-pwl's depthwise fits 8 segments: a table whose ninth record differs is refused.
  Rig r(npucc::test::testTarget("npu-pwl.json"));
  ASSERT_TRUE(r.ok());
  ASSERT_NE(r.D->stage_params, nullptr);
  EXPECT_EQ(r.D->stage_params[NPUCC_KIND_DEPTHWISE * NPUCC_SP_COUNT + NPUCC_SP_PWL_SEGMENTS], 8);
  std::vector<uint8_t> t(NPUCC_PWL_TABLE_BYTES, 0);
  auto segment = [&](unsigned i, uint8_t v) {
    for (unsigned k = i; k < NPUCC_PWL_SEGMENTS; ++k) // later records repeat it
      t[8 * k + 3] = v, t[NPUCC_PWL_SEGMENTS * 8 + k] = v;
  };
  for (unsigned i = 0; i < 8; ++i)
    segment(i, uint8_t(i + 1));
  EXPECT_EQ(sim_check_pwl_segments(r.Sim, -1, NPUCC_KIND_DEPTHWISE, t.data()), 0)
      << npucc_sim_error(r.Sim);
  segment(8, 100); // a ninth segment
  EXPECT_EQ(sim_check_pwl_segments(r.Sim, -1, NPUCC_KIND_DEPTHWISE, t.data()), -1);
  EXPECT_NE(std::string(npucc_sim_error(r.Sim))
                .find("pwl segment table: 9 segments in use (record 8 differs from the one before "
                      "it), the operation has 8"),
            std::string::npos)
      << npucc_sim_error(r.Sim);
}

/// A 1x1 conv (4 x 4 x 2 -> 4 x 4 x 3) on npu-fpool (or `desc`; its simulator replaced by one
/// of `alt` when given) with pool_k `k` (and select's kept column `offX`): the simulator's
/// error ("" if none).
std::string pooledConv(const npucc_target_desc *alt, int64_t k,
                       const char *desc = "npu-fpool.json", int64_t offX = 0) {
  Rig r(npucc::test::testTarget(desc));
  EXPECT_TRUE(r.ok());
  if (!r.ok())
    return "no simulator";
  if (alt)
    runOn(r, alt);
  std::mt19937 g(3);
  Quant q(g, *r.T.operation("conv"), 3);
  auto p = r.params();
  p[NPUCC_P_IN_ADDR] = int64_t(r.load(randI8(g, 32)));
  p[NPUCC_P_W_ADDR] = int64_t(r.constant("conv", Operand::W, randI8(g, 6)));
  q.program(r, p, "conv");
  p[NPUCC_P_OUT_ADDR] = int64_t(r.spmAlloc(48));
  p[NPUCC_P_IN_H] = 4, p[NPUCC_P_IN_W] = 4, p[NPUCC_P_IN_CH] = 2;
  p[NPUCC_P_OUT_H] = 4, p[NPUCC_P_OUT_W] = 4, p[NPUCC_P_OUT_CH] = 3;
  p[NPUCC_P_POOL_K] = k;
  p[NPUCC_P_POOL_OFF_X] = offX;
  int bad = -1;
  EXPECT_EQ(npucc_npu_issue(r.D, NPUCC_KIND_CONV, p.data(), &bad), NPUCC_OK);
  if (npucc_hal_wait(NPUCC_ENGINE_COMPUTE, 10000000) != NPUCC_OK || npucc_sim_failed(r.Sim))
    return npucc_sim_error(r.Sim);
  return "";
}

/// pool max (phase 7e): pool_k 1 is no pool; a window must divide the computed output and
/// needs the max stage (the pooled results: SimCommands on npu-fpool).
TEST(SimArithmetic, PoolMaxWindowMustDivideTheOutputAndNeedsTheStage) {
  EXPECT_EQ(pooledConv(nullptr, 1), "");
  EXPECT_EQ(pooledConv(nullptr, 2), "");
  EXPECT_EQ(pooledConv(nullptr, 4), "");
  std::string e = pooledConv(nullptr, 0);
  EXPECT_NE(e.find("field value out of range: pool_k 0"), std::string::npos) << e;
  e = pooledConv(nullptr, 3);
  EXPECT_NE(e.find("field value out of range: pool_k 3 does not divide the output 4x4"),
            std::string::npos)
      << e;
  // The same command on a description whose conv has no pool stage.
  auto t = loadTarget(npucc::test::testTarget("npu-fpool.json"));
  ASSERT_TRUE(t.ok()) << t.error().str();
  CTable table(*t);
  npucc_target_desc d = *table.get();
  ASSERT_NE(d.arith, nullptr);
  std::vector<uint8_t> arith(d.arith, d.arith + NPUCC_KIND_COUNT * NPUCC_SLOT_COUNT);
  arith[NPUCC_KIND_CONV * NPUCC_SLOT_COUNT + NPUCC_SLOT_POOL] = NPUCC_STAGE_POOL_NONE;
  d.arith = arith.data();
  EXPECT_EQ(pooledConv(&d, 1), "");
  e = pooledConv(&d, 2);
  EXPECT_NE(e.find("field value out of range: pool_k 2 but the operation's pool stage is none"),
            std::string::npos)
      << e;
}

/// pool select (phase 7e, second part): the kept pixel must lie in the window (the selected
/// results: SimCommands on npu-select, every offered offset).
TEST(SimArithmetic, PoolSelectOffsetMustLieInTheWindow) {
  EXPECT_EQ(pooledConv(nullptr, 2, "npu-select.json", 0), "");
  EXPECT_EQ(pooledConv(nullptr, 2, "npu-select.json", 1), "");
  std::string e = pooledConv(nullptr, 1, "npu-select.json", 1);
  EXPECT_NE(e.find("field value out of range: pool offset (0, 1) outside the 1x1 window"),
            std::string::npos)
      << e;
  e = pooledConv(nullptr, 3, "npu-select.json", 0);
  EXPECT_NE(e.find("field value out of range: pool_k 3 does not divide the output 4x4"),
            std::string::npos)
      << e;
}

/// The pool stage's lists in the C table (stage_params' NPUCC_SPP_* rows): a window the
/// description lists runs, another is refused, naming the value and the list.
TEST(SimArithmetic, PoolWindowMustBeListed) {
  auto t = loadTarget(npucc::test::testTarget("npu-fpool.json"));
  ASSERT_TRUE(t.ok()) << t.error().str();
  CTable table(*t);
  npucc_target_desc d = *table.get();
  ASSERT_NE(d.stage_params, nullptr);
  size_t conv = NPUCC_SPP_BASE + NPUCC_KIND_CONV * NPUCC_SPP_COUNT + NPUCC_SPP_KERNELS;
  size_t dw = NPUCC_SPP_BASE + NPUCC_KIND_DEPTHWISE * NPUCC_SPP_COUNT + NPUCC_SPP_KERNELS;
  EXPECT_EQ(d.stage_params[conv], (1u << 2) | (1u << 4)); // conv: [2, 4]
  EXPECT_EQ(d.stage_params[dw], 1u << 2);                 // depthwise: [2]
  EXPECT_EQ(pooledConv(&d, 4), "");
  // The same description with conv offering only 2.
  std::vector<uint8_t> sp(d.stage_params,
                          d.stage_params + NPUCC_SPP_BASE + NPUCC_KIND_COUNT * NPUCC_SPP_COUNT);
  sp[conv] = 1u << 2;
  d.stage_params = sp.data();
  EXPECT_EQ(pooledConv(&d, 2), "");
  std::string e = pooledConv(&d, 4);
  EXPECT_NE(e.find("field value out of range: pool_k 4 is not one of the max pool stage's "
                   "windows (2)"),
            std::string::npos)
      << e;
}

/// select's kept pixel must be one the description offers (npu-select offers (0, 0) and
/// (0, 1); its HAL cannot program another, so the simulator's table offers (0, 0) only).
TEST(SimArithmetic, PoolSelectOffsetMustBeOffered) {
  auto t = loadTarget(npucc::test::testTarget("npu-select.json"));
  ASSERT_TRUE(t.ok()) << t.error().str();
  CTable table(*t);
  npucc_target_desc d = *table.get();
  ASSERT_NE(d.stage_params, nullptr);
  size_t conv = NPUCC_SPP_BASE + NPUCC_KIND_CONV * NPUCC_SPP_COUNT;
  EXPECT_EQ(d.stage_params[conv + NPUCC_SPP_KERNELS], 1u << 2);
  EXPECT_EQ(d.stage_params[conv + NPUCC_SPP_OFFSETS], (1u << 0) | (1u << 1)); // (0, 0), (0, 1)
  EXPECT_EQ(pooledConv(&d, 2, "npu-select.json", 1), "");
  std::vector<uint8_t> sp(d.stage_params,
                          d.stage_params + NPUCC_SPP_BASE + NPUCC_KIND_COUNT * NPUCC_SPP_COUNT);
  sp[conv + NPUCC_SPP_OFFSETS] = 1u << 0;
  d.stage_params = sp.data();
  EXPECT_EQ(pooledConv(&d, 2, "npu-select.json", 0), "");
  std::string e = pooledConv(&d, 2, "npu-select.json", 1);
  EXPECT_NE(
      e.find("field value out of range: pool offset (0, 1) is not one the select stage offers "
             "([0, 0])"),
      std::string::npos)
      << e;
}

} // namespace
