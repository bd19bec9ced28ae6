//===- TargetParseLayout.cpp - Target description: layouts and geometry ---===//
//
// The parts of a description that say how data must be laid out for the
// NPU (issue 19, phase 6):
//   - "dma": {"length_unit": N}: every DMA length is a multiple of N. The
//     compiler moves activations as NHWC rows of any byte length, so a unit
//     above 1 is accepted only when a layout pads every row to it; until
//     such a layout is described the unit is refused, naming the reason
//     (a refusal here, not a program that fails when it runs with
//     NPUCC_ERR_ALIGN). A length field held in units (a binding `shift`)
//     is such a unit too. lib/lower/npu/Proof.cpp proves each length.
//   - kernel geometry of the spatial operations: "square_kernels",
//     "implied_padding" (kernel size -> padding on every side),
//     "min_in_h"/"min_in_w". Legality.cpp gives the fallback reasons and
//     lib/lower/npu/Tiling.cpp keeps every command within them.
//   - "weights" (conv, matmul): the weight layout, "ohwi" (default),
//     "oihw", "hwio" or {"kind": "blocked", "o": bo, "i": bi}; the offsets
//     are runtime/include/npucc_layout.h's.
//   - "layout" (/compute, or conv/depthwise/pool): the activation layout
//     of the NPU's operands in the scratchpad, "nhwc" (default) or
//     {"kind": "blocked", "block": b} ([C/b][H][W][b]). System memory keeps
//     NHWC; the scheduler moves each channel group with one strided DMA
//     and writes the pad channels with the DMA's zero fill, so a blocked
//     layout needs "zero_fill" (lib/lower/npu/Schedule.cpp).
//
//===----------------------------------------------------------------------===//
#include "TargetParser.h"

#include "../../runtime/include/npucc_layout.h"

#include <algorithm>
#include <set>

