//===- CpuCost.cpp - Instructions of the CPU kernel calls of a program -----===//
//
// A table lookup: the fitted row of CpuCost.def for the callee (or memcpy,
// memset), else the fallback row of its family (MAC, pool/reduction, copy,
// other element-wise; int8 or float by the name's `_f32`). See
// include/npucc/lower/CpuCost.h.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuCost.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace npucc::lower {

namespace {

/// instructions = base + mac * MACs + out * output elements + in * input
/// elements + w * weight elements, per core.
struct Coef {
  double base, mac, out, in, w;
};

struct CostRow {
  const char *name; // callee, or the family of a fallback row
  Coef core[int(CpuCore::Count)];
};

#define NPUCC_CPU_KERNEL(Callee, M4Base, M4Mac, M4Out, M4In, M4W, RvBase, RvMac, RvOut, RvIn, RvW) \
  {Callee, {{M4Base, M4Mac, M4Out, M4In, M4W}, {RvBase, RvMac, RvOut, RvIn, RvW}}},
#define NPUCC_CPU_FALLBACK(Family, M4Base, M4Mac, M4Out, M4In, M4W, RvBase, RvMac, RvOut, RvIn, RvW)
const CostRow Kernels[] = {
#include "CpuCost.def"
};
#undef NPUCC_CPU_KERNEL
#undef NPUCC_CPU_FALLBACK

#define NPUCC_CPU_KERNEL(Callee, M4Base, M4Mac, M4Out, M4In, M4W, RvBase, RvMac, RvOut, RvIn, RvW)
#define NPUCC_CPU_FALLBACK(Family, M4Base, M4Mac, M4Out, M4In, M4W, RvBase, RvMac, RvOut, RvIn,    \
                           RvW)                                                                    \
  {#Family, {{M4Base, M4Mac, M4Out, M4In, M4W}, {RvBase, RvMac, RvOut, RvIn, RvW}}},
const CostRow Fallbacks[] = {
#include "CpuCost.def"
};
#undef NPUCC_CPU_KERNEL
#undef NPUCC_CPU_FALLBACK

const CostRow &fallback(const char *family) {
  for (const CostRow &r : Fallbacks)
    if (!std::strcmp(r.name, family))
      return r;
  return Fallbacks[0];
}

bool has(const std::string &s, const char *part) { return s.find(part) != std::string::npos; }

/// The family of a kernel without a fitted row, from its name
/// (runtime/kernels naming: npucc_<op>_<dtype>[_variant]).
const CostRow &familyOf(const lir::Instr &in) {
  if (in.opcode != "call")
    return fallback("copy");
  const std::string &c = in.callee;
  bool f32 = has(c, "_f32");
  if (has(c, "conv") || has(c, "gemm") || has(c, "matmul") || has(c, "fc_"))
    return fallback(f32 ? "mac_f32" : "mac_s8");
  if (has(c, "pool") || has(c, "reduce"))
    return fallback(f32 ? "pool_f32" : "pool_s8");
  if (has(c, "copy") || has(c, "transpose") || has(c, "concat") || has(c, "gather") ||
      has(c, "slice") || has(c, "pad") || has(c, "fill"))
    return fallback("copy");
  return fallback(f32 ? "elementwise_f32" : "elementwise_s8");
}

} // namespace

const char *cpuCoreName(CpuCore c) { return c == CpuCore::Rv32 ? "rv32" : "cortex-m4"; }

CallCost estimateCpuCall(const lir::Instr &in, const KernelWork &w) {
  CallCost cost;
  if (in.opcode != "call" && in.opcode != "memcpy" && in.opcode != "memset")
    return cost;
  const std::string &name = in.opcode == "call" ? in.callee : in.opcode;
  const CostRow *row = nullptr;
  for (const CostRow &r : Kernels)
    if (name == r.name)
      row = &r;
  cost.calibrated = row != nullptr;
  if (!row)
    row = &familyOf(in);
  for (int c = 0; c < int(CpuCore::Count); ++c) {
    const Coef &k = row->core[c];
    double v = k.base + k.mac * double(w.macs) + k.out * double(w.outElems) +
               k.in * double(w.inElems) + k.w * double(w.constElems);
    cost.cycles[c] = uint64_t(std::llround(std::max(v, 0.0)));
  }
  return cost;
}

} // namespace npucc::lower
