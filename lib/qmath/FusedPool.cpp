//===- FusedPool.cpp - A max pool fused into an NPU conv or depthwise -----===//
//
// The attribute pool_max (quant/FusedPool.h): which MaxPool nodes a max pool
// stage runs, the fold, and the node seen without its pool.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/FusedPool.h"

#include <algorithm>
#include <climits>
#include <string>

namespace npucc::quant {

int64_t fusedPoolOf(const ir::Node &n) {
  return n.hasAttr("pool_max") ? n.attrInt("pool_max", 1) : 1;
}

int64_t fusablePool(const ir::Node &n, const ir::Node &pool, const std::vector<unsigned> &kernels) {
  const ir::Value *x = pool.input(0), *y = pool.output(0);
  if (pool.kind != ir::OpKind::MaxPool || pool.outputs.size() != 1 || !x || !y ||
      x != n.output(0) || x->dtype != ir::DType::I8 || y->dtype != ir::DType::I8 || !x->quant ||
      !(x->quant == y->quant) || x->shape.size() != 4 || y->shape.size() != 4 ||
      n.hasAttr("pool_max") || pool.attrInt("ceil_mode", 0) != 0 ||
      pool.attrInt("storage_order", 0) != 0)
    return 0;
  std::string autoPad = pool.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID")
    return 0;
  std::vector<int64_t> k = pool.attrInts("kernel_shape");
  if (k.size() != 2 || k[0] != k[1] || pool.attrInts("strides", {1, 1}) != k ||
      pool.attrInts("dilations", {1, 1}) != std::vector<int64_t>{1, 1} ||
      pool.attrInts("pads", {0, 0, 0, 0}) != std::vector<int64_t>{0, 0, 0, 0})
    return 0;
  bool offered = false;
  for (unsigned v : kernels)
    offered = offered || int64_t(v) == k[0];
  if (!offered || x->shape[2] < k[0] || x->shape[3] < k[0] || y->shape[2] != x->shape[2] / k[0] ||
      y->shape[3] != x->shape[3] / k[0])
    return 0;
  return k[0];
}

void fusePool(ir::Node &n, const ir::Node &pool, int64_t k) {
  n.attrs["pool_max"] = k;
  n.outputs[0] = pool.outputs[0];
  n.outputs[0]->producer = &n;
}

std::pair<int64_t, int64_t> convOutputHw(const ir::Node &n) {
  const ir::Value *x = n.input(0), *w = n.input(1);
  if (!x || x->shape.size() != 4)
    return {0, 0};
  bool nhwc = n.attrString("layout", "") == "NHWC";
  int64_t h = x->shape[nhwc ? 1 : 2], wd = x->shape[nhwc ? 2 : 3];
  std::vector<int64_t> k = n.attrInts("kernel_shape");
  if (k.size() != 2 && w && w->shape.size() == 4)
    k = {w->shape[2], w->shape[3]};
  std::vector<int64_t> s = n.attrInts("strides", {1, 1}), d = n.attrInts("dilations", {1, 1});
  std::vector<int64_t> p = n.attrInts("pads", {0, 0, 0, 0});
  if (k.size() != 2 || s.size() != 2 || d.size() != 2 || p.size() != 4 || s[0] < 1 || s[1] < 1)
    return {0, 0};
  int64_t oh = (h + p[0] + p[2] - d[0] * (k[0] - 1) - 1) / s[0] + 1;
  int64_t ow = (wd + p[1] + p[3] - d[1] * (k[1] - 1) - 1) / s[1] + 1;
  return {oh, ow};
}

std::unique_ptr<PoolCore> poolCoreOf(const ir::Node &n) {
  if (!n.hasAttr("pool_max") || !n.output(0) || n.output(0)->shape.size() != 4)
    return nullptr;
  auto c = std::make_unique<PoolCore>(PoolCore{n, *n.output(0)});
  c->node.attrs.erase("pool_max");
  bool nhwc = n.attrString("layout", "") == "NHWC";
  auto [oh, ow] = convOutputHw(n);
  c->full.shape[nhwc ? 1 : 2] = oh;
  c->full.shape[nhwc ? 2 : 3] = ow;
  c->full.name = n.output(0)->name + ".pool_in";
  c->full.producer = &c->node;
  c->node.outputs[0] = &c->full;
  return c;
}

ir::Tensor maxPoolOf(const ir::Tensor &t, const ir::Shape &outShape, int64_t k, bool nhwc) {
  ir::Tensor r(t.dtype(), outShape);
  const ir::Shape &s = t.shape();
  // Strides of the input (row-major) and the output's element order.
  int64_t hd = nhwc ? 1 : 2, wdim = nhwc ? 2 : 3;
  int64_t d1 = s[1], d2 = s[2], d3 = s[3];
  auto at = [&](int64_t a, int64_t b, int64_t c, int64_t e) {
    return ((a * d1 + b) * d2 + c) * d3 + e;
  };
  int64_t o1 = outShape[1], o2 = outShape[2], o3 = outShape[3];
  for (int64_t a = 0; a < outShape[0]; ++a)
    for (int64_t b = 0; b < o1; ++b)
      for (int64_t c = 0; c < o2; ++c)
        for (int64_t e = 0; e < o3; ++e) {
          int64_t idx[4] = {a, b, c, e};
          int64_t m = INT64_MIN;
          for (int64_t i = 0; i < k; ++i)
            for (int64_t j = 0; j < k; ++j) {
              int64_t src[4] = {a, b, c, e};
              src[hd] = idx[hd] * k + i;
              src[wdim] = idx[wdim] * k + j;
              m = std::max(m, t.getInt(at(src[0], src[1], src[2], src[3])));
            }
          r.setInt(((a * o1 + b) * o2 + c) * o3 + e, m);
        }
  return r;
}

} // namespace npucc::quant
