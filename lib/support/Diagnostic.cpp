//===- Diagnostic.cpp - Formatting of diagnostics -------------------------===//
#include "npucc/support/Diagnostic.h"

namespace npucc {

std::string Diagnostic::str() const {
  std::string s;
  if (!file.empty())
    s += file + ": ";
  if (!node.empty() || !op.empty()) {
    s += "node '" + node + "'";
    if (!op.empty())
      s += " (" + op + ")";
    s += ": ";
  }
  s += "error: " + message;
  for (const std::string &n : notes)
    s += "\n  note: " + n;
  return s;
}

} // namespace npucc
