//===- Rounding.cpp - Requantization rounding of a typed int8 graph -------===//
//
// See include/npucc/quant/Rounding.h (lib/qmath: arithmetic and its IR attribute).
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/Rounding.h"

namespace npucc::quant {

bool requantizesProduct(const ir::Node &n) {
  if (n.kind != ir::OpKind::Conv && n.kind != ir::OpKind::Gemm && n.kind != ir::OpKind::MatMul)
    return false;
  const ir::Value *y = n.output(0);
  return y && y->quant && (y->dtype == ir::DType::I8 || y->dtype == ir::DType::U8);
}

Rounding roundingOf(const ir::Node &n) {
  return parseRounding(n.attrString("requant", "exact")).value_or(Rounding::Exact);
}

int64_t setRounding(ir::Graph &g, Rounding r) {
  int64_t count = 0;
  for (auto &np : g.nodes()) {
    if (!requantizesProduct(*np))
      continue;
    if (r == Rounding::Fp32)
      np->attrs["requant"] = std::string(roundingName(r));
    else
      np->attrs.erase("requant");
    ++count;
  }
  return count;
}

RoundingCounts countRoundings(const ir::Graph &g) {
  RoundingCounts c;
  for (const auto &np : g.nodes())
    if (requantizesProduct(*np))
      ++(roundingOf(*np) == Rounding::Fp32 ? c.fp32 : c.exact);
  return c;
}

} // namespace npucc::quant
