//===- Parser.cpp - Recursive-descent parser of the textual graph IR ------===//
//
// Reads exactly what Printer.cpp writes (see Printer.h for the grammar by
// example), plus a few conveniences for hand-written tests: `//` comments,
// an optional `loc(...)`, empty `{}` attribute braces, integer literals in
// float constants, and quoted value names (`%"a b"`). Errors are Diagnostics
// whose file is "buffer:line:col".
//
//===----------------------------------------------------------------------===//
#include "npucc/ir/Parser.h"

#include "TextScanner.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace npucc::ir {

namespace {

/// Constants above this many bytes are rejected (protects against garbage
/// shapes such as f32[100000,100000] = dense<elided>).
constexpr int64_t MaxConstantBytes = int64_t(1) << 31;

using detail::isFloatToken;
using detail::isIdentStart;
using detail::isNameChar;

class Parser : detail::TextScanner {
public:
  Parser(const std::string &text, const std::string &bufferName)
      : TextScanner(text, bufferName) {}

  Result<std::unique_ptr<Graph>> run() {
    G = std::make_unique<Graph>();
    G->sourceFile = BufName;
    if (!parseGraph())
      return *Err;
    return std::move(G);
  }

private:
  std::unique_ptr<Graph> G;

  // ---- Types and data --------------------------------------------------------

  bool parseShape(Shape &s) {
    s.clear();
    return parseList('[', ']', "in a shape", [&] {
      int64_t d = 0;
      return parseInt(d) && (s.push_back(d), true);
    });
  }

  bool parseDType(DType &t) {
    size_t start = (skipWs(), Pos);
    std::string name;
    if (!parseIdent(name, "an element type"))
      return false;
    auto dt = dtypeFromName(name);
    if (!dt)
      return fail(start, "unknown element type '" + name + "'");
    t = *dt;
    return true;
  }

  /// `q(scale, zp)` or `q<axis>([scales], [zps])`, after the shape.
  bool parseQuant(std::optional<QuantParams> &q) {
    if (peekIdent() != "q" || (at(Pos + 1) != '(' && at(Pos + 1) != '<'))
      return true;
    ++Pos;
    QuantParams p;
    auto scale = [&] {
      double s = 0;
      return parseDouble(s) && (p.scale.push_back(static_cast<float>(s)), true);
    };
    auto zeroPoint = [&] {
      int64_t z = 0;
      return parseInt(z) && (p.zeroPoint.push_back(static_cast<int32_t>(z)), true);
    };
    if (consume('<')) {
      int64_t axis = 0;
      if (!parseInt(axis) || !expect('>', "after the quantization axis") ||
          !expect('(', "after 'q<axis>'") || !parseList('[', ']', "in the scales", scale) ||
          !expect(',', "between scales and zero points") ||
          !parseList('[', ']', "in the zero points", zeroPoint))
        return false;
      p.axis = static_cast<int>(axis);
    } else if (!expect('(', "after 'q'") || !scale() ||
               !expect(',', "between scale and zero point") || !zeroPoint()) {
      return false;
    }
    if (!expect(')', "to end the quantization parameters"))
      return false;
    q = std::move(p);
    return true;
  }

  bool parseType(DType &t, Shape &s, std::optional<QuantParams> &q) {
    return parseDType(t) && parseShape(s) && parseQuant(q);
  }

  bool checkConstantShape(const Shape &s, DType t, size_t start) {
    int64_t n = 1;
    for (int64_t d : s) {
      if (d < 0)
        return fail(start, "constant data needs a static shape");
      if (d > 0 && n > MaxConstantBytes / d)
        return fail(start, "constant is too large");
      n *= d;
    }
    if (n > MaxConstantBytes / static_cast<int64_t>(dtypeSize(t)))
      return fail(start, "constant is too large");
    return true;
  }

