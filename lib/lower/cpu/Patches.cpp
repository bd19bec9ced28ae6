//===- Patches.cpp - The loop IR of a row-stripe plan ----------------------===//
//
// lowerPatches (include/npucc/lower/Patches.h) unrolls a plan's stripes into
// kernel calls. Each layer of a stripe is lowered by the int8 family lowering
// itself (lowerQuantizedNode) on a copy of the node whose input and output
// values have the stripe's rows and whose pads are the stripe's: so the
// kernel, its scratch and its arguments are what the whole layer would get for
// that many rows. The copy's values map to the stripe buffers; its weights
// are the node's own (a constant the lowering derives, like packed weights, is
// added once and shared by the stripes). Per stripe and layer: the input rows
// are assembled in Y (halo rows, then the rows the layer before wrote to X),
// the tail that the next stripe shares goes to the layer's halo buffer, and
// the kernel writes the new output rows to X. S holds the kernels' scratch.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/Patches.h"
#include "npucc/lower/QuantLowering.h"

#include <algorithm>
#include <map>

namespace npucc::lower::patch {

using ir::Node;
using ir::Value;
using lir::BufferRef;

namespace {

int64_t alignUp(int64_t v) { return (v + 15) / 16 * 16; }

/// The context of one stripe layer's lowering: its copied values map to stripe
/// buffers, scratch comes from S one after the other, constants are shared.
class StripeCtx : public LowerContext {
public:
  StripeCtx(LowerContext &outer, std::map<std::string, BufferRef> &consts, bool dry)
      : Outer(outer), Consts(consts), Dry(dry) {}
  std::map<const Value *, BufferRef> Map;
  BufferRef S;      // the scratch region (lowering phase)
  int64_t Used = 0; // scratch bytes handed out in this call
  std::string Problem;

