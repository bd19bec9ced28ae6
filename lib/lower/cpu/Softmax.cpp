//===- Softmax.cpp - CPU lowering of the Softmax op family ----------------------===//
// Placeholder until the family's kernels land: reports the op as unsupported.
#include "npucc/lower/CpuLowering.h"

namespace npucc::lower {

Status lowerSoftmaxFamily(const ir::Node &n, LowerContext &, std::vector<lir::Instr> &) {
  return error(std::string("no CPU kernel for ") + n.opName() + " yet").atNode(n.name, n.opName());
}

} // namespace npucc::lower
