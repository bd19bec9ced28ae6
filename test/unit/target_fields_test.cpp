//===- target_fields_test.cpp - A command's computed "fields" -------------===//
//
// Issue 19, phase 3, on npu-default with one edit each: the loader accepts
// constants, expressions (an affine one of an unbound parameter becomes its
// binding) and cases tables, and refuses, with the JSON path, an unknown
// name, a parameter the command does not take, a constant too wide, a field
// written twice, a cases table missing a listed kernel size, a parameter
// only expressions read, an expression that never fits. The command layer
// encodes computed fields after the bindings (NPUCC_ERR_RANGE naming the
// expression's first parameter), the simulator recovers k_h from a kernel
// type and catches a hand-written field that disagrees, and the scheduler's
// proof makes a layer fall back naming the derived field.
//
//===----------------------------------------------------------------------===//
#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/lower/NpuLowering.h"
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"
#include "npucc_npu.h"
#include "npucc_sim.h"

#include "NpuTestOps.h"
#include "TargetJsonEdit.h"

#include <gtest/gtest.h>

using namespace npucc;
using namespace npucc::target;
using npucc::test::json;

namespace {

const std::string DefaultJson = std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json";

/// npu-default with a DERIVED register, edited; "" or the diagnostic.
Result<TargetDesc> edited(const std::function<void(json &)> &edit) {
  json j = json::parse(test::readText(DefaultJson));
  j["registers"].push_back({{"name", "DERIVED"},
                            {"offset", "0x60"},
                            {"fields",
                             {{{"name", "blocks"}, {"lsb", 0}, {"width", 6}},
                              {{"name", "px"}, {"lsb", 8}, {"width", 20}},
                              {{"name", "mode"}, {"lsb", 28}, {"width", 4}}}}});
  edit(j);
  return parseTargetJson(j.dump(2), "edited.json");
}
std::string errOf(const std::function<void(json &)> &edit) {
  auto r = edited(edit);
  return r ? std::string() : r.error().str();
}

/// conv with a kernel type instead of k_h, 6-bit weight blocks of 16
/// channels, the tile's pixels and a constant mode.
void derivedConv(json &j) {
  json &c = j["commands"]["conv"];
  c["params"].erase("k_h");
  json cases = json::array();
  int v = 0;
  for (int k : {1, 2, 3, 5, 7})
    cases.push_back({{"when", {{"k_h", k}}}, {"value", v++}});
  c["fields"] = {{"KERNEL.k_h", {{"cases", cases}}},
                 {"DERIVED.blocks", "cdiv(out_ch, 16) - 1"},
                 {"DERIVED.px", "out_w * out_h - 1"},
                 {"DERIVED.mode", 5}};
}

TEST(TargetFields, EachFormIsAccepted) {
  auto r = edited([](json &j) {
    derivedConv(j);
    j["commands"]["conv"]["params"].erase("out_w");
    j["commands"]["conv"]["fields"]["OUT_SHAPE.w"] = "out_w - 1";
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  const CommandDesc *c = r->command("conv");
  // out_w - 1 of an otherwise unbound parameter is out_w's binding.
  const ParamBinding *w = c->binding("out_w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->minus, 1);
  EXPECT_EQ(w->fromExpr, "out_w - 1");
  ParamRange rw = r->paramRange("conv", "out_w");
  EXPECT_EQ(rw.lo, 1);
  EXPECT_EQ(rw.hi, 1024);
  // k_h comes from the kernel type: exactly the listed sizes.
  ASSERT_EQ(c->fields.size(), 4u);
  ParamRange rk = r->paramRange("conv", "k_h");
  EXPECT_TRUE(rk.bound);
  EXPECT_EQ(rk.values, (std::vector<int64_t>{1, 2, 3, 5, 7}));
  EXPECT_FALSE(rk.holds(4));
  EXPECT_EQ(r->paramProblem(NPUCC_KIND_CONV, NPUCC_P_K_H, 4),
            "command 'conv' parameter 'k_h' = 4 has no case in the table of its field "
            "'KERNEL.k_h' (1, 2, 3, 5, 7)");
  std::string h = emitRegisterHeader(*r);
  for (const char *line :
       {" *   OUT_SHAPE.w <- out_w - 1\n", " *   DERIVED.blocks <- cdiv(out_ch, 16) - 1\n",
        " *   DERIVED.mode <- 5\n",
        " *   KERNEL.k_h <- cases (the simulator reads k_h from it):\n"
        " *       k_h = 1: 0\n"})
    EXPECT_NE(h.find(line), std::string::npos) << line << h;
  std::string src = emitCTableSource(*r);
  EXPECT_NE(src.find("{NPUCC_EXPR_CDIV, 0},"), std::string::npos);
  EXPECT_NE(src.find(".num_field_bindings = 4,"), std::string::npos);
}

TEST(TargetFields, PoolKindsByName) {
  auto r = edited([](json &j) {
    json cases = json::array();
    cases.push_back({{"when", {{"pool_kind", "max"}}}, {"value", 2}});
    cases.push_back({{"when", {{"pool_kind", "avg"}}}, {"value", 3}});
    j["commands"]["pool"]["params"].erase("pool_kind");
    j["commands"]["pool"]["fields"]["COMP_CTRL.pool_kind"]["cases"] = cases;
  });
  EXPECT_FALSE(r.ok()) << "a 2-bit table value in a 1-bit field";
  EXPECT_EQ(r.error().str(), "edited.json: error: /commands/pool/fields/COMP_CTRL.pool_kind/"
                             "cases/0/value: value 2 does not fit 1-bit field "
                             "'COMP_CTRL.pool_kind' (0..1)");
  auto ok = edited([](json &j) {
    json cases = json::array();
    cases.push_back({{"when", {{"pool_kind", "avg"}}}, {"value", 1}});
    cases.push_back({{"when", {{"pool_kind", "max"}}}, {"value", 0}});
    j["commands"]["pool"]["params"].erase("pool_kind");
    j["commands"]["pool"]["fields"]["COMP_CTRL.pool_kind"]["cases"] = cases;
  });
  ASSERT_TRUE(ok.ok()) << ok.error().str();
  EXPECT_EQ(ok->paramRange("pool", "pool_kind").values,
            (std::vector<int64_t>{NPUCC_POOL_MAX, NPUCC_POOL_AVG}));
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["pool"]["fields"]["DERIVED.mode"]["cases"] = {
                  {{"when", {{"pool_kind", "min"}}}, {"value", 0}}};
            }),
            "edited.json: error: /commands/pool/fields/DERIVED.mode/cases/0/when/pool_kind: "
            "unknown pool_kind 'min' (expected max, avg or an integer)");
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["pool"]["fields"]["DERIVED.mode"]["cases"] = {
                  {{"when", {{"k_h", "three"}}}, {"value", 0}}};
            }),
            "edited.json: error: /commands/pool/fields/DERIVED.mode/cases/0/when/k_h: "
            "parameter 'k_h' takes an integer");
}

