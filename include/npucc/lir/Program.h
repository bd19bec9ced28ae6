//===- Program.h - npucc's loop IR: buffers and a list of instructions ----===//
//
// The lowering decides, the loop IR records, the emitter only prints.
// A Program is what the C emitter needs: constant buffers (weights), the model
// inputs/outputs, one activation arena of a fixed size, and an ordered list of
// instructions. For the CPU path an instruction is a kernel call:
//
//   call npucc_conv2d_f32(%in0[0:3072], @w0, @b0, %arena[0:16384], 1, 3, ...)
//
// Buffer operands name a region (arena, const, input, output) with a byte
// offset and size. Later targets add DMA, NPU and wait instructions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/DType.h"
#include "npucc/ir/Tensor.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace npucc::lir {

enum class Region { Arena, Const, Input, Output };

struct BufferRef {
  Region region = Region::Arena;
  int index = 0;      // constant / input / output index (unused for Arena)
  int64_t offset = 0; // bytes from the region's start
  int64_t size = 0;   // bytes
  ir::DType dtype = ir::DType::F32;
};

struct IntArray {
  std::vector<int64_t> values;
};
struct FloatArray {
  std::vector<float> values;
};

/// One operand: a buffer, an integer, a float, or a constant array.
using Arg = std::variant<BufferRef, int64_t, float, IntArray, FloatArray>;

struct Instr {
  std::string opcode;  // "call" for CPU kernels; "memcpy" for copies
  std::string callee;  // kernel function name, e.g. "npucc_conv2d_f32"
  std::vector<Arg> args;
  std::string comment; // node name and op, printed as a C comment
};

struct ConstBuffer {
  std::string name; // C identifier-safe name derived from the value name
  ir::Tensor data;
};

struct IOBuffer {
  std::string name; // original model name
  ir::DType dtype = ir::DType::F32;
  ir::Shape shape;
};

struct Program {
  std::string modelName;
  std::vector<ConstBuffer> constants;
  std::vector<IOBuffer> inputs, outputs;
  int64_t arenaSize = 0;   // bytes
  int64_t arenaAlign = 16; // bytes
  std::vector<Instr> body;
  std::vector<std::string> kernelFiles; // runtime files used, e.g. "kernels/conv_f32.c"
};

void printProgram(std::ostream &os, const Program &p);
std::string printProgram(const Program &p);

} // namespace npucc::lir
