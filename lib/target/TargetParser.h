//===- TargetParser.h - JSON target description parser (internal) ---------===//
//
// The parser is one class whose parts live in two files:
//   TargetParse.cpp          hardware: memories, DMA, compute operations, timing
//   TargetParseInterface.cpp programming interface: registers, commands and
//                            their bindings, job queue, and the checks
//                            across them (ambiguous commands)
//   TargetParseStatus.cpp    status bits (clearing, start bits) and the
//                            registers commands may write beside them
//   TargetParseFields.cpp    computed fields ("fields": constants, expressions,
//                            cases tables) and their checks
//   TargetParseFrames.cpp    frames (ordered command words) and how commands
//                            are delivered (FIFO register, custom
//                            instructions), with their checks
//   TargetParseBuffer.cpp    command-buffer delivery (address, length, kick)
//   TargetParseLayout.cpp    layouts and geometry: the DMA length unit (and
//                            whether a layout lets the compiler honour it),
//                            kernel geometry (square kernels, implied
//                            padding, minimum input size), weight layouts
//   TargetParseArith.cpp     the arithmetic pipeline of an operation (stages)
//   TargetProofs.cpp         what the loader proves about every value a
//                            program will write: capabilities programmable,
//                            address units (effective alignment), DMA counts
//                            in units of 1, effective DMA limits, every
//                            memory within the DMA's address fields
// Every error is a json_reader::ParseError carrying the JSON path.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/target/Target.h"

#include "JsonReader.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace npucc::target {

// Shared by the parser's files (TargetParseInterface.cpp).
std::string bitsText(unsigned lsb, unsigned width);
bool overlaps(const FieldRef &a, const FieldRef &b);
bool sameBits(const FieldRef &a, const FieldRef &b);
/// The idle value of a doorbell field: its declared "nop", else 0.
uint32_t nopOf(const TargetDesc &T, const FieldRef &f);

class TargetParser {
public:
  TargetDesc T;
  void parse(const nlohmann::json &root);

private:
  using Obj = json_reader::Obj;
  using json = nlohmann::json;

  // TargetParse.cpp
  void parseMemories(const Obj &o);
  void parseScratchpad(const Obj &m, Scratchpad &s);
  void parseDma(const Obj &o);
  void parseCompute(const Obj &o);
  OpLimits parseOperation(const std::string &name, const Obj &lo, const std::vector<std::string> &rq,
                          const std::vector<std::string> &act);
  void parseOperands(const std::string &name, const Obj &oo, OpLimits &l);
  // TargetParseArith.cpp
  void parseArithmetic(const std::string &name, const Obj &ao, OpLimits &l);
  void parseTiming(const Obj &o);
  std::optional<Expr> timingExpr(const Obj &to, const char *key, const std::string &op) const;
  void checkAddressRange(const Obj &m, const std::string &what, uint64_t base,
                         uint64_t size) const;
  void addRange(const std::string &name, uint64_t base, uint64_t size, const std::string &path);

  // TargetParseInterface.cpp
  void parseSkeleton(const Obj &o);
  void parseBus(const Obj &o);
  void parseRegisters(const json &regs, const std::string &path);
  void resolveWriteEnables(Register &r, const std::string &path) const;
  void parseFieldList(const Obj &o, Register &r, std::set<std::string> &fieldNames) const;
  FieldRef fieldRef(const json &j, const std::string &path) const;
  FieldValue fieldValue(const Obj &o, bool isDoorbell) const;
  ParamBinding parseBinding(const std::string &param, const json &j, const std::string &path) const;
  void parseCommands(const Obj &o);
  void parseQueue(const Obj &o);

  // TargetParseFrames.cpp
  void parseFrames(const json &frames, const std::string &path);
  void parseDelivery(const Obj &co, CommandDesc &c);
  void checkFrames() const;
  // TargetParseBuffer.cpp
  void parseBufferDelivery(const Obj &d, CommandDesc &c);
  void checkCommandBuffer() const;

  // TargetParseFields.cpp
  using Claim = std::function<void(const FieldRef &, const std::string &)>;
  void parseFields(const Obj &co, CommandDesc &c, const Claim &claim) const;
  void checkRecoverable(const CommandDesc &c, const std::string &path) const;
  void checkFieldBindings() const;
  void checkAmbiguousCommands() const;
  void crossCheck();

  // TargetParseStatus.cpp
  StatusBit statusBit(const json &j, const std::string &path, const std::string &role) const;
  void parseStatus(const Obj &o);
  void checkOneAccess(const FieldRef &f, const std::string &path) const;
  void checkStatusRegisters() const;
  void checkStartBits() const;
  void checkClearFields() const;
  void parseInit(const json &j, const std::string &path);
  std::vector<FieldRef> writtenFields(const CommandDesc &c) const;
  FieldRef fieldOf(int reg, int field) const;

  // TargetParseLayout.cpp
  void parseDmaUnit(const Obj &o);
  void checkDmaUnit(const ParamRange &length) const;
  void parseGeometry(const std::string &name, const Obj &lo, OpLimits &l) const;
  void parseWeights(const Obj &lo, OpLimits &l) const;
  unsigned parseActLayout(const json &v, const std::string &path) const;
  void parseLayouts(const Obj &compute);

  // TargetProofs.cpp
  void checkCapabilitiesEncodable() const;
  void foldAddressUnits();
  void deriveDmaLimits();
  void checkDmaReach() const;
  void checkSystemOperandReach() const;

  struct Range {
    std::string name;
    uint64_t lo, hi; // [lo, hi)
  };
  std::vector<Range> Ranges;
  /// max_length, max_rows, max_planes, max_stride, max_plane_stride as given.
  std::optional<uint64_t> ExplicitDma[5];
  /// /compute/layout's channel block (1: NHWC), for operations without their own.
  unsigned DefaultActBlock = 1;
};

/// Whether command kind `kind` may take semantic parameter `id` (the allowed
/// kinds column of runtime/hal/npucc_params.h).
bool paramAllowedFor(int id, int kind);

} // namespace npucc::target
