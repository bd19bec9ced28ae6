//===- CText.cpp - Helpers for printing C99 source text -------------------===//
#include "CText.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace npucc::codegen::ctext {

std::string cString(const std::string &s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\' || c == '?') {
      r += '\\';
      r += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      r += buf;
    } else {
      r += static_cast<char>(c);
    }
  }
  return r + "\"";
}

std::string commentText(const std::string &s) {
  std::string r;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f)
      r += ' ';
    else if (c == '/' && !r.empty() && r.back() == '*')
      r += " /";
    else if (c == '*' && !r.empty() && r.back() == '/')
      r += " *";
    else
      r += static_cast<char>(c);
  }
  return r;
}

std::string floatLiteral(float f, bool *needsMath) {
  if (std::isnan(f) || std::isinf(f)) {
    if (needsMath)
      *needsMath = true;
    if (std::isnan(f))
      return "NAN";
    return f < 0 ? "(-INFINITY)" : "INFINITY";
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  s += "f";
  if (s[0] == '-')
    s = "(" + s + ")";
  return s;
}

std::string intLiteral(int64_t v) {
  if (v == INT64_MIN)
    return "INT64_MIN";
  if (v > INT32_MAX || v < INT32_MIN)
    return "INT64_C(" + std::to_string(v) + ")";
  if (v < 0)
    return "(" + std::to_string(v) + ")";
  return std::to_string(v);
}

std::string dtypeEnum(ir::DType t) { return "NPUCC_" + upper(ir::dtypeName(t)); }

const char *bitsCType(size_t elemSize) {
  switch (elemSize) {
  case 1:
    return "uint8_t";
  case 2:
    return "uint16_t";
  case 8:
    return "uint64_t";
  default:
    return "uint32_t";
  }
}

std::string unionTypedef(const std::string &name, ir::DType t, int64_t count, uint64_t align) {
  std::string n = std::to_string(count > 0 ? count : 1);
  return std::string("typedef union {\n  ") + bitsCType(ir::dtypeSize(t)) + " bits[" + n +
         "];\n  " + ir::dtypeCType(t) + " v[" + n + "];\n  long double align_;\n} " +
         (align > MinUnionAlign ? "NPUCC_ALIGNED(" + std::to_string(align) + ") " : "") + name +
         ";\n";
}

void appendBits(std::string &out, const uint8_t *data, size_t elemSize, size_t count) {
  static const char hex[] = "0123456789abcdef";
  size_t perElem = 2 * elemSize + 4;
  out.reserve(out.size() + count * perElem + count / 16 * 3 + 8);
  if (count == 0) {
    out += "  0\n";
    return;
  }
  char buf[32];
  for (size_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, data + i * elemSize, elemSize); // little-endian host
    char *p = buf;
    if (i % 16 == 0) {
      *p++ = ' ';
      *p++ = ' ';
    }
    *p++ = '0';
    *p++ = 'x';
    for (int d = int(elemSize) * 2 - 1; d >= 0; --d)
      *p++ = hex[(v >> (4 * d)) & 0xf];
    if (i + 1 < count)
      *p++ = ',';
    *p++ = (i % 16 == 15 || i + 1 == count) ? '\n' : ' ';
    out.append(buf, size_t(p - buf));
  }
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

std::string upper(const std::string &s) {
  std::string r = s;
  for (char &c : r)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

std::string baseName(const std::string &path) {
  size_t p = path.find_last_of('/');
  return p == std::string::npos ? path : path.substr(p + 1);
}

std::string infoTable(const std::string &prefix, const char *kind,
                      const std::vector<lir::IOBuffer> &bufs, const std::string &attr) {
  std::string r;
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (bufs[i].shape.empty())
      continue;
    r += attr + "static const int32_t " + prefix + "_" + kind + std::to_string(i) + "_shape[" +
         std::to_string(bufs[i].shape.size()) + "] = {";
    for (size_t k = 0; k < bufs[i].shape.size(); ++k)
      r += (k ? ", " : "") + std::to_string(bufs[i].shape[k]);
    r += "};\n";
  }
  r += attr + "const npucc_tensor_info " + prefix + "_" + kind + "s[" +
       std::to_string(bufs.empty() ? 1 : bufs.size()) + "] = {\n";
  for (size_t i = 0; i < bufs.size(); ++i) {
    const lir::IOBuffer &b = bufs[i];
    std::string shape = b.shape.empty() ? std::string("(const int32_t *)0")
                                        : prefix + "_" + kind + std::to_string(i) + "_shape";
    r += "  {" + cString(b.name) + ", " + dtypeEnum(b.dtype) + ", " +
         std::to_string(b.shape.size()) + ", " + shape + ", " +
         std::to_string(ir::Tensor::byteSizeOf(b.dtype, b.shape)) + "},\n";
  }
  if (bufs.empty())
    r += "  {\"\", NPUCC_F32, 0, (const int32_t *)0, 0} /* placeholder: no entries */\n";
  return r + "};\n\n";
}

} // namespace npucc::codegen::ctext
