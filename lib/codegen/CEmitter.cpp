//===- CEmitter.cpp - Print a loop-IR Program as static C99 files ---------===//
//
// emitC writes <prefix>.h (API), <prefix>.c (arena, tensor-info tables, the
// run function: one kernel call / memcpy / memset per instruction, each after
// an NPUCC_LAYER_HOOK(index, kernel) that is empty unless the build defines
// it; NPU layers' command streams after an NPUCC_NPU_LAYER_HOOK(index, layer)),
// <prefix>_weights.{h,c} (constants, exact bit patterns) and the runtime
// files the program uses, flat (basename only). With EmitOptions::externalArena
// the arena is the caller's, behind <prefix>_init / <prefix>_run(ctx, ...)
// (ArenaApi.h); the header is ModelHeader.cpp's. The output only depends on the Program and the options, so
// re-running gives byte-identical files.
//
//===----------------------------------------------------------------------===//
#include "npucc/codegen/CEmitter.h"
#include "npucc/codegen/EmbeddedRuntime.h"

#include "ArenaApi.h"
#include "CText.h"
#include "ModelHeader.h"
#include "NpuStream.h"

#include <cstring>
#include <map>
#include <set>

namespace npucc::codegen {

using lir::BufferRef;
using lir::Program;
using lir::Region;
using namespace ctext;

namespace {

class Emitter {
public:
  Emitter(const Program &p, const EmitOptions &o)
      : P(p), Prefix(o.prefix), Opts(o), Npu(p, o.prefix) {
    Upper = upper(Prefix);
    Ext = o.externalArena;
    Sections = o.sections;
    Attrs = Ext || !Sections.empty();
  }

  Result<std::vector<EmittedFile>> run();

private:
  Status checkBuffer(const BufferRef &b, size_t instr) const;
  std::string pointer(const BufferRef &b) const;
  Result<std::string> argText(const lir::Arg &a, const lir::Instr &in, size_t idx);
  Result<std::string> body();
  std::string source(const std::string &runBody, const std::vector<std::string> &kernelHeaders);
  std::string weightsHeader() const;
  std::string weightsSource() const;
  std::string constName(int i) const { return Prefix + "_w_" + P.constants[i].name; }

