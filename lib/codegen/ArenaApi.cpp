//===- ArenaApi.cpp - The caller-owned arena API --------------------------===//
//
// `--arena external`: <prefix>_init(ctx, arena, bytes) checks the caller's
// arena (size <PREFIX>_ARENA_BYTES, alignment <PREFIX>_ARENA_ALIGN) and
// initialises the NPU's HAL once; <prefix>_run(ctx, inputs, outputs) returns
// a distinct negative code per failure and records the failing layer (index
// and name) in the context, read back with <prefix>_last_error.
//
//===----------------------------------------------------------------------===//
#include "ArenaApi.h"

#include "CText.h"

namespace npucc::codegen::arena {

using namespace ctext;

namespace {

std::string ioBytes(const lir::IOBuffer &b) {
  return std::to_string(ir::Tensor::byteSizeOf(b.dtype, b.shape));
}

} // namespace

std::string apiHeader(const lir::Program &p, const std::string &pre) {
  std::string P = upper(pre);
  std::string h;
  h += "/* The caller's arena: at least " + P + "_ARENA_BYTES bytes, aligned to " + P +
       "_ARENA_ALIGN bytes\n * (a power of two; the NPU's DMA alignment where it has one). */\n";
  h += "#define " + P + "_ARENA_ALIGN " + std::to_string(p.arenaAlign) + "\n\n";
  h += "/* Error codes of " + pre + "_init and " + pre +
       "_run (NPUCC_OK is 0). A program that "
       "drives\n * an NPU also returns the NPU runtime's codes -1 to -6 (NPUCC_ERR_* in "
       "npucc_hal.h: a\n * command the NPU cannot take, a wait that timed out, a device error). "
       "*/\n";
  h += "#define " + P + "_ERR_ARGUMENT (-16)    /* a null context, arena, input or output */\n";
  h += "#define " + P + "_ERR_ARENA_SIZE (-17)  /* the arena is smaller than " + P +
       "_ARENA_BYTES */\n";
  h += "#define " + P + "_ERR_ARENA_ALIGN (-18) /* the arena is not aligned to " + P +
       "_ARENA_ALIGN */\n";
  h += "#define " + P + "_ERR_NOT_READY (-19)   /* " + pre + "_run before a successful " + pre +
       "_init */\n\n";
  h += "/* One instance of the model: the caller owns it (and the arena) and passes it to\n"
       " * every call; the fields are for " +
       pre +
       "_last_error. Instances with separate arenas are\n * independent, but the NPU "
       "runtime is shared: run one model at a time. */\n";
  h += "typedef struct {\n  uint8_t *arena;         /* the caller's arena */\n"
       "  uint32_t ready;         /* set by a successful " +
       pre +
       "_init */\n"
       "  int32_t error;          /* the last error code, NPUCC_OK if none */\n"
       "  int32_t layer;          /* the layer that failed (0, 1, ... in the run function), or "
       "-1 */\n"
       "  const char *layer_name; /* its node name and op, or \"\" */\n} " +
       pre + "_ctx;\n\n";
  h += "/* Prepares ctx for " + pre + "_run with the caller's arena of arena_bytes bytes" +
       std::string(p.usesNpu() ? " and\n * initialises the NPU's HAL (once: not on every run)"
                               : "") +
       ". Returns NPUCC_OK or " + P + "_ERR_*. */\n";
  h += "int " + pre + "_init(" + pre + "_ctx *ctx, void *arena, size_t arena_bytes);\n\n";
  return h;
}

std::string sectionMacro(const std::string &name, const std::string &sections,
                         const std::string &cls) {
  return "#ifndef " + name + "\n#define " + name +
         (sections.empty() ? std::string()
                           : " __attribute__((section(\"" + sections + "." + cls + "\")))") +
         "\n#endif\n";
}

std::string tableSectionMacros(bool stream, const std::string &sections) {
  std::string s =
      sections.empty()
          ? "/* Section macros of the constant tables (empty unless defined), e.g.\n"
            " * -DNPUCC_TABLE_ATTR='__attribute__((section(\".rodata.npucc\")))': kernel "
            "parameter and\n * requantization tables and the tensor tables" +
                std::string(stream ? "; NPUCC_STREAM_ATTR: the NPU command stream" : "") +
                ". */\n"
          : "/* Section macros of the constant tables: the sections the memory map's linker\n"
            " * fragment places (<prefix>_sections.ld); kernel parameter and requantization\n"
            " * tables and the tensor tables" +
                std::string(stream ? "; NPUCC_STREAM_ATTR: the NPU command stream" : "") +
                ". */\n";
  s += sectionMacro("NPUCC_TABLE_ATTR", sections, "table");
  if (stream)
    s += sectionMacro("NPUCC_STREAM_ATTR", sections, "stream");
  return s + "\n";
}

std::string initSource(const lir::Program &p, const std::string &pre, bool npu) {
  std::string P = upper(pre);
  std::string s =
      "/* Marks a context " + pre + "_init prepared. */\n#define " + P + "_READY 0x6e707563u\n\n";
  s += "static int " + pre + "_fail(" + pre +
       "_ctx *ctx, int rc, int32_t layer, const char *name) {\n"
       "  ctx->error = rc;\n  ctx->layer = layer;\n  ctx->layer_name = name;\n  return rc;\n}\n\n";
  s += "int " + pre + "_init(" + pre + "_ctx *ctx, void *arena, size_t arena_bytes) {\n";
  s += "  if (ctx == 0)\n    return " + P + "_ERR_ARGUMENT;\n";
  s += "  ctx->arena = (uint8_t *)arena;\n  ctx->ready = 0;\n";
  s += "  ctx->error = NPUCC_OK;\n  ctx->layer = -1;\n  ctx->layer_name = \"\";\n";
  if (p.arenaSize > 0) {
    s += "  if (arena == 0)\n    return " + pre + "_fail(ctx, " + P + "_ERR_ARGUMENT, -1, \"\");\n";
    s += "  if (arena_bytes < " + P + "_ARENA_BYTES)\n    return " + pre + "_fail(ctx, " + P +
         "_ERR_ARENA_SIZE, -1, \"\");\n";
    s += "  if (((uintptr_t)arena & (" + P + "_ARENA_ALIGN - 1u)) != 0)\n    return " + pre +
         "_fail(ctx, " + P + "_ERR_ARENA_ALIGN, -1, \"\");\n";
  } else {
    s += "  (void)arena_bytes; /* the model needs no arena */\n";
  }
  if (npu)
    s += "  npucc_hal_init(NPUCC_TARGET);\n";
  s += "  ctx->ready = " + P + "_READY;\n  return NPUCC_OK;\n}\n\n";
  s += "int " + pre + "_last_error(const " + pre +
       "_ctx *ctx, int32_t *layer, const char **layer_name) {\n"
       "  if (ctx == 0)\n    return " +
       P +
       "_ERR_ARGUMENT;\n"
       "  if (layer != 0)\n    *layer = ctx->layer;\n"
       "  if (layer_name != 0)\n    *layer_name = ctx->layer_name;\n"
       "  return ctx->error;\n}\n\n";
  return s;
}

std::string runChecks(const lir::Program &p, const std::string &pre) {
  std::string P = upper(pre);
  std::string s = "  if (ctx == 0)\n    return " + P + "_ERR_ARGUMENT;\n";
  s += "  if (ctx->ready != " + P + "_READY)\n    return " + pre + "_fail(ctx, " + P +
       "_ERR_NOT_READY, -1, \"\");\n";
  std::string cond;
  if (!p.inputs.empty())
    cond += "inputs == 0";
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (ioBytes(p.inputs[i]) != "0")
      cond += " || inputs[" + std::to_string(i) + "] == 0";
  if (!p.outputs.empty())
    cond += std::string(cond.empty() ? "" : " || ") + "outputs == 0";
  for (size_t i = 0; i < p.outputs.size(); ++i)
    if (ioBytes(p.outputs[i]) != "0")
      cond += " || outputs[" + std::to_string(i) + "] == 0";
  if (!cond.empty())
    s += "  if (" + cond + ")\n    return " + pre + "_fail(ctx, " + P +
         "_ERR_ARGUMENT, -1, \"\");\n";
  s += "  ctx->error = NPUCC_OK;\n  ctx->layer = -1;\n  ctx->layer_name = \"\";\n";
  return s;
}

std::string failReturn(const std::string &pre, int index, const std::string &name) {
  return "return " + pre + "_fail(ctx, rc, " + std::to_string(index) + ", " + cString(name) + ");";
}

} // namespace npucc::codegen::arena
