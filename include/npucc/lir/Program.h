//===- Program.h - npucc's loop IR: buffers and a list of instructions ----===//
//
// The lowering decides, the loop IR records, the emitter only prints.
// A Program is what the C emitter needs: constant buffers (weights), the model
// inputs/outputs, one activation arena of a fixed size, and an ordered list of
// instructions. For the CPU path an instruction is a kernel call:
//
//   call npucc_conv2d_f32(%in0[0:3072], @w0, @b0, %arena[0:16384], 1, 3, ...)
//
// Buffer operands name a region (arena, const, input, output, or a scratchpad
// of the NPU) with a byte offset and size. On an NPU target the body also
// holds the scratchpad buffers of each layer (alloc / free), NPU commands
// with their semantic parameters, each producing a completion token, and
// waits on tokens:
//
//   alloc w(%spm0[0:1216])  // conv0
//   npu dma #4 (src_addr=@npu_const[0:1216], dst_addr=%spm0[0:1216], length=1216)  // conv0
//   wait #4
//   npu conv #5 (in_addr=%spm0[4096:3072], w_addr=%spm0[0:1152], ..., in_h=8, ...)
//   free w(%spm0[0:1216])  // conv0
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/DType.h"
#include "npucc/ir/Tensor.h"
#include "npucc/support/Result.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace npucc::lir {

enum class Region { Arena, Const, Input, Output, Spm };

struct BufferRef {
  Region region = Region::Arena;
  int index = 0;      // constant / input / output / scratchpad index (unused for Arena)
  int64_t offset = 0; // bytes from the region's start
  int64_t size = 0;   // bytes
  ir::DType dtype = ir::DType::F32;

  /// An absent optional operand (printed `null`, emitted as a null pointer):
  /// a non-arena region with a negative index.
  static BufferRef null(ir::DType t = ir::DType::F32) {
    return BufferRef{Region::Const, -1, 0, 0, t};
  }
  bool isNull() const { return region != Region::Arena && index < 0; }
};

struct IntArray {
  std::vector<int64_t> values;
};
struct FloatArray {
  std::vector<float> values;
};

/// One operand: a buffer, an integer, a float, or a constant array.
using Arg = std::variant<BufferRef, int64_t, float, IntArray, FloatArray>;

/// Opcodes: "call" (callee(args...)), "memcpy" (args: dst, src buffers; copies
/// dst.size bytes), "memset" (args: dst buffer, int64 byte value), "npu" (an
/// NPU command: callee is its kind, "dma", "conv", ...; params are its
/// semantic parameters, a BufferRef where the value is an address; it
/// produces `token`), "wait" (the CPU waits until the commands of `tokens`
/// have completed: each token's engine is idle, every engine under fence
/// completion) and "alloc" / "free" (callee: the buffer's role "in", "in2",
/// "w" or "out"; args: one scratchpad BufferRef; the buffer is reserved
/// from alloc to free; no code, no memory access; checked by verify-spm).
struct Instr {
  std::string opcode;  // "call" for CPU kernels; "memcpy" for copies
  std::string callee;  // kernel function name, e.g. "npucc_conv2d_f32"
  std::vector<Arg> args;
  std::string comment; // node name and op, printed as a C comment
  std::vector<std::pair<std::string, Arg>> params; // "npu" only
  int token = -1;                                  // "npu" only
  std::vector<int> tokens;                         // "wait" only
};

/// A scratchpad of the target (Region::Spm index), for printing and emission.
struct SpmInfo {
  std::string name;
  uint64_t base = 0, size = 0;
};

struct ConstBuffer {
  std::string name; // C identifier-safe name derived from the value name
  ir::Tensor data;
  bool npu = false; // the NPU constant blob (weight records the DMA reads)
  /// The alignment its first byte needs (the NPU's DMA alignment, operands the
  /// NPU reads from system memory); 0: none beyond its C type's.
  uint64_t align = 0;
};

struct IOBuffer {
  std::string name; // original model name
  ir::DType dtype = ir::DType::F32;
  ir::Shape shape;
  /// An int8 input or output of a quantized graph (--io int8): its per-tensor
  /// scale and zero point (printed `q(scale, zp)`; the header's macros).
  std::optional<std::pair<float, int32_t>> quant;

  IOBuffer() = default;
  IOBuffer(std::string n, ir::DType t, ir::Shape s,
           std::optional<std::pair<float, int32_t>> q = std::nullopt)
      : name(std::move(n)), dtype(t), shape(std::move(s)), quant(q) {}
};

struct Program {
  std::string modelName;
  std::vector<ConstBuffer> constants;
  std::vector<IOBuffer> inputs, outputs;
  int64_t arenaSize = 0;   // bytes
  int64_t arenaAlign = 16; // bytes
  int64_t peakLiveBytes = 0;   // lower bound on arenaSize: most bytes live at once
  int64_t activationBytes = 0; // sum of the (aligned) sizes of all arena buffers
  std::vector<Instr> body;
  std::vector<std::string> kernelFiles; // runtime files used, e.g. "kernels/conv_f32.c"
  std::string target;                   // NPU description name when the body has NPU commands
  std::vector<SpmInfo> scratchpads;     // of that NPU (referenced as %spm<i>)
  int64_t spmPeak = 0;                  // most scratchpad bytes in use at once

  bool usesNpu() const {
    for (const Instr &in : body)
      if (in.opcode == "npu")
        return true;
    return false;
  }
};

/// Deterministic text form, one item per line:
///   program "name"
///   arena 16384 align 16
///   stats peak 12288 activations 28672
///   const @w0: f32[16,3,3,3] 1728 bytes
///   const @npu_const: u8[7104] 7104 bytes npu align 64   (the NPU's blob, its alignment)
///   input %in0 "x": f32[1,3,32,32]
///   output %out0 "y": f32[1,10]
///   kernel "kernels/npucc_conv.c"
///   call npucc_conv2d_f32(%in0[0:12288], @w0, %arena[0:65536], 1, 0.5, i[1,2], f[1.0])  // conv0 (Conv)
///   memcpy(%out0[0:40], %arena[0:40]:i64)
///   target "npu-default"
///   scratchpad %spm0 "spm" base 0x0 size 262144
///   spm peak 40960
///   npu conv #5 (in_addr=%spm0[4096:3072], k_h=3, ...)  // conv0 (Conv)
///   wait #4 #5
/// Buffer operands are %arena / %in<i> / %out<i> / @<const> with [offset:size]
/// in bytes; `:dtype` follows when it differs from the region's own dtype
/// (f32 for the arena; i8 for scratchpads). A whole constant prints as just `@name`. Floats always
/// carry a '.', an exponent, inf or nan; `i[...]`/`f[...]` are int/float arrays;
/// `null` is an absent buffer operand (BufferRef::null()).
void printProgram(std::ostream &os, const Program &p);
std::string printProgram(const Program &p);
/// One body instruction as printProgram prints it (no newline).
std::string printInstr(const Program &p, const Instr &in);
/// A buffer operand as printProgram prints it (`%spm0[64:128]`, `@w0`).
std::string printBuffer(const Program &p, const BufferRef &b);

/// Parses printProgram's text. Constant data is not in the text: constants
/// come back zero-filled with the printed dtype and shape.
Result<Program> parseProgram(const std::string &text, const std::string &bufferName = "<lir>");

} // namespace npucc::lir