TEST(TargetFields, RefusalsNameTheirPath) {
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["conv"]["fields"] = {{"DERIVED.px", "out_c - 1"}};
            }),
            "edited.json: error: /commands/conv/fields/DERIVED.px: column 1: unknown parameter "
            "'out_c' (did you mean 'out_ch'?) in 'out_c - 1'");
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["dma"]["fields"] = {{"DERIVED.px", "in_ch * 2"}};
            }),
            "edited.json: error: /commands/dma/fields/DERIVED.px: parameter 'in_ch' does not "
            "apply to command 'dma'");
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["conv"]["fields"] = {{"DERIVED.mode", 16}};
            }),
            "edited.json: error: /commands/conv/fields/DERIVED.mode: constant 16 does not fit "
            "4-bit field 'DERIVED.mode' (0..15)");
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["conv"]["fields"] = {{"KERNEL.k_w", "in_ch * 2"}};
            }),
            "edited.json: error: /commands/conv/fields/KERNEL.k_w: field 'KERNEL.k_w' overlaps "
            "'KERNEL.k_w', already written by this command");
  EXPECT_EQ(errOf([](json &j) {
              derivedConv(j);
              j["commands"]["conv"]["fields"]["KERNEL.k_h"]["cases"].erase(4);
            }),
            "edited.json: error: /commands/conv/fields/KERNEL.k_h: no case for k_h = 7, which "
            "/compute/operations/conv allows");
  // A table that only reads k_h (bound in params) must still cover the list.
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["conv"]["fields"] = {{"DERIVED.mode",
                                                  {{"cases",
                                                    {{{"when", {{"k_h", 1}}}, {"value", 0}},
                                                     {{"when", {{"k_h", 3}}}, {"value", 1}}}}}}};
            }),
            "edited.json: error: /commands/conv/fields/DERIVED.mode: no case for k_h = 2, which "
            "/compute/operations/conv allows");
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["conv"]["params"].erase("k_h");
              j["commands"]["conv"]["fields"] = {{"DERIVED.px", "k_h * k_w"}};
            }),
            "edited.json: error: /commands/conv: parameter 'k_h' appears only in expressions; "
            "bind it to a field of its own or fix it");
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["conv"]["fields"] = {{"DERIVED.blocks", "in_ch + 100"}};
            }),
            "edited.json: error: /commands/conv/fields/DERIVED.blocks: 'in_ch + 100' is "
            "100..4195 for the values command 'conv' carries: it never fits 6-bit field "
            "'DERIVED.blocks' (0..63)");
  EXPECT_EQ(errOf([](json &j) {
              derivedConv(j);
              j["commands"]["conv"]["fields"]["KERNEL.k_h"]["cases"][1]["value"] = 0;
            }),
            "edited.json: error: /commands/conv/fields/KERNEL.k_h/cases/1/value: value 0 is "
            "also case 0's: the simulator could not tell them apart");
  EXPECT_EQ(errOf([](json &j) {
              j["commands"]["conv"]["fields"] = {{"DERIVED.mode", true}};
            }),
            "edited.json: error: /commands/conv/fields/DERIVED.mode: expected an integer, an "
            "expression string or {\"cases\": [...]}, got boolean");
}

