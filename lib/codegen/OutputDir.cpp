//===- OutputDir.cpp - Replace an output directory all at once ------------===//
//
// writeOutputDir writes every file into `<dir>.tmp-<pid>` (the parent of
// `dir` must exist: only the last level is created), then moves an
// existing `dir` aside to `<dir>.old-<pid>`, renames the temporary directory
// into place and deletes the old one. On any failure the temporary directory
// is removed and `dir` is left as it was.
//
//===----------------------------------------------------------------------===//
#include "npucc/codegen/CEmitter.h"

#include <filesystem>
#include <fstream>
#include <system_error>
#include <unistd.h>

namespace npucc::codegen {

namespace fs = std::filesystem;

namespace {

Diagnostic fsError(const std::string &what, const fs::path &p, const std::error_code &ec) {
  return error("cannot " + what + " '" + p.string() + "': " + ec.message());
}

bool safeRelative(const std::string &p) {
  if (p.empty() || p[0] == '/')
    return false;
  for (const auto &part : fs::path(p))
    if (part == ".." || part == ".")
      return false;
  return true;
}

Status writeAll(const fs::path &tmp, const std::vector<EmittedFile> &files) {
  std::error_code ec;
  if (!fs::create_directory(tmp, ec) || ec)
    return fsError("create directory", tmp, ec ? ec : std::make_error_code(std::errc::file_exists));
  for (const EmittedFile &f : files) {
    fs::path p = tmp / f.path;
    if (p.has_parent_path() && p.parent_path() != tmp) {
      fs::create_directories(p.parent_path(), ec);
      if (ec)
        return fsError("create directory", p.parent_path(), ec);
    }
    std::ofstream os(p, std::ios::binary | std::ios::trunc);
    if (!os)
      return error("cannot create file '" + p.string() + "'");
    os.write(f.contents.data(), std::streamsize(f.contents.size()));
    os.close();
    if (!os)
      return error("cannot write file '" + p.string() + "'");
  }
  return success();
}

} // namespace

Status writeOutputDir(const std::string &dirName, const std::vector<EmittedFile> &files) {
  if (dirName.empty())
    return error("empty output directory name");
  for (const EmittedFile &f : files)
    if (!safeRelative(f.path))
      return error("refusing to write '" + f.path + "' outside the output directory '" + dirName +
                   "'");
  fs::path dir = fs::path(dirName);
  if (dir.has_filename() == false)
    dir = dir.parent_path(); // "out/" -> "out"
  std::error_code ec;
  fs::file_status st = fs::symlink_status(dir, ec);
  bool exists = fs::exists(st);
  if (exists && !fs::is_directory(st))
    return error("'" + dir.string() + "' exists and is not a directory; refusing to replace it");
  // Only the last level is created: a mistyped parent path is an error, not
  // a tree of new folders.
  if (dir.has_parent_path() && !fs::is_directory(dir.parent_path(), ec))
    return error("cannot create output folder '" + dir.string() + "': its parent folder '" +
                 dir.parent_path().string() +
                 "' does not exist (npucc creates only the output folder itself)");

  std::string pid = std::to_string(static_cast<long>(::getpid()));
  fs::path tmp = dir.string() + ".tmp-" + pid;
  fs::path old = dir.string() + ".old-" + pid;
  fs::remove_all(tmp, ec); // stale leftovers of a crashed run with the same pid
  fs::remove_all(old, ec);

  Status w = writeAll(tmp, files);
  if (!w) {
    fs::remove_all(tmp, ec);
    return w;
  }
  if (exists) {
    fs::rename(dir, old, ec);
    if (ec) {
      Diagnostic d = fsError("move aside", dir, ec);
      fs::remove_all(tmp, ec);
      return d;
    }
  }
  fs::rename(tmp, dir, ec);
  if (ec) {
    Diagnostic d = fsError("rename '" + tmp.string() + "' to", dir, ec);
    std::error_code ec2;
    if (exists)
      fs::rename(old, dir, ec2);
    fs::remove_all(tmp, ec2);
    return d;
  }
  if (exists)
    fs::remove_all(old, ec);
  return success();
}

} // namespace npucc::codegen
