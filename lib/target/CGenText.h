//===- CGenText.h - Small text helpers of the C generators (target-private) ===//
//
// Shared by CGen.cpp (the C description table) and CGenRegs.cpp (the
// register-map header).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace npucc::target::cgen {

/// A C constant: 0x...u, or 0x...ull when it does not fit 32 bits.
inline std::string hex(uint64_t v, int digits = 0) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "0x%0*llX%s", digits, static_cast<unsigned long long>(v),
                v > 0xFFFFFFFFull ? "ull" : "u");
  return buf;
}

/// Text safe inside a C block comment.
inline std::string commentSafe(std::string s) {
  for (size_t p = s.find("*/"); p != std::string::npos; p = s.find("*/"))
    s.replace(p, 2, "* /");
  return s;
}

} // namespace npucc::target::cgen