namespace npucc::target {

using namespace json_reader;

void TargetParser::parseDmaUnit(const Obj &o) {
  T.dma.lengthUnit = unsigned(o.range("length_unit", 1, 1, 0xFFFF));
}

/// Why the compiler cannot honour DMA lengths in units of `unit` ("" if it
/// can). Every activation layout the compiler uses is NHWC today.
static std::string unitProblem(uint64_t unit) {
  if (unit <= 1)
    return "";
  return "NHWC rows can have any length; a DMA length unit of " + std::to_string(unit) +
         " needs a layout that pads rows to it";
}

void TargetParser::checkDmaUnit(const ParamRange &length) const {
  const uint64_t unit = T.dma.lengthUnit;
  const uint64_t step = length.bound ? uint64_t(length.step) : 1;
  const std::string held = "the dma command holds 'length' in units of " + std::to_string(step) +
                           " (shift " + std::to_string(__builtin_ctzll(step)) + ")";
  if (step > 1 && unit == 1)
    fail("/commands/dma/params/length", held + ": " + unitProblem(step));
  if (step > 1 && (unit % step || uint64_t(length.lo) % step))
    fail("/commands/dma/params/length",
         held + ", which cannot carry every multiple of /dma/length_unit " + std::to_string(unit));
  if (std::string why = unitProblem(unit); !why.empty())
    fail("/dma/length_unit", why);
}

void TargetParser::parseGeometry(const std::string &name, const Obj &lo, OpLimits &l) const {
  l.minInH = unsigned(lo.range("min_in_h", 0, 0, 0xFFFFFFFFu));
  l.minInW = unsigned(lo.range("min_in_w", 0, 0, 0xFFFFFFFFu));
  if (l.maxInH && l.minInH > l.maxInH)
    fail(lo.at("min_in_h"),
         "min_in_h " + std::to_string(l.minInH) + " exceeds max_in_h " + std::to_string(l.maxInH));
  if (l.maxInW && l.minInW > l.maxInW)
    fail(lo.at("min_in_w"),
         "min_in_w " + std::to_string(l.minInW) + " exceeds max_in_w " + std::to_string(l.maxInW));
  l.squareKernels = lo.boolean("square_kernels", false);
  if (l.squareKernels) {
    bool any = false;
    for (int k : l.kernelHeights)
      any |= std::find(l.kernelWidths.begin(), l.kernelWidths.end(), k) != l.kernelWidths.end();
    if (!any)
      fail(lo.at("square_kernels"), "operation '" + name +
                                        "' has square kernels, but no size is "
                                        "both in " +
                                        l.kernelHeightsKey + " and " + l.kernelWidthsKey);
  }
  const json *ip = lo.opt("implied_padding");
  if (!ip)
    return;
  Obj po(*ip, lo.at("implied_padding"));
  std::set<int> sizes(l.kernelHeights.begin(), l.kernelHeights.end());
  sizes.insert(l.kernelWidths.begin(), l.kernelWidths.end());
  unsigned widest = 0;
  for (auto it = ip->begin(); it != ip->end(); ++it) {
    const std::string &key = it.key();
    std::string p = po.at(key);
    int k = 0;
    if (key.empty() || key.size() > 5 || key.find_first_not_of("0123456789") != std::string::npos ||
        (k = std::stoi(key)) < 1)
      fail(p, "expected a kernel size (a positive integer), got " + shortQuote(key));
    if (!sizes.count(k))
      fail(p, "kernel size " + key + " is not one of operation '" + name + "''s kernel sizes");
    unsigned pad = unsigned(po.range(key, 0, 0xFFFF));
    l.impliedPadding[k] = pad;
    widest = std::max(widest, pad);
  }
  po.done();
  for (int k : sizes)
    if (!l.impliedPadding.count(k))
      fail(po.path(), "kernel size " + std::to_string(k) + " of operation '" + name +
                          "' has no implied padding (the NPU pads every kernel it runs)");
  // The NPU pads by itself: the padding it applies is what the operation
  // takes, unless max_padding says otherwise.
  static const char *const Sides[] = {"top", "bottom", "left", "right"};
  if (!lo.has("max_padding"))
    l.maxPad.fill(widest);
  else
    for (size_t i = 0; i < 4; ++i)
      if (l.maxPad[i] < widest)
        fail(lo.at("max_padding"), std::string("max_padding ") + Sides[i] + " " +
                                       std::to_string(l.maxPad[i]) +
                                       " is below the implied padding " + std::to_string(widest));
}

void TargetParser::parseWeights(const Obj &lo, OpLimits &l) const {
  const json *w = lo.opt("weights");
  if (!w)
    return;
  std::string p = lo.at("weights");
  if (w->is_string()) {
    static const char *const Names[] = {"ohwi", "oihw", "hwio"};
    std::string s = w->get<std::string>();
    for (unsigned k = 0; k < 3; ++k)
      if (s == Names[k]) {
        l.weightLayout = k;
        return;
      }
    fail(p, "unknown weight layout " + shortQuote(s) +
                " (expected ohwi, oihw, hwio or {\"kind\": \"blocked\", \"o\": N, \"i\": M})");
  }
  Obj b(*w, p);
  std::string kind = b.str("kind");
  if (kind != "blocked")
    fail(b.at("kind"), "unknown weight layout kind " + shortQuote(kind) +
                           " (expected blocked; the others are strings: ohwi, oihw, hwio)");
  l.weightLayout = NPUCC_WL_BLOCKED;
  l.weightBlockO = unsigned(b.range("o", 1, 0xFFFF));
  l.weightBlockI = unsigned(b.range("i", 1, 0xFFFF));
  b.done();
}

unsigned TargetParser::parseActLayout(const json &v, const std::string &path) const {
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s == "nhwc")
      return 1;
    fail(path, "unknown activation layout " + shortQuote(s) +
                   " (expected nhwc or {\"kind\": \"blocked\", \"block\": N})");
  }
  Obj b(v, path);
  std::string kind = b.str("kind");
  if (kind == "planar")
    fail(b.at("kind"), "the planar activation layout is not supported yet (nhwc or blocked)");
  if (kind != "blocked")
    fail(b.at("kind"), "unknown activation layout kind " + shortQuote(kind) +
                           " (expected blocked; nhwc is a string)");
  // A block of 1 would be [C][H][W] (planar without row padding): not offered.
  unsigned block = unsigned(b.range("block", 2, 0xFFFF));
  b.done();
  if (block > 1 && !T.dma.zeroFill)
    fail(path, "a blocked layout pads channels to a multiple of " + std::to_string(block) +
                   "; the compiler writes the pad with the DMA's zero fill, which /dma does not "
                   "have (\"zero_fill\": true)");
  return block;
}

} // namespace npucc::target
