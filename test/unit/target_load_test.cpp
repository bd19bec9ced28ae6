//===- target_load_test.cpp - Loading the built-in and test NPU descriptions ===//
#include "npucc/target/Target.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace npucc::target;

#ifndef NPUCC_SOURCE_DIR
#define NPUCC_SOURCE_DIR "."
#endif

TEST(TargetLoad, BuiltinsAreListed) {
  std::vector<std::string> names = builtinTargets();
  EXPECT_NE(std::find(names.begin(), names.end(), "npu-default"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "npu-small"), names.end());
}

TEST(TargetLoad, EveryBuiltinLoads) {
  for (const std::string &n : builtinTargets()) {
    auto r = loadTarget(n);
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ(r->name, n);
  }
}

TEST(TargetLoad, DefaultContents) {
  auto r = loadTarget("npu-default");
  ASSERT_TRUE(r.ok()) << r.error().str();
  const TargetDesc &t = *r;
  EXPECT_EQ(t.compute.macRows, 16u);
  EXPECT_EQ(t.compute.macCols, 16u);
  ASSERT_EQ(t.scratchpads.size(), 1u);
  EXPECT_EQ(t.scratchpads[0].size, 256u * 1024u);
  EXPECT_EQ(t.dma.dims, 2u);
  EXPECT_TRUE(t.concurrentDmaCompute);
  EXPECT_TRUE(t.supports("depthwise"));
  EXPECT_TRUE(t.supports("pool"));
  EXPECT_TRUE(t.operation("conv")->perChannelRequant);
  EXPECT_TRUE(t.operation("conv")->perTensorRequant);
  EXPECT_EQ(t.baseAddress, 0x40000000u);
  const CommandDesc *conv = t.command("conv");
  ASSERT_NE(conv, nullptr);
  const ParamBinding *b = conv->binding("stride_h");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->field().text, "KERNEL.stride_h");
  EXPECT_EQ(b->field().lsb, 8u);
  EXPECT_EQ(b->field().width, 3u);
  // Limits the description leaves implicit come from the field widths.
  EXPECT_EQ(t.dma.maxLength, 65535u); // DMA_SIZE.length, 16 bits
  EXPECT_EQ(t.dma.maxRows, 65535u);
  EXPECT_EQ(t.dma.maxPlanes, 1u); // a 2-D DMA
  EXPECT_EQ(t.dma.maxStride, 65535u);
  ParamRange inH = t.paramRange("conv", "in_h");
  EXPECT_TRUE(inH.bound);
  EXPECT_EQ(inH.hi, 1023); // IN_SHAPE.h, 10 bits
  ParamRange zp = t.paramRange("conv", "in_zp");
  EXPECT_EQ(zp.lo, -128); // signed 8-bit field
  EXPECT_EQ(zp.hi, 127);
}

TEST(TargetLoad, SmallDiffersFromDefault) {
  auto d = loadTarget("npu-default");
  auto s = loadTarget("npu-small");
  ASSERT_TRUE(d.ok() && s.ok());
  EXPECT_EQ(s->compute.macRows, 8u);
  EXPECT_EQ(s->scratchpads[0].size, 64u * 1024u);
  EXPECT_EQ(s->dma.dims, 1u);
  EXPECT_FALSE(s->concurrentDmaCompute);
  EXPECT_FALSE(s->supports("depthwise"));
  EXPECT_FALSE(s->supports("pool"));
  EXPECT_NE(s->baseAddress, d->baseAddress);
  // Different doorbell scheme: a whole-register opcode write vs a start bit.
  EXPECT_EQ(s->command("conv")->doorbell.field.field, -1);
  EXPECT_GE(d->command("conv")->doorbell.field.field, 0);
  const ParamBinding *kh = s->command("conv")->binding("k_h");
  ASSERT_NE(kh, nullptr);
  EXPECT_EQ(kh->minus, 1);
  // kh_m1 is 2 bits, stored minus one: k_h 1..4.
  ParamRange r = s->paramRange("conv", "k_h");
  EXPECT_EQ(r.lo, 1);
  EXPECT_EQ(r.hi, 4);
  // A 1-D DMA: no rows, no strides.
  EXPECT_EQ(s->dma.maxRows, 1u);
  EXPECT_EQ(s->dma.maxStride, 0u);
}

TEST(TargetLoad, FromPath) {
  std::string p = std::string(NPUCC_SOURCE_DIR) + "/test/target/npu-third.json";
  auto r = loadTarget(p);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->name, "npu-third");
  EXPECT_EQ(r->file, p);
}

TEST(TargetLoad, UnknownNameListsBuiltins) {
  auto r = loadTarget("no-such-npu");
  ASSERT_FALSE(r.ok());
  std::string s = r.error().str();
  EXPECT_NE(s.find("no-such-npu"), std::string::npos);
  EXPECT_NE(s.find("npu-default"), std::string::npos);
}

TEST(TargetLoad, OperationLimitQueries) {
  auto d = loadTarget("npu-default");
  ASSERT_TRUE(d.ok());
  const OpLimits *conv = d->operation("conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_TRUE(conv->allowsKernel(3, 3));
  EXPECT_TRUE(conv->allowsKernel(1, 7));
  EXPECT_FALSE(conv->allowsKernel(4, 3));
  EXPECT_TRUE(conv->allowsStride(2));
  EXPECT_FALSE(conv->allowsStride(3));
  EXPECT_TRUE(conv->allowsDilation(2));
  EXPECT_EQ(conv->maxPad[0], 3u); // max_padding: 3 on every side
  EXPECT_EQ(conv->maxPad[3], 3u);
  EXPECT_TRUE(d->operation("pool")->allowsKind("avg"));
  EXPECT_FALSE(d->operation("eltwise")->allowsKind("mul"));
  // matmul's max_channels is both the k and the n limit.
  EXPECT_EQ(d->operation("matmul")->maxInChannels, 4095u);
  EXPECT_EQ(d->operation("matmul")->maxOutChannels, 4095u);
  auto s = loadTarget("npu-small");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->operation("pool"), nullptr);
  EXPECT_FALSE(s->operation("conv")->allowsDilation(2));
}

TEST(TargetLoad, ParamTablesAgree) {
  EXPECT_EQ(paramId("src_addr"), 0);
  EXPECT_GE(paramId("requant_mult"), 0);
  EXPECT_EQ(paramId("bogus"), -1);
  EXPECT_EQ(commandKindId("dma"), 0);
  EXPECT_EQ(commandKindId("eltwise"), 5);
}
