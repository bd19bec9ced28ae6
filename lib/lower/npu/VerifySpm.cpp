//===- VerifySpm.cpp - The `verify-spm` loop-IR pass -----------------------===//
//
// Checks the scratchpad buffers of a scheduled program: every `alloc` lies
// inside its scratchpad and overlaps no buffer still allocated, every `free`
// releases a buffer that is allocated, nothing is left allocated at the end,
// and every scratchpad byte an NPU command reads or writes lies inside a
// buffer allocated at that point. The first violation is the error, naming
// the instruction. Runs in every compile after the waits; on hand-edited loop
// IR through `npucc opt FILE.lir --passes=verify-spm`.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"
#include "npucc/lower/LirPass.h"

namespace npucc::lower {

Status runVerifySpmPass(lir::Program &p, LirPassContext &) {
  std::vector<lir::BufferRef> live;
  auto text = [&](const lir::BufferRef &b) { return lir::printBuffer(p, b); };
  for (size_t i = 0; i < p.body.size(); ++i) {
    const lir::Instr &in = p.body[i];
    auto fail = [&](const std::string &why) -> Status {
      return error("loop IR instruction " + std::to_string(i) + " `" + lir::printInstr(p, in) +
                   "`: " + why);
    };
    if (npu::isBufferMarker(in)) {
      const lir::BufferRef *b =
          in.args.size() == 1 ? std::get_if<lir::BufferRef>(&in.args[0]) : nullptr;
      if (!b || b->region != lir::Region::Spm)
        return fail("expects one scratchpad buffer");
      if (in.opcode == "alloc") {
        if (b->index < 0 || size_t(b->index) >= p.scratchpads.size())
          return fail("no scratchpad %spm" + std::to_string(b->index));
        if (b->offset < 0 || b->size <= 0 ||
            uint64_t(b->offset + b->size) > p.scratchpads[size_t(b->index)].size)
          return fail("the buffer does not lie inside the scratchpad (" +
                      std::to_string(p.scratchpads[size_t(b->index)].size) + " bytes)");
        for (const lir::BufferRef &l : live)
          if (l.index == b->index && l.offset < b->offset + b->size && b->offset < l.offset + l.size)
            return fail("overlaps " + text(l) + ", which is still allocated");
        live.push_back(*b);
      } else {
        size_t k = 0;
        while (k < live.size() && !(live[k].index == b->index && live[k].offset == b->offset &&
                                    live[k].size == b->size))
          ++k;
        if (k == live.size())
          return fail("frees a buffer that is not allocated");
        live.erase(live.begin() + long(k));
      }
      continue;
    }
    if (in.opcode != "npu")
      continue;
    for (const npu::Access &a : npu::npuFootprint(in)) {
      if (a.region != lir::Region::Spm)
        continue;
      bool inside = false;
      for (const lir::BufferRef &l : live)
        inside = inside || (l.index == a.index && l.offset <= a.lo && a.hi <= l.offset + l.size);
      if (!inside) {
        lir::BufferRef r{lir::Region::Spm, a.index, a.lo, a.hi - a.lo, ir::DType::I8};
        return fail(std::string(a.write ? "writes " : "reads ") + text(r) +
                    ", which is not inside an allocated scratchpad buffer");
      }
    }
  }
  if (!live.empty())
    return error("the loop IR ends with " + text(live.front()) + " still allocated");
  return success();
}

} // namespace npucc::lower
