//===- RegFileXml.h - Shared parts of the register-file importers ----------===//
//
// Numbers, text and errors shared by the CMSIS-SVD (Svd.cpp) and IP-XACT
// (IpXact.cpp) importers. Internal to lib/target.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace npucc::target::regfile {

using ojson = nlohmann::ordered_json;

struct ImportError {
  std::string message;
};

inline std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llX", static_cast<unsigned long long>(v));
  return b;
}

/// SVD's scaledNonNegativeInteger: decimal, 0x hex or # binary, optionally
/// scaled by k, M, G or T (powers of 1024).
inline std::optional<uint64_t> svdNumber(std::string s) {
  s.erase(0, s.find_first_not_of(" \t\r\n"));
  s.erase(s.find_last_not_of(" \t\r\n") + 1);
  if (!s.empty() && s[0] == '+')
    s.erase(0, 1);
  uint64_t scale = 1;
  if (!s.empty() && std::string("kKmMgGtT").find(s.back()) != std::string::npos &&
      !(s.size() > 2 && (s[1] == 'x' || s[1] == 'X'))) {
    char c = char(std::tolower(s.back()));
    scale = c == 'k' ? 1024ull : c == 'm' ? 1024ull * 1024 : c == 'g' ? 1ull << 30 : 1ull << 40;
    s.pop_back();
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.erase(0, 2);
  } else if (!s.empty() && s[0] == '#') {
    base = 2;
    s.erase(0, 1);
  }
  if (s.empty() || s.size() > 64)
    return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
            : std::isxdigit(static_cast<unsigned char>(c))
                ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                : 99;
    if (d >= base || v > (~uint64_t(0) - uint64_t(d)) / uint64_t(base))
      return std::nullopt;
    v = v * uint64_t(base) + uint64_t(d);
  }
  if (scale > 1 && v > ~uint64_t(0) / scale)
    return std::nullopt;
  return v * scale;
}

/// Collapses runs of white space (SVD descriptions are often indented).
inline std::string squeeze(const std::string &s) {
  std::string r;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !r.empty();
      continue;
    }
    if (space)
      r += ' ';
    space = false;
    r += c;
  }
  return r;
}

/// The sections a skeleton leaves to the user ("todo").
inline ojson todoList() {
  return ojson{"memories", "dma", "compute", "commands", "status", "timing"};
}

} // namespace npucc::target::regfile
