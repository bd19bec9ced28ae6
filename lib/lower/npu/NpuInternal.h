//===- NpuInternal.h - Shared pieces of the NPU lowering (internal) -------===//
//
//   Footprint.cpp  the memory an `npu` instruction reads and writes
//   SpmAlloc.cpp   scratchpad placement with alignment and bank rules
//   Records.cpp    weights / bias / requantization records of the const blob
//   Schedule.cpp   a tiling -> the layer's NPU commands
//   Layer.cpp      layer geometry, record layouts, a tiling's buffers, hand-off
//   Tiling.cpp     candidate tilings, feasibility, the cheapest
//   Estimate.cpp   the timeline estimate (insertNpuWaits in Waits.cpp)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/lower/NpuLowering.h"
#include "npucc/lower/NpuTrace.h"
#include "npucc/quant/Multiplier.h"
#include "npucc/quant/Pwl.h"
#include "npucc/target/CTable.h"

#include "../../../runtime/hal/npucc_params.h"
#include "../../../runtime/include/npucc_layout.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace npucc::lower::npu {

// --- Memory footprints ------------------------------------------------------------------

/// One byte range of a region that a command reads or writes.
struct Access {
  lir::Region region = lir::Region::Arena;
  int index = 0;
  int64_t lo = 0, hi = 0; // [lo, hi) in bytes from the region's start
  bool write = false;
};
/// The int64 value of a semantic parameter of an `npu` instruction (its
/// default when absent; a BufferRef's offset for addresses).
int64_t paramValue(const lir::Instr &in, const std::string &name);
const lir::Arg *paramArg(const lir::Instr &in, const std::string &name);
/// What an `npu` instruction reads and writes (bounding ranges).
std::vector<Access> npuFootprint(const lir::Instr &in);
/// What a CPU instruction (call/memcpy/memset) may read or write: every
/// buffer operand, conservatively both.
std::vector<Access> cpuFootprint(const lir::Instr &in);
bool overlaps(const Access &a, const Access &b);
/// `alloc` / `free` of a scratchpad buffer (no memory access, no code).
bool isBufferMarker(const lir::Instr &in);
/// Most scratchpad bytes allocated at once (the alloc / free markers).
int64_t scratchpadPeak(const std::vector<lir::Instr> &body);

// --- Scratchpad allocation --------------------------------------------------------------

/// A scratchpad buffer: which operand roles it serves (NPUCC_OPND_* bits), size.
struct SpmRequest {
  std::string what; // for messages: "input tile", "weights record", ...
  uint64_t size = 0;
  unsigned roles = 0;                // bit NPUCC_OPND_x: the buffer holds that operand
  std::vector<uint64_t> roleOffsets; // offset inside the buffer of each role's data (by role)
  bool kept = false; // the hand-off's kept output: not freed by its layer (the next layer frees it)
};
struct SpmPlace {
  int spm = -1;        // scratchpad index
  uint64_t offset = 0; // from the scratchpad's base
};
/// Bytes [lo, hi) of scratchpad `spm` that a layer's buffers must avoid
/// (a buffer allocated before the layer and live through it).
struct SpmRange {
  int spm = 0;
  uint64_t lo = 0, hi = 0;
  unsigned roles = 0; // the operands the layer reads there (NPUCC_OPND_* bits: bank rules)
};
/// Places all requests (in order) or returns the reason they do not fit.
/// Every buffer is aligned (absolute address) to the DMA alignment and to its
/// operands' alignment; with a command kind (NPUCC_KIND_*), each operand's
/// address also lies where that command's address field reaches; no buffer
/// overlaps a reserved range.
Result<std::vector<SpmPlace>> allocateSpm(const target::TargetDesc &t,
                                          const std::vector<SpmRequest> &reqs, int kind = -1,
                                          const std::vector<SpmRange> &reserved = {});
/// The same buffers mirrored to the top of their scratchpads (offset from
/// the end instead of the start, aligned down), so that consecutive layers
/// use opposite ends; nothing when the mirror breaks a rule.
std::optional<std::vector<SpmPlace>> mirrorSpm(const target::TargetDesc &t,
                                               const std::vector<SpmRequest> &reqs,
                                               const std::vector<SpmPlace> &places, int kind = -1,
                                               const std::vector<SpmRange> &reserved = {});

// --- Layer geometry and tilings -------------------------------------------------------------

