//===- TargetJsonEdit.h - Break one thing in a valid target description ---===//
//
// Loader tests start from test/target/good_minimal.json, change one value with
// a JSON pointer and compare the complete diagnostic text.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/target/Target.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#ifndef NPUCC_SOURCE_DIR
#define NPUCC_SOURCE_DIR "."
#endif

namespace npucc::test {

using nlohmann::json;

inline std::string targetDir() { return std::string(NPUCC_SOURCE_DIR) + "/test/target/"; }

inline std::string readText(const std::string &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline json minimalTarget() { return json::parse(readText(targetDir() + "good_minimal.json")); }

/// Applies `mutate` to the minimal description; returns the diagnostic text
/// ("" if it parsed).
inline std::string errOf(const std::function<void(json &)> &mutate) {
  json j = minimalTarget();
  mutate(j);
  auto r = target::parseTargetJson(j.dump(2), "mini.json");
  return r ? std::string() : r.error().str();
}

/// Parses the mutated minimal description (callers assert it is accepted).
inline Result<target::TargetDesc> parseEdited(const std::function<void(json &)> &mutate) {
  json j = minimalTarget();
  mutate(j);
  return target::parseTargetJson(j.dump(2), "mini.json");
}

inline void set(json &j, const std::string &ptr, json v) { j[json::json_pointer(ptr)] = std::move(v); }
inline void del(json &j, const std::string &ptr) {
  json::json_pointer p(ptr);
  j[p.parent_pointer()].erase(p.back());
}

} // namespace npucc::test
