//===- DataMovement.cpp - Reference shape and data-movement ops -----------===//
//
// Views (Flatten, Reshape, Squeeze, Unsqueeze, Identity), Dropout (inference
// copy), Transpose, Concat, Slice (negative steps, clamping per spec), Split,
// Pad (constant, reflect, edge) and Gather. These work on any dtype by
// moving elements of dtypeSize bytes. Output shapes are computed from the
// inputs (so constant folding does not depend on inferred shapes) and checked
// against the output Value's shape when that is non-scalar.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <algorithm>
#include <cstring>

namespace npucc::interp::detail {

using ir::OpKind;

namespace {

/// Axes of Squeeze/Unsqueeze: the 2nd input (opset 13) or the attribute.
std::vector<int64_t> axesOf(const ir::Node &n, const Inputs &in) {
  if (in.size() > 1 && in[1])
    return in[1]->toInts();
  return n.attrInts("axes");
}

Result<Shape> viewShape(const ir::Node &n, const Inputs &in) {
  const Shape &xs = in[0]->shape();
  int64_t rank = static_cast<int64_t>(xs.size());
  switch (n.kind) {
  case OpKind::Identity:
    return xs;
  case OpKind::Flatten: {
    int64_t axis = n.attrInt("axis", 1);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank)
      return nodeErr(n, "axis out of range");
    int64_t a = 1, b = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < axis ? a : b) *= xs[static_cast<size_t>(d)];
    return Shape{a, b};
  }
  case OpKind::Reshape: {
    std::vector<int64_t> spec = in.size() > 1 && in[1] ? in[1]->toInts() : n.attrInts("shape");
    bool allowZero = n.attrInt("allowzero", 0) != 0;
    Shape s(spec.size());
    int64_t known = 1, inferAt = -1;
    for (size_t i = 0; i < spec.size(); ++i) {
      if (spec[i] == -1) {
        if (inferAt >= 0)
          return nodeErr(n, "more than one -1 in the target shape");
        inferAt = static_cast<int64_t>(i);
        continue;
      }
      if (spec[i] == 0 && !allowZero) {
        if (i >= xs.size())
          return nodeErr(n, "0 in the target shape beyond the input rank");
        s[i] = xs[i];
      } else if (spec[i] < 0) {
        return nodeErr(n, "invalid dim " + std::to_string(spec[i]) + " in the target shape");
      } else {
        s[i] = spec[i];
      }
      known *= s[i];
    }
    if (inferAt >= 0) {
      if (known == 0 || in[0]->numElements() % known)
        return nodeErr(n, "cannot infer -1 reshaping " + ir::shapeStr(xs));
      s[static_cast<size_t>(inferAt)] = in[0]->numElements() / known;
    }
    return s;
  }
  case OpKind::Squeeze: {
    std::vector<int64_t> axes = axesOf(n, in);
    std::vector<bool> drop(xs.size(), false);
    if (axes.empty())
      for (size_t d = 0; d < xs.size(); ++d)
        drop[d] = xs[d] == 1;
    for (int64_t a : axes) {
      if (!normalizeAxis(a, rank) || xs[static_cast<size_t>(a)] != 1)
        return nodeErr(n, "cannot squeeze axis " + std::to_string(a) + " of " + ir::shapeStr(xs));
      drop[static_cast<size_t>(a)] = true;
    }
    Shape s;
    for (size_t d = 0; d < xs.size(); ++d)
      if (!drop[d])
        s.push_back(xs[d]);
    return s;
  }
  case OpKind::Unsqueeze: {
    std::vector<int64_t> axes = axesOf(n, in);
    int64_t outRank = rank + static_cast<int64_t>(axes.size());
    std::vector<bool> ins(static_cast<size_t>(outRank), false);
    for (int64_t a : axes) {
      if (!normalizeAxis(a, outRank) || ins[static_cast<size_t>(a)])
        return nodeErr(n, "invalid or repeated axis " + std::to_string(a));
      ins[static_cast<size_t>(a)] = true;
    }
    Shape s;
    size_t k = 0;
    for (size_t d = 0; d < ins.size(); ++d)
      s.push_back(ins[d] ? 1 : xs[k++]);
    return s;
  }
  default:
    return nodeErr(n, "not a view op");
  }
}

} // namespace

