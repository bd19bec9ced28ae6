//===- CGen.cpp - Register-map header and C description table text --------===//
//
// Both texts are derived from the description alone. The C table is printed
// from the same in-memory CTable the host tests use, so the simulator and the
// firmware command layer see identical data.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"

#include "../../runtime/hal/npucc_desc.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <sstream>

namespace npucc::target {
namespace {

const char *const ParamEnumNames[] = {
#define NPUCC_PARAM_ENUM_NAME(id, name, def, req, allowed, sgn) "NPUCC_P_" #id,
    NPUCC_PARAM_LIST(NPUCC_PARAM_ENUM_NAME)
#undef NPUCC_PARAM_ENUM_NAME
};
const bool SignedParams[] = {
#define NPUCC_PARAM_SIGNED(id, name, def, req, allowed, sgn) sgn != 0,
    NPUCC_PARAM_LIST(NPUCC_PARAM_SIGNED)
#undef NPUCC_PARAM_SIGNED
};
const char *const DeliveryEnumNames[] = {
#define NPUCC_DELIVERY_ENUM_NAME(id, name) "NPUCC_DELIVERY_" #id,
    NPUCC_DELIVERY_LIST(NPUCC_DELIVERY_ENUM_NAME)
#undef NPUCC_DELIVERY_ENUM_NAME
};
const char *const KindEnumNames[] = {"NPUCC_KIND_DMA",    "NPUCC_KIND_CONV", "NPUCC_KIND_DEPTHWISE",
                                     "NPUCC_KIND_MATMUL", "NPUCC_KIND_POOL", "NPUCC_KIND_ELTWISE",
                                     "NPUCC_KIND_FENCE"};

/// A C constant: 0x...u, or 0x...ull when it does not fit 32 bits.
std::string hex(uint64_t v, int digits = 0) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "0x%0*llX%s", digits, static_cast<unsigned long long>(v),
                v > 0xFFFFFFFFull ? "ull" : "u");
  return buf;
}

/// A signed 64-bit C constant that is valid for every value (INT64_MIN too).
std::string i64(int64_t v) {
  if (v == INT64_MIN)
    return "(-9223372036854775807 - 1)";
  if (v > INT32_MAX || v < INT32_MIN)
    return "(int64_t)" + std::to_string(v) + "ll";
  return std::to_string(v);
}

std::string statusText(const StatusBit &b) {
  std::string s = b.field.text;
  if (b.activeLow)
    s += " (active low)";
  if (b.sticky)
    s += " (sticky)";
  if (b.clearOnWrite1)
    s += " (write 1 to clear)";
  if (b.clearOnRead)
    s += " (cleared by reading)";
  if (b.clear.field.valid())
    s +=
        " (cleared by writing " + std::to_string(b.clear.value) + " to " + b.clear.field.text + ")";
  if (b.requireClear)
    s += " (must be cleared before the next command)";
  if (b.startBit)
    s += " (start bit: reads as the doorbell value until the command completes)";
  return s;
}

std::string upper(const std::string &s) { return macroPrefix(s); }

/// Text safe inside a C block comment.
std::string commentSafe(std::string s) {
  for (size_t p = s.find("*/"); p != std::string::npos; p = s.find("*/"))
    s.replace(p, 2, "* /");
  return s;
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

/// Each word of each frame: its index and fields (no offsets: words are
/// written into a FIFO in order). Nothing for a description without frames.
void emitFrames(std::ostringstream &o, const TargetDesc &t, const std::string &P) {
  for (const Frame &f : t.frames) {
    o << "/* Frame '" << commentSafe(f.name) << "': " << f.numWords << " " << f.wordBits
      << "-bit words, written in this order (no addresses) */\n";
    for (unsigned k = 0; k < f.numWords; ++k) {
      const Register &r = t.registers[size_t(f.firstReg) + k];
      std::string R = upper(r.name);
      o << "/* " << commentSafe(r.name) << ": word " << k << " of frame '" << commentSafe(f.name)
        << "'";
      if (!r.doc.empty())
        o << ": " << commentSafe(r.doc);
      o << " */\n#define " << P << "_WORD_" << R << "_POSITION " << k << "u\n";
      for (const Field &fd : r.fields) {
        std::string F = P + "_" + R + "_" + upper(fd.name);
        uint64_t mask = fd.width >= 64 ? ~uint64_t(0) : (uint64_t(1) << fd.width) - 1;
        o << "#define " << F << "_SHIFT " << fd.lsb << "u\n";
        o << "#define " << F << "_WIDTH " << fd.width << "u\n";
        o << "#define " << F << "_MASK " << hex(mask) << " /* bits " << fd.lsb + fd.width - 1
          << ".." << fd.lsb << (fd.doc.empty() ? "" : ": " + commentSafe(fd.doc)) << " */\n";
      }
    }
    o << "\n";
  }
}

} // namespace

