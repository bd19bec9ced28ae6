//===- Conv.cpp - Reference Conv and ConvTranspose ------------------------===//
//
// N-D convolution (groups, strides, dilations, explicit or auto pads) and its
// transpose, as direct naive loops. Products are accumulated in double and
// rounded to the output type once at the end.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

namespace npucc::interp::detail {

namespace {

/// Common shape checks; fills the spatial shapes.
Status checkConvShapes(const ir::Node &n, const Tensor &x, const Tensor &w, const Tensor &y) {
  if (x.shape().size() < 3 || w.shape().size() != x.shape().size() ||
      y.shape().size() != x.shape().size())
    return nodeErr(n, "expects X, W and Y of equal rank >= 3, got X " + ir::shapeStr(x.shape()) +
                          ", W " + ir::shapeStr(w.shape()) + ", Y " + ir::shapeStr(y.shape()));
  if (!ir::isFloat(x.dtype()) || x.dtype() != w.dtype() || y.dtype() != x.dtype())
    return nodeErr(n, std::string("unsupported dtype ") + ir::dtypeName(x.dtype()) +
                          " (float32/float64 only)");
  return success();
}

} // namespace

EvalResult evalConv(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0], &w = *in[1];
  const Tensor *b = in.size() > 2 ? in[2] : nullptr;
  Tensor y = makeOutput(n, 0);
  NPUCC_TRY(checkConvShapes(n, x, w, y));
  const Shape &xs = x.shape(), &ws = w.shape(), &ys = y.shape();
  int64_t N = xs[0], C = xs[1], M = ws[0];
  int64_t group = n.attrInt("group", 1);
  if (group <= 0 || C % group || M % group || ws[1] != C / group || ys[1] != M || ys[0] != N)
    return nodeErr(n, "inconsistent channels: X " + ir::shapeStr(xs) + ", W " + ir::shapeStr(ws) +
                          ", group " + std::to_string(group));
  if (b && b->numElements() != M)
    return nodeErr(n, "bias has " + std::to_string(b->numElements()) + " elements, expected " +
                          std::to_string(M));
  Shape inSp(xs.begin() + 2, xs.end()), outSp(ys.begin() + 2, ys.end()),
      kSp(ws.begin() + 2, ws.end());
  auto win = resolveWindow(n, inSp, outSp, kSp);
  if (!win)
    return win.error();
  if (win->kernel != kSp)
    return nodeErr(n, "kernel_shape does not match the weights " + ir::shapeStr(ws));
  size_t r = inSp.size();
  int64_t Cg = C / group, Mg = M / group;
  int64_t inCount = ir::numElements(inSp), outCount = ir::numElements(outSp),
          kCount = ir::numElements(kSp);

  dispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *xp = x.data<T>(), *wp = w.data<T>();
    T *yp = y.data<T>();
    std::vector<int64_t> oc;
    std::vector<int64_t> kcs = allCoords(kSp); // kernel offsets, r per position
    std::vector<int64_t> offs(static_cast<size_t>(kCount));
    for (int64_t nn = 0; nn < N; ++nn)
      for (int64_t m = 0; m < M; ++m) {
        int64_t g = m / Mg;
        for (int64_t o = 0; o < outCount; ++o) {
          unravel(o, outSp, oc);
          // Input offset within one channel for every kernel position (-1: padding).
          for (int64_t k = 0; k < kCount; ++k) {
            const int64_t *kc = &kcs[static_cast<size_t>(k) * r];
            int64_t lin = 0;
            bool inside = true;
            for (size_t d = 0; d < r && inside; ++d) {
              int64_t p = oc[d] * win->strides[d] - win->padBegin[d] + kc[d] * win->dilations[d];
              inside = p >= 0 && p < inSp[d];
              lin = lin * inSp[d] + p;
            }
            offs[static_cast<size_t>(k)] = inside ? lin : -1;
          }
          double acc = b ? b->getDouble(m) : 0.0; // accumulate in double
          for (int64_t c = 0; c < Cg; ++c) {
            const T *xc = xp + (nn * C + g * Cg + c) * inCount;
            const T *wc = wp + (m * Cg + c) * kCount;
            for (int64_t k = 0; k < kCount; ++k)
              if (offs[static_cast<size_t>(k)] >= 0)
                acc += static_cast<double>(xc[offs[static_cast<size_t>(k)]]) *
                       static_cast<double>(wc[k]);
          }
          yp[(nn * M + m) * outCount + o] = static_cast<T>(acc);
        }
      }
  });
  applyFusedActivation(n, y);
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