EvalResult evalView(const ir::Node &n, const Inputs &in) {
  auto s = viewShape(n, in);
  if (!s)
    return s.error();
  if (ir::numElements(*s) != in[0]->numElements())
    return nodeErr(n, "cannot view " + ir::shapeStr(in[0]->shape()) + " as " + ir::shapeStr(*s));
  NPUCC_TRY(checkShape(n, 0, *s));
  Tensor y = *in[0];
  y.reshape(*s);
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

EvalResult evalDropout(const ir::Node &n, const Inputs &in) {
  const Tensor *ratio = in.size() > 1 ? in[1] : nullptr;
  const Tensor *training = in.size() > 2 ? in[2] : nullptr;
  bool train = training && training->getInt(0) != 0;
  double r = ratio ? ratio->getDouble(0) : n.attrFloat("ratio", 0.5f);
  if (train && r != 0.0)
    return nodeErr(n, "training-mode Dropout (random masks) is not supported");
  Outputs out;
  out.push_back(*in[0]);
  if (n.outputs.size() > 1 && n.output(1)) {
    Tensor mask(n.output(1)->dtype, in[0]->shape());
    for (int64_t i = 0; i < mask.numElements(); ++i)
      mask.setInt(i, 1);
    out.push_back(std::move(mask));
  }
  return out;
}

EvalResult evalTranspose(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  const Shape &xs = x.shape();
  size_t r = xs.size();
  std::vector<int64_t> perm = n.attrInts("perm");
  if (perm.empty())
    for (size_t d = r; d-- > 0;)
      perm.push_back(static_cast<int64_t>(d));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t d = 0; d < sorted.size(); ++d)
    if (sorted.size() != r || sorted[d] != static_cast<int64_t>(d))
      return nodeErr(n, "perm is not a permutation of the input's " + std::to_string(r) + " dims");
  Shape ys(r);
  for (size_t d = 0; d < r; ++d)
    ys[d] = xs[static_cast<size_t>(perm[d])];
  auto y = allocOutput(n, 0, x.dtype(), ys);
  if (!y)
    return y.error();
  std::vector<int64_t> xst = stridesOf(xs), idx;
  size_t es = ir::dtypeSize(x.dtype());
  for (int64_t o = 0; o < y->numElements(); ++o) {
    unravel(o, ys, idx);
    int64_t src = 0;
    for (size_t d = 0; d < r; ++d)
      src += idx[d] * xst[static_cast<size_t>(perm[d])];
    std::memcpy(y->raw() + o * es, x.raw() + src * es, es);
  }
  Outputs out;
  out.push_back(y.take());
  return out;
}

EvalResult evalConcat(const ir::Node &n, const Inputs &in) {
  std::vector<const Tensor *> parts;
  for (const Tensor *t : in)
    if (t)
      parts.push_back(t);
  if (parts.empty())
    return nodeErr(n, "needs at least one input");
  const Shape &s0 = parts[0]->shape();
  int64_t rank = static_cast<int64_t>(s0.size());
  int64_t axis = n.attrInt("axis", 0);
  if (!normalizeAxis(axis, rank))
    return nodeErr(n, "axis " + std::to_string(n.attrInt("axis", 0)) + " out of range");
  size_t ax = static_cast<size_t>(axis);
  Shape ys = s0;
  ys[ax] = 0;
  for (const Tensor *t : parts) {
    Shape a = t->shape(), b = s0;
    if (a.size() != s0.size() || t->dtype() != parts[0]->dtype())
      return nodeErr(n, "inputs differ in rank or dtype");
    a[ax] = b[ax] = 0;
    if (a != b)
      return nodeErr(n, "input shapes " + ir::shapeStr(t->shape()) + " and " + ir::shapeStr(s0) +
                            " differ outside the concat axis");
    ys[ax] += t->shape()[ax];
  }
  auto y = allocOutput(n, 0, parts[0]->dtype(), ys);
  if (!y)
    return y.error();
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < ax; ++d)
    outer *= ys[d];
  for (size_t d = ax + 1; d < ys.size(); ++d)
    inner *= ys[d];
  size_t es = ir::dtypeSize(parts[0]->dtype());
  uint8_t *dst = y->raw();
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor *t : parts) {
      size_t chunk = static_cast<size_t>(t->shape()[ax] * inner) * es;
      if (chunk) // empty inputs may have no storage at all
        std::memcpy(dst, t->raw() + static_cast<size_t>(o) * chunk, chunk);
      dst += chunk;
    }
  Outputs out;
  out.push_back(y.take());
  return out;
}

