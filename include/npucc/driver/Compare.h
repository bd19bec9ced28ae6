//===- Compare.h - Output comparison against reference tensors ------------===//
//
// Float outputs compare within a relative tolerance; quantized outputs (a
// final DequantizeLinear, a Softmax of one, or an integer output) compare in
// quantization steps (docs/quantization.md, "Checking quantized programs").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/ir/Tensor.h"
#include "npucc/lir/Program.h"
#include "npucc/support/Result.h"

#include <string>

namespace npucc::driver {

/// A data-set tensor (`file`: input_K.pb or output_K.pb) has the element type
/// and the shape (not just the element count) of the program's input or
/// output `io` (`role`: "input" or "output").
Status checkDataMatches(const ir::Tensor &t, const lir::IOBuffer &io, const std::string &file,
                        const std::string &role);

struct Comparison {
  std::string name;
  double maxAbsError = 0;  // max |got - ref|
  double maxAbsRef = 0;    // max |ref|
  double relError = 0;     // maxAbsError / maxAbsRef (maxAbsError when maxAbsRef == 0)
  int64_t firstMismatch = -1; // first index whose error exceeds the tolerance, -1 if none
  int64_t mismatches = 0;
  bool shapeMismatch = false;
  bool pass = false;
  double maxSteps = -1; // step comparisons only: the largest error in steps
};

/// Float outputs pass when every |got-ref| <= relTol * max|ref| (an absolute
/// relTol when ref is all zeros); NaN matches NaN, inf matches the same inf.
/// A NaN or negative tolerance passes nothing. Shapes must be equal.
/// Integer and bool outputs must be equal, except that `intTolerance` steps
/// are allowed (0 by default; 1 = one quantization step).
Comparison compareTensors(const ir::Tensor &got, const ir::Tensor &ref, double relTol,
                          int64_t intTolerance = 0);

/// How a graph output of a quantized program is measured.
enum class OutputKind {
  Float,       // plain float: relative tolerance
  Integer,     // int8/uint8/int32 output: integer steps
  Dequantized, // float = DequantizeLinear(q) with per-tensor (scale, zp): steps of scale
  SoftmaxOfDq, // float = Softmax(DequantizeLinear(q)): logit steps up to a per-row shift
};

struct OutputQuant {
  OutputKind kind = OutputKind::Float;
  double scale = 0;     // Dequantized / SoftmaxOfDq: the DequantizeLinear scale
  int32_t zeroPoint = 0;
  int64_t axis = -1;    // SoftmaxOfDq: normalized softmax axis
};

/// Classifies graph output `v` of a compiled graph (the producer chain above).
OutputQuant classifyOutput(const ir::Graph &g, const ir::Value &v);

/// "float", "int", "dq(s=..,zp=..)", "softmax(dq s=..)": for reports.
std::string describe(const OutputQuant &q);

/// Compares in quantization steps (Integer, Dequantized, SoftmaxOfDq):
/// - Integer: steps_i = |got_i - ref_i|.
/// - Dequantized: steps_i = |round(got_i / s) - round(ref_i / s)| (both are
///   (q - zp) * s in float32, so the rounding recovers q - zp exactly).
/// - SoftmaxOfDq: softmax only fixes the logits up to a constant per row, so
///   with d_i = (ln got_i - ln ref_i) / s (= the logit difference in steps
///   minus a per-row constant), a row's error is (max d - min d) / 2, the
///   smallest max |logit error| over all shifts; an element that is 0 in one
///   tensor only is an infinite error, 0 in both is skipped. A failing row's
///   firstMismatch is its element whose d is farthest from the row's median d
///   (the element that differs when the others agree), mismatches counts rows.
/// An element fails when its steps exceed `maxSteps` (+1e-3 for the float
/// noise of the softmax form); maxAbsError/relError are also filled in.
Comparison compareSteps(const ir::Tensor &got, const ir::Tensor &ref, const OutputQuant &q,
                        double maxSteps);

/// The C output of a graph output vs npucc's reference interpreter run on one graph of
/// the same compile (`npucc check --interp-check`; docs/testing.md):
/// - exact (the compiled graph, or the graph before the target's rewrites): in a
///   quantized program bit-exact bytes, except that a Softmax of a DequantizeLinear needs
///   identical logits only (0 steps; its float softmax may round differently); in a float
///   program within relTol (the float kernels sum in another order);
/// - not exact (the graph as imported: float QDQ arithmetic): quantized outputs (`kind`
///   not Float) within `steps` steps (compareSteps), float outputs within relTol.
struct InterpComparison {
  Comparison cmp;
  bool bitExact = false;
  std::string rule; // "bit-exact", "steps<=N" or "rel<=T"
  bool pass = false;
};
InterpComparison compareWithInterpreter(const ir::Tensor &got, const ir::Tensor &want,
                                        const OutputQuant &kind, bool quantizedProgram, bool exact,
                                        double relTol, double steps);

/// `--io int8` (passes: io-int8): a float data-set tensor for the int8 graph input or
/// output `v` (per-tensor quantization) becomes what QuantizeLinear gives, round half to
/// even and saturated; anything else is returned as it is.
ir::Tensor toIoType(const ir::Tensor &t, const ir::Value &v);
/// The float values (scale * (q - zp)) of an int8 tensor of graph output `v` with
/// per-tensor quantization; anything else is returned as it is.
ir::Tensor dequantizeIo(const ir::Tensor &t, const ir::Value &v);
/// The comparison kind of an int8 graph output `v` whose golden data is float:
/// Dequantized with v's scale and zero point (Float when `v` is not such an output).
OutputQuant ioOutputKind(const ir::Value &v);

/// True when the graph has integer values with quant params or Q/DQ nodes.
bool isQuantizedGraph(const ir::Graph &g);

} // namespace npucc::driver
