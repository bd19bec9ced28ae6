//===- Target.h - An NPU described as data (JSON target description) ------===//
//
// A TargetDesc is everything the compiler, the runtime command layer and the
// simulator know about one NPU: memories (windows, banks, alignment, speed),
// DMA, compute operations with their limits and timing, the register map with
// its bit fields, how each command kind is programmed (which fields hold which
// semantic parameter, how it is started, the status bits that report its
// completion and errors) and the timing model. It is loaded from a JSON file
// or a built-in description (runtime/targets/<name>.json embedded into npucc).
// See docs/target.md for every field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/support/Result.h"
#include "npucc/target/Expr.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace npucc::target {

/// Scratchpad operands of the compute commands (NPUCC_OPND_* order).
/// Act (appended, so Out keeps its value): the 256-byte table of the lut256
/// activation stage.
enum class Operand { In = 0, In2, W, Bias, Rq, Out, Act };
constexpr int NumOperands = 7;
const std::vector<std::string> &operandNames(); // "in", "in2", "w", "bias", "rq", "out", "act"

struct Scratchpad {
  std::string name;
  uint64_t base = 0;
  uint64_t size = 0;
  unsigned banks = 1;
  uint64_t bankSize = 0; // banks * bankSize == size
  unsigned alignment = 1;
  std::array<unsigned, NumOperands> operandAlignment{}; // per operand; overrides alignment
  /// Operand pairs a command must place in different banks.
  std::vector<std::pair<Operand, Operand>> separateBanks;
  bool conflictIsError = true; // else compute cycles x conflictSlowdown
  unsigned conflictSlowdown = 1;

  unsigned alignmentOf(Operand o) const { return operandAlignment[size_t(o)]; }
  /// Bank index of a byte address inside this scratchpad.
  uint64_t bankOf(uint64_t addr) const { return (addr - base) / bankSize; }
};

struct SystemRange {
  std::string name;
  uint64_t base = 0;
  uint64_t size = 0;
  bool writable = true;            // "access": "rw" or "ro"
  unsigned readBytesPerCycle = 0;  // 0 = as fast as the DMA
  unsigned writeBytesPerCycle = 0; // 0 = as fast as the DMA
  unsigned latencyCycles = 0;      // per DMA command that touches the window
};

struct DmaDesc {
  unsigned channels = 1;
  unsigned dims = 1; // 1, 2 or 3
  unsigned bytesPerCycle = 1;
  unsigned readBytesPerCycle = 1;  // default bytesPerCycle
  unsigned writeBytesPerCycle = 1; // default bytesPerCycle
  unsigned setupCycles = 0;
  unsigned alignment = 1;
  unsigned maxBurst = 0; // bytes, 0 = unlimited
  bool zeroFill = false;
  /// "length_unit": every DMA length is a multiple of it (1: any length).
  /// The loader accepts a unit > 1 only when the compiler can honour it
  /// (lib/target/TargetParseLayout.cpp); lib/lower/npu/Proof.cpp proves it.
  unsigned lengthUnit = 1;
  /// Effective limits: the description's explicit numbers, else what the
  /// command's fields can hold (TargetDesc::paramRange).
  uint64_t maxLength = 0, maxRows = 1, maxPlanes = 1, maxStride = 0, maxPlaneStride = 0;
};

/// Per-operation timing: steps * cyclesPerStep + fillCycles + overheadCycles
/// (+ TimingDesc::commandOverheadCycles). runtime/hal/npucc_timing.h.
struct OpTiming {
  unsigned cyclesPerStep = 1; // 2 = a half-rate MAC array
  unsigned fillCycles = 0;    // pipeline fill latency per command
  unsigned overheadCycles = 0;
  /// "steps" / "macs": expressions over the command's parameters replacing
  /// npucc_timing.h's formula (the cycle model as data); empty: the formula.
  std::optional<Expr> steps, macs;
};

/// Limits of one compute operation ("conv", "depthwise", "matmul", "pool", "eltwise").
/// Slots of the arithmetic pipeline (NPUCC_SLOT_COUNT, npucc_params.h).
inline constexpr size_t NumStageSlots = 7;

