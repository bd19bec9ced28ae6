//===- npu_windows_test.cpp - Models the NPU's windows cannot hold --------===//
//
// When the description's system-memory windows cannot hold what the NPU must
// reach, the whole model runs on the CPU kernels with one warning that gives
// the numbers. Two points decide it: before lowering, the int8 weights of
// the layers placed on the NPU (a lower bound of the NPU constant data, so a
// hopeless model skips the tiling search); after lowering, everything (the
// whole constant blob, the arena, inputs, outputs). Each is tested on
// models/tinycnn_int8 with npu-default's windows shrunk in a copy of its
// JSON, against the unshrunk compile.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Driver.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace npucc;

namespace {

std::string tinycnnInt8() { return std::string(NPUCC_SOURCE_DIR) + "/models/tinycnn_int8/model.onnx"; }

/// npu-default.json with the sizes of its windows replaced; returns the path.
std::string shrunkTarget(const std::string &name, uint64_t flash, uint64_t ram) {
  std::ifstream in(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["name"] = name;
  for (auto &w : j["memories"]["system"])
    w["size"] = w["name"] == "flash" ? flash : ram;
  std::string path = (std::filesystem::temp_directory_path() / (name + ".json")).string();
  std::ofstream(path) << j.dump(2);
  return path;
}

Result<driver::CompileResult> compile(const std::string &target) {
  driver::CompileOptions o;
  o.modelPath = tinycnnInt8();
  o.target = target;
  return driver::compileModel(o);
}

uint64_t npuConstBytes(const lir::Program &p) {
  uint64_t b = 0;
  for (const lir::ConstBuffer &c : p.constants)
    if (c.npu)
      b += c.data.byteSize();
  return b;
}

std::string allWarnings(const driver::CompileResult &r) {
  std::string s;
  for (const std::string &w : r.warnings)
    s += w + "\n";
  return s;
}

TEST(NpuWindows, FittingModelRunsOnTheNpuWithoutWarning) {
  auto r = compile("npu-default");
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_TRUE(r->program.usesNpu());
  EXPECT_EQ(allWarnings(*r).find("does not fit"), std::string::npos) << allWarnings(*r);
}

TEST(NpuWindows, WeightsLargerThanEveryWindowFallBackBeforeLowering) {
  auto full = compile("npu-default");
  ASSERT_TRUE(full.ok()) << full.error().str();
  uint64_t blob = npuConstBytes(full->program);
  auto r = compile(shrunkTarget("npu-tiny-windows", 1024, 1024));
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_FALSE(r->program.usesNpu());
  std::string w = allWarnings(*r);
  std::string head = "the NPU constant data (at least ";
  size_t at = w.find(head);
  ASSERT_NE(at, std::string::npos) << w;
  uint64_t bound = std::stoull(w.substr(at + head.size()));
  // A lower bound of what the NPU compile really places, and above the window.
  EXPECT_GT(bound, 1024u);
  EXPECT_LE(bound, blob);
  EXPECT_NE(w.find("layers placed on the NPU) does not fit the NPU's system memory: the largest "
                   "window is 1024 bytes ('flash') of 'npu-tiny-windows'; every op runs on the "
                   "CPU kernels"),
            std::string::npos)
      << w;
}

TEST(NpuWindows, ArenaLargerThanTheWritableWindowFallsBackAfterLowering) {
  auto full = compile("npu-default");
  ASSERT_TRUE(full.ok()) << full.error().str();
  uint64_t arena = uint64_t(full->program.arenaSize);
  ASSERT_GT(arena, 4096u);
  // The weights fit the flash window; the arena does not fit the RAM one.
  auto r = compile(shrunkTarget("npu-small-ram", 1 << 20, arena / 2));
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_FALSE(r->program.usesNpu());
  std::string w = allWarnings(*r);
  EXPECT_EQ(w.find("at least"), std::string::npos) << w;
  EXPECT_NE(w.find("the activation arena (" + std::to_string(arena) +
                   " bytes) does not fit the NPU's system memory: the largest room left is " +
                   std::to_string(arena / 2) + " bytes in window 'ram' of 'npu-small-ram'"),
            std::string::npos)
      << w;
}

} // namespace
