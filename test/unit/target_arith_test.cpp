//===- target_arith_test.cpp - compute.operations.<op>.arithmetic ---------===//
//
// Issue 19, phase 7: the arithmetic of a MAC operation as a pipeline of
// stages (NPUCC_STAGE_LIST). The loader's acceptance and refusals (each with
// its JSON path), the C table's pipeline rows (absent for the defaults, so
// existing tables stay byte-identical), the legality of the fp32_scale
// requantization and the records it writes (one binary32 scale per channel),
// the shift stage's acceptance and refusal.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"
#include "npucc_stages.h"

#include <gtest/gtest.h>

#include "TargetJsonEdit.h"
#include "TestTargets.h"

using namespace npucc::target;
using namespace npucc::test;

namespace {

json defaultJson() {
  return json::parse(readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
}

/// The error of npu-default whose `op` has "arithmetic": `a` ("" if it loads).
std::string arithErr(const char *op, const json &a, bool perTensorOnly = false) {
  json j = defaultJson();
  j["compute"]["operations"][op]["arithmetic"] = a;
  if (perTensorOnly)
    j["compute"]["operations"][op]["requant"] = {"per_tensor"};
  auto r = parseTargetJson(j.dump(2), "npu.json");
  return r ? std::string() : r.error().str();
}

TEST(TargetArith, Refusals) {
  EXPECT_EQ(arithErr("pool", {{"requant", "q31"}}),
            "npu.json: error: /compute/operations/pool/arithmetic: operation 'pool' has no "
            "arithmetic pipeline (only conv, depthwise and matmul have one)");
  EXPECT_EQ(arithErr("conv", {{"requnt", "q31"}}),
            "npu.json: error: /compute/operations/conv/arithmetic/requnt: unknown pipeline slot "
            "'requnt' (did you mean 'requant'?) (slots: input, correction, mac, requant, "
            "activation, pool, output)");
  EXPECT_EQ(
      arithErr("conv", {{"requant", "fp32_scal"}}),
      "npu.json: error: /compute/operations/conv/arithmetic/requant: unknown requant stage "
      "'fp32_scal' (did you mean 'fp32_scale'?) (expected q31, fp32_scale, shift, mul_shift_add)");
  EXPECT_EQ(arithErr("matmul", {{"activation", "sigmoid"}}),
            "npu.json: error: /compute/operations/matmul/arithmetic/activation: unknown "
            "activation stage 'sigmoid' (expected clamp, lut256, pwl)");
  EXPECT_EQ(arithErr("conv", {{"activation", "lut256"}}),
            "npu.json: error: /compute/operations/conv/arithmetic/activation: activation stage "
            "lut256 reads its 256-byte table at parameter 'act_addr': bind it in "
            "/commands/conv/params");
  EXPECT_EQ(arithErr("conv", {{"requant", 1}}),
            "npu.json: error: /compute/operations/conv/arithmetic/requant: expected a string, "
            "got integer");
  EXPECT_EQ(arithErr("conv", "fp32_scale"),
            "npu.json: error: /compute/operations/conv/arithmetic: expected an object, got string");
  EXPECT_EQ(arithErr("depthwise", {{"requant", "fp32_scale"}}, true),
            "npu.json: error: /compute/operations/depthwise/arithmetic/requant: requant stage "
            "fp32_scale reads a binary32 scale per channel from the rq table: operation "
            "'depthwise' needs the per_channel requant mode");
  EXPECT_EQ(arithErr("matmul", {{"requant", "shift"}}, true),
            "npu.json: error: /compute/operations/matmul/arithmetic/requant: requant stage "
            "shift reads a right shift per channel from the rq table: operation 'matmul' needs "
            "the per_channel requant mode");
}

TEST(TargetArith, ShiftStageAccepted) {
  EXPECT_EQ(arithErr("conv", {{"requant", "shift"}}), "");
  auto r = loadTarget(testTarget("npu-shift.json"));
  ASSERT_TRUE(r.ok()) << r.error().str();
  for (const char *op : {"conv", "depthwise", "matmul"})
    EXPECT_EQ(r->operation(op)->stage(NPUCC_SLOT_REQUANT), NPUCC_STAGE_RQ_SHIFT) << op;
  std::string src = emitCTableSource(*r);
  EXPECT_NE(src.find("    .arith = npu_shift_arith,\n"), std::string::npos) << src;
}

TEST(TargetArith, DefaultsLeaveTheCTableAsItWas) {
  // No key, or every default named: the same table, no pipeline rows.
  for (const json &a : {json(nullptr), json{{"input", "int8"},
                                            {"correction", "subtract_zp"},
                                            {"mac", "mac"},
                                            {"requant", "q31"},
                                            {"activation", "clamp"},
                                            {"pool", "none"},
                                            {"output", "int8"}}}) {
    json j = defaultJson();
    if (!a.is_null())
      j["compute"]["operations"]["conv"]["arithmetic"] = a;
    auto r = parseTargetJson(j.dump(2), "npu.json");
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_TRUE(r->operation("conv")->defaultArithmetic());
    CTable t(*r);
    EXPECT_EQ(t.get()->arith, nullptr);
    EXPECT_EQ(emitCTableSource(*r).find("_arith"), std::string::npos);
  }
}

TEST(TargetArith, Fp32ScaleInTheDescriptionAndTheCTable) {
  json j = defaultJson();
  j["compute"]["operations"]["matmul"]["arithmetic"] = {{"requant", "fp32_scale"}};
  auto r = parseTargetJson(j.dump(2), "npu.json");
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->operation("matmul")->stage(NPUCC_SLOT_REQUANT), NPUCC_STAGE_RQ_FP32);
  EXPECT_EQ(r->operation("conv")->stage(NPUCC_SLOT_REQUANT), NPUCC_STAGE_RQ_Q31);
  CTable t(*r);
  const uint8_t *a = t.get()->arith;
  ASSERT_NE(a, nullptr);
  for (int k = 0; k < NPUCC_KIND_COUNT; ++k)
    for (int s = 0; s < NPUCC_SLOT_COUNT; ++s)
      EXPECT_EQ(a[k * NPUCC_SLOT_COUNT + s], k == NPUCC_KIND_MATMUL && s == NPUCC_SLOT_REQUANT
                                                 ? NPUCC_STAGE_RQ_FP32
                                                 : npucc_stage_default(s))
          << k << " " << s;
  std::string src = emitCTableSource(*r);
  EXPECT_NE(src.find("static const uint8_t npu_default_arith[49] = {"), std::string::npos) << src;
  EXPECT_NE(src.find("    .arith = npu_default_arith,\n"), std::string::npos);
}

/// pwl (phase 7d): the act operand holds its 144-byte segment table; the
/// stage object's "segments" (2..16) caps the compiler's fit.
TEST(TargetArith, PwlStageAndItsSegmentCount) {
  EXPECT_EQ(arithErr("conv", {{"activation", "pwl"}}),
            "npu.json: error: /compute/operations/conv/arithmetic/activation: activation stage "
            "pwl reads its 144-byte segment table at parameter 'act_addr': bind it in "
            "/commands/conv/params");
  EXPECT_EQ(arithErr("conv", {{"activation", {{"stage", "clamp"}, {"segments", 8}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/activation/segments: unknown "
            "field 'segments'");
  EXPECT_EQ(arithErr("conv", {{"pwl_segments", 8}}),
            "npu.json: error: /compute/operations/conv/arithmetic/pwl_segments: unknown pipeline "
            "slot 'pwl_segments' (slots: input, correction, mac, requant, activation, pool, "
            "output)");
  EXPECT_EQ(arithErr("conv", {{"activation", {{"stage", "pwl"}, {"segments", 17}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/activation/segments: value 17 "
            "out of range 2..16");
  EXPECT_EQ(arithErr("conv", {{"activation", {{"stage", "pwl"}, {"segments", 1}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/activation/segments: value 1 "
            "out of range 2..16");
  auto r = loadTarget(testTarget("npu-pwl.json"));
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->operation("conv")->stage(NPUCC_SLOT_ACTIVATION), NPUCC_STAGE_ACT_PWL);
  EXPECT_EQ(r->operation("conv")->pwlSegments, 16u);
  EXPECT_FALSE(r->operation("conv")->inSystem(Operand::Act));
  EXPECT_EQ(r->operation("depthwise")->stage(NPUCC_SLOT_ACTIVATION), NPUCC_STAGE_ACT_PWL);
  EXPECT_EQ(r->operation("depthwise")->pwlSegments, 8u);
  EXPECT_TRUE(r->operation("depthwise")->inSystem(Operand::Act));
  EXPECT_EQ(r->operation("depthwise")->systemAlignment[size_t(Operand::Act)], 8u);
  EXPECT_EQ(r->operation("matmul")->stage(NPUCC_SLOT_ACTIVATION), NPUCC_STAGE_ACT_CLAMP);
}

/// pool max (phase 7e): {"stage": "max", "kernels": [...]} on conv and
/// depthwise, the window size programmed through parameter pool_k.
TEST(TargetArith, PoolMaxStageAndItsKernels) {
  auto r = loadTarget(testTarget("npu-fpool.json"));
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->operation("conv")->stage(NPUCC_SLOT_POOL), NPUCC_STAGE_POOL_MAX);
  EXPECT_EQ(r->operation("conv")->poolKernels, (std::vector<unsigned>{2, 4}));
  EXPECT_EQ(r->operation("depthwise")->poolKernels, (std::vector<unsigned>{2}));
  EXPECT_EQ(r->operation("matmul")->stage(NPUCC_SLOT_POOL), NPUCC_STAGE_POOL_NONE);
  EXPECT_TRUE(r->operation("matmul")->poolKernels.empty());
  // The C table's pipeline row says max for conv and depthwise.
  std::string src = emitCTableSource(*r);
  EXPECT_NE(src.find(std::to_string(NPUCC_STAGE_POOL_MAX)), std::string::npos);

  EXPECT_EQ(arithErr("conv", {{"pool", {{"stage", "max"}, {"kernels", {2}}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/pool: pool stage max takes its "
            "window size from parameter 'pool_k': bind it in /commands/conv/params");
  EXPECT_EQ(arithErr("conv", {{"pool", "max"}}),
            "npu.json: error: /compute/operations/conv/arithmetic/pool: pool stage max needs its "
            "window sizes: write {\"stage\": \"max\", \"kernels\": [2]}");
  EXPECT_EQ(arithErr("matmul", {{"pool", {{"stage", "max"}, {"kernels", {2}}}}}),
            "npu.json: error: /compute/operations/matmul/arithmetic/pool: pool stage max pools a "
            "spatial output: operation 'matmul' has none (only conv and depthwise fuse a pool)");
  EXPECT_EQ(arithErr("conv", {{"pool", "avg"}}),
            "npu.json: error: /compute/operations/conv/arithmetic/pool: unknown pool stage 'avg' "
            "(expected none, max, select)");
  EXPECT_EQ(arithErr("conv", {{"pool", {{"stage", "max"}, {"kernels", {2, 1}}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/pool/kernels/1: a max pool "
            "window of 1 pools nothing (window sizes are 2..31)");
  EXPECT_EQ(arithErr("conv", {{"pool", {{"stage", "max"}, {"kernels", {4, 2}}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/pool/kernels/1: window sizes "
            "must be ascending and distinct");
  EXPECT_EQ(arithErr("conv", {{"pool", {{"stage", "max"}, {"kernels", json::array()}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/pool/kernels: expected a "
            "non-empty list");
  EXPECT_EQ(arithErr("conv", {{"pool", {{"stage", "none"}, {"kernels", {2}}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/pool/kernels: unknown field "
            "'kernels'");
  // A window the bound field cannot hold (COMP_POOL.k is 3 bits wide).
  json j = json::parse(readText(testTarget("npu-fpool.json")), nullptr, true, true);
  j["compute"]["operations"]["conv"]["arithmetic"]["pool"]["kernels"] = {2, 8};
  auto wide = parseTargetJson(j.dump(2), "npu.json");
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.error().str().find("/compute/operations/conv/arithmetic/pool/kernels: pool "
                                    "window 8 cannot be programmed"),
            std::string::npos)
      << wide.error().str();
}

/// pool select (phase 7e, second part): {"stage": "select", "kernels": [...],
/// "offsets": [[row, column], ...]} on conv and depthwise, programmed through
/// pool_k, pool_off_y and pool_off_x (an offset other than 0 needs its
/// parameter bound).
TEST(TargetArith, PoolSelectStageKernelsAndOffsets) {
  auto r = loadTarget(testTarget("npu-select.json"));
  ASSERT_TRUE(r.ok()) << r.error().str();
  using Offsets = std::vector<std::pair<unsigned, unsigned>>;
  for (const char *op : {"conv", "depthwise"}) {
    EXPECT_EQ(r->operation(op)->stage(NPUCC_SLOT_POOL), NPUCC_STAGE_POOL_SELECT) << op;
    EXPECT_EQ(r->operation(op)->poolKernels, (std::vector<unsigned>{2})) << op;
    EXPECT_EQ(r->operation(op)->poolOffsets, (Offsets{{0, 0}, {0, 1}})) << op;
    EXPECT_EQ(r->operation(op)->strides, (std::vector<int>{1})) << op;
  }
  EXPECT_EQ(r->operation("matmul")->stage(NPUCC_SLOT_POOL), NPUCC_STAGE_POOL_NONE);
  std::string src = emitCTableSource(*r);
  EXPECT_NE(src.find(std::to_string(NPUCC_STAGE_POOL_SELECT)), std::string::npos);

  json sel = {{"pool", {{"stage", "select"}, {"kernels", {2}}, {"offsets", {{0, 0}}}}}};
  EXPECT_EQ(arithErr("conv", sel),
            "npu.json: error: /compute/operations/conv/arithmetic/pool: pool stage select takes "
            "its window and kept pixel from parameters 'pool_k', 'pool_off_y', 'pool_off_x': "
            "bind 'pool_k' in /commands/conv/params");
  EXPECT_EQ(arithErr("conv", {{"pool", "select"}}),
            "npu.json: error: /compute/operations/conv/arithmetic/pool: pool stage select needs "
            "its window sizes and offsets: write {\"stage\": \"select\", \"kernels\": [2], "
            "\"offsets\": [[0, 0]]}");
  EXPECT_EQ(arithErr("matmul", sel),
            "npu.json: error: /compute/operations/matmul/arithmetic/pool: pool stage select keeps "
            "pixels of a spatial output: operation 'matmul' has none (only conv and depthwise "
            "fuse a pool)");
  EXPECT_EQ(arithErr("conv", {{"pool", {{"stage", "select"}, {"kernels", {2}}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/pool: missing required field "
            "'offsets'");
  EXPECT_EQ(
      arithErr("conv",
               {{"pool", {{"stage", "select"}, {"kernels", {2}}, {"offsets", json::array()}}}}),
      "npu.json: error: /compute/operations/conv/arithmetic/pool/offsets: the select stage "
      "offers no kept pixel: write \"offsets\": [[0, 0]] (row, column in the window)");
  EXPECT_EQ(arithErr("conv",
                     {{"pool",
                       {{"stage", "select"}, {"kernels", {2, 4}}, {"offsets", {{0, 0}, {0, 2}}}}}}),
            "npu.json: error: /compute/operations/conv/arithmetic/pool/offsets/1/1: offset 2 is "
            "outside the 2x2 window (offsets are 0..k-1 for every k of \"kernels\")");
  EXPECT_EQ(
      arithErr("conv",
               {{"pool", {{"stage", "select"}, {"kernels", {2}}, {"offsets", {{0, 1}, {0, 1}}}}}}),
      "npu.json: error: /compute/operations/conv/arithmetic/pool/offsets/1: offset [0, 1] is "
      "listed twice");
  // The C table carries offsets 0..7 (an 8x8 mask, npucc_desc.h NPUCC_SPP_OFFSETS).
  EXPECT_EQ(
      arithErr("conv", {{"pool", {{"stage", "select"}, {"kernels", {9}}, {"offsets", {{0, 8}}}}}}),
      "npu.json: error: /compute/operations/conv/arithmetic/pool/offsets/0/1: offset 8 is beyond "
      "the simulator's table (offsets are 0..7: the C table's stage_params carries them as an "
      "8x8 bit mask)");
  EXPECT_EQ(
      arithErr("conv", {{"pool", {{"stage", "select"}, {"kernels", {2}}, {"offsets", {{0}}}}}}),
      "npu.json: error: /compute/operations/conv/arithmetic/pool/offsets/0: expected a "
      "[row, column] pair of the kept pixel in the window");
  EXPECT_EQ(
      arithErr("conv", {{"pool", {{"stage", "select"}, {"kernels", {1}}, {"offsets", {{0, 0}}}}}}),
      "npu.json: error: /compute/operations/conv/arithmetic/pool/kernels/0: a select pool "
      "window of 1 pools nothing (window sizes are 2..31)");
  // npu-select binds pool_k and pool_off_x (its offsets' rows are all 0).
  json j = json::parse(readText(testTarget("npu-select.json")), nullptr, true, true);
  json noX = j;
  noX["commands"]["conv"]["params"].erase("pool_off_x");
  auto e1 = parseTargetJson(noX.dump(2), "npu.json");
  ASSERT_FALSE(e1.ok());
  EXPECT_EQ(e1.error().str(),
            "npu.json: error: /compute/operations/conv/arithmetic/pool: pool stage select takes "
            "its window and kept pixel from parameters 'pool_k', 'pool_off_y', 'pool_off_x': "
            "bind 'pool_off_x' in /commands/conv/params");
  json rowOff = j;
  rowOff["compute"]["operations"]["depthwise"]["arithmetic"]["pool"]["offsets"] = {{1, 0}};
  auto e2 = parseTargetJson(rowOff.dump(2), "npu.json");
  ASSERT_FALSE(e2.ok());
  EXPECT_NE(e2.error().str().find("bind 'pool_off_y' in /commands/depthwise/params"),
            std::string::npos)
      << e2.error().str();
  // A kept column the bound field cannot hold (COMP_POOL.off_x is 1 bit wide).
  json wide = j;
  wide["compute"]["operations"]["conv"]["arithmetic"]["pool"] = {
      {"stage", "select"}, {"kernels", {3}}, {"offsets", {{0, 2}}}};
  auto e3 = parseTargetJson(wide.dump(2), "npu.json");
  ASSERT_FALSE(e3.ok());
  EXPECT_NE(e3.error().str().find("/compute/operations/conv/arithmetic/pool/offsets: kept pixel "
                                  "column 2 cannot be programmed"),
            std::string::npos)
      << e3.error().str();
}

TEST(TargetArith, Lut256ReadsItsTableThroughTheActOperand) {
  auto r = loadTarget(testTarget("npu-fp32lut.json"));
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->operation("conv")->stage(NPUCC_SLOT_ACTIVATION), NPUCC_STAGE_ACT_LUT256);
  EXPECT_EQ(r->operation("depthwise")->stage(NPUCC_SLOT_ACTIVATION), NPUCC_STAGE_ACT_CLAMP);
  EXPECT_FALSE(r->operation("conv")->inSystem(Operand::Act));
  EXPECT_TRUE(r->operation("matmul")->inSystem(Operand::Act));
  EXPECT_EQ(r->operation("matmul")->systemAlignment[size_t(Operand::Act)], 64u);
  EXPECT_EQ(operandNames()[size_t(Operand::Act)], "act");
  // The C table: the per-operand rows have the act entry where an operation
  // reads it (matmul's system alignment 2^6; the scratchpad's 16), and only the
  // six older entries where none does (npu-default: its tables stay as they were).
  std::string src = emitCTableSource(*r);
  EXPECT_NE(src.find("{0, 0, 0, 0, 0, 0, 6}}"), std::string::npos) << src;
  EXPECT_NE(src.find("{16, 16, 16, 16, 16, 16, 16}"), std::string::npos) << src;
  auto d = loadTarget("npu-default");
  ASSERT_TRUE(d.ok());
  std::string def = emitCTableSource(*d);
  EXPECT_EQ(def.find("{16, 16, 16, 16, 16, 16, 16}"), std::string::npos) << def;
  EXPECT_NE(def.find("{16, 16, 16, 16, 16, 16}"), std::string::npos) << def;
  EXPECT_NE(def.find("{0, 0, 0, 0, 0, 0}}"), std::string::npos) << def;
  // An operation without the MAC pipeline reads no table.
  json j = defaultJson();
  j["compute"]["operations"]["pool"]["operands"] = {{"act", {{"memory", "system"}}}};
  auto bad = parseTargetJson(j.dump(2), "npu.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().str(), "npu.json: error: /compute/operations/pool/operands/act: "
                               "operation 'pool' does not read operand 'act'");
}

} // namespace
