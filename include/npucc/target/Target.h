//===- Target.h - An NPU described as data (JSON target description) ------===//
//
// A TargetDesc is everything the compiler, the runtime command layer and the
// simulator know about one NPU: memories, DMA, compute limits, the register
// map with its bit fields, how each command kind is programmed (which field
// holds which semantic parameter, the doorbell, the status bits) and the
// timing model. It is loaded from a JSON file or a built-in description
// (runtime/targets/<name>.json embedded into npucc). See docs/target.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/support/Result.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace npucc::target {

struct Scratchpad {
  std::string name;
  uint32_t base = 0;
  uint32_t size = 0;
  unsigned banks = 1;
  unsigned alignment = 1;
};

struct SystemRange {
  std::string name;
  uint32_t base = 0;
  uint32_t size = 0;
  bool writable = true; // "access": "rw" or "ro"
};

struct DmaDesc {
  unsigned channels = 1;
  unsigned dims = 1; // 1, 2 or 3
  unsigned bytesPerCycle = 1;
  unsigned setupCycles = 0;
  unsigned alignment = 1;
  unsigned maxBurst = 0; // bytes, 0 = unlimited
  bool zeroFill = false;
};

/// Limits of one compute operation ("conv", "depthwise", "matmul", "pool", "eltwise").
struct OpLimits {
  std::vector<int> kernelSizes; // allowed k_h / k_w values
  std::vector<int> strides;
  std::vector<int> dilations;
  int maxPadding = 0;
  int channelMultiple = 1;        // channel counts must be a multiple of this
  int maxChannels = 0;            // 0 = unlimited
  std::vector<std::string> kinds; // pool: "max"/"avg"; eltwise: "add"

  bool allowsKernel(int k) const;
  bool allowsStride(int s) const;
  bool allowsDilation(int d) const;
  bool allowsPadding(int p) const { return p >= 0 && p <= maxPadding; }
  /// Channel count within max_channels and a multiple of channel_multiple.
  bool allowsChannels(int c) const;
  bool allowsKind(const std::string &k) const;
};

struct ComputeDesc {
  unsigned macRows = 1, macCols = 1;
  unsigned accumulatorBits = 32;
  std::vector<std::string> dtypes;
  std::map<std::string, OpLimits> operations;
  std::vector<std::string> fusedActivations; // "clamp"
  bool perChannelRequant = false;
  bool perTensorRequant = false;
};

struct Field {
  std::string name;
  unsigned lsb = 0, width = 0;
  std::string doc;
};

struct Register {
  std::string name;
  uint32_t offset = 0;
  unsigned width = 32;
  std::vector<Field> fields;
  std::string doc;
};

/// A run of bits: a named field of a register, or the whole register (field < 0).
struct FieldRef {
  int reg = -1;
  int field = -1;
  unsigned lsb = 0, width = 0;
  std::string text; // "REG.field" as written in the JSON
  bool valid() const { return reg >= 0; }
};

/// Field <- (param - minus) >> shift.
struct ParamBinding {
  std::string param;
  int paramId = -1;
  FieldRef field;
  unsigned shift = 0;
  int64_t minus = 0;
};

struct FixedParam {
  std::string param;
  int paramId = -1;
  int64_t value = 0;
};

struct FieldValue {
  FieldRef field;
  uint32_t value = 0;
};

enum class Engine { Dma = 0, Compute = 1, Fence = 2 };

struct CommandDesc {
  std::string kind; // dma, conv, depthwise, matmul, pool, eltwise, fence
  int kindId = -1;
  Engine engine = Engine::Compute;
  std::string doc;
  std::vector<ParamBinding> params;
  std::vector<FixedParam> fixed;
  std::vector<FieldValue> select;
  FieldValue doorbell;

  const ParamBinding *binding(const std::string &param) const;
};

struct EngineStatus {
  FieldRef busy, done, error;
};

struct TimingDesc {
  uint64_t clockHz = 100000000;
  unsigned commandOverheadCycles = 0;
  unsigned vectorElementsPerCycle = 1; // pool / eltwise throughput
  unsigned regAccessCycles = 1;        // CPU cycles per register access
  unsigned pollCycles = 1;             // CPU cycles per status poll
};

struct TargetDesc {
  std::string name;
  std::string description;
  std::string file; // where it was loaded from (for diagnostics)
  uint32_t baseAddress = 0;
  std::vector<Scratchpad> scratchpads;
  std::vector<SystemRange> system;
  DmaDesc dma;
  ComputeDesc compute;
  std::vector<Register> registers;
  std::vector<CommandDesc> commands;
  int statusRegister = -1;
  EngineStatus engines[3]; // indexed by Engine: dma, compute, fence
  bool concurrentDmaCompute = false;
  std::string completion = "poll"; // "poll" or "fence"
  TimingDesc timing;

  const CommandDesc *command(const std::string &kind) const;
  const OpLimits *operation(const std::string &op) const;
  bool supports(const std::string &op) const { return operation(op) != nullptr; }
};

/// Parses and validates a description. `name` is used in diagnostics ("my_npu.json").
Result<TargetDesc> parseTargetJson(const std::string &text, const std::string &name);
/// Loads a built-in target by name ("npu-default") or a JSON file by path.
Result<TargetDesc> loadTarget(const std::string &pathOrBuiltinName);
/// Names of the built-in targets (runtime/targets/*.json embedded into npucc), sorted.
std::vector<std::string> builtinTargets();

/// The semantic parameter names (runtime/hal/npucc_params.h), in enum order.
const std::vector<std::string> &paramNames();
/// Index of a parameter name, or -1.
int paramId(const std::string &name);
/// Index of a command kind name ("dma" = 0 ... "fence"), or -1.
int commandKindId(const std::string &kind);
const std::vector<std::string> &commandKindNames();

} // namespace npucc::target
