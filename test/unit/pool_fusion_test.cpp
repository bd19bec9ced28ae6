//===- pool_fusion_test.cpp - A max pool fused into an NPU conv -------------===//
//
// Issue 19, phase 7e: on an NPU whose conv/depthwise pool stage is max, an
// int8 MaxPool with a k x k window, stride k and no padding that alone reads
// the node's output joins it (attribute pool_max, quant/FusedPool.h). The
// interpreter evaluates the fused node bit for bit as the conv and the MaxPool
// (floor: a 7x7 output pools to 3x3), in NCHW and NHWC; which pools fuse;
// legality computes the whole windows only; the verifier and the CPU
// lowering refuse the attribute where no NPU runs the node.
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/ir/Verifier.h"
#include "npucc/lower/CpuLowering.h"
#include "npucc/quant/FusedPool.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include <gtest/gtest.h>

#include "TestTargets.h"

using namespace npucc;
using ir::Tensor;

namespace {

/// x [1,3,8,7] -> Conv 2x2 (pads 0,1,0,0: a 7x7 output), clamped -> %c -> `pool` -> %p.
std::string convThen(const std::string &pool, const std::string &pshape) {
  return "graph @main(%x: i8[1,3,8,7] q(0.1, 2)) -> (%p) {\n"
         "  const @w: i8[4,3,2,2] q(0.05, 0) = dense<[1, -3, 7, 2, 5, -8, 0, 4, -2, 9, 3, -1, "
         "6, 2, -7, 1, 0, 3, -4, 8, 2, -5, 1, 7, -9, 4, 2, 0, 3, -6, 5, 1, 8, -2, -3, 4, 1, 6, "
         "-1, 2, 7, -4, 0, 5, -8, 3, 2, -1]>\n"
         "  const @b: i32[4] = dense<[10, -20, 5, 0]>\n"
         "  %c = Conv(%x, @w, @b) {act_min=-1.0, kernel_shape=[2, 2], pads=[0, 0, 0, 1]} : "
         "i8[1,4,7,7] q(0.08, -3) loc(\"conv\")\n"
         "  %p = MaxPool(%c) " +
         pool + " : i8" + pshape +
         " q(0.08, -3) loc(\"pool\")\n"
         "  return %p\n}\n";
}

Tensor input() {
  Tensor x(ir::DType::I8, {1, 3, 8, 7});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.setInt(i, (i * 37 + 11) % 256 - 128);
  return x;
}

Tensor run(const ir::Graph &g) {
  auto r = interp::runGraph(g, {{"x", input()}});
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r->at("p") : Tensor();
}

/// The graph with its MaxPool fused into the conv (npu-partition's fold, by hand).
std::unique_ptr<ir::Graph> fused(const std::string &text, int64_t k) {
  auto g = ir::parseGraph(text, "pool.ir").take();
  ir::Node *conv = g->nodes()[0].get(), *pool = g->nodes()[1].get();
  quant::fusePool(*conv, *pool, k);
  conv->attrs["npu"] = std::string("conv");
  g->eraseNode(pool);
  g->removeUnusedValues();
  return g;
}

TEST(PoolFusion, FusedNodeComputesTheConvThenTheMaxPool) {
  for (int64_t k : {2, 3}) {
    std::string ks = std::to_string(k), ps = std::to_string(7 / k);
    std::string text =
        convThen("{kernel_shape=[" + ks + ", " + ks + "], strides=[" + ks + ", " + ks + "]}",
                 "[1,4," + ps + "," + ps + "]");
    auto g = ir::parseGraph(text, "pool.ir").take();
    Tensor want = run(*g);
    auto f = fused(text, k);
    ASSERT_TRUE(ir::verifyGraph(*f).ok());
    EXPECT_EQ(quant::fusedPoolOf(*f->nodes()[0]), k);
    EXPECT_EQ(quant::convOutputHw(*f->nodes()[0]), (std::pair<int64_t, int64_t>{7, 7}));
    Tensor got = run(*f);
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_EQ(got, want) << "k " << k;
    // The same node in NHWC (after npu-partition's layout step).
    Tensor xn = ir::permute4(input(), std::array<int, 4>{0, 2, 3, 1}.data());
    ir::Node n = *f->nodes()[0];
    ir::Value xv = *n.input(0), yv = *n.output(0);
    xv.shape = {1, 8, 7, 3};
    yv.shape = {1, 7 / k, 7 / k, 4};
    n.inputs[0] = &xv;
    n.outputs[0] = &yv;
    yv.producer = &n;
    n.attrs["layout"] = std::string("NHWC");
    std::vector<const Tensor *> ins = {&xn, f->nodes()[0]->input(1)->constant.get(),
                                       f->nodes()[0]->input(2)->constant.get()};
    auto r = interp::evaluateNode(n, ins);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ((*r)[0], ir::permute4(want, std::array<int, 4>{0, 2, 3, 1}.data())) << "NHWC k " << k;
  }
}

TEST(PoolFusion, WhichMaxPoolsFuse) {
  const std::vector<unsigned> two = {2, 4};
  auto k = [&](const std::string &pool, const std::string &shape,
               const std::vector<unsigned> &kernels) {
    auto g = ir::parseGraph(convThen(pool, shape), "pool.ir").take();
    return quant::fusablePool(*g->nodes()[0], *g->nodes()[1], kernels);
  };
  EXPECT_EQ(k("{kernel_shape=[2, 2], strides=[2, 2]}", "[1,4,3,3]", two), 2);
  EXPECT_EQ(k("{kernel_shape=[2, 2], strides=[2, 2]}", "[1,4,3,3]", {4}), 0); // not offered
  EXPECT_EQ(k("{kernel_shape=[2, 2], strides=[1, 1]}", "[1,4,6,6]", two), 0); // stride 1
  EXPECT_EQ(k("{kernel_shape=[2, 2], pads=[0, 0, 1, 1], strides=[2, 2]}", "[1,4,4,4]", two), 0);
  EXPECT_EQ(k("{ceil_mode=1, kernel_shape=[2, 2], strides=[2, 2]}", "[1,4,4,4]", two), 0);
  EXPECT_EQ(k("{dilations=[2, 2], kernel_shape=[2, 2], strides=[2, 2]}", "[1,4,3,3]", two), 0);
  EXPECT_EQ(k("{kernel_shape=[2, 4], strides=[2, 4]}", "[1,4,3,1]", two), 0); // not square
  // Another quantization out than in: the int8 MaxPool does not requantize.
  auto g = ir::parseGraph(convThen("{kernel_shape=[2, 2], strides=[2, 2]}", "[1,4,3,3]"), "pool.ir")
               .take();
  g->nodes()[1]->output(0)->quant->zeroPoint = {0};
  EXPECT_EQ(quant::fusablePool(*g->nodes()[0], *g->nodes()[1], two), 0);
}

TEST(PoolFusion, LegalityComputesWholeWindowsOnTheMaxStage) {
  auto f = fused(convThen("{kernel_shape=[2, 2], strides=[2, 2]}", "[1,4,3,3]"), 2);
  auto t = target::loadTarget(test::testTarget("npu-fpool.json"));
  ASSERT_TRUE(t.ok()) << t.error().str();
  target::Placement p = target::placeNode(*f->nodes()[0], *t);
  ASSERT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  EXPECT_EQ(p.op->poolK, 2);
  EXPECT_EQ(p.op->outH, 6); // 7 rows computed by the model's conv: the last is not needed
  EXPECT_EQ(p.op->outW, 6);
  EXPECT_EQ(p.op->macs, uint64_t(6 * 6 * 4 * 2 * 2 * 3));
  auto d = target::loadTarget("npu-default");
  ASSERT_TRUE(d.ok());
  target::Placement q = target::placeNode(*f->nodes()[0], *d);
  EXPECT_FALSE(q.onNpu());
  ASSERT_FALSE(q.reasons.empty());
  EXPECT_EQ(q.reasons[0], "fused max pool 2x2 but the NPU's conv pools nothing (pool stage none)");
  auto f3 = fused(convThen("{kernel_shape=[3, 3], strides=[3, 3]}", "[1,4,2,2]"), 3);
  target::Placement r = target::placeNode(*f3->nodes()[0], *t);
  EXPECT_FALSE(r.onNpu());
  ASSERT_FALSE(r.reasons.empty());
  EXPECT_EQ(r.reasons[0], "fused max pool 3x3 but the NPU's conv pools only [2, 4]");
}

TEST(PoolFusion, VerifierAndCpuLoweringRefuseItOffTheNpu) {
  auto f = fused(convThen("{kernel_shape=[2, 2], strides=[2, 2]}", "[1,4,3,3]"), 2);
  auto cpu = lower::lowerGraphToCpu(*f);
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.error().str().find("has pool_max=2 (a max pool fused into an NPU conv by "
                                   "npu-partition): the CPU kernels cannot run it"),
            std::string::npos)
      << cpu.error().str();
  f->nodes()[0]->attrs.erase("npu");
  Status v = ir::verifyGraph(*f);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().str().find("has attribute pool_max=2: expected a window of 2..31 on a "
                                 "Conv the NPU runs"),
            std::string::npos)
      << v.error().str();
}

} // namespace
