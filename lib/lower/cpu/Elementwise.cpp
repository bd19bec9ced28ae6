//===- Elementwise.cpp - CPU lowering of the Elementwise op family ----------------------===//
// Placeholder until the family's kernels land: reports the op as unsupported.
#include "npucc/lower/CpuLowering.h"

namespace npucc::lower {

Status lowerElementwiseFamily(const ir::Node &n, LowerContext &, std::vector<lir::Instr> &) {
  return error(std::string("no CPU kernel for ") + n.opName() + " yet").atNode(n.name, n.opName());
}

} // namespace npucc::lower
