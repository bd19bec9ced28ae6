//===- cpu_cost_test.cpp - The CPU kernels' instruction model --------------===//
//
// lower::estimateCpuCall (lib/lower/cpu/CpuCost.def): a fitted kernel is
// calibrated and grows with its work, a kernel without a row gets its
// family's fallback (MAC kernels by MACs, others by elements) and is marked
// uncalibrated, non-CPU instructions cost nothing. The report
// (driver::buildReport) attributes every call to its layer, so the CPU
// layers add up to the CPU total, and counts the MACs the fast kernels skip
// (output channels with all-zero weights: MLPerf Tiny VWW has some) out of
// the work. The model's error against QEMU is a benchmark, not a test
// (docs/benchmarks.md, "CPU cost model").
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Driver.h"
#include "npucc/driver/Report.h"
#include "npucc/lower/CpuCost.h"

#include "CiSkip.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace npucc;
using lower::CpuCore;

namespace {

lir::Instr call(const std::string &callee) {
  lir::Instr in;
  in.opcode = "call";
  in.callee = callee;
  return in;
}

uint64_t m4(const lower::CallCost &c) { return c.cycles[int(CpuCore::CortexM4)]; }
uint64_t rv(const lower::CallCost &c) { return c.cycles[int(CpuCore::Rv32)]; }

std::string sharedModel(const std::string &name) {
  return std::string(NPUCC_SOURCE_DIR) + "/../shared/models/" + name + "/model.onnx";
}

} // namespace

TEST(CpuCost, FittedKernelsGrowWithTheirWork) {
  lower::KernelWork small{100000, 4096, 4096, 576}, big{400000, 16384, 16384, 576};
  lower::CallCost a = lower::estimateCpuCall(call("npucc_conv2d_s8_fast"), small);
  lower::CallCost b = lower::estimateCpuCall(call("npucc_conv2d_s8_fast"), big);
  EXPECT_TRUE(a.calibrated && b.calibrated);
  EXPECT_GT(m4(a), 0u);
  EXPECT_GT(m4(b), m4(a));
  EXPECT_GT(rv(b), rv(a));
  lir::Instr copy;
  copy.opcode = "memcpy";
  lower::CallCost c = lower::estimateCpuCall(copy, {0, 8000, 8000, 0});
  EXPECT_TRUE(c.calibrated);
  EXPECT_GT(m4(c), 0u);
}

TEST(CpuCost, KernelsWithoutARowUseTheirFamily) {
  // A MAC kernel's family row scales with the MACs.
  lower::CallCost a = lower::estimateCpuCall(call("npucc_convtranspose2d_s8"), {1000, 10, 10, 0});
  lower::CallCost b = lower::estimateCpuCall(call("npucc_convtranspose2d_s8"), {100000, 10, 10, 0});
  EXPECT_FALSE(a.calibrated);
  EXPECT_GT(m4(b), m4(a));
  // An element-wise float kernel scales with its output.
  lower::CallCost s = lower::estimateCpuCall(call("npucc_sigmoid_f32"), {0, 1000, 1000, 0});
  lower::CallCost t = lower::estimateCpuCall(call("npucc_sigmoid_f32"), {0, 4000, 4000, 0});
  EXPECT_FALSE(s.calibrated);
  EXPECT_GT(m4(t), m4(s));
  // NPU commands, DMA and waits are not CPU kernel calls.
  lir::Instr npu;
  npu.opcode = "npu";
  lower::CallCost n = lower::estimateCpuCall(npu, {1000, 1000, 1000, 1000});
  EXPECT_EQ(m4(n), 0u);
  EXPECT_EQ(rv(n), 0u);
}

class CpuCostReport : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuCostReport, EveryCallIsAttributedToItsLayer) {
  if (!std::filesystem::exists(sharedModel("mlpt_kws_qdq")))
    NPUCC_SKIP() << sharedModel("mlpt_kws_qdq") << " not present";
  driver::CompileOptions o;
  o.modelPath = sharedModel("mlpt_kws_qdq");
  o.target = GetParam();
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  driver::CompileReport rep = driver::buildReport(*r);
  ASSERT_FALSE(rep.cpuCalls.empty());
  uint64_t layers[2] = {0, 0}, calls[2] = {0, 0};
  for (const driver::LayerRow &l : rep.layers)
    for (int c = 0; c < 2; ++c)
      layers[c] += l.cpuCycles[c];
  for (const driver::CpuCallRow &c : rep.cpuCalls) {
    calls[0] += c.cost.cycles[0];
    calls[1] += c.cost.cycles[1];
    EXPECT_TRUE(c.cost.calibrated) << c.kernel; // every kernel of this model has a fitted row
  }
  for (int c = 0; c < 2; ++c) {
    EXPECT_GT(rep.cpuCycles[c], 0u);
    EXPECT_EQ(calls[c], rep.cpuCycles[c]);
    EXPECT_EQ(layers[c], rep.cpuCycles[c]) << "a call not attributed to a listed layer";
  }
  EXPECT_EQ(rep.cpuCallsCalibrated, rep.cpuCalls.size());
  nlohmann::json j = driver::reportJson(rep);
  EXPECT_EQ(j["totals"]["cpu_cycles"]["cortex-m4"].get<uint64_t>(),
            rep.cpuCycles[int(CpuCore::CortexM4)]);
  EXPECT_EQ(j["totals"]["program_cycles_cortex_m4"].get<uint64_t>(),
            rep.cycles + rep.cpuCycles[int(CpuCore::CortexM4)]);
  EXPECT_EQ(j["cpu_calls"].size(), rep.cpuCalls.size());
  std::string table = driver::reportTable(rep);
  EXPECT_NE(table.find("cpu: " + std::to_string(rep.cpuCalls.size()) + " kernel calls, about " +
                       std::to_string(rep.cpuCycles[int(CpuCore::CortexM4)]) +
                       " cycles on a Cortex-M4"),
            std::string::npos)
      << table;
}

INSTANTIATE_TEST_SUITE_P(Targets, CpuCostReport, ::testing::Values("cpu", "npu-default"));

TEST(CpuCost, SkippedOutputChannelsAreNotWork) {
  // KWS has no all-zero output channel: the calls' MACs are the model's.
  // VWW has some: the convolutions' work is below their MACs.
  for (const char *m : {"mlpt_kws_qdq", "mlpt_vww_qdq"}) {
    if (!std::filesystem::exists(sharedModel(m)))
      NPUCC_SKIP() << sharedModel(m) << " not present";
    driver::CompileOptions o;
    o.modelPath = sharedModel(m);
    o.target = "cpu";
    auto r = driver::compileModel(o);
    ASSERT_TRUE(r.ok()) << r.error().str();
    driver::CompileReport rep = driver::buildReport(*r);
    uint64_t work = 0;
    for (const driver::CpuCallRow &c : rep.cpuCalls)
      work += c.work.macs;
    if (std::string(m) == "mlpt_kws_qdq")
      EXPECT_EQ(work, rep.macs) << m;
    else
      EXPECT_LT(work, rep.macs * 9 / 10) << m;
  }
}
