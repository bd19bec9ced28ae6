//===- Op.cpp - The op table, expanded from Ops.def -----------------------===//
#include "npucc/ir/Op.h"

namespace npucc::ir {

static const OpInfo OpTable[] = {
#define NPUCC_OP(E, N, D, MINV, MAXV, MINI, MAXI, MINO, MAXO, F)                                   \
  {OpKind::E, N, D, MINV, MAXV, MINI, MAXI, MINO, MAXO, F},
#include "npucc/ir/Ops.def"
};

const OpInfo &opInfo(OpKind k) { return OpTable[static_cast<size_t>(k)]; }
const char *opName(OpKind k) { return opInfo(k).name; }

std::optional<OpKind> opFromName(const std::string &name, const std::string &domain) {
  std::string d = domain == "ai.onnx" ? "" : domain;
  for (const OpInfo &i : OpTable)
    if (name == i.name && d == i.domain)
      return i.kind;
  return std::nullopt;
}

const OpInfo *allOps(size_t &count) {
  count = sizeof(OpTable) / sizeof(OpTable[0]);
  return OpTable;
}

} // namespace npucc::ir
