//===- CpuLowering.cpp - Graph IR to loop IR: storage, arena, kernel calls ===//
//
// lowerGraphToCpu decides where every value lives, then asks the op families
// for kernel calls:
//   1. Storage groups. Values that share bytes form a group: a view op's
//      output joins its input's group; an in-place op's output joins input 0's
//      group when that input is dead afterwards. A group is pinned to a model
//      input, a model output or a constant, or else lives in the arena. When a
//      view cannot alias (two pins), a memcpy is emitted instead.
//   2. Phase 1: every family lowering runs with planningScratch() == true to
//      report its scratch needs (arena offsets are still unknown).
//   3. The arena is planned over the "steps" (one per lowered node or copy).
//   4. Phase 2: the families run again with the real buffers.
//
//===----------------------------------------------------------------------===//
#include "LoweringInternal.h"

#include "npucc/lower/CpuLowering.h"
#include "npucc/lower/MemoryPlan.h"
#include "npucc/lower/NpuLowering.h"
#include "npucc/lower/Patches.h"
#include "npucc/lower/QuantLowering.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace npucc::lower {

using ir::Node;
using ir::OpKind;
using ir::Value;
using lir::BufferRef;
using lir::Region;

FamilyLowering familyFor(OpKind k) {
  switch (k) {
  case OpKind::Conv:
  case OpKind::ConvTranspose:
    return lowerConvFamily;
  case OpKind::Gemm:
  case OpKind::MatMul:
    return lowerMatMulFamily;
  case OpKind::MaxPool:
  case OpKind::AveragePool:
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool:
    return lowerPoolFamily;
  case OpKind::BatchNormalization:
    return lowerNormFamily;
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::PRelu:
    return lowerElementwiseFamily;
  case OpKind::Relu:
  case OpKind::LeakyRelu:
  case OpKind::Clip:
  case OpKind::Sigmoid:
  case OpKind::HardSigmoid:
  case OpKind::HardSwish:
  case OpKind::Tanh:
    return lowerActivationFamily;
  case OpKind::Softmax:
    return lowerSoftmaxFamily;
  case OpKind::ReduceMean:
    return lowerReduceFamily;
  case OpKind::Transpose:
  case OpKind::Concat:
  case OpKind::Slice:
  case OpKind::Split:
  case OpKind::Pad:
  case OpKind::Resize:
  case OpKind::Gather:
    return lowerDataMovementFamily;
  case OpKind::Cast:
  case OpKind::Shape:
  case OpKind::ConstantOfShape:
    return lowerMiscFamily;
  default:
    return nullptr;
  }
}

