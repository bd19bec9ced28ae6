//===- Samples.cpp - Calibration samples: .npy / .pb readers, folder layout ===//
//
// Reads numpy .npy files (format v1-v3) and serialized onnx.TensorProto .pb
// files (through lib/onnx's reader), and gathers them into per-invocation
// samples as documented in quant/Samples.h.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/Samples.h"

#include "npucc/onnx/Importer.h"
#include "npucc/support/FileRead.h"

#include <algorithm>
#include <filesystem>
#include <random>

namespace fs = std::filesystem;

namespace npucc::quant {

using namespace ir;

namespace {

Result<std::string> readFile(const std::string &path) {
  return readFileLimited(path, kMaxModelFileBytes, "sample file");
}

Diagnostic fileError(const std::string &path, const std::string &msg) {
  return error(msg).inFile(path);
}

// --- .npy ------------------------------------------------------------------

std::optional<DType> npyDType(const std::string &descr, bool &bigEndian) {
  bigEndian = false;
  if (descr.size() < 3)
    return std::nullopt;
  char order = descr[0];
  std::string kind = descr.substr(1);
  if (order == '>')
    bigEndian = true;
  else if (order != '<' && order != '|' && order != '=')
    return std::nullopt;
  static const std::pair<const char *, DType> table[] = {
      {"f4", DType::F32}, {"f8", DType::F64}, {"i1", DType::I8},  {"u1", DType::U8},
      {"i2", DType::I16}, {"u2", DType::U16}, {"i4", DType::I32}, {"u4", DType::U32},
      {"i8", DType::I64}, {"u8", DType::U64}, {"b1", DType::Bool}};
  for (const auto &e : table)
    if (kind == e.first) {
      if (dtypeSize(e.second) == 1)
        bigEndian = false;
      return e.second;
    }
  return std::nullopt;
}

/// Value text of `key` in the header dict, e.g. "'<f4'" or "(1, 3)".
std::optional<std::string> npyField(const std::string &hdr, const std::string &key) {
  size_t k = hdr.find("'" + key + "'");
  if (k == std::string::npos)
    return std::nullopt;
  size_t c = hdr.find(':', k);
  if (c == std::string::npos)
    return std::nullopt;
  size_t b = hdr.find_first_not_of(" ", c + 1);
  if (b == std::string::npos)
    return std::nullopt;
  size_t e;
  if (hdr[b] == '(')
    e = hdr.find(')', b) + 1;
  else if (hdr[b] == '\'')
    e = hdr.find('\'', b + 1) + 1;
  else
    e = hdr.find_first_of(",}", b);
  if (e == std::string::npos || e == 0 || e <= b)
    return std::nullopt;
  return hdr.substr(b, e - b);
}

// --- TensorProto wire format ---------------------------------------------------


/// Converts `t` to dtype `want` (numeric conversion) when they differ.
Tensor convertTo(const Tensor &t, DType want) {
  if (t.dtype() == want)
    return t;
  Tensor r(want, t.shape());
  for (int64_t i = 0; i < t.numElements(); ++i) {
    if (isFloat(want))
      r.setDouble(i, t.getDouble(i));
    else
      r.setInt(i, isFloat(t.dtype()) ? static_cast<int64_t>(t.getDouble(i)) : t.getInt(i));
  }
  return r;
}

/// .pb / .npy, except the golden outputs of ONNX test folders (output_K.pb).
bool isSampleFile(const fs::path &p) {
  std::string e = p.extension().string();
  return (e == ".pb" || e == ".npy") && p.stem().string().rfind("output_", 0) != 0;
}

Result<Tensor> readSampleFile(const fs::path &p) {
  return p.extension() == ".npy" ? readNpy(p.string()) : readTensorPb(p.string());
}

std::vector<fs::path> sortedEntries(const fs::path &dir, bool wantDirs) {
  std::vector<fs::path> r;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec))
    if (wantDirs ? e.is_directory() : (e.is_regular_file() && isSampleFile(e.path())))
      r.push_back(e.path());
  std::sort(r.begin(), r.end());
  return r;
}

