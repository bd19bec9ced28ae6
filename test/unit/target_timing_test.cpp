//===- target_timing_test.cpp - The timing a description states ------------===//
//
// Per-operation timing (cycles per step, fill and overhead cycles), the DMA's
// read and write rates and the system windows' speeds and latency, carried
// into the C table the compiler's cost model and the simulator share; and the
// cycle model as data (issue 19, phase 8): "steps" / "macs" expressions that
// replace the formula of one operation. Each accepted, and refused with its
// JSON path.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"
#include "npucc_npu.h"

#include <gtest/gtest.h>

#include "TargetJsonEdit.h"

using namespace npucc::target;
using namespace npucc::test;

namespace {

// --- Timing per operation, DMA rates, window speeds -------------------------------------------

TEST(TargetTiming, PerOperationAndWindowSpeeds) {
  auto r = parseEdited([](json &j) {
    set(j, "/timing/operations", {{"matmul", {{"cycles_per_step", 2}, {"fill_cycles", 30}, {"overhead_cycles", 5}}}});
    set(j, "/dma/read_bytes_per_cycle", 8);
    set(j, "/dma/write_bytes_per_cycle", 2);
    set(j, "/memories/system/0/read_bytes_per_cycle", 1);
    set(j, "/memories/system/0/latency_cycles", 50);
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  const OpTiming &t = r->operation("matmul")->timing;
  EXPECT_EQ(t.cyclesPerStep, 2u);
  EXPECT_EQ(t.fillCycles, 30u);
  EXPECT_EQ(t.overheadCycles, 5u);
  CTable c(*r);
  // matmul 4x4x4 on a 2x2 array: 4 * 2 * 2 steps, at 2 cycles each, + fill + overhead.
  std::vector<int64_t> p = CTable::defaultParams();
  p[NPUCC_P_M] = p[NPUCC_P_K] = p[NPUCC_P_N] = 4;
  EXPECT_EQ(c.commandCycles(NPUCC_KIND_MATMUL, p), 16u * 2 + 30 + 5);
  // A DMA from the slow window: 1 byte per cycle plus its latency; into the scratchpad the
  // DMA's write rate (2) would allow more.
  p = CTable::defaultParams();
  p[NPUCC_P_SRC_ADDR] = 0x1000;
  p[NPUCC_P_DST_ADDR] = 0;
  p[NPUCC_P_LENGTH] = 100;
  EXPECT_EQ(c.commandCycles(NPUCC_KIND_DMA, p), 50u + 100);
  // From the scratchpad to the window: the DMA's write rate.
  std::swap(p[NPUCC_P_SRC_ADDR], p[NPUCC_P_DST_ADDR]);
  EXPECT_EQ(c.commandCycles(NPUCC_KIND_DMA, p), 50u + 50);
  EXPECT_EQ(errOf([](json &j) { set(j, "/timing/operations", {{"conv", json::object()}}); }),
            "mini.json: error: /timing/operations/conv: timing for 'conv', which is not in "
            "/compute/operations");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/timing/operations", {{"matmul", {{"cycles_per_step", 0}}}});
            }),
            "mini.json: error: /timing/operations/matmul/cycles_per_step: value 0 out of range "
            "1..65535");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/timing/operations", {{"matmul", {{"cycles_per_stp", 2}}}});
            }),
            "mini.json: error: /timing/operations/matmul/cycles_per_stp: unknown field "
            "'cycles_per_stp' (did you mean 'cycles_per_step'?)");
}

// The cycle model as data: "steps" / "macs" expressions replace the formula of one operation,
// in the compiler's CTable and (the same table) the simulator.
TEST(TargetTiming, StepsAndMacsExpressions) {
  auto r = parseEdited([](json &j) {
    set(j, "/timing/operations",
        {{"matmul",
          {{"steps", "m * cdiv(n, 3) + k"}, {"macs", "2 * m * k * n"}, {"fill_cycles", 7}}}});
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  const OpTiming &t = r->operation("matmul")->timing;
  ASSERT_TRUE(t.steps && t.macs);
  EXPECT_EQ(printExpr(*t.steps), "m * cdiv(n, 3) + k");
  CTable c(*r);
  std::vector<int64_t> p = CTable::defaultParams();
  p[NPUCC_P_M] = 4;
  p[NPUCC_P_K] = 5;
  p[NPUCC_P_N] = 7;
  uint64_t macs = 0;
  // 4 * 3 + 5 steps at 1 cycle + 7 fill; MACs doubled (the formula would give 4 * 5 * 7).
  EXPECT_EQ(c.commandCycles(NPUCC_KIND_MATMUL, p, &macs), 17u + 7);
  EXPECT_EQ(macs, 280u);
  ASSERT_EQ(c.get()->num_op_timing, 1u);
  EXPECT_EQ(c.get()->op_timing[0].kind, NPUCC_KIND_MATMUL);
  // Only steps: the MACs keep the formula.
  r = parseEdited([](json &j) { set(j, "/timing/operations", {{"matmul", {{"steps", "m"}}}}); });
  ASSERT_TRUE(r.ok()) << r.error().str();
  CTable c2(*r);
  EXPECT_EQ(c2.commandCycles(NPUCC_KIND_MATMUL, p, &macs), 4u);
  EXPECT_EQ(macs, 140u);
  auto bad = [](const json &v) {
    return errOf([&](json &j) { set(j, "/timing/operations", {{"matmul", {{"steps", v}}}}); });
  };
  EXPECT_EQ(bad("m * k_h"), "mini.json: error: /timing/operations/matmul/steps: parameter 'k_h' "
                            "does not apply to operation 'matmul'");
  EXPECT_EQ(bad("m + w_addr"),
            "mini.json: error: /timing/operations/matmul/steps: parameter 'w_addr' is an address; "
            "a cycle count must not depend on where operands are placed");
  EXPECT_EQ(bad("m * nn"), "mini.json: error: /timing/operations/matmul/steps: column 5: unknown "
                           "parameter 'nn' (did you mean 'n'?) in 'm * nn'");
  EXPECT_EQ(bad(12), "mini.json: error: /timing/operations/matmul/steps: expected an expression "
                     "over the command's parameters, e.g. \"out_h * out_w\"");
}

} // namespace
