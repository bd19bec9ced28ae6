//===- target_operands_test.cpp - "operands": what the NPU reads from system memory ===//
//
// Issue 19, phase 5: an operation's constant operands (w, bias, rq) may be
// read by the NPU from system memory itself. The loader's refusals, each
// with its JSON path; what it derives (alignments, the C table's
// operand_mem); the proof of the address fields' reach is in npu_proof_test.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"

#include <gtest/gtest.h>

#include "TargetJsonEdit.h"

using namespace npucc::target;
using namespace npucc::test;

namespace {

json defaultJson() {
  return json::parse(readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
}

/// The error of npu-default whose `op` has "operands": `operands` ("" if it loads).
std::string operandsErr(const char *op, const json &operands) {
  json j = defaultJson();
  j["compute"]["operations"][op]["operands"] = operands;
  auto r = parseTargetJson(j.dump(2), "npu.json");
  return r ? std::string() : r.error().str();
}

json sys(unsigned align = 0) {
  json o = {{"memory", "system"}};
  if (align)
    o["alignment"] = align;
  return o;
}

TEST(TargetOperands, Refusals) {
  EXPECT_EQ(operandsErr("conv", {{"acts", sys()}}),
            "npu.json: error: /compute/operations/conv/operands/acts: unknown operand 'acts' "
            "(did you mean 'act'?) (expected in, in2, w, bias, rq, out or act)");
  EXPECT_EQ(operandsErr("conv", {{"act", sys()}}),
            "npu.json: error: /compute/operations/conv/operands/act: operand 'act' is the table "
            "of the lut256 activation stage; operation 'conv' has the clamp stage");
  EXPECT_EQ(operandsErr("pool", {{"w", sys()}}),
            "npu.json: error: /compute/operations/pool/operands/w: operation 'pool' does not "
            "read operand 'w'");
  EXPECT_EQ(operandsErr("conv", {{"w", {{"memory", "dram"}}}}),
            "npu.json: error: /compute/operations/conv/operands/w/memory: unknown memory 'dram' "
            "(expected scratchpad or system)");
  EXPECT_EQ(operandsErr("conv", {{"in", sys()}}),
            "npu.json: error: /compute/operations/conv/operands/in/memory: operand 'in' is an "
            "activation: npucc keeps activations in the scratchpad (only w, bias, rq and act may "
            "be read from system memory)");
  EXPECT_EQ(operandsErr("conv", {{"w", sys(24)}, {"bias", sys()}, {"rq", sys()}}),
            "npu.json: error: /compute/operations/conv/operands/w/alignment: alignment 24 is not "
            "a power of two");
  EXPECT_EQ(operandsErr("conv", {{"w", {{"memory", "scratchpad"}, {"alignment", 16}}}}),
            "npu.json: error: /compute/operations/conv/operands/w/alignment: an alignment "
            "applies to an operand in system memory; a scratchpad operand's is "
            "/memories/scratchpads/N/operand_alignment");
  EXPECT_EQ(operandsErr("matmul", {{"w", sys()}, {"bias", sys()}}),
            "npu.json: error: /compute/operations/matmul/operands: operands w, bias and rq of "
            "operation 'matmul' are one record per output-channel block in the constant blob: "
            "give them the same memory");
  EXPECT_EQ(operandsErr("conv", {{"w", {{"memory", "system"}, {"aligment", 16}}}}),
            "npu.json: error: /compute/operations/conv/operands/w/aligment: unknown field "
            "'aligment' (did you mean 'alignment'?)");
  EXPECT_EQ(operandsErr("conv", {{"in", {{"memory", "scratchpad"}}}}), "");
}

TEST(TargetOperands, SystemOperandsInTheDescriptionAndTheCTable) {
  json j = defaultJson();
  j["compute"]["operations"]["conv"]["operands"] = {
      {"w", sys(256)}, {"bias", sys()}, {"rq", sys(8)}};
  // bias_addr in units of 32 bytes: the unit becomes bias's system alignment.
  j["commands"]["conv"]["params"]["bias_addr"] = {{"field", "COMP_BIAS"}, {"shift", 5}};
  auto r = parseTargetJson(j.dump(2), "npu.json");
  ASSERT_TRUE(r.ok()) << r.error().str();
  const OpLimits &conv = *r->operation("conv");
  EXPECT_TRUE(conv.inSystem(Operand::W));
  EXPECT_FALSE(conv.inSystem(Operand::In));
  EXPECT_EQ(conv.systemAlignment[size_t(Operand::W)], 256u);
  EXPECT_EQ(conv.systemAlignment[size_t(Operand::Bias)], 32u);
  EXPECT_EQ(conv.systemAlignment[size_t(Operand::Rq)], 8u);
  EXPECT_FALSE(r->operation("matmul")->inSystem(Operand::W));
  CTable table(*r);
  const npucc_op_limits &l = table.get()->ops[NPUCC_KIND_CONV];
  EXPECT_EQ(l.operand_mem, (1u << NPUCC_OPND_W) | (1u << NPUCC_OPND_BIAS) | (1u << NPUCC_OPND_RQ));
  EXPECT_EQ(l.operand_align_log2[NPUCC_OPND_W], 8);
  EXPECT_EQ(l.operand_align_log2[NPUCC_OPND_BIAS], 5);
  EXPECT_EQ(l.operand_align_log2[NPUCC_OPND_RQ], 3);
  EXPECT_EQ(table.get()->ops[NPUCC_KIND_MATMUL].operand_mem, 0u);
}

} // namespace
