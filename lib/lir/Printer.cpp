//===- Printer.cpp - Deterministic text form of a loop-IR Program ---------===//
//
// The format is documented in include/npucc/lir/Program.h; Parser.cpp reads
// it back. Used by --emit=lir and by lowering tests.
//
//===----------------------------------------------------------------------===//
#include "npucc/lir/Program.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace npucc::lir {

namespace {

std::string quote(const std::string &s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      r += std::string("\\") + c;
    else if (c == '\n')
      r += "\\n";
    else
      r += c;
  }
  return r + "\"";
}

std::string shapeText(const ir::Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

std::string floatText(float f) {
  if (std::isnan(f))
    return std::signbit(f) ? "-nan" : "nan";
  if (std::isinf(f))
    return f < 0 ? "-inf" : "inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

std::string bufferText(const Program &p, const BufferRef &b) {
  if (b.isNull())
    return b.dtype == ir::DType::F32 ? "null" : std::string("null:") + ir::dtypeName(b.dtype);
  std::string base;
  ir::DType natural = ir::DType::F32;
  bool whole = false;
  switch (b.region) {
  case Region::Arena:
    base = "%arena";
    break;
  case Region::Input:
    base = "%in" + std::to_string(b.index);
    if (b.index >= 0 && size_t(b.index) < p.inputs.size())
      natural = p.inputs[b.index].dtype;
    break;
  case Region::Output:
    base = "%out" + std::to_string(b.index);
    if (b.index >= 0 && size_t(b.index) < p.outputs.size())
      natural = p.outputs[b.index].dtype;
    break;
  case Region::Spm:
    base = "%spm" + std::to_string(b.index);
    natural = ir::DType::I8;
    break;
  case Region::Const:
    if (b.index >= 0 && size_t(b.index) < p.constants.size()) {
      const ConstBuffer &c = p.constants[b.index];
      base = "@" + c.name;
      natural = c.data.dtype();
      whole = b.offset == 0 && b.size == int64_t(c.data.byteSize());
    } else {
      base = "@#" + std::to_string(b.index); // dangling: printed, never parsed
    }
    break;
  }
  std::string r = base;
  if (!(whole && b.dtype == natural))
    r += "[" + std::to_string(b.offset) + ":" + std::to_string(b.size) + "]";
  if (b.dtype != natural)
    r += std::string(":") + ir::dtypeName(b.dtype);
  return r;
}

std::string argText(const Program &p, const Arg &a) {
  if (auto *b = std::get_if<BufferRef>(&a))
    return bufferText(p, *b);
  if (auto *i = std::get_if<int64_t>(&a))
    return std::to_string(*i);
  if (auto *f = std::get_if<float>(&a))
    return floatText(*f);
  if (auto *ia = std::get_if<IntArray>(&a)) {
    std::string r = "i[";
    for (size_t k = 0; k < ia->values.size(); ++k)
      r += (k ? "," : "") + std::to_string(ia->values[k]);
    return r + "]";
  }
  const FloatArray &fa = std::get<FloatArray>(a);
  std::string r = "f[";
  for (size_t k = 0; k < fa.values.size(); ++k)
    r += (k ? "," : "") + floatText(fa.values[k]);
  return r + "]";
}

std::string hexText(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

void printCall(std::ostream &os, const Program &p, const Instr &in) {
  os << in.opcode;
  if (!in.callee.empty())
    os << " " << in.callee;
  os << "(";
  for (size_t i = 0; i < in.args.size(); ++i)
    os << (i ? ", " : "") << argText(p, in.args[i]);
  os << ")";
}

std::string oneLine(const std::string &s) {
  std::string r = s;
  for (char &c : r)
    if (c == '\n' || c == '\r')
      c = ' ';
  return r;
}

} // namespace

void printProgram(std::ostream &os, const Program &p) {
  os << "program " << quote(p.modelName) << "\n";
  os << "arena " << p.arenaSize << " align " << p.arenaAlign << "\n";
  os << "stats peak " << p.peakLiveBytes << " activations " << p.activationBytes << "\n";
  for (const ConstBuffer &c : p.constants)
    os << "const @" << c.name << ": " << ir::dtypeName(c.data.dtype()) << shapeText(c.data.shape())
       << " " << c.data.byteSize() << " bytes" << (c.npu ? " npu" : "")
       << (c.align > 1 ? " align " + std::to_string(c.align) : std::string()) << "\n";
  auto quantText = [](const IOBuffer &b) {
    return b.quant
               ? " q(" + floatText(b.quant->first) + ", " + std::to_string(b.quant->second) + ")"
               : std::string();
  };
  for (size_t i = 0; i < p.inputs.size(); ++i)
    os << "input %in" << i << " " << quote(p.inputs[i].name) << ": "
       << ir::dtypeName(p.inputs[i].dtype) << shapeText(p.inputs[i].shape) << quantText(p.inputs[i])
       << "\n";
  for (size_t i = 0; i < p.outputs.size(); ++i)
    os << "output %out" << i << " " << quote(p.outputs[i].name) << ": "
       << ir::dtypeName(p.outputs[i].dtype) << shapeText(p.outputs[i].shape)
       << quantText(p.outputs[i]) << "\n";
  for (const std::string &k : p.kernelFiles)
    os << "kernel " << quote(k) << "\n";
  if (!p.target.empty())
    os << "target " << quote(p.target) << "\n";
  for (size_t i = 0; i < p.scratchpads.size(); ++i)
    os << "scratchpad %spm" << i << " " << quote(p.scratchpads[i].name) << " base "
       << hexText(p.scratchpads[i].base) << " size " << p.scratchpads[i].size << "\n";
  if (!p.scratchpads.empty())
    os << "spm peak " << p.spmPeak << "\n";
  for (const Instr &in : p.body)
    os << printInstr(p, in) << "\n";
}

std::string printInstr(const Program &p, const Instr &in) {
  std::ostringstream os;
  if (in.opcode == "npu") {
    os << "npu " << in.callee << " #" << in.token << " (";
    for (size_t i = 0; i < in.params.size(); ++i)
      os << (i ? ", " : "") << in.params[i].first << "=" << argText(p, in.params[i].second);
    os << ")";
  } else if (in.opcode == "wait") {
    os << "wait";
    for (int t : in.tokens)
      os << " #" << t;
  } else {
    printCall(os, p, in);
  }
  if (!in.comment.empty())
    os << "  // " << oneLine(in.comment);
  return os.str();
}

std::string printBuffer(const Program &p, const BufferRef &b) { return bufferText(p, b); }

std::string printProgram(const Program &p) {
  std::ostringstream os;
  printProgram(os, p);
  return os.str();
}

} // namespace npucc::lir
