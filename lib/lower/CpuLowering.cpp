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

namespace {

enum class Pin { None, Input, Output, Const };

struct Group {
  Pin pin = Pin::None;
  int pinIndex = 0;                  // input / output index
  const Value *constValue = nullptr; // Pin::Const
  std::vector<const Value *> members;
  int lastUse = -1;               // last node position reading any member (in-place legality)
  bool hasOutput = false;         // some member is a model output
  int first = INT_MAX, last = -1; // steps
  int arenaBuffer = -1;           // index into the planner's buffers
  int64_t offset = 0;
};

struct Step {
  enum Kind { Lower, Copy, Fill, Patch } kind = Lower; // Patch: the plan's stripes
  const Node *node = nullptr;
  explicit Step(Kind k, const Node *n = nullptr) : kind(k), node(n) {}
  FamilyLowering family = nullptr;
  bool npu = false;           // Lower: by CpuLowerOptions::npu
  const Value *src = nullptr; // Copy: source value
  const Value *dst = nullptr; // Copy / Fill: destination value, or
  int dstOutput = -1;         //   the model output index
  std::string comment;
  std::vector<int64_t> scratch;    // bytes requested in phase 1
  std::vector<int> scratchBuffers; // planner indices
};

std::string sanitizeIdent(const std::string &name) {
  std::string r;
  for (char c : name)
    r += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0])))
    r = "c" + r;
  return r;
}

class Lowering;

class DriverContext : public LowerContext {
public:
  DriverContext(Lowering &l, bool planning, int step) : L(l), Planning(planning), StepIdx(step) {}
  BufferRef buffer(const Value *v) override;
  BufferRef scratch(int64_t bytes) override;
  void useKernelFile(const std::string &path) override;
  bool planningScratch() const override { return Planning; }
  bool fastKernels() const override;
  const Node *nextNpuConsumer() const override;
  int reserveConstant(const std::string &name) override;
  BufferRef constant(const std::string &name, ir::Tensor data) override;
  std::string Problem; // first inconsistency seen, reported after the call

private:
  Lowering &L;
  bool Planning;
  int StepIdx;
  size_t NextScratch = 0;
};

class Lowering {
public:
  Lowering(const ir::Graph &g, const CpuLowerOptions &o, const patch::PatchPlan *plan)
      : G(g), Opts(o), Plan(plan) {}

  Result<lir::Program> run();
  bool fastKernels() const { return Opts.fastKernels; }
  const ir::Graph &graph() const { return G; }

  // Used by DriverContext.
  BufferRef valueBuffer(const Value *v, std::string &problem);
  int constIndex(const Value *v);
  int reserveConstant(const std::string &name);
  void setConstant(int index, ir::Tensor data) {
    P.constants[size_t(index)].data = std::move(data);
  }
  std::vector<Step> Steps;
  std::vector<BufferLifetime> ArenaBuffers;
  std::vector<int64_t> ArenaOffsets;
  std::set<std::string> KernelFiles;

private:
  Status assignStorage();
  int newGroup(const Value *v);
  void join(int gid, const Value *v);
  void pinOutput(int gid, const Value *v);
  int firstOutputIndex(const Value *v) const;
  void use(const Value *v, int step);
  void def(const Value *v, int step);
  Diagnostic nodeErr(const Node &n, const std::string &msg) const {
    return ir::nodeError(G, n, msg);
  }
  Status lowerSteps(bool planning, std::vector<lir::Instr> *body);

  const ir::Graph &G;
  const CpuLowerOptions &Opts;
  const patch::PatchPlan *Plan; // null: every node whole
  lir::Program P;
  std::vector<Group> Groups;
  std::unordered_map<const Value *, int> GroupOf;
  std::unordered_map<const Value *, int> LastUse;   // last node position reading a value
  std::unordered_map<const Value *, int> OutputIdx; // first model output index of a value
  std::unordered_map<const Value *, int> Uses;      // node inputs reading a value
  std::map<const Value *, int> ConstIdx;
  std::set<std::string> ConstNames;
};

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

int Lowering::newGroup(const Value *v) {
  Groups.emplace_back();
  join(int(Groups.size()) - 1, v);
  return int(Groups.size()) - 1;
}

