//===- sim_timing_test.cpp - The cycle model as data in the simulator -----===//
//
// timing.operations.<op>.steps / .macs (issue 19, phase 8) replace the
// formula of npucc_timing.h for one operation. The simulator advances its
// engine by the expression's value, and refuses a command whose expression
// fails (a negative operand of '/', here) as a limit error naming the key:
// the compiler proves the same expressions for every command it emits
// (npu_proof_test), so a generated program never meets the refusal.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_sim.h"

#include <gtest/gtest.h>

#include "SimTarget.h"
#include "TargetJsonEdit.h"

#include <string>
#include <vector>

using namespace npucc::target;
using namespace npucc::test;

namespace {

TEST(SimTiming, StepsAndMacsExpressionsDriveTheEngineAndAFailingOneIsRefused) {
  SimTarget t(parseEdited([](json &j) {
    set(j, "/timing/operations",
        {{"matmul", {{"steps", "m * k * n / (n - 4)"}, {"macs", "m * k * n + 1"}}}});
  }));
  ASSERT_NE(t.Sim, nullptr);
  int64_t p[NPUCC_P_COUNT];
  npucc_npu_defaults(p);
  p[NPUCC_P_IN_ADDR] = 0;
  p[NPUCC_P_W_ADDR] = 256;
  p[NPUCC_P_BIAS_ADDR] = 512;
  p[NPUCC_P_OUT_ADDR] = 768;
  p[NPUCC_P_M] = 2;
  p[NPUCC_P_K] = 3;
  p[NPUCC_P_N] = 6; // steps 2 * 3 * 6 / 2 = 18, MACs 37
  std::vector<uint8_t> zeros(1024, 0);
  ASSERT_EQ(npucc_sim_spm_write(t.Sim, 0, zeros.data(), uint32_t(zeros.size())), 0);
  int bad = -1;
  ASSERT_EQ(npucc_npu_issue(t.D, NPUCC_KIND_MATMUL, p, &bad), NPUCC_OK);
  ASSERT_FALSE(npucc_sim_failed(t.Sim)) << npucc_sim_error(t.Sim);
  const npucc_sim_cmd_stats *st = npucc_sim_command(t.Sim, 0);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->macs, 37u);
  EXPECT_EQ(st->cycles, 18u + t.D->command_overhead_cycles);
  uint64_t macs = 0;
  std::vector<int64_t> pv(p, p + NPUCC_P_COUNT);
  EXPECT_EQ(t.Table->commandCycles(NPUCC_KIND_MATMUL, pv, &macs), st->cycles);
  EXPECT_EQ(macs, st->macs);
  ASSERT_EQ(npucc_hal_wait_all(1000), NPUCC_OK) << npucc_sim_error(t.Sim);
  // n = 2: n - 4 is negative, which '/' does not take.
  p[NPUCC_P_N] = 2;
  npucc_npu_issue(t.D, NPUCC_KIND_MATMUL, p, &bad);
  ASSERT_TRUE(npucc_sim_failed(t.Sim));
  EXPECT_NE(std::string(npucc_sim_error(t.Sim))
                .find("the description's timing.operations.matmul.steps expression fails"),
            std::string::npos)
      << npucc_sim_error(t.Sim);
}

} // namespace
