//===- FileRead.h - Whole-file reads with a size limit --------------------===//
//
// Every file npucc reads whole (models, textual IR, target descriptions,
// tensor files) goes through readFileLimited, so that `/dev/zero`, a FIFO or
// a mistaken multi-gigabyte path fails with a message instead of reading
// without end.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/support/Result.h"

#include <cstdint>
#include <string>

namespace npucc {

/// Read limits per kind of file (bytes).
inline constexpr int64_t kMaxModelFileBytes = int64_t(2) << 30; // protobuf's own limit
inline constexpr int64_t kMaxTextFileBytes = int64_t(256) << 20; // textual IR / loop IR
inline constexpr int64_t kMaxTargetFileBytes = int64_t(16) << 20; // NPU descriptions
/// Devices and pipes (no size known up front) are read up to this at most.
inline constexpr int64_t kMaxStreamBytes = int64_t(64) << 20;

/// The whole contents of `path`, at most `maxBytes` of them. Errors name the
/// file (Diagnostic::file) and say what it was read as (`what`: "model",
/// "textual IR", ...): missing, a directory, unreadable, or larger than the
/// limit (a regular file's size is checked before reading; a device or pipe
/// stops after min(maxBytes, kMaxStreamBytes) + 1 bytes).
Result<std::string> readFileLimited(const std::string &path, int64_t maxBytes,
                                    const std::string &what);

} // namespace npucc
