//===- DType.h - Element types of graph values ----------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace npucc::ir {

// X(Enum, text name, C type, byte size, ONNX TensorProto_DataType number)
#define NPUCC_DTYPES(X)                                                                            \
  X(F32, "f32", float, 4, 1)                                                                       \
  X(U8, "u8", uint8_t, 1, 2)                                                                       \
  X(I8, "i8", int8_t, 1, 3)                                                                        \
  X(U16, "u16", uint16_t, 2, 4)                                                                    \
  X(I16, "i16", int16_t, 2, 5)                                                                     \
  X(I32, "i32", int32_t, 4, 6)                                                                     \
  X(I64, "i64", int64_t, 8, 7)                                                                     \
  X(Bool, "bool", uint8_t, 1, 9)                                                                   \
  X(F64, "f64", double, 8, 11)                                                                     \
  X(U32, "u32", uint32_t, 4, 12)                                                                   \
  X(U64, "u64", uint64_t, 8, 13)

enum class DType {
#define X(e, n, c, s, o) e,
  NPUCC_DTYPES(X)
#undef X
};

size_t dtypeSize(DType t);
const char *dtypeName(DType t);         // "f32"
const char *dtypeCType(DType t);        // "float"
std::optional<DType> dtypeFromName(const std::string &name);
std::optional<DType> dtypeFromOnnx(int onnxType);
int dtypeToOnnx(DType t);
bool isFloat(DType t);
bool isInteger(DType t); // includes Bool

} // namespace npucc::ir
