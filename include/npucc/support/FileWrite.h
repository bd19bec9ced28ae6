//===- FileWrite.h - Whole-file writes that report every failure ----------===//
//
// Every file npucc writes goes through these two, so that a full disk, a
// device that refuses data (/dev/full) or a failed close is an error naming
// the file, never a silent exit 0 (the C++ streams report a failed write only
// when asked after close; the POSIX calls here give errno's reason).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/support/Result.h"

#include <string>
#include <string_view>

namespace npucc {

/// Creates or truncates `path` and writes `bytes` to it. Errors name the file
/// and say what it was written as (`what`: "the QDQ model", "file", ...) and
/// why (errno's text): "cannot write the QDQ model '/dev/full': No space left
/// on device".
Status writeFileBytes(const std::string &path, std::string_view bytes, const std::string &what);

/// Like writeFileBytes, but an existing regular file (or the regular file a
/// symbolic link names) is replaced at once: the bytes go to a temporary file
/// beside it (its mode copied), which is renamed over it, so a failed write
/// leaves the old file as it was. A path that exists and is not a regular file
/// (a device such as /dev/stdout, a FIFO) is written in place; a directory is
/// refused.
Status replaceFileBytes(const std::string &path, std::string_view bytes, const std::string &what);

} // namespace npucc
