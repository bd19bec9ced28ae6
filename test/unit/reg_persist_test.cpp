//===- reg_persist_test.cpp - Changed-register-only writes ---------------===//
//
// Issue 21, step 1 (docs/design-issue21.md): with "registers_persist" a
// command writes only the registers whose value changed. One rule decides,
// npucc_npu_skip, asked by the HAL and by the compiler's estimate; the
// loader marks the registers it may skip (NPUCC_REG_PERSIST: never a
// doorbell, status, clear, read-modify-write or init register); without the
// key the simulator refuses a command that relies on a register not written
// since the previous command. Descriptions: test/target/good_minimal.json,
// edited.
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

void persist(json &j) { j["registers_persist"] = true; }
void asWritten(json &) {}

struct Npu : SimTarget {
  std::vector<uint8_t> Ram = std::vector<uint8_t>(4096, 5);

  explicit Npu(const std::function<void(json &)> &edit) : SimTarget(parseEdited(edit)) {
    if (!Sim)
      return;
    EXPECT_EQ(npucc_sim_map(Sim, 0x1000, Ram.data(), Ram.size()), 0);
    npucc_hal_init(D);
  }
  static std::vector<int64_t> dmaParams(uint64_t src, uint64_t len) {
    std::vector<int64_t> p(NPUCC_P_COUNT);
    npucc_npu_defaults(p.data());
    p[NPUCC_P_SRC_ADDR] = int64_t(src), p[NPUCC_P_DST_ADDR] = 0;
    p[NPUCC_P_LENGTH] = int64_t(len);
    return p;
  }
  /// A DMA through the HAL, waited for; the simulator's register writes it cost.
  uint64_t dma(uint64_t src, uint64_t len) {
    npucc_sim_totals before, after;
    npucc_sim_get_totals(Sim, &before);
    auto p = dmaParams(src, len);
    EXPECT_EQ(npucc_npu_issue(D, NPUCC_KIND_DMA, p.data(), nullptr), NPUCC_OK);
    EXPECT_EQ(npucc_hal_wait(NPUCC_ENGINE_DMA, 100000), NPUCC_OK) << npucc_sim_error(Sim);
    npucc_sim_get_totals(Sim, &after);
    return after.reg_writes - before.reg_writes;
  }
  int regIndex(const std::string &name) const {
    for (size_t i = 0; i < T.registers.size(); ++i)
      if (T.registers[i].name == name)
        return int(i);
    ADD_FAILURE() << "no register " << name;
    return 0;
  }
  bool persists(const std::string &name) const {
    return (D->regs[regIndex(name)].flags & NPUCC_REG_PERSIST) != 0;
  }
};

} // namespace

TEST(RegPersist, LoaderMarksOnlyRegistersNothingButCommandsChange) {
  Npu off(asWritten);
  ASSERT_TRUE(off.Sim);
  EXPECT_FALSE(off.T.registersPersist);
  EXPECT_FALSE(off.persists("A"));
  EXPECT_EQ(off.D->shadow, nullptr) << "no record without registers_persist";

  Npu on(persist);
  ASSERT_TRUE(on.Sim);
  for (const char *r : {"A", "B", "C", "D", "DIMS", "MULT", "SHIFT"})
    EXPECT_TRUE(on.persists(r)) << r;
  EXPECT_FALSE(on.persists("CTRL")) << "it holds the doorbell";
  EXPECT_FALSE(on.persists("STATUS")) << "it holds status bits";
  ASSERT_NE(on.D->shadow, nullptr);

  // Read-modify-write and init registers are written every time.
  Npu rmw([](json &j) {
    persist(j);
    for (json &r : j["registers"])
      if (r["name"] == "A")
        r["write"] = "rmw";
    j["init"] = json::array({{{"field", "B"}, {"value", 0}}});
  });
  ASSERT_TRUE(rmw.Sim);
  EXPECT_FALSE(rmw.persists("A"));
  EXPECT_FALSE(rmw.persists("B"));
  EXPECT_TRUE(rmw.persists("C"));

  EXPECT_EQ(errOf([](json &j) { j["registers_persist"] = "yes"; }),
            "mini.json: error: /registers_persist: expected a boolean, got string");
}