namespace detail {

BufferRef DriverContext::buffer(const Value *v) { return L.valueBuffer(v, Problem); }

BufferRef DriverContext::scratch(int64_t bytes) {
  Step &s = L.Steps[StepIdx];
  BufferRef b;
  b.region = Region::Arena;
  b.size = bytes;
  b.dtype = ir::DType::F32; // what most kernels' scratch is; families may retype it
  if (Planning) {
    s.scratch.push_back(bytes);
    return b;
  }
  size_t k = NextScratch++;
  if (k >= s.scratchBuffers.size() || bytes > s.scratch[k]) {
    if (Problem.empty())
      Problem = "scratch requests differ between planning and lowering (the family lowering "
                "must be deterministic)";
    return b;
  }
  b.offset = L.ArenaOffsets[s.scratchBuffers[k]];
  return b;
}

void DriverContext::useKernelFile(const std::string &path) { L.KernelFiles.insert(path); }

bool DriverContext::fastKernels() const { return L.fastKernels(); }

const Node *DriverContext::nextNpuConsumer() const {
  size_t si = size_t(StepIdx);
  if (si + 1 >= L.Steps.size())
    return nullptr;
  const Step &s = L.Steps[si], &t = L.Steps[si + 1];
  if (s.kind != Step::Lower || t.kind != Step::Lower || !s.npu || !t.npu || !s.node || !t.node)
    return nullptr;
  const Node &n = *s.node, &c = *t.node;
  if (n.outputs.size() != 1 || !n.output(0))
    return nullptr;
  const Value *v = n.output(0);
  const ir::Graph &g = L.graph();
  if (std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end())
    return nullptr;
  std::vector<Node *> users = g.users(v);
  if (users.size() != 1 || users[0] != &c)
    return nullptr;
  // Read once (the NPU lowering decides which operands it can take in place).
  return std::count(c.inputs.begin(), c.inputs.end(), v) == 1 ? &c : nullptr;
}

int DriverContext::reserveConstant(const std::string &name) { return L.reserveConstant(name); }

BufferRef DriverContext::constant(const std::string &name, ir::Tensor data) {
  BufferRef b{Region::Const, 0, 0, int64_t(data.byteSize()), data.dtype()};
  if (Planning) // planning only sizes the arena: no constant is added twice
    return b;
  b.index = L.reserveConstant(name);
  L.setConstant(b.index, std::move(data));
  return b;
}

int Lowering::reserveConstant(const std::string &name) {
  std::string n = sanitizeIdent(name), base = n;
  for (int i = 1; ConstNames.count(n); ++i)
    n = base + "_" + std::to_string(i);
  ConstNames.insert(n);
  P.constants.push_back({n, ir::Tensor(ir::DType::U8, {0})});
  return int(P.constants.size()) - 1;
}

int Lowering::constIndex(const Value *v) {
  auto it = ConstIdx.find(v);
  if (it != ConstIdx.end())
    return it->second;
  std::string base = sanitizeIdent(v->name), name = base;
  for (int i = 1; ConstNames.count(name); ++i)
    name = base + "_" + std::to_string(i);
  ConstNames.insert(name);
  int idx = int(P.constants.size());
  P.constants.push_back({name, *v->constant});
  ConstIdx[v] = idx;
  return idx;
}

BufferRef Lowering::valueBuffer(const Value *v, std::string &problem) {
  BufferRef b;
  if (!v)
    return b;
  b.size = int64_t(v->byteSize());
  b.dtype = v->dtype;
  if (v->isConstant()) {
    b.region = Region::Const;
    b.index = constIndex(v);
    return b;
  }
  auto it = GroupOf.find(v);
  if (it == GroupOf.end()) {
    if (problem.empty())
      problem = "value '" + v->name + "' has no storage";
    return b;
  }
  const Group &gr = Groups[it->second];
  switch (gr.pin) {
  case Pin::Input:
    b.region = Region::Input;
    b.index = gr.pinIndex;
    break;
  case Pin::Output:
    b.region = Region::Output;
    b.index = gr.pinIndex;
    break;
  case Pin::Const:
    b.region = Region::Const;
    b.index = constIndex(gr.constValue);
    break;
  case Pin::None:
    b.region = Region::Arena;
    b.offset = gr.offset;
    break;
  }
  return b;
}

/// True when every result of `n` has zero elements (a zero-size dimension).
static bool producesNothing(const Node &n) {
  for (const Value *v : n.outputs)
    if (v && v->numElements() > 0)
      return false;
  return true;
}

Status Lowering::lowerSteps(bool planning, std::vector<lir::Instr> *body) {
  for (size_t si = 0; si < Steps.size(); ++si) {
    Step &s = Steps[si];
    std::string comment = s.comment;
    if (comment.empty() && s.node)
      comment = s.node->name + " (" + s.node->opName() + ")";
    DriverContext ctx(*this, planning, int(si));
    std::vector<lir::Instr> instrs;
    if (s.kind == Step::Lower && producesNothing(*s.node))
      continue; // every result is empty: nothing to compute (kernels need >= 1 element)
    if (s.kind == Step::Lower || s.kind == Step::Patch) {
      if (planning)
        s.scratch.clear();
      Status st = s.kind == Step::Patch ? patch::lowerPatches(*Plan, ctx, instrs)
                  : s.npu               ? Opts.npu->lower(*s.node, ctx, instrs)
                                        : s.family(*s.node, ctx, instrs);
      if (!st) {
        Diagnostic d = st.error();
        d.inFile(G.sourceFile).atNode(s.node->name, s.node->opName());
        return d;
      }
    } else {
      lir::Instr in;
      BufferRef dst;
      if (s.dst) {
        dst = ctx.buffer(s.dst);
      } else {
        dst.region = Region::Output;
        dst.index = s.dstOutput;
        dst.size = int64_t(s.src->byteSize());
        dst.dtype = s.src->dtype;
      }
      if (s.kind == Step::Copy) {
        in.opcode = "memcpy";
        in.args = {dst, ctx.buffer(s.src)};
      } else {
        in.opcode = "memset";
        in.args = {dst, int64_t(1)};
      }
      instrs.push_back(std::move(in));
    }
    if (!ctx.Problem.empty()) {
      Diagnostic d(ctx.Problem);
      d.inFile(G.sourceFile);
      if (s.node)
        d.atNode(s.node->name, s.node->opName());
      return d;
    }
    if (body)
      for (lir::Instr &in : instrs) {
        if (in.comment.empty())
          in.comment = comment;
        body->push_back(std::move(in));
      }
  }
  return success();
}

/// The per-tensor quantization of an int8 graph input or output (--io int8).
static std::optional<std::pair<float, int32_t>> ioQuant(const Value *v) {
  if (v->dtype == ir::DType::I8 && v->quant && v->quant->scale.size() == 1 &&
      v->quant->zeroPoint.size() == 1)
    return std::make_pair(v->quant->scale[0], v->quant->zeroPoint[0]);
  return std::nullopt;
}

Result<lir::Program> Lowering::run() {
  P.modelName = G.name;
  P.arenaAlign = Opts.arenaAlign;
  for (const Value *v : G.inputs)
    P.inputs.push_back({v->name, v->dtype, v->shape, ioQuant(v)});
  for (const Value *v : G.outputs)
    if (v)
      P.outputs.push_back({v->name, v->dtype, v->shape, ioQuant(v)});
  for (const auto &v : G.values())
    for (int64_t d : v->shape)
      if (d < 0)
        return error("value '" + v->name + "' has an unknown dimension; bind it with --shape")
            .inFile(G.sourceFile);

  NPUCC_TRY(assignStorage());
  NPUCC_TRY(lowerSteps(/*planning=*/true, nullptr));

  // Arena buffers: unpinned groups, then scratch.
  for (Group &gr : Groups) {
    if (gr.pin != Pin::None)
      continue;
    int64_t size = 0;
    for (const Value *m : gr.members)
      size = std::max<int64_t>(size, int64_t(m->byteSize()));
    if (gr.last < 0)
      continue; // never written nor read (e.g. an unused Dropout mask)
    gr.arenaBuffer = int(ArenaBuffers.size());
    ArenaBuffers.push_back({size, std::min(gr.first, gr.last), gr.last});
  }
  for (size_t si = 0; si < Steps.size(); ++si)
    for (int64_t bytes : Steps[si].scratch) {
      Steps[si].scratchBuffers.push_back(int(ArenaBuffers.size()));
      ArenaBuffers.push_back({bytes, int(si), int(si)});
    }
  ArenaPlan plan = planArena(ArenaBuffers, Opts.arenaAlign);
  ArenaOffsets = plan.offsets;
  for (Group &gr : Groups)
    if (gr.arenaBuffer >= 0)
      gr.offset = ArenaOffsets[gr.arenaBuffer];
  P.arenaSize = plan.size;
  P.peakLiveBytes = peakLiveBytes(ArenaBuffers, Opts.arenaAlign);
  for (const BufferLifetime &b : ArenaBuffers)
    P.activationBytes += (b.size + Opts.arenaAlign - 1) / Opts.arenaAlign * Opts.arenaAlign;

  KernelFiles.clear();
  NPUCC_TRY(lowerSteps(/*planning=*/false, &P.body));
  P.kernelFiles.assign(KernelFiles.begin(), KernelFiles.end());
  if (Opts.npu) {
    Status st = Opts.npu->finish(P);
    if (!st)
      return std::move(st.error().inFile(G.sourceFile));
  }
  return std::move(P);
}

} // namespace detail

