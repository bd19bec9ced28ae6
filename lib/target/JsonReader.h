//===- JsonReader.h - Strict JSON reading with JSON-path errors (internal) -===//
//
// Helpers for TargetParse.cpp: typed accessors that report errors as
// (JSON path, message) and reject unknown keys. Internal to lib/target.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace npucc::target::json_reader {

using nlohmann::json;

/// Internal only: carries a validation error to parseTargetJson, which turns it
/// into a Diagnostic. Never escapes this file.
struct ParseError {
  std::string path, message;
};

/// A diagnostic never carries a huge user string: path segments (JSON keys)
/// longer than 48 characters and messages longer than 400 are cut with "...".
inline std::string clipForDiagnostic(const std::string &s, size_t max) {
  return s.size() <= max ? s : s.substr(0, max) + "... (" + std::to_string(s.size()) + " bytes)";
}

[[noreturn]] inline void fail(const std::string &path, const std::string &msg) {
  std::string p;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string seg = path.substr(start, slash == std::string::npos ? std::string::npos
                                                                    : slash - start);
    p += clipForDiagnostic(seg, 48);
    if (slash == std::string::npos)
      break;
    p += '/';
    start = slash + 1;
  }
  throw ParseError{p.empty() ? "/" : p, clipForDiagnostic(msg, 400)};
}

/// A user-provided text quoted for a diagnostic: at most 48 characters, so a
/// huge value never becomes a huge message line.
inline std::string shortQuote(const std::string &s, char q = '\'') {
  const size_t max = 48;
  std::string body = s.size() <= max ? s : s.substr(0, max) + "...";
  for (char &c : body)
    if (static_cast<unsigned char>(c) < 0x20)
      c = '?';
  return q + body + q + (s.size() <= max ? "" : " (" + std::to_string(s.size()) + " bytes)");
}

/// "0x1c" for offsets and addresses in diagnostics.
inline std::string hexText(uint64_t v) {
  static const char *digits = "0123456789abcdef";
  std::string r;
  do {
    r.insert(r.begin(), digits[v & 15]);
    v >>= 4;
  } while (v);
  return "0x" + r;
}

/// Levenshtein distance, for "did you mean" suggestions.
inline size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

/// The closest candidate that looks like a typo of `word` (one edit, two for
/// words of six letters or more, or `word` is a prefix of it), or "".
inline std::string closest(const std::string &word, const std::set<std::string> &candidates) {
  std::string best;
  size_t bestD = SIZE_MAX;
  if (word.size() > 64 || word.empty())
    return best;
  for (const std::string &c : candidates) {
    size_t d = editDistance(word, c);
    bool typo = d <= (word.size() >= 6 ? 2u : 1u) || c.compare(0, word.size(), word) == 0;
    if (typo && d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best;
}

inline std::string typeName(const json &j) {
  if (j.is_boolean())
    return "boolean";
  if (j.is_number_integer())
    return "integer";
  if (j.is_number())
    return "number";
  return j.type_name();
}

/// Accepts a non-negative integer or a string "0x..." / decimal string.
inline uint64_t toU64(const json &j, const std::string &path) {
  if (j.is_number_unsigned())
    return j.get<uint64_t>();
  if (j.is_number_integer()) {
    if (j.get<int64_t>() < 0)
      fail(path, "expected a non-negative integer, got " + clipForDiagnostic(j.dump(), 48));
    return uint64_t(j.get<int64_t>());
  }
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    std::string digits;
    for (char c : s)
      if (c != '_')
        digits += c;
    int base = 10;
    size_t start = 0;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
      base = 16;
      start = 2;
    }
    if (start < digits.size()) {
      uint64_t v = 0;
      bool ok = true;
      for (size_t i = start; i < digits.size() && ok; ++i) {
        char c = digits[i];
        int d = (c >= '0' && c <= '9')   ? c - '0'
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                         : 99;
        if (d >= base || v > (UINT64_MAX - uint64_t(d)) / uint64_t(base))
          ok = false;
        else
          v = v * uint64_t(base) + uint64_t(d);
      }
      if (ok)
        return v;
    }
    fail(path, "expected an unsigned integer, got string " + shortQuote(s, '"'));
  }
  fail(path, "expected an unsigned integer, got " + typeName(j));
}

inline int64_t toI64(const json &j, const std::string &path) {
  if (j.is_number_integer())
    return j.get<int64_t>();
  if (j.is_string() && !j.get<std::string>().empty() && j.get<std::string>()[0] == '-')
    return -int64_t(toU64(j.get<std::string>().substr(1), path));
  return int64_t(toU64(j, path));
}