/// Checks `t` against graph input `v` (after dtype conversion).
Result<Tensor> fitInput(Tensor t, const Value &v, const std::string &file) {
  if (t.shape() != v.shape) {
    if (t.numElements() == v.numElements() && t.numElements() > 0)
      t.reshape(v.shape); // e.g. a missing or extra leading 1
    else
      return fileError(file, "shape " + shapeStr(t.shape()) + " does not match input '" + v.name +
                                 "' of shape " + shapeStr(v.shape));
  }
  if (t.dtype() != v.dtype) {
    if (t.dtype() == DType::Bool || v.dtype == DType::Bool)
      return fileError(file, std::string("dtype ") + dtypeName(t.dtype()) +
                                 " does not match input '" + v.name + "' (" + dtypeName(v.dtype) +
                                 ")");
    t = convertTo(t, v.dtype);
  }
  return t;
}

/// One sample from a folder: input_K.* / NAME.* / a single file.
Result<Sample> sampleFromFolder(const fs::path &dir, const Graph &g) {
  std::vector<fs::path> files = sortedEntries(dir, false);
  Sample s;
  s.origin = dir.string();
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const Value *v = g.inputs[k];
    std::optional<fs::path> found;
    for (const fs::path &f : files) {
      std::string stem = f.stem().string();
      if (stem == "input_" + std::to_string(k) || stem == v->name)
        found = f;
    }
    if (!found && g.inputs.size() == 1 && files.size() == 1)
      found = files[0];
    if (!found)
      return fileError(dir.string(), "no file for graph input " + std::to_string(k) + " ('" +
                                         v->name + "'): expected input_" + std::to_string(k) +
                                         ".pb/.npy or " + v->name + ".pb/.npy");
    auto t = readSampleFile(*found);
    if (!t)
      return std::move(t.error());
    auto fit = fitInput(t.take(), *v, found->string());
    if (!fit)
      return std::move(fit.error());
    s.inputs[v->name] = fit.take();
  }
  return s;
}

} // namespace

Result<Tensor> readNpy(const std::string &path) {
  auto bytes = readFile(path);
  if (!bytes)
    return std::move(bytes.error());
  const std::string &b = *bytes;
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0)
    return fileError(path, "not a .npy file (bad magic)");
  int major = static_cast<uint8_t>(b[6]);
  size_t hlen, off;
  if (major == 1) {
    hlen = static_cast<uint8_t>(b[8]) | (static_cast<size_t>(static_cast<uint8_t>(b[9])) << 8);
    off = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12)
      return fileError(path, "truncated .npy header");
    hlen = 0;
    for (int i = 0; i < 4; ++i)
      hlen |= static_cast<size_t>(static_cast<uint8_t>(b[8 + i])) << (8 * i);
    off = 12;
  } else {
    return fileError(path, ".npy format version " + std::to_string(major) + " not supported");
  }
  if (b.size() < off + hlen)
    return fileError(path, "truncated .npy header");
  std::string hdr = b.substr(off, hlen);
  auto descr = npyField(hdr, "descr");
  auto fortran = npyField(hdr, "fortran_order");
  auto shape = npyField(hdr, "shape");
  if (!descr || !fortran || !shape || descr->size() < 2)
    return fileError(path, "malformed .npy header: " + hdr);
  bool big = false;
  auto dt = npyDType(descr->substr(1, descr->size() - 2), big);
  if (!dt)
    return fileError(path, "unsupported .npy dtype " + *descr);
  if (big)
    return fileError(path, "big-endian .npy data (" + *descr + ") not supported");
  if (*fortran != "False")
    return fileError(path, "Fortran-order .npy data not supported (save it C-contiguous)");
  Shape dims;
  std::string sh = shape->substr(1, shape->size() - 2);
  std::stringstream ss(sh);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t p = item.find_first_not_of(" ");
    if (p == std::string::npos)
      continue;
    char *endp = nullptr;
    long long d = std::strtoll(item.c_str() + p, &endp, 10);
    if (endp == item.c_str() + p || d < 0)
      return fileError(path, "malformed .npy shape " + *shape);
    dims.push_back(d);
  }
  Tensor t(*dt, dims);
  if (b.size() - off - hlen != t.byteSize())
    return fileError(path, "data size " + std::to_string(b.size() - off - hlen) +
                               " bytes does not match shape " + *shape + " of " + *descr + " (" +
                               std::to_string(t.byteSize()) + " bytes)");
  std::memcpy(t.raw(), b.data() + off + hlen, t.byteSize());
  return t;
}

