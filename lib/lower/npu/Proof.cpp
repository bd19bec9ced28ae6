//===- Proof.cpp - Every value a scheduled command writes fits its field ----===//
//
// A compiled program must not fail when it runs because the command layer
// cannot encode a value (NPUCC_ERR_RANGE / _ALIGN / _PARAM) or the NPU
// refuses it. scheduleLayer proves each command it emits, with the table of
// parameter -> field bounds the loader and the legality check use
// (TargetDesc::paramBounds):
//   - every parameter the command kind takes fits its field (range and
//     unit), or equals the fixed or default value the command has;
//   - scratchpad addresses are exact (scratchpad base + offset); system
//     memory addresses (arena, constants, inputs, outputs) are only known
//     relative to their buffer, which the firmware places in a window the
//     loader proved the DMA reaches (every window lies within src_addr,
//     every writable one within dst_addr) at an address aligned to the DMA
//     alignment: their offsets must be multiples of that alignment;
//   - DMA addresses are multiples of the DMA alignment and compute operand
//     addresses multiples of their operand alignment (effective alignments:
//     an address field's unit is part of them);
//   - a compute operand in system memory ("operands" of its operation) is
//     an offset in the NPU constants, a multiple of its alignment there; the
//     loader proved its address field reaches every system window;
//   - DMA lengths, rows, planes and strides are within the effective DMA
//     limits, and lengths are multiples of the DMA length unit;
//   - the value fits the command stream (npucc_stream.h): 32-bit signed
//     values, addresses as 32-bit unsigned offsets from their buffer;
//   - every computed field ("fields") of the command has a value for these
//     parameters (its expression does not fail, a case matches) that fits
//     the field (TargetDesc::fieldProblem);
//   - the operation's timing expressions ("steps", "macs") evaluate to a
//     non-negative value.
// A layer whose commands cannot be proven has no feasible tiling: it runs on
// the CPU kernels, and the reason names the command, the parameter and the
// field.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"

#include "npucc_npu.h"

