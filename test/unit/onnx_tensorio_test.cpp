//===- onnx_tensorio_test.cpp - TensorProto files and --shape parsing -----===//
#include "npucc/onnx/Importer.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace npucc;
using namespace npucc::ir;
using namespace npucc::onnx;

namespace {

fs::path tmpFile(const std::string &name) {
  return fs::temp_directory_path() / ("npucc_tio_" + std::to_string(::getpid()) + "_" + name);
}

std::string writeProto(const ::onnx::TensorProto &tp, const std::string &name) {
  fs::path p = tmpFile(name);
  std::ofstream out(p, std::ios::binary);
  tp.SerializeToOstream(&out);
  return p.string();
}

TEST(OnnxTensorIO, WriteThenReadRoundTrips) {
  Tensor t = Tensor::fromFloats({2, 3}, {1, 2, 3, 4, 5, -6.5f});
  std::string p = tmpFile("rt.pb").string();
  ASSERT_TRUE(writeTensorProto(p, t, "input_0"));
  std::string name;
  auto r = readTensorProto(p, &name);
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ(name, "input_0");
  EXPECT_TRUE(*r == t);
  fs::remove(p);
}

TEST(OnnxTensorIO, TypedFields) {
  ::onnx::TensorProto tp;
  tp.set_name("i8");
  tp.set_data_type(::onnx::TensorProto::INT8);
  tp.add_dims(3);
  for (int v : {-128, 0, 127})
    tp.add_int32_data(v);
  auto r = readTensorProto(writeProto(tp, "i8.pb"));
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ(r->dtype(), DType::I8);
  EXPECT_EQ(r->toInts(), (std::vector<int64_t>{-128, 0, 127}));

  ::onnx::TensorProto b;
  b.set_data_type(::onnx::TensorProto::BOOL);
  b.add_dims(2);
  b.add_int32_data(1);
  b.add_int32_data(0);
  auto rb = readTensorProto(writeProto(b, "b.pb"));
  ASSERT_TRUE(rb);
  EXPECT_EQ(rb->dtype(), DType::Bool);
  EXPECT_EQ(rb->toInts(), (std::vector<int64_t>{1, 0}));

  ::onnx::TensorProto d;
  d.set_data_type(::onnx::TensorProto::DOUBLE);
  d.add_double_data(2.5);
  auto rd = readTensorProto(writeProto(d, "d.pb"));
  ASSERT_TRUE(rd);
  EXPECT_TRUE(rd->shape().empty());
  EXPECT_DOUBLE_EQ(rd->getDouble(0), 2.5);

  ::onnx::TensorProto u;
  u.set_data_type(::onnx::TensorProto::UINT64);
  u.add_dims(1);
  u.add_uint64_data(1ull << 40);
  auto ru = readTensorProto(writeProto(u, "u.pb"));
  ASSERT_TRUE(ru);
  EXPECT_EQ(ru->data<uint64_t>()[0], 1ull << 40);

  ::onnx::TensorProto l;
  l.set_data_type(::onnx::TensorProto::INT64);
  l.add_dims(2);
  l.add_int64_data(-7);
  l.add_int64_data(1ll << 50);
  auto rl = readTensorProto(writeProto(l, "l.pb"));
  ASSERT_TRUE(rl);
  EXPECT_EQ(rl->toInts(), (std::vector<int64_t>{-7, 1ll << 50}));
}

TEST(OnnxTensorIO, SizeMismatchAndBadTypesAreErrors) {
  ::onnx::TensorProto tp;
  tp.set_name("short");
  tp.set_data_type(::onnx::TensorProto::FLOAT);
  tp.add_dims(4);
  tp.add_float_data(1.f);
  auto r = readTensorProto(writeProto(tp, "short.pb"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().str().find("tensor 'short'"), std::string::npos) << r.error().str();

  ::onnx::TensorProto h;
  h.set_name("half");
  h.set_data_type(::onnx::TensorProto::FLOAT16);
  h.add_dims(1);
  h.add_int32_data(0);
  auto rh = readTensorProto(writeProto(h, "half.pb"));
  ASSERT_FALSE(rh);
  EXPECT_NE(rh.error().str().find("float16"), std::string::npos);

  auto missing = readTensorProto(tmpFile("does_not_exist.pb").string());
  ASSERT_FALSE(missing);
}

TEST(OnnxTensorIO, ReadsBackendTestData) {
  auto r = readTensorProto(
      "/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/test_data_set_0/"
      "input_0.pb");
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ(r->dtype(), DType::F32);
  EXPECT_EQ(r->shape(), (Shape{1, 1, 7, 5}));
  EXPECT_FLOAT_EQ(r->data<float>()[34], 34.f);
}

TEST(OnnxShapeBinding, Parses) {
  auto r = parseShapeBinding("input=1x3x224x224");
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ(r->first, "input");
  EXPECT_EQ(r->second, (Shape{1, 3, 224, 224}));
  auto c = parseShapeBinding("a:0=2,5");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->first, "a:0");
  EXPECT_EQ(c->second, (Shape{2, 5}));
  for (const char *bad : {"input", "=1x2", "x=", "x=1xx2", "x=1x-2", "x=0", "x=1xa"})
    EXPECT_FALSE(parseShapeBinding(bad)) << bad;
}

} // namespace