struct OpLimits {
  std::vector<int> kernelHeights, kernelWidths; // allowed k_h / k_w values
  /// The JSON keys they came from ("kernel_sizes" when given as one list),
  /// for messages that name the description's own words.
  std::string kernelHeightsKey = "kernel_heights", kernelWidthsKey = "kernel_widths";
  std::vector<int> strides;
  std::vector<int> dilations;
  std::vector<int> depthMultipliers = {1}; // depthwise channel multipliers
  /// Maximum padding per side: top, bottom, left, right.
  std::array<unsigned, 4> maxPad{};
  unsigned inChannelMultiple = 1, outChannelMultiple = 1;
  unsigned maxInChannels = 0, maxOutChannels = 0; // 0 = unlimited
  unsigned maxInH = 0, maxInW = 0, maxOutH = 0, maxOutW = 0;
  /// Geometry (lib/target/TargetParseLayout.cpp): "min_in_h"/"min_in_w"
  /// (0: none), "square_kernels", and "implied_padding": kernel size -> the
  /// padding the NPU applies on every side of such a kernel (empty: the
  /// command's padding parameters say; else the model's padding must equal
  /// it and a command covers the whole image).
  unsigned minInH = 0, minInW = 0;
  bool squareKernels = false;
  std::map<int, unsigned> impliedPadding;
  /// "weights" (conv, matmul): how the NPU reads the weight matrix,
  /// NPUCC_WL_* of runtime/include/npucc_layout.h (0: OHWI, today's), and
  /// the output / input channel blocks of the blocked layout.
  unsigned weightLayout = 0, weightBlockO = 1, weightBlockI = 1;
  /// "layout" (conv, depthwise, pool; /compute/layout is the default): the
  /// channel block of the NPU's activation operands in the scratchpad,
  /// NPUCC_AL_BLOCKED [C/b][H][W][b] when above 1, NHWC when 1.
  unsigned actBlock = 1;
  unsigned maxM = 0, maxK = 0, maxN = 0;
  std::vector<std::string> kinds; // pool: "max"/"avg"; eltwise: "add"
  /// pool "avg_rounding": how the average divides the window's sum by its count,
  /// NPUCC_AVG_* of runtime/hal/npucc_params.h (0: to nearest, ties away from zero).
  unsigned avgRounding = 0;
  bool perChannelRequant = false, perTensorRequant = false;
  bool fusedClamp = false;
  OpTiming timing;
  /// "operands": the operands the NPU reads from system memory itself
  /// (NPUCC_OPND_* order; the compiler does not DMA them), and each one's
  /// alignment there (1: none). Default: every operand in the scratchpad.
  std::array<bool, NumOperands> systemOperand{};
  std::array<unsigned, NumOperands> systemAlignment{1, 1, 1, 1, 1, 1, 1};
  /// "arithmetic": the stage (NPUCC_STAGE_*, npucc_params.h) of each pipeline
  /// slot (NPUCC_SLOT_* order); -1: the slot's default stage.
  std::array<int, NumStageSlots> stages{-1, -1, -1, -1, -1, -1, -1};
  /// The mul_shift_add requantization stage's field widths: mul (signed),
  /// shift, add (signed); "arithmetic": {"requant": {"stage": ..., "mul_bits"}}.
  std::array<unsigned, 3> msaBits{32, 6, 32};
  /// "arithmetic": {"activation": {"stage": "pwl", "segments"}}: the segments the compiler fits a
  /// pwl activation with (2..16; the table always holds NPUCC_PWL_SEGMENTS records).
  unsigned pwlSegments = 16;
  /// "arithmetic": {"correction": {"stage": "correction_terms", "x_bits", "w_bits", "shift_bits",
  /// "add_bits"}}: the widths of corr_x and corr_w (signed), of both shifts, and of corr_add
  /// (signed); the K210's 24/24/4/40.
  std::array<unsigned, 4> corrBits{24, 24, 4, 40};
  /// "arithmetic": {"pool": {"stage": "max", "kernels": [2, 4]}}: the k of the k x k, stride k
  /// max pools the NPU fuses after the activation (ascending; empty without the max stage).
  /// {"stage": "select", "kernels": [2], "offsets": [[0, 0], [0, 1]]}: the windows of the select
  /// stage (it keeps one pixel of each k x k window: strides done by selection).
  std::vector<unsigned> poolKernels;
  /// The select stage's offered kept pixels (row, column) inside a window, as listed.
  std::vector<std::pair<unsigned, unsigned>> poolOffsets;

  bool inSystem(Operand o) const { return systemOperand[size_t(o)]; }
  /// The stage of a slot, the default resolved (TargetParseArith.cpp).
  int stage(size_t slot) const;
  /// True when every slot runs its default stage (today's arithmetic).
  bool defaultArithmetic() const;
  bool allowsKernel(int kh, int kw) const;
  bool allowsStride(int s) const;
  bool allowsDilation(int d) const;
  bool allowsDepthMultiplier(int m) const;
  bool allowsKind(const std::string &k) const;
};

