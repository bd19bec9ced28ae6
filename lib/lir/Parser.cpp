//===- Parser.cpp - Read the loop-IR text written by printProgram ---------===//
//
// Line-oriented: each line is one header item or one instruction (see
// Program.h); blank lines and lines that hold only a `#` or `//` comment
// are skipped. Errors are "buffer:line:col: message". Constant data is not in
// the text, so constants are zero-filled.
//
//===----------------------------------------------------------------------===//
#include "npucc/lir/Program.h"

#include "LineParser.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

namespace npucc::lir {

namespace {

using detail::LineParser;

struct ProgramParser {
  Program P;
  std::map<std::string, int> ConstIndex;

  Result<BufferRef> buffer(LineParser &lp) {
    BufferRef b;
    ir::DType natural = ir::DType::F32;
    if (lp.accept('@')) {
      auto n = lp.ident();
      if (!n)
        return n.error();
      auto it = ConstIndex.find(*n);
      if (it == ConstIndex.end())
        return lp.err("unknown constant '@" + *n + "'");
      b.region = Region::Const;
      b.index = it->second;
      const ConstBuffer &c = P.constants[it->second];
      natural = c.data.dtype();
      b.size = int64_t(c.data.byteSize());
    } else {
      NPUCC_TRY(lp.expect('%'));
      auto n = lp.ident();
      if (!n)
        return n.error();
      const std::string &s = *n;
      auto indexOf = [&](size_t prefix, size_t count) -> Result<int> {
        std::string digits = s.substr(prefix);
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
          return lp.err("bad buffer name '%" + s + "'");
        int i = std::atoi(digits.c_str());
        if (size_t(i) >= count)
          return lp.err("buffer '%" + s + "' out of range");
        return i;
      };
      if (s == "arena") {
        b.region = Region::Arena;
      } else if (s.rfind("in", 0) == 0) {
        auto i = indexOf(2, P.inputs.size());
        if (!i)
          return i.error();
        b.region = Region::Input;
        b.index = *i;
        natural = P.inputs[*i].dtype;
      } else if (s.rfind("spm", 0) == 0) {
        auto i = indexOf(3, P.scratchpads.size());
        if (!i)
          return i.error();
        b.region = Region::Spm;
        b.index = *i;
        natural = ir::DType::I8;
      } else if (s.rfind("out", 0) == 0) {
        auto i = indexOf(3, P.outputs.size());
        if (!i)
          return i.error();
        b.region = Region::Output;
        b.index = *i;
        natural = P.outputs[*i].dtype;
      } else {
        return lp.err("unknown buffer '%" + s + "'");
      }
      if (!lp.peek('['))
        return lp.err("expected '[offset:size]'");
    }
    if (lp.accept('[')) {
      auto off = lp.integer();
      if (!off)
        return off.error();
      NPUCC_TRY(lp.expect(':'));
      auto size = lp.integer();
      if (!size)
        return size.error();
      NPUCC_TRY(lp.expect(']'));
      b.offset = *off;
      b.size = *size;
    }
    b.dtype = natural;
    if (lp.accept(':')) {
      auto t = lp.dtype();
      if (!t)
        return t.error();
      b.dtype = *t;
    }
    return b;
  }

  Result<Arg> arg(LineParser &lp) {
    if (lp.peek('@') || lp.peek('%')) {
      auto b = buffer(lp);
      if (!b)
        return b.error();
      return Arg(*b);
    }
    if (lp.acceptWord("i")) {
      NPUCC_TRY(lp.expect('['));
      IntArray a;
      if (!lp.accept(']')) {
        do {
          auto v = lp.integer();
          if (!v)
            return v.error();
          a.values.push_back(*v);
        } while (lp.accept(','));
        NPUCC_TRY(lp.expect(']'));
      }
      return Arg(a);
    }
    if (lp.acceptWord("f")) {
      NPUCC_TRY(lp.expect('['));
      FloatArray a;
      if (!lp.accept(']')) {
        do {
          bool isF = false;
          auto v = lp.number(isF);
          if (!v)
            return v.error();
          a.values.push_back(isF ? v->second : static_cast<float>(v->first));
        } while (lp.accept(','));
        NPUCC_TRY(lp.expect(']'));
      }
      return Arg(a);
    }
    if (lp.acceptWord("null")) {
      BufferRef b = BufferRef::null();
      if (lp.accept(':')) {
        auto t = lp.dtype();
        if (!t)
          return t.error();
        b.dtype = *t;
      }
      return Arg(b);
    }
    bool isF = false;
    auto v = lp.number(isF);
    if (!v)
      return v.error();
    if (isF)
      return Arg(v->second);
    return Arg(v->first);
  }

