//===- CpuLowering.h - Graph IR to loop IR for the CPU kernels ------------===//
//
// lowerGraphToCpu plans the arena (lifetimes, views, in-place reuse) and asks
// each op family's lowering for the kernel calls of one node. The family
// functions (lib/lower/cpu/<Family>.cpp) only choose a kernel and its scalar
// parameters; they never print C.
//
// Kernel C API conventions (runtime/kernels/npucc_<family>.{c,h}):
//   - function names npucc_<op>_<dtype>, e.g. npucc_conv2d_f32;
//   - buffer parameters first (inputs in ONNX order, then outputs), then
//     scalars (int32_t dims/params, float constants), then `const int32_t *`
//     arrays for shapes/strides where rank varies;
//   - no allocation; scratch memory, when needed, is an extra buffer operand
//     that the lowering requests with LowerContext::scratch().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/lir/Program.h"
#include "npucc/support/Result.h"

#include <functional>
#include <string>
#include <vector>

namespace npucc::lower {

class LowerContext {
public:
  virtual ~LowerContext() = default;
  /// The buffer holding a value (arena slice, weight, model input or output).
  virtual lir::BufferRef buffer(const ir::Value *v) = 0;
  /// A scratch buffer of `bytes` live only during the current node.
  virtual lir::BufferRef scratch(int64_t bytes) = 0;
  /// Record that a runtime file (e.g. "kernels/npucc_conv.c") is needed.
  virtual void useKernelFile(const std::string &path) = 0;
  /// The scratch bytes the current node will request (asked before planning).
  virtual bool planningScratch() const { return false; }
  /// Adds an (empty) constant buffer whose data the caller fills in later;
  /// returns its index (lir::Region::Const).
  virtual int reserveConstant(const std::string &) { return -1; }
  /// A new constant buffer holding `data` (e.g. weights re-laid for a kernel at
  /// compile time), named after `name`; null (BufferRef::isNull) when the context
  /// cannot add constants, and the caller then keeps a lowering without it.
  virtual lir::BufferRef constant(const std::string &, ir::Tensor) {
    return lir::BufferRef::null();
  }
  /// CpuLowerOptions::fastKernels: int8 Conv/Gemm/MatMul may use the fast kernels
  /// (precomputed folded bias and requantization words) instead of the reference ones.
  virtual bool fastKernels() const { return false; }
  /// The node lowered right after the current one when both are placed on
  /// the NPU and it alone reads the current node's only output, once, and
  /// that output is no model output (the NPU hand-off's candidate); else null.
  virtual const ir::Node *nextNpuConsumer() const { return nullptr; }
};

class NpuLowering;

/// Per-family lowering entry points, one per file in lib/lower/cpu/.
using FamilyLowering = Status (*)(const ir::Node &, LowerContext &, std::vector<lir::Instr> &);
Status lowerConvFamily(const ir::Node &, LowerContext &, std::vector<lir::Instr> &);
Status lowerMatMulFamily(const ir::Node &, LowerContext &, std::vector<lir::Instr> &);
Status lowerPoolFamily(const ir::Node &, LowerContext &, std::vector<lir::Instr> &);
Status lowerNormFamily(const ir::Node &, LowerContext &, std::vector<lir::Instr> &);
Status lowerElementwiseFamily(const ir::Node &, LowerContext &, std::vector<lir::Instr> &);
Status lowerActivationFamily(const ir::Node &, LowerContext &, std::vector<lir::Instr> &);
Status lowerSoftmaxFamily(const ir::Node &, LowerContext &, std::vector<lir::Instr> &);
Status lowerReduceFamily(const ir::Node &, LowerContext &, std::vector<lir::Instr> &);
Status lowerDataMovementFamily(const ir::Node &, LowerContext &, std::vector<lir::Instr> &);
Status lowerMiscFamily(const ir::Node &, LowerContext &, std::vector<lir::Instr> &);

/// The family responsible for an op kind, or null (views, Constant).
FamilyLowering familyFor(ir::OpKind k);

struct CpuLowerOptions {
  int64_t arenaAlign = 16;
  /// Optional: consulted before familyFor (a null answer falls back to it).
  /// Lets tests inject fake family lowerings.
  FamilyLowering (*familyOverride)(ir::OpKind) = nullptr;
  /// Optional: lowers the nodes marked npu="KIND" (lib/lower/npu); its
  /// finish() completes the program.
  NpuLowering *npu = nullptr;
  /// `npucc --cpu-kernels=fast` (the driver's default): int8 Conv/Gemm/MatMul call
  /// npucc_conv_s8_fast.c / npucc_gemm_s8_fast.c where they apply. False (the
  /// library default, `--cpu-kernels=reference`): the reference kernels only.
  bool fastKernels = false;
  /// `npucc --patches=auto`: the leading chain of int8 (or float) convolutions and
  /// pools (and the float input's QuantizeLinear) runs in row stripes, halo rows
  /// kept, when that shrinks the arena within `patchBudget` more estimated
  /// instructions (include/npucc/lower/Patches.h). Needs fastKernels.
  bool patches = false;
  double patchBudget = 0.10;
  /// `--patches=always`: take a plan whenever its arena is smaller at all (auto
  /// wants 2% less), e.g. to test the stripes on a model that gains little.
  bool patchesAlways = false;
};

/// Plans memory and lowers every node. The graph must be fully static
/// (all shapes known) and contain no Constant nodes.
Result<lir::Program> lowerGraphToCpu(const ir::Graph &g, const CpuLowerOptions &opts = {});

} // namespace npucc::lower
