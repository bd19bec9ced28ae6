//===- Printer.cpp - Deterministic textual form of the graph IR -----------===//
#include "npucc/ir/Printer.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace npucc::ir {

namespace {

std::string fmtFloat(double f) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", f);
  std::string s = buf;
  // Keep a float marker so the parser can tell 1.0 from 1.
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

std::string quote(const std::string &s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      r += '\\';
    r += c;
  }
  return r + "\"";
}

template <typename T, typename F> std::string list(const std::vector<T> &v, F f) {
  std::string r = "[";
  for (size_t i = 0; i < v.size(); ++i)
    r += (i ? ", " : "") + f(v[i]);
  return r + "]";
}

std::string shapeText(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

std::string tensorData(const Tensor &t, int64_t elideAbove) {
  if (elideAbove >= 0 && t.numElements() > elideAbove)
    return "dense<elided>";
  std::string r = "dense<[";
  for (int64_t i = 0; i < t.numElements(); ++i) {
    if (i)
      r += ", ";
    r += isFloat(t.dtype()) ? fmtFloat(t.getDouble(i)) : std::to_string(t.getInt(i));
  }
  return r + "]>";
}

std::string attrText(const Attribute &a, int64_t elideAbove) {
  struct V {
    int64_t elide;
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(float f) const { return fmtFloat(f); }
    std::string operator()(const std::string &s) const { return quote(s); }
    std::string operator()(const std::vector<int64_t> &v) const {
      return list(v, [](int64_t i) { return std::to_string(i); });
    }
    std::string operator()(const std::vector<float> &v) const {
      return list(v, [](float f) { return fmtFloat(f); });
    }
    std::string operator()(const std::vector<std::string> &v) const { return list(v, quote); }
    std::string operator()(const Tensor &t) const {
      return std::string(dtypeName(t.dtype())) + shapeText(t.shape()) + " " +
             tensorData(t, elide);
    }
  };
  return std::visit(V{elideAbove}, a);
}

// Names the parser cannot read back bare (empty, with whitespace or one of
// `,(){}"`, or ending in ':') are quoted: %"a b".
std::string nameText(const std::string &n) {
  bool bare = !n.empty() && n.back() != ':';
  for (char c : n)
    if (std::isspace(static_cast<unsigned char>(c)) || std::strchr(",(){}\"", c))
      bare = false;
  return bare ? n : quote(n);
}

std::string ref(const Value *v) {
  if (!v)
    return "_";
  return (v->isConstant() ? "@" : "%") + nameText(v->name);
}

} // namespace

std::string typeStr(const Value &v) {
  std::string s = std::string(dtypeName(v.dtype)) + shapeText(v.shape);
  if (v.quant) {
    const QuantParams &q = *v.quant;
    if (!q.perChannel() && q.scale.size() == 1)
      s += " q(" + fmtFloat(q.scale[0]) + ", " + std::to_string(q.zeroPoint[0]) + ")";
    else
      s += " q<" + std::to_string(q.axis) + ">(" +
           list(q.scale, [](float f) { return fmtFloat(f); }) + ", " +
           list(q.zeroPoint, [](int32_t z) { return std::to_string(z); }) + ")";
  }
  return s;
}

void printGraph(std::ostream &os, const Graph &g, const PrintOptions &opts) {
  os << "graph @" << nameText(g.name) << "(";
  for (size_t i = 0; i < g.inputs.size(); ++i)
    os << (i ? ", " : "") << ref(g.inputs[i]) << ": " << typeStr(*g.inputs[i]);
  os << ") -> (";
  for (size_t i = 0; i < g.outputs.size(); ++i)
    os << (i ? ", " : "") << ref(g.outputs[i]);
  os << ") {\n";
  for (auto &v : g.values())
    if (v->isConstant())
      os << "  const @" << nameText(v->name) << ": " << typeStr(*v) << " = "
         << tensorData(*v->constant, opts.elideAbove) << "\n";
  for (auto &n : g.nodes()) {
    os << "  ";
    for (size_t i = 0; i < n->outputs.size(); ++i)
      os << (i ? ", " : "") << ref(n->outputs[i]);
    os << " = " << n->opName() << "(";
    for (size_t i = 0; i < n->inputs.size(); ++i)
      os << (i ? ", " : "") << ref(n->inputs[i]);
    os << ")";
    if (!n->attrs.empty()) {
      os << " {";
      bool first = true;
      for (auto &[k, a] : n->attrs) {
        os << (first ? "" : ", ") << k << "=" << attrText(a, opts.elideAbove);
        first = false;
      }
      os << "}";
    }
    os << " : ";
    for (size_t i = 0; i < n->outputs.size(); ++i)
      os << (i ? ", " : "") << typeStr(*n->outputs[i]);
    os << " loc(" << quote(n->name) << ")\n";
  }
  os << "  return ";
  for (size_t i = 0; i < g.outputs.size(); ++i)
    os << (i ? ", " : "") << ref(g.outputs[i]);
  os << "\n}\n";
}

std::string printGraph(const Graph &g, const PrintOptions &opts) {
  std::ostringstream os;
  printGraph(os, g, opts);
  return os.str();
}

} // namespace npucc::ir