  /// `dense<[v, ...]>` or `dense<elided>` (zeros) for the given type.
  bool parseDense(DType t, const Shape &s, size_t typeStart, Tensor &out) {
    if (!expectKeyword("dense", "for constant data") || !expect('<', "after 'dense'") ||
        !checkConstantShape(s, t, typeStart))
      return false;
    out = Tensor(t, s);
    if (consumeKeyword("elided"))
      return expect('>', "after 'elided'");
    size_t listStart = (skipWs(), Pos);
    int64_t n = out.numElements(), i = 0;
    bool ok = parseList('[', ']', "in constant data", [&] {
      std::string tok;
      size_t start = 0;
      if (!scanNumber(tok, start))
        return false;
      if (i >= n)
        return fail(start, "too many elements for " + std::string(dtypeName(t)) + "[" +
                               shapeStr(s) + "] (expected " + std::to_string(n) + ")");
      double d = 0;
      int64_t v = 0;
      if (isFloat(t) ? !toDouble(tok, start, d) : !toInt(tok, start, v))
        return false;
      isFloat(t) ? out.setDouble(i++, d) : out.setInt(i++, v);
      return true;
    });
    if (!ok)
      return false;
    if (i != n)
      return fail(listStart, "expected " + std::to_string(n) + " elements, found " +
                                 std::to_string(i));
    return expect('>', "to end 'dense<...>'");
  }

  // ---- Attributes ---------------------------------------------------------------

  /// Numeric tokens as one attribute: float(s) when any token is a float.
  bool numbersAttr(const std::vector<std::pair<std::string, size_t>> &toks, bool list,
                   Attribute &a) {
    bool anyFloat = false;
    for (auto &t : toks)
      anyFloat |= isFloatToken(t.first);
    std::vector<float> fs;
    std::vector<int64_t> is;
    for (auto &[tok, ts] : toks) {
      double d = 0;
      int64_t v = 0;
      if (anyFloat ? !toDouble(tok, ts, d) : !toInt(tok, ts, v))
        return false;
      anyFloat ? fs.push_back(static_cast<float>(d)) : is.push_back(v);
    }
    if (list)
      a = anyFloat ? Attribute(fs) : Attribute(is);
    else
      a = anyFloat ? Attribute(fs[0]) : Attribute(is[0]);
    return true;
  }

  bool parseAttrValue(Attribute &a) {
    char c = peek();
    size_t start = Pos;
    std::vector<std::pair<std::string, size_t>> toks;
    auto number = [&] {
      std::string tok;
      size_t ts = 0;
      return scanNumber(tok, ts) && (toks.push_back({tok, ts}), true);
    };
    if (c == '"') {
      std::string s;
      return parseString(s) && (a = s, true);
    }
    if (c == '[') {
      std::vector<std::string> strs;
      bool ok = parseList('[', ']', "in a list", [&] {
        if (peek() != '"')
          return number();
        std::string s;
        return parseString(s) && (strs.push_back(s), true);
      });
      if (!ok)
        return false;
      if (!strs.empty() && !toks.empty())
        return fail(start, "a list mixes strings and numbers");
      if (!strs.empty())
        return a = strs, true;
      return numbersAttr(toks, true, a);
    }
    std::string id = peekIdent();
    if (!id.empty() && id != "inf" && id != "nan") {
      // A tensor attribute: `f32[2] dense<[...]>`.
      DType t = DType::F32;
      Shape s;
      Tensor tensor;
      if (!parseDType(t) || !parseShape(s) || !parseDense(t, s, start, tensor))
        return false;
      a = std::move(tensor);
      return true;
    }
    return number() && numbersAttr(toks, false, a);
  }

  // ---- Values ------------------------------------------------------------------

  /// `%name`, `@name` or `_` (absent, only when allowAbsent).
  bool parseRef(char &sigil, std::string &name, size_t &start, bool allowAbsent) {
    char c = peek();
    start = Pos;
    if (allowAbsent && c == '_' && !isNameChar(at(Pos + 1))) {
      ++Pos;
      sigil = '_';
      return true;
    }
    if (c != '%' && c != '@')
      return fail(std::string("expected ") + (allowAbsent ? "'%', '@' or '_'" : "'%' or '@'") +
                  ", found " + describeHere());
    sigil = c;
    ++Pos;
    return parseName(name);
  }

