//===- ModelHeader.h - <prefix>.h of a generated program (codegen-private) ===//
//
// The text of the model's API header; see ModelHeader.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/lir/Program.h"

#include <string>

namespace npucc::codegen {

/// <prefix>.h of program `p`; `ext`: --arena external (the context API).
std::string modelHeader(const lir::Program &p, const std::string &prefix, bool ext);

} // namespace npucc::codegen