Result<Tensor> readTensorPb(const std::string &path) {
  return onnx::readTensorProto(path);
}

Result<std::vector<Sample>> loadSamples(const std::string &dir, const Graph &g) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return error("--calib " + dir + ": not a directory");
  std::vector<Sample> out;
  std::vector<fs::path> dirs = sortedEntries(dir, true);
  std::vector<fs::path> files = sortedEntries(dir, false);
  for (const fs::path &d : dirs) {
    if (sortedEntries(d, false).empty())
      continue;
    auto s = sampleFromFolder(d, g);
    if (!s)
      return std::move(s.error());
    out.push_back(s.take());
  }
  if (!files.empty()) {
    if (g.inputs.size() != 1)
      return fileError(files[0].string(),
                       "the model has " + std::to_string(g.inputs.size()) +
                           " inputs: put each sample in its own sub-folder with files "
                           "input_0, input_1, ... (.pb or .npy)");
    const Value &v = *g.inputs[0];
    for (const fs::path &f : files) {
      auto t = readSampleFile(f);
      if (!t)
        return std::move(t.error());
      // [N, <shape>] or [N, <shape without leading 1>]: N samples.
      const Shape &ts = t->shape();
      int64_t per = v.numElements();
      bool batched =
          !ts.empty() && ts != v.shape && per > 0 && t->numElements() % per == 0 &&
          t->numElements() / per == ts[0] &&
          (Shape(ts.begin() + 1, ts.end()) == v.shape ||
           (!v.shape.empty() && v.shape[0] == 1 &&
            Shape(ts.begin() + 1, ts.end()) == Shape(v.shape.begin() + 1, v.shape.end())));
      if (batched && ts[0] > 1) {
        size_t esz = dtypeSize(t->dtype());
        for (int64_t i = 0; i < ts[0]; ++i) {
          Tensor one(t->dtype(), v.shape);
          std::memcpy(one.raw(), t->raw() + static_cast<size_t>(i * per) * esz,
                      static_cast<size_t>(per) * esz);
          auto fit = fitInput(std::move(one), v, f.string());
          if (!fit)
            return std::move(fit.error());
          Sample s;
          s.origin = f.string() + "[" + std::to_string(i) + "]";
          s.inputs[v.name] = fit.take();
          out.push_back(std::move(s));
        }
        continue;
      }
      auto fit = fitInput(t.take(), v, f.string());
      if (!fit)
        return std::move(fit.error());
      Sample s;
      s.origin = f.string();
      s.inputs[v.name] = fit.take();
      out.push_back(std::move(s));
    }
  }
  if (out.empty())
    return error("--calib " + dir +
                 ": no samples found (expected .npy/.pb files, or one sub-folder per sample "
                 "with input_K.pb/.npy files)");
  return out;
}

std::vector<Sample> randomSamples(const Graph &g, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<Sample> out;
  for (int i = 0; i < n; ++i) {
    Sample s;
    s.origin = "random#" + std::to_string(i);
    for (const Value *v : g.inputs) {
      Tensor t(v->dtype, v->shape);
      if (isFloat(v->dtype))
        for (int64_t k = 0; k < t.numElements(); ++k)
          t.setDouble(k, normal(rng));
      s.inputs[v->name] = std::move(t);
    }
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace npucc::quant
