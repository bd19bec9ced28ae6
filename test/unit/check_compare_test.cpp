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

} // namespace
