//===- MatMul.cpp - Reference Gemm and MatMul -----------------------------===//
//
// Gemm (alpha, beta, transA, transB, optional unidirectionally broadcast C)
// and numpy-style MatMul (batched, broadcasting batch dims, 1-D operands).
// Dot products accumulate in double for floats and int64 for integers.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <type_traits>

namespace npucc::interp::detail {

EvalResult evalGemm(const ir::Node &n, const Inputs &in) {
  const Tensor &a = *in[0], &b = *in[1];
  const Tensor *c = in.size() > 2 ? in[2] : nullptr;
  Tensor y = makeOutput(n, 0);
  if (a.shape().size() != 2 || b.shape().size() != 2)
    return nodeErr(n, "expects 2-D A and B, got " + ir::shapeStr(a.shape()) + " and " +
                          ir::shapeStr(b.shape()));
  if (!ir::isFloat(a.dtype()) || a.dtype() != b.dtype() || y.dtype() != a.dtype())
    return nodeErr(n, std::string("unsupported dtype ") + ir::dtypeName(a.dtype()));
  bool tA = n.attrInt("transA", 0) != 0, tB = n.attrInt("transB", 0) != 0;
  double alpha = n.attrFloat("alpha", 1.0f), beta = n.attrFloat("beta", 1.0f);
  int64_t M = tA ? a.shape()[1] : a.shape()[0], K = tA ? a.shape()[0] : a.shape()[1];
  int64_t Kb = tB ? b.shape()[1] : b.shape()[0], N = tB ? b.shape()[0] : b.shape()[1];
  if (K != Kb || y.shape() != Shape{M, N})
    return nodeErr(n, "inconsistent shapes A " + ir::shapeStr(a.shape()) + ", B " +
                          ir::shapeStr(b.shape()) + ", Y " + ir::shapeStr(y.shape()));
  std::vector<int64_t> cIdx;
  if (c) {
    Shape bs;
    if (!broadcastShapes(c->shape(), {M, N}, bs) || bs != Shape{M, N})
      return nodeErr(n, "C of shape " + ir::shapeStr(c->shape()) + " does not broadcast to " +
                            ir::shapeStr({M, N}));
    cIdx = broadcastIndex(c->shape(), {M, N});
  }
  dispatchFloat(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *ap = a.data<T>(), *bp = b.data<T>();
    T *yp = y.data<T>();
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0.0; // accumulate in double
        for (int64_t k = 0; k < K; ++k) {
          double av = ap[tA ? k * M + i : i * K + k];
          double bv = bp[tB ? j * K + k : k * N + j];
          acc += av * bv;
        }
        double r = alpha * acc;
        if (c)
          r += beta * c->getDouble(cIdx[static_cast<size_t>(i * N + j)]);
        yp[i * N + j] = static_cast<T>(r);
      }
  });
  applyFusedActivation(n, y);
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

EvalResult evalMatMul(const ir::Node &n, const Inputs &in) {
  const Tensor &a = *in[0], &b = *in[1];
  Tensor y = makeOutput(n, 0);
  if (a.dtype() != b.dtype() || y.dtype() != a.dtype() || a.dtype() == DType::Bool)
    return nodeErr(n, std::string("unsupported dtypes ") + ir::dtypeName(a.dtype()) + " x " +
                          ir::dtypeName(b.dtype()));
  Shape as = a.shape(), bs = b.shape();
  if (as.empty() || bs.empty())
    return nodeErr(n, "MatMul operands must have rank >= 1");
  if (as.size() == 1)
    as.insert(as.begin(), 1); // [K] -> [1, K]
  if (bs.size() == 1)
    bs.push_back(1); // [K] -> [K, 1]
  int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K)
    return nodeErr(n, "inner dimensions differ: " + ir::shapeStr(a.shape()) + " x " +
                          ir::shapeStr(b.shape()));
  Shape batchA(as.begin(), as.end() - 2), batchB(bs.begin(), bs.end() - 2), batch;
  if (!broadcastShapes(batchA, batchB, batch))
    return nodeErr(n, "batch dimensions do not broadcast: " + ir::shapeStr(a.shape()) + " x " +
                          ir::shapeStr(b.shape()));
  int64_t nBatch = ir::numElements(batch);
  if (y.numElements() != nBatch * M * N)
    return nodeErr(n, "output shape " + ir::shapeStr(y.shape()) + " does not match operands " +
                          ir::shapeStr(a.shape()) + " x " + ir::shapeStr(b.shape()));
  std::vector<int64_t> ia = broadcastIndex(batchA, batch), ib = broadcastIndex(batchB, batch);
  dispatchType(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    // Floats accumulate in double, integers in (wrapping) 64-bit.
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
    const T *ap = a.data<T>(), *bp = b.data<T>();
    T *yp = y.data<T>();
    for (int64_t bt = 0; bt < nBatch; ++bt) {
      const T *am = ap + ia[static_cast<size_t>(bt)] * M * K;
      const T *bm = bp + ib[static_cast<size_t>(bt)] * K * N;
      T *ym = yp + bt * M * N;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          Acc acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc += static_cast<Acc>(am[i * K + k]) * static_cast<Acc>(bm[k * N + j]);
          ym[i * N + j] = static_cast<T>(acc);
        }
    }
  });
  applyFusedActivation(n, y);
  Outputs out;
  out.push_back(std::move(y));
  return out;
}

} // namespace npucc::interp::detail