EvalResult evalSlice(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  const Shape &xs = x.shape();
  int64_t rank = static_cast<int64_t>(xs.size());
  // Opset >= 10: inputs; opset < 10: attributes.
  std::vector<int64_t> starts = in.size() > 1 && in[1] ? in[1]->toInts() : n.attrInts("starts");
  std::vector<int64_t> ends = in.size() > 2 && in[2] ? in[2]->toInts() : n.attrInts("ends");
  std::vector<int64_t> axes = in.size() > 3 && in[3] ? in[3]->toInts() : n.attrInts("axes");
  std::vector<int64_t> steps = in.size() > 4 && in[4] ? in[4]->toInts() : std::vector<int64_t>{};
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return nodeErr(n, "starts, ends, axes and steps differ in length");
  std::vector<int64_t> first(xs.size(), 0), step(xs.size(), 1);
  Shape ys = xs;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = axes[i];
    if (!normalizeAxis(a, rank))
      return nodeErr(n, "axis " + std::to_string(axes[i]) + " out of range");
    int64_t dim = xs[static_cast<size_t>(a)], s = starts[i], e = ends[i], st = steps[i];
    if (st == 0)
      return nodeErr(n, "step 0");
    st = ir::boundedSliceStep(st, dim);
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    int64_t len = st > 0 ? (e - s + st - 1) / st : (s - e + (-st) - 1) / (-st);
    ys[static_cast<size_t>(a)] = std::max<int64_t>(0, len);
    first[static_cast<size_t>(a)] = s;
    step[static_cast<size_t>(a)] = st;
  }
  auto y = allocOutput(n, 0, x.dtype(), ys);
  if (!y)
    return y.error();
  std::vector<int64_t> xst = stridesOf(xs), idx;
  size_t es = ir::dtypeSize(x.dtype());
  for (int64_t o = 0; o < y->numElements(); ++o) {
    unravel(o, ys, idx);
    int64_t src = 0;
    for (size_t d = 0; d < xs.size(); ++d)
      src += (first[d] + idx[d] * step[d]) * xst[d];
    std::memcpy(y->raw() + o * es, x.raw() + src * es, es);
  }
  Outputs out;
  out.push_back(y.take());
  return out;
}

EvalResult evalSplit(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  const Shape &xs = x.shape();
  int64_t axis = n.attrInt("axis", 0);
  if (!normalizeAxis(axis, static_cast<int64_t>(xs.size())))
    return nodeErr(n, "axis out of range");
  size_t ax = static_cast<size_t>(axis);
  size_t nOut = n.outputs.size();
  std::vector<int64_t> sizes = in.size() > 1 && in[1] ? in[1]->toInts() : n.attrInts("split");
  if (sizes.empty()) {
    // Equal parts; the last one smaller when the dim does not divide (opset 18).
    int64_t part = (xs[ax] + static_cast<int64_t>(nOut) - 1) / static_cast<int64_t>(nOut);
    for (size_t i = 0; i < nOut; ++i)
      sizes.push_back(std::min<int64_t>(part, xs[ax] - part * static_cast<int64_t>(i)));
  }
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s;
  if (sizes.size() != nOut || total != xs[ax])
    return nodeErr(n, "split sizes do not add up to dim " + std::to_string(xs[ax]) + " over " +
                          std::to_string(nOut) + " outputs");
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < ax; ++d)
    outer *= xs[d];
  for (size_t d = ax + 1; d < xs.size(); ++d)
    inner *= xs[d];
  size_t es = ir::dtypeSize(x.dtype());
  Outputs out;
  int64_t offset = 0;
  for (size_t i = 0; i < nOut; ++i) {
    Shape ys = xs;
    ys[ax] = sizes[i];
    auto y = allocOutput(n, i, x.dtype(), ys);
    if (!y)
      return y.error();
    size_t chunk = static_cast<size_t>(sizes[i] * inner) * es;
    for (int64_t o = 0; o < outer && chunk; ++o)
      std::memcpy(y->raw() + static_cast<size_t>(o) * chunk,
                  x.raw() + static_cast<size_t>((o * xs[ax] + offset) * inner) * es, chunk);
    offset += sizes[i];
    out.push_back(y.take());
  }
  return out;
}

