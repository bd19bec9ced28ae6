//===- Resize.cpp - Reference Resize (opset 11-13 semantics) --------------===//
//
// Modes nearest, linear and cubic over any number of dims, separably: every
// output coordinate of every dim maps back to the input through the
// coordinate_transformation_mode, giving a short list of (input index,
// weight) taps; an output element is the sum over the product of its dims'
// taps. Out-of-range taps clamp to the edge (the spec's edge padding), except
// tf_crop_and_resize, whose out-of-range coordinates yield extrapolation_value.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <cmath>

namespace npucc::interp::detail {

namespace {

struct Tap {
  int64_t index; // -1: the extrapolation value
  double weight;
};

/// Cubic convolution coefficients for the 4 taps floor(x)-1 .. floor(x)+2.
void cubicCoeffs(double r, double A, double c[4]) {
  auto far = [A](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; }; // 1<|d|<2
  auto near = [A](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };      // |d|<=1
  c[0] = far(r + 1);
  c[1] = near(r);
  c[2] = near(1 - r);
  c[3] = far(2 - r);
}

} // namespace

EvalResult evalResize(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0];
  const Tensor *roiT = in.size() > 1 ? in[1] : nullptr;
  const Tensor *scalesT = in.size() > 2 ? in[2] : nullptr;
  const Tensor *sizesT = in.size() > 3 ? in[3] : nullptr;
  Tensor y = makeOutput(n, 0);
  const Shape &xs = x.shape(), &ys = y.shape();
  size_t r = xs.size();
  if (ys.size() != r || y.dtype() != x.dtype() || x.dtype() == DType::Bool)
    return nodeErr(n, "output rank or dtype differs from the input's");

  std::string mode = n.attrString("mode", "nearest");
  std::string ctm = n.attrString("coordinate_transformation_mode", "half_pixel");
  std::string nearestMode = n.attrString("nearest_mode", "round_prefer_floor");
  double cubicA = n.attrFloat("cubic_coeff_a", -0.75f);
  bool excludeOutside = n.attrInt("exclude_outside", 0) != 0;
  double extrapolation = n.attrFloat("extrapolation_value", 0.0f);
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return nodeErr(n, "unsupported mode '" + mode + "'");
  if (ctm != "half_pixel" && ctm != "pytorch_half_pixel" && ctm != "align_corners" &&
      ctm != "asymmetric" && ctm != "tf_half_pixel_for_nn" && ctm != "tf_crop_and_resize")
    return nodeErr(n, "unsupported coordinate_transformation_mode '" + ctm + "'");
  if (nearestMode != "round_prefer_floor" && nearestMode != "round_prefer_ceil" &&
      nearestMode != "floor" && nearestMode != "ceil")
    return nodeErr(n, "unsupported nearest_mode '" + nearestMode + "'");

  // Scale per dim: the scales input when given, else output/input sizes.
  std::vector<double> scale(r);
  bool haveScales = scalesT && scalesT->numElements() > 0;
  if (haveScales && static_cast<size_t>(scalesT->numElements()) != r)
    return nodeErr(n, "scales must have one entry per dim");
  if (!haveScales && sizesT && ir::Shape(sizesT->toInts()) != ys)
    return nodeErr(n, "sizes input disagrees with the output shape " + ir::shapeStr(ys));
  for (size_t d = 0; d < r; ++d)
    scale[d] = haveScales ? scalesT->getDouble(static_cast<int64_t>(d))
                          : static_cast<double>(ys[d]) / static_cast<double>(xs[d]);
  std::vector<double> roi(2 * r, 0.0);
  if (ctm == "tf_crop_and_resize") {
    if (!roiT || static_cast<size_t>(roiT->numElements()) != 2 * r)
      return nodeErr(n, "tf_crop_and_resize needs an roi of 2*rank values");
    for (size_t i = 0; i < 2 * r; ++i)
      roi[i] = roiT->getDouble(static_cast<int64_t>(i));
  }

