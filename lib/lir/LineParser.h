//===- LineParser.h - The tokenizer of one loop-IR text line ---------------===//
//
// Used by Parser.cpp only: identifiers, integers, addresses, quoted strings,
// numbers, dtypes and shapes of one line, with errors "buffer:line:col:
// message".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/lir/Program.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace npucc::lir::detail {

class LineParser {
public:
  LineParser(const std::string &line, const std::string &buffer, int lineNo)
      : S(line), Buffer(buffer), LineNo(lineNo) {}

  Diagnostic err(const std::string &msg) const {
    return Diagnostic(Buffer + ":" + std::to_string(LineNo) + ":" + std::to_string(Pos + 1) + ": " +
                      msg);
  }
  void skipWs() {
    while (Pos < S.size() && (S[Pos] == ' ' || S[Pos] == '\t'))
      ++Pos;
  }
  bool atEnd() {
    skipWs();
    return Pos >= S.size();
  }
  bool peek(char c) {
    skipWs();
    return Pos < S.size() && S[Pos] == c;
  }
  /// A line that holds only a `// comment`.
  bool commentLine() {
    skipWs();
    return S.compare(Pos, 2, "//") == 0;
  }
  bool accept(char c) {
    if (!peek(c))
      return false;
    ++Pos;
    return true;
  }
  bool acceptWord(const std::string &w) {
    skipWs();
    if (S.compare(Pos, w.size(), w) != 0)
      return false;
    size_t e = Pos + w.size();
    if (e < S.size() && (std::isalnum(static_cast<unsigned char>(S[e])) || S[e] == '_'))
      return false;
    Pos = e;
    return true;
  }
  Status expect(char c) {
    if (!accept(c))
      return err(std::string("expected '") + c + "'");
    return success();
  }
  Status expectWord(const std::string &w) {
    if (!acceptWord(w))
      return err("expected '" + w + "'");
    return success();
  }
  Result<std::string> ident() {
    skipWs();
    size_t b = Pos;
    while (Pos < S.size() && (std::isalnum(static_cast<unsigned char>(S[Pos])) || S[Pos] == '_'))
      ++Pos;
    if (b == Pos || std::isdigit(static_cast<unsigned char>(S[b])))
      return err("expected an identifier");
    return S.substr(b, Pos - b);
  }
  Result<int64_t> integer() {
    skipWs();
    size_t b = Pos;
    if (Pos < S.size() && S[Pos] == '-')
      ++Pos;
    while (Pos < S.size() && std::isdigit(static_cast<unsigned char>(S[Pos])))
      ++Pos;
    if (Pos == b || (Pos == b + 1 && S[b] == '-')) {
      Pos = b;
      return err("expected an integer");
    }
    errno = 0;
    long long v = std::strtoll(S.c_str() + b, nullptr, 10);
    if (errno == ERANGE) {
      Pos = b;
      return err("integer out of range");
    }
    return static_cast<int64_t>(v);
  }
  /// An unsigned number, decimal or 0x hex.
  Result<uint64_t> address() {
    skipWs();
    size_t b = Pos;
    int base = 10;
    if (S.compare(Pos, 2, "0x") == 0) {
      base = 16;
      Pos += 2;
    }
    size_t digits = Pos;
    while (Pos < S.size() && std::isxdigit(static_cast<unsigned char>(S[Pos])) &&
           (base == 16 || std::isdigit(static_cast<unsigned char>(S[Pos]))))
      ++Pos;
    if (Pos == digits) {
      Pos = b;
      return err("expected an address");
    }
    errno = 0;
    unsigned long long v = std::strtoull(S.c_str() + digits, nullptr, base);
    if (errno == ERANGE)
      return err("address out of range");
    return static_cast<uint64_t>(v);
  }
  Result<std::string> quoted() {
    skipWs();
    if (Pos >= S.size() || S[Pos] != '"')
      return err("expected a string");
    ++Pos;
    std::string r;
    while (Pos < S.size() && S[Pos] != '"') {
      char c = S[Pos++];
      if (c == '\\' && Pos < S.size()) {
        char e = S[Pos++];
        r += e == 'n' ? '\n' : e;
      } else {
        r += c;
      }
    }
    if (Pos >= S.size())
      return err("unterminated string");
    ++Pos;
    return r;
  }
  /// A number token: returns true in isFloat when it is a float literal.
  Result<std::pair<int64_t, float>> number(bool &isFloat) {
    skipWs();
    size_t b = Pos;
    while (Pos < S.size() && (std::isalnum(static_cast<unsigned char>(S[Pos])) || S[Pos] == '.' ||
                              S[Pos] == '-' || S[Pos] == '+'))
      ++Pos;
    std::string tok = S.substr(b, Pos - b);
    if (tok.empty())
      return err("expected a number");
    std::string body = tok[0] == '-' ? tok.substr(1) : tok;
    if (body == "inf" || body == "nan") {
      isFloat = true;
      float v = body == "inf" ? std::numeric_limits<float>::infinity()
                              : std::numeric_limits<float>::quiet_NaN();
      return std::make_pair(int64_t(0), tok[0] == '-' ? -v : v);
    }
    isFloat = tok.find_first_of(".eE") != std::string::npos;
    char *end = nullptr;
    if (isFloat) {
      float v = std::strtof(tok.c_str(), &end);
      if (*end) {
        Pos = b;
        return err("bad float '" + tok + "'");
      }
      return std::make_pair(int64_t(0), v);
    }
    Pos = b;
    auto i = integer();
    if (!i)
      return i.error();
    if (Pos != b + tok.size())
      return err("bad number '" + tok + "'");
    return std::make_pair(*i, 0.0f);
  }
  Result<ir::DType> dtype() {
    auto n = ident();
    if (!n)
      return n.error();
    auto t = ir::dtypeFromName(*n);
    if (!t)
      return err("unknown dtype '" + *n + "'");
    return *t;
  }
  Result<ir::Shape> shape() {
    NPUCC_TRY(expect('['));
    ir::Shape s;
    if (accept(']'))
      return s;
    do {
      auto d = integer();
      if (!d)
        return d.error();
      s.push_back(*d);
    } while (accept(','));
    NPUCC_TRY(expect(']'));
    return s;
  }
  std::string rest() {
    skipWs();
    std::string r = S.substr(Pos);
    Pos = S.size();
    return r;
  }
  size_t pos() const { return Pos; }
  const std::string &text() const { return S; }

private:
  const std::string &S;
  const std::string &Buffer;
  int LineNo;
  size_t Pos = 0;
};

} // namespace npucc::lir::detail
