//===- memory_fit_test.cpp - The compile-time flash and RAM estimate ------===//
//
// lower::estimateCode (lib/lower/cpu/CodeSize.def): a called kernel brings
// its static helpers and callees along (closure), names it cannot size are
// listed, configurations differ, the NPU runtime counts as whole files;
// driver::estimateMemory adds the exact parts (constants, arena, stream
// tables) to the estimates; memoryFitProblem refuses over a limit with the
// breakdown; parseByteSize reads the --flash/--ram sizes. The estimates'
// error against linked images is a benchmark (docs/benchmarks.md, "Memory
// fit"); the table's freshness is the `code_size_table` test.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Driver.h"
#include "npucc/driver/MemoryFit.h"
#include "npucc/lower/CodeSize.h"

#include <gtest/gtest.h>

using namespace npucc;
using lower::McuConfig;

namespace {

std::string projectModel(const std::string &name) {
  return std::string(NPUCC_SOURCE_DIR) + "/models/" + name + "/model.onnx";
}

uint64_t find(const std::vector<driver::MemoryItem> &v, const std::string &prefix) {
  for (const driver::MemoryItem &i : v)
    if (i.what.compare(0, prefix.size(), prefix) == 0)
      return i.bytes;
  ADD_FAILURE() << "no item '" << prefix << "'";
  return 0;
}

} // namespace

TEST(CodeSize, ACalledKernelBringsItsHelpers) {
  // npucc_add_s8_fast calls a static row runner that calls row functions
  // through a pointer: all of them are linked.
  lower::CodeEstimate add =
      lower::estimateCode({"npucc_add_s8_fast"}, 1, {}, McuConfig::CortexM4Os);
  EXPECT_GE(add.functions, 4u);
  lower::CodeEstimate both =
      lower::estimateCode({"npucc_add_s8_fast", "npucc_mul_s8_fast"}, 2, {}, McuConfig::CortexM4Os);
  // The shared helpers are counted once: mul adds only its own entry.
  EXPECT_EQ(both.functions, add.functions + 1);
  EXPECT_LT(both.runtimeText, 2 * add.runtimeText);
  EXPECT_GT(both.runtimeText, add.runtimeText);
  EXPECT_GT(both.modelText, add.modelText); // per call site
  // memset is libc: named, not counted.
  EXPECT_NE(std::find(add.external.begin(), add.external.end(), "memset"), add.external.end());
}

TEST(CodeSize, ConfigurationsAndUnknownNames) {
  lower::CodeEstimate os =
      lower::estimateCode({"npucc_conv2d_s8_fast"}, 1, {}, McuConfig::CortexM4Os);
  lower::CodeEstimate o2 =
      lower::estimateCode({"npucc_conv2d_s8_fast"}, 1, {}, McuConfig::CortexM4O2);
  lower::CodeEstimate rv = lower::estimateCode({"npucc_conv2d_s8_fast"}, 1, {}, McuConfig::Rv32Os);
  EXPECT_LT(os.runtimeText, o2.runtimeText); // -O2 unrolls
  EXPECT_NE(os.runtimeText, rv.runtimeText);
  EXPECT_GT(os.stack, 0u);
  lower::CodeEstimate none = lower::estimateCode({"no_such_kernel"}, 1, {}, McuConfig::CortexM4Os);
  EXPECT_EQ(none.runtimeText, 0u);
  ASSERT_EQ(none.external.size(), 1u);
  EXPECT_EQ(none.external[0], "no_such_kernel");
  McuConfig c;
  EXPECT_TRUE(lower::parseMcuConfig("rv32-O2", c));
  EXPECT_EQ(c, McuConfig::Rv32O2);
  EXPECT_FALSE(lower::parseMcuConfig("cortex-m7", c));
}

TEST(CodeSize, NpuRuntimeCountsAsWholeFiles) {
  EXPECT_TRUE(lower::codeSizeKnowsFile("npucc_stream.c"));
  lower::CodeEstimate e = lower::estimateCode(
      {}, 0, {"npucc_hal.c", "npucc_npu.c", "npucc_stream.c"}, McuConfig::CortexM4Os);
  EXPECT_GT(e.runtimeText, 4000u); // README: about 7.8 KiB on Cortex-M4 -Os
  EXPECT_GT(e.runtimeRam, 0u);     // the stream player's last parameter values
}

