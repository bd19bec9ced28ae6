//===- Verifier.h - Structural checks of a Graph --------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/support/Result.h"

namespace npucc::ir {

/// Checks: topological order, every input defined, arity within Ops.def,
/// producers consistent, no duplicate names, shapes non-negative, constants'
/// data size matching their type.
Status verifyGraph(const Graph &g);

} // namespace npucc::ir
