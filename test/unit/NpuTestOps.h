//===- NpuTestOps.h - NPU operations built directly for lowering tests ----===//
//
// Geometry of a layer as target::placeNode would give it, without a graph:
// for tests of the tiler, the scheduler and the waits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/target/Legality.h"

#include "../../runtime/hal/npucc_params.h"

#include <cstdint>

namespace npucc::test {

/// A same-padded convolution H x W x C -> H x W x OC with a k x k kernel.
inline target::NpuOp sameConv(int64_t h, int64_t w, int64_t c, int64_t oc, int64_t k,
                              bool perChannel = false) {
  target::NpuOp o;
  o.kind = NPUCC_KIND_CONV;
  o.kindName = "conv";
  o.inH = o.outH = h;
  o.inW = o.outW = w;
  o.inC = c;
  o.outC = oc;
  o.kh = o.kw = k;
  o.padTop = o.padBottom = o.padLeft = o.padRight = k / 2;
  o.perChannel = perChannel;
  o.macs = uint64_t(h * w * oc * k * k * c);
  return o;
}

} // namespace npucc::test
