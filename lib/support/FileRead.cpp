//===- FileRead.cpp - Whole-file reads with a size limit ------------------===//
#include "npucc/support/FileRead.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace npucc {

namespace fs = std::filesystem;

namespace {

std::string sizeText(int64_t bytes) {
  if (bytes >= (int64_t(1) << 30) && bytes % (int64_t(1) << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (int64_t(1) << 20) && bytes % (int64_t(1) << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

} // namespace

Result<std::string> readFileLimited(const std::string &path, int64_t maxBytes,
                                    const std::string &what) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return error("cannot open " + what + ": no such file").inFile(path);
  if (fs::is_directory(path, ec))
    return error("cannot open " + what + ": is a directory").inFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return error("cannot open " + what + ": permission denied or unreadable").inFile(path);
  // A device or a pipe has no size to check first: it is read up to a smaller cap.
  const bool regular = fs::is_regular_file(path, ec);
  const int64_t cap = regular ? maxBytes : std::min(maxBytes, kMaxStreamBytes);
  auto tooLarge = [&] {
    return error(what + (regular ? " is" : " is not a regular file and is") + " larger than " +
                 sizeText(cap) + ", the most npucc reads (is it the right file?)")
        .inFile(path);
  };
  std::string data;
  if (regular) {
    auto size = static_cast<int64_t>(fs::file_size(path, ec));
    if (size > cap)
      return tooLarge();
    if (!ec)
      data.reserve(static_cast<size_t>(size));
  }
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    data.append(buf, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(data.size()) > cap)
      return tooLarge();
  }
  if (in.bad())
    return error("cannot read " + what).inFile(path);
  return data;
}

} // namespace npucc
