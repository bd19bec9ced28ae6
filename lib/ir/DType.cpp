//===- DType.cpp - Element type tables ------------------------------------===//
#include "npucc/ir/DType.h"

namespace npucc::ir {

size_t dtypeSize(DType t) {
  switch (t) {
#define X(e, n, c, s, o)                                                                           \
  case DType::e:                                                                                   \
    return s;
    NPUCC_DTYPES(X)
#undef X
  }
  return 0;
}

const char *dtypeName(DType t) {
  switch (t) {
#define X(e, n, c, s, o)                                                                           \
  case DType::e:                                                                                   \
    return n;
    NPUCC_DTYPES(X)
#undef X
  }
  return "?";
}

const char *dtypeCType(DType t) {
  switch (t) {
#define X(e, n, c, s, o)                                                                           \
  case DType::e:                                                                                   \
    return #c;
    NPUCC_DTYPES(X)
#undef X
  }
  return "?";
}

std::optional<DType> dtypeFromName(const std::string &name) {
#define X(e, n, c, s, o)                                                                           \
  if (name == n)                                                                                   \
    return DType::e;
  NPUCC_DTYPES(X)
#undef X
  return std::nullopt;
}

std::optional<DType> dtypeFromOnnx(int onnxType) {
#define X(e, n, c, s, o)                                                                           \
  if (onnxType == o)                                                                               \
    return DType::e;
  NPUCC_DTYPES(X)
#undef X
  return std::nullopt;
}

int dtypeToOnnx(DType t) {
  switch (t) {
#define X(e, n, c, s, o)                                                                           \
  case DType::e:                                                                                   \
    return o;
    NPUCC_DTYPES(X)
#undef X
  }
  return 0;
}

bool isFloat(DType t) { return t == DType::F32 || t == DType::F64; }
bool isInteger(DType t) { return !isFloat(t); }

} // namespace npucc::ir