/// Adds `v` to group `gid`, keeping the group's summary (last read, model
/// output) up to date so that the in-place test is O(1) per node.
void Lowering::join(int gid, const Value *v) {
  Group &gr = Groups[gid];
  gr.members.push_back(v);
  GroupOf[v] = gid;
  auto lu = LastUse.find(v);
  if (lu != LastUse.end())
    gr.lastUse = std::max(gr.lastUse, lu->second);
  gr.hasOutput = gr.hasOutput || firstOutputIndex(v) >= 0;
}

int Lowering::firstOutputIndex(const Value *v) const {
  auto it = OutputIdx.find(v);
  return it == OutputIdx.end() ? -1 : it->second;
}

void Lowering::pinOutput(int gid, const Value *v) {
  int j = firstOutputIndex(v);
  if (j >= 0 && !v->isConstant() && !G.isGraphInput(v)) {
    Groups[gid].pin = Pin::Output;
    Groups[gid].pinIndex = j;
  }
}

void Lowering::use(const Value *v, int step) {
  auto it = GroupOf.find(v);
  if (it == GroupOf.end())
    return;
  Group &g = Groups[it->second];
  g.last = std::max(g.last, step);
  g.first = std::min(g.first, step);
}

void Lowering::def(const Value *v, int step) { use(v, step); }

