//===- Tensor.cpp - Constant data helpers ---------------------------------===//
#include "npucc/ir/Tensor.h"
#include <limits>
#include <type_traits>

namespace npucc::ir {

int64_t numElements(const Shape &s) {
  // Saturates instead of overflowing (UB) on hostile shapes; sizes are
  // checked against kMaxTensorBytes (checkedByteSize) where they come in.
  int64_t n = 1;
  for (int64_t d : s) {
    int64_t r;
    if (__builtin_mul_overflow(n, d, &r))
      return (n < 0) != (d < 0) ? INT64_MIN : INT64_MAX;
    n = r;
  }
  return n;
}

std::optional<int64_t> checkedByteSize(DType t, const Shape &s) {
  int64_t bytes = static_cast<int64_t>(dtypeSize(t));
  for (int64_t d : s)
    if (d < 0)
      return std::nullopt;
  for (int64_t d : s)
    if (d == 0)
      return 0;
  for (int64_t d : s) {
    if (d > kMaxTensorBytes / bytes)
      return std::nullopt;
    bytes *= d;
  }
  return bytes;
}

std::string shapeStr(const Shape &s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "x" : "") + std::to_string(s[i]);
  return r.empty() ? "scalar" : r;
}

namespace {
template <typename F> auto visitElem(DType t, const uint8_t *p, int64_t i, F f) {
  switch (t) {
#define X(e, n, c, s, o)                                                                           \
  case DType::e: {                                                                                 \
    c v;                                                                                           \
    std::memcpy(&v, p + i * s, s);                                                                 \
    return f(v);                                                                                   \
  }
    NPUCC_DTYPES(X)
#undef X
  }
  return f(0.0f);
}
template <typename V> void storeElem(DType t, uint8_t *p, int64_t i, V val) {
  switch (t) {
#define X(e, n, c, s, o)                                                                           \
  case DType::e: {                                                                                 \
    c v = static_cast<c>(val);                                                                     \
    std::memcpy(p + i * s, &v, s);                                                                 \
    return;                                                                                        \
  }
    NPUCC_DTYPES(X)
#undef X
  }
}
} // namespace

double Tensor::getDouble(int64_t i) const {
  return visitElem(Type, Bytes.data(), i, [](auto v) { return static_cast<double>(v); });
}
int64_t Tensor::getInt(int64_t i) const {
  return visitElem(Type, Bytes.data(), i, [](auto v) -> int64_t {
    if constexpr (std::is_floating_point_v<decltype(v)>) {
      // Saturating: a float outside int64's range (or NaN) has no int64 value
      // and the plain conversion is undefined (found by fuzz_onnx_import: a
      // float Clip bound of -1.7e38).
      if (!(v == v))
        return 0;
      if (v >= 9.2233720368547758e18)
        return std::numeric_limits<int64_t>::max();
      if (v <= -9.2233720368547758e18)
        return std::numeric_limits<int64_t>::min();
    }
    return static_cast<int64_t>(v);
  });
}
void Tensor::setDouble(int64_t i, double v) {
  if (Type == DType::Bool)
    v = v != 0.0 ? 1.0 : 0.0;
  storeElem(Type, Bytes.data(), i, v);
}
void Tensor::setInt(int64_t i, int64_t v) {
  if (Type == DType::Bool)
    v = v != 0;
  storeElem(Type, Bytes.data(), i, v);
}

std::vector<int64_t> Tensor::toInts() const {
  std::vector<int64_t> r(static_cast<size_t>(numElements()));
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = getInt(static_cast<int64_t>(i));
  return r;
}

Tensor Tensor::fromInts(DType t, Shape s, const std::vector<int64_t> &v) {
  Tensor r(t, std::move(s));
  for (size_t i = 0; i < v.size() && static_cast<int64_t>(i) < r.numElements(); ++i)
    r.setInt(static_cast<int64_t>(i), v[i]);
  return r;
}

Tensor Tensor::fromFloats(Shape s, const std::vector<float> &v) {
  Tensor r(DType::F32, std::move(s));
  for (size_t i = 0; i < v.size() && static_cast<int64_t>(i) < r.numElements(); ++i)
    r.data<float>()[i] = v[i];
  return r;
}

Tensor Tensor::scalar(DType t, double v) {
  Tensor r(t, {});
  r.setDouble(0, v);
  return r;
}

Tensor permute4(const Tensor &t, const int perm[4]) {
  const Shape &s = t.shape();
  Shape d = {s[size_t(perm[0])], s[size_t(perm[1])], s[size_t(perm[2])], s[size_t(perm[3])]};
  Tensor r(t.dtype(), d);
  size_t es = dtypeSize(t.dtype());
  int64_t st[4] = {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1};
  int64_t k = 0;
  for (int64_t a = 0; a < d[0]; ++a)
    for (int64_t b = 0; b < d[1]; ++b)
      for (int64_t c = 0; c < d[2]; ++c)
        for (int64_t e = 0; e < d[3]; ++e, ++k) {
          int64_t idx[4] = {a, b, c, e}, src = 0;
          for (int i = 0; i < 4; ++i)
            src += idx[i] * st[perm[i]];
          std::memcpy(r.raw() + size_t(k) * es, t.raw() + size_t(src) * es, es);
        }
  return r;
}

} // namespace npucc::ir
