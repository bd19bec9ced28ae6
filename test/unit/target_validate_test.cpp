//===- target_validate_test.cpp - Every validation error names its JSON path ===//
//
// Starts from test/target/good_minimal.json, breaks one thing per test and
// checks the complete diagnostic text; the bad_*.json files in test/target
// are checked through loadTarget().
//
//===----------------------------------------------------------------------===//
#include "npucc/target/Target.h"

#include <gtest/gtest.h>

#include "TargetJsonEdit.h"

using namespace npucc::target;
using namespace npucc::test;

namespace {

std::string dir() { return targetDir(); }
std::string readFile(const std::string &p) { return readText(p); }

TEST(TargetValidate, MinimalIsValid) {
  auto r = parseTargetJson(readFile(dir() + "good_minimal.json"), "good_minimal.json");
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->registers.size(), 9u);
  EXPECT_EQ(r->system[0].base, 0x1000u); // hex strings accepted
}

TEST(TargetValidate, MissingRequiredFields) {
  EXPECT_EQ(errOf([](json &j) { del(j, "/dma"); }),
            "mini.json: error: /: missing required field 'dma'");
  EXPECT_EQ(errOf([](json &j) { del(j, "/registers/0/name"); }),
            "mini.json: error: /registers/0: missing required field 'name'");
  EXPECT_EQ(errOf([](json &j) { del(j, "/commands/dma/doorbell"); }),
            "mini.json: error: /commands/dma: missing required field 'doorbell'");
  EXPECT_EQ(errOf([](json &j) { del(j, "/commands/matmul/params/m"); }),
            "mini.json: error: /commands/matmul/params: command 'matmul' must bind parameter 'm'");
  EXPECT_EQ(errOf([](json &j) { del(j, "/commands/dma"); }),
            "mini.json: error: /commands: missing required command 'dma'");
}

TEST(TargetValidate, OverlappingRegisters) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/3/offset", 8); }),
            "mini.json: error: /registers/3: register 'B' (offset 0x8) overlaps register 'A' "
            "(offset 0x8)");
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/8/offset", 28); }),
            "mini.json: error: /registers/8: register 'SHIFT' (offset 0x1c) overlaps register "
            "'MULT' (offset 0x1c)");
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/3/offset", 10); }),
            "mini.json: error: /registers/3/offset: register 'B' at offset 0xa is not aligned to "
            "its width");
}

TEST(TargetValidate, OverlappingFields) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/0/fields/1/lsb", 0); }),
            "mini.json: error: /registers/0/fields/1: field 'op' (bits 0..1) overlaps field 'go' "
            "(bits 0..0) of register 'CTRL'");
}

TEST(TargetValidate, FieldWiderThanRegister) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/0/fields/1/lsb", 31); }),
            "mini.json: error: /registers/0/fields/1: field 'op' (bits 31..32) is wider than "
            "its 32-bit register 'CTRL'");
  EXPECT_EQ(
      errOf([](json &j) {
        set(j, "/registers/8/fields", json::array({{{"name", "s"}, {"lsb", 4}, {"width", 6}}}));
      }),
      "mini.json: error: /registers/8/fields/0: field 's' (bits 4..9) is wider than its "
      "8-bit register 'SHIFT'");
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/2/width", 24); }),
            "mini.json: error: /registers/2/width: register width must be 8, 16, 32 or 64 bits, "
            "got 24");
}

TEST(TargetValidate, FileDiagnosticsNameTheFile) {
  std::string text = readFile(dir() + "bad_field_wider.json");
  auto r = parseTargetJson(text, "my_npu.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().str(), "my_npu.json: error: /registers/3/fields/1: field 'stride' (bits "
                             "30..33) is wider than its 32-bit register 'CONV_CFG'");
  struct Case {
    const char *file, *message;
  } cases[] = {
      {"bad_field_wider.json", "error: /registers/3/fields/1: field 'stride' (bits 30..33) is "
                               "wider than its 32-bit register 'CONV_CFG'"},
      {"bad_overlapping_registers.json",
       "error: /registers/5: register 'D' (offset 0x10) overlaps register 'C' (offset 0x10)"},
      {"bad_unknown_param.json",
       "error: /commands/matmul/params/in_adr: unknown semantic parameter 'in_adr' (did you mean "
       "'in_addr'?)"},
      {"bad_status_register.json",
       "error: /status/register: unknown register 'STAT' (did you mean 'STATUS'?)"},
  };
  for (const Case &c : cases) {
    auto l = loadTarget(dir() + c.file);
    ASSERT_FALSE(l.ok()) << c.file;
    EXPECT_EQ(l.error().str(), dir() + c.file + ": " + c.message) << c.file;
  }
}

TEST(TargetValidate, UnknownOperationAndCommandNames) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/compute/operations/convolution", json::object()); }),
            "mini.json: error: /compute/operations/convolution: unknown operation 'convolution' "
            "(expected conv, depthwise, matmul, pool or eltwise)");
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/convolve", json::object()); }),
            "mini.json: error: /commands/convolve: unknown command kind 'convolve' (expected one "
            "of dma, conv, depthwise, matmul, pool, eltwise, fence)");
  EXPECT_EQ(
      errOf([](json &j) {
        set(j, "/compute/operations/pool", {{"kernel_sizes", {2}}, {"kinds", {"max", "median"}}});
      }),
      "mini.json: error: /compute/operations/pool/kinds/1: unknown value 'median' "
      "(expected one of avg, max)");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/compute/operations/conv", {{"kernel_sizes", {3}}});
            }),
            "mini.json: error: /compute/operations/conv: operation 'conv' has no command in "
            "/commands");
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/matmul/engine", "gpu"); }),
            "mini.json: error: /commands/matmul/engine: unknown engine 'gpu' (expected dma, "
            "compute or fence)");
}

