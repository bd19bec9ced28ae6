//===- Op.h - OpKind enum and per-op facts, generated from Ops.def --------===//
#pragma once

#include <optional>
#include <string>

namespace npucc::ir {

enum OpFlags : unsigned {
  OPF_VIEW = 1u << 0,
  OPF_INPLACE = 1u << 1,
  OPF_ELEMENTWISE = 1u << 2,
  OPF_QUANT = 1u << 3,
};

enum class OpKind {
#define NPUCC_OP(E, N, D, MINV, MAXV, MINI, MAXI, MINO, MAXO, F) E,
#include "npucc/ir/Ops.def"
};

struct OpInfo {
  OpKind kind;
  const char *name;   // ONNX op_type, also the textual IR name
  const char *domain; // "" for the default ONNX domain
  int minOpset, maxOpset;
  int minInputs, maxInputs; // maxInputs -1 = variadic
  int minOutputs, maxOutputs;
  unsigned flags;
};

const OpInfo &opInfo(OpKind k);
const char *opName(OpKind k);
/// Lookup by ONNX (domain, op_type); domain "ai.onnx" is treated as "".
std::optional<OpKind> opFromName(const std::string &name, const std::string &domain = "");
/// All rows of Ops.def, in table order.
const OpInfo *allOps(size_t &count);

} // namespace npucc::ir
