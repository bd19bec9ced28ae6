//===- CText.h - Helpers for printing C99 source text (codegen-private) ---===//
//
// Literals, escaped strings and fast bulk printing of tensor data. Tensor
// data is printed as unsigned bit patterns (uint8/16/32/64_t) inside a union
// that also has the typed view, so every value (NaN payloads, -0.0,
// denormals) is reproduced exactly and the text is quick to write and parse.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Tensor.h"
#include "npucc/lir/Program.h"

#include <string>

namespace npucc::codegen::ctext {

/// "abc" with C escapes (quotes, backslashes, '?' against trigraphs, and
/// octal escapes for control and non-ASCII bytes).
std::string cString(const std::string &s);

/// Text safe inside a /* */ comment on one line.
std::string commentText(const std::string &s);

/// A float literal that converts back to exactly `f`: "0.5f", "1.0f",
/// "INFINITY", "(-INFINITY)", "NAN". Sets *needsMath for the macros.
std::string floatLiteral(float f, bool *needsMath);

/// An int64 literal valid in C99 ("INT64_MIN" for the one value that has none).
std::string intLiteral(int64_t v);

/// "NPUCC_F32" etc. (the npucc_dtype enumerator).
std::string dtypeEnum(ir::DType t);

/// uint8_t / uint16_t / uint32_t / uint64_t for an element size.
const char *bitsCType(size_t elemSize);

/// Elements of a tensor-like byte range in an aligned union type:
///   typedef union { uint32_t bits[N]; float v[N]; long double align_; } NAME;
/// The alignment every supported C ABI gives the union's long double member
/// (8 on Arm EABI; 16 on x86-64 and RISC-V).
constexpr uint64_t MinUnionAlign = 8;
/// align > MinUnionAlign adds NPUCC_ALIGNED(align) (defined by the header that
/// uses it) to the type.
std::string unionTypedef(const std::string &name, ir::DType t, int64_t count, uint64_t align = 0);

/// Appends the bit patterns of `count` elements of size `elemSize` from
/// `data`, comma separated, 16 per line, each line indented by two spaces.
/// At least one element is printed (a 0) so that empty arrays stay valid.
void appendBits(std::string &out, const uint8_t *data, size_t elemSize, size_t count);

/// True if `s` is a C identifier.
bool isIdentifier(const std::string &s);

/// Upper-case form of an identifier for macro names.
std::string upper(const std::string &s);

/// The npucc_tensor_info table <prefix>_<kind>s[] (and the shape arrays) of
/// the model inputs or outputs; `attr` (e.g. a section macro) before each.
std::string infoTable(const std::string &prefix, const char *kind,
                      const std::vector<lir::IOBuffer> &bufs, const std::string &attr);

/// Last component of a slash-separated path.
std::string baseName(const std::string &path);

} // namespace npucc::codegen::ctext