struct Enc {
  int rc = 0, bad = -1, n = 0;
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
};

Enc encodeConv(const npucc_target_desc *d, std::vector<int64_t> p) {
  Enc e;
  e.rc = npucc_npu_encode(d, NPUCC_KIND_CONV, p.data(), e.w, &e.n, &e.bad);
  return e;
}

std::vector<int64_t> convParams(int64_t outCh, int64_t kh) {
  std::vector<int64_t> p = CTable::defaultParams();
  p[NPUCC_P_IN_H] = p[NPUCC_P_IN_W] = 8;
  p[NPUCC_P_OUT_H] = p[NPUCC_P_OUT_W] = 8;
  p[NPUCC_P_IN_CH] = 4;
  p[NPUCC_P_OUT_CH] = outCh;
  p[NPUCC_P_K_H] = p[NPUCC_P_K_W] = kh;
  return p;
}

TEST(TargetFields, EncodeDecodeRoundTripAndRange) {
  auto r = edited(derivedConv);
  ASSERT_TRUE(r.ok()) << r.error().str();
  CTable t(*r);
  const npucc_target_desc *d = t.get();
  Enc e = encodeConv(d, convParams(40, 5));
  ASSERT_EQ(e.rc, NPUCC_OK);
  std::vector<uint64_t> regs(d->num_regs, 0);
  for (int i = 0; i < e.n; ++i)
    regs[e.w[i].reg] = e.w[i].value;
  const int derived = int(d->num_regs) - 1, kernel = 14;
  EXPECT_EQ(regs[size_t(derived)] & 0x3f, 2u);            // cdiv(40, 16) - 1
  EXPECT_EQ((regs[size_t(derived)] >> 8) & 0xfffff, 63u); // 8 * 8 - 1
  EXPECT_EQ(regs[size_t(derived)] >> 28, 5u);             // constant
  EXPECT_EQ(regs[size_t(kernel)] & 0xf, 3u);              // k_h 5: case 3
  const npucc_cmd_desc *c = npucc_desc_find_cmd(d, NPUCC_KIND_CONV);
  std::vector<int64_t> back(NPUCC_P_COUNT);
  npucc_npu_decode(d, c, regs.data(), back.data());
  EXPECT_EQ(back[NPUCC_P_K_H], 5);
  EXPECT_EQ(back[NPUCC_P_OUT_CH], 40);
  npucc_field_mismatch m;
  EXPECT_EQ(npucc_npu_check_fields(d, c, regs.data(), back.data(), &m), NPUCC_OK);
  // 64 blocks of 16 do not fit 6 bits: NPUCC_ERR_RANGE naming out_ch.
  e = encodeConv(d, convParams(1025, 3));
  EXPECT_EQ(e.rc, NPUCC_ERR_RANGE);
  EXPECT_EQ(e.bad, NPUCC_P_OUT_CH);
  EXPECT_EQ(encodeConv(d, convParams(1024, 3)).rc, NPUCC_OK);
  // An expression that fails (out_ch 0: cdiv(0, 16) - 1 = -1) and a kernel
  // size without a case.
  e = encodeConv(d, convParams(0, 3));
  EXPECT_EQ(e.rc, NPUCC_ERR_RANGE);
  EXPECT_EQ(e.bad, NPUCC_P_OUT_CH);
  e = encodeConv(d, convParams(16, 4));
  EXPECT_EQ(e.rc, NPUCC_ERR_RANGE);
  EXPECT_EQ(e.bad, NPUCC_P_K_H);
}