TEST(MemoryFit, ExactPartsAndTheRefusal) {
  driver::CompileOptions o;
  o.modelPath = projectModel("tinycnn_int8");
  o.target = "cpu";
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  driver::MemoryBudget b = driver::estimateMemory(*r, McuConfig::CortexM4Os);
  EXPECT_EQ(b.mcu, "cortex-m4");
  EXPECT_EQ(find(b.ram, "arena"), uint64_t(r->program.arenaSize));
  uint64_t consts = 0;
  for (const lir::ConstBuffer &c : r->program.constants)
    consts += c.data.byteSize();
  EXPECT_EQ(find(b.flash, "weights ("), consts);
  EXPECT_EQ(find(b.flash, "kernel parameter and requantization tables"), r->emitStats.tableBytes);
  EXPECT_GT(r->emitStats.tableBytes, 0u); // the fast kernels' requantization tables
  EXPECT_GT(find(b.flash, "runtime code"), 1000u);
  EXPECT_GT(b.flashBytes(), consts);
  EXPECT_EQ(driver::memoryFitProblem(b, b.flashBytes(), b.ramBytes()), "");
  std::string why = driver::memoryFitProblem(b, 0, b.ramBytes() - 1);
  EXPECT_NE(why.find("1 more than --ram"), std::string::npos) << why;
  EXPECT_NE(why.find("arena"), std::string::npos) << why;
  EXPECT_EQ(why.find("flash,"), std::string::npos) << why; // flash had no limit
  why = driver::memoryFitProblem(b, 1024, 0);
  EXPECT_NE(why.find("more than --flash 1024"), std::string::npos) << why;
  EXPECT_NE(why.find("runtime code"), std::string::npos) << why;
  nlohmann::json j = driver::budgetJson(b);
  EXPECT_EQ(j["flash_bytes"].get<uint64_t>(), b.flashBytes());
}

TEST(MemoryFit, NpuProgramsCountStreamAndDescriptionTables) {
  driver::CompileOptions o;
  o.modelPath = projectModel("tinycnn_int8");
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  driver::MemoryBudget b = driver::estimateMemory(*r, McuConfig::CortexM4Os);
  EXPECT_EQ(find(b.flash, "NPU command stream tables"), r->emitStats.npuStreamBytes);
  EXPECT_GT(find(b.flash, "NPU description tables"), 1000u);
  EXPECT_GT(find(b.ram, "runtime data"), 0u);
  for (const driver::MemoryItem &i : b.ram) // register delivery: no command buffer
    EXPECT_EQ(i.what.find("command buffer"), std::string::npos) << i.what;
  // Buffer delivery: the command buffer (64 64-bit words on npu-cmdbuf) is RAM too.
  o.target = std::string(NPUCC_SOURCE_DIR) + "/test/target/npu-cmdbuf.json";
  r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  b = driver::estimateMemory(*r, McuConfig::CortexM4Os);
  EXPECT_EQ(find(b.ram, "NPU command buffer"), 512u);
}

TEST(MemoryFit, ByteSizes) {
  uint64_t v = 0;
  EXPECT_TRUE(driver::parseByteSize("65536", v));
  EXPECT_EQ(v, 65536u);
  EXPECT_TRUE(driver::parseByteSize("64K", v));
  EXPECT_EQ(v, 65536u);
  EXPECT_TRUE(driver::parseByteSize("1m", v));
  EXPECT_EQ(v, 1048576u);
  EXPECT_TRUE(driver::parseByteSize("0x10000", v));
  EXPECT_EQ(v, 65536u);
  for (const char *bad :
       {"", "0", "K", "8KB", "-1", "0x", "0x10K", "99999999999999999999", "18014398509481984K"})
    EXPECT_FALSE(driver::parseByteSize(bad, v)) << bad;
}
