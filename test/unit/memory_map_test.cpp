//===- memory_map_test.cpp - --memory-map: regions, placement, fragment ---===//
//
// driver::parseMemoryMap accepts a map and refuses bad ones with the JSON
// path; memoryMapProblem refuses a region that overflows (breakdown per
// region) and, for an NPU program, an arena or NPU constants region outside
// the description's system-memory windows; linkerFragment places npucc's
// sections of the prefix in their regions.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/MemoryMap.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace npucc;

namespace {

std::string writeMap(const std::string &name, const std::string &text) {
  std::string p =
      (std::filesystem::temp_directory_path() / ("npucc_mm_" + name + ".json")).string();
  std::ofstream(p) << text;
  return p;
}

const char *Good = R"({"regions": [{"name": "FLASH", "origin": "0x08000000", "length": "64K"},
                                   {"name": "SRAM", "origin": "0x20000000", "length": "16K"}],
                       "place": {"code": "FLASH", "const": "FLASH", "arena": "SRAM",
                                 "data": "SRAM", "stack": "SRAM"}})";

driver::MemoryBudget budget(uint64_t arena) {
  driver::MemoryBudget b;
  b.mcu = "cortex-m4";
  b.flash = {{"weights and tables", 20000, false, "const"},
             {"NPU constants", 1000, false, "npu_const"},
             {"runtime code", 8000, true, "code"}};
  b.ram = {{"arena", arena, false, "arena"}, {"stack", 600, true, "stack"}};
  return b;
}

std::string refusal(const std::string &name, const std::string &text) {
  auto m = driver::parseMemoryMap(writeMap(name, text));
  return m ? "" : m.error().str();
}

} // namespace

TEST(MemoryMap, ParsesAndPlaces) {
  auto m = driver::parseMemoryMap(writeMap("good", Good));
  ASSERT_TRUE(m.ok()) << m.error().str();
  ASSERT_EQ(m->regions.size(), 2u);
  EXPECT_EQ(m->regions[0].origin, 0x08000000u);
  EXPECT_EQ(m->regions[1].length, 16384u);
  EXPECT_EQ(m->regionOf("npu_const")->name, "FLASH"); // defaults to const's region
  EXPECT_EQ(m->regionOf("arena")->name, "SRAM");
  EXPECT_EQ(driver::memoryMapProblem(*m, budget(8000), nullptr), "");
  std::string why = driver::memoryMapProblem(*m, budget(16000), nullptr);
  EXPECT_NE(why.find("region 'SRAM' (16384 bytes) would hold 16600, 216 more"), std::string::npos)
      << why;
  EXPECT_NE(why.find("  SRAM (0x20000000, 16384 bytes): 16600 bytes"), std::string::npos) << why;
  EXPECT_NE(why.find("16000  arena"), std::string::npos) << why;
  std::string ld = driver::linkerFragment(*m, "kws");
  EXPECT_NE(ld.find(".npucc_kws_const : ALIGN(64)\n{\n  KEEP(*(.npucc.kws.const))\n  "
                    "KEEP(*(.npucc.kws.table))\n  KEEP(*(.npucc.kws.stream))\n} > FLASH"),
            std::string::npos)
      << ld;
  EXPECT_NE(
      ld.find(".npucc_kws_arena (NOLOAD) : ALIGN(64)\n{\n  KEEP(*(.npucc.kws.arena))\n} > SRAM"),
      std::string::npos)
      << ld;
}

TEST(MemoryMap, RefusesWithTheJsonPath) {
  EXPECT_NE(refusal("notjson", "{").find("/: not a JSON object"), std::string::npos);
  EXPECT_NE(refusal("key", R"({"regions": [], "plac": {}})").find("/plac: unknown key"),
            std::string::npos);
  EXPECT_NE(refusal("empty", R"({"regions": [], "place": {}})").find("/regions: a non-empty"),
            std::string::npos);
  std::string r = refusal("len", R"({"regions": [{"name": "A", "origin": 0, "length": "0"}],
                                     "place": {}})");
  EXPECT_NE(r.find("/regions/0/length: expected a size above 0"), std::string::npos) << r;
  r = refusal("overlap", R"({"regions": [{"name": "A", "origin": 0, "length": 100},
                                         {"name": "B", "origin": 50, "length": 100}],
                             "place": {}})");
  EXPECT_NE(r.find("/regions/1: 'B' overlaps 'A'"), std::string::npos) << r;
  r = refusal("noregion", R"({"regions": [{"name": "A", "origin": 0, "length": 100}],
                              "place": {"code": "A", "const": "A", "arena": "B", "data": "A",
                                        "stack": "A"}})");
  EXPECT_NE(r.find("/place/arena: 'B' is not a region of /regions"), std::string::npos) << r;
  r = refusal("missing", R"({"regions": [{"name": "A", "origin": 0, "length": 100}],
                             "place": {"code": "A"}})");
  EXPECT_NE(r.find("/place/const: missing"), std::string::npos) << r;
  r = refusal("class", R"({"regions": [{"name": "A", "origin": 0, "length": 100}],
                           "place": {"heap": "A"}})");
  EXPECT_NE(r.find("/place/heap: unknown class"), std::string::npos) << r;
}

TEST(MemoryMap, NpuMustReachTheArenaAndItsConstants) {
  auto m = driver::parseMemoryMap(writeMap("npu", Good));
  ASSERT_TRUE(m.ok()) << m.error().str();
  target::TargetDesc t;
  t.name = "my-npu";
  t.system.push_back({"sram", 0x20000000, 0x10000, true});
  // The constants' FLASH is outside every window.
  std::string why = driver::memoryMapProblem(*m, budget(8000), &t);
  EXPECT_NE(why.find("region 'FLASH' (0x8000000..0x800ffff) holding the NPU constants is "
                     "outside every system-memory window of 'my-npu'"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("holding the arena"), std::string::npos) << why;
  t.system.push_back({"flash", 0x08000000, 0x100000, false});
  EXPECT_EQ(driver::memoryMapProblem(*m, budget(8000), &t), "");
  t.system[0].writable = false; // the arena needs a writable window
  why = driver::memoryMapProblem(*m, budget(8000), &t);
  EXPECT_NE(why.find("holding the arena is outside every writable system-memory window"),
            std::string::npos)
      << why;
}
