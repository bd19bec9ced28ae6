//===- SimTarget.h - A loaded description attached to a host simulator ----===//
//
// The common part of the simulator tests' fixtures (sim_control, sim_status,
// sim_hazards, sim_delivery, sim_commands): the description, its in-memory C table, a
// simulator created from it and attached to the HAL, no wait hook; the
// simulator is destroyed with the fixture. A description that does not load
// is a test failure and leaves Sim null (fixtures check it before using it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/support/Result.h"
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include <gtest/gtest.h>

#include <memory>

#include "npucc_hal.h"
#include "npucc_sim.h"

namespace npucc::test {

struct SimTarget {
  target::TargetDesc T;
  std::unique_ptr<target::CTable> Table;
  const npucc_target_desc *D = nullptr;
  npucc_sim *Sim = nullptr;

  explicit SimTarget(Result<target::TargetDesc> r) {
    EXPECT_TRUE(r.ok()) << (r ? "" : r.error().str());
    if (!r)
      return;
    T = r.take();
    Table = std::make_unique<target::CTable>(T);
    D = Table->get();
    Sim = npucc_sim_create(D);
    npucc_sim_attach(Sim);
    npucc_hal_set_wait_hook(nullptr, nullptr);
  }
  ~SimTarget() { npucc_sim_destroy(Sim); }
  SimTarget(const SimTarget &) = delete;
  SimTarget &operator=(const SimTarget &) = delete;
};

} // namespace npucc::test
