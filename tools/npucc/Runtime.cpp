//===- Runtime.cpp - `npucc --target T --emit-runtime DIR` ----------------===//
//
// Writes the no-OS NPU runtime for one target into DIR, ready for a firmware
// build: the HAL (MMIO back end unless NPUCC_HAL_SIM is defined), the
// data-driven command layer, the target's description table
// (<id>_target.c/.h, and npucc_target.h defining NPUCC_TARGET as a pointer to
// it) and its register map (<id>_regs.h). With `sim`, also the host simulator
// sources, so host tests can define NPUCC_HAL_SIM.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "npucc/codegen/CEmitter.h"
#include "npucc/codegen/EmbeddedRuntime.h"
#include "npucc/target/CTable.h"

#include <iostream>

namespace npucc::tool {

int runEmitRuntime(const std::string &targetName, const std::string &dir, bool sim) {
  auto t = driver::loadTarget(targetName);
  if (!t)
    return reportError(t.error());
  std::vector<std::string> names = {"hal/npucc_hal.c",   "hal/npucc_hal.h",  "hal/npucc_npu.c",
                                    "hal/npucc_npu.h",   "hal/npucc_desc.h", "hal/npucc_params.h",
                                    "hal/npucc_timing.h"};
  if (sim)
    for (const char *s :
         {"sim/npucc_sim.c", "sim/npucc_sim.h", "sim/npucc_sim_internal.h", "sim/npucc_sim_ops.c",
          "sim/npucc_sim_mac.c", "sim/npucc_sim_mem.c", "sim/npucc_sim_status.c",
          "sim/npucc_sim_delivery.c", "sim/npucc_sim_tables.c", "include/npucc_requant.h",
          "include/npucc_layout.h", "include/npucc_stages.h"})
      names.push_back(s);
  std::vector<codegen::EmittedFile> files;
  for (const std::string &n : names) {
    const std::string *text = codegen::findRuntimeFile(n);
    if (!text)
      return reportError(error("runtime file '" + n + "' is not embedded in npucc"));
    files.push_back({n.substr(n.find('/') + 1), *text});
  }
  std::string id = target::cIdentifier(t->name);
  for (const auto &f : target::emitTargetFiles(*t))
    files.push_back({f.first, f.second});
  Status w = codegen::writeOutputDir(dir, files);
  if (!w)
    return reportError(w.error());
  std::cout << "npucc: wrote the " << t->name << " runtime (" << files.size() << " files"
            << (sim ? ", with the simulator" : "") << ") to " << dir << "\n"
            << "  table: const npucc_target_desc npucc_target_" << id << " in " << id
            << "_target.c\n";
  return 0;
}

} // namespace npucc::tool