  Result<int> token(LineParser &lp) {
    NPUCC_TRY(lp.expect('#'));
    auto t = lp.integer();
    if (!t)
      return t.error();
    if (*t < 0 || *t > INT32_MAX)
      return lp.err("bad token #" + std::to_string(*t));
    return int(*t);
  }

  /// `npu KIND #TOKEN (name=arg, ...)` after "npu".
  Status npuInstr(LineParser &lp, Instr &in) {
    auto kind = lp.ident();
    if (!kind)
      return kind.error();
    in.callee = *kind;
    auto t = token(lp);
    if (!t)
      return t.error();
    in.token = *t;
    NPUCC_TRY(lp.expect('('));
    if (lp.accept(')'))
      return success();
    do {
      auto name = lp.ident();
      if (!name)
        return name.error();
      NPUCC_TRY(lp.expect('='));
      auto a = arg(lp);
      if (!a)
        return a.error();
      in.params.emplace_back(*name, std::move(*a));
    } while (lp.accept(','));
    return lp.expect(')');
  }

  Status instr(LineParser &lp) {
    Instr in;
    auto op = lp.ident();
    if (!op)
      return op.error();
    in.opcode = *op;
    if (in.opcode == "npu") {
      NPUCC_TRY(npuInstr(lp, in));
      return finishInstr(lp, in);
    }
    if (in.opcode == "wait") {
      while (lp.peek('#')) {
        auto t = token(lp);
        if (!t)
          return t.error();
        in.tokens.push_back(*t);
      }
      if (in.tokens.empty())
        return lp.err("expected '#token' after wait");
      return finishInstr(lp, in);
    }
    if (!lp.peek('(')) {
      auto callee = lp.ident();
      if (!callee)
        return callee.error();
      in.callee = *callee;
    }
    NPUCC_TRY(lp.expect('('));
    if (!lp.accept(')')) {
      do {
        auto a = arg(lp);
        if (!a)
          return a.error();
        in.args.push_back(std::move(*a));
      } while (lp.accept(','));
      NPUCC_TRY(lp.expect(')'));
    }
    return finishInstr(lp, in);
  }

  Status finishInstr(LineParser &lp, Instr &in) {
    if (!lp.atEnd()) {
      if (lp.text().compare(lp.pos(), 2, "//") != 0)
        return lp.err("expected end of line or '// comment'");
      std::string c = lp.text().substr(lp.pos() + 2);
      if (!c.empty() && c[0] == ' ')
        c.erase(0, 1);
      in.comment = c;
    }
    P.body.push_back(std::move(in));
    return success();
  }

  Status io(LineParser &lp, bool isInput) {
    NPUCC_TRY(lp.expect('%'));
    auto n = lp.ident();
    if (!n)
      return n.error();
    std::string want =
        (isInput ? "in" : "out") + std::to_string(isInput ? P.inputs.size() : P.outputs.size());
    if (*n != want)
      return lp.err("expected '%" + want + "'");
    IOBuffer b;
    auto name = lp.quoted();
    if (!name)
      return name.error();
    b.name = *name;
    NPUCC_TRY(lp.expect(':'));
    auto t = lp.dtype();
    if (!t)
      return t.error();
    b.dtype = *t;
    auto s = lp.shape();
    if (!s)
      return s.error();
    b.shape = *s;
    if (lp.acceptWord("q")) { // q(scale, zp): an int8 input or output's quantization
      NPUCC_TRY(lp.expect('('));
      bool isF = false;
      auto sc = lp.number(isF);
      if (!sc)
        return sc.error();
      NPUCC_TRY(lp.expect(','));
      auto zp = lp.integer();
      if (!zp)
        return zp.error();
      NPUCC_TRY(lp.expect(')'));
      if (*zp < INT32_MIN || *zp > INT32_MAX)
        return lp.err("zero point out of range");
      b.quant = std::make_pair(isF ? sc->second : float(sc->first), int32_t(*zp));
    }
    (isInput ? P.inputs : P.outputs).push_back(std::move(b));
    return success();
  }

