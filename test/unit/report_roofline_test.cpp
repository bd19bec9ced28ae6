//===- report_roofline_test.cpp - The roofline at hand-computed values ----===//
//
// The compile report's roofline is the larger of two lower bounds: the NPU's
// MACs at the MAC array's rate (ceil(MACs / (rows x cols))) and the DMA
// moving the NPU weights and the NPU part's inputs and outputs once
// (docs/npu.md, "report.json"). Issue 24: a roofline computed as the smaller
// of the two passed every test (the only one checked roofline <= cycles). Two
// one-layer QDQ models on npu-default (16x16 MACs, DMA 8 bytes a cycle, no
// window rates of its own), one bound by compute and one by the DMA, with
// every figure counted by hand; the table and report.json carry the same.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Driver.h"
#include "npucc/driver/Report.h"
#include "npucc/ir/Parser.h"
#include "npucc/onnx/Exporter.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace npucc;
namespace fs = std::filesystem;

namespace {

std::string values(int64_t n, int64_t mod, int64_t offset) {
  std::string s;
  for (int64_t i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string((i * 7) % mod - offset);
  return s;
}

/// Compiles textual QDQ IR (exported to ONNX first) for npu-default and builds its report.
driver::CompileReport reportOf(const std::string &text, const std::string &tag) {
  auto g = ir::parseGraph(text, tag + ".ir");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().str());
  if (!g.ok())
    return {};
  fs::path dir =
      fs::temp_directory_path() / ("npucc_roofline_" + tag + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "model.onnx").string();
  Status s = onnx::exportModel(**g, path);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().str());
  driver::CompileOptions o;
  o.modelPath = path;
  o.target = "npu-default";
  auto r = driver::compileModel(o);
  fs::remove_all(dir);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  if (!r.ok())
    return {};
  EXPECT_TRUE(r->program.usesNpu());
  return driver::buildReport(*r);
}

/// The table's totals line and report.json say `roofline`.
void expectPrinted(const driver::CompileReport &rep, uint64_t roofline) {
  std::string table = driver::reportTable(rep);
  EXPECT_NE(table.find("roofline " + std::to_string(roofline) + " ("), std::string::npos) << table;
  nlohmann::json j = driver::reportJson(rep);
  EXPECT_EQ(j["totals"]["roofline_cycles"].get<uint64_t>(), roofline);
}

TEST(ReportRoofline, ComputeBoundConvIsTheMacBound) {
  // QDQ Conv 3x3, 16 -> 16 channels, 32x32, pads 1, per-tensor weights.
  // clang-format off
  std::string text =
      "graph @main(%x: f32[1,16,32,32]) -> (%y) {\n"
      "  const @sx: f32[] = dense<[0.05]>\n"
      "  const @zx: i8[] = dense<[0]>\n"
      "  const @w: i8[16,16,3,3] = dense<[" + values(16 * 16 * 9, 255, 127) + "]>\n"
      "  const @sw: f32[] = dense<[0.01]>\n"
      "  const @b: i32[16] = dense<[" + values(16, 2001, 1000) + "]>\n"
      "  const @sb: f32[] = dense<[0.0005]>\n"
      "  const @sy: f32[] = dense<[0.1]>\n"
      "  %xq = QuantizeLinear(%x, @sx, @zx) : i8[1,16,32,32]\n"
      "  %xd = DequantizeLinear(%xq, @sx, @zx) : f32[1,16,32,32]\n"
      "  %wd = DequantizeLinear(@w, @sw) : f32[16,16,3,3]\n"
      "  %bd = DequantizeLinear(@b, @sb) : f32[16]\n"
      "  %c = Conv(%xd, %wd, %bd) {kernel_shape=[3, 3], pads=[1, 1, 1, 1]} : f32[1,16,32,32]\n"
      "  %cq = QuantizeLinear(%c, @sy, @zx) : i8[1,16,32,32]\n"
      "  %y = DequantizeLinear(%cq, @sy, @zx) : f32[1,16,32,32]\n"
      "  return %y\n}\n";
  // clang-format on
  driver::CompileReport rep = reportOf(text, "conv");
  // MACs: 32 * 32 outputs x 16 channels x 3 * 3 taps x 16 inputs = 2359296;
  // at 16 * 16 = 256 a cycle: 9216 cycles.
  EXPECT_EQ(rep.macsPerCycle, 256u);
  EXPECT_EQ(rep.npuMacs, 2359296u);
  // Bytes: one weight record (OHWI weights 16 * 3 * 3 * 16 = 2304 bytes, int32
  // bias 64 bytes; per-tensor: no requantization table) = 2368; the NPU reads
  // the NHWC input (32 * 32 * 16 = 16384 bytes) and writes the output (16384).
  // DMA at 8 bytes a cycle: 2368 / 8 + 16384 / 8 + 16384 / 8 = 296 + 2048 + 2048
  // = 4392 cycles, below the MAC bound: the roofline is 9216.
  EXPECT_EQ(rep.minDramBytes, 2368u + 16384u + 16384u);
  EXPECT_EQ(rep.rooflineCycles, 9216u);
  expectPrinted(rep, 9216);
  EXPECT_LE(rep.rooflineCycles, rep.cycles);
}

TEST(ReportRoofline, DmaBoundMatMulIsTheDmaBound) {
  // QDQ MatMul [1,256] x [256,64], per-tensor weights.
  // clang-format off
  std::string text =
      "graph @main(%x: f32[1,256]) -> (%y) {\n"
      "  const @sx: f32[] = dense<[0.05]>\n"
      "  const @zx: i8[] = dense<[0]>\n"
      "  const @w: i8[256,64] = dense<[" + values(256 * 64, 255, 127) + "]>\n"
      "  const @sw: f32[] = dense<[0.01]>\n"
      "  const @sy: f32[] = dense<[0.5]>\n"
      "  %xq = QuantizeLinear(%x, @sx, @zx) : i8[1,256]\n"
      "  %xd = DequantizeLinear(%xq, @sx, @zx) : f32[1,256]\n"
      "  %wd = DequantizeLinear(@w, @sw) : f32[256,64]\n"
      "  %m = MatMul(%xd, %wd) : f32[1,64]\n"
      "  %mq = QuantizeLinear(%m, @sy, @zx) : i8[1,64]\n"
      "  %y = DequantizeLinear(%mq, @sy, @zx) : f32[1,64]\n"
      "  return %y\n}\n";
  // clang-format on
  driver::CompileReport rep = reportOf(text, "matmul");
  // MACs: 256 x 64 = 16384; at 256 a cycle: 64 cycles.
  EXPECT_EQ(rep.npuMacs, 16384u);
  // Bytes: weights 64 * 256 = 16384 and a 64 * 4 = 256-byte bias area (zeros:
  // MatMul has no bias) in whole records, however the 64 channels are split
  // into blocks (n * 256 + n * 4 bytes per block of n, a multiple of 16):
  // 16640; input 256 bytes, output 64. DMA: 16640 / 8 + 256 / 8 + 64 / 8 = 2080
  // + 32 + 8 = 2120 cycles, above the MAC bound: the roofline is 2120.
  EXPECT_EQ(rep.minDramBytes, 16640u + 256u + 64u);
  EXPECT_EQ(rep.rooflineCycles, 2120u);
  expectPrinted(rep, 2120);
  EXPECT_LE(rep.rooflineCycles, rep.cycles);
}

} // namespace