EvalResult evalPad(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  const Shape &xs = x.shape();
  size_t r = xs.size();
  std::vector<int64_t> pads = in.size() > 1 && in[1] ? in[1]->toInts() : n.attrInts("pads");
  const Tensor *cv = in.size() > 2 ? in[2] : nullptr;
  std::string mode = n.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return nodeErr(n, "unsupported mode '" + mode + "'");
  // Opset 18 axes input: pads only along the listed axes.
  std::vector<int64_t> begin(r, 0), end(r, 0);
  if (in.size() > 3 && in[3]) {
    std::vector<int64_t> axes = in[3]->toInts();
    if (pads.size() != 2 * axes.size())
      return nodeErr(n, "pads must have 2 entries per axis");
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i];
      if (!normalizeAxis(a, static_cast<int64_t>(r)))
        return nodeErr(n, "axis out of range");
      begin[static_cast<size_t>(a)] = pads[i];
      end[static_cast<size_t>(a)] = pads[i + axes.size()];
    }
  } else {
    if (pads.size() != 2 * r)
      return nodeErr(n, "pads must have 2*rank entries");
    for (size_t d = 0; d < r; ++d) {
      begin[d] = pads[d];
      end[d] = pads[d + r];
    }
  }
  Shape ys(r);
  for (size_t d = 0; d < r; ++d) {
    ys[d] = xs[d] + begin[d] + end[d];
    if (ys[d] < 0)
      return nodeErr(n, "negative pads remove more than the whole dim");
    if (mode != "constant" && xs[d] == 0 && ys[d] > 0)
      return nodeErr(n, "cannot " + mode + "-pad an empty dim");
  }
  auto y = allocOutput(n, 0, x.dtype(), ys);
  if (!y)
    return y.error();
  double value = cv && cv->numElements() ? cv->getDouble(0) : n.attrFloat("value", 0.0f);
  std::vector<int64_t> xst = stridesOf(xs), idx;
  size_t es = ir::dtypeSize(x.dtype());
  for (int64_t o = 0; o < y->numElements(); ++o) {
    unravel(o, ys, idx);
    int64_t src = 0;
    bool outside = false;
    for (size_t d = 0; d < r; ++d) {
      int64_t p = idx[d] - begin[d], len = xs[d];
      if (p < 0 || p >= len) {
        if (mode == "constant") {
          outside = true;
          break;
        }
        if (mode == "edge") {
          p = std::clamp<int64_t>(p, 0, len - 1);
        } else if (len == 1) {
          p = 0;
        } else { // reflect about the edge elements, repeatedly if needed
          while (p < 0 || p >= len)
            p = p < 0 ? -p : 2 * (len - 1) - p;
        }
      }
      src += p * xst[d];
    }
    if (outside)
      y->setDouble(o, value);
    else
      std::memcpy(y->raw() + o * es, x.raw() + src * es, es);
  }
  Outputs out;
  out.push_back(y.take());
  return out;
}

EvalResult evalGather(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0], &indices = *in[1];
  const Shape &xs = x.shape();
  int64_t axis = n.attrInt("axis", 0);
  if (!normalizeAxis(axis, static_cast<int64_t>(xs.size())))
    return nodeErr(n, "axis out of range");
  size_t ax = static_cast<size_t>(axis);
  if (!ir::isInteger(indices.dtype()) || indices.dtype() == DType::Bool)
    return nodeErr(n, "indices must be an integer tensor");
  Shape ys(xs.begin(), xs.begin() + static_cast<long>(ax));
  ys.insert(ys.end(), indices.shape().begin(), indices.shape().end());
  ys.insert(ys.end(), xs.begin() + static_cast<long>(ax) + 1, xs.end());
  auto y = allocOutput(n, 0, x.dtype(), ys);
  if (!y)
    return y.error();
  int64_t outer = 1, inner = 1, dim = xs[ax], nIdx = indices.numElements();
  for (size_t d = 0; d < ax; ++d)
    outer *= xs[d];
  for (size_t d = ax + 1; d < xs.size(); ++d)
    inner *= xs[d];
  size_t es = ir::dtypeSize(x.dtype());
  size_t chunk = static_cast<size_t>(inner) * es;
  for (int64_t o = 0; o < outer && chunk; ++o)
    for (int64_t i = 0; i < nIdx; ++i) {
      int64_t k = indices.getInt(i);
      if (k < 0)
        k += dim;
      if (k < 0 || k >= dim)
        return nodeErr(n, "index " + std::to_string(indices.getInt(i)) + " out of range [" +
                              std::to_string(-dim) + ", " + std::to_string(dim) + ")");
      std::memcpy(y->raw() + static_cast<size_t>(o * nIdx + i) * chunk,
                  x.raw() + static_cast<size_t>(o * dim + k) * chunk, chunk);
    }
  Outputs out;
  out.push_back(y.take());
  return out;
}

} // namespace npucc::interp::detail