/// The NPU op with the byte layout of its operands in system memory.
struct Layer {
  target::NpuOp op;
  // Row-tiled view shared by conv / depthwise / pool / matmul (matmul: H = m,
  // W = 1, C = k, output rows m, OC = n).
  int64_t H = 1, W = 1, C = 1, OH = 1, OW = 1, OC = 1;
  /// A fused max pool's window (op.poolK): OH x OW are the computed rows and
  /// columns (multiples of PK), the stored output is (OH / PK) x (OW / PK);
  /// row tiles are multiples of PK. 1: no pool.
  int64_t PK = 1;
  /// Parameters every compute command of the layer carries (zero points,
  /// requantization, clamp, pool kind), from the node.
  std::vector<std::pair<std::string, int64_t>> fixed;
  bool blocks() const { return op.kind == NPUCC_KIND_CONV || op.kind == NPUCC_KIND_MATMUL; }
  bool hasWeights() const { return op.kind != NPUCC_KIND_POOL && op.kind != NPUCC_KIND_ELTWISE; }
  /// Input rows [first, last) that output rows [r0, r1) read.
  std::pair<int64_t, int64_t> inRows(int64_t r0, int64_t r1) const;
};
Layer makeLayer(const target::NpuOp &op);

/// The hand-off between two NPU layers (docs/npu.md, "Hand-off"): the
/// producer keeps its whole output tensor (NHWC) in one scratchpad buffer
/// that its commands write directly (no store); the consumer's commands read
/// their input rows from it (no load) and free it after its last command.
struct Handoff {
  std::optional<SpmPlace> in; // the input, kept there by the layer before
  uint64_t inBytes = 0;       // its size (the kept buffer's)
  int inOperand = 0;          // which input it is: 0 (in) or 1 (in2, an eltwise's second)
  bool out = false;           // keep this layer's output
  /// The kept input, which the layer's own buffers must avoid.
  std::vector<SpmRange> reserved() const {
    if (!in)
      return {};
    target::Operand o = inOperand ? target::Operand::In2 : target::Operand::In;
    return {{in->spm, in->offset, in->offset + inBytes, 1u << unsigned(o)}};
  }
};
/// Can `producer`'s output be handed to `consumer`'s input `operand` (0 or
/// 1) in the scratchpad? The producer conv, depthwise or pool with the NHWC
/// layout; the consumer the same kinds reading it as input 0 with the same
/// shape, or an eltwise command reading it as either operand.
bool canHandOff(const Layer &producer, const Layer &consumer, const target::TargetDesc &t,
                int operand = 0);

struct Tiling {
  int64_t rows = 1;         // output rows per tile (eltwise: elements per chunk)
  int64_t block = 1;        // output channels per block (OC when not blocked)
  bool blocksOuter = false; // loop order: channel blocks outside the row tiles
  bool resident = true;     // all weight records stay in the scratchpad
  bool system = false;      // the NPU reads the weight records from system memory
  std::string text() const;
};

/// Byte layout of one weight record (per output-channel block) in the blob
/// and in the scratchpad: [weights | bias | requant table], each aligned.
struct RecordLayout {
  uint64_t wOff = 0, wBytes = 0, biasOff = 0, rqOff = 0, size = 0;
};
RecordLayout recordLayout(const Layer &l, const target::TargetDesc &t, int64_t block);
/// Bytes per output channel of the requantization table: int32 mult and
/// shift (q31), one binary32 scale (fp32_scale) or one int32 right shift (shift).
inline int64_t rqBytesPerChannel(const target::NpuOp &op) {
  return op.rqMsa ? 12 : op.fp32Scale || op.rqShift ? 4 : 8;
}
/// Records start at multiples of this in the blob and the scratchpad.
uint64_t recordAlign(const target::TargetDesc &t, const Layer &l);
/// The layout of the layer's weights on this NPU ("weights" of conv and
/// matmul; depthwise weights are always [k_h][k_w][channels]).
npucc_wlayout weightLayoutOf(const target::TargetDesc &t, const Layer &l);
/// The layout of the layer's activations in the scratchpad ("layout" of
/// conv, depthwise and pool; NHWC for the others). System memory is NHWC.
npucc_alayout actLayoutOf(const target::TargetDesc &t, const Layer &l);
/// Does the NPU read the layer's records (w, bias, rq) from system memory
/// ("operands" of its operation)? Then they take no scratchpad and no DMA.
bool recordsInSystem(const Layer &l, const target::TargetDesc &t);
/// The lut256 table (operand act): 256 bytes after the layer's last record
/// in the blob, at this offset from the records' start (aligned to the act
/// operand's alignment); read from system memory or DMA'd once into its
/// own scratchpad buffer.
constexpr uint64_t ActTableBytes = 256;
/// Does the layer read an activation table? Every MAC layer of an operation
/// whose activation stage is lut256 or pwl does (NpuOp::actLut, or the
/// description's stage for an op built without placeNode).
bool hasActTable(const Layer &l, const target::TargetDesc &t);
/// The table's bytes: ActTableBytes (lut256) or NPUCC_PWL_TABLE_BYTES (pwl).
uint64_t actTableBytes(const Layer &l, const target::TargetDesc &t);
uint64_t actTableOffset(const Layer &l, const target::TargetDesc &t, int64_t block);
/// The table's alignment in the blob (the records' start is aligned to it too).
uint64_t actTableAlign(const target::TargetDesc &t, const Layer &l);
/// The fused clamp of node `n` in its output's quantized domain.
std::pair<int32_t, int32_t> fusedClampOf(const ir::Node &n);
bool actTableInSystem(const Layer &l, const target::TargetDesc &t);

