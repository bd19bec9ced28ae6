//===- OutputDir.cpp - Replace an output directory all at once ------------===//
//
// writeOutputDir writes every file into `<dir>.tmp-<pid>` (the parent of
// `dir` must exist: only the last level is created), then moves an
// existing `dir` aside to `<dir>.old-<pid>`, renames the temporary directory
// into place and deletes the old one. On any failure the temporary directory
// is removed and `dir` is left as it was.
//
// An existing `dir` is replaced only when npucc wrote it: it is empty, or it
// holds the manifest npucc writes (kManifest, every file's path) and nothing
// but the files listed there. Anything else (a model folder, files a user
// added, a symbolic link) is refused before a byte is written.
//
//===----------------------------------------------------------------------===//
#include "npucc/codegen/CEmitter.h"
#include "npucc/support/FileWrite.h"

#include <filesystem>
#include <fstream>
#include <set>
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

constexpr const char *kManifest = ".npucc-files";
constexpr const char *kManifestHeader =
    "# written by npucc: it replaces this folder only while it holds just these files\n";

/// Why npucc must not replace the existing folder `dir`, or "" when it may
/// (empty, or exactly the files of its own manifest).
std::string notOurs(const fs::path &dir) {
  std::error_code ec;
  std::set<std::string> listed;
  bool hasManifest = false;
  {
    std::ifstream is(dir / kManifest, std::ios::binary);
    std::string line;
    if (is && std::getline(is, line) && line + "\n" == kManifestHeader) {
      hasManifest = true;
      while (std::getline(is, line))
        listed.insert(line);
    }
  }
  std::set<std::string> foreign; // sorted: the message names the same file every run
  fs::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    fs::file_status st = it->symlink_status(ec);
    if (ec)
      break;
    std::string rel = it->path().lexically_relative(dir).generic_string();
    if (fs::is_directory(st) || (hasManifest && rel == kManifest))
      continue;
    if (!hasManifest || !fs::is_regular_file(st) || !listed.count(rel))
      foreign.insert(rel);
  }
  if (ec)
    return "its contents cannot be listed: " + ec.message();
  if (foreign.empty())
    return "";
  std::string what = "'" + *foreign.begin() + "'" +
                     (foreign.size() > 1 ? " and " + std::to_string(foreign.size() - 1) + " more"
                                         : std::string());
  return hasManifest ? "it holds " + what + " that npucc did not write (not in its " +
                           kManifest + ")"
                     : "it holds " + what + " and no npucc manifest (" + kManifest +
                           "): npucc did not write it";
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
    NPUCC_TRY(writeFileBytes(p.string(), f.contents, "file"));
  }
  std::string manifest = kManifestHeader;
  std::set<std::string> names;
  for (const EmittedFile &f : files)
    names.insert(fs::path(f.path).lexically_normal().generic_string());
  for (const std::string &n : names)
    manifest += n + "\n";
  return writeFileBytes((tmp / kManifest).string(), manifest, "file");
}

} // namespace

Status checkOutputDir(const std::string &dirName) {
  if (dirName.empty())
    return error("empty output directory name");
  fs::path dir = fs::path(dirName);
  if (dir.has_filename() == false)
    dir = dir.parent_path(); // "out/" -> "out"
  std::error_code ec;
  fs::file_status st = fs::symlink_status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st))
    return error("'" + dir.string() + "' exists and is not a directory; refusing to replace it");
  if (fs::exists(st)) {
    std::string why = notOurs(dir);
    if (!why.empty())
      return error("refusing to replace the output folder '" + dir.string() + "': " + why +
                   "; name a new or empty folder, or one an earlier npucc run wrote");
  }
  // Only the last level is created: a mistyped parent path is an error, not
  // a tree of new folders.
  if (dir.has_parent_path() && !fs::is_directory(dir.parent_path(), ec))
    return error("cannot create output folder '" + dir.string() + "': its parent folder '" +
                 dir.parent_path().string() +
                 "' does not exist (npucc creates only the output folder itself)");
  return success();
}

Status writeOutputDir(const std::string &dirName, const std::vector<EmittedFile> &files) {
  for (const EmittedFile &f : files)
    if (!safeRelative(f.path))
      return error("refusing to write '" + f.path + "' outside the output directory '" + dirName +
                   "'");
  if (Status c = checkOutputDir(dirName); !c)
    return c;
  fs::path dir = fs::path(dirName);
  if (dir.has_filename() == false)
    dir = dir.parent_path(); // "out/" -> "out"
  std::error_code ec;
  bool exists = fs::exists(fs::symlink_status(dir, ec));

  std::string pid = std::to_string(static_cast<long>(::getpid()));
  fs::path tmp = dir.string() + ".tmp-" + pid;
  fs::path old = dir.string() + ".old-" + pid;
  fs::remove_all(tmp, ec); // stale leftovers of a crashed run with the same pid
  fs::remove_all(old, ec);

  Status w = writeAll(tmp, files);
  if (!w) {
    fs::remove_all(tmp, ec);
    Diagnostic d = w.error();
    d.note("while writing the output folder '" + dir.string() + "' (npucc writes '" + tmp.string() +
           "' and renames it; it was removed, and '" + dir.string() + "' is as it was)");
    return d;
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
