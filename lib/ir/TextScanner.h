//===- TextScanner.h - Character-level scanning for the graph IR parser ---===//
//
// Internal to lib/ir: the cursor, whitespace/`//`-comment skipping, tokens
// (identifiers, keywords, quoted strings, value names, numbers) and the first
// error as a Diagnostic whose file is "buffer:line:col". Parser.cpp builds
// the grammar on top of it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/support/Diagnostic.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace npucc::ir::detail {


inline bool isNameChar(char c) {
  return !std::isspace(static_cast<unsigned char>(c)) && c != ',' && c != '(' && c != ')' &&
         c != '"' && c != '{' && c != '}' && c != '\0';
}

inline bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
inline bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

/// True when a numeric token denotes a float (the printer always writes a
/// '.', an exponent, "inf" or "nan" for floats).
inline bool isFloatToken(const std::string &t) {
  return t.find_first_of(".eEinIN") != std::string::npos;
}

class TextScanner {
public:
  TextScanner(const std::string &text, const std::string &bufferName)
      : Src(text), BufName(bufferName) {}

protected:
  const std::string &Src;
  std::string BufName;
  size_t Pos = 0;
  std::optional<Diagnostic> Err;


  bool fail(size_t at, const std::string &msg) {
    if (Err)
      return false;
    size_t end = std::min(at, Src.size());
    size_t line = 1 + static_cast<size_t>(std::count(Src.begin(), Src.begin() + end, '\n'));
    size_t nl = end ? Src.rfind('\n', end - 1) : std::string::npos;
    size_t col = nl == std::string::npos ? end + 1 : end - nl;
    Diagnostic d(msg);
    d.file = BufName + ":" + std::to_string(line) + ":" + std::to_string(col);
    Err = d;
    return false;
  }
  bool fail(const std::string &msg) { return fail(Pos, msg); }

  char cur() const { return Pos < Src.size() ? Src[Pos] : '\0'; }
  char at(size_t i) const { return i < Src.size() ? Src[i] : '\0'; }

  void skipWs() {
    for (;;) {
      while (Pos < Src.size() && std::isspace(static_cast<unsigned char>(Src[Pos])))
        ++Pos;
      if (cur() == '/' && at(Pos + 1) == '/') {
        while (Pos < Src.size() && Src[Pos] != '\n')
          ++Pos;
        continue;
      }
      return;
    }
  }

  char peek() {
    skipWs();
    return cur();
  }

  bool consume(char c) {
    if (peek() != c)
      return false;
    ++Pos;
    return true;
  }

  std::string describeHere() {
    skipWs();
    if (Pos >= Src.size())
      return "end of input";
    size_t e = Pos;
    while (e < Src.size() && e - Pos < 12 && !std::isspace(static_cast<unsigned char>(Src[e])))
      ++e;
    return "'" + Src.substr(Pos, e - Pos) + "'";
  }

  bool expect(char c, const char *context) {
    if (consume(c))
      return true;
    return fail(std::string("expected '") + c + "' " + context + ", found " + describeHere());
  }

  /// `open [elem {, elem}] close`; `elem()` parses one element.
  template <typename F> bool parseList(char open, char close, const char *where, F elem) {
    if (!expect(open, where))
      return false;
    if (consume(close))
      return true;
    do {
      if (!elem())
        return false;
    } while (consume(','));
    return expect(close, where);
  }

  /// Peeks an identifier without consuming it.
  std::string peekIdent() {
    skipWs();
    if (!isIdentStart(cur()))
      return "";
    size_t e = Pos;
    while (e < Src.size() && isIdentChar(Src[e]))
      ++e;
    return Src.substr(Pos, e - Pos);
  }

  bool parseIdent(std::string &out, const char *what) {
    out = peekIdent();
    if (out.empty())
      return fail(std::string("expected ") + what + ", found " + describeHere());
    Pos += out.size();
    return true;
  }

  bool consumeKeyword(const char *kw) {
    if (peekIdent() != kw)
      return false;
    Pos += std::string(kw).size();
    return true;
  }

  bool expectKeyword(const char *kw, const char *context) {
    if (consumeKeyword(kw))
      return true;
    return fail(std::string("expected '") + kw + "' " + context + ", found " + describeHere());
  }

  bool parseString(std::string &out) {
    if (peek() != '"')
      return fail("expected a string, found " + describeHere());
    size_t start = Pos++;
    out.clear();
    for (;;) {
      if (Pos >= Src.size())
        return fail(start, "unterminated string");
      char c = Src[Pos++];
      if (c == '"')
        return true;
      if (c == '\\') {
        if (Pos >= Src.size())
          return fail(start, "unterminated string");
        c = Src[Pos++];
      }
      out += c;
    }
  }

  /// A value name right after its sigil: bare characters or a quoted string.
  /// A ':' ends a bare name only when followed by whitespace (`%x: f32[1]`).
  bool parseName(std::string &out) {
    if (cur() == '"')
      return parseString(out);
    size_t start = Pos;
    while (Pos < Src.size() && isNameChar(Src[Pos])) {
      if (Src[Pos] == ':' &&
          (Pos + 1 >= Src.size() || std::isspace(static_cast<unsigned char>(Src[Pos + 1]))))
        break;
      ++Pos;
    }
    if (Pos == start)
      return fail("expected a name");
    out = Src.substr(start, Pos - start);
    return true;
  }

  /// A numeric token: [+-] then digits/'.'/exponent, or inf / nan.
  bool scanNumber(std::string &tok, size_t &startOut) {
    skipWs();
    size_t start = Pos, p = Pos;
    if (at(p) == '-' || at(p) == '+')
      ++p;
    if (std::isalpha(static_cast<unsigned char>(at(p)))) {
      while (std::isalpha(static_cast<unsigned char>(at(p))))
        ++p;
    } else {
      while (std::isdigit(static_cast<unsigned char>(at(p))) || at(p) == '.')
        ++p;
      if (at(p) == 'e' || at(p) == 'E') {
        ++p;
        if (at(p) == '-' || at(p) == '+')
          ++p;
        while (std::isdigit(static_cast<unsigned char>(at(p))))
          ++p;
      }
    }
    tok = Src.substr(start, p - start);
    startOut = start;
    if (tok.empty() || tok == "-" || tok == "+")
      return fail("expected a number, found " + describeHere());
    Pos = p;
    return true;
  }

  bool toDouble(const std::string &tok, size_t start, double &out) {
    char *end = nullptr;
    out = std::strtod(tok.c_str(), &end);
    if (end != tok.c_str() + tok.size())
      return fail(start, "invalid number '" + tok + "'");
    return true;
  }

  bool toInt(const std::string &tok, size_t start, int64_t &out) {
    if (isFloatToken(tok))
      return fail(start, "expected an integer, found '" + tok + "'");
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(tok.c_str(), &end, 10);
    if (end != tok.c_str() + tok.size())
      return fail(start, "invalid integer '" + tok + "'");
    if (errno == ERANGE)
      return fail(start, "integer '" + tok + "' out of range");
    out = v;
    return true;
  }

  bool parseInt(int64_t &out) {
    std::string tok;
    size_t start = 0;
    return scanNumber(tok, start) && toInt(tok, start, out);
  }
  bool parseDouble(double &out) {
    std::string tok;
    size_t start = 0;
    return scanNumber(tok, start) && toDouble(tok, start, out);
  }

  // ---- Types and data --------------------------------------------------------
};

} // namespace npucc::ir::detail
