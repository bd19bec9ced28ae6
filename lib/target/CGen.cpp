//===- CGen.cpp - Register-map header and C description table text --------===//
//
// The C description table (the register-map header is CGenRegs.cpp's).
// Both texts are derived from the description alone. The C table is printed
// from the same in-memory CTable the host tests use, so the simulator and the
// firmware command layer see identical data.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"

#include "CGenText.h"

#include "../../runtime/hal/npucc_desc.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <sstream>

namespace npucc::target {
using cgen::commentSafe;
using cgen::hex;
namespace {

const char *const ParamEnumNames[] = {
#define NPUCC_PARAM_ENUM_NAME(id, name, def, req, allowed, sgn) "NPUCC_P_" #id,
    NPUCC_PARAM_LIST(NPUCC_PARAM_ENUM_NAME)
#undef NPUCC_PARAM_ENUM_NAME
};
const char *const DeliveryEnumNames[] = {
#define NPUCC_DELIVERY_ENUM_NAME(id, name) "NPUCC_DELIVERY_" #id,
    NPUCC_DELIVERY_LIST(NPUCC_DELIVERY_ENUM_NAME)
#undef NPUCC_DELIVERY_ENUM_NAME
};
const char *const KindEnumNames[] = {"NPUCC_KIND_DMA",    "NPUCC_KIND_CONV", "NPUCC_KIND_DEPTHWISE",
                                     "NPUCC_KIND_MATMUL", "NPUCC_KIND_POOL", "NPUCC_KIND_ELTWISE",
                                     "NPUCC_KIND_FENCE"};

/// A signed 64-bit C constant that is valid for every value (INT64_MIN too).
std::string i64(int64_t v) {
  if (v == INT64_MIN)
    return "(-9223372036854775807 - 1)";
  if (v > INT32_MAX || v < INT32_MIN)
    return "(int64_t)" + std::to_string(v) + "ll";
  return std::to_string(v);
}

std::string cString(const std::string &s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o + "\"";
}

std::string ref(const npucc_fieldref &f) {
  return "{" + std::to_string(f.reg) + ", " + std::to_string(f.lsb) + ", " +
         std::to_string(f.width) + "}";
}

std::string bit(const npucc_status_bit &b) {
  return "{" + ref(b.f) + ", " + std::to_string(b.flags) + ", {" + ref(b.clear.field) + ", " +
         hex(b.clear.value) + "}}";
}

} // namespace

namespace {

const char *const ExprOpNames[] = {
    "NPUCC_EXPR_CONST", "NPUCC_EXPR_PARAM", "NPUCC_EXPR_ADD",  "NPUCC_EXPR_SUB", "NPUCC_EXPR_MUL",
    "NPUCC_EXPR_DIV",   "NPUCC_EXPR_MOD",   "NPUCC_EXPR_CDIV", "NPUCC_EXPR_MIN", "NPUCC_EXPR_MAX",
    "NPUCC_EXPR_SHL",   "NPUCC_EXPR_SHR",   "NPUCC_EXPR_AND",  "NPUCC_EXPR_OR"};

/// The computed fields' tables ("fields"): bindings, postfix expression ops,
/// cases and their conditions. Nothing for a description without them.
void emitFieldTables(std::ostringstream &o, const npucc_target_desc &d, const TargetDesc &t,
                     const std::string &id) {
  std::vector<const FieldBinding *> all;
  for (const CommandDesc &c : t.commands)
    for (const FieldBinding &b : c.fields)
      all.push_back(&b);
  if (d.num_expr_ops) {
    o << "static const npucc_expr_op " << id << "_expr_ops[] = {\n";
    for (uint16_t i = 0; i < d.num_expr_ops; ++i) {
      const npucc_expr_op &e = d.expr_ops[i];
      o << "    {" << ExprOpNames[e.op] << ", "
        << (e.op == NPUCC_EXPR_PARAM ? std::string(ParamEnumNames[e.arg]) : i64(e.arg)) << "},\n";
    }
    o << "};\n\n";
  }
  if (d.num_cases) {
    o << "static const npucc_fixed " << id << "_case_conds[] = {\n";
    for (uint16_t i = 0; i < d.num_case_conds; ++i)
      o << "    {" << ParamEnumNames[d.case_conds[i].param] << ", " << i64(d.case_conds[i].value)
        << "},\n";
    o << "};\n\nstatic const npucc_expr_case " << id << "_cases[] = {\n";
    for (uint16_t i = 0; i < d.num_cases; ++i)
      o << "    {" << hex(d.cases[i].value) << ", " << d.cases[i].first_cond << ", "
        << d.cases[i].num_conds << "},\n";
    o << "};\n\n";
  }
  if (d.num_field_bindings) {
    o << "static const npucc_field_binding " << id << "_field_bindings[] = {\n";
    for (uint16_t i = 0; i < d.num_field_bindings; ++i) {
      const npucc_field_binding &b = d.field_bindings[i];
      o << "    {" << b.cmd << ", " << ref(b.field) << ", "
        << (b.kind == NPUCC_FB_CASES ? "NPUCC_FB_CASES" : "NPUCC_FB_EXPR") << ", "
        << unsigned(b.decodes) << ", "
        << (b.param >= 0 ? std::string(ParamEnumNames[b.param]) : std::string("-1")) << ", "
        << b.first << ", " << b.count << "}, /* " << commentSafe(all[i]->field.text) << " <- "
        << commentSafe(all[i]->text()) << " */\n";
    }
    o << "};\n\n";
  }
  if (d.num_op_timing) {
    o << "static const npucc_op_timing " << id << "_op_timing[] = {\n";
    for (uint16_t i = 0; i < d.num_op_timing; ++i) {
      const npucc_op_timing &r = d.op_timing[i];
      const OpTiming &ot = t.compute.operations.at(npucc_kind_name(r.kind)).timing;
      o << "    {" << KindEnumNames[r.kind] << ", " << r.steps_first << ", " << r.steps_count
        << ", " << r.macs_first << ", " << r.macs_count << "}, /* steps "
        << (ot.steps ? commentSafe(printExpr(*ot.steps)) : "formula") << ", macs "
        << (ot.macs ? commentSafe(printExpr(*ot.macs)) : "formula") << " */\n";
    }
    o << "};\n\n";
  }
}

} // namespace

std::string emitCTableHeader(const TargetDesc &t) {
  std::string id = cIdentifier(t.name);
  std::string P = macroPrefix(t.name);
  std::ostringstream o;
  o << "/* Description table of NPU '" << commentSafe(t.name)
    << "'. Generated by npucc; do not edit. */\n"
    << "#ifndef NPUCC_TARGET_" << P << "_H\n#define NPUCC_TARGET_" << P << "_H\n\n"
    << "#include \"npucc_desc.h\"\n\n"
    << "extern const npucc_target_desc npucc_target_" << id << ";\n\n"
    << "#endif /* NPUCC_TARGET_" << P << "_H */\n";
  return o.str();
}

namespace {

/// `static const uint8_t <name>[NPUCC_KIND_COUNT * (cols + cols2)]`: one row
/// of `cols` values per command kind, the kind named in a comment, then (cols2
/// > 0) one row of `cols2` values per kind after the comment `more`.
void kindTable(std::ostream &o, const std::string &name, const uint8_t *v, int cols, int cols2 = 0,
               const char *more = "") {
  o << "static const uint8_t " << name << "[" << NPUCC_KIND_COUNT * (cols + cols2) << "] = {\n";
  for (int block = 0; block < (cols2 ? 2 : 1); ++block) {
    int n = block ? cols2 : cols;
    if (block) {
      v += NPUCC_KIND_COUNT * cols;
      o << "    /* " << more << " */\n";
    }
    for (int k = 0; k < NPUCC_KIND_COUNT; ++k) {
      o << "    ";
      for (int c = 0; c < n; ++c)
        o << unsigned(v[k * n + c]) << (c + 1 < n ? ", " : "");
      o << ", /* " << KindEnumNames[k] << " */\n";
    }
  }
  o << "};\n";
}

/// How many per-operand entries to print: all NPUCC_OPND_COUNT where some
/// operation reads the act operand (the lut256 stage) or a rule names it, else
/// the six before it (the act entries are then read by nothing and zero in C),
/// so the tables of descriptions without a lut256 stage stay as they were.
int operandEntries(const npucc_target_desc &d) {
  bool act = false;
  for (int k = 0; k < NPUCC_KIND_COUNT; ++k)
    act = act ||
          (d.arith &&
           (d.arith[k * NPUCC_SLOT_COUNT + NPUCC_SLOT_ACTIVATION] == NPUCC_STAGE_ACT_LUT256 ||
            d.arith[k * NPUCC_SLOT_COUNT + NPUCC_SLOT_ACTIVATION] == NPUCC_STAGE_ACT_PWL)) ||
          ((d.ops[k].operand_mem >> NPUCC_OPND_ACT) & 1u);
  for (uint16_t i = 0; i < d.num_mems; ++i)
    for (int k = 0; k < NPUCC_OPND_COUNT; ++k)
      act = act || ((d.mems[i].separate[k] >> NPUCC_OPND_ACT) & 1u);
  return act ? NPUCC_OPND_COUNT : NPUCC_OPND_ACT;
}

} // namespace

std::string emitCTableSource(const TargetDesc &t) {
  CTable table(t);
  const npucc_target_desc &d = *table.get();
  const int opnds = operandEntries(d);
  std::string id = cIdentifier(t.name);
  std::ostringstream o;
  o << "/* Description table of NPU '" << commentSafe(t.name)
    << "', consumed by the command layer (npucc_npu.c) and the simulator.\n"
    << " * Generated by npucc from the target description; do not edit. */\n"
    << "#include \"npucc_desc.h\"\n\n#include <stddef.h>\n\n";
  o << "static const npucc_field_desc " << id << "_fields[] = {\n";
  for (uint16_t i = 0; i < d.num_fields; ++i)
    o << "    {" << cString(d.fields[i].name) << ", " << unsigned(d.fields[i].lsb) << ", "
      << unsigned(d.fields[i].width) << ", " << d.fields[i].we << "},\n";
  if (d.num_fields == 0)
    o << "    {\"\", 0, 0, -1},\n";
  o << "};\n\nstatic const npucc_reg_desc " << id << "_regs[] = {\n";
  for (uint16_t i = 0; i < d.num_regs; ++i)
    o << "    {" << cString(d.regs[i].name) << ", " << hex(d.regs[i].offset, 2) << ", "
      << unsigned(d.regs[i].width) << ", " << d.regs[i].first_field << ", " << d.regs[i].num_fields
      << ", "
      << (d.regs[i].flags & NPUCC_REG_RMW       ? "NPUCC_REG_RMW"
          : d.regs[i].flags & NPUCC_REG_WORD    ? "NPUCC_REG_WORD"
          : d.regs[i].flags & NPUCC_REG_PERSIST ? "NPUCC_REG_PERSIST"
                                                : "0")
      << "}, /* " << i << " */\n";
  o << "};\n\n";
  for (uint16_t c = 0; c < d.num_cmds; ++c) {
    const npucc_cmd_desc &cd = d.cmds[c];
    std::string base = id + "_" + t.commands[c].kind;
    if (cd.num_bindings) {
      o << "static const npucc_binding " << base << "_bindings[] = {\n";
      for (uint16_t i = 0; i < cd.num_bindings; ++i) {
        const npucc_binding &b = cd.bindings[i];
        o << "    {" << ParamEnumNames[b.param] << ", " << unsigned(b.shift) << ", "
          << unsigned(b.num_parts) << ", " << ref(b.field) << ", " << b.more << ", " << i64(b.minus)
          << "}, /* " << commentSafe(t.commands[c].params[i].text()) << " */\n";
      }
      o << "};\n";
    }
    if (cd.num_fixed) {
      o << "static const npucc_fixed " << base << "_fixed[] = {\n";
      for (uint16_t i = 0; i < cd.num_fixed; ++i)
        o << "    {" << ParamEnumNames[cd.fixed[i].param] << ", " << i64(cd.fixed[i].value)
          << "},\n";
      o << "};\n";
    }
    if (cd.num_select) {
      o << "static const npucc_fieldval " << base << "_select[] = {\n";
      for (uint16_t i = 0; i < cd.num_select; ++i)
        o << "    {" << ref(cd.select[i].field) << ", " << hex(cd.select[i].value) << "},\n";
      o << "};\n";
    }
  }
  o << "\nstatic const npucc_cmd_desc " << id << "_cmds[] = {\n";
  for (uint16_t c = 0; c < d.num_cmds; ++c) {
    const npucc_cmd_desc &cd = d.cmds[c];
    std::string base = id + "_" + t.commands[c].kind;
    auto arr = [&](uint16_t n, const char *suffix) {
      return n ? base + suffix : std::string("NULL");
    };
    o << "    {" << KindEnumNames[cd.kind] << ", "
      << (cd.engine == NPUCC_ENGINE_DMA     ? "NPUCC_ENGINE_DMA"
          : cd.engine == NPUCC_ENGINE_FENCE ? "NPUCC_ENGINE_FENCE"
                                            : "NPUCC_ENGINE_COMPUTE")
      << ", " << arr(cd.num_bindings, "_bindings") << ", " << cd.num_bindings << ", "
      << arr(cd.num_fixed, "_fixed") << ", " << cd.num_fixed << ", "
      << arr(cd.num_select, "_select") << ", " << cd.num_select << ", {" << ref(cd.doorbell.field)
      << ", " << hex(cd.doorbell.value) << "}, " << hex(cd.doorbell_nop) << "},\n";
  }
  o << "};\n\n";
  if (d.num_parts) {
    o << "static const npucc_fieldref " << id << "_parts[] = {\n";
    for (uint16_t i = 0; i < d.num_parts; ++i)
      o << "    " << ref(d.parts[i]) << ",\n";
    o << "};\n\n";
  }
  o << "static const npucc_mem_desc " << id << "_mems[] = {\n";
  for (uint16_t i = 0; i < d.num_mems; ++i) {
    const npucc_mem_desc &m = d.mems[i];
    o << "    {" << cString(m.name) << ", " << hex(m.base, 8) << ", " << hex(m.size) << ", "
      << (m.kind == NPUCC_MEM_SCRATCHPAD ? "NPUCC_MEM_SCRATCHPAD" : "NPUCC_MEM_SYSTEM") << ", "
      << unsigned(m.writable) << ", " << m.banks << ", " << hex(m.bank_size) << ", " << m.alignment
      << ", {";
    for (int k = 0; k < opnds; ++k)
      o << (k ? ", " : "") << m.operand_alignment[k];
    o << "}, {";
    for (int k = 0; k < opnds; ++k)
      o << (k ? ", " : "") << unsigned(m.separate[k]);
    o << "}, " << unsigned(m.bank_conflict) << ", " << m.conflict_slowdown << ", "
      << m.read_bytes_per_cycle << ", " << m.write_bytes_per_cycle << ", " << m.latency_cycles
      << "},\n";
  }
  o << "};\n\n";
  if (d.num_init) {
    o << "static const npucc_fieldval " << id << "_init[] = {\n";
    for (uint16_t i = 0; i < d.num_init; ++i)
      o << "    {" << ref(d.init[i].field) << ", " << hex(d.init[i].value) << "}, /* "
        << commentSafe(t.init[i].field.text) << " */\n";
    o << "};\n\n";
  }
  emitFieldTables(o, d, t, id);
  if (d.num_frames) {
    o << "static const npucc_frame_desc " << id << "_frames[] = {\n";
    for (uint16_t i = 0; i < d.num_frames; ++i)
      o << "    {" << cString(d.frames[i].name) << ", " << unsigned(d.frames[i].word_bits) << ", "
        << d.frames[i].first_reg << ", " << d.frames[i].num_words << "},\n";
    o << "};\n\n";
  }
  if (d.num_deliveries) {
    o << "static const npucc_delivery_desc " << id << "_deliveries[] = {\n";
    for (uint16_t i = 0; i < d.num_deliveries; ++i) {
      const npucc_delivery_desc &x = d.deliveries[i];
      o << "    {" << x.cmd << ", " << DeliveryEnumNames[x.mode] << ", " << x.frame << ", " << x.reg
        << ", " << x.depth_words << "u, " << hex(x.opcode, 2) << ", " << unsigned(x.funct3) << ", "
        << unsigned(x.funct7) << "}, /* " << t.commands[x.cmd].kind << " */\n";
    }
    o << "};\n\n";
  }
  if (d.arith) {
    o << "/* The arithmetic pipeline of each operation: stage ids (npucc_params.h) of the\n"
         " * slots input, correction, mac, requant, activation, pool, output. */\n";
    kindTable(o, id + "_arith", d.arith, NPUCC_SLOT_COUNT);
  }
  if (d.stage_params) {
    o << "/* The stages' widths (npucc_desc.h NPUCC_SP_*): mul_shift_add's mul, shift and add\n"
         " * bits, pwl's segments. */\n";
    // The pool rows follow where an operation has a max or select stage.
    bool pool = false;
    for (int k = 0; k < NPUCC_KIND_COUNT; ++k)
      pool = pool || npucc_stage_of(d.arith, k, NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_MAX ||
             npucc_stage_of(d.arith, k, NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_SELECT;
    kindTable(o, id + "_stage_params", d.stage_params, NPUCC_SP_COUNT, pool ? NPUCC_SPP_COUNT : 0,
              "pool (NPUCC_SPP_*): window sizes (bit k, 4 bytes), select's kept\n"
              "     * pixels (bit 8 * row + column, 8 bytes)");
  }
  bool persist = false;
  for (uint16_t i = 0; i < d.num_regs; ++i)
    persist |= (d.regs[i].flags & NPUCC_REG_PERSIST) != 0;
  if (persist)
    o << "/* What the HAL last wrote into each NPUCC_REG_PERSIST register (npucc_npu_skip);\n"
         " * npucc_hal_init clears it. */\n"
      << "static uint64_t " << id << "_shadow_value[" << d.num_regs << "];\n"
      << "static uint8_t " << id << "_shadow_known[" << d.num_regs << "];\n"
      << "static const npucc_reg_shadow " << id << "_shadow = {" << id << "_shadow_value, " << id
      << "_shadow_known};\n\n";
  if (d.cmdbuf) {
    const npucc_cmdbuf_desc &b = *d.cmdbuf;
    o << "/* The command buffer (delivery \"buffer\"): define NPUCC_CMDBUF_ATTR to place it\n"
      << " * where the NPU reads it (e.g. a section attribute). */\n"
      << "#ifndef NPUCC_CMDBUF_ATTR\n#define NPUCC_CMDBUF_ATTR\n#endif\n"
      << "static NPUCC_CMDBUF_ATTR uint" << unsigned(b.word_bits) << "_t " << id << "_cmdbuf_words["
      << b.capacity_words << "];\n\n"
      << "static const npucc_cmdbuf_desc " << id << "_cmdbuf = {" << id << "_cmdbuf_words, "
      << b.capacity_words << "u, " << unsigned(b.word_bits) << ", " << b.frame << ", "
      << ref(b.address) << ", " << ref(b.length) << ", " << unsigned(b.length_bytes) << ", {"
      << ref(b.kick.field) << ", " << hex(b.kick.value) << "}};\n\n";
  }
  bool insn = false;
  for (uint16_t i = 0; i < d.num_deliveries; ++i)
    insn |= d.deliveries[i].mode == NPUCC_DELIVERY_INSN;
  if (insn) {
    // .insn takes immediates: one case per instruction, with constants.
    o << "#ifndef NPUCC_HAL_SIM\n#include \"npucc_hal.h\"\n\n#ifndef NPUCC_HAL_INSN\n"
      << "#error \"define NPUCC_HAL_INSN for your CPU\"\n#endif\n\n"
      << "/* The custom instruction of each insn delivery (npucc_hal.h NPUCC_HAL_INSN). */\n"
      << "static void " << id << "_insn(uint16_t delivery, uint64_t rs1, uint64_t rs2) {\n"
      << "  switch (delivery) {\n";
    for (uint16_t i = 0; i < d.num_deliveries; ++i) {
      const npucc_delivery_desc &x = d.deliveries[i];
      if (x.mode == NPUCC_DELIVERY_INSN)
        o << "  case " << i << ": /* " << t.commands[x.cmd].kind << " */\n    NPUCC_HAL_INSN("
          << unsigned(x.opcode) << ", " << unsigned(x.funct3) << ", " << unsigned(x.funct7)
          << ", rs1, rs2);\n    break;\n";
    }
    o << "  default:\n    break;\n  }\n}\n#endif\n\n";
  }
  o << "const npucc_target_desc npucc_target_" << id << " = {\n"
    << "    .name = " << cString(d.name) << ",\n"
    << "    .address_bits = " << unsigned(d.address_bits) << ",\n"
    << "    .base_address = " << hex(d.base_address, 8) << ",\n"
    << "    .bus_access_bits = " << unsigned(d.bus_access_bits) << ",\n"
    << "    .bus_order = "
    << (d.bus_order == NPUCC_BUS_HIGH_FIRST ? "NPUCC_BUS_HIGH_FIRST" : "NPUCC_BUS_LOW_FIRST")
    << ",\n"
    << "    .regs = " << id << "_regs,\n    .num_regs = " << d.num_regs << ",\n"
    << "    .fields = " << id << "_fields,\n    .num_fields = " << d.num_fields << ",\n"
    << "    .cmds = " << id << "_cmds,\n    .num_cmds = " << d.num_cmds << ",\n"
    << "    .parts = " << (d.num_parts ? id + "_parts" : std::string("NULL"))
    << ",\n    .num_parts = " << d.num_parts << ",\n"
    << "    .engines = {";
  for (int e = 0; e < NPUCC_ENGINE_COUNT; ++e)
    o << (e ? ",\n                " : "") << "{" << bit(d.engines[e].busy) << ", "
      << bit(d.engines[e].done) << ", " << bit(d.engines[e].error) << ", "
      << bit(d.engines[e].free_slots) << "}";
  o << "}, /* busy, done, error, free slots */\n"
    << "    .concurrent = " << unsigned(d.concurrent) << ",\n"
    << "    .completion = "
    << (d.completion == NPUCC_COMPLETION_FENCE ? "NPUCC_COMPLETION_FENCE" : "NPUCC_COMPLETION_POLL")
    << ",\n"
    << "    .queue_depth = " << d.queue_depth << ",\n"
    << "    .mems = " << id << "_mems,\n    .num_mems = " << d.num_mems << ",\n"
    << "    .dma_channels = " << unsigned(d.dma_channels) << ",\n"
    << "    .dma_dims = " << unsigned(d.dma_dims) << ",\n"
    << "    .dma_zero_fill = " << unsigned(d.dma_zero_fill) << ",\n"
    << "    .dma_bytes_per_cycle = " << d.dma_bytes_per_cycle << "u,\n"
    << "    .dma_read_bytes_per_cycle = " << d.dma_read_bytes_per_cycle << "u,\n"
    << "    .dma_write_bytes_per_cycle = " << d.dma_write_bytes_per_cycle << "u,\n"
    << "    .dma_setup_cycles = " << d.dma_setup_cycles << "u,\n"
    << "    .dma_alignment = " << d.dma_alignment << "u,\n"
    << "    .dma_max_burst = " << d.dma_max_burst << "u,\n"
    << "    .dma_max_length = " << hex(d.dma_max_length) << ",\n"
    << "    .dma_max_rows = " << hex(d.dma_max_rows) << ",\n"
    << "    .dma_max_planes = " << hex(d.dma_max_planes) << ",\n"
    << "    .dma_max_stride = " << hex(d.dma_max_stride) << ",\n"
    << "    .dma_max_plane_stride = " << hex(d.dma_max_plane_stride) << ",\n"
    << "    .mac_rows = " << d.mac_rows << "u,\n"
    << "    .mac_cols = " << d.mac_cols << "u,\n"
    << "    .acc_bits = " << unsigned(d.acc_bits) << ",\n"
    << "    .ops = {\n";
  for (int k = 0; k < NPUCC_KIND_COUNT; ++k) {
    const npucc_op_limits &l = d.ops[k];
    if (!l.supported)
      continue;
    o << "        [" << KindEnumNames[k] << "] = {1, " << hex(l.kh_mask, 8) << ", "
      << hex(l.kw_mask, 8) << ", " << hex(l.stride_mask, 8) << ", " << hex(l.dilation_mask, 8)
      << ", " << hex(l.depth_mult_mask, 8) << ", {" << l.max_pad[0] << ", " << l.max_pad[1] << ", "
      << l.max_pad[2] << ", " << l.max_pad[3] << "}, " << l.in_ch_multiple << "u, "
      << l.out_ch_multiple << "u, " << l.max_in_ch << "u, " << l.max_out_ch << "u, " << l.max_in_h
      << "u, " << l.max_in_w << "u, " << l.max_out_h << "u, " << l.max_out_w << "u, " << l.max_m
      << "u, " << l.max_k << "u, " << l.max_n << "u, " << hex(l.kinds_mask) << ", "
      << unsigned(l.requant) << ", " << unsigned(l.fused_clamp) << ", " << l.cycles_per_step
      << "u, " << l.fill_cycles << "u, " << l.overhead_cycles << "u, " << hex(l.operand_mem)
      << ", {";
    for (int i = 0; i < opnds; ++i)
      o << (i ? ", " : "") << unsigned(l.operand_align_log2[i]);
    o << "}},\n";
  }
  o << "    },\n";
  // Weight layouts (phase 6), only where one is not the default OHWI, so
  // the tables of other descriptions stay as they were.
  static const char *const WeightKeys[] = {"weight_layout", "weight_block_o", "weight_block_i"};
  for (int f = 0; f < 3; ++f) {
    std::string items;
    for (int k = 0; k < NPUCC_KIND_COUNT; ++k) {
      unsigned v = f == 0 ? d.weight_layout[k] : f == 1 ? d.weight_block_o[k] : d.weight_block_i[k];
      if (d.weight_layout[k] && (f == 0 || v > 1))
        items += std::string(items.empty() ? "" : ", ") + "[" + KindEnumNames[k] +
                 "] = " + std::to_string(v);
    }
    if (!items.empty())
      o << "    ." << WeightKeys[f] << " = {" << items << "},\n";
  }
  // Activation layouts (phase 6), likewise only where blocked.
  {
    std::string items;
    for (int k = 0; k < NPUCC_KIND_COUNT; ++k)
      if (d.act_block[k] > 1)
        items += std::string(items.empty() ? "" : ", ") + "[" + KindEnumNames[k] +
                 "] = " + std::to_string(d.act_block[k]);
    if (!items.empty())
      o << "    .act_block = {" << items << "},\n";
    if (d.pool_avg_rounding) // likewise only where it is not the default
      o << "    .pool_avg_rounding = " << unsigned(d.pool_avg_rounding) << ",\n";
  }
  o << "    .clock_hz = " << d.clock_hz << "u,\n"
    << "    .command_overhead_cycles = " << d.command_overhead_cycles << "u,\n"
    << "    .vector_elems_per_cycle = " << d.vector_elems_per_cycle << "u,\n"
    << "    .reg_access_cycles = " << d.reg_access_cycles << "u,\n"
    << "    .poll_cycles = " << d.poll_cycles << "u,\n";
  if (d.num_init)
    o << "    .init = " << id << "_init,\n    .num_init = " << d.num_init << ",\n";
  if (d.num_field_bindings)
    o << "    .field_bindings = " << id
      << "_field_bindings,\n    .num_field_bindings = " << d.num_field_bindings << ",\n";
  if (d.num_expr_ops)
    o << "    .expr_ops = " << id << "_expr_ops,\n    .num_expr_ops = " << d.num_expr_ops << ",\n";
  if (d.num_cases)
    o << "    .cases = " << id << "_cases,\n    .num_cases = " << d.num_cases << ",\n"
      << "    .case_conds = " << id << "_case_conds,\n    .num_case_conds = " << d.num_case_conds
      << ",\n";
  if (d.num_op_timing)
    o << "    .op_timing = " << id << "_op_timing,\n    .num_op_timing = " << d.num_op_timing
      << ",\n";
  if (d.num_frames)
    o << "    .frames = " << id << "_frames,\n    .num_frames = " << d.num_frames << ",\n";
  if (d.num_deliveries)
    o << "    .deliveries = " << id << "_deliveries,\n    .num_deliveries = " << d.num_deliveries
      << ",\n";
  if (insn)
    o << "#ifndef NPUCC_HAL_SIM\n    .insn = " << id << "_insn,\n#endif\n";
  if (d.cmdbuf)
    o << "    .cmdbuf = &" << id << "_cmdbuf,\n";
  if (d.arith)
    o << "    .arith = " << id << "_arith,\n";
  if (d.stage_params)
    o << "    .stage_params = " << id << "_stage_params,\n";
  if (persist)
    o << "    .shadow = &" << id << "_shadow,\n";
  o << "};\n";
  return o.str();
}

std::vector<std::pair<std::string, std::string>> emitTargetFiles(const TargetDesc &t) {
  std::string id = cIdentifier(t.name);
  std::vector<std::pair<std::string, std::string>> f;
  f.push_back({id + "_target.c", "#include \"" + id + "_target.h\"\n" + emitCTableSource(t)});
  f.push_back({id + "_target.h", emitCTableHeader(t)});
  // The same table under a fixed name, so code that works for any NPU (generated
  // programs, runtime/examples/npu_host_test.c, a firmware's own) needs no edit.
  f.push_back(
      {"npucc_target.h", "/* The description table of this NPU, '" + commentSafe(t.name) +
                             "', under a fixed name. Generated by npucc; do not edit. */\n"
                             "#ifndef NPUCC_TARGET_H\n#define NPUCC_TARGET_H\n\n#include \"" +
                             id + "_target.h\"\n\n#define NPUCC_TARGET (&npucc_target_" + id +
                             ")\n\n#endif /* NPUCC_TARGET_H */\n"});
  f.push_back({id + "_regs.h", emitRegisterHeader(t)});
  return f;
}

} // namespace npucc::target
