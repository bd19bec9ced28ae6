//===- ModelHeader.cpp - <prefix>.h: the generated program's API ----------===//
//
// The model's header: sizes of inputs, outputs, arena and weights, the int8
// I/O scales, the tensor tables and <prefix>_run (with --arena external the
// context API of ArenaApi.h). Split from CEmitter.cpp.
//
//===----------------------------------------------------------------------===//
#include "ModelHeader.h"

#include "ArenaApi.h"
#include "CText.h"

namespace npucc::codegen {

using namespace ctext;

namespace {

std::string ioComment(const char *what, size_t i, const lir::IOBuffer &b) {
  std::string s = " * " + std::string(what) + " " + std::to_string(i) + " " +
                  commentText(cString(b.name)) + ": " + ir::dtypeName(b.dtype) + "[";
  for (size_t k = 0; k < b.shape.size(); ++k)
    s += (k ? "," : "") + std::to_string(b.shape[k]);
  return s + "]\n";
}

} // namespace

std::string modelHeader(const lir::Program &P, const std::string &Prefix, bool Ext) {
  const std::string Upper = upper(Prefix);
  int64_t weightBytes = 0;
  for (const auto &c : P.constants)
    weightBytes += int64_t(c.data.byteSize());
  std::string h = "/* " + Prefix + ".h - API of the model " + commentText(cString(P.modelName)) +
                  ", compiled by npucc. Generated file: do not edit. */\n";
  h += "#ifndef " + Upper + "_H\n#define " + Upper + "_H\n\n#include \"npucc_types.h\"\n\n";
  h += "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  h += "#define " + Upper + "_NUM_INPUTS " + std::to_string(P.inputs.size()) + "\n";
  h += "#define " + Upper + "_NUM_OUTPUTS " + std::to_string(P.outputs.size()) + "\n";
  for (size_t i = 0; i < P.inputs.size(); ++i)
    h += "#define " + Upper + "_INPUT" + std::to_string(i) + "_BYTES " +
         std::to_string(ir::Tensor::byteSizeOf(P.inputs[i].dtype, P.inputs[i].shape)) + "\n";
  for (size_t i = 0; i < P.outputs.size(); ++i)
    h += "#define " + Upper + "_OUTPUT" + std::to_string(i) + "_BYTES " +
         std::to_string(ir::Tensor::byteSizeOf(P.outputs[i].dtype, P.outputs[i].shape)) + "\n";
  // --io int8: real = SCALE * (q - ZERO_POINT) of each int8 input and output.
  for (const auto &[what, bufs] :
       {std::pair<const char *, const std::vector<lir::IOBuffer> *>{"_INPUT", &P.inputs},
        {"_OUTPUT", &P.outputs}})
    for (size_t i = 0; i < bufs->size(); ++i)
      if (const auto &q = (*bufs)[i].quant) {
        std::string m = Upper + what + std::to_string(i);
        h += "#define " + m + "_SCALE " + floatLiteral(q->first, nullptr) +
             " /* real = scale * (q - zero point) */\n#define " + m + "_ZERO_POINT (" +
             std::to_string(q->second) + ")\n";
      }
  h += "#define " + Upper + "_ARENA_BYTES " + std::to_string(P.arenaSize) + "\n";
  h += "#define " + Upper + "_WEIGHT_BYTES " + std::to_string(weightBytes) + "\n\n";
  if (Ext)
    h += arena::apiHeader(P, Prefix);
  h += "/* Names, element types and shapes of the model inputs and outputs. */\n";
  h += "extern const npucc_tensor_info " + Prefix + "_inputs[];\n";
  h += "extern const npucc_tensor_info " + Prefix + "_outputs[];\n\n";
  h += "/*\n * Runs the model once.\n";
  for (size_t i = 0; i < P.inputs.size(); ++i)
    h += ioComment("input", i, P.inputs[i]);
  for (size_t i = 0; i < P.outputs.size(); ++i)
    h += ioComment("output", i, P.outputs[i]);
  h += " * inputs[i] points to " + Upper + "_INPUT<i>_BYTES bytes (read only), outputs[i] to\n";
  h += " * " + Upper + "_OUTPUT<i>_BYTES bytes that receive the result; element data is\n";
  h += " * densely packed in row-major order. Buffers should be aligned for their element\n";
  if (Ext) {
    h += " * type. ctx is a context " + Prefix +
         "_init prepared; the run uses its arena. "
         "Returns\n * NPUCC_OK (0), or a negative code (above): " +
         Prefix + "_last_error tells which layer\n * failed.\n */\n";
    h += "int " + Prefix + "_run(" + Prefix +
         "_ctx *ctx, const void *const inputs[], void *const outputs[]);\n\n";
    h += "/* The last error of " + Prefix + "_init / " + Prefix +
         "_run on ctx (NPUCC_OK if none); *layer and\n"
         " * *layer_name (either may be null) receive the failing layer's index in the run\n"
         " * function and its node name and op, or -1 and \"\" when no layer failed (a bad\n"
         " * argument, arena or context). An NPU layer's error leaves where its command\n"
         " * stream stopped to npucc_stream_last_fault() (npucc_stream.h). */\n";
    h += "int " + Prefix + "_last_error(const " + Prefix +
         "_ctx *ctx, int32_t *layer, const char **layer_name);\n\n";
  } else {
    h += " * type. The function uses a static arena of " + Upper + "_ARENA_BYTES bytes, so it is\n";
    h += " * not reentrant. Returns NPUCC_OK (0) on success.\n */\n";
    h += "int " + Prefix + "_run(const void *const inputs[], void *const outputs[]);\n\n";
  }
  h += "/* Firmware builds: compile the .c files of this folder with -ffunction-sections\n"
       " * -fdata-sections and link with -Wl,--gc-sections, so that the kernel functions and\n"
       " * tables this model does not call are left out of flash. */\n\n";
  h += "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " + Upper + "_H */\n";
  return h;
}

} // namespace npucc::codegen
