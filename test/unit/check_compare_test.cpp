//===- check_compare_test.cpp - `npucc check` cannot pass a wrong answer ---===//
//
// Issue 11: driver::compareTensors passed every element with a NaN
// tolerance and compared element counts only; checkDataMatches refuses a
// data-set tensor whose shape differs from the program's.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Compare.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace npucc;
using ir::DType;
using ir::Tensor;

namespace {

TEST(CheckCompare, NanOrNegativeToleranceFailsAWrongAnswer) {
  Tensor ref = Tensor::fromFloats({1, 3}, {1, 2, 3});
  Tensor got = Tensor::fromFloats({1, 3}, {1, 2, 1006});
  EXPECT_FALSE(driver::compareTensors(got, ref, NAN).pass);
  EXPECT_FALSE(driver::compareTensors(got, ref, -1.0).pass);
  EXPECT_FALSE(driver::compareTensors(ref, ref, NAN).pass); // a NaN tolerance passes nothing
  EXPECT_TRUE(driver::compareTensors(ref, ref, 0.0).pass);
}

TEST(CheckCompare, SameCountOtherShapeIsAMismatch) {
  Tensor ref = Tensor::fromFloats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor got = Tensor::fromFloats({3, 2}, {1, 2, 3, 4, 5, 6});
  driver::Comparison c = driver::compareTensors(got, ref, 1e-4);
  EXPECT_TRUE(c.shapeMismatch);
  EXPECT_FALSE(c.pass);
}

TEST(CheckCompare, DataSetTensorMustMatchTheProgramsShape) {
  lir::IOBuffer io{"x", DType::F32, {1, 6}};
  Tensor same = Tensor::fromFloats({1, 6}, {1, 2, 3, 4, 5, 6});
  Tensor other = Tensor::fromFloats({6, 1}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(driver::checkDataMatches(same, io, "input_0.pb", "input"));
  Status s = driver::checkDataMatches(other, io, "input_0.pb", "input");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().str(),
            "input_0.pb: error: f32 [6x1] does not match the model's input 'x' f32 [1x6]");
}

// Issue 13: NaN and infinity on either side. A huge tolerance so that only the
// NaN/inf rule can fail an element: NaN matches only NaN, inf only the same inf.
TEST(CheckCompare, NanAndInfinityOnEitherSide) {
  const float nan = NAN, inf = INFINITY;
  struct Case {
    float got, ref;
    bool pass;
  } cases[] = {
      {nan, 1.0f, false}, {1.0f, nan, false}, {nan, nan, true},   {-nan, nan, true},
      {inf, inf, true},   {-inf, -inf, true}, {inf, -inf, false}, {-inf, inf, false},
      {inf, 1e30f, false}, {1e30f, inf, false}, {-inf, 0.0f, false}, {0.0f, -inf, false},
      {nan, inf, false},  {inf, nan, false},  {2.0f, 2.5f, true},
  };
  for (const Case &c : cases) {
    Tensor ref = Tensor::fromFloats({1, 3}, {1, c.ref, 3});
    Tensor got = Tensor::fromFloats({1, 3}, {1, c.got, 3});
    driver::Comparison r = driver::compareTensors(got, ref, 1e6);
    EXPECT_EQ(r.pass, c.pass) << "got " << c.got << " ref " << c.ref;
    EXPECT_EQ(r.mismatches, c.pass ? 0 : 1) << "got " << c.got << " ref " << c.ref;
    EXPECT_EQ(r.firstMismatch, c.pass ? -1 : 1) << "got " << c.got << " ref " << c.ref;
    if (!c.pass) {
      EXPECT_TRUE(std::isinf(r.maxAbsError)) << "got " << c.got << " ref " << c.ref;
    }
  }
}

// The same rules in quantization steps (a dequantized output) and for a plain
// float output compared in steps.
TEST(CheckCompare, NanAndInfinityInSteps) {
  driver::OutputQuant dq;
  dq.kind = driver::OutputKind::Dequantized;
  dq.scale = 0.5;
  driver::OutputQuant fl;
  const float nan = NAN, inf = INFINITY;
  for (const driver::OutputQuant &q : {dq, fl}) {
    auto steps = [&](float g, float r) {
      return driver::compareSteps(Tensor::fromFloats({2}, {1, g}), Tensor::fromFloats({2}, {1, r}),
                                  q, 1e6);
    };
    EXPECT_FALSE(steps(nan, 1).pass);
    EXPECT_FALSE(steps(1, nan).pass);
    EXPECT_FALSE(steps(inf, 1).pass);
    EXPECT_FALSE(steps(1, -inf).pass);
    EXPECT_FALSE(steps(inf, -inf).pass);
    EXPECT_TRUE(steps(1.5, 1.5).pass);
    EXPECT_EQ(steps(nan, 1).firstMismatch, 1);
    EXPECT_EQ(steps(1, nan).mismatches, 1);
  }
  EXPECT_TRUE(driver::compareSteps(Tensor::fromFloats({1}, {nan}), Tensor::fromFloats({1}, {nan}),
                                   dq, 0)
                  .pass);
}

} // namespace

// --io int8: the float data set becomes what QuantizeLinear gives (float division, round
// half to even, saturated; NaN gives the zero point), and back.
TEST(CheckCompare, IoInt8QuantizesLikeQuantizeLinear) {
  ir::Value v;
  v.dtype = DType::I8;
  v.shape = {6};
  v.quant = ir::QuantParams{{0.5f}, {3}, 0};
  Tensor f(DType::F32, {6});
  const float xs[] = {0.25f, 0.75f, -0.25f, 1000.f, -1000.f, NAN};
  for (int i = 0; i < 6; ++i)
    f.setDouble(i, xs[i]);
  Tensor q = driver::toIoType(f, v);
  ASSERT_EQ(q.dtype(), DType::I8);
  const int64_t want[] = {3, 5, 3, 127, -128, 3}; // 0.5 -> 0, 1.5 -> 2, -0.5 -> -0 (even)
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(q.getInt(i), want[i]) << i;
  Tensor back = driver::dequantizeIo(q, v);
  EXPECT_EQ(back.dtype(), DType::F32);
  EXPECT_FLOAT_EQ(float(back.getDouble(1)), 1.0f); // (5 - 3) * 0.5
  EXPECT_EQ(driver::ioOutputKind(v).kind, driver::OutputKind::Dequantized);
  // Not an int8 edge: unchanged.
  ir::Value fl;
  fl.shape = {6};
  EXPECT_EQ(driver::toIoType(f, fl).dtype(), DType::F32);
  EXPECT_EQ(driver::ioOutputKind(fl).kind, driver::OutputKind::Float);
}
