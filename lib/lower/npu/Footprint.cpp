//===- Footprint.cpp - The memory an NPU command reads and writes ---------===//
//
// Derived from the command's semantic parameters alone (so it also holds for
// a program parsed back from text): a DMA reads its source rows and writes its
// destination rows (bounding ranges over rows and planes); a compute command
// reads its input(s), weights, bias, (per-channel) requantization table and
// (lut256) activation table and writes its output, with sizes from the geometry parameters.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"

#include <algorithm>

namespace npucc::lower::npu {

const lir::Arg *paramArg(const lir::Instr &in, const std::string &name) {
  for (const auto &p : in.params)
    if (p.first == name)
      return &p.second;
  return nullptr;
}

int64_t paramValue(const lir::Instr &in, const std::string &name) {
  if (const lir::Arg *a = paramArg(in, name)) {
    if (const int64_t *v = std::get_if<int64_t>(a))
      return *v;
    if (const lir::BufferRef *b = std::get_if<lir::BufferRef>(a))
      return b->offset;
  }
  return target::paramDefault(target::paramId(name));
}

namespace {

/// The access of `bytes` bytes at the address parameter `name` (nothing if
/// the parameter is not a buffer).
void addAccess(std::vector<Access> &out, const lir::Instr &in, const std::string &name,
               int64_t bytes, bool write) {
  const lir::Arg *a = paramArg(in, name);
  const lir::BufferRef *b = a ? std::get_if<lir::BufferRef>(a) : nullptr;
  if (!b || bytes <= 0)
    return;
  out.push_back({b->region, b->index, b->offset, b->offset + bytes, write});
}

} // namespace

std::vector<Access> npuFootprint(const lir::Instr &in) {
  std::vector<Access> r;
  auto v = [&](const char *n) { return paramValue(in, n); };
  const std::string &k = in.callee;
  if (k == "dma") {
    int64_t len = v("length"), rows = v("rows"), planes = v("planes");
    if (!v("zero_fill"))
      addAccess(r, in, "src_addr",
                (planes - 1) * v("src_plane_stride") + (rows - 1) * v("src_stride") + len, false);
    addAccess(r, in, "dst_addr",
              (planes - 1) * v("dst_plane_stride") + (rows - 1) * v("dst_stride") + len, true);
    return r;
  }
  int64_t inBytes = 0, wBytes = 0, ch = 0, outBytes = 0;
  if (k == "conv" || k == "depthwise" || k == "pool") {
    int64_t oc = k == "conv" ? v("out_ch") : v("in_ch") * (k == "depthwise" ? v("depth_mult") : 1);
    inBytes = v("in_h") * v("in_w") * v("in_ch");
    // A fused max pool (pool_k > 1) writes the pooled tile.
    int64_t pk = k == "pool" ? 1 : std::max<int64_t>(1, v("pool_k"));
    outBytes = v("out_h") / pk * (v("out_w") / pk) * oc;
    if (k != "pool") {
      wBytes = v("k_h") * v("k_w") * oc * (k == "conv" ? v("in_ch") : 1);
      ch = oc;
    }
  } else if (k == "matmul") {
    inBytes = v("m") * v("k");
    wBytes = v("n") * v("k");
    ch = v("n");
    outBytes = v("m") * v("n");
  } else if (k == "eltwise") {
    inBytes = outBytes = v("length");
    addAccess(r, in, "in2_addr", inBytes, false);
  }
  // A channel-blocked activation layout reads and writes more (its pad
  // channels): the scheduler sizes those references by the layout.
  auto sized = [&](const char *name, int64_t bytes) {
    if (const lir::Arg *a = paramArg(in, name))
      if (const lir::BufferRef *b = std::get_if<lir::BufferRef>(a))
        return std::max<int64_t>(bytes, b->size);
    return bytes;
  };
  if (k != "eltwise" && k != "matmul") {
    inBytes = sized("in_addr", inBytes);
    outBytes = sized("out_addr", outBytes);
  }
  addAccess(r, in, "in_addr", inBytes, false);
  // A weight layout with padding (blocked) reads more: the scheduler sizes
  // the weights reference by the layout (recordLayout).
  if (const lir::Arg *a = paramArg(in, "w_addr"))
    if (const lir::BufferRef *b = std::get_if<lir::BufferRef>(a))
      wBytes = std::max<int64_t>(wBytes, b->size);
  addAccess(r, in, "w_addr", wBytes, false);
  addAccess(r, in, "bias_addr", ch * 4, false);
  if (v("per_channel")) {
    // 8 bytes per channel (q31: mult, shift), or the fewer the table's
    // reference says (fp32_scale: one binary32 scale per channel).
    const lir::Arg *a = paramArg(in, "rq_addr");
    const lir::BufferRef *b = a ? std::get_if<lir::BufferRef>(a) : nullptr;
    addAccess(r, in, "rq_addr", b && b->size > 0 && b->size < ch * 8 ? b->size : ch * 8, false);
  }
  // The activation table (present only on layers whose activation stage is
  // lut256 or pwl): the bytes the schedule's reference has.
  {
    const lir::Arg *a = paramArg(in, "act_addr");
    const lir::BufferRef *b = a ? std::get_if<lir::BufferRef>(a) : nullptr;
    addAccess(r, in, "act_addr", b && b->size > 0 ? b->size : int64_t(ActTableBytes), false);
  }
  addAccess(r, in, "out_addr", outBytes, true);
  return r;
}

std::vector<Access> cpuFootprint(const lir::Instr &in) {
  std::vector<Access> r;
  if (isBufferMarker(in))
    return r; // alloc / free only reserve: nothing is read or written
  for (const lir::Arg &a : in.args)
    if (const lir::BufferRef *b = std::get_if<lir::BufferRef>(&a))
      if (!b->isNull() && b->region != lir::Region::Const)
        r.push_back({b->region, b->index, b->offset, b->offset + b->size, true});
  return r;
}

bool overlaps(const Access &a, const Access &b) {
  return a.region == b.region && a.index == b.index && a.lo < b.hi && b.lo < a.hi;
}

} // namespace npucc::lower::npu

namespace npucc::lower::npu {

int64_t scratchpadPeak(const std::vector<lir::Instr> &body) {
  // The sum of the allocated scratchpad buffers, at its largest.
  int64_t live = 0, peak = 0;
  for (const lir::Instr &in : body) {
    if (!isBufferMarker(in) || in.args.empty())
      continue;
    const lir::BufferRef *b = std::get_if<lir::BufferRef>(&in.args[0]);
    if (!b)
      continue;
    live += in.opcode == "alloc" ? b->size : -b->size;
    peak = std::max(peak, live);
  }
  return peak;
}

bool isBufferMarker(const lir::Instr &in) { return in.opcode == "alloc" || in.opcode == "free"; }

} // namespace npucc::lower::npu