  const Program &P;
  std::string Prefix, Upper;
  const EmitOptions &Opts;
  bool NeedsMath = false;
  int LayerHooks = 0; // NPUCC_LAYER_HOOK calls in the run function (CPU instructions)
  int NpuHooks = 0;   // NPUCC_NPU_LAYER_HOOK calls (NPU layers)
  bool Ext = false;   // --arena external: the arena is the caller's (ctx->arena)
  std::string Sections; // --memory-map: the macros' default sections (EmitOptions::sections)
  bool Attrs = false;   // section macros on every table (Ext or Sections)
  mutable bool ArenaUsed = false;
  std::map<std::vector<int64_t>, int> IntArrays;
  std::map<std::vector<uint32_t>, int> FloatArrayIds;
  std::vector<std::vector<float>> FloatArrays;
  std::vector<const std::vector<int64_t> *> IntArrayOrder;
  NpuStream Npu;

public:
  uint64_t npuStreamBytes() const { return Npu.flashBytes(); }
  uint64_t npuCommands() const { return Npu.commands(); }
  /// The kernel parameter and requantization tables of <prefix>.c (int32 and float).
  uint64_t tableBytes() const {
    uint64_t n = 0;
    for (const auto *v : IntArrayOrder)
      n += 4 * v->size();
    for (const auto &v : FloatArrays)
      n += 4 * v.size();
    return n;
  }
};

/// The names in `#include "name"` lines of a C file.
std::vector<std::string> quotedIncludes(const std::string &text) {
  std::vector<std::string> r;
  size_t pos = 0;
  while ((pos = text.find("#include \"", pos)) != std::string::npos) {
    size_t b = pos + 10, e = text.find('"', b);
    if (e == std::string::npos)
      break;
    r.push_back(text.substr(b, e - b));
    pos = e;
  }
  return r;
}

Diagnostic instrError(size_t i, const lir::Instr &in, const std::string &msg) {
  std::string where =
      "instruction " + std::to_string(i) + " (" + (in.callee.empty() ? in.opcode : in.callee) + ")";
  if (!in.comment.empty())
    where += " [" + in.comment + "]";
  return error(where + ": " + msg);
}

Status Emitter::checkBuffer(const BufferRef &b, size_t i) const {
  const lir::Instr &in = P.body[i];
  if (b.isNull())
    return success();
  if (b.offset < 0 || b.size < 0)
    return instrError(i, in, "negative buffer offset or size");
  int64_t limit = 0;
  switch (b.region) {
  case Region::Arena:
    limit = P.arenaSize;
    break;
  case Region::Const:
    if (b.index < 0 || size_t(b.index) >= P.constants.size())
      return instrError(i, in, "constant index out of range");
    limit = int64_t(P.constants[b.index].data.byteSize());
    break;
  case Region::Input:
    if (b.index < 0 || size_t(b.index) >= P.inputs.size())
      return instrError(i, in, "input index out of range");
    limit = int64_t(ir::Tensor::byteSizeOf(P.inputs[b.index].dtype, P.inputs[b.index].shape));
    break;
  case Region::Output:
    if (b.index < 0 || size_t(b.index) >= P.outputs.size())
      return instrError(i, in, "output index out of range");
    limit = int64_t(ir::Tensor::byteSizeOf(P.outputs[b.index].dtype, P.outputs[b.index].shape));
    break;
  case Region::Spm:
    return instrError(i, in, "a CPU instruction cannot use the NPU's scratchpad");
  }
  if (b.offset + b.size > limit)
    return instrError(i, in,
                      "buffer [" + std::to_string(b.offset) + ":" + std::to_string(b.size) +
                          "] exceeds its region of " + std::to_string(limit) + " bytes");
  return success();
}

std::string Emitter::pointer(const BufferRef &b) const {
  std::string ct = ir::dtypeCType(b.dtype);
  std::string off = std::to_string(b.offset);
  if (b.isNull())
    return b.region == Region::Output ? "(" + ct + " *)0" : "(const " + ct + " *)0";
  switch (b.region) {
  case Region::Arena:
    if (P.arenaSize == 0)
      return "(" + ct + " *)0";
    ArenaUsed = true;
    if (Ext)
      return "(" + ct + " *)(ctx->arena + " + off + ")";
    return "(" + ct + " *)(" + Prefix + "_arena.bytes + " + off + ")";
  case Region::Input:
    if (b.offset == 0)
      return "(const " + ct + " *)inputs[" + std::to_string(b.index) + "]";
    return "(const " + ct + " *)((const uint8_t *)inputs[" + std::to_string(b.index) + "] + " +
           off + ")";
  case Region::Output:
    if (b.offset == 0)
      return "(" + ct + " *)outputs[" + std::to_string(b.index) + "]";
    return "(" + ct + " *)((uint8_t *)outputs[" + std::to_string(b.index) + "] + " + off + ")";
  case Region::Const: {
    std::string n = constName(b.index) + ".v";
    if (b.offset == 0 && b.dtype == P.constants[b.index].data.dtype())
      return n;
    return "(const " + ct + " *)((const uint8_t *)" + n + " + " + off + ")";
  }
  case Region::Spm:
    break;
  }
  return "0";
}

Result<std::string> Emitter::argText(const lir::Arg &a, const lir::Instr &in, size_t idx) {
  if (auto *b = std::get_if<BufferRef>(&a)) {
    NPUCC_TRY(checkBuffer(*b, idx));
    return pointer(*b);
  }
  if (auto *i = std::get_if<int64_t>(&a))
    return intLiteral(*i);
  if (auto *f = std::get_if<float>(&a))
    return floatLiteral(*f, &NeedsMath);
  if (auto *ia = std::get_if<lir::IntArray>(&a)) {
    if (ia->values.empty())
      return std::string("(const int32_t *)0");
    for (int64_t v : ia->values)
      if (v < INT32_MIN || v > INT32_MAX)
        return instrError(idx, in, "array value " + std::to_string(v) + " does not fit int32_t");
    auto it = IntArrays.find(ia->values);
    if (it == IntArrays.end()) {
      it = IntArrays.emplace(ia->values, int(IntArrays.size())).first;
      IntArrayOrder.push_back(&it->first);
    }
    return Prefix + "_ia" + std::to_string(it->second);
  }
  const auto &fa = std::get<lir::FloatArray>(a);
  if (fa.values.empty())
    return std::string("(const float *)0");
  std::vector<uint32_t> bits(fa.values.size());
  std::memcpy(bits.data(), fa.values.data(), bits.size() * 4);
  auto it = FloatArrayIds.find(bits);
  if (it == FloatArrayIds.end()) {
    it = FloatArrayIds.emplace(bits, int(FloatArrays.size())).first;
    FloatArrays.push_back(fa.values);
  }
  return Prefix + "_fa" + std::to_string(it->second);
}

Result<std::string> Emitter::body() {
  std::string r;
  std::string lastNpuComment;
  // --arena external: an NPU stream's error is recorded with its layer (the
  // index of its comment in the run function) in the context.
  std::string onFail = Ext ? arena::failReturn(Prefix, -1, "") : "return rc;";
  int layer = 0;
  for (size_t i = 0; i < P.body.size(); ++i) {
    const lir::Instr &in = P.body[i];
    if (in.opcode == "alloc" || in.opcode == "free")
      continue; // scratchpad bookkeeping of the schedule: no code
    if (in.opcode == "npu" || in.opcode == "wait") {
      // NPU commands and waits go into the stream tables; one comment per layer.
      if (in.opcode == "npu" && in.comment != lastNpuComment && !in.comment.empty()) {
        r += Npu.flush(onFail);
        r += "  /* " + commentText(in.comment) + " */\n";
        r += "  NPUCC_NPU_LAYER_HOOK(" + std::to_string(NpuHooks++) + ", " + cString(in.comment) +
             ");\n";
        lastNpuComment = in.comment;
        if (Ext)
          onFail = arena::failReturn(Prefix, layer, in.comment);
        ++layer;
      }
      NPUCC_TRY(Npu.add(in, i));
      continue;
    }
    r += Npu.flush(onFail);
    lastNpuComment.clear();
    if (!in.comment.empty()) {
      r += "  /* " + commentText(in.comment) + " */\n";
      ++layer;
    }
    if (in.opcode == "call" || in.opcode == "memcpy" || in.opcode == "memset") {
      std::string what = in.opcode == "call" ? in.callee : in.opcode;
      r += "  NPUCC_LAYER_HOOK(" + std::to_string(LayerHooks++) + ", " +
           (isIdentifier(what) ? cString(what) : std::string("\"?\"")) + ");\n";
    }
    if (in.opcode == "call") {
      if (!isIdentifier(in.callee))
        return instrError(i, in, "callee '" + in.callee + "' is not a C identifier");
      std::string line = "  " + in.callee + "(";
      for (size_t k = 0; k < in.args.size(); ++k) {
        auto t = argText(in.args[k], in, i);
        if (!t)
          return t.error();
        line += (k ? ", " : "") + *t;
      }
      r += line + ");\n";
    } else if (in.opcode == "memcpy" || in.opcode == "memset") {
      bool copy = in.opcode == "memcpy";
      const BufferRef *dst = in.args.size() == 2 ? std::get_if<BufferRef>(&in.args[0]) : nullptr;
      const BufferRef *src = copy && dst ? std::get_if<BufferRef>(&in.args[1]) : nullptr;
      const int64_t *val = !copy && dst ? std::get_if<int64_t>(&in.args[1]) : nullptr;
      if (!dst || (copy && !src) || (!copy && !val))
        return instrError(i, in,
                          copy ? "memcpy needs (dst, src) buffers"
                               : "memset needs (dst buffer, byte value)");
      NPUCC_TRY(checkBuffer(*dst, i));
      BufferRef d = *dst;
      d.dtype = ir::DType::U8;
      if (copy) {
        NPUCC_TRY(checkBuffer(*src, i));
        if (src->size < dst->size)
          return instrError(i, in, "memcpy source is smaller than the destination");
        BufferRef s = *src;
        s.dtype = ir::DType::U8;
        if (dst->size > 0)
          r += "  memcpy(" + pointer(d) + ", " + pointer(s) + ", " + std::to_string(dst->size) +
               ");\n";
      } else if (dst->size > 0) {
        r += "  memset(" + pointer(d) + ", " + std::to_string(*val & 0xff) + ", " +
             std::to_string(dst->size) + ");\n";
      }
    } else {
      return instrError(i, in, "the C emitter does not know opcode '" + in.opcode + "'");
    }
  }
  r += Npu.flush(onFail);
  if (NpuHooks > 0)
    r += "  NPUCC_NPU_LAYER_HOOK(" + std::to_string(NpuHooks) + ", \"end\");\n";
  if (LayerHooks > 0)
    r += "  NPUCC_LAYER_HOOK(" + std::to_string(LayerHooks) + ", \"end\");\n";
  return r;
}

std::string Emitter::source(const std::string &runBody,
                            const std::vector<std::string> &kernelHeaders) {
  std::string s = "/* " + Prefix + ".c - the model " + commentText(cString(P.modelName)) +
                  " as kernel calls, compiled by npucc. Generated file: do not edit. */\n";
  s += "#include <string.h>\n";
  if (NeedsMath)
    s += "#include <math.h>\n";
  s += "\n#include \"" + Prefix + ".h\"\n#include \"" + Prefix + "_weights.h\"\n";
  for (const std::string &h : kernelHeaders)
    s += "#include \"" + h + "\"\n";
  for (const std::string &h : Opts.extraIncludes)
    s += "#include \"" + h + "\"\n";
  if (Npu.used())
    s += "#include \"npucc_stream.h\"\n#include \"npucc_target.h\" /* NPUCC_TARGET: the NPU's "
         "description table */\n";
  s += "\n";
  if (Npu.usesArena())
    ArenaUsed = true;
  std::string tableAttr = Attrs ? "NPUCC_TABLE_ATTR " : "";
  if (Attrs)
    s += arena::tableSectionMacros(Npu.used(), Sections);
  if (P.arenaSize > 0 && ArenaUsed && !Ext) {
    s += Sections.empty() ? "/* Place it with "
                            "-DNPUCC_ARENA_ATTR='__attribute__((section(\".npu_ram\")))' where\n"
                            " * the NPU must reach it. */\n"
                          : "/* In the section the memory map's linker fragment places. */\n";
    s += arena::sectionMacro("NPUCC_ARENA_ATTR", Sections, "arena");
    s += "/* Activations: " + std::to_string(P.arenaSize) + " bytes (lower bound " +
         std::to_string(P.peakLiveBytes) + ", unshared " + std::to_string(P.activationBytes) +
         "). */\n";
    s +=
        "static union {\n  uint8_t bytes[" + std::to_string(P.arenaSize) +
        "];\n  long double align_ld;\n  double align_d;\n  int64_t align_i;\n  void *align_p;\n} " +
        Prefix + "_arena NPUCC_ARENA_ATTR;\n\n";
  }
  for (size_t i = 0; i < IntArrayOrder.size(); ++i) {
    const auto &v = *IntArrayOrder[i];
    s += tableAttr + "static const int32_t " + Prefix + "_ia" + std::to_string(i) + "[" +
         std::to_string(v.size()) + "] = {";
    for (size_t k = 0; k < v.size(); ++k)
      s += (k ? ", " : "") + std::to_string(v[k]);
    s += "};\n";
  }
  for (size_t i = 0; i < FloatArrays.size(); ++i) {
    const auto &v = FloatArrays[i];
    s += tableAttr + "static const float " + Prefix + "_fa" + std::to_string(i) + "[" +
         std::to_string(v.size()) + "] = {";
    for (size_t k = 0; k < v.size(); ++k)
      s += (k ? ", " : "") + floatLiteral(v[k], nullptr);
    s += "};\n";
  }
  if (!IntArrayOrder.empty() || !FloatArrays.empty())
    s += "\n";
  if (Npu.used())
    s += Npu.tables(Attrs ? "NPUCC_STREAM_ATTR " : "");
  s += infoTable(Prefix, "input", P.inputs, tableAttr);
  s += infoTable(Prefix, "output", P.outputs, tableAttr);
  if (LayerHooks > 0)
    s += "/* NPUCC_LAYER_HOOK(index, kernel) runs before each CPU kernel call, memcpy and memset\n"
         " * of " +
         Prefix +
         "_run (index 0, 1, ...; kernel: its name as a string) and once more at\n"
         " * the end (index " +
         std::to_string(LayerHooks) +
         ", \"end\"): define it, e.g. to read a cycle counter per\n"
         " * layer. Empty by default. */\n#ifndef NPUCC_LAYER_HOOK\n"
         "#define NPUCC_LAYER_HOOK(index, kernel) ((void)0)\n#endif\n\n";
  if (NpuHooks > 0)
    s += "/* NPUCC_NPU_LAYER_HOOK(index, layer) runs before the command stream of each NPU layer "
         "(index\n * 0, 1, ... in NPU stream order; layer: its node name and op; a layer whose "
         "commands are\n * split by prefetch gets one per part) and once more after the last "
         "(index " +
         std::to_string(NpuHooks) +
         ", \"end\"):\n * with NPUCC_LAYER_HOOK it splits the run into CPU and NPU intervals "
         "for a profile.\n * Empty by default. */\n#ifndef NPUCC_NPU_LAYER_HOOK\n"
         "#define NPUCC_NPU_LAYER_HOOK(index, layer) ((void)0)\n#endif\n\n";
  if (Ext) {
    s += arena::initSource(P, Prefix, Npu.used());
    s += "int " + Prefix + "_run(" + Prefix +
         "_ctx *ctx, const void *const inputs[], void *const outputs[]) {\n";
    s += arena::runChecks(P, Prefix);
  } else {
    s += "int " + Prefix + "_run(const void *const inputs[], void *const outputs[]) {\n";
  }
  if (Npu.used())
    s += Npu.prologue(Ext ? "ctx->arena" : Prefix + "_arena.bytes", !Ext);
  s += "  (void)inputs;\n  (void)outputs;\n";
  s += runBody;
  s += "  return NPUCC_OK;\n}\n";
  return s;
}

std::string Emitter::weightsHeader() const {
  std::string h = "/* " + Prefix + "_weights.h - constant tensors of the model " +
                  commentText(cString(P.modelName)) + ". Generated file: do not edit. */\n";
  h +=
      "#ifndef " + Upper + "_WEIGHTS_H\n#define " + Upper + "_WEIGHTS_H\n\n#include <stdint.h>\n\n";
  h += "/* Each constant is a union of its exact bit patterns (bits) and its typed\n"
       " * elements (v); the long double member aligns it. */\n";
  for (const lir::ConstBuffer &c : P.constants)
    if (c.align > MinUnionAlign) {
      // The NPU reads this blob at offsets that are multiples of c.align
      // (recorded by the NPU lowering): its first byte must be too.
      h += "\n/* The NPU constants must start at a multiple of " + Upper + "_NPU_CONST_ALIGN bytes\n"
           " * (the NPU reads them at offsets that are multiples of it). A compiler\n"
           " * other than GCC or Clang needs its own NPUCC_ALIGNED(n). */\n"
           "#define " + Upper + "_NPU_CONST_ALIGN " + std::to_string(c.align) +
           "\n#ifndef NPUCC_ALIGNED\n#if defined(__GNUC__)\n"
           "#define NPUCC_ALIGNED(n) __attribute__((aligned(n)))\n#else\n"
           "#error \"define NPUCC_ALIGNED(n): the NPU constants must start at a multiple of n "
           "bytes\"\n#endif\n#endif\n";
      break;
    }
  for (size_t i = 0; i < P.constants.size(); ++i) {
    const ir::Tensor &t = P.constants[i].data;
    std::string n = constName(int(i));
    h += "\n/* @" + P.constants[i].name + ": " + ir::dtypeName(t.dtype()) + "[";
    for (size_t k = 0; k < t.shape().size(); ++k)
      h += (k ? "," : "") + std::to_string(t.shape()[k]);
    h += "], " + std::to_string(t.byteSize()) + " bytes */\n";
    h += unionTypedef(n + "_t", t.dtype(), t.numElements(), P.constants[i].align);
    h += "extern const " + n + "_t " + n + ";\n";
  }
  h += "\n#endif /* " + Upper + "_WEIGHTS_H */\n";
  return h;
}

std::string Emitter::weightsSource() const {
  size_t total = 0;
  for (const auto &c : P.constants)
    total += c.data.byteSize() * 3 + 128;
  std::string s;
  s.reserve(total + 1024);
  s += "/* " + Prefix + "_weights.c - constant tensors of the model " +
       commentText(cString(P.modelName)) + ". Generated file: do not edit. */\n";
  s += "#include \"" + Prefix + "_weights.h\"\n";
  if (Attrs)
    s += (Sections.empty()
              ? "\n/* The constants the CPU reads: place them with\n"
                " * -DNPUCC_CONST_ATTR='__attribute__((section(\".rodata.npucc\")))'. */\n"
              : "\n/* The constants the CPU reads, in the section the memory map's linker "
                "fragment places. */\n") +
         arena::sectionMacro("NPUCC_CONST_ATTR", Sections, "const");
  for (size_t i = 0; i < P.constants.size(); ++i) {
    const ir::Tensor &t = P.constants[i].data;
    std::string n = constName(int(i));
    if (Attrs && !P.constants[i].npu)
      s += "\nNPUCC_CONST_ATTR";
    if (P.constants[i].npu)
      s += (Sections.empty() ? "\n/* Read by the NPU's DMA: place it with "
                               "-DNPUCC_NPU_CONST_ATTR='__attribute__((section("
                               "\".npu_flash\")))' in a window the DMA reaches. */\n"
                             : "\n/* Read by the NPU's DMA, in the section the memory map's "
                               "linker fragment places. */\n") +
           arena::sectionMacro("NPUCC_NPU_CONST_ATTR", Sections, "npu_const") +
           "NPUCC_NPU_CONST_ATTR";
    s += "\nconst " + n + "_t " + n + " = {{\n";
    appendBits(s, t.raw(), ir::dtypeSize(t.dtype()), size_t(t.numElements()));
    s += "}};\n";
  }
  return s;
}

Result<std::vector<EmittedFile>> Emitter::run() {
  if (!isIdentifier(Prefix))
    return error("output prefix '" + Prefix + "' is not a C identifier");
  std::set<std::string> names;
  for (const auto &c : P.constants) {
    if (!isIdentifier(c.name))
      return error("constant name '" + c.name + "' is not a C identifier");
    if (!names.insert(c.name).second)
      return error("constant name '" + c.name + "' is used twice");
  }
  auto runBody = body();
  if (!runBody)
    return runBody.error();

  // Runtime files: the types header, the common kernel header, every kernel
  // file and its header, written flat.
  std::vector<std::pair<std::string, const std::string *>> runtime;
  std::vector<std::string> kernelHeaders;
  auto addRuntime = [&](const std::string &path, bool required) -> Status {
    for (const auto &r : runtime)
      if (r.first == path)
        return success();
    const std::string *c = findRuntimeFile(path);
    if (!c) {
      if (required)
        return error("runtime file '" + path + "' is not embedded in this npucc");
      return success();
    }
    runtime.emplace_back(path, c);
    return success();
  };
  NPUCC_TRY(addRuntime("include/npucc_types.h", true));
  NPUCC_TRY(addRuntime("kernels/npucc_common.h", false));
  if (Npu.used()) {
    NPUCC_TRY(addRuntime("hal/npucc_stream.c", true));
    NPUCC_TRY(addRuntime("hal/npucc_stream.h", true));
  }
  for (const std::string &k : P.kernelFiles) {
    NPUCC_TRY(addRuntime(k, true));
    std::string h = k;
    if (h.size() > 2 && h.compare(h.size() - 2, 2, ".c") == 0) {
      h.back() = 'h';
      NPUCC_TRY(addRuntime(h, false));
    }
    if (findRuntimeFile(h) && h.size() > 2 && h.compare(h.size() - 2, 2, ".h") == 0) {
      std::string b = baseName(h);
      bool seen = false;
      for (const auto &x : kernelHeaders)
        seen = seen || x == b;
      if (!seen)
        kernelHeaders.push_back(b);
    }
  }
  // Close over `#include "x.h"` between runtime files (and the x.c that
  // implements an included x.h), so the copied kernels always build and link.
  for (size_t i = 0; i < runtime.size(); ++i) {
    for (const std::string &inc : quotedIncludes(*runtime[i].second)) {
      if (inc == "npucc_sim.h")
        continue; // the host simulator is not part of a firmware build (npucc check adds it)
      for (const EmbeddedFile &e : embeddedRuntimeFiles()) {
        std::string ep = e.path;
        if (baseName(ep) != inc)
          continue;
        NPUCC_TRY(addRuntime(ep, true));
        if (ep.size() > 2 && ep.compare(ep.size() - 2, 2, ".h") == 0) {
          std::string c = ep;
          c.back() = 'c';
          NPUCC_TRY(addRuntime(c, false));
        }
        break;
      }
    }
  }

  std::vector<EmittedFile> files;
  files.push_back({Prefix + ".h", modelHeader(P, Prefix, Ext)});
  files.push_back({Prefix + ".c", source(*runBody, kernelHeaders)});
  files.push_back({Prefix + "_weights.h", weightsHeader()});
  files.push_back({Prefix + "_weights.c", weightsSource()});
  std::set<std::string> paths;
  for (const auto &f : files)
    paths.insert(f.path);
  for (const auto &[path, contents] : runtime) {
    std::string b = baseName(path);
    if (!paths.insert(b).second)
      return error("two output files would be named '" + b + "' (runtime file '" + path +
                   "'; choose another --prefix)");
    files.push_back({b, *contents});
  }
  return files;
}

} // namespace

Result<std::vector<EmittedFile>> emitC(const Program &p, const EmitOptions &opts,
                                       EmitStats *stats) {
  Emitter e(p, opts);
  auto r = e.run();
  if (r && stats) {
    stats->npuCommands = e.npuCommands();
    stats->npuStreamBytes = e.npuStreamBytes();
    stats->tableBytes = e.tableBytes();
  }
  return r;
}

} // namespace npucc::codegen