  bool lookup(char sigil, const std::string &name, size_t start, Value *&out) {
    out = G->findValue(name);
    if (!out)
      return fail(start, std::string("use of undefined value '") + sigil + name + "'");
    if (sigil == '@' && !out->isConstant())
      return fail(start, "'@" + name + "' is not a constant (write '%" + name + "')");
    if (sigil == '%' && out->isConstant())
      return fail(start, "'%" + name + "' is a constant (write '@" + name + "')");
    return true;
  }

  /// A new `%name` (or `@name` when sigil is '@') not defined before.
  bool parseNewName(char wantSigil, const char *what, std::string &name, size_t &start) {
    char sigil = 0;
    if (!parseRef(sigil, name, start, false))
      return false;
    if (sigil != wantSigil)
      return fail(start, std::string(what) + " start with '" + wantSigil + "'");
    if (G->findValue(name))
      return fail(start, "redefinition of value '" + name + "'");
    return true;
  }

  // ---- Graph -------------------------------------------------------------------

  bool parseConst() {
    std::string name;
    size_t start = 0;
    if (!parseNewName('@', "constant names", name, start) ||
        !expect(':', "after the constant name"))
      return false;
    DType t = DType::F32;
    Shape s;
    std::optional<QuantParams> q;
    size_t typeStart = (skipWs(), Pos);
    Tensor data;
    if (!parseType(t, s, q) || !expect('=', "after the constant type") ||
        !parseDense(t, s, typeStart, data))
      return false;
    Value *v = G->addConstant(name, std::move(data));
    v->quant = q;
    return true;
  }

  bool parseNode() {
    std::vector<std::string> results;
    if (peek() != '=') {
      do {
        std::string name;
        size_t start = 0;
        if (!parseNewName('%', "node results", name, start))
          return false;
        if (std::find(results.begin(), results.end(), name) != results.end())
          return fail(start, "redefinition of value '" + name + "'");
        results.push_back(name);
      } while (consume(','));
    }
    if (!expect('=', "after the node results"))
      return false;
    size_t opStart = (skipWs(), Pos);
    std::string opText;
    if (!parseIdent(opText, "an op name"))
      return false;
    std::optional<OpKind> kind;
    size_t nOps = 0;
    const OpInfo *ops = allOps(nOps);
    for (size_t i = 0; i < nOps && !kind; ++i)
      if (opText == ops[i].name)
        kind = ops[i].kind;
    if (!kind)
      return fail(opStart, "unknown op '" + opText + "'");
    std::vector<Value *> ins;
    bool ok = parseList('(', ')', "in the operands", [&] {
      char sigil = 0;
      std::string name;
      size_t start = 0;
      Value *v = nullptr;
      if (!parseRef(sigil, name, start, true) || (sigil != '_' && !lookup(sigil, name, start, v)))
        return false;
      ins.push_back(v);
      return true;
    });
    if (!ok)
      return false;
    std::map<std::string, Attribute> attrs;
    if (peek() == '{' && !parseList('{', '}', "in the attributes", [&] {
          size_t start = (skipWs(), Pos);
          std::string key;
          Attribute a;
          if (!parseIdent(key, "an attribute name"))
            return false;
          if (attrs.count(key))
            return fail(start, "duplicate attribute '" + key + "'");
          if (!expect('=', "after the attribute name") || !parseAttrValue(a))
            return false;
          attrs[key] = std::move(a);
          return true;
        }))
      return false;
    if (!expect(':', "before the result types"))
      return false;
    std::vector<Value *> outs;
    size_t typesStart = (skipWs(), Pos);
    auto countError = [&](size_t found) {
      return fail(typesStart, "expected " + std::to_string(results.size()) +
                                  " result types, found " + std::to_string(found));
    };
    for (size_t i = 0; i < results.size(); ++i) {
      if (i && !consume(','))
        return countError(i);
      DType t = DType::F32;
      Shape s;
      std::optional<QuantParams> q;
      if (!parseType(t, s, q))
        return false;
      Value *v = G->addValue(results[i], t, s);
      v->quant = q;
      outs.push_back(v);
    }
    if (peek() == ',')
      return countError(results.size() + 1);
    std::string nodeName = results.empty() ? "" : results[0];
    if (consumeKeyword("loc") && (!expect('(', "after 'loc'") || !parseString(nodeName) ||
                                  !expect(')', "to end 'loc(...)'")))
      return false;
    Node *n = G->addNode(*kind, nodeName, std::move(ins), std::move(outs));
    n->attrs = std::move(attrs);
    return true;
  }