  BufferRef buffer(const Value *v) override {
    auto it = Map.find(v);
    return it != Map.end() ? it->second : Outer.buffer(v);
  }
  BufferRef scratch(int64_t bytes) override {
    BufferRef b = S;
    b.offset = S.offset + Used;
    b.size = bytes;
    Used += alignUp(bytes);
    if (!Dry && Used > S.size && Problem.empty())
      Problem = "a stripe's kernel scratch outgrew the planned stripe scratch";
    return b;
  }
  void useKernelFile(const std::string &path) override {
    if (!Dry)
      Outer.useKernelFile(path);
  }
  bool planningScratch() const override { return Dry || Outer.planningScratch(); }
  bool fastKernels() const override { return Outer.fastKernels(); }
  int reserveConstant(const std::string &name) override { return Outer.reserveConstant(name); }
  BufferRef constant(const std::string &name, ir::Tensor data) override {
    if (Dry) // sizes only: a non-null stand-in keeps the lowering's choice
      return BufferRef{lir::Region::Const, 0, 0, int64_t(data.byteSize()), data.dtype()};
    auto it = Consts.find(name);
    if (it != Consts.end() && it->second.size == int64_t(data.byteSize()))
      return it->second;
    BufferRef b = Outer.constant(name, std::move(data));
    if (!Outer.planningScratch())
      Consts[name] = b;
    return b;
  }

private:
  LowerContext &Outer;
  std::map<std::string, BufferRef> &Consts;
  bool Dry;
};

BufferRef slice(BufferRef base, int64_t offset, int64_t bytes, ir::DType t) {
  base.offset += offset;
  base.size = bytes;
  base.dtype = t;
  return base;
}

lir::Instr copyRows(const BufferRef &x, const BufferRef &y, int64_t rows, int64_t rowBytes,
                    int64_t xStride, int64_t yStride, int64_t xOff, int64_t yOff) {
  lir::Instr in;
  in.opcode = "call";
  in.callee = "npucc_copy_rows";
  in.args = {x, y, rows, rowBytes, xStride, yStride, xOff, yOff};
  return in;
}

/// Bytes of the step's buffers: X (output rows), Y (assembled input rows), the halo
/// buffer of every layer after the first.
struct Buffers {
  int64_t x = 16, y = 16;
  std::vector<int64_t> halo;
};

Buffers bufferSizes(const PatchPlan &p) {
  Buffers b;
  b.halo.assign(p.layers.size(), 0);
  for (const Stripe &s : p.stripes)
    for (size_t i = 0; i < p.layers.size(); ++i) {
      const Layer &l = p.layers[i];
      if (s.out[i].second <= s.out[i].first)
        continue;
      b.x = std::max(b.x, l.M * l.outRow() * (s.out[i].second - s.out[i].first));
      if (!l.quantize)
        b.y = std::max(b.y, l.C * l.inRow() * (s.in[i].end - s.in[i].begin));
      b.halo[i] = std::max(b.halo[i], l.C * l.inRow() * s.save[i]);
    }
  b.x = alignUp(b.x);
  b.y = alignUp(b.y);
  return b;
}

/// The calls of layer i of stripe s, from buffer `in` (null for the QuantizeLinear:
/// the model input) into buffer `out`.
Status lowerLayer(const PatchPlan &p, size_t si, size_t i, const BufferRef &in,
                  const BufferRef &out, StripeCtx &ctx, std::vector<lir::Instr> &instrs) {
  const Layer &l = p.layers[i];
  const Stripe &s = p.stripes[si];
  const Node &n = *l.node;
  const Value *x = n.input(0), *y = n.output(0);
  int64_t inRows = s.in[i].end - s.in[i].begin, outRows = s.out[i].second - s.out[i].first;
  Value xs = *x, ys = *y;
  xs.producer = ys.producer = nullptr;
  Node c = n;
  c.inputs[0] = &xs;
  c.outputs = {&ys};
  if (l.quantize) {
    // Plane by plane from the model input: rows [begin, end) of channel ch.
    xs.shape = {inRows, l.W};
    ys.shape = {inRows, l.W};
    BufferRef whole = ctx.buffer(x);
    for (int64_t ch = 0; ch < l.C; ++ch) {
      int64_t plane = (ch * l.win.H + s.in[i].begin) * l.W;
      ctx.Map[&xs] = slice(whole, plane * 4, inRows * l.W * 4, ir::DType::F32);
      ctx.Map[&ys] = slice(out, ch * inRows * l.W, inRows * l.W, ir::DType::I8);
      ctx.Used = 0;
      NPUCC_TRY(lowerQuantizedNode(c, ctx, instrs));
    }
    return success();
  }
  xs.shape = {1, l.C, inRows, l.W};
  ys.shape = {1, l.M, outRows, l.OW};
  std::vector<int64_t> pads = n.attrInts("pads", {0, 0, 0, 0});
  pads[0] = s.in[i].padTop;
  pads[2] = s.in[i].padBottom;
  c.attrs["pads"] = pads;
  ctx.Map[&xs] = slice(in, 0, l.C * inRows * l.inRow(), x->dtype);
  ctx.Map[&ys] = slice(out, 0, l.M * outRows * l.outRow(), y->dtype);
  ctx.Used = 0;
  if (isQuantizedNode(c))
    return lowerQuantizedNode(c, ctx, instrs);
  FamilyLowering family = familyFor(c.kind);
  if (!family)
    return error("no CPU lowering for a stripe of '" + n.name + "'");
  return family(c, ctx, instrs);
}

/// Every call of the plan into `instrs`; `dry` only sizes the kernels' scratch.
Status unroll(const PatchPlan &p, StripeCtx &ctx, const BufferRef &X, const BufferRef &Y,
              const std::vector<BufferRef> &halo, int64_t &scratchMax,
              std::vector<lir::Instr> &instrs) {
  const Layer &first = p.layers.front(), &last = p.layers.back();
  const Value *chainIn = first.node->input(0), *chainOut = last.node->output(0);
  size_t nStripes = p.stripes.size();
  for (size_t si = 0; si < nStripes; ++si) {
    const Stripe &s = p.stripes[si];
    size_t mark = instrs.size();
    std::map<size_t, std::string> share; // kernel calls: their part of the layer's work
    for (size_t i = 0; i < p.layers.size(); ++i) {
      const Layer &l = p.layers[i];
      if (s.out[i].second <= s.out[i].first)
        continue;
      int64_t r = s.in[i].end - s.in[i].begin, kept = s.kept[i], fresh = r - kept;
      int64_t row = l.inRow(), plane = r * row;
      size_t before = instrs.size();
      if (i == 0 && !l.quantize) { // the chain input's rows
        instrs.push_back(copyRows(ctx.buffer(chainIn), Y, l.C, plane, l.win.H * row, plane,
                                  s.in[i].begin * row, 0));
      } else if (i > 0) { // halo rows, then the rows the layer before just computed
        if (kept > 0)
          instrs.push_back(copyRows(halo[i], Y, l.C, kept * row, kept * row, plane, 0, 0));
        if (fresh > 0)
          instrs.push_back(copyRows(X, Y, l.C, fresh * row, fresh * row, plane, 0, kept * row));
        if (s.save[i] > 0)
          instrs.push_back(copyRows(Y, halo[i], l.C, s.save[i] * row, plane, s.save[i] * row,
                                    (r - s.save[i]) * row, 0));
      }
      for (size_t k = before; k < instrs.size(); ++k)
        instrs[k].comment = l.node->name + " (" + l.node->opName() + ")";
      size_t calls = instrs.size();
      NPUCC_TRY(lowerLayer(p, si, i, Y, X, ctx, instrs));
      scratchMax = std::max(scratchMax, ctx.Used);
      int64_t part = s.out[i].second - s.out[i].first, whole = l.win.OH;
      if (l.quantize) // one call per channel plane
        whole *= l.C;
      for (size_t k = calls; k < instrs.size(); ++k)
        share[k] = ", share " + std::to_string(part) + "/" + std::to_string(whole);
    }
    int64_t r = s.out.back().second - s.out.back().first;
    int64_t row = last.outRow();
    instrs.push_back(copyRows(X, ctx.buffer(chainOut), last.M, r * row, r * row, last.win.OH * row,
                              0, s.out.back().first * row));
    instrs.back().comment = last.node->name + " (" + last.node->opName() + ")";
    // "name (Op) patch i/n rows a..b": the report keeps attributing calls to layers;
    // ", share a/b" (a kernel call: that part of the layer's work) or ", copies N bytes"
    // give it their work (driver/Report.cpp).
    std::string tag = " patch " + std::to_string(si + 1) + "/" + std::to_string(nStripes) +
                      " rows " + std::to_string(s.out.back().first) + ".." +
                      std::to_string(s.out.back().second - 1);
    for (size_t k = mark; k < instrs.size(); ++k) {
      lir::Instr &in = instrs[k];
      in.comment += tag;
      if (share.count(k))
        in.comment += share[k];
      else if (in.callee == "npucc_copy_rows")
        in.comment +=
            ", copies " +
            std::to_string(std::get<int64_t>(in.args[2]) * std::get<int64_t>(in.args[3])) +
            " bytes";
    }
  }
  return success();
}

} // namespace

Status lowerPatches(const PatchPlan &p, LowerContext &ctx, std::vector<lir::Instr> &out) {
  if (p.layers.empty() || p.stripes.empty())
    return error("an empty patch plan");
  // Sizes first (the same in both phases): the buffers, then a dry run for the
  // kernels' scratch.
  Buffers sizes = bufferSizes(p);
  std::map<std::string, BufferRef> consts;
  int64_t scratchMax = 0;
  auto i8 = [](BufferRef b) {
    b.dtype = ir::DType::I8;
    return b;
  };
  {
    StripeCtx dry(ctx, consts, /*dry=*/true);
    BufferRef X = i8(BufferRef{}), Y = i8(BufferRef{});
    X.size = sizes.x;
    Y.size = sizes.y;
    std::vector<BufferRef> halo(p.layers.size(), Y);
    std::vector<lir::Instr> ignored;
    NPUCC_TRY(unroll(p, dry, X, Y, halo, scratchMax, ignored));
  }
  BufferRef X = i8(ctx.scratch(sizes.x)), Y = i8(ctx.scratch(sizes.y));
  std::vector<BufferRef> halo;
  for (int64_t bytes : sizes.halo)
    halo.push_back(bytes > 0 ? i8(ctx.scratch(alignUp(bytes))) : Y);
  StripeCtx real(ctx, consts, /*dry=*/false);
  real.S = ctx.scratch(std::max<int64_t>(16, alignUp(scratchMax)));
  int64_t unused = 0;
  std::vector<lir::Instr> instrs;
  NPUCC_TRY(unroll(p, real, X, Y, halo, unused, instrs));
  if (!real.Problem.empty())
    return error(real.Problem);
  ctx.useKernelFile("kernels/npucc_move.c");
  if (!instrs.empty())
    instrs.front().comment += "; " + p.summary();
  for (lir::Instr &in : instrs)
    out.push_back(std::move(in));
  return success();
}

} // namespace npucc::lower::patch
