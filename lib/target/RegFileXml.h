//===- RegFileXml.h - Shared parts of the register-file importers ----------===//
//
// Numbers, text, errors and the XML reading shared by the CMSIS-SVD (Svd.cpp)
// and IP-XACT (IpXact.cpp) importers. Internal to lib/target. The register
// attribute vocabularies (CMSIS-SVD's terms, which the description's
// `registers` use too) are in RegFileVocab.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "RegFileVocab.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <vector>

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

/// The tag without its namespace prefix ("ipxact:register" -> "register").
inline std::string localName(const char *tag) {
  const char *colon = std::strchr(tag, ':');
  return colon ? colon + 1 : tag;
}

/// A description name from a peripheral's or component's: lower case, every
/// other character a dash.
inline std::string slug(const std::string &name) {
  std::string r;
  for (char c : name)
    r += std::isalnum(static_cast<unsigned char>(c)) ? char(std::tolower(c)) : '-';
  return r;
}

/// What both importers do with the XML: parse it, find children by local
/// name (SVD has no namespaces, IP-XACT's vary by version), and fail naming
/// the file, the line and the element.
class XmlReader {
public:
  XmlReader(const std::string &xml, const std::string &file) : Xml(xml), File(file) {}

protected:
  const std::string &Xml;
  std::string File;
  pugi::xml_document Doc;

  /// Parses the text; throws when it is not well-formed XML.
  void parse() {
    pugi::xml_parse_result pr = Doc.load_buffer(Xml.data(), Xml.size());
    if (!pr)
      throw ImportError{where(size_t(pr.offset)) + "not well-formed XML: " + pr.description()};
  }
  std::string where(size_t offset) const {
    size_t line =
        1 + size_t(std::count(Xml.begin(), Xml.begin() + std::min(offset, Xml.size()), '\n'));
    return File + ":" + std::to_string(line) + ": ";
  }
  [[noreturn]] void fail(pugi::xml_node n, const std::string &msg) const {
    std::string what = "<" + std::string(n.name()) + ">";
    if (std::string nm = text(n, "name"); !nm.empty())
      what += " '" + nm + "'";
    throw ImportError{where(size_t(n.offset_debug())) + what + ": " + msg};
  }
  static pugi::xml_node kid(pugi::xml_node n, const char *tag) {
    for (pugi::xml_node c : n.children())
      if (localName(c.name()) == tag)
        return c;
    return pugi::xml_node();
  }
  static std::vector<pugi::xml_node> kids(pugi::xml_node n, const char *tag) {
    std::vector<pugi::xml_node> v;
    for (pugi::xml_node c : n.children())
      if (localName(c.name()) == tag)
        v.push_back(c);
    return v;
  }
  /// The child's text, white space squeezed ("" when there is no such child).
  static std::string text(pugi::xml_node n, const char *tag) {
    return squeeze(kid(n, tag).text().as_string());
  }
  /// The child's text, which must be one of `allowed`.
  std::string checked(pugi::xml_node n, const char *tag, const Vocabulary &allowed) const {
    std::string v = text(n, tag);
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end())
      return v;
    fail(kid(n, tag), "'" + v + "' is not one of " + joined(allowed));
  }
};

} // namespace npucc::target::regfile
