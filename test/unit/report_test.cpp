//===- report_test.cpp - The compile report's totals are honest bounds ----===//
//
// On a real model (MLPerf Tiny KWS, QDQ, from ../shared/models) compiled for
// every description: the MAC total counts every layer wherever it runs (the
// 10x4 first conv stays on the CPU on npu-default); the roofline and the
// per-layer ideal never exceed the estimated cycles, the minimum system
// memory never exceeds what the DMA moves, and NPU MACs never exceed the
// total. The per-layer table and report.json carry the same totals.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Driver.h"
#include "npucc/driver/Report.h"

#include "CiSkip.h"
#include "TestTargets.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace npucc;

namespace {

std::string kwsModel() {
  return std::string(NPUCC_SOURCE_DIR) + "/../shared/models/mlpt_kws_qdq/model.onnx";
}

// The MACs of mlpt_kws_qdq counted from its ONNX shapes by
// bench/npu_bench.py (python3-onnx), independently of npucc: 4 pointwise +
// 4 depthwise + the 10x4 conv + the dense layer.
constexpr uint64_t kKwsMacs = 2656768;

class ReportBounds : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportBounds, TotalsAreLowerBoundsAndMacsCountEveryLayer) {
  if (!std::filesystem::exists(kwsModel()))
    NPUCC_SKIP() << kwsModel() << " not present";
  driver::CompileOptions o;
  o.modelPath = kwsModel();
  o.target = GetParam();
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  driver::CompileReport rep = driver::buildReport(*r);
  EXPECT_EQ(rep.macs, kKwsMacs);
  EXPECT_LE(rep.npuMacs, rep.macs);
  uint64_t layerMacs = 0;
  for (const driver::LayerRow &l : rep.layers)
    layerMacs += l.macs;
  EXPECT_EQ(layerMacs, rep.macs);
  ASSERT_TRUE(r->program.usesNpu());
  EXPECT_GT(rep.rooflineCycles, 0u);
  EXPECT_LE(rep.rooflineCycles, rep.cycles);
  EXPECT_GT(rep.minDramBytes, 0u);
  EXPECT_LE(rep.minDramBytes, rep.dramBytes);
  // The per-layer ideal bounds a schedule that moves every layer's input and
  // output once; the hand-off (intermediates kept in the scratchpad) may beat it.
  o.npuHandoff = false;
  auto off = driver::compileModel(o);
  ASSERT_TRUE(off.ok()) << off.error().str();
  driver::CompileReport repOff = driver::buildReport(*off);
  EXPECT_LE(repOff.idealCycles, repOff.cycles);
  EXPECT_EQ(repOff.idealCycles, rep.idealCycles);
  nlohmann::json j = driver::reportJson(rep);
  EXPECT_EQ(j["totals"]["macs"].get<uint64_t>(), rep.macs);
  EXPECT_EQ(j["totals"]["min_dram_bytes"].get<uint64_t>(), rep.minDramBytes);
  EXPECT_EQ(j["totals"]["roofline_cycles"].get<uint64_t>(), rep.rooflineCycles);
}

INSTANTIATE_TEST_SUITE_P(AllTargets, ReportBounds, ::testing::ValuesIn(test::allTargets()),
                         test::targetTestName);

TEST(Report, CpuLayerMacsCountOnNpuDefault) {
  if (!std::filesystem::exists(kwsModel()))
    NPUCC_SKIP() << kwsModel() << " not present";
  driver::CompileOptions o;
  o.modelPath = kwsModel();
  o.target = "npu-default";
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  driver::CompileReport rep = driver::buildReport(*r);
  // The first conv (10x4 kernel, 1 -> 64 channels, 25x5 output) runs on the CPU.
  const driver::LayerRow *first = nullptr;
  for (const driver::LayerRow &l : rep.layers)
    if (l.name == "StatefulPartitionedCall/functional_1/conv2d/BiasAdd")
      first = &l;
  ASSERT_TRUE(first);
  EXPECT_EQ(first->placement, "cpu");
  EXPECT_EQ(first->macs, uint64_t(25 * 5 * 64 * 10 * 4));
  EXPECT_EQ(rep.npuMacs, rep.macs - first->macs);
}

} // namespace
