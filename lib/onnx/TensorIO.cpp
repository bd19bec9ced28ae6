//===- TensorIO.cpp - onnx.TensorProto <-> ir::Tensor, external data ------===//
//
// Converts TensorProtos in every storage form (raw_data, the typed repeated
// fields, external data files kept inside the model's folder), reads and
// writes test_data_set .pb files, and parses --shape bindings.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"
#include "npucc/onnx/Importer.h"
#include "npucc/support/FileRead.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using ::onnx::TensorProto;

namespace npucc::onnx {
namespace detail {

std::string onnxTypeName(int elemType) {
  switch (elemType) {
  case TensorProto::FLOAT:
    return "float";
  case TensorProto::UINT8:
    return "uint8";
  case TensorProto::INT8:
    return "int8";
  case TensorProto::UINT16:
    return "uint16";
  case TensorProto::INT16:
    return "int16";
  case TensorProto::INT32:
    return "int32";
  case TensorProto::INT64:
    return "int64";
  case TensorProto::STRING:
    return "string";
  case TensorProto::BOOL:
    return "bool";
  case TensorProto::FLOAT16:
    return "float16";
  case TensorProto::DOUBLE:
    return "double";
  case TensorProto::UINT32:
    return "uint32";
  case TensorProto::UINT64:
    return "uint64";
  case TensorProto::COMPLEX64:
    return "complex64";
  case TensorProto::COMPLEX128:
    return "complex128";
  case TensorProto::BFLOAT16:
    return "bfloat16";
  case TensorProto::UNDEFINED:
    return "undefined";
  default:
    return "type#" + std::to_string(elemType);
  }
}

Result<ir::DType> mapElemType(int elemType, const std::string &what) {
  if (auto t = ir::dtypeFromOnnx(elemType))
    return *t;
  return error(what + " has element type " + onnxTypeName(elemType) +
               ", which npucc does not support");
}

namespace {

/// Resolves an external-data location inside `baseDir`, refusing escapes.
Result<fs::path> resolveInside(const std::string &baseDir, const std::string &loc,
                               const std::string &what) {
  auto refuse = [&](const std::string &why) {
    return error(what + ": external data location '" + loc + "' " + why);
  };
  if (loc.empty())
    return refuse("is empty");
  fs::path rel(loc);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    return refuse("is an absolute path; it must be relative to the model's folder");
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::absolute(baseDir.empty() ? "." : baseDir, ec), ec);
  if (ec)
    return refuse("cannot be resolved: " + ec.message());
  fs::path full = fs::weakly_canonical(base / rel, ec);
  if (ec)
    return refuse("cannot be resolved: " + ec.message());
  // Component-wise prefix check (also catches symlinks pointing outside).
  auto bi = base.begin(), fi = full.begin();
  for (; bi != base.end(); ++bi, ++fi) {
    if (bi->empty() && std::next(bi) == base.end())
      break; // trailing separator
    if (fi == full.end() || *fi != *bi)
      return refuse("escapes the model's folder");
  }
  if (fi == full.end())
    return refuse("escapes the model's folder");
  return full;
}

Result<std::string> readExternal(const TensorProto &tp, const std::string &baseDir,
                                 const std::string &what, size_t expected) {
  std::string loc;
  int64_t offset = 0, length = -1;
  for (const auto &kv : tp.external_data()) {
    try {
      if (kv.key() == "location")
        loc = kv.value();
      else if (kv.key() == "offset")
        offset = std::stoll(kv.value());
      else if (kv.key() == "length")
        length = std::stoll(kv.value());
    } catch (const std::exception &) {
      return error(what + ": bad external data entry '" + kv.key() + "' = '" + kv.value() + "'");
    }
  }
  if (offset < 0)
    return error(what + ": negative external data offset");
  auto path = resolveInside(baseDir, loc, what);
  if (!path)
    return path.error();
  std::error_code ec;
  if (!fs::is_regular_file(*path, ec))
    return error(what + ": external data location '" + loc + "' is not a regular file");
  std::ifstream in(*path, std::ios::binary);
  if (!in)
    return error(what + ": cannot open external data file '" + loc + "'");
  in.seekg(0, std::ios::end);
  int64_t size = static_cast<int64_t>(in.tellg());
  if (offset > size)
    return error(what + ": external data offset " + std::to_string(offset) +
                 " is past the end of '" + loc + "' (" + std::to_string(size) + " bytes)");
  if (length < 0)
    length = size - offset;
  if (length > size - offset)
    return error(what + ": external data file '" + loc + "' is too short (" + std::to_string(size) +
                 " bytes, need " + std::to_string(offset + length) + ")");
  if (static_cast<size_t>(length) != expected)
    return error(what + ": external data has " + std::to_string(length) + " bytes, expected " +
                 std::to_string(expected));
  std::string buf(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(buf.data(), length);
  if (!in)
    return error(what + ": failed to read external data file '" + loc + "'");
  return buf;
}

template <typename Src, typename Dst>
void copyField(const google::protobuf::RepeatedField<Src> &f, uint8_t *out) {
  Dst *d = reinterpret_cast<Dst *>(out);
  const Src *s = f.data();
  for (int i = 0, n = f.size(); i < n; ++i)
    d[i] = static_cast<Dst>(s[i]);
}

} // namespace

Result<ir::Tensor> tensorFromProto(const TensorProto &tp, const std::string &baseDir,
                                   const std::string &what) {
  auto dt = mapElemType(tp.data_type(), what);
  if (!dt)
    return dt.error();
  // Sizes are checked against the data before anything is allocated.
  NPUCC_TRY(checkTensorData(tp, what));
  ir::Shape shape(tp.dims().begin(), tp.dims().end());
  auto checked = ir::checkedByteSize(*dt, shape);
  if (!checked) // checkTensorData applies the same limit
    return error(what + " is larger than npucc's limit for one tensor");
  const size_t bytes = static_cast<size_t>(*checked);
  std::string external;
  if (tp.data_location() == TensorProto::EXTERNAL) {
    auto buf = readExternal(tp, baseDir, what, bytes);
    if (!buf)
      return buf.error();
    external = buf.take();
  }
  ir::Tensor t;
  try {
    t = ir::Tensor(*dt, shape);
  } catch (const std::bad_alloc &) {
    return error(what + ": out of memory allocating " + std::to_string(bytes) + " bytes");
  }
  const size_t n = static_cast<size_t>(t.numElements());
  if (tp.data_location() == TensorProto::EXTERNAL) {
    if (bytes)
      std::memcpy(t.raw(), external.data(), bytes);
    return t;
  }
  if (tp.has_raw_data()) { // sizes checked by checkTensorData
    if (bytes)
      std::memcpy(t.raw(), tp.raw_data().data(), bytes);
    return t;
  }
  uint8_t *out = t.raw();
  switch (tp.data_type()) {
  case TensorProto::FLOAT:
    copyField<float, float>(tp.float_data(), out);
    break;
  case TensorProto::DOUBLE:
    copyField<double, double>(tp.double_data(), out);
    break;
  case TensorProto::INT64:
    copyField<int64_t, int64_t>(tp.int64_data(), out);
    break;
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    if (*dt == ir::DType::U32)
      copyField<uint64_t, uint32_t>(tp.uint64_data(), out);
    else
      copyField<uint64_t, uint64_t>(tp.uint64_data(), out);
    break;
  default: // int32_data carries int32, int16, uint16, int8, uint8 and bool
    switch (*dt) {
    case ir::DType::I32:
      copyField<int32_t, int32_t>(tp.int32_data(), out);
      break;
    case ir::DType::I16:
      copyField<int32_t, int16_t>(tp.int32_data(), out);
      break;
    case ir::DType::U16:
      copyField<int32_t, uint16_t>(tp.int32_data(), out);
      break;
    case ir::DType::I8:
      copyField<int32_t, int8_t>(tp.int32_data(), out);
      break;
    case ir::DType::U8:
      copyField<int32_t, uint8_t>(tp.int32_data(), out);
      break;
    case ir::DType::Bool:
      for (size_t i = 0; i < n; ++i)
        out[i] = tp.int32_data(static_cast<int>(i)) != 0;
      break;
    default:
      return error(what + ": unexpected data field for its type");
    }
  }
  return t;
}

void tensorToProto(const ir::Tensor &t, const std::string &name, TensorProto &tp) {
  tp.Clear();
  tp.set_name(name);
  tp.set_data_type(ir::dtypeToOnnx(t.dtype()));
  for (int64_t d : t.shape())
    tp.add_dims(d);
  tp.set_raw_data(std::string(reinterpret_cast<const char *>(t.raw()), t.byteSize()));
}

} // namespace detail

Result<ir::Tensor> readTensorProto(const std::string &path, std::string *name) {
  auto bytes = readFileLimited(path, kMaxModelFileBytes, "tensor file");
  if (!bytes)
    return std::move(bytes.error());
  TensorProto tp;
  if (!tp.ParseFromString(*bytes))
    return error("not a valid onnx.TensorProto (failed to parse protobuf)").inFile(path);
  if (name)
    *name = tp.name();
  std::string what = "tensor '" + tp.name() + "'";
  auto t = detail::tensorFromProto(tp, fs::path(path).parent_path().string(), what);
  if (!t)
    return std::move(t.error().inFile(path));
  return t;
}

Status writeTensorProto(const std::string &path, const ir::Tensor &t, const std::string &name) {
  TensorProto tp;
  detail::tensorToProto(t, name, tp);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !tp.SerializeToOstream(&out))
    return error("cannot write tensor file").inFile(path);
  out.close();
  if (!out)
    return error("cannot write tensor file").inFile(path);
  return success();
}

Result<std::pair<std::string, ir::Shape>> parseShapeBinding(const std::string &text) {
  auto bad = [&](const std::string &why) {
    return error("bad --shape '" + text + "': " + why + " (expected NAME=1x3x224x224)");
  };
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    return bad("missing NAME=");
  std::string name = text.substr(0, eq), dims = text.substr(eq + 1);
  if (dims.empty())
    return bad("no dimensions");
  ir::Shape shape;
  std::string cur;
  for (size_t i = 0; i <= dims.size(); ++i) {
    char c = i < dims.size() ? dims[i] : 'x';
    if (c == 'x' || c == 'X' || c == ',') {
      if (cur.empty())
        return bad("empty dimension");
      if (cur.size() > 12)
        return bad("dimension '" + cur + "' too large");
      int64_t v = std::stoll(cur);
      if (v <= 0)
        return bad("dimension must be positive");
      shape.push_back(v);
      cur.clear();
    } else if (c >= '0' && c <= '9') {
      cur += c;
    } else {
      return bad(std::string("unexpected character '") + c + "'");
    }
  }
  return std::make_pair(name, shape);
}

} // namespace npucc::onnx