TEST(RegPersist, SkipRuleWritesChangedRegistersAndAlwaysTheDoorbell) {
  Npu n(persist);
  ASSERT_TRUE(n.Sim);
  const npucc_cmd_desc *c = npucc_desc_find_cmd(n.D, NPUCC_KIND_DMA);
  ASSERT_NE(c, nullptr);
  auto p = Npu::dmaParams(0x1000, 64);
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int num = 0;
  ASSERT_EQ(npucc_npu_encode(n.D, NPUCC_KIND_DMA, p.data(), w, &num, nullptr), NPUCC_OK);
  std::vector<uint64_t> value(n.D->num_regs);
  std::vector<uint8_t> known(n.D->num_regs);
  npucc_reg_shadow s{value.data(), known.data()};
  for (int i = 0; i < num; ++i)
    EXPECT_FALSE(npucc_npu_skip(n.D, c, &w[i], &s)) << "nothing is known yet";
  for (int i = 0; i < num; ++i)
    npucc_npu_note(n.D, &s, w[i].reg, w[i].value);
  int doorbell = n.regIndex("CTRL");
  for (int i = 0; i < num; ++i)
    EXPECT_EQ(npucc_npu_skip(n.D, c, &w[i], &s), w[i].reg != doorbell) << n.D->regs[w[i].reg].name;
  // A changed value is written; NULL record: never skipped; forgotten: written.
  npucc_reg_write changed = w[0];
  changed.value ^= 4;
  EXPECT_FALSE(npucc_npu_skip(n.D, c, &changed, &s));
  EXPECT_FALSE(npucc_npu_skip(n.D, c, &w[0], nullptr));
  npucc_npu_forget(n.D, &s);
  EXPECT_FALSE(npucc_npu_skip(n.D, c, &w[0], &s));
}

TEST(RegPersist, HalWritesOnlyChangedRegistersAndForgetsAfterInitAndWrites) {
  Npu n(persist);
  ASSERT_TRUE(n.Sim);
  EXPECT_EQ(n.dma(0x1000, 64), 4u) << "A, B, C, then CTRL with the doorbell";
  EXPECT_EQ(n.dma(0x1000, 64), 1u) << "only the doorbell's register";
  EXPECT_EQ(n.dma(0x1040, 64), 2u) << "A changed";
  EXPECT_EQ(n.dma(0x1040, 32), 2u) << "C changed";
  // A write behind the command layer's back, or a new init: written again.
  npucc_hal_write(n.T.registers[size_t(n.regIndex("B"))].offset, 0, 32);
  EXPECT_EQ(n.dma(0x1040, 32), 2u) << "B written again";
  npucc_hal_init(n.D);
  EXPECT_EQ(n.dma(0x1040, 32), 4u);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << npucc_sim_error(n.Sim);
}

TEST(RegPersist, WithoutTheKeyEveryCommandWritesEveryRegister) {
  Npu n(asWritten);
  ASSERT_TRUE(n.Sim);
  EXPECT_EQ(n.dma(0x1000, 64), 4u);
  EXPECT_EQ(n.dma(0x1000, 64), 4u);
  EXPECT_FALSE(npucc_sim_failed(n.Sim)) << npucc_sim_error(n.Sim);
}

TEST(RegPersist, SimulatorRefusesACommandRelyingOnARegisterThatDoesNotPersist) {
  for (bool on : {false, true}) {
    Npu n(on ? persist : asWritten);
    ASSERT_TRUE(n.Sim);
    EXPECT_EQ(n.dma(0x1000, 64), 4u);
    // The second command: only the doorbell's register, as a HAL that
    // skipped the unchanged writes would do.
    auto p = Npu::dmaParams(0x1000, 64);
    npucc_reg_write w[NPUCC_MAX_CMD_REGS];
    int num = 0;
    ASSERT_EQ(npucc_npu_encode(n.D, NPUCC_KIND_DMA, p.data(), w, &num, nullptr), NPUCC_OK);
    const npucc_reg_write &bell = w[num - 1];
    npucc_sim_reg_write(n.Sim, n.D->regs[bell.reg].offset, bell.value, n.D->regs[bell.reg].width);
    if (on) {
      EXPECT_FALSE(npucc_sim_failed(n.Sim)) << npucc_sim_error(n.Sim);
    } else {
      ASSERT_TRUE(npucc_sim_failed(n.Sim));
      EXPECT_NE(std::string(npucc_sim_error(n.Sim))
                    .find(", read by this 'dma' command, was not written since the previous "
                          "command started"),
                std::string::npos)
          << npucc_sim_error(n.Sim);
    }
  }
}