using detail::Lowering;

Result<lir::Program> lowerGraphToCpu(const ir::Graph &g, const CpuLowerOptions &opts) {
  if (opts.arenaAlign <= 0 || (opts.arenaAlign & (opts.arenaAlign - 1)) != 0)
    return error("arena alignment must be a power of two").inFile(g.sourceFile);
  Lowering whole(g, opts, nullptr);
  auto best = whole.run();
  if (!best || !opts.patches || !opts.fastKernels || opts.npu)
    return best;
  // Patches: the candidate plans, fewest calls first; one is taken when its arena
  // is at least 2% below the best so far (patchesAlways: below it at all).
  int64_t wholeArena = best->arenaSize;
  std::vector<patch::PatchPlan> plans = patch::candidatePlans(g, opts.patchBudget);
  std::optional<patch::PatchPlan> chosen;
  for (const patch::PatchPlan &plan : plans) {
    Lowering l(g, opts, &plan);
    auto p = l.run();
    bool smaller = opts.patchesAlways ? p && p->arenaSize < best->arenaSize
                                      : p && p->arenaSize * 50 <= best->arenaSize * 49;
    if (smaller) {
      best = std::move(p);
      chosen = plan;
    }
  }
  if (chosen && !best->body.empty())
    for (lir::Instr &in : best->body)
      if (in.comment.find("; patches: ") != std::string::npos) {
        in.comment += ", arena " + std::to_string(best->arenaSize) + " bytes vs " +
                      std::to_string(wholeArena) + " layer by layer";
        break;
      }
  return best;
}

} // namespace npucc::lower
