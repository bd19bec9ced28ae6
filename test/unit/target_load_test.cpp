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
  EXPECT_TRUE(t.compute.perChannelRequant);
  EXPECT_EQ(t.baseAddress, 0x40000000u);
  const CommandDesc *conv = t.command("conv");
  ASSERT_NE(conv, nullptr);
  const ParamBinding *b = conv->binding("stride_h");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->field.text, "KERNEL.stride_h");
  EXPECT_EQ(b->field.lsb, 8u);
  EXPECT_EQ(b->field.width, 3u);
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
  EXPECT_TRUE(conv->allowsKernel(3));
  EXPECT_FALSE(conv->allowsKernel(4));
  EXPECT_TRUE(conv->allowsStride(2));
  EXPECT_FALSE(conv->allowsStride(3));
  EXPECT_TRUE(conv->allowsDilation(2));
  EXPECT_TRUE(conv->allowsPadding(3));
  EXPECT_FALSE(conv->allowsPadding(4));
  EXPECT_TRUE(d->operation("pool")->allowsKind("avg"));
  EXPECT_FALSE(d->operation("eltwise")->allowsKind("mul"));
  EXPECT_TRUE(d->operation("matmul")->allowsChannels(4095));
  EXPECT_FALSE(d->operation("matmul")->allowsChannels(4096));
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