/// The scratchpad buffers of a tiling (their requests, in allocation order).
/// Allocation order: input tiles, second input tiles, weight records,
/// output tiles, then the activation table (actCount 0 or 1).
struct Buffers {
  int inCount = 0, wCount = 0, outCount = 0, in2Count = 0, actCount = 0;
  uint64_t inBytes = 0, wBytes = 0, outBytes = 0;
  std::vector<SpmRequest> requests;
};
/// With a hand-off: no input tiles for a kept input; one "kept output"
/// buffer of the whole output instead of the output tiles.
Buffers tilingBuffers(const Layer &l, const target::TargetDesc &t, const Tiling &tl,
                      const Handoff &h = Handoff());

/// Where the operands of the layer are: system memory (BufferRefs with the
/// real offsets, or placeholders when only timing) and the record blob.
struct LayerIo {
  lir::BufferRef in, in2, out; // activations in system memory
  lir::BufferRef blob;         // the const blob; records start at recordsOffset
  uint64_t recordsOffset = 0;
};

/// System operands at placeholder addresses (region only), for schedules
/// that are timed or proven but not emitted.
LayerIo placeholderIo();

/// The commands of one layer under a tiling, placed at `spm`. Appends `npu`
/// instructions (tokens from `nextToken`) to `out`; no waits (Waits.cpp).
Status scheduleLayer(const Layer &l, const target::TargetDesc &t, const Tiling &tl,
                     const std::vector<SpmPlace> &spm, const LayerIo &io, int &nextToken,
                     const std::string &comment, std::vector<lir::Instr> &out,
                     const Handoff &h = Handoff());

/// Error unless every value of `npu` instruction `in` fits its field, its
/// alignment, the DMA limits and the command stream (Proof.cpp); the message
/// names the command, the parameter and the field.
Status proveCommand(const lir::Instr &in, const target::TargetDesc &t);

struct Choice {
  Tiling tiling;
  std::vector<SpmPlace> spm;
  uint64_t spmBytes = 0;
  NpuEstimate estimate;
};
/// The fastest feasible tiling, or the reason none is (a hand-off's kept
/// output asks for whole-channel blocks).
Result<Choice> chooseTiling(const Layer &l, const target::TargetDesc &t,
                            const Handoff &h = Handoff());

// --- Records: weights, bias, requantization tables ------------------------------------------

/// The blob bytes of all weight records of a layer (one per output-channel
/// block of `block` channels) for node `n`, then its activation table if any.
/// `next`: a fused activation's table (quant::fusedLut) after the clamp;
/// `pwl`: a fused activation's pwl segments (quant::pwlOf; else the pwl
/// table is n's fused clamp, quant::pwlClamp).
Result<std::vector<uint8_t>> buildRecords(const ir::Node &n, const Layer &l,
                                          const target::TargetDesc &t, int64_t block,
                                          const quant::LutTable *next = nullptr,
                                          const std::vector<quant::PwlSegment> *pwl = nullptr);

/// insertNpuWaits (NpuLowering.h) on its own.
Status insertNpuWaits(lir::Program &p, const target::TargetDesc &t);

// --- Estimation -------------------------------------------------------------------------------

/// Which system window a region is mapped to (the simulator's auto-mapping
/// policy): constants in the first read-only window large enough, everything
/// else in the first writable one. Returns the window's base address.
uint64_t regionBase(const target::TargetDesc &t, lir::Region r, uint64_t constBytes);

/// The timeline of a body (npu / wait / CPU instructions). `trace` (if set)
/// gets every command's span; `cpuCycles` (if set, per body index) makes a
/// CPU instruction take that many CPU cycles (traceProgram, NpuTrace.h).
NpuEstimate estimateBody(const std::vector<lir::Instr> &body, const lir::Program *prog,
                         const target::TargetDesc &t, const target::CTable &table,
                         std::vector<NpuSpan> *trace = nullptr,
                         const std::vector<uint64_t> *cpuCycles = nullptr);

} // namespace npucc::lower::npu
