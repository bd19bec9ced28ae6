//===- target_proofs_test.cpp - What the loader proves, and its messages ---===//
//
// Descriptions the loader used to accept and whose programs then failed only
// when they ran (issue 23), each refused with its JSON path now or honoured:
// a system window or scratchpad beyond the DMA's address fields, DMA lengths
// in units the compiler cannot honour, address fields in units (they raise
// the effective alignment), stride limits of 0 (allowed, as documented).
// And the loader messages the issue found wanting: register widths, offsets
// above 32 bits, a status bit in a doorbell register, parameter and key
// suggestions.
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

/// The error of npu-default with `edit` applied ("" if it loads).
std::string defaultErr(const std::function<void(json &)> &edit) {
  json j =
      json::parse(readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
  edit(j);
  auto r = parseTargetJson(j.dump(2), "npu.json");
  return r ? std::string() : r.error().str();
}

// --- Every memory within the DMA's address fields ------------------------------------------

TEST(TargetProofs, WindowBeyondTheDmaAddressFieldsIsRefused) {
  // A 64-bit (here 40-bit) window behind 32-bit address registers compiled and
  // failed at run time (model_run returned -2).
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/address_bits", 40);
              set(j, "/memories/system/0/base", "0xA0_0000_0000");
            }),
            "mini.json: error: /memories/system/0: system memory 'ram' "
            "(0xa000000000..0xa000000fff) is beyond the dma command's 'src_addr': its field 'A' "
            "holds 0x0..0xffffffff; the DMA could not read it");
  // Reading it is not enough for a writable window.
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/address_bits", 40);
              set(j, "/memories/system/0/base", "0xA0_0000_0000");
              set(j, "/registers/6/fields/0/width", 8);
              set(j, "/commands/dma/params/src_addr", {{"fields", {"A", "DIMS.n"}}});
            }),
            "mini.json: error: /memories/system/0: system memory 'ram' "
            "(0xa000000000..0xa000000fff) is beyond the dma command's 'dst_addr': its field 'B' "
            "holds 0x0..0xffffffff; the DMA could not write it");
  // A read-only window needs only src_addr.
  auto r = parseEdited([](json &j) {
    set(j, "/address_bits", 40);
    set(j, "/memories/system/0/base", "0xA0_0000_0000");
    set(j, "/memories/system/0/access", "ro");
    set(j, "/registers/6/fields/0/width", 8);
    set(j, "/commands/dma/params/src_addr", {{"fields", {"A", "DIMS.n"}}});
  });
  EXPECT_TRUE(r.ok()) << r.error().str();
  // The scratchpad too: the DMA moves every operand in and out.
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/commands/dma/params/dst_addr", {{"field", "B"}, {"minus", "0x1000"}});
            }),
            "mini.json: error: /memories/scratchpads/0: scratchpad 'spm' (0x0..0xfff) is beyond "
            "the dma command's 'dst_addr': its field 'B' holds 0x1000..0x100000fff; the DMA "
            "could not write it");
}

// --- DMA counts in units of 1; address units are alignment -----------------------------------

TEST(TargetProofs, DmaLengthInUnitsIsRefused) {
  // Lengths in 8-byte units were accepted; the program's odd lengths then
  // failed when issued (NPUCC_ERR_ALIGN, -3).
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/commands/dma/params/length", {{"field", "C"}, {"shift", 3}});
            }),
            "mini.json: error: /commands/dma/params/length: the dma command holds 'length' in "
            "units of 8 (shift 3): NHWC rows can have any length; a DMA length unit of 8 needs "
            "a layout that pads rows to it");
  // Stored minus one is fine: every length from 1 on is encodable.
  auto r = parseEdited([](json &j) {
    set(j, "/commands/dma/params/length", {{"field", "C"}, {"minus", 1}});
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->paramRange("dma", "length").lo, 1);
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/commands/dma/params/length", {{"field", "C"}, {"minus", 2}});
            }),
            "mini.json: error: /commands/dma/params/length: the dma command cannot carry a length "
            "of 1 byte");
}

TEST(TargetProofs, DmaLengthUnitIsAcceptedOnlyWhenHonoured) {
  // "dma": {"length_unit": N}: 1 is every description's unit today.
  auto r = parseEdited([](json &j) { set(j, "/dma/length_unit", 1); });
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->dma.lengthUnit, 1u);
  // Accepted, a unit of 8 made every odd-length row fail when it ran
  // (NPUCC_ERR_ALIGN, -3): activations are NHWC rows of any length.
  EXPECT_EQ(errOf([](json &j) { set(j, "/dma/length_unit", 8); }),
            "mini.json: error: /dma/length_unit: NHWC rows can have any length; a DMA length "
            "unit of 8 needs a layout that pads rows to it");
  EXPECT_EQ(errOf([](json &j) { set(j, "/dma/length_unit", 0); }),
            "mini.json: error: /dma/length_unit: value 0 out of range 1..65535");
  // A length field in units coarser than the declared unit cannot carry it.
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/dma/length_unit", 4);
              set(j, "/commands/dma/params/length", {{"field", "C"}, {"shift", 3}});
            }),
            "mini.json: error: /commands/dma/params/length: the dma command holds 'length' in "
            "units of 8 (shift 3), which cannot carry every multiple of /dma/length_unit 4");
}

