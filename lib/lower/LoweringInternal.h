//===- LoweringInternal.h - The CPU lowering's state (internal) -----------===//
//
// Shared by CpuLowering.cpp (the steps, phases and buffers) and
// StorageAssign.cpp (storage groups and lifetimes): the storage group of
// values sharing bytes, the step of one lowered node or copy, the lowering
// context given to the op families, and the lowering itself.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/lower/CpuLowering.h"
#include "npucc/lower/MemoryPlan.h"
#include "npucc/lower/Patches.h"

#include <cctype>
#include <climits>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace npucc::lower::detail {

using ir::Node;
using ir::OpKind;
using ir::Value;
using lir::BufferRef;
using lir::Region;

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

inline std::string sanitizeIdent(const std::string &name) {
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

} // namespace npucc::lower::detail
