//===- Common.cpp - Shared helpers of the reference interpreter -----------===//
//
// Broadcasting, strides, axis normalization, output allocation, fused
// activation clamping and node-anchored diagnostics.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <algorithm>

namespace npucc::interp::detail {

Diagnostic nodeErr(const ir::Node &n, const std::string &msg) {
  Diagnostic d(msg);
  d.atNode(n.name, n.opName());
  return d;
}

Tensor makeOutput(const ir::Node &n, size_t i) {
  const ir::Value *v = n.output(i);
  if (!v)
    return Tensor(DType::F32, {});
  return Tensor(v->dtype, v->shape);
}

Status checkShape(const ir::Node &n, size_t i, const Shape &computed) {
  const ir::Value *v = n.output(i);
  if (v && !v->shape.empty() && v->shape != computed)
    return nodeErr(n, "computed output shape " + ir::shapeStr(computed) +
                          " differs from the output value's " + ir::shapeStr(v->shape));
  return success();
}

Result<Tensor> allocOutput(const ir::Node &n, size_t i, DType t, const Shape &s) {
  NPUCC_TRY(checkShape(n, i, s));
  const ir::Value *v = n.output(i);
  if (v && v->dtype != t)
    return nodeErr(n, std::string("output value dtype ") + ir::dtypeName(v->dtype) +
                          " differs from the input's " + ir::dtypeName(t));
  return Tensor(t, s);
}

std::vector<int64_t> stridesOf(const Shape &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;)
    st[i - 1] = st[i] * s[i];
  return st;
}

bool normalizeAxis(int64_t &axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank;
}

bool broadcastShapes(const Shape &a, const Shape &b, Shape &out) {
  size_t r = std::max(a.size(), b.size());
  out.assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    // Align from the right.
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else
      return false;
  }
  return true;
}

std::vector<int64_t> broadcastIndex(const Shape &in, const Shape &out) {
  size_t r = out.size();
  // Input strides aligned to the output's rank; 0 along broadcast dims.
  std::vector<int64_t> inStrides(r, 0);
  std::vector<int64_t> st = stridesOf(in);
  size_t off = r - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    inStrides[off + i] = in[i] == 1 ? 0 : st[i];

  int64_t total = ir::numElements(out);
  std::vector<int64_t> map(static_cast<size_t>(total));
  std::vector<int64_t> idx(r, 0);
  int64_t cur = 0;
  for (int64_t e = 0; e < total; ++e) {
    map[static_cast<size_t>(e)] = cur;
    // Increment the multi-index (odometer) and the input offset with it.
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < out[d]) {
        cur += inStrides[d];
        break;
      }
      cur -= inStrides[d] * (out[d] - 1);
      idx[d] = 0;
    }
  }
  return map;
}

void applyFusedActivation(const ir::Node &n, Tensor &t) {
  bool hasMin = n.hasAttr("act_min"), hasMax = n.hasAttr("act_max");
  if (!hasMin && !hasMax)
    return;
  float lo = n.attrFloat("act_min", 0.0f), hi = n.attrFloat("act_max", 0.0f);
  dispatchFloat(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T *p = t.data<T>();
    for (int64_t i = 0; i < t.numElements(); ++i) {
      if (hasMin && p[i] < static_cast<T>(lo))
        p[i] = static_cast<T>(lo);
      if (hasMax && p[i] > static_cast<T>(hi))
        p[i] = static_cast<T>(hi);
    }
  });
}

} // namespace npucc::interp::detail

namespace npucc::interp::detail {

void unravel(int64_t lin, const Shape &shape, std::vector<int64_t> &idx) {
  idx.resize(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? lin % shape[d] : 0;
    lin = shape[d] ? lin / shape[d] : 0;
  }
}

Result<Window> resolveWindow(const ir::Node &n, const Shape &inSpatial, const Shape &outSpatial,
                             const std::vector<int64_t> &kernelDefault, bool transposed) {
  size_t r = inSpatial.size();
  Window w;
  w.kernel = n.attrInts("kernel_shape", kernelDefault);
  w.strides = n.attrInts("strides", std::vector<int64_t>(r, 1));
  w.dilations = n.attrInts("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> pads = n.attrInts("pads", std::vector<int64_t>(2 * r, 0));
  if (w.kernel.size() != r || w.strides.size() != r || w.dilations.size() != r ||
      pads.size() != 2 * r || outSpatial.size() != r)
    return nodeErr(n, "kernel_shape/strides/dilations/pads do not match the " + std::to_string(r) +
                          " spatial dims of the input");
  w.padBegin.assign(pads.begin(), pads.begin() + static_cast<long>(r));
  w.padEnd.assign(pads.begin() + static_cast<long>(r), pads.end());

  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  bool hasOutputShape = transposed && n.hasAttr("output_shape") && !n.hasAttr("pads");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" || hasOutputShape) {
    for (size_t i = 0; i < r; ++i) {
      int64_t eff = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total;
      if (transposed) {
        // ConvTranspose: total = s*(in-1) + output_padding + eff - out (may be negative).
        std::vector<int64_t> op = n.attrInts("output_padding", std::vector<int64_t>(r, 0));
        total =
            w.strides[i] * (inSpatial[i] - 1) + (i < op.size() ? op[i] : 0) + eff - outSpatial[i];
      } else {
        total = std::max<int64_t>(0, (outSpatial[i] - 1) * w.strides[i] + eff - inSpatial[i]);
      }
      // Floor division so that a negative total behaves like Python's //.
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      if (autoPad == "SAME_UPPER") {
        w.padBegin[i] = half;
        w.padEnd[i] = total - half;
      } else {
        w.padBegin[i] = total - half;
        w.padEnd[i] = half;
      }
    }
  } else if (autoPad == "VALID") {
    std::fill(w.padBegin.begin(), w.padBegin.end(), 0);
    std::fill(w.padEnd.begin(), w.padEnd.end(), 0);
  } else if (autoPad != "NOTSET") {
    return nodeErr(n, "unsupported auto_pad '" + autoPad + "'");
  }
  return w;
}

} // namespace npucc::interp::detail

namespace npucc::interp::detail {
std::vector<int64_t> allCoords(const Shape &shape) {
  int64_t count = ir::numElements(shape);
  std::vector<int64_t> all, idx;
  all.reserve(static_cast<size_t>(count) * shape.size());
  for (int64_t i = 0; i < count; ++i) {
    unravel(i, shape, idx);
    all.insert(all.end(), idx.begin(), idx.end());
  }
  return all;
}
} // namespace npucc::interp::detail
