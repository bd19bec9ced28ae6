//===- TargetProofs.cpp - What the loader proves about every value written --===//
//
// A description the loader accepts must never make a compiled program fail
// only at run time. These checks run once the commands are read and prove,
// from the table of parameter -> field bounds (TargetDesc::paramTable, the
// one the legality check and the scheduler's proof use too):
//   - every capability an operation lists (kernel sizes, strides,
//     dilations, padding, channel multipliers, requantization modes) can be
//     programmed through its command;
//   - an address held in units of 2^shift bytes raises the alignment the
//     compiler allocates with (the effective DMA or operand alignment, in
//     the C table), and its `minus` is a multiple of the unit;
//   - the DMA counts (rows, planes) are in units of 1 from 1; lengths in the
//     DMA length unit (TargetParseLayout.cpp: 1 unless a layout pads rows
//     to it), since the compiler moves NHWC rows of any byte length; the
//     effective DMA limits
//     are what the fields carry, or the explicit lower ones;
//   - every memory lies within what the dma command's address fields hold:
//     src_addr for every memory, dst_addr for every writable one;
//   - an operand the NPU reads from system memory has an address field that
//     reaches every system window (the constants may be placed in any).
// What the compiler proves per command at compile time is in lib/lower/npu
// (Proof.cpp); docs/target.md, "What the loader proves", lists both.
//
//===----------------------------------------------------------------------===//
#include "TargetParser.h"

#include "../../runtime/hal/npucc_desc.h"

#include <algorithm>

