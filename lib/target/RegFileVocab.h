//===- RegFileVocab.h - The register attributes' vocabularies -------------===//
//
// CMSIS-SVD's terms for a register's or field's access, modified write value
// and read action, which a description's `registers` use (TargetParse-
// Interface.cpp) and the SVD and IP-XACT importers check (IP-XACT's read
// action has no modifyExternal). Internal to lib/target.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace npucc::target::regfile {

using Vocabulary = std::vector<std::string>;

inline const Vocabulary &accessValues() {
  static const Vocabulary v{"read-write", "read-only", "write-only", "writeOnce", "read-writeOnce"};
  return v;
}

inline const Vocabulary &modifiedWriteValues() {
  static const Vocabulary v{"oneToClear",   "oneToSet", "oneToToggle", "zeroToClear", "zeroToSet",
                            "zeroToToggle", "clear",    "set",         "modify"};
  return v;
}

/// SVD's; IP-XACT's is the first three.
inline const Vocabulary &readActionValues() {
  static const Vocabulary v{"clear", "set", "modify", "modifyExternal"};
  return v;
}

/// "a, b, c".
inline std::string joined(const Vocabulary &v) {
  std::string r;
  for (const std::string &s : v)
    r += (r.empty() ? "" : ", ") + s;
  return r;
}

} // namespace npucc::target::regfile