struct ComputeDesc {
  unsigned macRows = 1, macCols = 1;
  unsigned accumulatorBits = 32;
  std::vector<std::string> dtypes;
  std::map<std::string, OpLimits> operations;
};

/// A register's or field's register-file attributes, in CMSIS-SVD's terms
/// ("access", "modified_write", "read_action", "reset"; docs/target.md,
/// "Starting from a register file"). Informational: `npucc target import`
/// fills them from an SVD file and `npucc target export --svd` writes them
/// back; the register map `<id>_regs.h` gives the reset values. Empty / unset:
/// not stated.
struct RegFileInfo {
  std::string access;        // read-write | read-only | write-only | writeOnce | read-writeOnce
  std::string modifiedWrite; // oneToClear | oneToSet | oneToToggle | zeroToClear | zeroToSet |
                             // zeroToToggle | clear | set | modify
  std::string readAction;    // clear | set | modify | modifyExternal
  std::optional<uint64_t> reset;
  bool operator==(const RegFileInfo &o) const {
    return access == o.access && modifiedWrite == o.modifiedWrite && readAction == o.readAction &&
           reset == o.reset;
  }
};

struct Field {
  std::string name;
  unsigned lsb = 0, width = 0; // lsb 0..63, width 1..64, within the register
  std::string doc;
  std::optional<uint32_t> nop; // reserved no-op value (doorbell / opcode fields)
  /// "write_enable": the field of the same register that must be all ones
  /// for a write to change this one (the command layer sets it whenever it
  /// writes this field); -1: none.
  std::string writeEnable;
  int writeEnableField = -1;
  RegFileInfo file;
};

/// How the CPU reaches the registers: a register wider than the bus is
/// written and read as width / accessBits accesses, in the stated order.
struct BusDesc {
  unsigned accessBits = 32; // 8, 16, 32 or 64
  bool highFirst = false;   // "order": "high_first" (else "low_first")
};

struct Register {
  std::string name;
  uint32_t offset = 0;
  unsigned width = 32; // 8, 16, 32 or 64
  std::vector<Field> fields;
  std::string doc;
  std::optional<uint32_t> nop; // for whole-register doorbells
  /// "write": "rmw": a command owns only the fields it writes; the HAL reads
  /// the register, replaces those bits and writes it back.
  bool rmw = false;
  /// A word of frame `frame` (TargetDesc::frames), not a memory-mapped
  /// register: `offset` is its index in the frame, `width` the frame's
  /// word_bits. -1: a register.
  int frame = -1;
  bool isWord() const { return frame >= 0; }
  RegFileInfo file;
};

/// "frames": an ordered list of command words, each laid out like a
/// register (fields with lsb/width) but without an address. The words are
/// TargetDesc::registers[firstReg .. firstReg + numWords - 1], after every
/// memory-mapped register.
struct Frame {
  std::string name;
  unsigned wordBits = 32; // 32 or 64
  int firstReg = 0;
  unsigned numWords = 0;
};

/// How a command reaches the NPU ("delivery"). Mmio: its registers, the
/// doorbell last (today). Fifo: every word of its frame, in order, written
/// into one register; the last word starts the command.
/// Insn: each pair of words is one R-type custom CPU instruction (rs1, rs2;
/// an odd last word goes with 0), identified by its funct3/funct7.
/// Buffer: the words are appended to the command buffer in memory
/// (TargetDesc::cmdbuf); a kick (address, length, kick field) starts them.
enum class DeliveryMode { Mmio = 0, Fifo = 1, Insn = 2, Buffer = 3 };

struct Delivery {
  DeliveryMode mode = DeliveryMode::Mmio;
  int reg = -1;            // fifo: the register the words are pushed into
  unsigned depthWords = 0; // fifo: words the FIFO holds
  unsigned opcode = 0;     // insn: the major opcode (custom0..3: 0x0B, 0x2B, 0x5B, 0x7B)
  unsigned funct3 = 0, funct7 = 0;
};

/// A run of bits: a named field of a register, or the whole register (field < 0).
struct FieldRef {
  int reg = -1;
  int field = -1;
  unsigned lsb = 0, width = 0;
  std::string text; // "REG.field" as written in the JSON
  bool valid() const { return reg >= 0; }
};

