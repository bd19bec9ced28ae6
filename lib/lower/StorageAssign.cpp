//===- StorageAssign.cpp - Storage groups and value lifetimes --------------===//
//
// Step 1 of lowerGraphToCpu (CpuLowering.cpp): which values share bytes
// (views join their input's group, in-place ops input 0's when it is dead
// afterwards), which groups are pinned to a model input, output or constant,
// the steps in order (lowered nodes, patch stripes, copies, fills) and every
// group's first and last step, from which the arena is planned.
//
//===----------------------------------------------------------------------===//
#include "LoweringInternal.h"

#include "npucc/lower/QuantLowering.h"

#include <algorithm>

namespace npucc::lower::detail {

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

} // namespace npucc::lower::detail
