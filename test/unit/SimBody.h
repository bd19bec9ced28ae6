//===- SimBody.h - A loop-IR body run through the HAL on the simulator ----===//
//
// For tests of the NPU lowering: the body's `npu` and `wait` instructions
// issued as the generated command stream issues them, and the simulator's
// totals compared with the compiler's estimate.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_sim.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace npucc::test {

/// Runs a body through the HAL on the simulator the way the generated
/// command stream does (npucc_stream.c: every command from the parameter
/// defaults, one npucc_hal_wait_engines call per wait over the engines of its
/// tokens, WFI between polls).
struct SimRun {
  bool ok = false;
  std::string error;
  npucc_sim_totals totals{};
};

inline SimRun runOnSim(const lir::Program &p, const target::TargetDesc &t,
                       std::vector<uint8_t> &arenaMem, std::vector<uint8_t> &constMem) {
  SimRun r;
  target::CTable table(t);
  const npucc_target_desc *d = table.get();
  npucc_sim *sim = npucc_sim_create(d);
  npucc_sim_attach(sim);
  npucc_hal_set_wait_hook(npucc_sim_wfi_hook, sim);
  uint64_t constBytes = constMem.size();
  uint64_t arenaBase = lower::npu::regionBase(t, lir::Region::Arena, constBytes);
  uint64_t constBase = lower::npu::regionBase(t, lir::Region::Const, constBytes);
  EXPECT_EQ(npucc_sim_map(sim, arenaBase, arenaMem.data(), arenaMem.size()), 0);
  if (constBase != arenaBase) {
    EXPECT_EQ(npucc_sim_map(sim, constBase, constMem.data(), constMem.size()), 0);
  }
  std::map<int, int> engineOf;
  int rc = NPUCC_OK;
  for (const lir::Instr &in : p.body) {
    if (in.opcode == "wait") {
      unsigned mask = 0;
      for (int tok : in.tokens)
        mask |= 1u << engineOf[tok];
      if (rc == NPUCC_OK)
        rc = npucc_hal_wait_engines(mask, 100000000u);
      continue;
    }
    if (in.opcode != "npu" || rc != NPUCC_OK)
      continue;
    std::vector<int64_t> params(NPUCC_P_COUNT);
    npucc_npu_defaults(params.data());
    for (const auto &kv : in.params) {
      int id = target::paramId(kv.first);
      if (const int64_t *v = std::get_if<int64_t>(&kv.second)) {
        params[size_t(id)] = *v;
      } else if (const lir::BufferRef *b = std::get_if<lir::BufferRef>(&kv.second)) {
        uint64_t base = b->region == lir::Region::Spm     ? t.scratchpads[size_t(b->index)].base
                        : b->region == lir::Region::Const ? constBase
                                                          : arenaBase;
        params[size_t(id)] = int64_t(base) + b->offset;
      }
    }
    int kind = target::commandKindId(in.callee);
    engineOf[in.token] = kind == NPUCC_KIND_DMA ? NPUCC_ENGINE_DMA : NPUCC_ENGINE_COMPUTE;
    int bad = -1;
    rc = npucc_npu_issue(d, kind, params.data(), &bad);
    if (rc != NPUCC_OK)
      r.error = "issue of #" + std::to_string(in.token) + " failed (" + std::to_string(rc) +
                ", param " + std::to_string(bad) + ")";
  }
  npucc_sim_get_totals(sim, &r.totals);
  if (npucc_sim_failed(sim))
    r.error = npucc_sim_error(sim);
  else if (rc != NPUCC_OK && r.error.empty())
    r.error = "rc " + std::to_string(rc);
  r.ok = r.error.empty();
  npucc_hal_set_wait_hook(nullptr, nullptr);
  npucc_sim_attach(nullptr);
  npucc_sim_destroy(sim);
  return r;
}

/// The simulator's totals are the estimate's: busy times, traffic, cycles, register writes.
inline void expectAsEstimated(const SimRun &r, const lower::NpuEstimate &e,
                              const std::string &what) {
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.totals.dma_busy_cycles, e.dmaBusy) << what;
  EXPECT_EQ(r.totals.compute_busy_cycles, e.computeBusy) << what;
  EXPECT_EQ(r.totals.sys_bytes_read, e.sysRead) << what;
  EXPECT_EQ(r.totals.sys_bytes_written, e.sysWrite) << what;
  EXPECT_EQ(r.totals.end_cycles, e.cycles) << what;
  EXPECT_EQ(r.totals.reg_writes, e.regWrites) << what;
}

} // namespace npucc::test