namespace npucc::target {

using namespace json_reader;

namespace {

/// The compute operand an address parameter points at, or -1 (DMA addresses).
int operandOf(const std::string &param) { return npucc_operand_of_param(paramId(param)); }

bool isAddress(const std::string &param) {
  return param == "src_addr" || param == "dst_addr" || operandOf(param) >= 0;
}

} // namespace

/// Every value an operation's capabilities allow must be programmable
/// through its command (bound field range, or the fixed value), and the
/// requantization modes must be selectable.
void TargetParser::checkCapabilitiesEncodable() const {
  for (const auto &kv : T.compute.operations) {
    const std::string &op = kv.first;
    const OpLimits &l = kv.second;
    int kind = commandKindId(op);
    std::string path = "/compute/operations/" + op;
    auto fitsAll = [&](const char *param, const std::vector<int> &vals, const char *what,
                       const std::string &key) {
      for (int v : vals)
        if (std::string why = T.paramProblem(kind, paramId(param), v); !why.empty())
          fail(path + "/" + key,
               std::string(what) + " " + std::to_string(v) + " cannot be programmed: " + why);
    };
    if (op == "conv" || op == "depthwise" || op == "pool") {
      fitsAll("k_h", l.kernelHeights, "kernel height", l.kernelHeightsKey);
      fitsAll("k_w", l.kernelWidths, "kernel width", l.kernelWidthsKey);
      fitsAll("stride_h", l.strides, "stride", "strides");
      fitsAll("stride_w", l.strides, "stride", "strides");
      if (op != "pool") {
        fitsAll("dil_h", l.dilations, "dilation", "dilations");
        fitsAll("dil_w", l.dilations, "dilation", "dilations");
      }
      // Every padding from 0 to the limit (tiles use smaller ones).
      static const char *const Side[] = {"top", "left"};
      static const char *const Param[] = {"pad_top", "pad_left"};
      for (int s = 0; s < 2; ++s)
        for (int64_t v = 0; v <= int64_t(l.maxPad[size_t(s * 2)]); ++v)
          if (std::string why = T.paramProblem(kind, paramId(Param[s]), v); !why.empty())
            fail(path + "/max_padding", "max_padding " + std::string(Side[s]) + " " +
                                            std::to_string(l.maxPad[size_t(s * 2)]) +
                                            " cannot be programmed: " + why);
    }
    if (l.stage(NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_MAX ||
        l.stage(NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_SELECT) {
      std::vector<int> ks(l.poolKernels.begin(), l.poolKernels.end());
      ks.push_back(1); // no pool
      fitsAll("pool_k", ks, "pool window", "arithmetic/pool/kernels");
    }
    if (l.stage(NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_SELECT) {
      std::vector<int> ys, xs;
      for (const auto &o : l.poolOffsets)
        ys.push_back(int(o.first)), xs.push_back(int(o.second));
      fitsAll("pool_off_y", ys, "kept pixel row", "arithmetic/pool/offsets");
      fitsAll("pool_off_x", xs, "kept pixel column", "arithmetic/pool/offsets");
    }
    if (op == "depthwise")
      fitsAll("depth_mult", l.depthMultipliers, "channel multiplier", "channel_multipliers");
    if (op == "conv" || op == "depthwise" || op == "matmul") {
      ParamRange pc = T.paramRange(op, "per_channel");
      if (l.perChannelRequant && !pc.holds(1))
        fail("/commands/" + op + "/params",
             "per-channel requant needs parameter 'per_channel' bound (or fixed to 1)");
      if (l.perTensorRequant && !pc.holds(0))
        fail("/commands/" + op + "/fixed",
             "per-tensor requant needs 'per_channel' 0, but the command fixes it to 1");
    }
  }
}

/// An address field in units of 2^shift bytes can only hold aligned
/// addresses: the unit becomes part of the alignment the compiler allocates
/// and transfers with (dma.alignment for src/dst_addr, the operand
/// alignment of every scratchpad for the compute operands). Its minus must
/// be a multiple of the unit, or no aligned address could be encoded.
void TargetParser::foldAddressUnits() {
  for (const CommandDesc &c : T.commands)
    for (const ParamBinding &b : c.params) {
      if (!isAddress(b.param) || b.shift == 0)
        continue;
      uint64_t unit = uint64_t(1) << b.shift;
      if (uint64_t(b.minus) % unit)
        fail("/commands/" + c.kind + "/params/" + b.param,
             "'" + b.param + "' is held in units of " + std::to_string(unit) + " bytes after " +
                 "subtracting minus " + hexText(uint64_t(b.minus)) +
                 ", which is not a multiple of " + std::to_string(unit) +
                 ": no aligned address could be encoded");
      int o = operandOf(b.param);
      if (o < 0) {
        T.dma.alignment = unsigned(std::max<uint64_t>(T.dma.alignment, unit));
        continue;
      }
      // An operand the NPU reads from system memory: its alignment there.
      auto op = T.compute.operations.find(c.kind);
      if (op != T.compute.operations.end() && op->second.systemOperand[size_t(o)]) {
        unsigned &a = op->second.systemAlignment[size_t(o)];
        a = unsigned(std::max<uint64_t>(a, unit));
      }
      for (Scratchpad &s : T.scratchpads)
        s.operandAlignment[size_t(o)] =
            unsigned(std::max<uint64_t>(s.operandAlignment[size_t(o)], unit));
    }
}

void TargetParser::deriveDmaLimits() {
  static const char *const Keys[] = {"max_length", "max_rows", "max_planes", "max_stride",
                                     "max_plane_stride"};
  static const std::vector<std::vector<std::string>> Params = {
      {"length"},
      {"rows"},
      {"planes"},
      {"src_stride", "dst_stride"},
      {"src_plane_stride", "dst_plane_stride"}};
  static const char *const Units[] = {"byte lengths", "row counts", "plane counts"};
  uint64_t *out[] = {&T.dma.maxLength, &T.dma.maxRows, &T.dma.maxPlanes, &T.dma.maxStride,
                     &T.dma.maxPlaneStride};
  unsigned needDims[] = {1, 2, 3, 2, 3};
  for (size_t i = 0; i < 5; ++i) {
    uint64_t cap = ~uint64_t(0);
    for (const std::string &p : Params[i]) {
      const ParamRange &r = T.paramBounds(NPUCC_KIND_DMA, paramId(p));
      bool used = T.dma.dims >= needDims[i];
      if (used && !r.bound && !r.fixed)
        fail("/commands/dma/params",
             "a " + std::to_string(T.dma.dims) + "-D DMA must bind parameter '" + p + "'");
      // Counts take every value from 1 up to the limit: the compiler moves
      // rows of any length (a length in units of 8 bytes could not be honoured).
      if (used && i == 0)
        checkDmaUnit(r);
      else if (used && r.bound && i < 3 && r.step != 1)
        fail("/commands/dma/params/" + p, "the dma command holds '" + p + "' in units of " +
                                              std::to_string(r.step) + " (shift " +
                                              std::to_string(__builtin_ctzll(uint64_t(r.step))) +
                                              "), but npucc needs " + Units[i] + " in units of 1");
      if (used && r.bound && i > 0 && i < 3 && r.lo > 1)
        fail("/commands/dma/params/" + p, "the dma command cannot carry " + p + " = 1 (" +
                                              T.paramProblem(NPUCC_KIND_DMA, paramId(p), 1) + ")");
      cap = std::min<uint64_t>(cap, uint64_t(std::max<int64_t>(r.hi, 0)));
    }
    if (T.dma.dims < needDims[i])
      cap = i < 3 ? 1 : 0;
    if (ExplicitDma[i]) {
      if (*ExplicitDma[i] > cap)
        fail(std::string("/dma/") + Keys[i],
             std::string(Keys[i]) + " " + std::to_string(*ExplicitDma[i]) +
                 " exceeds what the dma command's fields can hold (" + std::to_string(cap) + ")");
      cap = *ExplicitDma[i];
    }
    *out[i] = cap;
  }
  if (T.dma.maxLength == 0 || T.paramBounds(NPUCC_KIND_DMA, NPUCC_P_LENGTH).lo > 1)
    fail("/commands/dma/params/length", "the dma command cannot carry a length of 1 byte");
}

/// The DMA must reach every byte of every memory: read every memory, write
/// every writable one (scratchpads included). A window beyond its address
/// fields would compile and fail when the program runs.
void TargetParser::checkDmaReach() const {
  const ParamRange &src = T.paramBounds(NPUCC_KIND_DMA, NPUCC_P_SRC_ADDR);
  const ParamRange &dst = T.paramBounds(NPUCC_KIND_DMA, NPUCC_P_DST_ADDR);
  auto reach = [&](const std::string &path, const std::string &what, uint64_t base, uint64_t size,
                   bool writable) {
    uint64_t last = base + (size - 1);
    for (int k = 0; k < (writable ? 2 : 1); ++k) {
      const ParamRange &r = k ? dst : src;
      const char *param = k ? "dst_addr" : "src_addr";
      bool inside = r.bound && r.lo >= 0 && base >= uint64_t(r.lo) && last <= uint64_t(r.hi);
      if (inside)
        continue;
      std::string holds = r.bound ? "its field '" + r.field + "' holds " + hexText(uint64_t(r.lo)) +
                                        ".." + hexText(uint64_t(r.hi))
                                  : "the command fixes it to " + hexText(uint64_t(r.lo));
      fail(path, what + " (" + hexText(base) + ".." + hexText(last) + ") is beyond the dma " +
                     "command's '" + param + "': " + holds + "; the DMA could not " +
                     (k ? "write" : "read") + " it");
    }
  };
  for (size_t i = 0; i < T.scratchpads.size(); ++i)
    reach("/memories/scratchpads/" + std::to_string(i),
          "scratchpad " + shortQuote(T.scratchpads[i].name), T.scratchpads[i].base,
          T.scratchpads[i].size, true);
  for (size_t i = 0; i < T.system.size(); ++i)
    reach("/memories/system/" + std::to_string(i), "system memory " + shortQuote(T.system[i].name),
          T.system[i].base, T.system[i].size, T.system[i].writable);
  // The compute commands' own reads of system memory: the same proof.
  checkSystemOperandReach();
}

/// An operand the NPU reads from system memory ("operands") is an offset in
/// the constant blob, which the firmware may place in any system window:
/// its address field must reach every byte of every window, as the DMA's
/// src_addr must.
void TargetParser::checkSystemOperandReach() const {
  for (const auto &kv : T.compute.operations)
    for (int o = 0; o < NumOperands; ++o) {
      if (!kv.second.systemOperand[size_t(o)])
        continue;
      const std::string &opnd = operandNames()[size_t(o)];
      std::string param = opnd + "_addr";
      const ParamRange &r = T.paramBounds(commandKindId(kv.first), paramId(param));
      for (const SystemRange &w : T.system) {
        uint64_t last = w.base + (w.size - 1);
        if (r.bound && r.lo >= 0 && w.base >= uint64_t(r.lo) && last <= uint64_t(r.hi))
          continue;
        std::string holds = r.bound ? "its field '" + r.field + "' holds " +
                                          hexText(uint64_t(r.lo)) + ".." + hexText(uint64_t(r.hi))
                                    : "the command fixes it to " + hexText(uint64_t(r.lo));
        fail("/compute/operations/" + kv.first + "/operands/" + opnd,
             "operand '" + opnd + "' is read from system memory, but system memory " +
                 shortQuote(w.name) + " (" + hexText(w.base) + ".." + hexText(last) +
                 ") is beyond the " + kv.first + " command's '" + param + "': " + holds +
                 "; the NPU could not read the constants there");
      }
    }
}

} // namespace npucc::target
