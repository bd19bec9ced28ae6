//===- Norm.cpp - Reference BatchNormalization ----------------------------===//
//
// Inference: y = (x - mean) / sqrt(var + epsilon) * scale + B per channel
// (dim 1). With training_mode=1 (or extra outputs requested) the batch
// statistics (population variance) normalize X and the running statistics
// outputs are mean*momentum + batch*(1-momentum). Computed in double.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <cmath>

namespace npucc::interp::detail {

EvalResult evalBatchNorm(const ir::Node &n, const Inputs &in) {
  const Tensor &x = *in[0], &scale = *in[1], &bias = *in[2], &mean = *in[3], &var = *in[4];
  Tensor y = makeOutput(n, 0);
  const Shape &xs = x.shape();
  if (xs.size() < 2 || !ir::isFloat(x.dtype()) || y.dtype() != x.dtype() || y.shape() != xs)
    return nodeErr(n, "expects a float [N, C, ...] input and an output of the same shape");
  int64_t N = xs[0], C = xs[1];
  int64_t sp = N * C != 0 ? x.numElements() / (N * C) : 0;
  for (const Tensor *t : {&scale, &bias, &mean, &var})
    if (t->numElements() != C)
      return nodeErr(n, "scale/B/mean/var must have C=" + std::to_string(C) + " elements");
  double eps = n.attrFloat("epsilon", 1e-5f);
  double momentum = n.attrFloat("momentum", 0.9f);
  bool training = n.attrInt("training_mode", 0) != 0;

  std::vector<double> mu(static_cast<size_t>(C)), sigma2(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    size_t ci = static_cast<size_t>(c);
    if (!training) {
      mu[ci] = mean.getDouble(c);
      sigma2[ci] = var.getDouble(c);
      continue;
    }
    double s = 0.0, s2 = 0.0, cnt = static_cast<double>(N * sp);
    for (int64_t nn = 0; nn < N; ++nn)
      for (int64_t k = 0; k < sp; ++k)
        s += x.getDouble((nn * C + c) * sp + k);
    mu[ci] = s / cnt;
    for (int64_t nn = 0; nn < N; ++nn)
      for (int64_t k = 0; k < sp; ++k) {
        double d = x.getDouble((nn * C + c) * sp + k) - mu[ci];
        s2 += d * d;
      }
    sigma2[ci] = s2 / cnt;
  }
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t c = 0; c < C; ++c) {
      size_t ci = static_cast<size_t>(c);
      double a = scale.getDouble(c) / std::sqrt(sigma2[ci] + eps);
      for (int64_t k = 0; k < sp; ++k) {
        int64_t i = (nn * C + c) * sp + k;
        y.setDouble(i, (x.getDouble(i) - mu[ci]) * a + bias.getDouble(c));
      }
    }
  Outputs out;
  out.push_back(std::move(y));
  // Optional running_mean / running_var outputs (training mode).
  for (size_t o = 1; o < n.outputs.size() && o < 3; ++o) {
    if (!n.output(o)) {
      out.emplace_back();
      continue;
    }
    Tensor t = makeOutput(n, o);
    const Tensor &prev = o == 1 ? mean : var;
    const std::vector<double> &cur = o == 1 ? mu : sigma2;
    for (int64_t c = 0; c < C && c < t.numElements(); ++c)
      t.setDouble(c, training ? prev.getDouble(c) * momentum +
                                    cur[static_cast<size_t>(c)] * (1.0 - momentum)
                              : prev.getDouble(c));
    out.push_back(std::move(t));
  }
  if (n.outputs.size() > 3)
    return nodeErr(n, "saved_mean/saved_var outputs are not supported");
  return out;
}

} // namespace npucc::interp::detail