Status Lowering::assignStorage() {
  // Position of each node and the last node position using each value.
  std::unordered_map<const Node *, int> pos;
  for (size_t i = 0; i < G.nodes().size(); ++i) {
    const Node *n = G.nodes()[i].get();
    pos[n] = int(i);
    for (const Value *in : n->inputs)
      if (in) {
        LastUse[in] = int(i);
        ++Uses[in];
      }
  }
  for (size_t j = G.outputs.size(); j-- > 0;)
    OutputIdx[G.outputs[j]] = int(j);
  for (size_t i = 0; i < G.inputs.size(); ++i) {
    const Value *v = G.inputs[i];
    if (GroupOf.count(v))
      continue;
    int gid = newGroup(v);
    Groups[gid].pin = Pin::Input;
    Groups[gid].pinIndex = int(i);
  }

  for (const auto &np : G.nodes()) {
    const Node &n = *np;
    if (Plan && Plan->contains(&n)) {
      // One step runs the plan's stripes; the chain's intermediates get no storage
      // (they live in its stripe buffers), its last output is a whole value.
      if (&n != Plan->last())
        continue;
      Steps.push_back(Step(Step::Patch, &n));
      for (const Value *o : n.outputs)
        if (o) {
          if (GroupOf.count(o))
            return nodeErr(n, "value '" + o->name + "' is defined twice");
          pinOutput(newGroup(o), o);
        }
      continue;
    }
    for (const Value *in : n.inputs)
      if (in && !in->isConstant() && !GroupOf.count(in))
        return nodeErr(n, "input '" + in->name + "' is used before it is defined");

    if (n.info().flags & ir::OPF_VIEW) {
      const Value *x = n.input(0), *y = n.output(0);
      if (!x || !y)
        return nodeErr(n, "view op without input or output");
      int outIdx = firstOutputIndex(y);
      bool yPinned = outIdx >= 0;
      if (x->isConstant()) {
        int gid = newGroup(y);
        if (yPinned) {
          pinOutput(gid, y);
          Step s(Step::Copy, &n);
          s.src = x;
          s.dst = y;
          Steps.push_back(s);
        } else {
          Groups[gid].pin = Pin::Const;
          Groups[gid].constValue = x;
        }
      } else {
        int xg = GroupOf.at(x);
        if (!yPinned) {
          join(xg, y);
        } else if (Groups[xg].pin == Pin::None) {
          join(xg, y);
          pinOutput(xg, y);
        } else {
          int gid = newGroup(y);
          pinOutput(gid, y);
          Step s(Step::Copy, &n);
          s.src = x;
          s.dst = y;
          Steps.push_back(s);
        }
      }
      // Dropout's optional mask: all ones in inference.
      const Value *mask = n.output(1);
      if (mask && (Uses.count(mask) || OutputIdx.count(mask))) {
        int gid = newGroup(mask);
        pinOutput(gid, mask);
        Step s(Step::Fill, &n);
        s.dst = mask;
        Steps.push_back(s);
      }
      continue;
    }

    bool npu = Opts.npu && n.hasAttr("npu");
    // rq_stage: an NPU's requantization form (quant::msaAttrs), which the CPU
    // kernels do not have: only the NPU may run such a node.
    if (!npu && n.hasAttr("rq_stage"))
      return nodeErr(n, "has rq_stage='" + n.attrString("rq_stage", "") +
                            "' (an NPU's requantization form, set by npu-partition): the CPU "
                            "kernels cannot run it");
    // pool_max: a max pool fused into an NPU conv (npu-partition); the CPU
    // kernels have no such conv.
    if (!npu && n.hasAttr("pool_max"))
      return nodeErr(n, "has pool_max=" + std::to_string(n.attrInt("pool_max", 0)) +
                            " (a max pool fused into an NPU conv by npu-partition): the CPU "
                            "kernels cannot run it");
    FamilyLowering fam = Opts.familyOverride ? Opts.familyOverride(n.kind) : nullptr;
    if (!fam && isQuantizedNode(n))
      fam = lowerQuantizedNode;
    if (!fam)
      fam = familyFor(n.kind);
    if (!fam && !npu) {
      if (n.kind == OpKind::Constant)
        return nodeErr(n, "Constant nodes must be folded into constant values before lowering");
      return nodeErr(n, "no CPU lowering for this op");
    }
    Step s(Step::Lower, &n);
    s.family = fam;
    s.npu = npu;
    Steps.push_back(s);

    // In-place: output 0 takes input 0's bytes when input 0 is dead afterwards.
    const Value *x = n.input(0), *y = n.output(0);
    bool inplace = false;
    if (!npu && (n.info().flags & ir::OPF_INPLACE) && x && y && !x->isConstant() &&
        x->dtype == y->dtype && x->byteSize() == y->byteSize() && x->byteSize() > 0) {
      int xg = GroupOf.at(x);
      const Group &gr = Groups[xg];
      inplace = gr.pin == Pin::None && !gr.hasOutput && gr.lastUse <= pos[&n];
      for (size_t i = 1; i < n.inputs.size(); ++i)
        if (n.inputs[i] && GroupOf.count(n.inputs[i]) && GroupOf.at(n.inputs[i]) == xg)
          inplace = false;
      if (inplace) {
        join(xg, y);
        pinOutput(xg, y);
      }
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const Value *o = n.outputs[i];
      if (!o || (i == 0 && inplace))
        continue;
      if (GroupOf.count(o))
        return nodeErr(n, "value '" + o->name + "' is defined twice");
      pinOutput(newGroup(o), o);
    }
  }

  // Model outputs not already living in their output buffer get a copy.
  for (size_t j = 0; j < G.outputs.size(); ++j) {
    const Value *v = G.outputs[j];
    if (!v)
      return error("model output " + std::to_string(j) + " is absent").inFile(G.sourceFile);
    if (!v->isConstant() && !GroupOf.count(v))
      return error("model output '" + v->name + "' is never computed").inFile(G.sourceFile);
    if (!v->isConstant()) {
      const Group &gr = Groups[GroupOf.at(v)];
      if (gr.pin == Pin::Output && gr.pinIndex == int(j))
        continue;
    }
    Step s(Step::Copy);
    s.src = v;
    s.dstOutput = int(j);
    s.comment = "model output '" + v->name + "' (copy)";
    Steps.push_back(s);
  }

  // Lifetimes in steps.
  for (size_t si = 0; si < Steps.size(); ++si) {
    const Step &s = Steps[si];
    int st = int(si);
    if (s.kind == Step::Patch) {
      use(Plan->layers.front().node->input(0), st);
      for (const Value *o : s.node->outputs)
        if (o)
          def(o, st);
    } else if (s.kind == Step::Lower) {
      for (const Value *in : s.node->inputs)
        if (in)
          use(in, st);
      for (const Value *o : s.node->outputs)
        if (o)
          def(o, st);
    } else {
      if (s.src)
        use(s.src, st);
      if (s.dst)
        def(s.dst, st);
    }
  }
  return success();
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

} // namespace

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
