//===- SupportedOps.cpp - Which ONNX ops an NPU description runs, as Markdown ===//
//
// supportedOpsMarkdown() writes, for one description, the table behind
// docs/SUPPORTED_OPS.md (`npucc --list-ops=npu`): per ONNX op the NPU command
// that can run it and every condition placeNode() (Legality.cpp) checks, with
// this description's limits and field ranges filled in; every other op runs
// on the CPU. The conditions are listed in the order Legality.cpp checks
// them: a change there must change this file too (cli_test.sh compares the
// docs with the output, so a stale page fails).
//
//===----------------------------------------------------------------------===//
#include "npucc/target/Legality.h"

#include "../../runtime/hal/npucc_params.h"

#include <sstream>

namespace npucc::target {

namespace {

std::string list(const std::vector<int> &v, const char *any) {
  if (v.empty())
    return any;
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

/// "name lo..hi" (or its values) of the parameters the checks call fits() on.
std::string fields(const TargetDesc &t, const std::string &kind,
                   std::initializer_list<const char *> params) {
  std::string s;
  for (const char *p : params) {
    ParamRange r = t.paramRange(kind, p);
    std::string v;
    if (!r.bound)
      v = "= " + std::to_string(r.lo);
    else if (!r.values.empty()) {
      for (size_t i = 0; i < r.values.size(); ++i)
        v += (i ? "," : "") + std::to_string(r.values[i]);
      v = "in {" + v + "}";
    } else {
      v = std::to_string(r.lo) + ".." + std::to_string(r.hi);
      if (r.step > 1)
        v += " step " + std::to_string(r.step);
    }
    s += std::string(s.empty() ? "" : ", ") + p + " " + v;
  }
  return s;
}

void maxOf(std::vector<std::string> &c, const char *what, unsigned v) {
  if (v)
    c.push_back(std::string(what) + " <= " + std::to_string(v));
}
void multiple(std::vector<std::string> &c, const char *what, unsigned v) {
  if (v > 1)
    c.push_back(std::string(what) + " a multiple of " + std::to_string(v));
}

/// checkRequant: activations, weights, bias, requantization, clamp.
void requant(std::vector<std::string> &c, const OpLimits &l) {
  c.push_back("input and output int8, quantized per tensor");
  c.push_back("weights a constant int8 tensor, per tensor or per output channel, zero point 0");
  c.push_back("bias (if any) a constant int32 tensor, one value per output channel");
  c.push_back(std::string("requantization ") +
              (l.perChannelRequant && l.perTensorRequant ? "per tensor or per channel"
               : l.perChannelRequant                     ? "per channel only"
                                     : "per tensor only (equal weight scales)") +
              ", exact rounding (not ONNX Runtime's fp32 QLinear rounding unless "
              "--requant exact)");
  c.push_back(l.fusedClamp ? "a fused clamp (Relu, Clip) allowed" : "no fused clamp");
}

/// checkSpatial: kernel, strides, dilations, padding, widths, row tile.
void spatial(std::vector<std::string> &c, const OpLimits &l, bool dilations) {
  c.push_back("2-D NCHW, batch 1");
  c.push_back("kernel height in {" + list(l.kernelHeights, "any") + "}, width in {" +
              list(l.kernelWidths, "any") + "}");
  c.push_back("strides in {" + list(l.strides, "any") + "}");
  // Strides by selection (LegalitySelect.cpp): a select kernel not offered natively.
  if (l.stage(NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_SELECT && l.allowsStride(1)) {
    std::vector<int> sel;
    for (unsigned k : l.poolKernels)
      if (!l.allowsStride(int(k)))
        sel.push_back(int(k));
    std::string offs;
    for (const auto &o : l.poolOffsets)
      offs += std::string(offs.empty() ? "" : ", ") + "[" + std::to_string(o.first) + ", " +
              std::to_string(o.second) + "]";
    if (!sel.empty())
      c.push_back("strides in {" + list(sel, "") +
                  "} (equal in both dimensions) by selection: run at stride 1 over s x the "
                  "output rows and columns, keeping the pixel the padding implies, one of " +
                  offs + ", of each s x s window (s^2 x the MACs)");
  }
  if (dilations)
    c.push_back("dilations in {" + list(l.dilations, "any") + "}");
  c.push_back("padding at most " + std::to_string(l.maxPad[0]) + " top, " +
              std::to_string(l.maxPad[1]) + " bottom, " + std::to_string(l.maxPad[2]) + " left, " +
              std::to_string(l.maxPad[3]) + " right");
  if (l.squareKernels)
    c.push_back("square kernels only");
  if (!l.impliedPadding.empty()) {
    std::string s;
    for (const auto &[k, pad] : l.impliedPadding)
      s += (s.empty() ? "" : ", ") + std::to_string(k) + "x" + std::to_string(k) + ": " +
           std::to_string(pad);
    c.push_back("padding on every side exactly the implied padding of the kernel size (" + s +
                "); one command covers the whole image");
  }
  if (l.minInH || l.minInW)
    c.push_back("input at least " + std::to_string(l.minInH) + " rows and " +
                std::to_string(l.minInW) + " columns");
  maxOf(c, "input width", l.maxInW);
  maxOf(c, "output width", l.maxOutW);
  maxOf(c, l.impliedPadding.empty() ? "input rows of one output row" : "input rows", l.maxInH);
}

std::vector<std::string> conditions(const TargetDesc &t, const std::string &kind,
                                    bool avg = false) {
  const OpLimits &l = *t.operation(kind);
  std::vector<std::string> c;
  if (kind == "conv" || kind == "depthwise") {
    requant(c, l);
    spatial(c, l, true);
    multiple(c, "input channels", l.inChannelMultiple);
    maxOf(c, "input channels", l.maxInChannels);
    if (kind == "depthwise")
      c.push_back("channel multiplier in {" + list(l.depthMultipliers, "any") + "}");
    else
      multiple(c, "output channels", l.outChannelMultiple);
    c.push_back("fields: " +
                fields(t, kind,
                       {"in_w", "out_w", "in_h", "in_ch", "k_h", "k_w", "stride_h", "stride_w",
                        "dil_h", "dil_w", "pad_top", "pad_left", "in_zp", "out_zp"}));
  } else if (kind == "matmul") {
    c.push_back("a matrix product of an activation (leading dimensions 1) and a constant 2-D "
                "weight matrix; Gemm without transA, alpha = beta = 1");
    requant(c, l);
    maxOf(c, "k", l.maxK);
    maxOf(c, "k (input channels)", l.maxInChannels);
    multiple(c, "k", l.inChannelMultiple);
    multiple(c, "n", l.outChannelMultiple);
    c.push_back("fields: " + fields(t, kind, {"k", "in_zp", "out_zp"}));
  } else if (kind == "pool") {
    c.push_back("no Indices output, ceil_mode 0");
    const bool rq = avg && poolRequantizes(t);
    c.push_back(rq ? "input and output int8 with per-tensor quantization"
                   : "input and output int8 with the same per-tensor quantization");
    if (avg) {
      static const char *const Modes[] = {"half_away_from_zero", "half_to_even", "truncate",
                                          "floor"};
      if (!l.allowsKind("avg"))
        c.push_back("never: average pooling is not in pool.kinds");
      else if (rq)
        c.push_back("the NPU requantizes the window's sum of x - in_zp by the Q31 multiplier of "
                    "in_scale / (count * out_scale), one per layer: every window divides by the "
                    "same count (no padding, or count_include_pad)");
      else
        c.push_back(std::string("the NPU's average rounds ") + Modes[l.avgRounding % 4] +
                    " (pool.avg_rounding): only where that equals the int8 semantics for "
                    "every window, i.e. " +
                    (l.avgRounding == 0   ? "windows of an odd number of pixels"
                     : l.avgRounding == 1 ? "windows of an odd number of pixels, or of a power "
                                            "of two with an even zero point"
                                          : "windows of one pixel") +
                    " (padding excluded; count_include_pad only without padding)");
    } else if (!l.allowsKind("max")) {
      c.push_back("never: max pooling is not in pool.kinds");
    }
    spatial(c, l, false);
    multiple(c, "channels", l.inChannelMultiple);
    maxOf(c, "channels", l.maxInChannels);
    c.push_back("fields: " +
                (rq ? fields(t, kind,
                             {"in_w", "out_w", "in_h", "in_ch", "k_h", "k_w", "in_zp", "out_zp",
                              "requant_mult", "requant_shift"})
                    : fields(t, kind, {"in_w", "out_w", "in_h", "in_ch", "k_h", "k_w"})));
  } else if (kind == "eltwise") {
    c.push_back("two int8 activations of equal shape (no broadcasting, no constant operand), "
                "per-tensor quantization");
    if (!l.allowsKind("add"))
      c.push_back("never: add is not in eltwise.kinds");
    c.push_back(l.fusedClamp ? "a fused clamp allowed" : "no fused clamp");
    c.push_back("the rescale multipliers and shifts fit the fields: " +
                fields(t, kind, {"in_zp", "in2_zp", "out_zp", "left_shift"}));
  }
  return c;
}

} // namespace

std::string supportedOpsMarkdown(const TargetDesc &t, const std::vector<std::string> &onnxOps) {
  struct Row {
    const char *op, *kind, *when;
  };
  static const Row Rows[] = {{"Conv", "conv", "group 1"},
                             {"Conv", "depthwise", "group = input channels"},
                             {"Gemm", "matmul", ""},
                             {"MatMul", "matmul", ""},
                             {"MaxPool", "pool", ""},
                             {"AveragePool", "pool", ""},
                             {"GlobalAveragePool", "pool", "one window over the image"},
                             {"Add", "eltwise", ""}};
  std::ostringstream s;
  s << "## " << t.name << "\n\n";
  if (!t.description.empty())
    s << t.description << "\n\n";
  s << "MAC array " << t.compute.macRows << "x" << t.compute.macCols
    << ". An op runs on the NPU command named when every condition holds (`npucc --explain` "
       "names the ones a model's node fails); otherwise, and for every op not listed, on its "
       "portable C kernel on the CPU.\n\n";
  s << "| ONNX op | NPU command | conditions |\n|---|---|---|\n";
  for (const Row &r : Rows) {
    if (!t.command(r.kind) || !t.supports(r.kind)) {
      s << "| " << r.op << (*r.when ? std::string(" (") + r.when + ")" : "") << " | - | "
        << "the description has no `" << r.kind << "` operation: CPU |\n";
      continue;
    }
    s << "| " << r.op << (*r.when ? std::string(" (") + r.when + ")" : "") << " | `" << r.kind
      << "` | ";
    std::vector<std::string> c =
        conditions(t, r.kind, std::string(r.op).find("AveragePool") != std::string::npos);
    for (size_t i = 0; i < c.size(); ++i)
      s << (i ? "; " : "") << c[i];
    s << " |\n";
  }
  std::string cpu;
  for (const std::string &op : onnxOps) {
    bool listed = false;
    for (const Row &r : Rows)
      listed = listed || op == r.op;
    if (!listed)
      cpu += (cpu.empty() ? "" : ", ") + op;
  }
  s << "\nCPU only: " << cpu << ".\n";
  return s.str();
}

} // namespace npucc::target