TEST(TargetFields, SimulatorCatchesAnInconsistentField) {
  auto r = edited(derivedConv);
  ASSERT_TRUE(r.ok()) << r.error().str();
  CTable t(*r);
  const npucc_target_desc *d = t.get();
  npucc_sim *s = npucc_sim_create(d);
  ASSERT_NE(s, nullptr);
  Enc e = encodeConv(d, convParams(40, 3));
  ASSERT_EQ(e.rc, NPUCC_OK);
  // A firmware packing the words itself writes 3 blocks where 2 are right.
  for (int i = 0; i < e.n; ++i) {
    uint64_t v = e.w[i].value;
    if (e.w[i].reg == d->num_regs - 1)
      v = (v & ~uint64_t(0x3f)) | 3u;
    npucc_sim_reg_write(s, d->regs[e.w[i].reg].offset, v, d->regs[e.w[i].reg].width);
  }
  EXPECT_STREQ(npucc_sim_error(s),
               "command #0 (conv): field 'DERIVED.blocks' holds 3, its expression gives 2");
  npucc_sim_destroy(s);
}

TEST(TargetFields, SimulatorChecksAFenceCommandsConstantField) {
  // npu-third completes through fence commands; its fence gets a constant.
  json j = json::parse(test::readText(test::targetDir() + "npu-third.json"));
  j["registers"].push_back({{"name", "FMODE"},
                            {"offset", "0x7F0"},
                            {"fields", {{{"name", "level"}, {"lsb", 0}, {"width", 2}}}}});
  j["commands"]["fence"]["fields"] = {{"FMODE.level", 2}};
  auto r = parseTargetJson(j.dump(2), "third.json");
  ASSERT_TRUE(r.ok()) << r.error().str();
  CTable t(*r);
  const npucc_target_desc *d = t.get();
  std::vector<int64_t> p = CTable::defaultParams();
  Enc e;
  ASSERT_EQ(npucc_npu_encode(d, NPUCC_KIND_FENCE, p.data(), e.w, &e.n, &e.bad), NPUCC_OK);
  ASSERT_EQ(e.n, 2); // FMODE, then the doorbell
  npucc_sim *s = npucc_sim_create(d);
  ASSERT_NE(s, nullptr);
  const npucc_reg_desc &fm = d->regs[e.w[0].reg];
  EXPECT_STREQ(fm.name, "FMODE");
  npucc_sim_reg_write(s, fm.offset, 1, fm.width);
  npucc_sim_reg_write(s, d->regs[e.w[1].reg].offset, e.w[1].value, d->regs[e.w[1].reg].width);
  EXPECT_STREQ(npucc_sim_error(s),
               "command #0 (fence): field 'FMODE.level' holds 1, its expression gives 2");
  npucc_sim_destroy(s);
}

TEST(TargetFields, ProofFallsBackNamingTheDerivedField) {
  auto r = edited(derivedConv);
  ASSERT_TRUE(r.ok()) << r.error().str();
  // 2048 output channels in one command: cdiv(2048, 16) - 1 = 127 > 63.
  lir::Instr conv;
  conv.opcode = "npu", conv.callee = "conv", conv.token = 0;
  conv.params = {{"in_h", int64_t(4)},  {"in_w", int64_t(4)},  {"in_ch", int64_t(8)},
                 {"out_h", int64_t(4)}, {"out_w", int64_t(4)}, {"out_ch", int64_t(2048)},
                 {"k_h", int64_t(1)},   {"k_w", int64_t(1)},   {"per_channel", int64_t(1)}};
  Status st = lower::npu::proveCommand(conv, *r);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().str(), "error: command 'conv' field 'DERIVED.blocks' = cdiv(out_ch, 16) "
                              "- 1 = 127 does not fit (6 bits, 0..63)");
  conv.params[5].second = int64_t(64);
  EXPECT_TRUE(lower::npu::proveCommand(conv, *r).ok());
  // A layer whose every tiling writes a value its field cannot hold (the
  // tiles keep the full image width) falls back to the CPU, naming the
  // command, the field, the expression, the value and the range.
  auto wide = edited([](json &j) {
    derivedConv(j);
    j["commands"]["conv"]["fields"]["DERIVED.blocks"] = "in_w - 1";
  });
  ASSERT_TRUE(wide.ok()) << wide.error().str();
  std::string why;
  EXPECT_TRUE(lower::npuTilingFits(test::sameConv(8, 64, 8, 8, 3), *wide, &why)) << why;
  EXPECT_FALSE(lower::npuTilingFits(test::sameConv(8, 100, 8, 8, 3), *wide, &why));
  EXPECT_EQ(why, "command 'conv' field 'DERIVED.blocks' = in_w - 1 = 99 does not fit (6 bits, "
                 "0..63)");
}

} // namespace
