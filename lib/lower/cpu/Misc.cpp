//===- Misc.cpp - CPU lowering of Cast, Shape, ConstantOfShape, copies, Resize
//
//   Cast              npucc_cast_<from>_<to> (runtime/kernels/npucc_cast.c);
//                     a same-type Cast is a memcpy.
//   Shape             npucc_ints_to_i64 with the static shape as an array.
//   ConstantOfShape   npucc_fill with the value's bytes (npucc_move.c).
//   Identity, Dropout and the view ops, when the planner asks for a real
//                     copy: memcpy (Dropout's optional mask: all true).
//   Resize            (lowerResizeCpu, called by the DataMovement family)
//                     per-axis source tables computed here from the
//                     coordinate transformation and nearest modes: nearest
//                     uses npucc_remap, linear npucc_resize_bilinear_f32
//                     (only the last two axes change) or
//                     npucc_resize_linear_f32_nd (runtime/kernels/npucc_resize.c).
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuLowering.h"

#include <cmath>
#include <limits>

namespace npucc::lower {

using ir::DType;
using ir::Node;
using ir::OpKind;
using ir::Shape;
using ir::Value;

Status lowerResizeCpu(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out);

namespace {

Diagnostic nodeErr(const Node &n, const std::string &msg) {
  return error(msg).atNode(n.name, n.opName());
}

lir::Instr makeCall(const Node &n, const std::string &callee, std::vector<lir::Arg> args) {
  lir::Instr in;
  in.opcode = "call";
  in.callee = callee;
  in.args = std::move(args);
  in.comment = n.name + " (" + n.opName() + ")";
  return in;
}

lir::Instr makeCopy(const Node &n, lir::BufferRef dst, lir::BufferRef src) {
  lir::Instr in;
  in.opcode = "memcpy";
  in.args = {dst, src};
  in.comment = n.name + " (" + n.opName() + ")";
  return in;
}

/// Source coordinate of output index o along one axis (ONNX Resize). The
/// "resized length" of align_corners, pytorch_half_pixel and
/// tf_crop_and_resize is the integer output length `outLen`, as in ONNX
/// Runtime and PyTorch (ONNX's own test data for two downsampling
/// align_corners cases take scale * in instead; docs/ops.md, "Resize").
Result<double> sourceCoord(const Node &n, const std::string &mode, int64_t o, double scale,
                           int64_t in, int64_t outLen, double roiStart, double roiEnd) {
  double x = double(o), len = double(outLen);
  if (mode == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel")
    return len > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners")
    return len == 1 ? 0.0 : x * double(in - 1) / (len - 1);
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  if (mode == "half_pixel_symmetric") {
    double adj = double(outLen) / (scale * double(in));
    double center = double(in) / 2.0;
    return center * (1.0 - adj) + (x + 0.5) / scale - 0.5;
  }
  if (mode == "tf_crop_and_resize")
    return len > 1
               ? roiStart * double(in - 1) + x * (roiEnd - roiStart) * double(in - 1) / (len - 1)
               : 0.5 * (roiStart + roiEnd) * double(in - 1);
  return nodeErr(n, "coordinate_transformation_mode '" + mode + "' not supported");
}

Status lowerCast(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const Value *x = n.input(0), *y = n.output(0);
  ctx.useKernelFile("kernels/npucc_cast.c");
  if (y->numElements() == 0)
    return success();
  if (x->dtype == y->dtype) {
    out.push_back(makeCopy(n, ctx.buffer(y), ctx.buffer(x)));
    return success();
  }
  out.push_back(makeCall(
      n, std::string("npucc_cast_") + ir::dtypeName(x->dtype) + "_" + ir::dtypeName(y->dtype),
      {ctx.buffer(x), ctx.buffer(y), y->numElements()}));
  return success();
}

Status lowerShape(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const Value *x = n.input(0), *y = n.output(0);
  if (y->dtype != DType::I64)
    return nodeErr(n, "Shape output must be i64");
  int64_t rank = int64_t(x->shape.size());
  int64_t start = n.attrInt("start", 0), end = n.attrInt("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> dims;
  for (int64_t k = start; k < end; ++k)
    dims.push_back(x->shape[size_t(k)]);
  if (int64_t(dims.size()) != y->numElements())
    return nodeErr(n, "output has " + std::to_string(y->numElements()) + " elements, expected " +
                          std::to_string(dims.size()));
  ctx.useKernelFile("kernels/npucc_cast.c");
  if (!dims.empty())
    out.push_back(makeCall(n, "npucc_ints_to_i64",
                           {ctx.buffer(y), int64_t(dims.size()), lir::IntArray{dims}}));
  return success();
}

Status emitFill(const Node &n, LowerContext &ctx, const Value *y, const ir::Tensor &value,
                std::vector<lir::Instr> &out) {
  if (value.dtype() != y->dtype || value.numElements() < 1)
    return nodeErr(n, "fill value must be one element of the output type");
  std::vector<int64_t> bytes;
  for (size_t b = 0; b < ir::dtypeSize(y->dtype); ++b)
    bytes.push_back(value.raw()[b]);
  ctx.useKernelFile("kernels/npucc_move.c");
  if (y->numElements() > 0)
    out.push_back(
        makeCall(n, "npucc_fill",
                 {ctx.buffer(y), y->numElements(), int64_t(bytes.size()), lir::IntArray{bytes}}));
  return success();
}

} // namespace

Status lowerMiscFamily(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const Value *y = n.output(0);
  if (!y)
    return nodeErr(n, "missing output");
  if (int64_t(y->byteSize()) > std::numeric_limits<int32_t>::max())
    return nodeErr(n, "tensor too large for the CPU kernels");
  switch (n.kind) {
  case OpKind::Cast:
    if (!n.input(0))
      return nodeErr(n, "missing input");
    return lowerCast(n, ctx, out);
  case OpKind::Shape:
    if (!n.input(0))
      return nodeErr(n, "missing input");
    return lowerShape(n, ctx, out);
  case OpKind::ConstantOfShape: {
    if (const ir::Tensor *t = n.attrTensor("value"))
      return emitFill(n, ctx, y, *t, out);
    return emitFill(n, ctx, y, ir::Tensor(y->dtype, {1}), out);
  }
  case OpKind::Resize:
    return lowerResizeCpu(n, ctx, out);
  case OpKind::Identity:
  case OpKind::Dropout:
  case OpKind::Reshape:
  case OpKind::Flatten:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze: {
    const Value *x = n.input(0);
    if (!x || x->byteSize() != y->byteSize())
      return nodeErr(n, "copy between buffers of different sizes");
    if (y->byteSize() > 0)
      out.push_back(makeCopy(n, ctx.buffer(y), ctx.buffer(x)));
    if (n.kind == OpKind::Dropout && n.output(1)) {
      ir::Tensor one(n.output(1)->dtype, {1});
      one.setInt(0, 1);
      return emitFill(n, ctx, n.output(1), one, out);
    }
    return success();
  }
  default:
    return nodeErr(n, "no CPU lowering for this op");
  }
}

Status lowerResizeCpu(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!x || !y)
    return nodeErr(n, "missing input or output");
  if (x->dtype != y->dtype)
    return nodeErr(n, "input and output element types differ");
  size_t rank = x->shape.size();
  if (y->shape.size() != rank)
    return nodeErr(n, "input and output ranks differ");
  if (rank == 0 || rank > 6)
    return nodeErr(n, "rank " + std::to_string(rank) + " not supported");
  std::string mode = n.attrString("mode", "nearest");
  std::string ctm = n.attrString("coordinate_transformation_mode", "half_pixel");
  std::string nearest = n.attrString("nearest_mode", "round_prefer_floor");
  if (n.attrInt("antialias", 0) != 0)
    return nodeErr(n, "antialias not supported");
  if (mode != "nearest" && mode != "linear")
    return nodeErr(n, "mode '" + mode + "' not supported");
  std::string policy = n.attrString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch")
    return nodeErr(n, "keep_aspect_ratio_policy '" + policy + "' not supported");

  // Axes the scales/roi refer to (opset 18), else all.
  std::vector<int64_t> axes = n.attrInts("axes");
  if (axes.empty())
    for (size_t k = 0; k < rank; ++k)
      axes.push_back(int64_t(k));
  for (int64_t &a : axes) {
    if (a < 0)
      a += int64_t(rank);
    if (a < 0 || a >= int64_t(rank))
      return nodeErr(n, "axes out of range");
  }
  std::vector<double> scale(rank), roiS(rank, 0.0), roiE(rank, 1.0);
  for (size_t k = 0; k < rank; ++k)
    scale[k] = x->shape[k] > 0 ? double(y->shape[k]) / double(x->shape[k]) : 1.0;
  bool hasSizes = n.input(3) && n.input(3)->numElements() > 0;
  if (const Value *sc = n.input(2); sc && sc->numElements() > 0 && !hasSizes) {
    if (!sc->isConstant())
      return nodeErr(n, "Resize scales must be a constant value");
    if (size_t(sc->numElements()) != axes.size())
      return nodeErr(n, "scales has " + std::to_string(sc->numElements()) + " entries");
    for (size_t i = 0; i < axes.size(); ++i) {
      double s = sc->constant->getDouble(int64_t(i));
      if (!(s > 0))
        return nodeErr(n, "scales must be positive");
      scale[size_t(axes[i])] = s;
    }
  }
  if (ctm == "tf_crop_and_resize") {
    const Value *roi = n.input(1);
    if (!roi || !roi->isConstant() || size_t(roi->numElements()) != 2 * axes.size())
      return nodeErr(n, "tf_crop_and_resize needs a constant roi");
    for (size_t i = 0; i < axes.size(); ++i) {
      roiS[size_t(axes[i])] = roi->constant->getDouble(int64_t(i));
      roiE[size_t(axes[i])] = roi->constant->getDouble(int64_t(i + axes.size()));
    }
  }
  if (y->numElements() == 0)
    return success();
  if (x->numElements() == 0)
    return nodeErr(n, "cannot resize an empty tensor");
  bool linear = mode == "linear";
  if (linear && x->dtype != DType::F32)
    return nodeErr(n, std::string("linear mode on ") + ir::dtypeName(x->dtype) + " not supported");
  if (linear && ctm == "tf_crop_and_resize")
    return nodeErr(n, "linear tf_crop_and_resize not supported");

  // Per-axis tables. Nearest: one source index per output coordinate (-1 =
  // extrapolation value). Linear: (i0, i1) and the weight of i1.
  std::vector<std::vector<int64_t>> idx(rank);
  std::vector<std::vector<float>> wts(rank);
  std::vector<bool> identity(rank, true);
  for (size_t k = 0; k < rank; ++k) {
    int64_t in = x->shape[k], on = y->shape[k];
    // Nearest leaves an axis of scale 1 as it is (ONNX Runtime; without this,
    // tf_half_pixel_for_nn with ceil read channel c + 1 for channel c).
    bool keepAxis = !linear && scale[k] == 1.0 && in == on && ctm != "tf_crop_and_resize";
    for (int64_t o = 0; o < on && keepAxis; ++o)
      idx[k].push_back(o);
    for (int64_t o = 0; o < on && !keepAxis; ++o) {
      auto c = sourceCoord(n, ctm, o, scale[k], in, on, roiS[k], roiE[k]);
      if (!c)
        return c.error();
      double v = *c;
      if (linear) {
        double f = std::floor(v);
        int64_t i0 = int64_t(f), i1 = i0 + 1;
        float w = float(v - f);
        i0 = std::clamp<int64_t>(i0, 0, in - 1);
        i1 = std::clamp<int64_t>(i1, 0, in - 1);
        if (i0 == i1)
          w = 0.0f;
        idx[k].push_back(i0);
        idx[k].push_back(i1);
        wts[k].push_back(w);
        if (i0 != o || w != 0.0f || in != on)
          identity[k] = false;
        continue;
      }
      int64_t i;
      if (ctm == "tf_crop_and_resize" && (v < 0 || v > double(in - 1))) {
        i = -1;
      } else {
        double fl = std::floor(v);
        if (nearest == "round_prefer_floor")
          i = int64_t(v == fl + 0.5 ? fl : std::round(v));
        else if (nearest == "round_prefer_ceil")
          i = int64_t(v == fl + 0.5 ? fl + 1.0 : std::round(v));
        else if (nearest == "floor")
          i = int64_t(fl);
        else if (nearest == "ceil")
          i = int64_t(std::ceil(v));
        else
          return nodeErr(n, "nearest_mode '" + nearest + "' not supported");
        i = std::clamp<int64_t>(i, 0, in - 1);
      }
      idx[k].push_back(i);
      if (i != o || in != on)
        identity[k] = false;
    }
  }

  if (!linear) {
    std::vector<int64_t> mapOff, maps, padBytes;
    for (size_t k = 0; k < rank; ++k) {
      if (identity[k]) {
        mapOff.push_back(-1);
        continue;
      }
      mapOff.push_back(int64_t(maps.size()));
      maps.insert(maps.end(), idx[k].begin(), idx[k].end());
    }
    if (ctm == "tf_crop_and_resize") {
      ir::Tensor t(x->dtype, {1});
      t.setDouble(0, n.attrFloat("extrapolation_value", 0.0f));
      for (size_t b = 0; b < ir::dtypeSize(x->dtype); ++b)
        padBytes.push_back(t.raw()[b]);
    }
    ctx.useKernelFile("kernels/npucc_move.c");
    if (maps.empty()) {
      out.push_back(makeCopy(n, ctx.buffer(y), ctx.buffer(x)));
      return success();
    }
    out.push_back(makeCall(n, "npucc_remap",
                           {ctx.buffer(x), ctx.buffer(y), int64_t(ir::dtypeSize(x->dtype)),
                            int64_t(rank), lir::IntArray{x->shape}, lir::IntArray{y->shape},
                            lir::IntArray{mapOff}, lir::IntArray{maps}, lir::IntArray{padBytes}}));
    return success();
  }

  ctx.useKernelFile("kernels/npucc_resize.c");
  bool leadingIdentity = true;
  for (size_t k = 0; k + 2 < rank; ++k)
    leadingIdentity = leadingIdentity && identity[k];
  if (leadingIdentity) {
    int64_t planes = 1;
    for (size_t k = 0; k + 2 < rank; ++k)
      planes *= x->shape[k];
    int64_t ih = 1, oh = 1;
    std::vector<int64_t> ymap = {0, 0};
    std::vector<float> wy = {0.0f};
    if (rank >= 2) {
      ih = x->shape[rank - 2];
      oh = y->shape[rank - 2];
      ymap = idx[rank - 2];
      wy = wts[rank - 2];
    }
    out.push_back(makeCall(n, "npucc_resize_bilinear_f32",
                           {ctx.buffer(x), ctx.buffer(y), planes, ih, x->shape[rank - 1], oh,
                            y->shape[rank - 1], lir::IntArray{ymap}, lir::FloatArray{wy},
                            lir::IntArray{idx[rank - 1]}, lir::FloatArray{wts[rank - 1]}}));
    return success();
  }
  std::vector<int64_t> maps;
  std::vector<float> w;
  for (size_t k = 0; k < rank; ++k) {
    maps.insert(maps.end(), idx[k].begin(), idx[k].end());
    w.insert(w.end(), wts[k].begin(), wts[k].end());
  }
  out.push_back(makeCall(n, "npucc_resize_linear_f32_nd",
                         {ctx.buffer(x), ctx.buffer(y), int64_t(rank), lir::IntArray{x->shape},
                          lir::IntArray{y->shape}, lir::IntArray{maps}, lir::FloatArray{w}}));
  return success();
}

} // namespace npucc::lower
