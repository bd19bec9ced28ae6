//===- CTableSize.cpp - Bytes of a description's const tables -------------===//
//
// The flash the emitted <id>_target.c takes, for the compile-time memory fit
// (lib/driver/MemoryFit.cpp): every array of the in-memory npucc_target_desc
// times its element size, plus the name strings. Counted with the host's
// struct layout (8-byte pointers, 64-bit alignment), which is at least the
// 32-bit microcontroller's: an upper bound.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"

#include "../../runtime/hal/npucc_desc.h"

#include <cstring>

namespace npucc::target {

uint64_t descTableBytes(const npucc_target_desc &d) {
  auto str = [](const char *s) -> uint64_t { return s ? std::strlen(s) + 1 : 0; };
  uint64_t n = sizeof d + str(d.name);
  n += uint64_t(d.num_regs) * sizeof(npucc_reg_desc);
  for (unsigned i = 0; i < d.num_regs; ++i)
    n += str(d.regs[i].name);
  n += uint64_t(d.num_fields) * sizeof(npucc_field_desc);
  for (unsigned i = 0; i < d.num_fields; ++i)
    n += str(d.fields[i].name);
  n += uint64_t(d.num_cmds) * sizeof(npucc_cmd_desc);
  for (unsigned i = 0; i < d.num_cmds; ++i) {
    const npucc_cmd_desc &c = d.cmds[i];
    n += uint64_t(c.num_bindings) * sizeof(npucc_binding) +
         uint64_t(c.num_fixed) * sizeof(npucc_fixed) +
         uint64_t(c.num_select) * sizeof(npucc_fieldval);
  }
  n += uint64_t(d.num_parts) * sizeof(npucc_fieldref);
  n += uint64_t(d.num_mems) * sizeof(npucc_mem_desc);
  for (unsigned i = 0; i < d.num_mems; ++i)
    n += str(d.mems[i].name);
  n += uint64_t(d.num_init) * sizeof(npucc_fieldval);
  n += uint64_t(d.num_field_bindings) * sizeof(npucc_field_binding);
  n += uint64_t(d.num_expr_ops) * sizeof(npucc_expr_op);
  n += uint64_t(d.num_cases) * sizeof(npucc_expr_case);
  n += uint64_t(d.num_case_conds) * sizeof(npucc_fixed);
  if (d.arith)
    n += uint64_t(NPUCC_KIND_COUNT) * NPUCC_SLOT_COUNT;
  n += uint64_t(d.num_op_timing) * sizeof(npucc_op_timing);
  return n;
}

} // namespace npucc::target