std::string emitRegisterHeader(const TargetDesc &t) {
  std::string P = macroPrefix(t.name);
  std::ostringstream o;
  o << "/* Register map of NPU '" << commentSafe(t.name) << "'.\n"
    << " * Generated by npucc from the target description; do not edit.\n";
  if (!t.description.empty())
    o << " * " << commentSafe(t.description) << "\n";
  o << " * Offsets are bytes from " << P << "_BASE_ADDRESS. For each field:\n"
    << " *   value = (reg >> FIELD_SHIFT) & FIELD_MASK; FIELD_WIDTH bits. */\n"
    << "#ifndef NPUCC_REGS_" << P << "_H\n#define NPUCC_REGS_" << P << "_H\n\n"
    << "#define " << P << "_BASE_ADDRESS " << hex(t.baseAddress, 8) << "\n\n";
  o << "/* Memories */\n";
  for (const Scratchpad &s : t.scratchpads)
    o << "#define " << P << "_MEM_" << upper(s.name) << "_BASE " << hex(s.base, 8) << "\n#define "
      << P << "_MEM_" << upper(s.name) << "_SIZE " << hex(s.size) << " /* scratchpad, " << s.banks
      << " bank(s), " << s.alignment << "-byte aligned operands */\n";
  for (const SystemRange &s : t.system)
    o << "#define " << P << "_MEM_" << upper(s.name) << "_BASE " << hex(s.base, 8) << "\n#define "
      << P << "_MEM_" << upper(s.name) << "_SIZE " << hex(s.size) << " /* system memory, "
      << (s.writable ? "DMA read/write" : "DMA read only") << " */\n";
  o << "\n";
  for (const Register &r : t.registers) {
    if (r.isWord())
      continue; // emitFrames
    std::string R = upper(r.name);
    o << "/* " << commentSafe(r.name) << ": " << r.width << "-bit register at offset "
      << hex(r.offset, 2);
    if (r.width > t.bus.accessBits)
      o << " (" << r.width / t.bus.accessBits << " " << t.bus.accessBits << "-bit accesses, the "
        << (t.bus.highFirst ? "high" : "low") << " bits first)";
    if (t.isStatusRegister(int(&r - t.registers.data())))
      o << (t.isCommandRegister(int(&r - t.registers.data()))
                ? " (holds status bits, which the NPU sets; commands write the others)"
                : " (status: read only, except write-1-to-clear bits)");
    if (r.rmw)
      o << " (written read-modify-write: a command changes only its fields)";
    if (!r.doc.empty())
      o << ": " << commentSafe(r.doc);
    o << " */\n";
    o << "#define " << P << "_REG_" << R << "_OFFSET " << hex(r.offset, 2) << "\n";
    o << "#define " << P << "_REG_" << R << "_WIDTH " << r.width << "u\n";
    for (const Field &f : r.fields) {
      std::string F = P + "_" + R + "_" + upper(f.name);
      uint64_t mask = f.width >= 64 ? ~uint64_t(0) : (uint64_t(1) << f.width) - 1;
      o << "#define " << F << "_SHIFT " << f.lsb << "u\n";
      o << "#define " << F << "_WIDTH " << f.width << "u\n";
      o << "#define " << F << "_MASK " << hex(mask) << " /* bits " << f.lsb + f.width - 1 << ".."
        << f.lsb;
      if (!f.writeEnable.empty())
        o << " (a write changes it only with " << commentSafe(f.writeEnable) << " all ones)";
      if (!f.doc.empty())
        o << ": " << commentSafe(f.doc);
      o << " */\n";
    }
    o << "\n";
  }
  emitFrames(o, t, P);
  // Register indices into the C description table (also makes the header a
  // non-empty translation unit for -pedantic).
  o << "/* Register indices in the description table (npucc_target_desc.regs[]) */\n"
    << "enum " << cIdentifier(t.name) << "_reg_index {\n";
  for (size_t i = 0; i < t.registers.size(); ++i)
    o << "  " << P << "_REG_" << upper(t.registers[i].name) << "_INDEX = " << i << ",\n";
  o << "  " << P << "_NUM_REGS = " << t.registers.size() << "\n};\n\n";
  o << "/* Status bits per engine */\n";
  const char *engines[] = {"DMA", "COMPUTE", "FENCE"};
  for (int e = 0; e < 3; ++e) {
    const EngineStatus &s = t.engines[e];
    if (!s.busy.valid() && !s.done.valid() && !s.error.valid() && !s.freeSlots.valid())
      continue;
    o << "/*   " << engines[e] << ":";
    if (s.busy.valid())
      o << " busy " << commentSafe(statusText(s.busy));
    if (s.done.valid())
      o << " done " << commentSafe(statusText(s.done));
    if (s.error.valid())
      o << " error " << commentSafe(statusText(s.error))
        << (s.error.field.width > 1 ? " (error code, non-zero = error)" : "");
    if (s.freeSlots.valid())
      o << " free slots " << commentSafe(s.freeSlots.field.text);
    o << " */\n";
  }
  if (!t.init.empty()) {
    o << "/* Init (npucc_hal_init writes these, in order):";
    for (const FieldValue &v : t.init)
      o << " " << commentSafe(v.field.text) << " = " << v.value << ";";
    o << " */\n";
  }
  o << "/* DMA and compute " << (t.concurrentDmaCompute ? "may" : "must not")
    << " run at the same time; completion is observed by " << t.completion << ". */\n";
  if (t.queue.depth)
    o << "/* Job queue: " << t.queue.depth << " commands per engine; after writing a job, "
      << commentSafe(t.queue.commit.field.text) << " = " << t.queue.commit.value
      << " commits it. */\n";
  o << "\n";
  for (const CommandDesc &c : t.commands) {
    o << "/* Command '" << c.kind << "' ("
      << (c.engine == Engine::Dma     ? "DMA"
          : c.engine == Engine::Fence ? "fence"
                                      : "compute")
      << " engine)";
    if (!c.doc.empty())
      o << ": " << commentSafe(c.doc);
    o << "\n";
    std::vector<const ParamBinding *> sorted;
    for (const ParamBinding &b : c.params)
      sorted.push_back(&b);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const ParamBinding *a, const ParamBinding *b) {
                       return a->field().reg != b->field().reg
                                  ? a->field().reg < b->field().reg
                                  : a->field().lsb < b->field().lsb;
                     });
    for (const ParamBinding *bp : sorted) {
      const ParamBinding &b = *bp;
      uint64_t mag = b.minus < 0 ? 0 - uint64_t(b.minus) : uint64_t(b.minus);
      if (!b.fromExpr.empty()) {
        o << " *   " << commentSafe(b.text()) << " <- " << commentSafe(b.fromExpr)
          << (SignedParams[b.paramId] ? " (signed, two's complement)" : "") << "\n";
        continue;
      }
      o << " *   " << commentSafe(b.text()) << " <- " << b.param;
      if (b.minus)
        o << (b.minus > 0 ? " - " : " + ") << (mag < 4096 ? std::to_string(mag) : hex(mag));
      if (b.shift)
        o << (b.minus ? ", then" : "") << " >> " << b.shift << " (units of " << (1u << b.shift)
          << ")";
      if (SignedParams[b.paramId])
        o << " (signed, two's complement)";
      if (b.fields.size() > 1)
        o << " (" << b.totalWidth() << " bits, least significant part first)";
      o << "\n";
    }
    for (const FieldBinding &b : c.fields) {
      o << " *   " << commentSafe(b.field.text) << " <- ";
      if (!b.isCases) {
        o << commentSafe(printExpr(b.expr)) << "\n";
        continue;
      }
      o << "cases"
        << (b.decodes ? " (the simulator reads " + b.text().substr(11) + " from it)" : "") << ":\n";
      for (const FieldCase &fc : b.cases) {
        o << " *       ";
        for (size_t i = 0; i < fc.when.size(); ++i)
          o << (i ? ", " : "") << paramNames()[size_t(fc.when[i].first)] << " = "
            << fc.when[i].second;
        o << ": " << fc.value << "\n";
      }
    }
    for (const FixedParam &f : c.fixed)
      o << " *   (fixed) " << f.param << " = " << f.value << "\n";
    for (const FieldValue &s : c.select)
      o << " *   select " << s.field.text << " = " << s.value << "\n";
    std::string C = P + "_CMD_" + upper(c.kind);
    if (c.delivery.mode == DeliveryMode::Insn) {
      const Frame &f = t.frames[size_t(c.frame)];
      o << " *   delivered as frame '" << commentSafe(f.name) << "': its " << f.numWords
        << " words in order, two per custom instruction (rs1, rs2; an odd last word with 0): "
        << "opcode " << hex(c.delivery.opcode, 2) << ", funct3 " << c.delivery.funct3 << ", funct7 "
        << c.delivery.funct7 << "; the last one starts the command */\n";
      o << "#define " << C << "_INSN_FUNCT7 " << c.delivery.funct7 << "u\n\n";
      continue;
    }
    if (c.delivery.mode == DeliveryMode::Buffer) {
      const Frame &f = t.frames[size_t(c.frame)];
      const CommandBuffer &b = t.cmdbuf;
      o << " *   delivered as frame '" << commentSafe(f.name) << "': its " << f.numWords
        << " words appended to the command buffer (" << b.capacityWords << " words); a kick ("
        << commentSafe(b.address.text) << ", " << commentSafe(b.length.text) << " in "
        << (b.lengthBytes ? "bytes" : "words") << ", " << commentSafe(b.kick.field.text) << " = "
        << b.kick.value << ") starts the frames appended since the previous one */\n\n";
      continue;
    }
    if (c.frame >= 0) {
      const Frame &f = t.frames[size_t(c.frame)];
      const Register &fifo = t.registers[size_t(c.delivery.reg)];
      o << " *   delivered as frame '" << commentSafe(f.name) << "': its " << f.numWords
        << " words in order (" << commentSafe(t.registers[size_t(f.firstReg)].name)
        << " first) written into FIFO register " << commentSafe(fifo.name) << " (holds "
        << c.delivery.depthWords << " words); the last word starts the command */\n";
      o << "#define " << C << "_FIFO_OFFSET " << hex(fifo.offset, 2) << "\n\n";
      continue;
    }
    o << " *   " << (t.queue.depth ? "commit: " : "doorbell: ") << c.doorbell.field.text << " = "
      << c.doorbell.value << " (written last; " << c.doorbellNop << " starts nothing) */\n";
    o << "#define " << C << "_DOORBELL_OFFSET "
      << hex(t.registers[size_t(c.doorbell.field.reg)].offset, 2) << "\n#define " << C
      << "_DOORBELL_VALUE " << hex(c.doorbell.value) << "\n\n";
  }
  o << "#endif /* NPUCC_REGS_" << P << "_H */\n";
  return o.str();
}

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