namespace npucc::lower::npu {

namespace {

const char *regionText(lir::Region r) {
  switch (r) {
  case lir::Region::Arena:
    return "the arena";
  case lir::Region::Const:
    return "the NPU constants";
  case lir::Region::Input:
    return "an input";
  case lir::Region::Output:
    return "an output";
  default:
    return "system memory";
  }
}

} // namespace

Status proveCommand(const lir::Instr &in, const target::TargetDesc &t) {
  int kind = target::commandKindId(in.callee);
  if (kind < 0 || !t.command(in.callee))
    return error("the NPU has no '" + in.callee + "' command");
  const std::vector<std::string> &names = target::paramNames();
  auto head = [&](int id) {
    return "command '" + in.callee + "' parameter '" + names[size_t(id)] + "'";
  };
  std::vector<int64_t> p = target::CTable::defaultParams();
  std::vector<const lir::BufferRef *> buf(p.size(), nullptr);
  for (const auto &kv : in.params) {
    int id = target::paramId(kv.first);
    if (id < 0)
      return error("command '" + in.callee + "' has no parameter '" + kv.first + "'");
    if (const int64_t *v = std::get_if<int64_t>(&kv.second)) {
      p[size_t(id)] = *v;
    } else if (const lir::BufferRef *b = std::get_if<lir::BufferRef>(&kv.second)) {
      buf[size_t(id)] = b;
      if (b->region == lir::Region::Spm) {
        if (b->index < 0 || size_t(b->index) >= t.scratchpads.size())
          return error(head(id) + " names a scratchpad the NPU does not have");
        p[size_t(id)] = int64_t(t.scratchpads[size_t(b->index)].base) + b->offset;
      }
    }
  }
  const uint64_t dmaAlign = std::max<uint64_t>(1, t.dma.alignment);
  const target::CommandDesc *cmd = t.command(in.callee);
  for (int id = 0; id < NPUCC_P_COUNT; ++id) {
    // (A pool may also bind the requantization: target::poolRequantizes.)
    if (!npucc_param_allowed(id, kind) && !(cmd && cmd->binding(target::paramNames()[size_t(id)])))
      continue;
    const lir::BufferRef *b = buf[size_t(id)];
    int64_t v = p[size_t(id)];
    if (b && b->region != lir::Region::Spm) {
      // An offset into a buffer the firmware places, aligned, in a window
      // the DMA reaches (the loader's proof). A compute command reads an
      // operand of the constant blob itself when its operation says so
      // ("operands"; the loader proved its field reaches every window).
      uint64_t align = dmaAlign;
      if (kind != NPUCC_KIND_DMA) {
        int o = npucc_operand_of_param(id);
        const target::OpLimits *lim = t.operation(in.callee);
        if (o < 0 || !lim || !lim->inSystem(target::Operand(o)))
          return error(head(id) + " points into " + regionText(b->region) +
                       "; the operation reads this operand from the scratchpad");
        if (b->region != lir::Region::Const)
          return error(head(id) + " points into " + regionText(b->region) +
                       "; an operand read from system memory must be in the NPU constants");
        align = std::max<uint64_t>(1, lim->systemAlignment[size_t(o)]);
      }
      if (b->offset < 0 || uint64_t(b->offset) % align)
        return error(head(id) + " (offset " + std::to_string(b->offset) + " in " +
                     regionText(b->region) + ") is not a multiple of the " +
                     (kind == NPUCC_KIND_DMA ? "DMA" : "operand's system-memory") + " alignment " +
                     std::to_string(align));
      if (uint64_t(b->offset) > UINT32_MAX)
        return error(head(id) + " (offset " + std::to_string(b->offset) + " in " +
                     regionText(b->region) + ") does not fit the command stream's 32-bit offsets");
      continue;
    }
    if (std::string why = t.paramProblem(kind, id, v); !why.empty())
      return error(why);
    if (b) {
      const target::Scratchpad &s = t.scratchpads[size_t(b->index)];
      int o = npucc_operand_of_param(id);
      uint64_t align =
          kind == NPUCC_KIND_DMA
              ? dmaAlign
              : std::max<uint64_t>(1, o >= 0 ? s.alignmentOf(target::Operand(o)) : s.alignment);
      if (uint64_t(v) % align)
        return error(head(id) + " = " + std::to_string(v) + " is not a multiple of the " +
                     (kind == NPUCC_KIND_DMA ? std::string("DMA") : "operand") + " alignment " +
                     std::to_string(align));
    } else if (v < INT32_MIN || v > INT32_MAX) {
      return error(head(id) + " = " + std::to_string(v) +
                   " does not fit the command stream's 32-bit values");
    }
  }
  // Computed fields ("fields"): each expression or cases table evaluated on
  // the command's parameters and fitted to its field. A system-memory
  // address is known only when the firmware places its buffer.
  if (const target::CommandDesc *c = t.command(in.callee))
    for (const target::FieldBinding &f : c->fields)
      for (int id : f.params())
        if (buf[size_t(id)] && buf[size_t(id)]->region != lir::Region::Spm)
          return error("command '" + in.callee + "' field '" + f.field.text + "' = " + f.text() +
                       " reads '" + names[size_t(id)] + "', an address in " +
                       regionText(buf[size_t(id)]->region) + " known only at run time");
  if (std::string why = t.fieldProblem(kind, p); !why.empty())
    return error(why);
  // The description's cycle model ("steps" / "macs" expressions) must
  // evaluate, as the simulator refuses a command whose do not.
  if (const target::OpLimits *lim = t.operation(in.callee))
    for (const auto &[e, key] :
         {std::make_pair(&lim->timing.steps, "steps"), std::make_pair(&lim->timing.macs, "macs")})
      if (*e) {
        std::optional<int64_t> v = target::evalExpr(**e, p);
        if (!v || *v < 0)
          return error("command '" + in.callee + "': timing.operations." + in.callee + "." + key +
                       " = " + target::printExpr(**e) +
                       (v ? " is " + std::to_string(*v) : std::string(" fails")) +
                       " for these parameters");
      }
  if (kind == NPUCC_KIND_DMA) {
    const target::DmaDesc &d = t.dma;
    struct Limit {
      int id;
      uint64_t max;
      const char *key;
      int64_t min; // counts are at least 1
    } limits[] = {{NPUCC_P_LENGTH, d.maxLength, "max_length", 1},
                  {NPUCC_P_ROWS, d.maxRows, "max_rows", 1},
                  {NPUCC_P_PLANES, d.maxPlanes, "max_planes", 1},
                  {NPUCC_P_SRC_STRIDE, d.maxStride, "max_stride", 0},
                  {NPUCC_P_DST_STRIDE, d.maxStride, "max_stride", 0},
                  {NPUCC_P_SRC_PLANE_STRIDE, d.maxPlaneStride, "max_plane_stride", 0},
                  {NPUCC_P_DST_PLANE_STRIDE, d.maxPlaneStride, "max_plane_stride", 0}};
    for (const Limit &l : limits)
      if (p[size_t(l.id)] < l.min || uint64_t(p[size_t(l.id)]) > l.max)
        return error(head(l.id) + " = " + std::to_string(p[size_t(l.id)]) +
                     " is outside the DMA's limit (dma." + l.key + " " + std::to_string(l.max) +
                     ")");
    if (d.lengthUnit > 1 && p[NPUCC_P_LENGTH] % int64_t(d.lengthUnit))
      return error(head(NPUCC_P_LENGTH) + " = " + std::to_string(p[NPUCC_P_LENGTH]) +
                   " is not a multiple of the DMA length unit (dma.length_unit " +
                   std::to_string(d.lengthUnit) + ")");
    if (p[NPUCC_P_ZERO_FILL] && !d.zeroFill)
      return error(head(NPUCC_P_ZERO_FILL) + ": the DMA has no zero fill");
  }
  return success();
}

} // namespace npucc::lower::npu