EvalResult evalConvTranspose(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0], &w = *in[1];
  const Tensor *b = in.size() > 2 ? in[2] : nullptr;
  Tensor y = makeOutput(n, 0);
  NPUCC_TRY(checkConvShapes(n, x, w, y));
  const Shape &xs = x.shape(), &ws = w.shape(), &ys = y.shape();
  int64_t N = xs[0], C = xs[1];
  int64_t group = n.attrInt("group", 1);
  // W is [C, M/group, k...]; Y is [N, M, ...].
  if (group <= 0 || C % group || ws[0] != C || ys[1] != ws[1] * group || ys[0] != N)
    return nodeErr(n, "inconsistent channels: X " + ir::shapeStr(xs) + ", W " + ir::shapeStr(ws) +
                          ", Y " + ir::shapeStr(ys) + ", group " + std::to_string(group));
  int64_t M = ys[1], Cg = C / group, Mg = ws[1];
  if (b && b->numElements() != M)
    return nodeErr(n, "bias has " + std::to_string(b->numElements()) + " elements, expected " +
                          std::to_string(M));
  Shape inSp(xs.begin() + 2, xs.end()), outSp(ys.begin() + 2, ys.end()),
      kSp(ws.begin() + 2, ws.end());
  auto win = resolveWindow(n, inSp, outSp, kSp, /*transposed=*/true);
  if (!win)
    return win.error();
  if (win->kernel != kSp)
    return nodeErr(n, "kernel_shape does not match the weights " + ir::shapeStr(ws));
  size_t r = inSp.size();
  int64_t inCount = ir::numElements(inSp), outCount = ir::numElements(outSp),
          kCount = ir::numElements(kSp);

  // Scatter every input element through the kernel into a double accumulator.
  std::vector<double> acc(static_cast<size_t>(N * M * outCount), 0.0);
  dispatchFloat(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *xp = x.data<T>(), *wp = w.data<T>();
    std::vector<int64_t> ic;
    std::vector<int64_t> kcs = allCoords(kSp); // kernel offsets, r per position
    for (int64_t nn = 0; nn < N; ++nn)
      for (int64_t c = 0; c < C; ++c) {
        int64_t g = c / Cg;
        for (int64_t i = 0; i < inCount; ++i) {
          unravel(i, inSp, ic);
          double xv = static_cast<double>(xp[(nn * C + c) * inCount + i]);
          for (int64_t k = 0; k < kCount; ++k) {
            const int64_t *kc = &kcs[static_cast<size_t>(k) * r];
            int64_t lin = 0;
            bool inside = true;
            for (size_t d = 0; d < r && inside; ++d) {
              int64_t p = ic[d] * win->strides[d] - win->padBegin[d] + kc[d] * win->dilations[d];
              inside = p >= 0 && p < outSp[d];
              lin = lin * outSp[d] + p;
            }
            if (!inside)
              continue;
            for (int64_t m = 0; m < Mg; ++m)
              acc[static_cast<size_t>((nn * M + g * Mg + m) * outCount + lin)] +=
                  xv * static_cast<double>(wp[(c * Mg + m) * kCount + k]);
          }
        }
      }
    T *yp = y.data<T>();
    for (int64_t nn = 0; nn < N; ++nn)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t o = 0; o < outCount; ++o) {
          size_t idx = static_cast<size_t>((nn * M + m) * outCount + o);
          yp[idx] = static_cast<T>(acc[idx] + (b ? b->getDouble(m) : 0.0));
        }
  });
  applyFusedActivation(n, y);
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

} // namespace npucc::interp::detail