  // taps[d][o] for every dim d and output coordinate o.
  std::vector<std::vector<std::vector<Tap>>> taps(r);
  for (size_t d = 0; d < r; ++d) {
    int64_t inLen = xs[d], outLen = ys[d];
    taps[d].resize(static_cast<size_t>(outLen));
    for (int64_t o = 0; o < outLen; ++o) {
      double xo = static_cast<double>(o), s = scale[d], xi = 0.0;
      // length_resized: the integer output length, as ONNX Runtime and
      // PyTorch take it (ONNX's test data for two downsampling align_corners
      // cases use in * scale instead; docs/ops.md, "Resize").
      double outF = static_cast<double>(outLen);
      std::vector<Tap> &t = taps[d][static_cast<size_t>(o)];
      if (mode == "nearest" && s == 1.0 && inLen == outLen && ctm != "tf_crop_and_resize") {
        t.push_back({o, 1.0}); // an axis of scale 1 stays as it is (ONNX Runtime)
        continue;
      }
      if (ctm == "half_pixel")
        xi = (xo + 0.5) / s - 0.5;
      else if (ctm == "pytorch_half_pixel")
        xi = outF > 1 ? (xo + 0.5) / s - 0.5 : 0.0;
      else if (ctm == "align_corners")
        xi = outF == 1 ? 0.0 : xo * static_cast<double>(inLen - 1) / (outF - 1);
      else if (ctm == "asymmetric")
        xi = xo / s;
      else if (ctm == "tf_half_pixel_for_nn")
        xi = (xo + 0.5) / s;
      else // tf_crop_and_resize
        xi = outF > 1 ? roi[d] * static_cast<double>(inLen - 1) +
                            xo * (roi[d + r] - roi[d]) * static_cast<double>(inLen - 1) / (outF - 1)
                      : 0.5 * (roi[d] + roi[d + r]) * static_cast<double>(inLen - 1);
      if (ctm == "tf_crop_and_resize" && (xi < 0 || xi > static_cast<double>(inLen - 1))) {
        t.push_back({-1, 1.0});
        continue;
      }
      auto clampIdx = [inLen](int64_t i) { return i < 0 ? 0 : (i >= inLen ? inLen - 1 : i); };
      if (mode == "nearest") {
        double f = std::floor(xi), frac = xi - f;
        int64_t i;
        if (nearestMode == "floor")
          i = static_cast<int64_t>(f);
        else if (nearestMode == "ceil")
          i = static_cast<int64_t>(std::ceil(xi));
        else if (frac == 0.5)
          i = static_cast<int64_t>(nearestMode == "round_prefer_floor" ? f : f + 1);
        else
          i = static_cast<int64_t>(std::round(xi));
        t.push_back({clampIdx(i), 1.0});
      } else if (mode == "linear") {
        double f = std::floor(xi), w = xi - f;
        int64_t i0 = static_cast<int64_t>(f);
        t.push_back({clampIdx(i0), 1.0 - w});
        t.push_back({clampIdx(i0 + 1), w});
      } else { // cubic
        double f = std::floor(xi), c[4];
        int64_t i0 = static_cast<int64_t>(f);
        cubicCoeffs(xi - f, cubicA, c);
        double sum = 0.0;
        for (int k = 0; k < 4; ++k) {
          int64_t i = i0 - 1 + k;
          if (excludeOutside && (i < 0 || i >= inLen))
            c[k] = 0.0;
          sum += c[k];
        }
        for (int k = 0; k < 4; ++k)
          t.push_back({clampIdx(i0 - 1 + k), excludeOutside && sum != 0.0 ? c[k] / sum : c[k]});
      }
    }
  }

  // Sum over the cartesian product of every dim's taps.
  std::vector<int64_t> xst = stridesOf(xs), oc;
  std::vector<size_t> sel(r);
  for (int64_t o = 0; o < y.numElements(); ++o) {
    unravel(o, ys, oc);
    double acc = 0.0;
    std::fill(sel.begin(), sel.end(), 0);
    while (true) {
      double w = 1.0;
      int64_t src = 0;
      bool extrap = false;
      for (size_t d = 0; d < r; ++d) {
        const Tap &tp = taps[d][static_cast<size_t>(oc[d])][sel[d]];
        w *= tp.weight;
        extrap = extrap || tp.index < 0;
        src += tp.index * xst[d];
      }
      acc += w * (extrap ? extrapolation : x.getDouble(src));
      // Next combination (odometer over the per-dim tap lists).
      size_t d = r;
      while (d-- > 0) {
        if (++sel[d] < taps[d][static_cast<size_t>(oc[d])].size())
          break;
        sel[d] = 0;
      }
      if (d == static_cast<size_t>(-1))
        break;
    }
    if (ir::isFloat(y.dtype()))
      y.setDouble(o, acc);
    else
      y.setDouble(o, std::round(acc)); // integer data: nearest integer
  }
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

} // namespace npucc::interp::detail