/// (param - minus) >> shift, written into `fields` least significant part first.
struct ParamBinding {
  std::string param;
  int paramId = -1;
  std::vector<FieldRef> fields; // at least one
  unsigned shift = 0;
  int64_t minus = 0;
  /// Came from "fields" ("W3.o_row_wid": "out_w - 1"): the expression as
  /// printed, for the register header; "" for a "params" binding.
  std::string fromExpr;

  const FieldRef &field() const { return fields.front(); }
  unsigned totalWidth() const;
  std::string text() const; // "A.x" or "LO+HI.x"
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

/// Delivery "buffer": the one command buffer of the description, shared by
/// every buffer-delivered command (which share its frame). The HAL appends
/// frames to a static array of capacityWords words and kicks the NPU by
/// writing the words' device address into `address`, their number (words,
/// or bytes when lengthBytes) into `length`, then kick.value into
/// kick.field. capacityWords == 0: no buffer delivery.
struct CommandBuffer {
  FieldRef address, length;
  bool lengthBytes = false;
  FieldValue kick;
  unsigned capacityWords = 0;
  int frame = -1;
  std::string path; // JSON path of the first delivery that declared it
};

/// One row of a "cases" table: the field holds `value` when every
/// (parameter, value) condition holds.
struct FieldCase {
  std::vector<std::pair<int, int64_t>> when;
  uint64_t value = 0;
};

/// A field a command computes from its parameters ("fields"): an expression
/// (a constant is one) or a cases table. Written after the parameter
/// bindings; the value must fit the field unsigned.
struct FieldBinding {
  FieldRef field;
  std::string path; // JSON path, for messages
  bool isCases = false;
  Expr expr;
  std::vector<FieldCase> cases;
  /// cases: the simulator recovers the parameters of its conditions from it
  /// (no other binding of this command holds them).
  bool decodes = false;

  /// "cdiv(out_ch, 16) - 1", or "cases over k_h, k_w".
  std::string text() const;
  /// The parameters it reads, in order (expression or conditions).
  std::vector<int> params() const;
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
  std::vector<FieldBinding> fields; // "fields" not turned into parameter bindings
  FieldValue doorbell;              // with a job queue: the queue's commit; frame: none
  uint32_t doorbellNop = 0;         // the doorbell field's idle value
  int frame = -1;                   // "frame": index into TargetDesc::frames, -1: none
  Delivery delivery;

  const ParamBinding *binding(const std::string &param) const;
  const FixedParam *fixedParam(const std::string &param) const;
  /// The cases table the simulator recovers parameter `id` from, or null.
  const FieldBinding *decodingCases(int id) const;
};

/// One status bit (or field) and how it behaves.
struct StatusBit {
  FieldRef field;
  bool activeLow = false; // the condition holds when the field reads 0
  bool sticky = false;    // done: set on completion until cleared
  bool clearOnWrite1 = false;
  bool clearOnRead = false;
  bool requireClear = false; // must be cleared before the engine's next command
  /// "clear": {"field"|"register", "value"}: writing that value into that
  /// field (of another register) clears the bit; clear.field invalid: none.
  FieldValue clear;
  /// busy only: the field is the doorbell of the engine's commands and reads
  /// as the doorbell value until the command completes ("start_bit": true).
  bool startBit = false;
  bool valid() const { return field.valid(); }
  bool clearable() const { return clearOnWrite1 || clearOnRead || clear.field.valid(); }
};

struct EngineStatus {
  StatusBit busy, done, error, freeSlots;
};

struct JobQueue {
  unsigned depth = 0; // 0: no job queue
  FieldValue commit;
};

struct TimingDesc {
  uint64_t clockHz = 100000000;
  unsigned commandOverheadCycles = 0;
  unsigned vectorElementsPerCycle = 1; // pool / eltwise throughput
  unsigned regAccessCycles = 1;        // CPU cycles per register access
  unsigned pollCycles = 1;             // CPU cycles per status poll
};

/// The values a semantic parameter of a command can take on this NPU: what
/// its encoding (fields, shift, minus) carries, or its one fixed or default
/// value. TargetDesc::paramTable holds one per command kind and parameter.
struct ParamRange {
  int64_t lo = 0, hi = 0;
  int64_t step = 1;   // values are lo + k * step (binding shift)
  bool bound = false; // false: fixed or default value only
  bool fixed = false; // not bound: the command fixes the value (else its default)
  std::string field;  // bound: the field(s) holding it, "A0.x" or "LO+HI.a"
  /// Bound through a cases table: the only values it holds (lo..hi spans them).
  std::vector<int64_t> values;
  bool holds(int64_t v) const {
    if (bound && !values.empty())
      return std::find(values.begin(), values.end(), v) != values.end();
    // step is a power of two: the unsigned difference has the right residue.
    return bound ? v >= lo && v <= hi && (uint64_t(v) - uint64_t(lo)) % uint64_t(step) == 0
                 : v == lo;
  }
};

struct TargetDesc {
  std::string name;
  std::string description;
  std::string file; // where it was loaded from (for diagnostics)
  unsigned addressBits = 32;
  uint64_t baseAddress = 0;
  std::vector<Scratchpad> scratchpads;
  std::vector<SystemRange> system;
  DmaDesc dma;
  ComputeDesc compute;
  BusDesc bus;
  std::vector<Register> registers; // then the words of every frame
  std::vector<Frame> frames;
  CommandBuffer cmdbuf; // delivery "buffer"
  std::vector<CommandDesc> commands;
  EngineStatus engines[3]; // indexed by Engine: dma, compute, fence
  bool concurrentDmaCompute = false;
  /// "registers_persist": the NPU keeps command registers' values between
  /// commands, so a command writes only the registers whose value changes.
  bool registersPersist = false;
  std::string completion = "poll"; // "poll" or "fence"
  JobQueue queue;
  TimingDesc timing;

