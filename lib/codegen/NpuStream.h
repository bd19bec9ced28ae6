//===- NpuStream.h - NPU commands and waits as C tables (internal) --------===//
//
// The C emitter's half for NPU programs: consecutive `npu` / `wait`
// instructions become one call of npucc_stream_run() over two const tables
// (runtime/hal/npucc_stream.h): an op per command or wait (a wait op holds
// the bits of every engine its tokens ran on), and per command
// only the semantic parameters that change from the previous command of the
// same engine. Addresses are offsets from base addresses that the run
// function takes from npucc_hal_device_addr() (arena, NPU constants, inputs,
// outputs) or from the description (scratchpads).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/lir/Program.h"
#include "npucc/support/Result.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace npucc::codegen {

class NpuStream {
public:
  NpuStream(const lir::Program &p, const std::string &prefix);

  /// Adds an `npu` or `wait` instruction (number `index`, for messages).
  Status add(const lir::Instr &in, size_t index);
  /// The statements that run the instructions added since the last flush;
  /// `onError` is the statement run when the stream returns an error (rc).
  std::string flush(const std::string &onError = "return rc;");

  bool used() const { return !Ops.empty(); }
  bool usesArena() const { return UsesArena; }
  /// The tables (file scope; `attr` before each, e.g. a section macro) and the
  /// run function's prologue (`halInit`: it initialises the HAL, else an init
  /// function did).
  std::string tables(const std::string &attr = "") const;
  std::string prologue(const std::string &arenaExpr, bool halInit = true) const;
  /// Flash of the tables in bytes (8 per op, 8 per parameter entry).
  uint64_t flashBytes() const { return 8 * (Ops.size() + Params.size()); }
  uint64_t commands() const { return Commands; }

private:
  struct Op {
    std::string kind; // C expression
    std::string arg;
    uint32_t first = 0;
  };
  struct Param {
    std::string param; // NPUCC_P_... name
    int base = 0;
    int64_t value = 0;
  };
  Result<std::pair<int, int64_t>> value(const lir::Arg &a, const lir::Instr &in, size_t index);
  int baseOf(const lir::BufferRef &b);

  const lir::Program &P;
  std::string Prefix;
  std::vector<Op> Ops;
  std::vector<Param> Params;
  size_t SegmentStart = 0;
  std::vector<int64_t> State[2]; // per engine: what the runtime holds
  std::map<int, int> EngineOf;   // token -> engine
  int NumBases = 0;
  bool UsesArena = false;
  int BlobIndex = -1;
  uint64_t Commands = 0;
};

} // namespace npucc::codegen