/// Object wrapper that tracks its path and rejects unknown keys.
class Obj {
public:
  Obj(const json &j, std::string path) : J(j), Path(std::move(path)) {
    if (!j.is_object())
      fail(Path, "expected an object, got " + typeName(j));
  }
  std::string at(const std::string &key) const { return Path + "/" + key; }
  bool has(const std::string &key) const { return J.contains(key); }
  const json &req(const std::string &key) const {
    Seen.insert(key);
    if (!J.contains(key)) {
      std::string msg = "missing required field '" + key + "'";
      for (auto it = J.begin(); it != J.end(); ++it)
        if (!Seen.count(it.key()) && closest(it.key(), {key}) == key)
          msg += "; unknown field " + shortQuote(it.key()) + " (did you mean '" + key + "'?)";
      fail(Path, msg);
    }
    return J.at(key);
  }
  const json *opt(const std::string &key) const {
    Seen.insert(key);
    return J.contains(key) ? &J.at(key) : nullptr;
  }
  uint64_t u64(const std::string &key) const { return toU64(req(key), at(key)); }
  uint64_t u64(const std::string &key, uint64_t def) const {
    const json *v = opt(key);
    return v ? toU64(*v, at(key)) : def;
  }
  uint32_t u32(const std::string &key) const { return check32(u64(key), key); }
  /// An unsigned number in [lo, hi] (the range of what carries it).
  uint64_t range(const std::string &key, uint64_t lo, uint64_t hi) const {
    return checkRange(u64(key), key, lo, hi);
  }
  uint64_t range(const std::string &key, uint64_t def, uint64_t lo, uint64_t hi) const {
    return has(key) ? checkRange(u64(key), key, lo, hi) : (opt(key), def);
  }
  uint32_t u32(const std::string &key, uint32_t def) const { return check32(u64(key, def), key); }
  bool boolean(const std::string &key, bool def) const {
    const json *v = opt(key);
    if (!v)
      return def;
    if (!v->is_boolean())
      fail(at(key), "expected a boolean, got " + typeName(*v));
    return v->get<bool>();
  }
  std::string str(const std::string &key) const { return asString(req(key), at(key)); }
  std::string str(const std::string &key, const std::string &def) const {
    const json *v = opt(key);
    return v ? asString(*v, at(key)) : def;
  }
  static std::string asString(const json &v, const std::string &path) {
    if (!v.is_string())
      fail(path, "expected a string, got " + typeName(v));
    return v.get<std::string>();
  }
  const json &array(const std::string &key) const {
    const json &v = req(key);
    if (!v.is_array())
      fail(at(key), "expected an array, got " + typeName(v));
    return v;
  }
  /// Call after reading: any key not read is unknown.
  void done() const {
    for (auto it = J.begin(); it != J.end(); ++it)
      if (!Seen.count(it.key())) {
        std::string near = closest(it.key(), Seen);
        fail(at(it.key()), "unknown field " + shortQuote(it.key()) +
                               (near.empty() ? "" : " (did you mean '" + near + "'?)"));
      }
  }
  const json &raw() const { return J; }
  bool seen(const std::string &key) const { return Seen.count(key) != 0; }
  const std::string &path() const { return Path; }

private:
  uint64_t checkRange(uint64_t v, const std::string &key, uint64_t lo, uint64_t hi) const {
    if (v < lo || v > hi)
      fail(at(key), "value " + std::to_string(v) + " out of range " + std::to_string(lo) + ".." +
                        std::to_string(hi));
    return v;
  }
  uint32_t check32(uint64_t v, const std::string &key) const {
    if (v > UINT32_MAX)
      fail(at(key), "value " + std::to_string(v) + " does not fit in 32 bits");
    return uint32_t(v);
  }
  const json &J;
  std::string Path;
  mutable std::set<std::string> Seen;
};

inline std::vector<int> intList(const Obj &o, const std::string &key, std::vector<int> def) {
  if (o.has(key) && o.raw().at(key).is_array() && o.raw().at(key).empty())
    fail(o.at(key), "expected a non-empty list");
  const json *v = o.opt(key);
  if (!v)
    return def;
  if (!v->is_array())
    fail(o.at(key), "expected an array, got " + typeName(*v));
  std::vector<int> out;
  for (size_t i = 0; i < v->size(); ++i) {
    uint64_t x = toU64((*v)[i], o.at(key) + "/" + std::to_string(i));
    if (x < 1 || x > 31)
      fail(o.at(key) + "/" + std::to_string(i),
           "value " + std::to_string(x) + " out of range 1..31");
    out.push_back(int(x));
  }
  return out;
}

inline std::vector<std::string> strList(const Obj &o, const std::string &key,
                                        const std::set<std::string> &allowed) {
  const json *v = o.opt(key);
  std::vector<std::string> out;
  if (!v)
    return out;
  if (!v->is_array())
    fail(o.at(key), "expected an array, got " + typeName(*v));
  for (size_t i = 0; i < v->size(); ++i) {
    std::string p = o.at(key) + "/" + std::to_string(i);
    std::string s = Obj::asString((*v)[i], p);
    if (!allowed.empty() && !allowed.count(s)) {
      std::string list;
      for (const std::string &a : allowed)
        list += (list.empty() ? "" : ", ") + a;
      fail(p, "unknown value " + shortQuote(s) + " (expected one of " + list + ")");
    }
    out.push_back(s);
  }
  return out;
}

} // namespace npucc::target::json_reader