  const CommandDesc *command(const std::string &kind) const;
  const OpLimits *operation(const std::string &op) const;
  bool supports(const std::string &op) const { return operation(op) != nullptr; }
  /// The range a command's encoding can carry for a parameter: from the
  /// widths of its fields, minus and shift; a fixed or unbound parameter has
  /// only its fixed or default value. Precondition: the command exists.
  ParamRange paramRange(const std::string &kind, const std::string &param) const;
  /// The same by kind and parameter index (NPUCC_KIND_*, NPUCC_P_*), from
  /// paramTable: the one table of parameter -> field bounds that the loader's
  /// checks, the legality check and the scheduler's proof all use.
  const ParamRange &paramBounds(int kind, int param) const;
  /// "" if command `kind` can carry `value` for `param`, else why not, naming
  /// the command, the parameter and the field ("command 'conv' parameter
  /// 'in_addr' = 0x40000 does not fit its field 'CONV_IN.ADDR16' (0x0..0x1fff0
  /// in units of 16)").
  std::string paramProblem(int kind, int param, int64_t value) const;
  /// "" if every computed field ("fields") of command `kind` fits for these
  /// parameters (indexed by paramId), else why not, naming the command, the
  /// field, the expression, its value and the field's range.
  std::string fieldProblem(int kind, const std::vector<int64_t> &params) const;
  /// Fills paramTable from the commands (the loader calls it once they are read).
  void buildParamTable();
  /// paramTable[kind][param]; empty until buildParamTable().
  std::vector<std::vector<ParamRange>> paramTable;
  /// Does register `reg` hold status bits (busy, done, error, free slots)?
  /// "init": field values npucc_hal_init writes, in order.
  std::vector<FieldValue> init;
  bool isStatusRegister(int reg) const;
  /// Some command writes a field of `reg` (binding, select or doorbell).
  bool isCommandRegister(int reg) const;
  /// A command register whose value a command need not rewrite
  /// (NPUCC_REG_PERSIST): registers persist, and nothing but a command's
  /// write changes it (no doorbell, status, clear or command-buffer field of
  /// any engine or command; not read-modify-write; not a frame word, FIFO or
  /// init register).
  bool registerPersists(int reg) const;
  /// The scratchpad holding [addr, addr+size), or null.
  const Scratchpad *scratchpadAt(uint64_t addr, uint64_t size = 1) const;
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
/// Is the parameter signed (zero points, multipliers, shifts, clamps)?
bool paramIsSigned(int paramId);
/// Default value of a parameter.
int64_t paramDefault(int paramId);
/// Index of a command kind name ("dma" = 0 ... "fence"), or -1.
int commandKindId(const std::string &kind);
const std::vector<std::string> &commandKindNames();

/// Limits of the runtime: registers (or frame words) written by one command, parts of a split
/// parameter, registers in a description (npucc_npu.c / npucc_desc.h).
constexpr unsigned MaxRegistersPerCommand = 64;
constexpr unsigned MaxBindingParts = 8;
constexpr unsigned MaxRegisters = 65535;

} // namespace npucc::target