TEST(TargetProofs, AddressUnitsBecomeTheAlignment) {
  // src_addr in 4-byte units: every DMA address must be a multiple of 4, so the
  // effective DMA alignment (what the compiler allocates with, and the C table
  // the simulator checks) is 4.
  auto r = parseEdited([](json &j) {
    set(j, "/commands/dma/params/src_addr", {{"field", "A"}, {"shift", 2}});
    set(j, "/commands/matmul/params/w_addr", {{"field", "B"}, {"shift", 5}});
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->dma.alignment, 4u);
  EXPECT_EQ(CTable(*r).get()->dma_alignment, 4u);
  EXPECT_EQ(r->scratchpads[0].alignmentOf(Operand::W), 32u);
  EXPECT_EQ(r->scratchpads[0].alignmentOf(Operand::In), 1u);
  // A unit whose minus is not a multiple of it could only hold unaligned addresses.
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/commands/dma/params/src_addr", {{"field", "A"}, {"shift", 4}, {"minus", 8}});
            }),
            "mini.json: error: /commands/dma/params/src_addr: 'src_addr' is held in units of 16 "
            "bytes after subtracting minus 0x8, which is not a multiple of 16: no aligned address "
            "could be encoded");
}

// --- Messages ---------------------------------------------------------------------------------

TEST(TargetProofs, RegisterWidthAndOffsetMessages) {
  // 128 and 24 get the same message (64 said "out of range 8..32" before it was a width).
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/2/width", 128); }),
            "mini.json: error: /registers/2/width: register width must be 8, 16, 32 or 64 bits, "
            "got 128");
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/2/width", 24); }),
            "mini.json: error: /registers/2/width: register width must be 8, 16, 32 or 64 bits, "
            "got 24");
  // Offsets are hexadecimal in messages, this one too.
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/2/offset", "0x1_0000_0000"); }),
            "mini.json: error: /registers/2/offset: offset 0x100000000 does not fit in 32 bits");
}

TEST(TargetProofs, StatusBitInADoorbellRegisterIsReportedAtTheStatusBit) {
  EXPECT_EQ(errOf([](json &j) {
              j["registers"][0]["fields"].push_back({{"name", "busy"}, {"lsb", 5}, {"width", 1}});
              del(j, "/status/register");
              set(j, "/status/dma/busy", "CTRL.busy");
            }),
            "mini.json: error: /status/dma/busy: status bit 'CTRL.busy' is in register 'CTRL', "
            "which command 'dma' writes (/commands/dma/select); make it the doorbell's "
            "start_bit, guard it with a write_enable field, or mark 'CTRL' \"write\": \"rmw\"");
  // A parameter bound into a status register is the command's mistake.
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/dma/params/length", "STATUS"); }),
            "mini.json: error: /commands/dma/params/length: register 'STATUS' holds status bit "
            "'STATUS.busy' (/status/dma/busy); command 'dma' cannot write it; make it the "
            "doorbell's start_bit, guard it with a write_enable field, or mark 'STATUS' \"write\": "
            "\"rmw\"");
}

TEST(TargetProofs, Suggestions) {
  // "kh" is 'k_h' (it suggested 'k', a matmul parameter).
  EXPECT_EQ(defaultErr([](json &j) {
              j["commands"]["conv"]["params"]["kh"] = j["commands"]["conv"]["params"]["k_h"];
              j["commands"]["conv"]["params"].erase("k_h");
            }),
            "npu.json: error: /commands/conv/params/kh: unknown semantic parameter 'kh' (did you "
            "mean 'k_h'?)");
  // A misspelt kernel_sizes is named where the required list is missing.
  EXPECT_EQ(defaultErr([](json &j) {
              json &conv = j["compute"]["operations"]["conv"];
              conv["kernel_size"] = conv["kernel_sizes"];
              conv.erase("kernel_sizes");
            }),
            "npu.json: error: /compute/operations/conv/kernel_sizes: operation 'conv' needs "
            "kernel_sizes (or kernel_heights and kernel_widths); unknown field 'kernel_size' (did "
            "you mean 'kernel_sizes'?)");
}

// --- The one table of parameter -> field bounds -----------------------------------------------

TEST(TargetProofs, ParamTableNamesCommandParameterAndField) {
  auto r = loadTarget("npu-small");
  ASSERT_TRUE(r.ok()) << r.error().str();
  const ParamRange &in = r->paramBounds(commandKindId("conv"), paramId("in_addr"));
  EXPECT_TRUE(in.bound);
  EXPECT_EQ(in.field, "A0.x");
  EXPECT_EQ(in.step, 16);
  EXPECT_TRUE(in.holds(0x10000010));
  EXPECT_FALSE(in.holds(0x10000018));
  EXPECT_EQ(r->paramProblem(commandKindId("conv"), paramId("in_addr"), 0x10000018),
            "command 'conv' parameter 'in_addr' = 0x10000018 does not fit its field 'A0.x' "
            "(0x10000000..0x1000fff0 in units of 16)");
  EXPECT_EQ(r->paramProblem(commandKindId("conv"), paramId("per_channel"), 0),
            "command 'conv' parameter 'per_channel' = 0 but the command fixes it to 1");
  EXPECT_EQ(r->paramProblem(commandKindId("conv"), paramId("k_h"), 3), "");
}

} // namespace
