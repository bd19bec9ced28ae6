//===- FusedPool.h - A max pool fused into an NPU conv or depthwise -------===//
//
// On an NPU whose conv/depthwise pool stage is max (docs/target.md, "pool:
// max"), npu-partition folds an int8 MaxPool with a k x k window, stride k,
// no padding, dilation 1 and floor rounding that alone reads the node's
// output into it: the node takes the MaxPool's output value (the pooled
// shape) and records the window in attribute
//     pool_max = k
// Max pooling the activated int8 values is exact, so the interpreter
// evaluates the node at the convolution's resolution (poolCoreOf) and then
// pools (maxPoolOf); the legality check and the lowering compute only whole
// windows: floor(H / k) * k rows and columns.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"

#include <memory>
#include <vector>

namespace npucc::quant {

/// The window of a fused max pool (attribute pool_max), 1 when none.
int64_t fusedPoolOf(const ir::Node &n);

/// The k of `pool` when it is an int8 MaxPool that a max pool stage with the
/// window sizes `kernels` can run after `n` (square window k = stride in
/// `kernels`, no padding, dilation 1, floor mode, one output, the same
/// quantization in and out); 0 otherwise.
int64_t fusablePool(const ir::Node &n, const ir::Node &pool, const std::vector<unsigned> &kernels);

/// Folds `pool` (fusablePool's k) into `n`: attribute pool_max, n's output
/// becomes the pool's. The caller erases `pool`.
void fusePool(ir::Node &n, const ir::Node &pool, int64_t k);

/// The convolution's output rows and columns (NCHW or, with layout="NHWC",
/// the node's own layout) before the fused pool: from the input, the kernel
/// (attribute or weights), strides, dilations and pads. {0, 0} on a shape
/// that does not have them.
std::pair<int64_t, int64_t> convOutputHw(const ir::Node &n);

/// A node with a fused pool seen without it: a copy whose output is the
/// convolution's (its shape from convOutputHw, its quantization the node's).
struct PoolCore {
  ir::Node node;
  ir::Value full;
};
/// nullptr when `n` has no fused pool.
std::unique_ptr<PoolCore> poolCoreOf(const ir::Node &n);

/// The k x k, stride k max pool (floor) of the 4-D tensor `t` into `outShape`,
/// H and W at dims (2, 3) (NCHW) or (1, 2) (NHWC).
ir::Tensor maxPoolOf(const ir::Tensor &t, const ir::Shape &outShape, int64_t k, bool nhwc);

} // namespace npucc::quant