std::string emitCTableSource(const TargetDesc &t) {
  CTable table(t);
  const npucc_target_desc &d = *table.get();
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
      << (d.regs[i].flags & NPUCC_REG_RMW    ? "NPUCC_REG_RMW"
          : d.regs[i].flags & NPUCC_REG_WORD ? "NPUCC_REG_WORD"
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
          << unsigned(b.num_parts) << ", " << ref(b.field) << ", " << b.more << ", "
          << i64(b.minus) << "}, /* " << commentSafe(t.commands[c].params[i].text()) << " */\n";
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
    for (int k = 0; k < NPUCC_OPND_COUNT; ++k)
      o << (k ? ", " : "") << m.operand_alignment[k];
    o << "}, {";
    for (int k = 0; k < NPUCC_OPND_COUNT; ++k)
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
      << ", " << hex(l.depth_mult_mask, 8) << ", {" << l.max_pad[0] << ", " << l.max_pad[1]
      << ", " << l.max_pad[2] << ", " << l.max_pad[3] << "}, " << l.in_ch_multiple << "u, "
      << l.out_ch_multiple << "u, " << l.max_in_ch << "u, " << l.max_out_ch << "u, "
      << l.max_in_h << "u, " << l.max_in_w << "u, " << l.max_out_h << "u, " << l.max_out_w
      << "u, " << l.max_m << "u, " << l.max_k << "u, " << l.max_n << "u, " << hex(l.kinds_mask)
      << ", " << unsigned(l.requant) << ", " << unsigned(l.fused_clamp) << ", "
      << l.cycles_per_step << "u, " << l.fill_cycles << "u, " << l.overhead_cycles << "u, "
      << hex(l.operand_mem) << ", {";
    for (int i = 0; i < NPUCC_OPND_COUNT; ++i)
      o << (i ? ", " : "") << unsigned(l.operand_align_log2[i]);
    o << "}},\n";
  }
  o << "    },\n"
    << "    .clock_hz = " << d.clock_hz << "u,\n"
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
  if (d.num_frames)
    o << "    .frames = " << id << "_frames,\n    .num_frames = " << d.num_frames << ",\n";
  if (d.num_deliveries)
    o << "    .deliveries = " << id << "_deliveries,\n    .num_deliveries = " << d.num_deliveries
      << ",\n";
  if (insn)
    o << "#ifndef NPUCC_HAL_SIM\n    .insn = " << id << "_insn,\n#endif\n";
  if (d.cmdbuf)
    o << "    .cmdbuf = &" << id << "_cmdbuf,\n";
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
  f.push_back({"npucc_target.h",
               "/* The description table of this NPU, '" + commentSafe(t.name) +
                   "', under a fixed name. Generated by npucc; do not edit. */\n"
                   "#ifndef NPUCC_TARGET_H\n#define NPUCC_TARGET_H\n\n#include \"" +
                   id + "_target.h\"\n\n#define NPUCC_TARGET (&npucc_target_" + id +
                   ")\n\n#endif /* NPUCC_TARGET_H */\n"});
  f.push_back({id + "_regs.h", emitRegisterHeader(t)});
  return f;
}

} // namespace npucc::target
