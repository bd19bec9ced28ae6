//===- Tensor.h - Dense constant data with dtype and shape ----------------===//
//
// Tensor is the unit of constant data in the graph (initializers, folded
// values) and of runtime data in the reference interpreter. Data is stored as
// raw little-endian bytes; typed views are provided by data<T>().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/DType.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace npucc::ir {

using Shape = std::vector<int64_t>;

int64_t numElements(const Shape &s);
std::string shapeStr(const Shape &s); // "1x3x224x224"

/// The largest tensor npucc accepts (2 GiB): far above any model an NPU
/// program holds, low enough that a hostile shape fails with a message
/// instead of exhausting memory.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 31;
/// Bytes of a dense tensor of `s`, or nullopt when a dimension is negative
/// or the size exceeds kMaxTensorBytes (computed without overflow).
std::optional<int64_t> checkedByteSize(DType t, const Shape &s);

/// A non-zero Slice step bounded to [-max(dim, 1), max(dim, 1)]: it selects
/// the same elements, and the count arithmetic cannot overflow (a step near
/// 2^63 was found by fuzz_onnx_import).
inline int64_t boundedSliceStep(int64_t step, int64_t dim) {
  int64_t m = dim > 1 ? dim : 1;
  return step > m ? m : step < -m ? -m : step;
}

class Tensor {
public:
  Tensor() = default;
  Tensor(DType t, Shape s) : Type(t), Dims(std::move(s)), Bytes(byteSizeOf(Type, Dims), 0) {}

  DType dtype() const { return Type; }
  const Shape &shape() const { return Dims; }
  int64_t numElements() const { return ir::numElements(Dims); }
  size_t byteSize() const { return Bytes.size(); }

  template <typename T> T *data() { return reinterpret_cast<T *>(Bytes.data()); }
  template <typename T> const T *data() const { return reinterpret_cast<const T *>(Bytes.data()); }
  uint8_t *raw() { return Bytes.data(); }
  const uint8_t *raw() const { return Bytes.data(); }
  std::vector<uint8_t> &bytes() { return Bytes; }
  const std::vector<uint8_t> &bytes() const { return Bytes; }

  /// Reinterpret with a new shape of the same element count.
  void reshape(Shape s) { Dims = std::move(s); }

  /// Element i converted to double / int64 whatever the dtype (getInt of a
  /// float saturates to int64's range; NaN gives 0).
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  void setDouble(int64_t i, double v);
  void setInt(int64_t i, int64_t v);

  /// All elements as int64 (for shape-like tensors).
  std::vector<int64_t> toInts() const;

  static Tensor fromInts(DType t, Shape s, const std::vector<int64_t> &v);
  static Tensor fromFloats(Shape s, const std::vector<float> &v);
  static Tensor scalar(DType t, double v);

  bool operator==(const Tensor &o) const {
    return Type == o.Type && Dims == o.Dims && Bytes == o.Bytes;
  }

  static size_t byteSizeOf(DType t, const Shape &s) {
    return static_cast<size_t>(ir::numElements(s)) * dtypeSize(t);
  }

private:
  DType Type = DType::F32;
  Shape Dims;
  std::vector<uint8_t> Bytes;
};

/// A 4-D tensor with its dimensions permuted: out[i0,i1,i2,i3] =
/// t[...] with out dim k = t dim perm[k] (ONNX Transpose semantics).
Tensor permute4(const Tensor &t, const int perm[4]);

} // namespace npucc::ir
