//===- Legality.h - Which graph ops an NPU runs, and why not --------------===//
//
// placeNode() decides for one (int8) graph node whether the NPU described by
// a TargetDesc can run it, as which command kind, with the command's
// geometry and requantization; otherwise it lists every constraint of the
// description that failed, in the user's terms:
//   kernel 7x7 not in conv.kernel_sizes [1, 3, 5]
//   per-channel requantization but the NPU's conv has only per_tensor
// There is one legality function per command kind (conv, depthwise, matmul,
// pool, eltwise); the partition pass, `npucc --explain` and the lowering all
// use them, so the rules exist once. A node that passes can still fail later
// if no tiling fits the scratchpad (the lowering says so, naming the numbers).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/quant/MulShiftAdd.h"
#include "npucc/quant/Multiplier.h"
#include "npucc/target/Target.h"

#include <optional>
#include <string>
#include <vector>

namespace npucc::target {

/// A graph op as one NPU command (before tiling). Geometry in the op's own
/// terms; activations are HWC on the NPU.
struct NpuOp {
  int kind = -1;        // NPUCC_KIND_CONV, _DEPTHWISE, _MATMUL, _POOL, _ELTWISE
  std::string kindName; // "conv"
  int64_t inH = 1, inW = 1, inC = 1, outH = 1, outW = 1, outC = 1;
  int64_t kh = 1, kw = 1, strideH = 1, strideW = 1, dilH = 1, dilW = 1;
  int64_t padTop = 0, padBottom = 0, padLeft = 0, padRight = 0;
  int64_t depthMult = 1;
  int64_t m = 0, k = 0, n = 0;  // matmul: out[m][n] = A[m][k] x W[n][k]^T
  int64_t length = 0;           // eltwise elements
  int poolKind = 0;             // NPUCC_POOL_*
  bool perChannel = false;      // needs per-channel requantization
  bool roundingChanged = false; // the NPU rounds otherwise than the graph (npuRounding)
  /// The requantization stage of the NPU's pipeline is fp32_scale (binary32
  /// scales per channel, ONNX Runtime's float32 rounding, requant="fp32"),
  /// else q31 (exact rounding).
  bool fp32Scale = false;
  /// The requantization stage is shift (a rounding right shift per channel,
  /// exact rounding): the node's ratios are all powers of two 2^-s, s 0..31.
  bool rqShift = false;
  /// The requantization stage is mul_shift_add (floor(acc * mul / 2^shift) +
  /// add per channel, quant::fitMulShiftAdd within `msa`'s widths): the node
  /// runs with the fitted parameters (attributes rq_stage/rq_bits, at most one
  /// step from the exact rounding; the per-layer distance reports it).
  bool rqMsa = false;
  quant::MsaWidths msa;
  /// An average pool that requantizes (the pool command binds in_zp, out_zp,
  /// requant_mult, requant_shift): the sum of x - in_zp times the Q31
  /// multiplier of in_scale / (poolCount * out_scale), + out_zp.
  bool poolRequant = false;
  int64_t poolCount = 0; // the pixel count every window of the layer divides by
  /// The activation stage is lut256 or pwl: the layer reads a table (the act
  /// operand: quant::actLut256 of its fused clamp and fused activation, or
  /// the pwl segments of quant::pwlOf).
  bool actLut = false;
  /// The pool stage is max and the node carries a fused k x k, stride k max
  /// pool (attribute pool_max = k): outH/outW are the convolution's, the
  /// stored output is (outH / k) x (outW / k). 1: no fused pool.
  int64_t poolK = 1;
  /// The pool stage is select and the node is a conv/depthwise with stride
  /// poolK > 1 the NPU does not offer natively: the command runs it at
  /// stride 1 (strideH/W 1, outH/outW = the model's times poolK, padBottom /
  /// padRight the rows and columns that makes whole windows) and keeps pixel
  /// (poolOffY, poolOffX) of each poolK x poolK window.
  bool poolSelect = false;
  int64_t poolOffY = 0, poolOffX = 0;
  uint64_t macs = 0;
};

struct Placement {
  std::optional<NpuOp> op;          // set when the NPU runs the node
  std::string candidate;            // the command kind considered ("" when none)
  std::vector<std::string> reasons; // why not, one failed constraint each
  bool onNpu() const { return op.has_value(); }
};

struct LegalityOptions {
  /// Nodes imported with ONNX Runtime's float32 requantization (requant=fp32)
  /// may run on the NPU with its exact rounding (at most one step apart).
  /// False with an explicit `--requant fp32`.
  bool allowExactForFp32 = true;
  /// Nodes with exact requantization may run on an NPU whose requantization
  /// stage is fp32_scale (ONNX Runtime's float32 rounding, at most one step
  /// apart). False with an explicit `--requant exact`.
  bool allowFp32ForExact = true;
};

/// Where `n` runs on NPU `t`. Never fails: an op the NPU cannot run gets its
/// reasons (an op with no NPU command at all gets one reason saying so).
Placement placeNode(const ir::Node &n, const TargetDesc &t, const LegalityOptions &o = {});

/// The command kind that could run `n` ("conv", "depthwise", "matmul",
/// "pool", "eltwise"), or "" when no NPU command fits its kind; the same
/// choice placeNode makes first.
std::string candidateKindOf(const ir::Node &n);

/// Whether `t`'s pool command requantizes its averages: it binds (or fixes)
/// in_zp, out_zp, requant_mult and requant_shift (the loader takes all four
/// or none).
bool poolRequantizes(const TargetDesc &t);

/// The requantizing average's Q31 multiplier: in_scale / (count * out_scale),
/// computed as the int8 interpreter does (lib/interp/QIntNn.cpp, evalPool).
quant::QuantMultiplier poolMultiplier(double inScale, double outScale, int64_t count);

/// Markdown: a `## <name>` section with, per ONNX op an NPU command can run,
/// the command and the conditions placeNode checks with `t`'s limits and field
/// ranges; then the ops of `onnxOps` that run on the CPU only
/// (SupportedOps.cpp; docs/SUPPORTED_OPS.md is its output for the built-ins).
std::string supportedOpsMarkdown(const TargetDesc &t, const std::vector<std::string> &onnxOps);

} // namespace npucc::target
