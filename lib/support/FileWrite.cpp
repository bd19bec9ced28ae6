//===- FileWrite.cpp - Whole-file writes that report every failure --------===//
#include "npucc/support/FileWrite.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace npucc {

namespace fs = std::filesystem;

namespace {

Diagnostic writeError(const std::string &what, const std::string &path, int err) {
  return error("cannot write " + what + " '" + path + "': " + std::strerror(err));
}

/// Writes all of `bytes` to `fd` and closes it; errno's value on failure, else 0.
int writeAndClose(int fd, std::string_view bytes) {
  const char *p = bytes.data();
  size_t left = bytes.size();
  int err = 0;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && err == 0 && errno != EINTR)
    err = errno;
  return err;
}

} // namespace

Status writeFileBytes(const std::string &path, std::string_view bytes, const std::string &what) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return writeError(what, path, errno);
  if (int err = writeAndClose(fd, bytes))
    return writeError(what, path, err);
  return success();
}

Status replaceFileBytes(const std::string &path, std::string_view bytes, const std::string &what) {
  struct stat st;
  fs::path target = path;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return writeError(what, path, EISDIR);
    if (!S_ISREG(st.st_mode))
      return writeFileBytes(path, bytes, what); // a device or a FIFO: in place
    std::error_code ec;
    fs::path real = fs::canonical(target, ec); // replace the file a link names, keep the link
    if (!ec)
      target = real;
  }
  fs::path tmp = target;
  tmp += ".tmp-" + std::to_string(static_cast<long>(::getpid()));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST) { // a leftover of a crashed run with the same pid
    ::unlink(tmp.c_str());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  }
  if (fd < 0)
    return writeError(what, path, errno);
  if (::stat(target.c_str(), &st) == 0)
    (void)::fchmod(fd, st.st_mode & 07777);
  if (int err = writeAndClose(fd, bytes)) {
    ::unlink(tmp.c_str());
    return writeError(what, path, err);
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return writeError(what, path, err);
  }
  return success();
}

} // namespace npucc
