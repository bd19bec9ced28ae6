//===- Pool.cpp - Reference MaxPool, AveragePool and global pools ---------===//
//
// Windowed pools over N-D spatial dims with pads, strides and dilations; the
// output spatial size (hence ceil_mode) comes from the node's output Value.
// MaxPool's optional Indices output is the flat row-major (storage_order 0)
// or column-major-per-image (storage_order 1) index into X. AveragePool sums
// in double; count_include_pad counts window positions inside the padded
// input. Global pools reduce every spatial element.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <cmath>
#include <limits>

namespace npucc::interp::detail {

namespace {

struct PoolGeometry {
  int64_t N = 0, C = 0, inCount = 0, outCount = 0;
  Shape inSp, outSp;
  Window win;
};

Result<PoolGeometry> poolGeometry(const ir::Node &n, const Tensor &x, const Tensor &y) {
  const Shape &xs = x.shape(), &ys = y.shape();
  if (xs.size() < 3 || ys.size() != xs.size() || xs[0] != ys[0] || xs[1] != ys[1])
    return nodeErr(n, "expects X and Y of equal rank >= 3 with equal N and C, got " +
                          ir::shapeStr(xs) + " and " + ir::shapeStr(ys));
  if (x.dtype() != y.dtype() || x.dtype() == DType::Bool)
    return nodeErr(n, std::string("unsupported dtype ") + ir::dtypeName(x.dtype()));
  PoolGeometry g;
  g.N = xs[0];
  g.C = xs[1];
  g.inSp.assign(xs.begin() + 2, xs.end());
  g.outSp.assign(ys.begin() + 2, ys.end());
  if (!n.hasAttr("kernel_shape"))
    return nodeErr(n, "missing kernel_shape");
  auto w = resolveWindow(n, g.inSp, g.outSp, {});
  if (!w)
    return w.error();
  g.win = *w;
  g.inCount = ir::numElements(g.inSp);
  g.outCount = ir::numElements(g.outSp);
  return g;
}

} // namespace

EvalResult evalMaxPool(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor y = makeOutput(n, 0);
  auto geo = poolGeometry(n, x, y);
  if (!geo)
    return geo.error();
  const PoolGeometry &g = *geo;
  bool wantIdx = n.outputs.size() > 1 && n.output(1);
  Tensor idx = wantIdx ? makeOutput(n, 1) : Tensor();
  if (wantIdx && (idx.dtype() != DType::I64 || idx.shape() != y.shape()))
    return nodeErr(n, "Indices output must be i64 with Y's shape");
  int64_t storageOrder = n.attrInt("storage_order", 0);
  size_t r = g.inSp.size();
  std::vector<int64_t> kcs = allCoords(g.win.kernel);
  int64_t kCount = ir::numElements(g.win.kernel);
  dispatchType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *xp = x.data<T>();
    T *yp = y.data<T>();
    std::vector<int64_t> oc, pos(r);
    for (int64_t nc = 0; nc < g.N * g.C; ++nc)
      for (int64_t o = 0; o < g.outCount; ++o) {
        unravel(o, g.outSp, oc);
        bool any = false;
        T best = std::numeric_limits<T>::lowest();
        int64_t bestIdx = 0;
        for (int64_t k = 0; k < kCount; ++k) {
          const int64_t *kc = &kcs[static_cast<size_t>(k) * r];
          int64_t lin = 0;
          bool inside = true;
          for (size_t d = 0; d < r && inside; ++d) {
            pos[d] = oc[d] * g.win.strides[d] - g.win.padBegin[d] + kc[d] * g.win.dilations[d];
            inside = pos[d] >= 0 && pos[d] < g.inSp[d];
            lin = lin * g.inSp[d] + pos[d];
          }
          if (!inside)
            continue;
          T v = xp[nc * g.inCount + lin];
          if (!any || v > best) {
            best = v;
            any = true;
            if (storageOrder == 0) {
              bestIdx = nc * g.inCount + lin;
            } else { // column-major within the image: first spatial dim fastest
              int64_t cm = 0;
              for (size_t d = r; d-- > 0;)
                cm = cm * g.inSp[d] + pos[d];
              bestIdx = nc * g.inCount + cm;
            }
          }
        }
        yp[nc * g.outCount + o] = best;
        if (wantIdx)
          idx.data<int64_t>()[nc * g.outCount + o] = bestIdx;
      }
  });
  Outputs out;
  out.push_back(std::move(y));
  if (wantIdx)
    out.push_back(std::move(idx));
  return out;
}

EvalResult evalAveragePool(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor y = makeOutput(n, 0);
  auto geo = poolGeometry(n, x, y);
  if (!geo)
    return geo.error();
  const PoolGeometry &g = *geo;
  if (!ir::isFloat(x.dtype()))
    return nodeErr(n, std::string("unsupported dtype ") + ir::dtypeName(x.dtype()));
  bool includePad = n.attrInt("count_include_pad", 0) != 0;
  size_t r = g.inSp.size();
  std::vector<int64_t> kcs = allCoords(g.win.kernel);
  int64_t kCount = ir::numElements(g.win.kernel);
  dispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *xp = x.data<T>();
    T *yp = y.data<T>();
    std::vector<int64_t> oc;
    for (int64_t nc = 0; nc < g.N * g.C; ++nc)
      for (int64_t o = 0; o < g.outCount; ++o) {
        unravel(o, g.outSp, oc);
        double sum = 0.0;
        int64_t count = 0;
        for (int64_t k = 0; k < kCount; ++k) {
          const int64_t *kc = &kcs[static_cast<size_t>(k) * r];
          int64_t lin = 0;
          bool inside = true, inPadded = true;
          for (size_t d = 0; d < r; ++d) {
            int64_t p = oc[d] * g.win.strides[d] - g.win.padBegin[d] + kc[d] * g.win.dilations[d];
            inside = inside && p >= 0 && p < g.inSp[d];
            // Inside the explicitly padded input (excludes ceil_mode overhang).
            inPadded = inPadded && p < g.inSp[d] + g.win.padEnd[d];
            lin = lin * g.inSp[d] + p;
          }
          if (inside)
            sum += static_cast<double>(xp[nc * g.inCount + lin]);
          if (includePad ? inPadded : inside)
            ++count;
        }
        yp[nc * g.outCount + o] = static_cast<T>(count ? sum / static_cast<double>(count) : 0.0);
      }
  });
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

EvalResult evalGlobalPool(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  Tensor y = makeOutput(n, 0);
  const Shape &xs = x.shape();
  if (xs.size() < 2 || x.dtype() != y.dtype() || !ir::isFloat(x.dtype()) ||
      y.numElements() != xs[0] * xs[1])
    return nodeErr(n, "expects a float [N, C, ...] input and an [N, C, 1, ...] output");
  int64_t nc = xs[0] * xs[1];
  int64_t sp = nc ? x.numElements() / nc : 0;
  bool isMax = n.kind == ir::OpKind::GlobalMaxPool;
  dispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *xp = x.data<T>();
    T *yp = y.data<T>();
    for (int64_t i = 0; i < nc; ++i) {
      double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t k = 0; k < sp; ++k) {
        double v = xp[i * sp + k];
        acc = isMax ? (v > acc ? v : acc) : acc + v;
      }
      yp[i] = static_cast<T>(isMax ? acc : acc / static_cast<double>(sp));
    }
  });
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

} // namespace npucc::interp::detail
