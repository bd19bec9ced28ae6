//===- Parser.h - Parse the textual graph IR back into a Graph ------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/support/Result.h"

#include <memory>
#include <string>

namespace npucc::ir {

/// Parses the format written by printGraph. `bufferName` appears in errors
/// as "file:line:col". Elided constants are filled with zeros.
Result<std::unique_ptr<Graph>> parseGraph(const std::string &text,
                                          const std::string &bufferName = "<input>");

} // namespace npucc::ir
