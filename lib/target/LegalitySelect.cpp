//===- LegalitySelect.cpp - Strides by selection --------------------------===//
//
// See LegalityChecker.h: a conv or depthwise stride the NPU does not offer
// natively, run as a stride-1 command plus the select pool stage
// (docs/target.md, "Strides by selection").
//
//===----------------------------------------------------------------------===//
#include "LegalityChecker.h"

#include "../../runtime/hal/npucc_params.h"

#include <algorithm>

namespace npucc::target::legality {

/// A stride s the conv/depthwise does not offer natively, where the pool
/// stage is select with an s x s window: the command runs the convolution at
/// stride 1 over exactly the model's output times s rows and columns (whole
/// windows) and keeps pixel (offY, offX) of each window. Without implied
/// padding the model's top/left padding is kept (offset 0) and the bottom /
/// right padding grows to complete the last window (the extra rows only feed
/// dropped pixels); with implied padding P the offset is P minus the model's
/// padding and the padded image must be whole windows. False (with a reason)
/// when it cannot; true when it does or nothing is to be done.
bool selectStrideLegal(Checker &c, NpuOp &op) {
  const OpLimits &l = *c.limits();
  int64_t s = op.strideH;
  if (l.stage(NPUCC_SLOT_POOL) != NPUCC_STAGE_POOL_SELECT || !l.allowsStride(1) ||
      (l.allowsStride(int(op.strideH)) && l.allowsStride(int(op.strideW))) || op.strideW != s ||
      std::find(l.poolKernels.begin(), l.poolKernels.end(), unsigned(s)) == l.poolKernels.end())
    return true; // native, or no selection for it (checkSpatial names the stride)
  std::string strides;
  for (int v : l.strides)
    strides += (strides.empty() ? "" : ", ") + std::to_string(v);
  std::string why = "stride " + std::to_string(s) + " by selection (" + op.kindName + ".strides [" +
                    strides + "], pool select " + std::to_string(s) + "x" + std::to_string(s) + ")";
  int64_t ext[2] = {(op.kh - 1) * op.dilH, (op.kw - 1) * op.dilW};
  int64_t in[2] = {op.inH, op.inW}, out[2] = {op.outH, op.outW};
  int64_t lead[2] = {op.padTop, op.padLeft}, trail[2] = {op.padBottom, op.padRight};
  int64_t off[2] = {0, 0};
  for (int d = 0; d < 2; ++d) {
    auto it = l.impliedPadding.find(int(d ? op.kw : op.kh));
    if (l.impliedPadding.empty() || it == l.impliedPadding.end()) {
      // Stride-1 rows r = oy * s read from the model's first row: the
      // padding after the image completes out * s rows.
      trail[d] += out[d] * s - (in[d] + lead[d] + trail[d] - ext[d]);
      if (trail[d] > int64_t(l.maxPad[d ? 3 : 1])) {
        c.fail(why + ": completing the last window needs padding " + (d ? "right " : "bottom ") +
               std::to_string(trail[d]) + ", over " + op.kindName + ".max_padding " +
               (d ? "right " : "bottom ") + std::to_string(l.maxPad[d ? 3 : 1]));
        return false;
      }
      continue;
    }
    int64_t p = int64_t(it->second);
    off[d] = p - lead[d];
    if (off[d] < 0 || off[d] >= s) {
      c.fail(why + ": padding " + std::string(d ? "left " : "top ") + std::to_string(lead[d]) +
             " but the implied padding is " + std::to_string(p) +
             " (the kept pixel would lie outside its window)");
      return false;
    }
    if (in[d] + 2 * p - ext[d] != out[d] * s) {
      c.fail(why + ": the implied padding gives " + std::to_string(in[d] + 2 * p - ext[d]) + " " +
             (d ? "columns" : "rows") + ", not the " + std::to_string(out[d]) + " whole windows " +
             "of the output (cropping or pre-padding on the CPU is not supported)");
      return false;
    }
    lead[d] = trail[d] = p;
  }
  bool offered = false;
  for (const auto &o : l.poolOffsets)
    offered = offered || (int64_t(o.first) == off[0] && int64_t(o.second) == off[1]);
  if (!offered) {
    std::string list;
    for (const auto &o : l.poolOffsets)
      list += std::string(list.empty() ? "" : ", ") + "[" + std::to_string(o.first) + ", " +
              std::to_string(o.second) + "]";
    c.fail(why + " keeps pixel [" + std::to_string(off[0]) + ", " + std::to_string(off[1]) +
           "] of each window, but the NPU offers only " + list);
    return false;
  }
  op.poolSelect = true;
  op.poolK = s;
  op.poolOffY = off[0], op.poolOffX = off[1];
  op.strideH = op.strideW = 1;
  op.outH *= s, op.outW *= s;
  op.padTop = lead[0], op.padBottom = trail[0], op.padLeft = lead[1], op.padRight = trail[1];
  c.fits("pool_k", s);
  c.fits("pool_off_y", off[0]);
  c.fits("pool_off_x", off[1]);
  c.fits("out_h", s);
  return true;
}

} // namespace npucc::target::legality