  Status line(LineParser &lp) {
    if (lp.atEnd() || lp.peek('#') || lp.commentLine())
      return success();
    if (lp.acceptWord("program")) {
      auto n = lp.quoted();
      if (!n)
        return n.error();
      P.modelName = *n;
    } else if (lp.acceptWord("arena")) {
      auto s = lp.integer();
      if (!s)
        return s.error();
      NPUCC_TRY(lp.expectWord("align"));
      auto a = lp.integer();
      if (!a)
        return a.error();
      P.arenaSize = *s;
      P.arenaAlign = *a;
    } else if (lp.acceptWord("stats")) {
      NPUCC_TRY(lp.expectWord("peak"));
      auto pk = lp.integer();
      if (!pk)
        return pk.error();
      NPUCC_TRY(lp.expectWord("activations"));
      auto ac = lp.integer();
      if (!ac)
        return ac.error();
      P.peakLiveBytes = *pk;
      P.activationBytes = *ac;
    } else if (lp.acceptWord("const")) {
      NPUCC_TRY(lp.expect('@'));
      auto n = lp.ident();
      if (!n)
        return n.error();
      if (ConstIndex.count(*n))
        return lp.err("constant '@" + *n + "' defined twice");
      NPUCC_TRY(lp.expect(':'));
      auto t = lp.dtype();
      if (!t)
        return t.error();
      auto s = lp.shape();
      if (!s)
        return s.error();
      for (int64_t d : *s)
        if (d < 0)
          return lp.err("negative dimension");
      auto bytes = lp.integer();
      if (!bytes)
        return bytes.error();
      NPUCC_TRY(lp.expectWord("bytes"));
      // Sized before anything is allocated (found by fuzz_lir_parser).
      auto need = ir::checkedByteSize(*t, *s);
      if (!need)
        return lp.err("constant '@" + *n + "' is larger than npucc's limit of " +
                      std::to_string(ir::kMaxTensorBytes >> 30) + " GiB for one tensor");
      if (*need != *bytes)
        return lp.err("constant '@" + *n + "' has " + std::to_string(*need) + " bytes, not " +
                      std::to_string(*bytes));
      ConstBuffer c{*n, ir::Tensor(*t, *s)};
      c.npu = lp.acceptWord("npu");
      if (lp.acceptWord("align")) {
        auto a = lp.integer();
        if (!a)
          return a.error();
        if (*a < 2 || (*a & (*a - 1)) || *a > (int64_t(1) << 20))
          return lp.err("constant '@" + *n + "' alignment " + std::to_string(*a) +
                        " is not a power of two in 2..1048576");
        c.align = uint64_t(*a);
      }
      ConstIndex[*n] = int(P.constants.size());
      P.constants.push_back(std::move(c));
    } else if (lp.acceptWord("input")) {
      NPUCC_TRY(io(lp, true));
    } else if (lp.acceptWord("output")) {
      NPUCC_TRY(io(lp, false));
    } else if (lp.acceptWord("target")) {
      auto t = lp.quoted();
      if (!t)
        return t.error();
      P.target = *t;
    } else if (lp.acceptWord("scratchpad")) {
      NPUCC_TRY(lp.expect('%'));
      auto n = lp.ident();
      if (!n)
        return n.error();
      if (*n != "spm" + std::to_string(P.scratchpads.size()))
        return lp.err("expected '%spm" + std::to_string(P.scratchpads.size()) + "'");
      SpmInfo sp;
      auto name = lp.quoted();
      if (!name)
        return name.error();
      sp.name = *name;
      NPUCC_TRY(lp.expectWord("base"));
      auto b = lp.address();
      if (!b)
        return b.error();
      NPUCC_TRY(lp.expectWord("size"));
      auto sz = lp.address();
      if (!sz)
        return sz.error();
      sp.base = *b;
      sp.size = *sz;
      P.scratchpads.push_back(sp);
    } else if (lp.acceptWord("spm")) {
      NPUCC_TRY(lp.expectWord("peak"));
      auto pk = lp.integer();
      if (!pk)
        return pk.error();
      P.spmPeak = *pk;
    } else if (lp.acceptWord("kernel")) {
      auto k = lp.quoted();
      if (!k)
        return k.error();
      P.kernelFiles.push_back(*k);
    } else {
      return instr(lp);
    }
    if (!lp.atEnd())
      return lp.err("unexpected text at end of line");
    return success();
  }
};

} // namespace

Result<Program> parseProgram(const std::string &text, const std::string &bufferName) {
  ProgramParser pp;
  size_t start = 0;
  int lineNo = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    ++lineNo;
    LineParser lp(line, bufferName, lineNo);
    NPUCC_TRY(pp.line(lp));
    start = end + 1;
  }
  return std::move(pp.P);
}

} // namespace npucc::lir