TEST(TargetValidate, UnknownSemanticParameters) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/dma/params/srcaddr", "D"); }),
            "mini.json: error: /commands/dma/params/srcaddr: unknown semantic parameter "
            "'srcaddr' (did you mean 'src_addr'?)");
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/dma/params/k_h", "D"); }),
            "mini.json: error: /commands/dma/params/k_h: parameter 'k_h' does not apply to "
            "command 'dma'");
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/matmul/fixed/dil_h", 1); }),
            "mini.json: error: /commands/matmul/fixed/dil_h: parameter 'dil_h' does not apply to "
            "command 'matmul'");
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/dma/params/length", "A"); }),
            "mini.json: error: /commands/dma/params/src_addr: field 'A' overlaps 'A', already "
            "written by this command");
}

TEST(TargetValidate, ZeroSizedMemories) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/memories/scratchpads/0/size", 0); }),
            "mini.json: error: /memories/scratchpads/0/size: scratchpad 'spm' has size 0");
  EXPECT_EQ(errOf([](json &j) { set(j, "/memories/system/0/size", "0x0"); }),
            "mini.json: error: /memories/system/0/size: system memory 'ram' has size 0");
  EXPECT_EQ(errOf([](json &j) { set(j, "/memories/scratchpads", json::array()); }),
            "mini.json: error: /memories/scratchpads: at least one scratchpad is required");
  EXPECT_EQ(errOf([](json &j) { set(j, "/memories/system/0/base", 2048); }),
            "mini.json: error: /memories/system/0: memory 'ram' overlaps memory 'spm'");
  EXPECT_EQ(errOf([](json &j) { set(j, "/compute/mac_array/rows", 0); }),
            "mini.json: error: /compute/mac_array/rows: MAC array has 0 rows");
}

TEST(TargetValidate, WrongValueTypes) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/dma/dims", "two"); }),
            "mini.json: error: /dma/dims: expected an unsigned integer, got string \"two\"");
  EXPECT_EQ(errOf([](json &j) { set(j, "/dma/dims", 1.5); }),
            "mini.json: error: /dma/dims: expected an unsigned integer, got number");
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/0/fields", json::object()); }),
            "mini.json: error: /registers/0/fields: expected an array, got object");
  EXPECT_EQ(errOf([](json &j) { set(j, "/concurrent_dma_compute", 1); }),
            "mini.json: error: /concurrent_dma_compute: expected a boolean, got integer");
  EXPECT_EQ(errOf([](json &j) { set(j, "/name", 7); }),
            "mini.json: error: /name: expected a string, got integer");
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/2/offset", -4); }),
            "mini.json: error: /registers/2/offset: expected a non-negative integer, got -4");
  EXPECT_EQ(errOf([](json &j) { set(j, "/memories/system/0/base", "0x1_0000_0000"); }),
            "mini.json: error: /memories/system/0/base: system memory 'ram' starts at "
            "0x100000000, outside the 32-bit address space (address_bits)");
  EXPECT_EQ(errOf([](json &j) { set(j, "/dma/bytes_per_cyle", 4); }),
            "mini.json: error: /dma/bytes_per_cyle: unknown field 'bytes_per_cyle' (did you "
            "mean 'bytes_per_cycle'?)");
}

TEST(TargetValidate, DoorbellAndStatusReferToKnownRegisters) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/dma/doorbell/field", "CTL.go"); }),
            "mini.json: error: /commands/dma/doorbell/field: unknown register 'CTL' (did you mean "
            "'CTRL'?)");
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/dma/doorbell/field", "CTRL.start"); }),
            "mini.json: error: /commands/dma/doorbell/field: unknown field 'start' in register "
            "'CTRL'");
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/dma/doorbell/value", 2); }),
            "mini.json: error: /commands/dma/doorbell/value: value 2 does not fit in 1-bit field "
            "'CTRL.go'");
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/dma/doorbell/register", "CTRL"); }),
            "mini.json: error: /commands/dma/doorbell: exactly one of 'field' or 'register' is "
            "required");
  EXPECT_EQ(errOf([](json &j) { set(j, "/status/register", "STAT"); }),
            "mini.json: error: /status/register: unknown register 'STAT' (did you mean "
            "'STATUS'?)");
  EXPECT_EQ(errOf([](json &j) { set(j, "/status/dma/busy", "CTRL.go"); }),
            "mini.json: error: /status/dma/busy: status bit 'CTRL.go' is not in the status "
            "register 'STATUS'");
  EXPECT_EQ(errOf([](json &j) { set(j, "/status/compute/done", "STATUS.nope"); }),
            "mini.json: error: /status/compute/done: unknown field 'nope' in register 'STATUS'");
}

TEST(TargetValidate, CrossChecks) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/compute/requant", {"per_channel"}); }),
            "mini.json: error: /commands/matmul/params: per-channel requant needs parameter "
            "'rq_addr' bound");
  EXPECT_EQ(errOf([](json &j) { set(j, "/completion", "fence"); }),
            "mini.json: error: /completion: completion mode 'fence' needs a 'fence' command");
  EXPECT_EQ(errOf([](json &j) { set(j, "/dma/dims", 4); }),
            "mini.json: error: /dma/dims: value 4 out of range 1..3");
}

TEST(TargetValidate, SyntaxErrorNamesFile) {
  auto r = parseTargetJson("{ \"name\": ", "broken.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().str().rfind("broken.json: error: /: ", 0), 0u) << r.error().str();
  EXPECT_NE(r.error().str().find("parse error"), std::string::npos) << r.error().str();
}

} // namespace