  using RefList = std::vector<std::pair<std::string, size_t>>; // "%name"/"@name", offset

  bool parseRefInto(RefList &refs) {
    char sigil = 0;
    std::string name;
    size_t start = 0;
    if (!parseRef(sigil, name, start, false))
      return false;
    refs.push_back({std::string(1, sigil) + name, start});
    return true;
  }

  bool parseGraph() {
    if (!expectKeyword("graph", "at the start of the input") ||
        !expect('@', "before the graph name"))
      return false;
    bool ok = parseName(G->name) && parseList('(', ')', "in the graph inputs", [&] {
      std::string name;
      size_t start = 0;
      DType t = DType::F32;
      Shape s;
      std::optional<QuantParams> q;
      if (!parseNewName('%', "graph inputs", name, start) ||
          !expect(':', "after the input name") || !parseType(t, s, q))
        return false;
      Value *v = G->addValue(name, t, s);
      v->quant = q;
      G->inputs.push_back(v);
      return true;
    });
    RefList sigOuts, retOuts;
    if (!ok || !expect('-', "before the graph results") ||
        !expect('>', "before the graph results") ||
        !parseList('(', ')', "in the graph results", [&] { return parseRefInto(sigOuts); }) ||
        !expect('{', "to start the graph body"))
      return false;
    size_t retStart = 0;
    for (;;) {
      char c = peek();
      if (c == '\0')
        return fail("unexpected end of input in the graph body (missing 'return')");
      if (consumeKeyword("const")) {
        if (!parseConst())
          return false;
        continue;
      }
      if (peekIdent() == "return") {
        retStart = Pos;
        Pos += 6;
        if (peek() != '}' && peek() != '\0')
          while (parseRefInto(retOuts) && consume(','))
            ;
        if (Err)
          return false;
        break;
      }
      if (c != '%' && c != '=')
        return fail("expected 'const', a node or 'return', found " + describeHere());
      if (!parseNode())
        return false;
    }
    if (!expect('}', "to end the graph"))
      return false;
    if (peek() != '\0')
      return fail("unexpected text after the graph: " + describeHere());
    if (retOuts.size() != sigOuts.size())
      return fail(retStart, "'return' lists " + std::to_string(retOuts.size()) +
                                " values but the graph signature lists " +
                                std::to_string(sigOuts.size()));
    for (size_t i = 0; i < retOuts.size(); ++i) {
      const std::string &ref = retOuts[i].first;
      if (ref != sigOuts[i].first)
        return fail(retOuts[i].second, "'return' value '" + ref +
                                           "' does not match the graph signature ('" +
                                           sigOuts[i].first + "')");
      Value *v = nullptr;
      if (!lookup(ref[0], ref.substr(1), retOuts[i].second, v))
        return false;
      G->outputs.push_back(v);
    }
    return true;
  }
};

} // namespace

Result<std::unique_ptr<Graph>> parseGraph(const std::string &text, const std::string &bufferName) {
  Parser p(text, bufferName);
  return p.run();
}

} // namespace npucc::ir
